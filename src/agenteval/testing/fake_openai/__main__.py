"""``python -m agenteval.testing.fake_openai``: serve the fake endpoint until SIGINT/SIGTERM.

Options: ``--host`` (127.0.0.1), ``--port`` (0: a free one), ``--latency-ms``, ``--fault
KIND=P`` (repeatable: the seeded schedule), ``--seed``, ``--retry-after SECONDS``. Prints
``READY <port>`` once listening.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import signal
import sys
from collections.abc import Sequence

from agenteval._util.loop import run_event_loop
from agenteval.testing.fake_openai import FakeConfig, start_fake_server


def _parse_rate(text: str) -> tuple[str, float]:
    kind, sep, p = text.partition("=")
    if not sep:
        raise argparse.ArgumentTypeError(f"expected KIND=PROBABILITY, got {text!r}")
    try:
        return kind, float(p)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a probability: {p!r}") from None


async def _serve(config: FakeConfig, host: str, port: int) -> None:
    server = await start_fake_server(config, host=host, port=port)
    print(f"READY {server.port}", flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError):
            loop.add_signal_handler(sig, stop.set)
    try:
        await stop.wait()
    finally:
        await server.close()


def main(argv: Sequence[str] | None = None) -> int:
    """Command line: serve until SIGINT/SIGTERM, printing ``READY <port>`` when listening."""
    parser = argparse.ArgumentParser(prog="python -m agenteval.testing.fake_openai")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port")
    parser.add_argument("--latency-ms", type=float, default=0.0)
    parser.add_argument("--fault", type=_parse_rate, action="append", default=[], metavar="KIND=P")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--retry-after", type=float, default=0.05, metavar="SECONDS")
    args = parser.parse_args(argv)
    try:
        config = FakeConfig(
            latency_ms=args.latency_ms,
            fault_rates=dict(args.fault),
            seed=args.seed,
            retry_after_s=args.retry_after,
        )
    except ValueError as e:
        parser.error(str(e))
    run_event_loop(_serve(config, args.host, args.port))
    return 0


if __name__ == "__main__":
    sys.exit(main())
