"""Optional peers measured beside agenteval: inspect_ai, DeepEval, promptfoo.

None of them is a dependency of agenteval or of its tests. Each is run only when asked
for (``--peers``) *and* installed; otherwise :func:`peer_command` returns ``None`` with a
message saying why it was skipped. Each peer is given the same dataset, endpoint and
concurrency (100) and checks the answer with its own exact-match scorer.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
from pathlib import Path

from procs import PY

PEERS = ("inspect_ai", "deepeval", "promptfoo")

_INSPECT_TASK = """\
import json
from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.scorer import match
from inspect_ai.solver import generate


@task
def bench():
    with open({dataset!r}, encoding="utf-8") as f:
        rows = [json.loads(line) for line in f if line.strip()]
    samples = [Sample(id=r["id"], input=r["input"], target=r["expected"]) for r in rows]
    return Task(dataset=MemoryDataset(samples), solver=generate(), scorer=match())
"""

_DEEPEVAL_SCRIPT = """\
import asyncio, json, sys
from deepeval import evaluate
from deepeval.metrics import BaseMetric
from deepeval.test_case import LLMTestCase
from openai import AsyncOpenAI

class Exact(BaseMetric):
    threshold = 1.0
    def measure(self, tc, *a, **k):
        self.score = float(tc.actual_output == tc.expected_output)
        self.success = self.score >= self.threshold
        return self.score
    async def a_measure(self, tc, *a, **k):
        return self.measure(tc)
    def is_successful(self):
        return self.success
    @property
    def __name__(self):
        return "exact"

async def answers(rows, base_url):
    client = AsyncOpenAI(base_url=base_url, api_key="bench", max_retries=0)
    sem = asyncio.Semaphore(100)
    async def one(r):
        async with sem:
            resp = await client.chat.completions.create(
                model="m", messages=[{{"role": "user", "content": r["input"]}}])
            return resp.choices[0].message.content
    return await asyncio.gather(*(one(r) for r in rows))

rows = [json.loads(l) for l in open({dataset!r}, encoding="utf-8") if l.strip()]
outs = asyncio.run(answers(rows, {base_url!r}))
cases = [LLMTestCase(input=r["input"], actual_output=o, expected_output=r["expected"])
         for r, o in zip(rows, outs)]
evaluate(cases, [Exact()])
"""


def _promptfoo_config(dataset: Path, base_url: str, work: Path) -> Path:
    tests = []
    with open(dataset, encoding="utf-8") as f:
        for line in f:
            if line.strip():
                r = json.loads(line)
                tests.append(
                    {
                        "vars": {"input": r["input"]},
                        "assert": [{"type": "equals", "value": r["expected"]}],
                    }
                )
    config = {
        "prompts": ["{{input}}"],
        "providers": [{"id": "openai:chat:m", "config": {"apiBaseUrl": base_url}}],
        "tests": tests,
    }
    path = work / "promptfooconfig.json"
    path.write_text(json.dumps(config), encoding="utf-8")
    return path


def peer_command(
    name: str, dataset: Path, base_url: str, work: Path
) -> tuple[list[str] | None, dict[str, str], str]:
    """``(command, env, note)`` to run peer ``name``; command None (note says why) to skip."""
    env = dict(os.environ)
    work.mkdir(parents=True, exist_ok=True)
    if name == "inspect_ai":
        if importlib.util.find_spec("inspect_ai") is None:
            return None, env, "inspect_ai not installed (pip install inspect-ai openai)"
        task = work / "inspect_task.py"
        task.write_text(_INSPECT_TASK.format(dataset=str(dataset)), encoding="utf-8")
        # run in `work` with a relative task path: inspect eval rejects absolute ones
        env.update(BENCH_BASE_URL=base_url, BENCH_API_KEY="bench")
        inspect = shutil.which("inspect", path=str(Path(PY).parent)) or "inspect"
        cmd = [inspect, "eval", task.name, "--model", "openai-api/bench/m"]
        cmd += ["--max-connections", "100", "--log-dir", str(work / "logs"), "--display", "none"]
        return cmd, env, "inspect eval --max-connections 100"
    if name == "deepeval":
        if (
            importlib.util.find_spec("deepeval") is None
            or importlib.util.find_spec("openai") is None
        ):
            return None, env, "deepeval not installed (pip install deepeval openai)"
        script = work / "deepeval_bench.py"
        script.write_text(
            _DEEPEVAL_SCRIPT.format(dataset=str(dataset), base_url=base_url), encoding="utf-8"
        )
        env.update(DEEPEVAL_TELEMETRY_OPT_OUT="YES")
        return [PY, str(script)], env, "openai SDK answers + deepeval evaluate()"
    if name == "promptfoo":
        exe = shutil.which("promptfoo")
        if exe is None:
            return None, env, "promptfoo not installed (npm install -g promptfoo)"
        config = _promptfoo_config(dataset, base_url, work)
        env.update(OPENAI_API_KEY="bench", PROMPTFOO_DISABLE_TELEMETRY="1")
        cmd = [exe, "eval", "-c", str(config), "-j", "100", "--no-cache", "--no-table"]
        return [*cmd, "-o", str(work / "promptfoo.json")], env, "promptfoo eval -j 100"
    return None, env, f"unknown peer {name!r} (known: {', '.join(PEERS)})"
