"""A generic HTTP/JSON endpoint as the agent under test, described by a small config file.

The config (YAML or JSON)::

    url: http://localhost:8000/ask          # ${VAR} allowed (its value is a secret)
    headers:                                # optional; ${VAR} values are secrets
      Authorization: "Bearer ${SERVICE_TOKEN}"
    body:                                   # optional; default {"input": "{input}"}
      question: "{input}"
      session: "{id}"
    response:
      output: data.answer                   # dotted path; list items by index: choices.0.text
      tool_calls: data.steps                # optional: path to a list of calls, or
      # tool_calls: {path: data.steps, name: tool, arguments: args, result: out, error: err, id: id}
      usage:                                # optional paths
        input_tokens: usage.prompt
        output_tokens: usage.completion
        model: model

Every string in ``body`` is rendered with :func:`agenteval.cases.prompt.render_template`
(``{input}``, ``{context}``, ``{id}``, metadata keys...); keys are not. A string that is
exactly one placeholder whose value is not a string inserts the value itself: ``"{input}"``
with a conversation as input inserts the list of messages, ``"{expected}"`` a number.
Tool call sub-paths default to ``name``, ``arguments``, ``result``, ``error``, ``id``.

With ``capture_proxy=UPSTREAM`` (``--capture-proxy``), ``{model_base_url}`` in the body is
the trial's own base URL of a recording proxy in front of ``UPSTREAM``
(:mod:`agenteval.traces.proxy`): the service points its LLM client there, and the model
calls, tool calls and tool outputs seen become the trial's (when ``response`` has no
``tool_calls`` path; ``metadata.trajectory_source`` is ``proxy``).

The request is ``POST url`` with the rendered body, through :class:`~agenteval.llm.http.HttpClient`
(retries recorded), with the trial's W3C ``traceparent`` header
(:mod:`agenteval.llm.propagation`; the trial records ``metadata.trace_id``). A response
without the output path fails the trial with cause ``malformed_response``; an explicit
``null`` there means the agent gave no answer.

With a replay cache (``--cache``, docs/cache.md) the rendered request is the key and a
cached response is read exactly as a live one (recorded on the trial's ``cached``, with the
configured usage). With ``capture_proxy`` the service's *model calls* are cached at the
proxy instead (the service still runs, so its tool calls are seen again).
"""

from __future__ import annotations

import json
import os
import random
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, NoReturn

import yaml

from agenteval._util import yaml_guard
from agenteval._util.secrets import (
    Redactor,
    redact_headers,
    redact_mapping,
    redact_url,
    url_secrets,
)
from agenteval.agents.base import AgentFailure, AgentOutput, Recorder
from agenteval.cases.case import Case
from agenteval.cases.prompt import placeholder_value, render_template
from agenteval.errors import InputError
from agenteval.llm.http import HttpClient, RetryPolicy
from agenteval.llm.propagation import TraceContext
from agenteval.llm.replay import ReplayCache
from agenteval.trials.trial import ToolCall

_ENV_REF = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
_WHOLE_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")
_TOP_KEYS = frozenset({"url", "headers", "body", "response"})
_RESPONSE_KEYS = frozenset({"output", "tool_calls", "usage"})
_CALL_KEYS = {"path": None, "name": "name", "arguments": "arguments", "result": "result"}
_CALL_KEYS |= {"error": "error", "id": "id"}
_USAGE_KEYS = frozenset({"input_tokens", "output_tokens", "model"})
_MISSING = object()


