"""Synthetic debug logs with known timing, written as vcosim or BeamNG would write them."""

from __future__ import annotations

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
    for name, names, table in ((STEPS_LOG, ("time",), steps), (SEND_LOG, SEND_NAMES, sends),
                               (RECEIVE_LOG, RECEIVE_NAMES, receives)):
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
        ("physicsStepTime\r\n" + "".join(f"{float(t)!r}\r\n" for t in steps[:, 0])).encode())
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
