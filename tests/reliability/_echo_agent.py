"""An agent (``_echo_agent:echo``) that answers with its input."""

from __future__ import annotations

from typing import Any


def echo(case: Any) -> str:
    """The case input as the answer."""
    return str(case.input)
