"""docs/cli.md is exactly what ``python docs/gen_cli.py`` writes from the commands' --help."""

from __future__ import annotations

import runpy
from pathlib import Path

DOCS = Path(__file__).resolve().parents[2] / "docs"


def test_cli_page_matches_the_help_of_every_command() -> None:
    render = runpy.run_path(str(DOCS / "gen_cli.py"))["render"]
    expected = render()
    actual = (DOCS / "cli.md").read_text(encoding="utf-8")
    assert actual == expected, "docs/cli.md is out of date: run `python docs/gen_cli.py`"


def test_every_command_of_the_parser_is_on_the_page() -> None:
    from agenteval.cli import build_parser

    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    page = (DOCS / "cli.md").read_text(encoding="utf-8")
    for name in sub.choices:  # type: ignore[union-attr]
        assert f"## agenteval {name}\n" in page, name
