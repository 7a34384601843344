"""Recording files readable at every moment: MCAP by the mcap package's default reader, CSV
row by whole row; and ``recover`` for MCAP files cut short."""

from __future__ import annotations

import os
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from mcap.reader import make_reader

import vcosim.sim.mcapfile as mcapfile
from vcosim.errors import ConfigError
from vcosim.sim.mcapfile import open_writer, recover
from vcosim.sim.recorder import SignalLog
from vcosim.vehicle import SIGNAL_NAMES


def messages(path: Path) -> list[int]:
    """The log times the default reader finds (it raises on a file without a valid end)."""
    with path.open("rb") as f:
        return [m.log_time for _, _, m in make_reader(f).iter_messages()]


def test_the_file_is_valid_between_any_two_writes(tmp_path, monkeypatch):
    """A kill can land between any two writes: after each, the file must read."""
    path = tmp_path / "r.mcap"
    seen: list[list[int]] = []
    pwrite = os.pwrite

    def checked(fd: int, data: bytes, offset: int) -> int:
        written = pwrite(fd, data, offset)
        seen.append(messages(path))
        return written

    monkeypatch.setattr(mcapfile.os, "pwrite", checked)
    writer, file = open_writer(path)
    channel = writer.register_channel("/t", "json", writer.register_schema("s", "jsonschema", b""))
    for flush in range(3):
        for i in range(50):
            writer.add_message(channel, flush * 50 + i, b"{}", flush * 50 + i)
        writer.flush()
    writer.finish()
    file.close()
    counts = [len(found) for found in seen]
    assert counts == sorted(counts) and counts[-1] == 150  # never fewer than before
    assert {0, 50, 100, 150} <= set(counts)
    with path.open("rb") as f:
        summary = make_reader(f).get_summary()
    assert summary is not None and len(summary.chunk_indexes) == 3  # complete, indexed


def test_recover_keeps_every_whole_chunk_of_a_cut_file(tmp_path):
    path = tmp_path / "r.mcap"
    writer, file = open_writer(path)
    channel = writer.register_channel("/t", "json", writer.register_schema("s", "jsonschema", b""))
    sizes = []
    for flush in range(4):
        for i in range(25):
            writer.add_message(channel, flush * 25 + i, b'{"x": 1}', 0, flush * 25 + i)
        writer.flush()
        sizes.append(path.stat().st_size - mcapfile.TAIL_BYTES)  # where the chunk ends
    writer.finish()
    file.close()
    whole = path.read_bytes()
    # inside the third chunk; in the index records after it (the chunk itself is whole)
    for cut, kept in ((sizes[1] + 7, 50), (sizes[2] - 1, 75)):
        cut_path = tmp_path / f"cut{cut}.mcap"
        cut_path.write_bytes(whole[:cut])
        with pytest.raises(Exception):  # noqa: B017 (whatever the reader raises)
            messages(cut_path)
        report = recover(cut_path)
        assert (report.messages, report.was_complete) == (kept, False)
        assert 0 < report.dropped_bytes <= cut - sizes[1]  # at most what followed a flush
        assert messages(cut_path) == list(range(kept))
    with pytest.raises(ConfigError, match="not an MCAP file"):
        (tmp_path / "text.mcap").write_text("hello")
        recover(tmp_path / "text.mcap")
    with pytest.raises(ConfigError, match="no such file"):
        recover(tmp_path / "missing.mcap")


def _sim() -> SimpleNamespace:
    outputs = np.zeros(len(SIGNAL_NAMES))
    return SimpleNamespace(vehicle=SimpleNamespace(outputs=outputs))


@pytest.mark.parametrize("suffix", [".mcap", ".csv"])
def test_signal_log_is_on_disk_after_every_flush(tmp_path, monkeypatch, suffix):
    monkeypatch.setattr(SignalLog, "FLUSH_SECONDS", 0.0)  # every row: as after a second
    path = tmp_path / f"signals{suffix}"
    log = SignalLog(path, every=1)
    sim = _sim()
    log.start(sim)
    for step in range(1, 30):
        sim.vehicle.outputs[SIGNAL_NAMES.index("time")] = step * 0.0005
        log.after_step(sim)
    if suffix == ".mcap":
        assert len(messages(path)) == 30  # before close: as a kill would leave it
    else:
        text = path.read_text()
        assert text.endswith("\n") and text.count("\n") == 31
    log.close()
    log.close()
    assert log.report().rows == 30
    if suffix == ".mcap":
        found = messages(path)
        assert len(found) == 30 and found[-1] == 14_500_000


def test_signal_log_holds_rows_until_a_block_or_a_second(tmp_path):
    path = tmp_path / "signals.mcap"
    log = SignalLog(path, every=1)
    sim = _sim()
    log.start(sim)
    for _ in range(10):
        log.after_step(sim)
    assert messages(path) == []  # a valid file, its rows still in memory
    log.close()
    assert len(messages(path)) == 11
