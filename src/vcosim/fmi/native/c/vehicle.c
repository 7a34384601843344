/* The vehicle FMU's model over the compiled kernel (vehicle.h says what it is). */
#include "vehicle.h"

#include <cpuid.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vcosim_kernel.h"

static void say(const vc_model *m, int level, const char *format, ...) {
    char text[1024];
    va_list args;
    va_start(args, format);
    vsnprintf(text, sizeof text, format, args);
    va_end(args);
    if (m->log != NULL) m->log(m->log_env, level, text);
}

static void advance(vc_model *m, double *x, double *u, double *y, double *s, long long n) {
    vcosim_advance_fn *kernel = (vcosim_advance_fn *)m->kernel;
    kernel(x, u, m->packed, y, s, VC_TERRAIN_HEIGHT, VC_TERRAIN_FRICTION, VC_TERRAIN_ROWS,
           VC_TERRAIN_COLS, VC_TERRAIN_GRID, n);
}

/* Whether the CPU (and the operating system, which must save the AVX registers) runs code of
   the x86-64-v3 level: AVX, AVX2, BMI1, BMI2, F16C, FMA, LZCNT, MOVBE. Read with cpuid here
   rather than with __builtin_cpu_supports, whose runtime (compiler-rt) would bring its own
   sin, cos and log in place of the C library's, which the in-process kernel calls. */
static int has_x86_64_v3(void) {
    unsigned int a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d)) return 0;
    const unsigned int leaf1 = (1u << 12) | (1u << 22) | (1u << 27) | (1u << 28) | (1u << 29);
    if ((c & leaf1) != leaf1) return 0; /* FMA, MOVBE, OSXSAVE, AVX, F16C */
    unsigned int low, high;
    __asm__ volatile("xgetbv" : "=a"(low), "=d"(high) : "c"(0));
    if ((low & 6u) != 6u) return 0; /* the OS saves the XMM and YMM registers */
    if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return 0;
    const unsigned int leaf7 = (1u << 3) | (1u << 5) | (1u << 8);
    if ((b & leaf7) != leaf7) return 0; /* BMI1, AVX2, BMI2 */
    if (!__get_cpuid(0x80000001u, &a, &b, &c, &d)) return 0;
    return (c & (1u << 5)) != 0; /* LZCNT */
}

/* The best kernel this CPU runs (vehicle.h). */
static vcosim_advance_fn *choose_kernel(const char **name) {
    const char *wanted = getenv("VCOSIM_FMU_KERNEL");
    if ((wanted == NULL || strcmp(wanted, "x86-64") != 0) && has_x86_64_v3()) {
        *name = "x86-64-v3";
        return vcosim_advance_x86_64_v3;
    }
    *name = "x86-64";
    return vcosim_advance_x86_64;
}

/* The terrain's height at (x, y), as the kernel samples it. */
static double ground(double x, double y) {
    double sample[4];
    vcosim_sample_terrain(VC_TERRAIN_HEIGHT, VC_TERRAIN_FRICTION, VC_TERRAIN_ROWS,
                          VC_TERRAIN_COLS, VC_TERRAIN_GRID, x, y, sample);
    return sample[0];
}

/* Vehicle(params, engine_running=...): released at rest, settled for 2 s with the brakes
   on (the engine cranked and idling meanwhile when asked), then put at the origin at time 0
   with outputs from one step on a copy. As vcosim.vehicle.vehicle.Vehicle._settle; 0 when
   it does not stand on its wheels. */
