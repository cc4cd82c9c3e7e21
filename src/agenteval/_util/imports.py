"""Load user code named as ``package.module:attribute`` or ``path/to/file.py:attribute``."""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import os
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

from agenteval.errors import FieldName, InputError

Label = tuple[str, ...]
"""How an error names what was loaded: ``agent '--agent x:y'`` as parts, the setting a
:class:`FieldName` (the CLI shows its flag, a library caller its field)."""


def _is_file_target(module: str) -> bool:
    return module.endswith(".py") or "/" in module or "\\" in module


def _label(what: str, target: str, option: str | None) -> Label:
    if option:
        return (f"{what} '", FieldName(option), f" {target}'")
    return (f"{what} '{target}'",)


def _import_file(module: str, label: Label) -> ModuleType:
    """Import the Python file ``module`` under a private name (its directory importable)."""
    path = Path(module)
    if not path.is_file():
        raise InputError((*label, f": file '{module}' not found"))
    resolved = path.resolve()
    name = "agenteval_user_" + hashlib.sha256(str(resolved).encode()).hexdigest()[:16]
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, resolved)
    if spec is None or spec.loader is None:
        raise InputError((*label, f": '{module}' cannot be imported as a Python file"))
    parent = str(resolved.parent)
    if parent not in sys.path:
        sys.path.insert(0, parent)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    try:
        spec.loader.exec_module(mod)
    except KeyboardInterrupt:
        sys.modules.pop(name, None)
        raise
    except BaseException as e:  # SystemExit too: sys.exit() at import is not a clean load
        sys.modules.pop(name, None)
        raise InputError(_import_failed(label, module, e)) from None
    return mod


def _import_failed(label: Label, module: str, e: BaseException) -> Label:
    """One line for a module whose import raised ``e`` (``sys.exit`` named as such)."""
    if isinstance(e, SystemExit):
        return (*label, f": importing '{module}' called sys.exit({e.code!r})")
    return (*label, f": importing '{module}' raised {type(e).__name__}: {e}")


def load_object(target: str, *, what: str, option: str | None = None) -> Any:
    """Import ``package.module:attr`` or ``path/to/file.py:attr`` (dots allowed in attr);
    InputError (one line) on any problem.

    A target whose module part ends in ``.py`` or contains a path separator is a file,
    imported from that path (relative to the current directory); its own directory becomes
    importable, as for ``python file.py``. Otherwise the current directory is importable,
    as it is for ``python -m``.
    """
    label = _label(what, target, option)
    module_name, sep, attr = target.rpartition(":")
    if not sep or not module_name or not attr:
        raise InputError((*label, " must look like package.module:function or file.py:function"))
    if _is_file_target(module_name):
        obj: Any = _import_file(module_name, label)
    else:
        obj = _import_module(module_name, label)
    for part in attr.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise InputError((*label, f": '{module_name}' has no attribute '{attr}'")) from None
    return obj


def _import_module(module_name: str, label: Label) -> ModuleType:
    cwd = os.getcwd()
    if cwd not in sys.path:
        sys.path.insert(0, cwd)
    try:
        return importlib.import_module(module_name)
    except ImportError as e:
        raise InputError((*label, f": cannot import module '{module_name}' ({e})")) from None
    except KeyboardInterrupt:
        raise
    except BaseException as e:  # SystemExit too: sys.exit() at import is not a clean load
        raise InputError(_import_failed(label, module_name, e)) from None


def load_module(target: str, *, what: str, option: str | None = None) -> ModuleType:
    """Import a whole module, ``package.module`` or ``path/to/file.py``, as
    :func:`load_object` imports the module part of its target; InputError (one line) on
    any problem, ``sys.exit()`` at import included."""
    label = _label(what, target, option)
    if _is_file_target(target):
        return _import_file(target, label)
    return _import_module(target, label)


def load_callable(target: str, *, what: str, option: str | None = None) -> Any:
    """Like :func:`load_object`, and the object must be callable."""
    obj = load_object(target, what=what, option=option)
    if not callable(obj):
        raise InputError(f"{what} '{target}' is not callable")
    return obj
