"""One evaluation, start to finish: validate, open the run, run every trial, summarise.

Shared by ``agenteval run`` and :func:`agenteval.evaluate`, so that both write exactly the
same run directory. The dataset is validated completely before the agent is called once.
"""

from __future__ import annotations

import asyncio
import contextlib
import shutil
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console

from agenteval._util.loop import run_event_loop
from agenteval._util.outpaths import check_out_dir
from agenteval._util.say import Say, log_warning
from agenteval._util.secrets import redact_mapping
from agenteval.agents.base import Agent
from agenteval.cases.case import Case
from agenteval.dataset import scan_dataset
from agenteval.dataset.selection import Selection
from agenteval.errors import RunWriteError
from agenteval.run.finish import Render, finish_run, live_summary
from agenteval.run.runner import (
    RunControl,
    RunJudge,
    RunProgress,
    RunSettings,
    TrialJudge,
    run_trials,
    work_items,
)
from agenteval.run.signals import GracefulStop, exit_code_for, restored_signal_handlers
from agenteval.run.snapshot import snapshot_dataset
from agenteval.rundir import CASES, HEADER, DatasetRef, RunHeader, RunWriter
from agenteval.rundir.fingerprint import check_resumable, digest
from agenteval.scoring.apply import Scorers

if TYPE_CHECKING:
    from agenteval.conversation.users import SimulatedUser
    from agenteval.executors import Executor
    from agenteval.executors.pool import JobSpec
    from agenteval.summary.live import LiveSummary


ProgressDisplay = Callable[[int], AbstractContextManager[RunProgress]]
"""How a run's progress is shown: given the number of trials to run, a context manager
yielding the counters the runner updates as trials finish (``agenteval run``'s bar)."""

KEEP_CASES_BYTES = 4 << 20
"""A fresh run whose dataset file is at most this big (4 MiB) keeps the Case objects of the
dataset pass instead of validating each case a second time from the snapshot (~13 µs a
case). Bigger datasets are read back line by line, so memory stays flat in their size."""


@dataclass(slots=True)
class SessionResult:
    """Where the run is and how it ended."""

    run_dir: Path
    interrupted: bool = False
    notes: list[str] = field(default_factory=list)
    signal: int | None = None
    """The first stop signal received (SIGINT, SIGTERM, SIGHUP), None when none came."""
    summary: dict[str, Any] | None = None
    """The summary written to ``run.json``."""

    @property
    def exit_code(self) -> int:
        """By the first signal: 130 Ctrl-C, 143 SIGTERM, 129 SIGHUP; 0 when none came."""
        return exit_code_for(self.signal)


@dataclass(frozen=True, slots=True)
class OpenedRun:
    """A run :meth:`Session.open` created or reopened; no trial has run yet."""

    writer: RunWriter
    """The run's one writer (holds its lock); close it when the run ends."""
    done: set[tuple[str, int]]
    """The (case id, repeat) pairs already recorded (a resume), not run again."""
    remaining: int
    """Trials still to run."""
    notes: list[str]
    """What a resume found and repaired (``3 trial(s) already recorded``...)."""


