"""The catalogue scenarios, generated with scenariogeneration: cut-in, lead-vehicle brake,
overtaking and stop-and-go, each on a straight road of two lanes each way.

The ego is driven from outside (its controller is ``external``); the others by the
storyboard. ``python tests/helpers/scenarios.py examples/scenarios`` writes the examples.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from scenariogeneration import xodr, xosc

ROAD = "straight.xodr"
LENGTH = 500.0
LANE_WIDTH = 3.5
OSC_MINOR = 2  # OpenSCENARIO 1.2
LONGITUDINAL = xosc.RelativeDistanceType.longitudinal
EVENT = xosc.StoryboardElementType.event


def write_road(folder: Path, length: float = LENGTH) -> Path:
    """A straight road of two lanes each way, ``straight.xodr`` in ``folder``."""
    road = xodr.create_road(
        [xodr.Line(length)], id=1, left_lanes=2, right_lanes=2, lane_width=LANE_WIDTH
    )
    road.add_elevation(0, 0, 0, 0, 0)  # flat: an empty elevationProfile is not valid OpenDRIVE
    odr = xodr.OpenDrive("straight", revMinor="8")  # 1.8: ASAM's checker runs all its checks
    odr.add_road(road)
    odr.adjust_roads_and_lanes()
    path = folder / ROAD
    odr.write_xml(str(path))
    return path


def car() -> xosc.Vehicle:
    box = xosc.BoundingBox(1.9, 4.6, 1.5, 1.4, 0.0, 0.75)
    front = xosc.Axle(0.5, 0.65, 1.6, 2.8, 0.33)
    rear = xosc.Axle(0.0, 0.65, 1.6, 0.0, 0.33)
    return xosc.Vehicle("car", xosc.VehicleCategory.car, box, front, rear, 60.0, 8.0, 8.0)


def step_to(speed: float | str) -> xosc.AbsoluteSpeedAction:
    return xosc.AbsoluteSpeedAction(
        speed, xosc.TransitionDynamics(xosc.DynamicsShapes.step, xosc.DynamicsDimension.time, 0)
    )


def at_time(name: str, seconds: float, point: str = "start") -> xosc.ValueTrigger:
    return xosc.ValueTrigger(
        name, 0, xosc.ConditionEdge.rising,
        xosc.SimulationTimeCondition(seconds, xosc.Rule.greaterThan), point,
    )  # fmt: skip


def after(
    name: str, kind: object, element: str, delay: float, point: str = "start"
) -> xosc.ValueTrigger:
    return xosc.ValueTrigger(
        name, delay, xosc.ConditionEdge.none,
        xosc.StoryboardElementStateCondition(
            kind, element, xosc.StoryboardElementState.endTransition
        ),
        point,
    )  # fmt: skip


def scenario(
    name: str,
    other: str,
    place: xosc.RelativeLanePosition,
    speeds: tuple[float, float],
    events: list[xosc.Event],
    stop: xosc.ValueTrigger | xosc.EntityTrigger | xosc.Trigger,
) -> xosc.Scenario:
    """The ego in lane -1 at s = 50 (speed ``$EgoSpeed``) and ``other`` placed relative to it
    (speed ``$OtherSpeed``)."""
    params = xosc.ParameterDeclarations()
    params.add_parameter(xosc.Parameter("EgoSpeed", xosc.ParameterType.double, str(speeds[0])))
    params.add_parameter(xosc.Parameter("OtherSpeed", xosc.ParameterType.double, str(speeds[1])))
    entities = xosc.Entities()
    entities.add_scenario_object(
        "Ego", car(), controller=xosc.Controller("external", xosc.Properties())
    )
    entities.add_scenario_object(other, car())
    init = xosc.Init()
    init.add_init_action("Ego", xosc.TeleportAction(xosc.LanePosition(50, 0, -1, 1)))
    init.add_init_action("Ego", step_to("$EgoSpeed"))
    init.add_init_action(other, xosc.TeleportAction(place))
    init.add_init_action(other, step_to("$OtherSpeed"))
    maneuver = xosc.Maneuver(name)
    for event in events:
        maneuver.add_event(event)
    board = xosc.StoryBoard(init, stop)
    board.add_maneuver(maneuver, other)
    return xosc.Scenario(
        name, "vcosim tests", params, entities, board, xosc.RoadNetwork(ROAD), xosc.Catalog(),
        osc_minor_version=OSC_MINOR,
    )  # fmt: skip


def event(name: str, action: object, trigger: object, priority: object = None) -> xosc.Event:
    """An event of one action, named apart: a condition's reference to either is unique."""
    made = xosc.Event(name, priority or xosc.Priority.override)
    made.add_action(f"{name}_action", action)
    made.add_trigger(trigger)
    return made


