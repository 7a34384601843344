"""The five timing cases of BeamNG's tight coupling, run end to end (``vcosim cases``).

Each case runs ``vcosim sim --duration 1.5 --pacing realtime --frame-rate 2000 --ext-time
T_ext --ping-time 0.00001`` in its own process (its own GIL) with debug logs, coupled to a
``ControllerBlock`` in this process whose step function busy-waits the case's computation
time and answers all-NaN controls (BeamNG's test model does the same). The block listens on
an ephemeral port bound before the simulator starts and answers each message to its sender
(``sim_port=0``), so no port is fixed in advance. It blocks rather than busy-polls
(``spin=0``): on a two-core machine a spinning controller takes the core the simulator needs.
The two are kept on separate CPUs where the machine allows.

The logs are then analysed and judged (``vcosim.analysis.cases``). ``run_cases(out_dir)``
writes ``out_dir/caseN/`` (the logs) and ``out_dir/cases.html`` and returns the results.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from vcosim.analysis import load_run
from vcosim.analysis.cases import (
    CASES,
    DURATION,
    Case,
    CaseResult,
    LoadMeter,
    cases_html,
    cpu_split,
    evaluate,
    set_affinity,
)
from vcosim.analysis.report import atomic_write
from vcosim.constants import PING_TIME
from vcosim.errors import VcosimError
from vcosim.scenarios.harness import CommandProcess

SIM_TIMEOUT = 60.0  # s of wall time for one simulator process


def busy_step(compute: float) -> Callable[[object], None]:
    """A step function that busy-waits ``compute`` seconds and answers all NaN."""

    def step(message: object) -> None:
        end = time.perf_counter() + compute
        while time.perf_counter() < end:
            pass

    return step


def simulator_command(
    case: Case, controller_port: int, folder: Path, duration: float = DURATION
) -> list[str]:
    """The ``vcosim sim`` command line of a case."""
    return [
        sys.executable,
        "-m",
        "vcosim",
        "sim",
        "--duration",
        f"{duration:g}",
        "--pacing",
        "realtime",
        "--frame-rate",
        "2000",
        "--ext-time",
        f"{case.ext_time:g}",
        "--ping-time",
        f"{PING_TIME:g}",
        "--listen",
        "127.0.0.1:0",
        "--controller",
        f"127.0.0.1:{controller_port}",
        "--debug-log",
        str(folder),
    ]


def run_case(case: Case, folder: Path, duration: float = DURATION) -> CaseResult:
    """Run one case (simulator process + controller block here), analyse and check it."""
    from vcosim.tight import ControllerBlock

    result = CaseResult(case, folder)
    start = time.perf_counter()
    block = ControllerBlock(
        busy_step(case.compute), listen_port=0, sim_port=0, step=case.ext_time, spin=0.0
    )
    sim_cpus, controller_cpus = cpu_split()

    def controller() -> None:
        set_affinity(0, controller_cpus)  # this thread only
        block.run()

    thread = threading.Thread(target=controller, name=f"case {case.number} controller", daemon=True)
    with LoadMeter() as load:
        thread.start()
        try:
            with CommandProcess(
                simulator_command(case, block.address[1], folder, duration), name="simulator"
            ) as simulator:
                if simulator.pid is not None:  # pinned before its first step
                    set_affinity(simulator.pid, sim_cpus)
                finished = simulator.wait(SIM_TIMEOUT)
        finally:
            block.stop()
            thread.join(timeout=5)
    result.wall_time = time.perf_counter() - start
    result.other_load = load.cpus
    if finished is None:
        result.error = f"the simulator did not finish within {SIM_TIMEOUT:g} s"
    elif finished.returncode != 0:
        result.error = f"vcosim sim exited with {finished.returncode}: {finished.last_lines()}"
    else:
        try:
            result.run = load_run(folder)
        except VcosimError as exc:
            result.error = str(exc)
        else:
            result.checks = evaluate(case, result.run.metrics)
    return result


def run_cases(
    out_dir: str | Path,
    cases: Sequence[Case] = CASES,
    *,
    duration: float = DURATION,
    on_case: Callable[[Case], None] | None = None,
    on_result: Callable[[CaseResult], None] | None = None,
) -> list[CaseResult]:
    """Run the cases one after the other, write ``out_dir/cases.html``, return the results.

    ``on_case`` hears of each case as it starts, ``on_result`` of its result (for a display).
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    results: list[CaseResult] = []
    start = time.perf_counter()
    for case in cases:
        if on_case is not None:
            on_case(case)
        result = run_case(case, out / f"case{case.number}", duration)
        results.append(result)
        if on_result is not None:
            on_result(result)
    page = cases_html(results, time.perf_counter() - start, duration)
    atomic_write({out / "cases.html": page.encode("utf-8")})
    return results
