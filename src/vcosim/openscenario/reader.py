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
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TypeVar
from xml.parsers import expat

from vcosim.config import MAX_SCENARIO_BYTES, read_input_bytes
from vcosim.errors import ConfigError
from vcosim.openscenario import model as m
from vcosim.openscenario.actions import instant
from vcosim.openscenario.expressions import ExpressionError, evaluate
from vcosim.openscenario.trajectory import reverses

VERSIONS = ((1, 0), (1, 1), (1, 2), (1, 3))
PRESETS = {"car": "nightrider", "van": "nightrider"}
"""vehicleCategory -> the vcosim preset that drives it (a ``preset`` property overrides);
other categories move kinematically, unless driven from outside (then as this preset):"""
DEFAULT_PRESET = "nightrider"
VEHICLES = {"car", "van", "truck", "trailer", "semitrailer", "bus", "motorbike", "bicycle",
            "train", "tram"}  # fmt: skip
OBJECTS = {
    "Vehicle": ("VehicleCatalog", "vehicle", "vehicleCategory", VEHICLES),
    "Pedestrian": ("PedestrianCatalog", "pedestrian", "pedestrianCategory",
                   {"pedestrian", "wheelchair", "animal"}),
    "MiscObject": ("MiscObjectCatalog", "misc", "miscObjectCategory",
                   {"none", "obstacle", "pole", "tree", "vegetation", "barrier", "building",
                    "parkingSpace", "patch", "railing", "trafficIsland", "crosswalk",
                    "streetLamp", "gantry", "soundBarrier", "wind", "roadMark"}),
}  # fmt: skip
"""What a ScenarioObject may be: its catalogue, kind, category attribute and categories."""
EXTERNAL = "external"
"""A Controller named this, or with ``<Property name="controller" value="external"/>``, makes
its entity driven from outside (a tight-coupling endpoint)."""
EXTERNAL_PROPERTIES = {
    ("controller", EXTERNAL),
    ("esminiController", "ExternalController"),
    ("module", "external_control"),
}
"""Controller properties that make it external: vcosim's, esmini's external controller and
scenario_runner's ``external_control`` module (whose vehicles are moved from outside too), so
their scenarios couple their ego."""
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
    "EnvironmentCatalog": "Environment",
    "RouteCatalog": "Route",
    "VehicleCatalog": "Vehicle",
    "PedestrianCatalog": "Pedestrian",
    "MiscObjectCatalog": "MiscObject",
    "ControllerCatalog": "Controller",
    "ManeuverCatalog": "Maneuver",
    "TrajectoryCatalog": "Trajectory",
}
"""The catalogues whose entries a scenario may reference, and the element each holds."""
# Elements that carry nothing a run needs; read and accepted as they are.
HARMLESS = {"FileHeader", "CatalogLocations", "Properties", "Property", "Performance", "Axles",
            "FrontAxle", "RearAxle", "AdditionalAxle", "BoundingBox", "Center", "Dimensions",
            "Orientation", "ParameterDeclarations", "ParameterDeclaration", "License",
            "TrailerHitch", "TrailerCoupler", "File", "Model3d"}  # fmt: skip


UNSUPPORTED = "is not supported (docs/scenarios.md lists what is)"
MAPS = "VCOSIM_MAPS"
"""The environment variable naming the folders of maps (os.pathsep between them)."""


def map_folders() -> list[str]:
    """The folders ``VCOSIM_MAPS`` names."""
    return [p for p in os.environ.get(MAPS, "").split(os.pathsep) if p]


class Refused(Exception):
    """One problem of the file, with the line it is on."""

    def __init__(self, node: Node, message: str, quiet: bool = False) -> None:
        where = f"line {node.line} of {node.file}" if node.file else f"line {node.line}"
        super().__init__(f"{where}: <{node.tag}>: {message}")
        self.quiet = quiet
        """A consequence of a problem said elsewhere (a refused entity named again)."""


@dataclass
class Node:
    """An XML element with its line; ``used`` once the reader has taken it."""

    tag: str
    attrib: dict[str, str]
    line: int
    children: list[Node] = field(default_factory=list)
    used: bool = False
    file: str = ""
    """The catalogue file it is in ("" in the scenario's own file)."""

    def walk(self) -> Iterator[Node]:
        """The node and every node below it, in document order (without recursion)."""
        stack = [self]
        while stack:
            node = stack.pop()
            yield node
            stack.extend(reversed(node.children))


MAX_DEPTH = 100
"""The deepest nesting of elements read (OpenSCENARIO's deepest is about 20)."""


class TooDeep(Exception):
    """An element nested deeper than ``MAX_DEPTH``, at its line."""

    def __init__(self, line: int) -> None:
        super().__init__(f"line {line}: elements nested more than {MAX_DEPTH} deep")


def parse(text: bytes, file: str = "") -> Node:
    """The element tree of ``text``, every node with its line (and ``file``: a catalogue's).

    Raises ``TooDeep`` at the first element nested deeper than ``MAX_DEPTH``.
    """
    parser = expat.ParserCreate()
    stack: list[Node] = []
    root: list[Node] = []

    def start(tag: str, attrib: dict[str, str]) -> None:
        if len(stack) >= MAX_DEPTH:
            raise TooDeep(parser.CurrentLineNumber)
        node = Node(tag, attrib, parser.CurrentLineNumber, file=file)
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
        self.init_before: dict[str, tuple[m.Position, ...]] = {}
        """Init's earlier teleports of an entity a later one places relative to itself."""
        self.carla = False
        """World y and headings in CARLA's left-handed frame (a "CARLA:" description)."""
        self.variables: dict[str, str] = {}
        self.maps: list[Path] = []
        self.towed: list[m.Entity] = []
        """Trailers a vehicle brings along (1.3's inline Trailer): entities of their own."""
        self.declared: set[str] = set()
        """Every entity the file declares, read or refused (a refused one is not named again)."""
        self.outside: list[tuple[str, int, str]] = []
        """The parameters whose values are outside their constraints: name, line, what fails."""

    @contextmanager
    def scope(self, node: Node, assigned: Mapping[str, str] | None = None) -> Iterator[None]:
        """Within: the parameters ``node`` declares (given ``assigned`` values) are known too."""
        outer = dict(self.parameters)
        assigned = dict(assigned or {})
        names = self.declare(self.one(node, "ParameterDeclarations", required=False), assigned)
        self.parameters.update({k: v for k, v in assigned.items() if k not in names})
        try:
            yield
        finally:
            self.parameters = outer

    def declare(self, declared: Node | None, given: Mapping[str, str]) -> set[str]:
        """Take a ``ParameterDeclarations``' parameters in order; the names declared.

        A value given from outside (a variation, a catalogue reference's assignment) replaces
        the declared one where it is declared, so the declarations after it see it; each
        value must satisfy its declaration's ``ConstraintGroup``s (1.2).
        """
        names: set[str] = set()
        for decl in self.kids(declared, "ParameterDeclaration") if declared is not None else []:
            name = self.parameter_name(decl, "name")
            value = given[name] if name in given else self.text(decl, "value")
            groups = self.kids(decl, "ConstraintGroup")
            unmet = constraints_unmet(
                value,
                [[self.constraint(c) for c in self.kids(g, "ValueConstraint")] for g in groups],
            )
            if unmet:  # said, and the value kept: what refers to it is not refused too
                said = f"{value!r} (given)" if name in given else f"{value!r}"
                message = f"parameter {name!r} = {said} is outside its constraints: {unmet}"
                self.problems.append(str(Refused(decl, message)))
                self.outside.append((name, decl.line, unmet))
            self.parameters[name] = value
            names.add(name)
        return names

    def parameter_name(self, node: Node, attribute: str) -> str:
        """The name of a parameter an attribute declares or refers to, as written.

        Not resolved as a value is (some files write the name with its ``$``).
        """
        name = node.attrib.get(attribute, "").removeprefix("$")
        if not name:
            raise Refused(node, f"{attribute}: needs a parameter's name")
        return name

    def constraint(self, node: Node) -> tuple[str, str]:
        """A ``ValueConstraint``: its rule and its value."""
        return self.choice(node, "rule", RULES), self.text(node, "value")

    # -- catalogues -------------------------------------------------------------------------
    def catalog_entry(self, ref: Node, *kinds: str) -> tuple[Node, dict[str, str]]:
        """The entry a CatalogReference names (one of ``kinds``), and its assignments.

        The entry is looked for in the ``<Catalog name=catalogName>`` of the files of each
        kind's catalogue directory; assignments are resolved in the referencing scope.
        """
        catalog, entry = self.text(ref, "catalogName"), self.text(ref, "entryName")
        searched: list[str] = []
        found = None
        for kind in kinds:
            location = f"{kind}Catalog"
            directory = self.catalogs.get(location)
            if directory is None:
                continue
            searched.append(str(directory))
            if (location, "") not in self.entries:
                self._load(location, directory)
            found = self.entries.get((location, f"{catalog}/{entry}"))
            if found is None:  # as esmini: an entry of that name in a catalogue named otherwise
                named = [v for (loc, key), v in self.entries.items()
                         if loc == location and key.split("/", 1)[-1] == entry]  # fmt: skip
                found = named[0] if len(named) == 1 else None
            if found is not None and found[1].tag == kind:
                break
            found = None
        what = " or ".join(kinds)
        if not searched:
            locations = " or ".join(f"<{kind}Catalog>" for kind in kinds)
            raise Refused(ref, f"no {locations} in <CatalogLocations> for catalogue {catalog!r}")
        if found is None:
            where = ", ".join(searched)
            raise Refused(ref, f"catalogue {catalog!r} in {where} has no {what} {entry!r}")
        assignments = self.one(ref, "ParameterAssignments", required=False)
        assigned = {  # a parameterRef names a parameter (some files write it with its $)
            a.attrib.get("parameterRef", "").lstrip("$"): self.text(a, "value")
            for a in (self.kids(assignments, "ParameterAssignment") if assignments else [])
        }
        path, node = found
        self.read_entries.append((path, node))
        node.used = True
        return node, assigned

    def inline_or_catalogued(self, node: Node, kind: str) -> tuple[Node, dict[str, str]]:
        """A ``kind`` given inline, or the catalogue entry a CatalogReference names."""
        if node.tag == "CatalogReference":
            return self.catalog_entry(node, kind)
        if node.tag != kind:
            raise Refused(node, f"not a {kind}")
        return node, {}

    def _load(self, location: str, directory: Path) -> None:
        """Every entry of every catalogue file in a directory, by (location, catalog/entry)."""
        self.entries[(location, "")] = (directory, Node("", {}, 0))  # looked here
        for path in sorted(directory.glob("*.xosc")) if directory.is_dir() else []:
            root = read_root(path, f"OpenSCENARIO catalogue {path}", catalogue=True)
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
                said = raw if len(raw) <= 80 else f"{raw[:60]}...}}"
                raise Refused(node, f"{name}={said!r}: {exc}") from None
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
                if not exc.quiet:
                    self.problems.append(str(exc))
                for part in node.walk():  # its problem is said: not its parts again
                    part.used = True
        return out


