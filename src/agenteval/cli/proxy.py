"""``agenteval proxy UPSTREAM_BASE_URL --out FILE.jsonl``: record an agent's model traffic.

For an agent you run yourself, outside ``agenteval run``: point its OpenAI-compatible
client at ``http://127.0.0.1:PORT/v1`` — or at ``http://127.0.0.1:PORT/t/LABEL/v1`` to
label its calls (e.g. with the case id) — and every request is forwarded to
UPSTREAM_BASE_URL unchanged (the agent's own API key included) while one JSON line per
model call is appended to FILE: the label, model, status, latency, token usage, the tool
calls the model requested and the tool outputs the agent sent back. No header is
written, and the values of the agent's Authorization / api-key headers are removed from
every recorded string.

``agenteval.traces.proxy_records.read_recording(FILE)`` turns the file into one
trajectory (tool calls with results and errors, usage, model time) per label
(docs/agents/proxy.md). Inside ``agenteval run``, use ``--capture-proxy`` instead: each
trial then gets its own URL and its calls become the trial's.

Prints ``listening on http://HOST:PORT/v1`` once ready; stops on Ctrl-C or SIGTERM
(exit 0). Exit codes: 2 bad upstream URL, address in use, or a FILE that is a directory or
a run's own file (``trials.jsonl``, ``run.json``... beside a ``run.json``); 5 FILE cannot
be written (disk full, read-only, permission: one line, the lines already written kept).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import signal
import sys
from pathlib import Path
from typing import IO, Any

from agenteval._util.outpaths import check_out_files
from agenteval._util.secrets import redact_url
from agenteval.cli import cache_args
from agenteval.cli._common import say
from agenteval.errors import EXIT_OK, InputError, RunWriteError


def register(sub: Any) -> None:
    p: argparse.ArgumentParser = sub.add_parser(
        "proxy",
        help="record an agent's OpenAI-compatible model traffic (a forwarding proxy)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("upstream", metavar="UPSTREAM_BASE_URL", help="e.g. https://api.openai.com/v1")
    p.add_argument("--out", metavar="FILE", required=True, help="JSONL file calls are appended to")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (127.0.0.1)")
    p.add_argument("--port", type=int, default=0, help="port to listen on (0: a free one)")
    p.add_argument(
        "--allow-host",
        action="append",
        default=[],
        metavar="NAME",
        help="also answer requests whose Host is NAME (localhost and IP addresses always are;"
        " others get 421, against DNS rebinding)",
    )
    p.set_defaults(func=run)
    cache_args.add_cache_args(p)


def run(args: argparse.Namespace) -> int:
    # imported when this command runs: the other commands start without it
    from agenteval.traces.proxy import check_upstream

    upstream = check_upstream(args.upstream)
    out = check_out_files([("--out", args.out)], [])[0]  # never a run's own file
    try:
        f = open(out, "a", encoding="utf-8")  # noqa: SIM115 - closed in finally
    except OSError as e:
        raise _write_error(e, out) from None
    try:
        asyncio.run(
            _serve(
                upstream,
                args.host,
                args.port,
                f,
                tuple(args.allow_host),
                cache_args.cache_from_args(args),
            )
        )
    finally:
        try:
            f.close()
        except OSError as e:  # the last buffered bytes refused: said once, exit 5
            raise _write_error(e, out) from None
    return EXIT_OK


def _write_error(e: OSError, out: Path) -> RunWriteError | InputError:
    if isinstance(e, IsADirectoryError | NotADirectoryError | FileNotFoundError):
        return InputError(f"cannot create the proxy's output file ({e.strerror or e})", file=out)
    why = e.strerror or str(e) or type(e).__name__
    return RunWriteError(
        f"cannot write {out}: {why}; the calls recorded before are kept, the rest were"
        " forwarded but not recorded"
    )


async def _serve(
    upstream: str,
    host: str,
    port: int,
    out: IO[str],
    allow_hosts: tuple[str, ...] = (),
    cache: Any = None,
) -> None:
    # imported when this command runs: the other commands start without it
    from agenteval.traces.proxy import RecordingProxy

    replay = cache.replay_cache() if cache is not None else None
    proxy = RecordingProxy(
        upstream,
        host=host,
        port=port,
        out=out,
        labels=True,
        allow_hosts=allow_hosts,
        cache=replay,
        say=say,
    )
    try:
        await proxy.start()
    except OSError as e:
        await proxy.close()
        raise InputError(f"cannot listen on {host}:{port}: {e.strerror or e}") from None
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError):
            loop.add_signal_handler(sig, stop.set)
    print(f"listening on {proxy.url}/v1", flush=True)
    print(
        f"agenteval proxy: forwarding to {redact_url(upstream)}, recording to {out.name};"
        f" label calls with {proxy.url}/t/LABEL/v1; Ctrl-C stops",
        file=sys.stderr,
        flush=True,
    )
    failed = asyncio.ensure_future(proxy.failed.wait())
    try:
        await asyncio.wait(
            [asyncio.ensure_future(stop.wait()), failed], return_when="FIRST_COMPLETED"
        )
        if proxy.write_error is not None:
            raise _write_error(proxy.write_error, Path(out.name))
    finally:
        await proxy.close()
        print(f"agenteval proxy: {proxy.calls_recorded} call(s) recorded", file=sys.stderr)
