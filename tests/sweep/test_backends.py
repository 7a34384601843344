"""The backends: same results in run order everywhere; failures, crashes and interrupts."""

from __future__ import annotations

import math
import os

import numpy as np
import pytest

from vcosim.sweep.backends import LocalBackend, RayBackend, SerialBackend, chunks
from vcosim.sweep.driver import run_sweep
from vcosim.sweep.runner import run_scenario
from vcosim.sweep.tables import read_results, results_table

PARAMETERS = {  # 3 * 3 * 2 * 3 = 54 runs
    "controller.kp": [0.1, 0.3, 0.9],
    "controller.speed": [4.0, 8.0, 12.0],
    "terrain.friction": [0.4, 1.0],
    "coupling.ext_time": [0.002, 0.005, 0.01],
}
NOISY = {"tyres": {"friction_noise_variance": 0.005, "noise_seed": 11}}


def metric_table(outcome) -> dict[str, list]:
    """The results table without the columns any run measured on the wall clock."""
    table = results_table(outcome).to_pydict()
    wall_clock = {name for r in outcome.results for name in r.metrics.wall_clock}
    return {k: v for k, v in table.items() if k not in wall_clock}


def assert_same_tables(a: dict[str, list], b: dict[str, list]) -> None:
    assert list(a) == list(b)
    for name in a:
        if isinstance(a[name][0], float):
            np.testing.assert_array_equal(
                np.array(a[name], float), np.array(b[name], float), err_msg=name
            )  # NaN equals NaN here
        else:
            assert a[name] == b[name], name


@pytest.fixture(scope="module")
def serial_outcome(make_sweep):
    sweep = make_sweep(PARAMETERS, vehicle=NOISY)
    return run_sweep(sweep, SerialBackend(), write=False)


def test_chunks_cover_every_run_in_order():
    tasks = [(i, {}) for i in range(54)]
    parts = chunks(tasks, workers=2)
    assert [t for part in parts for t in part] == tasks
    assert max(len(p) for p in parts) == 4 and len(parts) == 14


def test_local_backend_gives_the_serial_results_in_run_order(serial_outcome, make_sweep):
    sweep = make_sweep(PARAMETERS, vehicle=NOISY)
    assert len(sweep.runs) == 54
    with LocalBackend(2) as backend:
        outcome = run_sweep(sweep, backend, write=False)
    assert [r.index for r in outcome.results] == list(range(54))
    assert not outcome.failed and not outcome.interrupted
    assert_same_tables(metric_table(outcome), metric_table(serial_outcome))
    assert outcome.backend == "local (2 workers)"
    finals = metric_table(outcome)["final_value"]
    assert len(set(finals)) >= 18  # (friction does not matter at these low speeds)


def test_ray_backend_gives_the_same_metric_table(serial_outcome, make_sweep):
    ray = pytest.importorskip("ray", reason="Ray is not installed (pip install 'vcosim[ray]')")
    sweep = make_sweep(PARAMETERS, vehicle=NOISY)
    ray.init(num_cpus=1, include_dashboard=False, logging_level="WARNING")  # one worker to start
    try:
        with RayBackend() as backend:
            outcome = run_sweep(sweep, backend, write=False)
            assert not backend.started  # it joined the Ray this test started
        assert backend.describe().endswith("(1 CPU)")
    finally:
        ray.shutdown()
    assert [r.index for r in outcome.results] == list(range(54))
    assert not outcome.failed
    assert_same_tables(metric_table(outcome), metric_table(serial_outcome))


