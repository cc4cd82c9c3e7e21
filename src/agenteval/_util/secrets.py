"""Keeping secrets (API keys, tokens, Authorization headers) out of runs, reports and messages.

Two tools, used at the two places a secret could leak:

- :class:`Redactor` scrubs known secret *values* from free text (error messages, retry
  details), and the credentials of any URL in it (:func:`redact_urls`). Values shorter
  than 4 characters are ignored: they would blank out ordinary words and are no secret
  worth the name.
- :func:`redact_mapping` scrubs values stored under secret-looking *keys* (``Authorization``,
  ``api_key``, ``X-API-Key``, ``access_token``...) from a configuration mapping before it is
  written to ``run.json`` as an agent description; under a ``headers`` key every value is
  scrubbed unless the header is on :data:`PUBLIC_HEADERS`, and every string goes through
  :func:`redact_urls`.

Credentials in URLs (:func:`redact_url`): the user-info part (``user:key@``) is replaced
as a whole (a password holding an unencoded ``/``, ``https://bob:pa/ss@host``, included:
after ``scheme://user:`` anything up to an ``@`` counts, unless the colon is followed by a
port) — also of a URL nested inside another (``?next=https://u:pw@host``) — and so
is the value of every query or fragment parameter (``&``- or ``;``-separated) whose name,
percent-decoded, names a credential (:func:`is_secret_param`): split into words at
anything not a letter or digit and at lower-to-upper case changes, a word is one of
``key``, ``token``, ``secret``, ``sig``, ``signature``, ``pass``, ``password``,
``passwd``, ``passphrase``, ``pwd``, ``auth``, ``authorization``, ``cred``,
``credential(s)``, ``session``, ``sessionid``, ``sid``, ``code``, ``jwt``, ``bearer``,
``hmac``, ``otp``, ``verifier``, ``passcode``, ``assertion`` (any case: ``api-key``,
``X-Amz-Signature``, ``access_token``, ``%74oken``, ``apiKey``, ``oauth_verifier``...),
or ends with ``token``, ``secret``, ``password``, ``passwd``, ``signature``, ``apikey``,
``accesskey``, ``secretkey``, ``privatekey``, ``subscriptionkey``, ``sessionid``,
``sessid`` or ``authcode`` (``accesstoken``, ``PHPSESSID``) — unless it is ``token``,
``code`` or ``key`` right after ``page``, ``continuation``, ``sync``, ``resumption``,
``cursor``, ``next``, ``prev``, ``previous``, ``pagination``, ``skip``, ``delta``,
``country``, ``language``, ``lang``, ``currency``, ``status``, ``error``, ``postal``,
``zip``, ``region``, ``area``, ``sort``, ``partition`` or ``primary`` (a cursor or a
plain value: ``pageToken``, ``NextToken``, ``country_code``, ``sort_key``; in one word
too: ``$skiptoken``, ``nextpagetoken``; ``previous_password`` stays a credential), or
the word right after it is ``count``, ``length``, ``len``, ``type``, ``method``, ``version``,
``rate``, ``limit`` or ``size`` (``token_count``, ``SignatureVersion``, ``auth_type``).
A name that merely contains such letters is an ordinary parameter
(``keyword``, ``passage``, ``authors``, ``codec``, ``tokenizer``): its value is kept, and
two URLs that differ in it are two endpoints (the replay cache's key tells them apart:
two pages of ``?pageToken=`` are two entries, never one page's reply for both).
Fragments carry credentials in OAuth redirects (``#access_token=...``). Scheme, host,
port, path, other parameters and the rest of the fragment are kept.
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
_PARAM_WORDS = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")
_SECRET_PARAM_WORDS = frozenset(
    {
        "key", "token", "secret", "sig", "signature", "pass", "password", "passwd",
        "passphrase", "pwd", "auth", "authorization", "cred", "credential", "credentials",
        "session", "sessionid", "sid", "code", "jwt", "bearer", "hmac", "otp", "verifier",
        "passcode", "assertion",
    }
)  # fmt: skip
# A credential word right after one of these names a cursor or a plain value
# (``pageToken``, ``country_code``, ``sort_key``), right before one of the others what it
# counts or describes (``token_count``, ``signature_version``, ``auth_type``).
_ORDINARY_BEFORE = frozenset(
    {
        "page", "continuation", "sync", "resumption", "cursor", "next", "prev", "previous",
        "pagination", "skip", "delta", "nextpage", "country", "language", "lang",
        "currency", "status", "error", "postal", "zip", "region", "area", "sort", "partition",
        "primary",
    }
)  # fmt: skip
_ORDINARY_AFTER = frozenset(
    {"count", "length", "len", "type", "method", "version", "rate", "limit", "size"}
)
_SECRET_PARAM_ENDINGS = (
    "token", "secret", "password", "passwd", "signature", "apikey", "accesskey", "secretkey",
    "privatekey", "subscriptionkey", "sessionid", "sessid", "authcode",
)  # fmt: skip
_URL_IN_TEXT = re.compile(r"\b[A-Za-z][A-Za-z0-9+.\-]*://[^\s\"'<>`]+")
_USERINFO = re.compile(r"^([A-Za-z][A-Za-z0-9+.\-]*://)([^/?#]*)@")
# A password holding an unencoded "/" (``https://bob:pa/ss@host``): a user name, a colon
# not followed by a port, then anything without space up to the "@".
_SLASHED_USERINFO = re.compile(
    r"^([A-Za-z][A-Za-z0-9+.\-]*://)([^/?#:@\s]+:(?!\d*(?:[/?#]|$))[^\s@]*)@"
)
_NESTED_USERINFO = re.compile(r"([A-Za-z][A-Za-z0-9+.\-]*://)([^/?#@\s&;]*)@")
_PARAM_SEP = re.compile(r"([&;])")

PUBLIC_HEADERS = frozenset(
    {"accept", "accept-encoding", "accept-language", "content-type", "user-agent"}
)
"""The headers whose values are written as they are (lower-case names); every other
header's value is a potential credential (``Cookie``, ``X-Auth-Key``,
``Ocp-Apim-Subscription-Key``...) and is written as ``[REDACTED]``."""


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
        """``text`` with every secret value replaced by ``[REDACTED]``, and the credentials
        of every URL in it too (:func:`redact_urls`)."""
        if not text:
            return text
        if self._pattern is not None:
            text = self._pattern.sub(REDACTED, text)
        return redact_urls(text)

    def with_values(self, more: Iterable[str]) -> Redactor:
        """A redactor removing these secrets and ``more``."""
        return Redactor([*self._values, *more])

    def __call__(self, text: str) -> str:
        """Same as :meth:`redact`."""
        return self.redact(text)


def is_secret_param(name: str) -> bool:
    """True when a URL query parameter named ``name`` (percent-decoded) holds a credential
    (module docstring)."""
    return _names_a_credential(name) or _names_a_credential(_unquote(name))


def _names_a_credential(name: str) -> bool:
    words = [w.lower() for w in _PARAM_WORDS.findall(name)]
    for i, w in enumerate(words):
        if w.endswith("token") and w[:-5] in _ORDINARY_BEFORE:  # $skiptoken, nextpagetoken
            continue
        if w in _SECRET_PARAM_WORDS or w.endswith(_SECRET_PARAM_ENDINGS):
            before = words[i - 1] if i else ""
            after = words[i + 1] if i + 1 < len(words) else ""
            plain = w in ("token", "code", "key") and before in _ORDINARY_BEFORE
            if not plain and after not in _ORDINARY_AFTER:
                return True
    return False


def _split_query(query: str) -> list[tuple[str, str, str]]:
    """(name, "=" or "", value) for each ``&``- or ``;``-separated part, encoding untouched."""
    out = []
    for part in _PARAM_SEP.split(query)[::2]:
        name, eq, value = part.partition("=")
        out.append((name, eq, value))
    return out


def _redact_params(query: str) -> str:
    """``a=1&token=x;b=2`` with the secret parameters' values replaced, separators kept."""
    pieces = _PARAM_SEP.split(query)
    for i in range(0, len(pieces), 2):
        name, eq, value = pieces[i].partition("=")
        if eq and value and is_secret_param(name):
            pieces[i] = f"{name}{eq}{REDACTED}"
    return "".join(pieces)