def constraints_unmet(value: str, groups: list[list[tuple[str, str]]]) -> str:
    """What a value fails of its declaration's constraint groups ('' when it meets them).

    It meets them when it meets every constraint of one group (or there is no group);
    numbers are compared as numbers, anything else as text.
    """
    if not groups or any(all(_meets(value, rule, bound) for rule, bound in g) for g in groups):
        return ""
    return " or ".join(
        "(" + " and ".join(f"{rule} {bound}" for rule, bound in g) + ")" for g in groups
    )


def _meets(value: str, rule: str, bound: str) -> bool:
    try:
        a, b = float(value), float(bound)
    except ValueError:
        same = value == bound
        return same if rule == "equalTo" else (not same) if rule == "notEqualTo" else False
    return {
        "greaterThan": a > b, "lessThan": a < b, "equalTo": a == b,
        "greaterOrEqual": a >= b, "lessOrEqual": a <= b, "notEqualTo": a != b,
    }[rule]  # fmt: skip


def read_root(path: Path, source: str, catalogue: bool = False) -> Node:
    """A file's XML tree; a file that cannot be read or is not XML is one ``ConfigError``.

    A catalogue's nodes know their file, so a problem in one names it.
    """
    what = "an OpenSCENARIO catalogue" if catalogue else "an OpenSCENARIO file"
    text = read_input_bytes(path, source, MAX_SCENARIO_BYTES, what)
    try:
        return parse(text, path.name if catalogue else "")
    except TooDeep as exc:
        raise ConfigError([str(exc)], source) from None
    except expat.ExpatError as exc:
        raise ConfigError(
            [f"line {exc.lineno}: not XML ({expat.errors.messages[exc.code]})"], source
        ) from None


def read_scenario(path: str | Path, parameters: Mapping[str, object] | None = None) -> m.Scenario:
    """A ``.xosc`` file's scenario, parsed once per file and parameter values while unchanged.

    The world built from it and the storyboard playing it share this parse (``read_xosc``
    for the rest: the maps looked in, the error raised).
    """
    from vcosim.filecache import read_once

    given = dict(parameters or {})
    variant = tuple(sorted((name, str(value)) for name, value in given.items()))
    return read_once(lambda file: read_xosc(file, given), path, "xosc", variant, *map_folders())


def read_xosc(
    path: str | Path,
    parameters: Mapping[str, object] | None = None,
    maps: Sequence[str | Path] | None = None,
) -> m.Scenario:
    """Read a ``.xosc`` file; ``parameters`` override its declared values (a variation).

    ``maps``: folders where a LogicFile that names a map is looked for (default: the
    ``VCOSIM_MAPS`` environment variable, folders separated as in ``PATH``). Raises
    ``ConfigError`` listing every problem, each with its line and element.
    """
    path = Path(path)
    source = f"OpenSCENARIO {path}"
    root = read_root(path, source)
    if root.tag != "OpenSCENARIO":
        raise ConfigError([f"line {root.line}: <{root.tag}> is not <OpenSCENARIO>"], source)
    reader = Reader({})
    reader.maps = [Path(p) for p in (maps if maps is not None else map_folders())]
    try:
        scenario = _scenario(reader, root, path, dict(parameters or {}))
    except Refused as exc:
        if not exc.quiet or not reader.problems:  # (a quiet one's cause is listed already)
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
        entries = [entry for _, entry in reader.read_entries]
        reader.problems += _dangling(scenario, _written(reader, [root, *entries]))
    if reader.problems or scenario is None:
        raise ConfigError(sorted(set(reader.problems), key=_line), source)
    return scenario


STORYBOARD_KINDS = {
    "Story": "story", "Act": "act", "ManeuverGroup": "maneuverGroup", "Maneuver": "maneuver",
    "Event": "event", "Action": "action",
}  # fmt: skip
"""The storyboard's elements by tag: the kinds an element state condition names."""


def _written(r: Reader, roots: list[Node]) -> set[tuple[str, str]]:
    """The storyboard elements the files name, read or refused: (kind, name)."""
    return {
        (STORYBOARD_KINDS[node.tag], r.parameters.get(name[1:], name) if name[:1] == "$" else name)
        for root in roots
        for node in root.walk()
        if node.tag in STORYBOARD_KINDS and (name := node.attrib.get("name", ""))
    }


def _dangling(scenario: m.Scenario, written: set[tuple[str, str]]) -> list[str]:
    """Element state conditions naming no element of their kind (they could never hold).

    An element the file has but that was refused (its own problem is listed) is not missing:
    ``written`` holds those, and a condition naming one is no problem of its own.
    """
    paths: list[tuple[str, tuple[str, ...]]] = []  # each element: its kind, its names' path
    triggers: list[m.Trigger | None] = [scenario.stop]
    for story in scenario.stories:
        paths.append(("story", (s := (story.name,))))
        for act in story.acts:
            paths.append(("act", (a := (*s, act.name))))
            triggers += [act.start, act.stop]
            for group in act.groups:
                paths.append(("maneuverGroup", (g := (*a, group.name))))
                for maneuver in group.maneuvers:
                    paths.append(("maneuver", (n := (*g, maneuver.name))))
                    for event in maneuver.events:
                        paths.append(("event", (e := (*n, event.name))))
                        paths += [("action", (*e, action.name)) for action in event.actions]
                        triggers.append(event.start)
    refused = written - {(kind, path[-1]) for kind, path in paths}
    return [
        f"line {c.line}: <Condition> {c.name!r}: no {c.test.kind} named {c.test.name!r}"
        for trigger in triggers
        if trigger is not None
        for group in trigger.groups
        for c in group
        if isinstance(c.test, m.ElementState)
        and (c.test.kind, c.test.name) not in written
        and (c.test.kind, c.test.name.rpartition("::")[2]) not in refused
        and not any(kind == c.test.kind and c.test.names(path) for kind, path in paths)
    ]


