"""The LLM judge: grades trials with rubrics through an OpenAI-compatible endpoint.

For each rubric a :class:`Judge` renders the fenced prompt, asks the judge model
``samples`` times (through the shared :class:`~agenteval.llm.http.HttpClient`: the same
retries, back-off and failure causes as agent calls), reads each verdict, and returns one
:class:`~agenteval.scoring.score.Score` per rubric under ``judge_<rubric>``:

- **not applicable** (value None, reason ``not applicable: …``) when the case or trial
  lacks what the rubric needs (see :func:`agenteval.judge.prompt.not_applicable_reason`);
  no call is made;
- **inconclusive** (status ``inconclusive``, value None, reason ``inconclusive: …``) when
  the judge failed (HTTP error, retries exhausted), refused, gave no verdict, or its
  samples tied, or when the run was interrupted twice (Ctrl-C) while the judge was asked:
  the runner cancels the calls in flight and records :meth:`Judge.inconclusive` scores.
  Never a fail, and never raised;
- otherwise the majority verdict's value on the rubric's scale, with a reason naming the
  verdict, the agreement among samples (``3/3 agree``), whether it came from the cache, and
  an excerpt of the judge's reasoning.

The judge's token usage goes on ``Score.usage`` (priced as *judge* cost by reports); a
reply served from the cache cost nothing and carries no usage. With more than one sample,
the temperature defaults to 0.7 (else 0.0) and each sample is cached separately.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import Counter
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from agenteval._util.secrets import Redactor
from agenteval.cases.case import Case
from agenteval.judge._client import JudgeReply, request_verdict
from agenteval.judge.config import SAMPLED_TEMPERATURE, JudgeConfig, JudgeStats
from agenteval.judge.parse import Verdict, parse_verdict
from agenteval.judge.prompt import RenderedPrompt, not_applicable_reason, render_prompt
from agenteval.judge.rubric import Rubric
from agenteval.llm.cache import CachedReply, JudgeCache, cache_key
from agenteval.llm.http import HttpClient
from agenteval.llm.recorder import AgentFailure, Recorder
from agenteval.scoring.score import Score
from agenteval.scoring.spec import ScorerSpec
from agenteval.trials.trial import Trial, Usage

__all__ = ["SAMPLED_TEMPERATURE", "Judge", "JudgeConfig", "JudgeStats", "Judgment"]

_REASONING_EXCERPT = 300
_CLAIM_POLL_S = 0.05


@dataclass(frozen=True, slots=True)
class Judgment:
    """One rubric's judgment of one trial: the score and the grade it came from."""

    score: Score
    grade: str | None


@dataclass(frozen=True, slots=True)
class _Sample:
    verdict: Verdict | None
    error: str | None
    usage: list[Usage]
    cached: bool


