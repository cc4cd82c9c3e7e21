"""A trial whose trace did not record some content: the built-in scorers that need it are
not applicable, never 0 (agenteval.scoring.unrecorded); the others, and custom scorers, run."""

from __future__ import annotations

import pytest

from agenteval.cases.case import Case
from agenteval.scorers.config import ScorerConfig, build_scorers
from agenteval.scoring.unrecorded import SCORER_NEEDS
from agenteval.trials.trial import ToolCall, Trial

CASE = Case(
    id="c",
    input="status of O-1?",
    expected="shipped",
    expected_tools=["get_order"],
    expected_calls=[{"name": "get_order", "arguments": {"order_id": "O-1"}}],
    relevant_docs=["DOC-1"],
    must_not_contain=["secret"],
    canary=["TRK-1"],
    tools=[
        {
            "name": "get_order",
            "parameters": {
                "type": "object",
                "properties": {"order_id": {"type": "string"}},
                "required": ["order_id"],
            },
        }
    ],
)
# what an importer makes of a redacted call: empty arguments, no result, no answer
CALLS = [ToolCall(name="get_order", arguments={}), ToolCall(name="get_order", arguments={})]


def _custom(case: Case, trial: Trial) -> float:
    return 0.0


@pytest.mark.parametrize("missing", [["tool_arguments"], ["tool_results"], ["output"]])
def test_scorers_needing_missing_content_are_not_applicable(missing: list[str]) -> None:
    scorers = build_scorers(ScorerConfig(extra=[_custom]))
    full = Trial(case_id="c", output="the secret", tool_calls=CALLS)
    partial = full.model_copy(update={"metadata": {"not_recorded": missing}})
    plain = scorers.apply(CASE, full)
    scored = scorers.apply(CASE, partial)
    for name, s in scored.items():
        needs = SCORER_NEEDS.get(name, frozenset())
        if needs & set(missing):
            assert s.status == "not_applicable" and s.value is None, (name, s)
            assert s.reason.startswith("not applicable: the trace did not record the ")
        else:
            assert s == plain[name], name
    assert scored["_custom"].value == 0.0  # custom scorers are not second-guessed
    # without the metadata these trials score 0 on some of them: that is what is avoided
    assert any(plain[n].value == 0.0 for n, s in scored.items() if s.status == "not_applicable")
