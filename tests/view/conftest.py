"""Fixtures for the viewer tests: a folder of real runs and a real ``agenteval view``."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "report"))  # _runbuild
sys.path.insert(0, str(Path(__file__).resolve().parent))  # _tree
