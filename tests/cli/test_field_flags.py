"""Errors below the command line name the field; the command line says the flag."""

from __future__ import annotations

from pathlib import Path

import pytest

from agenteval.benchmarks import default_registry
from agenteval.benchmarks._suites import benchmark_scorers
from agenteval.cli import FIELD_FLAGS, flag_errors, main
from agenteval.errors import FieldName, InputError


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


FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "runs_71a23f8"


def test_the_gate_names_its_fields_and_the_command_line_its_flags(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from agenteval.gate import compare_runs

    base, cand = str(FIXTURES / "demo_careful"), str(FIXTURES / "demo_sloppy")
    for kwargs, field in [
        ({"alpha": 2.0}, "alpha"),
        ({"alpha": 5e-324}, "alpha"),
        ({"max_drop": {"nope": 0.1}}, "max_drop"),
        ({"max_drop": {"exact_match": 2.0}}, "max_drop"),
        ({"require": {"nope": 0.5}}, "require"),
        ({"no_new_failures": ["nope"]}, "no_new_failures"),
    ]:
        with pytest.raises(InputError) as e:
            compare_runs(base, cand, **kwargs)  # type: ignore[arg-type]
        assert e.value.field == field and "--" not in e.value.message, (kwargs, e.value)
    for args, flag in [
        (["--alpha", "5e-324"], "--alpha"),
        (["--max-drop", "nope=0.1"], "--max-drop"),
        (["--require", "x>=2"], "--require"),
        (["--no-new-failures", "zz"], "--no-new-failures"),
    ]:
        assert main(["gate", base, cand, *args]) == 2
        err = capsys.readouterr().err
        assert err.startswith(f"agenteval: error: field '{flag}': ") and err.count("\n") == 1


def test_a_field_named_inside_a_message_is_its_flag_on_the_command_line(tmp_path: Path) -> None:
    from agenteval._util.imports import load_callable
    from agenteval._util.outpaths import check_out_dir
    from agenteval.traces.receiver import parse_address

    with pytest.raises(InputError) as e:
        parse_address("host:x")
    assert e.value.fields == ("otlp_receiver",)
    assert str(e.value) == "otlp_receiver must be HOST:PORT (port 0-65535) or auto, got 'host:x'"
    with pytest.raises(InputError) as e, flag_errors(**FIELD_FLAGS):
        parse_address("host:x")
    assert str(e.value).startswith("--otlp-receiver must be HOST:PORT")

    with pytest.raises(InputError) as e:
        load_callable("nope", what="agent", option="agent")
    assert (
        e.value.message
        == "agent 'agent nope' must look like package.module:function or file.py:function"
    )
    renamed = e.value.renamed(FIELD_FLAGS)
    assert renamed is not None and renamed.message.startswith("agent '--agent nope' must look")

    data = tmp_path / "cases.jsonl"
    data.write_text('{"id": "a", "input": "q"}\n')
    with pytest.raises(InputError) as e:
        check_out_dir(tmp_path, [("dataset", data)])
    assert e.value.fields == ("out", "out") and "--" not in e.value.message
    renamed = e.value.renamed(FIELD_FLAGS)
    assert renamed is not None
    assert (
        renamed.message
        == f"--out {tmp_path} contains the dataset {data}; --out must be a new directory"
    )


def test_an_error_naming_no_known_field_is_left_as_it_is() -> None:
    e = InputError(("give ", FieldName("nothing_mapped"), " once"), file="f.yaml", line=2)
    assert e.renamed(FIELD_FLAGS) is None
    assert str(e) == "f.yaml:2: give nothing_mapped once"
    with pytest.raises(InputError) as caught, flag_errors(**FIELD_FLAGS):
        raise e
    assert caught.value is e


def test_every_field_flag_is_a_flag() -> None:
    for field, flag in FIELD_FLAGS.items():
        assert field.isidentifier() and flag.startswith("--"), (field, flag)


def test_the_agent_flag_in_a_cli_message(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "cases.jsonl"
    data.write_text('{"id": "a", "input": "q"}\n')
    out = tmp_path / "r"
    assert main(["run", str(data), "--agent", "nope", "--out", str(out), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err == (
        "agenteval: error: agent '--agent nope' must look like package.module:function"
        " or file.py:function\n"
    )


def test_any_agenteval_error_may_name_a_field_the_cli_shows_as_its_flag() -> None:
    import errno

    from agenteval.errors import RunWriteError
    from agenteval.executors.driver import WorkersLostError

    e = RunWriteError.from_os_error(OSError(errno.ENOSPC, "No space left on device"), "r")
    assert (
        str(e)
        == "cannot write r: No space left on device; what was written is kept (resume continues)"
    )
    with pytest.raises(RunWriteError) as caught, flag_errors(**FIELD_FLAGS):
        raise e
    assert caught.value.exit_code == 5
    assert str(caught.value).endswith("what was written is kept (--resume continues)")
    lost = WorkersLostError.named("every worker was lost; run again with ", FieldName("resume"))
    renamed = lost.renamed(FIELD_FLAGS)
    assert renamed is not None and str(renamed) == "every worker was lost; run again with --resume"
    assert type(renamed) is WorkersLostError and str(lost).endswith("with resume")


def test_a_note_names_fields_and_the_cli_says_the_flags() -> None:
    from agenteval.cli._common import flagged
    from agenteval.errors import NamedText
    from agenteval.scorers.config import ScorerOverrides, rebuild_scorers
    from agenteval.scoring.spec import ScorerSpec
    from agenteval.traces.receiver import ReceiverStats

    spec = ScorerSpec(name="polite", ref="my_scorers:polite")
    notes = rebuild_scorers([spec], ScorerOverrides(), where="run.json").notes
    assert len(notes) == 1 and isinstance(notes[0], NamedText)
    assert "only with trust_run;" in notes[0] and "(or give scorer my_scorers:polite)" in notes[0]
    assert flagged(notes[0]).endswith(
        "only with --trust-run; its stored scores are kept (or give --scorer my_scorers:polite)"
    )
    line = ReceiverStats().line(2.0)
    assert "(otlp_wait 2)" in line and "(--otlp-wait 2)" in flagged(line)
    assert flagged("plain text") == "plain text"
