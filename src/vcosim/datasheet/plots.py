"""The datasheet's plots: vcosim and CommonRoad on every one (matplotlib, Agg, no pyplot).

Figures are drawn on their own Agg canvas, so the report never touches matplotlib's global
backend (other parts of vcosim, or a user's notebook, may have chosen another).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from vcosim.datasheet.figures import G, _rising_part, smooth
from vcosim.datasheet.manoeuvres import Trace
from vcosim.datasheet.sheet import Datasheet, Runs

STYLE = {"vcosim": {"color": "C0", "ls": "-"}, "commonroad": {"color": "C1", "ls": "--"}}


def _figure(rows: int, cols: int, title: str) -> Figure:
    figure = Figure(figsize=(5.2 * cols, 3.6 * rows), layout="constrained")
    FigureCanvasAgg(figure)
    figure.suptitle(title)
    return figure


def _label(sheet: Datasheet, key: str) -> str:
    return sheet.vehicle + " (vcosim)" if key == "vcosim" else "CommonRoad MB, BMW 320i"


def _runs(sheet: Datasheet) -> list[tuple[str, Runs]]:
    return list(sheet.runs.items())


def steady_state(sheet: Datasheet, figure: Figure) -> None:
    """ISO 4138: steer, sideslip and roll against lateral acceleration (up to the limit)."""
    axes = figure.subplots(1, 3)
    for key, runs in _runs(sheet):
        trace = runs.ramp
        assert trace is not None
        a_y = smooth(trace.a_y, 0.5)
        end = _rising_part(trace, a_y)
        x = a_y[:end] / G
        for ax, values in zip(axes, (trace.delta, trace.beta, trace.roll), strict=True):
            ax.plot(x, np.degrees(values[:end]), label=_label(sheet, key), **STYLE[key])
    for ax, name in zip(axes, ("road-wheel angle", "sideslip angle", "roll angle"), strict=True):
        ax.set_xlabel("lateral acceleration (g)")
        ax.set_ylabel(f"{name} (deg)")
        ax.grid(True, alpha=0.3)
    axes[0].legend(fontsize="small")


def step_steer(sheet: Datasheet, figure: Figure) -> None:
    """ISO 7401 step at 80 km/h to 4 m/s^2: yaw rate and lateral acceleration."""
    axes = figure.subplots(1, 2)
    for key, runs in _runs(sheet):
        trace = runs.step
        assert trace is not None
        axes[0].plot(trace.t, np.degrees(trace.yaw_rate), label=_label(sheet, key), **STYLE[key])
        axes[1].plot(trace.t, smooth(trace.a_y, 0.02), **STYLE[key])
    axes[0].set_ylabel("yaw rate (deg/s)")
    axes[1].set_ylabel("lateral acceleration (m/s²)")
    for ax in axes:
        ax.set_xlabel("time (s)")
        ax.grid(True, alpha=0.3)
    axes[0].legend(fontsize="small")


def frequency_response(sheet: Datasheet, figure: Figure) -> None:
    """Yaw-rate gain and phase over the road-wheel angle against frequency."""
    axes = figure.subplots(1, 2)
    data = sheet.frequency_response
    f = data["frequency_hz"]
    for key in ("vcosim", "commonroad"):
        label = _label(sheet, key)
        axes[0].semilogx(f, data[f"{key}_gain_per_s"], marker="o", label=label, **STYLE[key])
        phase = np.degrees(np.unwrap(np.radians(data[f"{key}_phase_deg"])))
        axes[1].semilogx(f, phase, marker="o", **STYLE[key])
    axes[0].set_ylabel("yaw-rate gain (1/s)")
    axes[1].set_ylabel("phase (deg)")
    for ax in axes:
        ax.set_xlabel("steering frequency (Hz)")
        ax.grid(True, which="both", alpha=0.3)
    axes[0].legend(fontsize="small")


def sine_with_dwell(sheet: Datasheet, figure: Figure) -> None:
    """FMVSS 126: yaw rate at the largest amplitude, and the ratios over all amplitudes."""
    axes = figure.subplots(1, 2)
    for key, runs in _runs(sheet):
        largest = max(runs.swd)
        trace: Trace = runs.swd[largest]
        label = f"{_label(sheet, key)}, {largest:g} A"
        axes[0].plot(trace.t, np.degrees(trace.yaw_rate), label=label, **STYLE[key])
        points = sheet.swd_points[key]
        factors = [float(k) for k in points]
        for name, marker in (("1s", "o"), ("1_75s", "s")):
            ratios = [p[f"yaw_rate_ratio_{name}_percent"] for p in points.values()]
            axes[1].plot(factors, ratios, marker=marker, **STYLE[key],
                         label=f"{key}: at {name.replace('_', '.')}")  # fmt: skip
    axes[1].axhline(35, color="grey", lw=0.8)
    axes[1].axhline(20, color="grey", lw=0.8, ls=":")
    axes[0].set_xlabel("time (s)")
    axes[0].set_ylabel("yaw rate (deg/s)")
    axes[1].set_xlabel("steering amplitude (multiples of A)")
    axes[1].set_ylabel("yaw-rate ratio (%)  (limits 35 %, 20 %)")
    for ax in axes:
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize="small")


def straight_line(sheet: Datasheet, figure: Figure) -> None:
    """Acceleration, top-gear elasticity, the engine's full load, braking and coast-down."""
    axes = figure.subplots(2, 3).ravel()
    for key, runs in _runs(sheet):
        label = _label(sheet, key)
        style = STYLE[key]
        full, gear5 = runs.straight["full_throttle"], runs.straight["top_gear"]
        axes[0].plot(full["t"], full["speed"] * 3.6, label=label, **style)
        if "manual_launch" in runs.straight:
            manual = runs.straight["manual_launch"]
            axes[0].plot(manual["t"], manual["speed"] * 3.6, color=style["color"], ls=":",
                         label=f"{key}, manual")  # fmt: skip
        axes[1].plot(gear5["t"], gear5["speed"] * 3.6, **style)
        if "full_load" in runs.straight:
            load = runs.straight["full_load"]
            axes[2].plot(load["rpm"], load["power"] / 1000, **style)
            axes[5].plot(load["rpm"], load["engine_torque"], **style)
        for name, width in (("braking", 1.0), ("braking_abs", 2.0)):
            if name in runs.straight:
                run = runs.straight[name]
                speed = run["speed"]
                distance = np.concatenate(
                    [[0.0], np.cumsum(0.5 * (speed[1:] + speed[:-1]) * np.diff(run["t"]))]
                )
                tag = " ABS" if name.endswith("abs") else ""
                axes[3].plot(distance, speed * 3.6, lw=width, label=f"{key}{tag}", **style)
        coast = runs.straight["coast_down"]
        axes[4].plot(coast["t"], coast["speed"] * 3.6, **style)
    titles = ("full throttle from rest (dotted: manual)", "80–120 km/h in top gear",
              "engine at full load (3rd gear)", "braking from 100 km/h", "coast-down in neutral",
              "engine at full load (3rd gear)")  # fmt: skip
    xlabels = ("time (s)", "time (s)", "engine speed (rpm)", "distance (m)", "time (s)",
               "engine speed (rpm)")  # fmt: skip
    ylabels = ("speed (km/h)",) * 2 + ("power (kW)",) + ("speed (km/h)",) * 2 + ("torque (N m)",)
    for ax, title, xlabel, ylabel in zip(axes, titles, xlabels, ylabels, strict=True):
        ax.set_title(title, fontsize="medium")
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.grid(True, alpha=0.3)
    axes[0].legend(fontsize="small")
    axes[3].legend(fontsize="small")