static int settle(vc_model *m) {
    vc_state *now = &m->now;
    double held[VC_N_INPUTS], probe[VC_N_STATES], scratch[VC_N_SCRATCH];
    memcpy(now->x, VC_INITIAL_STATE, sizeof now->x);
    now->x[VC_X_FUEL] = m->packed[VC_P_INITIAL_FUEL];
    memcpy(now->u, VC_INITIAL_INPUTS, sizeof now->u);
    memset(now->y, 0, sizeof now->y);
    memset(now->s, 0, sizeof now->s);
    memcpy(held, now->u, sizeof held);
    held[VC_U_BRAKE] = held[VC_U_PARKINGBRAKE] = 1.0;
    if (m->engine_running) {
        held[VC_U_IGNITION] = 3.0;
        advance(m, now->x, held, now->y, now->s, VC_SETTLE_STEPS / 2);
        held[VC_U_IGNITION] = now->u[VC_U_IGNITION] = 2.0;
    }
    advance(m, now->x, held, now->y, now->s, VC_SETTLE_STEPS);
    int finite = 1, standing = 0;
    for (int i = 0; i < VC_N_STATES; i++) finite &= isfinite(now->x[i]) != 0;
    for (int k = 0; k < 4; k++) standing |= now->y[VC_Y_WHEEL + 5 + k * VC_WHEEL_BLOCK] > 0.0;
    if (!(finite && standing)) return 0;
    /* at the origin's ground height: the height there less the height under the car */
    now->x[VC_X_POS + 2] += ground(0.0, 0.0) - ground(now->x[VC_X_POS], now->x[VC_X_POS + 1]);
    now->x[VC_X_POS] = now->x[VC_X_POS + 1] = 0.0;
    now->x[VC_X_STEP] = 0.0;
    double time = now->x[VC_X_STEP] * VC_DT;
    memcpy(probe, now->x, sizeof probe);
    memcpy(scratch, now->s, sizeof scratch);
    advance(m, probe, now->u, now->y, scratch, 1);
    now->y[VC_Y_TIME] = time;
    return 1;
}

/* _make_vehicle: a settled vehicle, then the gearbox and the held inputs. */
static int make_vehicle(vc_model *m) {
    if (!settle(m)) return 0;
    m->now.u[VC_U_AUTOMATIC] = m->automatic ? 1.0 : 0.0;
    for (int j = 0; j < VC_N_FMU_INPUTS; j++) m->now.u[VC_INPUT_SLOT[j]] = m->now.values[j];
    m->now.changed = 0;
    return 1;
}

void vc_init(vc_model *m, vc_logger log, void *log_env) {
    memset(m, 0, sizeof *m);
    m->log = log;
    m->log_env = log_env;
    memcpy(m->packed, VC_PACKED, sizeof m->packed);
    memcpy(m->parameters, VC_PARAMETER_DEFAULT, sizeof m->parameters);
    memcpy(m->now.values, VC_INPUT_START, sizeof m->now.values);
    const char *level = NULL;
    m->kernel = (void *)choose_kernel(&level);
    say(m, VC_LOG_INFO, "kernel compiled for %s", level);
    m->automatic = VC_AUTOMATIC;
    m->engine_running = 1;
    m->step_size = -1.0; /* no step size checked yet (0 would pass unchecked) */
    make_vehicle(m); /* the built-in vehicle stands: vcosim fmu checked it */
}

int vc_kind(unsigned int vr) {
    if (vr == VC_VR_TIME || (vr >= VC_VR_PARAMETERS && vr < VC_VR_FLAGS)) return VC_REAL;
    if (vr >= VC_VR_FLAGS && vr < VC_VR_INPUTS) return VC_BOOLEAN;
    if (vr >= VC_VR_INPUTS && vr < VC_VR_OUTPUTS) return VC_INPUT_KIND[vr - VC_VR_INPUTS];
    if (vr >= VC_VR_OUTPUTS && vr < VC_VR_END) return VC_REAL;
    return VC_NONE;
}

double vc_time(const vc_model *m) { return m->now.x[VC_X_STEP] * VC_DT; }

int vc_get(const vc_model *m, unsigned int vr, double *value) {
    if (vr == VC_VR_TIME) {
        *value = vc_time(m);
    } else if (vr >= VC_VR_PARAMETERS && vr < VC_VR_FLAGS) {
        *value = m->parameters[vr - VC_VR_PARAMETERS];
    } else if (vr == VC_VR_FLAGS) {
        *value = m->automatic;
    } else if (vr == VC_VR_FLAGS + 1) {
        *value = m->engine_running;
    } else if (vr >= VC_VR_INPUTS && vr < VC_VR_OUTPUTS) {
        *value = m->now.values[vr - VC_VR_INPUTS];
    } else if (vr >= VC_VR_OUTPUTS && vr < VC_VR_END) {
        *value = m->now.y[VC_OUTPUT_INDEX[vr - VC_VR_OUTPUTS]];
    } else {
        say(m, VC_LOG_ERROR, "no variable has the value reference %u", vr);
        return VC_ERROR;
    }
    return VC_OK;
}

