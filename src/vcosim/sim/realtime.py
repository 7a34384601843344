"""Real-time scheduling for hardware in the loop: a FIFO priority, locked memory, one CPU.

A frame that must start every 16.7 ms (or a controller that must answer within 0.5 ms) is
late when the operating system runs something else first or pages its memory out. Linux
offers three remedies, each allowed to privileged processes (root, CAP_SYS_NICE and
CAP_IPC_LOCK, or an ``rtprio``/``memlock`` limit in limits.conf): the SCHED_FIFO policy,
which no ordinary process preempts; ``mlockall``, which keeps every page in RAM; and CPU
affinity, which keeps the process on one core (best one isolated with ``isolcpus``).
``enter_realtime`` asks for each and says in one line what it could not have.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
from dataclasses import dataclass, field

from vcosim.reports import Report

FIFO_PRIORITY = 50
"""SCHED_FIFO priority (1-99): above the kernel's default for threaded interrupts' peers (50
is where PREEMPT_RT puts IRQ threads; user tasks usually sit just below or at it)."""
_MCL_CURRENT, _MCL_FUTURE = 1, 2


@dataclass
class RealtimeReport(Report):
    """What real-time scheduling a process got: ``notes`` say what it asked for in vain."""

    scheduler: str
    memory_locked: bool
    cpu: int | None
    notes: list[str] = field(default_factory=list)


def enter_realtime(priority: bool, cpu: int | None = None) -> RealtimeReport:
    """Ask for SCHED_FIFO and locked memory (``priority``) and to run on ``cpu`` only.

    Nothing is raised: what the system refuses is a note, and the process runs on as it
    was (a run must not fail on a laptop because it has no real-time rights).
    """
    notes: list[str] = []
    scheduler, locked = "normal", False
    if priority:
        scheduler = _fifo(notes)
        locked = _lock_memory(notes)
    pinned = None
    if cpu is not None:
        try:
            os.sched_setaffinity(0, {cpu})
            pinned = cpu
        except (OSError, AttributeError, OverflowError) as exc:
            usable = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
            notes.append(
                f"real time: cannot pin to CPU {cpu} ({_reason(exc)}); usable CPUs: "
                f"{', '.join(map(str, usable)) or 'unknown'}"
            )
    return RealtimeReport(scheduler, locked, pinned, notes)


def _fifo(notes: list[str]) -> str:
    try:
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(FIFO_PRIORITY))
        return f"SCHED_FIFO {FIFO_PRIORITY}"
    except (OSError, AttributeError) as exc:
        notes.append(
            f"real time: SCHED_FIFO not granted ({_reason(exc)}): normal priority; allow it "
            "with CAP_SYS_NICE or an rtprio limit (limits.conf)"
        )
        return "normal"


def _lock_memory(notes: list[str]) -> bool:
    libc_name = ctypes.util.find_library("c")
    libc = ctypes.CDLL(libc_name, use_errno=True) if libc_name else None
    if libc is None or not hasattr(libc, "mlockall"):
        notes.append("real time: mlockall is not available here: memory may be paged out")
        return False
    if libc.mlockall(_MCL_CURRENT | _MCL_FUTURE) != 0:
        reason = os.strerror(ctypes.get_errno())
        notes.append(
            f"real time: mlockall refused ({reason}): memory may be paged out; allow it with "
            "CAP_IPC_LOCK or a memlock limit (limits.conf)"
        )
        return False
    return True


def _reason(exc: BaseException) -> str:
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    return str(exc) or type(exc).__name__
