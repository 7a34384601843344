"""A flood of handshakes from fresh ports costs the router's log a few lines (issue 45, J).

20,000 ghost handshakes wrote 20,002 lines (one "joined" each); now the first 20 of each
cause are logged, the rest counted, with a summary line now and then and at the end.
"""

from __future__ import annotations

import logging
import socket

from vcosim.bus.router import Router

GHOSTS = 300


def test_300_ghost_handshakes_cost_a_few_lines_and_are_counted(caplog) -> None:
    caplog.set_level(logging.INFO, logger="vcosim")
    with Router("127.0.0.1", 0, max_modules=32).start() as router:
        for i in range(GHOSTS):
            with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
                sock.settimeout(30.0)  # a loaded machine may hold the router a while
                sock.sendto(b"ID %d,END" % (100 + i % 50), router.address)
                assert sock.recv(300).startswith((b"ID 0,END", b"REFUSED "))
        report = router.report()
    joined = [r for r in caplog.records if r.getMessage().endswith(" joined")]
    assert len(joined) == 20, len(joined)
    summaries = [r.getMessage() for r in caplog.records if "more 'joined' events" in r.getMessage()]
    assert summaries and summaries[-1].endswith("in all)")  # (the final one, at the end)
    assert report["log_lines_counted"] >= GHOSTS - 50, report  # (most of the joins)
    assert len(caplog.records) < 20 + 50 + 10  # joins, the problems told once, summaries
