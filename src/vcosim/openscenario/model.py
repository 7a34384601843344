"""An OpenSCENARIO scenario as vcosim reads it: entities, Init, and the storyboard tree.

(Past 400 lines on purpose: small frozen dataclasses, one per element of the supported subset;
split, the scenario's tree would be read across files.)

Plain frozen dataclasses, parameters already substituted, so the storyboard engine never
sees XML. Every storyboard element keeps the ``line`` it came from, for messages.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

# -- positions ------------------------------------------------------------------------------


@dataclass(frozen=True)
class WorldPosition:
    """x, y (m) and heading ``h`` (rad, anticlockwise from east)."""

    x: float
    y: float
    h: float | None = None


@dataclass(frozen=True)
class LanePosition:
    """``s`` along road ``road``, in lane ``lane``, ``offset`` left of its centre line."""

    road: str
    lane: int
    s: float
    offset: float = 0.0


@dataclass(frozen=True)
class RoadPosition:
    """(s, t) on road ``road``."""

    road: str
    s: float
    t: float


@dataclass(frozen=True)
class RelativeLanePosition:
    """``dlane`` lanes left of ``entity``'s lane, ``ds`` on.

    ``along_lane`` (the file's ``dsLane``): left and on as the lane's traffic drives, and
    heading with it; else (``ds``) in the road's frame (left is +t, on is +s), heading along
    the road's s, as esmini has them.
    """

    entity: str
    dlane: int
    ds: float
    offset: float = 0.0
    along_lane: bool = True


@dataclass(frozen=True)
class RelativeObjectPosition:
    """``dx`` ahead of and ``dy`` left of ``entity``, in its own frame."""

    entity: str
    dx: float
    dy: float


@dataclass(frozen=True)
class RelativeWorldPosition:
    """``dx`` east and ``dy`` north of ``entity``."""

    entity: str
    dx: float
    dy: float


@dataclass(frozen=True)
class RelativeRoadPosition:
    """``ds`` along and ``dt`` across the road ``entity`` is on, from where it is."""

    entity: str
    ds: float
    dt: float


@dataclass(frozen=True)
class Oriented:
    """A position with a heading ``h`` (rad): absolute, or ``relative`` to the road's s.

    Vehicles start heading along their lane: the heading must be that one.
    """

    position: (
        LanePosition
        | RoadPosition
        | RelativeLanePosition
        | RelativeObjectPosition
        | RelativeRoadPosition
        | RelativeWorldPosition
        | RoutePosition
        | TrajectoryPosition
    )
    h: float
    relative: bool = False


@dataclass(frozen=True)
class Route:
    """A route through the road network: its waypoints, in order, driven along their lanes."""

    name: str
    waypoints: tuple[Position, ...]
    closed: bool = False


@dataclass(frozen=True)
class RoutePosition:
    """``s`` along a route (from its first waypoint), ``lane`` (0: its own) and ``offset``.

    With ``entity``: where that entity is on the route, ``s`` on from there.
    """

    route: Route
    s: float
    lane: int = 0
    offset: float = 0.0
    entity: str | None = None
    t: float | None = None
    """By road coordinates: ``t`` across the road there (the lane and offset unsaid)."""


@dataclass(frozen=True)
class TrajectoryPosition:
    """``s`` along a trajectory (laid out as it is at the time), ``t`` to its left."""

    trajectory: Trajectory
    s: float
    t: float = 0.0


Position = (
    WorldPosition
    | LanePosition
    | RoadPosition
    | RelativeLanePosition
    | RelativeObjectPosition
    | RelativeRoadPosition
    | RelativeWorldPosition
    | RoutePosition
    | TrajectoryPosition
    | Oriented
)

# -- actions --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Dynamics:
    """How an action moves to its target: a ``shape`` over ``dimension`` (time, distance, rate)."""

    shape: str  # step, linear, cubic, sinusoidal
    dimension: str  # time (s), distance (m), rate (per s)
    value: float


@dataclass(frozen=True)
class SpeedAction:
    """To an absolute speed, or ``value`` relative to ``entity``'s (delta m/s or factor)."""

    dynamics: Dynamics
    value: float
    entity: str | None = None  # None: absolute target
    relative: str = "delta"  # delta or factor
    continuous: bool = False  # relative: keeps tracking the entity's speed, never ends


@dataclass(frozen=True)
class LaneChangeAction:
    """To lane ``lane`` (absolute), or ``lane`` lanes left of ``entity``'s lane (relative)."""

    dynamics: Dynamics
    lane: int
    entity: str | None = None
    target_offset: float = 0.0


@dataclass(frozen=True)
class LaneOffsetAction:
    """To ``value`` m left of the lane centre (or of ``entity``'s offset).

    The change keeps within a lateral acceleration of ``max_lateral_acc``.
    """

    shape: str
    value: float
    max_lateral_acc: float
    entity: str | None = None
    continuous: bool = False
    """It never ends by itself; relative to an entity, it follows the entity's offset."""


@dataclass(frozen=True)
class TeleportAction:
    """Put the entity at a position, keeping its speed."""

    position: Position


@dataclass(frozen=True)
class Polyline:
    """A trajectory through positions, each with its time (s) or None.

    Relative positions are taken where their entities are when the trajectory is started.
    """

    vertices: tuple[Position, ...]
    times: tuple[float | None, ...]


@dataclass(frozen=True)
class Clothoid:
    """A trajectory of ``length`` m from ``start`` (its heading too), the curvature changing.

    Curvature (1/m) ``curvature`` at the start, changing by ``curvature_rate`` (1/m²); with no
    ``start`` it starts where its entity is.
    """

    start: Position | None
    curvature: float
    curvature_rate: float
    length: float
    start_time: float | None = None
    stop_time: float | None = None


@dataclass(frozen=True)
class ClothoidSpline:
    """Clothoids end to end, from ``start`` (its heading too), or where its entity is.

    Each segment: curvature at its start and end, length, heading offset at its start.
    """

    segments: tuple[tuple[float, float, float, float], ...]
    start: Position | None
    start_time: float | None = None
    stop_time: float | None = None
    restarts: tuple[Position | None, ...] = ()
    """Where each later segment starts, if it says (esmini: there, not where the one before
    ends; its heading offset added to the position's heading)."""


@dataclass(frozen=True)
class Nurbs:
    """A NURBS curve of ``order``: control points (position, weight, time or None), knots."""

    order: int
    points: tuple[tuple[Position, float, float | None], ...]
    knots: tuple[float, ...]


@dataclass(frozen=True)
class Trajectory:
    """A named path to follow; ``index`` is its place in the file's reading order."""

    name: str
    shape: Polyline | Clothoid | ClothoidSpline | Nurbs
    index: int


@dataclass(frozen=True)
class Timing:
    """A trajectory's times: ``absolute`` (simulation time) or ``relative`` (to the start).

    A vertex time ``t`` is reached at ``t * scale + offset``.
    """

    domain: str
    scale: float
    offset: float


@dataclass(frozen=True)
class FollowTrajectoryAction:
    """Steer along ``trajectory``; with ``timing``, be at each vertex at its time.

    ``mode`` ``position`` corrects the speed for lagging or leading the schedule; ``follow``
    drives each segment's speed only.
    """

    trajectory: Trajectory
    timing: Timing | None
    mode: str = "position"
    initial_offset: float = 0.0
    """m along the trajectory where the entity starts following it (put there at once)."""


@dataclass(frozen=True)
class ActivateControllerAction:
    """Switch an entity's controller on (True) or off (False) laterally / longitudinally."""

    lateral: bool | None
    longitudinal: bool | None


@dataclass(frozen=True)
class AssignRouteAction:
    """Drive along ``route`` from where the entity is.

    The shortest way through its waypoints, then on along the lanes it leads to.
    """

    route: Route


@dataclass(frozen=True)
class RandomRouteAction:
    """Drive on from where the entity is, at each junction a way drawn at random (seeded).

    OpenSCENARIO 1.3's, without attributes: the storyboard draws from one generator seeded
    with ``storyboard.RANDOM_ROUTE_SEED``, so a run is the same every time.
    """


@dataclass(frozen=True)
class AcquirePositionAction:
    """Drive to ``position`` along the roads; done when there."""

    position: Position


@dataclass(frozen=True)
class EnvironmentAction:
    """The environment from now: road friction (a factor on the terrain's), time, weather.

    ``weather`` keeps what the file says (``fog.visualRange``: "100", ...) for the faces.
    """

    friction: float | None = None
    time_of_day: str | None = None
    weather: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class ParameterAction:
    """Set a parameter (or a 1.2 variable) to ``value``, or add to or multiply it by it."""

    name: str
    rule: str  # set, add, multiply
    value: str
    variable: bool = False


@dataclass(frozen=True)
class AddEntityAction:
    """``entity`` enters the world at ``position``."""

    entity: str
    position: Position


@dataclass(frozen=True)
class DeleteEntityAction:
    """``entity`` leaves the world."""

    entity: str


@dataclass(frozen=True)
class TrafficSignalStateAction:
    """The traffic signal named ``name`` shows ``state`` from now (the storyboard's record)."""

    name: str
    state: str


GlobalAction = (
    EnvironmentAction
    | ParameterAction
    | AddEntityAction
    | DeleteEntityAction
    | TrafficSignalStateAction
)
"""An action on the scenario as a whole: it runs once, whoever the event's actors are."""
GLOBAL_ACTIONS = (EnvironmentAction, ParameterAction, AddEntityAction, DeleteEntityAction,
                  TrafficSignalStateAction)  # fmt: skip


@dataclass(frozen=True)
class LongitudinalDistanceAction:
    """Keep (or reach) a distance, or a time gap at the own speed, to ``entity``.

    ``ahead``: the actor in front of the entity (``leadingReferencedEntity``), else behind.
    Without limits (``max_acceleration`` ...) the actor is put there at once, as esmini does.
    """

    entity: str
    distance: float | None
    time_gap: float | None
    freespace: bool
    continuous: bool
    ahead: bool
    max_acceleration: float | None = None
    max_deceleration: float | None = None
    max_speed: float | None = None


@dataclass(frozen=True)
class SpeedProfileAction:
    """Speeds one after another, each ``(speed, time)`` reached ``time`` s after the last.

    A time None: as fast as ``max_acceleration``/``max_deceleration`` allow, else at once;
    with ``entity``, speeds relative to its speed at the start.
    """

    entries: tuple[tuple[float, float | None], ...]
    entity: str | None = None
    max_acceleration: float | None = None
    max_deceleration: float | None = None
    following: str = "follow"  # "position": straight between entries; "follow": bends rounded
    max_acceleration_rate: float | None = None
    max_deceleration_rate: float | None = None


@dataclass(frozen=True)
class LateralDistanceAction:
    """Keep (or reach) ``distance`` m to the side of ``entity`` (``side``: left, right, any).

    ``distance`` None: keep the distance there is at the start.
    """

    entity: str
    distance: float | None
    side: str
    freespace: bool
    continuous: bool
    max_speed: float | None = None
    max_acceleration: float | None = None


@dataclass(frozen=True)
class SynchronizeAction:
    """Reach ``target`` when ``master`` reaches ``master_target``, at a final speed.

    ``final`` is an absolute speed, or with ``relative`` ("delta", "factor") one relative to
    the master's at arrival; None: no final speed asked for.
    """

    master: str
    master_target: Position
    target: Position
    final: float | None = None
    relative: str | None = None
    master_tolerance: float = 1.0
    tolerance: float = 1.0


@dataclass(frozen=True)
class OverrideAction:
    """Inputs forced on a vehicle, over its driver or its coupled controller, while active.

    ``values``: (input name, value, active) for throttle, brake, clutch, parkingbrake,
    steering (already the model's -1..1) and gear.
    """

    values: tuple[tuple[str, float, bool], ...]


@dataclass(frozen=True)
class NoEffectAction:
    """An action read and accepted that changes nothing vcosim simulates (lights, looks)."""

    kind: str


PrivateAction = (
    SpeedAction
    | LaneChangeAction
    | LaneOffsetAction
    | TeleportAction
    | FollowTrajectoryAction
    | ActivateControllerAction
    | AssignRouteAction
    | RandomRouteAction
    | AcquirePositionAction
    | LongitudinalDistanceAction
    | LateralDistanceAction
    | SpeedProfileAction
    | SynchronizeAction
    | OverrideAction
    | NoEffectAction
)

# -- conditions -----------------------------------------------------------------------------


@dataclass(frozen=True)
class SimulationTime:
    """The simulation time against ``value`` (s)."""

    value: float
    rule: str


@dataclass(frozen=True)
class ElementState:
    """A storyboard element (by kind and name) is in ``state`` or passes a transition.

    ``name`` may be qualified by the names of the elements it is in, ``::`` between them
    (OpenSCENARIO 1.1 on: ``CutInEvent::Action``, where several events hold an ``Action``).
    """

    kind: str
    name: str
    state: str

    def names(self, path: tuple[str, ...]) -> bool:
        """Whether ``name`` names the element whose names from its story down are ``path``.

        A qualified name is the end of the element's path, its parts whole (as esmini
        resolves one: the path's rightmost part).
        """
        parts = tuple(self.name.split("::"))
        if path[-1:] == (self.name,):
            return True
        return len(parts) <= len(path) and path[len(path) - len(parts) :] == parts


@dataclass(frozen=True)
class ParameterCondition:
    """A parameter's value against ``value`` (numbers, else text).

    ``declared``: the parameter's value where the condition is, as read (a parameter a Story
    declares is not among the scenario's); None: not declared there (never true, as esmini).
    """

    parameter: str
    value: str
    rule: str
    declared: str | None = None
    variable: bool = False
    """A 1.2 VariableCondition: ``parameter`` names a variable."""


@dataclass(frozen=True)
class Speed:
    """The entity's speed (m/s); a ``direction``: that component of its velocity."""

    value: float
    rule: str
    direction: str | None = None  # longitudinal, lateral, vertical (in its own frame)


@dataclass(frozen=True)
class Acceleration:
    """The entity's acceleration along its heading (m/s2), or its ``direction`` component."""

    value: float
    rule: str
    direction: str | None = None


@dataclass(frozen=True)
class RelativeSpeed:
    """The entity's speed minus ``entity``'s (m/s)."""

    entity: str
    value: float
    rule: str
    direction: str | None = None  # that component of the velocities, the reference's frame


@dataclass(frozen=True)
class ReachPosition:
    """Within ``tolerance`` metres of a position."""

    position: Position
    tolerance: float


@dataclass(frozen=True)
class Distance:
    """To a position (``entity`` None) or an entity (RelativeDistanceCondition)."""

    value: float
    rule: str
    freespace: bool
    measure: str  # longitudinal, lateral, cartesian
    position: Position | None = None
    entity: str | None = None
    system: str = "entity"  # entity, road, lane


@dataclass(frozen=True)
class TimeHeadway:
    """Seconds to cover the distance to ``entity`` ahead at the own speed."""

    entity: str
    value: float
    rule: str
    freespace: bool
    measure: str = "longitudinal"
    system: str = "entity"


@dataclass(frozen=True)
class TimeToCollision:
    """Seconds until reaching ``entity`` (or a position) at today's speeds."""

    value: float
    rule: str
    freespace: bool
    entity: str | None = None
    position: Position | None = None
    measure: str = "longitudinal"
    system: str = "entity"


@dataclass(frozen=True)
class CollisionCondition:
    """A collision with ``entity``, or with any entity of ``kind`` (both None: with anything)."""

    entity: str | None
    kind: str | None = None  # vehicle, pedestrian, miscellaneous


@dataclass(frozen=True)
class EndOfRoad:
    """Beyond the end of its road (off every lane) for ``duration`` seconds."""

    duration: float


@dataclass(frozen=True)
class Offroad:
    """Off every lane for ``duration`` seconds."""

    duration: float


@dataclass(frozen=True)
class StandStill:
    """Standing (speed below ``conditions.STAND_STILL``) for ``duration`` seconds."""

    duration: float


@dataclass(frozen=True)
class TraveledDistance:
    """At least ``value`` metres driven since the start (the entity's odometer)."""

    value: float


@dataclass(frozen=True)
class RelativeClearance:
    """No entity (of ``entities``; none listed: any) in the lanes and stretch around.

    ``lanes`` are (from, to) ranges of lanes left of the entity's (0 its own); the stretch is
    ``backward`` m behind to ``forward`` m ahead along the road; ``opposite``: lanes of the
    other direction count too.
    """

    entities: tuple[str, ...]
    lanes: tuple[tuple[int, int], ...]
    forward: float
    backward: float
    freespace: bool
    opposite: bool


@dataclass(frozen=True)
class Angle:
    """The heading (rad) within ``tolerance`` of ``value``: absolute, to the road or lane.

    ``entity`` given (RelativeAngleCondition): relative to that entity's heading.
    """

    value: float
    tolerance: float
    system: str  # entity, world, road, lane
    entity: str | None = None


@dataclass(frozen=True)
class TrafficSignalCondition:
    """A traffic signal (by the name the file gives it) shows ``state``."""

    name: str
    state: str


ValueCondition = SimulationTime | ElementState | ParameterCondition | TrafficSignalCondition
EntityTest = (
    Speed
    | Acceleration
    | RelativeSpeed
    | ReachPosition
    | Distance
    | TimeHeadway
    | TimeToCollision
    | CollisionCondition
    | EndOfRoad
    | Offroad
    | StandStill
    | TraveledDistance
    | RelativeClearance
    | Angle
)


@dataclass(frozen=True)
class EntityCondition:
    """``test`` of the triggering entities, true when ``any`` (or all) of them pass."""

    entities: tuple[str, ...]
    any: bool
    test: EntityTest


@dataclass(frozen=True)
class Condition:
    """A test with its edge and delay; ``line`` is where it is in the file."""

    name: str
    delay: float
    edge: str  # none, rising, falling, risingOrFalling
    test: ValueCondition | EntityCondition
    line: int


@dataclass(frozen=True)
class Trigger:
    """True when all conditions of any group are (OR of ANDs); no groups: never."""

    groups: tuple[tuple[Condition, ...], ...]


# -- the storyboard -------------------------------------------------------------------------


@dataclass(frozen=True)
class Action:
    """An action of a storyboard event: on each of its actors, or global."""

    name: str
    action: PrivateAction | GlobalAction
    line: int


@dataclass(frozen=True)
class Event:
    """Actions started together when its trigger fires, up to ``max_count`` times."""

    name: str
    priority: str  # override (overwrite), skip, parallel
    max_count: int
    actions: tuple[Action, ...]
    start: Trigger | None
    line: int


@dataclass(frozen=True)
class Maneuver:
    """Events of the group's actors."""

    name: str
    events: tuple[Event, ...]
    line: int


@dataclass(frozen=True)
class ManeuverGroup:
    """Maneuvers for ``actors``, run up to ``max_count`` times.

    ``select``: the file's ``selectTriggeringEntities``: the entities whose conditions fired
    the enclosing act's start trigger are actors too.
    """

    name: str
    max_count: int
    actors: tuple[str, ...]
    maneuvers: tuple[Maneuver, ...]
    line: int
    select: bool = False


@dataclass(frozen=True)
class Act:
    """Maneuver groups started by ``start`` and ended by ``stop`` (or when all end)."""

    name: str
    groups: tuple[ManeuverGroup, ...]
    start: Trigger | None
    stop: Trigger | None
    line: int


@dataclass(frozen=True)
class Story:
    """Acts."""

    name: str
    acts: tuple[Act, ...]
    line: int


# -- the scenario ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Entity:
    """An entity: what it is, its box, and who drives it.

    A car or van driven from outside or by the storyboard is a physical vehicle of the world
    (its ``preset``); every other entity (pedestrians, obstacles, trucks, buses, bicycles,
    motorbikes, trailers) moves kinematically where the storyboard puts it (``kinematic``).
    """

    name: str
    preset: str
    length: float
    width: float
    max_speed: float
    external: bool
    line: int
    kind: str = "vehicle"
    """``vehicle``, ``pedestrian`` or ``misc``."""
    category: str = "car"
    """The file's vehicleCategory, pedestrianCategory or miscObjectCategory."""
    height: float = 1.5
    kinematic: bool = False
    trailer: str | None = None
    """The entity this one tows (its ``TrailerRef``)."""
    max_acceleration: float = math.inf
    """m/s2 its Performance allows: esmini holds a SpeedAction's change within it."""
    trajectory_heading_ignored: bool = False
    """esmini's ``ignoreHeadingForTrajMotion`` property: it moves along a trajectory by its
    speed's sign alone, whichever way the vertices' heading has it face."""
    max_deceleration: float = math.inf
    wheelbase: float = 0.0
    """m between the front and rear axle."""
    hitch: float = 0.0
    """m ahead of its position (the reference point): where a towing vehicle's hitch is."""
    coupler: float = 0.0
    """m ahead of its position (the reference point): where a trailer's coupler is."""
    centre: float = 0.0
    """m: how far ahead of its position (the standard's reference point) its box's centre is."""


@dataclass(frozen=True)
class InitState:
    """Where an entity starts and how fast."""

    position: Position | None = None
    speed: float = 0.0
    ramp: Dynamics | None = None
    """How the storyboard brings a vehicle to ``speed`` (None: it starts at it)."""
    ramp_from: float = 0.0
    """The speed the ramp starts from: standing, or an earlier step of Init's (esmini's)."""


@dataclass(frozen=True)
class Scenario:
    """A whole ``.xosc`` file, read and checked."""

    path: Path
    version: tuple[int, int]
    parameters: dict[str, str]
    road: Path | None
    entities: dict[str, Entity]
    init: dict[str, InitState]
    init_order: tuple[str, ...]
    stories: tuple[Story, ...]
    stop: Trigger | None
    description: str = ""
    notes: tuple[str, ...] = field(default=())
    trajectories: tuple[Trajectory, ...] = ()
    """Every trajectory a FollowTrajectoryAction follows, by its ``index``."""
    variables: dict[str, str] = field(default_factory=dict)
    """1.2's variables, as declared (the storyboard's actions change its own copy)."""
    absent: tuple[str, ...] = ()
    """Entities Init gives no position: out of the world until an AddEntityAction."""
    init_actions: tuple[tuple[str, Action], ...] = ()
    """Init's actions that take time (routes, trajectories, speed ramps, lateral actions), each
    with its entity: the storyboard starts them at t = 0, as it starts an event's."""
    init_before: dict[str, tuple[Position, ...]] = field(default_factory=dict)
    """By entity: Init's teleports before its last, in order, where the last (and each of
    them after the first) places it relative to itself (esmini's ``four_roads``, ``star``)."""

    @property
    def external(self) -> list[str]:
        """The entities driven from outside, in the file's order."""
        return [name for name, entity in self.entities.items() if entity.external]
