"""``vcosim sound`` and ``vcosim input``: the driver-facing bus modules behind their commands."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from vcosim.app.console import console, setup_logging, table
from vcosim.bus.codec import Codec
from vcosim.errors import ConfigError
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
from vcosim.modules.sound import SoundModule, SoundSettings, open_sink


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
    setup_logging()
    if list_devices:
        devices = find_devices()
        for d in devices:
            console.print(
                f"{d['index']}: {d['name']} — {d['axes']} axes, {d['buttons']} "
                f"buttons, {d['hats']} hats"
            )
        console.print("keyboard: always available in a terminal (--keyboard)")
        return {"devices": devices}
    if calibrate:
        if mapping is None:
            raise ConfigError(
                ["--calibrate needs --mapping FILE: where to save the mapping"], "vcosim input"
            )
        backend = open_backend(Mapping(), False, script) if script else PygameBackend(None)
        try:
            result = calibration_wizard(backend, input)
        finally:
            backend.close()
        save_mapping(result, mapping)
        console.print(result.to_toml())
        console.log(f"mapping saved to {mapping}")
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
        console.log(f"input: {exc.problems[0]}; sending nothing until Shutdown")
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
