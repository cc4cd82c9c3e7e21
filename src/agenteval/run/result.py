"""A finished run, read back from its directory: what :func:`agenteval.evaluate` returns.

:class:`Run` gives the run's header and summary (``run.json``), its trials with their
scores (``trials.jsonl``, read on first use, or streamed) and one scorer's values; a run
written to a temporary directory removes it when closed (docs/python.md).
"""

from __future__ import annotations

import shutil
import weakref
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agenteval.rundir import RunHeader, TrialRecord, iter_trials, read_header

if TYPE_CHECKING:
    from agenteval.summary.model import Summary

__all__ = ["Run", "TrialList"]


class TrialList(tuple[TrialRecord, ...]):
    """The trials of a run, in file order: a tuple (``run.trials[0]``, ``len(run.trials)``,
    slicing, iteration). Calling it (``run.trials()``, the method of earlier versions) gives
    an iterator over the same trials."""

    __slots__ = ()

    def __call__(self) -> Iterator[TrialRecord]:
        return iter(self)


class Run:
    """A finished (or interrupted) run, read back from its directory (docs/python.md).

    ``run_dir`` is the run directory (the one ``agenteval report``/``gate`` read);
    ``header`` its ``run.json`` as a :class:`agenteval.rundir.RunHeader`; ``summary`` /
    ``summary_model`` the summary in it; ``trials`` every trial with its scores (read on
    first use, then kept); ``scores(name)`` one scorer's values.

    A run :func:`evaluate` wrote without ``out=`` is *temporary* (``run.temporary``): its
    directory is removed by :meth:`close`, at the end of a ``with`` block, when the Run is
    garbage-collected, or at interpreter exit, whichever comes first. Pass ``out=`` to keep
    a run.
    """

    def __init__(
        self, run_dir: Path, *, interrupted: bool = False, temporary: Path | None = None
    ) -> None:
        self.run_dir = run_dir
        self.interrupted = interrupted
        self.header: RunHeader = read_header(run_dir)
        self._trials: TrialList | None = None
        self._remove = (
            None if temporary is None else weakref.finalize(self, _remove_tree, temporary)
        )

    @property
    def temporary(self) -> bool:
        """True when the run directory is removed with this object (``out=`` not given)."""
        return self._remove is not None

    @property
    def summary(self) -> dict[str, Any]:
        """The summary stored in run.json, as JSON (see docs/reports.md)."""
        return self.header.summary or {}

    @property
    def summary_model(self) -> Summary:
        """The same summary as a typed :class:`agenteval.summary.model.Summary`
        (``run.summary_model.scorers["exact_match"].mean``); empty when none was written."""
        # imported on first use, so that importing this module stays light
        from agenteval.summary.model import Summary

        return Summary.model_validate(self.summary)

    @property
    def trials(self) -> TrialList:
        """Every recorded trial with its scores, in file order (read once, then kept; use
        :meth:`iter_trials` to stream a large run instead)."""
        if self._trials is None:
            self._trials = TrialList(iter_trials(self.run_dir))
        return self._trials

    def iter_trials(self) -> Iterator[TrialRecord]:
        """Stream the recorded trials from ``trials.jsonl`` without keeping them."""
        if self._trials is not None:
            return iter(self._trials)
        return iter_trials(self.run_dir)

    def scores(self, name: str) -> list[float | None]:
        """Every trial's value for one scorer, in file order (None = not applicable, or
        not scored by that scorer)."""
        return [t.scores[name].value if name in t.scores else None for t in self.iter_trials()]

    def close(self) -> None:
        """Remove a temporary run's directory now (nothing for a run written to ``out=``).
        What was already read (``header``, ``summary``, ``trials``) stays readable."""
        if self._remove is not None:
            self._remove()

    def __enter__(self) -> Run:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Run({str(self.run_dir)!r}, trials={self.summary.get('trials', '?')})"


def _remove_tree(path: Path) -> None:
    shutil.rmtree(path, ignore_errors=True)
