"""Token prices: what a run cost, agent and judge separately (SPEC §7).

A :class:`PriceTable` maps model names to USD per million input and output tokens. A model
name is matched exactly (case-insensitive) first, then by the longest known prefix
(``gpt-4o-mini-2024-07-18`` → ``gpt-4o-mini``); a provider prefix such as ``openai/`` is
ignored when the full name does not match. A model that matches nothing has an *unknown*
price: :meth:`PriceTable.cost` returns None for it, never 0.

The built-in defaults are list prices published by the vendors, checked 2025-06; pass a
price file (``load_prices``) to use your own, which overrides them model by model.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agenteval.errors import InputError
from agenteval.trials.trial import Usage

_MEMO_SIZE = 1024  # model names a table remembers the price of

# USD per million tokens (input, output); vendor list prices as of 2025-06.
DEFAULT_PRICES: dict[str, tuple[float, float]] = {
    "gpt-4o": (2.50, 10.00),
    "gpt-4o-mini": (0.15, 0.60),
    "gpt-4.1": (2.00, 8.00),
    "gpt-4.1-mini": (0.40, 1.60),
    "gpt-4.1-nano": (0.10, 0.40),
    "o1": (15.00, 60.00),
    "o1-mini": (1.10, 4.40),
    "o3": (2.00, 8.00),
    "o3-mini": (1.10, 4.40),
    "o4-mini": (1.10, 4.40),
    "claude-3-5-sonnet": (3.00, 15.00),
    "claude-3-5-haiku": (0.80, 4.00),
    "claude-3-7-sonnet": (3.00, 15.00),
    "claude-sonnet-4": (3.00, 15.00),
    "claude-opus-4": (15.00, 75.00),
    "claude-3-haiku": (0.25, 1.25),
}


@dataclass(frozen=True, slots=True)
class ModelPrice:
    """USD per million tokens for one model."""

    input: float
    output: float


class PriceTable:
    """Per-model token prices, with exact-then-longest-prefix name matching."""

    def __init__(self, prices: Mapping[str, ModelPrice]) -> None:
        self._prices = {k.lower(): v for k, v in prices.items()}
        # lookup() answers by model name; a run names few models, many times each.
        self._found: dict[str, ModelPrice | None] = {}

    @classmethod
    def default(cls) -> PriceTable:
        """The built-in table (:data:`DEFAULT_PRICES`)."""
        return cls({k: ModelPrice(i, o) for k, (i, o) in DEFAULT_PRICES.items()})

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, source: str | None = None) -> PriceTable:
        """Build a table from ``{model: {input: X, output: Y}}`` (USD per million tokens).

        Raises InputError naming ``source`` and the field when an entry is malformed.
        """
        if not isinstance(data, Mapping):
            raise InputError("a price table must map model names to {input, output}", file=source)
        prices: dict[str, ModelPrice] = {}
        for model, entry in data.items():
            if not isinstance(entry, Mapping):
                raise InputError(
                    "must be an object {input: X, output: Y}", file=source, field=str(model)
                )
            values: list[float] = []
            for key in ("input", "output"):
                v = entry.get(key)
                if isinstance(v, bool) or not isinstance(v, int | float):
                    raise InputError(
                        "must be a number (USD per million tokens)",
                        file=source,
                        field=f"{model}.{key}",
                    )
                if math.isnan(v) or math.isinf(v) or v < 0:
                    raise InputError(
                        "must be a finite number >= 0", file=source, field=f"{model}.{key}"
                    )
                values.append(float(v))
            prices[str(model)] = ModelPrice(values[0], values[1])
        return cls(prices)

    def merged(self, other: PriceTable) -> PriceTable:
        """A new table with ``other``'s entries overriding this one's."""
        return PriceTable({**self._prices, **other._prices})

    def lookup(self, model: str | None) -> ModelPrice | None:
        """The price of ``model``: exact match, else longest known prefix; None if unknown."""
        if not model:
            return None
        try:
            return self._found[model]
        except KeyError:
            pass
        price = self._lookup(model)
        if len(self._found) >= _MEMO_SIZE:
            self._found.clear()
        self._found[model] = price
        return price

    def _lookup(self, model: str) -> ModelPrice | None:
        name = model.lower()
        for candidate in (name, name.rsplit("/", 1)[-1]):
            if candidate in self._prices:
                return self._prices[candidate]
            best = max((k for k in self._prices if candidate.startswith(k)), key=len, default=None)
            if best is not None:
                return self._prices[best]
        return None

    def cost(self, usages: Iterable[Usage]) -> float | None:
        """USD for these usages; None when any usage with tokens has an unknown model.

        A usage with zero tokens costs nothing whatever its model; an empty list costs 0.
        """
        total = 0.0
        for u in usages:
            if u.input_tokens == 0 and u.output_tokens == 0:
                continue
            price = self.lookup(u.model)
            if price is None:
                return None
            total += (u.input_tokens * price.input + u.output_tokens * price.output) / 1e6
        return total

    def unknown_models(self, usages: Iterable[Usage]) -> set[str]:
        """Names of the models (with tokens) that have no price; ``"?"`` for a missing name."""
        out: set[str] = set()
        for u in usages:
            if (u.input_tokens or u.output_tokens) and self.lookup(u.model) is None:
                out.add(u.model or "?")
        return out

    def to_dict(self) -> dict[str, dict[str, float]]:
        """``{model: {input, output}}``, the form stored in ``run.json``."""
        return {k: {"input": v.input, "output": v.output} for k, v in sorted(self._prices.items())}

    def __len__(self) -> int:
        return len(self._prices)


def load_prices(path: str | Path, *, include_defaults: bool = True) -> PriceTable:
    """Read a YAML or JSON price file ``{model: {input: X, output: Y}}`` (USD per 1M tokens).

    The result is the built-in table overridden by the file's entries (only the file's
    entries with ``include_defaults=False``). Any problem raises InputError naming the file
    and the field.
    """
    # yaml: only a price file loads it (-X importtime: ~25 ms at the start of every run)
    import yaml

    from agenteval._util import yaml_guard  # (start-up: with yaml, on first use)

    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise InputError(f"cannot be read ({e})", file=p) from None
    try:
        data = json.loads(text) if p.suffix.lower() == ".json" else yaml_guard.safe_load(text, p)
    except (ValueError, yaml.YAMLError, RecursionError) as e:
        kind = "JSON" if p.suffix.lower() == ".json" else "YAML"
        detail = (
            " ".join(str(e).split()) if not isinstance(e, RecursionError) else "nested too deeply"
        )
        raise InputError(f"not valid {kind}: {detail}", file=p) from None
    if data is None:
        raise InputError("is empty: a price file needs at least one model", file=p)
    table = PriceTable.from_dict(data, source=str(p))
    return PriceTable.default().merged(table) if include_defaults else table
