"""Coupled runs: built from options, driven, measured, shown, and their parties run apart.

``build_simulation`` (here) is the one builder of a simulation with the vehicle ready to
drive and its faces attached: ``vcosim sim``, the demo and the coupling bench use it. Beside
it:

- ``harness``: a party of a run (controller, peer, server, router, a ``vcosim`` command) in a
  process of its own: started, waited for, stopped, its result or error brought back;
- ``manoeuvres``: scripted driving, a manoeuvre as a table of phases;
- ``metrics``: figures of recorded signals (settling time, step response, 0-100 km/h);
- ``plots``: the demo's figures;
- ``demo``: ``vcosim demo``, coupled or scripted;
- ``cases``: the five timing cases of BeamNG's coupling, run end to end.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vcosim.entrypoints import load_object, load_user_code
from vcosim.sim.pacing import Pacer, PacingMode
from vcosim.sim.simulation import Simulation
from vcosim.vehicle import Vehicle
from vcosim.vehicle.terrain import Terrain

if TYPE_CHECKING:
    from vcosim.tight.config import CouplingConfig
    from vcosim.world import World

__all__ = ["build_simulation", "vehicle_couplings"]


def build_simulation(
    *,
    pacing: PacingMode | str = PacingMode.realtime,
    time_dilation: float = 1.0,
    frame_rate: float = 60.0,
    vehicle: str | Path = "nightrider",
    terrain: Terrain | None = None,
    start_pose: tuple[float, float, float] | None = None,
    start_speed: float = 0.0,
    automatic: bool = True,
    engine_running: bool = True,
    coupling: Any = None,
    custom_hooks: str | None = None,
    faces: Sequence[tuple[str, str, dict[str, Any]]] = (),
    world: str | Path | None = None,
) -> Simulation:
    """A simulation with the vehicle ready to drive and, if configured, its faces.

    ``start_pose`` is (x, y, heading in degrees) on ``terrain`` (flat if None), where the
    vehicle starts rolling at ``start_speed``. ``faces`` are (name, "module:Class", keyword
    arguments): each class is imported when used
    and attached under its name (the contract server, the bus client, ...). ``custom_hooks``
    ("module:object") names an object (or module) whose ``fill_custom(sim, bank_h)`` fills the
    50 custom values sent to the controller and whose ``on_custom(sim, values)`` receives the
    controller's 50; either may be missing.
    """
    pacer = Pacer(pacing, frame_rate=frame_rate, time_dilation=time_dilation)
    fill_range = None
    if world is not None:  # the vehicles, their starts and the terrain come from the file
        from vcosim.world import World
        from vcosim.world.bank_h import fill_range_slots

        sim = Simulation(World(world), pacer)
        fill_range = fill_range_slots  # the ego's range sensor in bank H unless hooks say else
    else:
        car = Vehicle(vehicle, terrain, engine_running=engine_running)
        if automatic:
            car.set_inputs(automatic=1, gear=1)  # selector in D: pedals and steering are enough
        if start_pose is not None or start_speed:  # in D: rolling in the gear it would hold
            car.teleport(*(start_pose or (0.0, 0.0, 0.0)), speed=start_speed)
        if automatic:
            car.step()
        sim = Simulation(car, pacer)
    if coupling is not None:
        from vcosim.tight.endpoint import SimulatorEndpoint

        hooks = None
        if custom_hooks:  # "module:object", a file, or a module holding the two functions
            hooks = load_user_code(custom_hooks, option="--custom-hooks", module_ok=True)
        configs = {None: coupling} if sim.world is None else vehicle_couplings(sim.world, coupling)
        for name, config in configs.items():
            sim.attach(
                "coupling" if name is None else f"coupling:{name}",
                SimulatorEndpoint(
                    config,
                    fill_custom=getattr(hooks, "fill_custom", None) or fill_range,
                    on_custom=getattr(hooks, "on_custom", None),
                ),
                vehicle=name,
            )
    for name, entry_point, options in faces:
        sim.attach(name, load_object(entry_point)(**options))
    return sim


def vehicle_couplings(world: World, coupling: CouplingConfig) -> dict[str | None, CouplingConfig]:
    """Each external vehicle's coupling config: ``coupling`` with its own ports and log folder.

    Ports the world file gives for a vehicle (``[vehicles.coupling] listen``, ``controller``)
    are its own; the others are allocated in order, the n-th external vehicle (from 0)
    getting ``coupling``'s ports plus 2 n (a port 0, "any free one", stays 0). Debug logs go
    to a sub-folder per vehicle of ``coupling.debug_log``.
    """
    from vcosim.world.spec import split_address

    def port(base: int, n: int) -> int:
        return base + 2 * n if base else 0

    configs: dict[str | None, CouplingConfig] = {}
    for n, (name, ports) in enumerate(world.external.items()):
        listen = (coupling.listen_host, port(coupling.listen_port, n))
        controller = (coupling.controller_host, port(coupling.controller_port, n))
        if ports is not None and ports.listen is not None:
            listen = split_address(ports.listen)
        if ports is not None and ports.controller is not None:
            controller = split_address(ports.controller)
        log = coupling.debug_log
        configs[name] = coupling.model_copy(
            update={
                "listen_host": listen[0],
                "listen_port": listen[1],
                "controller_host": controller[0],
                "controller_port": controller[1],
                "debug_log": None if log is None else log / name,
            }
        )
    return configs