def get_path(data: Any, path: str) -> Any:
    """The value at dotted ``path`` in ``data`` (list items by integer index), or a sentinel.

    Returns the module's private ``_MISSING`` sentinel when some step does not exist; use
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
            return _MISSING
    return node


def has_path(data: Any, path: str) -> bool:
    """True when dotted ``path`` exists in ``data`` (its value may be ``null``)."""
    return get_path(data, path) is not _MISSING


class _Config:
    def __init__(self, path: Path, env: Mapping[str, str]) -> None:
        self.path = path
        raw = _load(path)
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


def _load(path: Path) -> dict[str, Any]:
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


def _render_body(node: Any, case: Case) -> Any:
    if isinstance(node, str):
        m = _WHOLE_PLACEHOLDER.fullmatch(node)
        if m:
            found, value = placeholder_value(case, m.group(1))
            if found and value is not None and not isinstance(value, str):
                return json.loads(json.dumps(value))
        return render_template(node, case)
    if isinstance(node, dict):
        return {k: _render_body(v, case) for k, v in node.items()}
    if isinstance(node, list):
        return [_render_body(v, case) for v in node]
    return node


def _proxy_for(cfg: _Config, upstream: str | None) -> Any:
    """The recording proxy for ``upstream`` (None without one); InputError when the body
    uses ``{model_base_url}`` without one."""
    if upstream is None:
        if "{model_base_url}" in json.dumps(cfg.body):
            raise InputError(
                "{model_base_url} needs --capture-proxy UPSTREAM_BASE_URL",
                file=cfg.path,
                field="body",
            )
        return None
    # imported on first use, so that importing this module stays light
    from agenteval.traces.proxy import RecordingProxy, check_upstream

    return RecordingProxy(check_upstream(upstream))


def _as_text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


class HttpJsonAgent:
    """An HTTP/JSON service described by a config file (format in the module docstring).

    ``env`` supplies ``${VAR}`` values (default: ``os.environ``); config problems raise
    ``InputError`` naming the file and field when the agent is built. ``cache``: the replay
    cache (module docstring).
    """

    def __init__(
        self,
        config_path: str | Path,
        *,
        policy: RetryPolicy | None = None,
        limit: int = 100,
        env: Mapping[str, str] | None = None,
        rng: random.Random | None = None,
        capture_proxy: str | None = None,
        cache: ReplayCache | None = None,
    ) -> None:
        self.config_path = Path(config_path)
        self._cfg = _Config(self.config_path, os.environ if env is None else env)
        self._proxy = _proxy_for(self._cfg, capture_proxy)
        secrets = [*self._cfg.secrets, *url_secrets(self._cfg.url)]
        self._redactor = Redactor(secrets)
        self.client = HttpClient(
            policy, limit=limit, headers=self._cfg.headers, secrets=secrets, rng=rng
        )
        self.use_cache(cache)

    def use_cache(self, cache: ReplayCache | None) -> bool:
        """Serve the service's responses (or, with ``capture_proxy``, its model calls)
        from ``cache``; True: it applies here."""
        if self._proxy is not None:
            self._proxy.cache = cache
        else:
            self.client.cache = cache
        return True

    def describe(self) -> dict[str, Any]:
        """``{kind: "http_json", config, url, headers, body, response}`` with secrets removed.

        Header values are ``[REDACTED]`` unless the header is on
        :data:`~agenteval._util.secrets.PUBLIC_HEADERS` (``Content-Type``, ``Accept``...); the URL
        loses its credentials (:func:`~agenteval._util.secrets.redact_url`).
        """
        headers = redact_headers(self._cfg.header_templates)
        response: dict[str, Any] = {"output": self._cfg.output}
        if self._cfg.calls:
            response["tool_calls"] = self._cfg.calls
        if self._cfg.usage:
            response["usage"] = self._cfg.usage
        desc = {
            "kind": "http_json",
            "config": str(self.config_path),
            "url": redact_url(self._cfg.url_template),
            "body": self._cfg.body,
            "response": response,
        }
        if self._proxy is not None:
            desc["capture_proxy"] = redact_url(self._proxy.upstream)
        return {**redact_mapping(desc, self._redactor), "headers": headers}

    async def start(self) -> None:
        """Open the HTTP session (and start the ``capture_proxy``)."""
        await self.client.start()
        if self._proxy is not None:
            await self._proxy.start()

    async def close(self) -> None:
        """Close the HTTP session (and the ``capture_proxy``)."""
        await self.client.close()
        if self._proxy is not None:
            await self._proxy.close()

    async def run(self, case: Case, repeat: int, rec: Recorder) -> AgentOutput:
        """POST the rendered body once (with retries) and read the configured fields."""
        if self._proxy is None:
            return await self._run(case, rec)
        # imported on first use, so that importing this module stays light
        from agenteval.traces.merge import merge, watch

        with watch(self._proxy, rec) as seen:
            out = await self._run(case, rec, seen)
        return merge(out, seen, rec)

    async def _run(self, case: Case, rec: Recorder, seen: Any = None) -> AgentOutput:
        values = case
        if seen is not None:  # {model_base_url}: this trial's proxy URL
            # imported on first use, so that importing this module stays light
            from agenteval.traces.proxy import model_base_url

            extra = {**case.metadata, "model_base_url": model_base_url()}
            values = case.model_copy(update={"metadata": extra})
        body = _render_body(self._cfg.body, values)
        trace = rec.trace = rec.trace or TraceContext.new()  # traceparent: one per trial
        data, replayed = await self.client.post_json_cached(self._cfg.url, body, rec)
        usage = self._record_usage(data, rec)
        if replayed is not None:  # served from the replay cache: nothing sent, nothing paid
            rec.add_cached(usage[0], usage[1], usage[2], replayed.latency_s)
        output = get_path(data, self._cfg.output)
        if output is _MISSING:
            raise AgentFailure("malformed_response", f"response has no '{self._cfg.output}'")
        return AgentOutput(
            output=None if output is None else _as_text(output),
            tool_calls=self._tool_calls(data) if seen is None or self._cfg.calls else None,
            tools=case.tools,
            metadata={"trace_id": trace.trace_id},
        )

    def _record_usage(self, data: Any, rec: Recorder) -> tuple[str | None, int, int]:
        if not self._cfg.usage:
            return None, 0, 0
        counts = []
        for key in ("input_tokens", "output_tokens"):
            value = get_path(data, self._cfg.usage[key]) if key in self._cfg.usage else 0
            ok = isinstance(value, int) and not isinstance(value, bool) and value >= 0
            counts.append(value if ok else 0)
        model = get_path(data, self._cfg.usage["model"]) if "model" in self._cfg.usage else None
        name = model if isinstance(model, str) else None
        rec.add_usage(name, counts[0], counts[1])
        return name, counts[0], counts[1]

    def _tool_calls(self, data: Any) -> list[ToolCall]:
        spec = self._cfg.calls
        if spec is None:
            return []
        items = get_path(data, spec["path"])
        if items is _MISSING or items is None:
            return []
        if not isinstance(items, list):
            raise AgentFailure("malformed_response", f"response '{spec['path']}' is not a list")
        calls = []
        for i, item in enumerate(items):
            name = get_path(item, spec["name"])
            if not isinstance(name, str) or not name:
                raise AgentFailure(
                    "malformed_response",
                    f"tool call {i} at '{spec['path']}' has no '{spec['name']}'",
                )
            args = get_path(item, spec["arguments"])
            result = get_path(item, spec["result"])
            error = get_path(item, spec["error"])
            call_id = get_path(item, spec["id"])
            calls.append(
                ToolCall(
                    id=None if call_id is _MISSING or call_id is None else str(call_id),
                    name=name,
                    arguments={} if args is _MISSING or args is None else args,
                    result=None if result is _MISSING else result,
                    error=None if error is _MISSING or error is None else _as_text(error),
                )
            )
        return calls
