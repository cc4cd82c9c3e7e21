"""The config file of an HTTP/JSON agent (:mod:`agenteval.agents.http_json` says its format).

:func:`load_config` reads it (YAML or JSON); :class:`HttpJsonConfig` checks it and expands
``${VAR}`` references (their values are secrets); :func:`get_path` / :func:`has_path` read
the dotted response paths it names.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, NoReturn

import yaml

from agenteval._util import yaml_guard
from agenteval.errors import InputError

_ENV_REF = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
_TOP_KEYS = frozenset({"url", "headers", "body", "response"})
_RESPONSE_KEYS = frozenset({"output", "tool_calls", "usage"})
_CALL_KEYS = {"path": None, "name": "name", "arguments": "arguments", "result": "result"}
_CALL_KEYS |= {"error": "error", "id": "id"}
_USAGE_KEYS = frozenset({"input_tokens", "output_tokens", "model"})
MISSING = object()
"""What :func:`get_path` returns for a path that does not exist."""


def get_path(data: Any, path: str) -> Any:
    """The value at dotted ``path`` in ``data`` (list items by integer index), or a sentinel.

    Returns :data:`MISSING` when some step does not exist; use
    :func:`has_path` to test.
    """
    node = data
    for part in path.split("."):
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif (
            isinstance(node, list)
            and part.lstrip("-").isdigit()
            and -len(node) <= int(part) < len(node)
        ):
            node = node[int(part)]
        else:
            return MISSING
    return node


def has_path(data: Any, path: str) -> bool:
    """True when dotted ``path`` exists in ``data`` (its value may be ``null``)."""
    return get_path(data, path) is not MISSING


class HttpJsonConfig:
    """A checked agent config (``url``, ``headers``, ``body``, ``response``), its ``${VAR}``
    references expanded from ``env``; InputError naming the file and field otherwise."""

    def __init__(self, path: Path, env: Mapping[str, str]) -> None:
        self.path = path
        raw = load_config(path)
        unknown = sorted(set(raw) - _TOP_KEYS)
        if unknown:
            self._fail(f"unknown key; allowed: {', '.join(sorted(_TOP_KEYS))}", unknown[0])
        self.secrets: list[str] = []
        url_t = raw.get("url")
        if not isinstance(url_t, str) or not url_t.strip():
            self._fail("required: the endpoint URL as a string", "url")
        self.url_template = url_t
        self.url = self._expand(url_t, env, "url")
        headers_t = raw.get("headers") or {}
        if not isinstance(headers_t, dict) or not all(
            isinstance(k, str) and isinstance(v, str | int | float) for k, v in headers_t.items()
        ):
            self._fail("must map header names to strings", "headers")
        self.header_templates = {k: str(v) for k, v in headers_t.items()}
        self.headers = {
            k: self._expand(v, env, f"headers.{k}") for k, v in self.header_templates.items()
        }
        self.body = raw.get("body", {"input": "{input}"})
        response = raw.get("response")
        if not isinstance(response, dict):
            self._fail("required: a mapping with at least 'output'", "response")
        unknown = sorted(set(response) - _RESPONSE_KEYS)
        if unknown:
            self._fail(
                f"unknown key; allowed: {', '.join(sorted(_RESPONSE_KEYS))}",
                f"response.{unknown[0]}",
            )
        self.output = self._path(response.get("output"), "response.output")
        self.calls = self._calls(response.get("tool_calls"))
        self.usage = self._usage(response.get("usage"))

    def _fail(self, message: str, field: str) -> NoReturn:
        raise InputError(message, file=self.path, field=field)

    def _expand(self, template: str, env: Mapping[str, str], field: str) -> str:
        def repl(m: re.Match[str]) -> str:
            name = m.group(1)
            if name not in env:
                self._fail(f"environment variable {name} is not set", field)
            self.secrets.append(env[name])
            return env[name]

        return _ENV_REF.sub(repl, template)

    def _path(self, value: Any, field: str) -> str:
        if not isinstance(value, str) or not value.strip():
            self._fail("must be a dotted path such as data.answer", field)
        return str(value).strip()

    def _calls(self, spec: Any) -> dict[str, str] | None:
        if spec is None:
            return None
        if isinstance(spec, str):
            spec = {"path": spec}
        if not isinstance(spec, dict) or "path" not in spec:
            self._fail("must be a path, or a mapping with 'path'", "response.tool_calls")
        unknown = sorted(set(spec) - set(_CALL_KEYS))
        if unknown:
            self._fail(
                f"unknown key; allowed: {', '.join(_CALL_KEYS)}",
                f"response.tool_calls.{unknown[0]}",
            )
        return {
            k: self._path(spec.get(k, default), f"response.tool_calls.{k}")
            for k, default in _CALL_KEYS.items()
        }

    def _usage(self, spec: Any) -> dict[str, str]:
        if spec is None:
            return {}
        if not isinstance(spec, dict):
            self._fail("must map input_tokens/output_tokens/model to paths", "response.usage")
        unknown = sorted(set(spec) - _USAGE_KEYS)
        if unknown:
            self._fail(
                f"unknown key; allowed: {', '.join(sorted(_USAGE_KEYS))}",
                f"response.usage.{unknown[0]}",
            )
        return {k: self._path(v, f"response.usage.{k}") for k, v in spec.items()}


def load_config(path: Path) -> dict[str, Any]:
    """The config file as a mapping; InputError naming the file (and line) otherwise."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as e:
        raise InputError(f"cannot read agent config: {e.strerror or e}", file=path) from e
    try:
        raw = yaml_guard.safe_load(text, path)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None
        problem = getattr(e, "problem", None) or "not valid YAML/JSON"
        raise InputError(
            f"agent config is not valid YAML/JSON: {problem}", file=path, line=line
        ) from e
    if not isinstance(raw, dict):
        raise InputError("agent config must be a mapping (url, headers, body, response)", file=path)
    return raw
