"""``vcosim drive`` killed with SIGKILL: its module processes end too, files complete."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest


def children_of(pid: int) -> list[int]:
    """The processes whose parent is ``pid`` (from /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                found.append(int(entry.name))
    return found


def running(pid: int) -> bool:
    """Alive and not a zombie waiting for a reaper."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")
def test_the_modules_of_a_killed_drive_end_within_seconds(tmp_path: Path):
    pytest.importorskip("mcap")
    from vcosim.modules.logger import read_recording

    drive = subprocess.Popen(
        [sys.executable, "-m", "vcosim", "drive", "--bus", "127.0.0.1:0", "--out", str(tmp_path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        assert drive.stdout is not None
        output = []
        for line in drive.stdout:  # each module's "joined" line, the vehicle's at least
            output.append(line)
            if "vehicle: module 16 joined" in line:
                break
        modules = children_of(drive.pid)
        assert len(modules) >= 2, "".join(output)  # logger and vehicle
        drive.kill()
        killed = time.monotonic()
        # Well within the 10 s after which a module gives up on a silent router by itself:
        # this is the parent's death reaching the modules, not their own liveness check.
        deadline = killed + 8.0
        while any(running(pid) for pid in modules) and time.monotonic() < deadline:
            time.sleep(0.05)  # (polling a condition)
        assert not any(running(pid) for pid in modules), "".join(output)
        print(f"{len(modules)} modules ended {time.monotonic() - killed:.2f} s after SIGKILL")
    finally:
        drive.kill()
        drive.wait(10.0)
    (run,) = tmp_path.iterdir()
    # each ended as on one Ctrl-C, its summary printed (a second signal would cut it short)
    assert "interrupted       │ true" in (run / "logger.log").read_text()
    assert "interrupt (Ctrl-C / SIGTERM)" in (run / "vehicle.log").read_text()
    list(read_recording(run / "bus.mcap"))  # and its recording is finished: it reads whole
