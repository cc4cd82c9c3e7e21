"""OTLP's value encodings, shared by the trace and the log decoders.

OTLP/JSON: ids as hex or base64 (:func:`decode_id`), times as nanoseconds in an integer or
a decimal string (:func:`nanos`), attribute values as ``AnyValue`` objects
(:func:`any_value`, :func:`attributes`; strings cleaned of what cannot be shown), keys in
lowerCamelCase or snake_case (:func:`pick`). A malformed value raises
:class:`~agenteval.traces.records.BadSpan` with its field path. Protobuf: the same values
from the generated messages (:func:`pb_value`, :func:`pb_attrs`, :func:`pb_id`). A request
body is JSON by its content type (:func:`is_json`, :func:`parse_json`), else protobuf.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Mapping
from typing import Any

from agenteval._util.nanos import parse_ns
from agenteval._util.untrusted import MAX_DEPTH, clean_text
from agenteval.errors import InputError
from agenteval.traces.records import BadSpan

__all__ = [
    "any_value",
    "attributes",
    "decode_id",
    "is_json",
    "nanos",
    "parse_json",
    "pb_attrs",
    "pb_id",
    "pb_value",
    "pick",
]

_HEX = frozenset("0123456789abcdefABCDEF")


def pick(d: Mapping[str, Any], camel: str, snake: str) -> Any:
    v = d.get(camel)
    return d.get(snake) if v is None else v


def decode_id(value: Any, size: int, path: str) -> str | None:
    """An id as lowercase hex of ``size`` bytes (hex or base64 input); missing, "" or all
    zeros → None (a span without its ids is skipped and counted, not refused)."""
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise BadSpan(path, "must be a string")
    if len(value) == 2 * size and _HEX.issuperset(value):
        raw = bytes.fromhex(value)
    else:
        try:
            raw = base64.b64decode(value, validate=True)
        except (binascii.Error, ValueError):
            raise BadSpan(path, "not a hex or base64 id") from None
        if len(raw) != size:
            raise BadSpan(path, f"a {size}-byte id is expected, got {len(raw)} bytes") from None
    if not any(raw):
        return None
    return raw.hex()


def nanos(value: Any, path: str) -> int | None:
    if value is None or value == "":
        return None
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise BadSpan(path, "must be an integer (nanoseconds)")
    try:
        return parse_ns(value) or None
    except ValueError as e:
        raise BadSpan(path, str(e)) from None


def any_value(v: Any, path: str, depth: int = 0) -> Any:
    if not isinstance(v, Mapping):
        raise BadSpan(path, "must be an AnyValue object")
    if depth > MAX_DEPTH:
        raise BadSpan(path, f"nested deeper than {MAX_DEPTH} levels")
    for key, conv in _ANY.items():
        alt = _SNAKE_ANY[key]
        if key in v or alt in v:
            return conv(v[key] if key in v else v[alt], path, depth)
    return None  # an empty AnyValue


def _int_value(x: Any, path: str, depth: int = 0) -> int:
    if isinstance(x, bool) or not isinstance(x, int | str):
        raise BadSpan(path, "intValue must be an integer")
    try:
        return int(x)
    except ValueError:
        raise BadSpan(path, "intValue must be an integer") from None


def _double_value(x: Any, path: str, depth: int = 0) -> float:
    if isinstance(x, bool) or not isinstance(x, int | float | str):
        raise BadSpan(path, "doubleValue must be a number")
    try:
        return float(x)
    except (ValueError, OverflowError):  # an integer past 1e308 has no float
        raise BadSpan(path, "doubleValue must be a number") from None


def _array_value(x: Any, path: str, depth: int = 0) -> list[Any]:
    values = x.get("values", []) if isinstance(x, Mapping) else None
    if not isinstance(values, list):
        raise BadSpan(path, "arrayValue.values must be a list")
    return [any_value(item, f"{path}[{i}]", depth + 1) for i, item in enumerate(values)]


def _kvlist_value(x: Any, path: str, depth: int = 0) -> dict[str, Any]:
    values = x.get("values", []) if isinstance(x, Mapping) else None
    if not isinstance(values, list):
        raise BadSpan(path, "kvlistValue.values must be a list")
    return attributes(values, path, depth + 1)


def _bytes_value(x: Any, path: str, depth: int = 0) -> bytes:
    try:
        return base64.b64decode(x, validate=True)
    except (binascii.Error, ValueError, TypeError):
        raise BadSpan(path, "bytesValue must be base64") from None


def _string_value(x: Any, path: str, depth: int = 0) -> str:
    if not isinstance(x, str):
        raise BadSpan(path, "stringValue must be a string")
    return clean_text(x)


def _bool_value(x: Any, path: str, depth: int = 0) -> bool:
    if not isinstance(x, bool):
        raise BadSpan(path, "boolValue must be true or false")
    return x


_ANY: dict[str, Any] = {
    "stringValue": _string_value,
    "boolValue": _bool_value,
    "intValue": _int_value,
    "doubleValue": _double_value,
    "arrayValue": _array_value,
    "kvlistValue": _kvlist_value,
    "bytesValue": _bytes_value,
}
_SNAKE_ANY = {k: k[0 : k.index("V")] + "_value" for k in _ANY}


def attributes(items: Any, path: str, depth: int = 0) -> dict[str, Any]:
    if items is None:
        return {}
    if not isinstance(items, list):
        raise BadSpan(path, "must be a list of {key, value}")
    out: dict[str, Any] = {}
    for i, kv in enumerate(items):
        p = f"{path}[{i}]"
        if not isinstance(kv, Mapping) or not isinstance(kv.get("key"), str):
            raise BadSpan(p, "must be {key, value} with a string key")
        out[clean_text(kv["key"])] = any_value(kv.get("value", {}), f"{p}.value", depth)
    return out


def is_json(content_type: str) -> bool:
    """Whether an OTLP/HTTP body of this content type is JSON (else it is protobuf)."""
    return content_type.split(";", 1)[0].strip().lower() == "application/json"


def parse_json(body: bytes, where: str) -> Any:
    """The JSON document of a request body; InputError ``not JSON (...)`` naming ``where``."""
    try:
        return json.loads(body)
    except (ValueError, UnicodeDecodeError) as e:
        raise InputError(f"not JSON ({e})", file=where) from None
    except RecursionError:
        raise InputError("not JSON (nested too deeply)", file=where) from None


def pb_value(v: Any) -> Any:
    kind = v.WhichOneof("value")
    if kind == "string_value":  # the common kinds first: one check each
        return v.string_value
    if kind == "int_value":
        return v.int_value
    if kind is None:
        return None
    x = getattr(v, kind)
    if kind == "array_value":
        return [pb_value(i) for i in x.values]
    if kind == "kvlist_value":
        return {kv.key: pb_value(kv.value) for kv in x.values}
    return x


def pb_attrs(items: Any) -> dict[str, Any]:
    return {kv.key: pb_value(kv.value) for kv in items}


def pb_id(value: bytes) -> str:
    """A protobuf id as hex; "" when missing or all zeros."""
    return value.hex() if value.strip(b"\0") else ""
