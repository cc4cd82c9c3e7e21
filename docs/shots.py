"""Take the screenshots of docs/view.md: run the viewer's browser test that takes them,
with AGENTEVAL_VIEW_SHOTS pointing at docs/view/ (run from the repository root):

    python docs/shots.py
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "docs" / "view"


def main() -> int:
    OUT.mkdir(exist_ok=True)
    env = {**os.environ, "AGENTEVAL_VIEW_SHOTS": str(OUT)}
    test = "tests/view/test_view_browser.py::test_screenshots"
    return subprocess.call([sys.executable, "-m", "pytest", "-q", test], cwd=ROOT, env=env)


if __name__ == "__main__":
    sys.exit(main())
