"""The controller side of the tight coupling as an FMI co-simulation FMU.

Any FMI master becomes the controller of a running ``vcosim sim`` (or of BeamNG.tech: the
wire is the same), as BeamNG's own FMUs make it one. The protocol is not re-implemented:
vcosim's :class:`~vcosim.tight.controller.ControllerBlock` runs in a thread of the FMU and
does the ids, the blocking receive, the timeout reset and the memory option; its step
function is the hand-over to ``doStep``.

One ``doStep`` is one exchange. It answers the message taken in the previous step with the
inputs the master has set since (computed from that message's outputs: direct feed-through,
or the previous step's answer with ``memory``), then waits (at most ``timeout``) for the next
message and shows it on the outputs. Leaving initialization binds the socket and waits for
the first message, so the outputs at the start time are the simulator's.
"""

from __future__ import annotations

import queue
import threading
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from vcosim.fmi.metadata import OUTPUTS, Output, Variable, input_variable
from vcosim.fmi.slave import SlaveMixin, read_config
from vcosim.fmi.vehicle import STEP_TOLERANCE
from vcosim.tight.config import ControllerConfig
from vcosim.tight.controller import STOP_CHECK, ControllerBlock, ControllerStatus
from vcosim.tight.protocol import CONTROLLER_INPUTS, SIM_TO_CONTROLLER
from vcosim.tight.views import Controls, SimulatorMessage
from vcosim.vehicle import layout as L

DESCRIPTION = "vcosim tight coupling, controller side: drives vcosim sim or BeamNG.tech over UDP"
INTERFACE_FILE = "vcosim_interface.csv"

# The reply's controls, in the order of ``Controls``: the fixed layout's slots 1-13 as the
# vehicle FMU declares those inputs (names, kinds, units and ranges from the catalogue).
_GEAR = "requested gear, in the reserved slot 4 (read only by vcosim sim --gear-slot)"
INPUTS: tuple[Variable, ...] = tuple(
    Variable(v.name, v.kind, v.unit, v.min, v.max, _GEAR if v.name == "gear" else v.description)
    for v in (input_variable(name) for _, name in CONTROLLER_INPUTS)
)
BANKS: tuple[Output, ...] = OUTPUTS[: L.N_BANKS]
"""Slots 1..60 of the simulator's message, named as the vehicle FMU's outputs."""

STATUS: tuple[Variable, ...] = (
    Variable("connected", "boolean", description="the last step took a message"),
    Variable("message_id", "integer", description="id of the message on the outputs"),
    Variable("received", "integer", description="messages taken by doStep"),
    Variable("timeouts", "integer", description="steps that waited the timeout in vain"),
    Variable("stale", "integer", description="messages dropped as stale or duplicated"),
)
PARAMETERS: tuple[Variable, ...] = (
    Variable("listen_host", "string", description="address the FMU binds"),
    Variable("listen_port", "integer", min=0, max=65535, description="port the FMU binds"),
    Variable("sim_host", "string", description="the simulator's address"),
    Variable("sim_port", "integer", min=0, max=65535, description="the simulator's port"),
    Variable("memory", "boolean", description="answer with the previous step's inputs"),
    Variable("timeout", unit="s", min=0.0, description="wait this long for a message at most"),
)


class CouplingLink:
    """A controller block in a thread, handing each message to ``exchange`` and back."""

    def __init__(self, config: ControllerConfig) -> None:
        self.block = ControllerBlock(self._answer, config)
        self.values = np.zeros(SIM_TO_CONTROLLER)
        self.received = self.timeouts = 0
        self.took = False
        self._messages: queue.Queue[np.ndarray] = queue.Queue(maxsize=1)
        self._replies: queue.Queue[Controls] = queue.Queue(maxsize=1)
        self._pending = False  # a message was taken and waits for its answer
        self._closing = False
        # A daemon: a master that exits without fmi2Terminate must not hang on it.
        self._thread = threading.Thread(
            target=self.block.run, name="vcosim-fmu-coupling", daemon=True
        )

    def start(self, wait: float) -> None:
        """Start the block and wait (at most ``wait`` s) for the first message."""
        self._thread.start()
        self._take(wait)

    def exchange(self, controls: Controls, wait: float) -> bool:
        """Answer the message taken last with ``controls``; take the next one (False: none)."""
        if self._pending:
            self._replies.put(controls)
            self._pending = False
        return self._take(wait)

    def _take(self, wait: float) -> bool:
        try:
            values = self._messages.get(timeout=wait)
        except queue.Empty:
            self.timeouts += 1
            self.took = False
            return False
        self.values[:] = values
        self.received += 1
        self._pending = self.took = True
        return True

    def _answer(self, message: SimulatorMessage) -> Controls | None:
        """The block's step function (its thread): hand the message over, wait for the answer."""
        self._messages.put(message.values.copy())
        while not self._closing:
            try:
                return self._replies.get(timeout=STOP_CHECK)
            except queue.Empty:
                continue
        return None  # closing: an all-NaN reply leaves everything as it is

    @property
    def connected(self) -> bool:
        """The last step took a message and the block has its simulator."""
        return self.took and self.block.status is ControllerStatus.connected

    def close(self) -> None:
        """Stop the block, release a waiting step function, join the thread (safe twice)."""
        self._closing = True
        self.block.stop()
        if self._thread.is_alive():
            self._thread.join(timeout=5 * STOP_CHECK + 1.0)
        self.block.close()


