"""The simulated-user options of ``agenteval run`` (docs/conversations.md)."""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

from agenteval.errors import InputError


def add_user_args(p: argparse.ArgumentParser) -> None:
    """``--user``, ``--user-endpoint``, ``--user-model``, ``--user-api-key-env``..."""
    g = p.add_argument_group("simulated user (cases with a 'user' block)")
    g.add_argument(
        "--user",
        metavar="MODULE:FN",
        help="a Python function plays the user: fn(user, history) -> next message or None",
    )
    g.add_argument("--user-endpoint", metavar="URL", help="an LLM plays the user: base URL (…/v1)")
    g.add_argument("--user-model", metavar="NAME", help="the user simulator's model")
    g.add_argument(
        "--user-api-key-env", metavar="VAR", help="environment variable holding its API key"
    )
    g.add_argument("--user-temperature", type=float, default=0.0, metavar="T", help="default 0")
    g.add_argument(
        "--user-retries", type=int, default=4, metavar="N", help="retries per request (4)"
    )
    g.add_argument(
        "--user-cache",
        metavar="DIR",
        help="the simulator's reply cache (default: --cache DIR when given, else"
        " $XDG_CACHE_HOME/agenteval/user)",
    )
    g.add_argument("--no-user-cache", action="store_true", help="neither read nor write it")


def user_from_args(args: argparse.Namespace) -> Any:
    """The simulated user the options describe, or None when none was asked for."""
    target = getattr(args, "user", None)
    endpoint = getattr(args, "user_endpoint", None)
    model = getattr(args, "user_model", None)
    if target and (endpoint or model):
        raise InputError("choose one simulated user: --user MODULE:FN or --user-endpoint")
    if target:
        # imported when this command runs: the other commands start without it
        from agenteval.conversation.users import PythonUser

        return PythonUser(target)
    if not endpoint and not model:
        return None
    if not endpoint or not model:
        raise InputError("--user-endpoint and --user-model go together")
    key = None
    if args.user_api_key_env:
        key = os.environ.get(args.user_api_key_env)
        if not key:
            raise InputError(
                f"environment variable {args.user_api_key_env} is not set",
                field="--user-api-key-env",
            )
    if args.user_retries < 0:
        raise InputError("must be at least 0", field="--user-retries")
    # imported when this command runs: the other commands start without it
    from agenteval.cli.cache_args import user_cache_from_args
    from agenteval.conversation.users import default_user_cache_dir, llm_user

    cache_dir, cache_mode = user_cache_from_args(args, default_user_cache_dir())
    cache: bool | Path = cache_dir if cache_dir is not None else False
    return llm_user(
        endpoint,
        model,
        api_key=key,
        temperature=args.user_temperature,
        retries=args.user_retries,
        cache=cache,
        cache_mode=cache_mode,
    )
