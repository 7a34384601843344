"""The optional parts of vcosim: the modules each extra brings, one sentence when one is missing.

pyproject.toml's ``[project.optional-dependencies]`` names the extras and their packages; this
names the modules each must make importable, so that a command checks *before it starts
anything* and refuses in one line that says what to install (exit code 2), instead of a
traceback half-way through a run. ``tests/app/test_extras.py`` keeps the two lists in step.
"""

from __future__ import annotations

import importlib.util
import json
from collections.abc import Iterable

from vcosim.errors import MissingExtra

EXTRAS: dict[str, tuple[str, ...]] = {
    "viewer": ("starlette", "uvicorn", "websockets"),
    "logging": ("mcap",),
    "fmu": ("fmpy",),
    "fmi": ("fmpy", "ziglang"),
    "datasheet": ("vehiclemodels",),
    "bench": ("vehiclemodels",),
    "sweep": ("pyarrow",),
    "search": ("optuna", "cmaes"),
    "ray": ("pyarrow", "ray"),
    "input": ("pygame",),
    "sound": ("sounddevice",),
    "osi": ("osi3", "osi3trace"),
    "foxglove": ("foxglove",),
    "sumo": ("sumo", "libsumo", "sumolib"),
}
"""Extra name -> the top-level modules it installs (a distribution's import name)."""


def missing(extra: str, modules: Iterable[str] | None = None) -> list[str]:
    """The modules of ``extra`` (or only ``modules`` of it) that cannot be imported here."""
    wanted = EXTRAS[extra] if modules is None else tuple(modules)
    return [name for name in wanted if not _importable(name)]


def _importable(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):  # a broken package, or one blocked in sys.modules
        return False


def install_command(*extras: str) -> str:
    """The pip command that installs ``extras``, as this vcosim was installed.

    An editable install (``pip install -e .`` in a clone, as the README says) gets
    ``pip install -e ".[viewer]"``; an installed package ``pip install "vcosim[viewer]"``.
    """
    names = ",".join(dict.fromkeys(extras))
    return f'pip install -e ".[{names}]"' if _editable() else f'pip install "vcosim[{names}]"'


def _editable() -> bool:
    from importlib.metadata import PackageNotFoundError, distribution

    try:
        text = distribution("vcosim").read_text("direct_url.json")
    except PackageNotFoundError:  # run from a source tree on the path: a clone
        return True
    if not text:
        return False
    try:
        return bool(json.loads(text).get("dir_info", {}).get("editable", False))
    except (ValueError, AttributeError):
        return False


def require(extra: str, needed_by: str, modules: Iterable[str] | None = None) -> None:
    """Raise :class:`MissingExtra` now if ``extra`` (or its ``modules``) is not installed.

    Args:
        extra: The extra's name in pyproject.toml.
        needed_by: What needs it, as the user typed it (``vcosim view``, ``--fmu``).
        modules: Only these of the extra's modules.
    """
    absent = missing(extra, modules)
    if absent:
        raise MissingExtra(
            f"{needed_by} needs the `{extra}` extra ({', '.join(absent)} not installed): "
            f"{install_command(extra)}"
        )
