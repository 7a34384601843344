/* A small co-simulation FMU for the tests, FMI 2 (TINY_FMI 2) or FMI 3 (TINY_FMI 3).

   Every variable is a double in `v`, indexed by its value reference (integers and booleans
   too, converted at the FMI call); string variables are kept in `s`. The model (the file
   TINY_MODEL names, included below) fills in four hooks: model_init (instantiation),
   model_start (leaving initialization), model_step (one communication step) and model_stop
   (terminate and free). The generated tiny_model.h gives the variables: TINY_NV, TINY_GUID,
   TINY_KIND[] (0 real, 1 integer, 2 boolean, 3 string), TINY_START[], TINY_SSTART[]. */
#if !defined(_WIN32)
#define _POSIX_C_SOURCE 200809L /* sockets and clock_gettime for models under -std=c11 */
#endif
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tiny_model.h"

#if TINY_FMI == 2
#include "fmi2Functions.h"
#else
#include "fmi3Functions.h"
#endif

enum { K_REAL, K_INTEGER, K_BOOLEAN, K_STRING };
#define TINY_TEXT 256

typedef void (*tiny_logger)(void *env, const char *name, int error, const char *text);

typedef struct tiny {
    double v[TINY_NV];
    char s[TINY_NV][TINY_TEXT];
    double time;
    int started;
    void *data; /* the model's own */
    tiny_logger log;
    void *log_env;
    char name[128];
} tiny;

static void tiny_say(tiny *m, const char *text) {
    if (m->log != NULL) m->log(m->log_env, m->name, 1, text);
}

/* the model: int model_init(tiny *), model_start(tiny *), model_step(tiny *, double t,
   double h) (each 0 to refuse, said why with tiny_say), and void model_stop(tiny *). */
#include TINY_MODEL

static tiny *tiny_new(const char *name, tiny_logger log, void *env) {
    tiny *m = calloc(1, sizeof *m);
    if (m == NULL) return NULL;
    for (int k = 0; k < TINY_NV; k++) {
        m->v[k] = TINY_START[k];
        snprintf(m->s[k], TINY_TEXT, "%s", TINY_SSTART[k]);
    }
    m->log = log;
    m->log_env = env;
    snprintf(m->name, sizeof m->name, "%s", name != NULL ? name : "");
    if (!model_init(m)) {
        free(m);
        return NULL;
    }
    return m;
}

static void tiny_free(tiny *m) {
    if (m == NULL) return;
    model_stop(m);
    free(m);
}

/* 1 if every value reference names a variable of the kind. */
static int tiny_refs(tiny *m, const unsigned int *vr, size_t n, int kind) {
    if (m == NULL || (n > 0 && vr == NULL)) return 0;
    for (size_t k = 0; k < n; k++) {
        if (vr[k] >= TINY_NV || TINY_KIND[vr[k]] != kind) {
            tiny_say(m, "no variable of this type has this value reference");
            return 0;
        }
    }
    return 1;
}

#if TINY_FMI == 2
/* ------------------------------------------------------------------------- FMI 2.0 --- */
typedef struct {
    tiny *m;
    fmi2CallbackLogger logger;
    fmi2ComponentEnvironment env;
} component;

static void say_fmi2(void *env, const char *name, int error, const char *text) {
    component *c = env;
    if (c->logger != NULL)
        c->logger(c->env, name, error ? fmi2Error : fmi2OK, error ? "logStatusError" : "logAll",
                  text);
}

const char *fmi2GetTypesPlatform(void) { return fmi2TypesPlatform; }
const char *fmi2GetVersion(void) { return fmi2Version; }

fmi2Component fmi2Instantiate(fmi2String instanceName, fmi2Type fmuType, fmi2String fmuGUID,
                              fmi2String fmuResourceLocation,
                              const fmi2CallbackFunctions *functions, fmi2Boolean visible,
                              fmi2Boolean loggingOn) {
    (void)fmuResourceLocation, (void)visible, (void)loggingOn;
    if (fmuType != fmi2CoSimulation || fmuGUID == NULL || strcmp(fmuGUID, TINY_GUID) != 0)
        return NULL;
    component *c = calloc(1, sizeof *c);
    if (c == NULL) return NULL;
    c->logger = functions != NULL ? functions->logger : NULL;
    c->env = functions != NULL ? functions->componentEnvironment : NULL;
    c->m = tiny_new(instanceName, say_fmi2, c);
    if (c->m == NULL) {
        free(c);
        return NULL;
    }
    return c;
}

void fmi2FreeInstance(fmi2Component c) {
    if (c == NULL) return;
    tiny_free(((component *)c)->m);
    free(c);
}

#define M(c) (((component *)(c))->m)

