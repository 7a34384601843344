"""Reading ``.xosc`` files (OpenSCENARIO XML 1.0 to 1.2) into :mod:`vcosim.openscenario.model`.

(Past 400 lines on purpose: one reader of the supported subset, each element beside its refusals
(with their lines), so the subset in docs/scenarios.md can be checked against one file.)

The XML is parsed by the standard library's expat into small nodes that keep their line.
Every element the reader takes is marked; whatever is left unmarked at the end is outside the
supported subset, and the file is refused with each such element and its line (nothing is
silently ignored). ``$name`` attribute values are the file's parameters (or the values given
to :func:`read_xosc`, as a sweep variation does).

(Past 400 lines on purpose: one function per element of the subset, each a few lines, all
sharing the reader's marking of what was taken; split, the subset would be harder to read.)
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar
from xml.parsers import expat

from vcosim.errors import ConfigError
from vcosim.openscenario import model as m
from vcosim.openscenario.expressions import ExpressionError, evaluate

VERSIONS = ((1, 0), (1, 1), (1, 2), (1, 3))
PRESETS = {"car": "nightrider", "van": "nightrider"}
"""vehicleCategory -> the vcosim preset that drives it (a ``preset`` property overrides)."""
EXTERNAL = "external"
"""A Controller named this, or with ``<Property name="controller" value="external"/>``, makes
its entity driven from outside (a tight-coupling endpoint)."""
EXTERNAL_PROPERTIES = {("controller", EXTERNAL), ("esminiController", "ExternalController")}
"""Controller properties that make it external: vcosim's, and esmini's external controller
(whose vehicle is moved from outside too), so esmini's scenarios couple their ego."""
RULES = {"greaterThan", "lessThan", "equalTo", "greaterOrEqual", "lessOrEqual", "notEqualTo"}
EDGES = {"none", "rising", "falling", "risingOrFalling"}
SHAPES = {"step", "linear", "cubic", "sinusoidal"}
STATES = {
    "startTransition", "endTransition", "stopTransition", "skipTransition",
    "completeState", "runningState", "standbyState",
}  # fmt: skip
KINDS = {"story", "act", "maneuverGroup", "maneuver", "event", "action"}
PRIORITIES = {
    "overwrite": "override",
    "override": "override",
    "skip": "skip",
    "parallel": "parallel",
}
CATALOGS = {
    "VehicleCatalog": "Vehicle",
    "ControllerCatalog": "Controller",
    "ManeuverCatalog": "Maneuver",
    "TrajectoryCatalog": "Trajectory",
}
"""The catalogues whose entries a scenario may reference, and the element each holds."""
OTHER_CATALOGS = {"PedestrianCatalog", "MiscObjectCatalog", "EnvironmentCatalog", "RouteCatalog"}
"""Catalogue locations accepted (a file may list them) whose entries cannot be referenced."""
# Elements that carry nothing a run needs; read and accepted as they are.
HARMLESS = {"FileHeader", "CatalogLocations", "Properties", "Property", "Performance", "Axles",
            "FrontAxle", "RearAxle", "AdditionalAxle", "BoundingBox", "Center", "Dimensions",
            "Orientation", "ParameterDeclarations", "ParameterDeclaration", "License"}  # fmt: skip


UNSUPPORTED = "is not supported (docs/scenarios.md lists what is)"


class Refused(Exception):
    """One problem of the file, with the line it is on."""

    def __init__(self, node: Node, message: str) -> None:
        super().__init__(f"line {node.line}: <{node.tag}>: {message}")


@dataclass
class Node:
    """An XML element with its line; ``used`` once the reader has taken it."""

    tag: str
    attrib: dict[str, str]
    line: int
    children: list[Node] = field(default_factory=list)
    used: bool = False

    def walk(self) -> Iterator[Node]:
        """The node and every node below it."""
        yield self
        for child in self.children:
            yield from child.walk()


def parse(text: bytes) -> Node:
    """The element tree of ``text``, every node with its line."""
    parser = expat.ParserCreate()
    stack: list[Node] = []
    root: list[Node] = []

    def start(tag: str, attrib: dict[str, str]) -> None:
        node = Node(tag, attrib, parser.CurrentLineNumber)
        (stack[-1].children if stack else root).append(node)
        stack.append(node)

    parser.StartElementHandler = start
    parser.EndElementHandler = lambda tag: stack.pop()
    parser.Parse(text, True)
    return root[0]


T = TypeVar("T")


