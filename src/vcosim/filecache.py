"""Files read once per run: a parse kept by the file's path, modification time and size.

A scenario run reads its ``.xosc``, its ``.xodr`` and its world file from several parts (the
world, the terrain, the storyboard, the recording's road positions); each asks here and the
file is parsed once. An edited file (another modification time or size) is parsed again.
The parsed models are shared, so the readers using this return models nobody changes.
"""

from __future__ import annotations

import os
from collections import OrderedDict
from collections.abc import Callable, Hashable
from pathlib import Path
from typing import TypeVar, cast

T = TypeVar("T")

KEPT = 16
"""Parses kept (the least recently used goes first): a sweep's variations each keep one."""

_kept: OrderedDict[tuple[Hashable, ...], object] = OrderedDict()


def read_once(reader: Callable[[Path], T], path: str | Path, *variant: Hashable) -> T:
    """``reader(path)``, or what it gave for this file as it is now (same mtime and size).

    ``variant`` tells apart parses of one file that differ (a scenario's parameter values).
    A file that cannot be looked at is read (and its error raised) without caching.
    """
    path = Path(path)
    try:
        stat = os.stat(path)
    except OSError:
        return reader(path)
    key = (reader.__module__, reader.__qualname__, str(path.resolve()), stat.st_mtime_ns,
           stat.st_size, *variant)  # fmt: skip
    if key in _kept:
        _kept.move_to_end(key)
        return cast(T, _kept[key])
    value = reader(path)
    _kept[key] = value
    if len(_kept) > KEPT:
        _kept.popitem(last=False)
    return value


def forget() -> None:
    """Drop every kept parse (tests that count reads start from here)."""
    _kept.clear()
