"""Registry, decorator, declarative files, built-in data and the tool_grounding tools."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agenteval.benchmarks import (
    Benchmark,
    Registry,
    benchmark,
    benchmark_scorers,
    default_registry,
    load_benchmark_file,
)
from agenteval.benchmarks import tools as bench_tools
from agenteval.cases.case import Case
from agenteval.dataset import iter_cases, scan_dataset
from agenteval.errors import InputError
from agenteval.scoring.spec import scorer_name


def test_decorator_registers_into_the_given_registry_only(tmp_path: Path) -> None:
    reg = Registry()
    before = default_registry().names()

    @benchmark("mine", dataset=tmp_path / "c.jsonl", builtin_scorers=["exact_match"], registry=reg)
    def polite(case: object, trial: object) -> bool:
        """Answers say please."""
        return True

    assert reg.names() == ["mine"] and default_registry().names() == before
    b = reg.get("mine")
    assert b.description == "Answers say please." and b.scorer_names == ["exact_match", "polite"]
    with pytest.raises(InputError, match="registered twice"):
        reg.add(b)
    with pytest.raises(InputError, match=r"unknown benchmark 'x'.*mine"):
        reg.get("x")


def test_default_registry_is_built_once_and_copies_are_independent() -> None:
    reg = default_registry()
    assert reg is default_registry()
    cp = reg.copy()
    cp.add(Benchmark(name="extra", description="", dataset=Path("x.jsonl")))
    assert "extra" in cp and "extra" not in reg


def test_every_builtin_dataset_is_valid_and_has_30_cases() -> None:
    for b in default_registry():
        ref = scan_dataset(b.dataset)
        assert ref.cases >= 30, b.name
        assert b.case_count() == ref.cases
        assert [f.__name__ for f in benchmark_scorers(b)] or b.needs_judge


def test_tool_grounding_canaries_are_reachable_only_through_the_tool(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AGENTEVAL_CACHE_DIR", str(tmp_path))
    bench = default_registry().get("tool_grounding")
    names = {d["name"] for d in bench_tools.TOOL_DEFINITIONS}
    for case in iter_cases(bench.dataset):
        assert case.canary and case.tools and set(case.expected_tools or {}) <= names
        results = [
            bench_tools.call_tool(x["tool"], x["arguments"]) for x in case.metadata["lookups"]
        ]
        text = json.dumps(results).lower()
        for c in case.canary:
            assert c.lower() in text, (case.id, c)
            assert c.lower() not in case.input_text().lower(), (case.id, c)
    assert len(list((tmp_path / "benchmarks").glob("*.sqlite"))) == 1
    with pytest.raises(LookupError, match="no employee"):
        bench_tools.lookup_employee("LB-0000")


def test_injection_payloads_are_planted_and_pii_is_given() -> None:
    reg = default_registry()
    for case in iter_cases(reg.get("prompt_injection").dataset):
        planted = (case.must_not_contain or [""])[0] in json.dumps(case.input)
        assert planted != ("control" in case.tags), case.id
    for case in iter_cases(reg.get("pii_leakage").dataset):
        assert any(v in case.input_text() for v in case.must_not_contain or []), case.id
    kinds = [c.metadata["expected_behavior"] for c in iter_cases(reg.get("safety_refusal").dataset)]
    assert kinds.count("refuse") == kinds.count("comply") == 15


def test_declarative_file_errors_name_the_field(tmp_path: Path) -> None:
    f = tmp_path / "b.yaml"
    f.write_text("name: x\ndataset: c.jsonl\nscorers: [no_such]\n")
    with pytest.raises(InputError, match="unknown scorer 'no_such'") as e:
        load_benchmark_file(f, Registry())
    assert e.value.field == "scorers"
    f.write_text("name: x\ndataset: c.jsonl\nbogus: 1\n")
    with pytest.raises(InputError, match="unknown key"):
        load_benchmark_file(f, Registry())
    (tmp_path / "p.txt").write_text("Q: {input}")
    f.write_text(
        "name: x\ndataset: c.jsonl\nprompt_file: p.txt\nrubric: correctness\n"
        "scorers: [exact_match, answer_match]\n"
    )
    (b,) = load_benchmark_file(f, Registry())
    assert b.prompt == "Q: {input}" and b.needs_judge and b.dataset == tmp_path / "c.jsonl"
    assert [scorer_name(s) for s in benchmark_scorers(b)] == ["exact_match", "answer_match"]
    assert Case.model_validate({"id": "a", "input": "b"}).id == "a"
