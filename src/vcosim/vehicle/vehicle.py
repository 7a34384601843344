"""The Python face of the vehicle model: named inputs and outputs over the compiled kernel.

(Past 400 lines: ``VehicleView`` (a vehicle's arrays by name), the ``Vehicle`` that steps its
own with its placing, settling and array sharing, and its batch twin ``VehicleBatch``, read
best together.)
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from math import isfinite
from pathlib import Path
from typing import Any

import numpy as np

from vcosim.errors import ConfigError, UnknownNameError, VcosimError
from vcosim.vehicle import layout as L
from vcosim.vehicle.inputs import INITIAL, INPUT_INDEX, INPUT_NAMES, INPUTS, VECTOR_INPUTS
from vcosim.vehicle.model import N_SCRATCH, advance, advance_batch, initial_state
from vcosim.vehicle.params import DT, VehicleParams
from vcosim.vehicle.terrain import WORLD_LIMIT, Terrain

SETTLE_STEPS = 4000  # 2 s: the suspension comes to rest before time 0


@dataclass(frozen=True)
class Snapshot:
    """Everything that determines the future of a vehicle (state, held inputs) and its outputs."""

    state: np.ndarray
    inputs: np.ndarray
    outputs: np.ndarray


def resolve_params(params: VehicleParams | str | Path | None) -> VehicleParams:
    """Accept a parameter object, a preset name, a TOML path or None (the default vehicle)."""
    if params is None:
        return VehicleParams()
    if isinstance(params, VehicleParams):
        return params
    text = str(params)
    if text.endswith(".toml") or Path(text).exists():
        return VehicleParams.from_toml(text)
    return VehicleParams.preset(text)


GROUND_REACH = 10.0  # m: ground given from outside may lie at most this far above the CoG


class InputError(VcosimError, ValueError):
    """A vehicle input that cannot be applied; the vehicle and its held inputs are untouched."""


def _not_a_number(name: str, value: object) -> InputError:
    return InputError(f"vehicle input {name} = {value!r} is not a number")


def _not_finite(name: str, value: object) -> InputError:
    return InputError(
        f"vehicle input {name} = {value!r}: inputs must be finite numbers "
        "(the vehicle keeps the inputs it had)"
    )


def _as_numbers(name: str, value: object, shape: tuple[int, ...]) -> np.ndarray:
    """``value`` as finite floats whose last axis is ``shape`` (``()`` for a scalar input).

    Text is refused even when it reads as a number: an input is a number, not its spelling.
    """
    try:
        values = np.asarray(value)
        if values.dtype.kind not in "biufO":  # text, complex, dates: not a vehicle input
            raise TypeError
        with np.errstate(over="ignore"):  # a value beyond a float's range is refused below
            values = values.astype(float, copy=False)
    except OverflowError:  # an int beyond a float's range
        raise _not_finite(name, value) from None
    except (TypeError, ValueError):
        raise _not_a_number(name, value) from None
    if values.shape[values.ndim - len(shape) :] != shape:
        raise ConfigError([f"{name}: needs 4 values (FL, FR, RL, RR)"], "vehicle inputs")
    if not np.all(np.isfinite(values)):
        raise _not_finite(name, value)
    return values


def _parse(name: str, value: object) -> tuple[slice, np.ndarray]:
    """Where a named input goes in the input array and its checked value."""
    entry = INPUTS.get(name)
    if entry is None:
        raise UnknownNameError("vehicle input", name, INPUT_NAMES)
    where = slice(entry.index, entry.index + entry.width)
    if entry.width > 1:
        return where, _as_numbers(name, value, (entry.width,))
    if entry.choices and isinstance(value, str):
        if value not in entry.choices:
            raise UnknownNameError(name.replace("_", " "), value, tuple(entry.choices))
        value = entry.choices[value]
    return where, _as_numbers(name, value, ())[..., None]


# What a caller stepping a vehicle from Python passes: bool, int, float and NumPy's real
# scalars. ``math.isfinite`` reads each as the float NumPy writes into the input array.
_PLAIN_NUMBERS = frozenset(
    {bool, int, float, np.bool_}
    | {np.dtype(code).type for code in np.typecodes["AllInteger"] + np.typecodes["Float"]}
)
_SCALAR_INDEX = INPUT_INDEX


def _set_scalars(u: np.ndarray, inputs: Mapping[str, object]) -> bool:
    """Write the inputs into one vehicle's ``u`` if all are scalar inputs, finite plain numbers.

    The fast path of a step from Python: a dict lookup and a finiteness check per input
    instead of an array per input. It only accepts: ``False`` (nothing written) sends the
    inputs down the general path, which takes vectors, arrays and the drive mode and
    refuses what is bad by name, so a refusal reads the same whichever way it came.
    """
    items = inputs.items()
    try:
        for name, value in items:
            if type(value) not in _PLAIN_NUMBERS or name not in _SCALAR_INDEX:
                return False
            if not isfinite(value):  # type: ignore[arg-type]
                return False
    except OverflowError:  # an int beyond a float's range
        return False
    for name, value in items:
        u[_SCALAR_INDEX[name]] = value
    return True


def set_inputs(
    u: np.ndarray, inputs: Mapping[str, object], cog_height: np.ndarray | float | None = None
) -> None:
    """Write named inputs into an input array (a row per vehicle or a single row).

    Every input is checked before any is written, so a bad one changes nothing: names must
    be known and values finite numbers (``InputError``, a ``ValueError``, says which). Finite
    values out of an input's range are clamped by the model, as the coupling faces do. With
    ``cog_height`` (the vehicle's centre of gravity, m) ground heights given from outside
    more than ``GROUND_REACH`` above it are refused: the car would be buried, not driving.
    """
    if u.ndim == 1 and _set_scalars(u, inputs):
        return
    writes = [_parse(name, value) for name, value in inputs.items()]
    ground = inputs.get("ground_height")
    if ground is not None and cog_height is not None:
        above = np.asarray(ground, dtype=float) - np.asarray(cog_height, dtype=float)[..., None]
        if np.any(above > GROUND_REACH):
            raise InputError(
                f"vehicle input ground_height = {ground!r} lies up to {np.max(above):.3g} m "
                f"above the vehicle's centre of gravity; the ground under the wheels may be "
                f"at most {GROUND_REACH:g} m above it (Vehicle.teleport moves a vehicle)"
            )
    for where, values in writes:
        u[..., where] = values


def _compiled(kernel: Any, args: tuple[object, ...]) -> Callable[..., None]:
    """``kernel``'s machine code for exactly these arguments, or the kernel itself.

    Calling numba's compiled entry point skips the dispatcher's type checks of every argument
    (a third of a step's cost from Python); the arguments' types never change for a vehicle.
    """
    try:
        kernel(*args[:-1], 0)  # compiles (or loads from the cache) for these types
        signature = tuple(kernel.typeof_pyval(a) for a in args)
        return kernel.overloads[signature].entry_point
    except (AttributeError, KeyError, TypeError):
        return kernel


def _released(packed: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A vehicle's arrays before settling: at rest, unsettled, inputs released."""
    return initial_state(packed), INITIAL.copy(), np.zeros(L.N_OUTPUTS)


def _check_shapes(what: str, state: np.ndarray, inputs: np.ndarray, outputs: np.ndarray) -> None:
    shapes = {"state": L.N_STATES, "inputs": L.N_INPUTS, "outputs": L.N_OUTPUTS}
    given = {"state": state, "inputs": inputs, "outputs": outputs}
    wrong = [k for k, n in shapes.items() if given[k].shape != (n,)]
    if wrong:
        raise ValueError(f"{what}: {', '.join(wrong)} of the wrong shape")


class VehicleView:
    """A vehicle's arrays by name: inputs set, signals read, placed, snapshotted; not stepped.

    What every face needs of a vehicle. Whoever owns the arrays steps them: a ``Vehicle``
    (a view that steps its own) or a world's batch kernel, whose rows its vehicles view
    (``view``). A view has no stepping method to call by mistake.
    """

    dt: float = DT

    def __init__(
        self,
        params: VehicleParams,
        terrain: Terrain,
        state: np.ndarray,
        inputs: np.ndarray,
        outputs: np.ndarray,
        *,
        packed: np.ndarray | None = None,
    ) -> None:
        """View these arrays as a vehicle of ``params`` on ``terrain``.

        ``packed``: the parameters as the kernel takes them, when the caller has them.
        """
        self.params = params
        self.terrain = terrain
        self._p = packed if packed is not None else params.pack()
        self._terrain = (terrain.height, terrain.friction, terrain.grid)
        self._live_in(state, inputs, outputs)

    def view(self, state: np.ndarray, inputs: np.ndarray, outputs: np.ndarray) -> VehicleView:
        """A view of a vehicle like this one (parameters, terrain) over other arrays.

        E.g. rows of a world's arrays, which must already hold what the vehicle is.
        """
        _check_shapes("view", state, inputs, outputs)
        return VehicleView(self.params, self.terrain, state, inputs, outputs, packed=self._p)

    def _live_in(self, state: np.ndarray, inputs: np.ndarray, outputs: np.ndarray) -> None:
        """Act on these arrays from now on, with a scratch array of their own."""
        self._x, self._u, self._y = state, inputs, outputs
        self._s = np.zeros(N_SCRATCH)

    def teleport(self, x: float, y: float, heading: float = 0.0, speed: float = 0.0) -> None:
        """Move the vehicle to (x, y), heading ``heading`` degrees (anticlockwise from +x).

        It lands on the terrain there (height and slope under its four wheels) with its
        suspension as settled as it was, rolling straight ahead at ``speed`` m/s (wheels
        spinning with it, no slip); engine, gearbox, inputs and time carry on. With the engine
        running and the automatic selected, it rolls in the gear it would hold at that speed.
        """
        values = {"x": x, "y": y, "heading": heading, "speed": speed}
        bad = [f"{k} = {v!r}" for k, v in values.items() if not np.isfinite(v)]
        if bad:
            raise ValueError(f"teleport needs finite numbers, not {', '.join(bad)}")
        if max(abs(x), abs(y)) > WORLD_LIMIT:
            raise ValueError(
                f"teleport to ({x:g}, {y:g}): beyond {WORLD_LIMIT:g} m from the origin a "
                "0.5 ms step's motion is lost to rounding"
            )
        state, rec = self._x, self._p[0]
        height = state[L.X_POS + 2] - self._ground_under(*state[L.X_POS : L.X_POS + 2])
        ground, quat = self._pose_on_terrain(x, y, np.radians(heading))
        state[L.X_POS : L.X_POS + 3] = (x, y, ground + height)
        state[L.X_QUAT : L.X_QUAT + 4] = quat
        state[L.X_VEL : L.X_VEL + 3] = (speed, 0.0, 0.0)
        state[L.X_RATE : L.X_RATE + 3] = 0.0
        state[L.X_OMEGA : L.X_OMEGA + 4] = speed / rec["r"]
        state[L.X_KAPPA : L.X_ALPHA + 4] = 0.0
        state[L.X_ABS_REFERENCE] = abs(speed)  # the ABS has seen the wheels rolling so
        state[L.X_ACCEL_SENSOR] = 0.0
        if self._u[L.U_AUTOMATIC] >= 0.5 and state[L.X_RUNNING] > 0.0:
            self._engage_for_speed(speed)
        self._refresh_outputs()

    def _engage_for_speed(self, speed: float) -> None:
        """Rolling at ``speed`` with the automatic in D: in the gear it would be driving in.

        Put on the road rolling, the box would otherwise start from the gear it was in at
        rest and work its way up. It starts in the highest gear that keeps the engine above
        the automatic's downshift speed, shift elements locked, engine and turbine turning
        with the wheels; below that (a crawl) in gear 1, as from a standing start.
        """
        rec, state = self._p[0], self._x
        wheel = speed / rec["r"]
        ratios = [rec[f"ratio_{g}"] * rec["final_drive"] for g in range(1, 6)]
        fitting = [g for g, ratio in enumerate(ratios, 1) if wheel * ratio >= 1.9 * rec["down_rpm"]]
        if not fitting:
            return
        gear = fitting[-1]
        state[L.X_GEAR] = gear
        state[L.X_SHIFT_T] = -1.0
        state[L.X_LOCKED] = 1.0
        state[L.X_OMEGA_E] = state[L.X_OMEGA_T] = wheel * ratios[gear - 1]
        state[L.X_SELECTOR] = 1.0

    def _ground_under(self, x: float, y: float) -> float:
        return float(self.terrain.sample(x, y)[0])

    def _pose_on_terrain(self, x: float, y: float, yaw: float) -> tuple[float, np.ndarray]:
        """Ground height and plane rotation (w, x, y, z) under a vehicle at (x, y), ``yaw`` rad.

        The plane is the one through the ground under the four wheels.
        """
        rec = self._p[0]
        a, b, c = rec["a"], rec["b"], rec["c"]
        cy, sy = np.cos(yaw), np.sin(yaw)
        fl, fr, rl, rr = (
            self._ground_under(x + cy * px - sy * py, y + sy * px + cy * py)
            for px, py in ((a, c), (a, -c), (-b, c), (-b, -c))
        )
        pitch = -np.arctan(((fl + fr) - (rl + rr)) / (2 * (a + b)))
        roll = np.arctan(((fl + rl) - (fr + rr)) / (4 * c))
        ground = 0.5 * (rl + rr) + 0.5 * ((fl + fr) - (rl + rr)) * b / (a + b)
        cr, sr = np.cos(roll / 2), np.sin(roll / 2)
        cp, sp = np.cos(pitch / 2), np.sin(pitch / 2)
        ch, sh = np.cos(yaw / 2), np.sin(yaw / 2)
        quat = np.array(
            (
                cr * cp * ch + sr * sp * sh,
                sr * cp * ch - cr * sp * sh,
                cr * sp * ch + sr * cp * sh,
                cr * cp * sh - sr * sp * ch,
            )
        )
        return float(ground), quat

    def _refresh_outputs(self) -> None:
        """Outputs for the state as it is: one step on a copy, labelled with the current time."""
        time = self._x[L.X_STEP] * self.dt
        probe = self._x.copy()
        advance(probe, self._u, self._p, self._y, self._s.copy(), *self._terrain, 1)
        self._y[L.Y_TIME] = time

    # -- inputs -----------------------------------------------------------------------------
    def set_inputs(self, **inputs: object) -> None:
        """Change held inputs without advancing time (e.g. from a hook inside a step).

        A non-finite value raises ``InputError`` (a ``ValueError``) naming the input and
        changes nothing; finite values beyond an input's range are clamped by the model.
        """
        set_inputs(self._u, inputs, self._x[L.X_POS + 2])

    # -- reading ----------------------------------------------------------------------------
    @property
    def step_index(self) -> int:
        """Physics steps since time 0."""
        return int(self._x[L.X_STEP])

    @property
    def time(self) -> float:
        """Simulation time (s), computed from the step index so it never drifts."""
        return self.step_index * self.dt

    @property
    def outputs(self) -> np.ndarray:
        """All outputs as one array, ordered as ``SIGNAL_NAMES`` (banks A-G first); a live view."""
        return self._y

    @property
    def state(self) -> np.ndarray:
        """The state array (layout in ``vcosim.vehicle.layout``); a live view, read it only."""
        return self._x

    @property
    def input_array(self) -> np.ndarray:
        """The held inputs as one array (layout in ``vcosim.vehicle.layout``); a live view."""
        return self._u

    @property
    def inputs(self) -> dict[str, object]:
        """The inputs currently held."""
        u = self._u
        out: dict[str, object] = {n: float(u[i]) for n, i in INPUT_INDEX.items()}
        out["drive_mode"] = "torques" if u[L.U_DRIVE_MODE] >= 0.5 else "pedals"
        for name, start in VECTOR_INPUTS.items():
            out[name] = tuple(float(v) for v in u[start : start + 4])
        return out

    def signals(self) -> dict[str, float]:
        """Every named output: banks A-G with the seed's names, then extra signals."""
        return dict(zip(L.SIGNAL_NAMES, self._y.tolist(), strict=False))

    def signal(self, name: str) -> float:
        """One named output."""
        index = L.SIGNAL_INDEX.get(name)
        if index is None:
            raise UnknownNameError("signal", name, L.SIGNAL_NAMES)
        return float(self._y[index])

    # -- replay -----------------------------------------------------------------------------
    def snapshot(self) -> Snapshot:
        """Capture the state; ``restore`` of it replays the same future exactly."""
        return Snapshot(self._x.copy(), self._u.copy(), self._y.copy())

    def restore(self, snapshot: Snapshot) -> None:
        """Return to a captured state (inputs included)."""
        self._x[:] = snapshot.state
        self._u[:] = snapshot.inputs
        self._y[:] = snapshot.outputs


class Vehicle(VehicleView):
    """One vehicle stepping at a fixed 0.5 ms.

    Inputs are held: ``step(throttle=0.3)`` keeps the throttle at 0.3 until changed. The
    vehicle starts at rest with the engine off, in neutral, at the origin, heading along +x,
    its suspension already settled.
    """

    def __init__(
        self,
        params: VehicleParams | str | Path | None = None,
        terrain: Terrain | None = None,
        *,
        engine_running: bool = False,
    ) -> None:
        params = resolve_params(params)
        packed = params.pack()
        terrain = terrain if terrain is not None else Terrain.flat()
        super().__init__(params, terrain, *_released(packed), packed=packed)
        self._settle(engine_running)

    def reset(self, *, engine_running: bool = False) -> None:
        """Start again: at rest at the origin, heading +x, time 0, inputs released."""
        self._live_in(*_released(self._p))
        self._settle(engine_running)

    def _live_in(self, state: np.ndarray, inputs: np.ndarray, outputs: np.ndarray) -> None:
        """Step these arrays from now on, with a scratch array of their own.

        ``_one_step`` holds the kernel's arguments for one step, gathered once here: gathering
        them on every ``step()`` costs a tenth of the time Python adds to a step.
        """
        super()._live_in(state, inputs, outputs)
        self._one_step = (state, inputs, self._p, outputs, self._s, *self._terrain, 1)
        self._advance_one: Callable[..., None] = self._first_step

    @property
    def kernel_args(self) -> tuple[object, ...]:
        """``model.advance``'s arguments but the step count, for a compiled caller of its own.

        The contract server's lock-step exchange steps the vehicle between its receive and
        its send inside one compiled call (``vcosim.contracts.wire.exchange``).
        """
        return self._one_step[:-1]

    def _first_step(self, *one_step: object) -> None:
        """Find the kernel's entry point for these arrays, then step with it as every step will.

        Left to the first ``step()``: typing the arrays costs milliseconds, which a world of
        many vehicles (stepped by its own kernel, never by ``step``) would pay for nothing.
        """
        self._advance_one = _compiled(advance, self._one_step)
        self._advance_one(*one_step)

    def _place_on_terrain(self) -> None:
        """Start on the terrain's plane under the four wheels, so settling starts gently."""
        ground, quat = self._pose_on_terrain(0.0, 0.0, 0.0)
        self._x[L.X_POS + 2] += ground
        self._x[L.X_QUAT : L.X_QUAT + 4] = quat

    def _settle(self, engine_running: bool) -> None:
        """Let the suspension come to rest (brakes on), then put the car at the origin at time 0.

        With ``engine_running`` the engine is cranked and left idling meanwhile (key at 2).
        """
        self._place_on_terrain()
        x = self._x
        held = self._u.copy()
        held[L.U_BRAKE] = held[L.U_PARKINGBRAKE] = 1.0
        if engine_running:
            held[L.U_IGNITION] = 3.0
            advance(x, held, self._p, self._y, self._s, *self._terrain, SETTLE_STEPS // 2)
            held[L.U_IGNITION] = self._u[L.U_IGNITION] = 2.0
        advance(x, held, self._p, self._y, self._s, *self._terrain, SETTLE_STEPS)
        loads = self._y[L.Y_WHEEL + 5 : L.Y_WHEEL + 4 * L.WHEEL_BLOCK : L.WHEEL_BLOCK]
        if not (np.all(np.isfinite(x)) and np.any(loads > 0.0)):
            raise ConfigError(
                [
                    "the vehicle does not stand on its wheels after settling for 2 s: its "
                    "springs, dampers or tyres are too stiff for its masses at the 0.5 ms "
                    "step, or there is no ground under it"
                ],
                f"vehicle {self.params.name}",
            )
        ground_here = self.terrain.sample(x[L.X_POS], x[L.X_POS + 1])[0]
        x[L.X_POS + 2] += self.terrain.sample(0.0, 0.0)[0] - ground_here
        x[L.X_POS : L.X_POS + 2] = 0.0
        x[L.X_STEP] = 0.0
        self._refresh_outputs()

    # -- stepping ---------------------------------------------------------------------------
    def step(self, **inputs: object) -> None:
        """Advance one physics step; named inputs change first (unnamed ones are held)."""
        if inputs and not _set_scalars(self._u, inputs):
            set_inputs(self._u, inputs, self._x[L.X_POS + 2])
        self._advance_one(*self._one_step)

    def run(self, n_steps: int, **inputs: object) -> None:
        """Advance ``n_steps`` physics steps in one compiled call with the inputs held.

        Through the kernel's entry point as ``step`` (no argument typing): a host that runs a
        few steps between a face's sends calls this thousands of times a second.
        """
        if inputs:
            self.set_inputs(**inputs)
        if n_steps > 0:
            self._advance_one(*self._one_step[:-1], int(n_steps))

    def run_for(self, seconds: float, **inputs: object) -> None:
        """Advance by a duration (rounded to whole steps)."""
        self.run(round(seconds / self.dt), **inputs)

    def trace(self, seconds: float, every: int = 20, **inputs: object) -> dict[str, np.ndarray]:
        """Advance by a duration and return every signal sampled each ``every`` steps."""
        if inputs:
            self.set_inputs(**inputs)
        rows = max(round(seconds / self.dt) // every, 1)
        out = np.empty((rows, L.N_OUTPUTS))
        for i in range(rows):
            advance(self._x, self._u, self._p, self._y, self._s, *self._terrain, every)
            out[i] = self._y
        return {name: out[:, i] for i, name in enumerate(L.SIGNAL_NAMES)}

    # -- sharing arrays ---------------------------------------------------------------------
    def clone(self) -> Vehicle:
        """A copy with arrays of its own (parameters and terrain shared: neither changes)."""
        twin = copy.copy(self)
        twin._live_in(self._x.copy(), self._u.copy(), self._y.copy())
        return twin

    def bind(self, state: np.ndarray, inputs: np.ndarray, outputs: np.ndarray) -> None:
        """Live in these arrays from now on (e.g. rows of a world's): what they hold is its.

        Reading, setting inputs, teleports and snapshots then act on them; whoever owns them
        steps them (a batch kernel).
        """
        _check_shapes("bind", state, inputs, outputs)
        self._live_in(state, inputs, outputs)


class VehicleBatch:
    """Many independent vehicles of one parameter set, stepped in parallel (sweeps, benches)."""

    def __init__(
        self,
        count: int,
        params: VehicleParams | str | Path | None = None,
        terrain: Terrain | None = None,
        *,
        engine_running: bool = False,
    ) -> None:
        template = Vehicle(params, terrain, engine_running=engine_running)
        self.params, self.terrain = template.params, template.terrain
        self._p = template._p
        self._terrain = template._terrain
        self.states = np.tile(template._x, (count, 1))
        self.input_rows = np.tile(template._u, (count, 1))
        self.output_rows = np.tile(template._y, (count, 1))

    def __len__(self) -> int:
        return self.states.shape[0]

    def set_inputs(self, **inputs: object) -> None:
        """Set inputs for every vehicle (a scalar) or per vehicle (an array of length N)."""
        set_inputs(self.input_rows, inputs, self.states[:, L.X_POS + 2])

    def run(self, n_steps: int, **inputs: object) -> None:
        """Advance every vehicle ``n_steps`` steps (inputs as in ``set_inputs``, held)."""
        if inputs:
            self.set_inputs(**inputs)
        advance_batch(
            self.states, self.input_rows, self._p, self.output_rows, *self._terrain, int(n_steps)
        )

    def signal(self, name: str) -> np.ndarray:
        """One named output for every vehicle."""
        index = L.SIGNAL_INDEX.get(name)
        if index is None:
            raise UnknownNameError("signal", name, L.SIGNAL_NAMES)
        return self.output_rows[:, index].copy()
