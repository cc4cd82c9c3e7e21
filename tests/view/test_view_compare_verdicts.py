"""The compare page gives ``agenteval gate``'s three verdicts, leads with what got worse,
and takes the gate's policies as query parameters (issue 26)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from _tree import Viewer, build_tree

from agenteval.gate.paired import compare_runs


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tree(tmp_path_factory.mktemp("runs"))


@pytest.fixture(scope="module")
def view(tree: Path) -> Iterator[Viewer]:
    v = Viewer(tree)
    yield v
    v.stop()


def test_got_worse_leads_and_cannot_tell_is_listed(view: Viewer, tree: Path) -> None:
    expected = compare_runs(tree / "a" / "base", tree / "a" / "cand")
    page = view.get("/compare?a=a/base&b=a/cand")[2].decode()
    assert f'<span id="verdict-word">{expected.verdict}</span>' in page
    assert expected.verdict in ("INCONCLUSIVE", "BLOCKED")  # c1 got worse
    assert page.index('id="got-worse"') < page.index('id="verdict"') < page.index("gate-scorers")
    assert 'case=c1">c1</a>' in page[page.index('id="got-worse"') : page.index('id="verdict"')]
    for line in expected.cannot_tell:
        assert line.replace("'", "&#39;") in page


def test_policies_from_the_query_give_the_gates_verdict(view: Viewer, tree: Path) -> None:
    base, cand = tree / "a" / "base", tree / "a" / "cand"
    expected = compare_runs(base, cand, no_new_failures=["exact_match"])
    assert expected.verdict == "BLOCKED"
    page = view.get("/compare?a=a/base&b=a/cand&no_new_failures=exact_match")[2].decode()
    assert '<span id="verdict-word">BLOCKED</span>' in page
    assert 'id="policies"' in page and "--no-new-failures exact_match" in page
    page = view.get("/compare?a=a/base&b=a/cand&require=nope%3E%3D0.5")[2].decode()
    assert "No verdict" in page and "neither run has: nope" in page
