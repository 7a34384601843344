"""The kernels ``physics_step`` calls as functions of their own, compiled ahead of it.

numba compiles a kernel that ``physics_step`` calls (one it does not inline) when the step's
typing reaches the call, some 8 s into the 11 s of CPU the step takes to compile on the
first run, and caches it by itself. A second process that compiled them into the same cache
meanwhile (``compile_step_callees``; the demo's does) saves the simulator that work, 3 to 4
s of CPU: its typing finds each in the cache, machine code and the module to link, and the
step links the same module either way, so the results and the speed are the same.

So long as each is compiled as the step's typing would: numba compiles a kernel called from
another with the caller's ``fastmath`` and ``nrt`` where the kernel sets none (``advance``'s,
then ``physics_step``'s ``fastmath={"arcp"}``), and its cache does not tell the two apart:
compiled alone, they load just as well and give other results in the last bits.

The argument types are the ones ``physics_step`` passes; a test holds them to it (the
cache's index of each kernel holds that one signature, and no other kernel is called).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from typing import Any

from numba import from_dtype, types
from numba.core.compiler import Flags
from numba.core.targetconfig import ConfigStack

from vcosim.vehicle.automatic import automatic_shift, automatic_target, lockup_request
from vcosim.vehicle.body import euler_angles
from vcosim.vehicle.driveline import driveline_step, shifter
from vcosim.vehicle.engine import engine_load, engine_step
from vcosim.vehicle.model import advance, physics_step
from vcosim.vehicle.params import PARAM_DTYPE
from vcosim.vehicle.tyres import friction_noise


def step_callees() -> list[tuple[Any, tuple[Any, ...]]]:
    """Each kernel ``physics_step`` calls, with the argument types it calls it with."""
    state, record = types.float64[::1], from_dtype(PARAM_DTYPE)
    real, flag, whole = types.float64, types.boolean, types.int64
    return [
        (automatic_target, (state, record, real, real, real)),
        (automatic_shift, (state, record, real, real, real)),
        (lockup_request, (state, record, real, real, flag)),
        (shifter, (state, record, real, real)),
        (engine_step, (state, record, real, real, real, real)),
        (friction_noise, (real, whole, real)),
        (
            driveline_step,
            (state, record, state, real, real, real, flag, flag, flag, real, real),
        ),
        (euler_angles, (real, real, real, real)),
        (engine_load, (state, record)),
    ]


def compile_step_callees() -> None:
    """Compile (or load from numba's cache) the kernels ``physics_step`` calls, as it would."""
    with called_from(advance, physics_step):
        for kernel, signature in step_callees():
            kernel.compile(signature)


@contextmanager
def called_from(*callers: Any) -> Iterator[None]:
    """Compile as numba does inside ``callers``' compiling (outermost first): their flags."""
    with ExitStack() as stack:
        for caller in callers:  # each inherits from the one before, as when compiled there
            flags = Flags()
            caller.targetdescr.options.parse_as_flags(flags, caller.targetoptions)
            stack.enter_context(ConfigStack().enter(flags))
        yield
