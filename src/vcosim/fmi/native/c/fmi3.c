/* The FMI 3.0 co-simulation API around the vehicle model (vehicle.h). Every function of the
   standard is exported; those for features the FMU does not have (model exchange, clocks,
   other variable types, derivatives) are fmi3_absent.c's and refuse with a logged reason. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmi3Functions.h"
#include "registry.h"
#include "vehicle.h"

typedef struct {
    vc_model model;
    fmi3LogMessageCallback logger;
    fmi3InstanceEnvironment environment;
    int mode;
    int logging;
} instance;

static const fmi3Status STATUS[] = {fmi3OK, fmi3Warning, fmi3Discard, fmi3Error};

static void log_to_master(void *env, int level, const char *message) {
    instance *c = env;
    if (c->logger == NULL || (level == VC_LOG_INFO && !c->logging)) return;
    fmi3Status status = level == VC_LOG_ERROR     ? fmi3Error
                        : level == VC_LOG_WARNING ? fmi3Warning
                                                  : fmi3OK;
    const char *category = level == VC_LOG_ERROR     ? "logStatusError"
                           : level == VC_LOG_WARNING ? "logStatusWarning"
                                                     : "logAll";
    c->logger(c->environment, status, category, message);
}

static void refuse(instance *self, const char *call, const char *why) {
    char text[300];
    snprintf(text, sizeof text, "%s: %s", call, why);
    log_to_master(self, VC_LOG_ERROR, text);
}

/* The instance behind c if it is live and the call is allowed in its mode (a bit set). */
static instance *checked(fmi3Instance c, const char *call, int modes) {
    if (!vc_known(c, 0)) return NULL;
    instance *self = c;
    char why[100];
    if (!vc_mode_allows(self->mode, modes, why, sizeof why)) {
        refuse(self, call, why);
        return NULL;
    }
    return self;
}

fmi3Instance fmi3InstantiateCoSimulation(
    fmi3String instanceName, fmi3String instantiationToken, fmi3String resourcePath,
    fmi3Boolean visible, fmi3Boolean loggingOn, fmi3Boolean eventModeUsed,
    fmi3Boolean earlyReturnAllowed, const fmi3ValueReference requiredIntermediateVariables[],
    size_t nRequiredIntermediateVariables, fmi3InstanceEnvironment instanceEnvironment,
    fmi3LogMessageCallback logMessage, fmi3IntermediateUpdateCallback intermediateUpdate) {
    (void)instanceName, (void)resourcePath, (void)visible, (void)earlyReturnAllowed;
    (void)requiredIntermediateVariables, (void)intermediateUpdate;
    const char *refusal = NULL;
    if (instantiationToken == NULL || strcmp(instantiationToken, VC_GUID) != 0)
        refusal = "the instantiation token is not this FMU's (a model description of another "
                  "build?)";
    else if (eventModeUsed) refusal = "the FMU has no event mode";
    else if (nRequiredIntermediateVariables > 0) refusal = "the FMU has no intermediate update";
    if (refusal != NULL) {
        if (logMessage != NULL)
            logMessage(instanceEnvironment, fmi3Error, "logStatusError", refusal);
        return NULL;
    }
    instance *self = calloc(1, sizeof *self);
    if (self == NULL) return NULL;
    self->logger = logMessage;
    self->environment = instanceEnvironment;
    self->logging = loggingOn;
    self->mode = INSTANTIATED;
    if (!vc_register(self)) {
        if (logMessage != NULL)
            logMessage(instanceEnvironment, fmi3Error, "logStatusError",
                       "too many instances in one process");
        free(self);
        return NULL;
    }
    vc_init(&self->model, log_to_master, self);
    return self;
}

const char *fmi3GetVersion(void) { return fmi3Version; }

void fmi3FreeInstance(fmi3Instance c) {
    if (vc_known(c, 1)) free(c); /* a second free, or a foreign pointer: nothing happens */
}

fmi3Status fmi3SetDebugLogging(fmi3Instance c, fmi3Boolean loggingOn, size_t nCategories,
                               const fmi3String categories[]) {
    (void)nCategories, (void)categories;
    instance *self = checked(c, "fmi3SetDebugLogging", ANY_MODE);
    if (self == NULL) return fmi3Error;
    self->logging = loggingOn;
    return fmi3OK;
}

