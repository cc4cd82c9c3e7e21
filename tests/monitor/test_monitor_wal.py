"""The write-ahead log: frames, torn tails, group commit, bounds, a refused disk."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agenteval.monitor.wal import WalFull, WriteAheadLog, encode_frame, read_segment


def _open(d: Path, **kw: object) -> tuple[WriteAheadLog, list[bytes]]:
    wal, frames = WriteAheadLog.open(d, **kw)  # type: ignore[arg-type]
    return wal, [f.payload for f in frames]


def _append_all(wal: WriteAheadLog, payloads: list[bytes]) -> list[int]:
    async def go() -> list[int]:
        return list(await asyncio.gather(*(wal.append(1, p) for p in payloads)))

    return asyncio.run(go())


def test_frames_come_back_in_order_after_reopen(tmp_path: Path) -> None:
    wal, old = _open(tmp_path)
    assert old == []
    payloads = [f"request {i}".encode() * (i + 1) for i in range(20)]
    _append_all(wal, payloads)
    asyncio.run(wal.close())
    wal2, back = _open(tmp_path)
    assert back == payloads
    assert wal2.torn_bytes == 0
    asyncio.run(wal2.close())


@settings(max_examples=60, deadline=None)
@given(
    payloads=st.lists(st.binary(min_size=0, max_size=40), min_size=1, max_size=6),
    data=st.data(),
)
def test_a_torn_tail_is_dropped_never_read(
    tmp_path_factory: pytest.TempPathFactory, payloads: list[bytes], data: st.DataObject
) -> None:
    """Cut the file anywhere and append any garbage: what is read is the frames written
    before the cut, then only whole frames the bytes really spell (garbage that happens to
    complete a cut frame byte for byte, as b"\\x00" after a frame of b"\\x00" cut one byte
    short, is that frame), and the file is cut back to exactly what was read."""
    d = tmp_path_factory.mktemp("wal")
    blob = b"".join(encode_frame(1, p) for p in payloads)
    cut = data.draw(st.integers(0, len(blob)))
    junk = data.draw(st.binary(max_size=30))
    disk = blob[:cut] + junk
    (d / "000000000001.wal").write_bytes(disk)
    ends, at = [], 0
    for p in payloads:
        at += len(encode_frame(1, p))
        ends.append(at)
    whole = sum(1 for e in ends if e <= cut)
    wal, frames = WriteAheadLog.open(d)
    back = [f.payload for f in frames]
    assert back[:whole] == payloads[:whole]
    read = b"".join(encode_frame(f.kind, f.payload) for f in frames)
    assert disk.startswith(read)  # nothing read that the file does not hold, in order
    assert (d / "000000000001.wal").read_bytes() == read
    asyncio.run(wal.close())


def test_a_flipped_byte_skips_that_frame_only(tmp_path: Path) -> None:
    """A corrupt frame whose end is confirmed by a valid frame after it is skipped; the
    frames after it are read (tests/monitor/test_monitor_wal_corrupt.py has the rest)."""
    frames = [encode_frame(3, b"a" * 10), encode_frame(3, b"b" * 10), encode_frame(3, b"c" * 10)]
    blob = bytearray(b"".join(frames))
    blob[len(frames[0]) + 12] ^= 0xFF  # inside the second frame's payload
    p = tmp_path / "000000000001.wal"
    p.write_bytes(bytes(blob))
    got, end = read_segment(p, 1)
    assert [f.payload for f in got] == [b"a" * 10, b"c" * 10]
    assert end == len(blob)


def test_concurrent_appends_share_fsyncs(tmp_path: Path) -> None:
    """200 requests at once are made durable by far fewer fsyncs (group commit), and each
    append returned only after the fsync that covers it."""
    wal, _ = _open(tmp_path)
    _append_all(wal, [b"x" * 100] * 200)
    assert 1 <= wal.fsyncs < 200
    asyncio.run(wal.close())
    _, back = _open(tmp_path)
    assert len(back) == 200


def test_over_the_bound_is_refused_and_nothing_written(tmp_path: Path) -> None:
    wal, _ = _open(tmp_path, max_bytes=1000)
    _append_all(wal, [b"y" * 400, b"y" * 400])
    with pytest.raises(WalFull) as e:
        _append_all(wal, [b"z" * 400])
    assert not e.value.disk and "over its bound of 1000" in str(e.value)
    assert wal.total_bytes == 2 * len(encode_frame(1, b"y" * 400))
    asyncio.run(wal.close())
    _, back = _open(tmp_path)
    assert back == [b"y" * 400] * 2


def test_segments_rotate_and_release_deletes_only_old_ones(tmp_path: Path) -> None:
    wal, _ = _open(tmp_path, segment_bytes=100)  # each frame fills a segment
    for _ in range(5):
        _append_all(wal, [b"q" * 200])
    assert wal.depth == 5 and wal.current == 5
    assert not wal.release(wal.current)  # the one being written stays
    assert wal.release(1) and not (tmp_path / "000000000001.wal").exists()
    assert wal.depth == 4
    asyncio.run(wal.close())
    _, back = _open(tmp_path)
    assert back == [b"q" * 200] * 4


REFUSED = textwrap.dedent(
    """
    import asyncio, resource, signal, sys
    from agenteval.monitor.wal import WalFull, WriteAheadLog
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit: EFBIG, no signal
    wal, _ = WriteAheadLog.open(sys.argv[1])
    async def main():
        await wal.append(1, b"kept" * 100)
        resource.setrlimit(resource.RLIMIT_FSIZE, (1000, resource.RLIM_INFINITY))
        try:
            await wal.append(1, b"refused" * 200)
        except WalFull as e:
            print("refused", e.disk, flush=True)
        try:
            await wal.append(1, b"again" * 300)
        except WalFull as e:
            print("refused", e.disk, flush=True)
        resource.setrlimit(resource.RLIMIT_FSIZE, (resource.RLIM_INFINITY,) * 2)
        await wal.append(1, b"after" * 100)  # the disk has room again: appends go on
        print("appended", flush=True)
        await wal.close()
    asyncio.run(main())
    """
)


def test_a_disk_that_refuses_the_write_fails_the_append_and_corrupts_nothing(
    tmp_path: Path,
) -> None:
    """The file system refuses the write (EFBIG from RLIMIT_FSIZE, as ENOSPC would): the
    append fails (so the request is not acknowledged), the segment is cut back to its last
    synced frame, and once writes succeed again the log reads back whole."""
    r = subprocess.run(
        [sys.executable, "-c", REFUSED, str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ},
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout.split("\n")[:3] == ["refused True", "refused True", "appended"]
    _, back = _open(tmp_path)
    assert back == [b"kept" * 100, b"after" * 100]