def redact_url(url: str) -> str:
    """``url`` with its credentials replaced by ``[REDACTED]`` (rules in the module docstring).

    Works on the text, so a URL that does not parse is still scrubbed and nothing else in it
    changes (no re-encoding).
    """
    userinfo = _USERINFO if _USERINFO.match(url) else _SLASHED_USERINFO
    out = userinfo.sub(lambda m: f"{m.group(1)}{REDACTED}@", url, count=1)
    out = _NESTED_USERINFO.sub(
        lambda m: m.group(0) if m.group(2) == REDACTED else f"{m.group(1)}{REDACTED}@", out
    )
    out, hashmark, fragment = out.partition("#")
    head, qmark, query = out.partition("?")
    query = _redact_params(query) if qmark else query
    fragment = _redact_params(fragment) if "=" in fragment else fragment
    return f"{head}{qmark}{query}{hashmark}{fragment}"


def url_secrets(url: str) -> list[str]:
    """The credential values in ``url`` (user info, its parts, secret query values), so that
    a :class:`Redactor` also removes them from messages that quote them."""
    found: list[str] = []
    m = _USERINFO.match(url) or _SLASHED_USERINFO.match(url)
    infos = [m.group(2)] if m else []
    infos += [n.group(2) for n in _NESTED_USERINFO.finditer(url) if n.start() > 0]
    for info in infos:
        user, colon, password = info.partition(":")
        # with a password the user name is no secret (and often an ordinary word)
        parts = [info, password] if colon and password else [info, user]
        found += parts + [_unquote(v) for v in parts]
    rest, _, fragment = url.partition("#")
    _, qmark, query = rest.partition("?")
    for part in (query if qmark else "", fragment):
        for n, eq, v in _split_query(part):
            if eq and v and is_secret_param(n):
                found += [v, _unquote(v)]
    return [v for v in dict.fromkeys(found) if v]


