"""The write-ahead log's frames: their bytes, and reading a segment back (the format and
the rules for torn and corrupt frames are in :mod:`agenteval.monitor.wal`'s docstring)."""

from __future__ import annotations

import struct
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "KINDS",
    "KIND_OF",
    "MAX_PAYLOAD",
    "Frame",
    "Logged",
    "Scan",
    "encode_frame",
    "read_segment",
    "scan_segment",
]

KINDS = {1: "traces/json", 2: "traces/protobuf", 3: "logs/json", 4: "logs/protobuf"}
"""The kinds of payload a frame holds: which OTLP signal, in which encoding."""
KIND_OF = {name: kind for kind, name in KINDS.items()}
"""The kind of a payload (``"traces/json"`` → 1): the frame's kind byte."""
_HEAD = struct.Struct(">IIB")
MAX_PAYLOAD = 1 << 30
"""A frame longer than this is not a frame (a length field read from garbage)."""


@dataclass(frozen=True, slots=True)
class Frame:
    """One record read back: its segment, offset, kind and payload."""

    segment: int
    offset: int
    kind: int
    payload: bytes


def encode_frame(kind: int, payload: bytes) -> bytes:
    """The bytes of one frame (module docstring)."""
    crc = zlib.crc32(payload, zlib.crc32(bytes([kind])))
    return _HEAD.pack(len(payload), crc, kind) + payload


@dataclass(frozen=True, slots=True)
class Scan:
    """What :func:`scan_segment` read: the valid frames, where the readable part ends, and
    the corrupt frames skipped on the way, as (offset, size) pairs."""

    frames: list[Frame]
    end: int
    skipped: list[tuple[int, int]]


def _frame_at(data: bytes, at: int) -> tuple[int, bool] | None:
    """Where the frame at ``at`` ends and whether it is valid (its CRC matches, its kind is
    one); None when no frame can start there (too few bytes, an impossible length, or cut
    short)."""
    if at + _HEAD.size > len(data):
        return None
    length, crc, kind = _HEAD.unpack_from(data, at)
    start = at + _HEAD.size
    if length > MAX_PAYLOAD or start + length > len(data):
        return None
    payload = memoryview(data)[start : start + length]
    ok = kind in KINDS and zlib.crc32(payload, zlib.crc32(bytes([kind]))) == crc
    return start + length, ok


def _walk(data: bytes) -> Iterator[tuple[int, int, bool]]:
    """(offset, end, valid) of each frame read (module docstring), a skipped corrupt one
    with ``valid`` False; stops at a torn or unreadable tail."""
    at = 0
    while (got := _frame_at(data, at)) is not None:
        stop, ok = got
        if not ok:
            after = _frame_at(data, stop)
            if after is None or not after[1]:
                return  # nothing confirms its length: the tail from here is unreadable
        yield at, stop, ok
        at = stop


def scan_segment(path: Path, segment: int = 0, *, payloads: bool = True) -> Scan:
    """The frames of one segment file (module docstring: a torn tail ends the reading, a
    corrupt frame followed by a valid one is skipped); without ``payloads``, the frames'
    payloads are left empty (:meth:`WriteAheadLog.open` reads them again when replayed)."""
    data = path.read_bytes()
    frames: list[Frame] = []
    skipped: list[tuple[int, int]] = []
    end = 0
    for at, stop, ok in _walk(data):
        if ok:
            payload = data[at + _HEAD.size : stop] if payloads else b""
            frames.append(Frame(segment, at, data[at + 8], payload))
        else:
            skipped.append((at, stop - at))
        end = stop
    return Scan(frames, end, skipped)


class Logged:
    """The valid frames :meth:`WriteAheadLog.open` found, read again a segment at a time
    each time this is iterated: a log of many segments is never all in memory at once
    (at most one segment's bytes, ``segment_bytes``, and the frame being decoded). The
    CRCs were checked by the scan; iterating follows the frame lengths to where the scan
    stopped, leaving out the frames it skipped."""

    def __init__(self) -> None:
        self._segments: list[tuple[int, Path, int, frozenset[int]]] = []
        self._count = 0

    def add(self, seq: int, path: Path, scan: Scan) -> None:
        skipped = frozenset(at for at, _ in scan.skipped)
        self._segments.append((seq, path, scan.end, skipped))
        self._count += len(scan.frames)

    def __len__(self) -> int:
        return self._count

    def __iter__(self) -> Iterator[Frame]:
        for seq, path, end, skipped in self._segments:
            data = path.read_bytes()
            at = 0
            while at < end:
                length, _crc, kind = _HEAD.unpack_from(data, at)
                stop = at + _HEAD.size + length
                if at not in skipped:
                    yield Frame(seq, at, kind, data[at + _HEAD.size : stop])
                at = stop
            del data


def read_segment(path: Path, segment: int = 0) -> tuple[list[Frame], int]:
    """The valid frames of one segment file and the offset where they end (the file's
    length when nothing is torn)."""
    scan = scan_segment(path, segment)
    return scan.frames, scan.end
