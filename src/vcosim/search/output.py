"""A search's output folder: the table, the summary, the plots, and every falsifying run's files.

Beside ``runs.jsonl`` (the log, written as runs finish): ``runs.csv`` (one row per run),
``summary.json`` (the falsifying runs ranked, the first one found, the best run, the best run
of each local minimum: ``search.basins``),
``progress.png`` (the objective against runs, with the best so far and the threshold),
``region.png`` (two parameters, each run coloured by its objective, falsifying runs circled,
the local minima starred, the failure region's boundary as a k-nearest-neighbour vote draws it),
and for the ``[output] worst`` most critical falsifying runs ``falsifying/run-NNNN.toml``: a
sweep file of that one run (``vcosim sweep`` re-runs it, bit for bit), and for a world file
``falsifying/run-NNNN.xosc`` with its road (``vcosim world export`` of the run's world).
"""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path
from typing import Any

import tomli_w

from vcosim.errors import ConfigError
from vcosim.search.config import Search
from vcosim.search.driver import SearchOutcome, SearchRun
from vcosim.sweep.config import Scalar, resolve
from vcosim.sweep.config.world import is_scenario
from vcosim.sweep.metrics import RESULT_COLUMNS


def _no_none(node: Any) -> Any:
    """A dump without its unset keys (TOML has no null)."""
    if isinstance(node, dict):
        return {k: _no_none(v) for k, v in node.items() if v is not None}
    if isinstance(node, list):
        return [_no_none(v) for v in node]
    return node


def run_file(search: Search, run: SearchRun) -> dict[str, Any]:
    """A sweep file of one run: the search's scenario with the run's parameters as a sweep."""
    data = _no_none(search.sweep.scenario.model_dump())
    data["scenario"]["name"] = f"{search.name}-run-{run.index}"
    data["sweep"] = {"mode": "grid", "parameters": dict(run.params)}
    return data


def write_run_file(search: Search, run: SearchRun, path: Path) -> Path:
    """``run_file`` written as TOML at ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    head = (
        f"# Run {run.index} of the search {search.name} ({search.source}): "
        f"{_objective_name(search)} = {run.value!r}.\n# vcosim sweep {path.name} runs it again.\n"
    )
    path.write_text(head + tomli_w.dumps(run_file(search, run)), encoding="utf-8")
    return path


def export_run(search: Search, params: dict[str, Scalar], out: Path) -> Path:
    """The run's world as OpenSCENARIO (``out``, its road beside it); ``ConfigError`` if not."""
    from vcosim.openscenario.export import export_world

    section = search.sweep.scenario.world
    if section.file is None:
        raise ConfigError(["a search without a [world] has no scenario to export"], "export")
    if is_scenario(section):
        raise ConfigError(
            ["the world is an OpenSCENARIO file already: its parameters are in the run's file"],
            "export",
        )
    cfg = resolve(search.sweep.scenario, params)
    assert cfg.world is not None
    duration = search.sweep.scenario.scenario.duration
    export_world(cfg.world, out, f"run of {search.source}", duration)
    return out


def _objective_name(search: Search) -> str:
    return search.metric.name if search.metric is not None else "robustness"


def summary(outcome: SearchOutcome, worst: int) -> dict[str, Any]:
    """Counts, the falsifying runs ranked (the first ``worst`` with parameters), the best run."""
    search = outcome.search
    s = search.section
    falsifying = outcome.falsifying
    best = outcome.best
    rate = outcome.ran / outcome.wall_time if outcome.wall_time > 0 else 0.0
    return {
        "name": search.name,
        "method": s.method,
        "seed": s.seed,
        "objective": _objective_name(search),
        "requirement": s.requirement,
        "threshold": search.threshold,
        "budget": s.budget,
        "batch": s.batch,
        "runs": len(outcome.runs),
        "ran": outcome.ran,
        "failed": len(outcome.failed),
        "interrupted": outcome.interrupted,
        "stopped": outcome.stopped,
        "backend": outcome.backend,
        "wall_time": outcome.wall_time,
        "runs_per_second": rate,
        "falsifying": len(falsifying),
        "first_falsifying": outcome.first_falsifying,
        "best": None
        if best is None
        else {"run": best.index, "value": best.value, "params": best.params},  # fmt: skip
        "worst_runs": [
            {"run": r.index, "value": r.value, "params": r.params} for r in falsifying[:worst]
        ],
        "minima": [m.to_dict() for m in outcome.minima],
    }


def write_outputs(outcome: SearchOutcome, out_dir: str | Path, worst: int = 5) -> list[Path]:
    """Every file of the output folder but the log (written as the runs finished)."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    search = outcome.search
    files = [_write_csv(outcome, out / "runs.csv")]
    info = summary(outcome, worst)
    exports: dict[str, str] = {}
    for run in outcome.falsifying[:worst]:
        stem = out / "falsifying" / f"run-{run.index:04d}"
        files.append(write_run_file(search, run, stem.with_suffix(".toml")))
        if search.sweep.scenario.world.file is not None and not is_scenario(
            search.sweep.scenario.world
        ):
            try:
                files.append(export_run(search, run.params, stem.with_suffix(".xosc")))
            except ConfigError as exc:
                exports[str(run.index)] = "; ".join(exc.problems)
    info["not_exported"] = exports
    summary_path = out / "summary.json"
    summary_path.write_text(json.dumps(info, indent=2, allow_nan=True) + "\n", encoding="utf-8")
    files.append(summary_path)
    if outcome.runs:
        from vcosim.search.plots import plot_progress, plot_region

        files.append(plot_progress(outcome, out / "progress.png"))
        if len(search.ranges) >= 2:
            files.append(plot_region(outcome, out / "region.png"))
    return files


def _write_csv(outcome: SearchOutcome, path: Path) -> Path:
    names = list(outcome.search.ranges)
    columns = ["run", "batch", "status", "error", *names, "value", "falsifying", *RESULT_COLUMNS]
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(columns)
        for r in outcome.runs:
            metrics = [r.metrics.get(c, math.nan) for c in RESULT_COLUMNS]
            writer.writerow(
                [
                    r.index,
                    r.batch,
                    r.status,
                    r.error,
                    *(r.params[n] for n in names),
                    r.value,
                    int(r.falsifying),
                    *metrics,
                ]  # fmt: skip
            )
    return path
