"""The ground-truth outputs a run was asked for, checked before it starts and attached as faces.

``GroundTruthOutputs`` is what the command line turns its ``--osi*`` and ``--foxglove*``
options into; ``check`` refuses a missing extra or a rate that is not a whole number of physics
steps before anything starts. ``build_simulation`` attaches the faces a run's spec describes
with ``attach_osi``, ``attach_foxglove`` and ``attach_scene_recording`` (after its recording,
whose MCAP file the Foxglove scene joins), each saying what it does.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from vcosim.constants import PHYSICS_DT
from vcosim.extras import require
from vcosim.groundtruth.sampling import steps_per_sample

if TYPE_CHECKING:
    from mcap.writer import Writer

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


def attach_osi(
    sim: Simulation,
    rate: float,
    *,
    udp: tuple[str, int] | None = None,
    framing: str = "datagram",
    trace: Path | None = None,
    road: RoadNetwork | None = None,
) -> str:
    """Attach the ego's OSI SensorViews at ``rate`` Hz; the line saying where they go.

    ``road``: the OpenDRIVE road the run drives on, whose lanes OSI's ground truth carries.
    """
    require("osi", "--osi" if udp is not None else "--osi-trace")
    from vcosim.groundtruth.osi import OsiOutput
    from vcosim.groundtruth.osi_road import road_part

    every = steps_per_sample(rate, "--osi-rate", sim.dt)
    parts = [] if road is None else [road_part(road)]
    face = sim.attach(
        "osi", OsiOutput(every, udp=udp, trace=trace, parts=parts, udp_framing=framing)
    )
    where = ", ".join(face.report().destinations)
    n = 0 if road is None else len(road.roads)
    lanes = f", with the lanes of {n} road{'s' * (n != 1)}" if n else ""
    what = "the ego's SensorView"
    if udp is not None and framing == "esmini":
        what += " (over UDP its GroundTruth, in esmini's fragments)"
    return f"osi: {what} at {rate:g} Hz to {where}{lanes}"


def attach_foxglove(
    sim: Simulation, rate: float, host: str, port: int, allow: tuple[str, ...] = ()
) -> str:
    """Serve the run to the Foxglove app at ``rate`` Hz; the line saying where."""
    require("foxglove", "--foxglove")
    from vcosim.groundtruth.foxglove import FoxgloveLive

    every = steps_per_sample(rate, "--foxglove-rate", sim.dt)
    live = sim.attach("foxglove", FoxgloveLive(every, host, port, allow))
    at_host, at_port = live.listen()
    return (
        f"foxglove: the run at {rate:g} Hz on ws://{at_host}:{at_port} (in the "
        "Foxglove app: Open connection, Foxglove WebSocket)"
    )


def records_scene(record: Path | None) -> bool:
    """The recording is MCAP and the ``foxglove`` extra is here: it gets the scene too."""
    from vcosim.extras import missing

    mcap = record is not None and record.suffix.lower() == ".mcap"
    return mcap and not missing("foxglove")


def attach_scene_recording(sim: Simulation, record: Path, every: int) -> str:
    """Add the Foxglove scene (/scene, /tf) to an MCAP recording; the line saying so."""
    from vcosim.groundtruth.foxglove import FoxgloveRecording
    from vcosim.sim.recorder import vehicle_path

    world = sim.world
    file = record if world is None else vehicle_path(record, world.ego)
    sim.attach("foxglove_recording", FoxgloveRecording(every, recording_writer, str(file)))
    every_ms = every * PHYSICS_DT * 1e3
    return f"recording: the Foxglove scene (/scene, /tf) every {every_ms:g} ms in {file}"


def recording_writer(sim: Simulation) -> Writer | None:
    """The ``mcap`` writer of the run's recording: the lone car's file, or the ego's."""
    from vcosim.sim.recorder import SignalLog, WorldSignalLog

    recording = sim.faces.get("recording")
    if isinstance(recording, WorldSignalLog):  # a world: a file per vehicle
        recording = recording.logs.get(sim.world.ego) if sim.world is not None else None
    return recording.mcap_writer if isinstance(recording, SignalLog) else None
