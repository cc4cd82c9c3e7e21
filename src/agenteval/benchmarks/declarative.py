"""Benchmarks declared in a YAML (or JSON) file instead of Python.

::

    benchmarks:
      - name: support_tone
        description: polite, short answers to support tickets
        dataset: tickets.jsonl           # relative to this file
        prompt: "Reply to the customer: {input}"    # or prompt_file: prompt.txt
        scorers: [avoids_forbidden_text, instruction_following, mypkg.scorers:tone]
        rubric: answer_relevance         # a built-in rubric, or a template file
        tools_file: tools.json           # or tools: [ ...definitions... ]

A file may also hold one benchmark as a top-level mapping. ``scorers`` names built-in
scorers (:data:`agenteval.scorers.BUILTIN_SCORER_NAMES`), suite scorers
(:data:`SUITE_SCORERS`) or ``module:function`` callables. Every problem is an
:class:`~agenteval.errors.InputError` naming the file and the field.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agenteval._util import yaml_guard
from agenteval._util.imports import load_callable
from agenteval.benchmarks.registry import Benchmark, Registry
from agenteval.benchmarks.scorers import answer_match, instruction_following, refusal_check
from agenteval.errors import InputError
from agenteval.scorers import BUILTIN_SCORER_NAMES
from agenteval.scoring.score import ScorerFn

SUITE_SCORERS: dict[str, ScorerFn] = {
    "instruction_following": instruction_following,
    "answer_match": answer_match,
    "refusal_check": refusal_check,
}
"""Suite scorers a declarative benchmark may name."""

_KEYS = {
    "name",
    "description",
    "dataset",
    "prompt",
    "prompt_file",
    "scorers",
    "rubric",
    "tools",
    "tools_file",
}


def load_benchmark_file(path: str | Path, registry: Registry) -> list[Benchmark]:
    """Register every benchmark declared in ``path`` into ``registry``; return them."""
    import yaml

    p = Path(path)
    try:
        data = yaml_guard.safe_load(p.read_text(encoding="utf-8"), p)
    except (OSError, UnicodeDecodeError) as e:
        raise InputError(f"cannot be read ({e})", file=p) from None
    except yaml.YAMLError as e:
        raise InputError(f"not valid YAML ({e})".replace("\n", " "), file=p) from None
    items = data.get("benchmarks") if isinstance(data, dict) and "benchmarks" in data else data
    if isinstance(items, dict):
        items = [items]
    if not isinstance(items, list) or not items:
        raise InputError("must hold a benchmark or a list under 'benchmarks'", file=p)
    return [registry.add(_one(item, p)) for item in items]


def _one(item: Any, path: Path) -> Benchmark:
    if not isinstance(item, dict):
        raise InputError("each benchmark must be a mapping", file=path)
    unknown = sorted(set(item) - _KEYS)
    if unknown:
        raise InputError(f"unknown key(s) {', '.join(unknown)}", file=path, field=unknown[0])
    name = item.get("name")
    if not isinstance(name, str) or not name.strip():
        raise InputError("needs a non-empty 'name'", file=path, field="name")
    if not isinstance(item.get("dataset"), str):
        raise InputError(f"benchmark '{name}' needs a 'dataset' path", file=path, field="dataset")
    base = path.parent
    prompt = item.get("prompt")
    if item.get("prompt_file"):
        prompt = _read(base / str(item["prompt_file"]), path, "prompt_file")
    if prompt is not None and not isinstance(prompt, str):
        raise InputError("'prompt' must be a string", file=path, field="prompt")
    builtin: list[str] = []
    own: list[ScorerFn] = []
    raw_scorers = item.get("scorers") or []
    if not isinstance(raw_scorers, list) or not all(isinstance(s, str) for s in raw_scorers):
        raise InputError("'scorers' must be a list of names", file=path, field="scorers")
    for s in raw_scorers:
        if s in BUILTIN_SCORER_NAMES:
            builtin.append(s)
        elif s in SUITE_SCORERS:
            own.append(SUITE_SCORERS[s])
        elif ":" in s:
            own.append(load_callable(s, what="scorer", option="scorers"))
        else:
            known = ", ".join([*BUILTIN_SCORER_NAMES, *SUITE_SCORERS])
            raise InputError(
                f"unknown scorer {s!r} (known: {known}, or module:function)",
                file=path,
                field="scorers",
            )
    rubric = item.get("rubric")
    if rubric is not None:
        if not isinstance(rubric, str):
            raise InputError("'rubric' must be a string", file=path, field="rubric")
        candidate = base / rubric
        rubric = str(candidate) if candidate.is_file() else rubric
    tools = item.get("tools") or []
    if item.get("tools_file"):
        # imported on first use, so that importing this module stays light
        from agenteval.cases.tooldefs import load_tool_file

        tools = load_tool_file(str(base / str(item["tools_file"])))
    if not isinstance(tools, list):
        raise InputError("'tools' must be a list of definitions", file=path, field="tools")
    return Benchmark(
        name=name,
        description=str(item.get("description") or ""),
        dataset=base / item["dataset"],
        prompt=prompt,
        builtin_scorers=tuple(builtin),
        scorers=tuple(own),
        rubric=rubric,
        tools=tuple(tools),
        source=str(path),
    )


def _read(p: Path, source: Path, field: str) -> str:
    try:
        return p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise InputError(f"cannot read {p} ({e})", file=source, field=field) from None
