"""A damaged write-ahead log: a corrupt frame is skipped and counted, never scored, and
the acknowledged frames after it are kept (docs/monitor.md, "Nothing acknowledged is lost")."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from monitor_harness import agent_trace, get, otlp_json, served, wait_for

from agenteval.monitor import MonitorConfig
from agenteval.monitor.wal import WriteAheadLog, encode_frame, scan_segment

HEAD = 9  # length u32, crc u32, kind u8


def _segment(d: Path, seq: int, frames: list[bytes]) -> Path:
    d.mkdir(parents=True, exist_ok=True)
    p = d / f"{seq:012d}.wal"
    p.write_bytes(b"".join(frames))
    return p


@settings(max_examples=40, deadline=None)
@given(
    payloads=st.lists(st.binary(min_size=1, max_size=30), min_size=2, max_size=6),
    data=st.data(),
)
def test_a_flipped_bit_in_a_frame_other_than_the_last_loses_that_frame_only(
    tmp_path_factory: pytest.TempPathFactory, payloads: list[bytes], data: st.DataObject
) -> None:
    """Any one bit flipped in the CRC or payload of any frame but the last: every other
    frame is read, in order, the damaged one never, and it is reported as skipped."""
    frames = [encode_frame(1 + i % 4, p) for i, p in enumerate(payloads)]
    k = data.draw(st.integers(0, len(frames) - 2))
    at = sum(len(f) for f in frames[:k])
    pos = at + data.draw(st.integers(4, len(frames[k]) - 1))  # the CRC, kind or payload
    bit = data.draw(st.integers(0, 7))
    blob = bytearray(b"".join(frames))
    blob[pos] ^= 1 << bit
    p = _segment(tmp_path_factory.mktemp("wal"), 1, [bytes(blob)])
    scan = scan_segment(p, 1)
    assert [f.payload for f in scan.frames] == payloads[:k] + payloads[k + 1 :]
    assert scan.skipped == [(at, len(frames[k]))]
    assert scan.end == len(blob)


@settings(max_examples=40, deadline=None)
@given(
    payloads=st.lists(st.binary(min_size=1, max_size=30), min_size=1, max_size=6, unique=True),
    data=st.data(),
)
def test_a_flipped_bit_anywhere_never_reads_a_frame_that_was_not_written(
    tmp_path_factory: pytest.TempPathFactory, payloads: list[bytes], data: st.DataObject
) -> None:
    """Any one bit anywhere (a length field included): what is read is written frames, in
    order, never the damaged one; the skipped and unreadable bytes account for the rest."""
    frames = [encode_frame(1, p) for p in payloads]
    blob = bytearray(b"".join(frames))
    pos = data.draw(st.integers(0, len(blob) - 1))
    blob[pos] ^= 1 << data.draw(st.integers(0, 7))
    starts = [sum(len(f) for f in frames[:i]) for i in range(len(frames))]
    damaged = max(i for i, s in enumerate(starts) if s <= pos)
    scan = scan_segment(_segment(tmp_path_factory.mktemp("wal"), 1, [bytes(blob)]), 1)
    got = [f.payload for f in scan.frames]
    assert payloads[damaged] not in got
    assert got == [p for p in payloads if p in got]  # a subsequence, in order
    assert got[:damaged] == payloads[:damaged]  # everything before the damage
    read = sum(len(encode_frame(1, p)) for p in got) + sum(n for _, n in scan.skipped)
    assert read == scan.end <= len(blob)


def test_a_corrupt_frame_is_skipped_at_open_and_the_file_left_whole(tmp_path: Path) -> None:
    frames = [encode_frame(1, b"one"), encode_frame(1, b"two"), encode_frame(1, b"three")]
    blob = bytearray(b"".join(frames))
    blob[len(frames[0]) + HEAD] ^= 0x01  # the second frame's first payload byte
    p = _segment(tmp_path, 1, [bytes(blob)])
    wal, got = WriteAheadLog.open(tmp_path)
    assert [f.payload for f in got] == [b"one", b"three"]
    assert (wal.corrupt_frames, wal.corrupt_bytes) == (1, len(frames[1]))
    assert wal.torn_bytes == 0 and not wal.unreadable
    assert p.read_bytes() == bytes(blob)  # nothing cut: the frame after it was acknowledged
    asyncio.run(wal.close())


def test_a_corrupt_last_frame_of_the_newest_segment_is_a_torn_tail(tmp_path: Path) -> None:
    """All its bytes there, its CRC wrong, nothing after it: a write the crash caught before
    its fsync (never acknowledged): cut, as a frame cut short is."""
    frames = [encode_frame(1, b"one"), encode_frame(1, b"two")]
    blob = bytearray(b"".join(frames))
    blob[-1] ^= 0x80
    p = _segment(tmp_path, 1, [bytes(blob)])
    wal, got = WriteAheadLog.open(tmp_path)
    assert [f.payload for f in got] == [b"one"]
    assert wal.torn_bytes == len(frames[1]) and wal.corrupt_frames == 0
    assert p.read_bytes() == frames[0]
    asyncio.run(wal.close())


def test_a_damaged_length_in_an_older_segment_is_left_on_disk_and_counted(
    tmp_path: Path,
) -> None:
    """A length field flipped hides where the next frame starts: the rest of that segment
    cannot be read. It is not the newest segment, so its frames were acknowledged: the
    bytes are kept (never cut), counted, and the next segment is read whole."""
    frames = [encode_frame(1, b"one"), encode_frame(1, b"two"), encode_frame(1, b"three")]
    blob = bytearray(b"".join(frames))
    blob[len(frames[0])] ^= 0x40  # the second frame's length: now past the file's end
    old = _segment(tmp_path, 1, [bytes(blob)])
    _segment(tmp_path, 2, [encode_frame(1, b"four")])
    wal, got = WriteAheadLog.open(tmp_path)
    assert [f.payload for f in got] == [b"one", b"four"]
    assert wal.unreadable == {1: len(frames[1]) + len(frames[2])}
    assert old.read_bytes() == bytes(blob) and wal.torn_bytes == 0
    asyncio.run(wal.close())


def test_the_monitor_scores_the_frames_around_a_corrupt_one_and_says_so(tmp_path: Path) -> None:
    """A log left by an earlier process holding three acknowledged requests (one trace
    each), the middle one damaged: a restart scores traces 1 and 3, never 2, says so in one
    line, and ``/metrics`` shows the skipped frame."""
    out = tmp_path / "mon"
    frames = [encode_frame(1, otlp_json(agent_trace(i))) for i in (1, 2, 3)]
    blob = bytearray(b"".join(frames))
    blob[len(frames[0]) + HEAD + 40] ^= 0x04  # inside trace 2's body
    _segment(out / ".monitor" / "wal", 1, [bytes(blob)])
    cfg = MonitorConfig(out=out, window_s=3600, idle_s=0.1, max_wait_s=0.5, tick_s=0.05)
    with served(cfg) as m:
        wait_for(lambda: m.monitor.metrics.trials == 2, what="2 trials")
        metrics = get(m.endpoint + "/metrics")
        said = list(m.said)
    assert "agenteval_monitor_wal_corrupt_frames 1" in metrics
    assert any("skipped 1 frame(s) of the write-ahead log" in x for x in said), said
    from monitor_harness import all_trials

    assert sorted(t["metadata"]["trace_id"] for t in all_trials(out)) == [
        f"{1:032x}",
        f"{3:032x}",
    ]
