"""YAML datasets: a list of mappings, or a mapping with a ``cases:`` list.

Only ``true``/``false`` are booleans and dates stay text, so ``yes``, ``no`` and
``2024-01-01`` are read as strings. Line numbers come from the YAML node marks: a row's line
is where its mapping starts, and each top-level key's value has its own line. Aliases may
not expand the document by more than :data:`~agenteval._util.yaml_guard.MAX_ALIAS_NODES` nodes
(an alias bomb is refused, exit code 2).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import yaml

from agenteval._util.yaml_guard import check_aliases
from agenteval.dataset.records import Row, read_text
from agenteval.errors import InputError


class _YamlLoader(yaml.SafeLoader):
    """SafeLoader where only true/false are booleans and timestamps stay strings."""


_BOOL_TAG = "tag:yaml.org,2002:bool"
_YamlLoader.yaml_implicit_resolvers = {
    first: [
        (tag, rx) for tag, rx in resolvers if tag not in (_BOOL_TAG, "tag:yaml.org,2002:timestamp")
    ]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
_YamlLoader.add_implicit_resolver(
    _BOOL_TAG, re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF")
)


def _yaml_error(e: yaml.YAMLError, p: Path, text: str) -> InputError:
    mark = getattr(e, "problem_mark", None) or getattr(e, "context_mark", None)
    line = mark.line + 1 if mark is not None else None
    if line is None and isinstance(getattr(e, "position", None), int):
        line = text.count("\n", 0, e.position) + 1  # type: ignore[attr-defined]
    problem = getattr(e, "problem", None) or getattr(e, "reason", None) or str(e)
    return InputError(f"not valid YAML: {problem}", file=p, line=line)


def iter_yaml_rows(path: str | Path) -> Iterator[Row]:
    """Parse a YAML dataset: a list of mappings, or a mapping with a ``cases:`` list.

    Each row carries its start line and the line of each top-level key's value.
    """
    p = Path(path)
    text = read_text(p)
    try:
        loader = _YamlLoader(text)  # checks for characters YAML does not allow
    except yaml.YAMLError as e:
        raise _yaml_error(e, p, text) from None
    try:
        try:
            root = loader.get_single_node()
        except yaml.YAMLError as e:
            raise _yaml_error(e, p, text) from None
        except RecursionError:
            raise InputError("not valid YAML: nested too deeply", file=p) from None
        if root is None:
            raise InputError("is empty; expected a list of cases", file=p)
        check_aliases(root, p)
        items: yaml.Node = root
        if isinstance(root, yaml.MappingNode):
            found = next((v for k, v in root.value if k.value == "cases"), None)
            if found is None:
                raise InputError("a YAML mapping must have a 'cases:' list", file=p, line=1)
            items = found
        if not isinstance(items, yaml.SequenceNode):
            raise InputError(
                "must hold a list of cases, or a mapping with a 'cases:' list",
                file=p,
                line=items.start_mark.line + 1,
            )
        for node in items.value:
            line = node.start_mark.line + 1
            try:
                data = loader.construct_object(node, deep=True)
            except yaml.YAMLError as e:
                raise _yaml_error(e, p, text) from None
            except (TypeError, ValueError, RecursionError) as e:
                raise InputError(f"not valid YAML: {e}", file=p, line=line) from None
            lines = None
            if isinstance(node, yaml.MappingNode):
                lines = {
                    str(k.value): v.start_mark.line + 1
                    for k, v in node.value
                    if isinstance(k, yaml.ScalarNode)
                }
            yield Row(line, data, lines)
    finally:
        loader.dispose()