fmi3Status fmi3EnterInitializationMode(fmi3Instance c, fmi3Boolean toleranceDefined,
                                       fmi3Float64 tolerance, fmi3Float64 startTime,
                                       fmi3Boolean stopTimeDefined, fmi3Float64 stopTime) {
    (void)toleranceDefined, (void)tolerance, (void)startTime, (void)stopTimeDefined;
    (void)stopTime;
    instance *self = checked(c, "fmi3EnterInitializationMode", BIT(INSTANTIATED));
    if (self == NULL) return fmi3Error;
    self->mode = INITIALIZING;
    return fmi3OK;
}

fmi3Status fmi3ExitInitializationMode(fmi3Instance c) {
    instance *self = checked(c, "fmi3ExitInitializationMode", BIT(INITIALIZING));
    if (self == NULL) return fmi3Error;
    if (vc_exit_initialization(&self->model) != VC_OK) {
        self->mode = FAILED;
        return fmi3Error;
    }
    self->mode = STEPPING;
    return fmi3OK;
}

fmi3Status fmi3Terminate(fmi3Instance c) {
    instance *self = checked(c, "fmi3Terminate", BIT(STEPPING) | BIT(FAILED));
    if (self == NULL) return fmi3Error;
    self->mode = TERMINATED;
    return fmi3OK;
}

fmi3Status fmi3Reset(fmi3Instance c) {
    instance *self = checked(c, "fmi3Reset", ANY_MODE);
    if (self == NULL) return fmi3Error;
    vc_init(&self->model, log_to_master, self);
    self->mode = INSTANTIATED;
    return fmi3OK;
}

/* -- variables ------------------------------------------------------------------------ */
static fmi3Status get_values(fmi3Instance c, const char *call, int kind,
                             const fmi3ValueReference vr[], size_t n, double *out,
                             size_t n_values) {
    instance *self = checked(c, call, ANY_MODE);
    if (self == NULL) return fmi3Error;
    if (n > 0 && (vr == NULL || out == NULL || n_values != n)) {
        refuse(self, call, "NULL arrays, or not one value per value reference");
        return fmi3Error;
    }
    for (size_t i = 0; i < n; i++) {
        if (vc_kind(vr[i]) != kind) {
            char text[100];
            snprintf(text, sizeof text, "value reference %u is no variable of this type", vr[i]);
            refuse(self, call, text);
            return fmi3Error;
        }
        vc_get(&self->model, vr[i], &out[i]);
    }
    return fmi3OK;
}

static fmi3Status set_values(fmi3Instance c, const char *call, int kind,
                             const fmi3ValueReference vr[], size_t n, const double *in,
                             size_t n_values) {
    instance *self = checked(c, call, BIT(INSTANTIATED) | BIT(INITIALIZING) | BIT(STEPPING));
    if (self == NULL) return fmi3Error;
    if (n > 0 && (vr == NULL || in == NULL || n_values != n)) {
        refuse(self, call, "NULL arrays, or not one value per value reference");
        return fmi3Error;
    }
    int worst = VC_OK;
    for (size_t i = 0; i < n; i++) {
        if (vc_kind(vr[i]) != kind || vr[i] == VC_VR_TIME) {
            char text[100];
            snprintf(text, sizeof text, "value reference %u is no variable of this type%s",
                     vr[i], vr[i] == VC_VR_TIME ? " that can be set" : "");
            refuse(self, call, text);
            return fmi3Error;
        }
        int status = vc_set(&self->model, vr[i], in[i], self->mode != STEPPING);
        if (status > worst) worst = status;
    }
    return STATUS[worst];
}

#define CHUNK 64

fmi3Status fmi3GetFloat64(fmi3Instance c, const fmi3ValueReference vr[], size_t nvr,
                          fmi3Float64 values[], size_t nValues) {
    return get_values(c, "fmi3GetFloat64", VC_REAL, vr, nvr, values, nValues);
}

fmi3Status fmi3SetFloat64(fmi3Instance c, const fmi3ValueReference vr[], size_t nvr,
                          const fmi3Float64 values[], size_t nValues) {
    return set_values(c, "fmi3SetFloat64", VC_REAL, vr, nvr, values, nValues);
}

