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
``wheelFL.angularVelocity``); pythonfmu allows the dots once each variable has its own getter.

This module is shipped inside the FMUs it builds (their model classes take
:class:`BeamngCoupling` and :func:`register_variables` from it), so it imports only the
standard library at module level.
"""

from __future__ import annotations

import shutil
import socket
import struct
import textwrap
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

IN_PORT = 64890  # the FMU's own socket (the simulator's "controller port")
OUT_PORT = 64891  # the simulator's
MESSAGE = struct.Struct("<111d")
REPLY = struct.Struct("<64d")
FIRST_MESSAGE_TIMEOUT = 2.0  # s: leaving initialization waits this long for message 0
RESET_AFTER = 2.0  # s with nothing acceptable: the largest id seen returns to 0
GIVE_UP_AFTER = 10.0  # s: a doStep fails instead of hanging the master for ever

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

_CAST: dict[str, Callable[[float], Any]] = {
    "real": float,
    "integer": lambda v: int(round(v)),
    "boolean": lambda v: v != 0.0,
}


class BeamngCoupling:
    """The FMU's side of the coupling, independent of the FMI version."""

    def __init__(self) -> None:
        self.in_address, self.in_port = "127.0.0.1", IN_PORT
        self.out_address, self.out_port = "127.0.0.1", OUT_PORT
        self.outputs = [0.0] * 60  # slots 1..60 of the last message accepted
        self.controls = [0.0] * 13  # slots 1..13 of the next reply
        self.counter = 0  # id of the last reply sent (its own, not the message's)
        self.accepted = self.rejected = 0
        self._largest = 0.0
        self._equal_ok = True
        self._must_receive = True  # a reply went out since the last receive (or none came)
        self._sock: socket.socket | None = None

    def open(self) -> None:
        """Bind, then wait briefly for the first message: BeamNG's FMU leaving initialization."""
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self._sock.bind((self.in_address, self.in_port))
        self._must_receive = not self._receive(FIRST_MESSAGE_TIMEOUT)

    def step(self) -> bool:
        """One exchange: the next message if a reply went out since the last, then a reply."""
        if self._must_receive and not self._receive(GIVE_UP_AFTER):
            return False
        self.counter += 1
        reply = (float(self.counter), *self.controls, *(0.0,) * 50)
        assert self._sock is not None, "step before open"
        self._sock.sendto(REPLY.pack(*reply), (self.out_address, self.out_port))
        self._must_receive = True
        return True

    def close(self) -> None:
        """Release the port (safe twice)."""
        if self._sock is not None:
            self._sock.close()
            self._sock = None

    def _receive(self, limit: float) -> bool:
        """Block for the next acceptable message (at most ``limit`` s); False if none came.

        BeamNG's filter: an id above the largest seen, or equal to it once. After RESET_AFTER
        seconds with nothing acceptable the largest returns to 0, so a simulator that restarted
        its ids is accepted again.
        """
        sock = self._sock
        assert sock is not None, "receive before open"
        now = time.monotonic()
        deadline, reset_at = now + limit, now + RESET_AFTER
        while now < deadline:
            if now >= reset_at:
                self._largest, self._equal_ok = 0.0, True
                reset_at = now + RESET_AFTER
            sock.settimeout(min(deadline, reset_at) - now)
            try:
                data = sock.recv(4096)
            except TimeoutError:
                data = b""
            now = time.monotonic()
            if len(data) != MESSAGE.size:
                continue
            values = MESSAGE.unpack(data)
            message_id = values[0]
            if message_id > self._largest or (message_id == self._largest and self._equal_ok):
                self._equal_ok = message_id > self._largest
                self._largest = message_id
                self.outputs[:] = values[1:61]
                self.accepted += 1
                return True
            self.rejected += 1
        return False


