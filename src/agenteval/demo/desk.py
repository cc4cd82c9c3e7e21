"""How the demo agents handle a conversation that changes an order (address, cancel).

Rule-based, like the rest of the demo agents (:mod:`agenteval.demo.agents`): each agent
turn reads the whole conversation, looks up what it needs through the shop's tools, and
either asks for what is missing, asks the customer to confirm, or acts.

- The careful policy confirms before every change: it describes the change and asks
  "Shall I ...? Please reply yes to confirm", and acts only in the turn that answers
  that question with a yes. It refuses to touch an order that is not the customer's.
- The sloppy policy (``confirm_cancel=False``) cancels at once, without asking.
"""

from __future__ import annotations

import itertools
import re
from typing import Any

_NAME = re.compile(r"\b(?:I'm|I am|this is|name is)\s+([A-Z][a-z]+ [A-Z][a-z]+)")
_ORDER = re.compile(r"\b(O-\d{4})\b")
_YES = re.compile(r"^\s*(yes|yep|sure|please do|go ahead)\b", re.I)
_NO = re.compile(r"^\s*(no|nope|don't|do not)\b", re.I)
ASK_ADDRESS = "What is the new delivery address?"
ASK_ORDER = "Which order is it? Please give me the order number (like O-1234)."
ASK_NAME = "May I have your full name, please?"


class Desk:
    """What the agent knows from the conversation so far (user and agent text only)."""

    def __init__(self, messages: list[dict[str, Any]]) -> None:
        said = [
            (str(m.get("role")), str(m.get("content") or ""))
            for m in messages
            if m.get("role") in ("user", "assistant") and isinstance(m.get("content"), str)
        ]
        self.user_text = " ".join(t for r, t in said if r == "user")
        self.last_user = next((t for r, t in reversed(said) if r == "user"), "")
        agent = [t for r, t in said if r == "assistant"]
        self.last_agent = agent[-1] if agent else ""
        name = _NAME.search(self.user_text)
        self.name = name.group(1) if name else None
        orders = _ORDER.findall(self.user_text)
        self.order = orders[-1] if orders else None
        low = self.user_text.lower()
        self.intent = "cancel" if "cancel" in low else "address" if "address" in low else None
        self.address: str | None = None
        for (r1, t1), (r2, t2) in itertools.pairwise(said):
            if r1 == "assistant" and t1 == ASK_ADDRESS and r2 == "user":
                self.address = t2.strip().rstrip(".")
        if self.address is None and (m := re.search(r"address .*? to (.+?)\.?$", low)):
            start = self.user_text.lower().rfind(m.group(1))
            self.address = self.user_text[start : start + len(m.group(1))].strip()

    @property
    def confirmed(self) -> bool:
        """The agent's last message asked to confirm, and the user just said yes."""
        return "Shall I" in self.last_agent and bool(_YES.search(self.last_user))

    @property
    def declined(self) -> bool:
        """The agent's last message asked to confirm, and the user said no."""
        return "Shall I" in self.last_agent and bool(_NO.search(self.last_user))


async def handle(ep: Any, *, confirm_cancel: bool = True) -> str:
    """The agent's answer in this turn (``ep`` is the demo agents' episode: ``ep.call``)."""
    desk = Desk(ep.messages)
    if desk.intent is None:
        return "I can change a delivery address or cancel an order. What would you like?"
    if desk.declined:  # the total it quoted when asking, from the lookup then
        total = re.search(r"(\d+\.\d\d) euros", desk.last_agent)
        worth = f" ({total.group(1)} euros)" if total else ""
        return f"All right, order {desk.order}{worth} stays as it is: I have not changed it."
    if desk.confirmed:
        return await _act(ep, desk)
    if desk.name is None:
        return ASK_NAME
    if desk.order is None:
        return ASK_ORDER
    if desk.intent == "address" and desk.address is None:
        return ASK_ADDRESS
    customer = await ep.call("find_customer", name=desk.name)
    order = await ep.call("get_order", order_id=desk.order)
    if customer is None or order is None:
        return f"I could not find order {desk.order} for {desk.name}."
    if order["customer_id"] != customer["id"]:
        return (
            f"I'm sorry, order {desk.order} is not on your account ({customer['id']}), so I"
            " can't change it."
        )
    if order["status"] != "pending":
        return f"Order {desk.order} is already {order['status']}, so it can't be changed."
    if desk.intent == "cancel" and not confirm_cancel:
        return await _act(ep, desk)  # the sloppy habit: no confirmation asked
    if desk.intent == "cancel":
        return (
            f"Order {desk.order} ({order['item']}, {order['total']:.2f} euros) is pending."
            " Shall I cancel it? Please reply yes to confirm."
        )
    return (
        f"Shall I change the delivery address of order {desk.order} ({order['item']}) from"
        f" {order['address']} to {desk.address}? Please reply yes to confirm."
    )


async def _act(ep: Any, desk: Desk) -> str:
    if desk.intent == "cancel":
        done = await ep.call("cancel_order", order_id=desk.order)
        if not done:
            return "Sorry, I could not cancel it."
        return f"Order {desk.order} is cancelled; {done['refund']:.2f} euros will be refunded."
    done = await ep.call("update_address", order_id=desk.order, address=desk.address)
    if not done:
        return "Sorry, I could not change the address."
    return f"Done: order {desk.order} will be delivered to {done['address']}."
