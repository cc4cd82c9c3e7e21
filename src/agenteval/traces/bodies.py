"""Compressed HTTP request bodies, decoded within a bound (the OTLP receiver's).

:func:`decode_content` undoes one ``Content-Encoding``: none/``identity``, ``gzip``
(``x-gzip``; concatenated members too), ``deflate`` (zlib-wrapped, or raw as some clients
send it) and ``zstd`` (the Collector's choice; needs the ``zstandard`` package, in the
``otel`` extra). Never more than ``limit + 1`` bytes are inflated, so a decompression bomb
costs ``limit`` bytes of memory at most. Refusals are :class:`BodyError` with the HTTP
status to answer: 415 for an encoding not read (``br``...), 413 over ``limit``, 400 for
bytes that do not decode.
"""

from __future__ import annotations

import io
import zlib

__all__ = ["BodyError", "decode_content", "encodings"]


class BodyError(Exception):
    """A body that is refused: ``status`` (400, 413 or 415) and a one-line reason."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def _zstd() -> object | None:
    try:
        import zstandard
    except ImportError:
        return None
    return zstandard


def encodings() -> tuple[str, ...]:
    """The content encodings read here (zstd only with ``zstandard`` installed)."""
    base = ("gzip", "deflate")
    return (*base, "zstd") if _zstd() is not None else base


def _too_big(limit: int) -> BodyError:
    return BodyError(413, f"body is over {limit} bytes once decompressed")


def _inflate(body: bytes, wbits: int, limit: int) -> bytes:
    out = bytearray()
    data = body
    while data:
        d = zlib.decompressobj(wbits=wbits)
        out += d.decompress(data, limit + 1 - len(out))
        if len(out) > limit:
            raise _too_big(limit)
        if not d.eof:
            if d.unconsumed_tail:  # stopped at the bound with input left
                raise _too_big(limit)
            raise zlib.error("the compressed body is cut short")
        data = d.unused_data
    return bytes(out)


def _unzstd(body: bytes, limit: int) -> bytes:
    import zstandard

    out = bytearray()
    try:
        with zstandard.ZstdDecompressor().stream_reader(
            io.BytesIO(body), read_across_frames=True
        ) as r:
            while chunk := r.read(min(1 << 20, limit + 1 - len(out))):
                out += chunk
                if len(out) > limit:
                    raise _too_big(limit)
    except zstandard.ZstdError as e:
        raise BodyError(400, f"the zstd body does not decode ({e})") from None
    return bytes(out)


def decode_content(body: bytes, encoding: str, limit: int) -> bytes:
    """``body`` with its ``Content-Encoding`` undone (module docstring)."""
    enc = encoding.strip().lower()
    if enc in ("", "identity"):
        if len(body) > limit:
            raise _too_big(limit)
        return body
    try:
        if enc in ("gzip", "x-gzip"):
            return _inflate(body, 31, limit)
        if enc == "deflate":
            try:
                return _inflate(body, 15, limit)
            except zlib.error:
                return _inflate(body, -15, limit)
    except zlib.error as e:
        raise BodyError(400, f"the {enc} body does not decode ({e})") from None
    if enc == "zstd" and _zstd() is not None:
        return _unzstd(body, limit)
    raise BodyError(
        415,
        f"content encoding {enc!r} is not read: send {', '.join(encodings())} or none",
    )
