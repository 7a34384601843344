"""Reading ASAM OpenDRIVE 1.4-1.8 (``.xodr``): roads, lanes, profiles and junctions.

What is read is what a vehicle drives on and a driver steers by (docs/roads.md lists it);
objects, signals, surface CRG, lateral shapes and ``<border>`` lanes are not. Every problem of
a file is collected and reported at once in one :class:`~vcosim.errors.ConfigError`.
"""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET
from pathlib import Path

from vcosim.config import MAX_ROAD_BYTES, read_input_bytes
from vcosim.errors import ConfigError
from vcosim.roads.geometry import Arc, Geometry, Line, ParamPoly3, PlanView, Poly3, Spiral
from vcosim.roads.model import Lane, LaneSection, Link, Road, RoadMark
from vcosim.roads.network import Connection, Junction, RoadNetwork
from vcosim.roads.profiles import Cubic

CUBIC = ("a", "b", "c", "d")


class _Reader:
    """One pass over the XML tree, every problem noted with where it is."""

    def __init__(self) -> None:
        self.problems: list[str] = []

    def number(self, el: ET.Element, name: str, where: str, default: float | None = None) -> float:
        text = el.get(name)
        if text is None:
            if default is None:
                self.problems.append(f"{where}: <{el.tag}> lacks the attribute {name!r}")
                return math.nan
            return default
        try:
            value = float(text)
        except ValueError:
            value = math.nan
        if not math.isfinite(value):
            self.problems.append(f"{where}: <{el.tag} {name}={text!r}> is not a finite number")
        return value

    def cubic(self, elements: list[ET.Element], start: str, where: str) -> Cubic:
        rows = []
        for el in elements:
            a, b, c, d = (self.number(el, k, where, 0.0) for k in CUBIC)
            rows.append((self.number(el, start, where, 0.0), a, b, c, d))
        return Cubic(rows)

    # -- roads ------------------------------------------------------------------------------
    def road(self, el: ET.Element) -> Road | None:
        rid = el.get("id", "")
        where = f"road {rid!r}"
        if not rid:
            self.problems.append("a <road> lacks its id")
        length = self.number(el, "length", where)
        records = [
            g
            for geometry in el.findall("planView/geometry")
            if (g := self.geometry(geometry, where)) is not None
        ]
        if not records:
            self.problems.append(f"{where}: no <planView> geometry")
        sections = [self.section(s, where) for s in el.findall("lanes/laneSection")]
        if not sections:
            self.problems.append(f"{where}: no <laneSection>")
        if not (records and sections and math.isfinite(length)):
            return None
        plan = PlanView(records)
        if abs(plan.length - length) > 1e-3 * max(1.0, length):
            self.problems.append(
                f"{where}: its geometry is {plan.length:.4f} m long, its length says {length:g}"
            )
        link = el.find("link")
        return Road(
            id=rid,
            length=length,
            plan=plan,
            sections=sections,
            elevation=self.cubic(el.findall("elevationProfile/elevation"), "s", where),
            superelevation=self.cubic(el.findall("lateralProfile/superelevation"), "s", where),
            lane_offset=self.cubic(el.findall("lanes/laneOffset"), "s", where),
            junction=el.get("junction", "-1"),
            predecessor=self.link(link, "predecessor", where),
            successor=self.link(link, "successor", where),
            name=el.get("name", ""),
            rule=el.get("rule", "RHT"),
        )

    def link(self, link: ET.Element | None, end: str, where: str) -> Link | None:
        el = None if link is None else link.find(end)
        if el is None:
            return None
        kind, target = el.get("elementType", "road"), el.get("elementId")
        if kind not in ("road", "junction") or target is None:
            self.problems.append(f"{where}: <{end}> needs elementType road|junction, elementId")
            return None
        return Link(kind, target, el.get("contactPoint"))

    def geometry(self, el: ET.Element, where: str) -> Geometry | None:
        s, x, y, hdg, length = (self.number(el, k, where) for k in ("s", "x", "y", "hdg", "length"))
        where = f"{where}, geometry at s={el.get('s')}"
        if length < 0.0:
            self.problems.append(f"{where}: negative length {length:g}")
        if len(el) != 1:
            self.problems.append(f"{where}: needs exactly one shape, has {len(el)}")
            return None
        shape = el[0]
        start = (s, x, y, hdg, length)
        if shape.tag == "line":
            return Line(*start)
        if shape.tag == "arc":
            return Arc(*start, k=self.number(shape, "curvature", where))
        if shape.tag == "spiral":
            k0, k1 = (self.number(shape, k, where) for k in ("curvStart", "curvEnd"))
            return Spiral(*start, k0=k0, k1=k1) if math.isfinite(k0 + k1 + length) else None
        if shape.tag == "poly3":
            abcd = tuple(self.number(shape, c, where, 0.0) for c in CUBIC)
            return Poly3(*start, coefficients=abcd) if math.isfinite(length) else None  # type: ignore[arg-type]
        if shape.tag == "paramPoly3":
            u = tuple(self.number(shape, c + "U", where, 0.0) for c in CUBIC)
            v = tuple(self.number(shape, c + "V", where, 0.0) for c in CUBIC)
            p_range = shape.get("pRange", "normalized")
            if p_range not in ("normalized", "arcLength"):
                self.problems.append(f"{where}: pRange must be arcLength or normalized")
            return ParamPoly3(*start, u=u, v=v, normalized=p_range != "arcLength")  # type: ignore[arg-type]
        self.problems.append(f"{where}: unknown geometry <{shape.tag}>")
        return None

    # -- lanes ------------------------------------------------------------------------------
    def section(self, el: ET.Element, where: str) -> LaneSection:
        s = self.number(el, "s", where, 0.0)
        where = f"{where}, laneSection at s={s:g}"
        left = sorted((self.lane(x, where) for x in el.findall("left/lane")), key=lambda n: n.id)
        right = sorted((self.lane(x, where) for x in el.findall("right/lane")), key=lambda n: -n.id)
        centre = el.find("center/lane")
        for side, lanes, sign in (("left", left, 1), ("right", right, -1)):
            ids = [lane.id for lane in lanes]
            if ids != [sign * (k + 1) for k in range(len(ids))]:
                self.problems.append(f"{where}: {side} lane ids {ids} do not count outwards")
        return LaneSection(
            s=s,
            left=tuple(left),
            right=tuple(right),
            center=None if centre is None else self.lane(centre, where),
            single_side=el.get("singleSide", "false") == "true",
        )

    def lane(self, el: ET.Element, where: str) -> Lane:
        try:
            lane_id = int(el.get("id", ""))
        except ValueError:
            self.problems.append(f"{where}: a lane id {el.get('id')!r} is not an integer")
            lane_id = 0
        where = f"{where}, lane {lane_id}"
        if el.find("border") is not None:
            self.problems.append(f"{where}: <border> lanes are not read; give <width>")
        link = el.find("link")

        def linked(end: str) -> int | None:
            target = None if link is None else link.find(end)
            return None if target is None else int(self.number(target, "id", where, 0.0))

        material = el.find("material")
        return Lane(
            id=lane_id,
            type=el.get("type", "driving"),
            width=self.cubic(el.findall("width"), "sOffset", where),
            marks=tuple(
                RoadMark(
                    s_offset=self.number(m, "sOffset", where, 0.0),
                    type=m.get("type", "solid"),
                    color=m.get("color", "standard"),
                    width=self.number(m, "width", where, 0.12),
                    weight=m.get("weight", "standard"),
                    lane_change=m.get("laneChange", "both"),
                )
                for m in el.findall("roadMark")
            ),
            predecessor=linked("predecessor"),
            successor=linked("successor"),
            friction=None if material is None else self.number(material, "friction", where, 1.0),
            level=el.get("level", "false") in ("true", "1"),
        )

    # -- junctions --------------------------------------------------------------------------
    def junction(self, el: ET.Element) -> Junction:
        jid = el.get("id", "")
        where = f"junction {jid!r}"
        connections = []
        for c in el.findall("connection"):
            road = c.get("connectingRoad") or c.get("linkedRoad")
            incoming = c.get("incomingRoad")
            if road is None or incoming is None:
                self.problems.append(f"{where}: a <connection> needs incomingRoad, connectingRoad")
                continue
            links = tuple(
                (int(self.number(n, "from", where)), int(self.number(n, "to", where)))
                for n in c.findall("laneLink")
                if math.isfinite(self.number(n, "from", where) + self.number(n, "to", where))
            )
            connections.append(Connection(incoming, road, c.get("contactPoint", "start"), links))
        return Junction(jid, el.get("name", ""), tuple(connections))


