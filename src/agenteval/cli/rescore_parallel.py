"""``rescore --processes N`` / ``--executor ray``: workers parse, score and serialise.

Each worker opens the source run's cases snapshot itself and turns a batch of raw
``trials.jsonl`` lines into new lines (the trial, the new scores, the stored scores the
new scorers do not produce), exactly as the one-process rescore writes them. The driver
reads the source (skipping a torn last line), refuses a second line for the same (case,
repeat), and writes the new lines in the source's order: the output is the one of the
one-process rescore, line for line. At most ``4 * workers`` batches are out or waiting
to be written, so memory stays flat in the number of trials. Each worker also sends what
each trial adds to the summary (:data:`~agenteval.summary.contribution.Contribution`), which
the driver folds as it writes the line: the new run is not read back for its summary.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agenteval.errors import InputError
from agenteval.executors import Executor, prepare
from agenteval.executors.driver import WorkersLostError, drive
from agenteval.executors.pool import WorkerStartError
from agenteval.llm.pricing import PriceTable
from agenteval.rundir import TRIALS, RunWriter
from agenteval.rundir.cases import RunCases
from agenteval.rundir.trials import _parse_trial_line, _ScoreKey, _trial_line
from agenteval.scoring.apply import Scorers
from agenteval.scoring.score import Score
from agenteval.summary.contribution import Contribution, contribution

if TYPE_CHECKING:
    from agenteval.summary.live import LiveSummary

BATCH = 256
"""Trials per batch (about 0.1 s of scoring)."""

Line = tuple[int, int, int]
"""(line number, byte offset, byte length) of one trial line: the worker reads it itself,
so a batch is a few bytes and a worker can hold the next one while computing."""
Out = tuple[str, int, str, Contribution | None]
"""(case_id, repeat, new line, what the trial adds to the summary or None)."""
Failed = tuple[str, int | None, str | None]
"""(message, line number, field): an InputError in the worker, as plain values."""


@dataclass
class RescoreJob:
    """One worker's scorers and the source's cases (see the module docstring)."""

    src: str
    scorers: Scorers
    summary: tuple[PriceTable, str] | None = None
    trust_code: bool = False
    """Import the code the run's ``$python`` matchers name (``--trust-run``)."""
    """(prices, correct_by) of the driver's summary: each trial's :data:`Contribution` is
    computed here, so the driver folds plain values instead of reading the new run back.
    Measured (bench/scale.py, rescore of 100,000 trials, 2 cores): the driver's CPU went
    from ~9.7 s to ~5.5 s and ``--processes 2`` from ~1.35x to 1.61x one process."""
    _cases: Any = field(default=None, repr=False)
    _fh: Any = field(default=None, repr=False)
    _parsed: dict[tuple[Any, ...], Score] = field(default_factory=dict, repr=False)
    _frags: dict[_ScoreKey, str] = field(default_factory=dict, repr=False)

    def __getstate__(self) -> dict[str, Any]:
        return {
            "src": self.src,
            "scorers": self.scorers,
            "summary": self.summary,
            "trust_code": self.trust_code,
        }

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(**state)  # type: ignore[misc]

    def setup(self) -> None:
        self._cases = RunCases(self.src, trust_code=self.trust_code)
        self._fh = open(Path(self.src) / TRIALS, "rb")  # noqa: SIM115 - the worker's life

    def __call__(self, batch: list[Line]) -> list[Out] | Failed:
        name = str(Path(self.src) / TRIALS)
        out: list[Out] = []
        summary = self.summary
        _, start, _ = batch[0]
        _, last_start, last_len = batch[-1]
        self._fh.seek(start)
        block = self._fh.read(last_start + last_len - start)
        try:
            for lineno, offset, length in batch:
                raw = block[offset - start : offset - start + length]
                rec = _parse_trial_line(raw, name, lineno, self._parsed)
                if rec.case_id not in self._cases:
                    raise InputError(f"trial for unknown case '{rec.case_id}'", file=name)
                scores = self.scorers.apply(self._cases.get(rec.case_id), rec)
                for k, s in rec.scores.items():
                    scores.setdefault(k, s)
                line = _trial_line(rec, scores, self._frags)
                part = None if summary is None else contribution(rec, scores, *summary)
                out.append((rec.case_id, rec.repeat, line, part))
        except InputError as e:
            return (e.message, e.line, e.field) if e.file == name else (str(e), None, None)
        return out


