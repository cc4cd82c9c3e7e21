"""The judge's cache under the four modes of the one cache design (docs/cache.md)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from _judge_fake import FakeJudge, Reply

from agenteval.cases.case import Case
from agenteval.errors import InputError
from agenteval.judge import Judge, JudgeConfig, load_rubric
from agenteval.llm.http import RetryPolicy
from agenteval.trials.trial import Trial

CASE = Case(id="c1", input="What is 6 x 7?", expected="42")
TRIALS = [Trial(case_id="c1", output=f"answer {i}") for i in range(4)]


def _judge(srv: FakeJudge, cache: Path, mode: str) -> Judge:
    config = JudgeConfig(
        endpoint=srv.base_url,
        model="judge-m",
        rubrics=[load_rubric("correctness")],
        policy=RetryPolicy(max_retries=0),
        cache_dir=cache,
        cache_mode=mode,
    )
    judge = Judge(config)

    async def go() -> None:
        async with judge:
            await asyncio.gather(*(judge.score(CASE, t) for t in TRIALS))

    asyncio.run(go())
    return judge


def test_each_mode_reads_and_writes_as_documented(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    with FakeJudge(default=Reply("ok\nGRADE: C")) as srv:
        ro = _judge(srv, cache, "read-only")  # empty cache: every call made, none stored
        assert (ro.calls, ro.cache_hits, srv.calls) == (4, 0, 4)
        assert not list(cache.rglob("*.json"))
        rw = _judge(srv, cache, "read-write")
        assert (rw.calls, srv.calls) == (4, 8) and len(list(cache.rglob("*.json"))) == 4
        hit: Any = _judge(srv, cache, "read-only")
        assert (hit.calls, hit.cache_hits, srv.calls) == (0, 4, 8)
        fresh = _judge(srv, cache, "refresh")  # always call, store over the old entries
        assert (fresh.calls, fresh.cache_hits, srv.calls) == (4, 0, 12)
        off = _judge(srv, cache, "off")
        assert (off.calls, srv.calls) == (4, 16) and off.describe()["cache"] is None


def test_an_unknown_mode_names_the_field_and_the_cli_the_flag(tmp_path: Path) -> None:
    from agenteval.cli import FIELD_FLAGS

    with pytest.raises(InputError, match="read-write") as e:
        JudgeConfig(
            endpoint="http://127.0.0.1:9/v1",
            model="m",
            rubrics=[load_rubric("correctness")],
            cache_mode="sometimes",
        )
    assert e.value.field == "cache_mode"
    renamed = e.value.renamed(FIELD_FLAGS)
    assert renamed is not None and str(renamed).startswith("field '--cache-mode': must be one of")
