"""What the viewer counts while it serves, and the summary it closes with."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from vcosim.reports import Report


@dataclass
class ViewerStats:
    """What the pages did: frames pushed, commands (bad ones by reason), refusals, releases."""

    pages: int = 0
    frames: int = 0
    commands: int = 0
    bad_commands: int = 0
    malformed: Counter[str] = field(default_factory=Counter)
    refused_hosts: int = 0
    refused_origins: int = 0
    refused_pages: int = 0
    evicted: int = 0  # Origin-less websockets closed to make room for a page
    http_errors: Counter[str] = field(default_factory=Counter)  # uvicorn's complaints, by kind
    closed_connections: Counter[str] = field(default_factory=Counter)  # by deadline or cap
    releases: int = 0
    world_frames: int = 0


@dataclass
class ViewerReport(Report):
    """Counts for the closing summary."""

    url: str
    pages: int
    frames: int
    commands: int
    bad_commands: int
    malformed: dict[str, int]
    refused_hosts: int
    refused_origins: int
    refused_pages: int  # over MAX_PAGES open at once
    releases: int
    received: dict[str, int]
    poses: int
    bus_malformed: int
    world_vehicles: int = 0  # a world's vehicles seen (WorldVehicle, WorldPose)
    world_poses: int = 0
    world_frames: int = 0
    evicted_pages: int = 0
    http_errors: dict[str, int] = field(default_factory=dict)
    closed_connections: dict[str, int] = field(default_factory=dict)
