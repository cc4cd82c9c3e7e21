"""A run's ``cases.jsonl`` snapshot read back: all at once (:func:`load_run_cases`) or by
id on demand (:class:`RunCases`, for runs too large to hold every parsed case)."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

import orjson

from agenteval._util import fastjson
from agenteval.cases.case import Case, case_from_run
from agenteval.errors import InputError
from agenteval.rundir.header import shard_dirs
from agenteval.rundir.writer import cases_path, cases_paths

__all__ = ["RunCases", "load_run_cases"]

_PARSED = 256  # parsed cases kept at once (repeats of a case are usually written together)
_TOOL_LISTS = 64  # distinct tool lists kept normalised (a suite offers every case the same)


def _bad_case(e: ValueError, path: Path, lineno: int) -> InputError:
    msg = str(e).splitlines()[0]
    return InputError(f"bad case ({msg})", file=path, line=lineno)


def load_run_cases(run_dir: str | Path, *, trust_code: bool = False) -> dict[str, Case]:
    """The cases snapshot of a run, by id (a later line with the same id wins); the code
    its ``$python`` matchers name is imported only with ``trust_code``."""
    cases: dict[str, Case] = {}
    for path in cases_paths(run_dir):  # a sharded run: each shard's
        try:
            f = open(path, encoding="utf-8")  # noqa: SIM115 - closed below
        except OSError:
            raise InputError("has no readable cases.jsonl snapshot", file=path.parent) from None
        with f:
            for lineno, line in enumerate(f, 1):
                if line.strip():
                    try:
                        c = case_from_run(line, trust_code=trust_code)
                    except ValueError as e:
                        raise _bad_case(e, path, lineno) from None
                    cases[c.id] = c
    return cases


class RunCases:
    """A run's cases snapshot by id, without holding every parsed case in memory.

    Opening reads the snapshot once, keeping for each id only where its line starts (a
    later line with the same id wins, as in :func:`load_run_cases`); a line that is not a
    JSON object with a string ``id`` raises InputError then. A case is parsed when first
    asked for, and the last few parsed cases are kept. :meth:`check_rest` validates the
    lines never asked for, so that a bad case anywhere in the snapshot is still an error.
    """

    def __init__(
        self,
        run_dir: str | Path,
        *,
        trust_code: bool = False,
        on_index: Callable[[dict[str, Any]], None] | None = None,
    ) -> None:
        shards = shard_dirs(run_dir)
        if shards:  # rescore and judge write a copy of one run: one shard at a time
            names = ", ".join(s.name for s in shards)
            raise InputError(f"is a run of shards ({names}); give one shard", file=run_dir)
        self.path = cases_path(run_dir)
        self._on_index = on_index  # told each line's JSON object as the snapshot is indexed
        self.trust_code = trust_code  # import the code $python matchers name
        try:
            self._fh: IO[bytes] = open(self.path, "rb")  # noqa: SIM115 - closed in close()
        except OSError:
            raise InputError("has no readable cases.jsonl snapshot", file=run_dir) from None
        self._where: dict[str, tuple[int, int]] = {}  # id -> (offset, line number)
        self._parsed: OrderedDict[str, Case] = OrderedDict()
        self._seen: set[str] = set()
        self._tools: dict[bytes, list[dict[str, Any]]] = {}
        try:
            self._index()
        except BaseException:
            self.close()
            raise

    def _index(self) -> None:
        offset = 0
        for lineno, raw in enumerate(self._fh, 1):
            if raw.strip():
                case_id = self._id_of(raw, lineno)
                self._where[case_id] = (offset, lineno)
            offset += len(raw)

    def _id_of(self, raw: bytes, lineno: int) -> str:
        try:
            data = fastjson.loads(raw)
        except ValueError:
            data = None
        case_id = data.get("id") if isinstance(data, dict) else None
        if isinstance(case_id, str) and self._on_index is not None:
            self._on_index(data)  # a dict with a string id
        if not isinstance(case_id, str):  # pydantic words the message
            try:
                case_from_run(raw, trust_code=self.trust_code)
            except ValueError as e:
                raise _bad_case(e, self.path, lineno) from None
            raise InputError("bad case (no id)", file=self.path, line=lineno)  # pragma: no cover
        return case_id

    def __contains__(self, case_id: str) -> bool:
        return case_id in self._where

    def get(self, case_id: str) -> Case:
        """The case with this id (KeyError when the snapshot has none); InputError if bad."""
        parsed = self._parsed
        case = parsed.get(case_id)
        if case is not None:
            parsed.move_to_end(case_id)
            return case
        offset, lineno = self._where[case_id]
        self._fh.seek(offset)
        raw = self._fh.readline()
        try:
            case = self._parse(raw)
        except ValueError as e:
            raise _bad_case(e, self.path, lineno) from None
        self._seen.add(case_id)
        parsed[case_id] = case
        if len(parsed) > _PARSED:
            parsed.popitem(last=False)
        return case

    def _parse(self, raw: bytes) -> Case:
        """``case_from_run(raw)``, with the case's tool list normalised once per distinct
        list and shared by the cases that have it (a suite offers every case the same
        tools): the checkers of tool_arguments_valid, keyed by the list, are then found by
        identity. Measured on the rescore bench (bench/run.py): the case read went from
        67 to 45 µs, and tool_arguments_valid from 41 to 20 µs a trial. A case the shortcut
        cannot take (not an object, no tools, an error) is read as before, whole."""
        try:
            data = fastjson.loads(raw)
        except ValueError:
            data = None
        tools = data.get("tools") if type(data) is dict else None
        key = None
        if type(tools) is list and tools:
            key = orjson.dumps(tools)
            shared = self._tools.get(key)
            if shared is not None:
                data["tools"] = None
                try:
                    case = case_from_run(data, trust_code=self.trust_code)
                except ValueError:
                    pass  # read whole below, which words the error
                else:  # not yet seen by anyone: set in place (model_copy cost 3 µs)
                    case.__dict__["tools"] = shared
                    return case
        case = case_from_run(raw, trust_code=self.trust_code)
        if key is not None and case.tools:
            if len(self._tools) >= _TOOL_LISTS:
                self._tools.clear()
            self._tools[key] = case.tools
        return case

    def check_rest(self, seen: set[str] | None = None) -> None:
        """Validate every case never asked for (here, or in ``seen``: the ids worker
        processes asked for); InputError naming the first bad line."""
        if seen is not None:
            self._seen |= seen
        rest = [(line, cid) for cid, (_, line) in self._where.items() if cid not in self._seen]
        for _, case_id in sorted(rest):
            self.get(case_id)

    def close(self) -> None:
        self._fh.close()
