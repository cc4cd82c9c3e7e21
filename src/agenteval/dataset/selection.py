"""Which cases of a dataset a run takes: tags, field conditions, ids, a seeded sample.

A :class:`Selection` is applied to the cases in file order and keeps a case when **all** of
its parts hold (an intersection); a part left out holds for every case:

- ``tags``: the case has **any** of these tags.
- ``where``: for **every** ``(field, value)`` pair, the case's field matches ``value``
  (:func:`field_matches`). ``field`` is a case field (``id``, ``expected``, ``match_mode``,
  ``context``, ``notes``, ``tags``...) or ``metadata.KEY`` (dotted further into nested
  objects: ``metadata.source.kind``).
- ``ids``: the case's id is one of these. An id that is not in the dataset is an error
  (:class:`~agenteval.errors.InputError`, field ``cases``, naming the ids), checked against
  the whole dataset, before the other parts.
- ``sample``: of the cases the parts above kept, a seeded random sample: an ``int`` N keeps
  exactly ``min(N, kept)`` cases; a ``float`` rate in (0, 1) keeps ``round(rate * kept)``
  cases, at least one. The same cases, seed and sample always give the same sample (Python's
  :class:`random.Random` seeded with ``seed``, on the kept cases in file order). With
  ``stratify`` the sample is drawn within each case's *first* tag (untagged cases form one
  more stratum): every stratum keeps at least one case, the rest is shared in proportion
  to the strata's sizes (largest remainder, ties to the stratum seen first), so a sample
  smaller than the number of strata is refused.

The chosen cases keep their file order. A selection that keeps no case is an error.
:meth:`Selection.record` is how ``run.json`` records it (``settings.selection``;
docs/formats.md).
"""

from __future__ import annotations

import json
import math
import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from agenteval.cases.case import Case
from agenteval.errors import InputError

__all__ = [
    "Selection",
    "describe_selection",
    "field_matches",
    "sample_size",
    "stratified_sample",
]

UNTAGGED = ""
"""The stratum of cases without a tag."""


