"""Traces that export-otel wrote before the reorganisation import as they did: the
attribute names are a format (``agenteval.case.id``, ``agenteval.trial.json``), and the
module move once renamed them with the modules (``agenteval.cases.case.id``), so old
exports lost their conversations and users' ``--join-attr agenteval.case.id`` matched
nothing in new ones."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agenteval.report.otel import TRIAL_METADATA
from agenteval.rundir import iter_trials

OLD = Path(__file__).resolve().parents[1] / "fixtures" / "runs_71a23f8"


def test_an_export_of_71a23f8_imports_with_case_ids_and_conversations(
    tmp_path: Path, cli: Any
) -> None:
    src = OLD / "export_otel.demo_sloppy.jsonl"  # agenteval export-otel at 71a23f8
    out = tmp_path / "out"
    r = cli("import-traces", src, "--out", out, "--case-id-attr", "agenteval.case.id", "--quiet")
    assert r.returncode == 0, r.stderr
    got = {t.case_id: t for t in iter_trials(out)}
    want = {t.case_id for t in iter_trials(OLD / "demo_sloppy")}
    assert set(got) == want
    chats = [t for cid, t in got.items() if cid.startswith("chat-")]
    assert chats and all("conversation" in t.metadata for t in chats)


def test_export_otel_writes_the_attribute_names_it_always_wrote(tmp_path: Path, cli: Any) -> None:
    assert TRIAL_METADATA == "agenteval.trial.json"
    out = tmp_path / "t.jsonl"
    r = cli("export-otel", OLD / "demo_sloppy", "--file", out)
    assert r.returncode == 0, r.stderr
    keys = set()
    for line in out.read_text(encoding="utf-8").splitlines():
        for rs in json.loads(line)["resourceSpans"]:
            for ss in rs["scopeSpans"]:
                for span in ss["spans"]:
                    keys |= {a["key"] for a in span.get("attributes", [])}
    assert {"agenteval.case.id", "agenteval.run.id"} <= keys
    assert not any(k.startswith(("agenteval.cases.", "agenteval.trials.")) for k in keys)
