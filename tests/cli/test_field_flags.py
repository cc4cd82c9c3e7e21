"""Errors below the command line name the field; the command line says the flag."""

from __future__ import annotations

from pathlib import Path

import pytest

from agenteval.benchmarks import default_registry
from agenteval.benchmarks._suites import benchmark_scorers
from agenteval.cli import FIELD_FLAGS, flag_errors, main
from agenteval.errors import InputError


def test_below_the_command_line_the_error_names_the_field() -> None:
    with pytest.raises(InputError) as e:
        default_registry().get("nope")
    assert e.value.field == "benchmark"
    with pytest.raises(InputError) as e:
        benchmark_scorers(default_registry().get("tool_grounding"), ["bogus"])
    assert e.value.field == "pii_kinds"


def test_the_command_line_says_the_flag_with_the_same_words(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = str(tmp_path / "r")
    assert main(["run", "--benchmark", "nope", "--agent", "x:y", "--out", out]) == 2
    err = capsys.readouterr().err
    assert err.startswith("agenteval: error: field '--benchmark': unknown benchmark 'nope' (known:")
    args = ["run", "--benchmark", "tool_grounding", "--pii-kinds", "bogus", "--agent", "x:y"]
    assert main([*args, "--out", out]) == 2
    assert capsys.readouterr().err.startswith(
        "agenteval: error: field '--pii-kinds': unknown PII kind(s) 'bogus'"
    )
    assert not Path(out).exists()


def test_flag_errors_maps_only_the_fields_it_knows() -> None:
    with pytest.raises(InputError) as e, flag_errors(**FIELD_FLAGS):
        raise InputError("must be one of process, ray", field="executor", file="f", line=3)
    assert str(e.value) == "f:3: field '--executor': must be one of process, ray"
    with pytest.raises(InputError) as e, flag_errors(**FIELD_FLAGS):
        raise InputError("must be >= 1", field="processes")
    assert str(e.value) == "field 'processes': must be >= 1"
