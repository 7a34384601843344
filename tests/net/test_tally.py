"""``Tally``: the first lines of each cause, then counts, so that no flood floods a log."""

from __future__ import annotations

import logging

from vcosim.net import Tally


def test_the_first_lines_of_each_cause_then_one_line_and_a_summary_at_the_end(caplog) -> None:
    log = logging.getLogger("vcosim.test.tally")
    tally = Tally(log, "test", burst=3, every=3600.0)
    with caplog.at_level(logging.INFO, logger="vcosim.test.tally"):
        logged = [tally("joined", "module %d joined", i) for i in range(1000)]
        tally("left", "module %d left", 1)
        tally.flush()
    lines = [r.getMessage() for r in caplog.records]
    assert logged[:3] == [True] * 3 and not any(logged[3:])
    assert lines[:3] == ["module 0 joined", "module 1 joined", "module 2 joined"]
    assert (
        lines[3]
        == "test: more than 3 'joined' events: from now on counted, with a line every 3600 s"
    )
    assert lines[4] == "module 1 left"
    assert lines[5].startswith("test: 997 more 'joined' events in ") and lines[5].endswith(
        "(1000 in all)"
    )
    assert len(lines) == 6 and tally.counts == {"joined": 1000, "left": 1}
    assert tally.unlogged == 997


def test_a_summary_comes_every_so_often_while_the_flood_goes_on(caplog) -> None:
    tally = Tally(logging.getLogger("vcosim.test.tally"), "test", burst=1, every=0.0)
    with caplog.at_level(logging.INFO, logger="vcosim.test.tally"):
        for i in range(5):
            tally("gone", "module %d gone", i)
    lines = [r.getMessage() for r in caplog.records]
    assert lines[0] == "module 0 gone" and len(lines) <= 2 + 4  # a summary at most per event
    assert any("more 'gone' events" in line for line in lines[1:])
