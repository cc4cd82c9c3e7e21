"""YAML alias bombs are refused at once (exit code 2, one line naming the file).

The classic "billion laughs": nine levels of nine aliases, 9**9 = 387 million strings from
a file of about 350 bytes. Before the bound, ``agenteval run`` on it took 30 s and 1.3 GB
before the first case ran. Every YAML input (dataset, HTTP/JSON agent config, tool
definitions, price table, benchmark file) goes through the same guarded loader.
"""

from __future__ import annotations

import itertools
import time
from pathlib import Path

import pytest
from reliability_support import no_traceback, record_figures, run_cli, write_jsonl

from agenteval.errors import EXIT_INPUT

pytestmark = pytest.mark.reliability

_LEVELS = "abcdefghi"


def bomb_yaml() -> str:
    """A 9-level billion-laughs document under a mapping key ``x``."""
    lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for prev, cur in itertools.pairwise(_LEVELS):
        lines.append(f"{cur}: &{cur} [" + ",".join([f"*{prev}"] * 9) + "]")
    return "\n".join(lines) + "\n"


def _dataset_bomb() -> str:
    body = "".join("    " + line + "\n" for line in bomb_yaml().splitlines())
    return f"- id: bomb\n  input: hi\n  metadata:\n{body}"


def test_dataset_alias_bomb_fails_fast(tmp_path: Path) -> None:
    text = _dataset_bomb()
    assert len(text.encode()) < 450  # a few hundred bytes
    path = tmp_path / "bomb.yaml"
    path.write_text(text, encoding="utf-8")
    t0 = time.perf_counter()
    p = run_cli(
        "run", path, "--agent", "_payload_agent:answer", "--out", tmp_path / "r", timeout=25
    )
    took = time.perf_counter() - t0
    assert p.returncode == EXIT_INPUT, p.stderr
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and str(path) in lines[0] and "alias" in lines[0], p.stderr
    assert no_traceback([p.stdout, p.stderr])
    assert not (tmp_path / "r" / "trials.jsonl").exists()
    assert took < 10, took
    record_figures("yaml_alias_bomb", {"bytes": len(text.encode()), "seconds": round(took, 2)})


def test_a_few_anchors_still_load(tmp_path: Path) -> None:
    path = tmp_path / "cases.yaml"
    path.write_text(
        "defaults: &d {lang: en, tags: [smoke]}\n"
        "cases:\n"
        "  - {id: a, input: one, expected: one, metadata: *d}\n"
        "  - {id: b, input: two, expected: two, metadata: {<<: *d, lang: fr}}\n",
        encoding="utf-8",
    )
    p = run_cli("run", path, "--agent", "_echo_agent:echo", "--out", tmp_path / "r", "--quiet")
    assert p.returncode == 0, p.stderr
    trials = (tmp_path / "r" / "trials.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(trials) == 2


@pytest.mark.parametrize("kind", ["http-config", "tool-defs", "prices", "benchmark-file"])
def test_other_yaml_inputs_refuse_the_bomb(tmp_path: Path, kind: str) -> None:
    dataset = write_jsonl(tmp_path / "cases.jsonl", [{"id": "a", "input": "q"}])
    bomb = tmp_path / f"{kind}.yaml"
    bomb.write_text(bomb_yaml(), encoding="utf-8")
    agent = ["--agent", "_echo_agent:echo"]
    extra = {
        "http-config": ["--http-config", bomb],
        "tool-defs": [*agent, "--tool-defs", bomb],
        "prices": [*agent, "--prices", bomb],
        "benchmark-file": [*agent, "--benchmark-file", bomb, "--benchmark", "x"],
    }[kind]
    args: list[str | Path] = ["run", dataset, *extra, "--out", tmp_path / "r"]
    if kind == "benchmark-file":
        args = ["run", *extra, "--out", tmp_path / "r"]
    p = run_cli(*args, timeout=25)
    assert p.returncode == EXIT_INPUT, (p.returncode, p.stderr)
    assert str(bomb) in p.stderr and "alias" in p.stderr, p.stderr
    assert no_traceback([p.stdout, p.stderr])