def _line(problem: str) -> int:
    head = problem.split(":", 1)[0]
    return int(head[5:]) if head.startswith("line ") and head[5:].isdigit() else 0


def _scenario(r: Reader, root: Node, path: Path, given: dict[str, object]) -> m.Scenario:
    header = r.need(root, "FileHeader")
    for part in header.walk():
        part.used = True
    version = (r.integer(header, "revMajor"), r.integer(header, "revMinor"))
    # scenario_runner's convention: such a file's world positions are in CARLA's (Unreal's)
    # left-handed frame, y and headings mirrored against OpenDRIVE's (docs/scenarios.md)
    r.carla = header.attrib.get("description", "").startswith(CARLA_FRAME)
    if version not in VERSIONS:
        raise Refused(header, f"OpenSCENARIO {version[0]}.{version[1]}: 1.0 to 1.3 are read")
    given_text = {k: str(v) for k, v in given.items()}
    declared = r.declare(r.one(root, "ParameterDeclarations", required=False), given_text)
    unknown = sorted(set(given) - declared)
    if unknown:
        r.problems.append(f"parameters not declared in the file: {', '.join(unknown)}")
    r.parameters.update(given_text)
    variables = r.one(root, "VariableDeclarations", required=False)
    for node in r.kids(variables, "VariableDeclaration") if variables is not None else []:
        r.choice(node, "variableType", {"boolean", "dateTime", "double", "integer", "string",
                                        "unsignedInt", "unsignedShort"})  # fmt: skip
        r.variables[r.text(node, "name")] = r.text(node, "value")
    catalogs = r.one(root, "CatalogLocations", required=False)
    for location in r.kids(catalogs) if catalogs is not None else []:
        if location.tag not in CATALOGS:
            raise Refused(location, "not a catalogue location")
        directory = r.need(location, "Directory")
        r.catalogs[location.tag] = path.parent / r.text(directory, "path")
    road = None
    network = r.one(root, "RoadNetwork", required=False)
    if network is not None:
        logic = r.one(network, "LogicFile", required=False)
        if logic is not None:
            road = _road_file(r, logic, path)
        r.one(network, "SceneGraphFile", required=False)  # a 3D model to look at: not needed
    read = r.each(r.kids(r.need(root, "Entities"), "ScenarioObject"), lambda n: _entity(r, n))
    entities = r.entities = {e.name: e for e in [*read, *r.towed]}
    board = r.need(root, "Storyboard")
    init, order, assigned, later = _init(r, r.need(board, "Init"), entities)
    towed = {e.trailer for e in entities.values()}  # placed behind what tows them
    for name in assigned:
        entities[name] = _external(entities[name])
    stories = tuple(r.each(r.kids(board, "Story"), lambda n: _story(r, n, entities)))
    for name in _backwards(stories, init, later):
        if not entities[name].external:
            entities[name] = replace(entities[name], kinematic=True, preset="")
    stop_node = r.one(board, "StopTrigger", required=False)
    stop = _trigger(r, stop_node) if stop_node is not None else None
    return m.Scenario(
        path=path, version=version, parameters=dict(r.parameters), road=road,
        entities=entities, init=init, init_order=order, stories=stories, stop=stop,
        description=header.attrib.get("description", ""), trajectories=tuple(r.trajectories),
        init_actions=tuple(later), variables=dict(r.variables),
        absent=tuple(n for n in entities if init[n].position is None and n not in towed),
        init_before=dict(r.init_before),
    )  # fmt: skip


def _backwards(
    stories: tuple[m.Story, ...],
    init: dict[str, m.InitState],
    later: list[tuple[str, m.Action]],
) -> set[str]:
    """Entities the file drives backwards (a negative speed): they move kinematically.

    vcosim's built-in driver drives forwards; a storyboard car that reverses is moved
    where the storyboard says instead (docs/scenarios.md).
    """
    backwards = {name for name, state in init.items() if min(state.speed, state.ramp_from) < 0}
    acts = [(actor, action) for actor, action in later]
    acts += [
        (actor, action)
        for story in stories for act in story.acts for group in act.groups
        for maneuver in group.maneuvers for event in maneuver.events
        for action in event.actions for actor in group.actors
    ]  # fmt: skip
    for actor, action in acts:
        do = action.action
        if isinstance(do, m.SpeedAction) and do.entity is None and do.value < 0:
            backwards.add(actor)
        if isinstance(do, m.SpeedProfileAction) and any(v < 0 for v, _ in do.entries):
            backwards.add(actor)
        if isinstance(do, m.FollowTrajectoryAction) and reverses(do):  # its schedule reverses it
            backwards.add(actor)
    return backwards


def _road_file(r: Reader, logic: Node, path: Path) -> Path:
    """The LogicFile's road: a path relative to the scenario, or a map found in ``r.maps``.

    CARLA's examples name a map (``Town01``), not a file: its OpenDRIVE file (``Town01.xodr``)
    is looked for in the folders the user names.
    """
    name = r.text(logic, "filepath")
    road = path.parent / name
    if road.is_file():
        return road
    if road.exists():
        raise Refused(
            logic, f"filepath={name!r}: not a regular file (a folder, a FIFO or a device)"
        )
    for folder in r.maps:
        for found in (folder / name, folder / f"{name}.xodr"):
            if found.is_file():
                return found
    hint = "" if Path(name).suffix else (
        f": a map's name? give the folder of {name}.xodr with --maps DIR (or {MAPS})"
    )  # fmt: skip
    looked = f" (looked in {', '.join(map(str, r.maps))})" if r.maps else ""
    raise Refused(logic, f"filepath={name!r}: no such file{looked}{hint}")


def _external(entity: m.Entity) -> m.Entity:
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


def _entity(r: Reader, node: Node, name: str | None = None) -> m.Entity:
    """A ScenarioObject: its Vehicle, Pedestrian or MiscObject (inline or catalogued)."""
    name = r.text(node, "name") if name is None else name
    r.declared.add(name)
    inline = [c for c in node.children if c.tag in OBJECTS]
    assigned: dict[str, str] = {}
    if inline:
        thing = r.need(node, inline[0].tag)
    else:
        reference = r.one(node, "CatalogReference", required=False)
        if reference is None:
            other = next((c for c in node.children if c.tag != "ObjectController"), node)
            raise Refused(other, f"entity {name!r}: a Vehicle, Pedestrian or MiscObject is read")
        thing, assigned = r.catalog_entry(reference, *OBJECTS)
    controllers = r.kids(node, "ObjectController")  # 1.3: one per domain, several
    external = any([_external_controller(r, c) for c in controllers])
    with r.scope(thing, assigned):
        return _object(r, thing, name, external, node.line)


def _external_controller(r: Reader, node: Node) -> bool:
    """Whether an ObjectController's (or AssignControllerAction's) Controller is external.

    The Controller is given inline or as a reference to a controller catalogue's entry.
    """
    wrapped = r.one(node, "ObjectController", required=False)  # 1.3's AssignControllerAction
    if wrapped is not None:
        return _external_controller(r, wrapped)
    reference = r.one(node, "CatalogReference", required=False)
    if reference is None:
        return _is_external(r, r.need(node, "Controller"))
    controller, assigned = r.catalog_entry(reference, "Controller")
    with r.scope(controller, assigned):
        return _is_external(r, controller)


