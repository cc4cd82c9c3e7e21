"""Reading records from JSON files with errors that name the file, the line and the field.

Shared by datasets (:mod:`agenteval.dataset`) and trial files (:mod:`agenteval.dataset.trialfile`):
checking a path, decoding UTF-8 line by line, JSON Lines and JSON arrays with the line of
each record, rejecting values JSON does not have, and turning pydantic validation errors into
one precise :class:`~agenteval.errors.InputError`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from agenteval.errors import InputError

M = TypeVar("M", bound=BaseModel)


@dataclass(frozen=True, slots=True)
class Row:
    """One parsed record of a file, before validation.

    ``line`` is the 1-based line where the record starts (None when unknown);
    ``field_lines`` maps a top-level key to the line of its value, when the format knows it;
    ``json_clean`` is True when the reader already knows ``data`` holds only JSON values (no
    NaN or Infinity), which spares :func:`validate_row` a walk over it.
    """

    line: int | None
    data: Any
    field_lines: Mapping[str, int] | None = None
    json_clean: bool = False


def checked_file(path: str | Path, what: str = "dataset") -> Path:
    """Return ``path`` as a Path after checking it names an existing regular file.

    Raises InputError: not found, a directory, or not a regular file.
    """
    p = Path(path)
    if p.is_dir():
        raise InputError(f"is a directory; give a {what} file", file=p)
    if not p.exists():
        raise InputError("not found", file=p)
    if not p.is_file():
        raise InputError(f"is not a regular file; give a {what} file", file=p)
    return p


def _open_error(p: Path, e: OSError) -> InputError:
    return InputError(f"cannot be read ({e.strerror or e})", file=p)


def _decode(raw: bytes, p: Path, line: int) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise InputError(
            f"not valid UTF-8 (byte 0x{raw[e.start]:02x} at column {e.start + 1});"
            " save the file as UTF-8",
            file=p,
            line=line,
        ) from None


def read_text(p: Path) -> str:
    """The whole file as text (a UTF-8 byte-order mark dropped).

    InputError on invalid UTF-8 (with line and column) or a read error.
    """
    try:
        raw = p.read_bytes()
    except OSError as e:
        raise _open_error(p, e) from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        line = raw.count(b"\n", 0, e.start) + 1
        col = e.start - (raw.rfind(b"\n", 0, e.start) + 1) + 1
        raise InputError(
            f"not valid UTF-8 (byte 0x{raw[e.start]:02x} at column {col}); save the file as UTF-8",
            file=p,
            line=line,
        ) from None
    return text.removeprefix("\ufeff")


def iter_lines(p: Path) -> Iterator[tuple[int, str, bool]]:
    """Yield ``(line number, text, ends with a newline)`` for each line of a file.

    Lines are read and decoded one at a time (memory stays flat); a UTF-8 byte-order mark on
    the first line is dropped. InputError on invalid UTF-8 (with line and column) or a read
    error.
    """
    try:
        f = open(p, "rb")  # noqa: SIM115 - closed by the with below
    except OSError as e:
        raise _open_error(p, e) from None
    with f:
        lineno = 0
        try:
            for raw in f:
                lineno += 1
                text = _decode(raw, p, lineno)
                if lineno == 1:
                    text = text.removeprefix("\ufeff")
                yield lineno, text, raw.endswith(b"\n")
        except OSError as e:
            raise _open_error(p, e) from None


def json_error(e: ValueError | RecursionError, *, truncated: bool = False) -> str:
    """A one-line message for a JSON parse failure (with the column when known).

    ``truncated`` adds a hint that the line has no newline, as when a file was cut short.
    """
    if isinstance(e, RecursionError):
        return "not valid JSON: nested too deeply"
    if isinstance(e, json.JSONDecodeError):
        msg = f"not valid JSON: {e.msg} at column {e.colno}"
    else:
        msg = f"not valid JSON: {e}"
    if truncated:
        msg += " (the last line has no newline: was the file cut short?)"
    return msg


def _no_constants(text: str, start: int = 0, end: int | None = None) -> bool:
    """True when the JSON text cannot hold NaN or Infinity (which Python's parser accepts),
    nor a lone surrogate (``\\ud83d``: JSON escapes allow one, Unicode text does not)."""
    if text.find("NaN", start, end) >= 0 or text.find("Infinity", start, end) >= 0:
        return False
    if text.find("\\u", start, end) < 0:  # no escape at all: the common case
        return True
    stop = len(text) if end is None else end
    return _SURROGATE_ESCAPE.search(text, start, stop) is None


_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_SURROGATE = re.compile("[\ud800-\udfff]")


def _lone_surrogate(s: str) -> str | None:
    """A problem message when ``s`` holds a lone surrogate, else None."""
    if s.isascii():
        return None
    m = _SURROGATE.search(s)
    if m is None:
        return None
    code = f"\\u{ord(m.group()):04x}"
    return (
        f"holds a lone surrogate {code} at character {m.start() + 1} (half of a UTF-16 pair,"
        " e.g. a cut emoji): not valid text; fix or remove it"
    )


def iter_json_lines(path: str | Path) -> Iterator[Row]:
    """Parse a JSON Lines file one line at a time; blank lines are skipped.

    Each line must be one JSON value (not necessarily an object: callers check). Raises
    InputError for invalid UTF-8 or invalid JSON, naming the line and the JSON error's column.
    """
    p = Path(path)
    for lineno, text, ended in iter_lines(p):
        if not text.strip():
            continue
        try:
            data = json.loads(text)
        except (ValueError, RecursionError) as e:
            raise InputError(json_error(e, truncated=not ended), file=p, line=lineno) from None
        yield Row(lineno, data, json_clean=_no_constants(text))


_WS = re.compile(r"[ \t\n\r]*")


def _skip_ws(text: str, pos: int) -> int:
    m = _WS.match(text, pos)
    return m.end() if m else pos


def iter_json_array(path: str | Path, what: str = "cases") -> Iterator[Row]:
    """Parse a file holding one JSON array, yielding each element with its start line.

    The whole file is loaded into memory. Raises InputError when the file is empty, is not an
    array, or holds invalid JSON (with the line and column of the error).
    """
    p = Path(path)
    text = read_text(p)
    dec = json.JSONDecoder()
    pos = _skip_ws(text, 0)
    if pos == len(text):
        raise InputError(f"is empty; expected a JSON array of {what}", file=p)
    if text[pos] != "[":
        raise InputError(
            f"must hold a JSON array of {what} (for one JSON object per line, name it .jsonl)",
            file=p,
            line=text.count("\n", 0, pos) + 1,
        )
    line, counted = 1, 0
    pos = _skip_ws(text, pos + 1)
    if pos < len(text) and text[pos] == "]":
        pos += 1
    else:
        while True:
            line += text.count("\n", counted, pos)
            counted = pos
            try:
                data, end = dec.raw_decode(text, pos)
            except json.JSONDecodeError as e:
                raise InputError(json_error(e), file=p, line=e.lineno) from None
            except (ValueError, RecursionError) as e:
                raise InputError(json_error(e), file=p, line=line) from None
            yield Row(line, data, json_clean=_no_constants(text, pos, end))
            pos = _skip_ws(text, end)
            if pos < len(text) and text[pos] == ",":
                pos = _skip_ws(text, pos + 1)
                continue
            if pos < len(text) and text[pos] == "]":
                pos += 1
                break
            where = text.count("\n", 0, pos) + 1
            found = "end of file" if pos >= len(text) else repr(text[pos])
            raise InputError(
                f"not valid JSON: expected ',' or ']', found {found}", file=p, line=where
            )
    if _skip_ws(text, pos) != len(text):
        where = text.count("\n", 0, pos) + 1
        raise InputError("not valid JSON: extra data after the array", file=p, line=where)


def json_value_problem(value: Any, path: str = "") -> tuple[str, str] | None:
    """The first non-JSON part of ``value``: ``(dotted path, problem)``, or None if all is JSON.

    Rejected: NaN and ±Infinity, mapping keys that are not strings, text holding a lone
    surrogate (``"\\ud83d"``: valid JSON, not valid Unicode; such a file is refused rather
    than repaired, like a file that is not UTF-8), and any type other than dict, list, str,
    int, float, bool and None.
    """
    stack: list[tuple[str, Any]] = [(path, value)]
    while stack:
        where, v = stack.pop()
        if isinstance(v, str):
            bad = _lone_surrogate(v)
            if bad is not None:
                return where, bad
            continue
        if v is None or isinstance(v, bool | int):
            continue
        if isinstance(v, float):
            if v != v or v in (float("inf"), float("-inf")):
                return where, f"{v} is not allowed (JSON has no NaN or Infinity; use null)"
        elif isinstance(v, dict):
            for k, item in v.items():
                if not isinstance(k, str):
                    return where, f"key {k!r} must be a string"
                bad = _lone_surrogate(k)
                if bad is not None:
                    return where, f"a key {bad}"
                stack.append((f"{where}.{k}" if where else k, item))
        elif isinstance(v, list):
            stack.extend((f"{where}.{i}" if where else str(i), item) for i, item in enumerate(v))
        else:
            return where, f"a {type(v).__name__} value is not allowed (only JSON values)"
    return None


def _kind(v: Any) -> str:
    if isinstance(v, dict):
        return "an object"
    if isinstance(v, list):
        return "a list"
    if isinstance(v, str):
        return "a string"
    if isinstance(v, bool):
        return "a boolean"
    if isinstance(v, int | float):
        return "a number"
    return "null" if v is None else f"a {type(v).__name__}"


def _got(v: Any) -> str:
    if v is None or isinstance(v, bool):
        return json.dumps(v)
    if isinstance(v, int | float) or (isinstance(v, str) and len(v) <= 40):
        return repr(v)
    return _kind(v)


_OBJECT = re.compile(r"a valid dictionary(?: or instance of \w+)?")


def _child(node: Any, key: int | str) -> tuple[bool, Any]:
    if isinstance(node, dict) and key in node:
        return True, node[key]
    if isinstance(node, list) and isinstance(key, int) and 0 <= key < len(node):
        return True, node[key]
    return False, None


def validation_error(e: ValidationError, row: Row, file: Path) -> InputError:
    """Turn pydantic's first error into an InputError naming the file, line and field.

    The field is the error's location trimmed to the part that exists in the input (so that
    pydantic's union-branch names do not show); the line is the field's own line when known.
    """
    errors = e.errors(include_url=False)
    err = errors[0]
    parts: list[str] = []
    node: Any = row.data
    for key in err["loc"]:
        found, child = _child(node, key)
        if parts and not found and not (err["type"] == "missing" and key == err["loc"][-1]):
            break
        node = child
        parts.append(str(key))
    field = ".".join(parts) or None
    if err["type"] == "missing":
        msg = "is required"
    elif err["type"] in ("value_error", "assertion_error"):
        msg = err["msg"].removeprefix("Value error, ").removeprefix("Assertion failed, ")
    else:
        text = _OBJECT.sub("an object", err["msg"].replace("Input should be ", "must be ", 1))
        msg = f"{text} (got {_got(err.get('input'))})"
    others = {tuple(x["loc"][:1]) for x in errors[1:]} - {tuple(err["loc"][:1])}
    if others:
        msg += f" (and {len(others)} more field(s) with problems)"
    line = row.line
    if row.field_lines and parts and parts[0] in row.field_lines:
        line = row.field_lines[parts[0]]
    return InputError(msg, file=file, line=line, field=field)


def validate_row(model: type[M], row: Row, file: Path, what: str) -> M:
    """Validate one row as ``model``; every problem becomes an InputError with its place."""
    if not isinstance(row.data, dict):
        raise InputError(
            f"{what} must be an object, got {_kind(row.data)}", file=file, line=row.line
        )
    bad = None if row.json_clean else json_value_problem(row.data)
    if bad is not None:
        where, problem = bad
        top = where.split(".")[0]
        line = row.field_lines.get(top, row.line) if row.field_lines else row.line
        raise InputError(problem, file=file, line=line, field=where or None)
    try:
        return model.model_validate(row.data)
    except ValidationError as e:
        raise validation_error(e, row, file) from None
    except (TypeError, ValueError) as e:  # a validator that failed in an unexpected way
        raise InputError(f"invalid {what}: {e}", file=file, line=row.line) from None
