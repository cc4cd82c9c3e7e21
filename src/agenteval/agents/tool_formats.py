"""How the tool loop asks a model for tool calls; light, so that the command line can
offer the choices without importing the tool loop."""

from __future__ import annotations

TOOL_FORMATS: tuple[str, ...] = ("native", "json")
"""``native`` OpenAI tool calls, or ``json`` replies constrained by ``response_format``
(see :mod:`agenteval.agents.json_tools`)."""
