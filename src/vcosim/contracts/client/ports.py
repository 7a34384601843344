"""What a contract client reads and writes: its ports, by name, over two flat arrays.

The block keeps every output value (received data, meta values, the status in slot 0) in one
flat array and every input value (the directive in slot 0) in another; ports are named spans
of them (docs/contracts.md, "Ports"). ``Ports`` is the step function's read-only view of the
outputs; ``InputPorts`` takes what the step function returns.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from enum import IntEnum
from typing import Any

import numpy as np

from vcosim.contracts.layout import PortLayout
from vcosim.errors import ConfigError, UnknownNameError

STATUS_PORT = "connection_status"
DIRECTIVE_PORT = "connection_directive"


class ConnectionStatus(IntEnum):
    """The block's first output, as the seed numbers it."""

    unknown = 0
    unconnected = 1  # not trying to connect
    connecting = 2  # attempting to connect, or negotiating
    connected = 3
    error = 4  # not connected, not trying (until the directive goes to 0 and back)
    disconnecting = 5


_STATUSES = tuple(ConnectionStatus)  # by value: a step function reads it every step


class Ports(Mapping[str, Any]):
    """Ports by name (or position; 0 is ``connection_status``) over the block's flat array.

    A width-1 port reads as a float, a wider one as a numpy array (a copy). The view reads
    the block's current values, so keep ``as_dict()`` rather than the view itself.

    Attributes:
        time: The block's local simulation time (s) of this step.
        dt: The block's step (s).
    """

    __slots__ = ("_names", "_index", "_spans", "_flat", "time", "dt")

    def __init__(self, spans: Sequence[tuple[str, int, int]], flat: np.ndarray, dt: float) -> None:
        self._names = [name for name, _, _ in spans]
        self._index = {name: i for i, name in enumerate(self._names)}
        self._spans = [(start, width) for _, start, width in spans]
        self._flat = flat
        self.time = 0.0
        self.dt = dt

    def __getitem__(self, key: str | int) -> Any:
        index = key if isinstance(key, int) else self._index.get(key)
        if index is None:
            raise UnknownNameError("port", str(key), self._names)
        start, width = self._spans[index]
        if width == 1:
            return float(self._flat[start])
        return self._flat[start : start + width].copy()

    def __getattr__(self, name: str) -> Any:
        index = self._index.get(name)
        if index is None:
            raise AttributeError(name)
        return self[index]

    def __iter__(self) -> Iterator[str]:
        return iter(self._names)

    def __len__(self) -> int:
        return len(self._names)

    @property
    def status(self) -> ConnectionStatus:
        """The connection status (port 0)."""
        return _STATUSES[int(self._flat[0])]

    def as_dict(self) -> dict[str, Any]:
        """A snapshot of every port."""
        return {name: self[i] for i, name in enumerate(self._names)}


StepFunction = Callable[[Ports], Mapping[str, Any] | None]


class InputPorts:
    """The block's inputs by name: takes a step function's result into the flat array.

    Slot 0 holds the connection directive; a port's values follow from ``1 + start``.
    """

    def __init__(self, ports: Sequence[PortLayout], flat: np.ndarray) -> None:
        self._spans = {p.name: (1 + p.start, p.width) for p in ports}
        self._flat = flat

    @property
    def directive(self) -> float:
        """The connection directive the block acts on from its next step."""
        return float(self._flat[0])

    @directive.setter
    def directive(self, value: float) -> None:
        self._flat[0] = value

    def take(self, result: Mapping[str, Any] | None) -> None:
        """Hold the values a step function returned (inputs not named keep theirs)."""
        if result is None:
            return
        if not isinstance(result, Mapping):
            raise ConfigError(
                [
                    f"the step function returned {type(result).__name__}; return a "
                    f"mapping of input port names to values"
                ],
                "contract client",
            )
        flat = self._flat
        for name, value in result.items():
            if name == DIRECTIVE_PORT:
                flat[0] = float(value)
                continue
            span = self._spans.get(name)
            if span is None:
                raise UnknownNameError("input port", name, [DIRECTIVE_PORT, *self._spans])
            start, width = span
            if width == 1 and isinstance(value, (int, float)):
                flat[start] = value
                continue
            values = np.asarray(value, dtype=float).reshape(-1)
            if values.size != width:
                raise ConfigError(
                    [f"input port {name!r} takes {width} value(s), got {values.size}"],
                    "contract client",
                )
            flat[start : start + width] = values


@dataclass
class Refusal:
    """A field the server refused: it reads invalidValue (an output) or is ignored (an input)."""

    port: str
    object: str | None
    property: str
    params: str | None
    reason: str

    def __str__(self) -> str:
        params = f"({self.params})" if self.params is not None else ""
        return f"{self.object}.{self.property}{params} (port {self.port}): {self.reason}"
