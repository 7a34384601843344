"""The output files: Parquet results and signals, the report with its plots, the summary."""

from __future__ import annotations

import json
import math

import numpy as np
import pyarrow as pa

from vcosim.sweep.backends import SerialBackend
from vcosim.sweep.driver import run_sweep
from vcosim.sweep.metrics import METRICS, RESULT_COLUMNS, WORLD_METRICS
from vcosim.sweep.outcome import SweepSummary, worst_cases
from vcosim.sweep.tables import METADATA_KEY, read_results

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def test_results_signals_and_report(make_sweep, tmp_path):
    sweep = make_sweep(
        {
            "controller.kp": [0.1, 0.9],
            "controller.name": ["cruise"],
            "coupling.memory": [False, True],
        },
        output={
            "signals": True,
            "signal_names": ["groundspeed", "yaw_deg"],
            "signals_every": 100,
            "worst": 2,
        },
    )
    outcome = run_sweep(sweep, SerialBackend(), out_dir=tmp_path)
    names = {p.name for p in outcome.files}
    assert {
        "results.parquet",
        "signals.parquet",
        "report.html",
        "summary.json",
        "failures.log",
    } <= names

    table = read_results(tmp_path / "results.parquet")
    assert table.column_names == [
        "run",
        "status",
        "error",
        "controller.kp",
        "controller.name",
        "coupling.memory",
        *RESULT_COLUMNS,
    ]
    assert table.schema.field("run").type == pa.int64()
    assert table.schema.field("controller.kp").type == pa.float64()
    assert table.schema.field("controller.name").type == pa.string()
    assert table.schema.field("coupling.memory").type == pa.bool_()
    assert table.column("coupling.memory").to_pylist() == [False, True, False, True]
    meta = json.loads(table.schema.metadata[METADATA_KEY])
    assert meta["runs"] == meta["finished"] == 4 and meta["interrupted"] is False
    assert meta["metrics"] == [m.name for m in METRICS]

    signals = read_results(tmp_path / "signals.parquet")
    assert signals.column_names == ["run", "time", "groundspeed", "yaw_deg"]
    assert signals.num_rows == 4 * 11  # 0.5 s every 50 ms, from time 0
    assert signals.column("run").to_pylist()[:12] == [0] * 11 + [1]

    page = (tmp_path / "report.html").read_text()
    assert "Failed runs (0)" in page
    for metric in METRICS:
        if metric.name == "overshoot_pct" or metric.name == "overshoot":
            continue  # no overshoot in half a second: may be all zeros, still plotted
        if metric.name in WORLD_METRICS:  # a lone car has none: no plot
            assert not (tmp_path / "plots" / f"{metric.name}.png").exists()
            continue
        png = tmp_path / "plots" / f"{metric.name}.png"
        assert png.read_bytes().startswith(PNG_MAGIC), metric.name
        assert f'src="plots/{metric.name}.png"' in page
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["finished"] == 4 and summary["failed"] == 0
    assert len(summary["worst"]["settling_time"]) == 2
    assert summary == json.loads(json.dumps(SweepSummary.of(outcome, 2).to_dict()))
    worst_settling = summary["worst"]["settling_time"][0]
    assert set(worst_settling) == {"run", "value", "params"}
    assert worst_settling["params"] == outcome.results[worst_settling["run"]].params


def test_worst_cases_by_direction(make_sweep):
    sweep = make_sweep({"controller.kp": [0.1, 0.5, 2.0]})
    outcome = run_sweep(sweep, SerialBackend(), write=False)
    worst = worst_cases(outcome, 3)
    sse = [r.metrics.steady_state_error for r in worst["steady_state_error"]]
    assert [abs(v) for v in sse] == sorted((abs(v) for v in sse), reverse=True)
    settle = [r.metrics.settling_time for r in worst["settling_time"]]
    assert settle == sorted(settle, reverse=True)
    rtf = [r.metrics.min_realtime_factor for r in worst["min_realtime_factor"]]
    assert rtf == sorted(rtf)
    assert all(not math.isnan(v) for v in np.concatenate([sse, settle, rtf]))