class Reader:
    """Takes the nodes of one file apart, resolving ``$parameters`` in attribute values."""

    def __init__(self, parameters: dict[str, str]) -> None:
        self.parameters = parameters
        self.problems: list[str] = []
        self.entities: dict[str, m.Entity] = {}
        self.catalogs: dict[str, Path] = {}
        self.entries: dict[tuple[str, str], tuple[Path, Node]] = {}
        self.read_entries: list[tuple[Path, Node]] = []
        self.trajectories: list[m.Trajectory] = []
        self.assigned_external: set[str] = set()

    @contextmanager
    def scope(self, node: Node, assigned: Mapping[str, str] | None = None) -> Iterator[None]:
        """Within: the parameters ``node`` declares (given ``assigned`` values) are known too."""
        outer = dict(self.parameters)
        declared = self.one(node, "ParameterDeclarations", required=False)
        for decl in self.kids(declared, "ParameterDeclaration") if declared is not None else []:
            for part in decl.walk():  # constraints of a declaration are its own business
                part.used = True
            self.parameters[self.text(decl, "name")] = self.text(decl, "value")
        self.parameters.update(assigned or {})
        try:
            yield
        finally:
            self.parameters = outer

    # -- catalogues -------------------------------------------------------------------------
    def catalog_entry(self, ref: Node, kind: str) -> tuple[Node, dict[str, str]]:
        """The ``kind`` (``Vehicle``, ...) a CatalogReference names, and its assignments.

        The entry is looked for in the ``<Catalog name=catalogName>`` of the files of that
        kind's catalogue directory; assignments are resolved in the referencing scope.
        """
        catalog, entry = self.text(ref, "catalogName"), self.text(ref, "entryName")
        location = f"{kind}Catalog"
        directory = self.catalogs.get(location)
        if directory is None:
            raise Refused(ref, f"no <{location}> in <CatalogLocations> for catalogue {catalog!r}")
        if (location, "") not in self.entries:
            self._load(location, directory)
        found = self.entries.get((location, f"{catalog}/{entry}"))
        if found is None or found[1].tag != kind:
            raise Refused(ref, f"catalogue {catalog!r} in {directory} has no {kind} {entry!r}")
        assignments = self.one(ref, "ParameterAssignments", required=False)
        assigned = {  # a parameterRef names a parameter (some files write it with its $)
            a.attrib.get("parameterRef", "").lstrip("$"): self.text(a, "value")
            for a in (self.kids(assignments, "ParameterAssignment") if assignments else [])
        }
        path, node = found
        self.read_entries.append((path, node))
        node.used = True
        return node, assigned

    def _load(self, location: str, directory: Path) -> None:
        """Every entry of every catalogue file in a directory, by (location, catalog/entry)."""
        self.entries[(location, "")] = (directory, Node("", {}, 0))  # looked here
        for path in sorted(directory.glob("*.xosc")) if directory.is_dir() else []:
            root = read_root(path, f"OpenSCENARIO catalogue {path}")
            for catalog in (c for c in root.children if c.tag == "Catalog"):
                name = catalog.attrib.get("name", "")
                for entry in catalog.children:
                    key = (location, f"{name}/{entry.attrib.get('name', '')}")
                    self.entries.setdefault(key, (path, entry))

    # -- nodes ------------------------------------------------------------------------------
    def kids(self, node: Node, tag: str | None = None) -> list[Node]:
        """The children (with this tag), marked as taken."""
        found = [c for c in node.children if tag is None or c.tag == tag]
        for child in found:
            child.used = True
        return found

    def one(self, node: Node, tag: str | None = None, required: bool = True) -> Node | None:
        """The one child (with this tag); refused when missing (if ``required``) or repeated."""
        found = self.kids(node, tag)
        if len(found) > 1:
            raise Refused(found[1], "given twice")
        if not found and required:
            raise Refused(node, f"needs a <{tag}>" if tag else "needs a child element")
        return found[0] if found else None

    def need(self, node: Node, tag: str | None = None) -> Node:
        """The one child (with this tag); refused when missing or repeated."""
        found = self.one(node, tag)
        assert found is not None
        return found

    def text(self, node: Node, name: str, default: str | None = None) -> str:
        """An attribute's value, a ``$parameter`` replaced by its value."""
        raw = node.attrib.get(name)
        if raw is None:
            if default is None:
                raise Refused(node, f"needs the attribute {name!r}")
            return default
        if raw.startswith("${") and raw.endswith("}"):
            try:
                return evaluate(raw[2:-1], self.parameters)
            except ExpressionError as exc:
                raise Refused(node, f"{name}={raw!r}: {exc}") from None
        if raw.startswith("$"):
            if raw[1:] not in self.parameters:
                raise Refused(node, f"{name}={raw!r}: no parameter named {raw[1:]!r}")
            return self.parameters[raw[1:]]
        return raw

    def number(self, node: Node, name: str, default: float | None = None) -> float:
        """An attribute as a finite number."""
        raw = self.text(node, name, None if default is None else repr(default))
        try:
            value = float(raw)
        except ValueError:
            raise Refused(node, f"{name}={raw!r} is not a number") from None
        if not math.isfinite(value):
            raise Refused(node, f"{name}={raw!r} is not finite")
        return value

    def integer(self, node: Node, name: str, default: int | None = None) -> int:
        """An attribute as a whole number."""
        value = self.number(node, name, None if default is None else float(default))
        if value != int(value):
            raise Refused(node, f"{name}={value!r} is not a whole number")
        return int(value)

    def flag(self, node: Node, name: str, default: bool = False) -> bool:
        """An attribute as true or false."""
        raw = self.text(node, name, "true" if default else "false")
        if raw not in ("true", "false", "1", "0"):
            raise Refused(node, f"{name}={raw!r} is not true or false")
        return raw in ("true", "1")

    def choice(
        self,
        node: Node,
        name: str,
        allowed: set[str] | Mapping[str, str],
        default: str | None = None,
    ) -> str:
        """An attribute that must be one of ``allowed`` (a mapping gives what it stands for)."""
        raw = self.text(node, name, default)
        if raw not in allowed:
            listed = ", ".join(sorted(allowed))
            raise Refused(node, f"{name}={raw!r} is not supported (supported: {listed})")
        return allowed[raw] if isinstance(allowed, Mapping) else raw

    def each(self, nodes: list[Node], read: Callable[[Node], T]) -> list[T]:
        """``read`` of every node; a refused node is listed and the others still read."""
        out = []
        for node in nodes:
            try:
                out.append(read(node))
            except Refused as exc:
                self.problems.append(str(exc))
                for part in node.walk():  # its problem is said: not its parts again
                    part.used = True
        return out


