"""Test helper: the sample output a docs page shows, so a test can compare it with a run."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any


def shown_usage(page: Path, case_id: str) -> Any:
    """The ``usage`` of the trial of ``case_id`` in the page's abridged trial JSON."""
    text = page.read_text(encoding="utf-8")
    pattern = r'\{"case_id": "' + re.escape(case_id) + r'".*?"usage": (\[.*?\]),'
    m = re.search(pattern, text, re.S)
    assert m, f"{page.name} shows no usage for {case_id}"
    return json.loads(m.group(1))
