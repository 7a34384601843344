"""Reading the three debug CSVs: vcosim's, hand-made BeamNG-style ones, and broken ones."""

from __future__ import annotations

import numpy as np
import pytest

from vcosim.analysis import load_run, read_logs
from vcosim.analysis.logs import (
    DUPLICATE,
    EVENTS_LOG,
    EVENTS_NAMES,
    SEND_NAMES,
    STALE,
    STARTUP,
    TIMEOUT,
)
from vcosim.errors import ConfigError, UnknownNameError
from vcosim.tight.debuglog import RECEIVE_LOG, SEND_LOG, STEPS_LOG


def test_tables_have_named_columns(tmp_path, timeout_logs, write_logs):
    steps, sends, receives, events = read_logs(write_logs(tmp_path, timeout_logs))
    assert events is None  # no events log: an older vcosim run, or BeamNG's
    assert len(steps) == 2401 and len(sends) == 240 and len(receives) == 239
    assert steps.time.shape == (2401,)
    assert sends.values.shape == (240, 111) and receives.values.shape == (239, 64)
    np.testing.assert_array_equal(sends.id, timeout_logs.send_id)
    np.testing.assert_array_equal(sends["groundspeed"], np.arange(240))
    assert np.all(receives["throttle"] == 0.25) and np.all(np.isnan(receives["brake"]))
    assert sends.header == SEND_NAMES and sends.names == SEND_NAMES
    assert sends.lines[0] == 2  # line 1 is the header
    with pytest.raises(UnknownNameError, match="groundsped.*did you mean 'groundspeed'"):
        sends["groundsped"]


def test_beamng_style_folder_is_analysed_like_vcosims(tmp_path, timeout_logs, write_logs):
    beamng = write_logs(tmp_path / "beamng", timeout_logs, "beamng")
    raw = (beamng / RECEIVE_LOG).read_bytes()
    assert b"\r\n" in raw and b"-nan(ind)" in raw and not raw.startswith(b"time")
    assert (beamng / STEPS_LOG).read_bytes().startswith(b"physicsStepTime\r\n")
    ours = load_run(write_logs(tmp_path / "vcosim", timeout_logs))
    theirs = load_run(beamng)
    assert theirs.sends.header is None and theirs.receives.header is None
    assert theirs.steps.header == ("physicsStepTime",)
    np.testing.assert_array_equal(theirs.steps["physicsStepTime"], timeout_logs.steps)
    assert np.isnan(theirs.receives["brake"]).all()
    np.testing.assert_array_equal(theirs.sends.values, ours.sends.values)
    assert theirs.metrics.as_dict() == ours.metrics.as_dict()
    assert theirs.metrics.skips == 9 and theirs.metrics.latency_steps_counts == {
        3: 39,
        10: 199,
        12: 1,
    }


def test_headerless_trailing_commas_and_blank_lines_are_accepted(tmp_path, window_logs, write_logs):
    folder = write_logs(tmp_path, window_logs, "beamng")
    text = (folder / SEND_LOG).read_text()
    (folder / SEND_LOG).write_text(text.replace("\r\n", ",\n") + "\n\n")
    run = load_run(folder)
    assert len(run.sends) == 200 and run.metrics.skips == 4


def _problems(exc: pytest.ExceptionInfo[ConfigError]) -> list[str]:
    return exc.value.problems


def test_missing_file_names_its_path(tmp_path, timeout_logs, write_logs):
    folder = write_logs(tmp_path, timeout_logs)
    (folder / RECEIVE_LOG).unlink()
    with pytest.raises(ConfigError) as exc:
        load_run(folder)
    assert _problems(exc) == [f"{folder / RECEIVE_LOG}: file not found"]
    assert exc.value.source == str(folder / RECEIVE_LOG)


def test_missing_folder(tmp_path):
    with pytest.raises(ConfigError, match="run folder not found"):
        load_run(tmp_path / "nothing")


def test_wrong_column_count_names_file_and_line(tmp_path, timeout_logs, write_logs):
    folder = write_logs(tmp_path, timeout_logs)
    lines = (folder / SEND_LOG).read_text().splitlines(keepends=True)
    lines[56] = ",".join(lines[56].split(",")[:40]) + "\n"  # line 57
    (folder / SEND_LOG).write_text("".join(lines))
    with pytest.raises(ConfigError) as exc:
        load_run(folder)
    assert _problems(exc) == ["simulinkSendLog.csv line 57: 40 columns, expected 112"]
    assert exc.value.source == str(folder / SEND_LOG)
    assert "simulinkSendLog.csv line 57: 40 columns, expected 112" in str(exc.value)


def test_torn_last_row_is_left_out_with_a_note(tmp_path, timeout_logs, write_logs, caplog):
    folder = write_logs(tmp_path, timeout_logs)
    text = (folder / STEPS_LOG).read_text()
    (folder / STEPS_LOG).write_text(text + "1.2")  # a crash mid-write: no end of line
    logs = read_logs(folder)
    assert len(logs.steps) == 2401  # the 2401 whole rows, not the torn one
    [note] = logs.notes
    assert note.startswith("simulinkPhysicsStepsLog.csv line 2403: torn last row left out")
    assert note in caplog.text
    assert load_run(folder).metrics.steps == 2401


