"""``evaluate()``: the Python entry point, for notebooks, scripts and pytest tests.

    from agenteval import evaluate

    run = evaluate("cases.jsonl", "my_agent:answer", scorers=[my_scorer], concurrency=16)
    print(run.summary["scorers"]["exact_match"]["mean"])

It writes the same run directory as ``agenteval run`` (a temporary one unless ``out`` is
given), so everything the CLI does with a run (report, gate, rescore) works on it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import tempfile
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from agenteval.agents.base import Agent
from agenteval.cases.case import Case
from agenteval.errors import InputError, RunWriteError, TooManyFailuresError
from agenteval.run.runner import RunSettings
from agenteval.run.session import Session
from agenteval.rundir import RunHeader, TrialRecord, iter_trials, read_header
from agenteval.scorers.config import ScorerConfig
from agenteval.scorers.config import build_scorers as build_scorer_set
from agenteval.scoring.score import ScorerFn

AgentLike = Agent | str | Callable[..., Any]
DatasetLike = str | Path | Iterable[Case | dict[str, Any]]


class Run:
    """A finished (or interrupted) run, read back from its directory."""

    def __init__(self, run_dir: Path, *, interrupted: bool = False) -> None:
        self.run_dir = run_dir
        self.interrupted = interrupted
        self.header: RunHeader = read_header(run_dir)

    @property
    def summary(self) -> dict[str, Any]:
        """The summary stored in run.json (see docs/reports.md)."""
        return self.header.summary or {}

    def trials(self) -> Iterator[TrialRecord]:
        """Stream the recorded trials with their scores."""
        return iter_trials(self.run_dir)

    def scores(self, name: str) -> list[float | None]:
        """Every trial's value for one scorer, in file order (None = not applicable)."""
        return [t.scores[name].value if name in t.scores else None for t in self.trials()]

    def __repr__(self) -> str:
        return f"Run({str(self.run_dir)!r}, trials={self.summary.get('trials', '?')})"


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


def _with_user(agent: Agent, user: Any) -> Agent:
    """``agent`` with the simulated user ``user`` (``evaluate(user=...)``) for the cases
    with a ``user`` block: the same wrapping as ``agenteval run --user``."""
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
    dataset: DatasetLike,
    agent: AgentLike,
    *,
    scorers: Sequence[ScorerFn] = (),
    builtin_scorers: bool = True,
    suite_tools: list[dict[str, Any]] | None = None,
    out: str | Path | None = None,
    concurrency: int = 8,
    repeats: int = 1,
    timeout: float | None = None,
    limit: int | None = None,
    judge: Any | None = None,
    prices: dict[str, Any] | None = None,
    max_failure_rate: float | None = None,
    capture: str = "auto",
    processes: int | None = None,
    executor: Any | None = None,
    capture_proxy: str | None = None,
    user: Any | None = None,
    cache: Any | None = None,
) -> Run:
    """Like :func:`evaluate`, on the running event loop (no Ctrl-C handling)."""
    from agenteval.run.finish import finish_run
    from agenteval.run.runner import RunProgress, _Control

    _check_rate(max_failure_rate)
    options = _options(locals())
    with _dataset_file(dataset) as path:
        session = _session(path, agent, **options)
        try:
            writer, done, _, _ = session.open()  # the dataset is read here, then the snapshot
        except OSError as e:
            raise RunWriteError.from_os_error(e, session.out) from None
    ctl = _Control()
    try:
        await session.arun(writer, done, RunProgress(), ctl)
        if ctl.io_error is not None:
            raise ctl.io_error
        try:
            finish_run(writer, _quiet_console(), live=session.live)
        except OSError as e:  # writing the summary into run.json
            raise RunWriteError.from_os_error(e, session.out / "run.json") from None
    finally:
        with contextlib.suppress(OSError):
            writer.close()
    return _checked(Run(session.out), max_failure_rate)


def _check_rate(rate: float | None) -> None:
    if rate is not None and not 0.0 <= rate <= 1.0:
        raise InputError(f"must be within [0, 1], got {rate!r}", field="max_failure_rate")


def _checked(run: Run, max_failure_rate: float | None) -> Run:
    """``run``, or TooManyFailuresError when ``max_failure_rate`` is given and exceeded."""
    if max_failure_rate is None:
        return run
    from agenteval.run.runner import failure_problem

    problem = failure_problem(run.summary, max_failure_rate)
    if problem is not None:
        raise TooManyFailuresError(problem.replace("--max-failure-rate", "max_failure_rate"), run)
    return run