def read_root(path: Path, source: str) -> Node:
    """A file's XML tree; a file that cannot be read or is not XML is one ``ConfigError``."""
    try:
        return parse(path.read_bytes())
    except OSError as exc:
        raise ConfigError([f"cannot read it: {exc.strerror}"], source) from None
    except expat.ExpatError as exc:
        raise ConfigError(
            [f"line {exc.lineno}: not XML ({expat.errors.messages[exc.code]})"], source
        ) from None


def read_xosc(path: str | Path, parameters: Mapping[str, object] | None = None) -> m.Scenario:
    """Read a ``.xosc`` file; ``parameters`` override its declared values (a variation).

    Raises ``ConfigError`` listing every problem, each with its line and element.
    """
    path = Path(path)
    source = f"OpenSCENARIO {path}"
    root = read_root(path, source)
    if root.tag != "OpenSCENARIO":
        raise ConfigError([f"line {root.line}: <{root.tag}> is not <OpenSCENARIO>"], source)
    reader = Reader({})
    try:
        scenario = _scenario(reader, root, path, dict(parameters or {}))
    except Refused as exc:
        reader.problems.append(str(exc))
        scenario = None
    if scenario is not None:
        for node in root.walk():
            if not node.used and node is not root:
                reader.problems.append(f"line {node.line}: <{node.tag}> {UNSUPPORTED}")
        for file, entry in reader.read_entries:
            for node in entry.walk():
                if not node.used:
                    reader.problems.append(
                        f"line {node.line} of {file.name}: <{node.tag}> {UNSUPPORTED}"
                    )
    if scenario is not None:
        reader.problems += _dangling(scenario)
    if reader.problems or scenario is None:
        raise ConfigError(sorted(set(reader.problems), key=_line), source)
    return scenario


def _dangling(scenario: m.Scenario) -> list[str]:
    """Element state conditions naming no element of their kind (they could never hold)."""
    named: set[tuple[str, str]] = set()
    triggers: list[m.Trigger | None] = [scenario.stop]
    for story in scenario.stories:
        named.add(("story", story.name))
        for act in story.acts:
            named.add(("act", act.name))
            triggers += [act.start, act.stop]
            for group in act.groups:
                named.add(("maneuverGroup", group.name))
                for maneuver in group.maneuvers:
                    named.add(("maneuver", maneuver.name))
                    for event in maneuver.events:
                        named.add(("event", event.name))
                        named.update(("action", action.name) for action in event.actions)
                        triggers.append(event.start)
    return [
        f"line {c.line}: <Condition> {c.name!r}: no {c.test.kind} named {c.test.name!r}"
        for trigger in triggers
        if trigger is not None
        for group in trigger.groups
        for c in group
        if isinstance(c.test, m.ElementState) and (c.test.kind, c.test.name) not in named
    ]


def _line(problem: str) -> int:
    head = problem.split(":", 1)[0]
    return int(head[5:]) if head.startswith("line ") and head[5:].isdigit() else 0


def _scenario(r: Reader, root: Node, path: Path, given: dict[str, object]) -> m.Scenario:
    header = r.need(root, "FileHeader")
    for part in header.walk():
        part.used = True
    version = (r.integer(header, "revMajor"), r.integer(header, "revMinor"))
    if version not in VERSIONS:
        raise Refused(header, f"OpenSCENARIO {version[0]}.{version[1]}: 1.0 to 1.3 are read")
    declared = r.one(root, "ParameterDeclarations", required=False)
    for node in r.kids(declared, "ParameterDeclaration") if declared is not None else []:
        r.parameters[r.text(node, "name")] = r.text(node, "value")
    unknown = sorted(set(given) - set(r.parameters))
    if unknown:
        r.problems.append(f"parameters not declared in the file: {', '.join(unknown)}")
    r.parameters.update({k: str(v) for k, v in given.items()})
    catalogs = r.one(root, "CatalogLocations", required=False)
    for location in r.kids(catalogs) if catalogs is not None else []:
        if location.tag not in CATALOGS and location.tag not in OTHER_CATALOGS:
            raise Refused(location, "not a catalogue location")
        directory = r.need(location, "Directory")
        r.catalogs[location.tag] = path.parent / r.text(directory, "path")
    road = None
    network = r.one(root, "RoadNetwork", required=False)
    if network is not None:
        logic = r.one(network, "LogicFile", required=False)
        if logic is not None:
            road = path.parent / r.text(logic, "filepath")
        r.one(network, "SceneGraphFile", required=False)  # a 3D model to look at: not needed
    entities = r.entities = {
        e.name: e
        for e in r.each(r.kids(r.need(root, "Entities"), "ScenarioObject"), lambda n: _entity(r, n))
    }
    board = r.need(root, "Storyboard")
    init, order, assigned = _init(r, r.need(board, "Init"), entities)
    for name in assigned:
        entities[name] = _external(entities[name])
    stories = tuple(r.each(r.kids(board, "Story"), lambda n: _story(r, n, entities)))
    stop_node = r.one(board, "StopTrigger", required=False)
    stop = _trigger(r, stop_node) if stop_node is not None else None
    return m.Scenario(
        path=path, version=version, parameters=dict(r.parameters), road=road,
        entities=entities, init=init, init_order=order, stories=stories, stop=stop,
        description=header.attrib.get("description", ""), trajectories=tuple(r.trajectories),
    )  # fmt: skip


