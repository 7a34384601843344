"""The ground-truth outputs a run was asked for, checked before it starts and attached as faces.

``GroundTruthOutputs`` is what the command line turns its ``--osi*`` and ``--foxglove*``
options into; ``check`` refuses a missing extra or a rate that is not a whole number of physics
steps before anything starts, and ``attach`` adds the faces to a built simulation (after its
recording, whose MCAP file the Foxglove scene joins) and says what each one does.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vcosim.constants import PHYSICS_DT
from vcosim.extras import require
from vcosim.groundtruth.sampling import steps_per_sample

if TYPE_CHECKING:
    from vcosim.roads import RoadNetwork
    from vcosim.sim.simulation import Simulation


@dataclass(frozen=True)
class GroundTruthOutputs:
    """Where a run's ground truth goes (None: not there)."""

    osi: tuple[str, int] | None = None
    osi_framing: str = "datagram"  # over UDP: a SensorView per datagram, or "esmini"'s fragments
    osi_trace: Path | None = None
    osi_rate: float = 100.0
    foxglove: tuple[str, int] | None = None
    foxglove_allow: tuple[str, ...] = ()
    foxglove_rate: float = 50.0
    record: Path | None = None
    record_every: int = 20

    @property
    def wants_osi(self) -> bool:
        """OSI over UDP or to a trace."""
        return self.osi is not None or self.osi_trace is not None

    @property
    def records_scene(self) -> bool:
        """The recording is MCAP and the ``foxglove`` extra is here: it gets the scene too."""
        from vcosim.extras import missing

        mcap = self.record is not None and self.record.suffix.lower() == ".mcap"
        return mcap and not missing("foxglove")

    def check(self) -> None:
        """Refuse, before anything starts, a missing extra or a rate the steps do not divide.

        Raises:
            MissingExtra: ``osi`` or ``foxglove`` is not installed for an option that needs it.
            ConfigError: ``--osi-rate`` or ``--foxglove-rate`` is not 2000 Hz / a whole number.
        """
        if self.wants_osi:
            require("osi", "--osi" if self.osi is not None else "--osi-trace")
            steps_per_sample(self.osi_rate, "--osi-rate")
            if self.osi_trace is not None:
                from vcosim.groundtruth.osi import OsiOutput

                OsiOutput(1, trace=self.osi_trace)  # the suffix check
        if self.foxglove is not None:
            require("foxglove", "--foxglove")
            steps_per_sample(self.foxglove_rate, "--foxglove-rate")

    def attach(self, sim: Simulation | Any, road: RoadNetwork | None = None) -> list[str]:
        """Attach the outputs asked for to ``sim``; a line for each saying what it does.

        ``road``: the OpenDRIVE road the run drives on, whose lanes OSI's ground truth carries.
        """
        lines = []
        if self.wants_osi:
            from vcosim.groundtruth.osi import OsiOutput
            from vcosim.groundtruth.osi_road import road_part

            every = steps_per_sample(self.osi_rate, "--osi-rate", sim.dt)
            parts = [] if road is None else [road_part(road)]
            face = sim.attach(
                "osi",
                OsiOutput(
                    every,
                    udp=self.osi,
                    trace=self.osi_trace,
                    parts=parts,
                    udp_framing=self.osi_framing,
                ),
            )
            where = ", ".join(face.report().destinations)
            n = 0 if road is None else len(road.roads)
            lanes = f", with the lanes of {n} road{'s' * (n != 1)}" if n else ""
            what = "the ego's SensorView"
            if self.osi is not None and self.osi_framing == "esmini":
                what += " (over UDP its GroundTruth, in esmini's fragments)"
            lines.append(f"osi: {what} at {self.osi_rate:g} Hz to {where}{lanes}")
        if self.foxglove is not None:
            from vcosim.groundtruth.foxglove import FoxgloveLive

            every = steps_per_sample(self.foxglove_rate, "--foxglove-rate", sim.dt)
            live = sim.attach("foxglove", FoxgloveLive(every, *self.foxglove, self.foxglove_allow))
            host, port = live.listen()
            lines.append(
                f"foxglove: the run at {self.foxglove_rate:g} Hz on ws://{host}:{port} (in the "
                "Foxglove app: Open connection, Foxglove WebSocket)"
            )
        if self.records_scene and self.record is not None:
            from vcosim.groundtruth.foxglove import FoxgloveRecording
            from vcosim.sim.recorder import vehicle_path

            world = getattr(sim, "world", None)
            file = self.record if world is None else vehicle_path(self.record, world.ego)
            sim.attach(
                "foxglove_recording",
                FoxgloveRecording(self.record_every, recording_writer, str(file)),
            )
            every_ms = self.record_every * PHYSICS_DT * 1e3
            lines.append(
                f"recording: the Foxglove scene (/scene, /tf) every {every_ms:g} ms in {file}"
            )
        return lines


def recording_writer(sim: Simulation | Any) -> Any:
    """The ``mcap`` writer of the run's recording: the lone car's file, or the ego's."""
    recording = sim.faces.get("recording")
    if recording is None:
        return None
    logs = getattr(recording, "logs", None)
    if logs is not None:  # a world: a file per vehicle
        world = getattr(sim, "world", None)
        recording = logs.get(world.ego) if world is not None else None
    return getattr(recording, "mcap_writer", None)