def _trailer(r: Reader, vehicle: Node, tractor: str) -> str | None:
    """The entity a vehicle tows, None when it tows none.

    A ``TrailerRef`` names another entity; 1.3's inline ``<Trailer name>`` (a Vehicle or a
    catalogue's) becomes an entity of its own, named ``TRACTOR_NAME``.
    """
    trailer = r.one(vehicle, "Trailer", required=False)
    if trailer is None or not trailer.children:
        return None  # an empty <Trailer/>: it tows nothing
    inner = r.need(trailer)
    if inner.tag == "TrailerRef":
        return r.text(inner, "entityRef", "") or None
    if inner.tag != "Trailer":
        raise Refused(inner, "a trailer is a <TrailerRef> or a <Trailer> of its own")
    name = f"{tractor}_{r.text(inner, 'name')}"
    r.towed.append(_entity(r, inner, name))
    return name


def _hitch(r: Reader, vehicle: Node, tag: str) -> float:
    """How far ahead of the reference point a hitch (or coupler) is; 0 where none is given."""
    point = r.one(vehicle, tag, required=False)
    return 0.0 if point is None else r.number(point, "dx")


def _object(r: Reader, thing: Node, name: str, external: bool, line: int) -> m.Entity:
    """An entity's description: its kind and category, its box, how it moves."""
    for part in thing.walk():
        part.used = part.used or part.tag in HARMLESS
    kind, category_attr, categories = OBJECTS[thing.tag][1:]
    category = r.choice(thing, category_attr, categories)
    preset = None
    heading_ignored = False
    props = r.one(thing, "Properties", required=False)
    for prop in r.kids(props, "Property") if props is not None else []:
        if r.text(prop, "name", "") == "preset":
            preset = r.text(prop, "value")
        if r.text(prop, "name", "") == "ignoreHeadingForTrajMotion":  # esmini's
            heading_ignored = r.text(prop, "value", "") == "true"
    box = r.one(thing, "BoundingBox", required=thing.tag != "Vehicle")
    dims = None if box is None else r.need(box, "Dimensions")
    size = [r.number(dims, a) if dims is not None else 0.0 for a in ("length", "width", "height")]
    centre = None if box is None else r.one(box, "Center", required=False)
    ahead = 0.0 if centre is None else r.number(centre, "x", 0.0)
    if thing.tag != "Vehicle":
        if external:
            raise Refused(thing, f"{name!r} is driven from outside: only a vehicle can be")
        return m.Entity(
            name=name, preset="", length=size[0], width=size[1], max_speed=math.inf,
            external=False, line=line, kind=kind, category=category, height=size[2],
            kinematic=True, centre=ahead,
        )  # fmt: skip
    trailer = _trailer(r, thing, name)
    coupler = _hitch(r, thing, "TrailerCoupler")
    hitch = _hitch(r, thing, "TrailerHitch")
    axles = r.one(thing, "Axles", required=False)
    front = None if axles is None else r.one(axles, "FrontAxle", required=False)
    rear = None if axles is None else r.one(axles, "RearAxle", required=False)
    wheelbase = (
        r.number(front, "positionX") - r.number(rear, "positionX")
        if front is not None and rear is not None
        else 0.0
    )
    performance = r.one(thing, "Performance", required=False)
    physical = external or preset is not None or category in PRESETS
    return m.Entity(
        name=name, preset=preset or PRESETS.get(category, DEFAULT_PRESET) if physical else "",
        length=size[0], width=size[1],
        max_speed=math.inf if performance is None else r.number(performance, "maxSpeed"),
        external=external, line=line, kind=kind, category=category, height=size[2] or 1.5,
        kinematic=not physical, trailer=trailer, wheelbase=wheelbase, hitch=hitch,
        coupler=coupler, centre=ahead, trajectory_heading_ignored=heading_ignored,
        max_acceleration=_performance(r, performance, "maxAcceleration"),
        max_deceleration=_performance(r, performance, "maxDeceleration"),
    )  # fmt: skip


def _performance(r: Reader, performance: Node | None, key: str) -> float:
    """A Performance limit (m/s2, infinite without one; its sign is ignored)."""
    if performance is None or key not in performance.attrib:
        return math.inf
    value = abs(r.number(performance, key))
    return value if value > 0 else math.inf


def _init(r: Reader, node: Node, entities: dict[str, m.Entity]) -> tuple[
    dict[str, m.InitState], tuple[str, ...], list[str], list[tuple[str, m.Action]]
]:  # fmt: skip
    """Each entity's start, the order of placing, those assigned ``external``, and more.

    The more: Init's actions that take time, which the storyboard starts at t = 0.
    """
    init = {name: m.InitState() for name in entities}
    order: list[str] = []
    assigned: list[str] = []
    later: list[tuple[str, m.Action]] = []
    actions = r.need(node, "Actions")

    def take_global(glob: Node) -> None:
        later.append(("", m.Action(f"Init {r.need(glob).tag}", _global(r, glob), glob.line)))

    def take_private(private: Node) -> None:
        name = _entity_ref(r, private)
        # Each action on its own: a refused one is listed, and the others are still read.
        r.each(r.kids(private, "PrivateAction"), lambda action: placed(name, action))

    def placed(name: str, action: Node) -> None:
        earlier = init[name].position
        take(name, action)
        if init[name].position is not earlier:  # a teleport: one relative to itself needs it
            _earlier_teleport(r, name, init[name].position, earlier)

    def take(name: str, action: Node) -> None:
        kind = r.need(action)
        if kind.tag == "TeleportAction":
            position = _position(r, r.need(kind, "Position"))
            init[name] = replace(init[name], position=position)
            order.append(name)
        elif kind.tag == "LongitudinalAction" and _absolute_speed(kind):
            speed = _speed(r, r.need(kind, "SpeedAction"))
            ramp = None if instant(speed.dynamics) else speed.dynamics
            if ramp is not None and entities[name].external:
                raise Refused(kind, f"{name!r} is driven from outside: it starts at a step")
            was = init[name]  # a ramp starts from the speed an earlier step set (esmini)
            start = was.speed if was.ramp is None else was.ramp_from
            init[name] = m.InitState(was.position, speed.value, ramp, start if ramp else 0.0)
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
                elif part.tag == "OverrideControllerValueAction":
                    forced = _override(r, part)
                    later.append((name, m.Action(f"Init override of {name}", forced, part.line)))
                else:
                    raise Refused(part, "not supported in Init")
        elif kind.tag in ("LongitudinalAction", "LateralAction", "RoutingAction",
                          "AppearanceAction", "VisibilityAction"):  # fmt: skip
            do = _private(r, action)
            if entities[name].external and not isinstance(do, FROM_OUTSIDE):
                raise Refused(kind, f"{name!r} is driven from outside: the storyboard "
                              "cannot act on it")  # fmt: skip
            if not entities[name].external:  # an external car's route is its own business
                later.append((name, m.Action(f"Init {kind.tag} of {name}", do, kind.line)))
        else:
            raise Refused(kind, "not supported in Init")

    r.each(r.kids(actions, "GlobalAction"), take_global)
    r.each(r.kids(actions, "Private"), take_private)
    for name, taking in later:  # no position, a trajectory to follow: it starts on it (esmini)
        follow = taking.action
        if not isinstance(follow, m.FollowTrajectoryAction) or not name:
            continue
        if init[name].position is None:
            on_it = m.TrajectoryPosition(follow.trajectory, follow.initial_offset)
            init[name] = replace(init[name], position=on_it)
            order.append(name)
    for name, step in list(later):  # a step to a speed relative to another's start speed
        relative = step.action
        if (
            isinstance(relative, m.SpeedAction) and relative.entity is not None
            and relative.dynamics.shape == "step" and init[relative.entity].ramp is None
        ):  # fmt: skip
            ref = init[relative.entity].speed
            value = relative.value
            start = ref + value if relative.relative == "delta" else ref * value
            init[name] = m.InitState(init[name].position, start, None)
            if not relative.continuous:  # a continuous one goes on keeping it (as esmini)
                later.remove((name, step))
    return init, tuple(order), assigned, later


