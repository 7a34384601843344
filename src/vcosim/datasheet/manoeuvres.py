"""The manoeuvres of the datasheet, defined once for both models: speeds, steering profiles.

Both models are driven by the same road-wheel angle as a function of time and the same speed
controller (a longitudinal acceleration command), so that what differs between their
figures is the model, not the test.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

HANDLING_SPEED = 80 / 3.6  # m/s: ISO 7401 and FMVSS 126 both run at 80 km/h
SAMPLE = 0.005  # s between recorded samples (200 Hz)
STEP_START = 0.5  # s of straight running before a step or a sine with dwell begins
STEP_RISE = 0.1  # s: ISO 7401 asks for the steering step within 0.15 s
SWD_FREQUENCY = 0.7  # Hz (FMVSS 126 S7.9)
SWD_DWELL = 0.5  # s at the second peak
SPEED_KP, SPEED_KI = 1.5, 0.8  # 1/s, 1/s^2: the speed controller of both models
LAUNCH_RPM = (1500.0, 3500.0)  # a manual's driver lets the clutch in as the engine revs across


@dataclass(frozen=True)
class Plan:
    """What to run: the full datasheet, or a ``quick`` set for tests (shorter, fewer points)."""

    quick: bool = False
    ramp_seconds: float = 40.0
    step_seconds: float = 4.0
    frequencies: tuple[float, ...] = (0.2, 0.3, 0.5, 0.7, 1.0, 1.4, 2.0, 3.0)
    swd_factors: tuple[float, ...] = (1.5, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5.0, 5.5, 6.0, 6.5)
    swd_after: float = 2.5  # s recorded after the steering completes
    top_speed_seconds: float = 120.0

    @classmethod
    def make(cls, quick: bool) -> Plan:
        """The full plan, or the quick one: the same manoeuvres, shorter and sparser."""
        if not quick:
            return cls()
        return cls(
            quick=True,
            ramp_seconds=14.0,
            step_seconds=2.5,
            frequencies=(0.5, 1.0, 2.5),
            swd_factors=(3.0, 6.5),
            swd_after=2.0,
            top_speed_seconds=50.0,
        )


def launch_clutch(rpm: float) -> float:
    """The clutch pedal of a driver pulling away at full throttle with a manual gearbox.

    The clutch comes in as the engine revs up across ``LAUNCH_RPM`` and goes out again if
    the revs sink, as a driver feeds it in on the revs (an automatic's launch clutch works
    the same way): the engine pulls at full load and does not stall.
    """
    low, high = LAUNCH_RPM
    return 1.0 - min(max((rpm - low) / (high - low), 0.0), 1.0)


def ramp_steer(t: np.ndarray | float, rate: float) -> np.ndarray:
    """A slow steering ramp (ISO 4138 constant speed, quasi-steady): rad at time t."""
    return rate * np.asarray(t, dtype=float)


def step_steer(t: np.ndarray | float, amplitude: float) -> np.ndarray:
    """ISO 7401 step: straight until ``STEP_START``, then a ramp of ``STEP_RISE`` to the hold."""
    return amplitude * np.clip((np.asarray(t, dtype=float) - STEP_START) / STEP_RISE, 0.0, 1.0)


def sine_steer(t: np.ndarray | float, amplitude: float, frequency: float) -> np.ndarray:
    """A continuous sine from the start (the first periods are discarded as transient)."""
    return amplitude * np.sin(2 * math.pi * frequency * np.asarray(t, dtype=float))


def swd_steer(t: np.ndarray | float, amplitude: float) -> np.ndarray:
    """FMVSS 126 sine with dwell, starting at ``STEP_START``: 0.7 Hz, 0.5 s dwell at the trough."""
    tau = np.asarray(t, dtype=float) - STEP_START
    period = 1 / SWD_FREQUENCY
    trough = 0.75 * period
    shifted = np.where(tau < trough, tau, np.maximum(tau - SWD_DWELL, trough))
    out = amplitude * np.sin(2 * math.pi * SWD_FREQUENCY * shifted)
    return np.where((tau < 0) | (tau > period + SWD_DWELL), 0.0, out)


def swd_completion() -> float:
    """Time (from the manoeuvre's start) when the sine with dwell's steering ends: T0."""
    return STEP_START + 1 / SWD_FREQUENCY + SWD_DWELL


def frequency_seconds(frequency: float) -> float:
    """Run length for one sine frequency: 1 s or one period to settle, then two periods."""
    return max(1.0, 1 / frequency) + 2 / frequency


@dataclass
class Trace:
    """One manoeuvre's time histories, in the same units for both models (SI, rad)."""

    t: np.ndarray
    delta: np.ndarray  # road-wheel angle (rad), positive left
    yaw_rate: np.ndarray  # rad/s
    a_y: np.ndarray  # lateral acceleration in the ground plane, across the body (m/s^2)
    beta: np.ndarray  # sideslip angle at the centre of gravity (rad)
    roll: np.ndarray  # body roll (rad), positive when the body leans right
    speed: np.ndarray  # m/s
    x: np.ndarray  # world position (m)
    y: np.ndarray

    @classmethod
    def from_kinematics(
        cls,
        t: np.ndarray,
        delta: np.ndarray,
        yaw: np.ndarray,
        yaw_rate: np.ndarray,
        vx: np.ndarray,
        vy: np.ndarray,
        roll: np.ndarray,
        x: np.ndarray,
        y: np.ndarray,
    ) -> Trace:
        """From world-frame velocities: the lateral acceleration and the sideslip angle.

        Both are derived here the same way for both models, so their definitions agree.
        """
        yaw = np.unwrap(yaw)
        ax, ay = np.gradient(vx, t), np.gradient(vy, t)
        a_y = -np.sin(yaw) * ax + np.cos(yaw) * ay
        course = np.unwrap(np.arctan2(vy, vx))
        beta = (course - yaw + math.pi) % (2 * math.pi) - math.pi
        speed = np.hypot(vx, vy)
        return cls(t, delta, yaw_rate, a_y, beta, roll, speed, x, y)
