"""The kernels compiled ahead of ``physics_step`` are the ones it calls, with its types."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from types import CodeType
from typing import Any

from numba.core.registry import CPUDispatcher

from vcosim.vehicle.ahead import step_callees
from vcosim.vehicle.model import physics_step


def called_kernels(kernel: Any) -> set[str]:
    """The kernels ``kernel`` calls as functions of their own, through those it inlines too."""
    found: set[str] = set()

    def names(code: CodeType) -> set[str]:
        inner = (c for c in code.co_consts if isinstance(c, CodeType))
        return set(code.co_names).union(*(names(c) for c in inner))

    def walk(function: Any) -> None:
        for name in names(function.__code__):
            value = function.__globals__.get(name)
            if not isinstance(value, CPUDispatcher):
                continue
            if value.targetoptions.get("inline") == "always":
                walk(value.py_func)
            else:
                found.add(f"{value.py_func.__module__}.{value.__name__}")

    walk(kernel.py_func)
    return found


def test_every_kernel_the_step_calls_is_compiled_ahead():
    listed = {f"{k.py_func.__module__}.{k.__name__}" for k, _ in step_callees()}
    assert called_kernels(physics_step) == listed


COMPILE_AHEAD = "from vcosim.vehicle.ahead import compile_step_callees; compile_step_callees()"
DRIVE = """
import numpy as np
from vcosim.vehicle import Vehicle
car = Vehicle(engine_running=True)
outputs = []
for k in range(1500):  # 30 s: throttle, then the brake, steering all along
    pedal = {"throttle": 0.6} if k < 900 else {"brake": 0.3}
    car.set_inputs(steering=0.1 * np.sin(k / 200), **pedal)
    car.run(20)
    outputs.append(car.outputs.copy())
drive = np.array(outputs)
"""
COMPILE_STEP = (
    DRIVE
    + """
import json
from vcosim.vehicle.ahead import step_callees
print(json.dumps({
    "loaded": {
        k.__name__: [len(k.stats.cache_hits), len(k.stats.cache_misses)]
        for k, _ in step_callees()
    },
    "outputs": [x.hex() for x in drive.ravel()],
}))
"""
)


def test_the_steps_compiling_finds_each_of_them_in_the_cache_and_computes_the_same(
    tmp_path: Path,
):
    # Two processes, as in the demo: one compiles them ahead, the other then compiles the
    # step (about 10 s of CPU), whose typing must find each in the cache, not compile it
    # again; and the step then computes what the one compiled in one go does, to the bit
    # (compiled without the step's fastmath flags they loaded as well, and did not).
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path)}
    subprocess.run([sys.executable, "-c", COMPILE_AHEAD], env=env, check=True, timeout=600)
    done = subprocess.run(
        [sys.executable, "-c", COMPILE_STEP],
        env=env,
        check=True,
        timeout=900,
        capture_output=True,
        text=True,
    )
    there = json.loads(done.stdout.strip().splitlines()[-1])
    assert there["loaded"] == {k.__name__: [1, 0] for k, _ in step_callees()}
    here: dict[str, Any] = {}
    exec(DRIVE, here)  # this process's step: compiled in one go, or loaded so
    assert there["outputs"] == [x.hex() for x in here["drive"].ravel()]
