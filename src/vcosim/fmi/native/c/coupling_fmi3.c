/* The FMI 3.0 co-simulation API around the coupling (coupling.h): one doStep, one message.
   The features it has not (model exchange, clocks, other types, derivatives) are
   fmi3_absent.c's; it has no FMU state (the wire cannot roll back). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coupling.h"
#include "fmi3Functions.h"
#include "registry.h"

typedef struct {
    cp_link link;
    fmi3LogMessageCallback logger;
    fmi3InstanceEnvironment environment;
    int mode;
} instance;

static void refuse(instance *c, const char *call, const char *why) {
    if (c->logger == NULL) return;
    char text[600];
    snprintf(text, sizeof text, "%s%s%s", call != NULL ? call : "", call != NULL ? ": " : "",
             why);
    c->logger(c->environment, fmi3Error, "logStatusError", text);
}

static void log_error(void *env, const char *text) { refuse(env, NULL, text); }

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

fmi3Status fmi3_absent(fmi3Instance c, const char *call, const char *why) {
    instance *self = checked(c, call, ANY_MODE);
    if (self != NULL) refuse(self, call, why);
    return fmi3Error;
}

fmi3Status fmi3_no_such(fmi3Instance c, const char *call, const fmi3ValueReference vr[],
                        size_t nvr) {
    instance *self = checked(c, call, ANY_MODE);
    if (self == NULL) return fmi3Error;
    if (nvr == 0) return fmi3OK;
    refuse(self, call, "no variable of this type");
    (void)vr;
    return fmi3Error;
}

fmi3Instance fmi3InstantiateCoSimulation(
    fmi3String instanceName, fmi3String instantiationToken, fmi3String resourcePath,
    fmi3Boolean visible, fmi3Boolean loggingOn, fmi3Boolean eventModeUsed,
    fmi3Boolean earlyReturnAllowed, const fmi3ValueReference requiredIntermediateVariables[],
    size_t nRequiredIntermediateVariables, fmi3InstanceEnvironment instanceEnvironment,
    fmi3LogMessageCallback logMessage, fmi3IntermediateUpdateCallback intermediateUpdate) {
    (void)instanceName, (void)resourcePath, (void)visible, (void)loggingOn;
    (void)earlyReturnAllowed, (void)requiredIntermediateVariables, (void)intermediateUpdate;
    const char *refusal = NULL;
    if (instantiationToken == NULL || strcmp(instantiationToken, VC_GUID) != 0)
        refusal = "the instantiation token is not this FMU's";
    else if (eventModeUsed) refusal = "the FMU has no event mode";
    else if (nRequiredIntermediateVariables > 0) refusal = "the FMU has no intermediate update";
    if (refusal != NULL) {
        if (logMessage != NULL)
            logMessage(instanceEnvironment, fmi3Error, "logStatusError", refusal);
        return NULL;
    }
#ifdef _WIN32
    WSADATA data;
    if (WSAStartup(MAKEWORD(2, 2), &data) != 0) return NULL;
#endif
    instance *self = calloc(1, sizeof *self);
    if (self == NULL) return NULL;
    if (!vc_register(self)) {
        free(self);
        return NULL;
    }
    self->logger = logMessage;
    self->environment = instanceEnvironment;
    cp_init(&self->link, log_error, self);
    return self;
}

const char *fmi3GetVersion(void) { return fmi3Version; }

void fmi3FreeInstance(fmi3Instance c) {
    if (!vc_known(c, 1)) return; /* a second free, or a foreign pointer: nothing happens */
    cp_stop(&((instance *)c)->link);
    free(c);
#ifdef _WIN32
    WSACleanup();
#endif
}

fmi3Status fmi3SetDebugLogging(fmi3Instance c, fmi3Boolean on, size_t n,
                               const fmi3String categories[]) {
    (void)on, (void)n, (void)categories;
    return checked(c, "fmi3SetDebugLogging", ANY_MODE) ? fmi3OK : fmi3Error;
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
    if (!cp_start(&self->link)) {
        refuse(self, NULL, self->link.failed);
        self->mode = FAILED;
        return fmi3Error;
    }
    self->mode = STEPPING;
    cp_take(&self->link); /* the first message: the outputs at the start are the simulator's */
    return fmi3OK;
}

