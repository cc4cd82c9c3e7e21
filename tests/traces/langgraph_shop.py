"""A LangGraph agent for the capture tests: a scripted chat model, real LangChain tools and
a retriever, and only OpenInference's LangChain instrumentation switched on.

The model makes the tool calls written as ``[[call:NAME {json arguments}]]`` in the user's
message, one per turn, then answers ``done: <last tool result>``. A message holding
``[[forgiving]]`` runs on ``langgraph.prebuilt.create_react_agent`` with
``handle_tool_errors=True`` (a tool error goes back to the model and the run goes on);
every other message on ``langchain.agents.create_agent`` (a tool error ends the run).
A message holding ``[[docs]]`` first asks the retriever itself, outside any tool;
``search_docs`` is the same retriever wrapped as a tool, each document shown with its id.
"""

from __future__ import annotations

import json
import re
import warnings
from typing import Any

from langchain.agents import create_agent
from langchain_core.documents import Document
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.prompts import PromptTemplate
from langchain_core.retrievers import BaseRetriever
from langchain_core.tools import ToolException, create_retriever_tool, tool
from langchain_core.utils.function_calling import convert_to_openai_tool
from openinference.instrumentation.langchain import LangChainInstrumentor

with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # create_react_agent: deprecated since LangGraph 1.0
    from langgraph.prebuilt import ToolNode, create_react_agent

LangChainInstrumentor().instrument()  # the framework's own instrumentation, nothing else

_CALL = re.compile(r"\[\[call:(\w+) (\{.*?\})\]\]")


class ScriptedChatModel(BaseChatModel):
    """Stands in for a real chat model (see the module docstring)."""

    model_name: str = "scripted-1"

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def bind_tools(self, tools: Any, **kw: Any) -> Any:
        return self.bind(tools=[convert_to_openai_tool(t) for t in tools], **kw)

    def _generate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kw: Any
    ) -> ChatResult:
        question = next(str(m.content) for m in messages if isinstance(m, HumanMessage))
        steps = _CALL.findall(question)
        done = sum(1 for m in messages if isinstance(m, AIMessage) and m.tool_calls)
        if done < len(steps):
            name, args = steps[done]
            call = {"name": name, "args": json.loads(args), "id": f"call_{done}_{len(question)}"}
            msg = AIMessage("", tool_calls=[call])
        else:
            last = next((m for m in reversed(messages) if isinstance(m, ToolMessage)), None)
            msg = AIMessage(f"done: {last.content if last is not None else 'nothing'}")
        words = sum(len(str(m.content).split()) for m in messages)
        msg.usage_metadata = {
            "input_tokens": words,
            "output_tokens": 2,
            "total_tokens": words + 2,
        }
        return ChatResult(generations=[ChatGeneration(message=msg)])


@tool
def find_customer(name: str) -> dict[str, Any]:
    """Look a customer up by first name."""
    if name == "crash":
        raise ValueError("customer database is down")
    return {"id": len(name), "name": name}


@tool
def count_orders(customer_id: int) -> int:
    """How many orders a customer has placed."""
    return customer_id * 10


@tool
def refund(order: int, reason: str) -> str:
    """Refund an order (order 0: an error the tool reports itself, as a ToolException)."""
    if order == 0:
        raise ToolException("no such order")
    return f"refunded {order}: {reason}"


refund.handle_tool_error = True  # the ToolException's message goes back to the model


@tool
def escalate_to_agent(topic: str) -> str:
    """Hand the conversation to a human agent."""
    return f"ticket opened: {topic}"


class PolicyRetriever(BaseRetriever):
    """Two policy documents; their ids are in the metadata (where OpenInference records
    them: it does not record ``Document.id``)."""

    def _get_relevant_documents(self, query: str, *, run_manager: Any = None) -> list[Document]:
        return [
            Document("Refunds take 5 days.", metadata={"doc_id": "policy-refunds"}),
            Document("Orders ship in 2 days.", metadata={"doc_id": "policy-shipping"}),
        ]


RETRIEVER = PolicyRetriever()
search_docs = create_retriever_tool(
    RETRIEVER,
    "search_docs",
    "Search the shop's policies.",
    document_prompt=PromptTemplate.from_template("[{doc_id}] {page_content}"),
)
TOOLS = [find_customer, count_orders, refund, escalate_to_agent, search_docs]
AGENT = create_agent(ScriptedChatModel(), TOOLS)
FORGIVING = create_react_agent(ScriptedChatModel(), ToolNode(TOOLS, handle_tool_errors=True))


def _graph(text: str) -> Any:
    return FORGIVING if "[[forgiving]]" in text else AGENT


def answer(case: Any) -> str:
    text = str(case.input)
    if "[[docs]]" in text:
        RETRIEVER.invoke(text)
    return str(_graph(text).invoke({"messages": [("user", text)]})["messages"][-1].content)


async def aanswer(case: Any) -> str:
    text = str(case.input)
    if "[[docs]]" in text:
        await RETRIEVER.ainvoke(text)
    state = await _graph(text).ainvoke({"messages": [("user", text)]})
    return str(state["messages"][-1].content)