def _external(entity: m.Entity) -> m.Entity:
    from dataclasses import replace

    return replace(entity, external=True)


def _is_external(r: Reader, controller: Node) -> bool:
    for part in controller.walk():  # a controller's other properties are its own business
        part.used = True
    if r.text(controller, "name", "") == EXTERNAL:
        return True
    props = r.one(controller, "Properties", required=False)
    return props is not None and any(
        (r.text(p, "name", ""), r.text(p, "value", "")) in EXTERNAL_PROPERTIES
        for p in r.kids(props, "Property")
    )


def _entity(r: Reader, node: Node) -> m.Entity:
    name = r.text(node, "name")
    vehicle = r.one(node, "Vehicle", required=False)
    assigned: dict[str, str] = {}
    reference = r.one(node, "CatalogReference", required=False)
    if vehicle is None and reference is not None:
        vehicle, assigned = r.catalog_entry(reference, "Vehicle")
    if vehicle is None:
        other = next((c for c in node.children if c.tag != "ObjectController"), node)
        raise Refused(other, f"entity {name!r}: only <Vehicle> entities are supported")
    controller = r.one(node, "ObjectController", required=False)
    external = controller is not None and _external_controller(r, controller)
    with r.scope(vehicle, assigned):
        return _vehicle(r, vehicle, name, external, node.line)


def _external_controller(r: Reader, node: Node) -> bool:
    """Whether an ObjectController's (or AssignControllerAction's) Controller is external.

    The Controller is given inline or as a reference to a controller catalogue's entry.
    """
    reference = r.one(node, "CatalogReference", required=False)
    if reference is None:
        return _is_external(r, r.need(node, "Controller"))
    controller, assigned = r.catalog_entry(reference, "Controller")
    with r.scope(controller, assigned):
        return _is_external(r, controller)


def _trailer(r: Reader, vehicle: Node) -> None:
    """Accept a trailer hitch, and a ``<Trailer>`` that tows nothing (an empty reference)."""
    r.one(vehicle, "TrailerHitch", required=False)
    r.one(vehicle, "TrailerCoupler", required=False)
    trailer = r.one(vehicle, "Trailer", required=False)
    ref = None if trailer is None else r.one(trailer, "TrailerRef", required=False)
    if trailer is not None and (ref is None or r.text(ref, "entityRef", "")):
        raise Refused(trailer, "trailers are not supported")


def _vehicle(r: Reader, vehicle: Node, name: str, external: bool, line: int) -> m.Entity:
    for part in vehicle.walk():
        part.used = part.used or part.tag in HARMLESS
    _trailer(r, vehicle)
    category = r.choice(vehicle, "vehicleCategory", PRESETS)
    preset = category
    props = r.one(vehicle, "Properties", required=False)
    for prop in r.kids(props, "Property") if props is not None else []:
        if r.text(prop, "name", "") == "preset":
            preset = r.text(prop, "value")
    box = r.need(vehicle, "BoundingBox")
    dims = r.need(box, "Dimensions")
    r.need(vehicle, "Axles")
    performance = r.need(vehicle, "Performance")
    return m.Entity(
        name=name, preset=preset, length=r.number(dims, "length"), width=r.number(dims, "width"),
        max_speed=r.number(performance, "maxSpeed"), external=external, line=line,
    )  # fmt: skip


def _init(
    r: Reader, node: Node, entities: dict[str, m.Entity]
) -> tuple[dict[str, m.InitState], tuple[str, ...], list[str]]:
    """Each entity's start, the order entities were placed in, and those assigned ``external``."""
    init = {name: m.InitState() for name in entities}
    order: list[str] = []
    assigned: list[str] = []
    actions = r.need(node, "Actions")
    for private in r.kids(actions, "Private"):
        name = _entity_ref(r, private)
        for action in r.kids(private, "PrivateAction"):
            kind = r.need(action)
            if kind.tag == "TeleportAction":
                position = _position(r, r.need(kind, "Position"))
                init[name] = m.InitState(position, init[name].speed, init[name].ramp)
                order.append(name)
            elif kind.tag == "LongitudinalAction":
                speed = _speed(r, r.need(kind, "SpeedAction"))
                ramp = None if speed.dynamics.shape == "step" else speed.dynamics
                if speed.entity is not None:
                    raise Refused(kind, "Init takes an absolute target speed")
                if ramp is not None and entities[name].external:
                    raise Refused(kind, f"{name!r} is driven from outside: it starts at a step")
                init[name] = m.InitState(init[name].position, speed.value, ramp)
            elif kind.tag == "ActivateControllerAction":  # 1.0: directly in the PrivateAction
                _activate(r, kind, name)
            elif kind.tag == "ControllerAction":
                for part in r.kids(kind):
                    if part.tag == "AssignControllerAction":
                        if _external_controller(r, part):
                            assigned.append(name)
                            r.assigned_external.add(name)
                    elif part.tag == "ActivateControllerAction":
                        _activate(r, part, name)
                    else:
                        raise Refused(part, "not supported in Init")
            else:
                raise Refused(kind, "not supported in Init")
    for name in entities:
        if init[name].position is None:
            r.problems.append(f"entity {name!r}: Init gives it no TeleportAction (no position)")
    return init, tuple(order), assigned