@dataclass(slots=True)
class Session:
    """Everything one evaluation needs, passed in (no ambient state)."""

    dataset: Path
    agent: Agent
    scorers: Scorers
    out: Path
    settings: RunSettings = field(default_factory=RunSettings)
    limit: int | None = None
    resume: bool = False
    prices: dict[str, Any] | None = None
    judge: RunJudge | None = None
    """The LLM judge (an :class:`agenteval.judge.Judge`), started and closed by the run."""
    extra_settings: dict[str, Any] = field(default_factory=dict)
    command: str = "agenteval run"
    """Written into the run's lock file, for the message a second writer gets."""
    inputs: list[tuple[str, Path | None]] = field(default_factory=list)
    """Other input files (prompt template, price table...) ``out`` must not be or contain."""

    executor: Executor | None = None
    """Trials run on its workers (None: in this process)."""
    _job: JobSpec | None = None
    """What the workers get (checked picklable by :meth:`open` before the run starts)."""

    live: LiveSummary | None = None
    """Fed as trials are written (fresh runs); None after a resume (summary re-read)."""

    _kept: list[Case] | None = None
    """A small dataset's cases as validated by the dataset pass (:data:`KEEP_CASES_BYTES`)."""

    user: SimulatedUser | None = None
    """The simulated user (agenteval.conversation.users) for cases with a ``user`` block."""

    selection: Selection | None = None
    """Which cases run (:mod:`agenteval.dataset.selection`; ``limit`` then takes the first
    of them); recorded in ``run.json`` as ``settings.selection``, part of the fingerprint."""
    _selected: dict[str, Any] | None = None
    """``settings.selection`` as the dataset pass found it (the parts, ``selected``, ``of``)."""

    def __post_init__(self) -> None:
        # imported on first use, so that importing this module stays light
        from agenteval.conversation.agent import ConversationAgent

        # Conversations and per-trial state run inside the agent, one trial each: the
        # runner, resume and the summary see ordinary trials (docs/conversations.md).
        if not isinstance(self.agent, ConversationAgent):
            self.agent = ConversationAgent(self.agent, self.user)

    def _cases(self) -> Iterator[Case]:
        """The cases to run (already limited): kept from the dataset pass when there were
        few, else read back from the run's validated snapshot."""
        if self._kept is not None:
            yield from self._kept
            return
        with open(self.out / CASES, "rb") as f:
            for line in f:
                if line.strip():
                    yield Case.model_validate_json(line)

    def open(self) -> OpenedRun:
        """Validate the dataset, create or reopen the run; nothing runs yet.

        ``out`` must not be, contain or lie inside the dataset or another input. A resume
        takes the run's lock and checks, before anything is changed, that the run was made
        with the same fingerprint (:mod:`agenteval.rundir.fingerprint`): the same agent, judge,
        scorers, repeats, limit and dataset.
        """
        check_out_dir(self.out, [("dataset", self.dataset), *self.inputs])
        if self.executor is not None:  # what cannot travel to a worker: refused now
            # imported on first use, so that importing this module stays light
            from agenteval.executors.runjob import run_job_spec

            self._job = run_job_spec(self.agent, self.scorers, self.judge, self.settings)
        if self.resume:
            if self._selecting:  # the selection's counts are part of what is checked
                snapshot, ref = self._scan_and_snapshot()
                snapshot.unlink(missing_ok=True)
                self._kept = None
                total = self._selected_count()
            else:
                ref = scan_dataset(self.dataset)
                total = min(ref.cases, self.limit) if self.limit else ref.cases
            new = self._header(ref)

            def same_run(old: RunHeader) -> None:
                check_resumable(old, new, run_dir=self.out, dataset=self.dataset)

            writer, done, notes = RunWriter.open_resume(
                self.out, command=f"{self.command} --resume", check=same_run
            )
            try:
                if not (self.out / CASES).exists():  # killed before the snapshot was moved in
                    snapshot, _ = self._scan_and_snapshot()
                    shutil.move(snapshot, self.out / CASES)
            except BaseException:
                writer.close()
                raise
            notes.append(f"{len(done)} trial(s) already recorded")
            return OpenedRun(writer, done, total * self.settings.repeats - len(done), notes)
        snapshot, ref = self._scan_and_snapshot()
        try:
            writer = RunWriter.create(self.out, self._header(ref), command=self.command)
            try:
                shutil.move(snapshot, self.out / CASES)
            except BaseException:
                writer.discard()
                raise
        finally:
            snapshot.unlink(missing_ok=True)
        self.live = live_summary(writer)
        if self._selecting:
            total = self._selected_count()
        else:
            total = min(ref.cases, self.limit) if self.limit else ref.cases
        return OpenedRun(writer, set(), total * self.settings.repeats, [])

    @property
    def selected(self) -> dict[str, Any] | None:
        """``settings.selection`` of the run once opened (None: every case, or not opened)."""
        return self._selected

    @property
    def _selecting(self) -> bool:
        return self.selection is not None and not self.selection.empty

    def _selected_count(self) -> int:
        assert self._selected is not None, "the dataset pass records the selection"
        return int(self._selected["selected"])

    def _scan_and_snapshot(self) -> tuple[Path, DatasetRef]:
        """Read the dataset once (:func:`~agenteval.run.snapshot.snapshot_dataset`): the
        temporary snapshot :meth:`open` moves into the run, and the dataset's reference."""
        snap = snapshot_dataset(
            self.dataset,
            limit=self.limit,
            selection=self.selection if self._selecting else None,
            keep_bytes=KEEP_CASES_BYTES,
        )
        self._kept = snap.kept
        if snap.selected is not None:
            self._selected = snap.selected
        return snap.path, snap.ref

    def _header(self, ref: DatasetRef) -> RunHeader:
        """The header of a new run of this session (also what a resume is checked against)."""
        scorer_specs = self.scorers.specs
        agent_desc = redact_mapping(self.agent.describe())
        if self.judge is not None:
            scorer_specs += self.judge.specs
            agent_desc = {**agent_desc, "judge": redact_mapping(self.judge.describe())}
        header = RunHeader(
            kind="run",
            agent=agent_desc,
            dataset=ref,
            scorers=scorer_specs,
            prices=self.prices,
            settings={
                **self.settings.to_dict(),
                "limit": self.limit,
                **({"selection": self._selected} if self._selected is not None else {}),
                **self.extra_settings,
            },
        )
        setattr(header, "fingerprint", digest(header))  # noqa: B010 - an extra header field
        return header

    async def arun(self, opened: OpenedRun, progress: RunProgress, control: RunControl) -> None:
        """Run the missing trials of ``opened`` on the current event loop."""
        writer = opened.writer
        items = work_items(self._cases(), self.settings.repeats, opened.done)
        judge: TrialJudge | None = self.judge
        if self.executor is not None:  # workers compute, this process writes
            # imported on first use, so that importing this module stays light
            from agenteval.executors.runjob import run_on_workers

            assert self._job is not None, "open() checks what travels to the workers"
            self.live = None  # the summary is read back from trials.jsonl at the end
            await run_on_workers(
                self.executor,
                self._job,
                items,
                settings=self.settings,
                scorers=self.scorers,
                judge=judge,
                writer=writer,
                progress=progress,
                control=control,
            )
            return
        try:
            await self.agent.start()
        except BaseException:
            writer.discard()  # a fresh run with nothing in it must not block the next one
            with contextlib.suppress(Exception):
                await self.agent.close()  # what a half-done start opened (HTTP sessions...)
            raise
        try:
            if self.judge is not None:
                try:
                    await self.judge.start()
                except BaseException:
                    writer.discard()
                    raise
            await run_trials(
                self.agent,
                items,
                settings=self.settings,
                scorers=self.scorers,
                writer=writer,
                judge=judge,
                progress=progress,
                control=control,
            )
        finally:
            await self.agent.close()
            if self.judge is not None:
                await self.judge.close()

    def run(
        self,
        *,
        progress: ProgressDisplay | None = None,
        say: Say | None = None,
        console: Console | None = None,
        render: Render | None = None,
    ) -> SessionResult:
        """Run on a new event loop with signal handling; ``progress`` (given the number of
        trials to run) shows them as they finish; the finished run's summary is shown on
        ``console`` with ``render``, when both are set. What the run says to its user (what
        a resume repaired, an interrupt) goes to ``say`` (default: a warning of the
        ``agenteval`` logger, which Python prints on stderr when logging is not configured).

        SIGINT (Ctrl-C), SIGTERM and SIGHUP: the first stops new trials and lets those in
        flight finish; a second (of any of them) cancels the trials in flight, recorded as
        ``cancelled``, and the judge calls in flight, whose scores are inconclusive. The
        summary is written either way and :attr:`SessionResult.signal` says which signal
        came first. A sync agent's hung thread is not waited for (it cannot be killed).

        Raises :class:`RunWriteError` (exit 5) when the run cannot be written: nothing is
        appended after the error, what was written is kept, no summary is written, and
        ``--resume`` continues the run.
        """
        tell = say or log_warning
        try:
            opened = self.open()
        except OSError as e:
            raise RunWriteError.from_os_error(e, self.out) from None
        writer = opened.writer
        for note in opened.notes:  # said now, so that a repair is reported even if this run dies
            tell(f"agenteval: resume: {note}")
        ctl = RunControl()
        stop = GracefulStop(ctl, tell)

        async def main() -> None:
            stop.install(asyncio.get_running_loop())
            shown = progress(opened.remaining) if progress is not None else None
            with shown or contextlib.nullcontext(RunProgress()) as prog:
                await self.arun(opened, prog, ctl)

        summary = None
        try:
            with restored_signal_handlers():
                run_event_loop(main())
            if ctl.io_error is not None:
                raise ctl.io_error
            try:
                summary = finish_run(
                    writer,
                    console or Console(quiet=True),
                    render=render if console is not None else None,
                    live=self.live,
                )
            except OSError as e:  # writing the summary into run.json
                raise RunWriteError.from_os_error(e, self.out / HEADER) from None
        finally:
            _close(writer, quietly=ctl.io_error is not None)
        return SessionResult(
            self.out,
            interrupted=stop.first is not None,
            notes=opened.notes,
            signal=stop.first,
            summary=summary,
        )


def _close(writer: RunWriter, *, quietly: bool) -> None:
    """Close the run's file; after a write error its buffer may fail again: ignored then."""
    try:
        writer.close()
    except OSError as e:
        if not quietly:
            raise RunWriteError.from_os_error(e, writer.run_dir) from None