def _unquote(text: str) -> str:
    from urllib.parse import unquote_plus

    return unquote_plus(text)


def redact_urls(text: str) -> str:
    """Every ``scheme://...`` URL in free text passed through :func:`redact_url`."""
    if "://" not in text:
        return text
    return _URL_IN_TEXT.sub(lambda m: redact_url(m.group(0)), text)


TRANSPORT_HEADERS = frozenset(
    {
        "connection",
        "content-length",
        "host",
        "keep-alive",
        "te",
        "transfer-encoding",
        "upgrade",
        "openai-beta",
        "anthropic-version",
        "anthropic-beta",
    }
)
"""Headers that carry no credential (framing, the API version asked for): with
:data:`PUBLIC_HEADERS` and the OpenAI SDKs' ``x-stainless-*`` (language, OS, retry count),
the headers :func:`header_secrets` leaves out."""


def _public_header(name: str) -> bool:
    n = name.lower()
    return n in PUBLIC_HEADERS or n in TRANSPORT_HEADERS or n.startswith("x-stainless-")


def header_secrets(headers: Iterable[tuple[str, str]]) -> list[str]:
    """The values of every header but the public ones (:data:`PUBLIC_HEADERS`,
    :data:`TRANSPORT_HEADERS`, ``x-stainless-*``), each also in its pieces: the credential
    after an auth scheme (``Bearer K`` → ``K``), each cookie's value (``a=K; b=L`` → ``K``,
    ``L``), for a :class:`Redactor` to remove wherever they appear. Values shorter than 4
    characters are dropped by the Redactor itself."""
    found: list[str] = []
    for name, value in headers:
        if _public_header(name) or not value:
            continue
        found.append(value)
        _, sep, rest = value.partition(" ")
        if sep and rest.strip():
            found.append(rest.strip())
        if "=" in value:
            for piece in re.split(r"[;,]", value):
                _, eq, v = piece.partition("=")
                if eq and v.strip():
                    found.append(v.strip())
    return list(dict.fromkeys(found))


def redact_headers(headers: Mapping[str, Any]) -> dict[str, Any]:
    """``headers`` with every value ``[REDACTED]`` except those on :data:`PUBLIC_HEADERS`."""
    return {
        str(k): v if str(k).lower() in PUBLIC_HEADERS or v is None else REDACTED
        for k, v in headers.items()
    }


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

    Nested mappings and lists are walked. A mapping under a key named ``headers`` (any
    case) goes through :func:`redact_headers`. Every other string value has its URLs
    scrubbed by :func:`redact_urls` and, when ``redactor`` is given, is passed through it
    (so a key embedded anywhere is removed too).
    """
    return {str(k): _redact_value(str(k), v, redactor) for k, v in data.items()}


def _redact_value(key: str | None, value: Any, redactor: Redactor | None) -> Any:
    if key is not None and is_secret_key(key) and value is not None:
        return REDACTED
    if key is not None and key.lower() == "headers" and isinstance(value, Mapping):
        return redact_mapping(redact_headers(value), redactor)
    if isinstance(value, Mapping):
        return redact_mapping(value, redactor)
    if isinstance(value, list | tuple):
        return [_redact_value(None, v, redactor) for v in value]
    if isinstance(value, str):
        value = redact_urls(value)
        return redactor.redact(value) if redactor is not None else value
    return value
