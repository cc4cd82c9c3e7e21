"""Reading a trace file span by span (:func:`read_file`), in memory bounded by one line.

The kind of file is told from its content, as :func:`read_file`
documents: text starting with ``{`` or ``[`` is JSON, anything else one serialized
protobuf ``ExportTraceServiceRequest``. A JSON document is OTLP (``resourceSpans``; an
OTLP logs export, ``resourceLogs``, holds log records), Jaeger JSON (the UI's export or
the query API's ``{"data": [{"traceID", "spans"}]}``, :mod:`agenteval.traces.jaeger`;
the v3 API's ``{"result": <OTLP>}``) or OpenInference span JSON. What has to be in memory at once:

- **JSON lines** (one OTLP request or OpenInference span per line, the Collector's file
  exporter): one line at a time. The file is read line by line; the first line that holds
  a JSON value decides: when nothing but blank lines follows, the file is one document,
  else lines.
- **One JSON document** spread over several lines (pretty-printed), and **protobuf**: the
  whole file (a protobuf request cannot be split without decoding it; one document is one
  JSON value).

The results are those of reading the whole file at once: a file that is not UTF-8 is
refused as such even when an earlier line is bad JSON (the rest of the file is checked
before a line's error is raised), lines are numbered as :meth:`str.splitlines` numbers
them, and the spans come in file order.
"""

from __future__ import annotations

import codecs
import json
from collections.abc import Iterator
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from agenteval.errors import InputError
from agenteval.traces.jsontext import loads
from agenteval.traces.records import BadSpan, SpanRecord

if TYPE_CHECKING:
    from agenteval.traces.logs import LogRecord

__all__ = ["read_file"]

_JSON_WS = frozenset(" \t\n\r")
_BLOCK = 1 << 20


def _not_utf8(p: Path) -> InputError:
    return InputError("not UTF-8 text", file=p)


def _rest_is_utf8(f: IO[bytes]) -> bool:
    """Whether the rest of ``f`` decodes as UTF-8 (read in blocks)."""
    dec = codecs.getincrementaldecoder("utf-8")()
    try:
        for block in iter(lambda: f.read(_BLOCK), b""):
            dec.decode(block)
        dec.decode(b"", final=True)
    except UnicodeDecodeError:
        return False
    return True


def _lines(f: IO[bytes], p: Path) -> Iterator[tuple[int, str]]:
    """``(number, line with its line break)`` as ``splitlines(keepends=True)`` of the
    whole decoded file gives them (a ``\\n`` never falls inside a UTF-8 sequence)."""
    n = 0
    for raw in f:
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            raise _not_utf8(p) from None
        for line in text.splitlines(keepends=True):
            n += 1
            yield n, line


_TOO_DEEP = "not JSON (nested too deeply)"


def _blank(line: str) -> bool:
    return not line.strip()


def _json_ws(line: str) -> bool:
    return _JSON_WS.issuperset(line)


def _content(line: str) -> str:
    """A line without its line break."""
    return line.splitlines()[0] if line else line


def _doc_spans(
    doc: Any, p: Path, line: int | None, logs: list[LogRecord] | None = None
) -> Iterator[SpanRecord]:
    # imported on first use, so that importing this module stays light
    from agenteval.traces.jaeger import is_jaeger, jaeger_spans
    from agenteval.traces.logs import _walk as walk_logs
    from agenteval.traces.logs import is_logs_doc
    from agenteval.traces.openinference_json import is_openinference, spans_of
    from agenteval.traces.otlp import _walk_json

    try:
        if is_logs_doc(doc):
            if logs is not None:
                logs.extend(walk_logs(doc))
        elif is_jaeger(doc):
            yield from jaeger_spans(doc)
        elif isinstance(doc, dict) and isinstance(doc.get("result"), dict):
            yield from _walk_json(doc["result"])  # Jaeger's query API v3: OTLP/JSON
        elif is_openinference(doc):
            yield from spans_of(doc)
        else:
            yield from _walk_json(doc)
    except BadSpan as e:
        raise InputError(e.message, file=p, line=line, field=e.path or None) from None
    except RecursionError:
        raise InputError(_TOO_DEEP, file=p, line=line) from None


