"""``vcosim bench growth``: how the cost of a run grows with its work, measured in one run.

Four dimensions, each timed at several sizes as a cost per unit of work, with the line
through them: cost = fixed + per unit x size, fitted on relative errors (the small sizes
weigh as much as the large), and how far the worst size lies off it.

- **vehicles**: worlds of 1-1000 IDM cars on a ring (``vcosim bench world``'s), the host in
  fast pacing: µs per physics step of the whole world, and per vehicle-step; beside each,
  the world's kernel alone on one thread (no drivers, sensors or collision checks).
- **fields**: a contract of 5, 20, 80 fields every 1 ms in lock-step, each update answered
  (``vcosim bench contracts``'s lock-step, server in a process of its own): µs per update.
- **modules**: module 1 sending to 1, 4, 16 echo modules in turn through a router,
  ``WINDOW`` messages in flight (``vcosim.bench.bus.measure_router_cost``): the router's CPU
  µs per message (from ``/proc``, so it holds on a busy machine) and messages/s.
- **rate**: the simulator in lock-step against a busy-polling peer process, a message every
  1, 2, 5, 20 physics steps (``send_skips`` 0, 1, 4, 19), and without coupling: wall µs per
  simulated second against messages per simulated second; the slope is one exchange.

Rates are the best of their turns (a busy machine only slows), the sizes of a dimension
taking turns, but for the modules: each size has a router of its own, and its cost per
message is CPU time, which load elsewhere hardly moves. The ping-pongs between processes
(fields, rate) keep their best 0.1 s window and say how many cores other processes used
meanwhile (``vcosim.bench.rates.Quiet``).
Reported, not guarded: the ratios live in the other benches.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from vcosim.bench.bus import TURNS as BUS_TURNS
from vcosim.bench.physics import REPEATS, STEPS_PER_S, _rates, machine_info
from vcosim.bench.progress import bench_progress
from vcosim.bench.rates import BenchReport, Marks, Quiet, best_window
from vcosim.reports import Report

VEHICLES = (1, 10, 100, 1000)
FIELDS = (5, 20, 80)
MODULES = (1, 4, 16)
SEND_SKIPS = (0, 1, 4, 19)  # a message every 1, 2, 5, 20 physics steps
TURNS = 2  # turns of each size, in alternation, for the ping-pongs between processes
DIMENSIONS = ("vehicles", "fields", "modules", "rate")
QUICK: dict[str, Any] = {"seconds": 0.3}
"""``--quick``: every size, 0.3 s a figure (about 25 s with the processes' start-ups)."""

Tick = Callable[[], None]


@dataclass
class Line(Report):
    """cost = ``fixed`` + ``per_unit`` x size, and the worst size's distance from it."""

    fixed: float
    per_unit: float
    worst_misfit: float  # max |measured - line| / measured over the sizes

    @classmethod
    def through(cls, sizes: Sequence[float], costs: Sequence[float]) -> Line:
        """The least-squares line on relative errors through (size, cost) points."""
        x, y = np.asarray(sizes, dtype=float), np.asarray(costs, dtype=float)
        per_unit, fixed = np.polyfit(x, y, 1, w=1.0 / y)
        misfit = np.abs(y - (fixed + per_unit * x)) / y
        return cls(round(float(fixed), 4), round(float(per_unit), 4), round(float(misfit.max()), 3))


@dataclass
class Dimension(Report):
    """One dimension's sizes (by size), what its size counts and its fitted cost."""

    size: str  # what a size counts
    cost: str  # the cost the line is fitted to, with its unit
    rows: dict[str, dict[str, float | None]]
    line: Line | None  # None when the cost could not be measured here
    cores_used_by_others: float | None = None  # the ping-pongs' witness (``Quiet``)
    without: dict[str, float | None] | None = None  # the same run without it (rate: uncoupled)


def _line(rows: dict[str, dict[str, float | None]], key: str) -> Line | None:
    """The line through every row's ``key`` against its size (None if one is missing)."""
    points = [(float(size), row[key]) for size, row in rows.items()]
    if len(points) < 2 or any(cost is None or not cost > 0 for _, cost in points):
        return None
    return Line.through([x for x, _ in points], [float(y) for _, y in points if y is not None])


# -- vehicles ---------------------------------------------------------------------------------
def vehicles(counts: Sequence[int], seconds: float, tick: Tick = lambda: None) -> Dimension:
    """Worlds of ``counts`` cars and their kernels on one thread, ``seconds`` a repetition."""
    from vcosim.bench.world import _serial_chunk, _world_chunk, ring_world
    from vcosim.sim import Pacer, Simulation
    from vcosim.world import World

    chunks = []
    for count in counts:
        world = World(ring_world(count))
        chunks += [_world_chunk(Simulation(world, Pacer("fast")), seconds)]
        chunks += [_serial_chunk(world, seconds)]
    rates = _rates(chunks, seconds, tick)
    rows: dict[str, dict[str, float | None]] = {}
    for count, world_rate, kernel_rate in zip(counts, rates[::2], rates[1::2], strict=True):
        rows[str(count)] = {
            "us_per_step": round(1e6 * count / world_rate, 3),
            "us_per_vehicle_step": round(1e6 / world_rate, 4),
            "kernel_us_per_vehicle_step": round(1e6 / kernel_rate, 4),
            "realtime_factor": round(world_rate / count / STEPS_PER_S, 2),
        }
    return Dimension("vehicles in a world", "µs per physics step", rows, _line(rows, "us_per_step"))


# -- contract fields --------------------------------------------------------------------------
def field_names(count: int) -> list[str]:
    """``count`` readable vehicle signals: the contract bench's 20 first, then the rest."""
    from vcosim.bench.contracts import SIGNALS
    from vcosim.vehicle.layout import SIGNAL_NAMES

    names = [*SIGNALS, *(n for n in SIGNAL_NAMES if n not in SIGNALS and n != "time")]
    if count > len(names):
        raise ValueError(f"at most {len(names)} fields, got {count}")
    return names[:count]


def fields(sizes: Sequence[int], seconds: float, tick: Tick = lambda: None) -> Dimension:
    """Lock-step contract updates/s with each of ``sizes`` fields, ``seconds`` each in turns."""
    from vcosim.bench.contracts import PERIOD, lockstep_updates

    best = dict.fromkeys(sizes, 0.0)
    quiet = Quiet()
    for _ in range(TURNS):
        for size in sizes:
            marks, _ = lockstep_updates(seconds / TURNS, signals=field_names(size))
            best[size] = max(best[size], best_window(marks))
            tick()
    rows: dict[str, dict[str, float | None]] = {
        str(size): {
            "updates_per_s": round(rate),
            "us_per_update": round(1e6 / rate, 3) if rate else None,
            "realtime_factor_at_1ms": round(rate * PERIOD, 2),
        }
        for size, rate in best.items()
    }
    line = _line(rows, "us_per_update")
    return Dimension("fields of a contract", "µs per update", rows, line, quiet.others())


# -- bus modules ------------------------------------------------------------------------------
def modules(sizes: Sequence[int], seconds: float, tick: Tick = lambda: None) -> Dimension:
    """The router's cost per message with each of ``sizes`` echo modules, ``seconds`` each."""
    from vcosim.bench.bus import WINDOW, measure_router_cost

    rows: dict[str, dict[str, float | None]] = {}
    for size in sizes:
        cost = measure_router_cost(size, seconds, tick)
        cpu = cost.router_cpu_us_per_message
        rows[str(size)] = {
            "messages_per_s": round(cost.messages_per_s),
            "router_cpu_us_per_message": None if cpu is None else round(cpu, 3),
            "lost": cost.lost,
        }
    cost_name = f"router CPU µs per message ({WINDOW} in flight)"
    return Dimension(
        "modules on the bus", cost_name, rows, _line(rows, "router_cpu_us_per_message")
    )


# -- message rate -----------------------------------------------------------------------------
def coupled_run(port: int | None, seconds: float, send_skips: int) -> tuple[Marks, int]:
    """The simulator in lock-step for ``seconds``, a message every ``send_skips + 1`` steps.

    Coupled (window 1) to the peer on ``port``; ``port`` None: no coupling at all. Returns
    (time, simulated time) marks, one a frame, and the timeouts.
    """
    from vcosim.scenarios.build import build_simulation, endpoints
    from vcosim.scenarios.spec import CouplingFaceSpec, PacingSpec, RunSpec

    faces = []
    if port is not None:
        faces.append(
            CouplingFaceSpec(listen_port=0, controller_port=port, send_skips=send_skips, window=1)
        )
    sim = build_simulation(RunSpec(pacing=PacingSpec(mode="lockstep"), faces=faces))
    marks: Marks = []

    def progress(sim_time: float) -> None:
        marks.append((time.perf_counter(), sim_time))
        if marks[-1][0] - marks[0][0] >= seconds:
            sim.stop()

    sim.run(None, on_progress=progress)
    timeouts = sum(endpoint.stats.timeouts for endpoint in endpoints(sim).values())
    return marks, timeouts


def rate(skips: Sequence[int], seconds: float, tick: Tick = lambda: None) -> Dimension:
    """Wall µs per simulated second at each of ``skips`` and uncoupled, ``seconds`` each."""
    from vcosim.bench.coupling import peer_process

    variants: list[int | None] = [*skips, None]  # None: no coupling, the line's floor
    best = dict.fromkeys(variants, 0.0)
    timeouts = dict.fromkeys(variants, 0)
    with peer_process(busy=True) as peer:
        port = peer.port()
        quiet = Quiet()
        for _ in range(TURNS):
            for skip in variants:
                marks, late = coupled_run(
                    None if skip is None else port, seconds / TURNS, skip or 0
                )
                best[skip] = max(best[skip], best_window(marks))
                timeouts[skip] += late
                tick()
        others = quiet.others()
    rows: dict[str, dict[str, float | None]] = {}
    for skip in skips:
        per_simulated_s = str(round(STEPS_PER_S / (skip + 1)))
        rows[per_simulated_s] = {
            "send_skips": skip,
            **_speed(best[skip]),
            "timeouts": timeouts[skip],
        }
    line = _line(rows, "us_per_simulated_s")
    size, cost = "messages per simulated second", "wall µs per simulated second"
    return Dimension(size, cost, rows, line, others, without=_speed(best[None]))


def _speed(factor: float) -> dict[str, float | None]:
    """A real-time factor, and the wall µs a simulated second takes at it."""
    return {
        "realtime_factor": round(factor, 2),
        "us_per_simulated_s": round(1e6 / factor, 1) if factor else None,
    }


# -- the bench --------------------------------------------------------------------------------
@dataclass
class GrowthBench(BenchReport):
    """``vcosim bench growth``: each dimension measured (by name)."""

    seconds: float
    dimensions: dict[str, Dimension]
    machine: dict[str, Any] = field(default_factory=machine_info)

    def to_dict(self) -> dict[str, Any]:
        """In the layout ``vcosim bench growth --json`` prints."""
        turns = {"vehicles": REPEATS, "fields": TURNS, "modules": BUS_TURNS, "rate": TURNS}
        return {
            **{name: dimension.to_dict() for name, dimension in self.dimensions.items()},
            "seconds": self.seconds,
            "turns": {name: turns[name] for name in self.dimensions},  # of each size
            **self.machine,
        }


def measure_growth_bench(
    seconds: float = 2.0, only: Sequence[str] = DIMENSIONS, progress: bool = True
) -> GrowthBench:
    """Each dimension of ``only`` at its sizes, in one run (see the module's docstring).

    ``seconds`` is each figure's share of wall time (for the vehicles, each repetition's).
    """
    if not seconds > 0:
        raise ValueError(f"seconds must be positive, got {seconds}")
    plan: dict[str, tuple[Callable[..., Dimension], Sequence[int], int]] = {
        "vehicles": (vehicles, VEHICLES, 2 * REPEATS * len(VEHICLES)),
        "fields": (fields, FIELDS, TURNS * len(FIELDS)),
        "modules": (modules, MODULES, BUS_TURNS * len(MODULES)),
        "rate": (rate, SEND_SKIPS, TURNS * (len(SEND_SKIPS) + 1)),
    }
    chosen = [name for name in DIMENSIONS if name in only]
    measured: dict[str, Dimension] = {}
    with bench_progress(progress) as bar:
        task = bar.add_task("", total=sum(plan[name][2] for name in chosen))
        for name in chosen:
            measure, sizes, _ = plan[name]
            bar.update(task, description=f"{name}: {', '.join(map(str, sizes))}")
            measured[name] = measure(sizes, seconds, lambda: bar.advance(task))
    return GrowthBench(seconds, measured)