def evaluate(
    dataset: DatasetLike,
    agent: AgentLike,
    *,
    scorers: Sequence[ScorerFn] = (),
    builtin_scorers: bool = True,
    suite_tools: list[dict[str, Any]] | None = None,
    out: str | Path | None = None,
    concurrency: int = 8,
    repeats: int = 1,
    timeout: float | None = None,
    limit: int | None = None,
    judge: Any | None = None,
    prices: dict[str, Any] | None = None,
    max_failure_rate: float | None = None,
    capture: str = "auto",
    processes: int | None = None,
    executor: Any | None = None,
    capture_proxy: str | None = None,
    user: Any | None = None,
    cache: Any | None = None,
) -> Run:
    """Run ``agent`` over ``dataset``, score every trial, and return the run.

    ``dataset`` is a path (JSONL, JSON, YAML, CSV) or an iterable of Case objects / dicts.
    ``agent`` is an Agent adapter, a ``"module:function"`` string, or a callable taking the
    case (sync or async). ``scorers`` are custom scorers run in addition to the built-in
    deterministic ones (``builtin_scorers=False`` runs only yours); ``run.json`` records
    each by its import path (``module:fn``) so that ``agenteval rescore`` can rebuild it,
    or with ``ref: null`` when it has none (a function of ``__main__`` or a nested one).
    ``out`` is the run directory (a new temporary directory when None). Bad input raises
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

    ``cache`` replays the agent's model calls (docs/cache.md): True (the default
    directory), a directory, or :class:`agenteval.llm.replay.CacheSettings` (directory and
    mode); for adapters whose calls pass through agenteval (``OpenAIChatAgent``,
    ``ToolLoopAgent``, ``HttpJsonAgent``; InputError for a Python agent).

    Safe to call from inside a running event loop (a notebook): the evaluation then runs on
    its own loop in a helper thread. Use :func:`aevaluate` to stay on your loop.
    """
    _check_rate(max_failure_rate)
    kwargs = _options(locals())
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        with _dataset_file(dataset) as path:
            session = _session(path, agent, **kwargs)
            result = session.run()
        run = Run(result.run_dir, interrupted=result.interrupted)
        return run if result.interrupted else _checked(run, max_failure_rate)
    box: dict[str, Any] = {}

    def worker() -> None:
        try:
            box["run"] = asyncio.run(
                aevaluate(dataset, agent, **kwargs, max_failure_rate=max_failure_rate)
            )
        except BaseException as e:  # re-raised in the caller's thread
            box["error"] = e

    t = threading.Thread(target=worker, name="agenteval-evaluate")
    t.start()
    t.join()
    if "error" in box:
        raise box["error"]
    return box["run"]  # type: ignore[no-any-return]


_OPTIONS = (
    "scorers",
    "builtin_scorers",
    "suite_tools",
    "out",
    "concurrency",
    "repeats",
    "timeout",
    "limit",
    "judge",
    "prices",
    "capture",
    "processes",
    "executor",
    "capture_proxy",
    "user",
    "cache",
)


def _options(args: dict[str, Any]) -> dict[str, Any]:
    """The keyword options of evaluate()/aevaluate() that make the session, from locals()."""
    return {k: args[k] for k in _OPTIONS}


def _session(
    dataset: Path,
    agent: AgentLike,
    *,
    scorers: Sequence[ScorerFn],
    builtin_scorers: bool,
    suite_tools: list[dict[str, Any]] | None,
    out: str | Path | None,
    concurrency: int,
    repeats: int,
    timeout: float | None,
    limit: int | None,
    judge: Any | None,
    prices: dict[str, Any] | None,
    capture: str = "auto",
    processes: int | None = None,
    executor: Any | None = None,
    capture_proxy: str | None = None,
    user: Any | None = None,
    cache: Any | None = None,
) -> Session:
    from agenteval.executors import resolve as resolve_executor

    out_path = Path(out) if out is not None else Path(tempfile.mkdtemp(prefix="agenteval-run-"))
    if out is None:
        out_path = out_path / "run"
    config = ScorerConfig(builtin=builtin_scorers, suite_tools=suite_tools, extra=list(scorers))
    if prices is None:
        from agenteval.llm.pricing import PriceTable

        prices = PriceTable.default().to_dict()
    return Session(
        dataset=dataset,
        agent=_with_user(_with_cache(_as_agent(agent, capture, capture_proxy), cache), user),
        scorers=build_scorer_set(config),
        out=out_path,
        settings=RunSettings(concurrency=concurrency, timeout_s=timeout, repeats=repeats),
        limit=limit,
        judge=judge,
        prices=prices,
        command="evaluate()",
        executor=resolve_executor(processes, executor),
    )


def _with_cache(agent: Agent, cache: Any) -> Agent:
    """``agent`` with the replay cache ``cache`` asks for (docs/cache.md)."""
    from agenteval.llm.replay import as_settings, use_cache

    settings = as_settings(cache)
    if settings is not None and not use_cache(agent, settings.replay_cache()):
        raise InputError(
            "applies to agents whose model calls pass through agenteval (OpenAIChatAgent,"
            " ToolLoopAgent, HttpJsonAgent), not a Python agent",
            field="cache",
        )
    return agent


def _quiet_console() -> Any:
    from rich.console import Console

    return Console(quiet=True)
