"""``vcosim bus``, ``log``, ``replay`` and ``drive``: what they do behind their command lines.

Every module runs alone with its host and port, so modules can sit on different machines;
``drive`` starts the router in its own process and each module as a ``vcosim`` process of its
own (each with its own interpreter, so the 2000 Hz physics shares no lock with anything), and
ends them all with one Shutdown. Nothing here imports the vehicle model except through the
``vcosim sim`` process it starts, so the router and logger start in a fraction of a second.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import time
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import IO, Any

from vcosim.app.console import console, save_json, setup_logging, table
from vcosim.bus.catalogue import ModuleId
from vcosim.bus.codec import Codec
from vcosim.bus.router import Router
from vcosim.errors import CouplingTimeout, VcosimError
from vcosim.interrupts import sigterm_as_interrupt
from vcosim.modules.base import run_module

OPTIONAL_MODULES = (
    # (name, the module that must exist, the vcosim sub-command, its bus id, its options for
    # the router's host and port), each started if its module is installed
    ("input", "vcosim.modules.input", "input", ModuleId.INPUT, ("--host", "--port")),
    ("sound", "vcosim.modules.sound", "sound", ModuleId.SOUND, ("--host", "--port")),
    (
        "viewer",
        "vcosim.modules.viewer",
        "view",
        ModuleId.VISUALISATION,
        ("--bus-host", "--bus-port"),
    ),
)


def router_summary(report: dict[str, Any]) -> dict[str, Any]:
    """The router's report without the list of problems (those were logged as they came)."""
    return {k: v for k, v in report.items() if k not in ("problems", "running")}


# -- vcosim bus -------------------------------------------------------------------------------
def run_router(
    host: str,
    port: int,
    *,
    router_id: int,
    max_modules: int,
    codec: Codec,
    json_out: Path | None = None,
) -> dict[str, Any]:
    """Serve until Ctrl-C, SIGTERM or a Shutdown to the router; print the summary."""
    setup_logging()
    router = Router(host, port, router_id=router_id, max_modules=max_modules, codec=codec)
    h, p = router.address
    console.log(
        f"bus router (id {router_id}) on {h}:{p}, up to {max_modules} modules; "
        f"Ctrl-C, SIGTERM or a Shutdown to id {router_id} ends it"
    )
    with sigterm_as_interrupt():
        try:
            router.serve_forever()
        except KeyboardInterrupt:
            pass
        finally:
            router.stop()
    report = router.report()
    console.print(table("vcosim bus: summary", router_summary(report)))
    save_json(report, json_out)
    return report


# -- vcosim log -------------------------------------------------------------------------------
def run_logger(
    out: Path,
    host: str,
    port: int,
    *,
    module_id: int,
    codec: Codec,
    csv: bool = False,
    duration: float | None = None,
) -> dict[str, Any]:
    """Record the bus into ``out`` until Shutdown, Ctrl-C or SIGTERM; optionally export CSV."""
    from vcosim.modules.logger import Logger, export_csv

    setup_logging()
    logger = Logger(out, host, port, module_id=module_id, codec=codec)
    report = run_module(
        logger,
        duration,
        f"recording the bus at {host}:{port} into {out} "
        f"(module {module_id}); Ctrl-C or a Shutdown ends it",
    )
    if csv and report["messages"]:
        report["csv"] = str(out.with_suffix(".csv"))
        export_csv(out, report["csv"])
    console.print(table("vcosim log: summary", report))
    return report


# -- vcosim replay ----------------------------------------------------------------------------
def run_replay(
    file: Path,
    host: str,
    port: int,
    *,
    module_id: int,
    speed: float,
    only: Sequence[str],
    skip: Sequence[str],
    codec: Codec,
    to_csv: Path | None = None,
) -> dict[str, Any]:
    """Send a recording onto the bus (or, with ``to_csv``, only export it as CSV)."""
    from vcosim.modules.logger import export_csv, replay

    if to_csv is not None:
        rows = export_csv(file, to_csv)
        console.log(f"{file}: {rows} messages written to {to_csv}")
        return {"csv": str(to_csv), "rows": rows}
    setup_logging()
    pace = "as fast as possible" if speed <= 0 else f"{speed:g}× the recorded pace"
    console.log(f"replaying {file} onto the bus at {host}:{port} (module {module_id}), {pace}")
    with sigterm_as_interrupt():
        try:
            report = replay(
                file,
                host,
                port,
                module_id=module_id,
                speed=speed,
                only=only,
                skip=skip,
                codec=codec,
            )
        except KeyboardInterrupt:
            console.log("replay interrupted")
            return {"interrupted": True}
    console.print(table("vcosim replay: summary", report))
    return report


