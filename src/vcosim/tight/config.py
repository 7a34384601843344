"""The tight coupling's two configurations: the simulator side and the controller block.

Pydantic models, so the command line, sweep files and the Python API validate alike: a bad
value (a zero ``ext_time``, a port out of range) is refused, every problem listed, before
anything binds a socket.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

from pydantic import AfterValidator, ConfigDict, Field, ValidationInfo, field_validator

from vcosim.config import Host, Options
from vcosim.constants import (
    BLOCKING_TIMEOUT,
    CONTROLLER_PORT,
    EXT_TIME,
    LOOPBACK,
    PHYSICS_DT,
    PING_TIME,
    SIMULATOR_PORT,
)
from vcosim.net import parse_allow
from vcosim.tight.interface import Interface
from vcosim.tight.protocol import Schedule, send_skips_for


def _allowed(items: tuple[str, ...]) -> tuple[str, ...]:
    """``--allow`` items as given, once each one parses and resolves (every problem listed)."""
    _, problems = parse_allow(items)
    if problems:
        raise ValueError("; ".join(problems))
    return items


Port = Annotated[int, Field(ge=0, le=65535)]
Allow = Annotated[tuple[str, ...], AfterValidator(_allowed)]
"""Who else may send: ``HOST`` (any port of it) or ``HOST:PORT`` (exactly that socket)."""
Seconds = Annotated[float, Field(gt=0, allow_inf_nan=False)]
SpinTime = Annotated[float, Field(ge=0, le=1, allow_inf_nan=False)]


class CouplingTiming(Options):
    """When the simulator sends and how long it waits: BeamNG's T_ext, T_ping and the rest.

    ``window`` and ``send_skips`` override what ``ext_time`` and ``ping_time`` derive.
    """

    ext_time: Seconds = EXT_TIME
    ping_time: Annotated[float, Field(ge=0, allow_inf_nan=False)] = PING_TIME
    window: Annotated[int, Field(ge=1)] | None = None
    send_skips: Annotated[int, Field(ge=0)] | None = None
    send_offset: Annotated[int, Field(ge=0)] = 0
    timeout: Seconds = BLOCKING_TIMEOUT

    def schedule(self, dt: float = PHYSICS_DT) -> Schedule:
        """The skips/window/offset in force."""
        return Schedule.derive(
            self.ext_time,
            self.ping_time,
            dt,
            window=self.window,
            send_skips=self.send_skips,
            send_offset=self.send_offset,
            timeout=self.timeout,
        )


class CouplingConfig(CouplingTiming):
    """Addresses, timing and options of the simulator side of the tight coupling.

    Attributes:
        interface: A BeamNG interface CSV (signals each way, in order); None: BeamNG's fixed
            111/64 layout.
        gear_slot: Read slot 4 of the fixed layout as a requested gear (vcosim's extension;
            BeamNG ignores the slot, and an unconnected Simulink input would send 0 = neutral).
        spin: Busy-poll this long (s) before sleeping in a receive; None: 0.05 s in lock-step
            pacing, 0 otherwise.
        allow: Who else may answer (``HOST`` or ``HOST:PORT``) until a controller is heard.
        exact_peer: Hear only the controller's own address, not every port of its host
            (BeamNG's S-functions answer from another port than they listen on).
    """

    model_config = ConfigDict(title="coupling options")

    controller_host: Host = LOOPBACK
    controller_port: Port = CONTROLLER_PORT
    listen_host: Host = LOOPBACK
    listen_port: Port = SIMULATOR_PORT
    allow: Allow = ()
    exact_peer: bool = False
    spin: SpinTime | None = None
    debug_log: Path | None = None
    interface: str | Path | None = None
    gear_slot: bool = False

    def layout(self) -> Interface:
        """The message layouts in force (``ConfigError`` for a bad interface CSV)."""
        if self.interface is None:
            return Interface.fixed(gear_slot=self.gear_slot)
        return Interface.from_csv(self.interface)

    @classmethod
    def for_interface(cls, interface: str | Path, **explicit: Any) -> CouplingConfig:
        """A config for a BeamNG interface CSV.

        Its connection rows (timing, addresses, ports) fill what ``explicit`` does not give.
        """
        conn = Interface.from_csv(interface).connection
        from_csv = {
            "ext_time": conn.ext_time,
            "ping_time": conn.ping_time,
            "controller_host": conn.controller_host,
            "controller_port": conn.controller_port,
            "listen_host": conn.simulator_host,
            "listen_port": conn.simulator_port,
        }
        given = {k: v for k, v in from_csv.items() if v is not None}
        return cls(interface=interface, **{**given, **explicit})


class ControllerConfig(Options):
    """Addresses, step and options of a controller block.

    Attributes:
        step: The controller's sample time (s); give the simulator ``--ext-time`` equal to it.
        sim_port: The simulator's port; 0 answers each message to the port it came from.
        allow: Who else may send (``HOST`` or ``HOST:PORT``) until a simulator is heard.
        exact_peer: Hear only the simulator's own address, not every port of its host
            (BeamNG's coupling controller sends from another port than it listens on).
        memory: Answer with the previous step's outputs (Simulink's memory block).
        timeout: No message for this long (s): the block resets, as BeamNG's S-function does.
        interface: A BeamNG interface CSV both sides use (None: the fixed 111/64 layout).
        spin: Busy-poll this long (s) before blocking, so a lock-step pair is not capped by
            the wake-up latency of a sleeping process.
        idle_exit: Once a simulator has sent, end the run when it has been silent this long
            (s): its run ended. None: wait for ever (e.g. while BeamNG is paused).
    """

    model_config = ConfigDict(title="controller options")

    step: Seconds = EXT_TIME
    listen_host: Host = LOOPBACK
    listen_port: Port = CONTROLLER_PORT
    sim_host: Host = LOOPBACK
    sim_port: Port = SIMULATOR_PORT
    memory: bool = False
    timeout: Seconds = BLOCKING_TIMEOUT
    spin: SpinTime = 0.002
    allow: Allow = ()
    exact_peer: bool = False
    interface: str | Path | None = None
    idle_exit: Seconds | None = 3.0

    @field_validator("exact_peer")
    @classmethod
    def _exact_needs_a_port(cls, exact: bool, info: ValidationInfo) -> bool:
        if exact and info.data.get("sim_port") == 0:
            raise ValueError(
                "needs the simulator's port (sim_port 0 answers whoever sent, from any port "
                "of its host)"
            )
        return exact

    @classmethod
    def for_interface(cls, interface: str | Path, **explicit: Any) -> ControllerConfig:
        """A config for a BeamNG interface CSV.

        Its connection rows fill what ``explicit`` does not give: the step from the
        computation time (as the simulator derives it), the controller's address (otherUDP)
        and the simulator's (beamngUDP).
        """
        conn = Interface.from_csv(interface).connection
        step = (
            None
            if conn.ext_time is None
            else (send_skips_for(conn.ext_time, PHYSICS_DT) + 1) * PHYSICS_DT
        )
        from_csv = {
            "step": step,
            "listen_host": conn.controller_host,
            "listen_port": conn.controller_port,
            "sim_host": conn.simulator_host,
            "sim_port": conn.simulator_port,
        }
        given = {k: v for k, v in from_csv.items() if v is not None}
        return cls(interface=interface, **{**given, **explicit})
