"""The pytest plugin, driven through pytest itself (pytester): one item per case named by
its id, one evaluation per session (shared by xdist workers), -k evaluates only the
selected cases, -x stops, JUnit names cases, and bad markers or datasets are one line."""

from __future__ import annotations

import os
import sys
import tomllib
import xml.etree.ElementTree as ET
from importlib import metadata
from pathlib import Path

import pytest

import agenteval.evaluation
import agenteval.testing.assertions  # noqa: F401  # imported once: pytester keeps it

ROOT = Path(__file__).resolve().parents[2]  # the checkout (not conftest's: xdist may load another)

PLUGIN = ("-p", "agenteval.testing.pytest_plugin", "-p", "no:cacheprovider")

CASES = """\
{"id": "capital", "input": "What is the capital of France?", "expected": "Paris"}
{"id": "sum", "input": "What is 19000 + 753?", "expected": "19753"}
{"id": "greeting", "input": "Say hello", "expected": "hello"}
"""

AGENT = """\
from pathlib import Path

def answer(case):
    with open(Path(__file__).with_name("calls.txt"), "a") as f:
        f.write(case.id + "\\n")
    if case.id == "sum":
        return "19,735"
    return {"capital": "Paris"}.get(case.id, "hello")
"""

TESTS = """\
import pytest
from agenteval.testing import assert_case, assert_scores

pytestmark = pytest.mark.agenteval(dataset="cases.jsonl", agent="counting_agent:answer")

def test_case(agenteval_case):
    assert_case(agenteval_case)

def test_again(agenteval_case):
    assert agenteval_case.trials[0].output is not None
"""


