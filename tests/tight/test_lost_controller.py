"""A controller that disappears mid-run is named at once, and a real-time run keeps time.

Over real UDP: ``vcosim sim`` in its own process, a raw controller in this one whose socket is
closed 2 s into the run (no more replies, and the simulator's datagrams meet a closed port).
"""

from __future__ import annotations

import logging
import re
import time

import numpy as np
import pytest

from helpers.lines import lines_of, until
from helpers.peers import RawPeer, coupled, nan_reply, start_simulator

MESSAGES_IN_2_S = 400  # one every 5 ms (the default ext time)


@pytest.mark.parametrize("pacing", ["realtime"])
def test_a_killed_controller_is_named_and_the_run_keeps_real_time(peers, tmp_path, pacing):
    peer: RawPeer = peers().start()
    port = peer.port
    sim = start_simulator(port, tmp_path, "--pacing", pacing, "--duration", "8")
    try:
        assert sim.stderr is not None and sim.stdout is not None
        err = lines_of(sim.stderr)
        assert peer.wait_for(MESSAGES_IN_2_S, timeout=120), "no coupling"
        peer.stop()  # the controller is gone: its socket closed
        killed = time.monotonic()
        said: dict[str, float] = {}
        seen = []
        for read_at, line in until(err, killed + 120):
            seen.append(line)
            for word in ("controller lost: ", "controller still lost", "controller back"):
                if word in line:
                    said.setdefault(word, read_at)
        out = sim.stdout.read()
        sim.wait(60)
        ended = time.monotonic()
    finally:
        sim.kill()
        sim.wait(10)
    text = "".join(seen) + out  # the summary (the console's, on stderr) and the log lines
    assert sim.returncode == 0, text
    assert "controller lost: " in said, text
    assert "controller still lost" in said, text  # 4 s left after the timeout: a status line
    assert "controller back" not in said, text
    assert f"127.0.0.1:{port}" in text  # which controller
    # it waited out one timeout, then drove on without blocking, however loaded the machine
    assert re.search(r"timeouts\s+│ 1 ", text), text
    lost = re.search(r"controller lost\s+│ 1 time\(s\), ([\d.]+) s", text)
    assert lost is not None, text
    assert 4.5 < float(lost.group(1)) < 6.5, text  # 8 s run, controller gone at about 2 s
    print(text)
    print(
        f"lost line {said['controller lost: '] - killed:.2f} s after the kill; the run ended "
        f"{ended - killed:.2f} s after it (6 s of its 8 s were left)"
    )


def test_a_controller_silent_for_a_while_is_lost_then_back_and_the_time_counted(peers, caplog):
    def silent_between_ids_100_and_300(message: np.ndarray) -> np.ndarray | None:
        return None if 100 <= message[0] < 300 else nan_reply(message)

    sim, endpoint = coupled(peers(silent_between_ids_100_and_300), "realtime", timeout=0.2)
    with caplog.at_level(logging.WARNING, logger="vcosim.tight"):
        sim.run(3.0)
    said = [r.getMessage() for r in caplog.records if r.name == "vcosim.tight"]
    kinds = [line.split(":")[0].split(" at ")[0] for line in said]
    # lost, back: once, or (a reply the peer's thread sent late, after the wait expired, on a
    # loaded machine) again; back at the end
    assert kinds[:2] == ["controller lost", "controller back"] and kinds[-1] == "controller back"
    assert kinds == ["controller lost", "controller back"] * (len(kinds) // 2), said
    report = endpoint.report()
    # one wait per loss, then it sent on without waiting, until a reply came
    assert report["timeouts"] == report["controller_lost"] == len(kinds) // 2
    # silent from message 100 to 299 (5 ms apart), back with message 300's reply (or one
    # after it, as the peer's thread may lag the simulator)
    assert 0.9 <= report["uncontrolled_time"] <= 1.5
    assert report["applied"] >= 300


def test_a_lock_step_run_holds_for_a_lost_controller_and_says_so(peers, caplog):
    def silent_from_id_40(message: np.ndarray) -> np.ndarray | None:
        return None if message[0] >= 40 else nan_reply(message)

    sim, endpoint = coupled(peers(silent_from_id_40), "lockstep", timeout=0.2)
    with caplog.at_level(logging.WARNING, logger="vcosim.tight"):
        sim.run(0.3)  # 60 messages: the last 20 unanswered
    said = [r.getMessage() for r in caplog.records if r.name == "vcosim.tight"]
    assert len(said) >= 1 and said[0].startswith("controller lost: no reply within the 0.2 s")
    assert "lock-step: the run holds, each send waits 0.2 s for it" in said[0]
    # (a reply the peer's thread sent late, after a wait expired, brings it back for a while
    # on a loaded machine; it is lost again at the next wait, and lost at the end)
    lost = sum(line.startswith("controller lost: ") for line in said)
    back = sum(line.startswith("controller back") for line in said)
    assert lost == back + 1, said
    report = endpoint.report()
    assert report["controller_lost"] == lost and report["timeouts"] >= 5  # a wait at sends
    assert 0.0 < report["uncontrolled_time"] <= 0.1 + 0.011  # since message 40 at most
