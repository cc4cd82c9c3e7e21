"""An agent (``_payload_agent:answer``) whose outputs and tool results are hostile content."""

from __future__ import annotations

from typing import Any

ESC = "\x1b"
PAYLOADS: dict[str, str] = {
    "html": '<script>alert("pwned")</script><img src=x onerror="alert(1)"></textarea>',
    "ansi": f"{ESC}[2J{ESC}[H{ESC}[31mALL TESTS PASSED{ESC}[0m{ESC}]0;owned{chr(7)}",
    "nul": "before\x00after\x00",
    "rlo": "total \u202edecnalab\u202c ok \u2066isolate\u2069",
    "markdown": "| fake | table |\n|---|---|\n| 1 | 2 |\n```\n# heading\n",
    "xml": ']]><testcase name="fake"/><![CDATA[ &amp; \x0b\x0c',
    "big": "x" * (10 * 1024 * 1024),
}


def answer(case: Any) -> dict[str, Any] | str:
    """Return the payload named by the case id, also as a tool result; raise for ``err_*``."""
    kind = case.id.split("_", 1)[1]
    payload = PAYLOADS[kind]
    if case.id.startswith("err_"):
        raise RuntimeError(payload)
    return {
        "output": payload,
        "tool_calls": [
            {"name": "lookup", "arguments": {"q": payload[:1000]}, "result": payload[:100_000]}
        ],
    }
