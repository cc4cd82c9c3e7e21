"""Agreement statistics: Cohen's kappa, confusion matrix, label normalisation."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agenteval.errors import InputError
from agenteval.judge import SCALES, cohen_kappa, confusion_matrix, load_rubric, read_labels
from agenteval.judge.agreement import normalize_label


def test_kappa_textbook_example() -> None:
    # 50 items: both yes 20, A yes/B no 5, A no/B yes 10, both no 15.
    pairs = [("C", "C")] * 20 + [("C", "I")] * 5 + [("I", "C")] * 10 + [("I", "I")] * 15
    # p_o = 0.7; p_e = 0.5*0.6 + 0.5*0.4 = 0.5; kappa = 0.4
    assert cohen_kappa(pairs) == pytest.approx(0.4)
    m = confusion_matrix(pairs, ["C", "I"])
    assert m == {"C": {"C": 20, "I": 5}, "I": {"C": 10, "I": 15}}


def test_kappa_edge_cases() -> None:
    assert cohen_kappa([]) is None
    assert cohen_kappa([("C", "C")] * 5) is None  # one category only: undefined
    assert cohen_kappa([("C", "I"), ("I", "C")]) == pytest.approx(-1.0)


_pairs = st.lists(st.tuples(st.sampled_from("CPI"), st.sampled_from("CPI")), min_size=1)


@given(_pairs)
def test_kappa_properties(pairs: list[tuple[str, str]]) -> None:
    k = cohen_kappa(pairs)
    swapped = cohen_kappa([(b, a) for a, b in pairs])
    if k is None:
        assert swapped is None
        return
    assert -1.0 - 1e-9 <= k <= 1.0 + 1e-9
    assert swapped == pytest.approx(k)
    if all(a == b for a, b in pairs):
        assert k == pytest.approx(1.0)


@given(_pairs)
def test_confusion_matrix_counts_every_pair(pairs: list[tuple[str, str]]) -> None:
    m = confusion_matrix(pairs, ["C", "P", "I"])
    assert sum(sum(row.values()) for row in m.values()) == len(pairs)
    assert sum(m[a][a] for a in "CPI") == sum(a == b for a, b in pairs)


@pytest.mark.parametrize(
    ("raw", "scale", "grade"),
    [
        (1, "binary", "C"),
        (0, "binary", "I"),
        (True, "binary", "C"),
        ("c", "binary", "C"),
        ("I", "binary", "I"),
        (1.0, "binary", "C"),
        (0.5, "partial", "P"),
        ("P", "partial", "P"),
        (1, "likert", "1"),
        (5, "likert", "5"),
        ("4", "likert", "4"),
        (3.0, "likert", "3"),
    ],
)
def test_labels(raw: object, scale: str, grade: str) -> None:
    assert normalize_label(raw, SCALES[scale]) == grade


@pytest.mark.parametrize(
    ("raw", "scale"),
    [
        (0.5, "binary"),
        ("P", "binary"),
        (2, "binary"),
        (6, "likert"),
        (0, "likert"),
        (True, "likert"),
        ("x", "likert"),
        (None, "binary"),
    ],
)
def test_bad_labels(raw: object, scale: str) -> None:
    with pytest.raises(ValueError):
        normalize_label(raw, SCALES[scale])


def test_read_labels_errors_name_line_and_field(tmp_path: Path) -> None:
    rubric = load_rubric("correctness")
    f = tmp_path / "labels.jsonl"
    good = {"id": "a", "input": "q", "expected": "4", "output": "4", "label": 1}
    f.write_text(json.dumps(good) + "\n" + json.dumps({**good, "id": "b", "label": "X"}) + "\n")
    with pytest.raises(InputError) as e:
        read_labels(f, rubric)
    assert str(e.value).endswith(
        "labels.jsonl:2: field 'label': label 'X' is not on the binary scale (1/0 or C or I)"
    )
    f.write_text(json.dumps(good) + "\n" + json.dumps(good) + "\n")
    with pytest.raises(InputError, match="duplicate id 'a'"):
        read_labels(f, rubric)
    f.write_text(json.dumps({**good, "tool_calls": [{"arguments": {}}]}) + "\n")
    with pytest.raises(InputError, match=r":1: field 'tool_calls.0.name'"):
        read_labels(f, rubric)
    f.write_text(json.dumps(good) + "\n")
    (item,) = read_labels(f, rubric)
    assert (item.case.expected, item.trial.output, item.label) == ("4", "4", "C")