def _entity_ref(r: Reader, node: Node, attr: str = "entityRef") -> str:
    name = r.text(node, attr)
    if name not in r.entities:
        raise Refused(node, f"{attr}={name!r}: no entity of that name")
    return name


def _position(r: Reader, node: Node) -> m.Position:
    kind = r.need(node)
    orientation = r.one(kind, "Orientation", required=False)
    position = _where(r, kind)
    if orientation is None:
        return position
    absolute = r.choice(orientation, "type", {"relative", "absolute"}, "relative") == "absolute"
    if any(r.number(orientation, a, 0.0) for a in ("p", "r")):
        raise Refused(orientation, "pitch and roll come from the road")
    h = r.number(orientation, "h", 0.0)
    if not absolute and (not h or isinstance(position, m.WorldPosition)):
        return position  # the lane's own direction (a world position: h is its heading)
    if isinstance(position, m.WorldPosition):
        return m.WorldPosition(position.x, position.y, h)
    assert not isinstance(position, m.Oriented)
    return m.Oriented(position, h, relative=not absolute)


def _where(r: Reader, kind: Node) -> m.Position:
    if kind.tag == "WorldPosition":
        h = r.number(kind, "h") if "h" in kind.attrib else None
        return m.WorldPosition(r.number(kind, "x"), r.number(kind, "y"), h)
    if kind.tag == "LanePosition":
        return m.LanePosition(
            r.text(kind, "roadId"), r.integer(kind, "laneId"), r.number(kind, "s"),
            r.number(kind, "offset", 0.0),
        )  # fmt: skip
    if kind.tag == "RoadPosition":
        return m.RoadPosition(r.text(kind, "roadId"), r.number(kind, "s"), r.number(kind, "t"))
    if kind.tag == "RelativeLanePosition":
        if "dsLane" in kind.attrib:
            raise Refused(kind, "dsLane is not supported (give ds)")
        return m.RelativeLanePosition(
            _entity_ref(r, kind), r.integer(kind, "dLane"), r.number(kind, "ds", 0.0),
            r.number(kind, "offset", 0.0),
        )  # fmt: skip
    if kind.tag == "RelativeObjectPosition":
        return m.RelativeObjectPosition(
            _entity_ref(r, kind), r.number(kind, "dx"), r.number(kind, "dy")
        )
    if kind.tag == "RelativeRoadPosition":
        return m.RelativeRoadPosition(
            _entity_ref(r, kind), r.number(kind, "ds"), r.number(kind, "dt")
        )
    raise Refused(kind, "this position is not supported")


def _dynamics(r: Reader, node: Node, dimensions: set[str]) -> m.Dynamics:
    return m.Dynamics(
        r.choice(node, "dynamicsShape", SHAPES),
        r.choice(node, "dynamicsDimension", dimensions),
        r.number(node, "value"),
    )


def _speed(r: Reader, node: Node) -> m.SpeedAction:
    dynamics = _dynamics(r, r.need(node, "SpeedActionDynamics"), {"time", "distance", "rate"})
    target = r.need(r.need(node, "SpeedActionTarget"))
    if target.tag == "AbsoluteTargetSpeed":
        return m.SpeedAction(dynamics, r.number(target, "value"))
    if target.tag == "RelativeTargetSpeed":
        continuous = r.flag(target, "continuous")
        kind = r.choice(target, "speedTargetValueType", {"delta", "factor"})
        return m.SpeedAction(
            dynamics, r.number(target, "value"), _entity_ref(r, target), kind, continuous
        )
    raise Refused(target, "not a speed target")


def _activate(r: Reader, node: Node, entity: str | None) -> m.ActivateControllerAction:
    """ActivateControllerAction: which domains it switches on or off.

    An external entity's controller is always active (vcosim cannot take a coupled vehicle
    back), so switching it off is refused; a storyboard vehicle's built-in driver is both
    its default and its assigned controller, so the action changes nothing on it.
    """
    for attr in ("animation", "lighting"):
        if attr in node.attrib:
            r.flag(node, attr)
    r.text(node, "controllerRef", "")  # 1.2: which of its controllers (vcosim's: the one)
    lateral = r.flag(node, "lateral") if "lateral" in node.attrib else None
    longitudinal = r.flag(node, "longitudinal") if "longitudinal" in node.attrib else None
    external = entity is not None and r.entities[entity].external
    if entity is not None and not external and entity in r.assigned_external:
        external = True
    if external and False in (lateral, longitudinal):
        raise Refused(node, f"{entity!r} is driven from outside: its controller stays active")
    return m.ActivateControllerAction(lateral, longitudinal)


def _trajectory(r: Reader, node: Node) -> m.Trajectory:
    """A Trajectory, inline or from a trajectory catalogue."""
    assigned: dict[str, str] = {}
    if node.tag == "CatalogReference":
        node, assigned = r.catalog_entry(node, "Trajectory")
    elif node.tag != "Trajectory":
        raise Refused(node, "not a trajectory")
    with r.scope(node, assigned):
        r.flag(node, "closed")
        shape_node = r.need(r.need(node, "Shape"))
        shape: m.Polyline | m.Clothoid
        if shape_node.tag == "Polyline":
            vertices = r.kids(shape_node, "Vertex")
            if len(vertices) < 2:
                raise Refused(shape_node, "a polyline needs two vertices or more")
            shape = m.Polyline(
                tuple(_fixed(r, r.need(v, "Position")) for v in vertices),
                tuple(r.number(v, "time") if "time" in v.attrib else None for v in vertices),
            )
        elif shape_node.tag == "Clothoid":
            rate = "curvaturePrime" if "curvaturePrime" in shape_node.attrib else "curvatureDot"
            times = [r.number(shape_node, a) if a in shape_node.attrib else None
                     for a in ("startTime", "stopTime")]  # fmt: skip
            shape = m.Clothoid(
                _fixed(r, r.need(shape_node, "Position")), r.number(shape_node, "curvature"),
                r.number(shape_node, rate, 0.0), r.number(shape_node, "length"), *times,
            )  # fmt: skip
            if shape.length <= 0:
                raise Refused(shape_node, "length must be positive")
        else:
            raise Refused(shape_node, "only Polyline and Clothoid trajectories are supported")
        trajectory = m.Trajectory(r.text(node, "name"), shape, len(r.trajectories))
    r.trajectories.append(trajectory)
    return trajectory


