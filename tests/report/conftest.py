"""Fixtures for the report tests."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import pytest
from _runbuild import TrialSpec, write_run

from agenteval.cases.case import Case


@pytest.fixture
def make_run(tmp_path: Path) -> Callable[..., Path]:
    counter = iter(range(1000))

    def build(cases: Iterable[Case], trials: Iterable[TrialSpec], **kw: Any) -> Path:
        return write_run(tmp_path / f"run{next(counter)}", cases, trials, **kw)

    return build
