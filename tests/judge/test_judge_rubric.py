"""Rubrics: built-ins, scales, needs derived from placeholders, custom templates."""

from __future__ import annotations

from pathlib import Path

import pytest

from agenteval.cases.case import Case
from agenteval.cli.judge_args import parse_rubric_spec
from agenteval.errors import InputError
from agenteval.judge import BUILTIN_RUBRICS, SCALES, Rubric, load_rubric, not_applicable_reason
from agenteval.trials.trial import ToolCall, Trial


def test_builtins_load_with_their_scales_and_needs() -> None:
    expected = {
        "correctness": ("binary", ("output", "expected")),
        "groundedness": ("binary", ("output", "tool_results")),
        "answer_relevance": ("likert", ("output",)),
        "context_relevance": ("likert", ("tool_results",)),
        "faithfulness": ("binary", ("output", "context")),
    }
    assert set(BUILTIN_RUBRICS) == set(expected)
    for name in BUILTIN_RUBRICS:
        r = load_rubric(name)
        assert (r.scale, r.needs) == expected[name], name
        assert r.score_name == f"judge_{name}"
        assert r.source == "builtin"
        assert r.question


def test_scale_values_and_thresholds() -> None:
    assert dict(SCALES["binary"].values) == {"C": 1.0, "I": 0.0}
    assert dict(SCALES["partial"].values) == {"C": 1.0, "P": 0.5, "I": 0.0}
    assert [SCALES["likert"].value(str(n)) for n in range(1, 6)] == [0.2, 0.4, 0.6, 0.8, 1.0]
    assert SCALES["binary"].threshold == 1.0
    assert SCALES["partial"].threshold == 0.5
    assert SCALES["likert"].threshold == 0.5


def test_not_applicable_when_needs_are_missing() -> None:
    case = Case(id="a", input="q")
    answered = Trial(case_id="a", output="x")
    assert "expected" in (not_applicable_reason(load_rubric("correctness"), case, answered) or "")
    assert "context" in (not_applicable_reason(load_rubric("faithfulness"), case, answered) or "")
    assert "tool results" in (
        not_applicable_reason(load_rubric("groundedness"), case, answered) or ""
    )
    assert not_applicable_reason(load_rubric("answer_relevance"), case, answered) is None
    only_error = Trial(case_id="a", output="x", tool_calls=[ToolCall(name="t", error="boom")])
    assert not_applicable_reason(load_rubric("context_relevance"), case, only_error) is not None
    with_result = Trial(case_id="a", output=None, tool_calls=[ToolCall(name="t", result="r")])
    assert not_applicable_reason(load_rubric("context_relevance"), case, with_result) is None
    reason = not_applicable_reason(load_rubric("answer_relevance"), case, with_result)
    assert reason is not None and "no answer" in reason


def test_custom_rubric_file_front_matter_and_scale_override(tmp_path: Path) -> None:
    f = tmp_path / "tone.txt"
    f.write_text(
        "---\nscale: likert\nquestion: Polite?\nthreshold: 0.8\n---\n"
        'Answer: {output}\nQuestion: {input}\nJSON example {"grade": "5"} stays.\n'
    )
    r = load_rubric(f)
    assert (r.name, r.scale, r.question, r.pass_threshold) == ("tone", "likert", "Polite?", 0.8)
    assert r.needs == ("output",)
    assert '{"grade": "5"}' in r.template
    assert load_rubric(f, scale="binary").scale == "binary"
    assert parse_rubric_spec(f"{f}:partial").scale == "partial"
    assert parse_rubric_spec("correctness:likert").scale == "likert"


def test_python_rubric() -> None:
    r = Rubric(name="concise", template="Is {output} concise?", scale="partial")
    assert r.pass_threshold == 0.5 and r.needs == ("output",)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"template": "{ouput}"}, "unknown placeholder {ouput}"),
        ({"template": "Is {input} hard?"}, "nothing to grade"),
        ({"template": "{output}", "scale": "stars"}, "unknown scale"),
        ({"template": "{output}", "threshold": 2.0}, "threshold"),
        ({"template": "{output}", "name": "bad name"}, "rubric name"),
    ],
)
def test_bad_rubrics_are_input_errors(kwargs: dict[str, object], message: str) -> None:
    args: dict[str, object] = {"name": "x", **kwargs}
    with pytest.raises(InputError, match=message):
        Rubric(**args)  # type: ignore[arg-type]


def test_unknown_rubric_and_bad_front_matter(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="unknown rubric 'nope'"):
        load_rubric("nope")
    bad = tmp_path / "bad.txt"
    bad.write_text("---\ncolour: red\n---\n{output}\n")
    with pytest.raises(InputError, match="front matter"):
        load_rubric(bad)
    unclosed = tmp_path / "unclosed.txt"
    unclosed.write_text("---\nscale: binary\n")
    with pytest.raises(InputError, match="never closed"):
        load_rubric(unclosed)


def test_safety_flag_from_front_matter_reaches_the_scorer_spec(tmp_path: Path) -> None:
    path = tmp_path / "harm.txt"
    path.write_text("---\nsafety: true\nscale: partial\n---\nIs it harmless?\n{output}\n")
    r = load_rubric(path)
    assert r.safety and r.describe()["safety"] is True
    spec = r.spec({"model": "m", "endpoint": "http://127.0.0.1:1/v1"})
    assert (spec.name, spec.kind, spec.threshold, spec.safety) == (
        "judge_harm",
        "graded",
        0.5,
        True,
    )
    assert spec.ref == f"judge:{path}" and spec.settings["model"] == "m"
    assert not load_rubric("correctness").safety
    assert load_rubric("correctness").spec({}).ref == "judge:correctness"


def test_safety_front_matter_must_be_true_or_false(tmp_path: Path) -> None:
    path = tmp_path / "harm.txt"
    path.write_text("---\nsafety: maybe\n---\n{output}\n")
    with pytest.raises(InputError, match="safety must be true or false"):
        load_rubric(path)


def test_the_safety_refusal_suite_rubric_is_a_safety_scorer() -> None:
    from agenteval.benchmarks import default_registry

    bench = default_registry().get("safety_refusal")
    assert bench.rubric is not None
    rubric = load_rubric(bench.rubric)
    assert rubric.safety and rubric.spec({}).safety
