"""Synthetic debug logs with known timing, written as vcosim or BeamNG would write them."""

from __future__ import annotations

import heapq
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from vcosim.analysis.logs import RECEIVE_NAMES, SEND_NAMES
from vcosim.tight.debuglog import RECEIVE_LOG, SEND_LOG, STEPS_LOG

DT = 0.0005


@dataclass
class Logs:
    """Times and ids of a synthetic run (the other message values are filled in)."""

    steps: np.ndarray
    send_time: np.ndarray
    send_id: np.ndarray
    receive_time: np.ndarray
    receive_id: np.ndarray

    def tables(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        sends = np.zeros((self.send_time.size, len(SEND_NAMES)))
        sends[:, 0], sends[:, 1] = self.send_time, self.send_id
        sends[:, SEND_NAMES.index("groundspeed")] = np.arange(self.send_time.size)
        receives = np.full((self.receive_time.size, len(RECEIVE_NAMES)), np.nan)
        receives[:, 0], receives[:, 1] = self.receive_time, self.receive_id
        receives[:, RECEIVE_NAMES.index("throttle")] = 0.25
        return self.steps[:, None], sends, receives


def write_vcosim(folder: Path, logs: Logs) -> Path:
    """The three CSVs as vcosim's DebugLog writes them: a header of names, then rows."""
    folder.mkdir(parents=True, exist_ok=True)
    steps, sends, receives = logs.tables()
    for name, names, table in (
        (STEPS_LOG, ("time",), steps),
        (SEND_LOG, SEND_NAMES, sends),
        (RECEIVE_LOG, RECEIVE_NAMES, receives),
    ):
        with (folder / name).open("w") as f:
            f.write(",".join(names) + "\n")
            np.savetxt(f, table, delimiter=",", fmt="%.17g")
    return folder


def _beamng_value(v: float) -> str:
    return "-nan(ind)" if np.isnan(v) else repr(float(v))


def write_beamng(folder: Path, logs: Logs) -> Path:
    """Hand-made like BeamNG's Lua on Windows: no header (steps: its own name), CRLF, -nan(ind).

    Not written by vcosim's writer: every value formatted here.
    """
    folder.mkdir(parents=True, exist_ok=True)
    steps, sends, receives = logs.tables()
    (folder / STEPS_LOG).write_bytes(
        ("physicsStepTime\r\n" + "".join(f"{float(t)!r}\r\n" for t in steps[:, 0])).encode()
    )
    for name, table in ((SEND_LOG, sends), (RECEIVE_LOG, receives)):
        text = "".join(",".join(_beamng_value(v) for v in row) + "\r\n" for row in table)
        (folder / name).write_bytes(text.encode())
    return folder


def timeout_run() -> Logs:
    """Sends every 10 steps; replies 3 steps later; a 2 s timeout and reset; then replies in
    the next send step's blocking receive, with one duplicate. See test_metrics.py."""
    seg1 = np.arange(401) * DT  # steps 0..400; step 400 waits 2 s and times out
    seg2 = 2.2002 + np.arange(2000) * DT  # steps 401..2400
    steps = np.concatenate((seg1, seg2))
    send_steps = np.concatenate((np.arange(0, 400, 10), np.arange(401, 2401, 10)))
    send_time = steps[send_steps] + 0.0001
    send_id = np.concatenate((np.arange(40), np.arange(200)))
    rows: list[tuple[float, int]] = []
    for m in range(39):  # id 39 never answered
        rows.append((steps[10 * m + 3] + 0.0002, m))
    for m in range(199):  # lands in the next send step, before its send
        rows.append((steps[401 + 10 * (m + 1)] + 0.00005, m))
        if m == 100:  # the same reply applied again two steps later
            rows.append((steps[401 + 10 * (m + 1) + 2] + 0.0002, m))
    receive_time, receive_id = (np.array(v) for v in zip(*rows, strict=True))
    return Logs(steps, send_time, send_id.astype(float), receive_time, receive_id.astype(float))


def window_run() -> Logs:
    """Sends every 5 steps, replies 7 steps later (window 2); a reply before the first send;
    ids 50..59 unanswered (a gap); id 45 answered late (stale); replies stop after id 185
    (the simulator keeps sending: the observed window grows to 14)."""
    steps = np.arange(1000) * DT
    send_steps = np.arange(0, 1000, 5)
    send_time = steps[send_steps] + 0.0001
    send_id = np.arange(200)
    rows: list[tuple[float, int]] = [(steps[0] + 0.00005, 0)]  # before any send: unmatched
    for m in range(186):
        if 50 <= m <= 59 or m == 45:
            continue
        rows.append((steps[5 * m + 7] + 0.0002, m))
        if m == 46:
            rows.append((steps[5 * m + 8] + 0.0003, 45))  # after 46: stale
    receive_time, receive_id = (np.array(v) for v in zip(*rows, strict=True))
    return Logs(steps, send_time, send_id.astype(float), receive_time, receive_id.astype(float))


@pytest.fixture
def timeout_logs() -> Logs:
    return timeout_run()


@pytest.fixture
def window_logs() -> Logs:
    return window_run()


@pytest.fixture
def write_logs():
    """write_logs(folder, logs, style="vcosim" | "beamng") -> folder."""

    def write(folder: Path, logs: Logs, style: str = "vcosim") -> Path:
        return (write_vcosim if style == "vcosim" else write_beamng)(folder, logs)

    return write


# -- BeamNG's coupling rules against a scripted controller -----------------------------------
STALE, DUPLICATE, STARTUP, TIMEOUT = 1, 2, 3, 4
EVENTS_HEADER = "time,event,id,largest,blocking"
Script = Callable[[int], "list[tuple[float, int]]"]


@dataclass
class Coupled:
    """A synthetic run: the three logs and the events log's rows (time, event, id, largest,
    blocking)."""

    logs: Logs
    events: np.ndarray


def couple(
    script: Script,
    n_steps: int,
    *,
    skips: int = 9,
    window: int = 1,
    step_wall: float = DT,
    timeout: float = 2.0,
) -> Coupled:
    """Run the simulator's coupling rules (as the brief states BeamNG's) for ``n_steps``.

    ``script(k)`` lists the replies to message k: (delay after its send in s, reply id).
    A reply applies iff its id > the largest applied (starting at 0); while nothing is
    applied, any reply answers; a blocking receive gives up after ``timeout`` and resets
    the send counter and the largest id, never the message ids. Times: each step starts
    ``step_wall`` after the previous one or 50 µs after its blocking receive ended.
    """
    arrivals: list[tuple[float, int, int]] = []  # (time, order, id), a heap
    steps, sends, receives, events = [], [], [], []
    state = {"next_id": 0, "largest": 0, "sent": 0, "answers": 0, "order": 0}

    def answered() -> None:
        state["answers"] = min(state["answers"] + 1, state["sent"])

    def drop(t: float, reply_id: int, best: int, blocking: bool) -> None:
        kind = STARTUP if best == 0 else DUPLICATE if reply_id == best else STALE
        events.append((t, kind, reply_id, state["largest"], int(blocking)))

    def send(t: float) -> None:
        k = state["next_id"]
        sends.append((t, k))
        for delay, reply_id in script(k):
            state["order"] += 1
            heapq.heappush(arrivals, (t + delay, state["order"], reply_id))
        state["next_id"] += 1
        state["sent"] += 1

    def poll(t: float) -> None:
        best, newest = state["largest"], None
        while arrivals and arrivals[0][0] <= t:
            _, _, reply_id = heapq.heappop(arrivals)
            if reply_id > best:
                best, newest = reply_id, reply_id
                answered()
            else:
                if best == 0:
                    answered()
                drop(t + 1e-6, reply_id, best, False)
        if newest is not None:
            receives.append((t + 2e-6, newest))
            state["largest"] = newest

    def wait(t: float) -> tuple[bool, float]:
        while arrivals and arrivals[0][0] <= t + timeout:
            arrival, _, reply_id = heapq.heappop(arrivals)
            now = max(arrival, t + 1e-6)
            if reply_id > state["largest"]:
                answered()
                receives.append((now, reply_id))
                state["largest"] = reply_id
                return True, now
            drop(now, reply_id, state["largest"], True)
            if state["largest"] == 0:
                answered()
                return True, now
        return False, t + timeout

    t, since_send = 0.0, skips
    for _ in range(n_steps):
        steps.append(t)
        end = t
        if since_send < skips:
            since_send += 1
            poll(t)
        elif state["sent"] - state["answers"] < window:
            poll(t)
            send(t + 1e-5)
            since_send = 0
        else:
            ok, end = wait(t)
            if ok:
                send(end + 1e-5)
                since_send = 0
            else:
                events.append((end, TIMEOUT, state["next_id"] - 1, state["largest"], 0))
                state.update(sent=0, answers=0, largest=0)
        t = max(t + step_wall, end + 5e-5)
    send_time, send_id = (np.array(v, dtype=float) for v in zip(*sends, strict=True))
    if receives:
        receive_time, receive_id = (np.array(v, dtype=float) for v in zip(*receives, strict=True))
    else:
        receive_time = receive_id = np.zeros(0)
    logs = Logs(np.array(steps), send_time, send_id, receive_time, receive_id)
    return Coupled(logs, np.array(events, dtype=float).reshape(-1, 5))


def write_events(folder: Path, rows: np.ndarray, header: bool = True) -> Path:
    """vcosimCouplingEvents.csv as the simulator writes it: a header of names, then rows."""
    lines = [EVENTS_HEADER] if header else []
    lines += [f"{float(t)!r},{int(e)},{int(i)},{int(m)},{int(b)}" for t, e, i, m, b in rows]
    path = folder / "vcosimCouplingEvents.csv"
    path.write_text("".join(f"{line}\n" for line in lines))
    return path


@pytest.fixture
def write_run():
    """write_run(folder, coupled, events=True) -> folder: the logs, with or without events."""

    def write(folder: Path, run: Coupled, events: bool = True) -> Path:
        write_vcosim(folder, run.logs)
        if events:
            write_events(folder, run.events)
        return folder

    return write


@pytest.fixture
def coupling():
    """couple(script, n_steps, skips=9, window=1, step_wall=DT, timeout=2.0) -> Coupled."""
    return couple
