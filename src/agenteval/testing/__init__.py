"""Test helpers shipped with agenteval: a fake OpenAI-compatible server with fault injection.

The names below live in :mod:`agenteval.testing.fake_openai` and are loaded on first use,
so that ``python -m agenteval.testing.fake_openai`` runs the module only once.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agenteval.testing.fake_openai import (
        FAULT_KINDS,
        FakeConfig,
        FakeServer,
        fake_openai_server,
        start_fake_server,
    )

__all__ = ["FAULT_KINDS", "FakeConfig", "FakeServer", "fake_openai_server", "start_fake_server"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        return getattr(importlib.import_module("agenteval.testing.fake_openai"), name)
    raise AttributeError(f"module 'agenteval.testing' has no attribute {name!r}")
