"""FMI co-simulation FMUs that speak BeamNG's tight coupling themselves, for the tests.

They behave on the wire like BeamNG.tech's own ``BeamNG-FMI2.fmu``/``BeamNG-FMI3.fmu``, which
sit in an FMI master (Simulink, a Python master) and talk UDP to the simulator (facts from
their public sources; the code here is our own):

- parameters ``socket_inPort``/``socket_inAddress`` (where the FMU binds, 64890) and
  ``socket_outPort``/``socket_outAddress`` (the simulator, 64891);
- on leaving initialization it binds and waits (2 s at most) for the first message;
- each ``doStep``: if a reply went out since the last receive, block for the next acceptable
  message (id above the largest seen, or equal to it once) and copy its slots 1..60 to the
  outputs; then send a 64-double reply numbered with its own counter, pre-incremented (the
  reply to message k carries k + 1 on a clean start). One exchange per step, whatever the
  step size;
- the gear input is an Integer, 0 unless the master sets it.

The reply follows the wire layout of docs/tight-coupling.md (slots 5-8 braking torque FL, FR,
RL, RR; 9-12 propulsion torque); BeamNG's FMU interleaves braking and propulsion per wheel
there instead.

Output names follow BeamNG's (``body_state.groundspeed``, ``vehicle_status.gear``,
``wheelFL.angularVelocity``).

The FMU is native, as BeamNG's is: ``tinyfmu/beamng.c`` over the tests' small FMI layer
(:mod:`helpers.tiny_fmu`), for FMI 2 or FMI 3, no Python in it.
"""

from __future__ import annotations

import struct
from pathlib import Path

from helpers.tiny_fmu import HERE, Var, build_tiny_fmu

IN_PORT = 64890  # the FMU's own socket (the simulator's "controller port")
OUT_PORT = 64891  # the simulator's
MESSAGE = struct.Struct("<111d")
REPLY = struct.Struct("<64d")
# In beamng.c: leaving initialization waits 2 s at most for message 0; after 2 s with
# nothing acceptable the largest id seen returns to 0; a doStep fails after 10 s without one.

WHEELS = ("FL", "FR", "RL", "RR")
_WHEEL_VALUES = (
    "angularVelocity",
    "wheelSpeed",
    "brakingTorque",
    "propulsionTorque",
    "frictionTorque",
    "downForce",
)

# Slots 1..60 of the simulator's message, in order: (FMU output name, FMI type).
OUTPUTS: tuple[tuple[str, str], ...] = (
    *(
        (f"driver_controls.{name}", "real")
        for name in (
            "throttle",
            "throttleInput",
            "brake",
            "brakeInput",
            "clutch",
            "clutchInput",
            "parkingbrake",
            "parkingbrakeInput",
            "steering",
            "steeringInput",
        )
    ),
    *(
        (f"body_state.{name}", "real")
        for name in (
            "posX",
            "posY",
            "posZ",
            "velX",
            "velY",
            "velZ",
            "groundspeed",
            "accX",
            "accY",
            "accZ",
            "roll",
            "pitch",
            "yaw",
            "altitude",
        )
    ),
    *(
        (f"vehicle_status.{name}", kind)
        for name, kind in (
            ("ignitionLevel", "real"),
            ("gear", "integer"),
            ("fuel", "real"),
            ("engineLoad", "real"),
            ("highbeam", "boolean"),
            ("lowbeam", "boolean"),
            ("maxrpm", "real"),
            ("reverse", "boolean"),
            ("rpm", "real"),
            ("signal_L", "boolean"),
            ("signal_R", "boolean"),
            ("wheelspeed", "real"),
        )
    ),
    *((f"wheel{wheel}.{name}", "real") for wheel in WHEELS for name in _WHEEL_VALUES),
)

# Slots 1..13 of the reply, in order (docs/tight-coupling.md): (FMU input name, FMI type).
INPUTS: tuple[tuple[str, str], ...] = (
    ("input_throttleInput", "real"),
    ("input_brakeInput", "real"),
    ("input_steeringInput", "real"),
    ("input_gear", "integer"),
    *((f"input_wheel{wheel}_brakingTorque", "real") for wheel in WHEELS),
    *((f"input_wheel{wheel}_propulsionTorque", "real") for wheel in WHEELS),
    ("input_driveMode", "boolean"),
)

# Parameter name -> (BeamngCoupling attribute, FMI type).
PARAMETERS: dict[str, tuple[str, str]] = {
    "socket_inPort": ("in_port", "integer"),
    "socket_inAddress": ("in_address", "string"),
    "socket_outPort": ("out_port", "integer"),
    "socket_outAddress": ("out_address", "string"),
}


def build_fmu(directory: Path, fmi_version: int) -> Path:
    """Build the FMI 2 or FMI 3 FMU into ``directory``."""
    if fmi_version not in (2, 3):
        raise ValueError(f"FMI version {fmi_version}: 2 or 3")
    identifier = f"BeamngFmi{fmi_version}Coupling"
    starts = {"in_port": IN_PORT, "out_port": OUT_PORT}
    variables = [Var("time", "independent")] if fmi_version == 3 else []
    variables += [
        Var(name, "parameter", kind, starts.get(attribute, "127.0.0.1"))
        for name, (attribute, kind) in PARAMETERS.items()
    ]
    variables += [Var(name, "input", kind, 0.0) for name, kind in INPUTS]  # type: ignore[arg-type]
    variables += [Var(name, "output", kind) for name, kind in OUTPUTS]  # type: ignore[arg-type]
    directory.mkdir(parents=True, exist_ok=True)
    return build_tiny_fmu(
        directory / f"{identifier}.fmu",
        identifier,
        variables,
        (HERE / "beamng.c").read_text(),
        version=fmi_version,
        description=f"BeamNG tight coupling (fixed 111/64 layout) as an FMI {fmi_version} FMU",
    )
