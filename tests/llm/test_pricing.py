"""Price tables: matching, cost, files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agenteval.errors import InputError
from agenteval.llm.pricing import DEFAULT_PRICES, PriceTable, load_prices
from agenteval.trials.trial import Usage


def test_exact_then_longest_prefix() -> None:
    t = PriceTable.default()
    assert t.lookup("gpt-4o") == t.lookup("GPT-4o")
    mini = t.lookup("gpt-4o-mini-2024-07-18")
    assert mini is not None and (mini.input, mini.output) == DEFAULT_PRICES["gpt-4o-mini"]
    full = t.lookup("gpt-4o-2024-08-06")
    assert full is not None and (full.input, full.output) == DEFAULT_PRICES["gpt-4o"]
    assert t.lookup("gpt-4.1-mini-2025-04-14") == t.lookup("gpt-4.1-mini") != t.lookup("gpt-4.1")
    assert t.lookup("claude-3-5-haiku-20241022") == t.lookup("claude-3-5-haiku")
    assert t.lookup("openai/gpt-4o-mini") == t.lookup("gpt-4o-mini")
    assert t.lookup("llama-3-8b") is None and t.lookup(None) is None


def test_cost_known_unknown_and_empty() -> None:
    t = PriceTable.default()
    usage = [Usage(model="gpt-4o", input_tokens=1_000_000, output_tokens=500_000)]
    assert t.cost(usage) == pytest.approx(2.5 + 5.0)
    assert t.cost([]) == 0.0
    assert t.cost([Usage(model="mystery", input_tokens=0, output_tokens=0)]) == 0.0
    assert t.cost([*usage, Usage(model="mystery", input_tokens=1)]) is None
    assert t.cost([Usage(model=None, output_tokens=3)]) is None
    assert t.unknown_models([Usage(model="mystery", input_tokens=1)]) == {"mystery"}


@given(st.integers(0, 10**9), st.integers(0, 10**9))
def test_cost_is_linear_and_non_negative(i: int, o: int) -> None:
    t = PriceTable.default()
    c = t.cost([Usage(model="gpt-4.1", input_tokens=i, output_tokens=o)])
    assert c is not None and c == pytest.approx((2.0 * i + 8.0 * o) / 1e6) and c >= 0


def test_load_yaml_and_json_override_defaults(tmp_path: Path) -> None:
    y = tmp_path / "p.yaml"
    y.write_text("gpt-4o: {input: 1, output: 2}\nmy-model: {input: 0.5, output: 0.5}\n")
    t = load_prices(y)
    assert t.cost([Usage(model="gpt-4o", input_tokens=10**6)]) == pytest.approx(1.0)
    assert t.cost([Usage(model="my-model-v2", output_tokens=10**6)]) == pytest.approx(0.5)
    assert t.lookup("gpt-4o-mini") is not None  # defaults kept
    j = tmp_path / "p.json"
    j.write_text(json.dumps({"x": {"input": 3, "output": 4}}))
    only = load_prices(j, include_defaults=False)
    assert len(only) == 1 and only.to_dict() == {"x": {"input": 3.0, "output": 4.0}}
    assert PriceTable.from_dict(t.to_dict()).to_dict() == t.to_dict()


@pytest.mark.parametrize(
    ("text", "field"),
    [
        ("gpt-4o: {input: -1, output: 2}\n", "gpt-4o.input"),
        ("gpt-4o: {input: 1}\n", "gpt-4o.output"),
        ("gpt-4o: {input: cheap, output: 2}\n", "gpt-4o.input"),
        ("gpt-4o: 3\n", "gpt-4o"),
        ("gpt-4o: {input: true, output: 2}\n", "gpt-4o.input"),
    ],
)
def test_bad_price_files_name_file_and_field(tmp_path: Path, text: str, field: str) -> None:
    p = tmp_path / "prices.yaml"
    p.write_text(text)
    with pytest.raises(InputError) as e:
        load_prices(p)
    assert e.value.field == field and e.value.file == str(p)
    assert str(p) in str(e.value)


def test_unreadable_or_malformed_files(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="cannot be read"):
        load_prices(tmp_path / "missing.yaml")
    bad = tmp_path / "p.json"
    bad.write_text("{not json")
    with pytest.raises(InputError, match="not valid JSON"):
        load_prices(bad)
    lst = tmp_path / "l.yaml"
    lst.write_text("- a\n- b\n")
    with pytest.raises(InputError, match="must map model names"):
        load_prices(lst)


def test_lookup_answers_the_same_when_asked_again() -> None:
    table = PriceTable.from_dict(
        {"m": {"input": 1, "output": 2}, "m-big": {"input": 3, "output": 4}}
    )
    for _ in range(2):  # the second round is answered from the table's memo
        assert table.lookup("M-BIG-2") == table.lookup("m-big")
        assert table.lookup("m-1") == table.lookup("m")
        assert table.lookup("vendor/m-big") == table.lookup("m-big")
        assert table.lookup("other") is None
    merged = table.merged(PriceTable.from_dict({"m-big": {"input": 9, "output": 9}}))
    price = merged.lookup("m-big-2")
    assert price is not None and price.input == 9  # a new table does not reuse the old memo
