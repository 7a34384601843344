"""A search: its runs depend on the seed only; interrupted, it keeps its runs and resumes."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from small_searches import small_search

from vcosim.errors import ConfigError
from vcosim.search.driver import SearchOutcome, SearchRun, run_search
from vcosim.search.methods import latin_hypercube
from vcosim.sweep.backends import LocalBackend, SerialBackend


def table(outcome: SearchOutcome) -> list[tuple[int, dict[str, object], float | None]]:
    return [(r.index, r.params, r.value) for r in outcome.runs]


@pytest.fixture(scope="module")
def serial(tmp_path_factory: pytest.TempPathFactory) -> SearchOutcome:
    with SerialBackend() as backend:
        return run_search(small_search(), backend, out_dir=tmp_path_factory.mktemp("serial"))


def test_a_search_runs_its_budget_and_minimises(serial: SearchOutcome) -> None:
    assert len(serial.runs) == 12 and [r.index for r in serial.runs] == list(range(12))
    assert [r.batch for r in serial.runs] == [0] * 4 + [1] * 4 + [2] * 4
    assert not serial.failed and not serial.interrupted
    for r in serial.runs:
        assert 0.05 <= r.params["controller.kp"] <= 2.0 and 0 <= r.params["controller.ki"] <= 1
        # overshoot is a metric whose worst case is its maximum: the score is its negative
        assert r.value == r.metrics["overshoot"] and r.score == -r.value
        assert r.falsifying == (r.value > 0.3)
    best = serial.best
    assert best is not None and best.score == min(
        r.score for r in serial.runs if r.score is not None
    )


def test_the_first_batch_is_a_latin_hypercube(serial: SearchOutcome) -> None:
    search = small_search()
    points = latin_hypercube(search.ranges, 4, 3)
    assert [r.params for r in serial.runs[:4]] == points
    for name, r in search.ranges.items():  # one point in each quarter of every range
        quarters = sorted(int((float(p[name]) - r.low) / (r.high - r.low) * 4) for p in points)
        assert quarters == [0, 1, 2, 3]


def test_local_processes_give_the_serial_search(serial: SearchOutcome, tmp_path: Path) -> None:
    with LocalBackend(2) as backend:
        local = run_search(small_search(), backend, out_dir=tmp_path)
    assert table(local) == table(serial)
    assert [r.to_json() for r in local.runs] == [r.to_json() for r in serial.runs]  # NaN too


def test_ray_gives_the_serial_search(serial: SearchOutcome, tmp_path: Path) -> None:
    ray = pytest.importorskip("ray", reason="Ray is not installed (pip install 'vcosim[ray]')")
    from vcosim.sweep.backends import RayBackend

    ray.init(num_cpus=2, include_dashboard=False, logging_level="WARNING")
    try:
        with RayBackend() as backend:
            on_ray = run_search(small_search(), backend, out_dir=tmp_path)
    finally:
        ray.shutdown()
    assert on_ray.backend.startswith("ray")
    assert table(on_ray) == table(serial)


def test_another_seed_or_method_asks_other_runs(serial: SearchOutcome, tmp_path: Path) -> None:
    with SerialBackend() as backend:
        other = run_search(small_search(seed=4, budget=4), backend, out_dir=tmp_path / "a")
        uniform = run_search(
            small_search(method="random", budget=8), backend, out_dir=tmp_path / "b"
        )
    assert [r.params for r in other.runs] != [r.params for r in serial.runs[:4]]
    assert [r.params for r in uniform.runs[:4]] != [r.params for r in serial.runs[:4]]


def test_an_interrupted_search_keeps_its_runs_and_resumes_to_the_same_search(
    serial: SearchOutcome, tmp_path: Path
) -> None:
    seen: list[SearchRun] = []

    def interrupt_at_the_sixth(run: SearchRun) -> None:
        seen.append(run)
        if len(seen) == 6:
            raise KeyboardInterrupt

    with SerialBackend() as backend:
        cut = run_search(
            small_search(), backend, out_dir=tmp_path, on_result=interrupt_at_the_sixth
        )
    assert cut.interrupted and cut.stopped == "interrupted"
    assert table(cut) == table(serial)[:6]  # the unfinished batch's finished runs too
    lines = (tmp_path / "runs.jsonl").read_text().splitlines()
    assert len(lines) == 1 + 6

    with pytest.raises(ConfigError, match="holds a search already: --resume to continue it"):
        run_search(small_search(), SerialBackend(), out_dir=tmp_path)

    ran: list[SearchRun] = []
    with SerialBackend() as backend:
        resumed = run_search(small_search(), backend, out_dir=tmp_path, resume=True,
                             on_result=ran.append)  # fmt: skip
    assert [r.index for r in ran] == list(range(6, 12))  # only the missing runs ran
    assert table(resumed) == table(serial)
    assert len((tmp_path / "runs.jsonl").read_text().splitlines()) == 1 + 12

    with SerialBackend() as backend:  # a bigger budget continues it further
        longer = run_search(small_search(budget=16), backend, out_dir=tmp_path, resume=True)
    assert table(longer)[:12] == table(serial) and len(longer.runs) == 16


def test_resuming_with_another_search_file_is_refused(
    serial: SearchOutcome, tmp_path: Path
) -> None:
    with SerialBackend() as backend:
        run_search(small_search(budget=4), backend, out_dir=tmp_path)
        other = small_search(budget=4, seed=9)
        with pytest.raises(ConfigError, match="the search file or the options changed"):
            run_search(other, backend, out_dir=tmp_path, resume=True)


def test_the_log_holds_every_value_exactly(serial: SearchOutcome, tmp_path: Path) -> None:
    with SerialBackend() as backend:
        run = run_search(small_search(budget=4), backend, out_dir=tmp_path)
    lines = (tmp_path / "runs.jsonl").read_text().splitlines()
    header = json.loads(lines[0])
    assert header["vcosim.search"] == 1 and header["search"]["method"] == "tpe"
    logged = [SearchRun.from_json(line) for line in lines[1:]]
    assert [r.to_json() for r in logged] == [r.to_json() for r in run.runs]  # NaN too
    assert all(isinstance(v, float) for r in logged for v in r.metrics.values())


def test_stop_at_the_first_falsifying_batch(tmp_path: Path) -> None:
    with SerialBackend() as backend:
        outcome = run_search(small_search(stop="first", threshold=0.0), backend, out_dir=tmp_path)
    first = outcome.first_falsifying
    assert first is not None and first <= 4
    assert len(outcome.runs) == 4 and outcome.stopped == "first falsifying run"


def test_a_requirement_is_the_objective(tmp_path: Path) -> None:
    search = small_search(objective=None, threshold=None, requirement="always (groundspeed < 8.2)")
    with SerialBackend() as backend:
        outcome = run_search(search, backend, out_dir=tmp_path)
    assert any(r.falsifying for r in outcome.runs) and not all(r.falsifying for r in outcome.runs)
    for r in outcome.runs:
        assert r.value is not None and not math.isnan(r.value)
        if r.metrics["overshoot"] == 0.0:
            continue
        # its robustness: 8.2 minus the highest speed, so it falsifies when it overshot 8.2 m/s
        assert r.value == pytest.approx(8.2 - (8.0 + r.metrics["overshoot"]), abs=0.02)
        assert r.falsifying == (r.value < 0)


@pytest.mark.parametrize("method", ["cmaes", "random"])
def test_each_method_resumes_to_its_uninterrupted_search(method: str, tmp_path: Path) -> None:
    with SerialBackend() as backend:
        whole = run_search(small_search(method=method), backend, out_dir=tmp_path / "whole")
    count = 0

    def interrupt_at_the_seventh(run: SearchRun) -> None:
        nonlocal count
        count += 1
        if count == 7:
            raise KeyboardInterrupt

    out = tmp_path / "cut"
    with SerialBackend() as backend:
        cut = run_search(small_search(method=method), backend, out_dir=out,
                         on_result=interrupt_at_the_seventh)  # fmt: skip
        resumed = run_search(small_search(method=method), backend, out_dir=out, resume=True)
    assert cut.interrupted and len(cut.runs) == 7  # the seventh was logged before Ctrl-C
    assert table(resumed) == table(whole) and len(whole.runs) == 12
    for r in whole.runs:
        assert 0.05 <= r.params["controller.kp"] <= 2.0 and 0 <= r.params["controller.ki"] <= 1
