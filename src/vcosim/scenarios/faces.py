"""Face kinds: what each kind of face a ``RunSpec`` names is, and how the builder attaches it.

A kind registers its spec class and the function that attaches it
(:func:`register_face_kind`), as python-can's interfaces register their bus classes;
``build_simulation`` looks the kind of each face up here instead of walking a ladder of
``isinstance`` checks. vcosim's kinds (coupling, contracts, bus, osi, foxglove, storyboard,
user) register below. A new kind's spec class must still be one of ``FaceSpec``'s for a spec
*file* to name it (the file's schema is checked before anything is imported); a ``user`` face
(``entry_point``) is the way in for a face of your own.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar, cast

from vcosim.config import Options
from vcosim.entrypoints import load_object, load_user_code
from vcosim.errors import ConfigError
from vcosim.scenarios.spec import (
    FACES,
    BusFaceSpec,
    ContractsFaceSpec,
    CouplingFaceSpec,
    FoxgloveFaceSpec,
    OsiFaceSpec,
    StoryboardFaceSpec,
    UserFaceSpec,
)
from vcosim.sim.face import Face, coupling_name
from vcosim.sim.simulation import Simulation
from vcosim.tight.config import CouplingConfig
from vcosim.tight.endpoint import SimulatorEndpoint
from vcosim.world import World

if TYPE_CHECKING:
    from vcosim.roads import RoadNetwork

__all__ = [
    "attach_couplings",
    "attach_face",
    "endpoints",
    "face_kinds",
    "register_face_kind",
    "vehicle_couplings",
]

Note = Callable[[str], None]
S = TypeVar("S", bound=Options)
Attach = Callable[[Simulation, S, Note, "RoadNetwork | None"], None]
"""Attach one face of a kind: the host, its spec, where to say things, the run's road."""

_KINDS: dict[type[Options], Attach[Options]] = {}

STORYBOARD = FACES["storyboard"]
READ_SCENARIO = "vcosim.openscenario.reader:read_scenario"
"""The scenario's parse, shared with the world built from it (once per file). By name: the
OpenSCENARIO package builds its runs here, so this package may not import it."""


def register_face_kind(spec: type[S], attach: Attach[S]) -> None:
    """Make ``spec`` (a face spec class with a ``kind``) a face kind ``attach`` attaches."""
    _KINDS[spec] = cast("Attach[Options]", attach)  # called with its own kind's specs only


def face_kinds() -> dict[str, type[Options]]:
    """Each registered kind by its name (the ``kind`` a spec's face entry gives)."""
    return {str(spec.model_fields["kind"].default): spec for spec in _KINDS}


def attach_face(
    sim: Simulation, face: Options, note: Note | None = None, road: RoadNetwork | None = None
) -> None:
    """Attach what one face spec describes (a world's coupling and bus: one per vehicle).

    ``road``: the run's OpenDRIVE road, whose road positions the bus publishes and whose lanes
    OSI's ground truth carries. A spec of no registered kind is a ``ConfigError``.
    """
    attach = _KINDS.get(type(face))
    if attach is None:
        raise ConfigError(
            [
                f"faces: {type(face).__name__} is no registered face kind (registered: "
                f"{', '.join(face_kinds())})"
            ],
            "run spec",
        )
    attach(sim, face, note or _silent, road)


def _silent(line: str) -> None:
    """Where a line goes when nobody listens."""


def _coupling(sim: Simulation, face: CouplingFaceSpec, say: Note, road: RoadNetwork | None) -> None:
    attach_couplings(sim, face.config(), face.custom_hooks)


def _contracts(
    sim: Simulation, face: ContractsFaceSpec, say: Note, road: RoadNetwork | None
) -> None:
    from vcosim.contracts.server import ContractServer

    sim.attach(face.kind, ContractServer(face.options()))


def _bus(sim: Simulation, face: BusFaceSpec, say: Note, road: RoadNetwork | None) -> None:
    if sim.world is None:
        from vcosim.bus.vehicle_module import BusVehicle

        sim.attach(face.kind, BusVehicle(face.host, face.port, road=road))
        return
    from vcosim.bus.world_module import attach_world_bus

    for line in attach_world_bus(sim, face.host, face.port, road):
        say(line)


def _osi(sim: Simulation, face: OsiFaceSpec, say: Note, road: RoadNetwork | None) -> None:
    from vcosim.groundtruth.outputs import attach_osi

    say(attach_osi(sim, face.rate, udp=face.udp, framing=face.framing, trace=face.trace, road=road))


def _foxglove(sim: Simulation, face: FoxgloveFaceSpec, say: Note, road: RoadNetwork | None) -> None:
    from vcosim.groundtruth.outputs import attach_foxglove

    say(attach_foxglove(sim, face.rate, face.host, face.port, face.allow))


def _storyboard(
    sim: Simulation, face: StoryboardFaceSpec, say: Note, road: RoadNetwork | None
) -> None:
    read_scenario = load_object(READ_SCENARIO)
    storyboard = load_object(STORYBOARD)
    sim.attach(face.kind, storyboard(read_scenario(face.scenario, face.parameters)))


def _user(sim: Simulation, face: UserFaceSpec, say: Note, road: RoadNetwork | None) -> None:
    found = load_object(face.entry_point)
    if not (isinstance(found, type) and issubclass(found, Face)):  # before it is called
        raise ConfigError(
            [
                f"faces: user face {face.name!r}: {face.entry_point!r} is not a Face "
                "class (vcosim.sim.face.Face)"
            ],
            "run spec",
        )
    sim.attach(face.name, found(**face.options))


register_face_kind(CouplingFaceSpec, _coupling)
register_face_kind(ContractsFaceSpec, _contracts)
register_face_kind(BusFaceSpec, _bus)
register_face_kind(OsiFaceSpec, _osi)
register_face_kind(FoxgloveFaceSpec, _foxglove)
register_face_kind(StoryboardFaceSpec, _storyboard)
register_face_kind(UserFaceSpec, _user)


def attach_couplings(
    sim: Simulation, config: CouplingConfig, custom_hooks: str | None = None
) -> dict[str | None, SimulatorEndpoint]:
    """The coupling endpoint of a lone car, or one per externally driven vehicle of a world.

    ``custom_hooks`` ("module:object", a file, or a module) names the object whose
    ``fill_custom(sim, bank_h)`` fills the 50 custom values sent to the controller and whose
    ``on_custom(sim, values)`` receives the controller's 50; either may be missing. A world's
    ego sends its range sensor in bank H unless the hooks say otherwise.
    """
    hooks = None
    if custom_hooks:
        hooks = load_user_code(custom_hooks, option="--custom-hooks", module_ok=True)
    fill_range = None
    configs: dict[str | None, CouplingConfig] = {None: config}
    if sim.world is not None:
        from vcosim.world.bank_h import fill_range_slots

        fill_range = fill_range_slots
        configs = vehicle_couplings(sim.world, config)
    attached = {}
    for name, each in configs.items():
        attached[name] = sim.attach(
            coupling_name(name),
            SimulatorEndpoint(
                each,
                fill_custom=getattr(hooks, "fill_custom", None) or fill_range,
                on_custom=getattr(hooks, "on_custom", None),
            ),
            vehicle=name,
        )
    return attached


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


def endpoints(sim: Simulation) -> dict[str | None, SimulatorEndpoint]:
    """The simulation's tight-coupling endpoints by the vehicle they serve (None: a lone car)."""
    return {
        vehicle: face
        for vehicle, face in sim.couplings().items()
        if isinstance(face, SimulatorEndpoint)
    }
