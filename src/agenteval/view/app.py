"""The viewer's web application (aiohttp): routes, security headers, JSON endpoints.

Pages (HTML, rendered by :mod:`agenteval.view.pages`): ``/`` (runs), ``/run?run=KEY``,
``/trial?run=KEY&i=N``, ``/compare?a=KEY&b=KEY`` and ``/pair?a=KEY&b=KEY&case=ID`` (one
case side by side). JSON: ``/api/trials`` (one filtered page of a run's trials) and
``/api/status`` (a run's counts, for live updates). ``/static/view.js`` and
``/static/view.css`` are the only other files served.

Every response carries :data:`CSP` (no script, style, image or connection but from the
viewer itself; no frames, no forms to elsewhere) plus ``X-Content-Type-Options: nosniff``
and ``Referrer-Policy: no-referrer``. Only GET (and HEAD) are served. Run keys are looked up
in the :class:`~agenteval.view.catalog.Catalog`; an unknown key is a 404. A request whose
``Host`` names another server (a DNS-rebinding page) is answered 421 before any run is
read (:class:`~agenteval._util.hosts.HostCheck`).
"""

from __future__ import annotations

import asyncio
from importlib import resources
from pathlib import Path
from typing import Any

from aiohttp import web

from agenteval._util.hosts import HostCheck
from agenteval._util.net import request_error_log
from agenteval._util.say import Say, log_warning
from agenteval.view import pages
from agenteval.view.catalog import STEP, Catalog, RunState

CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:;"
    " connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)
"""The Content-Security-Policy of every response."""
PAGE_MAX = 500
"""The most trials ``/api/trials`` returns at once."""
CATALOG: web.AppKey[Catalog] = web.AppKey("catalog", Catalog)
POLL: web.AppKey[float] = web.AppKey("poll", float)
HOSTS: web.AppKey[HostCheck] = web.AppKey("hosts", HostCheck)
_STATIC = {"view.js": "application/javascript", "view.css": "text/css"}


async def _security_headers(request: web.Request, response: web.StreamResponse) -> None:
    response.headers["Content-Security-Policy"] = CSP
    response.headers["X-Content-Type-Options"] = "nosniff"
    response.headers["Referrer-Policy"] = "no-referrer"
    response.headers["Cross-Origin-Resource-Policy"] = "same-origin"
    response.headers.setdefault("Cache-Control", "no-store")


@web.middleware
async def _host_check(request: web.Request, handler: Any) -> web.StreamResponse:
    hosts = request.app[HOSTS]
    host = request.headers.get("Host")
    if not hosts.allows(host):
        return web.Response(status=421, text=hosts.refusal(host or "") + "\n")
    resp: web.StreamResponse = await handler(request)
    return resp


def _run(request: web.Request, param: str = "run") -> RunState:
    key = request.query.get(param, "")
    run = request.app[CATALOG].get(key)
    if run is None:
        raise web.HTTPNotFound(text=f"no run {key!r} under this folder")
    return run


async def _refresh(run: RunState) -> None:
    """One bounded step of reading the run (none while a background read is under way:
    the page shows what is read so far); the rest is read in the background."""
    if not run.catching_up:
        await asyncio.to_thread(run.refresh, STEP)
    run.start_catch_up()


def _html(text: str) -> web.Response:
    return web.Response(text=text, content_type="text/html")


def _int(request: web.Request, name: str, default: int) -> int:
    try:
        return int(request.query.get(name, default))
    except ValueError:
        raise web.HTTPBadRequest(text=f"{name} must be an integer") from None


async def runs_page(request: web.Request) -> web.Response:
    cat = request.app[CATALOG]
    runs = list(cat.scan(force=True).values())
    for run in runs:
        await _refresh(run)
    rows = await asyncio.to_thread(pages.run_rows, runs)
    return _html(pages.render("runs.html.j2", root=str(cat.root), rows=rows))


async def run_page(request: web.Request) -> web.Response:
    run = _run(request)
    await _refresh(run)
    summary, reason = await asyncio.to_thread(run.summary)
    ctx = pages.run_context(run, summary, reason)
    return _html(pages.render("run.html.j2", poll=request.app[POLL], **ctx))


async def trial_page(request: web.Request) -> web.Response:
    run = _run(request)
    await _refresh(run)
    i = _int(request, "i", 0)
    detail, problem = await asyncio.to_thread(pages.trial_of, run, i)
    if detail is None and problem is None:
        raise web.HTTPNotFound(text=f"run {run.key!r} has no trial {i}")
    return _html(
        pages.render(
            "trial.html.j2", run=run, detail=detail, problem=problem, label=pages.label(run)
        )
    )


