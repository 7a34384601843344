"""The world bench's coupled rows: 1, 2 and 4 vehicles, each driven by its own controller.

As ``vcosim sim --world FILE --pacing lockstep`` runs them: every vehicle driven from outside
gets its own BeamNG-compatible endpoint (its own ports), and a cruise controller in a process
of its own (its own interpreter and GIL) answers it over loopback UDP. The coupling keeps its
defaults (``ext_time`` 5 ms: a message every 10 physics steps, window 1), so the figures are
what a user's run of such a world costs. Both sides wait blocking (no busy-polling): on a
machine with fewer cores than processes, spinning peers would steal the simulator's core.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import tomli_w

from vcosim.bench.physics import REPEATS
from vcosim.constants import PHYSICS_DT
from vcosim.reports import Report
from vcosim.scenarios.harness import ChildLink, ChildProcess
from vcosim.tight.config import CouplingConfig

COUPLED_COUNTS = (1, 2, 4)
LANE_SPACING = 5.0  # m between the coupled cars' lanes (side by side: no one ahead of another)
SPEED = 15.0  # m/s: the cars start at it and their controllers hold it
WARM_UP = 0.3  # s of wall time left out of the figures (first contact, caches)
TIMEOUT = 5.0  # s an endpoint waits for a reply: a stalled controller shows, not hangs


def _cruise_peer(link: ChildLink, speed: float, step: float) -> None:
    """A cruise controller in a ControllerBlock that answers whoever sends (blocking waits)."""
    from vcosim.controllers.cruise import Cruise
    from vcosim.tight.controller import ControllerBlock

    block = ControllerBlock(
        Cruise(speed=speed), listen_port=0, sim_host="127.0.0.1", sim_port=0, step=step, spin=0.0
    )
    link.on_stop(block.stop)
    link.ready(block.address[1])
    link.result(block.run().to_dict())


def coupled_world(ports: list[int]) -> dict[str, Any]:
    """A car per controller port, side by side on parallel lanes, each coupled to its port."""
    return {
        "vehicles": [
            {
                "name": f"car{n}",
                "start": {"x": 0.0, "y": n * LANE_SPACING, "speed": SPEED},
                "coupling": {"listen": "127.0.0.1:0", "controller": f"127.0.0.1:{port}"},
            }
            for n, port in enumerate(ports)
        ]
    }


@dataclass
class CoupledRow(Report):
    """A coupled world's lock-step run: its speed (best window) and its exchanges."""

    vehicles: int
    realtime_factor: float  # simulated s per wall s, best of ``REPEATS`` windows
    exchanges_per_s_per_vehicle: float  # replies applied per wall s, per vehicle, same window
    timeouts: int  # over all endpoints, whole run
    send_skips: int
    window: int


def coupling_config() -> CouplingConfig:
    """Every endpoint's options: the defaults, but blocking waits (see the module)."""
    return CouplingConfig(spin=0.0, timeout=TIMEOUT)


@contextmanager
def controller_peers(count: int) -> Iterator[list[int]]:
    """``count`` cruise controllers in processes of their own, started at once; their ports.

    Each answers at the controller step the endpoints' schedule gives.
    """
    step = coupling_config().schedule(PHYSICS_DT).controller_step(PHYSICS_DT)
    with ExitStack() as stack:
        peers = [
            stack.enter_context(ChildProcess(_cruise_peer, SPEED, step, name="cruise controller"))
            for _ in range(count)
        ]
        yield [peer.port() for peer in peers]


def measure_coupled(ports: list[int], seconds: float, tick: Callable[[], None]) -> CoupledRow:
    """One lock-step run of a world coupled to the controllers on ``ports``.

    The run lasts ``WARM_UP`` plus ``REPEATS`` windows of ``seconds`` (wall); each figure is
    the best window's (a busy machine only slows). A run closes its endpoints at its end, so
    the windows are cut from one run, not ``REPEATS`` runs.
    """
    from vcosim.scenarios.build import build_simulation, endpoints
    from vcosim.scenarios.spec import CouplingFaceSpec, PacingSpec, RunSpec

    config = coupling_config()
    with tempfile.TemporaryDirectory() as folder:  # a file, as ``vcosim sim --world`` reads
        path = Path(folder) / "coupled.toml"
        path.write_text(tomli_w.dumps(coupled_world(ports)))
        coupling = CouplingFaceSpec(**config.model_dump())
        spec = RunSpec(world=path, pacing=PacingSpec(mode="lockstep"), faces=[coupling])
        sim = build_simulation(spec)
    coupled = list(endpoints(sim).values())
    marks: list[tuple[float, float, int]] = []  # wall, sim time, replies applied
    ticks = [WARM_UP + seconds * (k + 1) for k in range(REPEATS)]  # ends of the windows

    def progress(sim_time: float) -> None:
        applied = sum(endpoint.stats.applied for endpoint in coupled)
        marks.append((time.perf_counter(), sim_time, applied))
        while ticks and marks[-1][0] - marks[0][0] >= ticks[0]:
            ticks.pop(0)
            tick()
        if not ticks:
            sim.stop()

    report = sim.run(None, on_progress=progress)
    if report.interrupted:  # the host caught Ctrl-C to close its faces: the bench ends too
        raise KeyboardInterrupt
    rtf, exchanges = _best_window(marks, seconds, len(ports))
    schedule = config.schedule(sim.dt)
    return CoupledRow(
        vehicles=len(ports),
        realtime_factor=rtf,
        exchanges_per_s_per_vehicle=exchanges,
        timeouts=sum(endpoint.stats.timeouts for endpoint in coupled),
        send_skips=schedule.send_skips,
        window=schedule.window,
    )


def _best_window(
    marks: list[tuple[float, float, int]], seconds: float, vehicles: int
) -> tuple[float, float]:
    """Real-time factor and exchanges/s per vehicle of the best ``seconds``-long window."""
    start = marks[0][0] + WARM_UP
    best = (0.0, 0.0)
    for k in range(REPEATS):
        inside = [m for m in marks if start + k * seconds <= m[0] <= start + (k + 1) * seconds]
        if len(inside) < 2:
            continue
        (w0, t0, a0), (w1, t1, a1) = inside[0], inside[-1]
        wall = max(w1 - w0, 1e-9)
        best = max(best, ((t1 - t0) / wall, (a1 - a0) / wall / vehicles))
    if best == (0.0, 0.0) and len(marks) > 1:  # frames too sparse for windows: the whole run
        (w0, t0, a0), (w1, t1, a1) = marks[0], marks[-1]
        wall = max(w1 - w0, 1e-9)
        best = ((t1 - t0) / wall, (a1 - a0) / wall / vehicles)
    return best