def _fixed(r: Reader, node: Node) -> m.Position:
    """A position that does not move with an entity (a trajectory is laid out at the start)."""
    position = _position(r, node)
    inner = position.position if isinstance(position, m.Oriented) else position
    relative = (m.RelativeLanePosition, m.RelativeObjectPosition, m.RelativeRoadPosition)
    if isinstance(inner, relative):
        raise Refused(node, "a trajectory's positions are World, Lane or Road positions")
    return position


def _follow(r: Reader, node: Node) -> m.FollowTrajectoryAction:
    """FollowTrajectoryAction: the trajectory (inline, by catalogue, or a TrajectoryRef)."""
    if "initialDistanceOffset" in node.attrib and r.number(node, "initialDistanceOffset"):
        raise Refused(node, "initialDistanceOffset is not supported")
    found = [c for c in node.children if c.tag in ("Trajectory", "CatalogReference")]
    ref = r.one(node, "TrajectoryRef", required=False)
    if ref is not None:
        found.append(r.need(ref))
    if len(found) != 1:
        raise Refused(node, "needs one Trajectory (inline, a TrajectoryRef or a CatalogReference)")
    found[0].used = True
    trajectory = _trajectory(r, found[0])
    reference = r.need(r.need(node, "TimeReference"))
    timing = None
    if reference.tag == "Timing":
        timing = m.Timing(
            r.choice(reference, "domainAbsoluteRelative", {"absolute", "relative"}),
            r.number(reference, "scale", 1.0), r.number(reference, "offset", 0.0),
        )  # fmt: skip
        if not isinstance(trajectory.shape, m.Clothoid) and None in trajectory.shape.times:
            raise Refused(reference, "timing needs a time on every vertex")
        if isinstance(trajectory.shape, m.Clothoid) and None in (
            trajectory.shape.start_time,
            trajectory.shape.stop_time,
        ):
            raise Refused(reference, "timing needs the clothoid's startTime and stopTime")
    elif reference.tag != "None":
        raise Refused(reference, "not a time reference")
    mode = r.one(node, "TrajectoryFollowingMode", required=False)
    following = "position"
    if mode is not None:
        following = r.choice(mode, "followingMode", {"position", "follow"})
        if "followingLateralMode" in mode.attrib:
            r.choice(mode, "followingLateralMode", {"position", "follow"})
    return m.FollowTrajectoryAction(trajectory, timing, following)


def _private(r: Reader, node: Node) -> m.PrivateAction:
    kind = r.need(node)
    if kind.tag == "TeleportAction":
        return m.TeleportAction(_position(r, r.need(kind, "Position")))
    if kind.tag == "ActivateControllerAction":  # 1.0: directly in the PrivateAction
        return _activate(r, kind, None)
    inner = r.need(kind)
    if kind.tag == "RoutingAction" and inner.tag == "FollowTrajectoryAction":
        return _follow(r, inner)
    if kind.tag == "ControllerAction" and inner.tag == "ActivateControllerAction":
        return _activate(r, inner, None)
    if kind.tag == "LongitudinalAction" and inner.tag == "SpeedAction":
        return _speed(r, inner)
    if kind.tag == "LateralAction" and inner.tag == "LaneChangeAction":
        dynamics = _dynamics(r, r.need(inner, "LaneChangeActionDynamics"), {"time", "distance"})
        target = r.need(r.need(inner, "LaneChangeTarget"))
        offset = r.number(inner, "targetLaneOffset", 0.0)
        if target.tag == "AbsoluteTargetLane":
            return m.LaneChangeAction(dynamics, r.integer(target, "value"), None, offset)
        if target.tag == "RelativeTargetLane":
            ref = _entity_ref(r, target)
            return m.LaneChangeAction(dynamics, r.integer(target, "value"), ref, offset)
        raise Refused(target, "not a lane change target")
    if kind.tag == "LateralAction" and inner.tag == "LaneOffsetAction":
        if r.flag(inner, "continuous"):
            raise Refused(inner, "continuous='true' is not supported")
        how = r.need(inner, "LaneOffsetActionDynamics")
        target = r.need(r.need(inner, "LaneOffsetTarget"))
        shape = r.choice(how, "dynamicsShape", SHAPES)
        acc = r.number(how, "maxLateralAcc", 1.0)
        if target.tag == "AbsoluteTargetLaneOffset":
            return m.LaneOffsetAction(shape, r.number(target, "value"), acc)
        if target.tag == "RelativeTargetLaneOffset":
            ref = _entity_ref(r, target)
            return m.LaneOffsetAction(shape, r.number(target, "value"), acc, ref)
        raise Refused(target, "not a lane offset target")
    raise Refused(inner, "this action is not supported")


