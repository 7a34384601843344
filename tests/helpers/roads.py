"""Roads built with scenariogeneration and read back by vcosim: what the roads tests share."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from scenariogeneration import xodr

from vcosim.roads import RoadNetwork, read_xodr


def xodr_bytes(*roads: xodr.Road, junctions: tuple = ()) -> bytes:
    """The OpenDRIVE text of these roads (and junction creators), as the generator writes it."""
    odr = xodr.OpenDrive("vcosim test")
    for road in roads:
        odr.add_road(road)
    for junction in junctions:
        odr.add_junction_creator(junction)
    odr.adjust_roads_and_lanes()
    return ET.tostring(odr.get_element(), encoding="utf-8")


def network_of(*roads: xodr.Road, junctions: tuple = ()) -> RoadNetwork:
    """Generate, write and read back."""
    return read_xodr(xodr_bytes(*roads, junctions=junctions))
