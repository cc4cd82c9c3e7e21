"""The demo's simulated customer: a rule-based user (``--user agenteval.demo.customer:customer``).

It answers from the case's ``user.facts`` only: ``name``, ``order_id``, ``new_address`` and
``confirm`` (what to say when asked to confirm: ``yes``, the default, or ``no``). It stops
(writes the case's stop phrase) once the agent has done, refused or reported anything it
cannot ask it about. Deterministic, so every repeat of a case sees the same customer.
"""

from __future__ import annotations

from typing import Any

from agenteval.cases.conversation import UserSpec


def customer(user: UserSpec, history: list[dict[str, Any]]) -> str | None:
    """The customer's next message, given what the agent said last."""
    facts = user.facts
    if not history:
        return f"Hi, I'm {facts['name']}. {user.goal}"
    said = str(history[-1].get("content") or "")
    low = said.lower()
    if "shall i" in low:
        if str(facts.get("confirm", "yes")).lower() == "no":
            return "No, please leave it as it is."
        return "Yes, please go ahead."
    if "order number" in low and "order_id" in facts:
        return f"It's {facts['order_id']}."
    if "new delivery address" in low and "new_address" in facts:
        return str(facts["new_address"])
    if "full name" in low:
        return str(facts["name"])
    return f"Thank you. {user.stop}"
