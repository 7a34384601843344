"""Reports: a real coupled run analysed end to end, Markdown output, atomic writing, the CLI."""

from __future__ import annotations

import base64
import io
import re
import sys

import numpy as np
import pytest
from PIL import Image

from helpers.peers import RawPeer, coupled
from vcosim.analysis import load_run
from vcosim.analysis import report as report_module
from vcosim.analysis.metrics import analyse
from vcosim.analysis.plots import metrics_figure, views_figure
from vcosim.analysis.report import summary_rows, write_report
from vcosim.analysis.verdict import HELD
from vcosim.app import main
from vcosim.tight.debuglog import SEND_LOG

DT = 0.0005
GREEN = (44, 160, 44)  # matplotlib's tab:green: the physics-step ticks
RED = (255, 0, 0)  # sent
BLUE = (0, 0, 255)  # received


@pytest.fixture(scope="module")
def lockstep_run(tmp_path_factory):
    """A real coupled run: simulator in lock-step, a raw UDP peer, send_skips 4, 0.5 s."""
    folder = tmp_path_factory.mktemp("lockstep")
    peer = RawPeer()
    try:
        sim, endpoint = coupled(peer, "lockstep", send_skips=4, debug_log=folder, spin=0.0)
        sim.run(0.5)
        endpoint.close()
    finally:
        peer.stop()
    return folder, endpoint.report()


def embedded_images(page: str) -> list[Image.Image]:
    blobs = re.findall(r'src="data:image/png;base64,([^"]+)"', page)
    return [Image.open(io.BytesIO(base64.b64decode(blob))).convert("RGB") for blob in blobs]


def colour_share(image: Image.Image, colour: tuple[int, int, int]) -> float:
    pixels = np.asarray(image).reshape(-1, 3)
    return float(np.mean(np.all(pixels == colour, axis=1)))


def test_real_coupled_run_report(lockstep_run, capsys, monkeypatch):
    folder, sim_report = lockstep_run
    assert run_cli(monkeypatch, "analyze", str(folder)) == 0
    out = capsys.readouterr().out
    assert (folder / "analysis.html").exists()
    m = load_run(folder).metrics
    # lock-step: every reply is taken by the blocking receive of the next send step
    assert m.sends == sim_report["sent"] and m.applied == sim_report["applied"] > 150
    assert m.skips == 4 and m.skips_counts == {4: m.sends - 1}
    assert m.latency_steps_counts == {5: m.applied} and m.replies_in_blocking == m.applied
    assert m.window == 1 and m.lost == [] and m.timeouts == [] and m.gaps == []
    # an echoing peer; the simulator never applies id 0 and logs it as a start-up reply
    assert m.id_pattern == "direct" and m.unmatched == 0
    assert m.events_logged and m.startup_unapplied == 1 and m.dropped_stale == 0
    # lock-step runs as fast as the exchanges go, so how fast depends on the machine's load:
    # the verdict must say where replies land when real time held, and blame the speed when
    # a busy machine held it back, quoting the factor it measured either way
    if m.rtf_connected > HELD:
        assert m.verdict.startswith("replies land in the next send step's blocking receive; ")
        assert m.verdict.endswith(f"({m.rtf_connected:.2f}×)")
    else:
        assert f"simulation at {m.rtf_connected:.2f}× real time" in m.verdict
    assert "verdict:" in out and "observed skips" in out
    page = (folder / "analysis.html").read_text()
    assert m.verdict in page.replace("&#x27;", "'")
    views, figures = embedded_images(page)
    assert views.size == (1200, 750) and figures.size == (1200, 650)
    # the plotted elements are there: green ticks, red and blue stars
    for colour in (GREEN, RED, BLUE):
        assert colour_share(views, colour) > 0.0005, colour
    assert len(np.unique(np.asarray(views).reshape(-1, 3), axis=0)) > 50


def test_figures_hold_the_plotted_elements(lockstep_run):
    run = load_run(lockstep_run[0])
    fig = views_figure(run.metrics, run.timeline)
    whole, blocking, running = fig.axes
    assert len(whole.collections[0].get_segments()) == run.metrics.steps  # a tick per step
    assert len(whole.lines[0].get_xdata()) == run.metrics.sends
    assert len(whole.lines[1].get_xdata()) == run.metrics.applied
    assert len(whole.texts) == 0  # ids only in the zooms
    for zoom in (blocking, running):
        labels = [t.get_text() for t in zoom.texts]
        assert labels and all(label.isdigit() for label in labels)
        assert zoom.get_ylim() == (-2, 2)
    assert "blocking receive" in blocking.get_title()
    assert running.get_title() == "Zoom on working connection"
    # the running zoom shows about 20 steps and at least two sends with their replies
    lo, hi = running.get_xlim()
    steps = run.timeline.step_time
    assert 19 <= np.sum((steps >= lo) & (steps <= hi)) <= 22
    assert len(metrics_figure(run.metrics, run.timeline).axes) == 4


