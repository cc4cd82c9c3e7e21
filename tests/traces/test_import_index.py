"""The two indexes that keep ``import-traces`` linear: each unit gets only its own spans'
log records (``_LogIndex``), and the spool numbers repeats of a case without a query per
trial (``Spool.use_case``: cases waiting in memory, a Bloom filter of the stored ids).
Each is checked against the plain rule it replaces."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agenteval.cases.case import Case
from agenteval.traces import spool as spool_mod
from agenteval.traces.importer import _LogIndex
from agenteval.traces.logs import LogRecord, attach
from agenteval.traces.records import SpanRecord
from agenteval.traces.spool import Spool
from agenteval.traces.units import Unit

TRACES = ["a" * 32, "b" * 32]
SPAN_IDS = ["1" * 16, "2" * 16, "3" * 16]


def _old_logs(u: Unit, logs: list[LogRecord]) -> list[LogRecord]:
    """What the import gave a unit before: every record of its trace, then the untraced."""
    by_trace: dict[str, list[LogRecord]] = {}
    for r in logs:
        by_trace.setdefault(r.trace_id or "", []).append(r)
    untraced = by_trace.pop("", [])
    return by_trace.get(u.trace_id, []) + untraced


spans = st.lists(
    st.builds(
        lambda t, s, n: SpanRecord(name=f"s{n}", span_id=s, trace_id=t),
        st.sampled_from(TRACES),
        st.sampled_from(SPAN_IDS),
        st.integers(0, 9),
    ),
    min_size=1,
    max_size=5,
)
logs = st.lists(
    st.builds(
        lambda t, s, n: LogRecord(f"log{n}", t, s, n, {"n": n}),
        st.sampled_from([*TRACES, None, ""]),
        st.sampled_from([*SPAN_IDS, None, "9" * 16]),
        st.integers(0, 99),
    ),
    max_size=8,
)


@settings(max_examples=150, deadline=None)
@given(spans, logs)
def test_a_unit_gets_the_log_events_it_got_before(
    members: list[SpanRecord], records: list[LogRecord]
) -> None:
    u = Unit("k", members[0].trace_id, [members[0]], members)  # a conversation may span traces
    assert attach(u.spans, _LogIndex(records).of(u)) == attach(u.spans, _old_logs(u, records))


def _model(ids: list[str]) -> list[tuple[int, bool]]:
    seen: dict[str, int] = {}
    out = []
    for i in ids:
        out.append((seen.get(i, 0), i not in seen))
        seen[i] = seen.get(i, 0) + 1
    return out


class _AlwaysMaybe(spool_mod._Bloom):
    """A Bloom filter that answers every id "maybe": each new id takes the query path."""

    def has(self, key: bytes) -> bool:
        return True


@pytest.mark.parametrize("bloom", [spool_mod._Bloom, _AlwaysMaybe])
@settings(max_examples=60, deadline=None)
@given(
    ids=st.lists(st.sampled_from([f"c{i}" for i in range(12)] + ["\ud800x", "\u00e9"]), max_size=60)
)
def test_repeats_are_numbered_as_a_dict_would(bloom: type, ids: list[str]) -> None:
    with pytest.MonkeyPatch.context() as m:
        m.setattr(spool_mod, "_PENDING", 3)  # most cases go to the database and back
        made: dict[str, Case] = {}
        got: list[tuple[int, bool]] = []
        with Spool() as sp:
            sp._seen = bloom()
            for i in ids:

                def make(i: str = i) -> Case:
                    assert i not in made, "made twice"
                    made[i] = Case(id=f"x{len(made)}", input=i)
                    return made[i]

                case, repeat, new = sp.use_case(i, make)
                assert case == made[i]  # the first case made under the id
                got.append((repeat, new))
    assert got == _model(ids)


def test_the_bloom_filter_never_forgets() -> None:
    b = spool_mod._Bloom()
    keys = [f"t-{i:012x}".encode() for i in range(20_000)]
    for k in keys:
        b.add(k)
    assert all(b.has(k) for k in keys)
    false_yes = sum(b.has(f"u-{i}".encode()) for i in range(20_000))
    assert false_yes < 20  # about 1 in 180,000 at this size
