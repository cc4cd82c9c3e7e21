"""Keeping secrets (API keys, tokens, Authorization headers) out of runs, reports and messages.

Two tools, used at the two places a secret could leak:

- :class:`Redactor` scrubs known secret *values* from free text (error messages, retry
  details). Values shorter than 4 characters are ignored: they would blank out ordinary
  words and are no secret worth the name.
- :func:`redact_mapping` scrubs values stored under secret-looking *keys* (``Authorization``,
  ``api_key``, ``X-API-Key``, ``access_token``...) from a configuration mapping before it is
  written to ``run.json`` as an agent description.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

REDACTED = "[REDACTED]"
"""What a secret is replaced by."""

_MIN_SECRET_LEN = 4
_SECRET_WORDS = frozenset({"authorization", "apikey", "token", "secret", "password", "passwd"})
_SECRET_PHRASES = ("api_key", "access_key", "private_key")
_WORD_SPLIT = re.compile(r"[^a-z0-9]+")


class Redactor:
    """Replaces every occurrence of the given secret values by ``[REDACTED]``.

    Empty values and values shorter than 4 characters are ignored. Longer secrets are
    replaced first, so a secret containing another is removed whole.
    """

    __slots__ = ("_pattern", "_values")

    def __init__(self, values: Iterable[str] = ()) -> None:
        uniq = {v for v in values if isinstance(v, str) and len(v) >= _MIN_SECRET_LEN}
        self._values = tuple(sorted(uniq, key=len, reverse=True))
        self._pattern = (
            re.compile("|".join(re.escape(v) for v in self._values)) if self._values else None
        )

    @property
    def values(self) -> tuple[str, ...]:
        """The secrets this redactor removes (longest first)."""
        return self._values

    def redact(self, text: str) -> str:
        """``text`` with every secret value replaced by ``[REDACTED]``."""
        if self._pattern is None or not text:
            return text
        return self._pattern.sub(REDACTED, text)

    def __call__(self, text: str) -> str:
        """Same as :meth:`redact`."""
        return self.redact(text)


def is_secret_key(key: str) -> bool:
    """True when a mapping key names a secret.

    The key is lower-cased and split on anything that is not a letter or digit; it names a
    secret when one of its words is ``authorization``, ``apikey``, ``token``, ``secret``,
    ``password`` or ``passwd``, or when it contains ``api_key`` / ``access_key`` /
    ``private_key`` (``X-API-Key`` included). ``max_tokens`` is not a secret key.
    """
    norm = key.lower()
    words = set(_WORD_SPLIT.split(norm))
    if words & _SECRET_WORDS:
        return True
    joined = "_".join(w for w in _WORD_SPLIT.split(norm) if w)
    return any(p in joined for p in _SECRET_PHRASES)


def redact_mapping(data: Mapping[str, Any], redactor: Redactor | None = None) -> dict[str, Any]:
    """A copy of ``data`` with the values of secret-looking keys replaced by ``[REDACTED]``.

    Nested mappings and lists are walked. When ``redactor`` is given, every other string
    value is also passed through it (so a key embedded in a URL is removed too).
    """
    return {str(k): _redact_value(str(k), v, redactor) for k, v in data.items()}


def _redact_value(key: str | None, value: Any, redactor: Redactor | None) -> Any:
    if key is not None and is_secret_key(key) and value is not None:
        return REDACTED
    if isinstance(value, Mapping):
        return redact_mapping(value, redactor)
    if isinstance(value, list | tuple):
        return [_redact_value(None, v, redactor) for v in value]
    if isinstance(value, str) and redactor is not None:
        return redactor.redact(value)
    return value
