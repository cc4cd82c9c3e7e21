"""Test helpers shipped with agenteval.

- a fake OpenAI-compatible server with fault injection (:mod:`agenteval.testing.fake_openai`);
- assertions for pytest: :func:`assert_case`, :func:`assert_scores`,
  :func:`assert_no_regression` (:mod:`agenteval.testing.assertions`), used with the pytest
  plugin :mod:`agenteval.testing.pytest_plugin` (docs/pytest.md).

The names below are loaded on first use, so that ``python -m agenteval.testing.fake_openai``
runs the module only once and the pytest plugin loads nothing heavy at start-up.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agenteval.testing.assertions import (
        CaseResult,
        assert_case,
        assert_no_regression,
        assert_scores,
    )
    from agenteval.testing.fake_openai import (
        FAULT_KINDS,
        FakeConfig,
        FakeServer,
        fake_openai_server,
        start_fake_server,
    )

_FAKE = "agenteval.testing.fake_openai"
_ASSERTIONS = "agenteval.testing.assertions"
_LAZY = {
    "FAULT_KINDS": _FAKE,
    "FakeConfig": _FAKE,
    "FakeServer": _FAKE,
    "fake_openai_server": _FAKE,
    "start_fake_server": _FAKE,
    "CaseResult": _ASSERTIONS,
    "assert_case": _ASSERTIONS,
    "assert_no_regression": _ASSERTIONS,
    "assert_scores": _ASSERTIONS,
}

__all__ = [
    "FAULT_KINDS",
    "CaseResult",
    "FakeConfig",
    "FakeServer",
    "assert_case",
    "assert_no_regression",
    "assert_scores",
    "fake_openai_server",
    "start_fake_server",
]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'agenteval.testing' has no attribute {name!r}")