def _text(value: Any) -> str | None:
    """A scalar as ``--where`` compares it: strings as they are, numbers and booleans as
    their JSON text (``3``, ``0.5``, ``true``); None and containers: no text."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool | int | float):
        return json.dumps(value)
    return None


def _lookup(case: Case, field: str) -> tuple[bool, Any]:
    """(found, value) of ``field`` (a case field or ``metadata.KEY[.KEY...]``)."""
    head, _, rest = field.partition(".")
    if head == "metadata" and rest:
        value: Any = case.metadata
        for part in rest.split("."):
            if not isinstance(value, dict) or part not in value:
                return False, None
            value = value[part]
        return True, value
    if rest or head not in Case.model_fields or head == "metadata":
        raise InputError(
            f"unknown field {field!r}: give a case field (id, expected, tags, match_mode,"
            " context, notes...) or metadata.KEY",
            field="where",
        )
    return True, getattr(case, head)


def field_matches(case: Case, field: str, value: str) -> bool:
    """Whether ``case``'s ``field`` matches ``value`` (the ``--where FIELD=VALUE`` rule).

    A string matches when equal to ``value`` (case and spaces count); a number or boolean
    when its JSON text equals ``value`` (``metadata.difficulty=3``, ``metadata.hard=true``;
    ``3`` does not match ``3.0``); a list when any of its scalar elements matches (so
    ``tags=loans`` is ``--tag loans``). A missing field, a null, an object and the
    empty list match nothing. An unknown field name is an InputError (field ``where``).
    """
    found, v = _lookup(case, field)
    if not found:
        return False
    values = v if isinstance(v, list) else [v]
    return any(_text(x) == value for x in values)


def sample_size(sample: int | float, population: int) -> int:
    """How many of ``population`` cases a ``sample`` keeps (see the module docstring)."""
    if population == 0:
        return 0
    if isinstance(sample, int):
        return min(sample, population)
    return max(1, min(population, round(sample * population)))


def _allocate(sizes: Sequence[int], n: int) -> list[int]:
    """``n`` shared over strata of ``sizes``: one each, the rest by largest remainder of
    the proportional share, never above a stratum's size (requires len(sizes) <= n <=
    sum(sizes))."""
    total = sum(sizes)
    alloc = [1] * len(sizes)
    for _ in range(n - len(sizes)):
        best = max(
            (i for i in range(len(sizes)) if alloc[i] < sizes[i]),
            key=lambda i: (sizes[i] * n / total - alloc[i], -i),
        )
        alloc[best] += 1
    return alloc


def stratified_sample(strata: Sequence[str], n: int, seed: int) -> list[int]:
    """The indices (ascending) of ``n`` items sampled within their strata (``strata[i]``
    is item i's stratum); see the module docstring for the allocation."""
    groups: dict[str, list[int]] = {}
    for i, s in enumerate(strata):
        groups.setdefault(s, []).append(i)
    if n < len(groups):
        raise InputError(
            f"a stratified sample of {n} cannot keep each of the {len(groups)} tags"
            f" (first tags of the cases); sample at least {len(groups)}",
            field="sample",
        )
    rng = random.Random(seed)
    members = list(groups.values())
    chosen: list[int] = []
    for idx, k in zip(members, _allocate([len(m) for m in members], n), strict=True):
        chosen.extend(rng.sample(idx, k))
    return sorted(chosen)


@dataclass(frozen=True, slots=True)
class Selection:
    """Which cases a run takes (the module docstring has the rules)."""

    tags: tuple[str, ...] = ()
    where: tuple[tuple[str, str], ...] = ()
    ids: tuple[str, ...] | None = None
    sample: int | float | None = None
    seed: int = 0
    stratify: bool = False

    def __post_init__(self) -> None:
        s = self.sample
        if s is not None and (
            isinstance(s, bool)
            or (isinstance(s, int) and s < 1)
            or (isinstance(s, float) and not (0.0 < s < 1.0 and math.isfinite(s)))
        ):
            raise InputError(
                f"must be a count >= 1 or a rate between 0 and 1, got {s!r}", field="sample"
            )
        if self.stratify and s is None:
            raise InputError("stratify applies to a sample: give a sample too", field="stratify")

    @property
    def empty(self) -> bool:
        """True when it keeps every case (no part given)."""
        return not (self.tags or self.where or self.ids is not None or self.sample is not None)

    def keeps(self, case: Case) -> bool:
        """Whether the filters (tags, where, ids; not the sample) keep ``case``."""
        if self.tags and not any(t in self.tags for t in case.tags):
            return False
        if self.ids is not None and case.id not in self.ids:
            return False
        return all(field_matches(case, f, v) for f, v in self.where)

    def check_ids(self, all_ids: Sequence[str]) -> None:
        """InputError naming the ``ids`` that are not in ``all_ids``."""
        if self.ids is None:
            return
        known = set(all_ids)
        unknown = [i for i in self.ids if i not in known]
        if unknown:
            shown = ", ".join(repr(i) for i in unknown[:10]) + (" ..." if len(unknown) > 10 else "")
            raise InputError(
                f"{len(unknown)} case id(s) not in the dataset: {shown}", field="cases"
            )

    def choose_strata(self, strata: Sequence[str]) -> list[int]:
        """The indices (ascending) the sample keeps of the cases :meth:`keeps` kept, given
        as their strata (first tag, ``""`` when untagged; file order); all without a
        sample."""
        if self.sample is None:
            return list(range(len(strata)))
        n = sample_size(self.sample, len(strata))
        if self.stratify:
            return stratified_sample(strata, n, self.seed)
        return sorted(random.Random(self.seed).sample(range(len(strata)), n))

    def choose(self, kept: Sequence[Case]) -> list[int]:
        """:meth:`choose_strata` for the cases themselves."""
        return self.choose_strata([c.tags[0] if c.tags else UNTAGGED for c in kept])

    def apply(self, cases: Sequence[Case]) -> list[Case]:
        """The selected cases of ``cases`` (a whole dataset, in file order)."""
        self.check_ids([c.id for c in cases])
        kept = [c for c in cases if self.keeps(c)]
        chosen = [kept[i] for i in self.choose(kept)]
        if not chosen:
            raise InputError(f"the selection ({self.describe()}) keeps no case")
        return chosen

    def to_dict(self) -> dict[str, Any]:
        """The parts given, as ``run.json`` records them (``settings.selection``)."""
        d: dict[str, Any] = {}
        if self.tags:
            d["tags"] = list(self.tags)
        if self.where:
            d["where"] = [f"{f}={v}" for f, v in self.where]
        if self.ids is not None:
            d["cases"] = list(self.ids)
        if self.sample is not None:
            d.update(sample=self.sample, seed=self.seed)
            if self.stratify:
                d["stratify"] = "tag"
        return d

    def record(self, selected: int, of: int) -> dict[str, Any]:
        """:meth:`to_dict` with how many cases it kept (``selected``) of how many (``of``):
        ``settings.selection`` of ``run.json``."""
        return {**self.to_dict(), "selected": selected, "of": of}

    def describe(self) -> str:
        """``tag loans or fees, where metadata.tier=gold, sample 10 (seed 0)``."""
        return describe_selection(self.to_dict())


def describe_selection(d: dict[str, Any]) -> str:
    """One phrase for a recorded selection (``settings.selection`` of ``run.json``)."""
    parts: list[str] = []
    if d.get("tags"):
        parts.append("tag " + " or ".join(str(t) for t in d["tags"]))
    if d.get("where"):
        parts.append("where " + " and ".join(str(w) for w in d["where"]))
    if d.get("cases") is not None:
        parts.append(f"{len(d['cases'])} listed case id(s)")
    if d.get("sample") is not None:
        by = " by tag" if d.get("stratify") else ""
        parts.append(f"sample {d['sample']}{by} (seed {d.get('seed', 0)})")
    if d.get("selected") is not None and d.get("of") is not None:
        parts.append(f"{d['selected']} of {d['of']} cases")
    return ", ".join(parts) or "the selection"
