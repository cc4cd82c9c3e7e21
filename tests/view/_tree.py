"""A folder of real run directories for the viewer tests, and a real viewer process."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from _runbuild import XSS_PAYLOADS, bad, ok, sample_cases, sample_trials, write_run

from agenteval.cases.case import Case
from agenteval.trials.trial import Failure, Latency, Trial

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "runs_v0_1"
SCORERS = ["exact_match", "retrieval_recall", "judge_correctness"]
BIG_TAGS = ["alpha", "beta", "gamma"]


def candidate_trials() -> list[tuple[Trial, dict[str, object]]]:
    """The baseline's trials with c1 now failing exact_match and c2 now passing it."""
    out = []
    for trial, scores in sample_trials(xss=True):
        scores = dict(scores)
        if trial.case_id == "c1":
            scores["exact_match"] = bad("now wrong")
        elif trial.case_id == "c2":
            scores["exact_match"] = ok("now right")
        out.append((trial, scores))
    return out


def big_run(run_dir: Path, n: int = 130) -> Path:
    """``n`` trials: every 7th failed (timeout), every 3rd fails exact_match, tags cycle."""
    cases = [
        Case(id=f"b{i:03d}", input=f"q{i}", expected="a", tags=[BIG_TAGS[i % 3]]) for i in range(n)
    ]
    trials = []
    for i, c in enumerate(cases):
        failure = Failure(cause="timeout", message="slow") if i % 7 == 0 else None
        t = Trial(
            case_id=c.id,
            output=None if failure else f"answer number {i}",
            failure=failure,
            latency=Latency(total_s=0.01 * i),
        )
        trials.append((t, {"exact_match": bad() if i % 3 == 0 else ok()}))
    return write_run(run_dir, cases, trials, sha256="sha-big", scorers=["exact_match"])


def build_tree(root: Path) -> Path:
    """base and cand over one dataset (with the XSS corpus), a 130-trial run, the 0.1
    runs, three broken runs (bad run.json, a cut trial line, an unreadable trials.jsonl)
    and one with a torn last line (which loads)."""
    agent = {"kind": "python", "agent": "pkg.agents:Careful", "model": "gpt-4o"}
    write_run(
        root / "a" / "base",
        sample_cases(xss=True),
        sample_trials(xss=True),
        scorers=SCORERS,
        agent=agent,
    )
    write_run(
        root / "a" / "cand",
        sample_cases(xss=True),
        candidate_trials(),
        scorers=SCORERS,
        agent={**agent, "agent": "pkg.agents:Other"},
    )
    big_run(root / "big")
    shutil.copytree(FIXTURES, root / "v01", ignore=shutil.ignore_patterns("_made_with", "*.md"))
    bad_json = root / "broken" / "badjson"
    shutil.copytree(FIXTURES / "demo_careful", bad_json)
    (bad_json / "run.json").write_text("{not json", encoding="utf-8")
    cut = root / "broken" / "truncated"
    shutil.copytree(FIXTURES / "demo_careful", cut)
    lines = (cut / "trials.jsonl").read_bytes().splitlines(keepends=True)
    lines[2] = lines[2][:40] + b"\n"
    (cut / "trials.jsonl").write_bytes(b"".join(lines))
    unreadable = root / "broken" / "unreadable"
    shutil.copytree(FIXTURES / "demo_careful", unreadable)
    (unreadable / "trials.jsonl").unlink()
    (unreadable / "trials.jsonl").mkdir()  # exists, cannot be read as a file (even as root)
    torn = root / "torn"
    shutil.copytree(FIXTURES / "demo_sloppy", torn)
    with open(torn / "trials.jsonl", "ab") as f:
        f.write(b'{"case_id":"half-writ')
    return root


XSS = XSS_PAYLOADS


class Viewer:
    """``agenteval view ROOT --port 0`` in a subprocess; :attr:`url` is where it serves."""

    def __init__(self, root: Path, *extra: str, poll: float = 0.3) -> None:
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "agenteval",
                "view",
                str(root),
                "--port",
                "0",
                "--poll",
                str(poll),
                *extra,
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        m = re.search(r"at (http://\S+/)", line)
        assert m, (line, self.proc.stderr.read() if self.proc.poll() is not None else "")
        self.url = m.group(1)
        self.first_line = line

    def get(self, path: str) -> tuple[int, dict[str, str], bytes]:
        try:
            with urllib.request.urlopen(self.url.rstrip("/") + path, timeout=30) as r:
                return r.status, dict(r.headers), r.read()
        except urllib.error.HTTPError as e:
            return e.code, dict(e.headers), e.read()

    def stop(self) -> str:
        self.proc.terminate()
        try:
            _, err = self.proc.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            _, err = self.proc.communicate()
        return err


@contextmanager
def viewer(root: Path, *extra: str, poll: float = 0.3) -> Iterator[Viewer]:
    v = Viewer(root, *extra, poll=poll)
    try:
        yield v
    finally:
        v.stop()


def wait_for(cond: object, timeout: float = 10.0) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if cond():  # type: ignore[operator]
            return
        time.sleep(0.05)
    raise AssertionError("condition not met in time")
