"""The storyboard engine: a face that plays an OpenSCENARIO storyboard on a world's vehicles.

(Past 400 lines on purpose: the storyboard's element states, their transitions and the actions
they start are one state machine of the standard; split, a transition would be read apart from
its state.)

Every driver period (10 ms) it takes a snapshot of the world, evaluates every condition (so
edges see every instant), ends the run when the storyboard's stop trigger fires, moves the
story elements through their states (standby, running, complete) and has the built-in
drivers of the storyboard's vehicles follow the ramps of their actions. It keeps the ego's
smallest time headway and time-to-collision, from its range sensor, for the report.

(Past 400 lines on purpose: the element states, the conditions' bookkeeping and the actions'
start are one state machine over one tree; apart, each would reach into the others.)
"""

from __future__ import annotations

import dataclasses
import logging
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from vcosim.errors import ConfigError, VcosimError
from vcosim.openscenario import carla as scenario_runner
from vcosim.openscenario import model as m
from vcosim.openscenario import speed_profile
from vcosim.openscenario.actions import (
    CHANNELS,
    PEAK_RATE,
    Channels,
    Ramp,
    RouteRun,
    Run,
    SteeredRun,
    TrajectoryRun,
    change_duration,
    instant,
    offset_duration,
    speed_duration,
)
from vcosim.openscenario.conditions import (
    ConditionState,
    EntityTests,
    Scene,
    all_conditions,
    compare,
    time_gap,
)
from vcosim.openscenario.place import (
    PlaceError,
    Pose,
    facing_lane,
    layout,
    on_lane,
    plan_route,
    resolve,
    route_line,
    shift_lane,
)
from vcosim.openscenario.reader import CARLA_FRAME, read_scenario
from vcosim.openscenario.trajectory import (
    facing,
    follow_speed,
    follow_speeds,
    schedule_speed,
)
from vcosim.openscenario.world import (
    against,
    lane_line,
    network_of,
    physical,
    scenario_world,
    start_poses,
)
from vcosim.reports import Report
from vcosim.scenarios.spec import StoryboardFaceSpec
from vcosim.sim.face import Face
from vcosim.world.geometry import R_AHEAD, R_DISTANCE, R_RELATIVE_SPEED, R_TARGET
from vcosim.world.movers import AWAY, Mover, Movers, arc_lengths, locate, straight_line
from vcosim.world.paths import point_at
from vcosim.world.spec import PathDriver, WorldFile

log = logging.getLogger("vcosim.openscenario")

if TYPE_CHECKING:
    from vcosim.sim.simulation import Simulation
    from vcosim.world import World

STANDBY, RUNNING, COMPLETE = "standby", "running", "complete"
TRAJECTORY_END = 0.5
"""m: a trajectory is followed to its end when the vehicle's position point is this close."""
MOVING = 0.5
"""m/s: below this the ego has no time headway (it is standing)."""


RANDOM_ROUTE_SEED = 41
"""The seed of the ways RandomRouteActions take (OpenSCENARIO 1.3's action has none)."""


class ScenarioRunError(VcosimError):
    """The storyboard asked for something the world cannot do (a lane the road lacks)."""


@dataclass
class ElementReport(Report):
    """One storyboard element: its state at the end, and when it started and ended."""

    kind: str
    name: str
    state: str
    started: list[float] = field(default_factory=list)
    ended: list[float] = field(default_factory=list)


@dataclass
class StoryboardReport(Report):
    """What the storyboard did, and how close the ego came to the others."""

    scenario: str
    ended_by: str
    ran: str
    elements: list[ElementReport]
    collisions: int
    ego: str
    ego_min_time_headway: float | None
    ego_min_time_to_collision: float | None
    ego_closest: str
    environment: dict[str, str] = field(default_factory=dict)
    """The environment at the end: road friction factor, time of day, weather."""
    warnings: list[str] = field(default_factory=list)
    """Actions that could not apply and were passed over (a lane change off every lane)."""


class Element:
    """A storyboard element at run time: its state and its transitions."""

    def __init__(self, kind: str, name: str, model: object, children: list[Element]) -> None:
        self.kind, self.name, self.model, self.children = kind, name, model, children
        self.path: tuple[str, ...] = (name,)
        """The names from its story down to it (what a qualified name ``A::B`` ends with)."""
        for below in (e for child in children for e in child.walk()):
            below.path = (name, *below.path)
        self.state = STANDBY
        self.count = 0
        self.fresh: set[str] = set()  # transitions of this tick
        self.recent: set[str] = set()  # of the last tick: what conditions see
        self.started: list[float] = []
        self.ended: list[float] = []
        self.runs: list[Run] = []
        self.triggering: tuple[str, ...] = ()
        """An act's: the entities whose conditions fired its start trigger."""

    def walk(self) -> list[Element]:
        """The element and every element below it, depth first."""
        return [self, *(e for child in self.children for e in child.walk())]

    def go(self, state: str, transition: str, now: float) -> None:
        """Move to ``state`` through ``transition`` at ``now``."""
        self.state = state
        self.fresh.add(transition)
        (self.started if transition == "startTransition" else self.ended).append(now)

    def report(self) -> ElementReport:
        """Its state and the times it started and ended."""
        return ElementReport(self.kind, self.name, self.state, self.started, self.ended)


def _tree(story: m.Story) -> Element:
    def event(e: m.Event) -> Element:
        return Element("event", e.name, e, [Element("action", a.name, a, []) for a in e.actions])

    return Element("story", story.name, story, [
        Element("act", act.name, act, [
            Element("maneuverGroup", g.name, g, [
                Element("maneuver", man.name, man, [event(e) for e in man.events])
                for man in g.maneuvers
            ])
            for g in act.groups
        ])
        for act in story.acts
    ])  # fmt: skip


