"""What each page of the viewer shows, computed from the catalog, and the templates.

The numbers come from the code the commands use: a run's summary is
:func:`agenteval.report.summarize` (what ``agenteval report`` prints), a comparison is
:func:`agenteval.gate.paired.compare_runs` with the ``gate`` command's defaults (what ``agenteval
gate`` decides). Templates are jinja2 with autoescape on: every value from a run is
untrusted and is escaped, with control and bidi characters shown, never acted on.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any

import jinja2

from agenteval._version import __version__
from agenteval.errors import InputError
from agenteval.gate.paired import GateResult, compare_runs
from agenteval.gate.policies import parse_require
from agenteval.report.html import template_env
from agenteval.report.terminal import fmt_num, fmt_rate
from agenteval.summary.accumulator import correctness_scorer
from agenteval.summary.model import Summary
from agenteval.view.catalog import RunState
from agenteval.view.detail import TrialDetail, trial_detail


@cache
def _env() -> jinja2.Environment:
    return template_env("agenteval.view")


def render(template: str, **ctx: Any) -> str:
    """Render one of the package's templates (autoescaped)."""
    return _env().get_template(template).render(version=__version__, **ctx)


def label(run: RunState) -> str:
    """How a run is named on the pages: its key, and its run id when known."""
    h = run.header
    return f"{run.key} ({h.run_id})" if h is not None else run.key


@dataclass
class RunRow:
    """One line of the runs table."""

    run: RunState
    state: str
    agent: str
    model: str
    dataset: str
    sha: str
    started: str
    trials: int
    failed: int
    cost: float | None
    headline: str | None
    headline_rate: float | None
    scores: list[tuple[str, str]]
    tags: list[str]
    error: str | None
    matrix: str = ""
    """The matrix the run is a cell of (``settings.matrix.name``), "" when none."""
    cell: str = ""
    cell_order: int = 0
    """The cell's place in the matrix (``settings.matrix.cells``)."""


def _agent_model(agent: dict[str, Any] | None) -> tuple[str, str]:
    """How the runs table names the agent and model: a Python agent by its target
    (``module:fn``, what tells two Python agents apart), others by name or kind."""
    if not agent:
        return "", ""
    target = agent.get("target") if agent.get("kind") == "python" else None
    name = target or agent.get("agent") or agent.get("name") or agent.get("kind") or ""
    model = agent.get("model") or ""
    return str(name), str(model)


def _matrix_cell(settings: dict[str, Any]) -> tuple[str, str, int]:
    """(matrix name, cell name, the cell's place among the matrix's cells)."""
    m = settings.get("matrix")
    if not isinstance(m, dict):
        return "", "", 0
    cell = str(m.get("cell") or "")
    listed = m.get("cells")
    cells: list[Any] = listed if isinstance(listed, list) else []
    return str(m.get("name") or ""), cell, cells.index(cell) if cell in cells else len(cells)


def _row(run: RunState) -> RunRow:
    h = run.header
    summary, reason = run.summary() if run.error is None else (None, run.error)
    writing = run.writing()
    state = "broken" if reason else "writing" if writing else "finished"
    if state == "finished" and summary is None:
        state = "reading"
    if state == "finished" and h is not None and h.finished_at is None:
        state = "unfinished"
    agent, model = _agent_model(h.agent if h else None)
    matrix, cell, order = _matrix_cell(h.settings) if h else ("", "", 0)
    scores: list[tuple[str, str]] = []
    headline = rate = None
    if summary is not None:
        for name, ss in summary.scorers.items():
            scores.append((name, fmt_rate(ss.pass_rate) if ss.binary else fmt_num(ss.mean)))
        headline = correctness_scorer(summary.scorers)
        rate = summary.scorers[headline].pass_rate if headline else None
    return RunRow(
        run=run,
        state=state,
        agent=agent,
        model=model,
        dataset=(h.dataset.path or "") if h else "",
        sha=(h.dataset.sha256 or "") if h else "",
        started=h.created_at.strftime("%Y-%m-%d %H:%M:%S") if h else "",
        trials=summary.trials if summary else len(run.index.rows),
        failed=summary.failed if summary else 0,
        cost=summary.cost.total_usd if summary else None,
        headline=headline,
        headline_rate=rate,
        scores=scores,
        tags=run.all_tags,
        error=reason,
        matrix=matrix,
        cell=cell,
        cell_order=order,
    )


def run_rows(runs: list[RunState]) -> dict[str, list[RunRow]]:
    """The runs table grouped by dataset (its hash, else its path; broken runs under
    ``""``), newest first within a group; the cells of one matrix over one dataset form
    their own group (``matrix:NAME:<dataset key>``), in the matrix's cell order."""
    groups: dict[str, list[RunRow]] = {}
    for run in runs:
        r = _row(run)
        key = "" if r.state == "broken" else (r.sha or r.dataset or "(unknown dataset)")
        if key and r.matrix:
            key = f"matrix:{r.matrix}:{key}"
        groups.setdefault(key, []).append(r)
    for key, rows in groups.items():
        if key.startswith("matrix:"):
            rows.sort(key=lambda r: (r.cell_order, r.started))
        else:
            rows.sort(key=lambda r: r.started, reverse=True)
    return dict(sorted(groups.items(), key=lambda kv: (kv[0] == "", kv[0])))


