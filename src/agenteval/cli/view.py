"""``agenteval view [DIR]``: a local web viewer over every run directory under DIR.

Pages: every run (sortable, filtered by dataset, agent and tag, grouped by dataset), one
run (its summary and its trials, filtered and paged on the server), one trial (the
conversation, the tool calls with arguments, results, errors and timings, each score with
its reason, the raw JSON), and two runs compared (the gate's verdict and statistics, the
cases that newly fail or pass, each case side by side). A run still being written updates
as trials arrive; a broken run shows why.

The viewer only reads: it never writes into a run directory. Pages load nothing from
anywhere else (a strict Content-Security-Policy). It listens on 127.0.0.1 unless --host
says otherwise, and warns when that address is not a loopback one. It answers only a Host
header naming this machine (localhost, an IP address, the --host address or an
--allow-host name; 421 otherwise), so a web page cannot read the runs through DNS
rebinding. Stop it with Ctrl-C
(exit 130). Exit 2 when DIR is not a folder or the port cannot be opened.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path
from typing import Any

from agenteval.cli._common import say
from agenteval.errors import EXIT_INTERRUPTED, InputError


def register(sub: Any) -> None:
    """Add the ``view`` subcommand."""
    p: argparse.ArgumentParser = sub.add_parser(
        "view",
        help="browse the runs under a folder in a local web viewer (read-only)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "dir", metavar="DIR", nargs="?", default=".", help="folder to look for runs in (.)"
    )
    p.add_argument("--port", type=int, default=8765, help="port to listen on (8765; 0: any)")
    p.add_argument(
        "--host", default="127.0.0.1", help="address to listen on (127.0.0.1: this machine only)"
    )
    p.add_argument(
        "--allow-host",
        action="append",
        default=[],
        metavar="NAME",
        help="also answer requests for this host name (repeatable; localhost and IP"
        " addresses are always answered)",
    )
    p.add_argument(
        "--poll",
        type=float,
        default=2.0,
        metavar="SECONDS",
        help="how often an open run page checks for new trials (2)",
    )
    p.set_defaults(func=run)


async def _serve(
    root: Path, host: str, port: int, poll: float, allow_hosts: tuple[str, ...] = ()
) -> None:
    # imported when this command runs: the other commands start without it
    from agenteval.view.app import start

    try:
        runner = await start(
            root,
            host,
            port,
            poll_s=poll,
            allow_hosts=allow_hosts,
            say=lambda line: say(f"agenteval {line}"),
        )
    except OSError as e:
        raise InputError(f"cannot listen on {host}:{port} ({e.strerror or e})") from None
    try:
        for addr in runner.addresses:
            h, p = addr[0], addr[1]
            shown = f"[{h}]" if ":" in h else h
            print(f"agenteval view: serving {root} at http://{shown}:{p}/", flush=True)
        print("agenteval view: read-only; press Ctrl-C to stop", flush=True)
        await asyncio.Event().wait()
    finally:
        await runner.cleanup()


def run(args: argparse.Namespace) -> int:
    """Serve until interrupted."""
    # imported when this command runs: the other commands start without it
    from agenteval._util.net import is_loopback

    root = Path(args.dir)
    if not root.is_dir():
        raise InputError("is not a folder", file=root)
    if not 0 <= args.port <= 65535:
        raise InputError(f"--port must be within 0..65535, got {args.port}")
    if not args.poll > 0:
        raise InputError(f"--poll must be a positive number of seconds, got {args.poll}")
    if not is_loopback(args.host):
        print(
            f"agenteval: warning: --host {args.host} is not a loopback address: anyone who can"
            " reach it can read every run under the folder",
            file=sys.stderr,
            flush=True,
        )
    try:
        asyncio.run(_serve(root, args.host, args.port, args.poll, tuple(args.allow_host)))
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    return EXIT_INTERRUPTED