def _story(r: Reader, node: Node, entities: dict[str, m.Entity]) -> m.Story:
    with r.scope(node):
        acts = tuple(r.each(r.kids(node, "Act"), lambda n: _act(r, n, entities)))
        return m.Story(r.text(node, "name"), acts, node.line)


def _act(r: Reader, node: Node, entities: dict[str, m.Entity]) -> m.Act:
    groups = tuple(r.each(r.kids(node, "ManeuverGroup"), lambda n: _group(r, n, entities)))
    start = r.one(node, "StartTrigger", required=False)
    stop = r.one(node, "StopTrigger", required=False)
    return m.Act(
        r.text(node, "name"), groups,
        None if start is None else _trigger(r, start), None if stop is None else _trigger(r, stop),
        node.line,
    )  # fmt: skip


def _group(r: Reader, node: Node, entities: dict[str, m.Entity]) -> m.ManeuverGroup:
    actors_node = r.need(node, "Actors")
    if r.flag(actors_node, "selectTriggeringEntities"):
        raise Refused(actors_node, "selectTriggeringEntities='true' is not supported")
    actors = tuple(_entity_ref(r, a) for a in r.kids(actors_node, "EntityRef"))
    for actor in actors:
        if entities[actor].external:
            raise Refused(
                actors_node, f"{actor!r} is driven from outside: the storyboard cannot act on it"
            )
    chosen = [c for c in node.children if c.tag in ("Maneuver", "CatalogReference")]
    for child in chosen:
        child.used = True
    maneuvers = tuple(r.each(chosen, lambda n: _maneuver(r, n, entities)))
    return m.ManeuverGroup(
        r.text(node, "name"), r.integer(node, "maximumExecutionCount", 1), actors, maneuvers,
        node.line,
    )  # fmt: skip


def _maneuver(r: Reader, node: Node, entities: dict[str, m.Entity]) -> m.Maneuver:
    assigned: dict[str, str] = {}
    if node.tag == "CatalogReference":
        node, assigned = r.catalog_entry(node, "Maneuver")
    with r.scope(node, assigned):
        events = tuple(r.each(r.kids(node, "Event"), lambda n: _event(r, n, entities)))
        return m.Maneuver(r.text(node, "name"), events, node.line)


def _event(r: Reader, node: Node, entities: dict[str, m.Entity]) -> m.Event:
    actions = []
    for action in r.kids(node, "Action"):
        private = r.one(action, "PrivateAction", required=False)
        if private is None:
            other = r.need(action)
            raise Refused(other, "only private actions are supported")
        actions.append(m.Action(r.text(action, "name"), _private(r, private), action.line))
    start = r.one(node, "StartTrigger", required=False)
    return m.Event(
        r.text(node, "name"), r.choice(node, "priority", PRIORITIES),
        r.integer(node, "maximumExecutionCount", 1), tuple(actions),
        None if start is None else _trigger(r, start), node.line,
    )  # fmt: skip


def _trigger(r: Reader, node: Node) -> m.Trigger:
    return m.Trigger(
        tuple(
            tuple(_condition(r, c) for c in r.kids(group, "Condition"))
            for group in r.kids(node, "ConditionGroup")
        )
    )


def _condition(r: Reader, node: Node) -> m.Condition:
    kind = r.need(node)
    test: m.ValueCondition | m.EntityCondition
    if kind.tag == "ByValueCondition":
        test = _by_value(r, r.need(kind))
    elif kind.tag == "ByEntityCondition":
        who = r.need(kind, "TriggeringEntities")
        rule = r.choice(who, "triggeringEntitiesRule", {"any", "all"})
        refs = tuple(_entity_ref(r, e) for e in r.kids(who, "EntityRef"))
        test = m.EntityCondition(
            refs, rule == "any", _by_entity(r, r.need(r.need(kind, "EntityCondition")))
        )
    else:
        raise Refused(kind, "not a condition")
    return m.Condition(
        r.text(node, "name"), r.number(node, "delay", 0.0),
        r.choice(node, "conditionEdge", EDGES), test, node.line,
    )  # fmt: skip


def _by_value(r: Reader, node: Node) -> m.ValueCondition:
    if node.tag == "SimulationTimeCondition":
        return m.SimulationTime(r.number(node, "value"), r.choice(node, "rule", RULES))
    if node.tag == "StoryboardElementStateCondition":
        return m.ElementState(
            r.choice(node, "storyboardElementType", KINDS), r.text(node, "storyboardElementRef"),
            r.choice(node, "state", STATES),
        )  # fmt: skip
    if node.tag == "ParameterCondition":
        # a parameter not declared (where the condition is: '', or one a Story declares) is
        # never true, as esmini has it ("Parameter ... not found"); docs/scenarios.md
        name = r.text(node, "parameterRef")
        return m.ParameterCondition(
            name, r.text(node, "value"), r.choice(node, "rule", RULES), r.parameters.get(name)
        )
    if node.tag in NOT_GIVEN:
        raise Refused(node, NOT_GIVEN[node.tag])
    raise Refused(node, "this condition is not supported")


NOT_GIVEN = {
    "TimeOfDayCondition": "no environment gives the time of day (EnvironmentAction is not read)",
    "TrafficSignalCondition": "traffic signal states are not read yet",
    "TrafficSignalControllerCondition": "traffic signal controllers are not read yet",
    "UserDefinedValueCondition": "no face supplies user-defined values",
}
"""Conditions on values nothing in a vcosim run gives: refused by name, with why."""
DIRECTIONS = {"longitudinal", "lateral", "vertical"}
SYSTEMS = {"entity", "road", "lane"}
OBJECT_TYPES = {"vehicle", "pedestrian", "miscellaneous"}


