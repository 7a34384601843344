"""Real processes killed with SIGKILL leave files that are read up to their last flush.

The debug logs of ``vcosim sim --debug-log`` by ``vcosim analyze``; the recordings of
``vcosim sim --record`` and of the bus logger's recorder by the ``mcap`` package's default
reader (as Foxglove reads them) and, as CSV, row by whole row.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from mcap.reader import make_reader

from helpers.forks import vcosim_command
from helpers.peers import RawPeer, start_simulator
from vcosim.analysis import load_run, read_logs
from vcosim.modules.recording import read_recording, recover

DEADLINE = 180.0  # s: a loaded 2-core machine can take a minute to start a simulator


def wait_until(condition: Callable[[], bool], process: subprocess.Popen, what: str) -> None:
    """Poll ``condition`` until it holds; fail if ``process`` ends first or time runs out."""
    end = time.monotonic() + DEADLINE
    while not condition():
        if process.poll() is not None:
            out, err = process.communicate()
            pytest.fail(f"the process ended before {what}: {out[-2000:]}{err[-2000:]}")
        if time.monotonic() > end:
            process.kill()
            pytest.fail(f"no {what} within {DEADLINE:g} s")
        time.sleep(0.1)


def kill(process: subprocess.Popen) -> None:
    process.send_signal(signal.SIGKILL)
    process.communicate(timeout=60)
    assert process.returncode == -signal.SIGKILL


@pytest.fixture
def peer() -> Iterator[RawPeer]:
    started = RawPeer().start()
    yield started
    started.stop()


def _steps_on_disk(folder: Path) -> int:
    try:
        return len(read_logs(folder).steps)
    except Exception:  # not there yet, or the first rows still in memory
        return 0


def test_a_killed_coupled_run_is_analysed_from_what_it_left(peer, tmp_path):
    folder = tmp_path / "logs"
    sim = start_simulator(peer.port, folder, "--pacing", "realtime", "--ext-time", "0.005")
    wait_until(lambda: _steps_on_disk(folder) >= 4000, sim, "2 s of steps on disk")
    kill(sim)
    kept = sorted(p.name for p in folder.iterdir())
    assert kept.pop(kept.index("spec.toml")) and [p[-4:] for p in kept] == [".npy"] * 4
    run = load_run(folder)
    assert run.metrics.steps >= 4000 and len(run.sends) >= 300
    assert len(peer.received) >= len(run.sends)  # the log holds nothing that was not sent
    report = str(tmp_path / "report.md")
    analysed = subprocess.run(
        [*vcosim_command(), "analyze", str(folder), "--report", report],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert analysed.returncode == 0, analysed.stderr
    assert "verdict" in analysed.stdout
    converted = subprocess.run(
        [*vcosim_command(), "analyze", str(folder), "--report", report, "--write-csv"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert converted.returncode == 0, converted.stderr
    assert not list(folder.glob("*.npy"))  # every log is now BeamNG's CSV, for MATLAB
    assert len(load_run(folder).sends) == len(run.sends)


def _messages(path: Path) -> int:
    """The messages the mcap package's default reader finds (it raises on a broken file)."""
    with path.open("rb") as f:
        return sum(1 for _ in make_reader(f).iter_messages())


def _readable_messages(path: Path) -> int:
    try:
        return _messages(path)
    except Exception:  # not created yet
        return 0


def _record(path: Path) -> subprocess.Popen:
    return subprocess.Popen(
        [
            *vcosim_command(),
            "sim",
            "--no-coupling",
            "--pacing",
            "realtime",
            "--record",
            str(path),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_a_killed_sim_record_mcap_reads_with_the_default_reader(tmp_path):
    path = tmp_path / "signals.mcap"
    sim = _record(path)
    wait_until(lambda: _readable_messages(path) >= 150, sim, "1.5 s of rows in the recording")
    kill(sim)
    found = _messages(path)  # no error: the file ends in a footer
    assert found >= 150
    report = recover(path)
    assert report.messages == found and report.was_complete and report.dropped_bytes == 0
    with path.open("rb") as f:
        reader = make_reader(f)
        summary = reader.get_summary()
        assert summary is not None and summary.statistics is not None
        assert summary.statistics.message_count == found and summary.chunk_indexes


def test_a_killed_sim_record_csv_holds_whole_rows(tmp_path):
    path = tmp_path / "signals.csv"
    sim = _record(path)
    wait_until(lambda: path.exists() and path.read_text().count("\n") > 150, sim, "rows in the CSV")
    kill(sim)
    text = path.read_text()
    assert text.endswith("\n")
    header, *rows = text.splitlines()
    assert len(rows) >= 150
    assert {len(row.split(",")) for row in rows} == {len(header.split(","))}


RECORDER = textwrap.dedent(
    """
    import sys
    from vcosim.bus.catalogue import IMFM
    from vcosim.modules.recording import McapRecorder, Recorded

    recorder = McapRecorder(sys.argv[1])
    i = 0
    while True:
        recorder.write(Recorded(1_000_000 * i, 17, IMFM(i % 100, 0, 0, 0, to=16)))
        i += 1
        if i % 100 == 0:
            recorder.flush()
            print(i, flush=True)
    """
)


def test_a_killed_bus_recorder_reads_with_the_default_reader(tmp_path):
    path = tmp_path / "bus.mcap"
    process = subprocess.Popen(
        [sys.executable, "-c", RECORDER, str(path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    for line in process.stdout:  # flushed counts, as they come
        if int(line) >= 2000:
            break
    kill(process)
    found = _messages(path)
    assert found >= 2000 and found % 100 == 0  # whole flushes
    assert [r.message.throttle for r in read_recording(path)][:3] == [0, 1, 2]
    assert recover(path, tmp_path / "whole.mcap").messages == found
    assert _messages(tmp_path / "whole.mcap") == found
    repaired = subprocess.run(
        [*vcosim_command(), "log", str(path), "--recover"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert repaired.returncode == 0, repaired.stderr
    assert f"{found} messages kept" in repaired.stderr
    assert _messages(path) == found  # rewritten in place, complete
