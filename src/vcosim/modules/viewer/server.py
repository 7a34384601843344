"""The viewer's server: a bus module (18) that serves the page and bridges bus and websocket.

(Just over 400 lines: the bridge is one asyncio loop whose parts share its state; the page
gate, the commands, the dead-man and the vehicle and world states live in modules beside it.)

Everything runs in one asyncio loop: the bus socket is watched with ``loop.add_reader`` and
drained with the client's non-blocking ``poll``, the websocket handlers send through the same
client, so the single-thread rule of :class:`~vcosim.bus.client.BusClient` holds without
locks. The latest vehicle state is pushed to every page at most ``rate`` times a second, and
only when something new arrived, so a page never slows the bus down.

The viewer joins as a *monitor* by default: it then also sees FMLM (engine sound, to module
19) and the driver's IMFM (to module 16) and can show rpm, throttle and brake. The vehicle's
EngineStatus (docs/bus.md: gear, real-time factor, coupling latency, coupling connected, engine
running) fills the HUD's gear and the dashboard's real-time factor and latency plots.

A world on the bus (module 22: WorldVehicle, WorldPose) is drawn too: every vehicle, the ego
highlighted, the camera on any of them. Its poses go to the pages as one ``world`` frame of
every vehicle at most ``WORLD_RATE`` (20) times a second, however many vehicles there are.

Only the viewer's own page drives (:mod:`~vcosim.modules.viewer.gate`), every message is
checked (:func:`~vcosim.modules.viewer.commands.decode_command`), and a page that stops
sending inputs while it drives is taken off the pedals (:mod:`~vcosim.modules.viewer.deadman`).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import signal
import socket
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from vcosim.bus.catalogue import IMFM, IMVMCamera, Message, ModuleId, Shutdown
from vcosim.bus.codec import Codec
from vcosim.constants import BUS_PORT, LOOPBACK, VIEWER_PORT
from vcosim.errors import ConfigError
from vcosim.modules.base import BusModule, RouterLost
from vcosim.modules.viewer.commands import MAX_COMMAND_BYTES, CommandError, decode_command
from vcosim.modules.viewer.connections import HEADER_DEADLINE_S, MAX_HEADER_BYTES, guarded_http
from vcosim.modules.viewer.deadman import DEADMAN_S, DeadMan
from vcosim.modules.viewer.gate import Gate, GateMiddleware
from vcosim.modules.viewer.report import ViewerReport, ViewerStats
from vcosim.modules.viewer.road import road_json
from vcosim.modules.viewer.state import (
    WORLD_RATE,
    VehicleState,
    WorldState,
    terrain_json,
    vehicle_geometry,
)
from vcosim.net.peers import Reports, Tally, printable
from vcosim.roads import RoadNetwork
from vcosim.vehicle.terrain import Terrain

log = logging.getLogger("vcosim.viewer")

STATIC = Path(__file__).parent / "static"
"""The page, its script and the vendored three.js, shipped inside the package."""
TOO_BIG = 1009
"""The websocket close code of a message over the size limit (RFC 6455)."""
MAX_PAGES = 16
"""Pages served at once: enough for every screen of a driving rig; more are refused (403)
rather than let one misbehaving page open sockets until every frame waits on them."""
MAX_ORIGINLESS = MAX_PAGES // 2
"""Websockets without an Origin (programs, not browsers) held at once. A page of the viewer's
own (an admitted Origin) evicts the oldest of them when every place is taken, so no program
can lock the page out."""
EVICTED = 1013
"""The close code of a websocket evicted for a page ("try again later"): an Origin-less one
first, else the page idle longest (an Origin is only a header: any program can send the
viewer's own, so no number of sockets that send it may lock the page out)."""
HTTP_LOGGER = "uvicorn.error"


class Viewer(BusModule[ViewerReport]):
    """The visualisation module: serves the page and relays between it and the bus.

    Args:
        bus_host, bus_port: the router's handshake address.
        host, port: where the page is served (loopback unless opened on purpose; port 0 picks
            a free one, see :attr:`url`).
        terrain: the ground to draw (flat by default); give the vehicle's own.
        road: an OpenDRIVE road to draw on it, its lanes and marks (the terrain's road).
        rate: most state frames per second pushed to each page.
        module_id: this module's bus id (visualisation, 18).
        monitor: join as a monitor to see FMLM and IMFM too (rpm, pedals on the dashboard).
        send_ground: forward the page's per-wheel ground height and friction as VMFM.
        allow_origins: where else the page may be opened from (``http://HOST:PORT`` or
            ``HOST[:PORT]``), besides its own address and the loopback names at its port.
        deadman: seconds without an input from a driving page before its throttle is
            released and the brake applied.
        header_deadline: seconds an HTTP connection has to send a request's headers.
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
        road: RoadNetwork | None = None,
        rate: float = 60.0,
        module_id: int = ModuleId.VISUALISATION,
        monitor: bool = True,
        send_ground: bool = False,
        codec: Codec | None = None,
        allow_origins: Sequence[str] = (),
        deadman: float = DEADMAN_S,
        header_deadline: float = HEADER_DEADLINE_S,
    ) -> None:
        problems = [] if 0 < rate <= 240 else [f"rate must be in (0, 240] frames/s, got {rate}"]
        if not 0 < deadman <= 10:
            problems.append(f"deadman must be in (0, 10] s, got {deadman}")
        if problems:
            raise ConfigError(problems, "viewer")
        super().__init__(module_id, bus_host, bus_port, codec=codec, monitor=monitor)
        self.terrain = terrain if terrain is not None else Terrain.flat()
        self.rate = rate
        self.deadman = deadman
        self.header_deadline = header_deadline
        self.send_ground = send_ground
        self.state = VehicleState()
        self.world = WorldState()
        self.stats = ViewerStats()
        self.stopped = threading.Event()
        self.lost: RouterLost | None = None  # the router fell silent for good
        self._terrain_body = json.dumps(terrain_json(self.terrain)).encode()
        self._road_body = json.dumps(None if road is None else road_json(road)).encode()
        self._geometry = vehicle_geometry()
        self._pages: dict[Any, str | None] = {}  # open websocket -> its Origin, oldest first
        self._active: dict[Any, float] = {}  # open websocket -> when it last sent (or opened)
        self._drivers = DeadMan(deadman)
        self._reports = Reports(log, "vcosim viewer")
        self._tally = Tally(log, "vcosim viewer")  # pages that stop driving: a flood is counted
        self._events: list[dict[str, Any]] = []
        try:
            self._sock = socket.create_server((host, port))
        except OSError as exc:
            self.client.close()
            raise ConfigError(
                [f"cannot serve the page on {host}:{port}: {exc}"], "viewer"
            ) from None
        self.address: tuple[str, int] = self._sock.getsockname()[:2]
        try:
            self.gate = Gate.serving(host, self.address, allow_origins)
        except ConfigError:
            self._sock.close()
            self.client.close()
            raise
        self._server: Any = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        """The page's address."""
        return f"http://{self.address[0]}:{self.address[1]}/"

    @property
    def open_pages(self) -> int:
        """Pages connected now."""
        return len(self._pages)

    def describe(self) -> str:
        """Where to point the browser."""
        return f"vcosim viewer: open {self.url} in a browser"

    def announce(self, line: str) -> None:
        """On standard output, not in the log: the person at the terminal needs the address."""
        print(line, flush=True)

    # -- the web app ------------------------------------------------------------------------
    def app(self) -> Any:
        """The starlette application (page, terrain, road, hello, websocket) behind the gate."""
        from starlette.applications import Starlette
        from starlette.responses import JSONResponse, Response
        from starlette.routing import Mount, Route, WebSocketRoute
        from starlette.staticfiles import StaticFiles

        async def terrain(request: Any) -> Response:
            return Response(self._terrain_body, media_type="application/json")

        async def road(request: Any) -> Response:
            return Response(self._road_body, media_type="application/json")

        async def config(request: Any) -> Response:
            return JSONResponse(self._hello())

        routes = Starlette(
            routes=[
                Route("/terrain.json", terrain),
                Route("/road.json", road),
                Route("/config.json", config),
                WebSocketRoute("/ws", self._websocket),
                Mount("/", StaticFiles(directory=STATIC, html=True)),
            ]
        )
        return GateMiddleware(routes, self.gate, self._refused)

    def _refused(self, kind: str, client: str, value: str) -> None:
        """A request the gate refused: counted, and told once per kind and client."""
        if kind == "host":
            self.stats.refused_hosts += 1
            hint = f"add --allow-origin with the name the browser uses if {value} is this viewer"
        else:
            self.stats.refused_origins += 1
            hint = "only the viewer's own page (or an --allow-origin one) may drive"
        self._reports(kind, client, f"refused a request from {client} with {kind} {value}; {hint}")

    def _hello(self) -> dict[str, Any]:
        return {
            "type": "hello",
            "rate": self.rate,
            "geometry": self._geometry,
            "send_ground": self.send_ground,
            "module": self.client.module_id,
        }

    def _place_for(self, origin: str | None) -> Any:
        """Room for a websocket from ``origin``: None (there is), a socket to evict, or False.

        A page (an admitted Origin) that finds every place taken evicts the oldest Origin-less
        socket, else the page that has been idle longest: a page that drives sends its inputs
        and stays, while sockets that only hold a place give it up in turn.
        """
        programs = [ws for ws, o in self._pages.items() if o is None]
        if origin is None and len(programs) >= MAX_ORIGINLESS:
            return False
        if len(self._pages) < MAX_PAGES:
            return None
        if origin is None:
            return False
        if programs:
            return programs[0]
        return min(self._pages, key=lambda ws: self._active.get(ws, 0.0))

    async def _websocket(self, ws: Any) -> None:
        client = ws.client.host if ws.client else "?"
        origin = ws.headers.get("origin")  # the gate admitted it: the own page or an allowed one
        place = self._place_for(origin)
        if place is False:  # closed before it is accepted: HTTP 403
            self.stats.refused_pages += 1
            held = "Origin-less sockets" if origin is None else "pages"
            self._reports("pages", client, f"refused a page from {client}: {held} fill it")
            await ws.close()
            return
        if place is not None:
            program = self._pages.pop(place, None) is None
            whom = "a websocket without Origin" if program else "the page idle longest"
            self._active.pop(place, None)
            self.stats.evicted += 1
            self._reports("evicted", client, f"closed {whom} to make room for a page")
            with contextlib.suppress(Exception):
                await place.close(EVICTED)
        await ws.accept()
        self._pages[ws] = origin
        self._active[ws] = time.monotonic()
        self.stats.pages += 1
        try:
            await ws.send_json(self._hello())
            await ws.send_json(self.state.frame())
            if self.world.poses:
                await ws.send_json(self.world.frame())
            while True:
                message = await ws.receive()
                if message["type"] == "websocket.disconnect":
                    if message.get("code") == TOO_BIG:
                        self._malformed("too long", client, f"over {MAX_COMMAND_BYTES} bytes")
                    return
                self._active[ws] = time.monotonic()
                data = message.get("text")
                data = message.get("bytes", b"") if data is None else data
                try:
                    self.command(data, ws)
                except CommandError as exc:
                    self._malformed(exc.reason, client, str(exc))
                    await ws.send_json({"type": "error", "error": str(exc)})
        except Exception as exc:  # a page that went away mid-send
            log.debug("page %s ended: %r", client, exc)
        finally:
            self._pages.pop(ws, None)
            self._active.pop(ws, None)
            self._release(self._drivers.leave(ws))

    def _http_problem(self, record: logging.LogRecord) -> bool:
        """A complaint of uvicorn about a request: one counted line per kind, no traceback.

        A fuzzer's requests would otherwise cost a log line each, and an h11 protocol error
        inside a response a traceback.
        """
        if record.levelno < logging.WARNING:
            return True
        text = record.getMessage().strip().splitlines()[0].rstrip(".")
        if record.exc_info and record.exc_info[1] is not None:
            error = record.exc_info[1]
            text = f"{text}: {type(error).__name__}"
            detail = f"{text} ({printable(str(error))})"
        else:
            detail = text
        kind = printable(text, 80)
        self.stats.http_errors[kind] += 1
        self._reports(("http", kind), "http", f"HTTP: {detail}")
        return False

    def _loop_problem(self, loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        """An error asyncio would log with a traceback: counted by kind, told once.

        A protocol's failure on one connection is counted with uvicorn's complaints and told
        once without a traceback (issue 45, J).
        """
        error = context.get("exception")
        text = str(context.get("message", "asyncio error")).strip().rstrip(".")
        if error is not None:
            text = f"{text}: {type(error).__name__}"
        kind = printable(text, 80)
        self.stats.http_errors[kind] += 1
        self._reports(("asyncio", kind), "asyncio", f"asyncio: {printable(text)}")

    def _closed_connection(self, reason: str) -> None:
        """An HTTP connection closed for waiting too long or for a newer one: counted."""
        self.stats.closed_connections[reason] += 1

    def _malformed(self, reason: str, client: str, detail: str) -> None:
        """A message no command: counted by reason, told once per reason and client."""
        self.stats.bad_commands += 1
        self.stats.malformed[reason] += 1
        self._reports(reason, client, f"bad command from {client} ({detail})")

    def command(self, data: str | bytes | dict[str, Any], page: Any = None) -> None:
        """Send a page's command to the bus (see :func:`decode_command`).

        Raises:
            CommandError: it is not a command; nothing was sent.
        """
        text = json.dumps(data) if isinstance(data, dict) else data
        message = decode_command(
            text, viewer_id=self.client.module_id, send_ground=self.send_ground
        )
        if message is None:
            return
        self.send(message)
        self.stats.commands += 1
        if isinstance(message, IMFM) and page is not None:
            self._drivers.input(page, message, asyncio.get_running_loop().time())

    def _release(self, message: IMFM | None) -> None:
        """Send a dead-man release (see :mod:`~vcosim.modules.viewer.deadman`)."""
        if message is None:
            return
        self.stats.releases += 1
        self.send(message)
        self._tally(
            "released", "a page stopped driving: throttle released, brake %d", message.brake
        )

    async def _watch_drivers(self) -> None:
        """Release every page that has not sent an input for ``deadman`` seconds."""
        loop = asyncio.get_running_loop()
        while not self.stopped.is_set():
            await asyncio.sleep(self.deadman / 10)
            for message in self._drivers.due(loop.time()):
                self._release(message)

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
                self._apply(copy.message)
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
            self._apply(message)

    def _apply(self, message: Message) -> None:
        """A state message: the ego's (FMVM, FMLM, ...) or the world's (WorldVehicle, WorldPose)."""
        if not self.state.apply(message):
            self.world.apply(message)

    async def _push(self) -> None:
        """Push events at once and the state at most ``rate`` times a second."""
        period = 1.0 / self.rate
        world_period = 1.0 / min(self.rate, WORLD_RATE)
        sent_version = sent_world = -1
        loop = asyncio.get_running_loop()
        due = world_due = loop.time()
        while not self.stopped.is_set() or self._events:
            try:
                self._on_bus()  # also pings a silent router, and says when it has gone
            except RouterLost as exc:
                self.lost = exc
                self.stopped.set()
            events, self._events = self._events, []
            frames = list(events)
            if self.state.version != sent_version:
                sent_version = self.state.version
                frames.append(self.state.frame())
            if self.world.version != sent_world and loop.time() >= world_due:
                sent_world = self.world.version
                world_due = loop.time() + world_period
                frames.append(self.world.frame())
            pages = list(self._pages)
            for frame in frames:
                for ws in pages:
                    with contextlib.suppress(Exception):  # a page that went away
                        await ws.send_json(frame)
                self.stats.frames += 1 if pages and frame["type"] == "state" else 0
                self.stats.world_frames += 1 if pages and frame["type"] == "world" else 0
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
            self.app(),
            http=guarded_http(deadline=self.header_deadline, closed=self._closed_connection),
            log_level="warning",
            lifespan="off",
            ws="websockets-sansio",
            ws_max_size=MAX_COMMAND_BYTES,
            timeout_keep_alive=5,
            h11_max_incomplete_event_size=MAX_HEADER_BYTES,
        )
        self._server = uvicorn.Server(config)
        self._server.install_signal_handlers = lambda: None
        loop = asyncio.get_running_loop()
        bus = self.client.sock.fileno()
        loop.add_reader(bus, self._on_bus)
        if duration is not None:
            loop.call_later(duration, self.stopped.set)
        tasks = [asyncio.create_task(self._push()), asyncio.create_task(self._watch_drivers())]
        http_log = logging.getLogger(HTTP_LOGGER)
        http_log.addFilter(self._http_problem)
        handler = loop.get_exception_handler()
        loop.set_exception_handler(self._loop_problem)
        try:
            await self._server.serve(sockets=[self._sock])
        finally:
            http_log.removeFilter(self._http_problem)
            loop.set_exception_handler(handler)
            self.stopped.set()
            for message in self._drivers.everyone():  # no page drives once the viewer ends
                self._release(message)
            self._tally.flush()
            loop.remove_reader(bus)
            for task in tasks:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task

    def loop(self, duration: float | None) -> None:
        """Serve in this thread (the command's main loop); Ctrl-C or SIGTERM end it cleanly."""
        # A signal before the event loop takes them over is held, not raised into asyncio's
        # start-up (which would leave a half-made loop and a traceback behind)
        held: list[int] = []
        previous = {}
        for signum in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(ValueError):  # not the main thread: no handlers to move
                previous[signum] = signal.signal(signum, lambda s, _: held.append(s))

        async def main() -> None:
            running = asyncio.get_running_loop()
            for signum in previous:
                running.add_signal_handler(signum, self._interrupt)
            if held:
                self._interrupt()
            await self.serve_async(duration)

        try:
            asyncio.run(main())
        finally:
            for signum, handler in previous.items():
                signal.signal(signum, handler)
        if self.lost is not None:
            raise self.lost

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
            malformed=dict(s.malformed),
            refused_hosts=s.refused_hosts,
            refused_origins=s.refused_origins,
            refused_pages=s.refused_pages,
            evicted_pages=s.evicted,
            http_errors=dict(s.http_errors),
            closed_connections=dict(s.closed_connections),
            releases=s.releases,
            received=dict(self.received),
            poses=self.state.poses,
            world_vehicles=len(self.world.cars),
            world_poses=self.world.poses,
            world_frames=s.world_frames,
            bus_malformed=self.client.stats.malformed,
        )
