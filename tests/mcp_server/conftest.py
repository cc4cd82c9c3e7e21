"""The demo's two runs, built once for the MCP server's tests."""

from __future__ import annotations

from pathlib import Path

import pytest
from rich.console import Console

from agenteval.demo import run_demo


@pytest.fixture(scope="session")
def demo_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder holding the demo (``cases.jsonl``, ``runs/careful``, ``runs/sloppy``);
    read only by the tests."""
    root = tmp_path_factory.mktemp("mcp-demo") / "demo"
    result = run_demo(root, Console(quiet=True))
    assert result.as_expected
    return root
