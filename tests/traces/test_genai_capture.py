"""The in-process path with the real instrumentation libraries: agenteval's capture sees
what import-traces reads from the same library's export, call for call."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from genai_libs import LIBS
from test_genai_conventions import EXPECTED, FIXTURES, ON, _imported

from fake_server_util import fake_server_process

HERE = Path(__file__).parent


def _installed(dist: str) -> bool:
    from importlib.metadata import PackageNotFoundError, version

    try:
        version(dist)
    except PackageNotFoundError:
        return False
    return True


CASES = [(lib, mode) for lib, (dist, modes) in LIBS.items() if _installed(dist) for mode in modes]


@pytest.fixture(scope="module")
def fake_url() -> Iterator[str]:
    with fake_server_process() as url:
        yield url


@pytest.mark.parametrize(("lib", "mode"), CASES)
def test_in_process_capture_matches_import(
    lib: str, mode: str, fake_url: str, tmp_path: Path
) -> None:
    out = tmp_path / "seen.json"
    cmd = [sys.executable, str(HERE / "genai_libs.py"), "--capture", lib, mode, fake_url, str(out)]
    subprocess.run(cmd, check=True, timeout=120)
    seen = json.loads(out.read_text())
    calls = [(c["name"], c["arguments"], c["result"], c["error"]) for c in seen["calls"]]
    assert seen["usage"] and seen["active_s"]
    stems = [s for s in ON if s.startswith(f"{lib}-") and s.endswith(f"-{mode}")]
    if mode == "off" or not stems:
        assert seen["metadata"].get("not_recorded"), seen
        assert seen["metadata"].get("not_recorded_reason")
        return
    assert calls == EXPECTED
    assert seen["tool_errors"] == [{"call": 2, "rule": "text", "prefix": "Error:"}]
    # the same library's export, imported: the same calls (the property across paths)
    imported = _imported(stems[-1])
    assert [(c.name, c.arguments, c.result, c.error) for c in imported.tool_calls] == calls
    assert (FIXTURES / f"{stems[-1]}.traces.json").exists()


@pytest.mark.parametrize(("lib", "mode"), CASES)
def test_receiver_path_matches_import(lib: str, mode: str, fake_url: str) -> None:
    """The third path: the library's OTLP/HTTP export (spans and logs) to the receiver."""
    import asyncio

    from agenteval.llm.propagation import TraceContext
    from agenteval.traces.logs import attach
    from agenteval.traces.mapping import trajectory_from_spans
    from agenteval.traces.receiver import OtlpReceiver

    async def go() -> tuple[list[object], dict[str, object]]:
        receiver = OtlpReceiver("127.0.0.1", 0)
        await receiver.start()
        try:
            ctx = TraceContext.new()
            box = receiver.expect(ctx)
            cmd = [sys.executable, str(HERE / "genai_libs.py"), "--export", lib, mode, fake_url]
            cmd += [receiver.endpoint, ctx.traceparent]
            proc = await asyncio.create_subprocess_exec(*cmd)
            assert await asyncio.wait_for(proc.wait(), 120) == 0
            await box.settle(2.0)
            traj = trajectory_from_spans(attach(box.spans, box.logs))
            return list(traj.tool_calls), dict(traj.metadata)
        finally:
            await receiver.close()

    calls, meta = asyncio.run(go())
    got = [(c.name, c.arguments, c.result, c.error) for c in calls]  # type: ignore[attr-defined]
    stems = [s for s in ON if s.startswith(f"{lib}-") and s.endswith(f"-{mode}")]
    if mode == "off" or not stems:
        assert meta.get("not_recorded") and meta.get("not_recorded_reason")
        return
    assert got == EXPECTED
    imported = _imported(stems[-1])
    assert [(c.name, c.arguments, c.result, c.error) for c in imported.tool_calls] == got