def cut_in() -> xosc.Scenario:
    """A slower car in the lane to the right changes into the ego's lane 12 m ahead of it."""
    close = xosc.EntityTrigger(
        "close", 0, xosc.ConditionEdge.rising,
        xosc.RelativeDistanceCondition(12, xosc.Rule.lessThan, LONGITUDINAL, "Ego", freespace=True),
        "Cutter",
    )  # fmt: skip
    change = xosc.RelativeLaneChangeAction(
        0,
        "Ego",
        xosc.TransitionDynamics(xosc.DynamicsShapes.sinusoidal, xosc.DynamicsDimension.time, 3),
    )
    stop = xosc.Trigger("stop")
    for group in (
        after("settled", xosc.StoryboardElementType.event, "cut", 4.0, "stop"),
        at_time("late", 40, "stop"),
    ):
        conditions = xosc.ConditionGroup("stop")
        conditions.add_condition(group)
        stop.add_conditiongroup(conditions)
    return scenario(
        "cut_in", "Cutter", xosc.RelativeLanePosition(-1, "Ego", 0, ds=35), (25.0, 18.0),
        [event("cut", change, close)], stop,
    )  # fmt: skip


def lead_brake() -> xosc.Scenario:
    """The car ahead in the ego's lane brakes to a standstill at 5 m/s2; both end standing."""
    brake = xosc.AbsoluteSpeedAction(
        0.0,
        xosc.TransitionDynamics(xosc.DynamicsShapes.linear, xosc.DynamicsDimension.rate, 5.0),
    )
    standing = xosc.EntityTrigger(
        "standing", 0.5, xosc.ConditionEdge.rising,
        xosc.SpeedCondition(0.1, xosc.Rule.lessThan), "Lead", triggeringpoint="stop",
        triggeringrule=xosc.TriggeringEntitiesRule.all,
    )  # fmt: skip
    standing.add_triggering_entity("Ego")
    return scenario(
        "lead_brake", "Lead", xosc.RelativeLanePosition(0, "Ego", 0, ds=40), (15.0, 15.0),
        [event("brake", brake, at_time("brake_at", 2.0))], standing,
    )  # fmt: skip


def overtaking() -> xosc.Scenario:
    """A faster car passes on the right and changes into the ego's lane 8 m ahead of it."""
    ahead = xosc.EntityTrigger(
        "past", 0, xosc.ConditionEdge.rising,
        xosc.RelativeDistanceCondition(
            8, xosc.Rule.greaterThan, LONGITUDINAL, "Ego", freespace=True
        ),
        "Passer",
    )  # fmt: skip
    change = xosc.RelativeLaneChangeAction(
        0,
        "Ego",
        xosc.TransitionDynamics(xosc.DynamicsShapes.cubic, xosc.DynamicsDimension.distance, 60),
    )
    slow = xosc.RelativeSpeedAction(
        3.0, "Ego",
        xosc.TransitionDynamics(xosc.DynamicsShapes.cubic, xosc.DynamicsDimension.time, 2),
        continuous=False,
    )  # fmt: skip
    reached = xosc.EntityTrigger(
        "reached", 0, xosc.ConditionEdge.rising,
        xosc.DistanceCondition(
            10.0, xosc.Rule.lessThan, xosc.LanePosition(350, 0, -1, 1), freespace=False,
            distance_type=xosc.RelativeDistanceType.euclidianDistance,
        ),
        "Passer",
        triggeringpoint="stop",
    )  # fmt: skip
    return scenario(
        "overtaking", "Passer", xosc.RelativeLanePosition(-1, "Ego", 0, ds=-8), (20.0, 30.0),
        [
            event("change", change, ahead),
            event("settle", slow, after("changed", EVENT, "change", 0.0)),
        ],
        reached,
    )  # fmt: skip


def stop_and_go() -> xosc.Scenario:
    """The car ahead stops and goes again, twice (each event runs twice)."""

    def speed(to: float, shape: object, seconds: float) -> xosc.AbsoluteSpeedAction:
        return xosc.AbsoluteSpeedAction(
            to, xosc.TransitionDynamics(shape, xosc.DynamicsDimension.time, seconds)
        )

    brake = xosc.Event("stop", xosc.Priority.override, maxexecution=2)
    brake.add_action("stop_action", speed(0.0, xosc.DynamicsShapes.sinusoidal, 2.0))
    brake.add_trigger(
        xosc.EntityTrigger(
            "rolling",
            0.5,
            xosc.ConditionEdge.none,
            xosc.SpeedCondition(9.5, xosc.Rule.greaterThan),
            "Lead",
        )  # fmt: skip
    )
    go = xosc.Event("go", xosc.Priority.override, maxexecution=2)
    go.add_action("go_action", speed(10.0, xosc.DynamicsShapes.cubic, 3.0))
    go.add_trigger(after("stopped", xosc.StoryboardElementType.event, "stop", 0.5))
    done = after("done", xosc.StoryboardElementType.maneuver, "stop_and_go", 1.0, "stop")
    return scenario(
        "stop_and_go", "Lead", xosc.RelativeLanePosition(0, "Ego", 0, ds=30), (10.0, 10.0),
        [brake, go], done,
    )  # fmt: skip


