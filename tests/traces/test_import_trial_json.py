"""A crafted ``agenteval.trial.json`` attribute (export-otel's round trip) on import.

Bug: the attribute's ``conversation`` was restored as it came, so a usage entry that is
not one (``{"input_tokens": "lots"}``) reached the run summary, which stopped the import
with a pydantic traceback (exit 1, no summary) after RUN_DIR was written, and broke
``report`` on that run. What is restored must have the shapes agenteval writes.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agenteval.rundir import iter_trials, read_header


def _trace(tmp: Path, trial_json: Any) -> Path:
    attrs = {
        "gen_ai.operation.name": "invoke_agent",
        "input.value": "hi",
        "output.value": "yo",
        "agenteval.trial.json": json.dumps(trial_json),
    }
    span = {
        "traceId": "1" * 32,
        "spanId": "a" * 16,
        "name": "invoke_agent a",
        "startTimeUnixNano": "1700000000000000000",
        "endTimeUnixNano": "1700000001000000000",
        "attributes": [{"key": k, "value": {"stringValue": v}} for k, v in attrs.items()],
    }
    f = tmp / "t.json"
    f.write_text(json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]}))
    return f


def test_usage_that_is_not_usage_is_left_out_not_a_traceback(tmp_path: Path, cli: Any) -> None:
    good = {"model": "m", "input_tokens": 3, "output_tokens": 4}
    bad = [{"input_tokens": "lots"}, {"output_tokens": 1e300}]
    crafted = {
        "conversation": {
            "turns": [{"user": "u", "output": "o", "usage": [*bad, good]}],
            "user": {"kind": "python", "usage": [*bad, good]},
        },
        "state_error": ["not", "text"],
    }
    out = tmp_path / "out"
    r = cli("import-traces", _trace(tmp_path, crafted), "--out", out, "--quiet")
    assert r.returncode == 0, r.stderr
    assert "Traceback" not in r.stderr
    (trial,) = iter_trials(out)
    conv = trial.metadata["conversation"]
    assert conv["user"]["usage"] == [good]
    assert conv["turns"][0]["usage"] == [good]
    assert "state_error" not in trial.metadata
    assert read_header(out).summary is not None
    assert cli("report", out).returncode == 0
