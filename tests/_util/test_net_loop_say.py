"""The shared small pieces: loopback hosts, the event-loop factory, the default say()."""

from __future__ import annotations

import asyncio
import logging

import pytest

from agenteval._util.loop import new_event_loop, run_event_loop
from agenteval._util.net import is_loopback
from agenteval._util.say import log_warning


@pytest.mark.parametrize("host", ["localhost", "127.0.0.1", "127.1.2.3", "::1"])
def test_loopback_hosts(host: str) -> None:
    assert is_loopback(host)


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "10.0.0.1", "example.com", "", "[::1]"])
def test_other_hosts_are_not_loopback(host: str) -> None:
    assert not is_loopback(host)


def test_the_loop_factory_is_uvloop_when_installed() -> None:
    uvloop = pytest.importorskip("uvloop")
    loop = new_event_loop()
    try:
        assert isinstance(loop, uvloop.Loop)
    finally:
        loop.close()


def test_run_event_loop_runs_to_completion_on_a_fresh_loop() -> None:
    async def which() -> asyncio.AbstractEventLoop:
        await asyncio.sleep(0)
        return asyncio.get_running_loop()

    first, second = run_event_loop(which()), run_event_loop(which())
    assert first is not second
    assert first.is_closed() and second.is_closed()


def test_the_default_say_is_a_warning_of_the_agenteval_logger(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.WARNING, logger="agenteval"):
        log_warning("agenteval: resume: 3 trial(s) already recorded")
    assert [(r.name, r.levelno, r.getMessage()) for r in caplog.records] == [
        ("agenteval", logging.WARNING, "agenteval: resume: 3 trial(s) already recorded")
    ]