# -- vcosim drive -----------------------------------------------------------------------------
class _Child:
    """A module as a ``vcosim`` process of its own, its output in a log file."""

    def __init__(self, name: str, args: list[str], log_dir: Path) -> None:
        self.name = name
        self.log_path = log_dir / f"{name}.log"
        self._log: IO[bytes] = open(self.log_path, "wb")  # noqa: SIM115 (closed in wait())
        self.process = subprocess.Popen(
            [sys.executable, "-m", "vcosim", *args], stdout=self._log, stderr=subprocess.STDOUT
        )

    @property
    def alive(self) -> bool:
        return self.process.poll() is None

    def wait(self, timeout: float) -> int | None:
        """Wait for the process to end; SIGTERM, then SIGKILL, if it will not."""
        try:
            for action in (None, self.process.terminate, self.process.kill):
                if action is not None and self.alive:
                    action()
                try:
                    return self.process.wait(timeout)
                except subprocess.TimeoutExpired:
                    continue
            return None
        finally:
            self._log.close()


def run_drive(
    out: Path,
    host: str,
    port: int,
    *,
    duration: float | None,
    vehicle: str,
    frame_rate: float,
    start_timeout: float = 60.0,
) -> dict[str, Any]:
    """Router here, logger, vehicle (and input, sound, viewer once they exist) as processes.

    Ends on ``duration``, Ctrl-C, SIGTERM, a Shutdown from any module, or the vehicle's exit;
    then sends every module Shutdown and waits for them, so the recording is complete.
    """
    setup_logging()
    run_dir = out / datetime.now().strftime("%Y%m%d-%H%M%S")
    run_dir.mkdir(parents=True, exist_ok=True)
    router = Router(host, port).start()
    h, p = router.address
    where = ["--host", h, "--port", str(p)]
    children: list[_Child] = []
    interrupted = False
    console.log(f"bus router on {h}:{p}; module output goes to {run_dir}/<module>.log")

    def launch(name: str, args: list[str], module_id: int) -> None:
        child = _Child(name, args, run_dir)
        children.append(child)
        if (
            not router.wait_until(
                lambda: module_id in router.modules or not child.alive, start_timeout
            )
            or not child.alive
        ):
            raise CouplingTimeout(f"the {name} module did not join the bus (see {child.log_path})")
        console.log(f"{name}: module {module_id} joined")

    with sigterm_as_interrupt():
        try:
            launch("logger", ["log", str(run_dir / "bus.mcap"), *where], ModuleId.LOGGING)
            launch(
                "vehicle",
                [
                    "sim",
                    "--bus",
                    f"{h}:{p}",
                    "--no-coupling",
                    "--frame-rate",
                    f"{frame_rate:g}",
                    "--vehicle",
                    vehicle,
                ],
                ModuleId.VEHICLE,
            )
            for name, package, command, module_id, (host_opt, port_opt) in OPTIONAL_MODULES:
                if importlib.util.find_spec(package) is not None:
                    launch(name, [command, host_opt, h, port_opt, str(p)], module_id)
                    if name == "viewer":
                        console.log("viewer: open http://127.0.0.1:8765/ in a browser")
            end = None if duration is None else time.monotonic() + duration
            vehicle_child = children[1]
            while not router.stopped.is_set() and vehicle_child.alive:
                left = 0.5 if end is None else min(0.5, end - time.monotonic())
                if left <= 0:
                    break
                router.stopped.wait(left)
        except KeyboardInterrupt:
            interrupted = True
        finally:
            if not router.stopped.is_set():
                router.shutdown_all()  # every module ends cleanly; the router then stops
                router.stopped.wait(5.0)
            codes = {c.name: c.wait(10.0) for c in children}
            router.stop()
    report: dict[str, Any] = {
        "run_dir": str(run_dir),
        "recording": str(run_dir / "bus.mcap"),
        "exit_codes": codes,
        "interrupted": interrupted,
        "router": router_summary(router.report()),
    }
    console.print(
        table("vcosim drive: summary", {k: v for k, v in report.items() if k != "router"})
    )
    console.print(table("bus router", report["router"]))
    if any(code not in (0, None) for code in codes.values()):
        failed = [n for n, c in codes.items() if c != 0]
        raise VcosimError(
            f"module(s) {', '.join(failed)} ended with an error; see their logs in {run_dir}"
        )
    return report
