/* The vehicle FMU's model, independent of the FMI version: variables, life cycle, state.

   What vcosim.fmi.vehicle.VehicleSlave does in Python, over the compiled kernel: the inputs
   are held between steps, a communication step must be a whole number of 0.5 ms physics
   steps, non-finite inputs are refused, and the parameters a master sets are checked
   against their ranges and applied when it leaves initialization (the vehicle is then
   built and settled again, at rest at the origin, time 0). */
#ifndef VCOSIM_VEHICLE_H
#define VCOSIM_VEHICLE_H

#include <stddef.h>

enum { VC_OK = 0, VC_WARNING = 1, VC_DISCARD = 2, VC_ERROR = 3 };
enum { VC_REAL = 0, VC_INTEGER = 1, VC_BOOLEAN = 2, VC_NONE = -1 };
enum { VC_LOG_INFO = 0, VC_LOG_WARNING = 1, VC_LOG_ERROR = 2 };

#include "vcosim_model.h" /* generated for each build: the vehicle and its variables */

typedef void (*vc_logger)(void *env, int level, const char *message);

/* Everything that determines the vehicle's future: copied whole by get/set FMU state. */
typedef struct {
    double x[VC_N_STATES];
    double u[VC_N_INPUTS];
    double y[VC_N_OUTPUTS];
    double s[VC_N_SCRATCH];
    double values[VC_N_FMU_INPUTS]; /* the inputs as the master set them */
    int changed;                    /* inputs set since the last step */
} vc_state;

typedef struct {
    vc_state now;
    double packed[VC_N_PACKED];
    double parameters[VC_N_PARAMETERS];
    int automatic;
    int engine_running;
    double step_size; /* the last communication step and its physics steps */
    long long step_count;
    char failed[512]; /* why the model refuses to step (refused parameters), or "" */
    vc_logger log;
    void *log_env;
    void *kernel; /* the compiled advance for this CPU (vcosim_advance_fn) */
} vc_model;

/* A new model with the built-in parameters, settled; its outputs are readable at once. The
   kernel is the x86-64-v3 one where the CPU has AVX2 and the rest of that level, else the
   generic one; VCOSIM_FMU_KERNEL=x86-64 in the environment insists on the generic one. */
void vc_init(vc_model *m, vc_logger log, void *log_env);
/* The kind of the variable with this value reference, or VC_NONE. */
int vc_kind(unsigned int vr);
/* Read a variable (VC_ERROR for an unknown reference). */
int vc_get(const vc_model *m, unsigned int vr, double *value);
/* Write a variable: inputs at any time, parameters only while initializing. */
int vc_set(vc_model *m, unsigned int vr, double value, int initializing);
/* Leave initialization: check and apply the parameters, build and settle the vehicle. */
int vc_exit_initialization(vc_model *m);
/* Advance step_size seconds (VC_DISCARD: not a multiple of the physics step). */
int vc_do_step(vc_model *m, double step_size);
/* The time of the vehicle (s), from its step counter. */
double vc_time(const vc_model *m);

/* Serialized state: a tag and version, then the vc_state. */
#define VC_STATE_TAG "vcosim-vehicle-state-1"
size_t vc_serialized_size(void);
void vc_serialize(const vc_state *state, char *bytes);
int vc_deserialize(vc_model *m, const char *bytes, size_t size, vc_state *state);

#endif
