"""Lazy package attributes: imported on first access, cached, unknown names refused."""

from __future__ import annotations

import subprocess
import sys

import pytest

import agenteval.report


def test_unknown_attribute_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match=r"'agenteval\.report' has no attribute 'nope'"):
        agenteval.report.nope  # noqa: B018


def test_first_access_imports_the_module_and_caches_the_value() -> None:
    code = (
        "import sys, agenteval.benchmarks as b\n"
        "assert 'agenteval.benchmarks.registry' not in sys.modules\n"
        "r = b.Registry\n"
        "assert 'agenteval.benchmarks.registry' in sys.modules\n"
        "assert vars(b)['Registry'] is r\n"
        "from agenteval.benchmarks.registry import Registry\n"
        "assert r is Registry\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