def run_context(run: RunState, summary: Summary | None, reason: str | None) -> dict[str, Any]:
    """Everything the run page's template needs."""
    h = run.header
    names = list(summary.scorers) if summary else []
    return {
        "run": run,
        "label": label(run),
        "header": h,
        "s": summary,
        "problem": reason,
        "writing": run.writing(),
        "headline": correctness_scorer(names) if names else None,
        "scorer_names": names or list(run.index.scorers),
        "tags": run.all_tags,
        "causes": list(run.index.causes),
    }


def trials_page(
    run: RunState, *, failed: str, tag: str, cause: str, text: str, offset: int, limit: int
) -> dict[str, Any]:
    """One page of the filtered trials table (JSON for ``/api/trials``)."""
    with run.lock:
        idx = run.index.filter(failed=failed, tag=tag, cause=cause, text=text, tags=run.tags)
        rows = []
        for i in idx[offset : offset + limit]:
            r = run.index.rows[i]
            rows.append(
                {
                    "i": i,
                    "case_id": r.case_id,
                    "repeat": r.repeat,
                    "status": r.status,
                    "cause": r.cause,
                    "failed": list(r.failed),
                    "errors": list(r.errors),
                    "latency_s": r.latency_s,
                    "tags": list(run.tags.get(r.case_id, ())),
                    "output": r.preview,
                }
            )
        return {
            "total": len(run.index.rows),
            "matched": len(idx),
            "offset": offset,
            "rows": rows,
            "loading": run.loading,
        }


def status(run: RunState) -> dict[str, Any]:
    """A run's counts now (JSON for ``/api/status``), from the index only."""
    with run.lock:
        rows = run.index.rows
        return {
            "trials": len(rows),
            "answered": sum(1 for r in rows if r.answered),
            "failed": sum(1 for r in rows if r.cause is not None),
            "writing": run.writing(),
            "error": run.error,
            "finished": bool(run.header and run.header.finished_at),
            "loading": run.loading,
        }


def trial_of(run: RunState, i: int) -> tuple[TrialDetail | None, str | None]:
    """Trial ``i`` of the run: (detail, None), (None, why it cannot be shown), or (None,
    None) when there is no such trial."""
    with run.lock:
        if not 0 <= i < len(run.index.rows):
            return None, None
        try:
            rec, raw = run.index.record(i)
        except (InputError, OSError) as e:
            return None, str(e)
    case = run.case(rec.case_id)
    return trial_detail(i, rec, raw, case, run.tags.get(rec.case_id, ())), None


def case_trials(run: RunState, case_id: str) -> list[TrialDetail]:
    """Every trial of one case in the run (its repeats), in file order."""
    with run.lock:
        found = [i for i, r in enumerate(run.index.rows) if r.case_id == case_id]
    out = []
    for i in found:
        detail, _ = trial_of(run, i)
        if detail is not None:
            out.append(detail)
    return out


def gate_of(
    a: RunState,
    b: RunState,
    allow_dataset_change: bool,
    policies: Mapping[str, list[str]] | None = None,
) -> tuple[GateResult | None, str]:
    """The gate's verdict on baseline ``a`` and candidate ``b`` (the ``gate`` command's
    defaults: alpha 0.05, no allowed drop), or (None, the reason it cannot be given).

    ``policies`` are the gate's policy flags as the compare page's query gives them:
    ``require`` (``SCORER>=X``), ``max_drop`` (``SCORER=VALUE``), each repeatable, and
    ``no_new_failures`` (comma-separated scorers; empty: all)."""
    q = policies or {}
    try:
        nnf = q.get("no_new_failures")
        return (
            compare_runs(
                a.path,
                b.path,
                allow_dataset_change=allow_dataset_change,
                allow_underpowered=False,
                require=parse_require(q.get("require", [])),
                max_drop=_pairs(q.get("max_drop", [])),
                no_new_failures=None
                if nnf is None
                else [n.strip() for n in ",".join(nnf).split(",") if n.strip()],
            ),
            "",
        )
    except InputError as e:
        return None, str(e)


def policy_flags(policies: Mapping[str, list[str]]) -> list[str]:
    """The ``agenteval gate`` flags that give the same verdict as ``policies``."""
    out = [f"--require {v}" for v in policies.get("require", [])]
    out += [f"--max-drop {v}" for v in policies.get("max_drop", [])]
    if "no_new_failures" in policies:
        names = ",".join(policies["no_new_failures"]).strip(",")
        out.append(f"--no-new-failures {names}".rstrip())
    return out


def _pairs(items: list[str]) -> dict[str, float]:
    out: dict[str, float] = {}
    for item in items:
        name, sep, value = item.partition("=")
        try:
            if not sep or not name:
                raise ValueError
            out[name] = float(value)
        except ValueError:
            raise InputError(f"max_drop expects SCORER=VALUE, got {item!r}") from None
    return out
