"""The monitor's write-ahead log: every acknowledged OTLP request, durable before its 200.

Layout: ``DIR/.monitor/wal/<seq>.wal`` segment files (``seq`` 12 digits, from 1), each a
sequence of **frames**::

    length  u32 big-endian   bytes of the payload
    crc     u32 big-endian   CRC-32 of kind + payload
    kind    u8               what the payload is (:data:`KINDS`)
    payload length bytes     the request body, decompressed

A frame is valid when all of its bytes are there and its CRC matches; only valid frames
are ever read as data. Reading a segment (:func:`scan_segment`):

- a process killed mid-write leaves a **torn tail** (a frame cut short, or bytes that were
  never synced, so never acknowledged): reading stops there, and
  :meth:`WriteAheadLog.open` cuts it off the newest segment;
- a **corrupt frame** (all its bytes there, its CRC wrong: a flipped bit on a damaged disk)
  whose length is confirmed, because a valid frame starts right where it ends, is
  **skipped**, and the frames after it are read: one bad frame loses one request, not
  the rest of its segment. It is counted (:attr:`WriteAheadLog.corrupt_frames`, the
  ``wal_corrupt_frames`` gauge) and the monitor says so in one line: it may have been
  acknowledged;
- bytes that cannot be read as frames in a segment older than the newest (a damaged
  length hides where the next frame starts; those frames were all acknowledged, since a
  segment is only left after its last write was synced) are **not** cut: they are left on
  disk, counted (:attr:`WriteAheadLog.unreadable_bytes`) and named in one line.

A segment name that is not a regular file
(a symlink, a directory) is refused (:class:`~agenteval.errors.InputError`): cutting a
symlink's tail would cut a file outside the log.

**Group commit**: :meth:`WriteAheadLog.append` queues a frame and waits; one writer (a
thread, off the event loop) writes every queued frame with one ``write`` and makes them
durable with one ``fsync``, then wakes all of their waiters. Requests that arrive during
an ``fsync`` wait for the next one, which covers them all. So an append returns only once
its frame is on disk.

**Bounds**: an append that would take the log over ``max_bytes`` is refused with
:class:`WalFull` (nothing is written). A write or ``fsync`` that fails (``ENOSPC``,
``EIO``...) fails every waiter of that group with :class:`WalFull` and cuts the segment
back to its last synced frame; the next append tries again (the disk may have room by
then). Nothing that failed is acknowledged, and nothing acknowledged is cut.

**Segments**: a new segment starts once the current one holds ``segment_bytes`` or was
begun ``segment_s`` ago (so that a quiet monitor's log still shrinks); a
segment is deleted (:meth:`WriteAheadLog.release`) once the monitor says that everything
it holds is scored and durable elsewhere, and it is not the one being written.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from agenteval.errors import InputError
from agenteval.monitor.wal_frames import (
    KIND_OF,
    KINDS,
    MAX_PAYLOAD,
    Frame,
    Logged,
    Scan,
    encode_frame,
    read_segment,
    scan_segment,
)

__all__ = [
    "KINDS",
    "KIND_OF",
    "MAX_PAYLOAD",
    "Frame",
    "Logged",
    "Scan",
    "WalFull",
    "WriteAheadLog",
    "encode_frame",
    "read_segment",
    "scan_segment",
]

_SUFFIX = ".wal"
_Queued = tuple[bytes, "asyncio.Future[int]", "Callable[[int], None] | None"]


class WalFull(Exception):
    """The log cannot take this frame now: over its bound, or the disk refused the write."""

    def __init__(self, message: str, *, disk: bool) -> None:
        super().__init__(message)
        self.disk = disk
        """True when the file system failed (ENOSPC...), False when over ``max_bytes``."""


def _fsync_dir(d: Path) -> None:
    fd = os.open(d, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class WriteAheadLog:
    """The log of one monitor directory (module docstring). Built by :meth:`open`."""

    def __init__(
        self, directory: Path, *, segment_bytes: int, max_bytes: int, segment_s: float
    ) -> None:
        self.dir = directory
        self.segment_bytes = segment_bytes
        self.segment_s = segment_s
        self._started = 0.0
        self.max_bytes = max_bytes
        self.sizes: dict[int, int] = {}
        """Segment number → its synced length in bytes."""
        self.current = 0
        self._fd = -1
        self._queue: list[_Queued] = []
        self._writer: asyncio.Task[None] | None = None
        self._total = 0
        self._pool = ThreadPoolExecutor(1, thread_name_prefix="agenteval-wal")
        self.fsyncs = 0
        self.torn_bytes = 0
        """Bytes of torn tails cut off when the log was opened."""
        self.corrupt_frames = 0
        self.corrupt_bytes = 0
        """Corrupt frames skipped when the log was opened, and their bytes."""
        self.unreadable: dict[int, int] = {}
        """Segment → bytes at its end that could not be read as frames (left on disk)."""

    @classmethod
    def open(
        cls,
        directory: str | Path,
        *,
        segment_bytes: int = 64 << 20,
        max_bytes: int = 1 << 30,
        segment_s: float = 60.0,
    ) -> tuple[WriteAheadLog, Logged]:
        """Open (or create) the log in ``directory``: every valid frame already there, in
        order (read back lazily: :class:`Logged`), and the log ready to append (a torn tail
        cut off the newest segment)."""
        d = Path(directory)
        d.mkdir(parents=True, exist_ok=True)
        wal = cls(d, segment_bytes=segment_bytes, max_bytes=max_bytes, segment_s=segment_s)
        frames = Logged()
        segments = list(wal._segments())
        newest = segments[-1][0] if segments else 0
        for seq, path in segments:
            scan = scan_segment(path, seq, payloads=False)
            frames.add(seq, path, scan)  # read again when replayed: a segment at a time
            wal.corrupt_frames += len(scan.skipped)
            wal.corrupt_bytes += sum(n for _, n in scan.skipped)
            size, end = path.stat().st_size, scan.end
            if end < size and seq == newest:  # a torn tail: never acknowledged
                wal.torn_bytes += size - end
                with open(path, "r+b") as f:
                    f.truncate(end)
                    os.fsync(f.fileno())
                size = end
            elif end < size:  # acknowledged frames behind a damaged one: kept on disk
                wal.unreadable[seq] = size - end
            wal.sizes[seq] = size
            wal._total += size
        wal._start_segment(max(wal.sizes, default=0) + 1)
        return wal, frames

    def _segments(self) -> Iterator[tuple[int, Path]]:
        found = []
        for p in self.dir.iterdir():
            if p.suffix == _SUFFIX and p.stem.isdigit():
                if p.is_symlink() or not p.is_file():  # a torn tail is cut: never elsewhere
                    raise InputError(
                        "is not a regular file (a symlink, a directory); the write-ahead log"
                        " holds only the segments it wrote: move it out of the way",
                        file=p,
                    )
                found.append((int(p.stem), p))
        yield from sorted(found)

    def _path(self, seq: int) -> Path:
        return self.dir / f"{seq:012d}{_SUFFIX}"

    def _start_segment(self, seq: int) -> None:
        if self._fd >= 0:
            os.close(self._fd)
        self._fd = os.open(self._path(seq), os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        _fsync_dir(self.dir)
        self.current = seq
        self.sizes[seq] = os.fstat(self._fd).st_size
        self._started = time.monotonic()

    @property
    def total_bytes(self) -> int:
        """Bytes in the log's segments (synced frames)."""
        return self._total

    @property
    def age_s(self) -> float:
        """Seconds since the current segment was begun."""
        return time.monotonic() - self._started

    @property
    def depth(self) -> int:
        """Segments on disk."""
        return len(self.sizes)

    async def append(
        self, kind: int, payload: bytes, durable: Callable[[int], None] | None = None
    ) -> int:
        """Write one frame and return its segment number once it is durable (module
        docstring); raises :class:`WalFull` when it cannot be. ``durable(segment)`` is
        called on the event loop as soon as the frame is on disk, before any other code
        runs (so the caller's state never lags the log, whatever becomes of the caller)."""
        frame = encode_frame(kind, payload)
        queued = sum(len(q[0]) for q in self._queue)
        if self.total_bytes + queued + len(frame) > self.max_bytes:
            raise WalFull(
                f"the write-ahead log holds {self.total_bytes} bytes; this request would take it"
                f" over its bound of {self.max_bytes}",
                disk=False,
            )
        fut: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        self._queue.append((frame, fut, durable))
        if self._writer is None or self._writer.done():
            self._writer = asyncio.get_running_loop().create_task(self._drain())
        return await fut

    async def _drain(self) -> None:
        loop = asyncio.get_running_loop()
        while self._queue:
            batch, self._queue = self._queue, []
            try:
                seq = await loop.run_in_executor(self._pool, self._write, [q[0] for q in batch])
            except OSError as e:
                err = WalFull(
                    f"cannot write the write-ahead log in {self.dir}: {e.strerror or e}",
                    disk=True,
                )
                for _, fut, _ in batch:
                    if not fut.done():
                        fut.set_exception(err)
                continue
            for _, fut, durable in batch:
                if durable is not None:
                    durable(seq)
                if not fut.done():
                    fut.set_result(seq)

    def _write(self, frames: list[bytes]) -> int:
        """Write and fsync ``frames`` (in the writer thread); on failure cut the segment
        back to its synced length and raise."""
        size = self.sizes[self.current]
        old = time.monotonic() - self._started >= self.segment_s
        if size and (size >= self.segment_bytes or old):
            self._start_segment(self.current + 1)
        data = b"".join(frames)
        seq, good = self.current, self.sizes[self.current]
        try:
            view = memoryview(data)
            while view:
                n = os.write(self._fd, view)
                view = view[n:]
            os.fsync(self._fd)
        except OSError:
            with contextlib.suppress(OSError):  # a frame cut short is detected anyway
                os.ftruncate(self._fd, good)
            raise
        self.sizes[seq] = good + len(data)
        self._total += len(data)
        self.fsyncs += 1
        return seq

    async def roll(self) -> None:
        """Start a new segment now (in the writer thread, after any write under way), so
        that the current one can be released once nothing in it is needed."""
        if self.sizes.get(self.current):
            loop = asyncio.get_running_loop()
            await loop.run_in_executor(self._pool, self._start_segment, self.current + 1)

    def release(self, seq: int) -> bool:
        """Delete segment ``seq`` (everything in it is scored and durable elsewhere);
        never the segment being written. Returns whether it was deleted."""
        if seq == self.current or seq not in self.sizes:
            return False
        with contextlib.suppress(FileNotFoundError):
            self._path(seq).unlink()
        self._total -= self.sizes.pop(seq)
        return True

    async def close(self) -> None:
        """Wait for queued frames, then close the segment file."""
        if self._writer is not None:
            with contextlib.suppress(Exception):
                await self._writer
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1
        self._pool.shutdown(wait=True)