PLOTS = {  # name: (drawing, rows, columns, title)
    "steady_state": (steady_state, 1, 3,
                     "Steady-state circular driving (ISO 4138, constant speed 80 km/h)"),
    "step_steer": (step_steer, 1, 2, "Step steer (ISO 7401) at 80 km/h to 4 m/s²"),
    "frequency_response": (frequency_response, 1, 2,
                           "Yaw-rate frequency response at 80 km/h (sine steer, 2 m/s²)"),
    "sine_with_dwell": (sine_with_dwell, 1, 2, "Sine with dwell (FMVSS 126) at 80 km/h"),
    "straight_line": (straight_line, 2, 3, "Straight line"),
}  # fmt: skip


def write_plots(sheet: Datasheet, folder: Path, stem: str) -> dict[str, Path]:
    """Draw every plot to ``folder/<stem>-<plot>.png``; returns the files by plot name."""
    out = {}
    for name, (draw, rows, cols, title) in PLOTS.items():
        figure = _figure(rows, cols, title)
        draw(sheet, figure)
        path = folder / f"{stem}-{name.replace('_', '-')}.png"
        figure.savefig(path, dpi=90)
        out[name] = path
    return out


def pixel_variance(path: Path) -> float:
    """Variance of a picture's grey levels: a blank plot has (almost) none."""
    from PIL import Image

    with Image.open(path) as image:
        return float(np.var(np.asarray(image.convert("L"), dtype=float)))