def _safe_endpoint(url: str, redactor: Redactor) -> str:
    """The endpoint without user info, query or fragment, secrets removed."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"  # IPv6
    if parts.port is not None:
        host = f"{host}:{parts.port}"
    return redactor.redact(urlunsplit((parts.scheme, host, parts.path, "", "")))


class Judge:
    """Grades trials with LLM rubrics (see the module docstring for the semantics)."""

    def __init__(self, config: JudgeConfig) -> None:
        self.config = config
        self.stats = JudgeStats()
        self._redactor = Redactor([config.api_key] if config.api_key else [])
        headers = {"Authorization": f"Bearer {config.api_key}"} if config.api_key else {}
        self._client = HttpClient(
            config.policy,
            limit=config.concurrency,
            headers=headers,
            secrets=[config.api_key] if config.api_key else [],
        )
        self._cache = (
            JudgeCache(config.cache_dir, config.cache_mode)
            if config.cache_dir is not None and config.cache_mode != "off"
            else None
        )
        self._sem: asyncio.Semaphore | None = None
        self.claim_since: float | None = None
        """Set on a worker re-judging a lost worker's trial: a cache entry stored at or after
        this time (the run's start) is that worker's paid reply, reported as the call it was
        (its usage, not ``cached``), as the one-process judge reported it."""

    @property
    def names(self) -> list[str]:
        """The score names this judge produces: ``judge_<rubric>`` per rubric, in order."""
        return [r.score_name for r in self.config.rubrics]

    @property
    def specs(self) -> list[ScorerSpec]:
        """The scorer spec of each rubric, in :attr:`names` order (settings: no secrets)."""
        settings = {k: v for k, v in self.describe().items() if k != "rubrics"}
        return [r.spec(settings) for r in self.config.rubrics]

    @property
    def calls(self) -> int:
        """Judge requests made (cache hits excluded; retries of one request count once)."""
        return self.stats.calls

    @property
    def cache_hits(self) -> int:
        """Samples served from the cache."""
        return self.stats.cache_hits

    async def start(self) -> None:
        """Open the HTTP session (call it inside the event loop that will use the judge)."""
        self._sem = asyncio.Semaphore(self.config.concurrency)
        await self._client.start()

    async def close(self) -> None:
        """Close the HTTP session."""
        await self._client.close()

    async def __aenter__(self) -> Judge:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    def describe(self) -> dict[str, Any]:
        """The judge's settings for ``run.json``: endpoint (no credentials), model, rubrics..."""
        c = self.config
        return {
            "kind": "llm_judge",
            "endpoint": _safe_endpoint(c.endpoint, self._redactor),
            "model": c.model,
            "rubrics": [r.describe() for r in c.rubrics],
            "temperature": c.effective_temperature,
            "samples": c.samples,
            "structured": c.structured,
            "max_tokens": c.max_tokens,
            "cache": str(c.cache_dir) if self._cache is not None else None,
            "concurrency": c.concurrency,
            "max_retries": c.policy.max_retries,
        }

    async def score(self, case: Case, trial: Trial) -> dict[str, Score]:
        """Every rubric's score for this trial, under :attr:`names`. Never raises for
        judge failures: they become inconclusive scores."""
        rubrics = self.config.rubrics
        results = await asyncio.gather(*(self.judge(r, case, trial) for r in rubrics))
        return {r.score_name: j.score for r, j in zip(rubrics, results, strict=True)}

    def inconclusive(self, reason: str) -> dict[str, Score]:
        """Every rubric's score as inconclusive (value None, reason ``inconclusive: …``),
        e.g. when the run was interrupted before the judge answered (no call is made)."""
        self.stats.inconclusive += len(self.config.rubrics)
        return {
            r.score_name: _inconclusive(f"inconclusive: {reason}", r.pass_threshold, [])
            for r in self.config.rubrics
        }

    async def judge(self, rubric: Rubric, case: Case, trial: Trial) -> Judgment:
        """One rubric's judgment of one trial (score and majority grade)."""
        self.stats.judgments += 1
        reason = not_applicable_reason(rubric, case, trial)
        if reason is not None:
            self.stats.not_applicable += 1
            na = Score(None, f"not applicable: {reason}", rubric.pass_threshold)  # not_applicable
            return Judgment(na, None)
        prompt = render_prompt(rubric, case, trial, structured=self.config.structured)
        n = self.config.samples
        samples = await asyncio.gather(*(self._sample(rubric, prompt, i) for i in range(n)))
        judgment = self._combine(rubric, list(samples))
        if judgment.grade is None:
            self.stats.inconclusive += 1
        return judgment

    def _params(self, rubric: Rubric) -> dict[str, Any]:
        params: dict[str, Any] = {"temperature": self.config.effective_temperature}
        if self.config.max_tokens is not None:
            params["max_tokens"] = self.config.max_tokens
        if self.config.structured:
            params["response_format"] = rubric.response_format()
        return params

    async def _sample(self, rubric: Rubric, prompt: RenderedPrompt, index: int) -> _Sample:
        params = self._params(rubric)
        key = cache_key(
            {
                "model": self.config.model,
                "messages": prompt.messages,
                "params": params,
                "sample": index,
            }
        )
        scale = rubric.scale_def
        if self._cache is not None:
            # read-write: claim the key, so one call answers every asker; read-only: look;
            # refresh: never look (the reply is stored over the old one)
            hit = None
            if self._cache.readable:
                writes = self._cache.writable
                hit = await self._cached_or_claim(key) if writes else self._cache.get(key)
            if hit is not None:
                usage = self._hit_usage(hit)
                verdict = parse_verdict(
                    hit.content,
                    scale,
                    refusal=hit.refusal,
                    finish_reason=hit.finish_reason,
                    quoted=prompt.fenced,
                )
                return _Sample(verdict, None, usage or [], usage is None)
            try:
                return await self._call(rubric, prompt, params, key)
            finally:
                self._cache.release(key)
        return await self._call(rubric, prompt, params, key)

    async def _cached_or_claim(self, key: str) -> CachedReply | None:
        """The cached reply; else None once this judge holds the key's claim (another
        judge asking the same prompt is waited for: its reply is then a cache hit)."""
        assert self._cache is not None
        while True:
            hit = self._cache.get(key)
            if hit is not None:
                return hit
            if self._cache.claim(key):
                hit = self._cache.get(key)  # stored and released between the two looks
                if hit is not None:
                    self._cache.release(key)
                return hit
            await asyncio.sleep(_CLAIM_POLL_S)

    async def _call(
        self, rubric: Rubric, prompt: RenderedPrompt, params: dict[str, Any], key: str
    ) -> _Sample:
        """Ask the judge (the cache missed); store the reply."""
        scale = rubric.scale_def
        if self._sem is None:
            self._sem = asyncio.Semaphore(self.config.concurrency)
        rec = Recorder()
        reply: JudgeReply | None = None
        error: str | None = None
        try:
            async with self._sem:
                self.stats.calls += 1
                reply = await request_verdict(
                    self._client,
                    self.config.endpoint,
                    self.config.model,
                    prompt.messages,
                    rec,
                    params,
                )
        except AgentFailure as e:
            error = f"judge error ({e.cause}): {e.message}"
        except Exception as e:  # a judge problem must never stop the run
            error = "judge error: " + self._redactor.redact(f"{type(e).__name__}: {e}")
        self.stats.retries += len(rec.retries)
        usage = [u.model_copy() for u in rec.usage]
        for u in usage:
            self.stats.input_tokens += u.input_tokens
            self.stats.output_tokens += u.output_tokens
        if reply is None:
            self.stats.errors += 1
            return _Sample(None, error, usage, False)
        if self._cache is not None:
            tokens = (sum(u.input_tokens for u in usage), sum(u.output_tokens for u in usage))
            entry = CachedReply(
                reply.content, reply.refusal, self.config.model, *tokens, reply.finish_reason
            )
            with contextlib.suppress(OSError):  # an unwritable cache costs a call next time
                self._cache.put(key, entry)
        verdict = parse_verdict(
            reply.content,
            scale,
            refusal=reply.refusal,
            finish_reason=reply.finish_reason,
            quoted=prompt.fenced,
        )
        return _Sample(verdict, None, usage, False)

    def _hit_usage(self, hit: CachedReply) -> list[Usage] | None:
        """None for a cache hit; the usage of a reply claimed as a call (``claim_since``)."""
        since = self.claim_since
        if since is None or hit.stored_at is None or hit.stored_at < since:
            self.stats.cache_hits += 1
            return None
        self.stats.calls += 1
        self.stats.input_tokens += hit.input_tokens
        self.stats.output_tokens += hit.output_tokens
        return hit.usage()

    def _combine(self, rubric: Rubric, samples: list[_Sample]) -> Judgment:
        threshold = rubric.pass_threshold
        usage = _merge_usage(u for s in samples for u in s.usage)
        n = len(samples)
        grades = [s.verdict.grade for s in samples if s.verdict and s.verdict.grade]
        if not grades:
            problems = [s.error or (s.verdict.problem if s.verdict else None) for s in samples]
            first = next((p for p in problems if p), "no verdict")
            prefix = "inconclusive: " if n == 1 else f"inconclusive: no verdict in {n} samples; "
            return Judgment(_inconclusive(prefix + first, threshold, usage), None)
        counts = Counter(grades).most_common()
        top, k = counts[0]
        if len(counts) > 1 and counts[1][1] == k:
            tied = " and ".join(g for g, c in counts if c == k)
            tie = f"inconclusive: tie between {tied} ({k} each of {n} samples)"
            return Judgment(_inconclusive(tie, threshold, usage), None)
        scale = rubric.scale_def
        parts = [f"GRADE {top} ({scale.labels[top]})"]
        if n > 1:
            missing = n - len(grades)
            parts.append(f"{k}/{n} agree" + (f", {missing} without a verdict" if missing else ""))
        if all(s.cached for s in samples):
            parts.append("cached")
        reasoning = next(
            s.verdict.reasoning for s in samples if s.verdict and s.verdict.grade == top
        )
        reason = ", ".join(parts)
        flat = " ".join(reasoning.split())
        if flat:
            cut = (
                flat if len(flat) <= _REASONING_EXCERPT else flat[: _REASONING_EXCERPT - 3] + "..."
            )
            reason += f": {cut}"
        return Judgment(Score(scale.value(top), reason, threshold, usage=usage), top)


def _inconclusive(reason: str, threshold: float, usage: list[Usage]) -> Score:
    """A judge that could not decide: status ``inconclusive`` (never a fail)."""
    return Score(None, reason, threshold, usage=usage, status="inconclusive")


def _merge_usage(items: Any) -> list[Usage]:
    merged: dict[str | None, Usage] = {}
    for u in items:
        m = merged.setdefault(u.model, Usage(model=u.model))
        m.input_tokens += u.input_tokens
        m.output_tokens += u.output_tokens
    return list(merged.values())
