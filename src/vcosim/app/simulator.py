"""``vcosim sim``: run the simulation built from options, with a live status and a summary."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from rich.live import Live
from rich.table import Table

from vcosim.app.console import console, setup_logging
from vcosim.interrupts import sigterm_as_interrupt
from vcosim.scenarios import build_simulation
from vcosim.sim.simulation import RunReport, Simulation


def summary_table(report: RunReport) -> Table:
    """The end-of-run summary as a rich table."""
    table = Table(show_header=False, title="vcosim sim: summary")
    table.add_row("simulated time", f"{report.sim_time:.3f} s")
    table.add_row("wall time", f"{report.wall_time:.3f} s")
    table.add_row("real-time factor", f"{report.realtime_factor:.3f}")
    table.add_row("frames (late)", f"{report.frames['frames']} ({report.frames['late_frames']})")
    table.add_row(
        "frame jitter / p99 lateness",
        f"{report.frames['frame_jitter_ms']:.3f} / {report.frames['frame_lateness_p99_ms']:.3f} ms",
    )
    coupling = report.faces.get("coupling")
    if coupling:
        table.add_row(
            "schedule",
            f"send_skips {coupling['send_skips']}, window "
            f"{coupling['window']}, send_offset {coupling['send_offset']}",
        )
        for key in (
            "sent",
            "applied",
            "stale",
            "duplicate",
            "startup_unapplied",
            "malformed",
            "rejected_peers",
            "clamped_total",
            "timeouts",
        ):
            table.add_row(key.replace("_", " "), str(coupling[key]))
        if coupling["clamped"]:
            table.add_row("clamped by slot", json.dumps(coupling["clamped"]))
        table.add_row("time blocking", f"{coupling['blocked_time']:.3f} s")
    for name, face in report.faces.items():  # the other faces (contracts, bus): their counters
        if name != "coupling" and isinstance(face, dict):
            for key, value in face.items():
                if isinstance(value, (int, float, str)):
                    table.add_row(f"{name}: {key.replace('_', ' ')}", str(value))
    if report.interrupted:
        table.add_row("ended by", "interrupt (Ctrl-C / SIGTERM)")
    return table


def run_simulator(
    *, duration: float | None, json_out: Path | None = None, **options: Any
) -> RunReport:
    """Run ``vcosim sim`` to the end or an interrupt; print and optionally save the summary."""
    setup_logging()
    sim = build_simulation(**options)
    endpoint = sim.faces.get("coupling")
    if endpoint is not None:
        schedule = endpoint.config.schedule(sim.dt)
        cfg, face = endpoint.config, endpoint.interface
        console.log(
            f"coupling: listening on {cfg.listen_host}:{endpoint.address[1]}, controller "
            f"{cfg.controller_host}:{cfg.controller_port}; send_skips {schedule.send_skips}, "
            f"window {schedule.window}, send_offset {schedule.send_offset}, "
            f"timeout {schedule.timeout:g} s; the controller's step is "
            f"{schedule.controller_step(sim.dt) * 1e3:g} ms"
        )
        console.log(
            f"coupling: layout {face.name}: {face.sim_to_controller} values to the "
            f"controller, {face.controller_to_sim} back (ids included)"
            + ("; slot 4 is read as a requested gear" if cfg.gear_slot else "")
        )
        missing = face.missing_wheel_torques()
        if missing:
            console.log(
                f"[yellow]coupling: the interface drives on wheel torques but gives "
                f"none for {', '.join(missing)}: those get zero"
            )
    status = _Status(sim)
    with (
        sigterm_as_interrupt(),
        Live(status.render(), console=console, transient=True, refresh_per_second=4) as live,
    ):
        report = sim.run(duration, on_progress=lambda t: status.update(live))
    console.print(summary_table(report))
    if json_out is not None:
        json_out.parent.mkdir(parents=True, exist_ok=True)
        json_out.write_text(json.dumps(report.as_dict(), indent=2, default=float))
    return report


class _Status:
    """A one-line live status, refreshed at most a few times a second."""

    def __init__(self, sim: Simulation) -> None:
        self.sim = sim
        self._last = 0.0

    def update(self, live: Live) -> None:
        now = time.perf_counter()
        if now - self._last > 0.25:
            self._last = now
            live.update(self.render())

    def render(self) -> str:
        sim = self.sim
        wall = max(time.perf_counter() - sim.wall_start, 1e-9) if sim.wall_start else 0.0
        rtf = sim.time / wall if wall else 0.0
        text = f"t = {sim.time:8.2f} s   real-time factor {rtf:6.2f}"
        endpoint = sim.faces.get("coupling")
        if endpoint is not None:
            state = "connected" if endpoint.connected else "waiting for the controller"
            text += f"   {state}: sent {endpoint.stats.sent}, applied {endpoint.stats.applied}"
        return text