def _whole_json(f: IO[bytes], p: Path) -> Any:
    """The whole file as one JSON value (None when it is not one)."""
    f.seek(0)
    try:
        text = f.read().decode("utf-8")
    except UnicodeDecodeError:
        raise _not_utf8(p) from None
    try:
        return loads(text)
    except ValueError:
        return None
    except RecursionError:  # deeper than the parser goes: no line of it would parse either
        raise InputError(_TOO_DEEP, file=p) from None


def _json_file(f: IO[bytes], p: Path, logs: list[LogRecord] | None) -> Iterator[SpanRecord]:
    lines = _lines(f, p)
    all_ws = True  # every character but the first value's is JSON whitespace
    first: tuple[int, Any] | None = None
    for n, line in lines:
        if _blank(line):
            all_ws = all_ws and _json_ws(line)
            continue
        if first is None:
            try:
                doc = loads(_content(line))
            except RecursionError:
                raise InputError(_TOO_DEEP, file=p, line=n) from None
            except ValueError as e:  # JSONDecodeError, or an integer over 4,300 digits
                # a pretty-printed document, else this line is bad
                whole = _whole_json(f, p)
                if whole is not None:
                    yield from _doc_spans(whole, p, None, logs)
                    return
                raise InputError(f"not JSON ({_why(e)})", file=p, line=n) from None
            first = (n, doc)
            all_ws = all_ws and _json_ws(line[len(_content(line)) :])
            continue
        # a second value: JSON lines (the first one included)
        yield from _checked(_doc_spans(first[1], p, first[0], logs), f, p)
        yield from _checked(_line_spans(n, line, p, logs), f, p)
        for m, more in lines:
            if not _blank(more):
                yield from _checked(_line_spans(m, more, p, logs), f, p)
        return
    if first is not None:  # one value: the whole file is that document, if only space is around
        where = None if all_ws else first[0]
        yield from _checked(_doc_spans(first[1], p, where, logs), f, p)


def _line_spans(
    n: int, line: str, p: Path, logs: list[LogRecord] | None = None
) -> Iterator[SpanRecord]:
    try:
        doc = loads(_content(line))
    except RecursionError:
        raise InputError(_TOO_DEEP, file=p, line=n) from None
    except ValueError as e:  # JSONDecodeError, or an integer over 4,300 digits
        raise InputError(f"not JSON ({_why(e)})", file=p, line=n) from None
    yield from _doc_spans(doc, p, n, logs)


def _why(e: ValueError) -> str:
    if isinstance(e, json.JSONDecodeError):
        return e.msg
    return "a number too long to read" if "digits" in str(e) else str(e)


def _checked(spans: Iterator[SpanRecord], f: IO[bytes], p: Path) -> Iterator[SpanRecord]:
    """``spans``; an error in them stands only when the rest of the file is UTF-8 (reading
    the whole file at once would have refused it as not UTF-8 first)."""
    try:
        yield from spans
    except InputError:
        if not _rest_is_utf8(f):
            raise _not_utf8(p) from None
        raise


def read_file(path: str | Path, logs: list[LogRecord] | None = None) -> Iterator[SpanRecord]:
    """Every span of a trace file (module docstring). An OTLP/JSON logs export
    (``resourceLogs``, a document or a line) holds no span: its records go to ``logs``
    when given (:mod:`agenteval.traces.logs`), else are skipped."""
    p = Path(path)
    try:
        f = open(p, "rb")  # noqa: SIM115 - closed below, the generator may stop early
    except OSError as e:
        raise InputError(f"cannot read ({e.strerror or e})", file=p) from None
    with f:
        try:
            head = f.read(4096)
            while head and not head.lstrip():
                head = f.read(4096)
            kind = head.lstrip()[:1]
            f.seek(0)
            if kind not in (b"{", b"["):
                # imported on first use, so that importing this module stays light
                from agenteval.traces.otlp import iter_protobuf

                yield from iter_protobuf(f.read(), str(p))
                return
        except OSError as e:
            raise InputError(f"cannot read ({e.strerror or e})", file=p) from None
        yield from _json_file(f, p, logs)
