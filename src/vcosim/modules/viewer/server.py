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
import signal
import socket
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vcosim.bus.catalogue import IMVMCamera, Message, ModuleId, Shutdown
from vcosim.bus.codec import Codec
from vcosim.constants import BUS_PORT, LOOPBACK, VIEWER_PORT
from vcosim.errors import ConfigError
from vcosim.modules.base import BusModule
from vcosim.modules.viewer.commands import page_command
from vcosim.modules.viewer.state import VehicleState, terrain_json, vehicle_geometry
from vcosim.reports import Report
from vcosim.vehicle.terrain import Terrain

log = logging.getLogger("vcosim.viewer")

STATIC = Path(__file__).parent / "static"
"""The page, its script and the vendored three.js, shipped inside the package."""


@dataclass
class ViewerStats:
    """What the pages did: pages opened, state frames pushed, commands good and bad."""

    pages: int = 0
    frames: int = 0
    commands: int = 0
    bad_commands: int = 0


@dataclass
class ViewerReport(Report):
    """Counts for the closing summary."""

    url: str
    pages: int
    frames: int
    commands: int
    bad_commands: int
    received: dict[str, int]
    poses: int
    bus_malformed: int


class Viewer(BusModule[ViewerReport]):
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

    name = "viewer"

    def __init__(
        self,
        bus_host: str = LOOPBACK,
        bus_port: int = BUS_PORT,
        *,
        host: str = LOOPBACK,
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
        super().__init__(module_id, bus_host, bus_port, codec=codec, monitor=monitor)
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
            self.client.close()
            raise ConfigError(
                [f"cannot serve the page on {host}:{port}: {exc}"], "viewer"
            ) from None
        self.address: tuple[str, int] = self._sock.getsockname()[:2]
        self._server: Any = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        """The page's address."""
        return f"http://{self.address[0]}:{self.address[1]}/"

    def describe(self) -> str:
        """Where to point the browser."""
        return f"vcosim viewer: open {self.url} in a browser"

    def announce(self, line: str) -> None:
        """On standard output, not in the log: the person at the terminal needs the address."""
        print(line, flush=True)

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
            "module": self.client.module_id,
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
        """Send a page's command to the bus (see :func:`page_command`)."""
        message = page_command(cmd, viewer_id=self.client.module_id, send_ground=self.send_ground)
        if message is not None:
            self.send(message)
            self.stats.commands += 1

    # -- the bus ----------------------------------------------------------------------------
    def _on_bus(self) -> None:
        """The bus socket is readable: take everything, update state, queue events.

        Taking messages reads the socket too, so a copy can arrive while the messages are
        handled; the loop ends only with both queues empty, or that copy would wait for the
        next datagram to wake the loop.
        """
        self.client.poll()
        while True:
            while (copy := self.client.next_copy()) is not None:
                self.state.apply(copy.message)
            self.take_messages()
            if not self.client.pending_copies:
                return

    def on_message(self, message: Message) -> None:
        """Shutdown and camera go to the pages as events; a monitor has the rest from copies."""
        if isinstance(message, Shutdown):
            self._events.append({"type": "shutdown"})
            self.stopped.set()
        elif isinstance(message, IMVMCamera):
            self._events.append({"type": "camera"})
        elif not self.client.monitor:
            self.state.apply(message)

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

    # -- serving ----------------------------------------------------------------------------
    async def serve_async(self, duration: float | None = None) -> None:
        """Join the bus, serve until Shutdown, :meth:`stop` or ``duration`` seconds."""
        import uvicorn

        if not self.client.connected:
            self.connect()
        config = uvicorn.Config(
            self.app(), log_level="warning", lifespan="off", ws="websockets-sansio"
        )
        self._server = uvicorn.Server(config)
        self._server.install_signal_handlers = lambda: None
        loop = asyncio.get_running_loop()
        bus = self.client.sock.fileno()
        loop.add_reader(bus, self._on_bus)
        if duration is not None:
            loop.call_later(duration, self.stopped.set)
        pusher = asyncio.create_task(self._push())
        try:
            await self._server.serve(sockets=[self._sock])
        finally:
            self.stopped.set()
            loop.remove_reader(bus)
            pusher.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await pusher

    def loop(self, duration: float | None) -> None:
        """Serve in this thread (the command's main loop); Ctrl-C or SIGTERM end it cleanly."""

        async def main() -> None:
            running = asyncio.get_running_loop()
            for signum in (signal.SIGINT, signal.SIGTERM):
                with contextlib.suppress(ValueError, RuntimeError):  # not the main thread
                    running.add_signal_handler(signum, self._interrupt)
            await self.serve_async(duration)

        asyncio.run(main())

    def _interrupt(self) -> None:
        """A signal: end serving like a Shutdown, and say the run was interrupted."""
        self.interrupted = True
        self.stopped.set()
        if self._server is not None:
            self._server.should_exit = True

    def serve(self) -> None:
        """Serve until Shutdown or :meth:`stop`, without the lifecycle of :meth:`run`."""
        self.loop(None)

    def start(self) -> Viewer:
        """Serve in a thread of its own (tests, embedding); returns self once the bus is joined."""
        self.connect()
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

    def release(self) -> None:
        """End serving (and its thread, if any) and free the page's port."""
        self.stopped.set()
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=5.0)
        self._sock.close()

    def stop(self) -> None:
        """End serving and leave the bus; safe twice."""
        self.close()

    def __enter__(self) -> Viewer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def report(self) -> ViewerReport:
        """Counts for the closing summary."""
        s = self.stats
        return ViewerReport(
            url=self.url,
            pages=s.pages,
            frames=s.frames,
            commands=s.commands,
            bad_commands=s.bad_commands,
            received=dict(self.received),
            poses=self.state.poses,
            bus_malformed=self.client.stats.malformed,
        )
