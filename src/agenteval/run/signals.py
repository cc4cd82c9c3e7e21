"""The signals that stop a run gracefully, and the exit code each one gives.

SIGINT (Ctrl-C), SIGTERM and SIGHUP are handled alike by :meth:`agenteval.run.session.Session.run`:
the first stops new trials and lets those in flight finish, a second cancels them. The
exit code says which came first: 128 + its number, as a shell reports a process killed by
it (130 SIGINT, 143 SIGTERM, 129 SIGHUP).
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import threading
from collections.abc import Iterator

from agenteval._util.say import Say, log_warning
from agenteval.errors import EXIT_HANGUP, EXIT_INTERRUPTED, EXIT_OK, EXIT_TERMINATED
from agenteval.run.runner import RunControl

SIGHUP: int | None = getattr(signal, "SIGHUP", None)  # not on Windows
STOP_SIGNALS: tuple[int, ...] = tuple(
    s for s in (signal.SIGINT, signal.SIGTERM, SIGHUP) if s is not None
)
"""Signals that stop a run gracefully."""


def exit_code_for(signum: int | None) -> int:
    """130 for SIGINT, 143 for SIGTERM, 129 for SIGHUP (128 + the number); 0 for None."""
    if signum is None:
        return EXIT_OK
    if signum == signal.SIGINT:
        return EXIT_INTERRUPTED
    if signum == signal.SIGTERM:
        return EXIT_TERMINATED
    return EXIT_HANGUP if signum == SIGHUP else 128 + signum


def signal_name(signum: int) -> str:
    """``SIGTERM`` for 15, and so on."""
    try:
        return signal.Signals(signum).name
    except ValueError:
        return f"signal {signum}"


@contextlib.contextmanager
def restored_signal_handlers() -> Iterator[None]:
    """Put back the process's own handlers of the stop signals once an event loop that
    handled them is done (closing a loop resets them to the defaults, which would drop a
    caller's handler). Does nothing outside the main thread, where none can be set."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    saved = {sig: signal.getsignal(sig) for sig in STOP_SIGNALS}
    try:
        yield
    finally:
        for sig, handler in saved.items():
            if handler is not None:
                with contextlib.suppress(OSError, ValueError, RuntimeError):
                    signal.signal(sig, handler)


@contextlib.contextmanager
def exit_on_stop_signals(say: Say = log_warning) -> Iterator[None]:
    """SIGTERM and SIGHUP raise SystemExit (143, 129) in the block, as Ctrl-C raises
    KeyboardInterrupt: the block's ``finally`` and ``with`` exits run (temporary files are
    removed) instead of the process dying on the spot; ``say`` is told which one came.
    Main thread only."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(signum: int, frame: object) -> None:
        say(f"agenteval: stopped by {signal_name(signum)}")
        raise SystemExit(exit_code_for(signum))

    sigs = [s for s in STOP_SIGNALS if s != signal.SIGINT]
    saved = {s: signal.signal(s, stop) for s in sigs}
    try:
        yield
    finally:
        for s, handler in saved.items():
            signal.signal(s, handler)


class GracefulStop:
    """A run's handler of the stop signals: the first (of any) sets ``control.stop`` (no new
    trial starts, those in flight finish) and tells ``say`` so; a second cancels the trials
    in flight (:meth:`RunControl.cancel`). :attr:`first` is the signal that came first."""

    def __init__(self, control: RunControl, say: Say) -> None:
        self.control = control
        self.say = say
        self.received: list[int] = []

    @property
    def first(self) -> int | None:
        """The first stop signal received; None when none came."""
        return self.received[0] if self.received else None

    def __call__(self, signum: int) -> None:
        self.received.append(signum)
        self.control.stop = True
        if len(self.received) == 1:
            name = "" if signum == signal.SIGINT else f" ({signal_name(signum)})"
            self.say(
                f"\nagenteval: interrupted{name}: finishing trials in flight (Ctrl-C again"
                " to cancel them)"
            )
        else:
            self.control.cancel()

    def install(self, loop: asyncio.AbstractEventLoop) -> None:
        """Handle the stop signals on ``loop`` (where the platform lets a loop do so)."""
        for sig in STOP_SIGNALS:
            with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
                loop.add_signal_handler(sig, self, sig)
