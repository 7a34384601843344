"""`vcosim bench growth`: its fitted lines, its JSON layout, and real figures at tiny sizes.

Only the in-process parts are run here (worlds of 1 and 3 cars, the lock-step host without a
coupling): the dimensions that start processes (contract server, router, UDP peer) reuse the
contract, bus and coupling benches' own measurements, which test_bench_guard.py runs.
"""

from __future__ import annotations

import json
import math

import pytest
from typer.testing import CliRunner

from vcosim.app import app
from vcosim.bench.contracts import SIGNALS
from vcosim.bench.growth import (
    DIMENSIONS,
    Dimension,
    GrowthBench,
    Line,
    coupled_run,
    field_names,
    vehicles,
)


def test_the_line_is_a_fixed_cost_plus_a_cost_per_unit() -> None:
    line = Line.through([1, 10, 100], [3.0 + 0.5 * n for n in (1, 10, 100)])
    assert (line.fixed, line.per_unit, line.worst_misfit) == (3.0, 0.5, 0.0)
    bent = Line.through([1, 10, 100], [1.0, 10.0, 1000.0])
    assert bent.worst_misfit > 0.3  # a curve is not passed off as a line


def test_its_json_has_every_dimension_by_name_and_the_machine() -> None:
    rows: dict[str, dict[str, float | None]] = {"1": {"cost": 2.0}, "4": {"cost": 5.0}}
    line = Line.through([1, 4], [2.0, 5.0])
    bench = GrowthBench(
        1.0, {name: Dimension("things", "µs per thing", rows, line) for name in DIMENSIONS}
    )
    out = json.loads(json.dumps(bench.to_dict()))
    assert set(DIMENSIONS) <= set(out)
    assert {"seconds", "turns", "cpu_count"} <= set(out)
    assert out["rate"]["line"] == {"fixed": 1.0, "per_unit": 1.0, "worst_misfit": 0.0}
    assert set(out["modules"]) == {
        "size",
        "cost",
        "rows",
        "line",
        "cores_used_by_others",
        "without",
    }


def test_contract_fields_start_with_the_contract_bench_s_and_never_repeat() -> None:
    names = field_names(80)
    assert names[:20] == list(SIGNALS) and len(set(names)) == 80 and "time" not in names
    with pytest.raises(ValueError, match="at most"):
        field_names(1000)


def test_worlds_of_a_few_cars_give_finite_positive_costs_and_a_line() -> None:
    measured = vehicles((1, 3), seconds=0.005).to_dict()
    assert set(measured["rows"]) == {"1", "3"}
    for size, row in measured["rows"].items():
        figures = [row[k] for k in ("us_per_step", "kernel_us_per_vehicle_step", "realtime_factor")]
        assert all(math.isfinite(x) and x > 0 for x in figures)
        assert row["us_per_step"] == pytest.approx(int(size) * row["us_per_vehicle_step"], 1e-3)
    # (the line's slope is not judged: two sizes timed for 5 ms each on a busy machine can
    # come out either way; the fit itself is checked on made-up figures above)
    assert all(math.isfinite(measured["line"][key]) for key in ("fixed", "per_unit"))


def test_the_uncoupled_host_advances_simulated_time() -> None:
    marks, timeouts = coupled_run(None, seconds=0.01, send_skips=0)
    assert timeouts == 0 and len(marks) >= 2
    assert marks[-1][1] > marks[0][1] and marks[-1][0] > marks[0][0]


def test_an_unknown_dimension_is_a_usage_error() -> None:
    result = CliRunner().invoke(app, ["bench", "growth", "wheels"])
    assert result.exit_code == 2
    assert "no dimension 'wheels'" in result.output
