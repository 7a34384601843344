"""Running a ``RunSpec`` from the command line: build it, say what it does, run, summarise.

``vcosim sim`` (``simulator``) turns its options into the spec; this module builds the run,
notes what it listens on and records (and saves the spec beside a recording), shows the
live status line, and prints the summary table at the end.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from vcosim.app.console import (
    Heartbeat,
    StatusLine,
    announce_compiling,
    console,
    describe_state,
    enter_realtime,
    final_state,
    note,
    save_json,
    setup_logging,
    warn,
)

if TYPE_CHECKING:
    from rich.table import Table

    from vcosim.groundtruth.outputs import GroundTruthOutputs
    from vcosim.scenarios.spec import FaceSpec, RunSpec
    from vcosim.sim.simulation import RunReport, Simulation
    from vcosim.tight.endpoint import CouplingReport


OUTPUT_LINES = ("osi:", "foxglove:", "recording:")
"""The builder's lines about the ground-truth outputs, said after those about the recording."""

SHOWN_VEHICLES = 10
"""A world's summary ends with the state of this many vehicles at most (the JSON has all)."""


def summary_table(report: RunReport, states: Mapping[str, Mapping[str, float]]) -> Table:
    """The end-of-run summary as a rich table, ending with each vehicle's final state."""
    from rich.table import Table

    table = Table(show_header=False, title="vcosim sim: summary")
    table.add_row("simulated time", f"{report.sim_time:.3f} s")
    table.add_row("wall time", f"{report.wall_time:.3f} s")
    table.add_row("real-time factor", f"{report.realtime_factor:.3f}")
    frames = report.frames
    table.add_row(
        "frames (late, skipped)",
        f"{frames['frames']} ({frames['late_frames']}, {frames['skipped_frames']})"
        + (", stopped late" if frames["stopped_late"] else ""),
    )
    table.add_row(
        "frame lateness p50 / p99 / p99.9 / max",
        " / ".join(f"{frames[f'frame_lateness_{q}_ms']:.3f}" for q in ("p50", "p99", "p999", "max"))
        + f" ms (jitter {frames['frame_jitter_ms']:.3f} ms)",
    )
    from vcosim.tight.endpoint import CouplingReport

    for name, face in report.faces.items():
        if isinstance(face, CouplingReport):  # a world's are named after their vehicles
            _coupling_rows(table, name.partition(":")[2], face)
    for name, face in report.faces.items():  # the other faces (contracts, bus): their counters
        if not isinstance(face, CouplingReport):
            for key, value in face.items():
                if isinstance(value, (int, float, str)):
                    table.add_row(f"{name}: {key.replace('_', ' ')}", str(value))
    if report.world is not None:
        world = report.world
        table.add_row("world", f"{world.vehicles} vehicles, {len(world.collisions)} collision(s)")
        for hit in world.collisions[:10]:
            table.add_row(
                "collision",
                f"t = {hit.time:.4f} s: {hit.vehicles[0]} and {hit.vehicles[1]}, "
                f"{hit.relative_speed:.2f} m/s, overlap {hit.overlap:.3f} m",
            )
        if world.stopped_at_collision:
            table.add_row("ended by", "the first collision (stop_at_collision)")
    if report.interrupted:
        table.add_row("ended by", "interrupt (Ctrl-C / SIGTERM)")
    lone = report.world is None
    for name, state in list(states.items())[:SHOWN_VEHICLES]:
        table.add_row("at the end" if lone else f"{name} at the end", describe_state(state))
    if len(states) > SHOWN_VEHICLES:
        table.add_row("", f"and {len(states) - SHOWN_VEHICLES} more vehicles (--json-out)")
    return table


