/* The FMI 2.0 co-simulation API around the vehicle model (vehicle.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmi2Functions.h"
#include "registry.h"
#include "vehicle.h"

typedef struct {
    vc_model model;
    fmi2CallbackLogger logger;
    fmi2ComponentEnvironment environment;
    char name[128];
    int mode;
    int logging;
} instance;

static const fmi2Status STATUS[] = {fmi2OK, fmi2Warning, fmi2Discard, fmi2Error};

static void log_to_master(void *env, int level, const char *message) {
    instance *c = env;
    if (c->logger == NULL) return;
    fmi2Status status = level == VC_LOG_ERROR ? fmi2Error
                        : level == VC_LOG_WARNING ? fmi2Warning
                                                  : fmi2OK;
    const char *category = level == VC_LOG_ERROR     ? "logStatusError"
                           : level == VC_LOG_WARNING ? "logStatusWarning"
                                                     : "logAll";
    if (level == VC_LOG_INFO && !c->logging) return;
    c->logger(c->environment, c->name, status, category, message);
}

/* The instance behind c if it is live and the call is allowed in its mode (a bit set). */
static instance *checked(fmi2Component c, const char *call, int modes) {
    if (!vc_known(c, 0)) return NULL;
    instance *self = c;
    char why[100], text[200];
    if (!vc_mode_allows(self->mode, modes, why, sizeof why)) {
        snprintf(text, sizeof text, "%s is %s", call, why);
        log_to_master(self, VC_LOG_ERROR, text);
        return NULL;
    }
    return self;
}

const char *fmi2GetTypesPlatform(void) { return fmi2TypesPlatform; }
const char *fmi2GetVersion(void) { return fmi2Version; }

fmi2Component fmi2Instantiate(fmi2String instanceName, fmi2Type fmuType, fmi2String fmuGUID,
                              fmi2String fmuResourceLocation,
                              const fmi2CallbackFunctions *functions, fmi2Boolean visible,
                              fmi2Boolean loggingOn) {
    (void)fmuResourceLocation;
    (void)visible;
    fmi2CallbackLogger logger = functions != NULL ? functions->logger : NULL;
    fmi2ComponentEnvironment env = functions != NULL ? functions->componentEnvironment : NULL;
    const char *name = instanceName != NULL ? instanceName : "";
    const char *refusal = NULL;
    if (fmuType != fmi2CoSimulation) refusal = "this FMU is for co-simulation only";
    else if (fmuGUID == NULL || strcmp(fmuGUID, VC_GUID) != 0)
        refusal = "the GUID is not this FMU's (a model description of another build?)";
    if (refusal != NULL) {
        if (logger != NULL) logger(env, name, fmi2Error, "logStatusError", refusal);
        return NULL;
    }
    instance *self = calloc(1, sizeof *self);
    if (self == NULL) return NULL;
    self->logger = logger;
    self->environment = env;
    snprintf(self->name, sizeof self->name, "%s", name);
    self->logging = loggingOn != 0;
    self->mode = INSTANTIATED;
    if (!vc_register(self)) {
        if (logger != NULL)
            logger(env, name, fmi2Error, "logStatusError", "too many instances in one process");
        free(self);
        return NULL;
    }
    vc_init(&self->model, log_to_master, self);
    return self;
}

void fmi2FreeInstance(fmi2Component c) {
    if (vc_known(c, 1)) free(c); /* a second free, or a foreign pointer: nothing happens */
}

fmi2Status fmi2SetDebugLogging(fmi2Component c, fmi2Boolean loggingOn, size_t nCategories,
                               const fmi2String categories[]) {
    (void)nCategories;
    (void)categories;
    instance *self = checked(c, "fmi2SetDebugLogging", ANY_MODE);
    if (self == NULL) return fmi2Error;
    self->logging = loggingOn != 0;
    return fmi2OK;
}

fmi2Status fmi2SetupExperiment(fmi2Component c, fmi2Boolean toleranceDefined,
                               fmi2Real tolerance, fmi2Real startTime,
                               fmi2Boolean stopTimeDefined, fmi2Real stopTime) {
    (void)toleranceDefined;
    (void)tolerance;
    (void)startTime;
    (void)stopTimeDefined;
    (void)stopTime;
    return checked(c, "fmi2SetupExperiment", BIT(INSTANTIATED)) ? fmi2OK : fmi2Error;
}

fmi2Status fmi2EnterInitializationMode(fmi2Component c) {
    instance *self = checked(c, "fmi2EnterInitializationMode", BIT(INSTANTIATED));
    if (self == NULL) return fmi2Error;
    self->mode = INITIALIZING;
    return fmi2OK;
}

