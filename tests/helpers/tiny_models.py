"""The tiny native FMUs the tests use as controllers (``helpers.tiny_fmu`` builds them)."""

from __future__ import annotations

from pathlib import Path

from helpers.tiny_fmu import Var, build_tiny_fmu

# A PI speed controller, as the ``cruise`` example; the variable names are given per build so
# the same model also serves as an FMU whose names need a map file (the C knows them by
# position: speed, target_speed, kp, ki, throttle, brake, integral).
PI_C = """
static int model_init(tiny *m) { (void)m; return 1; }
static int model_start(tiny *m) { (void)m; return 1; }
static void model_stop(tiny *m) { (void)m; }
static int model_step(tiny *m, double t, double h) {
    (void)t;
    double *v = m->v;
    double error = v[1] - v[0];
    double effort = v[2] * error + v[3] * v[6];
    if ((-1.0 < effort && effort < 1.0) || effort * error < 0.0) v[6] += error * h;
    v[4] = fmin(fmax(effort, 0.0), 1.0);
    v[5] = fmin(fmax(-0.5 * effort, 0.0), 1.0);
    return 1;
}
"""


def build_pi(
    out: Path,
    identifier: str = "VcosimTestPi",
    *,
    speed: str = "groundspeed",
    throttle: str = "throttle",
    brake: str = "brake",
) -> Path:
    """The PI speed controller: throttle and brake from the speed, toward 15 m/s."""
    variables = [
        Var(speed, "input", start=0.0),
        Var("target_speed", "parameter", start=15.0),
        Var("kp", "parameter", start=0.25),
        Var("ki", "parameter", start=0.08),
        Var(throttle, "output"),
        Var(brake, "output"),
        Var("integral", "local"),
    ]
    return build_tiny_fmu(
        out, identifier, variables, PI_C, description="PI speed control through throttle and brake"
    )
