"""What defines a run, so that ``--resume`` never mixes two different runs.

The fingerprint of a run is read from its header (``run.json``): the agent as described
there (secrets removed; a prompt template as its SHA-256), the judge (model, rubrics,
temperature, samples, structured output, max tokens), the scorers (each spec by name: the
order of ``--scorer`` options does not matter), ``repeats``, ``limit`` (a limit at or above
the number of cases is the same as none: it selects every case), the case selection
(``settings.selection``: ``--tag``, ``--where``, ``--cases``, ``--sample``/``--seed``/
``--stratify`` and how many cases it kept; a run without one has none), the benchmark name
and the dataset hash (of the cases, so a relative or absolute spelling of the dataset path is the
same dataset). Everything else may differ on resume because it changes how hard or how
fast the run is worked, not what it measures: ``--concurrency``, ``--timeout``,
``--request-timeout``, ``--max-retries``, ``--retry-base``, ``--prices``, ``--quiet`` and
the progress display, and the judge's concurrency, retries and cache folder.

:func:`fingerprint` gives the fields; :func:`digest` their SHA-256 (stored in ``run.json``
as ``fingerprint``); :func:`differences` the one-line explanation of a mismatch.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from agenteval.errors import FieldName, InputError
from agenteval.rundir import RunHeader

JUDGE_FREE = frozenset({"concurrency", "max_retries", "cache"})
"""Judge settings that may differ on resume (how the judge is driven, not what it rates)."""


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)


def _sha(text: str) -> str:
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def fingerprint(header: RunHeader) -> dict[str, Any]:
    """The fields that define the run, as plain JSON values (see the module docstring)."""
    agent = dict(header.agent or {})
    judge = agent.pop("judge", None) or header.settings.get("judge")
    if isinstance(agent.get("prompt_template"), str):
        agent["prompt_template"] = _sha(agent["prompt_template"])
    if isinstance(judge, dict):
        judge = {k: v for k, v in judge.items() if k not in JUDGE_FREE}
    settings = header.settings
    specs = header.model_dump(mode="json", include={"scorers"}).get("scorers") or []
    scorers = {
        str(s.get("name")): {k: v for k, v in s.items() if k != "name"}
        for s in sorted(specs, key=lambda s: str(s.get("name")))
    }
    limit = settings.get("limit")
    if isinstance(limit, int) and 0 < header.dataset.cases <= limit:
        limit = None  # every case either way
    fields = {
        "agent": agent,
        "judge": judge,
        "scorers": scorers,
        "repeats": settings.get("repeats", 1),
        "limit": limit,
        "benchmark": settings.get("benchmark"),
        "dataset": header.dataset.sha256,
    }
    if settings.get("selection") is not None:  # absent: the digest of older runs is kept
        fields["selection"] = settings["selection"]
    # as read back from run.json; the order above is kept (it is the order of a message)
    normalised: dict[str, Any] = json.loads(json.dumps(fields, ensure_ascii=False, default=str))
    return normalised


def digest(header: RunHeader) -> str:
    """SHA-256 of the canonical JSON of :func:`fingerprint`."""
    return hashlib.sha256(_canonical(fingerprint(header)).encode("utf-8")).hexdigest()


def _flat(value: Any, prefix: str, out: dict[str, Any]) -> None:
    if isinstance(value, dict) and value:
        for k in value:  # the order of fingerprint(): repeats before limit
            _flat(value[k], f"{prefix}.{k}" if prefix else str(k), out)
    else:
        out[prefix] = value


def _show(value: Any, width: int = 60) -> str:
    text = "none" if value is None else value if isinstance(value, str) else _canonical(value)
    return text if len(text) <= width else text[: width - 1] + "…"


def differences(old: RunHeader, new: RunHeader) -> list[tuple[str, str, str]]:
    """``(field, old value, new value)`` for every fingerprint field that differs, with
    nested fields dotted (``agent.model``, ``scorers.polite.threshold``; when scorers were
    added or dropped, ``scorers`` names those only on each side) and values shortened to
    60 characters."""
    a: dict[str, Any] = {}
    b: dict[str, Any] = {}
    fa, fb = fingerprint(old), fingerprint(new)
    sa, sb = fa["scorers"], fb["scorers"]
    if set(sa) != set(sb):  # scorers added or dropped: name those, not every spec
        fa["scorers"] = ",".join(n for n in sa if n not in sb) or None
        fb["scorers"] = ",".join(n for n in sb if n not in sa) or None
    _flat(fa, "", a)
    _flat(fb, "", b)
    keys = list(a) + [k for k in b if k not in a]
    return [(k, _show(a.get(k)), _show(b.get(k))) for k in keys if a.get(k) != b.get(k)]


def describe_differences(diffs: list[tuple[str, str, str]]) -> str:
    """``the run was made with repeats=3, limit=none; now repeats=1, limit=10``."""
    was = ", ".join(f"{k}={o}" for k, o, _ in diffs)
    now = ", ".join(f"{k}={n}" for k, _, n in diffs)
    return f"the run was made with {was}; now {now}"


def check_resumable(old: RunHeader, new: RunHeader, *, run_dir: Path, dataset: Path) -> None:
    """Refuse to resume the run ``old`` (its ``run.json``) as the run ``new`` would be made:
    InputError when it was made by another command, when the dataset changed (naming the
    dataset) or when anything else of the fingerprint differs (naming each difference)."""
    if old.kind != "run":
        raise InputError(
            (
                FieldName("resume"),
                " continues a run made by 'agenteval run'; this one was made"
                f" by 'agenteval {old.kind}'",
            ),
            file=run_dir,
        )
    diffs = differences(old, new)
    if [k for k, _, _ in diffs] == ["dataset"]:
        raise InputError(
            "the dataset changed since this run started; start a new run", file=dataset
        )
    if diffs:
        raise InputError((FieldName("resume"), f": {describe_differences(diffs)}"), file=run_dir)