fmi2Status fmi2ExitInitializationMode(fmi2Component c) {
    instance *self = checked(c, "fmi2ExitInitializationMode", BIT(INITIALIZING));
    if (self == NULL) return fmi2Error;
    if (vc_exit_initialization(&self->model) != VC_OK) {
        self->mode = FAILED;
        return fmi2Error;
    }
    self->mode = STEPPING;
    return fmi2OK;
}

fmi2Status fmi2Terminate(fmi2Component c) {
    instance *self = checked(c, "fmi2Terminate", BIT(STEPPING) | BIT(FAILED));
    if (self == NULL) return fmi2Error;
    self->mode = TERMINATED;
    return fmi2OK;
}

fmi2Status fmi2Reset(fmi2Component c) {
    instance *self = checked(c, "fmi2Reset", ANY_MODE);
    if (self == NULL) return fmi2Error;
    vc_init(&self->model, log_to_master, self);
    self->mode = INSTANTIATED;
    return fmi2OK;
}

/* Get or set n values of one FMI type, each checked against its variable's kind. */
static fmi2Status get_values(fmi2Component c, const char *call, int kind,
                             const fmi2ValueReference vr[], size_t n, double *out) {
    instance *self = checked(c, call, ANY_MODE);
    if (self == NULL) return fmi2Error;
    for (size_t i = 0; i < n; i++) {
        if (vc_kind(vr[i]) != kind) {
            char text[160];
            snprintf(text, sizeof text, "%s: value reference %u is no variable of this type",
                     call, vr[i]);
            log_to_master(self, VC_LOG_ERROR, text);
            return fmi2Error;
        }
        vc_get(&self->model, vr[i], &out[i]);
    }
    return fmi2OK;
}

static fmi2Status set_values(fmi2Component c, const char *call, int kind,
                             const fmi2ValueReference vr[], size_t n, const double *in) {
    instance *self = checked(c, call, BIT(INSTANTIATED) | BIT(INITIALIZING) | BIT(STEPPING));
    if (self == NULL) return fmi2Error;
    int worst = VC_OK;
    for (size_t i = 0; i < n; i++) {
        if (vc_kind(vr[i]) != kind) {
            char text[160];
            snprintf(text, sizeof text, "%s: value reference %u is no variable of this type",
                     call, vr[i]);
            log_to_master(self, VC_LOG_ERROR, text);
            return fmi2Error;
        }
        int status = vc_set(&self->model, vr[i], in[i], self->mode != STEPPING);
        if (status > worst) worst = status;
    }
    return STATUS[worst];
}

/* NULL arrays with values to pass: refused, said, and nothing read or written. */
static int null_arrays(fmi2Component c, const char *call, size_t n, const void *vr,
                       const void *values) {
    if (n == 0 || (vr != NULL && values != NULL)) return 0;
    if (vc_known(c, 0)) {
        char text[160];
        snprintf(text, sizeof text, "%s: NULL value references or values", call);
        log_to_master(c, VC_LOG_ERROR, text);
    }
    return 1;
}

#define CHUNK 64

