"""How a trial says what its source did not record (e.g. traces with content capture off).

The list is kept under ``metadata[NOT_RECORDED]``; :mod:`agenteval.scoring.unrecorded`
turns it into not-applicable scores for the scorers that need that content.
"""

from __future__ import annotations

__all__ = ["CONTENT", "NOT_RECORDED", "NOT_RECORDED_REASON"]

NOT_RECORDED = "not_recorded"
"""The trial metadata key listing the content its source did not record."""
NOT_RECORDED_REASON = "not_recorded_reason"
"""The trial metadata key naming the setting that would have recorded it (text)."""
CONTENT = ("input", "output", "tool_calls", "tool_arguments", "tool_results")
"""What a source may leave unrecorded (``tool_calls``: which tools were called at all)."""
