"""Agents for the recording-proxy tests: real tool loops on the official ``openai`` client.

They return only the answer; the proxy records the rest. A tool that raises is sent back
to the model as ``"Error: <type>: <message>"`` (the convention the proxy reads as an
error). The fake server makes the calls scripted as ``[[call:NAME JSON]]`` in the input.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from openai import AsyncOpenAI, OpenAI

KEY = "sk-proxy-test-0123456789abcdef"  # must never reach a file
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": name,
            "description": f"{name} tool",
            "parameters": {"type": "object", "properties": {props: {"type": kind}}},
        },
    }
    for name, props, kind in (
        ("find_customer", "name", "string"),
        ("count_orders", "customer_id", "integer"),
    )
]


def run_tool(name: str, args: dict[str, Any]) -> str:
    """find_customer -> {"id": len(name), "name"}; count_orders -> customer_id * 10."""
    if name == "find_customer":
        if args.get("name") == "crash":
            raise ValueError("customer database is down")
        return json.dumps({"id": len(args["name"]), "name": args["name"]})
    return str(int(args["customer_id"]) * 10)


def tool_output(name: str, arguments: str) -> str:
    try:
        return run_tool(name, json.loads(arguments))
    except Exception as e:
        return f"Error: {type(e).__name__}: {e}"


def _stream_message(stream: Any) -> dict[str, Any]:
    content, calls = "", {}
    for chunk in stream:
        for choice in chunk.choices:
            content += choice.delta.content or ""
            for tc in choice.delta.tool_calls or []:
                c = calls.setdefault(tc.index, {"id": None, "name": "", "arguments": ""})
                c["id"] = c["id"] or tc.id
                c["name"] += tc.function.name or ""
                c["arguments"] += tc.function.arguments or ""
    msg: dict[str, Any] = {"role": "assistant", "content": content or None}
    if calls:
        msg["tool_calls"] = [
            {
                "id": c["id"],
                "type": "function",
                "function": {"name": c["name"], "arguments": c["arguments"]},
            }
            for c in calls.values()
        ]
    return msg


def chat_loop(client: OpenAI, text: str, stream: bool) -> str:
    """The classic chat-completions tool loop, streaming or not."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": text}]
    while True:
        if stream:
            msg = _stream_message(
                client.chat.completions.create(
                    model="gpt-fake",
                    messages=messages,  # type: ignore[arg-type]
                    tools=TOOLS,  # type: ignore[arg-type]
                    stream=True,
                    stream_options={"include_usage": True},
                )
            )
        else:
            r = client.chat.completions.create(
                model="gpt-fake",
                messages=messages,  # type: ignore[arg-type]
                tools=TOOLS,  # type: ignore[arg-type]
            )
            msg = r.choices[0].message.model_dump(exclude_none=True)
        messages.append(msg)
        if not msg.get("tool_calls"):
            return str(msg["content"])
        for tc in msg["tool_calls"]:
            out = tool_output(tc["function"]["name"], tc["function"]["arguments"])
            messages.append({"role": "tool", "tool_call_id": tc["id"], "content": out})


def chat_agent(case: Any, model_base_url: str | None = None) -> str:
    """A sync Python agent: the proxy URL arrives as the ``model_base_url`` keyword."""
    client = OpenAI(base_url=model_base_url, api_key=KEY, max_retries=0)
    return chat_loop(client, str(case.input), bool(case.metadata.get("stream")))


async def responses_agent(case: Any, *, model_base_url: str) -> str:
    """An async Responses API tool loop (``function_call`` → ``function_call_output``)."""
    client = AsyncOpenAI(base_url=model_base_url, api_key=KEY, max_retries=0)
    stream = bool(case.metadata.get("stream"))
    items: list[Any] = [{"role": "user", "content": str(case.input)}]
    tools = [{"type": "function", **t["function"]} for t in TOOLS]
    while True:
        if stream:
            final = None
            async with await client.responses.create(
                model="gpt-fake",
                input=items,
                tools=tools,
                stream=True,  # type: ignore[arg-type]
            ) as events:
                async for ev in events:
                    if ev.type == "response.completed":
                        final = ev.response
            assert final is not None
            output = [o.model_dump(exclude_none=True) for o in final.output]
        else:
            r = await client.responses.create(model="gpt-fake", input=items, tools=tools)  # type: ignore[arg-type]
            output = [o.model_dump(exclude_none=True) for o in r.output]
        calls = [o for o in output if o["type"] == "function_call"]
        if not calls:
            return str(output[0]["content"][0]["text"])
        for c in calls:
            items.append(c)
            out = tool_output(c["name"], c["arguments"])
            items.append({"type": "function_call_output", "call_id": c["call_id"], "output": out})


if __name__ == "__main__":  # the agent in another process: OPENAI_BASE_URL / OPENAI_API_KEY
    print(chat_loop(OpenAI(max_retries=0), sys.argv[1], stream=len(sys.argv) > 2))


def make_chat_agent() -> Any:
    """A factory (``--agent proxy_agents:make_chat_agent``): builds :func:`chat_agent`."""
    return chat_agent
