"""One way to name code: entry points of vcosim's registries, and the user's own code.

vcosim's registries (example controllers, faces, sweep controllers) store
``"package.module:attribute"`` strings, imported only when used. Users name their own code
the same way, or by file: ``my_controller.py:step``, ``pkg.module:Class``, and where a module
of functions is wanted (custom hooks) the module alone. The current directory is searched as
``python -m`` would search it, so a file next to the user imports by module name too. Every
failure is a ``VcosimError`` naming what was asked for: one line, no traceback.
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
import inspect
import sys
from collections.abc import Mapping
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


def instantiate(
    found: Any, params: Mapping[str, Any] | None = None, *, option: str = "--param"
) -> Any:
    """The step function (or hook object) the user's code makes with ``params``.

    A class is instantiated with ``params`` as keyword arguments; a function gets them bound
    as keyword arguments of every call (``step(msg, speed=15)``). Each name is checked against
    the signature first, so a misspelt parameter is one error naming the valid ones, before
    anything runs.
    """
    params = dict(params or {})
    if params:
        _check_parameters(found, params, option)
    if isinstance(found, type):
        return found(**params)
    return functools.partial(found, **params) if params else found


def keyword_parameters(found: Any) -> list[str] | None:
    """The keyword parameters a class's constructor or a step function takes (None: any).

    A function's first parameter is the message (or the ports) it is called with, and names
    starting with ``_`` are internal: neither can be given.
    """
    try:
        signature = inspect.signature(found)
    except (TypeError, ValueError):  # a builtin or extension type: cannot tell
        return None
    parameters = list(signature.parameters.values())
    if (
        not isinstance(found, type)
        and parameters
        and parameters[0].kind
        in (
            inspect.Parameter.POSITIONAL_ONLY,
            inspect.Parameter.POSITIONAL_OR_KEYWORD,
        )
    ):
        parameters = parameters[1:]  # the message
    if any(p.kind is p.VAR_KEYWORD for p in parameters):
        return None
    return [
        p.name
        for p in parameters
        if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY) and not p.name.startswith("_")
    ]


def _check_parameters(found: Any, params: Mapping[str, Any], option: str) -> None:
    if not isinstance(found, type) and not inspect.isroutine(found):
        kind = type(found).__qualname__
        raise ConfigError(
            [f"a {kind} object is made already; name its class ({kind}) to make one with them"],
            option,
        )
    valid = keyword_parameters(found)
    if valid is None:
        return
    name = found.__qualname__
    if not valid:
        example = (
            "__init__(self, speed=15.0)" if isinstance(found, type) else "step(msg, speed=15.0)"
        )
        raise ConfigError(
            [f"{name} takes no parameters: give it keyword arguments, e.g. {example}"], option
        )
    for key in params:
        if key not in valid:
            raise UnknownNameError(f"parameter of {name}", key, valid)


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
