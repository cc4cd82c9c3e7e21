"""The offline demo: a small shop (SQLite), two rule-based agents over its tools, a
30-case dataset that exercises every deterministic scorer, and the gate between them.

Run it with ``agenteval demo``; see docs/demo.md.
"""

from __future__ import annotations

from agenteval.demo.agents import CarefulAgent, SloppyAgent
from agenteval.demo.cases import demo_cases, write_cases
from agenteval.demo.run import DemoFiles, DemoResult, build_demo, run_demo
from agenteval.demo.shop import ShopTools, build_database

__all__ = [
    "CarefulAgent",
    "DemoFiles",
    "DemoResult",
    "ShopTools",
    "SloppyAgent",
    "build_database",
    "build_demo",
    "demo_cases",
    "run_demo",
    "write_cases",
]