fmi3Status fmi3Terminate(fmi3Instance c) {
    instance *self = checked(c, "fmi3Terminate", BIT(STEPPING) | BIT(FAILED));
    if (self == NULL) return fmi3Error;
    cp_stop(&self->link);
    self->mode = TERMINATED;
    return fmi3OK;
}

fmi3Status fmi3Reset(fmi3Instance c) {
    return fmi3_absent(c, "fmi3Reset", "free the instance and instantiate it again");
}

/* -- variables -------------------------------------------------------------------------- */
#define GETTER(name, type, wanted, convert)                                               \
    fmi3Status name(fmi3Instance c, const fmi3ValueReference vr[], size_t nvr,           \
                    type values[], size_t nValues) {                                     \
        instance *self = checked(c, #name, ANY_MODE);                                    \
        if (self == NULL) return fmi3Error;                                              \
        if (nvr != nValues || (nvr > 0 && (vr == NULL || values == NULL))) {             \
            refuse(self, #name, "NULL arrays, or not one value per value reference");    \
            return fmi3Error;                                                            \
        }                                                                                \
        for (size_t i = 0; i < nvr; i++) {                                               \
            if (vr[i] == 0 && (wanted) == K_REAL) { /* the time */                       \
                values[i] = convert(self->link.received * VC_STEP);                      \
                continue;                                                                \
            }                                                                            \
            if (cp_kind(vr[i]) != (wanted)) {                                            \
                refuse(self, #name, "no variable of this type");                         \
                return fmi3Error;                                                        \
            }                                                                            \
            values[i] = convert(cp_get(&self->link, vr[i]));                             \
        }                                                                                \
        return fmi3OK;                                                                   \
    }

#define SETTER(name, type, wanted)                                                        \
    fmi3Status name(fmi3Instance c, const fmi3ValueReference vr[], size_t nvr,           \
                    const type values[], size_t nValues) {                               \
        instance *self = checked(c, #name, BIT(INSTANTIATED) | BIT(INITIALIZING) |      \
                                               BIT(STEPPING));                           \
        if (self == NULL) return fmi3Error;                                              \
        if (nvr != nValues || (nvr > 0 && (vr == NULL || values == NULL))) {             \
            refuse(self, #name, "NULL arrays, or not one value per value reference");    \
            return fmi3Error;                                                            \
        }                                                                                \
        for (size_t i = 0; i < nvr; i++) {                                               \
            if (cp_kind(vr[i]) != (wanted)) {                                            \
                refuse(self, #name, "no variable of this type that can be set");         \
                return fmi3Error;                                                        \
            }                                                                            \
            if (!cp_set(&self->link, vr[i], (double)values[i], self->mode == STEPPING))  \
                return fmi3Error;                                                        \
        }                                                                                \
        return fmi3OK;                                                                   \
    }

#define AS_FLOAT64(v) (v)
#define AS_INT32(v) ((fmi3Int32)(v))
#define AS_BOOLEAN(v) ((v) != 0.0)

GETTER(fmi3GetFloat64, fmi3Float64, K_REAL, AS_FLOAT64)
GETTER(fmi3GetInt32, fmi3Int32, K_INTEGER, AS_INT32)
GETTER(fmi3GetBoolean, fmi3Boolean, K_BOOLEAN, AS_BOOLEAN)
SETTER(fmi3SetFloat64, fmi3Float64, K_REAL)
SETTER(fmi3SetInt32, fmi3Int32, K_INTEGER)
SETTER(fmi3SetBoolean, fmi3Boolean, K_BOOLEAN)

fmi3Status fmi3GetString(fmi3Instance c, const fmi3ValueReference vr[], size_t nvr,
                         fmi3String values[], size_t nValues) {
    instance *self = checked(c, "fmi3GetString", ANY_MODE);
    if (self == NULL) return fmi3Error;
    if (nvr != nValues || (nvr > 0 && (vr == NULL || values == NULL))) {
        refuse(self, "fmi3GetString", "NULL arrays, or not one value per value reference");
        return fmi3Error;
    }
    for (size_t i = 0; i < nvr; i++) {
        values[i] = cp_string(&self->link, vr[i]);
        if (values[i] == NULL) {
            refuse(self, "fmi3GetString", "no variable of this type");
            return fmi3Error;
        }
    }
    return fmi3OK;
}

fmi3Status fmi3SetString(fmi3Instance c, const fmi3ValueReference vr[], size_t nvr,
                         const fmi3String values[], size_t nValues) {
    instance *self = checked(c, "fmi3SetString", BIT(INSTANTIATED) | BIT(INITIALIZING));
    if (self == NULL) return fmi3Error;
    if (nvr != nValues || (nvr > 0 && (vr == NULL || values == NULL))) {
        refuse(self, "fmi3SetString", "NULL arrays, or not one value per value reference");
        return fmi3Error;
    }
    for (size_t i = 0; i < nvr; i++) {
        char *target = cp_string(&self->link, vr[i]);
        if (target == NULL || values[i] == NULL) {
            refuse(self, "fmi3SetString", "no such variable, or NULL");
            return fmi3Error;
        }
        snprintf(target, 256, "%s", values[i]);
    }
    return fmi3OK;
}

/* -- no FMU state: the wire cannot roll back ------------------------------------------ */
#define NO_STATE "the coupling has no FMU state: the wire cannot roll back"

fmi3Status fmi3GetFMUState(fmi3Instance c, fmi3FMUState *s) {
    (void)s;
    return fmi3_absent(c, "fmi3GetFMUState", NO_STATE);
}
fmi3Status fmi3SetFMUState(fmi3Instance c, fmi3FMUState s) {
    (void)s;
    return fmi3_absent(c, "fmi3SetFMUState", NO_STATE);
}
fmi3Status fmi3FreeFMUState(fmi3Instance c, fmi3FMUState *s) {
    (void)s;
    return fmi3_absent(c, "fmi3FreeFMUState", NO_STATE);
}
fmi3Status fmi3SerializedFMUStateSize(fmi3Instance c, fmi3FMUState s, size_t *n) {
    (void)s, (void)n;
    return fmi3_absent(c, "fmi3SerializedFMUStateSize", NO_STATE);
}
fmi3Status fmi3SerializeFMUState(fmi3Instance c, fmi3FMUState s, fmi3Byte b[], size_t n) {
    (void)s, (void)b, (void)n;
    return fmi3_absent(c, "fmi3SerializeFMUState", NO_STATE);
}
fmi3Status fmi3DeserializeFMUState(fmi3Instance c, const fmi3Byte b[], size_t n,
                                   fmi3FMUState *s) {
    (void)b, (void)n, (void)s;
    return fmi3_absent(c, "fmi3DeserializeFMUState", NO_STATE);
}

/* -- co-simulation ---------------------------------------------------------------------- */
fmi3Status fmi3DoStep(fmi3Instance c, fmi3Float64 currentCommunicationPoint,
                      fmi3Float64 communicationStepSize,
                      fmi3Boolean noSetFMUStatePriorToCurrentPoint,
                      fmi3Boolean *eventHandlingNeeded, fmi3Boolean *terminateSimulation,
                      fmi3Boolean *earlyReturn, fmi3Float64 *lastSuccessfulTime) {
    (void)noSetFMUStatePriorToCurrentPoint;
    instance *self = checked(c, "fmi3DoStep", BIT(STEPPING) | BIT(FAILED));
    if (self == NULL) return fmi3Error;
    if (self->mode == FAILED) {
        refuse(self, "fmi3DoStep", self->link.failed);
        return fmi3Error;
    }
    int stepped = cp_step(&self->link, communicationStepSize);
    if (eventHandlingNeeded != NULL) *eventHandlingNeeded = false;
    if (terminateSimulation != NULL) *terminateSimulation = false;
    if (earlyReturn != NULL) *earlyReturn = false;
    if (lastSuccessfulTime != NULL)
        *lastSuccessfulTime = currentCommunicationPoint + (stepped ? communicationStepSize : 0.0);
    return stepped ? fmi3OK : fmi3Discard;
}