def register_variables(
    slave: Any, link: BeamngCoupling, types: dict[str, type], causality: Any, variability: Any
) -> None:
    """Register the parameters, inputs and outputs of ``link`` on a pythonfmu(3) slave.

    ``types`` maps "real", "integer", "boolean", "string" to the version's variable classes;
    ``causality``/``variability`` are its enums. Every variable gets its own getter (and
    setter), which is what lets the names carry dots.
    """

    def discrete(kind: str) -> Any:
        return None if kind == "real" else variability.discrete

    for name, (attribute, kind) in PARAMETERS.items():
        slave.register_variable(
            types[kind](
                name,
                causality=causality.parameter,
                variability=variability.fixed,
                getter=lambda a=attribute: getattr(link, a),
                setter=lambda v, a=attribute: setattr(link, a, v),
            )
        )
    for j, (name, kind) in enumerate(INPUTS):
        cast = _CAST[kind]
        slave.register_variable(
            types[kind](
                name,
                causality=causality.input,
                variability=discrete(kind),
                getter=lambda j=j, cast=cast: cast(link.controls[j]),
                setter=lambda v, j=j: link.controls.__setitem__(j, float(v)),
            )
        )
    for i, (name, kind) in enumerate(OUTPUTS):
        cast = _CAST[kind]
        slave.register_variable(
            types[kind](
                name,
                causality=causality.output,
                variability=discrete(kind),
                getter=lambda i=i, cast=cast: cast(link.outputs[i]),
            )
        )


# The model classes, one per FMI version; pythonfmu imports each as a module of its own name.
FMI2_MODEL = """
from pythonfmu import Boolean, Fmi2Causality, Fmi2Slave, Fmi2Variability, Integer, Real, String

from coupling_fmu import BeamngCoupling, register_variables


class BeamngFmi2Coupling(Fmi2Slave):
    description = "BeamNG tight coupling (fixed 111/64 layout) as an FMI 2 co-simulation FMU"

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.link = BeamngCoupling()
        types = {"real": Real, "integer": Integer, "boolean": Boolean, "string": String}
        register_variables(self, self.link, types, Fmi2Causality, Fmi2Variability)

    def exit_initialization_mode(self):
        self.link.open()

    def do_step(self, current_time, step_size):
        return self.link.step()

    def terminate(self):
        self.link.close()
"""

FMI3_MODEL = """
from pythonfmu3 import (Boolean, Fmi3Causality, Fmi3Slave, Fmi3Variability, Float64, Int32,
                        String)

from coupling_fmu import BeamngCoupling, register_variables


class BeamngFmi3Coupling(Fmi3Slave):
    description = "BeamNG tight coupling (fixed 111/64 layout) as an FMI 3 co-simulation FMU"

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.link = BeamngCoupling()
        self.time = 0.0
        self.register_variable(Float64("time", causality=Fmi3Causality.independent,
                                       variability=Fmi3Variability.continuous))
        types = {"real": Float64, "integer": Int32, "boolean": Boolean, "string": String}
        register_variables(self, self.link, types, Fmi3Causality, Fmi3Variability)

    def exit_initialization_mode(self):
        self.link.open()

    def do_step(self, current_time, step_size):
        return self.link.step()

    def terminate(self):
        self.link.close()
"""


def build_fmu(directory: Path, fmi_version: int) -> Path:
    """Build the FMI 2 (pythonfmu) or FMI 3 (pythonfmu3) FMU into ``directory``.

    The model script and a copy of this module go side by side in ``directory``: the builder
    imports the script from there, and ships this module in the FMU's resources.
    """
    if fmi_version == 2:
        from pythonfmu import FmuBuilder

        name, source = "BeamngFmi2Coupling", FMI2_MODEL
    elif fmi_version == 3:
        from pythonfmu3 import FmuBuilder

        name, source = "BeamngFmi3Coupling", FMI3_MODEL
    else:
        raise ValueError(f"FMI version {fmi_version}: 2 or 3")
    directory.mkdir(parents=True, exist_ok=True)
    shared = directory / "coupling_fmu.py"
    shutil.copyfile(Path(__file__), shared)
    script = directory / f"{name}.py"
    script.write_text(textwrap.dedent(source))
    return Path(FmuBuilder.build_FMU(script, dest=directory, project_files=[shared]))
