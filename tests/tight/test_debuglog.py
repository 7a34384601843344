"""The debug logs on disk at every moment: .npy while running, CSV at close, both readable."""

from __future__ import annotations

import numpy as np
import pytest

import vcosim.tight.debuglog as debuglog
from vcosim.analysis import load_run, read_logs
from vcosim.tight.debuglog import (
    EVENTS_LOG,
    RECEIVE_LOG,
    SEND_LOG,
    STEPS_LOG,
    DebugLog,
    Event,
    write_csv,
)
from vcosim.tight.protocol import CONTROLLER_SLOT_NAMES, SIM_SLOT_NAMES

STEP = 0.0005


def _run(log: DebugLog, steps: int, start: int = 0) -> None:
    """A coupled run's rows: a send and an applied reply every 10 steps, one stale reply."""
    out, back = np.zeros(len(SIM_SLOT_NAMES)), np.zeros(len(CONTROLLER_SLOT_NAMES))
    for step in range(start, start + steps):
        now = step * STEP
        log.steps.add(now)
        if step % 10 == 0:
            out[0], back[0] = step // 10, step // 10
            out[1] = step
            log.send.add(now, out)
            log.receive.add(now + 1e-4, back)
        if step == 25:
            log.events.add(now, np.array([Event.STALE, 1, 2, 0]))


def test_logs_are_readable_npy_files_while_the_run_goes(tmp_path):
    log = DebugLog(tmp_path)
    _run(log, 2001)  # the step at 1.0 s flushes every log (that step's send comes after)
    steps = np.load(tmp_path / "simulinkPhysicsStepsLog.npy")
    sends = np.load(tmp_path / "simulinkSendLog.npy")
    assert len(steps) == 2001 and steps["time"][-1] == pytest.approx(1.0)
    assert sends.dtype.names == ("time", *SIM_SLOT_NAMES) and len(sends) == 200
    assert np.load(tmp_path / "vcosimCouplingEvents.npy")["event"].tolist() == [Event.STALE]
    # what vcosim analyze reads, before the run ends
    logs = read_logs(tmp_path)
    assert len(logs.steps) == 2001 and len(logs.sends) == 200 and len(logs.receives) == 200
    assert logs.sends.names == ("time", *SIM_SLOT_NAMES) and logs.notes == ()
    assert logs.events is not None and logs.events.id.tolist() == [1]
    _run(log, 100, start=2001)  # not flushed yet: a crash now loses these rows only
    assert len(np.load(tmp_path / "simulinkPhysicsStepsLog.npy")) == 2001
    log.close()


def test_close_writes_the_csv_files_and_removes_the_npy_files(tmp_path):
    log = DebugLog(tmp_path)
    _run(log, 3000)
    before = read_logs(tmp_path)
    log.close()
    log.close()  # safe twice
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        [STEPS_LOG, SEND_LOG, RECEIVE_LOG, EVENTS_LOG]
    )
    assert (tmp_path / SEND_LOG).read_text().startswith("time,id,throttle,")
    after = read_logs(tmp_path)
    assert len(after.steps) == 3000 and len(before.steps) <= 3000
    np.testing.assert_array_equal(after.sends.data, read_logs(tmp_path).sends.data)
    np.testing.assert_array_equal(after.sends.data[: len(before.sends)], before.sends.data)


def test_an_interrupted_long_run_keeps_npy_files_that_analyze_reads(tmp_path, monkeypatch):
    monkeypatch.setattr(debuglog, "CSV_AT_CLOSE", 1000)
    monkeypatch.setattr(debuglog, "interrupted", lambda: True)
    log = DebugLog(tmp_path)
    _run(log, 3000)
    log.close()
    assert sorted(p.suffix for p in tmp_path.iterdir()) == [".npy"] * 4
    kept = load_run(tmp_path)
    assert kept.metrics.steps == 3000 and len(kept.sends) == 300
    written = write_csv(tmp_path)  # the CSVs, whenever asked
    assert [p.name for p in written] == [STEPS_LOG, SEND_LOG, RECEIVE_LOG, EVENTS_LOG]
    assert not list(tmp_path.glob("*.npy"))
    np.testing.assert_array_equal(load_run(tmp_path).sends.data, kept.sends.data)


def test_a_normal_end_writes_the_csv_files_however_long_the_run(tmp_path, monkeypatch):
    monkeypatch.setattr(debuglog, "CSV_AT_CLOSE", 1000)
    log = DebugLog(tmp_path)
    _run(log, 3000)
    log.close()
    assert not list(tmp_path.glob("*.npy")) and (tmp_path / STEPS_LOG).is_file()


def test_an_interrupt_while_writing_csv_keeps_the_npy_file_whole(tmp_path, monkeypatch):
    log = DebugLog(tmp_path)
    _run(log, 3000)

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(np, "savetxt", interrupted)
    with pytest.raises(KeyboardInterrupt):
        log.close()
    assert not list(tmp_path.glob("*.tmp"))
    assert len(read_logs(tmp_path).steps) == 3000  # from the .npy files


def test_a_killed_runs_files_read_to_their_last_whole_row(tmp_path):
    log = DebugLog(tmp_path)
    _run(log, 2500)
    for row_log in log.logs:
        row_log.flush()
    # as a kill leaves them: rows after the header's count, and half a row at the end
    steps = tmp_path / "simulinkPhysicsStepsLog.npy"
    with steps.open("ab") as f:
        f.write(np.array([2500 * STEP, 2501 * STEP]).tobytes() + b"\x00" * 5)
    sends = tmp_path / "simulinkSendLog.npy"
    with sends.open("ab") as f:
        f.write(b"\x01" * 100)
    logs = read_logs(tmp_path)
    assert len(logs.steps) == 2502 and len(logs.sends) == 250
    assert logs.notes == (
        "simulinkPhysicsStepsLog.npy: torn last row left out (5 bytes: the run was killed)",
        "simulinkSendLog.npy: torn last row left out (100 bytes: the run was killed)",
    )


def test_part_files_of_older_versions_are_read(tmp_path):
    steps = np.arange(1000) * STEP
    sends = np.zeros((100, 1 + len(SIM_SLOT_NAMES)))
    sends[:, 0], sends[:, 1] = steps[::10], np.arange(100)
    receives = np.zeros((99, 1 + len(CONTROLLER_SLOT_NAMES)))
    receives[:, 0], receives[:, 1] = steps[10::10] + 1e-4, np.arange(99)
    for name, rows in ((STEPS_LOG, steps), (SEND_LOG, sends), (RECEIVE_LOG, receives)):
        (tmp_path / f"{name}.part").write_bytes(rows.tobytes() + b"\x07\x07\x07")
    logs = read_logs(tmp_path)
    np.testing.assert_array_equal(logs.sends.data, sends)
    assert len(logs.steps) == 1000 and len(logs.receives) == 99
    assert logs.notes[0].startswith("simulinkPhysicsStepsLog.csv.part: raw rows (1 columns)")


def test_a_broken_npy_file_is_a_problem_naming_it(tmp_path):
    log = DebugLog(tmp_path)
    _run(log, 100)
    log.close()
    (tmp_path / RECEIVE_LOG).unlink()
    (tmp_path / "simulinkReceiveLog.npy").write_bytes(b"not numpy")
    with pytest.raises(Exception, match=r"simulinkReceiveLog.npy: not a readable .npy debug log"):
        read_logs(tmp_path)