class Storyboard(Face):
    """Plays the storyboard of ``scenario`` on the world it runs in.

    ``scenario``: the parsed scenario (``read_scenario``), or its ``.xosc`` file, which is
    read through the same once-per-file parse, ``parameters`` overriding the file's declared
    values (a sweep's variation). The world must be the scenario's
    (``vcosim.openscenario.world.scenario_world``).
    """

    kind = "storyboard"

    def __init__(
        self, scenario: m.Scenario | str | Path, parameters: dict[str, object] | None = None
    ) -> None:
        if not isinstance(scenario, m.Scenario):
            scenario = read_scenario(scenario, parameters)
        self.scenario = scenario
        self.network = network_of(self.scenario)
        self.stories = [_tree(story) for story in self.scenario.stories]
        self.elements = [e for story in self.stories for e in story.walk()]
        self.named: dict[tuple[str, str], list[Element]] = {}
        self.draw = np.random.default_rng(RANDOM_ROUTE_SEED)
        """Where RandomRouteActions draw their ways from (one generator: a run repeats)."""
        # scenario_runner reads no conditionEdge: every condition of its files is a level
        carla = self.scenario.description.startswith(CARLA_FRAME)
        self.conditions = {
            id(c): ConditionState(dataclasses.replace(c, edge="none") if carla else c)
            for trigger in self._triggers()
            for c in all_conditions(trigger)
        }
        self.tests = EntityTests()
        self.ended_by = ""
        self.channels: dict[str, Channels] = {}
        self.legs: dict[str, dict[str, int]] = {}
        self.following: dict[str, TrajectoryRun] = {}
        self.world: World | None = None
        self.sim: Simulation | None = None
        self.ego = ""
        self.min_headway = (math.inf, 0.0)
        self.min_ttc = (math.inf, 0.0)
        self.collisions = 0
        self.movers: Movers | None = None
        stop = self.scenario.stop
        self._can_stop = stop is not None and any(
            all(not _never(c.test) for c in group) for group in stop.groups if group
        )
        """Whether the stop trigger has a group that could fire; without one the run ends when
        every story has (as scenario_runner's, whose stop triggers hold criteria only)."""
        self.against: set[str] = set()
        """Storyboard cars driving their lane against its traffic (its left is the road's right)."""
        self.parameters = dict(self.scenario.parameters)
        self.variables = dict(self.scenario.variables)
        self.environment: dict[str, str] = {}
        self.signals: dict[str, str] = {}
        """Traffic signals' states as the storyboard set them (OpenDRIVE's are not read)."""
        self.absent: set[str] = set(self.scenario.absent)
        self.left_at: dict[str, Pose] = {}
        """Where each deleted entity was when it left (an AddEntityAction may place it relative
        to itself there, as esmini keeps a deleted object's last position)."""
        self.left_speed: dict[str, float] = {}
        """The speed each deleted entity had: added again, it drives on at it (esmini keeps
        an object's state while it is away)."""
        self.entered: dict[str, tuple[float, Pose]] = {}
        self.halted: set[str] = set()
        """Entities told to stand past the end of their road (until they are back on it)."""
        """When and where each entity was last added (the look's poses predate it)."""
        self.warnings: list[str] = []
        self.carla = self.scenario.description.startswith(CARLA_FRAME)
        """Written for scenario_runner: its conditions, once they held, hold on (``_fired``)."""
        self.latched: set[int] = set()
        self.init_runs: list[Run] | None = None
        self.held: list[scenario_runner.HeldSpeedRun] = []
        """SpeedActions running as scenario_runner runs them (until a distance is moved)."""
        self.arriving: dict[str, RouteRun] = {}
        self.steered: dict[tuple[str, str], SteeredRun] = {}
        """The runs whose channel the storyboard sets at every look, by (actor, channel)."""
        self.passed: dict[int, tuple[str, ...]] = {}
        """Each entity condition's entities that passed its test at the latest look."""
        self.fired_group: tuple[m.Condition, ...] = ()
        """The condition group that fired the trigger ``_fired`` found firing last."""

    def _triggers(self) -> list[m.Trigger | None]:
        triggers: list[m.Trigger | None] = [self.scenario.stop]
        for e in self.elements:
            if isinstance(e.model, (m.Act, m.Event)):
                triggers.append(e.model.start)
            if isinstance(e.model, m.Act):
                triggers.append(e.model.stop)
        return triggers

    # -- the face ---------------------------------------------------------------------------
    def start(self, sim: Simulation) -> None:
        """Find the driven vehicles' channels and take the first look at t = 0."""
        world = sim.world
        if world is None or set(world.names) != set(physical(self.scenario)):
            raise ConfigError(
                ["the storyboard runs on its scenario's world (vcosim sim --scenario FILE)"],
                f"OpenSCENARIO {self.scenario.path}",
            )
        self.sim, self.world, self.ego = sim, world, world.ego
        self._add_movers(world)
        for name, entity in self.scenario.entities.items():
            if entity.external or entity.kinematic:
                continue
            driver = world.spec.vehicles[world.row(name)].driver
            lanes = world.spec.paths[name].lanes or []
            self.legs[name] = {str(road): lane for road, lane in lanes}
            pose = self._start_pose(name)
            if not lanes and pose is not None and self.network and against(self.network, pose):
                road_id, _, lane, _ = on_lane(self.network, pose, name)
                self.legs[name] = {road_id: lane}  # its lane, driven the other way
                self.against.add(name)
            offset = driver.offset if isinstance(driver, PathDriver) else 0.0
            init = self.scenario.init[name]
            self.channels[name] = Channels(init.speed, offset)
            if init.ramp is not None:  # from standing (or a step), as Init's actions say
                duration = speed_duration(init.ramp, init.ramp_from, init.speed)
                self.channels[name].ramps["speed"] = self._performed(
                    name, Ramp(0.0, init.ramp_from, init.speed, duration, init.ramp.shape)
                )
        self._tick()

    def _start_pose(self, name: str) -> Pose | None:
        """Where ``name`` is at the start, on a lane of the road (None: on none)."""
        world = self.world
        if world is None or self.network is None:
            return None
        x, y, yaw = (float(world.poses()[k][world.row(name)]) for k in ("x", "y", "yaw"))
        try:
            on_lane(self.network, (x, y, yaw), name)
        except PlaceError:
            return None
        return x, y, yaw

    def _add_movers(self, world: World) -> None:
        """The kinematic entities join the world, each on its lane's route (or straight on)."""
        kinematic = [(n, e) for n, e in self.scenario.entities.items() if e.kinematic]
        if not kinematic:
            return
        if world.objects is not None:
            raise ConfigError(
                ["a scenario's pedestrians, objects and kinematic vehicles cannot share the "
                 "world with SUMO's traffic"],
                f"OpenSCENARIO {self.scenario.path}",
            )  # fmt: skip
        poses = start_poses(self.scenario)
        towing = {e.trailer: n for n, e in self.scenario.entities.items() if e.trailer}
        movers = []
        for name, entity in kinematic:
            poses.setdefault(name, (AWAY, AWAY, 0.0))  # absent until an AddEntityAction
            line, legs = lane_line(self.network, poses[name])
            tractor = towing.get(name)
            hitch = 0.0
            if tractor is not None:
                towed = self.scenario.entities[tractor]
                hitch = towed.hitch or towed.centre - towed.length / 2  # else at its back
            mover = Mover(
                name, entity.kind, entity.category, entity.length, entity.width, entity.height,
                line, towed_by=tractor, hitch=hitch, coupler=entity.coupler,
                centre=entity.centre,
            )  # fmt: skip
            mover.s, mover.offset = mover.locate(*poses[name][:2])
            mover.present = name not in self.absent
            init = self.scenario.init[name]
            mover.speed = init.ramp_from if init.ramp is not None else init.speed
            movers.append(mover)
            self.legs[name] = {str(road): lane for road, lane in legs}
            self.channels[name] = Channels(mover.speed, mover.offset)
            if init.ramp is not None:
                duration = speed_duration(init.ramp, init.ramp_from, init.speed)
                self.channels[name].ramps["speed"] = Ramp(
                    0.0, init.ramp_from, init.speed, duration, init.ramp.shape
                )
        # trailers after what tows them: a tractor's pose is known when its trailer is moved
        movers.sort(key=lambda mv: mv.towed_by is not None)
        props = {len(world) + slot for slot, mv in enumerate(movers) if mv.kind == "misc"}
        world.drivers.overlooked = props  # a route-driven ego drives past them
        self.movers = Movers(movers, world.driver_steps, world.dt)
        world.add_objects(self.movers)

    def after_step(self, sim: Simulation) -> None:
        """A look at the world every driver period, as the drivers decide."""
        world = self.world
        assert world is not None
        if world.step_index % world.driver_steps == 0:
            self._tick()

    def report(self) -> StoryboardReport:
        """Which elements ran and ended, what ended the run, and how close the ego came."""
        ran = [
            f"{e.kind} {e.name} ({e.state}"
            + (f", {len(e.started)} runs)" if len(e.started) > 1 else ")")
            for e in self.elements
            if e.started
        ]
        headway, at_h = self.min_headway
        ttc, at_t = self.min_ttc
        closest = [
            f"time headway {headway:.2f} s at t = {at_h:.2f} s" if math.isfinite(headway) else "",
            f"time-to-collision {ttc:.2f} s at t = {at_t:.2f} s" if math.isfinite(ttc) else "",
        ]
        return StoryboardReport(
            scenario=str(self.scenario.path),
            ended_by=self.ended_by or "the run's duration (the stop trigger did not fire)",
            ran="; ".join(ran) or "nothing",
            elements=[e.report() for e in self.elements],
            collisions=self.collisions,
            ego=self.ego,
            ego_min_time_headway=round(headway, 3) if math.isfinite(headway) else None,
            ego_min_time_to_collision=round(ttc, 3) if math.isfinite(ttc) else None,
            ego_closest=", ".join(c for c in closest if c) or "nobody ahead",
            environment=dict(self.environment),
            warnings=list(self.warnings),
        )

    # -- one look at the world --------------------------------------------------------------
    def _scene(self) -> Scene:
        world = self.world
        assert world is not None
        rows = dict(world.index)
        if self.movers is not None:
            rows.update({mv.name: len(world) + k for k, mv in enumerate(self.movers.movers)})
        return Scene(
            time=world.time,
            rows=rows,
            poses=world.poses(),
            network=self.network,
            touching=lambda a, b: (
                a not in self.absent and b not in self.absent and world.overlap(a, b) > 0.0
            ),
            parameters=self.parameters,
            kinds={name: e.kind for name, e in self.scenario.entities.items()},
        )

    def _tick(self) -> None:
        world, sim = self.world, self.sim
        assert world is not None and sim is not None
        scene = self._scene()
        now = scene.time
        for e in self.elements:
            e.recent, e.fresh = e.fresh, set()
        for state in self.conditions.values():  # every test and edge at every look
            state.look(self._test(state.condition, scene))
        self._watch_ego(scene)
        if self.ended_by:
            return
        fired = self._fired(self.scenario.stop)
        if fired:
            self.ended_by = f"the stop trigger ({fired}) at t = {now:.2f} s"
            for story in self.stories:
                self._stop(story, now)
            sim.stop()
            return
        if self.init_runs is None:  # Init's actions that take time start with the first look
            self.init_runs = [
                self._begin(action, actor, scene) if actor else self._global(action, scene)
                for actor, action in self.scenario.init_actions
            ]
        for run in self.init_runs:
            run.update(now)
        for holding in self.held:
            if holding.actor in scene.rows:  # a deleted actor moves no further
                holding.moved(*scene.pose(holding.actor)[:2])
        self.held = [holding for holding in self.held if not holding.done]
        for actor in list(self.following):
            self._follow(actor, now)
        for actor in list(self.arriving):
            self._arrive(actor)
        for key, steered in list(self.steered.items()):
            actor, do = steered.actor, steered.action.action
            if steered.done:
                del self.steered[key]
            elif isinstance(do, m.SynchronizeAction):
                self._synchronize(actor, steered, scene)
            elif isinstance(do, m.SpeedProfileAction):
                assert steered.profile is not None
                speed, rate = speed_profile.at(steered.profile, now)
                self.channels[actor].ramps["speed"] = Ramp(now, speed, speed + rate, 1.0, "linear")
                steered.done = now >= steered.profile[-1].t
            elif isinstance(do, m.LateralDistanceAction):
                self._keep_aside(actor, steered, scene)
            else:
                self._keep_distance(actor, steered, scene)
        for channels in self.channels.values():
            self._keep_relative_speed(channels, scene)
            self._keep_relative_offset(channels, scene)
        self._halt_at_road_end(scene)
        for story in self.stories:
            self._advance_story(story, scene)
        if self.stories and not self._can_stop and all(s.state == COMPLETE for s in self.stories):
            self.ended_by = f"the end of every story at t = {now:.2f} s (no stop trigger can fire)"
            sim.stop()
            return
        movers = self.movers
        for name, channels in self.channels.items():
            owner = channels.owners.get("speed")
            entity = self.scenario.entities[name]
            speeding = None if owner is None else owner.action.action
            held = isinstance(speeding, m.SpeedAction) and speeding.dynamics.shape != "step"
            channels.rise = entity.max_acceleration if held else math.inf
            channels.fall = entity.max_deceleration if held else math.inf
            speed, rate, offset = channels.command(now)
            aside = self.steered.get((name, "lane"))
            if aside is not None and aside.across:  # across at that speed: on less (esmini)
                speed = math.copysign(math.sqrt(max(speed * speed - aside.across**2, 0.0)), speed)
            if movers is not None and name in movers.slots:
                following = self.following.get(name)
                if following is not None and following.times is None:
                    speed, rate = speed * following.facing, rate * following.facing
                movers.command(movers.slots[name], speed, rate, offset)
            else:
                world.drivers.command(
                    world.row(name), max(speed, 0.0), rate, offset, channels.offset_rate
                )

    def _watch_ego(self, scene: Scene) -> None:
        world = self.world
        assert world is not None
        if not self.ego:  # a world of objects only: no ego to watch
            return
        self.collisions = sum(self.ego in hit.vehicles for hit in world.collisions)
        reading = world.readings[world.row(self.ego)]
        if reading[R_AHEAD + R_TARGET] < 0:
            return
        gap = max(float(reading[R_AHEAD + R_DISTANCE]), 0.0)
        speed = scene.value("speed", self.ego)
        headway = time_gap(gap, speed) if speed > MOVING else math.inf
        ttc = time_gap(gap, -float(reading[R_AHEAD + R_RELATIVE_SPEED]))
        if headway < self.min_headway[0]:
            self.min_headway = (headway, scene.time)
        if ttc < self.min_ttc[0]:
            self.min_ttc = (ttc, scene.time)

    # -- conditions -------------------------------------------------------------------------
    def _test(self, condition: m.Condition, scene: Scene) -> bool:
        test = condition.test
        if isinstance(test, m.EntityCondition):
            passed = [  # an entity deleted for now passes nothing (esmini skips it)
                who
                for who in test.entities
                if who not in self.absent and self.tests.passes(test.test, who, scene)
            ]
            self.passed[id(condition)] = tuple(passed)
            return bool(passed) if test.any else len(passed) == len(test.entities)
        if isinstance(test, m.SimulationTime):
            return compare(scene.time, test.rule, test.value)
        if isinstance(test, m.TrafficSignalCondition):
            return self.signals.get(test.name) == test.state
        if isinstance(test, m.ParameterCondition):
            values = self.variables if test.variable else scene.parameters
            value = values.get(test.parameter, test.declared)
            if value is None:  # not declared: never true (as esmini)
                return False
            try:
                return compare(float(value), test.rule, float(test.value))
            except ValueError:
                return (value == test.value) == (test.rule == "equalTo")
        return any(
            (e.state == test.state[: -len("State")]) if test.state.endswith("State")
            else test.state in e.recent
            for e in self._named(test)
        )  # fmt: skip

    def _named(self, test: m.ElementState) -> list[Element]:
        """The elements an element state condition names (found once, looked at each tick)."""
        key = (test.kind, test.name)
        found = self.named.get(key)
        if found is None:
            found = self.named[key] = [
                e for e in self.elements if e.kind == test.kind and test.names(e.path)
            ]
        return found

    def _fired(self, trigger: m.Trigger | None) -> str:
        """The names of the conditions of the first group that holds ("" if none does).

        In a file written for scenario_runner (a "CARLA:" description) a condition that held
        once holds on until its group fires, as scenario_runner's groups (a sequence of
        one-shot conditions) have it: "the hero moved 1 m" and a rising edge at another
        moment make a group that fires, where by the standard it never could.
        """
        if trigger is None:
            return ""
        now = self.world.time if self.world is not None else 0.0
        values = {id(c): self.conditions[id(c)].listen(now) for c in all_conditions(trigger)}
        for group in trigger.groups:
            if not group:
                continue
            if self.carla:
                self.latched.update(id(c) for c in group if values[id(c)])
                if all(id(c) in self.latched for c in group):
                    self.latched.difference_update(id(c) for c in group)
                    self.fired_group = group
                    return ", ".join(repr(c.name) for c in group)
            elif all(values[id(c)] for c in group):
                self.fired_group = group
                return ", ".join(repr(c.name) for c in group)
        return ""

    def _rearm(self, element: Element) -> None:
        """An element waiting for another execution hears its triggers afresh.

        Its own and those of every element below it: delays and values (as esmini's reset).
        """
        for e in element.walk():
            model = e.model
            triggers = [model.start] if isinstance(model, (m.Act, m.Event)) else []
            if isinstance(model, m.Act):
                triggers.append(model.stop)
            for c in (c for t in triggers for c in all_conditions(t)):
                self.conditions[id(c)].rearm()

    # -- the story elements -----------------------------------------------------------------
    def _advance_story(self, story: Element, scene: Scene) -> None:
        now = scene.time
        if story.state == STANDBY:
            story.go(RUNNING, "startTransition", now)
        if story.state != RUNNING:
            return
        for act in story.children:
            model = act.model
            assert isinstance(model, m.Act)
            if act.state == STANDBY and (model.start is None or self._fired(model.start)):
                act.go(RUNNING, "startTransition", now)
                fired = self.fired_group if model.start is not None else ()
                act.triggering = tuple(
                    dict.fromkeys(who for c in fired for who in self.passed.get(id(c), ()))
                )
                for group in act.children:
                    self._start_group(group, now)
            if act.state != RUNNING:
                continue
            if self._fired(model.stop):
                self._stop(act, now)
                continue
            for group in act.children:
                self._advance_group(group, scene, act.triggering)
            if all(group.state == COMPLETE for group in act.children):
                act.go(COMPLETE, "endTransition", now)
        if all(act.state == COMPLETE for act in story.children):
            story.go(COMPLETE, "endTransition", now)

    def _start_group(self, group: Element, now: float) -> None:
        group.go(RUNNING, "startTransition", now)
        for maneuver in group.children:
            maneuver.go(RUNNING, "startTransition", now)

    def _advance_group(self, group: Element, scene: Scene, triggering: tuple[str, ...]) -> None:
        if group.state != RUNNING:
            return
        model = group.model
        assert isinstance(model, m.ManeuverGroup)
        actors = model.actors
        if model.select:  # the act's triggering entities join its actors
            actors = tuple(dict.fromkeys((*actors, *triggering)))
        for maneuver in group.children:
            if maneuver.state == RUNNING:
                self._advance_maneuver(maneuver, actors, scene)
        if all(maneuver.state == COMPLETE for maneuver in group.children):
            group.count += 1
            group.go(COMPLETE, "endTransition", scene.time)
            if group.count < model.max_count:  # again, from the start
                for element in group.walk()[1:]:
                    element.state, element.count = STANDBY, 0
                self._rearm(group)
                self._start_group(group, scene.time)

    def _advance_maneuver(self, maneuver: Element, actors: tuple[str, ...], scene: Scene) -> None:
        now = scene.time
        for event in maneuver.children:
            model = event.model
            assert isinstance(model, m.Event)
            if event.state != STANDBY or not (model.start is None or self._fired(model.start)):
                continue
            others = [e for e in maneuver.children if e.state == RUNNING and e is not event]
            priority = scenario_runner.PRIORITY if self.carla else model.priority
            if priority == "skip" and others:
                event.fresh.add("skipTransition")
                continue
            if priority == "override":
                for other in others:
                    self._stop(other, now)
            event.go(RUNNING, "startTransition", now)
            for action in event.children:
                action.go(RUNNING, "startTransition", now)
                do = action.model
                assert isinstance(do, m.Action)
                action.runs = (
                    [self._global(do, scene)] if isinstance(do.action, m.GLOBAL_ACTIONS)
                    else [self._begin(do, actor, scene) for actor in actors]
                )  # fmt: skip
        for event in maneuver.children:
            if event.state == RUNNING:
                self._progress_event(event, now)
        if all(event.state == COMPLETE for event in maneuver.children):
            maneuver.go(COMPLETE, "endTransition", now)

    def _progress_event(self, event: Element, now: float) -> None:
        for action in event.children:
            for run in action.runs:
                run.update(now)
            if action.state == RUNNING and all(run.done for run in action.runs):
                action.go(COMPLETE, "endTransition", now)
                if isinstance(action.model, m.Action) and isinstance(
                    action.model.action, m.LaneChangeAction
                ):
                    for run in action.runs:
                        self._follow_lane(run.actor)
        if all(action.state == COMPLETE for action in event.children):
            event.count += 1
            event.go(COMPLETE, "endTransition", now)
            model = event.model
            assert isinstance(model, m.Event)
            if event.count < model.max_count:  # waits for its trigger again
                for element in event.walk():
                    element.state = STANDBY
                self._rearm(event)

    def _stop(self, element: Element, now: float) -> None:
        """End an element and all of it that has not ended (a stop trigger, an override).

        Its actions, and what had not started, stop (``stopTransition``); a running act,
        maneuver group, maneuver or event ends (``endTransition``), as in esmini, where it
        ends once its children have all stopped: ``multi_lane_changes.xosc`` starts its
        second act on the ``endTransition`` of the first, which its stop trigger ends.
        """
        for e in element.walk():
            if e.state != COMPLETE:
                ended = e.state == RUNNING and bool(e.children)
                e.go(COMPLETE, "endTransition" if ended else "stopTransition", now)
                for run in e.runs:
                    if run.actor in self.channels:
                        self.channels[run.actor].stop(run, now)

    # -- actions ----------------------------------------------------------------------------
    def _begin(self, action: m.Action, actor: str, scene: Scene) -> Run:
        """Start one action on one actor: its ramp from where the actor is now."""
        do, now = action.action, scene.time
        if actor not in self.channels:  # driven from outside: an override is all it takes
            if isinstance(do, m.OverrideAction) and self.world is not None:
                self.world.override(actor, {name: (v, on) for name, v, on in do.values})
            return Run(action, actor, None, None)
        channels = self.channels[actor]
        channel = CHANNELS[type(do)]
        ramp: Ramp | None = None
        if not isinstance(do, LONGITUDINAL):
            self._leave_trajectory(actor)  # a lateral action or a teleport ends a trajectory
        if isinstance(do, m.FollowTrajectoryAction):
            return self._start_trajectory(action, actor, do, now)
        if isinstance(do, m.SpeedAction):
            start = self._speed_of(actor, scene)
            target = do.value
            if do.entity is not None:
                ref = self._speed_of(do.entity, scene)
                target = ref + do.value if do.relative == "delta" else ref * do.value
            entity = self.scenario.entities[actor]
            if not entity.kinematic:
                target = max(target, 0.0)
            ramp = self._performed(
                actor,
                Ramp(
                    now,
                    start,
                    target,
                    speed_duration(do.dynamics, start, target),
                    do.dynamics.shape,
                ),
            )
            entered = self.entered.get(actor)
            if instant(do.dynamics) and entered is not None and entered[0] == now:
                self._enter_at(actor, entered[1], target)
        elif isinstance(do, m.LaneChangeAction):
            start = channels.ramps["lane"].at(now)[0]
            try:
                target = self._lane_offset(actor, do, scene)
            except PlaceError as exc:  # off every lane: no lane to change to, as in esmini
                return self._passed_over(action, actor, exc, now)
            except ScenarioRunError as exc:  # on a road its route lacks: no lane to aim at
                return self._passed_over(action, actor, PlaceError(str(exc)), now)
            duration = change_duration(do.dynamics, scene.value("speed", actor), target - start)
            ramp = Ramp(now, start, target, duration, do.dynamics.shape)
            if duration <= 0.0:  # at once: esmini puts the entity in its new lane
                self._shift_across(actor, target - start, scene)
        elif isinstance(do, m.LaneOffsetAction):
            start = channels.ramps["offset"].at(now)[0]
            target = do.value
            if do.entity is not None:
                try:
                    target = self._offset_beside(actor, do.entity, do.value, scene)
                except PlaceError as exc:  # its entity is off every lane: no lane centre
                    return self._passed_over(action, actor, exc, now)
            ramp = Ramp(now, start, target, offset_duration(do, target - start), do.shape)
        elif isinstance(do, m.TeleportAction):
            self._teleport(actor, do, scene)
        elif isinstance(do, m.OverrideAction) and self.world is not None:
            if actor in self.world.index:  # a kinematic entity has no inputs to force
                self.world.override(actor, {name: (v, on) for name, v, on in do.values})
        elif isinstance(do, STEERED):
            lateral = isinstance(do, m.LateralDistanceAction)
            commanded = self._speed_of(actor, scene), channels.rate  # a profile's start
            start = channels.ramps["lane"].at(now)[0] if lateral else scene.value("speed", actor)
            steered = SteeredRun(action, actor, start, "lane" if lateral else "speed")
            channels.take(steered)
            self.steered[(actor, steered.channel or "")] = steered
            if isinstance(do, m.SpeedProfileAction):
                base = 0.0 if do.entity is None else self._speed_of(do.entity, scene)
                steered.profile = speed_profile.plan(do, now, *commanded, base)
                first = speed_profile.at(steered.profile, now)[0]
                if now <= 0.0 and abs(first - scene.value("speed", actor)) > 1e-6:
                    self._shift(actor, 0.0, first, scene)  # Init's profile starts at its speed
            if isinstance(do, m.LongitudinalDistanceAction) and do.max_acceleration is None:
                self._keep_distance(actor, steered, scene, at_once=True)
            if isinstance(do, m.LateralDistanceAction) and do.distance is None:
                _, left = scene.offsets(do.entity, actor, do.freespace)
                steered.aside = left  # the distance there is, kept
            return steered
        elif isinstance(do, m.AssignRouteAction):
            poses = [resolve(w, self.network, scene.all_poses()) for w in do.route.waypoints]
            self._take_route(actor, poses, scene)
        elif isinstance(do, m.RandomRouteAction):
            self._take_route(actor, [], scene, draw=self.draw)
        elif isinstance(do, m.AcquirePositionAction):
            goal = resolve(do.position, self.network, scene.all_poses())
            line = self._take_route(actor, [goal], scene)
            arrive, _ = locate(line, arc_lengths(line), goal[0], goal[1])
            self.arriving[actor] = RouteRun(action, actor, arrive)
            return self.arriving[actor]
        run = Run(action, actor, channel, ramp)  # ActivateControllerAction: done at once
        if self.carla and isinstance(do, m.SpeedAction):
            run = scenario_runner.HeldSpeedRun(run, do.dynamics, now, *scene.pose(actor)[:2])
            self.held.append(run)
        if ramp is not None:
            channels.take(run)
        return run

    def _passed_over(self, action: m.Action, actor: str, why: ConfigError, now: float) -> Run:
        """An action that cannot apply where its actor is: a warning line, and it ends at once."""
        kind = type(action.action).__name__
        reason = "; ".join(why.problems)
        text = f"t = {now:.2f} s: {kind} {action.name!r} on {actor} passed over: {reason}"
        self.warnings.append(text)
        log.warning("%s", text)
        return Run(action, actor, None, None)

    def _global(self, action: m.Action, scene: Scene) -> Run:
        """A global action: done at once."""
        do = action.action
        if isinstance(do, m.EnvironmentAction):
            if do.friction is not None:
                assert self.world is not None
                self.world.scale_friction(do.friction)
                self.environment["friction"] = f"{do.friction:g}"
            if do.time_of_day is not None:
                self.environment["time_of_day"] = do.time_of_day
            self.environment.update(dict(do.weather))
        elif isinstance(do, m.ParameterAction):
            values = self.variables if do.variable else self.parameters
            values[do.name] = _modified(values[do.name], do.rule, do.value)
        elif isinstance(do, m.AddEntityAction):
            if do.entity not in self.absent:  # esmini refuses it: the entity drives on
                why = ConfigError([f"{do.entity} is in the world already"], "AddEntityAction")
                return self._passed_over(action, do.entity, why, scene.time)
            poses = scene.all_poses()
            poses.update({n: p for n, p in self.left_at.items() if n in self.absent})
            poses.update({n: p for n, (t, p) in self.entered.items() if t == scene.time})
            pose = resolve(do.position, self.network, poses)
            self.entered[do.entity] = (scene.time, pose)  # the next may be relative to it
            self._enter(do.entity, pose, scene)
        elif isinstance(do, m.DeleteEntityAction):
            if do.entity not in self.absent:  # where it was, not where it is parked
                self.left_at[do.entity] = scene.pose(do.entity)
                if do.entity in self.channels:  # and its speed, kept while it is away
                    self.left_speed[do.entity] = self._speed_of(do.entity, scene)
            self._leave(do.entity)
        elif isinstance(do, m.TrafficSignalStateAction):
            self.signals[do.name] = do.state
        return Run(action, "", None, None)

    def _enter(self, name: str, pose: Pose, scene: Scene) -> None:
        """``name`` comes into the world at ``pose`` on its lane's route.

        At the speed it had when it was deleted (standing, the first time): esmini keeps an
        object's state while it is away.
        """
        world = self.world
        assert world is not None
        self.absent.discard(name)
        self._leave_trajectory(name)
        speed = self.left_speed.pop(name, 0.0)
        mover = self._mover(name)
        if mover is not None:
            assert self.movers is not None
            mover.speed = speed
            self.movers.place(self.movers.slots[name], *pose, mover.line)
        elif name in self.channels:
            world.vehicles[name].teleport(
                pose[0], pose[1], math.degrees(pose[2]), speed=max(speed, 0.0)
            )
        if name in self.channels:
            self.channels[name].ramps["speed"] = Ramp.hold(speed)
            self.channels[name].sent = None
            self._take_route(name, [], scene, pose)
        world.teleported()

    def _enter_at(self, name: str, pose: Pose, speed: float) -> None:
        """An entity added at this look and given a step speed enters at that speed.

        As Init's step speeds start their cars at theirs: there is no car to bring up to it yet.
        """
        world = self.world
        assert world is not None
        mover = self._mover(name)
        if mover is not None:
            mover.speed = speed
        else:
            x, y, heading = pose
            world.vehicles[name].teleport(x, y, math.degrees(heading), speed=max(speed, 0.0))
            world.teleported()

    def _leave(self, name: str) -> None:
        """``name`` leaves the world: a kinematic one is gone, a car is parked far away."""
        world = self.world
        assert world is not None
        self.absent.add(name)
        mover = self._mover(name)
        if mover is not None:
            mover.present = False
        elif name in self.channels or name in world.index:
            row = world.row(name)
            world.vehicles[name].teleport(AWAY + 100.0 * row, -AWAY, 0.0, speed=0.0)
        if name in self.channels:
            self.channels[name].ramps["speed"] = Ramp.hold(0.0)
        world.teleported()

    def _keep_distance(
        self, actor: str, run: SteeredRun, scene: Scene, at_once: bool = False
    ) -> None:
        """A LongitudinalDistanceAction's look: the speed that closes the gap to the wanted.

        ``at_once`` (no dynamic limits: esmini puts the actor there) moves it there first.
        """
        do = run.action.action
        assert isinstance(do, m.LongitudinalDistanceAction)
        ahead, _ = scene.offsets(do.entity, actor, do.freespace)
        sign = 1.0 if do.ahead else -1.0
        gap = sign * ahead
        follower = do.entity if do.ahead else actor
        wanted = do.distance if do.distance is not None else (
            (do.time_gap or 0.0) * max(scene.value("speed", follower), 0.0)
        )  # fmt: skip
        reference = scene.along(do.entity, actor)
        if at_once:  # moved along the entity's heading, on the actor's own line
            turn = scene.value("yaw", actor) - scene.value("yaw", do.entity)
            self._shift(actor, sign * (wanted - gap) * math.cos(turn), reference, scene)
            gap = wanted
        speed = reference + sign * DISTANCE_GAIN * (wanted - gap)
        period = self.world.spec.driver_period if self.world is not None else 0.01
        if do.max_acceleration is not None:
            speed = min(speed, run.speed + do.max_acceleration * period)
        if do.max_deceleration is not None:
            speed = max(speed, run.speed - do.max_deceleration * period)
        if do.max_speed is not None:
            speed = min(speed, do.max_speed)
        run.speed = max(speed, 0.0)
        self.channels[actor].ramps["speed"] = Ramp.hold(run.speed)
        if (
            not do.continuous
            and abs(gap - wanted) < DISTANCE_REACHED
            and abs(scene.value("speed", actor) - reference) < DISTANCE_REACHED
        ):
            run.done = True

    def _keep_aside(self, actor: str, run: SteeredRun, scene: Scene) -> None:
        """A LateralDistanceAction's look: the lane offset that closes the distance across.

        The distance is to the entity's left, in its frame; the actor moves across as
        esmini's road coordinate system moves it: without limits at once (a car moved
        sideways), with ``maxSpeed`` only at that lateral speed (at most its own speed), with
        ``maxAcceleration`` as a critically damped spring of stiffness 0.4 ``maxAcceleration``
        held within both limits. Not continuous, it ends within ``ASIDE_REACHED``.
        """
        do = run.action.action
        assert isinstance(do, m.LateralDistanceAction)
        _, left = scene.offsets(do.entity, actor, do.freespace)
        wanted = run.aside if run.aside is not None else (do.distance or 0.0)
        if do.side == "right" or (do.side == "any" and left < 0 and run.aside is None):
            wanted = -abs(wanted)
        elif run.aside is None:
            wanted = abs(wanted)
        turn = scene.value("yaw", actor) - scene.value("yaw", do.entity)
        facing = 1.0 if math.cos(turn) >= 0.0 else -1.0  # the entity's left is the actor's
        error = facing * (wanted - left)  # metres to move to the actor's left
        period = self.world.spec.driver_period if self.world is not None else 0.01
        fastest = min(do.max_speed or math.inf, abs(self._speed_of(actor, scene)))
        if do.max_speed is None and do.max_acceleration is None:
            if abs(error) > ASIDE_REACHED:  # esmini sets the lane position each step
                self._shift_across(actor, error, scene)
            run.across = 0.0
            run.speed += error
        elif do.max_acceleration is None:
            error -= self._lagging(actor, run.speed, scene)  # the ghost's, as esmini's entity
            step = max(-fastest * period, min(fastest * period, error))
            run.speed += step
            run.across = step / period
        else:
            error -= self._lagging(actor, run.speed, scene)
            stiffness = ASIDE_SPRING * do.max_acceleration
            pull = stiffness * error - 2.0 * math.sqrt(stiffness) * run.across
            pull = max(-do.max_acceleration, min(do.max_acceleration, pull))
            run.across = max(-fastest, min(fastest, run.across + pull * period))
            run.speed += run.across * period
        before = run.speed - run.across * period  # where it is now, moving at its rate
        self.channels[actor].ramps["lane"] = Ramp(
            scene.time, before, before + run.across, 1.0, "linear"
        )
        if not do.continuous and abs(error) < ASIDE_REACHED:
            run.done = True
            self.channels[actor].ramps["lane"] = Ramp.hold(run.speed)  # and stays there

    def _halt_at_road_end(self, scene: Scene) -> None:
        """An entity the storyboard drives past the end of its road is told to stand.

        esmini stops an entity at the end of its road (``lane_change_simple.xosc`` waits for
        it there, then teleports it back and starts it again); a car brakes to a stop. From
        the look after it got there (one its storyboard moves on at once keeps its speed, as
        in esmini), once per passing: a speed action started afterwards drives it on.
        """
        world = self.world
        if self.network is None or world is None or not self.channels:
            return
        drivers, paths = world.drivers, world.paths
        q = drivers.path_of
        rear = world.geometry["rear"][drivers.rows]
        past = (drivers.arc + rear >= paths.cum[paths.ends[q] - 1]) & ~paths.closed[q]
        candidates = {world.names[int(row)] for row in drivers.rows[past]}
        self.halted &= candidates  # one back before its path's end (teleported) drives again
        if not candidates - self.halted:
            return  # no car newly past its path's end: none newly past its road's (no search)
        where = self.tests.located(scene)
        for name in candidates - self.halted:
            channels = self.channels.get(name)
            if channels is None:
                continue
            at = where.get(name)
            if at is None or not at.beyond or name in self.following or name in self.absent:
                self.halted.discard(name)
                continue
            if self.tests.beyond_since.get(name, scene.time) >= scene.time:
                continue  # from the look after it got there: one teleported at once keeps going
            self.halted.add(name)
            owner = channels.owners.get("speed")
            if owner is not None and not owner.done:
                owner.done = owner.overridden = True
            channels.owners.pop("speed", None)
            channels.ramps["speed"] = Ramp.hold(0.0)

    def _lagging(self, actor: str, offset: float, scene: Scene) -> float:
        """How far left of the car its commanded ``offset`` from its path is (0: off it)."""
        if self._mover(actor) is not None:
            return 0.0  # a kinematic entity is where it is told
        try:
            road_id, s, _, t = on_lane(self.network, scene.pose(actor), actor)
            return offset - self._from_path(actor, road_id, s, 0, t)
        except (PlaceError, ScenarioRunError):
            return 0.0

    def _keep_relative_offset(self, channels: Channels, scene: Scene) -> None:
        """A continuous lane offset relative to an entity follows the entity's offset."""
        run = channels.owners.get("offset")
        do = None if run is None else run.action.action
        if run is None or run.done or not isinstance(do, m.LaneOffsetAction):
            return
        if (
            not run.continuous
            or do.entity is None
            or not channels.ramps["offset"].arrived(scene.time)
        ):
            return
        try:
            offset = self._offset_beside(run.actor, do.entity, do.value, scene)
        except PlaceError:  # off every lane for now: the offset it has, held
            return
        channels.ramps["offset"] = Ramp.hold(offset)

    def _shift(self, actor: str, ds: float, speed: float, scene: Scene) -> None:
        """Move ``actor`` ``ds`` metres on along the line it follows, at ``speed``."""
        world = self.world
        assert world is not None
        mover = self._mover(actor)
        if mover is not None:
            mover.s += ds
            mover.speed = speed
            assert self.movers is not None
            x, y, h = mover.at(mover.s, mover.offset)
            self.movers.place(self.movers.slots[actor], x, y, h, mover.line)
        elif actor in self.channels:
            x, y, h = scene.pose(actor)
            x, y = x + ds * math.cos(h), y + ds * math.sin(h)
            world.vehicles[actor].teleport(x, y, math.degrees(h), speed=max(speed, 0.0))
            world.drivers.hint[self._driver(actor)] = -1
        world.teleported()

    def _shift_across(self, actor: str, left: float, scene: Scene) -> None:
        """Move a car ``left`` metres to its left at once (a lane change without duration).

        A kinematic entity takes its new offset from its lane ramp by itself.
        """
        world = self.world
        assert world is not None
        if self._mover(actor) is not None or actor not in self.channels:
            return
        x, y, h = scene.pose(actor)
        x, y = x - left * math.sin(h), y + left * math.cos(h)
        speed = scene.value("speed", actor)
        world.vehicles[actor].teleport(x, y, math.degrees(h), speed=max(speed, 0.0))
        world.drivers.hint[self._driver(actor)] = -1
        world.teleported()

    def _synchronize(self, actor: str, run: SteeredRun, scene: Scene) -> None:
        """A SynchronizeAction's look: the speed that arrives when the master does."""
        do = run.action.action
        assert isinstance(do, m.SynchronizeAction)
        poses = scene.all_poses()
        mx, my, _ = resolve(do.master_target, self.network, poses)
        tx, ty, _ = resolve(do.target, self.network, poses)
        master = scene.pose(do.master)
        to_go = math.hypot(mx - master[0], my - master[1])
        final = do.final
        if final is not None and do.relative is not None:
            v = scene.value("speed", do.master)
            final = v + final if do.relative == "delta" else v * final
        if to_go <= do.master_tolerance:
            run.done = True
            if final is not None:
                self.channels[actor].ramps["speed"] = Ramp.hold(max(final, 0.0))
            return
        left = to_go / max(scene.value("speed", do.master), 0.1)
        here = scene.pose(actor)
        mine = math.hypot(tx - here[0], ty - here[1])
        speed = mine / left if final is None else 2.0 * mine / left - final
        run.speed = max(speed, 0.0)
        self.channels[actor].ramps["speed"] = Ramp.hold(run.speed)

    def _take_route(
        self,
        actor: str,
        waypoints: list[Pose],
        scene: Scene,
        pose: Pose | None = None,
        draw: np.random.Generator | None = None,
    ) -> np.ndarray:
        """Put ``actor`` on the lanes through ``waypoints`` (from its own): the line it drives.

        It eases onto the route's lane within a couple of seconds; off every lane (and with no
        waypoint) it drives straight on.
        """
        world, network = self.world, self.network
        pose = scene.pose(actor) if pose is None else pose
        assert world is not None
        try:
            road_id, _, lane, _ = on_lane(network, pose, actor)
            start: tuple[str, int] | None = (road_id, lane)
        except PlaceError:
            start = None
        mover = self._mover(actor)
        if start is None and not waypoints:
            legs: list[tuple[str, int]] = []
            line = straight_line(*pose)
        elif self.carla and mover is not None and mover.kind == "pedestrian" and waypoints:
            # scenario_runner walks a walker straight to each waypoint in turn (its
            # pedestrian controller), through no lane: on beyond the last
            legs = []
            line = np.array([pose[:2], *(w[:2] for w in waypoints)], dtype=float)
        else:
            try:
                legs = plan_route(network, start, waypoints, actor, draw)
            except PlaceError as exc:
                # no way from its lane: from the lane of its road that runs the way it faces
                turned = facing_lane(network, pose) if start and waypoints and network else None
                if turned is None or turned == start:
                    raise ScenarioRunError(exc.problems[0]) from None
                try:
                    legs, start = plan_route(network, turned, waypoints, actor, draw), turned
                except PlaceError:
                    raise ScenarioRunError(exc.problems[0]) from None
            assert network is not None
            line = route_line(network, legs, None if start is None else start[1])
        self.legs[actor] = {road: lane for road, lane in reversed(legs)}
        if mover is not None:
            mover.follow(line)
            mover.s, off = mover.locate(*pose[:2])
        else:
            q = world.paths.add(f"{actor} route {len(world.paths.index)}", line)
            k = self._driver(actor)
            world.drivers.path_of[k] = q
            world.drivers.hint[k] = -1
            _, off = locate(line, arc_lengths(line), pose[0], pose[1])
        now = scene.time
        channels = self.channels[actor]
        channels.ramps["lane"] = Ramp(now, off, 0.0, max(1.0, abs(off) / 1.5), "sinusoidal")
        channels.ramps["offset"] = Ramp.hold(0.0)
        return line

    def _follow_lane(self, actor: str) -> None:
        """After a lane change, the actor follows its new lane where the route would not.

        A lane change into an exit lane or at a road's split follows the branch its new lane
        leads into (esmini drives on in its lane), where the route it had goes on along the
        main road. Where the new lane leads along the same roads, the route stays.
        """
        network = self.network
        if network is None or actor not in self.channels or actor in self.against:
            return
        scene = self._scene()
        try:
            road_id, _, lane, _ = on_lane(network, scene.pose(actor), actor)
            ahead = plan_route(network, (road_id, lane), [], actor)
        except PlaceError:  # off every lane, or no lane ahead: as it was
            return
        roads = [road for road, _ in ahead]
        had = list(reversed(self.legs.get(actor, {})))  # the route's roads, in order
        if road_id in had and had[had.index(road_id) :][: len(roads)] == roads:
            return
        channels = self.channels[actor]
        offset = channels.ramps["lane"].at(scene.time)[0]
        line = self._take_route(actor, [], scene)
        _, off = locate(line, arc_lengths(line), *scene.pose(actor)[:2])
        channels.ramps["lane"] = Ramp.hold(off if math.isfinite(off) else offset)

    def _lane_offset(self, actor: str, do: m.LaneChangeAction, scene: Scene) -> float:
        """The offset from the actor's path of the target lane's centre (+ targetLaneOffset).

        The lane is taken where the change is to end (a lane that opens, as a 2+1 road's
        passing lane, has no width yet where the change begins).
        """
        road_id, s, lane, _ = on_lane(self.network, scene.pose(actor), actor)
        assert self.network is not None
        target = do.lane
        if do.entity is not None:
            ref_road, _, ref_lane, _ = on_lane(self.network, scene.pose(do.entity), do.entity)
            # to the entity's left as it heads (esmini's), not as its lane's traffic drives:
            # a truck in the oncoming lane changes back by -1 (lane_change_trig_by_variable)
            along_s = self.network.forward(ref_road, ref_lane) != against(
                self.network, scene.pose(do.entity)
            )
            target = shift_lane(ref_lane, do.lane, along_s)
        speed = scene.value("speed", actor)
        ahead = speed * change_duration(do.dynamics, speed, LANE_WIDTH)
        forward = self.network.forward(road_id, lane) != (actor in self.against)
        end = min(max(s + (ahead if forward else -ahead), 0.0), self.network.road(road_id).length)
        try:
            centre = self._from_path(actor, road_id, end, target)
        except ScenarioRunError:  # the lane ends before the change would: where it begins
            centre = self._from_path(actor, road_id, s, target)
        return centre + do.target_offset

    def _from_path(
        self, actor: str, road_id: str, s: float, lane: int, t: float | None = None
    ) -> float:
        """How far left of the actor's path a lane's centre (or the point at ``t``) is.

        The path is the actor's route's lane on this road.
        """
        assert self.network is not None
        path_lane = self.legs[actor].get(road_id)
        if path_lane is None:
            raise ScenarioRunError(f"{actor} is on road {road_id!r}, off the route it drives")
        road = self.network.road(road_id)
        where = float(road.lane_t(s, lane)[0]) if t is None else t
        if not math.isfinite(where):
            raise ScenarioRunError(f"road {road_id!r} has no lane {lane} at s = {s:.1f} m")
        path_lane = self.network.lane_id_at(road_id, path_lane, s)
        across = where - float(road.lane_t(s, path_lane)[0])
        forward = self.network.forward(road_id, path_lane) != (actor in self.against)
        return across if forward else -across

    def _offset_beside(self, actor: str, entity: str, value: float, scene: Scene) -> float:
        """The lane offset that puts ``actor`` ``value`` m left of ``entity`` (its left).

        As esmini: the entity's lateral position on the road plus ``value`` along the
        entity's left, as an offset from the actor's own lane centre, possibly beyond its
        lane (into the entity's). On another road than the entity's: its offset in its lane.
        """
        assert self.network is not None
        road_id, s, lane, t = on_lane(self.network, scene.pose(entity), entity)
        mine, s_mine, my_lane, _ = on_lane(self.network, scene.pose(actor), actor)
        my_lane = self.legs.get(actor, {}).get(mine, my_lane)  # the lane its offset is from
        if mine != road_id:
            return value + self._offset_in_lane(entity, scene)
        wanted = t + (value if self.network.forward(road_id, lane) else -value)
        across = wanted - float(self.network.road(mine).lane_t(s_mine, my_lane)[0])
        return across if self.network.forward(mine, my_lane) else -across

    def _offset_in_lane(self, name: str, scene: Scene) -> float:
        """How far left of its lane's centre an entity is."""
        road_id, s, lane, t = on_lane(self.network, scene.pose(name), name)
        assert self.network is not None
        across = t - float(self.network.road(road_id).lane_t(s, lane)[0])
        return across if self.network.forward(road_id, lane) else -across

    def _keep_relative_speed(self, channels: Channels, scene: Scene) -> None:
        """A relative speed's ramp ends at its entity's speed as it is now (as esmini's does).

        A continuous one, once arrived, tracks it.
        """
        run = channels.owners.get("speed")
        if run is None or run.done:
            return
        ramp = channels.ramps["speed"]
        do = run.action.action
        if not isinstance(do, m.SpeedAction) or do.entity is None:
            return
        arrived = ramp.arrived(scene.time)
        if arrived and not run.continuous:
            return
        ref = self._speed_of(do.entity, scene)
        target = max(ref + do.value if do.relative == "delta" else ref * do.value, 0.0)
        if arrived:
            channels.ramps["speed"] = Ramp.hold(target)
        else:
            channels.ramps["speed"] = Ramp(ramp.t0, ramp.start, target, ramp.duration, ramp.shape)

    def _performed(self, name: str, ramp: Ramp) -> Ramp:
        """A speed ramp slowed to what the entity's Performance allows, as esmini holds it.

        esmini limits every step of a SpeedAction's transition to the entity's maxAcceleration
        and maxDeceleration (a step shape excepted: set at once); here the ramp's duration
        stretches until its steepest rate is within the limit.
        """
        entity = self.scenario.entities[name]
        change = ramp.end - ramp.start
        limit = entity.max_acceleration if change > 0 else entity.max_deceleration
        if ramp.shape == "step" or ramp.duration <= 0.0 or not math.isfinite(limit):
            return ramp  # esmini sets a step's speed when the action starts, unlimited
        if abs(change) < 1e-9:
            return ramp  # esmini sets a step's speed when the action starts, unlimited
        least = abs(change) * PEAK_RATE[ramp.shape] / limit
        if ramp.duration >= least:
            return ramp
        return Ramp(ramp.t0, ramp.start, ramp.end, least, ramp.shape)

    def _speed_of(self, name: str, scene: Scene) -> float:
        """An entity's speed as the storyboard means it (esmini's entity speed).

        The speed it commands a car it drives (the car itself may lag a demand it cannot
        follow), else the speed measured.
        """
        channels = self.channels.get(name)
        following = self.following.get(name)
        if channels is None or (following is not None and following.times is not None):
            return scene.value("speed", name)  # a schedule's: measured (a mover's is signless)
        speed = channels.ramps["speed"].at(scene.time)[0]
        if channels.sent is None or scene.time <= channels.sent[0]:
            return speed
        dt, sent = scene.time - channels.sent[0], channels.sent[1]
        return min(max(speed, sent - channels.fall * dt), sent + channels.rise * dt)

    # -- trajectories -----------------------------------------------------------------------
    def _driver(self, actor: str) -> int:
        """The actor's index among the world's built-in drivers."""
        world = self.world
        assert world is not None
        return world.drivers.position[world.row(actor)]

    def _start_trajectory(
        self, action: m.Action, actor: str, do: m.FollowTrajectoryAction, now: float
    ) -> TrajectoryRun:
        """Switch the actor's driver onto the trajectory's path (with its timing, its speed)."""
        world = self.world
        assert world is not None
        scene = self._scene()
        points, scheduled = layout(
            do.trajectory, self.network, scene.all_poses(), scene.pose(actor), repeats=True
        )
        cum = arc_lengths(points)  # a vertex given twice: its times are a stop (the schedule's)
        points = points[np.concatenate(([True], np.diff(cum) > 1e-6))]
        if len(points) < 2:
            raise ScenarioRunError(f"{actor}'s trajectory {do.trajectory.name!r} has one point")
        times = None
        if do.timing is not None:
            assert scheduled is not None  # the reader refuses timing without times
            times = scheduled * do.timing.scale + do.timing.offset
            times = times + (now if do.timing.domain == "relative" else 0.0)
        # esmini puts the actor on the trajectory at once: at its initial distance, or where
        # its schedule is now (a car 225 m away is not driven there first)
        commanded = self.channels[actor].ramps["speed"].at(now)[0]  # esmini's entity speed
        arc, moving = do.initial_offset, commanded
        if times is not None and do.timing is not None and do.timing.domain == "relative":
            times = times + now - float(np.interp(arc, cum, times))  # its clock starts there
        speeds = None
        if times is not None:
            arc = float(np.interp(now, times, cum))
            moving = schedule_speed(cum, times, now, arc, False)
            if do.mode == "follow":  # from the speed it has, one acceleration a segment
                speeds = follow_speeds(cum, times, commanded)
                moving = follow_speed(times, speeds, now)[0]
        faces = facing(
            do.trajectory, self.network, scene.all_poses(), arc,
            commanded, times is not None,
        )  # fmt: skip
        along = 1 if self.scenario.entities[actor].trajectory_heading_ignored else faces
        mover = self._mover(actor)
        if mover is None and times is None and along < 0:  # a car drives it end to start
            points, arc, along = points[::-1], float(cum[-1]) - arc, 1
        paths = world.paths
        q = paths.add(f"{actor} trajectory {len(paths.index)}", points)
        if times is None:  # else the schedule's arcs (a stop repeats one), its length the same
            cum = paths.cum[paths.starts[q] : paths.ends[q]]
        run = TrajectoryRun(action, actor, q, cum, times, do.mode == "position")
        run.facing, run.speeds = along, speeds
        channels = self.channels[actor]
        channels.take(run)
        channels.ramps["offset"] = Ramp.hold(0.0)
        if times is not None:  # the schedule drives the speed: a running speed action ends
            speed = channels.owners.get("speed")
            if speed is not None and not speed.done:
                speed.done = speed.overridden = True
            channels.owners["speed"] = run
        x, y, h, _ = point_at(
            paths.points, paths.cum, paths.starts[q], paths.ends[q], False, arc, 0.0, 0
        )
        here = scene.pose(actor)
        away = math.hypot(here[0] - x, here[1] - y) > TRAJECTORY_END
        if mover is not None:
            mover.follow(paths.points[paths.starts[q] : paths.ends[q]])
            mover.s, _ = mover.locate(*here[:2])
            mover.facing = faces
            if away:
                mover.offset = 0.0
                self._shift(actor, arc - mover.s, moving, scene)
        else:
            k = self._driver(actor)
            world.drivers.path_of[k] = q
            world.drivers.hint[k] = -1
            if away:  # put there at once, heading along the trajectory
                world.vehicles[actor].teleport(x, y, math.degrees(h), speed=max(moving, 0.0))
                world.teleported()
        self.following[actor] = run
        return run

    def _arrive(self, actor: str) -> None:
        """An AcquirePositionAction is done once its actor has come to where it drives to."""
        world, run = self.world, self.arriving[actor]
        assert world is not None
        mover = self._mover(actor)
        if mover is not None:
            arc = mover.s
        else:
            k = self._driver(actor)
            if world.drivers.hint[k] < 0:
                return  # the driver has not looked at its new path yet
            arc = float(world.drivers.arc[k]) + float(world.geometry["rear"][world.row(actor)])
        if run.done or arc >= run.arrive - TRAJECTORY_END:
            run.done = True
            del self.arriving[actor]

    def _mover(self, actor: str) -> Mover | None:
        """The kinematic object ``actor`` is (None: it is a vehicle of the world)."""
        movers = self.movers
        slot = None if movers is None else movers.slots.get(actor)
        return None if slot is None or movers is None else movers.movers[slot]

    def _follow(self, actor: str, now: float) -> None:
        """One look at a trajectory being followed: its end, or the speed its schedule wants."""
        world = self.world
        assert world is not None
        run, mover = self.following[actor], self._mover(actor)
        if mover is not None:
            arc = mover.s
        else:
            k = self._driver(actor)
            if world.drivers.hint[k] < 0 and not run.done:
                return  # the driver has not looked at the trajectory yet: its arc is the route's
            arc = float(world.drivers.arc[k]) + float(world.geometry["rear"][world.row(actor)])
        channels = self.channels[actor]
        ahead = 1.0  # which way along the path it moves: a kinematic one, untimed, maybe back
        if mover is not None and run.times is None:
            ahead = channels.ramps["speed"].at(now)[0] * run.facing
        near = TRAJECTORY_END if mover is None else 1e-6  # a kinematic one gets there exactly
        if not run.done and (
            (ahead > 0.0 and arc >= run.cum[-1] - near) or (ahead < 0.0 and arc <= near)
        ):
            run.done = True
        if run.done:
            self._leave_trajectory(actor)
            return
        if run.times is not None and channels.owners.get("speed") is run:
            if run.speeds is not None:
                speed, rate = follow_speed(run.times, run.speeds, now)
                channels.ramps["speed"] = Ramp(now, speed, speed + rate, 1.0, "linear")
                return
            speed = schedule_speed(run.cum, run.times, now, arc, run.catch_up)
            channels.ramps["speed"] = Ramp.hold(speed)

    def _leave_trajectory(self, actor: str) -> None:
        """Back onto the actor's lane route, in the lane it is in (if its route has that road)."""
        run = self.following.pop(actor, None)
        world = self.world
        if run is None or world is None:
            return
        run.done = True
        mover = self._mover(actor)
        if self.network is None:  # esmini moves an entity no action moves along its road
            self.channels[actor].ramps["speed"] = Ramp.hold(0.0)  # with no road: it stops
        if mover is not None:
            mover.facing = 0
            self._reroute(actor, mover, self._scene().pose(actor))
            return
        try:
            road_id, s, lane, _ = on_lane(self.network, self._scene().pose(actor), actor)
            offset = self._from_path(actor, road_id, s, lane)
        except (PlaceError, ScenarioRunError):
            return  # off its route: it drives on straight beyond the trajectory's end
        k = self._driver(actor)
        world.drivers.path_of[k] = world.paths.index[actor]
        world.drivers.hint[k] = -1
        self.channels[actor].ramps["lane"] = Ramp.hold(offset)

    def _teleport(self, actor: str, do: m.TeleportAction, scene: Scene) -> None:
        world = self.world
        assert world is not None
        x, y, heading = resolve(do.position, self.network, scene.all_poses())
        mover = self._mover(actor)
        if mover is not None:
            assert self.movers is not None
            self.movers.place(self.movers.slots[actor], x, y, heading, mover.line)
            self._reroute(actor, mover, (x, y, heading))
            world.teleported()
            _moved(scene, actor, x, y, heading)
            return
        car = world.vehicles[actor]  # at the speed the storyboard has it at (esmini's)
        speed = max(self._speed_of(actor, scene), 0.0)
        car.teleport(x, y, math.degrees(heading), speed=speed)
        world.teleported()
        _moved(scene, actor, x, y, heading)
        row = world.row(actor)
        world.drivers.hint[world.drivers.position[row]] = -1
        road_id, s, _, t = on_lane(self.network, (x, y, heading), actor)
        if road_id not in self.legs.get(actor, {}):  # off its route: its lane's, from there
            self._take_route(actor, [], scene, (x, y, heading))
            return
        channels = self.channels[actor]
        channels.ramps["lane"] = Ramp.hold(self._from_path(actor, road_id, s, 0, t))
        channels.ramps["offset"] = Ramp.hold(0.0)

    def _reroute(self, actor: str, mover: Mover, pose: tuple[float, float, float]) -> None:
        """A kinematic object follows its lane's route from where it is (or straight on)."""
        line, legs = lane_line(self.network, pose)
        mover.follow(line)
        mover.s, mover.offset = mover.locate(*pose[:2])
        self.legs[actor] = {str(road): lane for road, lane in legs}
        channels = self.channels[actor]
        channels.ramps["lane"] = Ramp.hold(mover.offset)
        channels.ramps["offset"] = Ramp.hold(0.0)


