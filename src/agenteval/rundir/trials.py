"""``trials.jsonl``: one stored trial with its scores per line, written and read fast.

:func:`trial_line` serialises a trial and its scores as one line; :func:`parse_trial_line`
reads one back as a :class:`TrialRecord` (InputError naming file, line and field for bad
input); :func:`iter_trials` streams a run's trials, skipping a torn last line and refusing
a second line for the same (case_id, repeat), and reads the shards of a sharded run
(:func:`~agenteval.rundir.header.shard_dirs`) one after the other as one run. Equal plain
scores are serialised and parsed once per writer/reader (bounded caches): most "not
applicable" scores repeat exactly.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pydantic import ConfigDict, Field, ValidationError

from agenteval._util import fastjson
from agenteval._util.untrusted import replace_surrogates
from agenteval.errors import InputError
from agenteval.rundir.header import TRIALS, shard_dirs
from agenteval.scoring.score import Score
from agenteval.trials.trial import Trial


class TrialRecord(Trial):
    """A trial as stored in a run: the observation plus its scores."""

    model_config = ConfigDict(extra="ignore", arbitrary_types_allowed=True)

    scores: dict[str, Score] = Field(default_factory=dict)


def trial_line(trial: Trial, scores: dict[str, Score]) -> str:
    """Serialise one trial and its scores as a ``trials.jsonl`` line (with newline)."""
    return _trial_line(trial, scores, {})


_ScoreKey = tuple[str, float | None, str, float, str | None, str]
_CACHE_MAX = 4096  # distinct (scorer, score) fragments remembered by one writer/reader


def _cacheable_zero(x: float | None) -> bool:
    """False for -0.0, which equals 0.0 as a dict key but must keep its sign."""
    return x is None or x != 0.0 or math.copysign(1.0, x) > 0


def _scores_json(scores: dict[str, Score], cache: dict[_ScoreKey, str]) -> str:
    """``{"name":{...},...}``. The fragment of a plain score (no judge usage) is serialised
    once per writer and reused for equal scores: most "not applicable" scores repeat exactly.
    Equal keys can differ only in how a number is spelled (``1`` vs ``1.0``), never in value.
    """
    parts = []
    for name, s in scores.items():
        frag = None
        if not s.usage:
            key = (name, s.value, s.reason, s.threshold, s.error, s.status)
            hashable = True
            try:
                frag = cache.get(key)
            except TypeError:  # an unhashable field in a hand-made Score
                hashable = False
            if frag is None:
                frag = _frag(name, s)
                if hashable and _cacheable_zero(s.value):
                    if len(cache) >= _CACHE_MAX:
                        cache.clear()
                    cache[key] = frag
        else:
            frag = _dumps(name) + ":" + _dumps(s.to_dict())
        parts.append(frag)
    return "{" + ",".join(parts) + "}"


_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))
_dumps = _ENCODER.encode  # json.dumps(obj, ensure_ascii=False, separators=(",", ":"))
_PASSED = {"passed": ',"passed":true,"threshold":', "failed": ',"passed":false,"threshold":'}
_NOT_DECIDED = ',"passed":null,"threshold":'
_str = fastjson.dumps_str


def _frag(name: str, s: Score) -> str:
    """``"name":{score}``, the text ``_dumps(name) + ":" + _dumps(s.to_dict())`` gives.

    Spelled directly for a score of plain types (a float or None value, a float threshold:
    ``repr`` of a float is how json writes it, and both are finite, within [0, 1]): 1.9 µs
    a score against 6.3 µs through to_dict and the encoder (rescore bench, bench/run.py).
    Anything else (judge usage, an int threshold of a hand-made Score) goes the slow way.
    """
    v, t, reason, error, status = s.value, s.threshold, s.reason, s.error, s.status
    if (
        s.usage
        or type(t) is not float
        or (v is not None and type(v) is not float)
        or type(reason) is not str
        or type(status) is not str
        or (error is not None and type(error) is not str)
    ):
        return _dumps(name) + ":" + _dumps(s.to_dict())
    tail = "}" if error is None else ',"error":' + _str(error) + "}"
    passed = _PASSED.get(status, _NOT_DECIDED)
    value = "null" if v is None else repr(v)
    return (
        f'{_str(name)}:{{"status":{_str(status)},"value":{value}'
        f',"reason":{_str(reason)}{passed}{t!r}{tail}'
    )


def _trial_line(
    trial: Trial, scores: dict[str, Score], cache: dict[_ScoreKey, str], repair: bool = True
) -> str:
    # pydantic's JSON serialiser gives the same values as model_dump(mode="json") followed by
    # json.dumps, several times faster; the trial object always ends with "}".
    exclude = {"scores"} if isinstance(trial, TrialRecord) else None
    try:
        text = trial.model_dump_json(exclude=exclude)
    except ValueError:  # a lone surrogate from the agent: not encodable, written as U+FFFD
        if not repair:
            raise  # the caller repairs the trial itself (the runner counts replacements)
        text = replace_surrogates(_dumps(trial.model_dump(mode="json", exclude=exclude)))
    return text[:-1] + ',"scores":' + _scores_json(scores, cache) + "}\n"


_NO = object()


def _score_from(d: Any, cache: dict[tuple[Any, ...], Score]) -> Score:
    """``Score.from_dict(d)``, reusing the Score of an identical plain stored score."""
    if type(d) is not dict or d.get("usage"):
        return Score.from_dict(d)
    value, reason, threshold, error, status = (
        d.get("value"),
        d.get("reason", _NO),
        d.get("threshold", _NO),
        d.get("error"),
        d.get("status"),
    )
    # only exact JSON types are cached: True == 1 and "1" vs 1 must not share an entry
    if (
        (value is None or (type(value) is float and _cacheable_zero(value)))
        and type(reason) is str
        and (threshold is _NO or (type(threshold) is float and _cacheable_zero(threshold)))
        and (error is None or type(error) is str)
        and (status is None or type(status) is str)
    ):
        key = (value, reason, threshold, error, status)
        hit = cache.get(key)
        if hit is None:
            hit = Score.from_dict(d)
            if len(cache) >= _CACHE_MAX:
                cache.clear()
            cache[key] = hit
        return hit
    return Score.from_dict(d)


def parse_trial_line(line: str | bytes, *, file: str, lineno: int) -> TrialRecord:
    """Parse one stored trial line; raise InputError naming file and line."""
    return _parse_trial_line(line, file, lineno, {})


def _parse_trial_line(
    line: str | bytes, file: str, lineno: int, cache: dict[tuple[Any, ...], Score]
) -> TrialRecord:
    try:
        data = fastjson.loads(line)  # same values as json.loads, several times as fast
    except ValueError:
        try:  # json.loads decides what is valid and words the error
            data = json.loads(line)
        except ValueError as e:
            raise InputError(f"not valid JSON ({e})", file=file, line=lineno) from None
        except RecursionError:
            raise InputError("JSON nested too deeply", file=file, line=lineno) from None
    if not isinstance(data, dict):
        raise InputError("a trial must be a JSON object", file=file, line=lineno)
    raw_scores = data.pop("scores", None) or {}
    if not isinstance(raw_scores, dict):
        raise InputError("scores must be a JSON object", file=file, line=lineno, field="scores")
    try:
        trial = TrialRecord.model_validate(data)
        scores = {str(k): _score_from(v, cache) for k, v in raw_scores.items()}
    except ValidationError as e:
        err = e.errors()[0]
        field = ".".join(str(p) for p in err["loc"]) or None
        raise InputError(err["msg"], file=file, line=lineno, field=field) from None
    except (TypeError, ValueError, AttributeError) as e:
        raise InputError(f"bad score: {e}", file=file, line=lineno, field="scores") from None
    except RecursionError:
        raise InputError("JSON nested too deeply", file=file, line=lineno) from None
    trial.scores = scores
    return trial


def iter_trials(run_dir: str | Path) -> Iterator[TrialRecord]:
    """Stream the trials of a run, skipping a torn last line.

    A second line for the same (case_id, repeat) is an InputError naming both lines: a
    run holds each trial once, and counting one twice would skew every statistic.

    A sharded run's trials are its shards' in shard order. A case id met in an earlier
    shard has its repeats numbered on after that shard's (replicas number the repeats of
    a case id on their own, as one monitor numbers them in arrival order).
    """
    path = Path(run_dir) / TRIALS
    try:
        f = open(path, "rb")  # noqa: SIM115 - closed below
    except FileNotFoundError:
        shards = shard_dirs(run_dir)
        if shards:
            yield from _shard_trials(shards)
            return
        raise InputError("is not a run directory (no trials.jsonl)", file=path.parent) from None
    except OSError as e:
        raise InputError(f"cannot be read ({e.strerror or e})", file=path) from None
    cache: dict[tuple[Any, ...], Score] = {}
    seen: dict[tuple[str, int], int] = {}
    name = str(path)
    with f:
        for lineno, raw in enumerate(f, 1):
            if not raw.endswith(b"\n"):
                break  # torn last line: the writer died mid-line
            if raw.strip():
                rec = _parse_trial_line(raw, name, lineno, cache)
                first = seen.setdefault(rec.key, lineno)
                if first != lineno:
                    raise InputError(
                        f"a second trial for case '{rec.case_id}' repeat {rec.repeat}"
                        f" (first at line {first})",
                        file=name,
                        line=lineno,
                    )
                yield rec


def _shard_trials(shards: list[Path]) -> Iterator[TrialRecord]:
    """The trials of a sharded run, repeats of a case id numbered on across shards."""
    offset: dict[str, int] = {}  # case id -> repeats used by the shards read so far
    for shard in shards:
        used: dict[str, int] = {}
        for rec in iter_trials(shard):
            cid = rec.case_id
            used[cid] = max(used.get(cid, 0), rec.repeat + 1)
            rec.repeat += offset.get(cid, 0)
            yield rec
        for cid, n in used.items():
            offset[cid] = offset.get(cid, 0) + n
