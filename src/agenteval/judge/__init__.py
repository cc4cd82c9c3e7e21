"""LLM judge (SPEC §5): rubrics, fenced prompts, verdict parsing, cache, agreement.

Public names::

    Judge, JudgeConfig, Judgment, JudgeStats   grade trials through an OpenAI-compatible API
    Rubric, load_rubric, BUILTIN_RUBRICS       rubrics: template + scale
    SCALES, Scale                               binary, partial, likert
    parse_verdict, Verdict                      read a verdict from a reply
    render_prompt, not_applicable_reason       the fenced judge prompt
    JudgeCache, default_cache_dir               the on-disk cache
    cohen_kappa, measure_agreement, read_labels agreement with human labels

Scores are stored as ``judge_<rubric>`` (for example ``judge_correctness``).
See ``docs/judge.md``.
"""

from agenteval.judge.agreement import (
    AgreementReport,
    cohen_kappa,
    confusion_matrix,
    measure_agreement,
    read_labels,
    render_agreement,
)
from agenteval.judge.judge import Judge, JudgeConfig, JudgeStats, Judgment
from agenteval.judge.parse import Verdict, parse_verdict
from agenteval.judge.prompt import RenderedPrompt, not_applicable_reason, render_prompt
from agenteval.judge.rubric import BUILTIN_RUBRICS, SCALES, Rubric, Scale, load_rubric
from agenteval.llm.cache import JudgeCache, default_cache_dir

__all__ = [
    "BUILTIN_RUBRICS",
    "SCALES",
    "AgreementReport",
    "Judge",
    "JudgeCache",
    "JudgeConfig",
    "JudgeStats",
    "Judgment",
    "RenderedPrompt",
    "Rubric",
    "Scale",
    "Verdict",
    "cohen_kappa",
    "confusion_matrix",
    "default_cache_dir",
    "load_rubric",
    "measure_agreement",
    "not_applicable_reason",
    "parse_verdict",
    "read_labels",
    "render_agreement",
    "render_prompt",
]
