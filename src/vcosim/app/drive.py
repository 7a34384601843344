"""``vcosim drive``: the whole driving simulator on this machine, one process per module.

The router runs here; each module is a ``vcosim`` process of its own (its own interpreter, so
the 2000 Hz physics shares no lock with anything) and all end with one Shutdown.

If ``drive`` itself dies, even by SIGKILL, its modules end too: on Linux each asks as it starts
for ``PR_SET_PDEATHSIG`` (a signal when drive's main thread, which starts them, dies) and
answers it with one SIGTERM, so they close their files as on Ctrl-C; elsewhere, and as a
second net, every module notices its silent router and ends after 10 s
(``vcosim.bus.client.Liveness``). The module asks for it itself (:func:`child_main`) rather
than in a ``preexec_fn``: forking a process that has threads (the router's) runs Python in
the child before ``exec``, which is not safe.
"""

from __future__ import annotations

import ctypes
import json
import os
import signal
import sys
import time
from collections.abc import Mapping
from datetime import datetime
from pathlib import Path
from types import FrameType
from typing import Annotated, Any

import typer

from vcosim.app.bus import router_summary
from vcosim.app.console import StatusLine, console, describe_state, note, setup_logging, table
from vcosim.app.groundtruth import Foxglove, ground_truth_outputs
from vcosim.app.options import (
    BUS_DEFAULT,
    Bus,
    RunFolder,
    TerrainOption,
    VehicleOption,
    WallTime,
    WorldOption,
    bus_address,
)
from vcosim.bus.catalogue import ModuleId
from vcosim.constants import VIEWER_PORT
from vcosim.errors import CouplingTimeout, MissingExtra, VcosimError
from vcosim.extras import install_command, missing
from vcosim.scenarios.harness import CommandProcess

DRIVER_MODULES = (
    # (name, the vcosim sub-command, its bus id), started after the vehicle; the driver's input
    # last, so every module is there to hear the car from the driver's first input on
    ("sound", "sound", ModuleId.SOUND),
    ("viewer", "view", ModuleId.VISUALISATION),
    ("input", "input", ModuleId.INPUT),
)
NEEDS = {"logger": "logging", "viewer": "viewer"}
"""The modules that cannot run without an extra, and its name. Sound and input do without
theirs: no sounddevice, nothing is played; no pygame-ce, the keyboard (or, headless, nothing)."""

PR_SET_PDEATHSIG = 1  # from <linux/prctl.h>
PARENT_PID = "VCOSIM_DRIVE_PID"
"""Environment variable: drive's pid, for a module started by drive to end with it."""

CHILD = "from vcosim.app.drive import child_main; child_main()"
MODULE_GRACE = 10.0  # s a module gets to end after the Shutdown, and after each harsher request
"""How drive starts a module: ``python -c CHILD <vcosim command and options>``."""


def child_main() -> None:
    """A module started by drive: end with drive (see :func:`end_with_parent`), then run."""
    parent = os.environ.pop(PARENT_PID, "")
    if parent.isdigit():
        end_with_parent(int(parent))
    from vcosim.app import main

    main()


def end_with_parent(parent: int) -> None:
    """Be sent SIGTERM, once, when ``parent`` dies (Linux); already dead: SIGTERM now.

    The kernel sends the parent-death signal again for every thread of the parent that exits
    (the children are handed from thread to thread), so it is SIGHUP, answered once with the
    one SIGTERM that ends the module as Ctrl-C would; a second SIGTERM while the module closes
    its files would cut them short.
    """
    if sys.platform.startswith("linux"):

        def parent_died(signum: int, frame: FrameType | None) -> None:
            signal.signal(signal.SIGHUP, signal.SIG_IGN)  # the repeats are dropped
            os.kill(os.getpid(), signal.SIGTERM)

        signal.signal(signal.SIGHUP, parent_died)
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGHUP, 0, 0, 0)
    if os.getppid() != parent:  # drive died before we asked
        os.kill(os.getpid(), signal.SIGTERM)


