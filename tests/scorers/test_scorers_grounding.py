"""tool_faithfulness, retrieval_recall and tool_grounding (canary)."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from agenteval._util.text import find_numbers
from agenteval.cases.case import Case
from agenteval.scorers import retrieval_recall, tool_faithfulness, tool_grounding
from agenteval.scorers.grounding import _id_pattern, _Results, _returned
from agenteval.trials.trial import ToolCall, Trial

FAILED = {"cause": "http_error", "message": "HTTP 500"}


def case(**kw: Any) -> Case:
    return Case.model_validate({"id": "c", "input": "What was ACME's revenue in 2023?", **kw})


def trial(output: str | None, *results: Any, **kw: Any) -> Trial:
    calls = [{"name": "search", "arguments": {}, "result": r} for r in results]
    return Trial.model_validate({"case_id": "c", "output": output, "tool_calls": calls, **kw})


# --- tool_faithfulness ----------------------------------------------------------------


def test_faithful_numbers_compare_by_value() -> None:
    t = trial("ACME made $19,753 in 2023, 12.5% more.", {"revenue": 19753.0, "growth": 12.5})
    s = tool_faithfulness(case(), t)
    assert s.value == 1.0 and s.passed
    assert s.reason == (
        "2 of 2 numbers in the answer found in tool results -> 2/2 = 1"
        " (1 number(s) from the question ignored)"
    )


def test_number_computed_in_the_head_fails() -> None:
    t = trial("Revenue 19,753, profit 4,000 and margin 20.25%.", "revenue: 19753; costs 15753")
    s = tool_faithfulness(case(), t)
    assert s.value == 1 / 3 and not s.passed
    assert s.reason == (
        "1 of 3 numbers in the answer found in tool results -> 1/3 = 0.333; not found: 4000, 20.25"
    )


def test_numbers_within_one_hundredth_match_and_repeats_count_once() -> None:
    t = trial("3.14, so 3.14 again", "pi is 3.1416")
    s = tool_faithfulness(case(input="pi?"), t)
    assert s.value == 1.0 and s.reason.startswith("1 of 1 numbers")


def test_answer_without_numbers_must_appear_in_a_result() -> None:
    t = trial("  Paris. ", "error: none", {"capital": "PARIS", "country": "France"})
    s = tool_faithfulness(case(input="capital?"), t)
    assert s.value == 1.0
    assert s.reason == "answer has no number claims; its text appears in result 2"
    s = tool_faithfulness(case(input="capital?"), trial("Lyon", {"capital": "Paris"}))
    assert s.value == 0.0
    assert (
        s.reason == 'answer has no number claims; its text "lyon" appears in none of 1 tool results'
    )


def test_answer_whose_numbers_all_come_from_the_question_uses_the_text_rule() -> None:
    s = tool_faithfulness(case(), trial("No data for 2023", "no data for 2023 in the index"))
    assert s.value == 1.0
    assert s.reason.startswith("answer has no number claims (1 number(s) from the question")


def test_question_as_chat_messages() -> None:
    c = case(
        input=[
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "Sum 7 and 8"},
        ]
    )
    s = tool_faithfulness(c, trial("7 + 8 = 15", "15"))
    assert s.value == 1.0 and "(2 number(s) from the question ignored)" in s.reason


def test_faithfulness_not_applicable() -> None:
    s = tool_faithfulness(case(), trial("42"))
    assert s.value is None and s.reason == "no tool results to check the answer against"
    t = Trial.model_validate(
        {
            "case_id": "c",
            "output": "42",
            "tool_calls": [{"name": "s", "arguments": {}, "error": "x"}],
        }
    )
    assert tool_faithfulness(case(), t).value is None
    s = tool_faithfulness(case(), trial(None, "42", failure=FAILED))
    assert s.reason == "agent never answered (failure: http_error)"
    assert (
        tool_faithfulness(case(), trial("  ", "42")).reason == "answer is empty: nothing to check"
    )


# --- retrieval_recall -----------------------------------------------------------------


def test_recall_share_of_relevant_docs() -> None:
    t = trial("x", [{"id": "doc-12", "text": "..."}], "see doc-3.")
    s = retrieval_recall(case(relevant_docs=["doc-1", "doc-3", "doc-12"]), t)
    assert s.value == 2 / 3 and not s.passed
    assert s.reason == "found 2 of 3 relevant docs in 2 tool results -> 2/3 = 0.667; missing: doc-1"


def test_recall_whole_token_only() -> None:
    for text in ("doc-12", "xdoc-1", "doc-1a", "doc-1_b", "doc-1-2"):
        assert retrieval_recall(case(relevant_docs=["doc-1"]), trial("x", text)).value == 0.0, text
    for text in ("doc-1", "[doc-1]", '{"id": "doc-1"}', "see doc-1.", "a/doc-1?b"):
        assert retrieval_recall(case(relevant_docs=["doc-1"]), trial("x", text)).value == 1.0, text


def test_recall_ids_with_regex_characters() -> None:
    s = retrieval_recall(case(relevant_docs=["a.b(1)"]), trial("x", "found a.b(1) and axb(1)"))
    assert s.value == 1.0
    assert retrieval_recall(case(relevant_docs=["a.b"]), trial("x", "axb")).value == 0.0


def test_recall_numeric_ids_in_json() -> None:
    assert retrieval_recall(case(relevant_docs=[12]), trial("x", {"ids": [12, 7]})).value == 1.0


def test_recall_all_found_passes_and_no_calls_scores_zero() -> None:
    s = retrieval_recall(case(relevant_docs=["a", "b"]), trial("x", "a b"))
    assert s.value == 1.0 and s.passed
    s = retrieval_recall(case(relevant_docs=["a"]), trial("from memory"))
    assert s.value == 0.0


def test_recall_not_applicable() -> None:
    assert retrieval_recall(case(), trial("x", "a")).reason == "case has no relevant_docs"
    s = retrieval_recall(case(relevant_docs=["a"]), trial(None, failure=FAILED))
    assert s.value is None
    assert s.reason == "agent never answered (failure: http_error) and made no tool call"
    # Calls made before the failure are still judged.
    assert (
        retrieval_recall(case(relevant_docs=["a"]), trial(None, "a", failure=FAILED)).value == 1.0
    )


# --- tool_grounding -------------------------------------------------------------------


def test_canary_found_case_insensitively() -> None:
    s = tool_grounding(case(canary=["ZEBRA-42", "blue"]), trial("the code is zebra-42, BLUE"))
    assert s.value == 1.0 and s.reason == "2 of 2 canary values in the answer -> 2/2 = 1"


def test_canary_partial() -> None:
    s = tool_grounding(case(canary=["ZEBRA-42", "blue"]), trial("zebra-42"))
    assert s.value == 0.5 and not s.passed
    assert s.reason == '1 of 2 canary values in the answer -> 1/2 = 0.5; missing: "blue"'


def test_canary_not_applicable() -> None:
    s = tool_grounding(case(), trial("x"))
    assert s.value is None and s.status == "not_applicable"
    assert s.reason == "case has no canary: nothing to check"
    s = tool_grounding(case(canary="c"), trial(None, failure=FAILED))
    assert s.value is None and s.reason.startswith("agent never answered")


# The scorers search a trial's results joined by newlines; that must be the same as
# searching each result on its own.
_result_text = st.text(alphabet="0123456789.,-+eE abc_\n\u2212doc", max_size=14)


@settings(max_examples=200)
@given(st.lists(_result_text, max_size=4))
def test_numbers_of_joined_results_are_the_numbers_of_each(results: list[str]) -> None:
    each = {n for r in results for n in find_numbers(r)}
    assert set(find_numbers("\n".join(results))) == each


@settings(max_examples=200)
@given(
    st.lists(st.text(alphabet="doc-12_ \n", max_size=10), max_size=4),
    st.text(alphabet="doc-12_ \n", max_size=5),
)
def test_recall_of_joined_results_matches_each_result(results: list[str], doc_id: str) -> None:
    each = any(_id_pattern(doc_id).search(r) for r in results)
    calls = [ToolCall(name="t", result=r) for r in results]
    assert _returned(doc_id, _Results(calls)) == each


def test_recall_and_faithfulness_share_results_of_the_same_trial() -> None:
    c = case(relevant_docs=["doc-3"])
    t = trial("It was 19,753.", {"id": "doc-3", "total": 19753})
    assert retrieval_recall(c, t).value == 1.0
    assert tool_faithfulness(c, t).value == 1.0
    other = trial("It was 19,753.", {"id": "doc-4"})  # same shape, different results
    assert retrieval_recall(c, other).value == 0.0
    assert tool_faithfulness(c, other).value == 0.0
