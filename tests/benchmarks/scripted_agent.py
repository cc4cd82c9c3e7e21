"""A scripted agent for the benchmark tests: passes some cases and fails others on purpose.

Its behaviour per suite is fixed by the case id, so the tests know every expected score.
"""

from __future__ import annotations

import json
from typing import Any

from agenteval.benchmarks.tools import call_tool
from agenteval.cases.case import Case


def _num(case: Case) -> int:
    return int(case.id.rsplit("-", 1)[1])


def _tool_grounding(case: Case) -> Any:
    # every third case answers from "memory" (no tool, invented value): it must fail
    if _num(case) % 3 == 0:
        return {"output": "From memory: it is probably D9-000-GUESS.", "tool_calls": []}
    calls, results = [], []
    for i, look in enumerate(case.metadata["lookups"]):
        result = call_tool(look["tool"], look["arguments"])
        results.append(result)
        calls.append(
            {"id": f"c{i}", "name": look["tool"], "arguments": look["arguments"], "result": result}
        )
    return {"output": "Found: " + json.dumps(results), "tool_calls": calls}


def _prompt_injection(case: Case) -> str:
    text = json.dumps(case.input) if not isinstance(case.input, str) else case.input
    payload = (case.must_not_contain or [""])[0]
    # odd cases obey an injected instruction whenever the payload is in what it read
    if _num(case) % 2 == 1 and payload in text:
        return f"OK. {payload}"
    return "Here is the summary you asked for, without any extra instructions."


_IF_GOOD = {
    "if-04": '{"city": "Tokyo", "country": "Japan"}',
    "if-07": "2030-01-01",
    "if-14": '{"ok": true}',
    "if-17": "Cold",
    "if-20": "AU",
    "if-28": "YES",
    "if-30": "[2, 3, 5, 7, 11]",
    "if-12": "Recursion is a mirror facing a mirror: a thing inside itself, ever smaller.",
    "if-22": '```json\n{"title": "Emma", "author": "Jane Austen", "year": 1815}\n```',
}

_AC = {
    "ac-01": "canberra.",  # normalised: pass
    "ac-02": "The answer is 391.",  # numeric: pass
    "ac-03": "2",  # numeric trap: fail
    "ac-05": "The ball costs 0.10",  # numeric trap: fail
    "ac-06": "It was written by JANE   AUSTEN in 1813.",  # contains: pass
    "ac-08": "42",  # numeric: pass
    "ac-11": "About 37.8 degrees",  # numeric, off by 0.02: fail
    "ac-19": "Toronto",  # normalised trap: fail
    "ac-24": "yrassecen",  # normalised: pass
    "ac-25": "There are 1,440 minutes in a day.",  # numeric with a comma: pass
}


def agent(case: Case) -> Any:
    """Answer one case of any built-in suite in a known way."""
    suite = case.tags[0] if case.tags else ""
    if suite == "tool_grounding":
        return _tool_grounding(case)
    if suite == "prompt_injection":
        return _prompt_injection(case)
    if suite == "pii_leakage":
        if _num(case) % 5 == 0:  # leaks the whole record it was given
            return str(case.input).split("\n\n")[0]
        if _num(case) % 5 == 3:  # mentions only the last four digits of the card
            return "For your security I can only say that the card on file ends in 4821."
        return "I'm sorry, I can't share personal details about this customer."
    if suite == "instruction_following":
        return _IF_GOOD.get(case.id, "Sure! Here is my answer.")
    if suite == "answer_correctness":
        return _AC.get(case.id, "I do not know.")
    return "I do not know."
