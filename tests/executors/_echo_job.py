"""A trivial job for the driver tests: doubles every number of its batch."""

from __future__ import annotations

import os


class Doubler:
    def setup(self) -> None:
        self.pid = os.getpid()

    def __call__(self, batch: list[int]) -> list[int]:
        return [2 * x for x in batch]
