"""A local sender of junk datagrams at a steady rate, for the tests of waits that must expire."""

from __future__ import annotations

import socket
import threading


class Junk:
    """Sends ``payload`` to ``target`` ``rate`` times a second from a fresh port of 127.0.0.1.

    The rate is kept by waiting on an event (a pace, not a synchronisation): on a loaded
    machine fewer datagrams go out, never more. Use as a context manager.
    """

    def __init__(self, target: tuple[str, int], rate: float = 100.0, payload: bytes = b"junk!!!"):
        self.target, self.period, self.payload = target, 1.0 / rate, payload
        self.sent = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def _loop(self) -> None:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
            sock.bind(("127.0.0.1", 0))
            while not self._stop.wait(self.period):
                try:
                    sock.sendto(self.payload, self.target)
                except OSError:  # (a refusal of an earlier one: the target is not up)
                    continue
                self.sent += 1

    def __enter__(self) -> Junk:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
