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
from typing import Any

from agenteval._util.secrets import (
    Redactor,
    redact_headers,
    redact_mapping,
    redact_url,
    url_secrets,
)
from agenteval.agents.base import AgentFailure, AgentOutput, Recorder
from agenteval.agents.http_json_config import (
    MISSING,
    HttpJsonConfig,
    get_path,
    has_path,
)
from agenteval.cases.case import Case
from agenteval.cases.prompt import placeholder_value, render_template
from agenteval.errors import FieldName, InputError
from agenteval.llm.http import HttpClient, RetryPolicy
from agenteval.llm.propagation import TraceContext
from agenteval.llm.replay import ReplayCache
from agenteval.trials.trial import ToolCall

__all__ = ["HttpJsonAgent", "HttpJsonConfig", "get_path", "has_path"]

_WHOLE_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")


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


def _proxy_for(cfg: HttpJsonConfig, upstream: str | None) -> Any:
    """The recording proxy for ``upstream`` (None without one); InputError when the body
    uses ``{model_base_url}`` without one."""
    if upstream is None:
        if "{model_base_url}" in json.dumps(cfg.body):
            raise InputError(
                ("{model_base_url} needs ", FieldName("capture_proxy"), " UPSTREAM_BASE_URL"),
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
        self._cfg = HttpJsonConfig(self.config_path, os.environ if env is None else env)
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
        if output is MISSING:
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
        if items is MISSING or items is None:
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
                    id=None if call_id is MISSING or call_id is None else str(call_id),
                    name=name,
                    arguments={} if args is MISSING or args is None else args,
                    result=None if result is MISSING else result,
                    error=None if error is MISSING or error is None else _as_text(error),
                )
            )
        return calls
