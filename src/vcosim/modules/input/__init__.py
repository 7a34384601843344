"""The input module (the seed's IM): wheel, pedals and buttons to the bus; force feedback back.

A backend gives raw device axes (floats, about -1..1) and buttons; a ``Mapping`` (a TOML file,
validated by pydantic) says which axis is steering, throttle and brake (with inversion, dead
zone and the raw range that means "fully"), and which button shifts, sounds the horn,
switches the camera, starts the engine or quits. The module polls at 100 Hz and sends the
driver's controls at 25 Hz.

- :mod:`~vcosim.modules.input.mapping`: the mapping, its TOML file, raw values → bus scales.
- :mod:`~vcosim.modules.input.backends`: script, keyboard and joystick (pygame-ce).
- :mod:`~vcosim.modules.input.feedback`: ForceFeedback as constant force, rumble or nothing.
- :mod:`~vcosim.modules.input.wizard`: the interactive calibration.
- :mod:`~vcosim.modules.input.module`: the module on the bus, and its idle stand-in.
"""

from vcosim.modules.input.backends import (
    POLL_RATE,
    Backend,
    KeyboardBackend,
    PygameBackend,
    ScriptedBackend,
    ScriptFile,
    Step,
    find_devices,
    open_backend,
)
from vcosim.modules.input.feedback import EvdevForce, ForceFeedbackOutput
from vcosim.modules.input.mapping import (
    BUTTONS,
    Axes,
    AxisMap,
    ButtonMap,
    DriverState,
    Mapping,
    load_mapping,
    save_mapping,
    to_driver,
)
from vcosim.modules.input.module import (
    SEND_EVERY,
    IdleModule,
    IdleReport,
    InputModule,
    InputReport,
    idle,
)
from vcosim.modules.input.wizard import calibration_wizard

__all__ = [
    "BUTTONS",
    "POLL_RATE",
    "SEND_EVERY",
    "Axes",
    "AxisMap",
    "Backend",
    "ButtonMap",
    "DriverState",
    "EvdevForce",
    "ForceFeedbackOutput",
    "IdleModule",
    "IdleReport",
    "InputModule",
    "InputReport",
    "KeyboardBackend",
    "Mapping",
    "PygameBackend",
    "ScriptFile",
    "ScriptedBackend",
    "Step",
    "calibration_wizard",
    "find_devices",
    "idle",
    "load_mapping",
    "open_backend",
    "save_mapping",
    "to_driver",
]