def test_a_failing_run_is_reported_and_the_others_are_intact(make_sweep, tmp_path):
    sweep = make_sweep(
        {"controller.fail_above": [100.0, 0.15], "controller.kp": [0.2, 0.6]},
        controller={"name": "sweep_faulty:Faulty", "speed": 8.0},
    )
    with LocalBackend(2) as backend:
        outcome = run_sweep(sweep, backend, out_dir=tmp_path)
    assert [r.status for r in outcome.results] == ["ok", "ok", "failed", "failed"]
    for result in outcome.failed:
        assert result.error.startswith("ValueError: speed 0.2 above 0.15")
        assert result.params["controller.fail_above"] == 0.15
    for result in outcome.results[:2]:  # identical to the same runs on their own
        alone, _ = run_scenario(sweep.scenario, result.params)
        mine = result.metrics.deterministic()
        for name, value in alone.deterministic().items():
            assert mine[name] == value or (math.isnan(value) and math.isnan(mine[name]))
    table = read_results(tmp_path / "results.parquet").to_pydict()
    assert table["status"] == ["ok", "ok", "failed", "failed"]
    assert table["error"][2].startswith("ValueError: speed 0.2 above 0.15")
    assert table["controller.fail_above"] == [100.0, 100.0, 0.15, 0.15]
    assert table["controller.kp"] == [0.2, 0.6, 0.2, 0.6]
    assert math.isnan(table["settling_time"][3])
    log = (tmp_path / "failures.log").read_text()
    assert "run 2 (controller.fail_above = 0.15, controller.kp = 0.2): ValueError" in log
    assert "Traceback" in log
    assert "Failed runs (2)" in (tmp_path / "report.html").read_text()


def test_a_run_that_kills_its_worker_fails_alone(make_sweep):
    crash = [False] * 7
    crash[3] = True
    sweep = make_sweep(
        {"controller.crash": crash, "controller.kp": [0.1 * k for k in range(1, 8)]},
        mode="list",
        controller={"name": "sweep_faulty:Crashing"},
    )
    with LocalBackend(2, chunk_size=2) as backend:
        outcome = run_sweep(sweep, backend, write=False)
    assert [r.index for r in outcome.results] == list(range(7))
    assert [r.index for r in outcome.failed] == [3]
    assert outcome.failed[0].error.startswith("worker process died")


def test_an_interrupt_keeps_the_finished_runs(make_sweep, tmp_path):
    sweep = make_sweep(PARAMETERS)
    seen = []

    def interrupt_after_five(result):
        seen.append(result.index)
        if len(seen) == 5:
            raise KeyboardInterrupt

    with LocalBackend(2) as backend:
        outcome = run_sweep(sweep, backend, out_dir=tmp_path, on_result=interrupt_after_five)
        assert backend._pool is None  # the workers were stopped
    assert outcome.interrupted
    assert [r.index for r in outcome.results] == sorted(seen)
    table = read_results(tmp_path / "results.parquet")
    assert table.column("run").to_pylist() == sorted(seen)
    assert "Interrupted" in (tmp_path / "report.html").read_text()


class BrokenBackend(SerialBackend):
    """Three runs, then the backend itself fails (a lost Ray cluster, say)."""

    def map(self, scenario, tasks, signals=None):
        inner = super().map(scenario, tasks, signals)
        for _ in range(3):
            yield next(inner)
        raise ConnectionError("cluster lost")


def test_a_failing_backend_keeps_the_finished_runs(make_sweep, tmp_path):
    sweep = make_sweep({"controller.kp": [0.1, 0.2, 0.3, 0.4, 0.5]})
    with pytest.raises(ConnectionError, match="cluster lost"):
        run_sweep(sweep, BrokenBackend(), out_dir=tmp_path)
    table = read_results(tmp_path / "results.parquet")
    assert table.column("run").to_pylist() == [0, 1, 2]


def test_a_local_ray_is_started_with_token_authentication_said(monkeypatch):
    """Ray warns in every sweep unless the mode is said; a local Ray of our own says token."""
    ray = pytest.importorskip("ray", reason="Ray is not installed (pip install 'vcosim[ray]')")
    seen: list[str | None] = []
    monkeypatch.delenv("RAY_AUTH_MODE", raising=False)
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    monkeypatch.setattr(ray, "is_initialized", lambda: False)
    monkeypatch.setattr(ray, "init", lambda **_: seen.append(os.environ.get("RAY_AUTH_MODE")))
    monkeypatch.setattr(ray, "cluster_resources", lambda: {"CPU": 2.0})
    RayBackend().start()
    monkeypatch.setenv("RAY_AUTH_MODE", "disabled")  # the user's choice stands
    RayBackend().start()
    monkeypatch.delenv("RAY_AUTH_MODE")
    RayBackend(address="10.0.0.5:6379").start()  # a cluster's own rules: not ours to say
    assert seen == ["token", "disabled", None]
