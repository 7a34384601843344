"""SIGTERM and Ctrl-C end a block as KeyboardInterrupt, and code closing files can tell."""

from __future__ import annotations

import os
import signal
import time

import pytest

from vcosim.interrupts import interrupted, sigterm_as_interrupt


def _wait_for_the_signal() -> None:
    end = time.monotonic() + 10.0
    while time.monotonic() < end:  # the handler runs between two bytecodes of this loop
        time.sleep(0.01)
    pytest.fail("no KeyboardInterrupt within 10 s")


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_in_the_block_interrupts_and_is_remembered(signum):
    before = signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGINT)
    with sigterm_as_interrupt():
        assert not interrupted()
        with pytest.raises(KeyboardInterrupt):
            os.kill(os.getpid(), signum)
            _wait_for_the_signal()
        assert interrupted()  # what a face's close() asks
    assert (signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGINT)) == before
    with sigterm_as_interrupt():
        assert not interrupted()  # a new run starts afresh


def test_an_ignored_ctrl_c_stays_ignored():
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)  # as in a background job
    try:
        with sigterm_as_interrupt():
            assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
            assert signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL
    finally:
        signal.signal(signal.SIGINT, previous)


def test_a_second_sigterm_does_not_cut_the_closing_short():
    closed = False
    with sigterm_as_interrupt():
        try:
            os.kill(os.getpid(), signal.SIGTERM)
            _wait_for_the_signal()
        except KeyboardInterrupt:
            os.kill(os.getpid(), signal.SIGTERM)  # e.g. once per thread of a dying parent
            closed = True  # the handler ran as kill returned, and did not raise
    assert closed and interrupted()


def test_a_second_ctrl_c_still_interrupts():
    with sigterm_as_interrupt(), pytest.raises(KeyboardInterrupt):
        try:
            os.kill(os.getpid(), signal.SIGINT)
            _wait_for_the_signal()
        except KeyboardInterrupt:
            os.kill(os.getpid(), signal.SIGINT)  # a user who insists
            _wait_for_the_signal()


def test_an_interrupt_swallowed_by_a_ctypes_callback_still_ends_the_block():
    # numba loads its cache through ctypes callbacks; a KeyboardInterrupt raised in one is
    # printed as "Exception ignored" and dropped by ctypes. The block must still end.
    import ctypes

    @ctypes.CFUNCTYPE(None)
    def callback() -> None:
        os.kill(os.getpid(), signal.SIGTERM)
        for _ in range(1000):  # the handler runs in here, and ctypes drops what it raises
            pass

    with sigterm_as_interrupt(), pytest.raises(KeyboardInterrupt):
        callback()
        _wait_for_the_signal()
