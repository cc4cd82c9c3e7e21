"""The on-disk cache of model replies: one store, four modes, for every model call.

One design for every cache agenteval keeps (the agent's model calls,
:mod:`agenteval.llm.replay`; the recording proxy; the judge; the simulated user): a
:class:`CacheStore` is a directory of JSON entries, each under the SHA-256 of a canonical
JSON document (:func:`cache_key`), read and written as its :data:`CacheMode` allows.

One JSON file per key, under ``DIR/<first two hex digits>/<key>.json``. A file is written
to a temporary name in the same directory, flushed to disk and renamed over the final name
(``os.replace`` is atomic), so concurrent writers and crashes can leave a stray temporary
file but never a half-written entry; an unreadable entry is treated as a miss and
overwritten.

Modes (:data:`CACHE_MODES`): ``read-write`` (a hit is served, a miss is called and
stored), ``read-only`` (a hit is served, a miss is called and nothing is written),
``refresh`` (every call is made and its reply stored over the old one), ``off`` (neither).

A prompt is asked once at a time (the judge): before calling, a judge *claims* its key (an
exclusive ``flock`` on ``<key>.claim``, held during the call); a judge that finds the key
claimed waits for the entry (then a cache hit) or for the claim to go (the call failed: it
claims and calls itself). So repeats with one prompt, on one process or on ``--processes``
workers, pay for one call. The kernel drops the lock of a process that dies, so a claim
file left behind is never waited for; a cache directory that cannot be written (or a
system without ``flock``) is used without claims.

The judge's key is the SHA-256 of a canonical JSON document holding the model name, the
rendered messages and every setting that changes the reply (temperature, sample index,
response format, ...). The endpoint URL and the API key are not part of it: the model name
identifies the judge (use ``--no-judge-cache`` after swapping the weights behind a name).

What the judge stores is its *raw reply* and its token usage (:class:`CachedReply`), not
the parsed grade, so a cached reply is read with the current parser. Failed calls are never
stored.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import os
import stat
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, get_args

from agenteval.trials.trial import Usage

try:
    import fcntl
except ImportError:  # Windows: no claims
    fcntl = None  # type: ignore[assignment]

CACHE_FORMAT = 1

MAX_ENTRY_BYTES = 256 << 20
"""An entry file larger than this is not read (a miss): the proxy stores bodies up to
64 MiB, which JSON escaping and base64 keep well below it."""

_READ_FLAGS = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)

CacheMode = Literal["read-write", "read-only", "refresh", "off"]
CACHE_MODES: tuple[str, ...] = get_args(CacheMode)
"""The cache modes (module docstring); ``read-write`` is the default."""


def check_mode(mode: str) -> CacheMode:
    """``mode`` when it is one of :data:`CACHE_MODES`; ValueError otherwise."""
    if mode not in CACHE_MODES:
        raise ValueError(f"cache mode must be one of {', '.join(CACHE_MODES)}, got {mode!r}")
    return mode  # type: ignore[return-value]


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


class CacheStore:
    """A directory of cache entries (JSON objects) read and written as ``mode`` allows
    (module docstring). Picklable: a copy holds no claim.

    ``durable``: each entry is flushed to disk (``fsync``) before its rename, so that it
    survives a power cut. Without it an entry is still never torn for a reader (the rename
    is atomic), and one a crash left empty or cut is an unreadable entry: a miss.
    """

    durable = True

    def __init__(self, directory: str | Path, mode: str = "read-write") -> None:
        self.directory = Path(directory)
        self.mode: CacheMode = check_mode(mode)
        self._claims: dict[str, int] = {}  # key -> the locked claim file's descriptor

    def __getstate__(self) -> dict[str, Any]:
        return {"directory": self.directory, "mode": self.mode}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.directory, self.mode, self._claims = state["directory"], state["mode"], {}

    def __repr__(self) -> str:
        return f"{type(self).__name__}({str(self.directory)!r}, mode={self.mode!r})"

    @property
    def readable(self) -> bool:
        """True when a hit is served (``read-write``, ``read-only``)."""
        return self.mode in ("read-write", "read-only")

    @property
    def writable(self) -> bool:
        """True when a reply is stored (``read-write``, ``refresh``)."""
        return self.mode in ("read-write", "refresh")

    def _path(self, key: str) -> Path:
        if len(key) < 3 or not all(c in "0123456789abcdef" for c in key):
            raise ValueError(f"not a cache key: {key!r}")
        return self.directory / key[:2] / f"{key}.json"

    def get_entry(self, key: str) -> tuple[dict[str, Any], float] | None:
        """The stored entry for ``key`` and when it was stored (the file's modification
        time), or None: missing, unreadable, not this format, or a mode that does not read;
        also a symbolic link, a file that is not regular (a FIFO) or one larger than
        :data:`MAX_ENTRY_BYTES`."""
        if not self.readable:
            return None
        try:
            # never a symbolic link (an entry is only ever written by a rename), never a
            # FIFO or a device (the open would block, the read never end), never huge
            fd = os.open(self._path(key), _READ_FLAGS)
            with os.fdopen(fd, "rb") as f:
                st = os.fstat(f.fileno())
                if not stat.S_ISREG(st.st_mode) or st.st_size > MAX_ENTRY_BYTES:
                    return None
                raw = f.read(MAX_ENTRY_BYTES + 1)
            if len(raw) > MAX_ENTRY_BYTES:
                return None
            entry = json.loads(raw)
        except (OSError, ValueError, RecursionError, MemoryError):
            return None
        stored_at = st.st_mtime
        if not isinstance(entry, dict) or entry.get("cache_format") != CACHE_FORMAT:
            return None
        return entry, stored_at

    def put_entry(self, key: str, entry: dict[str, Any]) -> None:
        """Store ``entry`` under ``key`` atomically (replacing any previous entry); nothing
        in a mode that does not write. Raises OSError when the directory cannot be written."""
        if not self.writable:
            return
        path = self._path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        doc = {**entry, "cache_format": CACHE_FORMAT}
        data = json.dumps(doc, ensure_ascii=False).encode("utf-8", "surrogatepass")
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".json")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
                if self.durable:
                    f.flush()
                    os.fsync(f.fileno())
            os.replace(tmp, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise

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


class JudgeCache(CacheStore):
    """The judge's and the simulated user's replies (:class:`CachedReply`) in a store."""

    def get(self, key: str) -> CachedReply | None:
        """The stored reply for ``key``, or None (missing, unreadable or invalid entry, or a
        mode that does not read)."""
        found = self.get_entry(key)
        if found is None:
            return None
        reply = CachedReply.from_dict(found[0])
        return None if reply is None else dataclasses.replace(reply, stored_at=found[1])

    def put(self, key: str, reply: CachedReply) -> None:
        """Store ``reply`` under ``key`` atomically (replacing any previous entry)."""
        self.put_entry(key, reply.to_dict())
