"""The small search of the search tests: the cruise controller's gains, 2 s runs."""

from __future__ import annotations

from typing import Any

from vcosim.search.config import Search, parse_search

SEARCH: dict[str, Any] = {
    "scenario": {"name": "small", "duration": 2.0, "initial_speed": 7.0},
    "controller": {"name": "cruise", "speed": 8.0},
    "metrics": {"steady_window": 0.2},
    "search": {
        "objective": "overshoot",
        "threshold": 0.3,
        "budget": 12,
        "batch": 4,
        "seed": 3,
        "parameters": {
            "controller.kp": {"low": 0.05, "high": 2.0},
            "controller.ki": {"low": 0.0, "high": 1.0},
        },
    },
}


def small_search(**search: Any) -> Search:
    """A search over the cruise gains (2 s runs from 7 m/s); ``search`` overrides [search]."""
    data = {**SEARCH, "search": {**SEARCH["search"], **search}}
    return parse_search(data, "test search")
