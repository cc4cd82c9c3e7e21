"""Every example in docs/scorers.md gives exactly the score the page shows."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from agenteval.cases.case import Case
from agenteval.scorers import OPT_IN_SCORER_NAMES, builtin_scorer, builtin_scorers
from agenteval.scoring.spec import scorer_name
from agenteval.trials.trial import Trial

DOC = Path(__file__).resolve().parents[2] / "docs" / "scorers.md"
_BLOCK = re.compile(r"```yaml\n# example: (\w+)\n(.*?)```", re.S)
EXAMPLES = [(m.group(1), yaml.safe_load(m.group(2))) for m in _BLOCK.finditer(DOC.read_text())]
SCORERS = {
    scorer_name(fn): fn
    for fn in [*builtin_scorers(), *(builtin_scorer(n) for n in OPT_IN_SCORER_NAMES)]
}


def test_every_scorer_has_an_example() -> None:
    assert {name for name, _ in EXAMPLES} == set(SCORERS)


@pytest.mark.parametrize(("name", "example"), EXAMPLES, ids=[n for n, _ in EXAMPLES])
def test_example(name: str, example: dict[str, Any]) -> None:
    case = Case.model_validate(example["case"])
    trial = Trial.model_validate(example["trial"])
    got = SCORERS[name](case, trial)
    assert (got.value, got.reason) == (example["score"]["value"], example["score"]["reason"])
    if "status" in example["score"]:
        assert got.status == example["score"]["status"]
