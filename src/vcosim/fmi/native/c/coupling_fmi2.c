/* The FMI 2.0 co-simulation API around the coupling (coupling.h): one doStep, one message. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coupling.h"
#include "fmi2Functions.h"
#include "registry.h"

typedef struct {
    cp_link link;
    fmi2CallbackLogger logger;
    fmi2ComponentEnvironment environment;
    char name[128];
    int mode;
} instance;

static void say(instance *c, fmi2Status status, const char *text) {
    if (c->logger != NULL)
        c->logger(c->environment, c->name, status,
                  status == fmi2Error ? "logStatusError" : "logAll", text);
}

static void log_error(void *env, const char *text) { say(env, fmi2Error, text); }

static instance *checked(fmi2Component c, const char *call, int modes) {
    if (!vc_known(c, 0)) return NULL;
    instance *self = c;
    char why[100], text[200];
    if (!vc_mode_allows(self->mode, modes, why, sizeof why)) {
        snprintf(text, sizeof text, "%s is %s", call, why);
        say(self, fmi2Error, text);
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
    (void)fmuResourceLocation, (void)visible, (void)loggingOn;
    fmi2CallbackLogger logger = functions != NULL ? functions->logger : NULL;
    fmi2ComponentEnvironment env = functions != NULL ? functions->componentEnvironment : NULL;
    const char *name = instanceName != NULL ? instanceName : "";
    if (fmuType != fmi2CoSimulation || fmuGUID == NULL || strcmp(fmuGUID, VC_GUID) != 0) {
        if (logger != NULL)
            logger(env, name, fmi2Error, "logStatusError",
                   "not this FMU's GUID, or not co-simulation");
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
    self->logger = logger;
    self->environment = env;
    snprintf(self->name, sizeof self->name, "%s", name);
    cp_init(&self->link, log_error, self);
    return self;
}

void fmi2FreeInstance(fmi2Component c) {
    if (!vc_known(c, 1)) return;
    cp_stop(&((instance *)c)->link);
    free(c);
#ifdef _WIN32
    WSACleanup();
#endif
}

fmi2Status fmi2SetDebugLogging(fmi2Component c, fmi2Boolean on, size_t n, const fmi2String k[]) {
    (void)on, (void)n, (void)k;
    return checked(c, "fmi2SetDebugLogging", ANY_MODE) ? fmi2OK : fmi2Error;
}

fmi2Status fmi2SetupExperiment(fmi2Component c, fmi2Boolean toleranceDefined,
                               fmi2Real tolerance, fmi2Real startTime,
                               fmi2Boolean stopTimeDefined, fmi2Real stopTime) {
    (void)toleranceDefined, (void)tolerance, (void)startTime, (void)stopTimeDefined;
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
    if (!cp_start(&self->link)) {
        say(self, fmi2Error, self->link.failed);
        self->mode = FAILED;
        return fmi2Error;
    }
    self->mode = STEPPING;
    cp_take(&self->link); /* the first message: the outputs at the start are the simulator's */
    return fmi2OK;
}

fmi2Status fmi2Terminate(fmi2Component c) {
    instance *self = checked(c, "fmi2Terminate", BIT(STEPPING) | BIT(FAILED));
    if (self == NULL) return fmi2Error;
    cp_stop(&self->link);
    self->mode = TERMINATED;
    return fmi2OK;
}

fmi2Status fmi2Reset(fmi2Component c) {
    instance *self = checked(c, "fmi2Reset", ANY_MODE);
    if (self == NULL) return fmi2Error;
    say(self, fmi2Error, "fmi2Reset: free the instance and instantiate it again");
    return fmi2Error;
}

