"""``--agent tool-loop``: the built-in tool-calling agent built from the command line."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from agenteval.agents.tool_loop import ToolLoopAgent, build_toolset
from agenteval.cli._common import parse_params
from agenteval.errors import InputError
from agenteval.llm.http import RetryPolicy


def build_from_args(args: argparse.Namespace, policy: RetryPolicy) -> ToolLoopAgent:
    """The tool-loop agent the command line asks for (``--agent tool-loop``).

    Uses ``--endpoint``, ``--model``, ``--api-key-env``, ``--param``, ``--prompt-template``,
    ``--concurrency`` and the options of :func:`add_arguments`. InputError when the endpoint,
    the model or every tool is missing.
    """
    if not getattr(args, "endpoint", None) or not getattr(args, "model", None):
        raise InputError("--agent tool-loop needs --endpoint BASE_URL and --model NAME")
    modules = list(getattr(args, "tools", None) or [])
    mcp = list(getattr(args, "mcp", None) or [])
    urls = list(getattr(args, "mcp_url", None) or [])
    if not (modules or mcp or urls):
        raise InputError(
            "--agent tool-loop needs tools: --tools MODULE, --mcp CMD or --mcp-url URL"
        )
    template = None
    if getattr(args, "prompt_template", None):
        try:
            template = Path(args.prompt_template).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as e:
            raise InputError(f"cannot be read ({e})", file=args.prompt_template) from None
    key_env = getattr(args, "api_key_env", None) or "OPENAI_API_KEY"
    return ToolLoopAgent(
        args.endpoint,
        args.model,
        build_toolset(modules, mcp, urls),
        api_key=os.environ.get(key_env) or None,
        max_turns=int(getattr(args, "max_turns", 10)),
        policy=policy,
        limit=int(getattr(args, "concurrency", 100) or 100),
        params=parse_params(list(getattr(args, "param", None) or [])),
        prompt_template=template,
        tool_format=getattr(args, "tool_format", "native") or "native",
        answer_on_last_turn=bool(getattr(args, "answer_on_last_turn", False)),
    )
