"""The docs-block parser: fences, markers, kinds, and the mistakes it reports."""

from __future__ import annotations

from pathlib import Path

import pytest
from _blocks import parse, stray_markers


@pytest.fixture
def page(tmp_path: Path):  # type: ignore[no-untyped-def]
    def make(text: str) -> Path:
        p = tmp_path / "page.md"
        p.write_text(text, encoding="utf-8")
        return p

    return make


def test_markers_kinds_and_positions(page) -> None:  # type: ignore[no-untyped-def]
    p = page(
        "# T\n\n<!-- run: exit=1 -->\n```sh\nagenteval gate a b\n```\n\n"
        "<!-- file: agent.py -->\nSave as `agent.py`:\n\n```python\nx = 1\n```\n\n"
        "```\nagenteval demo\n```\n\n```\nrun 0123456789ab\n```\n\n"
        "- item\n\n  ```yaml\n  a: 1\n  ```\n"
    )
    blocks = parse(p, p.parent)
    assert [(b.line, b.kind, b.marker, b.arg) for b in blocks] == [
        (4, "shell", "run", "exit=1"),
        (11, "python", "file", "agent.py"),
        (15, "shell", None, ""),  # an untagged block that starts with a command
        (19, "text", None, ""),
        (25, "data", None, ""),
    ]
    assert blocks[0].options == {"exit": "1"}
    assert blocks[4].text == "a: 1\n"  # the list item's indentation is removed
    assert stray_markers(p, p.parent) == []


def test_a_marker_away_from_its_block_is_reported(page) -> None:  # type: ignore[no-untyped-def]
    p = page("<!-- not-run: far away -->\n\nSome text.\n\n```sh\nls\n```\n")
    (b,) = parse(p, p.parent)
    assert b.marker is None
    assert stray_markers(p, p.parent) == ["page.md:1: <!-- not-run: far away -->"]


def test_an_unclosed_fence_names_its_line(page) -> None:  # type: ignore[no-untyped-def]
    p = page("text\n\n```python\nx = 1\n")
    with pytest.raises(AssertionError, match=r"page.md:3: the fence opened here is never closed"):
        parse(p, p.parent)
