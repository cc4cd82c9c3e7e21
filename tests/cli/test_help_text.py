"""``--help`` shows plain text: no reStructuredText/Markdown markup from the docstrings the
descriptions are built from, and no reference to the internal spec."""

from __future__ import annotations

import re

import pytest

from agenteval.cli import COMMAND_MODULES, COMMAND_OF, main

COMMANDS = ["", *(m.replace("_", "-") for m in COMMAND_MODULES), *COMMAND_OF]
MARKUP = re.compile(r"``|:[a-z]+:`|\*\*|`[^`\s][^`]*`|SPEC|§")


@pytest.mark.parametrize("command", COMMANDS)
def test_help_has_no_markup(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as ei:
        main([command, "--help"] if command else ["--help"])
    assert ei.value.code == 0
    out = capsys.readouterr().out
    assert "usage: agenteval" in out
    assert not MARKUP.findall(out), sorted(set(MARKUP.findall(out)))


def test_help_text_rules() -> None:
    from agenteval.cli import help_text

    text = (
        "``agenteval run`` calls :func:`~agenteval.evaluation.evaluate` and"
        " :class:`Summary <agenteval.report.Summary>`, **always** (SPEC §2.1); see `a b`."
    )
    assert help_text(text) == "agenteval run calls evaluate and Summary, always; see a b."
    assert help_text("glob *.py stays") == "glob *.py stays"
