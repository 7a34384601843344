"""The benches' rates: best windows, turns, and the witness of other processes' load."""

from __future__ import annotations

import pytest

from vcosim.bench.coupling import CouplingBench, Drift, Exchanges
from vcosim.bench.rates import QUIET, Quiet, best_in_turns, best_window, unjudged_if_busy


def test_the_best_window_is_the_fastest_stretch_of_the_marks() -> None:
    marks = [(0.0, 0), (0.1, 100), (0.2, 400), (0.3, 500), (0.4, 600)]  # 3000/s in 0.1-0.2
    assert best_window(marks, 0.1) == pytest.approx(3000.0)
    assert best_window(marks, 0.2) == pytest.approx(2000.0)
    assert best_window(marks, 1.0) == pytest.approx(1500.0)  # longer than the run: its rate
    assert best_window(marks[:1]) == 0.0


def test_turns_alternate_and_each_measure_keeps_its_best() -> None:
    order: list[str] = []
    figures = {"a": iter([1.0, 3.0, 2.0]), "b": iter([5.0, 4.0, 6.0])}

    def measure(name: str):
        def run() -> float:
            order.append(name)
            return next(figures[name])

        return run

    assert best_in_turns([measure("a"), measure("b")], 3) == [3.0, 6.0]
    assert order == ["a", "b"] * 3


def test_the_witness_counts_no_load_of_this_process_as_others() -> None:
    quiet = Quiet()
    sum(i * i for i in range(2_000_000))  # this process busy: not "others"
    others = quiet.others()
    assert others is None or others >= 0.0


def test_a_busy_machine_voids_the_ratios_it_names() -> None:
    assert unjudged_if_busy(None, ["x"]) == {} and unjudged_if_busy(QUIET, ["x"]) == {}
    said = unjudged_if_busy(1.5, ["x", "y"])
    assert list(said) == ["x", "y"] and "1.50 cores" in said["x"]
    drift = Drift(1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0, 60)
    bench = CouplingBench(
        10_000.0,
        50_000.0,
        Exchanges(35_000.0, 0),
        Exchanges(9_000.0, 0),
        drift,
        {"busy": 1.2, "blocking": 0.0},
    )
    assert list(bench.unjudged()) == ["lockstep_vs_raw"]
    assert bench.ratios() == {"lockstep_vs_raw": 0.7, "blocking_vs_raw_blocking": 0.9}