def load_road(path: str | Path) -> RoadNetwork:
    """The road network of an OpenDRIVE file, parsed once while the file stays as it is.

    Every part of a run that needs the road (terrain, world paths, storyboard, recording)
    shares this one parse; the network is not changed by its users.
    """
    from vcosim.filecache import read_once

    return read_once(_read_road_file, path)


def _read_road_file(path: Path) -> RoadNetwork:
    return read_xodr(path)


def read_xodr(source: str | Path | bytes) -> RoadNetwork:
    """The road network of an OpenDRIVE file (a path), or of its text given as bytes."""
    name = "OpenDRIVE text" if isinstance(source, bytes) else f"OpenDRIVE {source}"
    if not isinstance(source, bytes):
        source = read_input_bytes(source, name, MAX_ROAD_BYTES, "an OpenDRIVE file")
    try:
        root = ET.fromstring(source)
    except (OSError, ET.ParseError) as exc:
        raise ConfigError([f"cannot read: {exc}"], name) from None
    if root.tag != "OpenDRIVE":
        raise ConfigError([f"the root element is <{root.tag}>, not <OpenDRIVE>"], name)
    reader = _Reader()
    header = root.find("header")
    if header is not None and header.get("revMajor", "1") != "1":
        reader.problems.append(f"OpenDRIVE {header.get('revMajor')}.x is not read (1.4-1.8 is)")
    roads = [r for el in root.findall("road") if (r := reader.road(el)) is not None]
    junctions = [reader.junction(el) for el in root.findall("junction")]
    ids = [road.id for road in roads]
    for rid in {i for i in ids if ids.count(i) > 1}:
        reader.problems.append(f"road id {rid!r} is used twice")
    if not roads and not reader.problems:
        reader.problems.append("no <road> in the file")
    if reader.problems:
        raise ConfigError(reader.problems, name)
    return RoadNetwork(roads, junctions)
