"""The judge cache: same model + rendered prompt + settings → the stored reply, no new call.

One JSON file per key, under ``DIR/<first two hex digits>/<key>.json``. A file is written
to a temporary name in the same directory, flushed to disk and renamed over the final name
(``os.replace`` is atomic), so concurrent writers and crashes can leave a stray temporary
file but never a half-written entry; an unreadable entry is treated as a miss and
overwritten.

A prompt is asked once at a time: before calling, a judge *claims* its key (an exclusive
``flock`` on ``<key>.claim``, held during the call); a judge that finds the key claimed
waits for the entry (then a cache hit) or for the claim to go (the call failed: it claims
and calls itself). So repeats with one prompt, on one process or on ``--processes``
workers, pay for one call. The kernel drops the lock of a process that dies, so a claim
file left behind is never waited for; a cache directory that cannot be written (or a
system without ``flock``) is used without claims.

The key is the SHA-256 of a canonical JSON document holding the model name, the rendered
messages and every setting that changes the reply (temperature, sample index, response
format, ...). The endpoint URL and the API key are not part of it: the model name
identifies the judge (use ``--no-judge-cache`` after swapping the weights behind a name).

What is stored is the judge's *raw reply* and its token usage, not the parsed grade, so a
cached reply is read with the current parser. Failed calls are never stored.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agenteval.trials.trial import Usage

try:
    import fcntl
except ImportError:  # Windows: no claims
    fcntl = None  # type: ignore[assignment]

CACHE_FORMAT = 1


def default_cache_dir() -> Path:
    """``$XDG_CACHE_HOME/agenteval/judge``, or ``~/.cache/agenteval/judge``."""
    base = os.environ.get("XDG_CACHE_HOME") or ""
    root = Path(base) if base.strip() else Path.home() / ".cache"
    return root / "agenteval" / "judge"


def cache_key(payload: dict[str, Any]) -> str:
    """The hex SHA-256 of ``payload`` serialised canonically (sorted keys, no spaces)."""
    doc = {"cache_format": CACHE_FORMAT, **payload}
    data = json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(data.encode("utf-8", errors="surrogatepass")).hexdigest()


@dataclass(frozen=True, slots=True)
class CachedReply:
    """A judge reply as stored: its text, the API's refusal (if any) and token usage."""

    content: str | None
    refusal: str | None = None
    model: str | None = None
    input_tokens: int = 0
    output_tokens: int = 0
    finish_reason: str | None = None
    stored_at: float | None = field(default=None, compare=False)
    """When the entry was stored (the file's modification time; not part of the entry)."""

    def usage(self) -> list[Usage]:
        """The reply's token usage as the call recorded it (none when it reported none)."""
        if not (self.input_tokens or self.output_tokens):
            return []
        return [
            Usage(
                model=self.model, input_tokens=self.input_tokens, output_tokens=self.output_tokens
            )
        ]

    def to_dict(self) -> dict[str, Any]:
        """The stored JSON form."""
        return {
            "cache_format": CACHE_FORMAT,
            "content": self.content,
            "refusal": self.refusal,
            "model": self.model,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "finish_reason": self.finish_reason,
        }

    @classmethod
    def from_dict(cls, d: Any) -> CachedReply | None:
        """Read the stored form back; None when it is not a valid entry."""
        if not isinstance(d, dict) or d.get("cache_format") != CACHE_FORMAT:
            return None
        content, refusal, model = d.get("content"), d.get("refusal"), d.get("model")
        tin, tout = d.get("input_tokens", 0), d.get("output_tokens", 0)
        if not all(isinstance(v, str | None) for v in (content, refusal, model)):
            return None
        if not all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in (tin, tout)):
            return None
        finish = d.get("finish_reason")
        return cls(content, refusal, model, tin, tout, finish if isinstance(finish, str) else None)


class JudgeCache:
    """A directory of cached judge replies (see the module docstring)."""

    def __init__(self, directory: str | Path) -> None:
        self.directory = Path(directory)
        self._claims: dict[str, int] = {}  # key -> the locked claim file's descriptor

    def _path(self, key: str) -> Path:
        if len(key) < 3 or not all(c in "0123456789abcdef" for c in key):
            raise ValueError(f"not a cache key: {key!r}")
        return self.directory / key[:2] / f"{key}.json"

    def get(self, key: str) -> CachedReply | None:
        """The stored reply for ``key``, or None (missing, unreadable or invalid entry)."""
        try:
            with open(self._path(key), "rb") as f:
                raw = f.read()
                stored_at = os.fstat(f.fileno()).st_mtime
            reply = CachedReply.from_dict(json.loads(raw))
        except (OSError, ValueError):
            return None
        return None if reply is None else dataclasses.replace(reply, stored_at=stored_at)

    def claim(self, key: str) -> bool:
        """Claim ``key`` for one call: True when this claim now holds it (or claims cannot
        be taken here: a directory that cannot be written, no ``flock``), False when
        another holds it."""
        if fcntl is None:
            return True
        path = self._path(key).with_suffix(".claim")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError:
            return True
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            return False
        self._claims[key] = fd
        return True

    def release(self, key: str) -> None:
        """Give up the claim on ``key`` (after storing the reply, or when the call failed)."""
        fd = self._claims.pop(key, None)
        if fd is None:
            return
        with contextlib.suppress(OSError):
            self._path(key).with_suffix(".claim").unlink()
        os.close(fd)  # unlocks

    def put(self, key: str, reply: CachedReply) -> None:
        """Store ``reply`` under ``key`` atomically (replacing any previous entry)."""
        path = self._path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        data = json.dumps(reply.to_dict(), ensure_ascii=False).encode("utf-8", "surrogatepass")
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".json")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
