"""The bench guard: its logic on made-up ratios, then the quick benches against the baseline.

The later tests run ``vcosim bench all --quick --json`` itself (~1-2 min) and fail when a
ratio fell below half its value in ``benchmarks/baseline.json``: a 2x slowdown of anything
a bench measures. Same-run ratios taken in turns hold beside busy processes; a ratio of
ping-pongs between processes that ran while other processes took the cores is reported
(here as a warning) and not judged, as ``vcosim bench all`` does. The same run's reports
are checked bench by bench (keys, finite figures, ratios as the quotients of their rates):
one run of every bench for the whole suite.
"""

from __future__ import annotations

import json
import math
import re
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from vcosim.app import app
from vcosim.bench import guard
from vcosim.bench.guard import (
    BENCHES,
    DEFAULT_BASELINE,
    MARKERS,
    RETRIES,
    Baseline,
    judge,
    markdown_table,
    measure_all,
    not_guarded,
    quick_options,
    ratio_docs,
    write_markdown,
)
from vcosim.errors import ConfigError


@dataclass
class Fake:
    """A bench's report, made up."""

    figures: dict[str, float]
    busy: dict[str, str] | None = None

    def ratios(self) -> dict[str, float]:
        return self.figures

    def unjudged(self) -> dict[str, str]:
        return self.busy or {}

    def to_dict(self) -> dict[str, Any]:
        return {"ratios": self.figures}


def test_a_ratio_below_half_its_baseline_is_a_regression() -> None:
    accepted = Baseline({"a.x": 1.0, "a.y": 2.0}, {"a.x": {"issue 1": 0.8}})
    verdict = judge({"a.x": 0.49, "a.y": 1.0}, accepted)  # y: exactly half, not below
    assert verdict.regressions == ["a.x"] and not verdict.passed
    x, y = verdict.rows
    assert x.fails_below == 0.5 and x.share == pytest.approx(0.49)
    assert x.meets() == {"issue 1": False} and y.meets() == {}
    assert not y.regressed and judge({"a.x": 0.5, "a.y": 1.0}, accepted).passed


def test_missing_keys_on_either_side_are_reported_and_not_judged() -> None:
    verdict = judge({"a.x": 1.0, "a.new": 0.001}, Baseline({"a.x": 1.0, "a.gone": 3.0}))
    assert verdict.no_baseline == ["a.new"] and verdict.not_measured == ["a.gone"]
    assert verdict.passed and [row.key for row in verdict.rows] == ["a.x", "a.new", "a.gone"]


def test_a_ratio_its_run_cannot_vouch_for_is_reported_not_judged() -> None:
    verdict = judge({"a.x": 0.1}, Baseline({"a.x": 1.0}), {"a.x": "busy machine"})
    assert verdict.passed and verdict.unjudged == {"a.x": "busy machine"}
    assert verdict.rows[0].to_dict()["unjudged"] == "busy machine"


def test_a_bench_below_half_is_measured_again_and_its_best_attempt_kept() -> None:
    figures = {"a": iter([0.3, 0.9]), "b": iter([0.2] * (RETRIES + 1)), "c": iter([0.01])}
    started: list[tuple[str, int, int]] = []

    def runner(name: str, quick: bool) -> Fake:
        assert quick
        return Fake({"x": next(figures[name])}, {"x": "busy"} if name == "c" else None)

    accepted = Baseline({"a.x": 1.0, "b.x": 1.0, "c.x": 1.0})
    run = measure_all(
        True, accepted, lambda *a: started.append(a), runner=runner, benches=("a", "b", "c")
    )
    assert {name: len(tries) for name, tries in run.attempts.items()} == {
        "a": 2,
        "b": RETRIES + 1,  # a real slowdown stays below
        "c": 1,  # not judged: nothing to measure again for
    }
    assert started[:3] == [("a", 0, 1), ("a", 0, 2), ("b", 1, 1)]
    assert run.ratios == {"a.x": 0.9, "b.x": 0.2, "c.x": 0.01}
    verdict = judge(run.ratios, accepted, run.unjudged)
    assert verdict.regressions == ["b.x"] and list(verdict.unjudged) == ["c.x"]