#define GETTER(name, type, wanted, convert)                                               \
    fmi2Status name(fmi2Component c, const fmi2ValueReference vr[], size_t nvr,          \
                    type value[]) {                                                      \
        instance *self = checked(c, #name, ANY_MODE);                                    \
        if (self == NULL || (nvr > 0 && (vr == NULL || value == NULL))) return fmi2Error; \
        for (size_t i = 0; i < nvr; i++) {                                               \
            if (cp_kind(vr[i]) != (wanted)) {                                            \
                say(self, fmi2Error, #name ": no variable of this type");                \
                return fmi2Error;                                                        \
            }                                                                            \
            value[i] = convert(cp_get(&self->link, vr[i]));                              \
        }                                                                                \
        return fmi2OK;                                                                   \
    }

#define SETTER(name, type, wanted)                                                        \
    fmi2Status name(fmi2Component c, const fmi2ValueReference vr[], size_t nvr,          \
                    const type value[]) {                                                \
        instance *self = checked(c, #name, BIT(INSTANTIATED) | BIT(INITIALIZING) |      \
                                               BIT(STEPPING));                           \
        if (self == NULL || (nvr > 0 && (vr == NULL || value == NULL))) return fmi2Error; \
        for (size_t i = 0; i < nvr; i++) {                                               \
            if (cp_kind(vr[i]) != (wanted)) {                                            \
                say(self, fmi2Error, #name ": no variable of this type");                \
                return fmi2Error;                                                        \
            }                                                                            \
            if (!cp_set(&self->link, vr[i], (double)value[i], self->mode == STEPPING))   \
                return fmi2Error;                                                        \
        }                                                                                \
        return fmi2OK;                                                                   \
    }

#define AS_REAL(v) (v)
#define AS_INTEGER(v) ((fmi2Integer)(v))
#define AS_BOOLEAN(v) ((fmi2Boolean)((v) != 0.0))

GETTER(fmi2GetReal, fmi2Real, K_REAL, AS_REAL)
GETTER(fmi2GetInteger, fmi2Integer, K_INTEGER, AS_INTEGER)
GETTER(fmi2GetBoolean, fmi2Boolean, K_BOOLEAN, AS_BOOLEAN)
SETTER(fmi2SetReal, fmi2Real, K_REAL)
SETTER(fmi2SetInteger, fmi2Integer, K_INTEGER)
SETTER(fmi2SetBoolean, fmi2Boolean, K_BOOLEAN)

fmi2Status fmi2GetString(fmi2Component c, const fmi2ValueReference vr[], size_t nvr,
                         fmi2String value[]) {
    instance *self = checked(c, "fmi2GetString", ANY_MODE);
    if (self == NULL || (nvr > 0 && (vr == NULL || value == NULL))) return fmi2Error;
    for (size_t i = 0; i < nvr; i++) {
        value[i] = cp_string(&self->link, vr[i]);
        if (value[i] == NULL) {
            say(self, fmi2Error, "fmi2GetString: no variable of this type");
            return fmi2Error;
        }
    }
    return fmi2OK;
}

fmi2Status fmi2SetString(fmi2Component c, const fmi2ValueReference vr[], size_t nvr,
                         const fmi2String value[]) {
    instance *self = checked(c, "fmi2SetString", BIT(INSTANTIATED) | BIT(INITIALIZING));
    if (self == NULL || (nvr > 0 && (vr == NULL || value == NULL))) return fmi2Error;
    for (size_t i = 0; i < nvr; i++) {
        char *target = cp_string(&self->link, vr[i]);
        if (target == NULL || value[i] == NULL) {
            say(self, fmi2Error, "fmi2SetString: no such variable, or NULL");
            return fmi2Error;
        }
        snprintf(target, 256, "%s", value[i]);
    }
    return fmi2OK;
}

static fmi2Status no_state(fmi2Component c, const char *call) {
    instance *self = checked(c, call, ANY_MODE);
    if (self != NULL) say(self, fmi2Error, "the coupling has no FMU state: the wire cannot roll back");
    return fmi2Error;
}

fmi2Status fmi2GetFMUstate(fmi2Component c, fmi2FMUstate *s) {
    (void)s;
    return no_state(c, "fmi2GetFMUstate");
}
fmi2Status fmi2SetFMUstate(fmi2Component c, fmi2FMUstate s) {
    (void)s;
    return no_state(c, "fmi2SetFMUstate");
}
fmi2Status fmi2FreeFMUstate(fmi2Component c, fmi2FMUstate *s) {
    (void)s;
    return no_state(c, "fmi2FreeFMUstate");
}
fmi2Status fmi2SerializedFMUstateSize(fmi2Component c, fmi2FMUstate s, size_t *n) {
    (void)s, (void)n;
    return no_state(c, "fmi2SerializedFMUstateSize");
}
fmi2Status fmi2SerializeFMUstate(fmi2Component c, fmi2FMUstate s, fmi2Byte b[], size_t n) {
    (void)s, (void)b, (void)n;
    return no_state(c, "fmi2SerializeFMUstate");
}
fmi2Status fmi2DeSerializeFMUstate(fmi2Component c, const fmi2Byte b[], size_t n,
                                   fmi2FMUstate *s) {
    (void)s, (void)b, (void)n;
    return no_state(c, "fmi2DeSerializeFMUstate");
}
fmi2Status fmi2GetDirectionalDerivative(fmi2Component c, const fmi2ValueReference u[],
                                        size_t nu, const fmi2ValueReference k[], size_t nk,
                                        const fmi2Real dk[], fmi2Real du[]) {
    (void)u, (void)nu, (void)k, (void)nk, (void)dk, (void)du;
    return no_state(c, "fmi2GetDirectionalDerivative");
}
fmi2Status fmi2SetRealInputDerivatives(fmi2Component c, const fmi2ValueReference vr[],
                                       size_t nvr, const fmi2Integer order[],
                                       const fmi2Real value[]) {
    (void)vr, (void)nvr, (void)order, (void)value;
    return no_state(c, "fmi2SetRealInputDerivatives");
}
fmi2Status fmi2GetRealOutputDerivatives(fmi2Component c, const fmi2ValueReference vr[],
                                        size_t nvr, const fmi2Integer order[],
                                        fmi2Real value[]) {
    (void)vr, (void)nvr, (void)order, (void)value;
    return no_state(c, "fmi2GetRealOutputDerivatives");
}

fmi2Status fmi2DoStep(fmi2Component c, fmi2Real currentCommunicationPoint,
                      fmi2Real communicationStepSize,
                      fmi2Boolean noSetFMUStatePriorToCurrentPoint) {
    (void)currentCommunicationPoint, (void)noSetFMUStatePriorToCurrentPoint;
    instance *self = checked(c, "fmi2DoStep", BIT(STEPPING) | BIT(FAILED));
    if (self == NULL) return fmi2Error;
    if (self->mode == FAILED) {
        say(self, fmi2Error, self->link.failed);
        return fmi2Error;
    }
    return cp_step(&self->link, communicationStepSize) ? fmi2OK : fmi2Discard;
}

fmi2Status fmi2CancelStep(fmi2Component c) { return no_state(c, "fmi2CancelStep"); }
fmi2Status fmi2GetStatus(fmi2Component c, const fmi2StatusKind s, fmi2Status *v) {
    (void)s, (void)v;
    return no_state(c, "fmi2GetStatus");
}
fmi2Status fmi2GetRealStatus(fmi2Component c, const fmi2StatusKind s, fmi2Real *v) {
    (void)s, (void)v;
    return no_state(c, "fmi2GetRealStatus");
}
fmi2Status fmi2GetIntegerStatus(fmi2Component c, const fmi2StatusKind s, fmi2Integer *v) {
    (void)s, (void)v;
    return no_state(c, "fmi2GetIntegerStatus");
}
fmi2Status fmi2GetBooleanStatus(fmi2Component c, const fmi2StatusKind s, fmi2Boolean *v) {
    (void)s, (void)v;
    return no_state(c, "fmi2GetBooleanStatus");
}
fmi2Status fmi2GetStringStatus(fmi2Component c, const fmi2StatusKind s, fmi2String *v) {
    (void)s, (void)v;
    return no_state(c, "fmi2GetStringStatus");
}
