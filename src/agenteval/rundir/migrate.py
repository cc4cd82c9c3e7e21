"""Reading runs written by older agenteval versions (format 1, agenteval 0.1).

Format 1 differs from format 2 in two places, both migrated when a run is read (the files
are never rewritten):

- a stored score has no ``status``: :func:`agenteval.scoring.score.legacy_status` gives it the
  one 0.1 meant (``error`` set → error; value None and reason starting ``inconclusive`` →
  inconclusive; value None → not applicable; else passed/failed by the threshold);
- ``run.json``'s ``scorers`` is a list of names: :func:`migrate_header` turns each into a
  spec with 0.1's defaults (:data:`V01_BUILTINS`; any other name: pass/fail, threshold
  1.0, not a safety scorer, ``ref`` None, or ``judge:<rubric>`` for a judge rubric named in
  the header's judge settings).

Both migrations are idempotent: migrating migrated data changes nothing.
"""

from __future__ import annotations

from typing import Any

from agenteval.scoring.spec import BUILTIN_REF, JUDGE_REF

V01_BUILTINS: dict[str, dict[str, Any]] = {
    "exact_match": {"kind": "pass/fail", "threshold": 1.0},
    "tool_selection": {"kind": "pass/fail", "threshold": 1.0},
    "tool_arguments_valid": {"kind": "pass/fail", "threshold": 1.0},
    "tool_execution": {"kind": "pass/fail", "threshold": 1.0},
    "trajectory_order": {"kind": "pass/fail", "threshold": 1.0},
    "step_efficiency": {"kind": "graded", "threshold": 0.5},
    "redundant_calls": {"kind": "pass/fail", "threshold": 1.0},
    "tool_faithfulness": {"kind": "graded", "threshold": 1.0},
    "retrieval_recall": {"kind": "graded", "threshold": 1.0},
    "tool_grounding": {"kind": "graded", "threshold": 1.0},
    "avoids_forbidden_text": {"kind": "pass/fail", "threshold": 1.0, "safety": True},
    "pii_leakage": {"kind": "pass/fail", "threshold": 1.0, "safety": True},
}
"""The built-in scorers of agenteval 0.1 with their kind, threshold and safety flag."""

_JUDGE_SECRETS = ("rubrics", "api_key")


def migrate_header(data: Any) -> Any:
    """``run.json`` data with every scorer name replaced by a spec (see the module doc).

    Anything that is not a dict, and scorer entries that are not strings, are left for
    validation to report.
    """
    if not isinstance(data, dict):
        return data
    scorers = data.get("scorers")
    if not isinstance(scorers, list) or not any(isinstance(s, str) for s in scorers):
        return data
    rubrics = _judge_rubrics(data)
    return {**data, "scorers": [_spec(s, rubrics) if isinstance(s, str) else s for s in scorers]}


def _judge_rubrics(data: dict[str, Any]) -> tuple[dict[str, dict[str, Any]], dict[str, Any]]:
    agent = data.get("agent")
    judge = agent.get("judge") if isinstance(agent, dict) else None
    if not isinstance(judge, dict):
        return {}, {}
    settings = {k: v for k, v in judge.items() if k not in _JUDGE_SECRETS}
    found = {}
    for r in judge.get("rubrics") or []:
        if isinstance(r, dict) and isinstance(r.get("name"), str):
            found[f"judge_{r['name']}"] = r
    return found, settings


def _spec(name: str, rubrics: tuple[dict[str, dict[str, Any]], dict[str, Any]]) -> dict[str, Any]:
    builtin = V01_BUILTINS.get(name)
    if builtin is not None:
        return {"name": name, "safety": False, **builtin, "ref": BUILTIN_REF + name, "settings": {}}
    by_name, settings = rubrics
    rubric = by_name.get(name)
    if rubric is not None:
        source = rubric.get("source")
        where = rubric["name"] if source in (None, "builtin", "python") else source
        threshold = rubric.get("threshold", 1.0)
        return {
            "name": name,
            "kind": "pass/fail" if rubric.get("scale", "binary") == "binary" else "graded",
            "threshold": threshold if isinstance(threshold, int | float) else 1.0,
            "safety": False,
            "ref": JUDGE_REF + str(where),
            "settings": {**settings, "scale": rubric.get("scale", "binary")},
        }
    return {"name": name, "kind": "pass/fail", "threshold": 1.0, "safety": False, "ref": None}
