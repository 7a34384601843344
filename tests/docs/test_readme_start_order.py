"""The README's two terminals in either order: `vcosim sim` and its `KeepSpeed` controller.

The simulator runs as `vcosim sim --pacing lockstep` in its own process, the README's
controller in a `ControllerBlock` here, over UDP on 127.0.0.1 (ephemeral ports). Simulator
first: a socket on the controller's port takes message 0 (so nobody answers it, and the test
knows the simulator is waiting), then the block takes over the port. Either way: no timeout,
no lost message, no advice from `vcosim analyze`, and the same messages value for value.
"""

from __future__ import annotations

import json
import socket
import threading
from pathlib import Path

import numpy as np
import pytest
from test_readme_controller import readme_controller

from helpers.peers import start_simulator
from vcosim.analysis import Run, load_run
from vcosim.tight.controller import BlockReport, ControllerBlock

SECONDS = 2.0  # simulated: 400 messages of 5 ms
TIMEOUT = "3"  # s: ample for a loaded machine; also how often message 0 goes again at start-up


def run_pair(folder: Path, simulator_first: bool) -> tuple[dict, BlockReport, Run]:
    """Both sides of the README, the simulator first or the controller."""
    stand_in = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    stand_in.bind(("127.0.0.1", 0))
    port = stand_in.getsockname()[1]
    options = ("--pacing", "lockstep", "--duration", str(SECONDS), "--timeout", TIMEOUT)
    summary = folder / "summary.json"
    controller = readme_controller().KeepSpeed()
    reports: list[BlockReport] = []

    def answer(block: ControllerBlock) -> None:
        reports.append(block.run(duration=SECONDS))

    if simulator_first:
        sim = start_simulator(port, folder, *options, "--json-out", str(summary))
        stand_in.settimeout(120)
        stand_in.recvfrom(1024)  # message 0: the simulator runs, and nobody answered it
        stand_in.close()
        block = ControllerBlock(controller, step=0.005, listen_port=port, sim_port=0)
        thread = threading.Thread(target=answer, args=(block,))
        thread.start()
    else:
        stand_in.close()
        block = ControllerBlock(controller, step=0.005, listen_port=port, sim_port=0)
        thread = threading.Thread(target=answer, args=(block,))
        thread.start()
        sim = start_simulator(port, folder, *options, "--json-out", str(summary))
    _, err = sim.communicate(timeout=120)
    thread.join(timeout=60)
    assert sim.returncode == 0, err
    return json.loads(summary.read_text())["coupling"], reports[0], load_run(folder)


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[dict, BlockReport, Run]]:
    return {
        order: run_pair(tmp_path_factory.mktemp(order), order == "simulator first")
        for order in ("simulator first", "controller first")
    }


@pytest.mark.parametrize("order", ["simulator first", "controller first"])
def test_either_order_couples_without_timeouts_lost_messages_or_advice(runs, order):
    coupling, block, run = runs[order]
    assert coupling["timeouts"] == 0 and coupling["sent"] == 400
    assert (coupling["startup_resends"] > 0) == (order == "simulator first")
    assert block.answered == 400 and block.resets == 0  # every message, message 0 included
    m = run.metrics
    assert m.timeouts == [] and m.lost == [] and m.resets == 0
    assert m.suggested_ext_time is None  # an instant controller: nothing to advise
    assert "--ext-time" not in m.verdict and "timeout" not in m.verdict, m.verdict
    assert "lost" not in m.verdict, m.verdict


def test_the_order_changes_no_value_sent(runs):
    """Lock-step: the vehicle waits with the simulator, so both runs send the same messages."""
    first, second = (runs[order][2].sends for order in ("simulator first", "controller first"))
    again = np.concatenate(([False], np.diff(first.id) == 0))  # message 0, sent again
    np.testing.assert_array_equal(first.values[~again], second.values)