async def compare_page(request: web.Request) -> web.Response:
    a, b = _run(request, "a"), _run(request, "b")
    await _refresh(a)
    await _refresh(b)
    allow = request.query.get("allow_dataset_change") == "1"
    policies = {
        key: request.query.getall(key)
        for key in ("require", "max_drop", "no_new_failures")
        if key in request.query
    }
    result, problem = await asyncio.to_thread(pages.gate_of, a, b, allow, policies)
    return _html(
        pages.render(
            "compare.html.j2",
            a=a,
            b=b,
            la=pages.label(a),
            lb=pages.label(b),
            result=result,
            problem=problem,
            allow=allow,
            policy_flags=pages.policy_flags(policies),
        )
    )


async def pair_page(request: web.Request) -> web.Response:
    a, b = _run(request, "a"), _run(request, "b")
    await _refresh(a)
    await _refresh(b)
    case_id = request.query.get("case", "")
    sides = await asyncio.to_thread(lambda: [pages.case_trials(r, case_id) for r in (a, b)])
    return _html(
        pages.render(
            "pair.html.j2",
            a=a,
            b=b,
            la=pages.label(a),
            lb=pages.label(b),
            case_id=case_id,
            sides=sides,
        )
    )


async def api_trials(request: web.Request) -> web.Response:
    run = _run(request)
    await _refresh(run)
    q = request.query
    offset = max(0, _int(request, "offset", 0))
    limit = min(PAGE_MAX, max(1, _int(request, "limit", 50)))
    body = await asyncio.to_thread(
        pages.trials_page,
        run,
        failed=q.get("failed", ""),
        tag=q.get("tag", ""),
        cause=q.get("cause", ""),
        text=q.get("q", ""),
        offset=offset,
        limit=limit,
    )
    return web.json_response(body)


async def api_status(request: web.Request) -> web.Response:
    run = _run(request)
    await _refresh(run)
    return web.json_response(await asyncio.to_thread(pages.status, run))


def _static_files() -> dict[str, bytes]:
    base = resources.files("agenteval.view") / "static"
    return {name: (base / name).read_bytes() for name in _STATIC}


def make_app(
    root: str | Path,
    *,
    poll_s: float = 2.0,
    host: str = "127.0.0.1",
    allow_hosts: tuple[str, ...] = (),
) -> web.Application:
    """The viewer over every run directory under ``root``; ``poll_s``: how often an open
    run page asks whether the run grew; ``host`` (the address listened on) and
    ``allow_hosts``: the ``Host`` names answered besides localhost and IP literals."""
    app = web.Application(middlewares=[_host_check])
    app[CATALOG] = Catalog(root)
    app[POLL] = poll_s
    app[HOSTS] = HostCheck(host, allow_hosts)
    files = _static_files()

    async def static(request: web.Request) -> web.Response:
        name = request.match_info["name"]
        if name not in files:
            raise web.HTTPNotFound()
        return web.Response(
            body=files[name], content_type=_STATIC[name], headers={"Cache-Control": "no-cache"}
        )

    app.on_response_prepare.append(_security_headers)
    routes: list[tuple[str, Any]] = [
        ("/", runs_page),
        ("/run", run_page),
        ("/trial", trial_page),
        ("/compare", compare_page),
        ("/pair", pair_page),
        ("/api/trials", api_trials),
        ("/api/status", api_status),
        ("/static/{name}", static),
    ]
    for path, handler in routes:
        app.router.add_get(path, handler)
    return app


async def start(
    root: str | Path,
    host: str,
    port: int,
    *,
    poll_s: float = 2.0,
    allow_hosts: tuple[str, ...] = (),
    say: Say = log_warning,
) -> web.AppRunner:
    """Start serving ``root`` on ``host:port`` (port 0: any free port); returns the runner
    (its ``addresses`` say where). A request that is not HTTP the server can read is
    answered 400 and told to ``say`` in one line (never a traceback)."""
    app = make_app(root, poll_s=poll_s, host=host, allow_hosts=allow_hosts)
    refused = request_error_log("agenteval.view", lambda _status, line: say(f"view: {line}"))
    runner = web.AppRunner(app, access_log=None, logger=refused)
    await runner.setup()
    site = web.TCPSite(runner, host, port)
    await site.start()
    return runner
