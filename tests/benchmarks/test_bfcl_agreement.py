"""tool_call_match agrees with the Berkeley Function Calling Leaderboard's own checker.

The data and the AST checker come from ``bfcl-eval`` (installed with ``--no-deps`` in CI;
its checker needs none of its declared dependencies once the model registry it imports is
replaced by a stub). For a fixed-seed sample of every single-turn Python category we take
the ground truth as the model's output, plus perturbations of it (a wrong value, an extra
argument, an extra distinct call, the calls in reverse order, an argument the answer needs
dropped, a wrong type, a wrong name, a required argument dropped), import the questions
with ``agenteval import-dataset --from bfcl``, score the calls with ``agenteval score``
(real files, real subprocesses) and compare pass/fail with BFCL's ``ast_checker``
on the same output.
Irrelevance and relevance categories are compared with BFCL's rule for them (pass when
no call / some call was made). Known disagreements are listed in docs/scorers.md.

``AGENTEVAL_BFCL_SAMPLE=0`` scores every entry (slower); the default samples 60 per
category.
"""

from __future__ import annotations

import copy
import importlib.util
import json
import os
import random
import sys
import types
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from _support import agenteval

if importlib.util.find_spec("bfcl_eval") is None:
    if os.environ.get("CI"):
        raise RuntimeError("CI installs bfcl-eval (.ci/run): the BFCL agreement test must run")
    pytest.skip(
        "bfcl-eval is not installed (pip install --no-deps bfcl-eval)", allow_module_level=True
    )

SAMPLE = int(os.environ.get("AGENTEVAL_BFCL_SAMPLE", "60"))
SEED = 16
AST_CATEGORIES = (
    "simple_python",
    "multiple",
    "parallel",
    "parallel_multiple",
    "live_simple",
    "live_multiple",
    "live_parallel",
    "live_parallel_multiple",
)
RELEVANCE_CATEGORIES = ("irrelevance", "live_irrelevance", "live_relevance")
# (case id, variant) pairs where the two checkers legitimately differ; each is explained
# in docs/scorers.md ("Agreement with BFCL").
KNOWN: set[tuple[str, str]] = {
    # BFCL pairs parallel calls greedily: its first answer (Microsoft or Apple, January)
    # takes the Apple-January call, leaving its third answer (Apple, January) unmatched.
    # A maximum matching pairs all four calls; the reversed output is right.
    ("parallel_178", "reordered"),
}


class _AnyModel(dict[str, Any]):
    """The model registry the checker consults for names with dots: no model renames."""

    def __missing__(self, key: str) -> Any:
        return types.SimpleNamespace(underscore_to_dot=False)


def _checker() -> Callable[..., dict[str, Any]]:
    stub = types.ModuleType("bfcl_eval.constants.model_config")
    stub.MODEL_CONFIG_MAPPING = _AnyModel()  # type: ignore[attr-defined]
    sys.modules.setdefault("bfcl_eval.constants.model_config", stub)
    from bfcl_eval.eval_checker.ast_eval.ast_checker import ast_checker

    return ast_checker  # type: ignore[no-any-return]


def _data_dir() -> Path:
    spec = importlib.util.find_spec("bfcl_eval")
    assert spec is not None and spec.origin is not None
    return Path(spec.origin).parent / "data"