def drive(
    out: RunFolder = Path("runs"),
    bus: Bus = BUS_DEFAULT,
    wall_time: WallTime = None,
    vehicle: VehicleOption = "nightrider",
    terrain: TerrainOption = None,
    frame_rate: Annotated[
        float,
        typer.Option(
            help="The vehicle's frames per second (>= 100 spaces its 100 Hz messages evenly)."
        ),
    ] = 100.0,
    world: WorldOption = None,
    skip_missing: Annotated[
        bool,
        typer.Option(
            "--skip-missing",
            help="Start the modules whose extras are installed, without the others (the logger "
            "needs `logging`, the viewer `viewer`); without it a missing extra is an error.",
        ),
    ] = False,
    foxglove: Foxglove = None,
) -> None:
    """Start the driving simulator on this machine: router, vehicle, logger, input, sound, view.

    Every module also runs alone (`vcosim bus`, `vcosim sim --bus HOST:PORT`, `vcosim log`,
    ...), on any machine. Sound plays on the sound card with the `sound` extra and input reads
    a wheel or gamepad with `input`; without them sound is silent and input uses the keyboard.

    With --world, the world's ego is the vehicle module (16) the input drives, and every
    vehicle's pose goes on the bus (module 22) for the viewer and the logger.

    If drive is killed, its modules end too (Linux: at once; elsewhere: each module ends 10 s
    after its router falls silent, with exit code 1).
    """
    if world is not None and (vehicle != "nightrider" or terrain is not None):
        raise typer.BadParameter(
            "--vehicle, --terrain: the world file says it for each vehicle",
            param_hint="'--world'",
        )
    router = bus_address(bus)
    if foxglove is not None:  # the vehicle process serves it: checked here, before anything
        ground_truth_outputs(
            osi=None, osi_trace=None, osi_rate=100.0, foxglove=foxglove,
            foxglove_allow=None, foxglove_rate=50.0,
        )  # fmt: skip
    without = absent_modules(skip_missing)
    report = run_drive(
        out,
        router.host,
        router.port,
        duration=wall_time,
        vehicle=vehicle,
        frame_rate=frame_rate,
        terrain=terrain,
        world=world,
        without=without,
        foxglove=foxglove,
    )
    if report["interrupted"]:
        raise typer.Exit(130)


def absent_modules(skip_missing: bool) -> dict[str, str]:
    """The modules whose extra is missing, with the extra; refused unless ``skip_missing``."""
    gone = {module: (extra, missing(extra)) for module, extra in NEEDS.items()}
    absent = {module: extra for module, (extra, modules) in gone.items() if modules}
    if absent and not skip_missing:
        needs = ", ".join(
            f"the {module} needs the `{extra}` extra ({', '.join(modules)} not installed)"
            for module, (extra, modules) in gone.items()
            if modules
        )
        raise MissingExtra(
            f"vcosim drive: {needs}: {install_command(*absent.values())}; or give "
            "--skip-missing to drive without them"
        )
    return absent


def module_process(name: str, args: list[str], log_dir: Path) -> CommandProcess:
    """A module as a ``vcosim`` process of its own, its output in ``log_dir/NAME.log``.

    In a session of its own, so Ctrl-C reaches drive alone, which ends them in order; and
    told drive's pid, so it ends if drive dies (:func:`child_main`).
    """
    return CommandProcess(
        [sys.executable, "-c", CHILD, *args],
        name=name,
        log=log_dir / f"{name}.log",
        new_session=True,
        env={**os.environ, PARENT_PID: str(os.getpid())},
    ).start()


def end_module(module: CommandProcess, grace: float = MODULE_GRACE) -> int | None:
    """Its exit code once it ended (after the Shutdown; else Ctrl-C, SIGTERM, SIGKILL).

    None: it would not end even so.
    """
    finished = module.wait(grace) or module.stop(grace)
    return None if finished is None else finished.returncode


def _final_states(summary_file: Path) -> dict[str, dict[str, float]]:
    """Each vehicle's final state from the vehicle module's summary (none if it wrote none)."""
    try:
        states = json.loads(summary_file.read_text()).get("final_state", {})
    except (OSError, ValueError):
        return {}
    return states if isinstance(states, dict) else {}