def _coupling_rows(table: Table, vehicle: str, coupling: CouplingReport) -> None:
    """One coupling's counters; a world's carry their vehicle's name ("ego: applied")."""
    prefix = f"{vehicle}: " if vehicle else ""
    table.add_row(
        f"{prefix}schedule",
        f"send_skips {coupling['send_skips']}, window "
        f"{coupling['window']}, send_offset {coupling['send_offset']}",
    )
    for key in (
        "sent",
        "applied",
        "stale",
        "duplicate",
        "startup_unapplied",
        "implausible_id",
        "malformed",
        "rejected_peers",
        "peer_takeovers",
        "clamped_total",
        "timeouts",
    ):
        table.add_row(prefix + key.replace("_", " "), str(coupling[key]))
    if coupling["clamped"]:
        table.add_row(f"{prefix}clamped by slot", json.dumps(coupling["clamped"]))
    table.add_row(f"{prefix}time blocking", f"{coupling['blocked_time']:.3f} s")
    table.add_row(
        f"{prefix}waited for the controller at start-up",
        f"{coupling['startup_wait']:.3f} s ({coupling['startup_resends']} re-sends)",
    )
    table.add_row(
        f"{prefix}controller lost",
        f"{coupling['controller_lost']} time(s), {coupling['uncontrolled_time']:.3f} s "
        "(simulation time) without control",
    )


def run_simulator(
    spec: RunSpec,
    json_out: Path | None = None,
    ground_truth: GroundTruthOutputs | None = None,
    realtime: tuple[bool, int | None] = (False, None),
) -> RunReport:
    """Run ``spec`` to the end or an interrupt; print and optionally save the summary.

    A recorded run leaves its spec beside the recording (``FILE.spec.toml``), so
    ``vcosim sim --spec FILE.spec.toml`` repeats it; without a recording, a run with debug logs
    leaves it in their folder (``spec.toml``). The spec saved is the one built: the ground-truth
    outputs asked for among its faces, every default written out.
    """
    from vcosim.interrupts import sigterm_as_interrupt

    if ground_truth is not None:
        spec = spec.with_faces(ground_truth_faces(ground_truth))
    setup_logging()
    with sigterm_as_interrupt():
        sim: Simulation | None = None
        try:
            if announce_compiling():
                with Heartbeat(console, "preparing the run (compiling)…"):
                    sim = _start(spec)
            else:
                sim = _start(spec)
            granted = enter_realtime(*realtime)
            status = _Status(sim)
        except KeyboardInterrupt:
            if sim is not None:
                sim.close()
            warn("interrupted while starting: nothing was recorded")
            raise typer.Exit(130) from None
        with StatusLine(status.render, status.explain_waiting):
            report = sim.run(spec.duration)
    states = {name: final_state(vehicle.signals()) for name, vehicle in sim.vehicles.items()}
    console.print(summary_table(report, states))
    if report.frames["stopped_late"]:
        warn("--on-late stop: a frame ended after the next one was due: the run stopped")
    realtime_json = {} if granted is None else {"realtime": granted.to_dict()}
    save_json({**report.to_dict(), **realtime_json, "final_state": states}, json_out)
    return report


def spec_path(recording: Path) -> Path:
    """Where a recorded run's spec goes: ``run.csv`` → ``run.spec.toml`` beside it."""
    return recording.with_name(f"{recording.stem}.spec.toml")


def ground_truth_faces(outputs: GroundTruthOutputs) -> list[FaceSpec]:
    """The ``--osi*`` and ``--foxglove*`` options as the run spec's faces."""
    from vcosim.scenarios.spec import FoxgloveFaceSpec, OsiFaceSpec

    faces: list[FaceSpec] = []
    if outputs.wants_osi:
        host, port = outputs.osi if outputs.osi is not None else (None, None)
        udp = {} if host is None else {"udp_host": host, "udp_port": port}
        faces.append(
            OsiFaceSpec(
                **udp,
                framing="esmini" if outputs.osi_framing == "esmini" else "datagram",
                trace=outputs.osi_trace,
                rate=outputs.osi_rate,
            )
        )
    if outputs.foxglove is not None:
        host, port = outputs.foxglove
        faces.append(
            FoxgloveFaceSpec(
                host=host, port=port, allow=outputs.foxglove_allow, rate=outputs.foxglove_rate
            )
        )
    return faces


