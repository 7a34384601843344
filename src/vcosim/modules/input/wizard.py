"""The calibration wizard: the user moves each control when asked; a mapping comes out."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

from vcosim.modules.input.backends import POLL_RATE, Backend
from vcosim.modules.input.mapping import BUTTONS, Axes, AxisMap, ButtonMap, Mapping


def calibration_wizard(
    backend: Backend,
    ask: Callable[[str], object],
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
    button_timeout: float = 10.0,
) -> Mapping:
    """Ask for each control in turn and return the mapping that fits the device.

    ``ask`` shows a prompt and returns once the user is ready (``input`` in a terminal).
    Axes: the one that moves most between rest and full travel, with the raw values at rest
    and at full travel as its range. Buttons: the first one pressed within ``button_timeout``
    seconds, else not mapped.
    """
    start = clock()

    def snapshot() -> tuple[Sequence[float], Sequence[bool]]:
        return backend.read(clock() - start)

    ask("Leave the wheel centred and the pedals released, then press Enter")
    rest, _ = snapshot()
    ask("Turn the wheel fully LEFT and hold it there, then press Enter")
    left, _ = snapshot()
    ask("Turn the wheel fully RIGHT and hold it there, then press Enter")
    right, _ = snapshot()
    steer = max(range(len(rest)), key=lambda i: abs(right[i] - left[i]))
    axes = {"steering": AxisMap(axis=steer, dead_zone=0.02, low=left[steer], high=right[steer])}
    used = {steer}
    for pedal in ("throttle", "brake"):
        ask(f"Press the {pedal.upper()} pedal fully and hold it, then press Enter")
        full, _ = snapshot()
        free = [i for i in range(len(rest)) if i not in used] or [0]
        axis = max(free, key=lambda i: abs(full[i] - rest[i]))
        used.add(axis)
        axes[pedal] = AxisMap(axis=axis, dead_zone=0.03, low=rest[axis], high=full[axis])
    buttons: dict[str, int | None] = {}
    for action in BUTTONS:
        ask(
            f"Press Enter, then within {button_timeout:g} s the button for "
            f"{action.replace('_', ' ').upper()} (or wait to leave it unmapped)"
        )
        _, before = snapshot()
        deadline, chosen = clock() + button_timeout, None
        while chosen is None and clock() < deadline:
            _, now = snapshot()
            chosen = next(
                (i for i, b in enumerate(now) if b and not before[i] and i not in buttons.values()),
                None,
            )
            sleep(1.0 / POLL_RATE)
        buttons[action] = chosen
    return Mapping(device=backend.name, axes=Axes(**axes), buttons=ButtonMap(**buttons))