def _earlier_teleport(
    r: Reader, name: str, position: m.Position | None, earlier: m.Position | None
) -> None:
    """Keep Init's earlier teleport of ``name`` where ``position`` is relative to ``name``.

    esmini's ``four_roads`` and ``star`` put a car on a lane, then turn it relative to where
    it is: the later position is resolved from the earlier (``Scenario.init_before``).
    """
    where = position.position if isinstance(position, m.Oriented) else position
    if getattr(where, "entity", None) == name and earlier is not None:
        r.init_before[name] = (*r.init_before.get(name, ()), earlier)
    else:
        r.init_before.pop(name, None)


def _absolute_speed(node: Node) -> bool:
    """Whether a LongitudinalAction is a speed action to an absolute speed (Init's start)."""
    speed = next((c for c in node.children if c.tag == "SpeedAction"), None)
    return speed is not None and any(
        t.tag == "AbsoluteTargetSpeed" for c in speed.children for t in c.children
    )


def _entity_ref(r: Reader, node: Node, attr: str = "entityRef") -> str:
    name = r.text(node, attr)
    if name not in r.entities:
        refused = name in r.declared  # its own problem is listed
        raise Refused(node, f"{attr}={name!r}: no entity of that name", quiet=refused)
    return name


def _position(r: Reader, node: Node) -> m.Position:
    kind = r.need(node)
    orientation = r.one(kind, "Orientation", required=False)
    position = _where(r, kind)
    if orientation is None:
        return position
    absolute = r.choice(orientation, "type", {"relative", "absolute"}, "relative") == "absolute"
    for angle in ("p", "r"):  # pitch and roll come from the road under the wheels
        r.number(orientation, angle, 0.0)
    h = r.number(orientation, "h", 0.0) * (-1.0 if r.carla else 1.0)
    if not absolute and (not h or isinstance(position, m.WorldPosition)):
        return position  # the lane's own direction (a world position: h is its heading)
    if isinstance(position, m.WorldPosition):
        return m.WorldPosition(position.x, position.y, h)
    assert not isinstance(position, m.Oriented)
    return m.Oriented(position, h, relative=not absolute)


def _where(r: Reader, kind: Node) -> m.Position:
    mirror = -1.0 if r.carla else 1.0  # CARLA's frame: y and headings the other way
    if kind.tag == "WorldPosition":
        h = mirror * r.number(kind, "h") if "h" in kind.attrib else None
        return m.WorldPosition(r.number(kind, "x"), mirror * r.number(kind, "y"), h)
    if kind.tag == "LanePosition":
        return m.LanePosition(
            r.text(kind, "roadId"), r.integer(kind, "laneId"), r.number(kind, "s"),
            r.number(kind, "offset", 0.0),
        )  # fmt: skip
    if kind.tag == "RoadPosition":
        return m.RoadPosition(r.text(kind, "roadId"), r.number(kind, "s"), r.number(kind, "t"))
    if kind.tag == "RelativeLanePosition":  # dsLane along the lane, ds along the road
        along_lane = "dsLane" in kind.attrib
        ds = r.number(kind, "dsLane") if along_lane else r.number(kind, "ds", 0.0)
        return m.RelativeLanePosition(
            _entity_ref(r, kind), r.integer(kind, "dLane"), ds, r.number(kind, "offset", 0.0),
            along_lane,
        )  # fmt: skip
    if kind.tag == "RelativeWorldPosition":
        return m.RelativeWorldPosition(
            _entity_ref(r, kind), r.number(kind, "dx"), mirror * r.number(kind, "dy")
        )
    if kind.tag == "RelativeObjectPosition":
        return m.RelativeObjectPosition(
            _entity_ref(r, kind), r.number(kind, "dx"), mirror * r.number(kind, "dy")
        )
    if kind.tag == "RelativeRoadPosition":
        return m.RelativeRoadPosition(
            _entity_ref(r, kind), r.number(kind, "ds"), r.number(kind, "dt")
        )
    if kind.tag == "RoutePosition":
        return _route_position(r, kind)
    if kind.tag == "TrajectoryPosition":
        ref = r.need(kind, "TrajectoryRef")
        return m.TrajectoryPosition(
            _trajectory(r, r.need(ref)), r.number(kind, "s"), r.number(kind, "t", 0.0)
        )
    raise Refused(kind, "this position is not supported")


def _route(r: Reader, node: Node) -> m.Route:
    """A Route (inline, or a CatalogReference to a route catalogue's), its waypoints read."""
    node, assigned = r.inline_or_catalogued(node, "Route")
    with r.scope(node, assigned):
        waypoints = r.kids(node, "Waypoint")
        if not waypoints:
            raise Refused(node, "a route needs a waypoint or more")
        for waypoint in waypoints:  # the shortest way is the one vcosim takes
            r.choice(waypoint, "routeStrategy", {"fastest", "shortest", "leastIntersections",
                                                  "random"}, "shortest")  # fmt: skip
        return m.Route(
            r.text(node, "name"),
            tuple(_position(r, r.need(w, "Position")) for w in waypoints),
            r.flag(node, "closed"),
        )


def _route_position(r: Reader, node: Node) -> m.RoutePosition:
    ref = r.need(node, "RouteRef")
    route = _route(r, r.need(ref))
    where = r.need(r.need(node, "InRoutePosition"))
    if where.tag == "FromCurrentEntity":
        return m.RoutePosition(route, 0.0, entity=_entity_ref(r, where))
    if where.tag == "FromLaneCoordinates":
        return m.RoutePosition(
            route, r.number(where, "pathS"), r.integer(where, "laneId"),
            r.number(where, "laneOffset", 0.0),
        )  # fmt: skip
    if where.tag == "FromRoadCoordinates":
        return m.RoutePosition(route, r.number(where, "pathS"), t=r.number(where, "t"))
    raise Refused(where, "not a position in a route")


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
    node, assigned = r.inline_or_catalogued(node, "Trajectory")
    with r.scope(node, assigned):
        r.flag(node, "closed")
        shape_node = r.need(r.need(node, "Shape"))
        shape: m.Polyline | m.Clothoid | m.ClothoidSpline | m.Nurbs
        if shape_node.tag == "Polyline":
            vertices = r.kids(shape_node, "Vertex")
            if len(vertices) < 2:
                raise Refused(shape_node, "a polyline needs two vertices or more")
            shape = m.Polyline(
                tuple(_position(r, r.need(v, "Position")) for v in vertices),
                tuple(r.number(v, "time") if "time" in v.attrib else None for v in vertices),
            )
        elif shape_node.tag == "Clothoid":
            rate = "curvaturePrime" if "curvaturePrime" in shape_node.attrib else "curvatureDot"
            start = r.one(shape_node, "Position", required=False)
            shape = m.Clothoid(
                None if start is None else _position(r, start),
                r.number(shape_node, "curvature"), r.number(shape_node, rate, 0.0),
                r.number(shape_node, "length"), *_times(r, shape_node, "startTime", "stopTime"),
            )  # fmt: skip
            if shape.length <= 0:
                raise Refused(shape_node, "length must be positive")
        elif shape_node.tag == "ClothoidSpline":
            shape = _spline(r, shape_node)
        elif shape_node.tag == "Nurbs":
            shape = _nurbs(r, shape_node)
        else:
            raise Refused(shape_node, "not a trajectory's shape")
        trajectory = m.Trajectory(r.text(node, "name"), shape, len(r.trajectories))
    r.trajectories.append(trajectory)
    return trajectory


def _nurbs(r: Reader, node: Node) -> m.Nurbs:
    """A Nurbs: order, control points (weights, times) and knots, checked to fit together."""
    order = r.integer(node, "order")
    points = tuple(
        (_position(r, r.need(p, "Position")), r.number(p, "weight", 1.0),
         r.number(p, "time") if "time" in p.attrib else None)
        for p in r.kids(node, "ControlPoint")
    )  # fmt: skip
    knots = tuple(r.number(k, "value") for k in r.kids(node, "Knot"))
    if order < 2 or len(points) < order or len(knots) != len(points) + order:
        raise Refused(
            node, f"order {order}, {len(points)} control points and {len(knots)} knots: a "
            "NURBS needs as many knots as points and its order, and its order of points or more",
        )  # fmt: skip
    if any(b < a for a, b in zip(knots, knots[1:], strict=False)):
        raise Refused(node, "knots must not decrease")
    return m.Nurbs(order, points, knots)