fmi2Status fmi2SetDebugLogging(fmi2Component c, fmi2Boolean on, size_t n,
                               const fmi2String categories[]) {
    (void)c, (void)on, (void)n, (void)categories;
    return fmi2OK;
}
fmi2Status fmi2SetupExperiment(fmi2Component c, fmi2Boolean toleranceDefined,
                               fmi2Real tolerance, fmi2Real startTime,
                               fmi2Boolean stopTimeDefined, fmi2Real stopTime) {
    (void)toleranceDefined, (void)tolerance, (void)stopTimeDefined, (void)stopTime;
    M(c)->time = startTime;
    return fmi2OK;
}
fmi2Status fmi2EnterInitializationMode(fmi2Component c) {
    (void)c;
    return fmi2OK;
}
fmi2Status fmi2ExitInitializationMode(fmi2Component c) {
    M(c)->started = 1;
    return model_start(M(c)) ? fmi2OK : fmi2Error;
}
fmi2Status fmi2Terminate(fmi2Component c) {
    (void)c;
    return fmi2OK;
}
fmi2Status fmi2Reset(fmi2Component c) {
    tiny_say(M(c), "fmi2Reset: not supported");
    return fmi2Error;
}

#define GET2(name, type, kind, convert)                                                   \
    fmi2Status name(fmi2Component c, const fmi2ValueReference vr[], size_t nvr,          \
                    type value[]) {                                                      \
        if (!tiny_refs(M(c), vr, nvr, kind)) return fmi2Error;                           \
        for (size_t k = 0; k < nvr; k++) value[k] = convert(M(c)->v[vr[k]]);             \
        return fmi2OK;                                                                   \
    }
#define SET2(name, type, kind)                                                            \
    fmi2Status name(fmi2Component c, const fmi2ValueReference vr[], size_t nvr,          \
                    const type value[]) {                                                \
        if (!tiny_refs(M(c), vr, nvr, kind)) return fmi2Error;                           \
        for (size_t k = 0; k < nvr; k++) M(c)->v[vr[k]] = (double)value[k];              \
        return fmi2OK;                                                                   \
    }
#define AS_REAL(x) (x)
#define AS_INT(x) ((int)lround(x))
#define AS_BOOL(x) ((x) != 0.0)
GET2(fmi2GetReal, fmi2Real, K_REAL, AS_REAL)
GET2(fmi2GetInteger, fmi2Integer, K_INTEGER, AS_INT)
GET2(fmi2GetBoolean, fmi2Boolean, K_BOOLEAN, AS_BOOL)
SET2(fmi2SetReal, fmi2Real, K_REAL)
SET2(fmi2SetInteger, fmi2Integer, K_INTEGER)
SET2(fmi2SetBoolean, fmi2Boolean, K_BOOLEAN)

fmi2Status fmi2GetString(fmi2Component c, const fmi2ValueReference vr[], size_t nvr,
                         fmi2String value[]) {
    if (!tiny_refs(M(c), vr, nvr, K_STRING)) return fmi2Error;
    for (size_t k = 0; k < nvr; k++) value[k] = M(c)->s[vr[k]];
    return fmi2OK;
}
fmi2Status fmi2SetString(fmi2Component c, const fmi2ValueReference vr[], size_t nvr,
                         const fmi2String value[]) {
    if (!tiny_refs(M(c), vr, nvr, K_STRING)) return fmi2Error;
    for (size_t k = 0; k < nvr; k++) snprintf(M(c)->s[vr[k]], TINY_TEXT, "%s", value[k]);
    return fmi2OK;
}

