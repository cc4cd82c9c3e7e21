"""Errors agenteval reports to its user, and the exit codes they map to.

Every problem with what the user gave us (a dataset, a trial file, a run directory, a
price table, a command-line argument) is an :class:`InputError`. The CLI prints its one-line
message and exits with :data:`EXIT_INPUT`; it never shows a traceback for one.
"""

from __future__ import annotations

import contextlib
import copy
import errno
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Self

EXIT_OK = 0
"""Success (for ``gate``: the candidate may ship)."""
EXIT_BLOCKED = 1
"""``gate`` only: the candidate must not ship."""
EXIT_INPUT = 2
"""Unusable input: bad dataset, trial file, run directory, config or arguments."""
EXIT_INCONCLUSIVE = 3
"""``gate`` only: INCONCLUSIVE, nothing blocks but there is no evidence that nothing got
worse beyond its allowed drop (unless ``--allow-inconclusive``)."""
EXIT_UNDERPOWERED = EXIT_INCONCLUSIVE
"""The former name of :data:`EXIT_INCONCLUSIVE`."""
EXIT_NO_ANSWERS = 4
"""``run``: no trial got an answer, or the failure rate is above ``--max-failure-rate``;
``judge``: no score got a verdict."""
EXIT_IO = 5
"""The run could not be written (disk full, permission denied); what was written is kept
and the run can be resumed."""
EXIT_WORKERS_LOST = 6
"""``run``/``rescore`` with ``--processes`` or ``--executor ray``: every worker was lost
(killed, out of memory, the cluster gone); what was written is kept and ``run --resume``
continues."""
EXIT_INTERRUPTED = 130
"""Interrupted with Ctrl-C; what was finished is kept and summarised."""
EXIT_HANGUP = 129
"""``run``: stopped by SIGHUP (128 + 1), handled like one Ctrl-C."""
EXIT_TERMINATED = 143
"""``run``: stopped by SIGTERM (128 + 15), handled like one Ctrl-C."""


class FieldName(str):
    """A setting named inside an error message, as its field (``resume``, ``otlp_receiver``).

    Below the command line a message names settings by field; the CLI shows each one as the
    flag that sets it (``--resume``), through :meth:`InputError.renamed`. A plain ``str``
    subclass, so a message of parts pickles and joins as text.
    """

    __slots__ = ()


class NamedText(str):
    """Text for the user (a note, a stats line) naming settings as :class:`FieldName` parts:
    it reads with the field names; :meth:`renamed` gives it with other names (the CLI's
    flags)."""

    parts: tuple[str, ...]

    def __new__(cls, *parts: str) -> NamedText:
        text = super().__new__(cls, "".join(parts))
        text.parts = parts
        return text

    def renamed(self, names: Mapping[str, str]) -> str:
        """The text with each field in ``names`` shown by its new name."""
        return "".join(names.get(p, p) if isinstance(p, FieldName) else p for p in self.parts)


class AgentEvalError(Exception):
    """Base class of the errors agenteval raises on purpose.

    :meth:`named` makes one whose message names settings as :class:`FieldName` parts;
    :meth:`renamed` shows them by other names (the CLI: by their flags).
    """

    exit_code: int = EXIT_INPUT
    parts: tuple[str, ...] = ()
    """The message as parts (empty: the message names no field)."""

    @classmethod
    def named(cls, *parts: str) -> Self:
        """``cls(message)`` for the message joined from ``parts`` (:class:`FieldName` ones
        naming settings), keeping the parts for :meth:`renamed`."""
        e = cls("".join(parts))
        e.parts = parts
        return e

    @property
    def fields(self) -> tuple[str, ...]:
        """The fields the message names."""
        return tuple(str(p) for p in self.parts if isinstance(p, FieldName))

    def renamed(self, names: Mapping[str, str]) -> Self | None:
        """A copy with each field in ``names`` shown by its new name, or None when the
        error names none of them."""
        if not any(f in names for f in self.fields):
            return None
        new = copy.copy(self)
        new.parts = tuple(names.get(p, p) if isinstance(p, FieldName) else p for p in self.parts)
        text = "".join(new.parts)
        if hasattr(new, "message"):
            new.message = text
        new.args = (text,)
        return new