int vc_set(vc_model *m, unsigned int vr, double value, int initializing) {
    if (vr >= VC_VR_INPUTS && vr < VC_VR_OUTPUTS) {
        int j = (int)(vr - VC_VR_INPUTS);
        if (!isfinite(value)) {
            say(m, VC_LOG_WARNING, "input %s = %g refused: not a finite number", VC_INPUT_NAMES[j],
                value);
            return VC_WARNING;
        }
        m->now.values[j] = value;
        m->now.changed = 1;
        return VC_OK;
    }
    if (vr >= VC_VR_PARAMETERS && vr < VC_VR_INPUTS) {
        if (!initializing) {
            say(m, VC_LOG_ERROR,
                "parameter (value reference %u) set outside initialization: parameters are "
                "fixed once the vehicle is built",
                vr);
            return VC_ERROR;
        }
        if (vr < VC_VR_FLAGS) m->parameters[vr - VC_VR_PARAMETERS] = value;
        else if (vr == VC_VR_FLAGS) m->automatic = value != 0.0;
        else m->engine_running = value != 0.0;
        return VC_OK;
    }
    if (vr == VC_VR_TIME || (vr >= VC_VR_OUTPUTS && vr < VC_VR_END)) {
        say(m, VC_LOG_ERROR, "value reference %u is an output: it cannot be set", vr);
        return VC_ERROR;
    }
    say(m, VC_LOG_ERROR, "no variable has the value reference %u", vr);
    return VC_ERROR;
}

/* A number as pydantic's messages write their bounds: 1 rather than 1.0. */
static void bound_text(char *out, size_t size, double value) {
    snprintf(out, size, "%.17g", value);
    for (int digits = 1; digits <= 17; digits++) { /* the shortest text that reads back */
        snprintf(out, size, "%.*g", digits, value);
        if (strtod(out, NULL) == value) break;
    }
}

/* The problems of the changed parameters, as VehicleParams' validation and the numbers'
   rule of a parameter file (config.number_problems) word them. */
static int check_parameters(const vc_model *m, char *why, size_t size) {
    size_t used = 0;
    int problems = 0;
    why[0] = '\0';
    for (int k = 0; k < VC_N_PARAMETERS; k++) {
        double v = m->parameters[k];
        if (v == VC_PARAMETER_DEFAULT[k]) continue;
        char bound[40], problem[160];
        if (!isfinite(v)) {
            snprintf(problem, sizeof problem, "Input should be a finite number");
        } else if (fabs(v) > VC_LARGEST_NUMBER) { /* the rule of every number a file gives */
            snprintf(problem, sizeof problem, "%g " VC_TOO_LARGE, v);
        } else if (v != 0.0 && fabs(v) < VC_SMALLEST_NUMBER) {
            snprintf(problem, sizeof problem, "%g " VC_TOO_SMALL, v);
        } else if (VC_PARAMETER_OPEN_LOW[k] ? !(v > VC_PARAMETER_LOW[k])
                                            : !(v >= VC_PARAMETER_LOW[k])) {
            bound_text(bound, sizeof bound, VC_PARAMETER_LOW[k]);
            snprintf(problem, sizeof problem, "Input should be greater than %s%s",
                     VC_PARAMETER_OPEN_LOW[k] ? "" : "or equal to ", bound);
        } else if (!(v <= VC_PARAMETER_HIGH[k])) {
            bound_text(bound, sizeof bound, VC_PARAMETER_HIGH[k]);
            snprintf(problem, sizeof problem, "Input should be less than or equal to %s", bound);
        } else {
            continue;
        }
        int n = snprintf(why + used, size - used, "%s%s: %s", problems ? "; " : "",
                         VC_PARAMETER_NAMES[k], problem);
        if (n > 0) used += (size_t)n < size - used ? (size_t)n : size - used - 1;
        problems++;
    }
    return problems;
}