def _measure(r: Reader, node: Node) -> tuple[str, str]:
    """(longitudinal, lateral or cartesian; the coordinate system: entity, road or lane).

    1.0's ``alongRoute`` is the longitudinal distance; a cartesian distance is the same in
    every system.
    """
    kinds = {
        "longitudinal": "longitudinal",
        "lateral": "lateral",
        "cartesianDistance": "cartesian",
        "euclidianDistance": "cartesian",
    }
    if "relativeDistanceType" in node.attrib:
        measure = r.choice(node, "relativeDistanceType", kinds)
    elif r.flag(node, "alongRoute"):  # 1.0: along the route is the longitudinal distance
        measure = "longitudinal"
    else:
        measure = "cartesian"
    system = r.choice(node, "coordinateSystem", SYSTEMS, "entity")
    return measure, "entity" if measure == "cartesian" else system


def _direction(r: Reader, node: Node) -> str | None:
    return r.choice(node, "direction", DIRECTIONS) if "direction" in node.attrib else None


def _by_entity(r: Reader, node: Node) -> m.EntityTest:
    tag = node.tag
    if tag in ("SpeedCondition", "AccelerationCondition"):
        cls = m.Speed if tag == "SpeedCondition" else m.Acceleration
        return cls(r.number(node, "value"), r.choice(node, "rule", RULES), _direction(r, node))
    if tag == "RelativeSpeedCondition":
        return m.RelativeSpeed(
            _entity_ref(r, node), r.number(node, "value"), r.choice(node, "rule", RULES),
            _direction(r, node),
        )  # fmt: skip
    if tag == "ReachPositionCondition":
        return m.ReachPosition(_position(r, r.need(node, "Position")), r.number(node, "tolerance"))
    if tag in ("DistanceCondition", "RelativeDistanceCondition"):
        if "routingAlgorithm" in node.attrib:
            raise Refused(node, "routingAlgorithm is not supported")
        position = _position(r, r.need(node, "Position")) if tag == "DistanceCondition" else None
        entity = _entity_ref(r, node) if tag == "RelativeDistanceCondition" else None
        measure, system = _measure(r, node)
        return m.Distance(
            r.number(node, "value"), r.choice(node, "rule", RULES), r.flag(node, "freespace"),
            measure, position, entity, system,
        )  # fmt: skip
    if tag == "TimeHeadwayCondition":
        measure, system = _measure(r, node)
        return m.TimeHeadway(
            _entity_ref(r, node), r.number(node, "value"), r.choice(node, "rule", RULES),
            r.flag(node, "freespace"), measure, system,
        )  # fmt: skip
    if tag == "TimeToCollisionCondition":
        measure, system = _measure(r, node)
        target = r.need(r.need(node, "TimeToCollisionConditionTarget"))
        entity = position = None
        if target.tag == "EntityRef":
            entity = _entity_ref(r, target)
        else:
            position = _position(r, target) if target.tag == "Position" else None
            if position is None:
                raise Refused(target, "not a time-to-collision target")
        return m.TimeToCollision(
            r.number(node, "value"), r.choice(node, "rule", RULES), r.flag(node, "freespace"),
            entity, position, measure, system,
        )  # fmt: skip
    if tag == "CollisionCondition":
        target = r.need(node)
        if target.tag == "ByType":
            return m.CollisionCondition(None, r.choice(target, "type", OBJECT_TYPES))
        if target.tag != "EntityRef":
            raise Refused(target, "a collision is with an entity (EntityRef) or a kind (ByType)")
        return m.CollisionCondition(_entity_ref(r, target))
    if tag == "EndOfRoadCondition":
        return m.EndOfRoad(r.number(node, "duration"))
    if tag == "OffroadCondition":
        return m.Offroad(r.number(node, "duration"))
    if tag == "StandStillCondition":
        return m.StandStill(r.number(node, "duration"))
    if tag == "TraveledDistanceCondition":
        return m.TraveledDistance(r.number(node, "value"))
    if tag == "RelativeClearanceCondition":
        lanes = []
        for span in r.kids(node, "RelativeLaneRange"):
            low, high = r.integer(span, "from", -99), r.integer(span, "to", 99)
            if low > high:
                raise Refused(span, f"from={low} is above to={high}")
            lanes.append((low, high))
        return m.RelativeClearance(
            tuple(_entity_ref(r, e) for e in r.kids(node, "EntityRef")), tuple(lanes),
            r.number(node, "distanceForward", 0.0), r.number(node, "distanceBackward", 0.0),
            r.flag(node, "freeSpace"), r.flag(node, "oppositeLanes"),
        )  # fmt: skip
    if tag in ("AngleCondition", "RelativeAngleCondition"):
        angle = r.text(node, "angleType")
        if angle != "heading":
            raise Refused(node, f"angleType={angle!r}: the storyboard sees headings only")
        return m.Angle(
            r.number(node, "angle"), r.number(node, "angleTolerance"),
            r.choice(node, "coordinateSystem", SYSTEMS | {"world"}, "world"),
            _entity_ref(r, node) if tag == "RelativeAngleCondition" else None,
        )  # fmt: skip
    raise Refused(node, "this condition is not supported")
