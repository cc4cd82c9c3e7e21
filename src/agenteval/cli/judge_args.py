"""The LLM-judge options shared by ``run`` and ``judge``, and the JudgeConfig they make.

Kept apart from :mod:`agenteval.cli.judge` so that ``agenteval run`` imports the judge
package only when a rubric is asked for.
"""

from __future__ import annotations

import argparse
import os
from typing import TYPE_CHECKING

from agenteval.errors import InputError

if TYPE_CHECKING:
    from agenteval.judge import JudgeConfig, Rubric


def add_judge_args(p: argparse.ArgumentParser, *, required: bool = False) -> None:
    """The ``--judge-*`` and ``--rubric`` options (``required``: endpoint, model, rubric)."""
    g = p.add_argument_group("LLM judge")
    g.add_argument(
        "--rubric",
        "--judge-rubric",
        dest="rubric",
        action="append",
        default=[],
        metavar="NAME_OR_FILE[:SCALE]",
        required=required,
        help="a built-in rubric or a template file, optionally :binary/:partial/:likert"
        " (repeatable)",
    )
    g.add_argument("--judge-endpoint", metavar="URL", required=required, help="base URL (…/v1)")
    g.add_argument("--judge-model", metavar="NAME", required=required, help="the judge model")
    g.add_argument(
        "--judge-api-key-env", metavar="VAR", help="environment variable holding the API key"
    )
    g.add_argument(
        "--judge-temperature",
        type=float,
        metavar="T",
        help="default 0, or 0.7 with --judge-samples > 1",
    )
    g.add_argument(
        "--judge-samples",
        type=int,
        default=1,
        metavar="N",
        help="ask N times; majority verdict, a tie is inconclusive (default 1)",
    )
    g.add_argument(
        "--judge-structured",
        action="store_true",
        help="request JSON-schema constrained output {reasoning, grade}",
    )
    g.add_argument("--judge-max-tokens", type=int, metavar="N", help="max tokens per reply")
    g.add_argument(
        "--judge-cache",
        metavar="DIR",
        help="judge cache directory (default: --cache DIR when given, else"
        " $XDG_CACHE_HOME/agenteval/judge)",
    )
    g.add_argument("--no-judge-cache", action="store_true", help="neither read nor write it")
    g.add_argument(
        "--judge-concurrency", type=int, default=8, metavar="N", help="requests in flight"
    )
    g.add_argument("--judge-retries", type=int, default=4, metavar="N", help="retries per request")
    g.add_argument("--judge-timeout", type=float, metavar="S", help="seconds per request attempt")


def parse_rubric_spec(spec: str) -> Rubric:
    """``NAME_OR_FILE`` or ``NAME_OR_FILE:SCALE`` (SCALE one of binary, partial, likert)."""
    # imported when this command runs: the other commands start without it
    from agenteval.judge import SCALES, load_rubric

    head, sep, tail = spec.rpartition(":")
    if sep and head and tail in SCALES:
        return load_rubric(head, scale=tail)
    return load_rubric(spec)


def judge_config_from_args(args: argparse.Namespace) -> JudgeConfig | None:
    """The judge configuration the options describe; None when no ``--rubric`` was given.

    The API key is read from the environment variable named by ``--judge-api-key-env``
    (InputError when it is unset or empty) and never stored anywhere else.
    """
    if not args.rubric:
        return None
    # imported when this command runs: the other commands start without it
    from agenteval.judge import JudgeConfig, default_cache_dir
    from agenteval.llm.http import RetryPolicy

    if not args.judge_endpoint or not args.judge_model:
        raise InputError("--rubric needs --judge-endpoint and --judge-model")
    key = None
    if args.judge_api_key_env:
        key = os.environ.get(args.judge_api_key_env)
        if not key:
            raise InputError(
                f"environment variable {args.judge_api_key_env} is not set",
                field="--judge-api-key-env",
            )
    if args.judge_retries < 0:
        raise InputError("must be at least 0", field="--judge-retries")
    if args.judge_timeout is not None and args.judge_timeout <= 0:
        raise InputError("must be positive", field="--judge-timeout")
    # imported when this command runs: the other commands start without it
    from agenteval.cli.cache_args import judge_cache_from_args

    cache, cache_mode = judge_cache_from_args(args, default_cache_dir())
    return JudgeConfig(
        endpoint=args.judge_endpoint,
        model=args.judge_model,
        rubrics=[parse_rubric_spec(s) for s in args.rubric],
        api_key=key,
        temperature=args.judge_temperature,
        samples=args.judge_samples,
        structured=args.judge_structured,
        cache_dir=cache,
        cache_mode=cache_mode,
        policy=RetryPolicy(max_retries=args.judge_retries, request_timeout_s=args.judge_timeout),
        concurrency=args.judge_concurrency,
        max_tokens=args.judge_max_tokens,
    )
