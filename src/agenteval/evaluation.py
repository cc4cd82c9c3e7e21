"""``evaluate()``: the Python entry point, for notebooks, scripts and pytest tests.

    from agenteval import evaluate

    run = evaluate("cases.jsonl", "my_agent:answer", scorers=[my_scorer], concurrency=16)
    print(run.summary["scorers"]["exact_match"]["mean"])

It writes the same run directory as ``agenteval run`` (a temporary one, removed with the
returned :class:`Run`, unless ``out`` is given), so everything the CLI does with a run
(report, gate, rescore) works on it. The Run's API: docs/python.md.
:func:`evaluate` and :func:`aevaluate` take the same keyword options
(:class:`EvaluateKwargs`), gathered into one :class:`EvaluateOptions`.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import shutil
import tempfile
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeAlias, TypedDict, Unpack

from rich.console import Console

from agenteval.agents.base import Agent
from agenteval.cases.case import Case
from agenteval.errors import InputError, RunWriteError, TooManyFailuresError
from agenteval.run.result import Run, TrialList
from agenteval.run.runner import RunJudge, RunSettings
from agenteval.run.session import Session
from agenteval.scorers.config import ScorerConfig
from agenteval.scorers.config import build_scorers as build_scorer_set
from agenteval.scoring.score import ScorerFn

if TYPE_CHECKING:
    from agenteval.conversation.users import SimulatedUser
    from agenteval.executors import Executor

__all__ = [
    "AgentLike",
    "DatasetLike",
    "EvaluateKwargs",
    "EvaluateOptions",
    "ExecutorLike",
    "Run",
    "TrialList",
    "UserLike",
    "aevaluate",
    "evaluate",
]

AgentLike = Agent | str | Callable[..., Any]
DatasetLike = str | Path | Iterable[Case | dict[str, Any]]
UserLike: TypeAlias = "SimulatedUser | str | Callable[..., Any] | None"
"""A simulated user: an object such as :func:`agenteval.llm_user` gives, a
``"module:function"`` string or a callable ``fn(user, history)`` (or None: none)."""
ExecutorLike: TypeAlias = "str | Executor | None"
"""Where trials run: ``"process"``, ``"ray"``, an :class:`agenteval.executors.Executor`,
or None (this process, unless ``processes`` > 1)."""


class EvaluateKwargs(TypedDict, total=False):
    """The keyword options of :func:`evaluate` and :func:`aevaluate` (the types; the
    defaults and meanings are :class:`EvaluateOptions`'s)."""

    scorers: Sequence[ScorerFn]
    builtin_scorers: bool
    suite_tools: list[dict[str, Any]] | None
    out: str | Path | None
    concurrency: int
    repeats: int
    timeout: float | None
    limit: int | None
    judge: RunJudge | None
    prices: dict[str, Any] | None
    max_failure_rate: float | None
    capture: str
    processes: int | None
    executor: ExecutorLike
    capture_proxy: str | None
    user: UserLike
    cache: Any | None


@dataclass(frozen=True, kw_only=True, slots=True)
class EvaluateOptions:
    """Every keyword option of :func:`evaluate`/:func:`aevaluate`, with its default (the
    docstring of :func:`evaluate` says what each one does)."""

    scorers: Sequence[ScorerFn] = ()
    builtin_scorers: bool = True
    suite_tools: list[dict[str, Any]] | None = None
    out: str | Path | None = None
    concurrency: int = 8
    repeats: int = 1
    timeout: float | None = None
    limit: int | None = None
    judge: RunJudge | None = None
    prices: dict[str, Any] | None = None
    max_failure_rate: float | None = None
    capture: str = "auto"
    processes: int | None = None
    executor: ExecutorLike = None
    capture_proxy: str | None = None
    user: UserLike = None
    cache: Any | None = None

    @classmethod
    def of(cls, function: str, options: EvaluateKwargs) -> EvaluateOptions:
        """The options ``function(**options)`` was given; TypeError naming an unknown one,
        InputError for a ``max_failure_rate`` outside [0, 1]."""
        known = {f.name for f in dataclasses.fields(cls)}
        for name in options:
            if name not in known:
                raise TypeError(f"{function}() got an unexpected keyword argument {name!r}")
        made = cls(**options)
        rate = made.max_failure_rate
        if rate is not None and not 0.0 <= rate <= 1.0:
            raise InputError(f"must be within [0, 1], got {rate!r}", field="max_failure_rate")
        return made


def _temporary_out() -> Path:
    """A new temporary parent directory for a run evaluate() was given no ``out`` for."""
    return Path(tempfile.mkdtemp(prefix="agenteval-run-"))


def _as_agent(agent: AgentLike, capture: str = "auto", capture_proxy: str | None = None) -> Agent:
    if all(hasattr(agent, m) for m in ("run", "start", "close", "describe")):
        if capture != "auto" or capture_proxy is not None:
            what = "capture" if capture != "auto" else "capture_proxy"
            raise InputError(
                f"{what} applies to a callable or 'module:function' agent; give it to"
                f" PythonAgent(fn, {what}=...) or leave it out for an Agent adapter",
                field="capture",
            )
        return agent  # type: ignore[return-value]
    from agenteval.agents.factory import python_agent  # a function, or a factory of one

    if isinstance(agent, str) or callable(agent):
        return python_agent(agent, capture=capture, capture_proxy=capture_proxy)
    raise InputError(f"agent must be an Agent, 'module:function' or a callable, got {agent!r}")


def _with_user(agent: Agent, user: UserLike) -> Agent:
    """``agent`` with the simulated user ``user`` (``evaluate(user=...)``) for the cases
    with a ``user`` block: the same wrapping as ``agenteval run --user``."""
    # imported on first use, so that importing this module stays light
    from agenteval.conversation.agent import ConversationAgent
    from agenteval.conversation.users import as_user

    simulated = as_user(user)
    if simulated is None:
        return agent
    if isinstance(agent, ConversationAgent):
        if agent.user is not None:
            raise InputError(
                "the agent is a ConversationAgent with its own simulated user: give the user once",
                field="user",
            )
        agent = agent.inner
    return ConversationAgent(agent, simulated)


@contextlib.contextmanager
def _dataset_file(dataset: DatasetLike) -> Iterator[Path]:
    """The dataset as a file: the path given, or the cases written to a temporary JSONL
    file that is removed afterwards (the run keeps its own validated snapshot)."""
    if isinstance(dataset, str | Path):
        yield Path(dataset)
        return
    with tempfile.TemporaryDirectory(prefix="agenteval-cases-") as tmp:
        yield _write_cases(dataset, Path(tmp))


def _write_cases(dataset: Iterable[Case | dict[str, Any]], tmp: Path) -> Path:
    path = tmp / "cases.jsonl"
    with open(path, "w", encoding="utf-8") as f:
        for item in dataset:
            row = (
                item.model_dump(mode="json", exclude_defaults=True)
                if isinstance(item, Case)
                else item
            )
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
    return path


async def aevaluate(
    dataset: DatasetLike, agent: AgentLike, **options: Unpack[EvaluateKwargs]
) -> Run:
    """Like :func:`evaluate` (the same options), on the running event loop (no Ctrl-C
    handling)."""
    return await _aevaluate(dataset, agent, EvaluateOptions.of("aevaluate", options))


async def _aevaluate(dataset: DatasetLike, agent: AgentLike, options: EvaluateOptions) -> Run:
    # imported on first use, so that importing this module stays light
    from agenteval.run.finish import finish_run
    from agenteval.run.runner import RunControl, RunProgress

    with _removed_on_error(options) as temporary:
        with _dataset_file(dataset) as path:
            session = _session(path, agent, options, temporary)
            try:
                opened = session.open()  # the dataset is read here, then the snapshot
            except OSError as e:
                raise RunWriteError.from_os_error(e, session.out) from None
        ctl = RunControl()
        try:
            await session.arun(opened, RunProgress(), ctl)
            if ctl.io_error is not None:
                raise ctl.io_error
            try:
                finish_run(opened.writer, Console(quiet=True), live=session.live)
            except OSError as e:  # writing the summary into run.json
                raise RunWriteError.from_os_error(e, session.out / "run.json") from None
        finally:
            with contextlib.suppress(OSError):
                opened.writer.close()
        run = Run(session.out, temporary=temporary)
    return _checked(run, options.max_failure_rate)


@contextlib.contextmanager
def _removed_on_error(options: EvaluateOptions) -> Iterator[Path | None]:
    """The temporary parent directory of a run given no ``out`` (None when ``out`` is
    given), removed again when the evaluation raises before its Run exists (a Run, once
    made, removes it itself; TooManyFailuresError holds one)."""
    if options.out is not None:
        yield None
        return
    temporary = _temporary_out()
    try:
        yield temporary
    except BaseException:
        shutil.rmtree(temporary, ignore_errors=True)
        raise


def _checked(run: Run, max_failure_rate: float | None) -> Run:
    """``run``, or TooManyFailuresError when ``max_failure_rate`` is given and exceeded."""
    if max_failure_rate is None:
        return run
    # imported on first use, so that importing this module stays light
    from agenteval.run.runner import failure_problem

    problem = failure_problem(run.summary, max_failure_rate)
    if problem is not None:
        raise TooManyFailuresError(problem, run)
    return run


def evaluate(dataset: DatasetLike, agent: AgentLike, **options: Unpack[EvaluateKwargs]) -> Run:
    """Run ``agent`` over ``dataset``, score every trial, and return the run.

    ``dataset`` is a path (JSONL, JSON, YAML, CSV) or an iterable of Case objects / dicts.
    ``agent`` is an Agent adapter, a ``"module:function"`` string, or a callable taking the
    case (sync or async). ``scorers`` are custom scorers run in addition to the built-in
    deterministic ones (``builtin_scorers=False`` runs only yours); ``run.json`` records
    each by its import path (``module:fn``) so that ``agenteval rescore`` can rebuild it,
    or with ``ref: null`` when it has none (a function of ``__main__`` or a nested one).
    ``out`` is the run directory; when None the run is written to a new temporary
    directory that the returned :class:`Run` removes when it is closed or garbage-collected
    (``run.temporary``; nothing is left behind per call). Bad input raises
    :class:`agenteval.errors.InputError` before the agent is called.

    ``capture`` (``"auto"``, ``"otel"``, ``"off"``, or any other mode ``PythonAgent``
    takes) is the tool-call capture of a callable or ``"module:function"`` agent, passed to
    ``PythonAgent(fn, capture=...)``: ``auto`` records the spans the agent emits when the
    capture's package is installed, ``otel`` requires ``opentelemetry-sdk`` (InputError
    otherwise), ``off`` records only what the agent returns. Anything but ``auto`` with an
    Agent adapter is an InputError.

    ``capture_proxy`` (an OpenAI-compatible upstream base URL) gives each call of a
    callable or ``"module:function"`` agent its own URL of a recording proxy in front of
    it, as its ``model_base_url`` keyword (``--capture-proxy``, docs/agents/proxy.md).

    ``cache`` replays the agent's model calls (docs/cache.md): True (the default
    directory), a directory, or :class:`agenteval.llm.replay.CacheSettings` (directory and
    mode); for adapters whose calls pass through agenteval (``OpenAIChatAgent``,
    ``ToolLoopAgent``, ``HttpJsonAgent``; InputError for a Python agent).

    ``max_failure_rate`` (a share in [0, 1]): raise :class:`TooManyFailuresError` (which
    holds the written run) when no trial got an answer or more than that share of the
    trials failed; None (the default) returns the run whatever failed. A run that cannot
    be written raises :class:`RunWriteError` (what was written is kept).

    SIGINT (Ctrl-C), SIGTERM and SIGHUP stop the run gracefully as in ``agenteval run``
    (the run comes back with ``interrupted`` set, not checked against
    ``max_failure_rate``).

    ``processes`` (N > 1) runs the trials on N local worker processes, ``executor``
    ``"ray"`` (or an :class:`agenteval.executors.Executor`, e.g. ``Executor("ray",
    address="127.0.0.1:6379", runtime_env={...})``) on Ray actors: the same execution
    layer as ``agenteval run --processes/--executor``; this process stays the one writer.
    The agent, scorers and judge must be picklable (an InputError naming the first that
    is not, before the run starts); an agent ``"module:make_agent"`` whose function takes
    no parameters is a factory, called once per worker (docs/scale.md). Every worker lost:
    :class:`agenteval.executors.driver.WorkersLostError` (what was written is kept).

    ``user`` plays the user of the cases with a ``user`` block (docs/conversations.md),
    as ``agenteval run --user``/``--user-endpoint`` do: a ``"module:function"`` string or a
    callable ``fn(user, history)`` returning the next message or None, or an LLM user from
    :func:`agenteval.llm_user`. ``run.json`` records it under ``agent.user``, as the CLI
    does. With ``processes``/``executor`` it must be picklable (a module-level function;
    an InputError before the run starts otherwise).

    Safe to call from inside a running event loop (a notebook): the evaluation then runs on
    its own loop in a helper thread. Use :func:`aevaluate` to stay on your loop.
    """
    opts = EvaluateOptions.of("evaluate", options)
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        with _removed_on_error(opts) as temporary, _dataset_file(dataset) as path:
            result = _session(path, agent, opts, temporary).run()
            run = Run(result.run_dir, interrupted=result.interrupted, temporary=temporary)
        return run if result.interrupted else _checked(run, opts.max_failure_rate)
    done: list[Run] = []
    failed: list[BaseException] = []

    def worker() -> None:
        try:
            done.append(asyncio.run(_aevaluate(dataset, agent, opts)))
        except BaseException as e:  # re-raised in the caller's thread
            failed.append(e)

    t = threading.Thread(target=worker, name="agenteval-evaluate")
    t.start()
    t.join()
    if failed:
        raise failed[0]
    return done[0]


def _session(
    dataset: Path, agent: AgentLike, options: EvaluateOptions, temporary: Path | None
) -> Session:
    # imported on first use, so that importing this module stays light
    from agenteval.executors import resolve as resolve_executor

    out_path = temporary / "run" if temporary is not None else Path(options.out or ".")
    config = ScorerConfig(
        builtin=options.builtin_scorers,
        suite_tools=options.suite_tools,
        extra=list(options.scorers),
    )
    prices = options.prices
    if prices is None:
        # imported on first use, so that importing this module stays light
        from agenteval.llm.pricing import PriceTable

        prices = PriceTable.default().to_dict()
    return Session(
        dataset=dataset,
        agent=_with_user(
            _with_cache(_as_agent(agent, options.capture, options.capture_proxy), options.cache),
            options.user,
        ),
        scorers=build_scorer_set(config),
        out=out_path,
        settings=RunSettings(
            concurrency=options.concurrency, timeout_s=options.timeout, repeats=options.repeats
        ),
        limit=options.limit,
        judge=options.judge,
        prices=prices,
        command="evaluate()",
        executor=resolve_executor(options.processes, options.executor),
    )


def _with_cache(agent: Agent, cache: Any) -> Agent:
    """``agent`` with the replay cache ``cache`` asks for (docs/cache.md)."""
    from agenteval.llm.replay import as_settings, use_cache  # only when a cache is asked for

    settings = as_settings(cache)
    if settings is not None and not use_cache(agent, settings.replay_cache()):
        raise InputError(
            "applies to agents whose model calls pass through agenteval (OpenAIChatAgent,"
            " ToolLoopAgent, HttpJsonAgent), not a Python agent",
            field="cache",
        )
    return agent
