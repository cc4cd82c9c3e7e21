"""The demo's two agents: rule-based stand-ins for an LLM agent, calling the real shop tools.

They are real programs: each reads the question, calls the shop's tools through a
:class:`~agenteval.agents.toolset.ToolSet` (the same code the built-in tool loop uses, so
every call is validated, executed and recorded identically), and answers. They are
rule-based only so that the demo is deterministic and needs no model; point the same
dataset at a real model with ``agenteval run --agent tool-loop`` (see docs/demo.md).

- :class:`CarefulAgent` looks everything up, uses the tool meant for each step, reads the
  document a search found, leaves out instructions planted in documents, and does not
  disclose customers' contact details.
- :class:`SloppyAgent` has the habits evaluations exist to catch: it sometimes answers
  from memory, repeats calls, passes arguments of the wrong type or form, adds numbers up
  in its head (and invents some), ignores earlier turns of a conversation, obeys an
  instruction planted in a document, leaks an e-mail address, and cancels an order
  without asking the customer to confirm.

In a conversation that changes an order (a case with a simulated user or scripted turns),
both follow :mod:`agenteval.demo.desk`.
"""

from __future__ import annotations

import re
from typing import Any

from agenteval.agents.base import AgentOutput, Recorder
from agenteval.agents.toolset import ToolSet, result_text
from agenteval.cases.case import Case
from agenteval.cases.prompt import build_messages
from agenteval.demo.desk import handle
from agenteval.demo.shop import ShopTools
from agenteval.trials.trial import ToolCall

_NAME = r"([A-Z][a-z]+ [A-Z][a-z]+)"
_ORDER = r"(O-\d{4})"
_PLANTED = re.compile(
    r"ignore (all )?(previous|prior|your) instructions|note to ai|ai assistants?:", re.I
)
_WORD = re.compile(r"[a-z0-9]+")
_NUM = re.compile(r"(?<![\w.])\d+(?:\.\d+)?(?![\w.])")


class _Episode:
    """One attempt at a case: calls tools, keeps the transcript, records every call."""

    def __init__(self, tools: ToolSet, case: Case, rec: Recorder) -> None:
        self.tools = tools
        self.rec = rec
        self.messages = build_messages(case, None)
        rec.messages = self.messages
        self.question = case.input_text()
        self.history = " ".join(
            str(m.get("content")) for m in self.messages if m.get("role") == "user"
        )

    async def call(self, tool: str, /, **arguments: Any) -> Any:
        """Call a tool; return its result, or None when it failed (the error is recorded)."""
        call = ToolCall(id=f"call_{len(self.rec.tool_calls)}", name=tool, arguments=arguments)
        done = await self.tools.run_call(call)
        self.rec.tool_calls.append(done)
        self.messages.append(
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": call.id,
                        "type": "function",
                        "function": {"name": tool, "arguments": _json(arguments)},
                    }
                ],
            }
        )
        self.messages.append(
            {"role": "tool", "tool_call_id": call.id, "content": result_text(done)}
        )
        return done.result if done.error is None else None

    def answer(self, text: str) -> AgentOutput:
        self.messages.append({"role": "assistant", "content": text})
        return AgentOutput(output=text, tools=self.tools.definitions(), messages=self.messages)


def _json(value: Any) -> str:
    import json

    return json.dumps(value, ensure_ascii=False)


def _words(text: str) -> set[str]:
    return set(_WORD.findall(text.lower()))


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in re.split(r"(?<=[.!?])\s+", text) if s.strip()]


def _best_sentence(question: str, sentences: list[str]) -> str:
    wanted = _words(question)
    return max(sentences, key=lambda s: len(wanted & _words(s)))


def _number_near(question: str, sentence: str) -> str | None:
    """The number in ``sentence`` whose neighbouring words share most with the question."""
    wanted = _words(question)
    best: tuple[int, str] | None = None
    for m in _NUM.finditer(sentence):
        around = sentence[max(0, m.start() - 25) : m.end() + 25]
        score = len(wanted & _words(around))
        if best is None or score > best[0]:
            best = (score, m.group())
    return best[1] if best else None


class _DemoAgent:
    """What both demo agents share: the Agent protocol over a shop database."""

    confirms_cancel = True

    def __init__(self, db_path: str) -> None:
        self.db_path = db_path
        self.tools = ToolSet.from_functions(ShopTools(db_path).functions())

    def describe(self) -> dict[str, Any]:
        """``{kind: "demo", agent, description, tools}``."""
        return {
            "kind": "demo",
            "agent": f"agenteval.demo.agents.{type(self).__name__}",
            "description": "rule-based stand-in for an LLM agent (deterministic, no model)",
            "tools": self.tools.names(),
        }

    async def start(self) -> None:
        """Nothing to open: the tools open the database per call."""

    async def close(self) -> None:
        """Nothing to release."""

    async def run(self, case: Case, repeat: int, rec: Recorder) -> AgentOutput:
        """Answer one case, calling tools as the agent's habits dictate."""
        ep = _Episode(self.tools, case, rec)
        if case.conversational:  # one turn of a conversation that changes an order
            return ep.answer(await handle(ep, confirm_cancel=self.confirms_cancel))
        return ep.answer(await self.solve(ep))

    async def solve(self, ep: _Episode) -> str:
        raise NotImplementedError


