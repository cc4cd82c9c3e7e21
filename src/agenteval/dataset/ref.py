"""Where a run's cases came from, as ``run.json`` records it (its ``dataset`` field)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["DatasetRef"]


class DatasetRef(BaseModel):
    """Where the cases came from."""

    model_config = ConfigDict(extra="allow")

    path: str | None = None
    sha256: str | None = Field(default=None, description="Hash of the validated cases.")
    cases: int = Field(default=0, description="How many cases.")