def variations(folder: Path) -> Path:
    """12 variations of the cut-in: the ego at 20, 25 or 30 m/s, the cutter at 14 to 20."""
    speeds = xosc.DistributionSet()
    for value in ("20", "25", "30"):
        speeds.add_value(value)
    grid = xosc.Deterministic()
    grid.add_single_distribution("EgoSpeed", speeds)
    grid.add_single_distribution("OtherSpeed", xosc.DistributionRange(2.0, xosc.Range(14, 20)))
    path = folder / "cut_in_variations.xosc"
    xosc.ParameterValueDistribution(
        "cut-in speeds", "vcosim tests", "cut_in.xosc", grid, osc_minor_version=OSC_MINOR
    ).write_xml(str(path))
    return path


SCENARIOS: dict[str, Callable[[], xosc.Scenario]] = {
    "cut_in": cut_in,
    "lead_brake": lead_brake,
    "overtaking": overtaking,
    "stop_and_go": stop_and_go,
}


def write_all(folder: Path) -> dict[str, Path]:
    """Every scenario and the road into ``folder``: {name: path of its .xosc}."""
    folder.mkdir(parents=True, exist_ok=True)
    write_road(folder)
    paths = {}
    for name, make in SCENARIOS.items():
        paths[name] = folder / f"{name}.xosc"
        make().write_xml(str(paths[name]))
    variations(folder)
    return paths


if __name__ == "__main__":
    for path in write_all(Path(sys.argv[1])).values():
        print(path)


def run_storyboard(folder: Path, name: str, text: str, seconds: float = 10.0) -> tuple[Any, Any]:
    """Write ``text`` as ``name``.xosc beside the road, run it fast: (simulation, its report).

    The report is the storyboard face's (``StoryboardReport``).
    """
    from vcosim.openscenario.storyboard import StoryboardReport, scenario_run
    from vcosim.scenarios import PacingSpec, RunSpec, build_simulation

    write_road(folder)
    path = folder / f"{name}.xosc"
    path.write_text(text)
    face, world = scenario_run(path)
    sim = build_simulation(RunSpec(world=world, pacing=PacingSpec(mode="fast"), faces=[face]))
    board = sim.run(seconds).faces["storyboard"]
    assert isinstance(board, StoryboardReport)
    return sim, board


# Pieces of hand-written storyboards (the tests that need an element scenariogeneration lacks)


def lane(s: float, lane_id: int = -1) -> str:
    """A LanePosition on road 1 (``write_road``'s)."""
    return f'<LanePosition roadId="1" laneId="{lane_id}" s="{s}" offset="0"/>'


def placed(name: str, where: str, speed: float) -> str:
    """An Init Private: ``name`` teleported to ``where`` at ``speed`` m/s."""
    return f"""<Private entityRef="{name}">
  <PrivateAction><TeleportAction><Position>{where}</Position></TeleportAction></PrivateAction>
  <PrivateAction><LongitudinalAction><SpeedAction>
    <SpeedActionDynamics dynamicsShape="step" value="0" dynamicsDimension="time"/>
    <SpeedActionTarget><AbsoluteTargetSpeed value="{speed}"/></SpeedActionTarget>
  </SpeedAction></LongitudinalAction></PrivateAction>
</Private>"""


def car_xml(acceleration: float = 8.0) -> str:
    """``car()`` written out: a car of the standard's catalogue shape, its Performance
    ``acceleration`` m/s²."""
    return f"""<Vehicle name="car" vehicleCategory="car">
  <BoundingBox><Center x="1.4" y="0" z="0.75"/><Dimensions width="1.9" length="4.6"
    height="1.5"/></BoundingBox>
  <Performance maxSpeed="60" maxDeceleration="8" maxAcceleration="{acceleration:g}"/><Axles>
  <FrontAxle maxSteering="0.5" wheelDiameter="0.65" trackWidth="1.6" positionX="2.8"
    positionZ="0.33"/>
  <RearAxle maxSteering="0" wheelDiameter="0.65" trackWidth="1.6" positionX="0"
    positionZ="0.33"/></Axles></Vehicle>"""


def at(time: float) -> str:
    """A StartTrigger on SimulationTime >= ``time``."""
    return f"""<StartTrigger><ConditionGroup><Condition name="at {time}" delay="0"
  conditionEdge="none"><ByValueCondition>
  <SimulationTimeCondition value="{time}" rule="greaterOrEqual"/>
</ByValueCondition></Condition></ConditionGroup></StartTrigger>"""
