"""What the page shows: the ground, the car's geometry, its latest state, a world's vehicles."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from vcosim.bus.catalogue import (
    FMLM,
    FMVM,
    IMFM,
    EngineStatus,
    Message,
    WorldPose,
    WorldSignal,
    WorldVehicle,
)
from vcosim.vehicle.terrain import Terrain

ENGINE_HZ_PER_RPM = 22050.0 / 1000.0
"""FMLM's engine frequency per rpm (docs/bus.md, SoundModel): rpm = frequency / 22.05."""


def terrain_json(terrain: Terrain) -> dict[str, Any]:
    """The terrain as JSON-friendly arrays, rows south to north, heights rounded to 1 mm.

    The page samples it bilinearly exactly as :func:`~vcosim.vehicle.terrain.sample_terrain`
    does, so the ground drawn (and sent back in VMFM) is the ground the vehicle drives on.
    """
    ny, nx = terrain.height.shape
    return {
        "nx": int(nx),
        "ny": int(ny),
        "origin": [float(terrain.grid[0]), float(terrain.grid[1])],
        "cell": float(terrain.grid[2]),
        "height": [round(float(v), 3) for v in terrain.height.ravel()],
        "friction": [round(float(v), 4) for v in terrain.friction.ravel()],
        "road": None if terrain.road is None else [int(v) for v in terrain.road.ravel()],
    }


def vehicle_geometry() -> dict[str, float]:
    """Wheel positions about the centre of gravity and the wheel radius of the default car."""
    from vcosim.vehicle.params import VehicleParams, pack

    p = pack(VehicleParams())[0]
    return {
        "a": float(p["a"]),
        "b": float(p["b"]),
        "c": float(p["c"]),
        "radius": float(p["r"]),
        "ride_height": float(p["ride_height"]),
    }


@dataclass
class VehicleState:
    """What the page shows: the latest pose and signals, and a counter of updates."""

    x: float = 0.0
    y: float = 0.0
    z: float = 0.0
    roll: float = 0.0
    pitch: float = 0.0
    yaw: float = 0.0
    speed: float = 0.0
    rpm: float = 0.0
    throttle: float = 0.0
    brake: float = 0.0
    steering: float = 0.0
    gear: int | None = None
    rtf: float | None = None
    latency_ms: float | None = None
    connected: bool = False
    poses: int = 0
    version: int = 0

    def apply(self, message: Message) -> bool:
        """Take a state message into account; True if it changed what the page shows."""
        if isinstance(message, FMVM):
            self.x, self.y, self.z = message.x, message.y, message.z
            self.roll, self.pitch, self.yaw = message.roll, message.pitch, message.yaw
            self.speed = message.speed
            self.poses += 1
        elif isinstance(message, FMLM):
            self.rpm = message.engine_frequency / ENGINE_HZ_PER_RPM if message.engine_volume else 0
        elif isinstance(message, IMFM):
            self.throttle, self.brake = message.throttle / 255, message.brake / 255
            s = message.steering
            self.steering = (128 - s) / 128 if s <= 128 else (128 - s) / 127
        elif isinstance(message, EngineStatus):
            self.gear = round(message.a)
            self.rtf = message.b if message.b >= 0 else None
            self.connected = message.d >= 0.5
            self.latency_ms = message.c if message.c >= 0 and self.connected else None
        else:
            return False
        self.version += 1
        return True

    def frame(self) -> dict[str, Any]:
        """The websocket frame of this state."""
        return {
            "type": "state",
            "t": time.time(),
            "x": self.x,
            "y": self.y,
            "z": self.z,
            "roll": self.roll,
            "pitch": self.pitch,
            "yaw": self.yaw,
            "speed": self.speed,
            "rpm": self.rpm,
            "throttle": self.throttle,
            "brake": self.brake,
            "steering": self.steering,
            "gear": self.gear,
            "rtf": self.rtf,
            "latency_ms": self.latency_ms,
            "connected": self.connected,
            "poses": self.poses,
        }


WORLD_RATE = 20.0
"""Most world frames per second to a page: a hundred vehicles' poses are one frame of ~12 kB."""


@dataclass
class WorldCar:
    """One vehicle of a world as the page draws it: announced (name, box, ego) and its pose."""

    name: str | None = None
    length: float | None = None
    width: float | None = None
    offset: float = 0.0
    ego: bool = False
    pose: tuple[float, ...] | None = None  # x, y, z, roll, pitch, yaw, speed, rpm, gear

    def as_dict(self, row: int) -> dict[str, Any]:
        """The vehicle in a world frame (unknown name: ``#row``; unknown box: null)."""
        x, y, z, roll, pitch, yaw, speed, rpm, gear = self.pose or (0.0,) * 9
        return {
            "row": row,
            "name": self.name if self.name is not None else f"#{row}",
            "ego": self.ego,
            "length": self.length,
            "width": self.width,
            "offset": round(self.offset, 3),
            # a page needs mm and mrad, not 17 digits: a hundred vehicles stay one small frame
            "x": round(x, 3),
            "y": round(y, 3),
            "z": round(z, 3),
            "roll": round(roll, 4),
            "pitch": round(pitch, 4),
            "yaw": round(yaw, 4),
            "speed": round(speed, 3),
            "rpm": round(rpm),
            "gear": int(gear),
        }


@dataclass
class WorldState:
    """A world's vehicles, its traffic lights' heads, and a counter of updates.

    Vehicles by row (WorldVehicle, WorldPose), heads by index (WorldSignal).
    """

    cars: dict[int, WorldCar] = field(default_factory=dict)
    signals: dict[int, WorldSignal] = field(default_factory=dict)
    poses: int = 0
    version: int = 0

    def apply(self, message: Message) -> bool:
        """Take a world message into account; True if it changed what the page shows."""
        if isinstance(message, WorldVehicle):
            car = self.cars.setdefault(message.row, WorldCar())
            if message.ego:  # one ego: a world restarted with another one moves the flag
                for other in self.cars.values():
                    other.ego = False
            car.name, car.length, car.width = message.name, message.length, message.width
            car.offset, car.ego = message.offset, bool(message.ego)
        elif isinstance(message, WorldPose):
            self.cars.setdefault(message.row, WorldCar()).pose = message.values[1:]
            self.poses += 1
        elif isinstance(message, WorldSignal):
            if self.signals.get(message.index) == message:  # repeated by an announcement
                return False
            self.signals[message.index] = message
        else:
            return False
        self.version += 1
        return True

    def frame(self) -> dict[str, Any]:
        """The websocket frame: every vehicle with a pose, by row, the ego flagged."""
        return {
            "type": "world",
            "t": time.time(),
            "vehicles": [
                car.as_dict(row) for row, car in sorted(self.cars.items()) if car.pose is not None
            ],
            "signals": [
                {
                    "index": i,
                    "name": h.name,
                    "x": round(h.x, 3),
                    "y": round(h.y, 3),
                    "z": round(h.z, 3),
                    "yaw": round(h.yaw, 4),
                    "state": h.state,
                }
                for i, h in sorted(self.signals.items())
            ],  # fmt: skip
        }
