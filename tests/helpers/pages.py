"""Talking to the viewer as a page does: its websocket address, frames and conditions awaited."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any


def ws_url(viewer: Any) -> str:
    return f"ws://{viewer.address[0]}:{viewer.address[1]}/ws"


def recv_until(ws: Any, predicate: Callable[[dict], bool], timeout: float = 5.0) -> dict:
    """Frames until one matches (a condition with a deadline, not a sleep)."""
    deadline = time.monotonic() + timeout
    while (left := deadline - time.monotonic()) > 0:
        frame = json.loads(ws.recv(timeout=left))
        if predicate(frame):
            return frame
    raise AssertionError("no matching frame in time")


def wait_for(condition: Callable[[], bool], timeout: float = 5.0) -> None:
    """Poll a condition another thread makes true (a deadline, not a fixed sleep)."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "condition not met in time"
        time.sleep(0.0002)
