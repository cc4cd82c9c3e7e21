"""The built-in suites (SPEC §9). See ``docs/benchmarks.md`` for each one's cases.

Every dataset, prompt template and rubric lives in ``benchmarks/data/``. Nothing here runs
at import time: :func:`register_builtins` adds the suites to the registry it is given.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from importlib import resources
from pathlib import Path
from typing import Any

from agenteval.benchmarks.registry import Benchmark, Registry
from agenteval.benchmarks.scorers import answer_match, instruction_following, refusal_check
from agenteval.benchmarks.tools import TOOL_DEFINITIONS
from agenteval.scoring.score import ScorerFn


def data_path(name: str) -> Path:
    """The path of a file shipped in ``agenteval/benchmarks/data``."""
    return Path(str(resources.files("agenteval.benchmarks").joinpath("data", name)))


def _text(name: str) -> str:
    return data_path(name).read_text(encoding="utf-8")


def register_builtins(reg: Registry) -> None:
    """Add the eight built-in suites to ``reg``, in the order ``benchmarks`` lists them."""
    suites = [
        Benchmark(
            name="tool_grounding",
            description="answers that need values only a tool can give (canaries)",
            dataset=data_path("tool_grounding.jsonl"),
            builtin_scorers=(
                "tool_grounding",
                "tool_selection",
                "tool_call_match",
                "tool_arguments_valid",
                "tool_execution",
                "redundant_calls",
            ),
            tools=TOOL_DEFINITIONS,
        ),
        Benchmark(
            name="faithfulness",
            description="answers from a given passage only; true-but-absent counts as invented",
            dataset=data_path("faithfulness.jsonl"),
            prompt=_text("faithfulness.prompt.txt"),
            builtin_scorers=("avoids_forbidden_text",),
            rubric="faithfulness",
        ),
        Benchmark(
            name="prompt_injection",
            description="instructions planted in the input or in tool results must not be obeyed",
            dataset=data_path("prompt_injection.jsonl"),
            builtin_scorers=("avoids_forbidden_text",),
        ),
        Benchmark(
            name="pii_leakage",
            description="requests tempting the agent to reveal personal data it was given",
            dataset=data_path("pii_leakage.jsonl"),
            builtin_scorers=("pii_leakage", "avoids_forbidden_text"),
        ),
        Benchmark(
            name="safety_refusal",
            description="refuse harmful requests, answer their harmless look-alikes",
            dataset=data_path("safety_refusal.jsonl"),
            scorers=(refusal_check,),
            rubric=str(data_path("safety_refusal.rubric.txt")),
        ),
        Benchmark(
            name="instruction_following",
            description="verifiable constraints on length, format and wording",
            dataset=data_path("instruction_following.jsonl"),
            scorers=(instruction_following,),
        ),
        Benchmark(
            name="answer_correctness",
            description="short factual answers matched exactly, by containment or by number",
            dataset=data_path("answer_correctness.jsonl"),
            scorers=(answer_match,),
        ),
        Benchmark(
            name="answer_quality",
            description="open answers graded 1-5 against a reference answer",
            dataset=data_path("answer_quality.jsonl"),
            rubric=str(data_path("answer_quality.rubric.txt")),
        ),
    ]
    for bench in suites:
        reg.add(bench)


@functools.cache
def default_registry() -> Registry:
    """The registry holding the built-in suites, built on first call (then the same one)."""
    reg = Registry()
    register_builtins(reg)
    return reg


def benchmark(
    name: str,
    *,
    dataset: str | Path,
    description: str = "",
    prompt: str | None = None,
    builtin_scorers: tuple[str, ...] | list[str] = (),
    rubric: str | None = None,
    tools: list[dict[str, Any]] | tuple[dict[str, Any], ...] = (),
    registry: Registry | None = None,
) -> Callable[[ScorerFn], ScorerFn]:
    """Decorate a scorer ``fn(case, trial)`` to register a benchmark it decides.

    The decorated function becomes the suite's own scorer (after ``builtin_scorers``) and
    is returned unchanged. The benchmark goes into ``registry``, or into
    :func:`default_registry` when none is given. ``description`` defaults to the first
    line of the function's docstring.
    """

    def register(fn: ScorerFn) -> ScorerFn:
        doc = (fn.__doc__ or "").strip().splitlines()
        (registry if registry is not None else default_registry()).add(
            Benchmark(
                name=name,
                description=description or (doc[0] if doc else ""),
                dataset=Path(dataset),
                prompt=prompt,
                builtin_scorers=tuple(builtin_scorers),
                scorers=(fn,),
                rubric=rubric,
                tools=tuple(tools),
                source=getattr(fn, "__module__", "python"),
            )
        )
        return fn

    return register
