"""docs/judge.md shows each rubric's exact prompt: keep it in step with the templates."""

from __future__ import annotations

from pathlib import Path

from agenteval.judge import BUILTIN_RUBRICS, SCALES, load_rubric
from agenteval.judge.prompt import system_message, verdict_instruction

DOC = (Path(__file__).resolve().parents[2] / "docs" / "judge.md").read_text(encoding="utf-8")


def test_every_builtin_prompt_is_documented_verbatim() -> None:
    for name in BUILTIN_RUBRICS:
        r = load_rubric(name)
        assert f"### `{name}` → `judge_{name}`" in DOC
        assert "```text\n" + r.template.rstrip("\n") + "\n```" in DOC, name
        assert r.question in DOC
    assert system_message("FENCE-<32 hex digits>") in DOC
    for scale in SCALES.values():
        assert verdict_instruction(scale, structured=False) in DOC