/* Integer and Boolean go through doubles, CHUNK values at a time. */
#define GET_CONVERTED(name, type, kind, convert)                                          \
    fmi2Status name(fmi2Component c, const fmi2ValueReference vr[], size_t nvr,          \
                    type value[]) {                                                      \
        if (null_arrays(c, #name, nvr, vr, value)) return fmi2Error;                     \
        if (nvr == 0) return get_values(c, #name, kind, vr, 0, NULL);                    \
        for (size_t done = 0; done < nvr; done += CHUNK) {                               \
            size_t n = nvr - done < CHUNK ? nvr - done : CHUNK;                          \
            double read[CHUNK];                                                          \
            fmi2Status status = get_values(c, #name, kind, vr + done, n, read);          \
            if (status != fmi2OK) return status;                                         \
            for (size_t i = 0; i < n; i++) value[done + i] = convert(read[i]);           \
        }                                                                                \
        return fmi2OK;                                                                   \
    }

#define SET_CONVERTED(name, type, kind, convert)                                          \
    fmi2Status name(fmi2Component c, const fmi2ValueReference vr[], size_t nvr,          \
                    const type value[]) {                                                \
        if (null_arrays(c, #name, nvr, vr, value)) return fmi2Error;                     \
        if (nvr == 0) return set_values(c, #name, kind, vr, 0, NULL);                    \
        fmi2Status worst = fmi2OK;                                                       \
        for (size_t done = 0; done < nvr; done += CHUNK) {                               \
            size_t n = nvr - done < CHUNK ? nvr - done : CHUNK;                          \
            double written[CHUNK];                                                       \
            for (size_t i = 0; i < n; i++) written[i] = convert(value[done + i]);        \
            fmi2Status status = set_values(c, #name, kind, vr + done, n, written);       \
            if (status > worst) worst = status;                                          \
            if (status > fmi2Warning) return status;                                     \
        }                                                                                \
        return worst;                                                                    \
    }

#define TO_INTEGER(v) ((fmi2Integer)(v))
#define TO_BOOLEAN(v) ((fmi2Boolean)((v) != 0.0))
#define FROM_INTEGER(v) ((double)(v))
#define FROM_BOOLEAN(v) ((v) ? 1.0 : 0.0)

fmi2Status fmi2GetReal(fmi2Component c, const fmi2ValueReference vr[], size_t nvr,
                       fmi2Real value[]) {
    if (null_arrays(c, "fmi2GetReal", nvr, vr, value)) return fmi2Error;
    return get_values(c, "fmi2GetReal", VC_REAL, vr, nvr, value);
}

fmi2Status fmi2SetReal(fmi2Component c, const fmi2ValueReference vr[], size_t nvr,
                       const fmi2Real value[]) {
    if (null_arrays(c, "fmi2SetReal", nvr, vr, value)) return fmi2Error;
    return set_values(c, "fmi2SetReal", VC_REAL, vr, nvr, value);
}

GET_CONVERTED(fmi2GetInteger, fmi2Integer, VC_INTEGER, TO_INTEGER)
GET_CONVERTED(fmi2GetBoolean, fmi2Boolean, VC_BOOLEAN, TO_BOOLEAN)
SET_CONVERTED(fmi2SetInteger, fmi2Integer, VC_INTEGER, FROM_INTEGER)
SET_CONVERTED(fmi2SetBoolean, fmi2Boolean, VC_BOOLEAN, FROM_BOOLEAN)

/* No variable is a String: any value reference is refused, none is fine. */
static fmi2Status no_strings(fmi2Component c, const char *call, const fmi2ValueReference vr[],
                             size_t nvr) {
    instance *self = checked(c, call, ANY_MODE);
    if (self == NULL) return fmi2Error;
    if (nvr == 0) return fmi2OK;
    char text[160];
    snprintf(text, sizeof text, "%s: value reference %u is no variable of this type", call,
             vr != NULL ? vr[0] : 0u);
    log_to_master(self, VC_LOG_ERROR, text);
    return fmi2Error;
}

fmi2Status fmi2GetString(fmi2Component c, const fmi2ValueReference vr[], size_t nvr,
                         fmi2String value[]) {
    (void)value;
    return no_strings(c, "fmi2GetString", vr, nvr);
}

fmi2Status fmi2SetString(fmi2Component c, const fmi2ValueReference vr[], size_t nvr,
                         const fmi2String value[]) {
    (void)value;
    return no_strings(c, "fmi2SetString", vr, nvr);
}

/* -- FMU state: a copy of the model's vc_state ------------------------------------------ */
fmi2Status fmi2GetFMUstate(fmi2Component c, fmi2FMUstate *FMUstate) {
    instance *self = checked(c, "fmi2GetFMUstate", ANY_MODE);
    if (self == NULL || FMUstate == NULL) return fmi2Error;
    vc_state *state = *FMUstate != NULL ? *FMUstate : malloc(sizeof *state);
    if (state == NULL) return fmi2Error;
    *state = self->model.now;
    *FMUstate = state;
    return fmi2OK;
}

fmi2Status fmi2SetFMUstate(fmi2Component c, fmi2FMUstate FMUstate) {
    instance *self = checked(c, "fmi2SetFMUstate", ANY_MODE);
    if (self == NULL || FMUstate == NULL) return fmi2Error;
    self->model.now = *(const vc_state *)FMUstate;
    self->model.now.changed = 1;
    return fmi2OK;
}

fmi2Status fmi2FreeFMUstate(fmi2Component c, fmi2FMUstate *FMUstate) {
    if (checked(c, "fmi2FreeFMUstate", ANY_MODE) == NULL || FMUstate == NULL) return fmi2Error;
    free(*FMUstate);
    *FMUstate = NULL;
    return fmi2OK;
}

fmi2Status fmi2SerializedFMUstateSize(fmi2Component c, fmi2FMUstate FMUstate, size_t *size) {
    if (checked(c, "fmi2SerializedFMUstateSize", ANY_MODE) == NULL || FMUstate == NULL ||
        size == NULL)
        return fmi2Error;
    *size = vc_serialized_size();
    return fmi2OK;
}

fmi2Status fmi2SerializeFMUstate(fmi2Component c, fmi2FMUstate FMUstate, fmi2Byte bytes[],
                                 size_t size) {
    instance *self = checked(c, "fmi2SerializeFMUstate", ANY_MODE);
    if (self == NULL || FMUstate == NULL || bytes == NULL) return fmi2Error;
    if (size < vc_serialized_size()) {
        log_to_master(self, VC_LOG_ERROR, "fmi2SerializeFMUstate: the buffer is too small");
        return fmi2Error;
    }
    vc_serialize(FMUstate, bytes);
    return fmi2OK;
}

fmi2Status fmi2DeSerializeFMUstate(fmi2Component c, const fmi2Byte serializedState[],
                                   size_t size, fmi2FMUstate *FMUstate) {
    instance *self = checked(c, "fmi2DeSerializeFMUstate", ANY_MODE);
    if (self == NULL || FMUstate == NULL) return fmi2Error;
    vc_state read;
    if (vc_deserialize(&self->model, serializedState, size, &read) != VC_OK) return fmi2Error;
    vc_state *state = *FMUstate != NULL ? *FMUstate : malloc(sizeof *state);
    if (state == NULL) return fmi2Error;
    *state = read;
    *FMUstate = state;
    return fmi2OK;
}

fmi2Status fmi2GetDirectionalDerivative(fmi2Component c, const fmi2ValueReference vUnknown[],
                                        size_t nUnknown, const fmi2ValueReference vKnown[],
                                        size_t nKnown, const fmi2Real dvKnown[],
                                        fmi2Real dvUnknown[]) {
    (void)vUnknown, (void)nUnknown, (void)vKnown, (void)nKnown, (void)dvKnown, (void)dvUnknown;
    instance *self = checked(c, "fmi2GetDirectionalDerivative", ANY_MODE);
    if (self != NULL)
        log_to_master(self, VC_LOG_ERROR, "fmi2GetDirectionalDerivative is not provided");
    return fmi2Error;
}

/* -- co-simulation ---------------------------------------------------------------------- */
fmi2Status fmi2SetRealInputDerivatives(fmi2Component c, const fmi2ValueReference vr[],
                                       size_t nvr, const fmi2Integer order[],
                                       const fmi2Real value[]) {
    (void)vr, (void)nvr, (void)order, (void)value;
    instance *self = checked(c, "fmi2SetRealInputDerivatives", ANY_MODE);
    if (self != NULL)
        log_to_master(self, VC_LOG_ERROR, "inputs are held over a step: no input derivatives");
    return fmi2Error;
}

fmi2Status fmi2GetRealOutputDerivatives(fmi2Component c, const fmi2ValueReference vr[],
                                        size_t nvr, const fmi2Integer order[],
                                        fmi2Real value[]) {
    (void)vr, (void)nvr, (void)order, (void)value;
    instance *self = checked(c, "fmi2GetRealOutputDerivatives", ANY_MODE);
    if (self != NULL) log_to_master(self, VC_LOG_ERROR, "no output derivatives are provided");
    return fmi2Error;
}

fmi2Status fmi2DoStep(fmi2Component c, fmi2Real currentCommunicationPoint,
                      fmi2Real communicationStepSize,
                      fmi2Boolean noSetFMUStatePriorToCurrentPoint) {
    (void)currentCommunicationPoint;
    (void)noSetFMUStatePriorToCurrentPoint;
    instance *self = checked(c, "fmi2DoStep", BIT(STEPPING));
    if (self == NULL) return fmi2Error;
    return STATUS[vc_do_step(&self->model, communicationStepSize)];
}

fmi2Status fmi2CancelStep(fmi2Component c) {
    instance *self = checked(c, "fmi2CancelStep", ANY_MODE);
    if (self != NULL) log_to_master(self, VC_LOG_ERROR, "steps end before doStep returns");
    return fmi2Error;
}

static fmi2Status no_status(fmi2Component c, const char *call) {
    instance *self = checked(c, call, ANY_MODE);
    if (self != NULL) log_to_master(self, VC_LOG_ERROR, "steps are never pending: no status");
    return fmi2Discard;
}

fmi2Status fmi2GetStatus(fmi2Component c, const fmi2StatusKind s, fmi2Status *value) {
    (void)s, (void)value;
    return no_status(c, "fmi2GetStatus");
}

fmi2Status fmi2GetRealStatus(fmi2Component c, const fmi2StatusKind s, fmi2Real *value) {
    instance *self = checked(c, "fmi2GetRealStatus", ANY_MODE);
    if (self == NULL || value == NULL) return fmi2Error;
    if (s == fmi2LastSuccessfulTime) {
        *value = vc_time(&self->model);
        return fmi2OK;
    }
    return fmi2Discard;
}

fmi2Status fmi2GetIntegerStatus(fmi2Component c, const fmi2StatusKind s, fmi2Integer *value) {
    (void)s, (void)value;
    return no_status(c, "fmi2GetIntegerStatus");
}

fmi2Status fmi2GetBooleanStatus(fmi2Component c, const fmi2StatusKind s, fmi2Boolean *value) {
    (void)s, (void)value;
    return no_status(c, "fmi2GetBooleanStatus");
}

fmi2Status fmi2GetStringStatus(fmi2Component c, const fmi2StatusKind s, fmi2String *value) {
    (void)s, (void)value;
    return no_status(c, "fmi2GetStringStatus");
}