def _times(r: Reader, node: Node, *names: str) -> list[float | None]:
    return [r.number(node, a) if a in node.attrib else None for a in names]


def _spline(r: Reader, node: Node) -> m.ClothoidSpline:
    """A ClothoidSpline: its segments, from the first one's PositionStart (if it has one)."""
    segments = r.kids(node, "ClothoidSplineSegment")
    if not segments:
        raise Refused(node, "a clothoid spline needs a segment or more")
    start = None
    parts = []
    restarts: list[m.Position | None] = []
    for k, segment in enumerate(segments):
        position = r.one(segment, "PositionStart", required=False)
        where = None if position is None else _position(r, position)
        if k == 0:
            start = where
        else:
            restarts.append(where)
        length = r.number(segment, "length")
        if length <= 0:
            raise Refused(segment, "length must be positive")
        parts.append((r.number(segment, "curvatureStart"), r.number(segment, "curvatureEnd"),
                      length, r.number(segment, "hOffset", 0.0)))  # fmt: skip
    first = _times(r, segments[0], "timeStart")[0]
    return m.ClothoidSpline(
        tuple(parts), start, first, _times(r, node, "timeEnd")[0], tuple(restarts)
    )


def _follow(r: Reader, node: Node) -> m.FollowTrajectoryAction:
    """FollowTrajectoryAction: the trajectory (inline, by catalogue, or a TrajectoryRef)."""
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
        shape = trajectory.shape
        if isinstance(shape, m.Polyline) and all(t is None for t in shape.times):
            timing = None  # no vertex has a time: nothing to time (as esmini takes it)
        elif isinstance(shape, m.Polyline) and None in shape.times:
            raise Refused(reference, "timing needs a time on every vertex")
        if isinstance(shape, m.Nurbs) and any(t is None for _, _, t in shape.points):
            raise Refused(reference, "timing needs a time on every control point")
        if isinstance(shape, (m.Clothoid, m.ClothoidSpline)) and None in (
            shape.start_time,
            shape.stop_time,
        ):
            raise Refused(reference, "timing needs the clothoid's start and stop times")
    elif reference.tag != "None":
        raise Refused(reference, "not a time reference")
    mode = r.one(node, "TrajectoryFollowingMode", required=False)
    following = "position"
    if mode is not None:
        following = r.choice(mode, "followingMode", {"position", "follow"})
        if "followingLateralMode" in mode.attrib:
            r.choice(mode, "followingLateralMode", {"position", "follow"})
    return m.FollowTrajectoryAction(
        trajectory, timing, following, r.number(node, "initialDistanceOffset", 0.0)
    )


def _private(r: Reader, node: Node) -> m.PrivateAction:
    kind = r.need(node)
    if kind.tag == "TeleportAction":
        return m.TeleportAction(_position(r, r.need(kind, "Position")))
    if kind.tag == "ActivateControllerAction":  # 1.0: directly in the PrivateAction
        return _activate(r, kind, None)
    if kind.tag == "VisibilityAction":  # who sees it: every sensor of vcosim sees everything
        return m.NoEffectAction(kind.tag)
    if kind.tag == "SynchronizeAction":
        return _synchronize(r, kind)
    if kind.tag == "ControllerAction" and len(kind.children) > 1:  # 1.1: several at once
        return _controller_actions(r, kind)
    inner = r.need(kind)
    if kind.tag == "RoutingAction" and inner.tag == "FollowTrajectoryAction":
        return _follow(r, inner)
    if kind.tag == "RoutingAction" and inner.tag == "AssignRouteAction":
        return m.AssignRouteAction(_route(r, r.need(inner)))
    if kind.tag == "RoutingAction" and inner.tag == "RandomRouteAction":
        return m.RandomRouteAction()
    if kind.tag == "RoutingAction" and inner.tag == "AcquirePositionAction":
        return m.AcquirePositionAction(_position(r, r.need(inner, "Position")))
    if kind.tag == "LongitudinalAction" and inner.tag == "LongitudinalDistanceAction":
        return _distance_action(r, inner)
    if kind.tag == "ControllerAction" and inner.tag in ("OverrideControllerValueAction",
                                                        "AssignControllerAction"):  # fmt: skip
        return _controller_actions(r, kind)
    if kind.tag in ("AppearanceAction", "VisibilityAction"):
        for part in kind.walk():
            part.used = True
        return m.NoEffectAction(inner.tag)
    if kind.tag == "ControllerAction" and inner.tag == "ActivateControllerAction":
        return _activate(r, inner, None)
    if kind.tag == "LongitudinalAction" and inner.tag == "SpeedAction":
        return _speed(r, inner)
    if kind.tag == "LateralAction" and inner.tag == "LaneChangeAction":
        dynamics = _dynamics(
            r, r.need(inner, "LaneChangeActionDynamics"), {"time", "distance", "rate"}
        )
        target = r.need(r.need(inner, "LaneChangeTarget"))
        offset = r.number(inner, "targetLaneOffset", 0.0)
        if target.tag == "AbsoluteTargetLane":
            return m.LaneChangeAction(dynamics, r.integer(target, "value"), None, offset)
        if target.tag == "RelativeTargetLane":
            ref = _entity_ref(r, target)
            return m.LaneChangeAction(dynamics, r.integer(target, "value"), ref, offset)
        raise Refused(target, "not a lane change target")
    if kind.tag == "LongitudinalAction" and inner.tag == "SpeedProfileAction":
        return _speed_profile(r, inner)
    if kind.tag == "LateralAction" and inner.tag == "LateralDistanceAction":
        return _lateral_distance(r, inner)
    if kind.tag == "LateralAction" and inner.tag == "LaneOffsetAction":
        continuous = r.flag(inner, "continuous")
        how = r.need(inner, "LaneOffsetActionDynamics")
        target = r.need(r.need(inner, "LaneOffsetTarget"))
        shape = r.choice(how, "dynamicsShape", SHAPES)
        acc = r.number(how, "maxLateralAcc", 1.0)
        if target.tag == "AbsoluteTargetLaneOffset":
            return m.LaneOffsetAction(shape, r.number(target, "value"), acc, continuous=continuous)
        if target.tag == "RelativeTargetLaneOffset":
            ref = _entity_ref(r, target)
            return m.LaneOffsetAction(shape, r.number(target, "value"), acc, ref, continuous)
        raise Refused(target, "not a lane offset target")
    raise Refused(inner, "this action is not supported")


def _distance_action(r: Reader, node: Node) -> m.LongitudinalDistanceAction:
    """LongitudinalDistanceAction: a distance or a time gap to an entity, ahead or behind."""
    if ("distance" in node.attrib) == ("timeGap" in node.attrib):
        raise Refused(node, "give a distance or a timeGap (one of them)")
    if "coordinateSystem" in node.attrib:
        r.choice(node, "coordinateSystem", {"entity", "road", "lane"})  # along it: the same
    displacement = r.choice(
        node, "displacement", {"trailingReferencedEntity", "leadingReferencedEntity", "any"},
        "trailingReferencedEntity",
    )  # fmt: skip
    return m.LongitudinalDistanceAction(
        _entity_ref(r, node),
        r.number(node, "distance") if "distance" in node.attrib else None,
        r.number(node, "timeGap") if "timeGap" in node.attrib else None,
        r.flag(node, "freespace"), r.flag(node, "continuous"),
        displacement == "leadingReferencedEntity",
        *_limits(r, node, "maxAcceleration", "maxDeceleration", "maxSpeed"),
    )  # fmt: skip


def _limits(r: Reader, node: Node, *keys: str) -> list[float | None]:
    """A DynamicConstraints' limits (None where it gives none, or there is none)."""
    limits = r.one(node, "DynamicConstraints", required=False)
    if limits is not None:
        for part in limits.walk():  # rates of acceleration: not followed
            part.used = True
    return [
        r.number(limits, key) if limits is not None and key in limits.attrib else None
        for key in keys
    ]


