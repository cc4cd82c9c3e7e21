"""YAML with a bound on alias expansion, for every YAML file agenteval reads.

YAML aliases (``*name``) re-use an anchored node (``&name``) without copying it, so a few
hundred bytes can describe a document of billions of nodes (the "billion laughs" alias
bomb: nine levels of nine-item lists, each a list of aliases to the level below). Loading
such a file is cheap; anything that then walks the data (validation, JSON, hashing) is not.

Every YAML file (datasets, HTTP/JSON agent configs, tool definitions, benchmark files,
price tables) is therefore composed into its node graph first and measured: the document
*as expanded* (every alias use counted as a full copy of its node) may hold at most
:data:`MAX_ALIAS_NODES` nodes more than the file itself. A file over the bound, or one
whose alias refers to a node that contains it (a recursive alias), is refused with an
:class:`~agenteval.errors.InputError` (exit code 2) naming the file. A few anchors and
merge keys (``<<: *defaults``) stay far below the bound.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from agenteval.errors import InputError

MAX_ALIAS_NODES = 100_000
"""How many nodes alias uses may add to a YAML document, in all."""
_HUGE = 10**15  # sizes are capped here so a deep bomb stays a small number


def alias_expansion(root: yaml.Node) -> int | None:
    """How many nodes alias uses add to the document under ``root`` (capped just above
    :data:`MAX_ALIAS_NODES`), or ``None`` when an alias refers to a node containing it.

    Walks each distinct node once, so a bomb is measured in time proportional to its
    file, not its expansion.
    """
    cap = MAX_ALIAS_NODES + 1
    size: dict[int, int] = {}  # id(node) -> expanded node count (capped)
    unique = 0
    open_: set[int] = set()
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, done = stack.pop()
        key = id(node)
        kids = _children(node)
        if done:
            open_.discard(key)
            total = 1 + sum(size[id(k)] for k in kids)
            size[key] = min(total, _HUGE)
            continue
        if key in size:
            continue
        if key in open_:
            return None  # reached again while inside itself: a recursive alias
        open_.add(key)
        unique += 1
        stack.append((node, True))
        for k in kids:
            if id(k) in open_:
                return None
            if id(k) not in size:
                stack.append((k, False))
    return min(max(size[id(root)] - unique, 0), cap)


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    if isinstance(node, yaml.MappingNode):
        return [n for pair in node.value for n in pair]
    return []


def check_aliases(root: yaml.Node, file: str | Path | None) -> None:
    """Raise InputError (exit code 2) when ``root``'s aliases expand beyond the bound or
    are recursive (see the module docstring)."""
    added = alias_expansion(root)
    if added is None:
        raise InputError("YAML alias refers to a node that contains it (recursive)", file=file)
    if added > MAX_ALIAS_NODES:
        raise InputError(
            f"YAML aliases expand the document by more than {MAX_ALIAS_NODES:,} nodes"
            " (an alias bomb?); write the data out instead of aliasing it",
            file=file,
        )


def safe_load(text: str, file: str | Path | None = None) -> Any:
    """``yaml.safe_load(text)`` with the alias bound checked before anything is built.

    Raises ``yaml.YAMLError`` for invalid YAML (as ``yaml.safe_load`` does; callers turn it
    into their own message) and InputError for an alias bomb.
    """
    loader = yaml.SafeLoader(text)
    try:
        root = loader.get_single_node()
        if root is None:
            return None
        check_aliases(root, file)
        return loader.construct_document(root)
    finally:
        loader.dispose()
