"""``vcosim bus``, ``log`` and ``replay``: the router and the recorder behind their commands.

Every module runs alone with its router's address, so modules can sit on different machines.
Nothing here imports the vehicle model, so the router and logger start in a fraction of a
second.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from vcosim.app.console import (
    ENDED_BY_INTERRUPT,
    console,
    note,
    save_json,
    setup_logging,
    table,
)
from vcosim.app.options import (
    BUS_DEFAULT,
    Bus,
    BusMaxLength,
    BusModuleId,
    BusSymbols,
    JsonOut,
    WallTime,
    bus_address,
    bus_codec,
    non_negative,
    parse_address,
    positive,
)
from vcosim.bus.catalogue import ModuleId
from vcosim.bus.membership import MAX_UNCONFIRMED, MODULE_TIMEOUT
from vcosim.constants import BUS_MAX_LENGTH, BUS_PORT, BUS_SYMBOLS
from vcosim.extras import require

if TYPE_CHECKING:
    from vcosim.bus.codec import Codec
    from vcosim.net import Allowlist


def bus(
    listen: Annotated[
        str,
        typer.Option(
            metavar="HOST:PORT",
            help="The router's handshake address; loopback unless you open it on purpose.",
        ),
    ] = BUS_DEFAULT,
    router_id: Annotated[int, typer.Option("--id", help="The router's own id.")] = 0,
    max_modules: Annotated[int, typer.Option(help="Modules accepted at most.")] = 32,
    allow: Annotated[
        list[str] | None,
        typer.Option(
            metavar="HOST[:PORT]",
            help="Also accept handshakes from this host, or exactly this HOST:PORT (repeatable, "
            "or comma-separated); by default only loopback and the --listen host.",
        ),
    ] = None,
    timeout: Annotated[
        float,
        typer.Option(
            callback=positive,
            help="A module silent since it last spoke is waited for this long (s); then it "
            "is dropped and its id is free (modules ping every second while they have "
            "nothing to send; one that never spoke after its handshake keeps its id while "
            "its socket exists).",
        ),
    ] = MODULE_TIMEOUT,
    max_unconfirmed: Annotated[
        int,
        typer.Option(
            min=1,
            help="Modules one host may have that have said nothing since their handshake "
            "(the seed's protocol: they only listen); past it the host's handshakes are "
            "refused unless a probe finds one of them gone.",
        ),
    ] = MAX_UNCONFIRMED,
    state: Annotated[
        Path | None,
        typer.Option(
            metavar="FILE",
            help="Keep the table of ids and addresses here, so that a router restarted on the "
            "same address gives every module its id back.",
            show_default="$XDG_RUNTIME_DIR/vcosim/bus-HOST-PORT.json; none for port 0",
        ),
    ] = None,
    symbols: BusSymbols = BUS_SYMBOLS,
    max_length: BusMaxLength = BUS_MAX_LENGTH,
    json_out: JsonOut = None,
) -> None:
    """Run the NightRider bus router: modules join with a handshake, messages go by module id.

    Runs until Ctrl-C, SIGTERM or a Shutdown message to the router's id (which every module
    receives). Malformed messages, unknown destinations and handshakes from peers not allowed
    are counted and reported. A module silent for --timeout is dropped. A module pings a
    silent router with its handshake, says when the router is gone, rejoins a router restarted
    on the same address (which gives it its id back, from --state), and ends (exit code 1)
    after 10 s of silence.
    """
    address = parse_address(listen, option="--listen", default_port=BUS_PORT)
    from vcosim.bus.membership import default_state_path
    from vcosim.bus.sockets import allowlist

    if state is None and address.port != 0:
        state = default_state_path(address.host, address.port)
    report = run_router(
        address.host,
        address.port,
        router_id=router_id,
        max_modules=max_modules,
        codec=bus_codec(symbols, max_length),
        json_out=json_out,
        allow=allowlist(allow or (), address.host),
        timeout=timeout,
        max_unconfirmed=max_unconfirmed,
        state=state,
    )
    if report["interrupted"]:
        raise typer.Exit(130)


def log(
    out_file: Annotated[Path, typer.Argument(help="The MCAP file to write (.mcap).")],
    bus: Bus = BUS_DEFAULT,
    module_id: BusModuleId = None,
    csv: Annotated[bool, typer.Option(help="Also export the recording as CSV at the end.")] = False,
    wall_time: WallTime = None,
    symbols: BusSymbols = BUS_SYMBOLS,
    max_length: BusMaxLength = BUS_MAX_LENGTH,
    recover: Annotated[
        bool,
        typer.Option(
            "--recover",
            help="Record nothing: rewrite OUT_FILE, cut short by a crash, as a complete MCAP "
            "file with its index (what a killed recording holds reads anyway, up to its last "
            "flush).",
        ),
    ] = False,
) -> None:
    """Record every message on the bus, with timestamps, to MCAP (Foxglove, PlotJuggler).

    If the router falls silent the logger says so and how long it has recorded nothing; it
    records again when the router is back, or finishes the file and exits with code 1 after
    10 s of silence.
    """
    require("logging", "vcosim log")
    if recover:
        from vcosim.modules.recording import recover as recover_file

        setup_logging()
        kept = recover_file(out_file)
        torn = "" if kept.was_complete else f", {kept.dropped_bytes} bytes of a torn end dropped"
        note(f"{out_file}: {kept.messages} messages kept{torn}")
        return
    router = bus_address(bus)
    report = run_logger(
        out_file,
        router.host,
        router.port,
        module_id=ModuleId.LOGGING if module_id is None else module_id,
        codec=bus_codec(symbols, max_length),
        csv=csv,
        duration=wall_time,
    )
    if report["interrupted"]:
        raise typer.Exit(130)


def replay(
    file: Annotated[
        Path, typer.Argument(exists=True, dir_okay=False, help="A recording made by `vcosim log`.")
    ],
    bus: Bus = BUS_DEFAULT,
    module_id: BusModuleId = None,
    pace: Annotated[
        float,
        typer.Option(
            callback=non_negative,
            help="1: the recorded pace; 2: twice as fast; 0: as fast as possible.",
        ),
    ] = 1.0,
    only: Annotated[
        list[str] | None, typer.Option(help="Send only this message type (repeatable).")
    ] = None,
    skip: Annotated[
        list[str] | None, typer.Option(help="Leave out this message type (repeatable).")
    ] = None,
    to_csv: Annotated[
        Path | None, typer.Option(help="Do not replay: export the recording as CSV here.")
    ] = None,
    symbols: BusSymbols = BUS_SYMBOLS,
    max_length: BusMaxLength = BUS_MAX_LENGTH,
) -> None:
    """Send a recording back onto the bus, each message to its recorded destination, in order."""
    require("logging", "vcosim replay")
    router = bus_address(bus)
    report = run_replay(
        file,
        router.host,
        router.port,
        module_id=ModuleId.REPLAY if module_id is None else module_id,
        speed=pace,
        only=only or (),
        skip=skip or (),
        codec=bus_codec(symbols, max_length),
        to_csv=to_csv,
    )
    if report.get("interrupted"):
        raise typer.Exit(130)


def router_summary(report: Mapping[str, Any]) -> dict[str, Any]:
    """The router's report as a reader wants it: one line per module, counts by id as text.

    The list of problems is left out (each was logged as it came).
    """
    names = {int(m): m.name.lower() for m in ModuleId}
    out: dict[str, Any] = {}
    for key, value in report.items():
        if key in ("problems", "running"):
            continue
        if key == "modules":
            for module_id, m in sorted(value.items(), key=lambda item: int(item[0])):
                role = names.get(int(module_id), "module")
                kind = ", monitor" if m.get("monitor") else ""
                out[f"module {module_id} ({role}{kind})"] = (
                    f"{m['address']}: sent {m['sent']}, received {m['received']}"
                )
        elif isinstance(value, Mapping):
            out[key] = ", ".join(f"{k}: {v}" for k, v in value.items()) or "none"
        elif isinstance(value, list):
            out[key] = "; ".join(str(v) for v in value) or "none"
        else:
            out[key] = value
    return out


# -- vcosim bus -------------------------------------------------------------------------------
def run_router(
    host: str,
    port: int,
    *,
    router_id: int,
    max_modules: int,
    codec: Codec,
    json_out: Path | None = None,
    allow: Allowlist | None = None,
    timeout: float = MODULE_TIMEOUT,
    max_unconfirmed: int = MAX_UNCONFIRMED,
    state: Path | None = None,
) -> dict[str, Any]:
    """Serve until Ctrl-C, SIGTERM or a Shutdown to the router; print the summary."""
    from vcosim.bus.router import Router
    from vcosim.interrupts import sigterm_as_interrupt

    setup_logging()
    router = Router(
        host,
        port,
        router_id=router_id,
        max_modules=max_modules,
        codec=codec,
        allow=allow,
        timeout=timeout,
        max_unconfirmed=max_unconfirmed,
        state=state,
    )
    h, p = router.address
    back = f"; {router.stats.restored} module(s) back from {state}" if router.stats.restored else ""
    note(
        f"bus router (id {router_id}) on {h}:{p}, up to {max_modules} modules, joining from "
        f"{router.allow}, dropped after {timeout:g} s of silence{back}; Ctrl-C, SIGTERM or a "
        f"Shutdown to id {router_id} ends it"
    )
    interrupted = False
    with sigterm_as_interrupt():
        try:
            router.serve_forever()
        except KeyboardInterrupt:
            interrupted = True
        finally:
            router.stop()
    report = router.report()
    ended = ENDED_BY_INTERRUPT if interrupted else {}
    console.print(table("vcosim bus: summary", {**router_summary(report), **ended}))
    save_json(report, json_out)
    return {**report, "interrupted": interrupted}


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
    from vcosim.modules.base import run_module
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
        note(f"{file}: {rows} messages written to {to_csv}")
        return {"csv": str(to_csv), "rows": rows}
    setup_logging()
    pace = "as fast as possible" if speed <= 0 else f"{speed:g}× the recorded pace"
    note(f"replaying {file} onto the bus at {host}:{port} (module {module_id}), {pace}")
    report = replay(
        file, host, port, module_id=module_id, speed=speed, only=only, skip=skip, codec=codec
    )
    console.print(table("vcosim replay: summary", report))
    return report
