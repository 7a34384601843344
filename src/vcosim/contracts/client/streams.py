"""The client's contracts, one stream each: what it receives and what it sends.

An ``Incoming`` stream (an output group) knows where each received value goes in the block's
flat output array (slot 0 is the status, so every index is one past the layout's), which
values the server accepted, and the serial number and times of its latest update. An
``Outgoing`` stream (an input group) is a slice of the flat input array and a reusable DATA
message, sent on its grid of whole periods.
"""

from __future__ import annotations

import numpy as np

from vcosim.contracts import protocol as P
from vcosim.contracts.layout import ContractLayout


class Incoming:
    """A contract the client receives (an output group): where its values go, its schedule."""

    def __init__(self, layout: ContractLayout) -> None:
        group = layout.group
        self.id = layout.id
        self.period = group.period
        self.time_sync = group.time_sync
        self.overdue = group.overdue_timeout
        self.width = layout.wire_width
        wire = layout.wire_fields
        self.all_dest = np.array(
            [1 + f.flat + k for f in wire for k in range(f.width)], dtype=np.int64
        )
        self.invalid = np.array([f.config.invalidValue for f in wire for _ in range(f.width)])
        self.meta = [
            (f.meta, 1 + f.flat, f.config.invalidValue) for f in layout.fields if f.meta is not None
        ]
        self.serve(np.ones(self.width, dtype=bool))
        self.serial = 0
        self.remote_time: float | None = None
        self.rx_local = 0.0
        self.received = 0
        self.gaps = 0
        self.stale = 0

    def serve(self, accepted: np.ndarray) -> None:
        """Take only the accepted values (per wire value); a contiguous run is a slice copy."""
        self.src = np.flatnonzero(accepted)
        self.dest = self.all_dest[self.src]
        n = len(self.src)
        contiguous = n == self.width and (n == 0 or self.dest[-1] - self.dest[0] == n - 1)
        self.run = slice(int(self.dest[0]), int(self.dest[0]) + n) if contiguous and n else None

    def expected(self) -> float:
        """Local time by which the next update is expected."""
        return self.rx_local + self.period


class Outgoing:
    """A contract the client sends (an input group): its slice of the inputs, its schedule."""

    def __init__(self, layout: ContractLayout, inputs: np.ndarray) -> None:
        self.id = int(layout.id or 0)
        self.period = layout.group.period
        fields = layout.fields
        self.start = 1 + fields[0].flat
        self.stop = 1 + fields[-1].flat + fields[-1].width
        self.source = inputs[self.start : self.stop]  # a view: the values as they are now
        self.message = P.DataMessage(self.id, self.stop - self.start)
        self.next_k = 0
        self.sent = 0
