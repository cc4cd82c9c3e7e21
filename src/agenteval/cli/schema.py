"""``agenteval schema case|trial|run|trial-record``: print a data contract's JSON Schema.

The schemas describe what agenteval *reads*: the shorthand forms the loaders accept are
allowed too (an integer ``id``, ``expected_tools`` as a list of names, ``canary`` as one
string, unknown case fields kept as metadata, OpenAI-style tool calls, ``latency`` as a
number of seconds, ``usage`` as one object). Everything agenteval writes validates against
them.

- ``case``: one row of a dataset (SPEC §2.1).
- ``trial``: one line of a trial file (SPEC §2.2).
- ``run``: ``run.json``, the header of a run directory (SPEC §2.4).
- ``trial-record``: one line of a run's ``trials.jsonl``: a trial plus its ``scores``.
"""

from __future__ import annotations

import argparse
import copy
import json
import sys
from collections.abc import Callable
from typing import Any

# Each model is imported by the function that asks it for its schema: --help starts without
# the models (start-up).

DIALECT = "https://json-schema.org/draft/2020-12/schema"

_STRINGS: dict[str, Any] = {"type": "array", "items": {"type": "string"}}


def _widen(prop: dict[str, Any], *extra: dict[str, Any]) -> None:
    """Make ``prop`` also accept each schema in ``extra`` (in place)."""
    core = {k: v for k, v in prop.items() if k not in ("title", "description", "default")}
    for k in core:
        del prop[k]
    branches = core["anyOf"] if list(core) == ["anyOf"] else [core]
    prop["anyOf"] = [*extra, *branches]


def _case() -> dict[str, Any]:
    from agenteval.cases.case import Case  # (start-up: on first use)

    s = Case.model_json_schema()
    props = s["properties"]
    s["additionalProperties"] = True  # unknown fields are kept as metadata
    _widen(props["id"], {"type": "integer"})
    _widen(props["expected_tools"], _STRINGS)
    _widen(props["must_not_contain"], {"type": "string"})
    _widen(props["canary"], {"type": "string"})
    _widen(props["tags"], {"type": "null"})
    _widen(props["metadata"], {"type": "null"})
    return s


def _trial_shorthands(s: dict[str, Any]) -> None:
    props = s["properties"]
    _widen(props["case_id"], {"type": "integer"})
    _widen(props["latency"], {"type": "number", "minimum": 0}, {"type": "null"})
    _widen(props["usage"], {"$ref": "#/$defs/Usage"}, {"type": "null"})
    _widen(props["tool_calls"], {"type": "null"})
    _widen(props["retries"], {"type": "null"})
    openai_call = {
        "type": "object",
        "description": "OpenAI form: {id, type: function, function: {name, arguments}}.",
        "required": ["function"],
        "properties": {
            "id": {"type": ["string", "null"]},
            "type": {"const": "function"},
            "function": {
                "type": "object",
                "required": ["name"],
                "properties": {"name": {"type": "string"}, "arguments": {}},
            },
        },
    }
    tool_call = s["$defs"]["ToolCall"]
    s["$defs"]["ToolCall"] = {"anyOf": [tool_call, openai_call]}


def _trial() -> dict[str, Any]:
    from agenteval.trials.trial import Trial  # (start-up: on first use)

    s = Trial.model_json_schema()
    _trial_shorthands(s)
    return s


def _trial_record() -> dict[str, Any]:
    from agenteval.rundir import TrialRecord  # (start-up: on first use)

    s = TrialRecord.model_json_schema()
    _trial_shorthands(s)
    score = s["$defs"]["Score"]
    score["properties"]["value"]["anyOf"][0].update({"minimum": 0, "maximum": 1})
    score["properties"]["value"]["description"] = "In [0, 1]; null = not applicable."
    score["properties"]["passed"] = {
        "type": ["boolean", "null"],
        "description": "True for status passed, false for failed, else null (derived, ignored"
        " on read).",
    }
    status = score["properties"]["status"]
    status.pop("default", None)
    status["description"] = (
        "passed | failed | not_applicable | inconclusive | error. Absent in format 1 runs"
        " (agenteval 0.1): derived on read."
    )
    return s


def _run() -> dict[str, Any]:
    from agenteval.rundir import FORMAT_VERSION, RunHeader  # (start-up: on first use)

    s = RunHeader.model_json_schema()
    s["properties"]["format_version"]["description"] = (
        f"Layout version ({FORMAT_VERSION} today); readers accept this and every older one."
    )
    scorers = s["properties"]["scorers"]
    scorers["items"] = {
        "anyOf": [
            scorers["items"],
            {"type": "string", "description": "Format 1 (agenteval 0.1): a scorer's name."},
        ]
    }
    return s


SCHEMAS: dict[str, Callable[[], dict[str, Any]]] = {
    "case": _case,
    "trial": _trial,
    "run": _run,
    "trial-record": _trial_record,
}
"""The contracts ``agenteval schema`` knows, by name."""


def schema_for(name: str) -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of the contract ``name`` (a key of :data:`SCHEMAS`).

    Raises KeyError for an unknown name.
    """
    s = copy.deepcopy(SCHEMAS[name]())
    return {"$schema": DIALECT, **s}


def register(sub: Any) -> None:
    """Add the ``schema`` subcommand."""
    p: argparse.ArgumentParser = sub.add_parser(
        "schema",
        help="print the JSON Schema of a case, trial, run header or stored trial",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("what", choices=list(SCHEMAS), help="which contract")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Print the schema as indented JSON on stdout; returns 0."""
    sys.stdout.write(json.dumps(schema_for(args.what), indent=2, ensure_ascii=False) + "\n")
    return 0
