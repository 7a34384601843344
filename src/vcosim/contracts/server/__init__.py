"""The contract server face: sessions negotiated from HELLOs, served every physics step.

- ``sessions``: one client's contracts as negotiated, and how its data reaches the vehicle.
- ``face``: ``ContractServer``, the hooks and the holds (time sync, overdue data, lock-step).
- ``admission``: the ``Doorman``: which HELLOs are read, refused (beyond ``limits`` or the
  server's budget) or dropped unread, and ERROR answers that never amplify.
- ``report``: its counters and the ``ServerReport`` of a run.
"""

from vcosim.contracts.options import ServerOptions
from vcosim.contracts.server.face import ContractServer
from vcosim.contracts.server.report import ServerReport, ServerStats

__all__ = ["ContractServer", "ServerOptions", "ServerReport", "ServerStats"]
