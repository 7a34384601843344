"""Logs that cannot flood (issue 31, item 7): a flood from ever new ports costs a few lines.

The router tells each kind of problem once per sender; senders are as many as a host has
ports, so after ``Reports.limit`` lines one more says the rest are only counted, and the
malformed-by-sender table keeps its first senders and counts the others together.
"""

from __future__ import annotations

import contextlib
import logging
import socket

from vcosim.bus.router import MAX_LISTED_SENDERS, Router
from vcosim.net.peers import PRINTED_CHARS, Reports, printable


def test_a_thousand_peers_cost_the_limit_and_one_line(caplog):
    reports = Reports(logging.getLogger("flood"), "test", limit=50)
    with caplog.at_level(logging.WARNING, logger="flood"):
        told = [reports("junk", ("127.0.0.1", port), "x" * 10_000) for port in range(1000)]
    assert sum(told) == 50 and reports.suppressed == 950
    assert len(caplog.records) == 51
    assert max(len(r.getMessage()) for r in caplog.records) < 400  # the 10 kB text cut short


def test_a_peers_words_are_printed_short_and_escaped():
    assert printable("E_\x1b[31mRED\n") == "E_\\x1b[31mRED\\n"
    long = printable("9" * 5000)
    assert len(long) < PRINTED_CHARS + 30 and long.endswith("(5000 characters)")


def test_junk_from_300_ports_is_counted_in_bounded_tables(router: Router, caplog):
    with caplog.at_level(logging.WARNING), contextlib.ExitStack() as ports:
        for _ in range(300):  # 300 ports at once: none reused
            sock = ports.enter_context(socket.socket(socket.AF_INET, socket.SOCK_DGRAM))
            sock.sendto(b"ID x" + b"9" * 3000 + b",END", router.address)
        assert router.wait_until(lambda: router.stats.malformed == 300, 30.0), router.report()
    by_sender = router.stats.malformed_by_sender
    assert len(by_sender) == MAX_LISTED_SENDERS + 1 and sum(by_sender.values()) == 300
    assert by_sender["others"] == 300 - MAX_LISTED_SENDERS
    assert len(router.stats.problems) <= 50
    assert len([r for r in caplog.records if r.name.startswith("vcosim")]) <= 51