class CouplingSlave(SlaveMixin):
    """The coupling FMU's behaviour; pythonfmu(3) supplies the FMI plumbing."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.description = DESCRIPTION
        self._setup()
        config = read_config(kwargs.get("resources"))
        interface = config.get("interface")
        self.interface = str(Path(kwargs["resources"]) / interface) if interface else None
        step = {"step": config["step"]} if config.get("step") else {}
        self.config = (
            ControllerConfig.for_interface(self.interface, **step)
            if self.interface is not None
            else ControllerConfig(**step)
        )
        self.settings: dict[str, Any] = {p.name: getattr(self.config, p.name) for p in PARAMETERS}
        self.controls = np.zeros(len(INPUTS))
        self.link: CouplingLink | None = None
        self.failed = ""  # why the FMU refuses to step (bad parameters, a port in use), or ""
        self._register()

    def _register(self) -> None:
        if self.fmi_version == 3:
            self._add("time", "independent", self._time)
        for p in PARAMETERS:
            self._add(
                p,
                "parameter",
                partial(self.settings.__getitem__, p.name),
                partial(self.settings.__setitem__, p.name),
            )
        for j, v in enumerate(INPUTS):
            self._add(v, "input", partial(self.controls.__getitem__, j), partial(self._set, j))
        for o in BANKS:
            self._add(o, "output", partial(self._slot, 1 + o.index))
        for s in STATUS:
            self._add(s, "output", partial(self._read_status, s.name))

    def _time(self) -> float:
        return (self.link.received if self.link else 0) * self.config.step

    def _set(self, j: int, value: float) -> None:
        self.controls[j] = float(value)

    def _slot(self, index: int) -> float:
        return float(self.link.values[index]) if self.link is not None else 0.0

    def _read_status(self, name: str) -> float:
        link = self.link
        if link is None:
            return 0.0
        return float(
            {
                "connected": link.connected,
                "message_id": link.values[0],
                "received": link.received,
                "timeouts": link.timeouts,
                "stale": link.block.stats.stale,
            }[name]
        )

    def _reply(self) -> Controls:
        c = self.controls
        return Controls(
            throttle=c[0],
            brake=c[1],
            steering=c[2],
            gear=c[3],
            braking_torque=tuple(c[4:8]),
            propulsion_torque=tuple(c[8:12]),
            drive_mode=c[12],
        )

    # -- FMI life cycle ---------------------------------------------------------------------
    def exit_initialization_mode(self) -> None:
        """Bind with the parameters the master set, start the block, wait for message 1."""
        try:
            config = ControllerConfig(
                **{**self.config.model_dump(), **self.settings, "idle_exit": None, "spin": 0.0}
            )
            self.link = CouplingLink(config)
        except Exception as exc:  # no exception may cross pythonfmu's runtime
            self.failed = f"cannot start the coupling: {exc}"
            self._error(self.failed)
            return
        self.config = config
        self.link.start(config.timeout)

    def do_step(self, current_time: float, step_size: float, *_: Any) -> bool:
        """Answer the last message with the inputs, take the next one."""
        if self.failed:
            return self._error(self.failed)
        step = self.config.step
        if abs(step_size - step) > STEP_TOLERANCE * step:
            return self._error(
                f"communication step {step_size!r} s: this FMU exchanges one message per step "
                f"and was built for {step:g} s (the simulator's --ext-time); rebuild it with "
                f"vcosim fmu coupling --ext-time {step_size:g}"
            )
        if self.link is None:
            return self._error("doStep before initialization")
        self.link.exchange(self._reply(), self.config.timeout)
        return True

    def terminate(self) -> None:
        """Stop the block and release the port."""
        if self.link is not None:
            self.link.close()

    def __del__(self) -> None:
        link = getattr(self, "link", None)
        if link is not None:
            link.close()
