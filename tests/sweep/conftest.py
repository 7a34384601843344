from __future__ import annotations

from typing import Any

import pytest

from vcosim.sweep.config import Sweep, parse


def small_sweep(
    parameters: dict[str, Any], *, duration: float = 0.5, mode: str = "grid", **sections: Any
) -> Sweep:
    """A short cruise sweep (0.5 s runs) with ``parameters`` varied."""
    data: dict[str, Any] = {
        "scenario": {"name": "test", "duration": duration},
        "controller": {"name": "cruise", "speed": 8.0},
        "metrics": {"steady_window": 0.2},
        "sweep": {"mode": mode, "parameters": parameters},
    }
    for key, value in sections.items():
        if key == "controller":  # a controller section replaces the default one
            data[key] = dict(value)
        else:
            data.setdefault(key, {}).update(value)
    return parse(data, "test sweep")


@pytest.fixture(scope="session")
def make_sweep():
    return small_sweep
