"""Load user code named as ``package.module:attribute``."""

from __future__ import annotations

import importlib
import os
import sys
from typing import Any

from agenteval.errors import InputError


def load_object(target: str, *, what: str, option: str | None = None) -> Any:
    """Import ``package.module:attr`` (dots allowed in attr); InputError on any problem.

    The current directory is importable, as it is for ``python -m``.
    """
    label = f"{option} {target}" if option else target
    module_name, sep, attr = target.partition(":")
    if not sep or not module_name or not attr:
        raise InputError(f"{what} '{label}' must look like package.module:function")
    cwd = os.getcwd()
    if cwd not in sys.path:
        sys.path.insert(0, cwd)
    try:
        obj: Any = importlib.import_module(module_name)
    except ImportError as e:
        raise InputError(f"{what} '{label}': cannot import module '{module_name}' ({e})") from None
    except Exception as e:
        raise InputError(
            f"{what} '{label}': importing '{module_name}' raised {type(e).__name__}: {e}"
        ) from None
    for part in attr.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise InputError(
                f"{what} '{label}': '{module_name}' has no attribute '{attr}'"
            ) from None
    return obj


def load_callable(target: str, *, what: str, option: str | None = None) -> Any:
    """Like :func:`load_object`, and the object must be callable."""
    obj = load_object(target, what=what, option=option)
    if not callable(obj):
        raise InputError(f"{what} '{target}' is not callable")
    return obj
