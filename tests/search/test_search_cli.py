"""`vcosim search` on the command line: results, --check, every problem at once, Ctrl-C and
--resume."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from vcosim.app import app

SEARCH = """
[scenario]
name = "cli"
duration = 2.0
initial_speed = 7.0

[controller]
name = "{controller}"
speed = 8.0
{extra}

[metrics]
steady_window = 0.2

[search]
objective = "overshoot"
threshold = 0.3
budget = 8
batch = 4
seed = 3

[search.parameters]
"controller.kp" = {{ low = 0.05, high = 2.0 }}
"controller.ki" = {{ low = 0.0, high = 1.0 }}
"""


def write(tmp_path: Path, controller: str = "cruise", extra: str = "") -> Path:
    path = tmp_path / "search.toml"
    path.write_text(SEARCH.format(controller=controller, extra=extra))
    return path


def logged(out: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in (out / "runs.jsonl").read_text().splitlines()[1:]]


def test_a_search_writes_its_results(tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = CliRunner().invoke(
        app, ["search", str(write(tmp_path)), "--workers", "0", "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())
    assert "search cli: tpe, budget 8 runs of 2 s in batches of 4, seed 3" in text
    assert "2 falsifying runs; the first after 3 runs" in text
    assert len(logged(out)) == 8
    summary = json.loads((out / "summary.json").read_text())
    assert summary["runs"] == 8 and summary["objective"] == "overshoot"
    assert (out / "runs.csv").read_text().count("\n") == 9
    assert (out / "progress.png").exists() and (out / "region.png").exists()
    assert (out / "falsifying" / "run-0002.toml").exists()  # no world: no .xosc
    assert not (out / "falsifying" / "run-0002.xosc").exists()


def test_the_command_line_overrides_budget_seed_and_method(tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = CliRunner().invoke(
        app,
        [
            "search",
            str(write(tmp_path)),
            "--workers",
            "0",
            "--out",
            str(out),
            "--budget",
            "3",
            "--seed",
            "5",
            "--method",
            "random",
        ],  # fmt: skip
    )
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())
    assert "search cli: random, budget 3 runs" in text and "seed 5" in text
    assert len(logged(out)) == 3


def test_check_runs_nothing(tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["search", str(write(tmp_path)), "--check", "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert not out.exists()


def test_a_bad_search_file_lists_every_problem(tmp_path: Path) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(
        """
[controller]
name = "cruise"

[sweep]
mode = "grid"

[search]
objective = "min_time_to_colision"
method = "annealing"
requirement = "always (groundspeed > )"

[search.parameters]
"controller.kpp" = { low = 0.1, high = 1.0 }
"controller.ki" = { low = 1.0, high = 0.5 }
"""
    )
    result = CliRunner().invoke(app, ["search", str(path)])
    assert result.exit_code == 2, result.output
    text = " ".join(result.output.split())
    assert "Traceback" not in result.output
    for problem in (
        "sweep: a search file has [search] instead of [sweep]",
        "search.method: Input should be 'tpe', 'cmaes' or 'random'",
        "search: give objective or requirement, not both",
        "search.objective: unknown metric 'min_time_to_colision'; did you mean "
        "'min_time_to_collision'?",
        "search.requirement: column 23: expected a number, got ')'",
        "search.parameters.'controller.kpp': unknown controller parameter 'kpp'; "
        "did you mean 'kp'?",
        "search.parameters.'controller.ki': low (1.0) must be below high (0.5)",
    ):
        assert problem in text, problem


def test_ctrl_c_keeps_the_finished_runs_and_resume_continues(tmp_path: Path) -> None:
    flag = tmp_path / "interrupted"
    extra = f'interrupt_kp = 1.0\nflag = "{flag}"'
    path = write(tmp_path, "search_faulty:InterruptedOnce", extra)
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["search", str(path), "--workers", "0", "--out", str(out)])
    assert result.exit_code == 130, result.output
    assert flag.exists()
    kept = logged(out)
    # runs 0, 1 and 2 of the Latin hypercube have kp 0.62, 1.69 and 0.08: interrupted in run 1
    assert [run["index"] for run in kept] == [0]
    text = " ".join(result.output.split())
    assert "interrupted after 1 runs" in text and "--resume continues" in text

    again = CliRunner().invoke(app, ["search", str(path), "--workers", "0", "--out", str(out)])
    assert again.exit_code == 2 and "holds a search already: --resume" in " ".join(
        again.output.split()
    )

    resumed = CliRunner().invoke(
        app, ["search", str(path), "--workers", "0", "--out", str(out), "--resume"]
    )
    assert resumed.exit_code == 0, resumed.output
    assert "8 runs (7 run now" in " ".join(resumed.output.split())

    fresh = tmp_path / "fresh"  # the flag is there: an uninterrupted search of the same file
    whole = CliRunner().invoke(app, ["search", str(path), "--workers", "0", "--out", str(fresh)])
    assert whole.exit_code == 0, whole.output
    assert logged(out) == logged(fresh)


def test_a_world_metric_needs_a_world(tmp_path: Path) -> None:
    path = write(tmp_path)
    path.write_text(path.read_text().replace('"overshoot"', '"min_time_to_collision"'))
    result = CliRunner().invoke(app, ["search", str(path), "--check"])
    assert result.exit_code == 2, result.output
    assert "search.objective: min_time_to_collision is measured in a world's runs only" in (
        " ".join(result.output.split())
    )


def test_bad_options_are_listed_together(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        app, ["search", str(write(tmp_path)), "--method", "foo", "--budget", "0", "--check"]
    )
    assert result.exit_code == 2, result.output
    assert "--method: Input should be 'tpe', 'cmaes' or 'random'" in result.output
    assert "--budget: Input should be greater than or equal to 1" in result.output