def test_markdown_report_with_pngs(tmp_path, timeout_logs, write_logs):
    run = load_run(write_logs(tmp_path / "run", timeout_logs))
    written = write_report(run, tmp_path / "out" / "report.md")
    assert [p.name for p in written] == ["report_views.png", "report_metrics.png", "report.md"]
    text = written[2].read_text()
    assert "![message timing](report_views.png)" in text and run.metrics.verdict in text
    assert written[0].read_bytes().startswith(b"\x89PNG")
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == sorted(
        p.name for p in written
    )  # no temporary files left


def test_nothing_is_half_written_when_drawing_fails(
    tmp_path, timeout_logs, write_logs, monkeypatch
):
    run = load_run(write_logs(tmp_path / "run", timeout_logs))

    def fail(*args, **kwargs):
        raise RuntimeError("disk full")

    monkeypatch.setattr(report_module, "metrics_figure", fail)
    out = tmp_path / "out"
    out.mkdir()
    with pytest.raises(RuntimeError):
        write_report(run, out / "report.md")
    with pytest.raises(RuntimeError):
        write_report(run, out / "report.html")
    assert list(out.iterdir()) == []


def run_cli(monkeypatch, *args: str) -> int:
    monkeypatch.setattr(sys, "argv", ["vcosim", *args])
    with pytest.raises(SystemExit) as exc:
        main()
    return exc.value.code


def test_cli_bad_input_gives_file_and_line_and_writes_nothing(
    tmp_path, timeout_logs, write_logs, monkeypatch, capsys
):
    folder = write_logs(tmp_path / "run", timeout_logs)
    lines = (folder / SEND_LOG).read_text().splitlines(keepends=True)
    lines[56] = ",".join(lines[56].split(",")[:40]) + "\n"
    (folder / SEND_LOG).write_text("".join(lines))
    assert run_cli(monkeypatch, "analyze", str(folder)) == 2
    err = capsys.readouterr().err
    assert "simulinkSendLog.csv line 57: 40 columns, expected 112" in err
    assert sorted(p.name for p in folder.iterdir()) == [
        "simulinkPhysicsStepsLog.csv",
        "simulinkReceiveLog.csv",
        "simulinkSendLog.csv",
    ]


def test_cli_analyze_writes_the_report_where_asked(
    tmp_path, window_logs, write_logs, monkeypatch, capsys
):
    folder = write_logs(tmp_path / "run", window_logs, "beamng")
    target = tmp_path / "reports" / "window.html"
    assert run_cli(monkeypatch, "analyze", str(folder), "--report", str(target)) == 0
    out = capsys.readouterr().out
    assert "replies land 7 steps after the send" in out.replace("\n", " ")
    assert target.read_text().startswith("<!DOCTYPE html>")
    assert len(embedded_images(target.read_text())) == 2


def test_realtime_factor_plot_agrees_with_the_overall_factor():
    """A lock-step run at 91× after a 0.9 s wait for its controller: the windows must show
    the fast part (an incomplete last window was once dropped, plotting ≈ 0 throughout)."""
    step_time = np.concatenate(([0.0], 0.9 + np.arange(20000) * DT / 91))
    sends = np.arange(1, 20000, 10)
    ids = np.arange(sends.size, dtype=float)
    m, tl = analyse(step_time, step_time[sends] + 1e-7, ids, step_time[sends + 1] + 1e-7, ids)
    assert m.rtf_connected == pytest.approx(91.0, rel=1e-6)
    assert m.verdict == "controller answers within 1 step; faster than real time (91.00×)"
    assert m.rtf == pytest.approx(20000 * DT / step_time[-1])  # the wait counts: 8.9×
    lengths = np.diff(np.append(m.rtf_times, step_time[-1]))
    assert np.dot(m.rtf_values, lengths) / lengths.sum() == pytest.approx(m.rtf)
    assert m.rtf_values == pytest.approx([DT / 0.5, 19999 * DT / (step_time[-1] - 0.5)])
    ax = metrics_figure(m, tl).axes[3]
    x, y = ax.lines[0].get_xdata(), ax.lines[0].get_ydata()
    assert x[-1] == step_time[-1] and y.tolist() == [*m.rtf_values, m.rtf_values[-1]]
    assert ax.get_ylim()[1] >= max(m.rtf_values)
    assert f"overall {m.rtf:.2f}" in ax.get_title() and "91.00 while connected" in ax.get_title()


def test_summary_rows_show_the_id_pattern_and_dropped_replies(coupling):
    run = coupling(lambda k: [(0.0002, max(k - 1, 0))] if k != 40 else [(0.0002, 37)], 800)
    logs = run.logs
    m, _ = analyse(
        logs.steps,
        logs.send_time,
        logs.send_id,
        logs.receive_time,
        logs.receive_id,
        events=run.events,
    )
    rows = dict(summary_rows(m))
    assert rows["reply ids (reply id − last id sent)"] == "previous id (offset -1); offsets -1: 77"
    assert rows["replies not applied (events log)"] == (
        "stale 1, duplicate 0 dropped (0 of them in blocking receives); start-up 2 (id ≤ 0 "
        "before any was applied; 2 before the first applied reply)"
    )
    assert rows["timeouts recorded by the simulator (events log)"] == (
        "1; 1 after stale or duplicate replies (1 after a stale one)"
    )
    assert rows["resets (timeouts that reset the coupling)"] == "1 (2 segments)"
