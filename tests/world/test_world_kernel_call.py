"""The world calls its kernel's compiled entry directly: the same steps as numba's dispatcher.

The direct call skips numba's typing of the arguments, so it is used only with the arrays it
was bound to; arrays replaced by hand go through the dispatcher again, and still step.
"""

from __future__ import annotations

import numba
import numpy as np

from vcosim.bench.world import ring_world
from vcosim.vehicle.model import advance_each_serial
from vcosim.world import World
from vcosim.world.stepper import CYCLE, PARALLEL_FROM, TRIAL


def test_the_direct_call_steps_exactly_as_the_dispatcher() -> None:
    world, reference = World(ring_world(3)), World(ring_world(3))
    states, inputs, outputs = reference.states, reference.inputs, reference.outputs
    for n in (1, 7, 20):
        world._stepper(world._arrays(), n)
        advance_each_serial(states, inputs, reference.params, outputs, *reference._terrain, n)
    np.testing.assert_array_equal(world.states, states)
    np.testing.assert_array_equal(world.outputs, outputs)


def test_a_world_run_in_single_steps_equals_one_in_long_calls() -> None:
    stepwise, at_once = World(ring_world(4)), World(ring_world(4))
    for _ in range(300):
        stepwise.run(1)
    at_once.run(300)
    np.testing.assert_array_equal(stepwise.states, at_once.states)
    np.testing.assert_array_equal(stepwise.outputs, at_once.outputs)


def test_arrays_replaced_by_hand_are_stepped_through_the_dispatcher() -> None:
    world, reference = World(ring_world(2)), World(ring_world(2))
    world.states = world.states.copy()  # no longer the array the direct call was bound to
    before = world.states.copy()
    world.run(40)
    reference.run(40)
    assert not np.array_equal(world.states, before)  # the new array was stepped
    np.testing.assert_array_equal(world.states, reference.states)


def test_trying_the_threaded_kernel_leaves_every_state_as_the_serial_one_gives() -> None:
    size = PARALLEL_FROM + 4
    tried, serial = World(ring_world(size)), World(ring_world(size))
    assert len(tried._stepper.entries) == (2 if numba.get_num_threads() > 1 else 1)
    serial._stepper.entries = serial._stepper.entries[:1]  # the calling thread only
    steps = (4 * CYCLE + 2 * TRIAL) * 20  # calls of at most a driver period (20 steps) each:
    tried.run(steps)  # through two trials of both kernels at least, each ending in a choice
    serial.run(steps)
    assert tried._stepper.calls > tried._stepper.cycle >= CYCLE
    np.testing.assert_array_equal(tried.states, serial.states)
    np.testing.assert_array_equal(tried.outputs, serial.outputs)
