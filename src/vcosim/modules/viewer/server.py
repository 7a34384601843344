"""The viewer's server: a bus module (18) that serves the page and bridges bus and websocket.

Everything runs in one asyncio loop: the bus socket is watched with ``loop.add_reader`` and
drained with the client's non-blocking ``poll``, the websocket handlers send through the same
client, so the single-thread rule of :class:`~vcosim.bus.client.BusClient` holds without
locks. The latest vehicle state is pushed to every page at most ``rate`` times a second, and
only when something new arrived, so a page never slows the bus down.

The viewer joins as a *monitor* by default: it then also sees FMLM (engine sound, to module
19) and the driver's IMFM (to module 16) and can show rpm, throttle and brake. The vehicle's
EngineStatus (docs/bus.md: gear, real-time factor, coupling latency, coupling connected, engine
running) fills the HUD's gear and the dashboard's real-time factor and latency plots.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import math
import socket
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vcosim.bus.catalogue import (
    FMLM,
    FMVM,
    IMFM,
    VMFM,
    EngineStatus,
    IMVMCamera,
    Message,
    ModuleId,
    Shutdown,
    SoundOnce,
)
from vcosim.bus.client import DEFAULT_PORT, BusClient
from vcosim.bus.codec import Codec
from vcosim.constants import VIEWER_PORT
from vcosim.errors import ConfigError
from vcosim.vehicle.terrain import Terrain

log = logging.getLogger("vcosim.viewer")

STATIC = Path(__file__).parent / "static"
"""The page, its script and the vendored three.js, shipped inside the package."""

ENGINE_HZ_PER_RPM = 22050.0 / 1000.0
"""FMLM's engine frequency per rpm (docs/bus.md, SoundModel): rpm = frequency / 22.05."""

HORN = "horn.wav"


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


@dataclass
class ViewerStats:
    """What the viewer did: pages, frames pushed, page commands, bus messages by kind."""

    pages: int = 0
    frames: int = 0
    commands: int = 0
    bad_commands: int = 0
    received: dict[str, int] = field(default_factory=dict)


