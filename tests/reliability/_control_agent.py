"""An agent (``_control_agent:answer``) whose answers, tool results and errors carry
control characters: C1 CSI (U+009B), ESC sequences, NUL, noncharacters, lone surrogates."""

from __future__ import annotations

from typing import Any

CONTROL_PAYLOADS: dict[str, str] = {
    "c1": "\u009b2J\u009b31mC1 RED\u009b0m \u009d0;title\u009c \u0085next \u0090dcs\u009c",
    "esc": "\x1b[2J\x1b[H\x1b]0;owned\x07\x1b[31mESC RED\x1b[0m\x1bc",
    "nul": "a\x00b\x01c\x08d\x0be\x0cf\x7fg",
    "nonchar": "x\ufffey\uffffz",
    "surrogate": "lone \ud800 high and \udfff low",
    "bidi": "ok \u202eevil\u202c \u2066iso\u2069",
}


def answer(case: Any) -> dict[str, Any]:
    """The payload named by the case's metadata ``kind``: as answer and tool result; raised
    as an error for ``err`` cases."""
    payload = CONTROL_PAYLOADS[case.metadata["kind"]]
    if case.metadata.get("err"):
        raise RuntimeError(payload)
    return {
        "output": payload,
        "tool_calls": [
            {"name": "look" + payload[:3], "arguments": {"q": payload}, "result": payload}
        ],
    }