def _lines(path: Path) -> Iterator[Line]:
    """Every complete, non-blank line (a torn last one is skipped): see :data:`Line`."""
    offset = 0
    with open(path, "rb") as f:
        for lineno, raw in enumerate(f, 1):
            if not raw.endswith(b"\n"):
                return
            if raw.strip():
                yield lineno, offset, len(raw)
            offset += len(raw)


def rescore_parallel(
    src: Path,
    writer: RunWriter,
    scorers: Scorers,
    executor: Executor,
    live: LiveSummary | None = None,
    *,
    trust_code: bool = False,
) -> set[str]:
    """Rescore every trial of ``src`` on ``executor``'s workers into ``writer``; the case
    ids seen (for the check of the cases never asked for). InputError for bad input.

    With ``live``, every line written is also counted in it (from the workers'
    :data:`Contribution`, in the order written); it must accept them
    (:meth:`LiveSummary.accepts_contributions`)."""
    summary = live.contribution_args() if live is not None else None
    spec = prepare(
        RescoreJob(str(src), scorers, summary, trust_code),
        [(f"scorer '{s.name}'", s) for s in scorers.scorers],
        [s.ref for s in scorers.scorers],
    )
    try:
        pool = executor.pool(spec, depth=2)
    except WorkerStartError as e:
        raise InputError(f"a worker could not start: {e}") from None
    trials = src / TRIALS
    seen: dict[tuple[str, int], int] = {}
    ids: set[str] = set()
    order: deque[int] = deque()  # line numbers handed out and not yet written, in order
    waiting: dict[int, Out] = {}  # computed, waiting for an earlier line to be written
    fold = live.add_contribution if live is not None else None

    def read() -> Iterator[Line]:
        for item in _lines(trials):
            order.append(item[0])
            yield item

    def on_done(batch: list[Line], result: list[Out] | Failed) -> None:
        if isinstance(result, tuple):
            raise InputError(result[0], file=trials, line=result[1], field=result[2])
        for (lineno, _, _), out in zip(batch, result, strict=True):
            waiting[lineno] = out
        ready: list[str] = []  # written at once (append_lines)
        try:
            while order and order[0] in waiting:
                lineno = order.popleft()
                case_id, repeat, text, part = waiting.pop(lineno)
                first = seen.setdefault((case_id, repeat), lineno)
                if first != lineno:
                    raise InputError(
                        f"a second trial for case '{case_id}' repeat {repeat}"
                        f" (first at line {first})",
                        file=trials,
                        line=lineno,
                    )
                ids.add(case_id)
                ready.append(text)
                if fold is not None:
                    fold(part)  # type: ignore[arg-type]  # never None when live is given
        finally:
            writer.append_lines(ready)

    try:
        drive(
            pool,
            read(),
            batch_size=BATCH,
            on_done=on_done,
            on_lost=_never_lost,
            admit=lambda: len(order) < 4 * BATCH * pool.size,
            max_attempts=1_000_000,  # scoring is deterministic: a lost batch simply runs again
        )
    except WorkersLostError as e:  # the new run is removed: nothing to resume
        head = e.message.split(";")[0]
        raise WorkersLostError(f"{head}; the new run was removed: rescore again") from None
    finally:
        pool.close()
    return ids


def _never_lost(item: Line, reason: str) -> None:  # pragma: no cover - max_attempts is huge
    raise InputError(f"line {item[0]} could not be rescored: {reason}")
