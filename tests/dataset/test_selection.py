"""Case selection (agenteval.dataset.selection): the matching rule and the seeded sample."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agenteval.cases.case import Case
from agenteval.dataset.selection import Selection, field_matches, sample_size
from agenteval.errors import InputError

TAGS = st.lists(st.sampled_from(["a", "b", "c", "d", "e"]), max_size=3, unique=True)


@st.composite
def datasets(draw: st.DrawFn, min_size: int = 1) -> list[Case]:
    tag_lists = draw(st.lists(TAGS, min_size=min_size, max_size=60))
    return [Case(id=f"c{i}", input="q", tags=t) for i, t in enumerate(tag_lists)]


@settings(max_examples=60, deadline=None)
@given(datasets(), st.integers(1, 80), st.integers(0, 2**32))
def test_a_count_sample_is_exact_deterministic_and_in_file_order(
    cases: list[Case], n: int, seed: int
) -> None:
    sel = Selection(sample=n, seed=seed)
    first = sel.apply(cases)
    assert len(first) == min(n, len(cases))
    assert [c.id for c in first] == [c.id for c in sel.apply(cases)]
    order = [c.id for c in cases]
    assert [order.index(c.id) for c in first] == sorted(order.index(c.id) for c in first)


@settings(max_examples=60, deadline=None)
@given(datasets(), st.floats(0.01, 0.99), st.integers(0, 1000))
def test_a_rate_sample_keeps_the_rounded_share_and_at_least_one(
    cases: list[Case], rate: float, seed: int
) -> None:
    chosen = Selection(sample=rate, seed=seed).apply(cases)
    assert len(chosen) == max(1, round(rate * len(cases)))


@settings(max_examples=80, deadline=None)
@given(datasets(), st.integers(1, 80), st.integers(0, 1000))
def test_a_stratified_sample_is_exact_and_keeps_every_first_tag(
    cases: list[Case], n: int, seed: int
) -> None:
    strata = {c.tags[0] if c.tags else "" for c in cases}
    sel = Selection(sample=n, seed=seed, stratify=True)
    if min(n, len(cases)) < len(strata):
        with pytest.raises(InputError, match="cannot keep each of the"):
            sel.apply(cases)
        return
    chosen = sel.apply(cases)
    assert len(chosen) == min(n, len(cases))
    assert {c.tags[0] if c.tags else "" for c in chosen} == strata
    assert [c.id for c in chosen] == [c.id for c in sel.apply(cases)]


@settings(max_examples=40, deadline=None)
@given(datasets(min_size=20), st.integers(0, 1000))
def test_stratified_shares_follow_the_strata_sizes(cases: list[Case], seed: int) -> None:
    """Largest remainder: each stratum gets its proportional share rounded up or down."""
    strata = [c.tags[0] if c.tags else "" for c in cases]
    n = max(len(set(strata)), len(cases) // 2)
    chosen = Selection(sample=n, seed=seed, stratify=True).apply(cases)
    for s in set(strata):
        share = strata.count(s) * n / len(cases)
        got = sum(1 for c in chosen if (c.tags[0] if c.tags else "") == s)
        assert got >= 1 and (got <= int(share) + 1 or got == 1), (s, share, got)


def test_different_seeds_give_different_samples() -> None:
    cases = [Case(id=f"c{i}", input="q") for i in range(100)]
    samples = {tuple(c.id for c in Selection(sample=10, seed=s).apply(cases)) for s in range(5)}
    assert len(samples) == 5


@given(datasets(), st.lists(st.sampled_from(["a", "b", "c", "z"]), min_size=1, max_size=3))
def test_tags_keep_cases_with_any_of_them(cases: list[Case], tags: list[str]) -> None:
    sel = Selection(tags=tuple(tags))
    want = [c.id for c in cases if set(c.tags) & set(tags)]
    if not want:
        with pytest.raises(InputError, match="keeps no case"):
            sel.apply(cases)
    else:
        assert [c.id for c in sel.apply(cases)] == want


def _case(**kw: object) -> Case:
    return Case.model_validate({"id": "x", "input": "q", **kw})


@pytest.mark.parametrize(
    ("case", "field", "value", "matches"),
    [
        (_case(tier="gold"), "metadata.tier", "gold", True),
        (_case(tier="gold"), "metadata.tier", "Gold", False),
        (_case(tier="gold"), "metadata.tier", "gold ", False),
        (_case(difficulty=3), "metadata.difficulty", "3", True),
        (_case(difficulty=3), "metadata.difficulty", "3.0", False),
        (_case(score=0.5), "metadata.score", "0.5", True),
        (_case(hard=True), "metadata.hard", "true", True),
        (_case(hard=True), "metadata.hard", "True", False),
        (_case(src={"kind": "web"}), "metadata.src.kind", "web", True),
        (_case(src={"kind": "web"}), "metadata.src", "web", False),
        (_case(langs=["en", "fr"]), "metadata.langs", "fr", True),
        (_case(), "metadata.tier", "gold", False),
        (_case(tier=None), "metadata.tier", "null", False),
        (_case(tags=["a", "b"]), "tags", "b", True),
        (_case(expected="4"), "expected", "4", True),
        (_case(expected=4), "expected", "4", True),
        (_case(), "expected", "", False),
        (_case(), "id", "x", True),
        (_case(match_mode="subset"), "match_mode", "subset", True),
    ],
)
def test_where_matching_rule(case: Case, field: str, value: str, matches: bool) -> None:
    assert field_matches(case, field, value) is matches


@pytest.mark.parametrize("field", ["tier", "metadata", "id.x", "nope"])
def test_where_refuses_an_unknown_field(field: str) -> None:
    with pytest.raises(InputError, match="unknown field") as e:
        field_matches(_case(tier="gold"), field, "gold")
    assert e.value.field == "where"


def test_parts_combine_as_an_intersection() -> None:
    cases = [
        Case.model_validate({"id": f"c{i}", "input": "q", "tags": [t], "tier": tier})
        for i, (t, tier) in enumerate([("a", "gold"), ("a", "lead"), ("b", "gold"), ("a", "gold")])
    ]
    sel = Selection(tags=("a",), where=(("metadata.tier", "gold"),), ids=("c0", "c2", "c3"))
    assert [c.id for c in sel.apply(cases)] == ["c0", "c3"]


def test_unknown_ids_are_named() -> None:
    cases = [Case(id="a", input="q")]
    with pytest.raises(InputError, match="2 case id\\(s\\) not in the dataset: 'x', 'y'") as e:
        Selection(ids=("a", "x", "y")).apply(cases)
    assert e.value.field == "cases"


@pytest.mark.parametrize("bad", [0, -1, 0.0, 1.0, 1.5, float("nan"), True])
def test_a_bad_sample_is_refused(bad: float) -> None:
    with pytest.raises(InputError) as e:
        Selection(sample=bad)
    assert e.value.field == "sample"


def test_sample_size_edges() -> None:
    assert sample_size(10, 3) == 3
    assert sample_size(0.01, 10) == 1
    assert sample_size(0.5, 0) == 0
    assert sample_size(0.25, 10) == 2  # round half to even: 2.5 -> 2


def test_to_dict_records_only_the_parts_given() -> None:
    assert Selection(tags=("a",)).to_dict() == {"tags": ["a"]}
    assert Selection(sample=5, seed=7, stratify=True).record(5, 9) == {
        "sample": 5,
        "seed": 7,
        "stratify": "tag",
        "selected": 5,
        "of": 9,
    }
    assert Selection().empty