def _start(spec: RunSpec) -> Simulation:
    """Build the simulation with its faces and say what it listens on and records."""
    from vcosim.scenarios.build import build_simulation, endpoints
    from vcosim.scenarios.spec import CouplingFaceSpec

    built: list[str] = []
    sim = build_simulation(spec, note=built.append)
    outputs = [line for line in built if line.startswith(OUTPUT_LINES)]
    for line in built:
        if line not in outputs:
            note(line)
    if spec.recording is not None:
        from vcosim.sim.recorder import vehicle_path

        record, every = spec.recording.path, spec.recording.every
        each = f"every {every * sim.dt * 1e3:g} ms"
        if sim.world is None:
            note(f"recording every vehicle signal {each} to {record}")
        else:
            note(
                f"recording every signal of each of the {len(sim.vehicles)} vehicles {each}, "
                f"a file per vehicle: {vehicle_path(record, '{NAME}')}"
            )
        saved = spec.save(spec_path(record), resolved=True)
        note(f"the run's spec: {saved} (vcosim sim --spec repeats it)")
    else:  # a run folder of debug logs holds the spec too
        coupling = spec.face("coupling")
        if isinstance(coupling, CouplingFaceSpec) and coupling.debug_log is not None:
            spec.save(coupling.debug_log / "spec.toml", resolved=True)
    for line in outputs:  # what the ground-truth outputs do, said after the recording
        note(line)
    coupled = endpoints(sim)
    if sim.world is not None and spec.face("coupling") is not None and not coupled:
        _about_coupling("no vehicle of the world is driven from outside: nothing to couple")
    for vehicle, endpoint in coupled.items():
        cfg = endpoint.config
        schedule = cfg.schedule(sim.dt)
        who = f"coupling {vehicle}" if vehicle else "coupling"
        note(
            f"{who}: listening on {cfg.listen_host}:{endpoint.address[1]}, controller "
            f"{cfg.controller_host}:{cfg.controller_port}; send_skips {schedule.send_skips}, "
            f"window {schedule.window}, send_offset {schedule.send_offset}, "
            f"timeout {schedule.timeout:g} s; the controller's step is "
            f"{schedule.controller_step(sim.dt) * 1e3:g} ms"
            + (f"; debug logs in {cfg.debug_log}" if vehicle and cfg.debug_log else "")
        )
    for endpoint in list(coupled.values())[:1]:  # the layout and options are the same for all
        cfg, face = endpoint.config, endpoint.interface
        _about_coupling(
            f"layout {face.name}: {face.sim_to_controller} values to the "
            f"controller, {face.controller_to_sim} back (ids included)"
            + ("; slot 4 is read as a requested gear" if cfg.gear_slot else "")
        )
        missing = face.missing_wheel_torques()
        if missing:
            _about_coupling(
                f"the interface drives on wheel torques but gives "
                f"none for {', '.join(missing)}: those get zero",
                say=warn,
            )
    return sim


def _about_coupling(text: str, say: Callable[[str], None] = note) -> None:
    """A line about the coupling, said as the coupling's (its face kind first)."""
    from vcosim.sim.face import COUPLING

    say(f"{COUPLING}: {text}")


class _Status:
    """What the live line shows, and the one-time hint when no controller answers."""

    WAIT_HINT_AFTER = 1.0  # s without a controller before saying what the run waits for

    def __init__(self, sim: Simulation) -> None:
        from vcosim.scenarios.build import endpoints

        self.sim = sim
        self.endpoints = endpoints(sim)
        self.hinted = False

    def render(self) -> str:
        sim = self.sim
        wall = max(time.perf_counter() - sim.wall_start, 1e-9) if sim.wall_start else 0.0
        rtf = sim.time / wall if wall else 0.0
        text = f"t = {sim.time:8.2f} s   real-time factor {rtf:6.2f}"
        for vehicle, endpoint in self.endpoints.items():
            state = "connected" if endpoint.connected else "waiting for the controller"
            who = f"   {vehicle}" if vehicle else ""
            text += f"{who}   {state}: sent {endpoint.stats.sent}, applied {endpoint.stats.applied}"
        return text

    def explain_waiting(self) -> None:
        """Once, a few seconds into a run a controller does not answer: say what it waits for."""
        if self.hinted or not self.sim.wall_start:
            return
        waited = time.perf_counter() - self.sim.wall_start
        if waited < self.WAIT_HINT_AFTER:
            return
        for vehicle, endpoint in self.endpoints.items():
            if endpoint.heard:
                continue
            self.hinted = True
            cfg = endpoint.config
            note(
                f"waiting: no controller{' of ' + vehicle if vehicle else ''} has answered on "
                f"{cfg.controller_host}:{cfg.controller_port} for {waited:.0f} s; the run "
                f"holds until one does (its message sent again every {cfg.timeout:g} s). "
                "Start one (vcosim controller cruise, or your "
                "Simulink model), or run with --no-coupling"
            )
