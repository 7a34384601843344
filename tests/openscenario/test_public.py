"""Public scenarios of another project (esmini's, MPL-2.0, examples/scenarios/public) run end
to end: a cut-in against the ACC coupled in process, lane changes, a lead vehicle braking."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from vcosim.controllers.acc import Acc
from vcosim.openscenario.storyboard import StoryboardReport, scenario_run
from vcosim.openscenario.world import lane_line, road_network
from vcosim.scenarios import PacingSpec, RunSpec, build_simulation
from vcosim.tight.inprocess import couple_in_process
from vcosim.tight.views import Controls, SimulatorMessage

ESMINI = Path(__file__).parents[2] / "examples" / "scenarios" / "public" / "esmini" / "xosc"


class AccInLane:
    """The ACC on the pedals and a pure pursuit of the ego's lane on the steering wheel.

    esmini's ExternalController hands the ego to the user's controller in both directions.
    The ACC steers nothing: held straight on e6mini's bending road, the ego leaves the road at
    24 s (its left wheels over the edge), before the overtaker has even caught up, and what
    the storyboard then sees depends on how a car tumbles off a road.
    """

    def __init__(self, acc: Acc, line: np.ndarray, rear: float, wheelbase: float, lock: float):
        self.acc, self.line = acc, line
        self.arc = np.concatenate(([0.0], np.cumsum(np.hypot(*np.diff(line, axis=0).T))))
        self.rear, self.wheelbase, self.lock = rear, wheelbase, lock

    def __call__(self, msg: SimulatorMessage) -> Controls:
        """The ACC's pedals; the steering aims the rear axle at the lane 0.8 s ahead."""
        controls = self.acc(msg)
        yaw = msg.body.yaw
        x = msg.body.posX - self.rear * np.cos(yaw)
        y = msg.body.posY - self.rear * np.sin(yaw)
        here = self.arc[np.argmin(np.hypot(self.line[:, 0] - x, self.line[:, 1] - y))]
        ahead = here + max(5.0, 0.8 * msg.body.groundspeed)
        dx = np.interp(ahead, self.arc, self.line[:, 0]) - x
        dy = np.interp(ahead, self.arc, self.line[:, 1]) - y
        left = -np.sin(yaw) * dx + np.cos(yaw) * dy
        angle = np.arctan(2.0 * left / (dx * dx + dy * dy) * self.wheelbase)
        controls.steering = float(np.clip(angle / self.lock, -1.0, 1.0))
        return controls


def run(name: str, duration: float, acc: float | None = None) -> StoryboardReport:
    face, world = scenario_run(ESMINI / name)
    sim = build_simulation(RunSpec(world=world, pacing=PacingSpec(mode="fast"), faces=[face]))
    if acc is not None:
        assert sim.world is not None
        ego = next(v for v in world.vehicles if v.name == world.ego)
        start = (ego.start.x or 0.0, ego.start.y or 0.0, np.radians(ego.start.heading))
        line, _ = lane_line(road_network(ESMINI.parent / "xodr" / "e6mini.xodr"), start)
        row, shape = sim.world.row(world.ego), sim.world.geometry
        keeper = AccInLane(
            Acc(speed=acc), line, shape["rear"][row], shape["wheelbase"][row],
            shape["max_steer"][row],
        )  # fmt: skip
        couple_in_process(sim, keeper)
    board = sim.run(duration).faces["storyboard"]
    assert isinstance(board, StoryboardReport)
    return board


def ended(board: StoryboardReport, name: str) -> list[float]:
    (element,) = (e for e in board.elements if e.name == name and e.kind == "event")
    assert element.state == "complete", element
    return element.ended


def test_the_cut_in_against_the_acc_ends_by_its_stop_trigger() -> None:
    board = run("cut-in_external.xosc", 52.0, acc=30.0)  # esmini's ExternalController: the ACC
    assert board.ended_by.startswith("the stop trigger ('StopCondition')")
    assert ended(board, "CutInEvent") and ended(board, "OvertakerBrakeEvent")
    assert board.collisions == 0
    assert board.ego_min_time_headway is not None and board.ego_min_time_headway > 0.5


def test_the_lane_changes_of_a_public_scenario_run() -> None:
    board = run("follow_ghost.xosc", 12.0)  # its two lane changes end at 8 and 11 s
    assert ended(board, "LaneChange1") and ended(board, "LaneChange2")
    assert board.collisions == 0


def test_an_act_whose_start_trigger_is_empty_starts_at_once() -> None:
    """esmini's alks_cut-in.xosc writes its act's ``<StartTrigger/>`` (1.0 to 1.2 require the
    element: empty, it means at once)."""
    face, world = scenario_run(ESMINI / "alks_cut-in.xosc")
    sim = build_simulation(RunSpec(world=world, pacing=PacingSpec(mode="fast"), faces=[face]))
    assert sim.world is not None
    before = sim.world.poses()
    start = np.column_stack((before["x"], before["y"]))
    board = sim.run(5.0).faces["storyboard"]
    assert isinstance(board, StoryboardReport)
    (act,) = (e for e in board.elements if e.kind == "act")
    assert act.started == [0.0] and act.state == "running"
    after = sim.world.poses()
    moved = np.hypot(after["x"] - start[:, 0], after["y"] - start[:, 1])
    assert np.all(moved > 50.0)  # every car drove on (at its Init speed) for the 5 s


def test_the_lead_vehicle_brakes_and_the_scenario_ends_by_its_stop_trigger() -> None:
    board = run("slow-lead-vehicle.xosc", 30.0)
    assert board.ended_by.startswith("the stop trigger ('QuitCondition')"), board.ended_by
    assert ended(board, "brake_Event") and board.collisions == 0
