"""Import case files written for other evaluation tools, where the mapping is clear.

**DataRobot-style** case files (JSONL or a JSON array) with fields ``id``, ``input``,
``ideal_response``, ``canary``, ``context``, ``notes``, ``expected_behavior``:

- ``ideal_response`` becomes ``expected``;
- ``canary`` becomes ``must_not_contain`` for an injection suite (there a planted value
  must *not* appear) and stays ``canary`` otherwise (there it must appear);
- ``context`` and ``notes`` keep their meaning; ``expected_behavior`` and any other field
  are kept (they land in the case's metadata).

**Berkeley Function Calling Leaderboard-style** files: one JSON object per line with
``id``, ``question`` (a list of turns, each a list of chat messages, or one list of
messages, or a string) and ``function`` (definitions whose parameter types use ``dict``,
``float``, ``tuple``, ``any``), plus ground truth either inline (``ground_truth``) or in a
separate answers file keyed by ``id``: a list of ``{function_name: {arg: [allowed values]}}``.
Cases get ``tools`` (types mapped to JSON Schema), ``expected_tools`` (every ground-truth
call's name) and ``metadata.expected_calls`` (the ground truth as given). Only the first
turn of a multi-turn question is imported.

Every imported record is validated as a :class:`~agenteval.case.Case`; a problem is an
:class:`~agenteval.errors.InputError` naming the file, line and field.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from agenteval.case import Case
from agenteval.errors import InputError

_BFCL_FIELDS = ("id", "question", "function", "ground_truth")
_BFCL_TYPES = {"dict": "object", "float": "number", "tuple": "array", "int": "integer"}


def _records(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise InputError(f"cannot be read ({e})", file=path) from None
    if text.lstrip().startswith("["):
        try:
            data = json.loads(text)
        except ValueError as e:
            raise InputError(f"not valid JSON ({e})", file=path) from None
        for i, rec in enumerate(data, 1):
            if not isinstance(rec, dict):
                raise InputError("each record must be an object", file=path, line=i)
            yield i, rec
        return
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except ValueError as e:
            raise InputError(f"not valid JSON ({e})", file=path, line=n) from None
        if not isinstance(rec, dict):
            raise InputError("each line must be a JSON object", file=path, line=n)
        yield n, rec


def _validated(rec: dict[str, Any], path: Path, line: int) -> dict[str, Any]:
    try:
        Case.model_validate(rec)
    except ValidationError as e:
        err = e.errors()[0]
        field = ".".join(str(x) for x in err["loc"]) or None
        raise InputError(err["msg"], file=path, line=line, field=field) from None
    return rec


def import_datarobot(
    path: str | Path, *, injection: bool | None = None
) -> Iterator[dict[str, Any]]:
    """Yield our case records for a DataRobot-style case file (mapping in module docstring).

    ``injection`` says whether the file is a prompt-injection suite (``canary`` →
    ``must_not_contain``); None guesses it from the file name (it contains ``injection``).
    """
    p = Path(path)
    is_injection = "injection" in p.name.lower() if injection is None else injection
    for line, rec in _records(p):
        out = {k: v for k, v in rec.items() if k not in ("ideal_response", "canary")}
        if rec.get("ideal_response") is not None:
            out["expected"] = rec["ideal_response"]
        canary = rec.get("canary")
        if canary:
            key = "must_not_contain" if is_injection else "canary"
            out[key] = [*(out.get(key) or []), *(canary if isinstance(canary, list) else [canary])]
        yield _validated(out, p, line)


def bfcl_schema(schema: Any) -> Any:
    """A BFCL parameter schema as JSON Schema: ``dict``→``object``, ``float``→``number``,
    ``tuple``→``array``, ``int``→``integer``, ``any`` → no type constraint; recursively."""
    if isinstance(schema, list):
        return [bfcl_schema(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for k, v in schema.items():
        if k == "type" and isinstance(v, str):
            if v == "any":
                continue
            out[k] = _BFCL_TYPES.get(v, v)
        elif k in ("properties",) and isinstance(v, dict):
            out[k] = {name: bfcl_schema(sub) for name, sub in v.items()}
        else:
            out[k] = bfcl_schema(v)
    return out


def _question(q: Any) -> str | list[dict[str, Any]]:
    if isinstance(q, str):
        return q
    if isinstance(q, list) and q and isinstance(q[0], list):
        q = q[0]  # first turn
    if isinstance(q, list) and q and all(isinstance(m, dict) for m in q):
        return q
    raise ValueError("'question' must be a string, a list of messages or a list of turns")


def import_bfcl(path: str | Path, answers: str | Path | None = None) -> Iterator[dict[str, Any]]:
    """Yield our case records for a BFCL-style file (mapping in the module docstring).

    ``answers`` is the separate ground-truth file; without it every record must carry
    ``ground_truth`` inline. A record without ground truth is an InputError.
    """
    p = Path(path)
    truth: dict[str, Any] = {}
    if answers is not None:
        for _, rec in _records(Path(answers)):
            truth[str(rec.get("id"))] = rec.get("ground_truth")
    for line, rec in _records(p):
        cid = rec.get("id")
        gt = rec.get("ground_truth", truth.get(str(cid)))
        if not isinstance(gt, list) or not all(isinstance(c, dict) for c in gt):
            raise InputError("no ground truth (a list of calls)", file=p, line=line, field="id")
        try:
            question = _question(rec.get("question"))
        except ValueError as e:
            raise InputError(str(e), file=p, line=line, field="question") from None
        functions = rec.get("function") or []
        if isinstance(functions, dict):
            functions = [functions]
        tools = [bfcl_schema(f) for f in functions]
        names = [name for call in gt for name in call]
        extra = {
            k: v for k, v in rec.items() if k not in ("id", "question", "function", "ground_truth")
        }
        out: dict[str, Any] = {
            "id": cid,
            "input": question,
            "tools": tools,
            "expected_tools": names,
            "max_tool_calls": len(names),
            "expected_calls": gt,
            **extra,
        }
        yield _validated(out, p, line)


def write_jsonl(records: Iterator[dict[str, Any]], out: str | Path) -> int:
    """Write records as JSONL (UTF-8, one per line); return how many were written.

    The file is written aside and renamed into place, so a failed import leaves no
    half-written file behind.
    """
    dest = Path(out)
    tmp = dest.with_name(dest.name + ".part")
    n = 0
    try:
        with tmp.open("w", encoding="utf-8") as f:
            for rec in records:
                f.write(json.dumps(rec, ensure_ascii=False) + "\n")
                n += 1
        tmp.replace(dest)
    finally:
        tmp.unlink(missing_ok=True)
    return n
