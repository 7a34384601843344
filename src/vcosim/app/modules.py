"""``vcosim sound``, ``input`` and ``view``: the driver-facing bus modules behind their commands.

The modules' own packages (pygame, sounddevice, starlette) are imported only when a command
runs, so ``vcosim --help`` does not wait for them.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from vcosim.app.console import ENDED_BY_INTERRUPT, console, note, setup_logging, table
from vcosim.app.options import (
    BUS_DEFAULT,
    Bus,
    BusMaxLength,
    BusModuleId,
    BusSymbols,
    TerrainOption,
    WallTime,
    WorldOption,
    bus_address,
    bus_codec,
    parse_address,
    positive,
)
from vcosim.bus.catalogue import ModuleId
from vcosim.constants import BUS_MAX_LENGTH, BUS_SYMBOLS, LOOPBACK, VIEWER_PORT
from vcosim.errors import ConfigError
from vcosim.extras import install_command, missing, require

if TYPE_CHECKING:
    from vcosim.bus.codec import Codec


def sound(
    bus: Bus = BUS_DEFAULT,
    module_id: BusModuleId = None,
    wav: Annotated[
        Path | None,
        typer.Option(
            envvar="VCOSIM_SOUND_WAV", help="Render to this WAV file instead of the sound card."
        ),
    ] = None,
    null: Annotated[bool, typer.Option("--null", help="Render to nothing (headless).")] = False,
    wall_time: WallTime = None,
    symbols: BusSymbols = BUS_SYMBOLS,
    max_length: BusMaxLength = BUS_MAX_LENGTH,
) -> None:
    """The sound module: synthesised engine, tyre-skid and event sounds from the bus.

    Plays on the sound card (the `sound` extra: sounddevice); with --wav renders to a file;
    without a sound card it says so and renders to nothing.
    """
    router = bus_address(bus)
    report = run_sound(
        router.host,
        router.port,
        module_id=ModuleId.SOUND if module_id is None else module_id,
        codec=bus_codec(symbols, max_length),
        wav=wav,
        null=null,
        duration=wall_time,
    )
    if report.get("interrupted"):
        raise typer.Exit(130)


def input_module(
    bus: Bus = BUS_DEFAULT,
    module_id: BusModuleId = None,
    mapping: Annotated[
        Path | None, typer.Option(help="Mapping of axes and buttons (TOML); default: built in.")
    ] = None,
    list_devices: Annotated[
        bool, typer.Option("--list", help="Show the input devices found and end.")
    ] = False,
    calibrate: Annotated[
        bool, typer.Option("--calibrate", help="Interactive wizard that writes --mapping.")
    ] = False,
    keyboard: Annotated[
        bool, typer.Option("--keyboard", help="Drive with the keyboard even if a wheel exists.")
    ] = False,
    script: Annotated[
        Path | None,
        typer.Option(
            envvar="VCOSIM_INPUT_SCRIPT",
            help="Scripted inputs (TOML: timed axis/button values), for tests and headless runs.",
        ),
    ] = None,
    wall_time: WallTime = None,
    symbols: BusSymbols = BUS_SYMBOLS,
    max_length: BusMaxLength = BUS_MAX_LENGTH,
) -> None:
    """The input module: wheel, pedals, gamepad or keyboard to IMFM/IMVM; force feedback back.

    Joysticks and wheels need the `input` extra (pygame-ce); the keyboard works without.
    """
    router = bus_address(bus)
    report = run_input(
        router.host,
        router.port,
        module_id=ModuleId.INPUT if module_id is None else module_id,
        codec=bus_codec(symbols, max_length),
        mapping=mapping,
        list_devices=list_devices,
        calibrate=calibrate,
        keyboard=keyboard,
        script=script,
        duration=wall_time,
    )
    if report.get("interrupted"):
        raise typer.Exit(130)


def view(
    listen: Annotated[
        str,
        typer.Option(
            metavar="HOST:PORT",
            help="Where the page is served (port 0: any free one); loopback unless you open it "
            "on purpose.",
        ),
    ] = f"{LOOPBACK}:{VIEWER_PORT}",
    bus: Bus = BUS_DEFAULT,
    module_id: BusModuleId = None,
    rate: Annotated[
        float, typer.Option(callback=positive, help="Most state frames per second to the page.")
    ] = 60.0,
    terrain: TerrainOption = None,
    world: WorldOption = None,
    height_map: Annotated[
        Path | None, typer.Option(help="Height-map image (blue channel).")
    ] = None,
    road_map: Annotated[Path | None, typer.Option(help="Road map image (blue 255 = road).")] = None,
    friction_map: Annotated[
        Path | None, typer.Option(help="Friction map image (blue 255 = 0.99).")
    ] = None,
    hill_height: Annotated[
        float, typer.Option(help="Metres of blue 255 in the height-map.")
    ] = 10.0,
    size: Annotated[
        float, typer.Option(callback=positive, help="Metres of the maps' longer side.")
    ] = 1000.0,
    send_ground: Annotated[
        bool, typer.Option(help="Answer with VMFM: ground height and friction under each wheel.")
    ] = False,
    allow_origin: Annotated[
        list[str] | None,
        typer.Option(
            metavar="ORIGIN",
            help="Also serve the page to browsers that open it at this address "
            "(http://HOST:PORT, or HOST[:PORT] for http at the page's port; repeatable); "
            "by default only where it is served and the loopback names.",
        ),
    ] = None,
    symbols: BusSymbols = BUS_SYMBOLS,
    max_length: BusMaxLength = BUS_MAX_LENGTH,
) -> None:
    """Serve the 3-D viewer and live dashboard in a browser; drive with keyboard or gamepad.

    With --world it draws that world's terrain, as the simulator running it drives on it.
    """
    require("viewer", "vcosim view")
    from vcosim.modules.viewer import Viewer
    from vcosim.vehicle.terrain import Terrain, TerrainSpec

    page = parse_address(listen, option="--listen", default_port=VIEWER_PORT)
    router = bus_address(bus)
    setup_logging()
    if world is not None and terrain is not None:
        raise typer.BadParameter("give --world or --terrain, not both", param_hint="--world")
    road = None  # an OpenDRIVE road on the ground: drawn with its lanes and marks
    if world is not None:  # the world's terrain: what its vehicles drive on
        from vcosim.world import WorldFile

        spec = WorldFile.load(world)
        ground, road = spec.terrain.build(spec.base), spec.terrain.read_road(spec.base)
    elif terrain is not None:  # the file the simulator drives on: one source of truth
        ground_spec = TerrainSpec.load(terrain)
        ground, road = ground_spec.build(), ground_spec.read_road()
    else:
        ground = Terrain.from_images(
            height_map, road_map, friction_map, hill_height=hill_height, size=size
        )
    viewer = Viewer(
        router.host,
        router.port,
        host=page.host,
        port=page.port,
        terrain=ground,
        road=road,
        rate=rate,
        module_id=ModuleId.VISUALISATION if module_id is None else module_id,
        send_ground=send_ground,
        allow_origins=allow_origin or (),
        codec=bus_codec(symbols, max_length),
    )
    report = viewer.run()
    ended = ENDED_BY_INTERRUPT if viewer.interrupted else {}
    console.print(table("vcosim view: summary", {**report.to_dict(), **ended}))
    if viewer.interrupted:
        raise typer.Exit(130)


def run_sound(
    host: str,
    port: int,
    *,
    module_id: int,
    codec: Codec,
    wav: Path | None,
    null: bool,
    duration: float | None = None,
) -> dict[str, Any]:
    """``vcosim sound``: open the sink, join the bus, render until Shutdown/Ctrl-C/SIGTERM."""
    from vcosim.modules.base import run_module
    from vcosim.modules.sound import SoundModule, SoundSettings, open_sink

    setup_logging()
    settings = SoundSettings()
    module = SoundModule(
        open_sink(wav, null, settings),
        host,
        port,
        module_id=module_id,
        codec=codec,
        settings=settings,
    )
    try:
        module.connect()  # before any sound: a WAV without a bus would be an empty file
    except BaseException:
        module.close()
        if wav is not None:
            wav.unlink(missing_ok=True)
        raise
    report = run_module(
        module,
        duration,
        f"sound: module {module_id} on the bus at {host}:{port}, sink {type(module.sink).__name__}",
    )
    if wav is not None:
        report["wav"] = str(wav)
    console.print(table("vcosim sound: summary", report))
    return report


def run_input(
    host: str,
    port: int,
    *,
    module_id: int,
    codec: Codec,
    mapping: Path | None,
    list_devices: bool,
    calibrate: bool,
    keyboard: bool,
    script: Path | None,
    duration: float | None = None,
) -> dict[str, Any]:
    """``vcosim input``: list devices, or drive the bus from a device until quit/Shutdown."""
    from vcosim.modules.base import run_module
    from vcosim.modules.input import (
        ForceFeedbackOutput,
        InputModule,
        KeyboardBackend,
        Mapping,
        PygameBackend,
        calibration_wizard,
        find_devices,
        idle,
        load_mapping,
        open_backend,
        save_mapping,
    )

    setup_logging()
    if list_devices:
        devices = find_devices()
        for d in devices:
            console.print(
                f"{d['index']}: {d['name']} — {d['axes']} axes, {d['buttons']} "
                f"buttons, {d['hats']} hats"
            )
        if missing("input"):
            console.print(
                "joysticks and wheels: not looked for, the `input` extra is not installed "
                f"({install_command('input')})"
            )
        console.print("keyboard: always available in a terminal (--keyboard)")
        return {"devices": devices}
    if calibrate:
        if mapping is None:
            raise ConfigError(
                ["--calibrate needs --mapping FILE: where to save the mapping"], "vcosim input"
            )
        if script is None:
            require("input", "vcosim input --calibrate")
        backend = open_backend(Mapping(), False, script) if script else PygameBackend(None)
        try:
            result = calibration_wizard(backend, input)
        finally:
            backend.close()
        save_mapping(result, mapping)
        console.print(result.to_toml())
        note(f"mapping saved to {mapping}")
        return {"mapping": str(mapping)}
    chosen = load_mapping(mapping) if mapping is not None else Mapping()
    if script is None and keyboard:
        chosen = Mapping()  # the keyboard's virtual axes use the default layout
    try:
        backend = open_backend(chosen, keyboard, script)
    except ConfigError as exc:
        if script is not None or keyboard:
            raise
        # headless (`vcosim drive` on a server): stay on the bus quietly, end with the others
        note(f"input: {exc.problems[0]}; sending nothing until Shutdown")
        return idle(host, port, module_id=module_id, codec=codec, duration=duration)
    if isinstance(backend, KeyboardBackend):
        chosen = Mapping()
    module = InputModule(
        backend,
        chosen,
        host,
        port,
        module_id=module_id,
        codec=codec,
        force_feedback=ForceFeedbackOutput.open(backend, chosen.device),
    )
    report = run_module(
        module, duration, f"input: {backend.name} as module {module_id} on the bus at {host}:{port}"
    )
    console.print(table("vcosim input: summary", report))
    return report