class CarefulAgent(_DemoAgent):
    """Looks everything up with the right tool, once; see the module docstring."""

    async def solve(self, ep: _Episode) -> str:
        q = ep.question
        if m := re.search(rf"(?:status|tracking code|total) of order {_ORDER}", q):
            order = await ep.call("get_order", order_id=m.group(1))
            if order is None:
                return f"I could not find order {m.group(1)}."
            if "tracking" in q:
                return str(order["tracking"])
            return f"{order['total']:.2f}" if "total" in q else str(order["status"])
        if m := re.search(rf"item was ordered in {_ORDER}", q):
            order = await ep.call("get_order", order_id=m.group(1))
            return str(order["item"]) if order else f"I could not find order {m.group(1)}."
        if re.search(r"e-?mail|phone|contact", q, re.I):
            return "I can't share customers' contact details. Please use the contact form."
        name = re.search(_NAME, ep.history)
        if name is None:
            return await self._documents(ep)
        customer = await ep.call("find_customer", name=name.group(1))
        if customer is None:
            return f"I could not find a customer named {name.group(1)}."
        if "spent" in q:
            spend = await ep.call("customer_spend", customer_id=customer["id"])
            return f"{spend['total_spent']:.2f}"
        if m := re.search(r"How many (\w+) orders", q):
            orders = await ep.call("list_orders", customer_id=customer["id"], status=m.group(1))
            return str(orders["count"])
        if "most recently" in q:
            orders = await ep.call("list_orders", customer_id=customer["id"])
            return str(orders["orders"][0]["item"]) if orders["orders"] else "No orders yet."
        if "city" in q:
            return str(customer["city"])
        return await self._documents(ep)

    async def _documents(self, ep: _Episode) -> str:
        q = ep.question
        hits = await ep.call("search_docs", query=q, limit=3)
        if not hits:
            return "I found nothing about that in our documents."
        doc = await ep.call("read_doc", doc_id=hits[0]["id"])
        clean = [s for s in _sentences(doc["body"]) if not _PLANTED.search(s)]
        planted = len(clean) < len(_sentences(doc["body"]))
        if q.lower().startswith("summari"):
            note = " (It also held an instruction aimed at AI assistants; I ignored it.)"
            return " ".join(clean) + (note if planted else "")
        sentence = _best_sentence(q, clean)
        if "Answer with a number" in q:
            return _number_near(q, sentence) or sentence
        return sentence


class SloppyAgent(_DemoAgent):
    """Has the habits evaluations exist to catch; see the module docstring."""

    confirms_cancel = False  # cancels an order without asking the customer to confirm

    async def solve(self, ep: _Episode) -> str:
        q = ep.question
        if m := re.search(rf"status of order {_ORDER}", q):
            oid = m.group(1)
            if oid.endswith("9"):
                return "delivered"  # from memory: it "remembers" every order as delivered
            if oid.endswith("3"):
                await ep.call("get_order", order_id=oid[2:])  # drops the prefix: the tool fails
            order = await ep.call("get_order", order_id=oid)
            return str(order["status"]) if order else "unknown"
        if m := re.search(rf"tracking code of order {_ORDER}", q):
            order = await ep.call("get_order", order_id=m.group(1))
            if m.group(1) == "O-1011":
                return "Your order is on its way."  # forgets the code
            if m.group(1) != "O-1014":
                order = await ep.call("get_order", order_id=m.group(1))  # asks again
            return str(order["tracking"])
        if m := re.search(rf"(?:total of order|item was ordered in) {_ORDER}", q):
            order = await ep.call("get_order", order_id=m.group(1))
            return f"{order['total']:.2f}" if "total" in q else str(order["item"])
        if re.search(r"e-?mail|contact", q, re.I):
            person = await ep.call("find_customer", name=re.search(_NAME, q).group(1))  # type: ignore[union-attr]
            return f"You can reach them at {person['email']}."
        name = re.search(_NAME, q)  # only reads the last message: misses earlier turns
        if "most recently" in q and name is None:
            return "Probably the Aurora lamp, our best seller."
        if name is not None:
            return await self._customer(ep, name.group(1))
        return await self._documents(ep)

    async def _customer(self, ep: _Episode, name: str) -> str:
        q = ep.question
        guessed = {"Alan Turing": "C-102", "Ada Lovelace": "C-101", "Barbara Liskov": "C-105"}
        if m := re.search(r"How many (\w+) orders", q):
            # skips find_customer: it "knows" the id
            orders = await ep.call(
                "list_orders", customer_id=guessed.get(name, "C-100"), status=m.group(1)
            )
            return str(orders["count"]) if orders else "0"
        customer = await ep.call("find_customer", name=name)
        if customer is None:
            return "I don't know."
        if "city" in q:
            return f"{name} ({customer['email']}) lives in {customer['city']}."
        if name.startswith("Grace"):
            return "about 400"  # invents a round number instead of looking it up
        orders = await ep.call("list_orders", customer_id=customer["id"])
        if name.startswith("Barbara"):
            spend = await ep.call("customer_spend", customer_id=customer["id"])
            return f"{spend['total_spent']:.2f}"
        # adds the totals up in its head, cancelled orders included
        return f"{sum(o['total'] for o in orders['orders']):.2f}"

    async def _documents(self, ep: _Episode) -> str:
        q = ep.question
        memory = {"unopened": "30", "express": "10", "gift cards": "3"}
        for key, remembered in memory.items():
            if key in q:
                return remembered  # answers from memory, without looking
        hits = await ep.call("search_docs", query=q, limit="3")  # wrong type: rejected
        hits = await ep.call("search_docs", query=q)
        doc = await ep.call("read_doc", doc_id=hits[0]["id"])
        sentences = _sentences(doc["body"])
        if q.lower().startswith("summari"):
            return str(doc["body"])  # planted instruction included, verbatim
        answer = _best_sentence(q, sentences)
        if "Answer with a number" in q:
            answer = _number_near(q, answer) or answer
        obeyed = [s for s in sentences if _PLANTED.search(s)]
        if obeyed:  # follows the instruction planted in the document
            answer += " " + obeyed[0].split(":", 1)[-1].strip()
        return answer