#define NO2(name, ...)                                                                    \
    fmi2Status name(fmi2Component c, __VA_ARGS__) {                                      \
        tiny_say(M(c), #name ": not supported");                                         \
        return fmi2Error;                                                                \
    }
NO2(fmi2GetFMUstate, fmi2FMUstate *s)
NO2(fmi2SetFMUstate, fmi2FMUstate s)
NO2(fmi2FreeFMUstate, fmi2FMUstate *s)
NO2(fmi2SerializedFMUstateSize, fmi2FMUstate s, size_t *n)
NO2(fmi2SerializeFMUstate, fmi2FMUstate s, fmi2Byte b[], size_t n)
NO2(fmi2DeSerializeFMUstate, const fmi2Byte b[], size_t n, fmi2FMUstate *s)
NO2(fmi2GetDirectionalDerivative, const fmi2ValueReference u[], size_t nu,
    const fmi2ValueReference z[], size_t nz, const fmi2Real dz[], fmi2Real du[])
NO2(fmi2SetRealInputDerivatives, const fmi2ValueReference vr[], size_t n,
    const fmi2Integer order[], const fmi2Real value[])
NO2(fmi2GetRealOutputDerivatives, const fmi2ValueReference vr[], size_t n,
    const fmi2Integer order[], fmi2Real value[])
NO2(fmi2GetStatus, const fmi2StatusKind s, fmi2Status *value)
NO2(fmi2GetRealStatus, const fmi2StatusKind s, fmi2Real *value)
NO2(fmi2GetIntegerStatus, const fmi2StatusKind s, fmi2Integer *value)
NO2(fmi2GetBooleanStatus, const fmi2StatusKind s, fmi2Boolean *value)
NO2(fmi2GetStringStatus, const fmi2StatusKind s, fmi2String *value)

fmi2Status fmi2CancelStep(fmi2Component c) {
    tiny_say(M(c), "fmi2CancelStep: not supported");
    return fmi2Error;
}

fmi2Status fmi2DoStep(fmi2Component c, fmi2Real currentCommunicationPoint,
                      fmi2Real communicationStepSize,
                      fmi2Boolean noSetFMUStatePriorToCurrentPoint) {
    (void)noSetFMUStatePriorToCurrentPoint;
    if (!model_step(M(c), currentCommunicationPoint, communicationStepSize)) return fmi2Error;
    M(c)->time = currentCommunicationPoint + communicationStepSize;
    return fmi2OK;
}

#else
/* ------------------------------------------------------------------------- FMI 3.0 --- */
typedef struct {
    tiny *m;
    fmi3InstanceEnvironment env;
    fmi3LogMessageCallback logger;
} component;

static void say_fmi3(void *env, const char *name, int error, const char *text) {
    (void)name;
    component *c = env;
    if (c->logger != NULL)
        c->logger(c->env, error ? fmi3Error : fmi3OK, error ? "logStatusError" : "logAll",
                  text);
}

#define M(c) (((component *)(c))->m)

const char *fmi3GetVersion(void) { return fmi3Version; }

fmi3Instance fmi3InstantiateCoSimulation(
    fmi3String instanceName, fmi3String instantiationToken, fmi3String resourcePath,
    fmi3Boolean visible, fmi3Boolean loggingOn, fmi3Boolean eventModeUsed,
    fmi3Boolean earlyReturnAllowed, const fmi3ValueReference requiredIntermediateVariables[],
    size_t nRequiredIntermediateVariables, fmi3InstanceEnvironment instanceEnvironment,
    fmi3LogMessageCallback logMessage, fmi3IntermediateUpdateCallback intermediateUpdate) {
    (void)resourcePath, (void)visible, (void)loggingOn, (void)eventModeUsed;
    (void)earlyReturnAllowed, (void)requiredIntermediateVariables;
    (void)nRequiredIntermediateVariables, (void)intermediateUpdate;
    if (instantiationToken == NULL || strcmp(instantiationToken, TINY_GUID) != 0) return NULL;
    component *c = calloc(1, sizeof *c);
    if (c == NULL) return NULL;
    c->env = instanceEnvironment;
    c->logger = logMessage;
    c->m = tiny_new(instanceName, say_fmi3, c);
    if (c->m == NULL) {
        free(c);
        return NULL;
    }
    return c;
}

void fmi3FreeInstance(fmi3Instance c) {
    if (c == NULL) return;
    tiny_free(M(c));
    free(c);
}

fmi3Status fmi3SetDebugLogging(fmi3Instance c, fmi3Boolean on, size_t n,
                               const fmi3String categories[]) {
    (void)c, (void)on, (void)n, (void)categories;
    return fmi3OK;
}
fmi3Status fmi3EnterInitializationMode(fmi3Instance c, fmi3Boolean toleranceDefined,
                                       fmi3Float64 tolerance, fmi3Float64 startTime,
                                       fmi3Boolean stopTimeDefined, fmi3Float64 stopTime) {
    (void)toleranceDefined, (void)tolerance, (void)stopTimeDefined, (void)stopTime;
    M(c)->time = startTime;
    return fmi3OK;
}
fmi3Status fmi3ExitInitializationMode(fmi3Instance c) {
    M(c)->started = 1;
    return model_start(M(c)) ? fmi3OK : fmi3Error;
}
fmi3Status fmi3Terminate(fmi3Instance c) {
    (void)c;
    return fmi3OK;
}

#define GET3(name, type, kind, convert)                                                   \
    fmi3Status name(fmi3Instance c, const fmi3ValueReference vr[], size_t nvr,           \
                    type value[], size_t nValues) {                                      \
        (void)nValues;                                                                   \
        if (!tiny_refs(M(c), vr, nvr, kind)) return fmi3Error;                           \
        for (size_t k = 0; k < nvr; k++) value[k] = convert(M(c)->v[vr[k]]);             \
        return fmi3OK;                                                                   \
    }
#define SET3(name, type, kind)                                                            \
    fmi3Status name(fmi3Instance c, const fmi3ValueReference vr[], size_t nvr,           \
                    const type value[], size_t nValues) {                                \
        (void)nValues;                                                                   \
        if (!tiny_refs(M(c), vr, nvr, kind)) return fmi3Error;                           \
        for (size_t k = 0; k < nvr; k++) M(c)->v[vr[k]] = (double)value[k];              \
        return fmi3OK;                                                                   \
    }
#define AS_REAL(x) (x)
#define AS_INT(x) ((fmi3Int32)lround(x))
#define AS_BOOL(x) ((x) != 0.0)
GET3(fmi3GetFloat64, fmi3Float64, K_REAL, AS_REAL)
GET3(fmi3GetInt32, fmi3Int32, K_INTEGER, AS_INT)
GET3(fmi3GetBoolean, fmi3Boolean, K_BOOLEAN, AS_BOOL)
SET3(fmi3SetFloat64, fmi3Float64, K_REAL)
SET3(fmi3SetInt32, fmi3Int32, K_INTEGER)
SET3(fmi3SetBoolean, fmi3Boolean, K_BOOLEAN)

fmi3Status fmi3GetString(fmi3Instance c, const fmi3ValueReference vr[], size_t nvr,
                         fmi3String value[], size_t nValues) {
    (void)nValues;
    if (!tiny_refs(M(c), vr, nvr, K_STRING)) return fmi3Error;
    for (size_t k = 0; k < nvr; k++) value[k] = M(c)->s[vr[k]];
    return fmi3OK;
}
fmi3Status fmi3SetString(fmi3Instance c, const fmi3ValueReference vr[], size_t nvr,
                         const fmi3String value[], size_t nValues) {
    (void)nValues;
    if (!tiny_refs(M(c), vr, nvr, K_STRING)) return fmi3Error;
    for (size_t k = 0; k < nvr; k++) snprintf(M(c)->s[vr[k]], TINY_TEXT, "%s", value[k]);
    return fmi3OK;
}

/* What fmi3_absent.c (vcosim's, compiled beside this) calls for the features not here. */
fmi3Status fmi3_absent(fmi3Instance c, const char *call, const char *why) {
    char text[300];
    snprintf(text, sizeof text, "%s: %s", call, why);
    if (c != NULL) tiny_say(M(c), text);
    return fmi3Error;
}
fmi3Status fmi3_no_such(fmi3Instance c, const char *call, const fmi3ValueReference vr[],
                        size_t nvr) {
    (void)vr;
    return nvr == 0 ? fmi3OK : fmi3_absent(c, call, "no variable of this type");
}

fmi3Status fmi3Reset(fmi3Instance c) { return fmi3_absent(c, "fmi3Reset", "not supported"); }
#define NO3(name, ...)                                                                    \
    fmi3Status name(fmi3Instance c, __VA_ARGS__) {                                       \
        return fmi3_absent(c, #name, "not supported");                                   \
    }
NO3(fmi3GetFMUState, fmi3FMUState *s)
NO3(fmi3SetFMUState, fmi3FMUState s)
NO3(fmi3FreeFMUState, fmi3FMUState *s)
NO3(fmi3SerializedFMUStateSize, fmi3FMUState s, size_t *n)
NO3(fmi3SerializeFMUState, fmi3FMUState s, fmi3Byte b[], size_t n)
NO3(fmi3DeserializeFMUState, const fmi3Byte b[], size_t n, fmi3FMUState *s)

fmi3Status fmi3DoStep(fmi3Instance c, fmi3Float64 currentCommunicationPoint,
                      fmi3Float64 communicationStepSize,
                      fmi3Boolean noSetFMUStatePriorToCurrentPoint,
                      fmi3Boolean *eventHandlingNeeded, fmi3Boolean *terminateSimulation,
                      fmi3Boolean *earlyReturn, fmi3Float64 *lastSuccessfulTime) {
    (void)noSetFMUStatePriorToCurrentPoint;
    int ok = model_step(M(c), currentCommunicationPoint, communicationStepSize);
    if (ok) M(c)->time = currentCommunicationPoint + communicationStepSize;
    if (eventHandlingNeeded != NULL) *eventHandlingNeeded = fmi3False;
    if (terminateSimulation != NULL) *terminateSimulation = fmi3False;
    if (earlyReturn != NULL) *earlyReturn = fmi3False;
    if (lastSuccessfulTime != NULL) *lastSuccessfulTime = M(c)->time;
    return ok ? fmi3OK : fmi3Error;
}
#endif
