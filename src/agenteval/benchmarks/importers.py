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
Cases get ``tools`` (types mapped to JSON Schema, objects closed with
``additionalProperties: false``), ``expected_calls`` with BFCL's semantics (see
:func:`bfcl_expected_call`) and ``match_mode: unordered`` (BFCL checks parallel calls in
any order, and every category wants exactly the calls of its answer),
``expected_tools`` (every ground-truth call's name) and ``metadata.bfcl_ground_truth``
(the ground truth as given). ``irrelevance`` and ``live_irrelevance`` records (no ground
truth) expect no call; ``live_relevance`` records expect at least one call of any tool.
Only the first turn of a multi-turn question is imported.

Every imported record is validated as a :class:`~agenteval.cases.case.Case`; a problem is an
:class:`~agenteval.errors.InputError` naming the file, line and field.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from agenteval.cases.case import Case
from agenteval.errors import InputError

_BFCL_FIELDS = ("id", "question", "function", "ground_truth")
_BFCL_TYPES = {
    "dict": "object",
    "HashMap": "object",
    "float": "number",
    "double": "number",
    "tuple": "array",
    "Array": "array",
    "ArrayList": "array",
    "int": "integer",
    "long": "integer",
    "String": "string",
    "char": "string",
    "Boolean": "boolean",
}
_NEVER: dict[str, Any] = {"$any_of": []}  # matches no value (and is required)
# live_relevance: some call, of any tool, with any arguments.
_ANY_CALL: dict[str, Any] = {"name": {"$regex": ".+"}, "arguments": {}, "extra_arguments": True}


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


def bfcl_schema(schema: Any, *, closed: bool = False) -> Any:
    """A BFCL parameter schema as JSON Schema, recursively.

    Types: ``dict``/``HashMap``→``object``, ``float``/``double``→``number``,
    ``tuple``/``Array``/``ArrayList``→``array``, ``int``/``long``→``integer``,
    ``String``/``char``→``string``, ``Boolean``→``boolean``, ``any`` (or an empty type) →
    no type constraint. With ``closed``, every object schema that lists ``properties``
    gets ``additionalProperties: false`` (BFCL fails a call with an argument its answer
    does not name).
    """
    if isinstance(schema, list):
        return [bfcl_schema(s, closed=closed) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for k, v in schema.items():
        if k == "type" and isinstance(v, str):
            if v in ("any", ""):
                continue
            out[k] = _BFCL_TYPES.get(v, v)
        elif k in ("properties",) and isinstance(v, dict):
            out[k] = {name: bfcl_schema(sub, closed=closed) for name, sub in v.items()}
        else:
            out[k] = bfcl_schema(v, closed=closed)
    if closed and isinstance(out.get("properties"), dict):
        out.setdefault("additionalProperties", False)
    return out


def _question(q: Any) -> str | list[dict[str, Any]]:
    if isinstance(q, str):
        return q
    if isinstance(q, list) and q and isinstance(q[0], list):
        q = q[0]  # first turn
    if isinstance(q, list) and q and all(isinstance(m, dict) for m in q):
        return q
    raise ValueError("'question' must be a string, a list of messages or a list of turns")


def _bfcl_member(
    allowed: Any, where: str, *, depth: int = 0, required: bool = False, loose: bool = False
) -> Any:
    """An argument (depth 0) or a member of a dict argument (depth 1): a list of allowed
    values, ``""`` among them meaning "may be omitted"."""
    if not isinstance(allowed, list):
        if depth == 0:
            raise ValueError(f"{where}: allowed values must be a list")
        allowed = [allowed]  # a few answers give one member value bare
    options = [_bfcl_value(v, depth) for v in allowed if v != ""]
    optional = "" in allowed and not required
    if len(options) == 1 and not optional and not loose:
        return options[0]
    spec: dict[str, Any] = {"$any_of": options}
    if optional:
        spec["$optional"] = True
    if loose:
        spec["$types"] = "loose"
    return spec


def _bfcl_value(value: Any, depth: int) -> Any:
    """One allowed value. At depth 0 an object's members are lists of allowed values
    again (BFCL's dict and list-of-dict answers); deeper, BFCL compares whole values with
    ``==``, so objects and lists there are literals compared exactly."""
    if depth >= 1 and isinstance(value, dict | list):
        return {"$value": value, "$strings": "exact", "$types": "loose"}
    if isinstance(value, dict):
        members = {str(k): _bfcl_member(v, str(k), depth=1) for k, v in value.items()}
        if any(k.startswith("$") for k in members):
            return {"$object": members}
        return members
    if isinstance(value, list):
        return [_bfcl_value(v, depth) for v in value]
    return value


def bfcl_expected_call(name: str, answer: Any, tool: dict[str, Any] | None) -> dict[str, Any]:
    """One BFCL ground-truth call ``{arg: [allowed values]}`` as an ``expected_calls`` entry.

    BFCL's semantics: any listed value matches; ``""`` among them means the argument may be
    omitted (unless the tool's schema requires it); strings compare after BFCL's
    standardisation (``strings: bfcl``); an integer never equals a float (``types:
    strict``) except for ``float`` parameters, where ``10`` counts as ``10.0``; an
    argument the answer does not name fails the call (``extra_arguments: false``). Where
    the answer disagrees with the tool's schema, BFCL's checker decides by the schema, and
    so does the import: an answer argument the tool does not define must be left out (or,
    when the answer requires it, can never match), and an argument the schema requires but
    the answer does not name can never match (no output passes such a record in BFCL).
    """
    if not isinstance(answer, dict):
        raise ValueError(f"{name}: the answer must be an object of allowed-value lists")
    params = (tool or {}).get("parameters") or {}
    props = params.get("properties") or {}
    required = set(params.get("required") or [])
    args: dict[str, Any] = {}
    for arg, allowed in answer.items():
        if props and arg not in props:  # BFCL: an argument the tool lacks is unexpected
            if isinstance(allowed, list) and "" in allowed:
                continue  # so it must be left out
            args[str(arg)] = _NEVER
            continue
        loose = (props.get(arg) or {}).get("type") == "float"
        args[str(arg)] = _bfcl_member(
            allowed, f"{name}.{arg}", required=arg in required, loose=loose
        )
    for arg in sorted(required - set(answer)):  # required by the tool, unknown to the answer
        args[str(arg)] = _NEVER
    return {
        "name": name,
        "arguments": args,
        "extra_arguments": False,
        "strings": "bfcl",
        "types": "strict",
    }


def bfcl_category(case_id: str) -> str:
    """The BFCL category of an id: ``live_parallel_3-1-0`` → ``live_parallel``."""
    return re.sub(r"_[0-9][0-9-]*$", "", case_id)


def import_bfcl(path: str | Path, answers: str | Path | None = None) -> Iterator[dict[str, Any]]:
    """Yield our case records for a BFCL-style file (mapping in the module docstring).

    ``answers`` is the separate ground-truth file; without it every record must carry
    ``ground_truth`` inline. A record without ground truth is an InputError, except in the
    ``irrelevance``, ``live_irrelevance`` (no call expected) and ``live_relevance`` (some
    call expected) categories, which have none.
    """
    p = Path(path)
    truth: dict[str, Any] = {}
    if answers is not None:
        for _, rec in _records(Path(answers)):
            truth[str(rec.get("id"))] = rec.get("ground_truth")
    for line, rec in _records(p):
        cid = rec.get("id")
        category = bfcl_category(str(cid))
        gt = rec.get("ground_truth", truth.get(str(cid)))
        try:
            question = _question(rec.get("question"))
        except ValueError as e:
            raise InputError(str(e), file=p, line=line, field="question") from None
        functions = rec.get("function") or []
        if isinstance(functions, dict):
            functions = [functions]
        tools = [bfcl_schema(f, closed=True) for f in functions]
        extra = {k: v for k, v in rec.items() if k not in _BFCL_FIELDS}
        out: dict[str, Any] = {"id": cid, "input": question, "tools": tools}
        if gt is None and category.endswith("irrelevance"):
            out.update(expected_calls=[], match_mode="unordered", expected_tools=[])
            out["max_tool_calls"] = 0
        elif gt is None and category.endswith("relevance"):
            out.update(expected_calls=[_ANY_CALL], match_mode="subset")
        else:
            if not isinstance(gt, list) or not all(isinstance(c, dict) for c in gt):
                raise InputError("no ground truth (a list of calls)", file=p, line=line, field="id")
            by_name = {f.get("name"): f for f in functions if isinstance(f, dict)}
            try:
                calls = [
                    bfcl_expected_call(name, answer, by_name.get(name))
                    for call in gt
                    for name, answer in call.items()
                ]
            except ValueError as e:
                raise InputError(str(e), file=p, line=line, field="ground_truth") from None
            names = [c["name"] for c in calls]
            out.update(
                expected_calls=calls,
                match_mode="unordered",
                expected_tools=names,
                max_tool_calls=len(names),
            )
            extra["bfcl_ground_truth"] = gt
        out.update(extra)
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