@pytest.fixture
def project(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")  # the plugin comes from -p
    pytester.syspathinsert()
    pytester.makefile(".jsonl", cases=CASES)
    pytester.makepyfile(counting_agent=AGENT, test_agent=TESTS)
    return pytester


def calls(project: pytest.Pytester) -> list[str]:
    path = project.path / "calls.txt"
    return path.read_text().split() if path.exists() else []


def test_one_item_per_case_named_by_its_id(project: pytest.Pytester) -> None:
    result = project.runpytest(*PLUGIN, "--collect-only", "-q")
    assert result.ret == 0
    names = [line for line in result.outlines if "::" in line]
    assert names == [
        "test_agent.py::test_case[capital]",
        "test_agent.py::test_case[sum]",
        "test_agent.py::test_case[greeting]",
        "test_agent.py::test_again[capital]",
        "test_agent.py::test_again[sum]",
        "test_agent.py::test_again[greeting]",
    ]
    assert calls(project) == []  # collecting runs no agent


def test_a_failing_case_prints_each_failing_score_and_the_module_evaluates_once(
    project: pytest.Pytester,
) -> None:
    result = project.runpytest(*PLUGIN)
    result.assert_outcomes(passed=5, failed=1)
    result.stdout.fnmatch_lines(
        [
            "*AssertionError: case 'sum': 1 score(s) not passed",
            "*exact_match  failed 0.00  expected 19753, got 19735: differ by 18, more than 0.01",
            "*answer: '19,735'",
            "*run: *agenteval*",
        ]
    )
    assert sorted(calls(project)) == ["capital", "greeting", "sum"]  # 6 tests, 3 agent calls


def test_k_evaluates_only_the_selected_cases(project: pytest.Pytester) -> None:
    result = project.runpytest(*PLUGIN, "-k", "capital")
    result.assert_outcomes(passed=2, deselected=4)
    assert calls(project) == ["capital"]


def test_x_stops_at_the_first_failing_case(project: pytest.Pytester) -> None:
    result = project.runpytest(*PLUGIN, "-x")
    result.assert_outcomes(passed=1, failed=1)
    assert "stopping after 1 failures" in result.stdout.str()


def test_a_test_of_the_whole_run_evaluates_the_whole_dataset(project: pytest.Pytester) -> None:
    project.makepyfile(
        test_floor="""
import pytest
from agenteval.testing import assert_scores



@pytest.mark.agenteval(dataset="cases.jsonl", agent="counting_agent:answer")
def test_floor(agenteval_run):
    assert len(agenteval_run.trials) == 3
    assert_scores(agenteval_run, exact_match=0.9)
"""
    )
    result = project.runpytest(*PLUGIN, "test_floor.py", "test_agent.py", "-k", "floor or capital")
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines(
        ["*exact_match: mean 0.667 < floor 0.9 (2 of 3 passed)", "*sum: 0.00*"]
    )
    assert sorted(calls(project)) == ["capital", "greeting", "sum"]  # once, for both files


def test_junit_has_a_testcase_per_case_with_the_reason_and_the_scores(
    project: pytest.Pytester,
) -> None:
    xml = project.path / "junit.xml"
    project.runpytest(*PLUGIN, f"--junitxml={xml}", "-k", "test_case")
    cases = {tc.get("name"): tc for tc in ET.parse(xml).getroot().iter("testcase")}
    assert sorted(cases) == ["test_case[capital]", "test_case[greeting]", "test_case[sum]"]
    (failure,) = cases["test_case[sum]"].iter("failure")
    assert "expected 19753, got 19735" in (failure.text or "") + (failure.get("message") or "")
    props = {p.get("name"): p.get("value") for p in cases["test_case[capital]"].iter("property")}
    assert props["agenteval.exact_match"] == "1 passed"
    assert "agenteval.tool_selection" not in props  # not applicable: not recorded


def test_xdist_workers_share_one_evaluation(project: pytest.Pytester) -> None:
    """Slower (~10 s here): two worker processes start."""
    env = {"PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(project.path)])}
    for k, v in env.items():
        os.environ[k] = v  # pytester restores os.environ after the test
    result = project.runpytest_subprocess(*PLUGIN, "-p", "xdist", "-n", "2")
    result.assert_outcomes(passed=5, failed=1)
    assert sorted(calls(project)) == ["capital", "greeting", "sum"]  # not once per worker


def test_a_test_without_the_marker_is_a_one_line_collection_error(
    project: pytest.Pytester,
) -> None:
    project.makepyfile(
        test_bare="def test_x(agenteval_case):\n    pass\n",
        test_run="def test_y(agenteval_run):\n    pass\n",
    )
    result = project.runpytest(*PLUGIN, "test_bare.py")
    assert result.ret == pytest.ExitCode.INTERRUPTED  # pytest's code for a collection error
    result.stdout.fnmatch_lines(["test_bare.py::test_x: *need @pytest.mark.agenteval(dataset=*"])
    assert "_manager.py" not in result.stdout.str()  # no traceback
    result = project.runpytest(*PLUGIN, "test_run.py")
    result.assert_outcomes(errors=1)  # in a fixture: an error at setup, one line
    result.stdout.fnmatch_lines(["test_run.py::test_y: *need @pytest.mark.agenteval(dataset=*"])


def test_a_bad_dataset_is_one_line_naming_file_line_and_field(project: pytest.Pytester) -> None:
    project.makefile(".jsonl", cases='{"id": "a", "input": "x"}\n{"id": "b"}\n')
    result = project.runpytest(*PLUGIN)
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.stdout.fnmatch_lines(
        ["@pytest.mark.agenteval dataset: *cases.jsonl:2: field 'input': is required"]
    )
    assert "_manager.py" not in result.stdout.str()


def test_an_agent_that_cannot_be_imported_fails_each_case_once_evaluated(
    project: pytest.Pytester,
) -> None:
    project.makepyfile(test_agent=TESTS.replace("counting_agent:answer", "no_such_module:answer"))
    result = project.runpytest(*PLUGIN, "-k", "test_case")
    result.assert_outcomes(errors=3)
    assert result.stdout.str().count("no_such_module") >= 3


def test_runs_go_under_agenteval_out_and_a_new_session_replaces_them(
    project: pytest.Pytester,
) -> None:
    out = project.path / "runs"
    project.runpytest(*PLUGIN, f"--agenteval-out={out}", "-k", "capital")
    project.runpytest(*PLUGIN, f"--agenteval-out={out}", "-k", "capital")
    (run_dir,) = [p for p in out.iterdir() if p.is_dir()]
    assert (run_dir / "run.json").is_file()
    assert calls(project) == ["capital", "capital"]  # a new session is a new evaluation


def test_the_plugin_imports_nothing_heavy_when_pytest_starts() -> None:
    import subprocess

    code = (
        "import sys, agenteval.testing.pytest_plugin;"
        "print(sorted(m for m in sys.modules if m.startswith(('agenteval.', 'pydantic'))))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT / "src")},
        check=True,
    )
    loaded = eval(done.stdout)
    assert [m for m in loaded if m.startswith("pydantic")] == []
    assert set(loaded) <= {
        "agenteval._util",
        "agenteval._util.lazy",
        "agenteval._version",
        "agenteval.errors",
        "agenteval.testing",
        "agenteval.testing.pytest_plugin",
    }


def test_the_pytest11_entry_point_names_the_plugin_module() -> None:
    """pyproject.toml registers the plugin under its module name (so that ``-p
    agenteval.testing.pytest_plugin`` is a no-op, not a double registration, when it is
    installed); an installed distribution that has the entry point agrees."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    points = project["project"]["entry-points"]["pytest11"]
    assert points == {"agenteval.testing.pytest_plugin": "agenteval.testing.pytest_plugin"}
    import importlib

    module = importlib.import_module(points["agenteval.testing.pytest_plugin"])
    assert callable(module.pytest_generate_tests)
    installed = [
        (e.name, e.value)
        for e in metadata.distribution("agenteval").entry_points
        if e.group == "pytest11"
    ]
    if installed:  # the shared venv's metadata predates the entry point until reinstalled
        assert installed == list(points.items())
