"""Package attributes imported on first use (PEP 562), so that importing a package does
not import every module behind its public names."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def lazy_getattr(namespace: dict[str, Any], names: Mapping[str, str]) -> Callable[[str], Any]:
    """A module-level ``__getattr__`` for the module whose globals are ``namespace``.

    ``names`` maps an attribute to the absolute name of the module defining it. The first
    access imports that module and stores the attribute in ``namespace``, so later accesses
    are plain global lookups. Any other name raises AttributeError.
    """
    package = namespace["__name__"]

    def __getattr__(name: str) -> Any:
        module = names.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        namespace[name] = value
        return value

    return __getattr__
