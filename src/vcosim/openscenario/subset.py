"""What of OpenSCENARIO vcosim reads, and how: the table docs/scenarios.md shows, kept here.

(Past 400 lines on purpose: most of it is the table ``SUBSET``, one row per element, from which the
docs' table is generated.)

One source: the docs' table is generated from ``SUBSET`` (``python -m
vcosim.openscenario.subset docs/scenarios.md`` rewrites it), and a test holds the reader to it:
every element a row says is read is one the reader's modules name.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import NamedTuple


class Support(NamedTuple):
    """A row of the table: the elements, how far vcosim supports them, and what it does."""

    elements: str  # as the docs show them: `Tag`, `Parent/Tag`, `Init`: `Tag`, ...
    supported: str  # yes, no, read (accepted, no effect), or how far (heading, state)
    notes: str


SUBSET: tuple[Support, ...] = (
    Support(
        "`FileHeader`",
        "yes",
        "`revMajor` 1, `revMinor` 0 to 3 (1.3's several controllers per entity, inline "
        "trailers, wrapped `ObjectController` read; what 1.3 adds that vcosim cannot apply "
        "is refused by name); a `description` starting `CARLA:` puts the file's world "
        "positions in CARLA's left-handed frame, as scenario_runner reads it: "
        "`WorldPosition` y and every `h`, `RelativeWorldPosition`/`RelativeObjectPosition` "
        "dy mirrored",
    ),
    Support(
        "`ParameterDeclarations`, `$name`",
        "yes",
        "wherever the standard allows them (the top, a `Story`, a `Maneuver`, and the "
        "`Vehicle`, `Controller`, `Trajectory`, ... a catalogue entry or an entity "
        "declares: known within it), read in order, so a value may use the parameters "
        'declared before it; a name written with its `$` (`name="$Speed"`) is the name '
        'without it; `vcosim.openscenario.read_xosc(path, {"EgoSpeed": 30})` (a variation) '
        "and a `CatalogReference`'s `ParameterAssignments` give a value in place of the "
        "declared one, where it is declared, so the parameters derived from it follow",
    ),
    Support(
        "`ConstraintGroup`, `ValueConstraint` (1.2)",
        "yes",
        "a value (declared, given by a variation or an assignment) must meet every "
        "`ValueConstraint` (`rule`, `value`) of one of its declaration's groups; numbers "
        "compared as numbers, anything else as text; a value outside them is refused before "
        "the start, with its declaration's line (a distribution's run: with the "
        "distribution's line and the runs that give it)",
    ),
    Support(
        "`${expression}`",
        "yes",
        "the standard's arithmetic: `+ - * / %` (and `**`), parentheses, unary minus, "
        "`round floor ceil sqrt pow` (1.1), `sin cos tan asin acos atan sign abs max min` "
        "(listed since 1.2), comparisons, `not and or` (`&&`, `||`) over numbers and "
        "`$name`s; esmini's constants `pi` and `e`; esmini's string concatenation: a `+` "
        "joining a word that is not a number (`${BrakeCondition_HWT + _ + $Time}` is "
        "`BrakeCondition_HWT_0.7`, the `+` and the spaces around it dropped); evaluated "
        "over a whitelist (nothing but arithmetic runs); a refusal names what is not "
        "understood (`'foo(1)' is not an OpenSCENARIO expression: the functions are ...`)",
    ),
    Support(
        "`CatalogLocations`",
        "yes",
        "`VehicleCatalog`, `PedestrianCatalog`, `MiscObjectCatalog`, `ControllerCatalog`, "
        "`ManeuverCatalog`, `TrajectoryCatalog`, `EnvironmentCatalog`, `RouteCatalog`: a "
        "`Directory` (relative to the scenario) whose `.xosc` files hold `<Catalog "
        "name=...>`",
    ),
    Support(
        "`CatalogReference`",
        "yes",
        "for a `ScenarioObject` (its vehicle, pedestrian or misc object: looked for in each "
        "of those catalogues), an `ObjectController`'s or `AssignControllerAction`'s "
        "controller, a `ManeuverGroup`'s maneuver, a trajectory, an environment, a route, a "
        "trailer; the entry of `catalogName`'s catalogue named `entryName`, its "
        "`ParameterDeclarations` given the reference's `ParameterAssignments`; what an "
        "entry holds is checked like the scenario (a problem in it is given with the "
        "catalogue file's name and line)",
    ),
    Support(
        "`RoadNetwork/LogicFile`",
        "yes",
        "the `.xodr`, relative to the scenario file, or a map's name (CARLA's `Town01`): "
        "`NAME.xodr` in a folder `--maps DIR` (or `VCOSIM_MAPS`) names; a file that is not "
        "there is refused before the start, with that hint for a name; `SceneGraphFile` (a "
        "3D model to look at) accepted and not used",
    ),
    Support(
        "`Entities/ScenarioObject/Vehicle`",
        "yes",
        "every `vehicleCategory`; `car` and `van` are physical vehicles of the world (the "
        "preset mapping below), every other category (`truck`, `bus`, `trailer`, "
        "`semitrailer`, `motorbike`, `bicycle`, `train`, `tram`) moves kinematically with "
        "its `BoundingBox` (below), unless a `preset` property names a preset; "
        "`BoundingBox`, `Axles`, `Performance` read (a speed action's ramp keeps to its "
        "`maxAcceleration`/`maxDeceleration`, as esmini scales its transition; a step is "
        "not slowed); a `Trailer` (a `TrailerRef` to an "
        "entity, or 1.3's inline `Trailer`, an entity of its own named `TRACTOR_NAME`) is "
        "towed: its `TrailerCoupler` on the tractor's `TrailerHitch`",
    ),
    Support(
        "`Pedestrian`, `MiscObject`",
        "yes",
        "kinematic, with their `BoundingBox` and category; in collisions, the range sensors "
        "and every face that reads the world's objects",
    ),
    Support(
        "`EntitySelection`",
        "no",
        "refused: the entities of a condition or an action are named one by one",
    ),
    Support(
        "`ObjectController/Controller`",
        "yes",
        'inline or catalogued, one or several (1.3); `name="external"`, a `Property '
        'name="controller" value="external"`, esmini\'s `Property name="esminiController" '
        'value="ExternalController"` or scenario_runner\'s `Property name="module" '
        'value="external_control"`: driven from outside; any other controller: the '
        "storyboard drives it",
    ),
    Support(
        "`Init`: `TeleportAction`",
        "yes",
        "positions below; a later teleport of the same entity relative to itself starts "
        "from where the earlier put it (esmini's `four_roads`, `star`)",
    ),
    Support(
        "`Init`: `SpeedAction`",
        "yes",
        "`AbsoluteTargetSpeed`: a `step` starts the entity at that speed, another shape "
        "brings it there from standing, or from the speed a `step` before it set (as "
        "esmini; storyboard entities only); every other private "
        "action in Init (relative speeds, distances, profiles, routes, trajectories, "
        "lateral actions, overrides) starts at t = 0 as an event's would; `GlobalAction`s "
        "in Init run at t = 0; an entity Init gives no position is out of the world until "
        "an `AddEntityAction` (a car: parked far away)",
    ),
    Support(
        "`Init`: `ControllerAction`",
        "yes",
        "`AssignControllerAction` (as `ObjectController`); `ActivateControllerAction` as in "
        "the storyboard (below)",
    ),
    Support(
        "`WorldPosition`",
        "yes",
        "x, y, h; z, p, r ignored",
    ),
    Support(
        "`LanePosition`",
        "yes",
        "`offset` along the road's t; heading with the lane's traffic",
    ),
    Support(
        "`RoadPosition`",
        "yes",
        "(s, t); heading of the reference line",
    ),
    Support(
        "`RelativeLanePosition`",
        "yes",
        "with `dsLane`, `dLane` counts lanes to the left as the reference's traffic sees "
        "them (from lane -2, +1 is -1; from -1, +1 is 1), `dsLane` ahead in that lane's "
        "driving direction, heading with its traffic; with `ds` (as esmini), both in the "
        "road's frame: `dLane` towards +t, `ds` along s, heading along s",
    ),
    Support(
        "`RelativeWorldPosition`",
        "yes",
        "`dx` east, `dy` north of the reference",
    ),
    Support(
        "`RoutePosition`",
        "yes",
        "`FromLaneCoordinates` (`pathS` from the route's first waypoint, `laneId`, "
        "`laneOffset`), `FromRoadCoordinates` (`pathS`, `t`), `FromCurrentEntity`",
    ),
    Support(
        "`TrajectoryPosition`",
        "yes",
        "`s` along the trajectory (laid out as it is then), `t` to its left",
    ),
    Support(
        "`RelativeObjectPosition`",
        "yes",
        "dx ahead, dy left, in the reference's frame",
    ),
    Support(
        "`RelativeRoadPosition`",
        "yes",
        "`ds` along and `dt` across the road the reference is on, from its (s, t); heading "
        "of the reference line",
    ),
    Support(
        "`Orientation`",
        "heading",
        "`relative` (on a `LanePosition` to the lane's driving direction, as esmini; "
        "elsewhere to the road's s direction) or `absolute` `h`; a storyboard car heading "
        "more than 90 degrees from its lane's traffic drives that lane the other way "
        "(esmini's overtaker on the oncoming lane), a kinematic object heading more than 45 "
        "degrees across its lane goes straight on; `p`, `r` read, the road gives them",
    ),
    Support(
        "`Story`, `Act`, `ManeuverGroup`, `Maneuver`, `Event`, `Action`",
        "yes",
        "states standby, running, complete; `Act` start and stop triggers; an `Act`'s or "
        "`Event`'s missing or empty `StartTrigger` (`<StartTrigger/>`, how 1.0 to 1.2 files "
        "say it, the element being required) starts it at once; `ManeuverGroup` "
        "`maximumExecutionCount` (runs again from the start, its events' triggers heard "
        "afresh, delays included); an `Action` with nothing in "
        'it is done at once; `selectTriggeringEntities="true"`: the entities whose '
        "conditions fired the act's start trigger join the group's actors",
    ),
    Support(
        "`Event` `priority`",
        "yes",
        "`override` (1.0's `overwrite`): stops the maneuver's running events; `skip`: not "
        "started while another event of the maneuver runs (a `skipTransition`); `parallel`; "
        "in a file written for scenario_runner (a `CARLA:` description) not read, as "
        "scenario_runner reads it not: every event is `parallel`",
    ),
    Support(
        "`Event` `maximumExecutionCount`",
        "yes",
        "after it ended it waits for its trigger again (heard afresh, its delay counted "
        "again), up to the count",
    ),
    Support(
        "`SpeedAction`",
        "yes",
        "`AbsoluteTargetSpeed`; `RelativeTargetSpeed` (`delta`, `factor`) to the entity's "
        "speed as it goes (the ramp's end moves with it, as esmini's), and with "
        '`continuous="true"` all along once the ramp arrived (such an action never ends by '
        "itself); the entity's speed is the one the storyboard commands a car it drives (the "
        "car may lag it); as esmini, every change but a `step` is held within the vehicle's "
        "`Performance` `maxAcceleration`/`maxDeceleration` (the ramp stretched)",
    ),
    Support(
        "`SpeedActionDynamics`",
        "yes",
        "shapes `step`, `linear`, `cubic`, `sinusoidal` over `time` (s), `distance` (m, at "
        "the mean of the two speeds) or `rate` (m/s², its size: esmini writes decelerations "
        "negative; the shape's peak acceleration, as esmini: a `sinusoidal` change takes "
        "π/2 times as long as a `linear` one); a change over 0 s or 0 m is a `step`, as "
        "in esmini (in Init too: the entity starts at its speed); in a file written for "
        "scenario_runner (a `CARLA:` description) the action runs as scenario_runner's "
        "`ChangeActorTargetSpeed`: until its entity is the `distance` from where it began "
        "(in a straight line) or, any other dimension, the value in seconds has passed, or "
        'another speed action of the entity starts; a step "over 30 m" holds its event '
        "for 30 m (the speed still set at once)",
    ),
    Support(
        "`LaneChangeAction`",
        "yes",
        "`AbsoluteTargetLane`, `RelativeTargetLane` (lanes left of the reference's lane, as above, "
        "to the reference's left as it heads, as esmini: one driving against its lane's traffic "
        "counts the other way); `targetLaneOffset`; shapes over `time`, `distance` (at the speed at"
        " the start) or `rate` (the largest lateral speed, m/s: the change takes the shape's peak "
        "over mean rate times the distance over it); a `step`, or a change over 0 s or 0 m, puts "
        "the entity in its new lane at once (a car moved sideways, its speed and heading kept, as "
        "esmini does); asked of an entity on no lane (or relative to one), it is passed over, "
        "ending at once, with a warning line in the storyboard's report (a `LaneOffsetAction` "
        "relative to one alike); where the new lane leads elsewhere than the route (an exit lane, a"
        " split) the car is re-routed from it and follows its branch",
    ),
    Support(
        "`LaneOffsetAction`",
        "yes",
        "`AbsoluteTargetLaneOffset`; `RelativeTargetLaneOffset` (the entity's lateral "
        "position plus the value along the entity's left, from the actor's own lane, "
        "possibly into the entity's, as esmini); the duration from "
        "`maxLateralAcc` (default 1 m/s²): cubic (and linear) `sqrt(6 d / a)`, sinusoidal "
        '`pi sqrt(d / 2a)`; `continuous="true"`: it never ends, and relative to an entity '
        "it follows the entity's offset",
    ),
    Support(
        "`TeleportAction`",
        "yes",
        "in the storyboard too; the speed is kept (the storyboard's, as esmini's entity "
        "has it: a car braking to the stand it was told is set standing), the lane offset "
        "reset",
    ),
    Support(
        "`FollowTrajectoryAction`",
        "yes",
        "in a `RoutingAction`; the `Trajectory` inline, in a `TrajectoryRef` or a "
        "`CatalogReference`, laid out when the action starts (relative positions where "
        "their entities are then); shapes below; as esmini, the entity is put on it at "
        "once: `initialDistanceOffset` along (with relative `Timing` its clock starting "
        "there), or where absolute `Timing` has it then; in Init, for an entity Init gives "
        "no position, it starts on the trajectory; which way it moves along it is esmini's "
        "(its user guide's table 'Trajectory moving and driving direction'): it faces "
        "as the vertex's heading says, else along it, or against it when untimed at a "
        "negative speed, and, untimed, moves its speed times that way (a timed one: on, by "
        "its times); esmini's `ignoreHeadingForTrajMotion` property (true) moves it by its "
        "speed alone; a car that faces against an untimed trajectory drives it end to "
        "start; one its schedule reverses, or a negative speed, moves kinematically; "
        "without roads an entity stops where its trajectory ends (esmini's), with roads it "
        "drives on along them; a vertex given twice is a stop for the time between",
    ),
    Support(
        "`Polyline`",
        "yes",
        "`Vertex` positions of any kind, optional `time` each",
    ),
    Support(
        "`Clothoid`",
        "yes",
        "from its `Position` (and heading), or without one from where its entity is; "
        "`curvature`, `curvatureDot` (1.0) or `curvaturePrime` (1.1+), `length`; "
        "`startTime`/`stopTime` spread over its length; sampled every 0.5 m",
    ),
    Support(
        "`ClothoidSpline`",
        "yes",
        "its segments end to end (`curvatureStart`, `curvatureEnd`, `length`, `hOffset`), "
        "from the first one's `PositionStart` or where its entity is; a later segment "
        "with a `PositionStart` starts there (its `hOffset` added to that heading, as "
        "esmini); `timeStart`/`timeEnd` spread over its length",
    ),
    Support(
        "`Nurbs`",
        "yes",
        "rational B-spline of its `order` through its `ControlPoint`s (`weight`, `time`: "
        "the times evaluated with the curve) and `Knot`s, sampled at 400 points",
    ),
    Support(
        "`TimeReference`",
        "yes",
        "`None`: the speed stays the storyboard's (speed actions go on); `Timing` "
        "(`domainAbsoluteRelative` absolute or relative to the action's start, `scale`, "
        "`offset`): the trajectory drives the speed to be at each vertex at its time (a "
        "running speed action ends)",
    ),
    Support(
        "`TrajectoryFollowingMode`",
        "yes",
        "`followingMode` `position`: each segment's mean speed, closing the lag behind the "
        "schedule (0.5 /s); `follow`: each segment at the one acceleration that covers it "
        "in its time from the speed the entity has (esmini's continuous profile); "
        "`followingLateralMode` read, the "
        "steering is always the driver's pure pursuit",
    ),
    Support(
        "`ActivateControllerAction`",
        "yes",
        "in a `ControllerAction` (1.1+) or directly in the `PrivateAction` (1.0); mapping "
        "below; `controllerRef`, `animation`, `lighting` read",
    ),
    Support(
        "`AssignRouteAction`",
        "yes",
        "a `Route` inline or catalogued: the shortest chain of lanes (by length, through "
        "road links and junctions) from the entity's lane through each `Waypoint`'s road, "
        "then on along the lanes it leads to (a waypoint off every lane: the nearest lane, "
        "with a warning line, as esmini takes its closest road position); a car may take "
        "any lane of its road running "
        "its way, lanes that begin further along included (a highway exit); it eases onto "
        "the route's lane within a couple of seconds; with no way from its lane, from the "
        "nearest lane of its road that runs the way it faces (a car parked across its lane, "
        "or turned against it); after a `TeleportAction` in its event, from where that put "
        "it (a car teleported off its route follows its new lane's); done at once; for a "
        "car driven from "
        "outside: accepted, its controller's business",
    ),
    Support(
        "`RandomRouteAction`",
        "yes",
        "from the entity's lane on along the lanes it leads to, one drawn at random at each "
        "junction (one generator per run, seeded: the same ways every run); done at once",
    ),
    Support(
        "`AcquirePositionAction`",
        "yes",
        "a route to the position, as above; done when the entity is there",
    ),
    Support(
        "`LongitudinalDistanceAction`",
        "yes",
        "`distance`, or `timeGap` at the follower's speed, to the entity "
        "(`leadingReferencedEntity`: the actor ahead of it; `trailingReferencedEntity`, the "
        "default: behind), along its heading, `freespace` or not; `DynamicConstraints` "
        "limit the actor's acceleration, deceleration and speed; without them the actor is "
        "put there at once (as esmini); the speed then closes the gap at 0.5 /s; not "
        "`continuous`: done within 0.5 m and 0.5 m/s",
    ),
    Support(
        "`LateralDistanceAction`",
        "yes",
        "`distance` to the side of the entity, in the entity's frame (`displacement` left, "
        "right, or `any`: the side it is on), `freespace` or not; without a `distance` the "
        "one there is is kept; the actor moves across its lane as esmini's road coordinate "
        "system moves it: without `DynamicConstraints` at once (a car moved sideways), with "
        "`maxSpeed` only at that lateral speed (at most its own), with `maxAcceleration` as a "
        "critically damped spring of stiffness 0.4 `maxAcceleration` held within both; "
        "moving across, it goes on along its road by the rest of its speed, as esmini's; "
        "`coordinateSystem` `entity` alike (esmini steers there across the plane: not "
        "done); not `continuous`: done within 0.1 m",
    ),
    Support(
        "`SpeedProfileAction`",
        "yes",
        "each `SpeedProfileEntry` reached in its `time` after the one before, or as fast as "
        "`maxAcceleration`/`maxDeceleration` allow (at once without them), a slope steeper "
        "than them reached later; `followingMode` `position`: straight lines, a first entry "
        "of time 0 is the start speed (a step); `follow`: the bends rounded at "
        "`maxAccelerationRate`/`maxDecelerationRate` from the speed and acceleration at the "
        "start (one entry: arriving at its time), as esmini plays them; `maxSpeed` read, not "
        "applied; with `entityRef`, speeds relative to that entity's speed at the start",
    ),
    Support(
        "`SynchronizeAction`",
        "yes",
        "every look, the speed that brings the actor to `TargetPosition` when the master "
        "reaches `TargetPositionMaster` at its speed now (the straight distances), arriving "
        "at `FinalSpeed` (absolute, or relative to the master's); done when the master is "
        "within `targetToleranceMaster`",
    ),
    Support(
        "`OverrideControllerValueAction`",
        "yes",
        "`Throttle`, `Brake` (or 1.2's `BrakePercent`), `Clutch`, `ParkingBrake`, "
        "`SteeringWheel` (rad at the wheel: the road-wheel angle is it over a steering "
        "ratio of 15), `Gear` (1.2's `ManualGear`, `AutomaticGear` p/n/r/d): each `active` "
        "one forced on the vehicle's inputs over its built-in driver or its coupled "
        "controller, until an override makes it inactive; a kinematic entity has no inputs",
    ),
    Support(
        "`AssignControllerAction` in the storyboard",
        "yes",
        "no effect on a storyboard vehicle (its built-in driver is all its controllers); "
        "making a vehicle external during the run is refused",
    ),
    Support(
        "`AppearanceAction`, `VisibilityAction`",
        "read",
        "no effect: vcosim simulates no lights (an `AppearanceAction`'s `LightStateAction` "
        "and `AnimationAction` are read), and every sensor sees every entity",
    ),
    Support(
        "`EnvironmentAction`",
        "yes",
        "inline or catalogued: `RoadCondition` `frictionScaleFactor` multiplies the "
        "terrain's friction under every tyre from then on; `TimeOfDay` and `Weather` are "
        "kept in the storyboard's report (`environment`)",
    ),
    Support(
        "`ParameterAction`, `VariableAction`",
        "yes",
        "`SetAction`, `ModifyAction` (`AddValue`, `MultiplyByValue`) on a parameter or a "
        "1.2 variable (`VariableDeclarations`); conditions see the new value",
    ),
    Support(
        "`EntityAction`",
        "yes",
        "`AddEntityAction` (the entity enters at the position on its lane's route, at the "
        "speed it had when deleted, else standing, or at a `step` speed given it at the same "
        "moment; a position relative to a deleted entity is relative to where it left, as "
        "esmini keeps it; to one added at the same moment, to where that one entered; one "
        "in the world already is passed over with a warning, as esmini refuses it), "
        "`DeleteEntityAction` (a kinematic entity leaves the world, a car is parked far "
        "away; while away it passes no condition)",
    ),
    Support(
        "`InfrastructureAction`",
        "state",
        "`TrafficSignalStateAction`: the storyboard keeps the signal's state for "
        "`TrafficSignalCondition`; OpenDRIVE's signals are not read and no driver obeys "
        "them; `TrafficSignalControllerAction` refused by name",
    ),
    Support(
        "`TrafficAction`, user-defined actions",
        "no",
        "refused by name",
    ),
    Support(
        "`ConditionGroup`, `Condition`",
        "yes",
        "OR of groups, AND within; `delay` (counted while its element waits, as esmini); "
        "`conditionEdge` `none`, `rising`, `falling`, "
        "`risingOrFalling`; in a file written for scenario_runner (a `CARLA:` description) "
        "a condition that held once holds on until its group fires, as scenario_runner's "
        "groups (sequences of one-shot conditions) have it",
    ),
    Support(
        "`TriggeringEntities`",
        "yes",
        "`any`, `all`",
    ),
    Support(
        "`SimulationTimeCondition`",
        "yes",
        '`value="0" rule="equalTo"` in a group with other conditions is dropped from '
        "it: CARLA's examples start acts on \"TraveledDistance >= 1 and SimulationTime == "
        '0", which scenario_runner (timing each condition from when the earlier ones '
        'held) reads as "once the hero moves"; by the standard it could hold only at '
        "t = 0",
    ),
    Support(
        "`StoryboardElementStateCondition`",
        "yes",
        "an element by its name or by one qualified by its parents' (`CutInEvent::Action`, "
        "1.1 on: the element whose path ends so); "
        "every kind of element and state (`startTransition`, `endTransition`, "
        "`stopTransition`, `skipTransition`, `completeState`, `runningState`, "
        "`standbyState`); an element a stop trigger or an override ends: its actions and "
        "what had not started stop (`stopTransition`), what ran in it ends "
        "(`endTransition`), as in esmini, where an element ends once its children stopped",
    ),
    Support(
        "`ParameterCondition`",
        "yes",
        "numbers compared as numbers, else text (`equalTo`, `notEqualTo`); `parameterRef` "
        "with or without its `$`; in a condition named `criteria_...` (scenario_runner's "
        "evaluation criteria, which scenario_runner takes out of the triggers) it never "
        "holds; a parameter a `Story` declares is known to the conditions within it; a "
        "parameter not declared where the condition is is never true, as in esmini "
        '("Parameter not found")',
    ),
    Support(
        "`VariableCondition`",
        "yes",
        "as `ParameterCondition`, on 1.2's variables (`VariableDeclarations`; "
        "`VariableAction` sets and modifies them)",
    ),
    Support(
        "`SpeedCondition`, `AccelerationCondition`",
        "yes",
        "without `direction` the speed, and the acceleration along the heading; `direction` "
        "`longitudinal`, `lateral` (to the left) in the entity's frame, `vertical` 0 (the "
        "storyboard sees the world in plan); `equalTo` (and `notEqualTo`): within 1e-6 as "
        "esmini, or where the value went through the target since the look before (a "
        "physical car's speed is seldom within 1e-6 of a value when it is looked at)",
    ),
    Support(
        "`RelativeSpeedCondition`",
        "yes",
        "own minus the reference's speed; a `direction`: that component of the two "
        "velocities in the reference entity's frame (as esmini)",
    ),
    Support(
        "`ReachPositionCondition`",
        "yes",
        "distance between reference points within `tolerance`; a `Position` with an "
        "`Orientation` also wants the heading within 0.05 rad (esmini's tolerance)",
    ),
    Support(
        "`DistanceCondition`, `RelativeDistanceCondition`",
        "yes",
        "`longitudinal`, `lateral`, `cartesianDistance`/`euclidianDistance` (1.0's "
        "`alongRoute` is longitudinal); `coordinateSystem` `entity` (the triggering "
        "entity's frame), `road` (along the road's s and across its t, below) or `lane` "
        "(measured as `road`, as esmini does); a cartesian distance is the same in all; "
        "`freespace` between the boxes; `routingAlgorithm` refused",
    ),
    Support(
        "`TimeHeadwayCondition`",
        "yes",
        "the distance to the entity (`relativeDistanceType`, default the cartesian distance "
        "signed by whether it is ahead, as esmini) over the own speed, in any "
        "`coordinateSystem` as above; to a target behind, or standing, no headway: no rule "
        "holds (esmini); no way along the roads between them: infinite",
    ),
    Support(
        "`TimeToCollisionCondition`",
        "yes",
        "to an entity or a position: the distance of the kind asked over the rate it closes "
        "at, at today's velocities, in any `coordinateSystem`; not closing: infinite",
    ),
    Support(
        "`CollisionCondition`",
        "yes",
        "with an `EntityRef`, or `ByType` (`vehicle`, `pedestrian`, `miscellaneous`: any "
        "entity of that kind): boxes overlapping now",
    ),
    Support(
        "`EndOfRoadCondition`",
        "yes",
        "past an end of the road it was on (off every lane there) for `duration`; an "
        "entity the storyboard drives is told to stand from the look after it passed the end "
        "of its road (a car brakes), as esmini stops its entities there",
    ),
    Support(
        "`OffroadCondition`",
        "yes",
        "off every lane beside its road (not past an end), or on a lane of type `none` "
        "(OpenDRIVE's space beyond the edge, as esmini), for `duration`",
    ),
    Support(
        "`StandStillCondition`",
        "yes",
        "slower than 1e-3 m/s (esmini's `STAND_STILL_THRESHOLD`) for `duration`",
    ),
    Support(
        "`TraveledDistanceCondition`",
        "yes",
        "at least `value` m driven since the start: the entity's odometer, its speed "
        "integrated (trapezoidal) between the looks every 10 ms",
    ),
    Support(
        "`RelativeClearanceCondition`",
        "yes",
        "no entity (of its `EntityRef`s; none: any) from `distanceBackward` behind to "
        "`distanceForward` ahead along the road, in a lane of a `RelativeLaneRange` (lanes "
        "to the left as the entity drives, 0 its own; none: every lane) running its way "
        "(`oppositeLanes`: either way); false where no driving lane of the ranges is there, "
        "as esmini",
    ),
    Support(
        "`AngleCondition`, `RelativeAngleCondition`",
        "heading",
        "within `angleTolerance` of `angle`: `coordinateSystem` `world` (default), `road` "
        "(to the road's heading), `lane` (to the lane's driving direction), `entity` (0); "
        "relative: to the other's heading; `angleType` pitch and roll refused",
    ),
    Support(
        "`TimeOfDayCondition`",
        "no",
        "refused by name: the time of day is kept from an `EnvironmentAction`, not advanced",
    ),
    Support(
        "`TrafficSignalCondition`",
        "yes",
        "the state the storyboard's `TrafficSignalStateAction` set for that name",
    ),
    Support(
        "`TrafficSignalControllerCondition`",
        "no",
        "refused by name: controllers are not read yet",
    ),
    Support(
        "`UserDefinedValueCondition`",
        "no",
        "refused by name: no face supplies user-defined values",
    ),
    Support(
        "`StopTrigger` (storyboard)",
        "yes",
        "ends the run; the report names the conditions of the group that fired",
    ),
    Support(
        "`ParameterValueDistribution`",
        "yes (1.1 to 1.3)",
        "in a sweep's `[sweep] distribution` (below). `Deterministic`: `DistributionSet`, "
        "`DistributionRange` (both limits included), `ValueSetDistribution`; their "
        "cartesian product. `Stochastic`: `numberOfTestRuns` runs, each drawing every "
        "`StochasticDistribution`'s parameter with numpy's `Generator` seeded by "
        "`randomSeed` (0 without one: the same file always gives the same runs); "
        "`ProbabilityDistributionSet` (values by weight), `NormalDistribution` and "
        "`LogNormalDistribution` (their own `expectedValue` and `variance`), "
        "`UniformDistribution`, `PoissonDistribution` (whole numbers), `Histogram` (a bin "
        "by weight, uniform within it); a `Range` truncates (values outside are drawn "
        "again). `UserDefinedDistribution` refused. Every run checked against the "
        "scenario's value constraints before any run",
    ),
)
"""Every row of docs/scenarios.md's "Supported subset", in its order."""

MARKERS = ("<!-- subset-table", "<!-- /subset-table -->")
"""The generated block of docs/scenarios.md."""


def markdown() -> str:
    """The generated block: the table of ``SUBSET`` between ``MARKERS``."""
    lines = [
        f"{MARKERS[0]}: generated from vcosim/openscenario/subset.py by `python -m "
        "vcosim.openscenario.subset docs/scenarios.md`; edit the rows there -->",
        "",
        "| Element | Supported | Notes |",
        "|---|---|---|",
    ]
    lines += [
        f"| {row.elements} | {row.supported} | {row.notes.replace('|', chr(92) + '|')} |"
        for row in SUBSET
    ]
    return "\n".join([*lines, "", MARKERS[1]])


def rewrite(path: Path) -> None:
    """Replace the generated block of ``path`` with ``markdown()``."""
    text = path.read_text(encoding="utf-8")
    begin, end = text.index(MARKERS[0]), text.index(MARKERS[1]) + len(MARKERS[1])
    path.write_text(text[:begin] + markdown() + text[end:], encoding="utf-8")


if __name__ == "__main__":
    rewrite(Path(sys.argv[1]))