def test_an_update_keeps_targets_and_the_old_value_of_what_it_cannot_judge(
    tmp_path: Path,
) -> None:
    old = Baseline({"a.x": 1.0, "a.y": 2.0}, {"a.x": {"issue 1": 0.8}, "a.z": {"issue 2": 3.0}})
    new = old.updated({"a.x": 1.23456, "a.y": 0.1, "a.z": 0.2}, {"date": "today"}, ["a.y", "a.z"])
    assert new.ratios == {"a.x": 1.23, "a.y": 2.0}  # a.z: no old value, so none
    assert new.targets == {"a.x": {"issue 1": 0.8}, "a.z": {"issue 2": 3.0}}
    path = tmp_path / "baseline.json"
    new.save(path)
    assert Baseline.load(path) == new  # a target without a value survives the file


def test_a_missing_or_malformed_baseline_is_a_configuration_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        Baseline.load(tmp_path / "none.json")
    (tmp_path / "bad.json").write_text('{"ratios": {"a.x": {"baseline": "fast"}}}')
    with pytest.raises(ConfigError, match="bad.json"):
        Baseline.load(tmp_path / "bad.json")


def test_the_markdown_block_is_replaced_and_the_page_around_it_kept(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(f"# Title\n\n{MARKERS[0]} -->\nold table\n{MARKERS[1]}\n\nAfter.\n")
    accepted = Baseline({"physics.kernel_vs_commonroad": 20.0}, measured={"date": "then"})
    verdict = judge({"physics.kernel_vs_commonroad": 21.0}, accepted)
    write_markdown(page, markdown_table(verdict, accepted, {"command": "vcosim bench all"}))
    text = page.read_text()
    assert text.startswith("# Title\n\n") and text.endswith("\n\nAfter.\n")
    assert "old table" not in text and "| `physics.kernel_vs_commonroad` | 20 | 21 | 10 |" in text
    with pytest.raises(ConfigError, match="no block"):
        write_markdown(tmp_path / "other.md", "table")


def test_bench_all_exits_1_on_a_regression_and_0_after_an_update(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(
        guard, "run_bench", lambda name, quick: Fake({"x": 0.3 if name == "world" else 1.0})
    )
    path = tmp_path / "baseline.json"
    Baseline({f"{name}.x": 1.0 for name in BENCHES}).save(path)
    said = CliRunner().invoke(app, ["bench", "all", "--json", "--baseline", str(path)])
    assert said.exit_code == 1, said.output
    result = json.loads(said.stdout)
    assert result["regressions"] == ["world.x"] and result["attempts"]["world"] == RETRIES + 1
    assert result["ratios"]["world.x"]["fails_below"] == 0.5
    said = CliRunner().invoke(app, ["bench", "all", "--baseline", str(path), "--update-baseline"])
    assert said.exit_code == 0, said.output
    assert "REGRESSED" not in said.stdout and "new baseline" in said.stdout
    assert Baseline.load(path).ratios["world.x"] == 0.3


# -- the real benches --------------------------------------------------------------------------
@pytest.fixture(scope="module")
def guard_run() -> tuple[int, dict[str, Any]]:
    """``vcosim bench all --quick --json`` against the committed baseline."""
    said = CliRunner().invoke(app, ["bench", "all", "--quick", "--json"])
    assert said.stdout.startswith("{"), said.output
    return said.exit_code, json.loads(said.stdout)


def test_no_ratio_fell_below_half_its_baseline(guard_run: tuple[int, dict[str, Any]]) -> None:
    code, result = guard_run
    for key, why in result["unjudged"].items():
        if key not in not_guarded():
            warnings.warn(f"bench guard: {key} not judged: {why}", stacklevel=1)
    regressed = {
        key: f"{row['value']:.3g} < half of {row['baseline']:.3g}"
        for key, row in result["ratios"].items()
        if row["regressed"]
    }
    assert not regressed, f"slower than half the baseline (measured 3 times): {regressed}"
    assert code == 0 and result["passed"]


def test_every_ratio_has_a_baseline_and_a_description(
    guard_run: tuple[int, dict[str, Any]],
) -> None:
    _, result = guard_run
    assert result["baseline"] == str(DEFAULT_BASELINE)
    assert result["no_baseline"] == [] and result["not_measured"] == []
    assert list(result["ratios"]) == list(ratio_docs())
    assert list(result["benches"]) == list(BENCHES)
    for name, report in result["benches"].items():
        assert {f"{name}.{key}" for key in report["ratios"]} <= set(result["ratios"]), name


def test_docs_performance_shows_the_committed_baseline() -> None:
    page = (DEFAULT_BASELINE.parents[1] / "docs" / "performance.md").read_text()
    block = page[page.index(MARKERS[0]) : page.index(MARKERS[1])]
    shown = dict(re.findall(r"^\| `([a-z_.]+)` \| ([^ |]+) \|", block, flags=re.M))
    accepted = Baseline.load(DEFAULT_BASELINE)
    assert shown == {key: f"{value:.3g}" for key, value in accepted.ratios.items()}, (
        "regenerate: vcosim bench all --quick --markdown docs/performance.md"
    )


# -- each bench's report, from the same run ---------------------------------------------------
def positive(value: object) -> bool:
    return isinstance(value, (int, float)) and math.isfinite(value) and value > 0


@pytest.fixture(scope="module")
def reports(guard_run: tuple[int, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Each bench's JSON as its own ``--json`` prints it."""
    reports: dict[str, dict[str, Any]] = guard_run[1]["benches"]
    return reports


def test_physics_report(reports: dict[str, dict[str, Any]]) -> None:
    result = reports["physics"]
    for key in ("kernel_steps_per_s", "stepwise_steps_per_s", "commonroad_mb_steps_per_s"):
        assert positive(result[key]), key
    assert set(result["batch_vehicle_steps_per_s"]) == {"64", "1024"}
    assert all(positive(v) for v in result["batch_vehicle_steps_per_s"].values())
    cr = result["commonroad_mb_steps_per_s"]
    assert result["ratios"]["kernel_vs_commonroad"] == pytest.approx(
        result["kernel_steps_per_s"] / cr, rel=1e-3, abs=1e-3
    )
    assert result["ratios"]["batch_vs_kernel"] == pytest.approx(
        result["batch_one_thread_vehicle_steps_per_s"]["64"] / result["kernel_steps_per_s"],
        rel=1e-3,
        abs=1e-3,
    )
    assert result["dt"] == 0.0005 and result["seconds"] == quick_options("physics")["seconds"]
    for name, target in result["targets"].items():
        assert result["meets_targets"][name] is (result[name] >= target)


def test_coupling_report(reports: dict[str, dict[str, Any]]) -> None:
    result = reports["coupling"]
    for key in (
        "raw_pingpong_blocking_per_s",
        "raw_pingpong_per_s",
        "exchanges_per_s",
        "exchanges_per_s_blocking",
    ):
        assert positive(result[key]), key
    assert math.isfinite(result["realtime_drift_ms_per_10s"])
    assert result["ratios"] == {
        "lockstep_vs_raw": result["exchanges_per_s"] / result["raw_pingpong_per_s"],
        "blocking_vs_raw_blocking": result["exchanges_per_s_blocking"]
        / result["raw_pingpong_blocking_per_s"],
    }
    assert result["timeouts"] == 0 and result["realtime_seconds"] > 0
    assert set(result["cores_used_by_others"]) == {"busy", "blocking"}
    assert set(result["unjudged"]) <= set(result["ratios"])


def test_contracts_report(reports: dict[str, dict[str, Any]]) -> None:
    result = reports["contracts"]
    assert result["fields"] == 20 and result["period_ms"] == 1.0
    for key in ("updates_per_s", "coupling_exchanges_per_s"):
        assert positive(result[key]), key
    assert result["ratio"] == result["updates_per_s"] / result["coupling_exchanges_per_s"]
    assert result["ratios"] == {"contracts_vs_coupling": result["ratio"]}
    assert result["meets_target"] == (result["ratio"] >= result["target_ratio"] == 0.8)
    assert result["gaps"] == 0 and set(result["cores_used_by_others"]) == {"spin"}
    left_out = ("updates_per_s_blocking", "ratio_blocking", "latency_ms", "raw_udp_latency_ms")
    assert [result[key] for key in left_out] == [None] * 4  # --quick: the guarded ratio only


def test_bus_report(reports: dict[str, dict[str, Any]]) -> None:
    result = reports["bus"]
    assert result["message"].startswith("IMFM, ") and result["lost"] == 0
    assert result["router_rtt_us_p99"] >= result["router_rtt_us_median"] > 0
    assert result["added_latency_us"] == pytest.approx(
        (result["router_rtt_us_median"] - result["direct_rtt_us_median"]) / 2
    )
    assert result["ratios"] == {"router_vs_direct": result["throughput_ratio"]}
    assert result["throughput_ratio"] == pytest.approx(
        result["router_messages_per_s"] / result["direct_messages_per_s"]
    )
    assert result["router"]["routed"] > 0 and result["router"]["malformed"] == 0


def test_sweep_report(reports: dict[str, dict[str, Any]]) -> None:
    result = reports["sweep"]
    runs = quick_options("sweep")["runs"]
    assert set(result["workers"]) == {"1", "2"}
    assert all(w["runs"] == runs and w["runs_per_s"] > 0 for w in result["workers"].values())
    workers = result["workers"]
    assert result["scaling_1_to_2"] == workers["2"]["runs_per_s"] / workers["1"]["runs_per_s"]
    assert result["ratios"] == {
        "one_worker_vs_in_process": workers["1"]["runs_per_s"] / result["in_process_runs_per_s"]
    }
    assert result["single_run"]["realtime_factor"] > 0


def test_world_report(reports: dict[str, dict[str, Any]]) -> None:
    result = reports["world"]
    sizes = [str(n) for n in quick_options("world")["counts"]]
    assert list(result["sizes"]) == sizes and result["collisions"] == dict.fromkeys(sizes, 0)
    for size, row in result["sizes"].items():
        assert all(positive(value) for value in row.values()), (size, row)
        assert row["cost_vs_batch"] == pytest.approx(
            row["world_us_per_vehicle_step"] / row["batch_us_per_vehicle_step"], rel=0.02, abs=0.01
        )
    assert list(result["coupled"]) == ["1"]
    row = result["coupled"]["1"]
    assert row["vehicles"] == 1 and row["timeouts"] == 0
    # a reply every send_skips + 1 steps: exchanges follow from the real-time factor, to
    # within the replies of part of a frame (the windows begin and end on frames)
    assert row["exchanges_per_s_per_vehicle"] == pytest.approx(
        row["realtime_factor"] * 2000 / (row["send_skips"] + 1), rel=0.25
    )
    assert list(result["kernel_ceiling"]) == ["realtime_factor_100"]
    assert positive(result["world_one_thread_vehicle_steps_per_s"]["100"])


def test_fmi_report(reports: dict[str, dict[str, Any]]) -> None:
    result = reports["fmi"]
    assert result["cost_ratio"] == result["in_process_steps_per_s"] / result["fmu_steps_per_s"]
    assert result["ratios"] == {
        "fmu_vs_in_process": 1 / result["cost_ratio"],
        "native_vs_kernel": 1 / result["native_cost_ratio"],
    }
    assert result["native_cost_ratio"] == (
        result["kernel_physics_steps_per_s"] / result["c_host_physics_steps_per_s"]
    )
    assert positive(result["fmu_with_io_steps_per_s"])


def test_sumo_report(reports: dict[str, dict[str, Any]]) -> None:
    """The guarded setting only, at the quick size: SUMO alone beside it, the ratio theirs."""
    result = reports["sumo"]
    (row,) = result["sizes"]
    assert row["vehicles"] == quick_options("sumo")["sizes"][0]
    assert (row["step_length"], row["action_step"], row["radius"]) == (0.01, None, None)
    assert row["present"] > 0.5 * row["vehicles"]  # SUMO's cars were in the world
    assert positive(row["cpu_us_per_vehicle_step"]) and positive(
        row["alone_cpu_us_per_vehicle_step"]
    )
    assert row["cpu_ratio"] == row["alone_cpu_us_per_vehicle_step"] / row["cpu_us_per_vehicle_step"]
    assert result["ratios"] == {"every_car_vs_sumo_alone": round(row["cpu_ratio"], 3)}
