"""The agenteval pytest plugin (registered by the ``pytest11`` entry point; docs/pytest.md).

    @pytest.mark.agenteval(dataset="cases.jsonl", agent="my_agent:answer")
    def test_case(agenteval_case):
        assert_case(agenteval_case)

- **Marker** ``agenteval(dataset=..., agent=..., **options)``: what to evaluate; ``options``
  are :func:`agenteval.evaluate`'s (``scorers``, ``concurrency``, ``repeats``, ...). A
  relative ``dataset`` is relative to the test file's directory. On a test, a class or a
  module (``pytestmark``).
- **``agenteval_case``**: a test asking for it gets one item per case of the dataset, its
  id the case id (so ``-k``, ``--lf`` and JUnit name cases), and the case's
  :class:`~agenteval.testing.assertions.CaseResult`. Every score is recorded as a JUnit
  property ``agenteval.<scorer>``.
- **``agenteval_run``**: the :class:`agenteval.Run` of the marker's evaluation.

An evaluation runs once per pytest session for each distinct marker (not once per case),
on the first test that needs it, over the cases selected (``-k``, ``--deselect``) or the
whole dataset when a test asks for ``agenteval_run`` itself. Under pytest-xdist the
workers share it: the first one evaluates, the others wait and read the same run. Runs are
written under pytest's temporary directory (pytest keeps the last three sessions), or under
``--agenteval-out DIR``; a failing case's message names its run directory.

This module imports nothing but pytest when pytest starts: the plugin is loaded in every
project where agenteval is installed, so agenteval itself loads only when a test uses it.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from agenteval.evaluation import Run
    from agenteval.testing.assertions import CaseResult

MARKER = "agenteval"
CASE_FIXTURE = "agenteval_case"
RUN_FIXTURE = "agenteval_run"
_SESSION_FILE = ".pytest-session"


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("agenteval")
    group.addoption(
        "--agenteval-out",
        metavar="DIR",
        default=None,
        help="write the runs of @pytest.mark.agenteval tests under DIR (one directory per"
        " evaluation, replaced by the next session) instead of pytest's temporary directory",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "agenteval(dataset, agent, **options): evaluate agent over dataset once per session;"
        " tests asking for agenteval_case get one item per case (docs/pytest.md)",
    )


class _MarkerError(Exception):
    """A marker or dataset the plugin cannot use: one line, shown without a traceback (as
    a collection error while collecting, as the test's failure in a fixture)."""


def _marker(node: pytest.Item | pytest.Function | Any) -> pytest.Mark:
    mark: pytest.Mark | None = node.get_closest_marker(MARKER)
    if mark is None:
        raise _MarkerError(
            f"{node.nodeid}: the {CASE_FIXTURE}/{RUN_FIXTURE} fixtures need"
            ' @pytest.mark.agenteval(dataset="cases.jsonl", agent="module:function")'
        )
    return mark


def _spec(node: Any) -> _Spec:
    """The spec of ``node``'s closest marker, in a fixture (a bad one fails the test)."""
    try:
        return _Spec(_marker(node), Path(str(node.path)))
    except _MarkerError as e:
        pytest.fail(str(e), pytrace=False)


class _Spec:
    """One marker's evaluation: the dataset (resolved), the agent and the options."""

    def __init__(self, mark: pytest.Mark, test_file: Path) -> None:
        if mark.args:
            raise _MarkerError(
                f"@pytest.mark.agenteval takes keywords only (dataset=, agent=), got {mark.args!r}"
            )
        options = dict(mark.kwargs)
        if "dataset" not in options or "agent" not in options:
            raise _MarkerError(f"{test_file}: @pytest.mark.agenteval needs dataset= and agent=")
        if "out" in options:
            raise _MarkerError(
                f"{test_file}: @pytest.mark.agenteval takes no out= (use --agenteval-out DIR)"
            )
        dataset = options.pop("dataset")
        if isinstance(dataset, str | Path) and not Path(dataset).is_absolute():
            dataset = test_file.parent / dataset
        self.dataset = dataset
        self.agent = options.pop("agent")
        self.options = options
        shared, text = _stable([self.dataset, self.agent, sorted(options.items())])
        self.key = hashlib.sha256(text.encode()).hexdigest()[:12]
        if not shared:  # an object known only by its address: this process only
            self.key += f"-{os.getpid()}"

    @property
    def slug(self) -> str:
        name = Path(self.dataset).stem if isinstance(self.dataset, str | Path) else "cases"
        return re.sub(r"[^A-Za-z0-9_.-]+", "_", name)[:40] + "-" + self.key

    def case_ids(self) -> list[str]:
        if not isinstance(self.dataset, str | Path):
            return [_case_id(c) for c in self.dataset]
        # imported on first use, so that importing this module stays light
        from agenteval.dataset import iter_cases

        return [c.id for c in iter_cases(self.dataset)]


def _case_id(item: Any) -> str:
    return str(item.id if hasattr(item, "id") else item["id"])


def _stable(value: Any) -> tuple[bool, str]:
    """(shareable, text): a text equal across processes for equal markers; shareable is
    False when some object is named only by its address (a lambda, a local function)."""
    if value is None or isinstance(value, str | int | float | bool):
        return True, repr(value)
    if isinstance(value, Path):
        return True, repr(str(value.resolve()))
    if isinstance(value, list | tuple):
        parts = [_stable(v) for v in value]
        return all(s for s, _ in parts), "[" + ",".join(t for _, t in parts) + "]"
    if isinstance(value, dict):
        return _stable(sorted(value.items(), key=lambda kv: str(kv[0])))
    qualname = getattr(value, "__qualname__", None)
    module = getattr(value, "__module__", None)
    if isinstance(qualname, str) and module and "<" not in qualname:
        return True, f"{module}:{qualname}"
    text = repr(value)
    if " at 0x" in text or " object at " in text:
        return False, f"{type(value).__qualname__}@{id(value)}"
    return True, f"{type(value).__module__}.{type(value).__qualname__}:{text}"


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if CASE_FIXTURE not in metafunc.fixturenames:
        return
    # imported on first use, so that importing this module stays light
    from agenteval.errors import AgentEvalError

    try:
        spec = _Spec(_marker(metafunc.definition), Path(str(metafunc.definition.path)))
        ids = spec.case_ids()
    except _MarkerError as e:
        raise pytest.Collector.CollectError(str(e)) from None
    except AgentEvalError as e:
        raise pytest.Collector.CollectError(f"@pytest.mark.agenteval dataset: {e}") from None
    metafunc.parametrize(CASE_FIXTURE, ids, ids=ids, indirect=True)


class _Evaluations:
    """The session's evaluations, by marker key (the plugin's only state, held by a
    session-scoped fixture)."""

    def __init__(self, config: pytest.Config, shared: Path) -> None:
        self.shared = shared
        worker = getattr(config, "workerinput", None)
        self.session_id = worker["testrunuid"] if worker else uuid.uuid4().hex
        self.runs: dict[str, Run] = {}
        self.errors: dict[str, BaseException] = {}

    def run(self, spec: _Spec, session: pytest.Session) -> Run:
        """The evaluation of ``spec``, made on first use; one that raised raises again
        (for each case) without being retried."""
        if spec.key in self.errors:
            raise self.errors[spec.key]
        run = self.runs.get(spec.key)
        if run is None:
            try:
                run = self.runs[spec.key] = self._evaluate(spec, session)
            except Exception as e:
                self.errors[spec.key] = e
                raise
        return run

    def _selected(self, spec: _Spec, session: pytest.Session) -> list[str] | None:
        """The case ids the session's items need, or None for the whole dataset."""
        wanted: list[str] = []
        for item in session.items:
            mark = item.get_closest_marker(MARKER)
            names = getattr(item, "fixturenames", ())
            if mark is None or not (CASE_FIXTURE in names or RUN_FIXTURE in names):
                continue
            if _Spec(mark, Path(str(item.path))).key != spec.key:
                continue
            callspec = getattr(item, "callspec", None)
            if callspec is None or CASE_FIXTURE not in callspec.params:
                return None  # a test of the whole run
            wanted.append(callspec.params[CASE_FIXTURE])
        return wanted

    def _evaluate(self, spec: _Spec, session: pytest.Session) -> Run:
        # imported on first use, so that importing this module stays light
        from agenteval.evaluation import Run, evaluate

        selected = self._selected(spec, session)
        root = self.shared
        selection = "all" if selected is None else ",".join(sorted(selected))
        digest = hashlib.sha256(selection.encode()).hexdigest()[:8]
        out = root / f"{spec.slug}-{digest}"
        with _locked(root / f".{out.name}.lock"):
            stamp = out / _SESSION_FILE
            if stamp.is_file() and stamp.read_text() == self.session_id:
                return Run(out)  # another worker of this session evaluated it
            if out.exists():
                import shutil

                shutil.rmtree(out)  # a previous session's run: stale
            dataset: Any = spec.dataset
            if selected is not None:
                keep = set(selected)
                dataset = [c for c in _cases(spec) if _case_id(c) in keep]
            run = evaluate(dataset, spec.agent, out=out, **spec.options)
            stamp.write_text(self.session_id)
        return run


def _cases(spec: _Spec) -> list[Any]:
    if not isinstance(spec.dataset, str | Path):
        return list(spec.dataset)
    # imported on first use, so that importing this module stays light
    from agenteval.dataset import iter_cases

    return list(iter_cases(spec.dataset))


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    """An exclusive lock between the xdist workers of a session (POSIX); elsewhere each
    worker evaluates on its own."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows
        yield
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


@pytest.fixture(scope="session")
def _agenteval_evaluations(
    pytestconfig: pytest.Config, tmp_path_factory: pytest.TempPathFactory
) -> _Evaluations:
    chosen = pytestconfig.getoption("agenteval_out")
    if chosen is not None:
        return _Evaluations(pytestconfig, Path(chosen).resolve())
    base = tmp_path_factory.getbasetemp()
    worker = getattr(pytestconfig, "workerinput", None)
    shared = (base.parent if worker else base) / "agenteval"  # xdist: the session's temp dir
    return _Evaluations(pytestconfig, shared)


@pytest.fixture
def agenteval_run(request: pytest.FixtureRequest, _agenteval_evaluations: _Evaluations) -> Run:
    """The :class:`agenteval.Run` of the closest ``@pytest.mark.agenteval`` (evaluated once
    per session)."""
    return _agenteval_evaluations.run(_spec(request.node), request.session)


@pytest.fixture
def agenteval_case(request: pytest.FixtureRequest, agenteval_run: Run) -> CaseResult:
    """One case's result (the test is parametrised by case id); see ``assert_case``. Each
    score that applied is recorded as the JUnit property ``agenteval.<scorer>``."""
    # imported on first use, so that importing this module stays light
    from agenteval.testing.assertions import CaseResult

    case_id = request.param
    trials = tuple(t for t in agenteval_run.trials if t.case_id == case_id)
    for t in trials:
        suffix = f"[{t.repeat}]" if len(trials) > 1 else ""
        for name, s in t.scores.items():
            if s.status == "not_applicable":
                continue
            value = s.status if s.value is None else f"{s.value:g} {s.status}"
            request.node.user_properties.append((f"agenteval.{name}{suffix}", value))
    return CaseResult(case_id=case_id, trials=trials, run=agenteval_run)
