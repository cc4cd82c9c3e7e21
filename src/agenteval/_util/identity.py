"""Cache keys by object identity, for bounded caches of per-object derived values."""

from __future__ import annotations

from typing import Any


class Identity:
    """A cache key equal only to the very same object.

    The key holds a reference to the object, so while the key sits in a cache the object
    stays alive and its ``id`` cannot be reused by another object. Use it only for objects
    that are not mutated after they are built (cases, trials and their parts).
    """

    __slots__ = ("obj",)

    def __init__(self, obj: Any) -> None:
        self.obj = obj

    def __hash__(self) -> int:
        return id(self.obj)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Identity) and other.obj is self.obj
