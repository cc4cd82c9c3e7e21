"""``import-traces`` makes byte for byte the run directory it made before the import was
made fast (issue 30: msgspec and a fast path for OTLP/JSON, lazy protobuf, the log index,
the spool's rows), on a varied corpus: every recorded instrumentation fixture (with its
log files), PydanticAI lines, LangGraph protobuf, the bench's shop agent as JSON and as
protobuf, one trace of many invocations with log records, and the odd shapes the fast
path leaves to the checked decoder (tests/traces/import_corpus.py). Both groupings.

The expected files were written by the code before the change
(``PYTHONPATH=<old src> python tests/traces/import_corpus.py --write-golden``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.traces.import_corpus import GOLDEN, GROUPS, stable_run, write_corpus

from agenteval.cli import main


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[Path]]:
    return write_corpus(tmp_path_factory.mktemp("corpus"))


def _import(
    files: list[Path], out: Path, extra: list[str], capsys: pytest.CaptureFixture[str]
) -> dict:
    capsys.readouterr()
    code = main(["import-traces", *map(str, files), "--out", str(out), "--quiet", *extra])
    got: dict = {"exit": code, "stderr": capsys.readouterr().err}
    if code == 0:
        got["run"] = stable_run(json.loads((out / "run.json").read_text(encoding="utf-8")))
        for name in ("cases.jsonl", "trials.jsonl"):
            got[name] = (out / name).read_text(encoding="utf-8")
    return got


CASES = sorted({p.name.rsplit(".", 2)[0] for p in GOLDEN.glob("*.json")})


def test_the_corpus_has_every_case(corpus: dict[str, list[Path]]) -> None:
    assert sorted(corpus) == CASES
    assert len(CASES) >= 15


@pytest.mark.parametrize("group", sorted(GROUPS))
@pytest.mark.parametrize("case", CASES)
def test_import_makes_the_run_it_made_before(
    case: str,
    group: str,
    corpus: dict[str, list[Path]],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    want = json.loads((GOLDEN / f"{case}.{group}.json").read_text(encoding="utf-8"))
    got = _import(corpus[case], tmp_path / "run", GROUPS[group], capsys)
    assert got["exit"] == want["exit"] == 0
    assert got["stderr"] == want["stderr"]
    assert got["run"] == stable_run(want["run"])
    assert got["cases.jsonl"] == want["cases.jsonl"]
    assert got["trials.jsonl"] == want["trials.jsonl"]
