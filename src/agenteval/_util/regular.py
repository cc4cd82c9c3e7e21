"""Opening a file only when it is a regular one, without ever blocking.

``open()`` on a FIFO blocks until a writer appears; on a device it may read forever. A
server that reads files from a folder it does not control (the viewer) opens them with
:func:`open_regular`: ``O_NONBLOCK`` (opening a FIFO then returns at once), then
``fstat`` on the open file, so a file swapped for a FIFO between a check and the open
is caught too. :func:`not_regular` says why a path is refused, for a check before
handing a path to code that opens it itself.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import BinaryIO

__all__ = ["NotRegularFile", "not_regular", "open_regular"]


class NotRegularFile(OSError):
    """The path is a FIFO, a device, a socket or a directory."""


def _kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "a device"


def _refusal(path: str | Path, mode: int) -> str:
    return f"{path}: is not a regular file ({_kind(mode)}); not read"


def open_regular(path: str | Path) -> BinaryIO:
    """``path`` open for reading in binary; :class:`NotRegularFile` (its ``strerror`` the
    one-line reason) for a FIFO, device or socket, :class:`IsADirectoryError` for a
    directory, any other OSError as ``open`` raises it."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):  # as open() says it
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), str(path))
        if not stat.S_ISREG(mode):
            raise NotRegularFile(0, _refusal(path, mode))
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def not_regular(path: str | Path) -> str | None:
    """Why ``path`` must not be opened (a FIFO, device or socket: opening may block), or
    None (a regular file, a directory or nothing there: the caller's open says what is
    wrong in its own words)."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return None
    return None if stat.S_ISREG(mode) or stat.S_ISDIR(mode) else _refusal(path, mode)
