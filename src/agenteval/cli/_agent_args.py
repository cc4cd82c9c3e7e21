"""The agent under test, as ``agenteval run``'s flags name it.

``--agent MODULE:FN`` (a Python callable, or a factory of one), ``--agent tool-loop``
(agenteval's own tool loop over ``--tools``), ``--endpoint URL --model NAME`` (an
OpenAI-compatible chat endpoint) or ``--http-config FILE`` (any HTTP/JSON endpoint): exactly
one. With ``--otlp-receiver`` an HTTP agent runs behind agenteval's OTLP receiver, which
collects the spans it exports (:class:`agenteval.traces.receiver_agent.ReceiverAgent`).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agenteval.cli._common import parse_params, say
from agenteval.errors import InputError

if TYPE_CHECKING:  # the parser is built without the agent modules (start-up)
    from agenteval.agents.base import Agent
    from agenteval.llm.http import RetryPolicy


def build_agent(args: argparse.Namespace) -> Agent:
    """The adapter the arguments name, behind the OTLP receiver with ``--otlp-receiver``."""
    address = getattr(args, "otlp_receiver", None)
    if not address:
        return _adapter(args)
    if args.agent and args.agent != "tool-loop":
        raise InputError(
            "--otlp-receiver needs an HTTP agent (--http-config, --endpoint or --agent"
            " tool-loop); a Python --agent is captured in-process (--capture)"
            # imported when this command runs: the other commands start without it
        )
    from agenteval._util.net import is_loopback
    from agenteval.traces.receiver import OtlpReceiver, parse_address
    from agenteval.traces.receiver_agent import ReceiverAgent

    host, port = parse_address(address)
    receiver = OtlpReceiver(host, port, log=say)
    if not is_loopback(host):
        print(
            f"agenteval: warning: the OTLP receiver listens on {host}, not loopback: anyone"
            " who can reach it can send spans into this run",
            file=sys.stderr,
        )
    if not receiver.protobuf:
        print(
            "agenteval: warning: the OTLP receiver takes only OTLP/JSON: protobuf needs"
            " opentelemetry-proto: pip install -e '.[otel]'",
            file=sys.stderr,
        )
    # for processes agenteval starts, and ${AGENTEVAL_OTLP_ENDPOINT} in an --http-config
    os.environ["AGENTEVAL_OTLP_ENDPOINT"] = receiver.endpoint
    print(
        f"agenteval: OTLP receiver on {receiver.traces_url}"
        f" (AGENTEVAL_OTLP_ENDPOINT={receiver.endpoint})",
        file=sys.stderr,
        flush=True,
    )
    return ReceiverAgent(_adapter(args), receiver, args.otlp_wait)


def _adapter(args: argparse.Namespace) -> Agent:
    """The adapter the arguments name; InputError when they name none or several."""
    proxy = getattr(args, "capture_proxy", None)
    if proxy and (args.agent == "tool-loop" or not (args.agent or args.http_config)):
        raise InputError("--capture-proxy applies to --agent MODULE:FN and --http-config FILE")
    if args.agent == "tool-loop":
        from agenteval.cli._tool_loop import build_from_args  # only this agent needs tools

        return build_from_args(args, retry_policy(args))
    chosen = [x for x in (args.agent, args.endpoint, args.http_config) if x]
    if len(chosen) != 1:
        raise InputError(
            "choose exactly one agent: --agent MODULE:FN, --endpoint URL, or --http-config FILE"
        )
    if args.agent:
        from agenteval.agents.factory import python_agent  # a function, or a factory of one

        return python_agent(
            args.agent, capture=getattr(args, "capture", "auto"), capture_proxy=proxy
        )
    policy = retry_policy(args)
    if args.http_config:
        # imported when this command runs: the other commands start without it
        from agenteval.agents.http_json import HttpJsonAgent

        return HttpJsonAgent(
            args.http_config, policy=policy, limit=args.concurrency, capture_proxy=proxy
        )
    if not args.model:
        raise InputError("--endpoint needs --model NAME")
    # imported when this command runs: the other commands start without it
    from agenteval.agents.openai_chat import OpenAIChatAgent

    template = None
    if args.prompt_template:
        try:
            template = Path(args.prompt_template).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as e:
            raise InputError(f"cannot be read ({e})", file=args.prompt_template) from None
    return OpenAIChatAgent(
        args.endpoint,
        args.model,
        api_key=os.environ.get(args.api_key_env) or None,
        prompt_template=template,
        policy=policy,
        limit=args.concurrency,
        params=parse_params(args.param),
    )


def retry_policy(args: argparse.Namespace) -> RetryPolicy:
    from agenteval.llm.http import RetryPolicy  # aiohttp: only the agents that need it

    return RetryPolicy(
        max_retries=args.max_retries,
        base_s=args.retry_base,
        request_timeout_s=args.request_timeout,
    )


def receiver_settings(agent: Agent) -> dict[str, Any]:
    """``otlp_receiver`` / ``otlp_wait_s`` for run.json's settings (not the fingerprint:
    an ``auto`` port differs on ``--resume``)."""
    receiver = getattr(agent, "receiver", None)
    if receiver is None:
        return {}
    return {"otlp_receiver": receiver.traces_url, "otlp_wait_s": getattr(agent, "wait_s", None)}
