"""One way to name code: entry points of vcosim's registries, and the user's own code.

vcosim's registries (example controllers, faces, sweep controllers) store
``"package.module:attribute"`` strings, imported only when used. Users name their own code
the same way, or by file: ``my_controller.py:step``, ``pkg.module:Class``, and where a module
of functions is wanted (custom hooks) the module alone. The current directory is searched as
``python -m`` would search it, so a file next to the user imports by module name too. Every
failure is a ``VcosimError`` naming what was asked for: one line, no traceback.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

from vcosim.errors import ConfigError, UnknownNameError


def load_object(spec: str) -> Any:
    """Import ``"package.module:attribute"`` from vcosim or an installed package."""
    module_name, _, attribute = spec.partition(":")
    if not module_name or not attribute:
        raise UnknownNameError(
            "entry point (expected module:attribute)", spec, ["module:attribute"]
        )
    return _attribute(importlib.import_module(module_name), attribute, module_name)


def load_user_code(spec: str, *, option: str = "--function", module_ok: bool = False) -> Any:
    """The user's code named by ``FILE.py:NAME`` or ``module:NAME``.

    With ``module_ok`` a module alone (``FILE.py`` or ``module``) is accepted too.

    Raises:
        ConfigError: the file or module cannot be found or fails to import.
        UnknownNameError: the module has no such attribute (the closest is suggested).
    """
    target, sep, attribute = spec.rpartition(":")
    if not sep:
        target, attribute = spec, ""
    if not target or (not attribute and not module_ok):
        form = "FILE.py:NAME or module:NAME" + (", or a module" if module_ok else "")
        raise ConfigError([f"{option} {spec!r}: expected {form}"], option)
    module = _load_module(target, option)
    return _attribute(module, attribute, target) if attribute else module


def instantiate(found: Any) -> Any:
    """A class named as a step function or hook object becomes an instance (no arguments)."""
    return found() if isinstance(found, type) else found


def _load_module(target: str, option: str) -> ModuleType:
    if target.endswith(".py") or "/" in target or "\\" in target:
        return _load_file(Path(target), option)
    cwd = str(Path.cwd())
    if cwd not in sys.path and "" not in sys.path:
        sys.path.insert(0, cwd)
    try:
        return importlib.import_module(target)
    except ModuleNotFoundError as error:
        if error.name != target and not target.startswith(f"{error.name}."):
            raise ConfigError(
                [f"{option} {target!r}: importing it failed: {error}"], option
            ) from None
        raise ConfigError(
            [
                f"{option} {target!r}: no module of that name here ({cwd}) or "
                f"installed; give its file, e.g. {target}.py:NAME"
            ],
            option,
        ) from None
    except Exception as error:  # the user's module raised while importing
        raise ConfigError(
            [f"{option} {target!r}: importing it failed: {type(error).__name__}: {error}"], option
        ) from None


def _load_file(path: Path, option: str) -> ModuleType:
    if not path.is_file():
        raise ConfigError([f"{option}: no such file: {path}"], option)
    name = f"vcosim_user_{path.stem}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ConfigError([f"{option}: {path} is not a Python file"], option)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses and pickling look the module up by name
    try:
        spec.loader.exec_module(module)
    except Exception as error:
        del sys.modules[name]
        raise ConfigError(
            [f"{option}: importing {path} failed: {type(error).__name__}: {error}"], option
        ) from None
    return module


def _attribute(module: ModuleType, attribute: str, where: str) -> Any:
    try:
        return getattr(module, attribute)
    except AttributeError:
        names = [n for n in dir(module) if not n.startswith("_")]
        raise UnknownNameError(f"attribute of {where}", attribute, names) from None