/* The packed parameters with the master's changes, as VehicleParams.pack derives them. */
static void apply_parameters(vc_model *m) {
    const double *par = m->parameters;
    memcpy(m->packed, VC_PACKED, sizeof m->packed);
    for (int k = 0; k < VC_N_PARAMETERS; k++) {
        if (VC_PARAMETER_FIELD[k] >= 0 && par[k] != VC_PARAMETER_DEFAULT[k])
            m->packed[VC_PARAMETER_FIELD[k]] = par[k];
    }
    if (par[VC_PAR_CHASSIS_MASS] != VC_PARAMETER_DEFAULT[VC_PAR_CHASSIS_MASS] ||
        par[VC_PAR_ENGINE_MASS] != VC_PARAMETER_DEFAULT[VC_PAR_ENGINE_MASS]) {
        double body[6];
        vcosim_body_properties(par[VC_PAR_CHASSIS_MASS], par[VC_PAR_ENGINE_MASS], VC_BODY[0],
                               VC_BODY[1], VC_BODY[2], VC_BODY[3], VC_BODY[4], VC_BODY[5], body);
        for (int i = 0; i < 6; i++) m->packed[VC_BODY_FIELD[i]] = body[i];
    }
    if (par[VC_PAR_BRAKE_FRONT] != VC_PARAMETER_DEFAULT[VC_PAR_BRAKE_FRONT] ||
        par[VC_PAR_BRAKE_REAR] != VC_PARAMETER_DEFAULT[VC_PAR_BRAKE_REAR]) {
        double brakes[2];
        vcosim_brake_torques(par[VC_PAR_BRAKE_FRONT], par[VC_PAR_BRAKE_REAR], VC_BRAKE_SHARE,
                             brakes);
        m->packed[VC_P_BRAKE_F] = brakes[0];
        m->packed[VC_P_BRAKE_R] = brakes[1];
    }
}

int vc_exit_initialization(vc_model *m) {
    char why[400];
    if (check_parameters(m, why, sizeof why)) {
        snprintf(m->failed, sizeof m->failed, "parameters refused: %s", why);
    } else if (!VC_TERRAIN_FLAT &&
               (m->parameters[VC_PAR_CHASSIS_MASS] != VC_PARAMETER_DEFAULT[VC_PAR_CHASSIS_MASS] ||
                m->parameters[VC_PAR_ENGINE_MASS] != VC_PARAMETER_DEFAULT[VC_PAR_ENGINE_MASS])) {
        snprintf(m->failed, sizeof m->failed,
                 "parameters refused: body.chassis_mass and body.engine_mass are fixed in a "
                 "vehicle FMU built with a terrain (they place the car on the ground under "
                 "its wheels); build it with a vehicle TOML of these masses instead");
    } else {
        apply_parameters(m);
        if (!make_vehicle(m))
            snprintf(m->failed, sizeof m->failed,
                     "parameters refused: the vehicle does not stand on its wheels after "
                     "settling for 2 s: its springs, dampers or tyres are too stiff for its "
                     "masses at the 0.5 ms step, or there is no ground under it");
    }
    if (m->failed[0]) {
        say(m, VC_LOG_ERROR, "%s", m->failed);
        return VC_ERROR;
    }
    return VC_OK;
}

int vc_do_step(vc_model *m, double step_size) {
    if (step_size != m->step_size) { /* a new step size: check it once */
        double n = round(step_size / VC_DT);
        if (!(n >= 1.0 && n < 9.0e15 &&
              fabs(n * VC_DT - step_size) <= VC_STEP_TOLERANCE * VC_DT)) {
            say(m, VC_LOG_ERROR,
                "communication step %.17g s is not a multiple of the vehicle's 0.5 ms "
                "physics step; use 0.0005, 0.001, 0.005, ...",
                step_size);
            return VC_DISCARD;
        }
        m->step_size = step_size;
        m->step_count = (long long)n;
    }
    if (m->failed[0]) {
        say(m, VC_LOG_ERROR, "%s", m->failed);
        return VC_ERROR;
    }
    vc_state *now = &m->now;
    if (now->changed) {
        for (int j = 0; j < VC_N_FMU_INPUTS; j++) now->u[VC_INPUT_SLOT[j]] = now->values[j];
        now->changed = 0;
    }
    advance(m, now->x, now->u, now->y, now->s, m->step_count);
    return VC_OK;
}

size_t vc_serialized_size(void) { return sizeof VC_STATE_TAG + sizeof(vc_state); }

void vc_serialize(const vc_state *state, char *bytes) {
    memcpy(bytes, VC_STATE_TAG, sizeof VC_STATE_TAG);
    memcpy(bytes + sizeof VC_STATE_TAG, state, sizeof *state);
}

int vc_deserialize(vc_model *m, const char *bytes, size_t size, vc_state *state) {
    if (bytes == NULL || size != vc_serialized_size() ||
        memcmp(bytes, VC_STATE_TAG, sizeof VC_STATE_TAG) != 0) {
        say(m, VC_LOG_ERROR,
            "not a serialized state of this vehicle FMU (%zu bytes; expected %zu starting "
            "with \"%s\")",
            size, vc_serialized_size(), VC_STATE_TAG);
        return VC_ERROR;
    }
    memcpy(state, bytes + sizeof VC_STATE_TAG, sizeof *state);
    return VC_OK;
}