def _load(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def _sample(rows: list[dict[str, Any]], rng: random.Random) -> list[dict[str, Any]]:
    if SAMPLE <= 0 or len(rows) <= SAMPLE:
        return rows
    return rng.sample(rows, SAMPLE)


# --- model outputs: the ground truth and its perturbations -------------------------------


def _truth(gt: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The first allowed value of every argument; arguments allowed only as "" left out."""
    out = []
    for call in gt:
        ((name, answer),) = call.items()
        args = {}
        for arg, allowed in answer.items():
            values = [v for v in allowed if v != ""]
            if values:
                args[arg] = _first(values[0])
        out.append({name: args})
    return out


def _first(value: Any) -> Any:
    """A dict answer's members are allowed-value lists again: take the first of each."""
    if isinstance(value, dict):
        return {
            k: _first(next(x for x in v if x != ""))
            for k, v in value.items()
            if isinstance(v, list) and any(x != "" for x in v)
        }
    if isinstance(value, list):
        return [_first(v) for v in value]
    return value


def _wrong(value: Any) -> Any:
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + 7
    if isinstance(value, float):
        return value + 7.5
    if isinstance(value, str):
        return value + " zq"
    if isinstance(value, list):
        return [*value, value[0]] if value else ["zq"]
    if isinstance(value, dict):
        return {**value, "zq": 1}
    return "zq"


def _retyped(value: Any) -> Any:
    if isinstance(value, bool):
        return "yes"
    if isinstance(value, int | float):
        return f"{value} units"
    if isinstance(value, str):
        return 4242
    return "zq"


def _perturb(
    calls: list[dict[str, Any]], gt: list[dict[str, Any]], funcs: list[dict[str, Any]]
) -> dict[str, list[dict[str, Any]]]:
    """Variant name -> model output. Variants that do not apply to a record are left out."""
    out: dict[str, list[dict[str, Any]]] = {"truth": calls}
    if not calls:
        return out
    ((name, args),) = calls[0].items()
    ((_, answer),) = gt[0].items()
    schema = next((f for f in funcs if f["name"] == name), {}).get("parameters", {})
    required = set(schema.get("required") or [])
    if args:
        arg = sorted(args)[0]
        v = copy.deepcopy(calls)
        v[0][name][arg] = _wrong(args[arg])
        out["wrong_value"] = v
        v = copy.deepcopy(calls)
        v[0][name][arg] = _retyped(args[arg])
        out["wrong_type"] = v
        needed = [a for a in sorted(args) if "" not in answer[a] and a not in required]
        if needed:
            v = copy.deepcopy(calls)
            del v[0][name][needed[0]]
            out["dropped_answer_argument"] = v
        req = [a for a in sorted(args) if a in required]
        if req:
            v = copy.deepcopy(calls)
            del v[0][name][req[0]]
            out["dropped_required"] = v
        extra = copy.deepcopy(calls)
        extra.append({name: {**args, arg: _wrong(args[arg])}})
        out["extra_call"] = extra
    if len(calls) > 1:
        out["reordered"] = calls[::-1]
    v = copy.deepcopy(calls)
    v[0][name]["zq_extra"] = 1
    out["extra_argument"] = v
    v = copy.deepcopy(calls)
    v[0] = {name + "_zq": args}
    out["wrong_name"] = v
    return out


def _tool_calls(output: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{"name": n, "arguments": a} for call in output for n, a in call.items()]


# --- the comparison ----------------------------------------------------------------------


def _write_jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _ours(
    tmp: Path,
    questions: list[dict[str, Any]],
    answers: list[dict[str, Any]] | None,
    trials: list[dict[str, Any]],
) -> dict[tuple[str, int], bool]:
    """import-dataset + score through the CLI; (case id, repeat) -> passed."""
    q = _write_jsonl(tmp / "q.jsonl", questions)
    cmd = ["import-dataset", str(q), "--from", "bfcl", "--out", str(tmp / "cases.jsonl")]
    if answers is not None:
        cmd += ["--answers", str(_write_jsonl(tmp / "a.jsonl", answers))]
    p = agenteval(*cmd, cache=tmp)
    assert p.returncode == 0, p.stderr
    t = _write_jsonl(tmp / "trials.jsonl", trials)
    p = agenteval(
        "score",
        str(tmp / "cases.jsonl"),
        str(t),
        "--out",
        str(tmp / "run"),
        "--quiet",
        "--no-builtin-scorers",
        "--scorer",
        "agenteval.scorers:tool_call_match",
        cache=tmp,
    )
    assert p.returncode == 0, p.stderr
    got = {}
    for line in (tmp / "run" / "trials.jsonl").read_text(encoding="utf-8").splitlines():
        rec = json.loads(line)
        got[(rec["case_id"], rec["repeat"])] = rec["scores"]["tool_call_match"]["passed"]
    return got


def _table(verdicts: dict[str, list[tuple[str, str, bool, bool]]]) -> str:
    lines = []
    for cat, rows in verdicts.items():
        agree = sum(b == o for _, _, b, o in rows)
        lines.append(f"{cat}: {agree}/{len(rows)} agree")
        by_variant: dict[str, list[int]] = defaultdict(lambda: [0, 0])
        for _, variant, b, o in rows:
            by_variant[variant][0] += b == o
            by_variant[variant][1] += 1
        lines.extend(f"  {v}: {a}/{n}" for v, (a, n) in sorted(by_variant.items()))
    return "\n".join(lines)


def test_tool_call_match_agrees_with_bfcl_checker(tmp_path: Path) -> None:
    from bfcl_eval.constants.enums import Language

    ast_checker = _checker()
    data = _data_dir()
    rng = random.Random(SEED)
    questions: list[dict[str, Any]] = []
    answers: list[dict[str, Any]] = []
    trials: list[dict[str, Any]] = []
    rel_trials: list[dict[str, Any]] = []
    expected: dict[tuple[str, int], tuple[str, str, bool]] = {}
    for cat in AST_CATEGORIES:
        truth = {
            r["id"]: r["ground_truth"]
            for r in _load(data / "possible_answer" / f"BFCL_v4_{cat}.json")
        }
        for rec in _sample(_load(data / f"BFCL_v4_{cat}.json"), rng):
            gt = truth[rec["id"]]
            questions.append(rec)
            answers.append({"id": rec["id"], "ground_truth": gt})
            for repeat, (variant, output) in enumerate(
                _perturb(_truth(gt), gt, rec["function"]).items()
            ):
                bfcl = ast_checker(rec["function"], output, gt, Language.PYTHON, cat, "m")
                expected[(rec["id"], repeat)] = (cat, variant, bool(bfcl["valid"]))
                trials.append(
                    {
                        "case_id": rec["id"],
                        "repeat": repeat,
                        "output": "",
                        "tool_calls": _tool_calls(output),
                    }
                )
    rel_questions = []
    for cat in RELEVANCE_CATEGORIES:
        for rec in _sample(_load(data / f"BFCL_v4_{cat}.json"), rng):
            rel_questions.append(rec)
            name = rec["function"][0]["name"] if rec["function"] else "any_tool"
            for repeat, (variant, calls) in enumerate(
                (("no_call", []), ("some_call", [{"name": name, "arguments": {}}]))
            ):
                # BFCL's relevance rule: irrelevance passes without a call, relevance with one.
                wants_call = not cat.endswith("irrelevance")
                expected[(rec["id"], repeat)] = (cat, variant, bool(calls) == wants_call)
                rel_trials.append(
                    {"case_id": rec["id"], "repeat": repeat, "output": "", "tool_calls": calls}
                )
    (tmp_path / "ast").mkdir()
    (tmp_path / "rel").mkdir()
    ours = _ours(tmp_path / "ast", questions, answers, trials)
    ours.update(_ours(tmp_path / "rel", rel_questions, None, rel_trials))
    verdicts: dict[str, list[tuple[str, str, bool, bool]]] = defaultdict(list)
    disagreements = []
    for key, (cat, variant, bfcl_passed) in expected.items():
        passed = ours[key]
        verdicts[cat].append((key[0], variant, bfcl_passed, passed))
        if passed != bfcl_passed and (key[0], variant) not in KNOWN:
            disagreements.append(f"{key[0]} {variant}: bfcl {bfcl_passed}, agenteval {passed}")
    print(_table(verdicts))
    for cat, rows in verdicts.items():
        agree = sum(b == o for _, _, b, o in rows)
        assert agree >= 0.99 * len(rows), f"{cat}: {agree}/{len(rows)}\n" + "\n".join(disagreements)
    assert not disagreements, "\n".join(disagreements)