/* Int32 and Boolean go through doubles, CHUNK values at a time. */
#define GET_CONVERTED(name, type, kind, convert)                                          \
    fmi3Status name(fmi3Instance c, const fmi3ValueReference vr[], size_t nvr,           \
                    type values[], size_t nValues) {                                     \
        if (nvr != nValues || (nvr > 0 && (vr == NULL || values == NULL)))               \
            return get_values(c, #name, kind, vr, nvr, NULL, nValues);                   \
        for (size_t done = 0; done < nvr; done += CHUNK) {                               \
            size_t n = nvr - done < CHUNK ? nvr - done : CHUNK;                          \
            double read[CHUNK];                                                          \
            fmi3Status status = get_values(c, #name, kind, vr + done, n, read, n);       \
            if (status != fmi3OK) return status;                                         \
            for (size_t i = 0; i < n; i++) values[done + i] = convert(read[i]);          \
        }                                                                                \
        return checked(c, #name, ANY_MODE) ? fmi3OK : fmi3Error;                         \
    }

#define SET_CONVERTED(name, type, kind, convert)                                          \
    fmi3Status name(fmi3Instance c, const fmi3ValueReference vr[], size_t nvr,           \
                    const type values[], size_t nValues) {                               \
        if (nvr != nValues || (nvr > 0 && (vr == NULL || values == NULL)))               \
            return set_values(c, #name, kind, vr, nvr, NULL, nValues);                   \
        fmi3Status worst = fmi3OK;                                                       \
        for (size_t done = 0; done < nvr; done += CHUNK) {                               \
            size_t n = nvr - done < CHUNK ? nvr - done : CHUNK;                          \
            double written[CHUNK];                                                       \
            for (size_t i = 0; i < n; i++) written[i] = convert(values[done + i]);       \
            fmi3Status status = set_values(c, #name, kind, vr + done, n, written, n);    \
            if (status > worst) worst = status;                                          \
            if (status > fmi3Warning) return status;                                     \
        }                                                                                \
        if (nvr == 0) return set_values(c, #name, kind, vr, 0, NULL, 0);                 \
        return worst;                                                                    \
    }

#define TO_INT32(v) ((fmi3Int32)(v))
#define TO_BOOL(v) ((v) != 0.0)
#define FROM_INT32(v) ((double)(v))
#define FROM_BOOL(v) ((v) ? 1.0 : 0.0)

GET_CONVERTED(fmi3GetInt32, fmi3Int32, VC_INTEGER, TO_INT32)
GET_CONVERTED(fmi3GetBoolean, fmi3Boolean, VC_BOOLEAN, TO_BOOL)
SET_CONVERTED(fmi3SetInt32, fmi3Int32, VC_INTEGER, FROM_INT32)
SET_CONVERTED(fmi3SetBoolean, fmi3Boolean, VC_BOOLEAN, FROM_BOOL)

/* Types no variable has: any value reference is refused, none is fine. */
fmi3Status fmi3_no_such(fmi3Instance c, const char *call, const fmi3ValueReference vr[],
                          size_t nvr) {
    instance *self = checked(c, call, ANY_MODE);
    if (self == NULL) return fmi3Error;
    if (nvr == 0) return fmi3OK;
    char text[100];
    snprintf(text, sizeof text, "value reference %u is no variable of this type",
             vr != NULL ? vr[0] : 0u);
    refuse(self, call, text);
    return fmi3Error;
}

fmi3Status fmi3_absent(fmi3Instance c, const char *call, const char *why) {
    instance *self = checked(c, call, ANY_MODE);
    if (self != NULL) refuse(self, call, why);
    return fmi3Error;
}

fmi3Status fmi3GetString(fmi3Instance c, const fmi3ValueReference vr[], size_t nvr,
                         fmi3String values[], size_t nValues) {
    (void)values, (void)nValues;
    return fmi3_no_such(c, "fmi3GetString", vr, nvr);
}

fmi3Status fmi3SetString(fmi3Instance c, const fmi3ValueReference vr[], size_t nvr,
                         const fmi3String values[], size_t nValues) {
    (void)values, (void)nValues;
    return fmi3_no_such(c, "fmi3SetString", vr, nvr);
}

/* -- FMU state: a copy of the model's vc_state ------------------------------------------ */
fmi3Status fmi3GetFMUState(fmi3Instance c, fmi3FMUState *FMUState) {
    instance *self = checked(c, "fmi3GetFMUState", ANY_MODE);
    if (self == NULL || FMUState == NULL) return fmi3Error;
    vc_state *state = *FMUState != NULL ? *FMUState : malloc(sizeof *state);
    if (state == NULL) return fmi3Error;
    *state = self->model.now;
    *FMUState = state;
    return fmi3OK;
}

fmi3Status fmi3SetFMUState(fmi3Instance c, fmi3FMUState FMUState) {
    instance *self = checked(c, "fmi3SetFMUState", ANY_MODE);
    if (self == NULL || FMUState == NULL) return fmi3Error;
    self->model.now = *(const vc_state *)FMUState;
    self->model.now.changed = 1;
    return fmi3OK;
}

fmi3Status fmi3FreeFMUState(fmi3Instance c, fmi3FMUState *FMUState) {
    if (checked(c, "fmi3FreeFMUState", ANY_MODE) == NULL || FMUState == NULL) return fmi3Error;
    free(*FMUState);
    *FMUState = NULL;
    return fmi3OK;
}

fmi3Status fmi3SerializedFMUStateSize(fmi3Instance c, fmi3FMUState FMUState, size_t *size) {
    if (checked(c, "fmi3SerializedFMUStateSize", ANY_MODE) == NULL || FMUState == NULL ||
        size == NULL)
        return fmi3Error;
    *size = vc_serialized_size();
    return fmi3OK;
}

fmi3Status fmi3SerializeFMUState(fmi3Instance c, fmi3FMUState FMUState, fmi3Byte bytes[],
                                 size_t size) {
    instance *self = checked(c, "fmi3SerializeFMUState", ANY_MODE);
    if (self == NULL || FMUState == NULL || bytes == NULL) return fmi3Error;
    if (size < vc_serialized_size()) {
        refuse(self, "fmi3SerializeFMUState", "the buffer is too small");
        return fmi3Error;
    }
    vc_serialize(FMUState, (char *)bytes);
    return fmi3OK;
}

fmi3Status fmi3DeserializeFMUState(fmi3Instance c, const fmi3Byte serializedState[],
                                   size_t size, fmi3FMUState *FMUState) {
    instance *self = checked(c, "fmi3DeserializeFMUState", ANY_MODE);
    if (self == NULL || FMUState == NULL) return fmi3Error;
    vc_state read;
    if (vc_deserialize(&self->model, (const char *)serializedState, size, &read) != VC_OK)
        return fmi3Error;
    vc_state *state = *FMUState != NULL ? *FMUState : malloc(sizeof *state);
    if (state == NULL) return fmi3Error;
    *state = read;
    *FMUState = state;
    return fmi3OK;
}

/* -- co-simulation ---------------------------------------------------------------------- */
fmi3Status fmi3DoStep(fmi3Instance c, fmi3Float64 currentCommunicationPoint,
                      fmi3Float64 communicationStepSize,
                      fmi3Boolean noSetFMUStatePriorToCurrentPoint,
                      fmi3Boolean *eventHandlingNeeded, fmi3Boolean *terminateSimulation,
                      fmi3Boolean *earlyReturn, fmi3Float64 *lastSuccessfulTime) {
    (void)noSetFMUStatePriorToCurrentPoint;
    instance *self = checked(c, "fmi3DoStep", BIT(STEPPING));
    if (self == NULL) return fmi3Error;
    int status = vc_do_step(&self->model, communicationStepSize);
    if (eventHandlingNeeded != NULL) *eventHandlingNeeded = false;
    if (terminateSimulation != NULL) *terminateSimulation = false;
    if (earlyReturn != NULL) *earlyReturn = false;
    if (lastSuccessfulTime != NULL)
        *lastSuccessfulTime = currentCommunicationPoint +
                              (status == VC_OK ? communicationStepSize : 0.0);
    return STATUS[status];
}