def _moved(scene: Scene, actor: str, x: float, y: float, heading: float) -> None:
    """The look's pose of a teleported ``actor`` moved with it.

    The actions after the teleport in the same look (a route, a lane change in its event)
    start from where it is now, as the file's order says, not from where it was.
    """
    poses, row = scene.poses, scene.rows[actor]
    x0, y0, yaw0 = (float(poses[key][row]) for key in ("x", "y", "yaw"))
    ahead = math.hypot(float(poses["cx"][row]) - x0, float(poses["cy"][row]) - y0)
    back = math.atan2(float(poses["cy"][row]) - y0, float(poses["cx"][row]) - x0) - yaw0
    poses["x"][row], poses["y"][row], poses["yaw"][row] = x, y, heading
    poses["cx"][row] = x + ahead * math.cos(heading + back)  # its box's centre, turned with it
    poses["cy"][row] = y + ahead * math.sin(heading + back)


LONGITUDINAL = (m.SpeedAction, m.ActivateControllerAction, m.LongitudinalDistanceAction,
                m.SynchronizeAction, m.OverrideAction, m.NoEffectAction,
                m.SpeedProfileAction)  # fmt: skip
STEERED = (m.LongitudinalDistanceAction, m.SynchronizeAction, m.SpeedProfileAction,
           m.LateralDistanceAction)  # fmt: skip
