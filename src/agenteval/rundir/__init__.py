"""The run directory: ``run.json`` + ``cases.jsonl`` + ``trials.jsonl`` (SPEC §2.4).

- ``run.json`` is the header: format version, run id, kind, times, agenteval version, the
  agent (secrets removed), the dataset (path and content hash), the scorers, the price
  table, the settings and, once finished, the summary. It is replaced atomically.
- ``cases.jsonl`` is a snapshot of the validated cases, so that ``rescore``, ``judge`` and
  ``report`` never depend on the dataset file still being there unchanged.
- ``trials.jsonl`` holds one trial per line with its ``scores``; each line is appended and
  flushed as the trial finishes, so a crash loses nothing but the trials in flight.
- ``run.lock`` is the writer's lock file (:mod:`agenteval.rundir.lock`): one process writes a
  run at a time.

A new run goes only into a directory that did not exist, or was empty
(:func:`claim_new_run_dir`); a writer that wrote no trial can :meth:`RunWriter.discard`
what it made.

Readers accept every format version up to :data:`FORMAT_VERSION`; a run of format 1
(agenteval 0.1: scores without ``status``, scorers as bare names) is migrated as it is read
(see :mod:`agenteval.rundir.migrate`). A torn last line (the process died mid-write) is detected:
readers skip it, and :meth:`RunWriter.open_resume` cuts it off and says so.

The code is in three modules, re-exported here (``from agenteval.rundir import ...`` is
the import to use): :mod:`agenteval.rundir.header` (``run.json``), :mod:`agenteval.rundir.trials`
(``trials.jsonl`` lines) and :mod:`agenteval.rundir.writer` (creating, writing, resuming).
"""

from __future__ import annotations

from agenteval.dataset.ref import DatasetRef
from agenteval.rundir.header import (
    CASES,
    FORMAT_VERSION,
    HEADER,
    TRIALS,
    RunHeader,
    RunKind,
    read_header,
    write_header,
)
from agenteval.rundir.trials import TrialRecord, iter_trials, parse_trial_line, trial_line
from agenteval.rundir.writer import (
    RUN_FILES,
    RunWriter,
    cases_path,
    claim_new_run_dir,
    write_cases,
)

__all__ = [
    "CASES",
    "FORMAT_VERSION",
    "HEADER",
    "RUN_FILES",
    "TRIALS",
    "DatasetRef",
    "RunHeader",
    "RunKind",
    "RunWriter",
    "TrialRecord",
    "cases_path",
    "claim_new_run_dir",
    "iter_trials",
    "parse_trial_line",
    "read_header",
    "trial_line",
    "write_cases",
    "write_header",
]
