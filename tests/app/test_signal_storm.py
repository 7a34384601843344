"""SIGTERM and Ctrl-C at any moment of every long-running command: 130, said, nothing left.

Two instants per command here, one in each second of the first two (the issue's 20 per
command run on demand: ``python tests/helpers/signal_storm.py --instants 20``).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from helpers.signal_storm import COMMANDS, plan, storm

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="reads /proc")


def test_every_command_ends_130_said_and_whole_at_any_instant(tmp_path: Path) -> None:
    runs = storm(plan(COMMANDS, instants=2, span=2.0, seed=29), tmp_path)
    failed = [json.dumps(run.to_dict()) for run in runs if run.problems]
    assert not failed, "\n".join(failed)