def _speed_profile(r: Reader, node: Node) -> m.SpeedProfileAction:
    """SpeedProfileAction: its entries, in order, relative to an entity's speed if named."""
    following = r.choice(node, "followingMode", {"follow", "position"}, "follow")
    entries = r.kids(node, "SpeedProfileEntry")
    if not entries:
        raise Refused(node, "a speed profile needs an entry or more")
    acceleration, deceleration, rise, fall = _limits(
        r, node, "maxAcceleration", "maxDeceleration", "maxAccelerationRate", "maxDecelerationRate"
    )
    return m.SpeedProfileAction(
        tuple(
            (r.number(e, "speed"), r.number(e, "time") if "time" in e.attrib else None)
            for e in entries
        ),
        _entity_ref(r, node) if "entityRef" in node.attrib else None,
        acceleration, deceleration, following, rise, fall,
    )  # fmt: skip


def _lateral_distance(r: Reader, node: Node) -> m.LateralDistanceAction:
    """LateralDistanceAction: a distance to the side of an entity, kept or reached."""
    if "coordinateSystem" in node.attrib:
        r.choice(node, "coordinateSystem", {"entity", "road", "lane"})  # across: the same
    side = r.choice(
        node, "displacement",
        {"any": "any", "leftToReferencedEntity": "left", "rightToReferencedEntity": "right"},
        "any",
    )  # fmt: skip
    speed, acceleration = _limits(r, node, "maxSpeed", "maxAcceleration")
    return m.LateralDistanceAction(
        _entity_ref(r, node), r.number(node, "distance") if "distance" in node.attrib else None,
        side, r.flag(node, "freespace"), r.flag(node, "continuous"), speed, acceleration,
    )  # fmt: skip


def _synchronize(r: Reader, node: Node) -> m.SynchronizeAction:
    """SynchronizeAction: be at a position when the master is at its own."""
    final = r.one(node, "FinalSpeed", required=False)
    speed = relative = None
    if final is not None:
        kind = r.need(final)
        if kind.tag == "AbsoluteSpeed":
            for part in kind.walk():  # steady state: arrive at the final speed, as without
                part.used = True
            speed = r.number(kind, "value")
        elif kind.tag == "RelativeSpeedToMaster":
            for part in kind.walk():
                part.used = True
            speed = r.number(kind, "value")
            relative = r.choice(kind, "speedTargetValueType", {"delta", "factor"})
        else:
            raise Refused(kind, "not a final speed")
    return m.SynchronizeAction(
        _entity_ref(r, node, "masterEntityRef"),
        _position(r, r.need(node, "TargetPositionMaster")),
        _position(r, r.need(node, "TargetPosition")),
        speed, relative,
        r.number(node, "targetToleranceMaster", 1.0), r.number(node, "targetTolerance", 1.0),
    )  # fmt: skip


def _controller_actions(r: Reader, node: Node) -> m.PrivateAction:
    """A ControllerAction's parts: an override if it has one, else activation or assignment.

    Assigning a controller to a storyboard vehicle changes nothing (its built-in driver is
    every controller it has); making one external during the run is refused.
    """
    found: m.PrivateAction = m.NoEffectAction("ControllerAction")
    for part in r.kids(node):
        if part.tag == "OverrideControllerValueAction":
            found = _override(r, part)
        elif part.tag == "ActivateControllerAction":
            activated = _activate(r, part, None)
            found = activated if isinstance(found, m.NoEffectAction) else found
        elif part.tag == "AssignControllerAction":
            if _external_controller(r, part):
                raise Refused(part, "an external controller is assigned in Init, not later")
        else:
            raise Refused(part, "not a controller action")
    return found


FROM_OUTSIDE = (m.OverrideAction, m.ActivateControllerAction, m.NoEffectAction,
                m.AssignRouteAction, m.RandomRouteAction)  # fmt: skip
"""What the storyboard may do to a vehicle driven from outside (the rest is its controller's)."""
STEERING_RATIO = 15.0
"""Steering wheel angle per road-wheel angle: an override of the wheel (rad) becomes the
road-wheel angle it gives, as a fraction of the vehicle's largest."""
OVERRIDES = {"Throttle": "throttle", "Brake": "brake", "Clutch": "clutch",
             "ParkingBrake": "parkingbrake", "SteeringWheel": "steering",
             "Gear": "gear"}  # fmt: skip
AUTOMATIC_GEARS = {"p": 0.0, "n": 0.0, "r": -1.0, "d": 1.0}


def _override(r: Reader, node: Node) -> m.OverrideAction:
    """OverrideControllerValueAction: the inputs it forces (1.0's values, 1.2's inputs)."""
    values = []
    for part in r.kids(node):
        if part.tag not in OVERRIDES:
            raise Refused(part, "not a controller value to override")
        active = r.flag(part, "active")
        for inner in part.walk():
            inner.used = True  # maxRate, maxTorque: the forced value is taken as it is
        if part.tag == "Gear":
            gear = next((c for c in part.children), None)
            if gear is not None and gear.tag == "AutomaticGear":
                value = AUTOMATIC_GEARS[r.choice(gear, "gear", set(AUTOMATIC_GEARS))]
            else:
                value = r.number(gear if gear is not None else part, "number")
        elif part.children:  # 1.2: BrakePercent (0..1) or BrakeForce (N): the percent read
            inner = part.children[0]
            if inner.tag != "BrakePercent":
                raise Refused(inner, "a brake override by force is not supported (BrakePercent is)")
            value = r.number(inner, "value")
        else:
            value = r.number(part, "value")
        name = OVERRIDES[part.tag]
        if name == "steering":
            value = value / STEERING_RATIO  # road-wheel angle (rad); scaled by the vehicle
        values.append((name, value, active))
    return m.OverrideAction(tuple(values))


def _story(r: Reader, node: Node, entities: dict[str, m.Entity]) -> m.Story:
    with r.scope(node):
        acts = tuple(r.each(r.kids(node, "Act"), lambda n: _act(r, n, entities)))
        return m.Story(r.text(node, "name"), acts, node.line)


def _act(r: Reader, node: Node, entities: dict[str, m.Entity]) -> m.Act:
    groups = tuple(r.each(r.kids(node, "ManeuverGroup"), lambda n: _group(r, n, entities)))
    stop = r.one(node, "StopTrigger", required=False)
    return m.Act(
        r.text(node, "name"), groups, _start(r, node),
        None if stop is None else _trigger(r, stop), node.line,
    )  # fmt: skip


def _group(r: Reader, node: Node, entities: dict[str, m.Entity]) -> m.ManeuverGroup:
    actors_node = r.need(node, "Actors")
    select = r.flag(actors_node, "selectTriggeringEntities")
    actors = tuple(_entity_ref(r, a) for a in r.kids(actors_node, "EntityRef"))
    chosen = [c for c in node.children if c.tag in ("Maneuver", "CatalogReference")]
    for child in chosen:
        child.used = True
    maneuvers = tuple(r.each(chosen, lambda n: _maneuver(r, n, entities)))
    for actor in (a for a in actors if entities[a].external):
        for action in (a for man in maneuvers for e in man.events for a in e.actions):
            if not isinstance(action.action, (*m.GLOBAL_ACTIONS, *FROM_OUTSIDE)):
                raise Refused(
                    actors_node, f"{actor!r} is driven from outside: the storyboard cannot "
                    f"act on it ({type(action.action).__name__} {action.name!r})",
                )  # fmt: skip
    return m.ManeuverGroup(
        r.text(node, "name"), r.integer(node, "maximumExecutionCount", 1), actors, maneuvers,
        node.line, select,
    )  # fmt: skip


def _maneuver(r: Reader, node: Node, entities: dict[str, m.Entity]) -> m.Maneuver:
    node, assigned = r.inline_or_catalogued(node, "Maneuver")
    with r.scope(node, assigned):
        events = tuple(r.each(r.kids(node, "Event"), lambda n: _event(r, n, entities)))
        return m.Maneuver(r.text(node, "name"), events, node.line)


