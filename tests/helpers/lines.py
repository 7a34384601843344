"""A process's output read line by line as it comes, for tests that wait for a line."""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Iterator
from typing import IO


def lines_of(stream: IO[str]) -> queue.Queue[tuple[float, str]]:
    """Each line of ``stream`` with the monotonic time it was read, as it comes."""
    lines: queue.Queue[tuple[float, str]] = queue.Queue()

    def read() -> None:
        for line in stream:
            lines.put((time.monotonic(), line))
        lines.put((time.monotonic(), ""))

    threading.Thread(target=read, daemon=True).start()
    return lines


def until(lines: queue.Queue[tuple[float, str]], deadline: float) -> Iterator[tuple[float, str]]:
    """Lines until the stream ends or ``deadline`` (monotonic) passes."""
    while (left := deadline - time.monotonic()) > 0:
        try:
            read_at, line = lines.get(timeout=left)
        except queue.Empty:
            return
        if not line:
            return
        yield read_at, line
