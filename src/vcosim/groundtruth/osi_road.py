"""An OpenDRIVE road in OSI: its lanes and lane boundaries, built once, in every ground truth.

Each lane of each lane section is one ``osi3.Lane``: its centre line along the road's s, its
driving direction from the road's traffic rule, its neighbours on either side, and two
``osi3.LaneBoundary``s, its outer border and its inner neighbour's (a road's innermost lanes
share the lane offset line). A boundary's type and colour are its lane's first road mark
(solid, dashed, none; OpenDRIVE's "standard" colour is white).

Both keep where they come from in ``source_reference``, as OSI asks for OpenDRIVE: type
``net.asam.opendrive``, identifiers road id, the lane section's s and the lane id.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from vcosim.roads import RoadNetwork
from vcosim.roads.model import LaneSection, Road

if TYPE_CHECKING:
    from osi3.osi_groundtruth_pb2 import GroundTruth

    from vcosim.groundtruth.osi import GroundTruthPart

OPENDRIVE_REFERENCE = "net.asam.opendrive"
ROAD_STEP = 1.0
"""m between the points of centre lines and boundaries (a 10 m junction arc: 1.3 cm off)."""

_LINE_TYPES = {"solid": "TYPE_SOLID_LINE", "broken": "TYPE_DASHED_LINE", "none": "TYPE_NO_LINE"}
_COLOURS = {"standard": "COLOR_WHITE", "white": "COLOR_WHITE", "yellow": "COLOR_YELLOW"}

FIRST_ID = 1 << 32
"""The first OSI id of a lane or boundary: apart from the vehicles' (row + 1) and the traffic
lights' (``osi.TRAFFIC_LIGHT_IDS``), as OSI wants every id of a ground truth unique."""


def road_ground_truth(network: RoadNetwork, step: float = ROAD_STEP) -> GroundTruth:
    """A ``GroundTruth`` holding only the network's lanes and lane boundaries."""
    from osi3.osi_groundtruth_pb2 import GroundTruth

    truth = GroundTruth()
    ids = iter(range(FIRST_ID, 1 << 62))
    for road in network.roads.values():
        for section in road.sections:
            _add_section(truth, network, road, section, step, ids)
    return truth


def road_part(network: RoadNetwork, step: float = ROAD_STEP) -> GroundTruthPart:
    """A part for ``OsiOutput``: the road's lanes and boundaries added to every frame."""
    static = road_ground_truth(network, step)

    def add_road(truth: GroundTruth, sim: Any) -> None:
        truth.MergeFrom(static)

    return add_road


def _add_section(
    truth: GroundTruth,
    network: RoadNetwork,
    road: Road,
    section: LaneSection,
    step: float,
    ids: Any,
) -> None:
    from osi3.osi_lane_pb2 import Lane, LaneBoundary

    s = road.samples(step)
    within = s[(s > section.s) & (s < section.end)]
    s = np.unique(np.concatenate([[section.s, section.end], within]))
    inside = np.minimum(s, np.nextafter(section.end, section.s)) if section.end > section.s else s
    lanes = section.lanes
    boundary_of: dict[int, int] = {}  # lane id -> the id of its outer border (0: offset line)
    for lane_id in sorted(lanes, key=abs):
        border = road.point(s, road.lane_t(inside, lane_id, fraction=1.0))
        boundary = truth.lane_boundary.add()
        boundary.id.value = boundary_of[lane_id] = next(ids)
        mark = lanes[lane_id].marks[0] if lanes[lane_id].marks else None
        kind = "none" if mark is None else mark.type
        boundary.classification.type = LaneBoundary.Classification.Type.Value(
            _LINE_TYPES.get(kind, "TYPE_OTHER")
        )
        boundary.classification.color = LaneBoundary.Classification.Color.Value(
            "COLOR_NONE" if mark is None else _COLOURS.get(mark.color, "COLOR_OTHER")
        )
        for x, y, z in zip(*border[:3], strict=True):
            point = boundary.boundary_line.add()
            point.position.x, point.position.y, point.position.z = x, y, z
            if mark is not None:
                point.width = mark.width
        _reference(boundary.source_reference.add(), road, section, lane_id)
    lane_ids = {lane_id: next(ids) for lane_id in lanes if lane_id != 0}
    for lane_id, osi_id in lane_ids.items():
        lane = truth.lane.add()
        lane.id.value = osi_id
        info = lanes[lane_id]
        kind = "TYPE_DRIVING" if info.type == "driving" else "TYPE_NONDRIVING"
        if road.junction != "-1":
            kind = "TYPE_INTERSECTION"
        lane.classification.type = Lane.Classification.Type.Value(kind)
        x, y, z, _ = road.point(s, road.lane_t(inside, lane_id))
        for px, py, pz in zip(x, y, z, strict=True):
            point = lane.classification.centerline.add()
            point.x, point.y, point.z = px, py, pz
        lane.classification.centerline_is_driving_direction = network.forward(road.id, lane_id)
        inner = lane_id - 1 if lane_id > 0 else lane_id + 1
        outer, inner_border = boundary_of[lane_id], boundary_of.get(inner, boundary_of.get(0))
        left, right = (outer, inner_border) if lane_id > 0 else (inner_border, outer)
        if left is not None:
            lane.classification.left_lane_boundary_id.add().value = left
        if right is not None:
            lane.classification.right_lane_boundary_id.add().value = right
        for neighbour, field in ((_beside(lane_id, +1), "left"), (_beside(lane_id, -1), "right")):
            if neighbour in lane_ids:
                getattr(lane.classification, f"{field}_adjacent_lane_id").add().value = lane_ids[
                    neighbour
                ]
        _reference(lane.source_reference.add(), road, section, lane_id)


def _beside(lane_id: int, direction: int) -> int:
    """The lane next to ``lane_id`` towards larger t (+1) or smaller t (-1); 0 is no lane."""
    beside = lane_id + direction
    return beside + direction if beside == 0 else beside


def _reference(reference: Any, road: Road, section: LaneSection, lane_id: int) -> None:
    reference.type = OPENDRIVE_REFERENCE
    reference.identifier.extend([str(road.id), f"{section.s:g}", str(lane_id)])
