"""The gate's policies, one flag each, combinable: rules a team sets, checked besides the
statistics, each of which blocks on its own.

- ``--require SCORER>=X`` (:func:`require`): the candidate's share of cases passing
  ``SCORER`` (every applicable repeat passed; graded scorers: the mean of the case means)
  over the cases where it applied must be at least X.
- ``--no-new-failures [SCORER,...]`` (:func:`no_new_failures`; paired runs only): no case
  may newly fail the named scorers (all compared scorers when none is named). A case
  *newly fails* a scorer when it passed in the baseline (every applicable repeat passed)
  and in the candidate either a majority of its applicable repeats failed, or it was not
  answered and the scorer gave no result. With one repeat that is simply passed -> failed;
  with repeats a single flaky failure out of three does not count, two do.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping

from agenteval.errors import InputError
from agenteval.gate.model import PolicyCheck
from agenteval.gate.rules import ids
from agenteval.summary.percase import CaseAggregate

__all__ = ["newly_failing", "no_new_failures", "parse_require", "require"]


def parse_require(items: Collection[str]) -> dict[str, float]:
    """``["exact_match>=0.9"]`` -> ``{"exact_match": 0.9}``; InputError when malformed."""
    out: dict[str, float] = {}
    for item in items:
        name, sep, value = item.partition(">=")
        try:
            if not sep or not name.strip():
                raise ValueError
            floor = float(value)
            if not 0 <= floor <= 1:
                raise ValueError
        except ValueError:
            raise InputError(
                f"expects SCORER>=X with X within [0, 1] (e.g. exact_match>=0.9), got {item!r}",
                field="require",
            ) from None
        out[name.strip()] = floor
    return out


def require(
    cand: Mapping[str, CaseAggregate], floors: Mapping[str, float], names: Collection[str]
) -> list[PolicyCheck]:
    """One check per floor (see the module docstring); InputError for an unknown scorer."""
    unknown = sorted(set(floors) - set(names))
    if unknown:
        raise InputError(f"names scorers neither run has: {', '.join(unknown)}", field="require")
    out = []
    for name, floor in floors.items():
        scored = [cs for a in cand.values() if (cs := a.scores.get(name)) and cs.applicable]
        binary = all(cs.binary for cs in scored)
        if not scored:
            value = None
        elif binary:
            value = sum(cs.passed == cs.applicable for cs in scored) / len(scored)
        else:
            value = sum(cs.mean or 0.0 for cs in scored) / len(scored)
        blocks = value is None or value < floor - 1e-12
        shown = (
            "no case" if value is None else (f"{100 * value:.1f}%" if binary else f"{value:.3f}")
        )
        out.append(
            PolicyCheck(
                policy=f"{name}>={floor:g}",
                kind="require",
                scorer=name,
                observed=value,
                blocks=blocks,
                says=f"--require {name}>={floor:g}: the candidate has {shown} on"
                f" {len(scored)} case(s)" + (" (below the floor)" if blocks else ""),
            )
        )
    return out


def newly_failing(
    base: Mapping[str, CaseAggregate], cand: Mapping[str, CaseAggregate], name: str
) -> list[str]:
    """The shared cases that newly fail ``name`` (see the module docstring)."""
    out = []
    for cid, b in base.items():
        c = cand.get(cid)
        bs = b.scores.get(name)
        if c is None or bs is None or not bs.applicable or bs.passed != bs.applicable:
            continue
        cs = c.scores.get(name)
        if cs is not None and cs.applicable:
            if 2 * cs.failed > cs.applicable:
                out.append(cid)
        elif not c.all_answered:
            out.append(cid)
    return out


def no_new_failures(
    base: Mapping[str, CaseAggregate],
    cand: Mapping[str, CaseAggregate],
    scorers: Collection[str],
    names: Collection[str],
    declared: Collection[str] = (),
    every: Collection[str] | None = None,
) -> list[PolicyCheck]:
    """One check per scorer named (when ``scorers`` is empty: each of ``every``, default
    ``names``), plus the ``declared`` must-not-regress ones; InputError for a scorer
    neither run has."""
    unknown = sorted(set(scorers) - set(names))
    if unknown:
        raise InputError(
            f"names scorers neither run has: {', '.join(unknown)}", field="no_new_failures"
        )
    default = names if every is None else every
    chosen = list(dict.fromkeys([*(scorers or default), *(n for n in declared if n in names)]))
    out = []
    for name in chosen:
        cases = newly_failing(base, cand, name)
        out.append(
            PolicyCheck(
                policy=name,
                kind="no_new_failures",
                scorer=name,
                cases=cases,
                blocks=bool(cases),
                says=f"--no-new-failures {name}: "
                + (f"{len(cases)} case(s) newly fail: {ids(cases)}" if cases else "none"),
            )
        )
    return out