def _event(r: Reader, node: Node, entities: dict[str, m.Entity]) -> m.Event:
    # Each action on its own: a refused one is listed, and the others and the trigger are
    # still read (a file with a problem is refused as a whole, so nothing runs without it).
    actions = r.each(r.kids(node, "Action"), lambda action: _action(r, action))
    return m.Event(
        r.text(node, "name"), r.choice(node, "priority", PRIORITIES),
        r.integer(node, "maximumExecutionCount", 1), tuple(actions), _start(r, node), node.line,
    )  # fmt: skip


def _action(r: Reader, action: Node) -> m.Action:
    inner = r.one(action, required=False)
    do: m.PrivateAction | m.GlobalAction
    if inner is None:  # an action of nothing (a placeholder): done at once
        do = m.NoEffectAction("Action")
    elif inner.tag == "PrivateAction":
        do = _private(r, inner)
    elif inner.tag == "GlobalAction":
        do = _global(r, inner)
    else:
        raise Refused(inner, "private and global actions are supported")
    return m.Action(r.text(action, "name"), do, action.line)


def _global(r: Reader, node: Node) -> m.GlobalAction:
    """A GlobalAction: the environment, parameters and variables, entities added and deleted."""
    kind = r.need(node)
    if kind.tag == "EnvironmentAction":
        return _environment(r, kind)
    if kind.tag in ("ParameterAction", "VariableAction"):
        variable = kind.tag == "VariableAction"
        name = r.text(kind, "variableRef" if variable else "parameterRef").lstrip("$")
        known = r.variables if variable else r.parameters
        if name not in known:
            what = "variable" if variable else "parameter"
            raise Refused(kind, f"no {what} named {name!r}")
        how = r.need(kind)
        if how.tag == "SetAction":
            return m.ParameterAction(name, "set", r.text(how, "value"), variable)
        if how.tag == "ModifyAction":
            rule = r.need(r.need(how, "Rule"))
            rules = {"AddValue": "add", "MultiplyByValue": "multiply"}
            if rule.tag not in rules:
                raise Refused(rule, "not a modify rule (AddValue, MultiplyByValue)")
            return m.ParameterAction(name, rules[rule.tag], str(r.number(rule, "value")), variable)
        raise Refused(how, "not a parameter action (SetAction, ModifyAction)")
    if kind.tag == "EntityAction":
        name = r.text(kind, "entityRef")
        if name not in r.entities:
            raise Refused(
                kind, f"entityRef={name!r}: no entity of that name", quiet=name in r.declared
            )
        how = r.need(kind)
        if how.tag == "AddEntityAction":
            return m.AddEntityAction(name, _position(r, r.need(how, "Position")))
        if how.tag == "DeleteEntityAction":
            return m.DeleteEntityAction(name)
        raise Refused(how, "not an entity action")
    if kind.tag == "InfrastructureAction":
        signal = r.need(r.need(kind, "TrafficSignalAction"))
        if signal.tag != "TrafficSignalStateAction":
            raise Refused(signal, "traffic signal controllers are not read yet")
        return m.TrafficSignalStateAction(r.text(signal, "name"), r.text(signal, "state"))
    raise Refused(kind, "this global action is not supported")


def _environment(r: Reader, node: Node) -> m.EnvironmentAction:
    """An EnvironmentAction's Environment (inline or catalogued): friction, time, weather."""
    found = [c for c in node.children if c.tag in ("Environment", "CatalogReference")]
    if len(found) != 1:
        raise Refused(node, "needs one Environment (inline or a CatalogReference)")
    found[0].used = True
    env, assigned = r.inline_or_catalogued(found[0], "Environment")
    with r.scope(env, assigned):
        for part in env.walk():
            part.used = True  # weather's parts are kept as they are said
        road = r.one(env, "RoadCondition", required=False)
        friction = None if road is None else r.number(road, "frictionScaleFactor")
        if road is not None and friction is not None and friction < 0:
            raise Refused(road, "frictionScaleFactor must not be negative")
        time = r.one(env, "TimeOfDay", required=False)
        weather = r.one(env, "Weather", required=False)
        kept = [] if weather is None else [
            (f"{part.tag}.{key}" if part is not weather else key, r.text(part, key))
            for part in weather.walk()
            for key in part.attrib
        ]  # fmt: skip
        return m.EnvironmentAction(
            friction, None if time is None else r.text(time, "dateTime"), tuple(kept)
        )


def _start(r: Reader, node: Node) -> m.Trigger | None:
    """An Act's or Event's StartTrigger; None (at once) when it is missing or empty.

    The 1.0 to 1.2 schemas require the element, so ``<StartTrigger/>`` is how files say "at
    once", and esmini and scenario_runner start such an element at once.
    """
    start = r.one(node, "StartTrigger", required=False)
    trigger = None if start is None else _trigger(r, start)
    return trigger if trigger is not None and any(trigger.groups) else None


def _trigger(r: Reader, node: Node) -> m.Trigger:
    return m.Trigger(
        tuple(
            _at_once_dropped(tuple(r.each(r.kids(group, "Condition"), lambda c: _condition(r, c))))
            for group in r.kids(node, "ConditionGroup")
        )
    )


def _at_once_dropped(group: tuple[m.Condition, ...]) -> tuple[m.Condition, ...]:
    """A group without its ``SimulationTime == 0`` conditions when it has others.

    CARLA's examples start their acts on "TraveledDistance >= 1 and SimulationTime == 0":
    scenario_runner tests a group's conditions in turn and times each SimulationTimeCondition
    from its turn, so it reads "once the hero moves". By the standard such a group could hold
    only at t = 0, where its other conditions do not: the file's author meant scenario_runner's
    reading, which vcosim takes (docs/scenarios.md).
    """
    kept = tuple(
        c for c in group
        if not (isinstance(c.test, m.SimulationTime) and c.test.value == 0.0
                and c.test.rule == "equalTo")
    )  # fmt: skip
    return kept if kept else group


def _condition(r: Reader, node: Node) -> m.Condition:
    kind = r.need(node)
    test: m.ValueCondition | m.EntityCondition
    if kind.tag == "ByValueCondition":
        test = _criterion(r, node, kind) or _by_value(r, r.need(kind))
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
        # a parameter not declared where the condition is ('', or one a Story declares) is
        # never true, as esmini has it ("Parameter ... not found"); docs/scenarios.md
        name = node.attrib.get("parameterRef", "").removeprefix("$")  # a name, not a value
        return m.ParameterCondition(
            name, r.text(node, "value"), r.choice(node, "rule", RULES), r.parameters.get(name)
        )
    if node.tag == "VariableCondition":
        name = r.text(node, "variableRef")
        if name not in r.variables:
            raise Refused(node, f"no variable named {name!r}")
        return m.ParameterCondition(
            name, r.text(node, "value"), r.choice(node, "rule", RULES), variable=True
        )
    if node.tag == "TrafficSignalCondition":
        return m.TrafficSignalCondition(r.text(node, "name"), r.text(node, "state"))
    if node.tag in NOT_GIVEN:
        raise Refused(node, NOT_GIVEN[node.tag])
    raise Refused(node, "this condition is not supported")


CARLA_FRAME = "CARLA:"
"""A FileHeader description starting so: scenario_runner reads the file's world positions in
CARLA's left-handed frame (``OpenScenarioParser.use_carla_coordinate_system``)."""
CRITERION = "criteria_"
"""scenario_runner's evaluation criteria: a ``ParameterCondition`` in a condition whose name
starts so (``criteria_CollisionTest``) names a test of the run, not a parameter."""


def _criterion(r: Reader, condition: Node, kind: Node) -> m.ValueCondition | None:
    """A scenario_runner criterion: a condition that never holds (its test is not run)."""
    test = next((c for c in kind.children if c.tag == "ParameterCondition"), None)
    if not condition.attrib.get("name", "").startswith(CRITERION) or test is None:
        return None
    r.need(kind, "ParameterCondition")
    return m.SimulationTime(math.inf, "greaterThan")  # never: a criterion triggers nothing


NOT_GIVEN = {
    "TimeOfDayCondition": "no environment gives the time of day (an EnvironmentAction's is "
    "kept, not advanced)",
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
