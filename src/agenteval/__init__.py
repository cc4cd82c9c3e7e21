"""agenteval: evaluate AI agents — run, record, score, report, gate.

The public API. Everything else lives in modules that may change between versions.

    from agenteval import evaluate, scorer

    @scorer("polite", threshold=0.5)
    def polite(case, trial):
        return 1.0 if trial.output and "please" in trial.output.lower() else 0.0

    run = evaluate("cases.jsonl", "my_agent:answer", scorers=[polite])
"""

from __future__ import annotations

from typing import TYPE_CHECKING

# Every name but the version and the errors loads on first use: importing agenteval (or a
# submodule, such as the pytest plugin pytest loads at start-up) does not build the models.
from agenteval._util.lazy import lazy_getattr
from agenteval._version import __version__
from agenteval.errors import AgentEvalError, InputError

if TYPE_CHECKING:
    from agenteval.agents.base import Agent, AgentFailure, AgentOutput, Recorder
    from agenteval.benchmarks import benchmark
    from agenteval.cases.case import Case
    from agenteval.conversation.users import llm_user
    from agenteval.evaluation import Run, aevaluate, evaluate
    from agenteval.judge import Judge, JudgeConfig, load_rubric
    from agenteval.scorers import builtin_scorers
    from agenteval.scoring.score import (
        Score,
        Status,
        inconclusive,
        normalize_result,
        not_applicable,
    )
    from agenteval.scoring.spec import Scorer, ScorerSpec, scorer
    from agenteval.trials.trial import Failure, Latency, Retry, ToolCall, Trial, Usage

_LAZY = {
    "Case": "agenteval.cases.case",
    "Score": "agenteval.scoring.score",
    "Status": "agenteval.scoring.score",
    "inconclusive": "agenteval.scoring.score",
    "normalize_result": "agenteval.scoring.score",
    "not_applicable": "agenteval.scoring.score",
    "Scorer": "agenteval.scoring.spec",
    "ScorerSpec": "agenteval.scoring.spec",
    "scorer": "agenteval.scoring.spec",
    "Failure": "agenteval.trials.trial",
    "Latency": "agenteval.trials.trial",
    "Retry": "agenteval.trials.trial",
    "ToolCall": "agenteval.trials.trial",
    "Trial": "agenteval.trials.trial",
    "Usage": "agenteval.trials.trial",
    "evaluate": "agenteval.evaluation",
    "aevaluate": "agenteval.evaluation",
    "Run": "agenteval.evaluation",
    "builtin_scorers": "agenteval.scorers",
    "Agent": "agenteval.agents.base",
    "AgentFailure": "agenteval.agents.base",
    "AgentOutput": "agenteval.agents.base",
    "Recorder": "agenteval.agents.base",
    "Judge": "agenteval.judge",
    "JudgeConfig": "agenteval.judge",
    "load_rubric": "agenteval.judge",
    "benchmark": "agenteval.benchmarks",
    "llm_user": "agenteval.conversation.users",
}

__all__ = [
    "Agent",
    "AgentEvalError",
    "AgentFailure",
    "AgentOutput",
    "Case",
    "Failure",
    "InputError",
    "Judge",
    "JudgeConfig",
    "Latency",
    "Recorder",
    "Retry",
    "Run",
    "Score",
    "Scorer",
    "ScorerSpec",
    "Status",
    "ToolCall",
    "Trial",
    "Usage",
    "__version__",
    "aevaluate",
    "benchmark",
    "builtin_scorers",
    "evaluate",
    "inconclusive",
    "llm_user",
    "load_rubric",
    "normalize_result",
    "not_applicable",
    "scorer",
]


__getattr__ = lazy_getattr(globals(), _LAZY)