"""Actions whose channel the storyboard sets at every look."""
ASIDE_SPRING = 0.4
"""1/s² per m/s² of ``maxAcceleration``: a LateralDistanceAction's spring (esmini's)."""
ASIDE_REACHED = 0.1
"""m: a LateralDistanceAction that is not continuous ends this close to its distance."""
"""Actions that leave a vehicle following its trajectory."""
LANE_WIDTH = 3.5
"""m: the lane change a change by rate is timed for when looking for where it ends."""
DISTANCE_GAIN = 0.5
"""1/s: how fast a LongitudinalDistanceAction closes the gap to the one wanted."""
DISTANCE_REACHED = 0.5
"""m and m/s: a LongitudinalDistanceAction that is not continuous ends this close to it."""


def _never(test: m.ValueCondition | m.EntityCondition) -> bool:
    """A condition that can never hold (a criterion of scenario_runner's)."""
    return isinstance(test, m.SimulationTime) and test.value == math.inf


def _modified(value: str, rule: str, by: str) -> str:
    """A parameter's (or variable's) value after a set, add or multiply."""
    if rule == "set":
        return by
    try:
        number = float(value)
    except ValueError:
        raise ScenarioRunError(f"cannot {rule} {by} to the value {value!r}") from None
    result = number + float(by) if rule == "add" else number * float(by)
    return str(int(result)) if result.is_integer() and "." not in value else repr(result)


def scenario_run(
    path: str | Path, parameters: Mapping[str, object] | None = None
) -> tuple[StoryboardFaceSpec, WorldFile]:
    """What ``vcosim sim --scenario`` runs: the storyboard face's spec and the world.

    ``parameters`` override the file's declarations (a variation); every problem of the
    file is one ``ConfigError`` before anything starts. The file is parsed once: the
    storyboard the builder attaches gets the same parse.
    """
    scenario = read_scenario(path, parameters)
    face = StoryboardFaceSpec(
        scenario=Path(path), parameters={k: str(v) for k, v in (parameters or {}).items()}
    )
    return face, scenario_world(scenario)