def run_drive(
    out: Path,
    host: str,
    port: int,
    *,
    duration: float | None,
    vehicle: str,
    frame_rate: float,
    terrain: Path | None = None,
    world: Path | None = None,
    start_timeout: float = 60.0,
    without: Mapping[str, str] | None = None,
    foxglove: str | None = None,
) -> dict[str, Any]:
    """Router here; logger, vehicle, sound, viewer and input as processes.

    With ``world`` the vehicle process runs that world (``sim --world``); it is there once the
    world's module (22) has joined. The modules named in ``without`` (module -> its missing
    extra) are not started.

    Ends on ``duration``, Ctrl-C, SIGTERM, a Shutdown from any module, or the vehicle's exit;
    then sends every module Shutdown and waits for them, so the recording is complete.
    """
    from vcosim.bus.router import Router
    from vcosim.interrupts import sigterm_as_interrupt

    setup_logging()
    run_dir = out / datetime.now().strftime("%Y%m%d-%H%M%S")
    run_dir.mkdir(parents=True, exist_ok=True)
    router = Router(host, port).start()
    h, p = router.address
    where = ["--bus", f"{h}:{p}"]
    ground = [] if terrain is None else ["--terrain", str(terrain)]  # vehicle and viewer alike
    drawn = ground if world is None else ["--world", str(world)]  # what the viewer draws
    children: list[CommandProcess] = []
    joined: set[str] = set()
    interrupted = False
    note(f"bus router on {h}:{p}; module output goes to {run_dir}/<module>.log")

    def launch(name: str, args: list[str], module_id: int) -> None:
        child = module_process(name, args, run_dir)
        children.append(child)
        if (
            not router.wait_until(
                lambda: module_id in router.modules or not child.running, start_timeout
            )
            or not child.running
        ):
            raise CouplingTimeout(f"the {name} module did not join the bus (see {child.log})")
        joined.add(name)
        note(f"{name}: module {module_id} joined")

    skipped = dict(without or {})
    for name, extra in skipped.items():
        note(f"{name}: not started, the `{extra}` extra is not installed (--skip-missing)")
    summary_file = run_dir / "vehicle.json"  # the vehicle's summary: its final state
    with sigterm_as_interrupt():
        try:
            if "logger" not in skipped:
                launch("logger", ["log", str(run_dir / "bus.mcap"), *where], ModuleId.LOGGING)
            simulated = (
                ["--vehicle", vehicle, *ground] if world is None else ["--world", str(world)]
            )
            launch(
                "vehicle",
                ["sim", *where, "--no-coupling", "--frame-rate", f"{frame_rate:g}", *simulated]
                + ["--json-out", str(summary_file)]
                + ([] if foxglove is None else ["--foxglove", foxglove]),
                ModuleId.VEHICLE if world is None else ModuleId.WORLD,
            )
            vehicle_child = children[-1]
            if foxglove is not None:
                note(f"foxglove: the vehicle serves the run on {foxglove} (docs/foxglove.md)")
            for name, command, module_id in DRIVER_MODULES:
                if name not in skipped:
                    launch(
                        name, [command, *where, *(drawn if command == "view" else [])], module_id
                    )
            if ModuleId.VISUALISATION in router.modules:  # (said once every module is there)
                note(f"viewer: open http://127.0.0.1:{VIEWER_PORT}/ in a browser")
            begun = time.monotonic()
            end = None if duration is None else begun + duration

            def status() -> str:
                ids = ", ".join(str(i) for i in sorted(router.modules))
                return (
                    f"driving for {time.monotonic() - begun:7.1f} s   modules {ids}   "
                    f"messages routed {router.stats.routed}   Ctrl-C ends"
                )

            with StatusLine(status):
                while not router.stopped.is_set() and vehicle_child.running:
                    left = 0.5 if end is None else min(0.5, end - time.monotonic())
                    if left <= 0:
                        break
                    router.stopped.wait(left)
        except KeyboardInterrupt:
            interrupted = True
            for child in children:  # still starting: no Shutdown can reach it
                if child.name not in joined and child.running and child.popen is not None:
                    child.popen.terminate()
        finally:
            if not router.stopped.is_set():
                router.shutdown_all()  # every module ends cleanly; the router then stops
                router.stopped.wait(5.0)
            codes = {c.name: end_module(c) for c in children}
            router.stop()
    recording = run_dir / "bus.mcap"
    not_started = ", ".join(f"{name} (no `{extra}` extra)" for name, extra in skipped.items())
    report: dict[str, Any] = {
        "run_dir": str(run_dir),
        **({"recording": str(recording)} if recording.is_file() else {}),
        **({"not_started": not_started} if skipped else {}),
        "exit_codes": codes,
        "interrupted": interrupted,
        "final_state": _final_states(summary_file),
        "router": router_summary(router.report()),
    }
    rows = {k: v for k, v in report.items() if k not in ("router", "final_state")}
    lone = world is None
    for name, state in report["final_state"].items():
        rows["at the end" if lone else f"{name} at the end"] = describe_state(state)
    console.print(table("bus router", report["router"]))
    console.print(table("vcosim drive: summary", rows))  # last: it ends with the vehicle
    # None: it would not end, killed; -SIGTERM: stopped before it could catch the signal
    ok = (0, None, 130, -signal.SIGTERM) if interrupted else (0, None)
    failed = [n for n, c in codes.items() if c not in ok]
    if failed:
        raise VcosimError(
            f"module(s) {', '.join(failed)} ended with an error; see their logs in {run_dir}"
        )
    return report