def _byte(value: Any, name: str, low: int = 0, high: int = 255) -> int:
    """A page's integer field, checked (a bad page gets an error frame, not a crash)."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ValueError(f"{name} must be a number, got {value!r}")
    v = int(round(value))
    if not low <= v <= high:
        raise ValueError(f"{name} {v} is out of range {low}..{high}")
    return v


class Viewer:
    """The visualisation module: serves the page and relays between it and the bus.

    Args:
        bus_host, bus_port: the router's handshake address.
        host, port: where the page is served (loopback unless opened on purpose; port 0 picks
            a free one, see :attr:`url`).
        terrain: the ground to draw (flat by default); give the vehicle's own.
        rate: most state frames per second pushed to each page.
        module_id: this module's bus id (visualisation, 18).
        monitor: join as a monitor to see FMLM and IMFM too (rpm, pedals on the dashboard).
        send_ground: forward the page's per-wheel ground height and friction as VMFM.
    """

    def __init__(
        self,
        bus_host: str = "127.0.0.1",
        bus_port: int = DEFAULT_PORT,
        *,
        host: str = "127.0.0.1",
        port: int = VIEWER_PORT,
        terrain: Terrain | None = None,
        rate: float = 60.0,
        module_id: int = ModuleId.VISUALISATION,
        monitor: bool = True,
        send_ground: bool = False,
        codec: Codec | None = None,
    ) -> None:
        if not 0 < rate <= 240:
            raise ConfigError([f"rate must be in (0, 240] frames/s, got {rate}"], "viewer")
        self.bus = BusClient(module_id, bus_host, bus_port, monitor=monitor, codec=codec)
        self.terrain = terrain if terrain is not None else Terrain.flat()
        self.rate = rate
        self.send_ground = send_ground
        self.state = VehicleState()
        self.stats = ViewerStats()
        self.stopped = threading.Event()
        self._terrain_body = json.dumps(terrain_json(self.terrain)).encode()
        self._geometry = vehicle_geometry()
        self._pages: set[Any] = set()
        self._events: list[dict[str, Any]] = []
        try:
            self._sock = socket.create_server((host, port))
        except OSError as exc:
            self.bus.close()
            raise ConfigError(
                [f"cannot serve the page on {host}:{port}: {exc}"], "viewer"
            ) from None
        self.address: tuple[str, int] = self._sock.getsockname()[:2]
        self._server: Any = None
        self._thread: threading.Thread | None = None
        self._closed = False

    @property
    def url(self) -> str:
        """The page's address."""
        return f"http://{self.address[0]}:{self.address[1]}/"

    # -- the web app ------------------------------------------------------------------------
    def app(self) -> Any:
        """The starlette application: page, terrain, hello and the websocket."""
        from starlette.applications import Starlette
        from starlette.responses import JSONResponse, Response
        from starlette.routing import Mount, Route, WebSocketRoute
        from starlette.staticfiles import StaticFiles

        async def terrain(request: Any) -> Response:
            return Response(self._terrain_body, media_type="application/json")

        async def config(request: Any) -> Response:
            return JSONResponse(self._hello())

        return Starlette(
            routes=[
                Route("/terrain.json", terrain),
                Route("/config.json", config),
                WebSocketRoute("/ws", self._websocket),
                Mount("/", StaticFiles(directory=STATIC, html=True)),
            ]
        )

    def _hello(self) -> dict[str, Any]:
        return {
            "type": "hello",
            "rate": self.rate,
            "geometry": self._geometry,
            "send_ground": self.send_ground,
            "module": self.bus.module_id,
        }

    async def _websocket(self, ws: Any) -> None:
        from starlette.websockets import WebSocketDisconnect

        await ws.accept()
        self._pages.add(ws)
        self.stats.pages += 1
        try:
            await ws.send_json(self._hello())
            await ws.send_json(self.state.frame())
            while True:
                text = await ws.receive_text()
                try:
                    self.command(json.loads(text))
                except (ValueError, TypeError, KeyError) as exc:
                    self.stats.bad_commands += 1
                    await ws.send_json({"type": "error", "error": str(exc)})
        except WebSocketDisconnect:
            pass
        finally:
            self._pages.discard(ws)

    def command(self, cmd: dict[str, Any]) -> None:
        """Turn a page's command into a bus message (the page never speaks bus text itself)."""
        kind = cmd.get("type")
        to_vehicle = ModuleId.VEHICLE
        if kind == "input":
            shift = _byte(cmd.get("shift", 0), "shift", -1, 1)
            self.bus.send(
                IMFM(
                    _byte(cmd["throttle"], "throttle"),
                    _byte(cmd["brake"], "brake"),
                    _byte(cmd["steering"], "steering"),
                    shift,
                    to=to_vehicle,
                    enqueue=shift != 0,
                )
            )
        elif kind == "camera":
            self.bus.send(IMVMCamera(to=self.bus.module_id))  # comes back: one path for all
        elif kind == "horn":
            self.bus.send(SoundOnce(HORN, 255, to=ModuleId.SOUND))
        elif kind == "ground":
            if not self.send_ground:
                return
            h, mu = cmd["height"], cmd["friction"]
            if len(h) != 4 or len(mu) != 4:
                raise ValueError("ground needs four heights and four frictions (FL FR RL RR)")
            self.bus.send(VMFM(*map(float, h), *map(float, mu), to=to_vehicle))
        else:
            raise ValueError(f"unknown command type {kind!r} (known: input, camera, horn, ground)")
        self.stats.commands += 1

    # -- the bus ----------------------------------------------------------------------------
    def _on_bus(self) -> None:
        """The bus socket is readable: take everything, update state, queue events.

        Taking messages reads the socket too, so a copy can arrive while the messages are
        handled; the loop ends only with both queues empty, or that copy would wait for the
        next datagram to wake the loop.
        """
        self.bus.poll()
        while True:
            while (copy := self.bus.next_copy()) is not None:
                self.state.apply(copy.message)
            while (message := self.bus.next_message()) is not None:
                name = type(message).__name__
                self.stats.received[name] = self.stats.received.get(name, 0) + 1
                if isinstance(message, Shutdown):
                    self._events.append({"type": "shutdown"})
                    self.stopped.set()
                elif isinstance(message, IMVMCamera):
                    self._events.append({"type": "camera"})
                elif not self.bus.monitor:  # a monitor has taken it from its copy already
                    self.state.apply(message)
            if not self.bus.pending_copies:
                return

    async def _push(self) -> None:
        """Push events at once and the state at most ``rate`` times a second."""
        period = 1.0 / self.rate
        sent_version = -1
        loop = asyncio.get_running_loop()
        due = loop.time()
        while not self.stopped.is_set() or self._events:
            events, self._events = self._events, []
            frames = list(events)
            if self.state.version != sent_version:
                sent_version = self.state.version
                frames.append(self.state.frame())
            for frame in frames:
                for ws in list(self._pages):
                    with contextlib.suppress(Exception):  # a page that went away
                        await ws.send_json(frame)
                self.stats.frames += 1 if frame["type"] == "state" else 0
            due += period  # on a schedule, so the rate does not drift below `rate`
            if due <= loop.time():  # late (a slow page): start afresh, never burst
                due = loop.time() + period
            await asyncio.sleep(due - loop.time())
        if self._server is not None:
            self._server.should_exit = True

    async def serve_async(self) -> None:
        """Join the bus, serve until Shutdown or :meth:`stop`."""
        import uvicorn

        if not self.bus.connected:
            self.bus.connect()
        config = uvicorn.Config(
            self.app(), log_level="warning", lifespan="off", ws="websockets-sansio"
        )
        self._server = uvicorn.Server(config)
        self._server.install_signal_handlers = lambda: None
        loop = asyncio.get_running_loop()
        loop.add_reader(self.bus.sock.fileno(), self._on_bus)
        pusher = asyncio.create_task(self._push())
        try:
            await self._server.serve(sockets=[self._sock])
        finally:
            self.stopped.set()
            loop.remove_reader(self.bus.sock.fileno())
            pusher.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await pusher

    def serve(self) -> None:
        """Blocking :meth:`serve_async` (the command's main loop)."""
        asyncio.run(self.serve_async())

    def start(self) -> Viewer:
        """Serve in a thread of its own (tests, embedding); returns self once the bus is joined."""
        self.bus.connect()
        started = threading.Event()

        async def run() -> None:
            asyncio.get_running_loop().call_soon(started.set)
            await self.serve_async()

        self._thread = threading.Thread(
            target=lambda: asyncio.run(run()), daemon=True, name="vcosim-viewer"
        )
        self._thread.start()
        started.wait(5.0)
        return self

    def stop(self) -> None:
        """End serving and leave the bus; safe twice."""
        if self._closed:
            return
        self._closed = True
        self.stopped.set()
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=5.0)
        self.bus.close()
        self._sock.close()

    def __enter__(self) -> Viewer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def report(self) -> dict[str, Any]:
        """Counts for the closing summary."""
        s = self.stats
        return {
            "url": self.url,
            "pages": s.pages,
            "frames": s.frames,
            "commands": s.commands,
            "bad_commands": s.bad_commands,
            "received": dict(s.received),
            "poses": self.state.poses,
            "bus_malformed": self.bus.stats.malformed,
        }
