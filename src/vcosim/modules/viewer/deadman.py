"""The dead-man rule: a page that stops sending inputs while it drives is taken off the pedals.

The vehicle keeps the last IMFM it was sent, so a hidden tab, a hung browser or a lost network
would leave the car on the throttle. A driving page sends inputs at 25 Hz; once none has come
for ``timeout`` seconds (or the page leaves), the viewer sends one IMFM with throttle 0 and at
least :data:`DEADMAN_BRAKE` (a driver who brakes harder keeps that brake), steering as last
sent, so the car comes to a stop on its line. The page's next input takes over again.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass

from vcosim.bus.catalogue import IMFM, ModuleId

DEADMAN_S = 0.5
"""Seconds without an input from a driving page before its throttle is released."""
DEADMAN_BRAKE = 128
"""The least brake (0-255) the rule applies: the car stops; a harder brake stays."""


def released(last: IMFM) -> IMFM:
    """The input that replaces ``last`` when its page stops driving."""
    return IMFM(0, max(last.brake, DEADMAN_BRAKE), last.steering, 0, to=ModuleId.VEHICLE)


@dataclass
class _Driver:
    last: IMFM
    at: float
    released: bool = False


class DeadMan:
    """The pages that drive, each with its last input and when it came (any one clock)."""

    def __init__(self, timeout: float = DEADMAN_S) -> None:
        self.timeout = timeout
        self._drivers: dict[Hashable, _Driver] = {}

    def input(self, page: Hashable, message: IMFM, now: float) -> None:
        """A page sent an input: it drives (again)."""
        self._drivers[page] = _Driver(message, now)

    def due(self, now: float) -> list[IMFM]:
        """Releases for the pages silent for ``timeout`` seconds, each once."""
        late = [d for d in self._drivers.values() if not d.released and now - d.at >= self.timeout]
        return [self._release(d) for d in late]

    def leave(self, page: Hashable) -> IMFM | None:
        """A page went away: its release, unless it had one already or never drove."""
        driver = self._drivers.pop(page, None)
        return None if driver is None or driver.released else self._release(driver)

    def everyone(self) -> list[IMFM]:
        """Releases for every page still driving (the viewer is ending)."""
        pages = list(self._drivers)
        return [m for page in pages if (m := self.leave(page)) is not None]

    @staticmethod
    def _release(driver: _Driver) -> IMFM:
        driver.released = True
        return released(driver.last)