def test_every_problem_of_every_file_is_listed(tmp_path, timeout_logs, write_logs):
    folder = write_logs(tmp_path, timeout_logs)
    send = (folder / SEND_LOG).read_text()
    cut = send[: len(send) // 2]
    assert not cut.endswith("\n")
    (folder / SEND_LOG).write_text(cut[: cut.rindex("\n") + 1] + "1,2,3\n")  # a short row
    receive = (folder / RECEIVE_LOG).read_text().splitlines()
    receive[3] = receive[3].replace("0.25", "abc", 1)
    receive[9] = receive[9] + ",1,2"
    (folder / RECEIVE_LOG).write_text("\n".join(receive) + "\n")
    steps = (folder / STEPS_LOG).read_text().splitlines()
    steps[5], steps[6] = steps[6], steps[5]
    (folder / STEPS_LOG).write_text("\n".join(steps) + "\n")
    with pytest.raises(ConfigError) as exc:
        load_run(folder)
    problems = _problems(exc)
    assert exc.value.source == str(folder)
    assert problems[0].startswith("simulinkPhysicsStepsLog.csv line 7: time goes backwards")
    assert problems[1] == (
        f"simulinkSendLog.csv line {cut.count(chr(10)) + 1}: 3 columns, expected 112"
    )
    assert problems[2:] == [
        "simulinkReceiveLog.csv line 10: 67 columns, expected 65",
        "simulinkReceiveLog.csv line 4: column 3: 'abc' is not a number",
    ]


def test_empty_steps_log_and_wrong_header(tmp_path, timeout_logs, write_logs):
    folder = write_logs(tmp_path, timeout_logs)
    (folder / STEPS_LOG).write_text("time\n")
    send = (folder / SEND_LOG).read_text().split("\n", 1)[1]
    (folder / SEND_LOG).write_text("time,id,throttle\n" + send)
    with pytest.raises(ConfigError) as exc:
        load_run(folder)
    assert _problems(exc) == [
        "simulinkPhysicsStepsLog.csv: no physics steps (the file has no rows)",
        "simulinkSendLog.csv line 1: header of 3 names, expected 112",
    ]


def _with_events(folder, text: str):
    (folder / EVENTS_LOG).write_bytes(text.encode())
    return folder


def test_events_log_is_read_when_present(tmp_path, window_logs, write_logs):
    folder = _with_events(
        write_logs(tmp_path, window_logs),
        "\ufefftime,event,id,largest,blocking\r\n0.0001,3,0,0,1\r\n\r\n"
        "0.12,1,44,46,0,\r\n0.3,4,60,59,0\r\n",
    )
    events = read_logs(folder).events
    assert events is not None and events.names == EVENTS_NAMES
    assert events["event"].tolist() == [3, 1, 4] and events.id.tolist() == [0, 44, 60]
    assert events["largest"].tolist() == [0, 46, 59] and events["blocking"].tolist() == [1, 0, 0]
    assert events.lines.tolist() == [2, 4, 5]
    run = load_run(folder)
    assert run.events is not None and run.events.data.tolist() == events.data.tolist()
    assert (run.metrics.startup_unapplied, run.metrics.dropped_stale) == (1, 1)
    assert run.metrics.timeouts_logged == 1


def test_events_log_cut_mid_row_reads_to_its_last_whole_row(tmp_path, window_logs, write_logs):
    folder = _with_events(
        write_logs(tmp_path, window_logs),
        "time,event,id,largest,blocking\n0.0001,3,0,0,1\n0.12,1,4",
    )
    events = read_logs(folder).events
    assert events is not None and events["event"].tolist() == [3]
    assert events.notes[0].startswith("vcosimCouplingEvents.csv line 3: torn last row left out")


def test_events_log_problems_are_listed_with_the_others(tmp_path, window_logs, write_logs):
    folder = _with_events(
        write_logs(tmp_path, window_logs), "0.1,7,0,0,0\n0.2,1,3\n0.3,1,nan,2,1\n"
    )  # headerless
    (folder / STEPS_LOG).write_text("time\n")
    with pytest.raises(ConfigError) as exc:
        load_run(folder)
    assert exc.value.source == str(folder)
    assert _problems(exc) == [
        "simulinkPhysicsStepsLog.csv: no physics steps (the file has no rows)",
        "vcosimCouplingEvents.csv line 2: 3 columns, expected 5",
    ]
    (folder / EVENTS_LOG).write_text("0.1,7,0,0,0\n0.3,1,nan,2,1\n")
    write_logs(folder, window_logs)
    with pytest.raises(ConfigError) as exc:
        load_run(folder)
    assert _problems(exc) == ["vcosimCouplingEvents.csv line 2: id nan is not a finite number"]
    (folder / EVENTS_LOG).write_text("0.1,7,0,0,0\n")
    with pytest.raises(ConfigError) as exc:
        load_run(folder)
    assert _problems(exc) == [
        "vcosimCouplingEvents.csv line 1: event 7 is not a known event code (1, 2, 3, 4)"
    ]


def test_events_log_names_match_the_simulators():
    """The analysis names the file itself (to read any version's runs): keep them equal."""
    from vcosim.tight import debuglog

    assert debuglog.EVENTS_LOG == EVENTS_LOG
    assert tuple(debuglog.EVENTS_HEADER) == EVENTS_NAMES
    assert (
        debuglog.Event.STALE,
        debuglog.Event.DUPLICATE,
        debuglog.Event.STARTUP,
        debuglog.Event.TIMEOUT,
    ) == (STALE, DUPLICATE, STARTUP, TIMEOUT)