class InputError(AgentEvalError):
    """Something the user gave us is unusable.

    The message names where the problem is, as precisely as known:
    ``data/cases.jsonl:12: field 'expected_tools': must be a list of names or {name: count}``.

    ``message`` is text, or a sequence of parts in which a :class:`FieldName` stands for a
    setting named mid-sentence (``(FieldName("resume"), ": the run differs")``): joined,
    the field's own name; :meth:`renamed` gives the command line's flag instead.
    """

    exit_code = EXIT_INPUT

    def __init__(
        self,
        message: str | Sequence[str],
        *,
        file: str | Path | None = None,
        line: int | None = None,
        field: str | None = None,
    ) -> None:
        self.parts: tuple[str, ...] = (message,) if isinstance(message, str) else tuple(message)
        self.message = "".join(self.parts)
        self.file = str(file) if file is not None else None
        self.line = line
        self.field = field
        super().__init__(str(self))

    @property
    def fields(self) -> tuple[str, ...]:
        """The fields the error names: :attr:`field`, then those inside the message."""
        named = tuple(str(p) for p in self.parts if isinstance(p, FieldName))
        return (self.field, *named) if self.field else named

    def renamed(self, names: Mapping[str, str]) -> InputError | None:
        """The same error with each field in ``names`` (``{"resume": "--resume"}``) shown
        by its new name, or None when it names none of them."""
        if not any(f in names for f in self.fields):
            return None
        parts = [names.get(p, p) if isinstance(p, FieldName) else p for p in self.parts]
        field = names.get(self.field, self.field) if self.field else None
        return InputError(parts, file=self.file, line=self.line, field=field)

    def __str__(self) -> str:
        where = ""
        if self.file is not None:
            where = self.file if self.line is None else f"{self.file}:{self.line}"
            where += ": "
        elif self.line is not None:
            where = f"line {self.line}: "
        field = f"field '{self.field}': " if self.field else ""
        return f"{where}{field}{self.message}"


class RunWriteError(AgentEvalError):
    """The run directory could not be written (disk full, read-only, permission denied).

    What was written before is kept; ``--resume`` finishes the run once the cause is gone.
    """

    exit_code = EXIT_IO

    @classmethod
    def from_os_error(cls, e: OSError, path: str | Path | None = None) -> RunWriteError:
        """``cannot write PATH: STRERROR``; the path is the error's own when it has one."""
        where = e.filename if e.filename is not None else path
        reason = e.strerror or str(e) or type(e).__name__
        target = f" {where}" if where is not None else " the run"
        kept = "; what was written is kept ("
        return cls.named(
            f"cannot write{target}: {reason}{kept}", FieldName("resume"), " continues)"
        )


class TooManyFailuresError(AgentEvalError):
    """``evaluate(max_failure_rate=R)``: no trial got an answer, or more than ``R`` of the
    trials failed. The run was written and summarised; it is in :attr:`run`."""

    exit_code = EXIT_NO_ANSWERS

    def __init__(self, message: str, run: Any = None) -> None:
        super().__init__(message)
        self.run = run


_WRITE_ERRNOS = frozenset(
    {errno.EROFS, errno.EACCES, errno.EPERM, errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EIO}
)


def cannot_write(e: OSError, path: str | Path, what: str) -> AgentEvalError:
    """The error for an OSError while making ``path``: a :class:`RunWriteError` (exit 5)
    when the file system refused the write (read-only, permission, disk full), else an
    :class:`InputError` ``cannot create WHAT (STRERROR)`` (e.g. a file where a directory
    is expected)."""
    if e.errno in _WRITE_ERRNOS:
        return RunWriteError.from_os_error(e, path)
    return InputError(f"cannot create {what} ({e.strerror or e})", file=path)


@contextlib.contextmanager
def writing_run(trials: str | Path, kept: str) -> Iterator[None]:
    """Turn a refused write (read-only, permission, disk full: :data:`_WRITE_ERRNOS`) in
    the block into :class:`RunWriteError` (exit 5): ``cannot write PATH: STRERROR; KEPT``,
    ``trials`` the path named when the error has none. For the commands that write a new
    run in one go (``score``, ``rescore``, ``judge``, ``import-traces``): ``kept`` says
    what became of it (they have no ``--resume``)."""
    try:
        yield
    except OSError as e:
        if e.errno not in _WRITE_ERRNOS:
            raise
        where = e.filename if e.filename is not None else trials
        raise RunWriteError(f"cannot write {where}: {e.strerror or e}; {kept}") from None
