/* The FMI 3.0 co-simulation API around the vehicle model (vehicle.h). Every function of the
   standard is exported; those for features the FMU does not have (model exchange, clocks,
   other variable types, derivatives) refuse with a logged reason. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmi3Functions.h"
#include "registry.h"
#include "vehicle.h"

enum { INSTANTIATED, INITIALIZING, STEPPING, TERMINATED, FAILED };

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
    if (!(modes & (1 << self->mode))) {
        static const char *names[] = {"instantiated", "in initialization mode",
                                      "in step mode", "terminated", "failed"};
        char text[200];
        snprintf(text, sizeof text, "not allowed when the FMU is %s", names[self->mode]);
        refuse(self, call, text);
        return NULL;
    }
    return self;
}

#define ANY_MODE 0x1f
#define BIT(m) (1 << (m))

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

fmi3Instance fmi3InstantiateModelExchange(fmi3String instanceName,
                                          fmi3String instantiationToken,
                                          fmi3String resourcePath, fmi3Boolean visible,
                                          fmi3Boolean loggingOn,
                                          fmi3InstanceEnvironment instanceEnvironment,
                                          fmi3LogMessageCallback logMessage) {
    (void)instanceName, (void)instantiationToken, (void)resourcePath, (void)visible;
    (void)loggingOn;
    if (logMessage != NULL)
        logMessage(instanceEnvironment, fmi3Error, "logStatusError",
                   "this FMU is for co-simulation only");
    return NULL;
}

fmi3Instance fmi3InstantiateScheduledExecution(
    fmi3String instanceName, fmi3String instantiationToken, fmi3String resourcePath,
    fmi3Boolean visible, fmi3Boolean loggingOn, fmi3InstanceEnvironment instanceEnvironment,
    fmi3LogMessageCallback logMessage, fmi3ClockUpdateCallback clockUpdate,
    fmi3LockPreemptionCallback lockPreemption, fmi3UnlockPreemptionCallback unlockPreemption) {
    (void)instanceName, (void)instantiationToken, (void)resourcePath, (void)visible;
    (void)loggingOn, (void)clockUpdate, (void)lockPreemption, (void)unlockPreemption;
    if (logMessage != NULL)
        logMessage(instanceEnvironment, fmi3Error, "logStatusError",
                   "this FMU is for co-simulation only");
    return NULL;
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
static fmi3Status no_such(fmi3Instance c, const char *call, const fmi3ValueReference vr[],
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

#define NO_SUCH_GET(name, type)                                                           \
    fmi3Status name(fmi3Instance c, const fmi3ValueReference vr[], size_t nvr,           \
                    type values[], size_t nValues) {                                     \
        (void)values, (void)nValues;                                                     \
        return no_such(c, #name, vr, nvr);                                               \
    }
#define NO_SUCH_SET(name, type)                                                           \
    fmi3Status name(fmi3Instance c, const fmi3ValueReference vr[], size_t nvr,           \
                    const type values[], size_t nValues) {                               \
        (void)values, (void)nValues;                                                     \
        return no_such(c, #name, vr, nvr);                                               \
    }

NO_SUCH_GET(fmi3GetFloat32, fmi3Float32)
NO_SUCH_GET(fmi3GetInt8, fmi3Int8)
NO_SUCH_GET(fmi3GetUInt8, fmi3UInt8)
NO_SUCH_GET(fmi3GetInt16, fmi3Int16)
NO_SUCH_GET(fmi3GetUInt16, fmi3UInt16)
NO_SUCH_GET(fmi3GetUInt32, fmi3UInt32)
NO_SUCH_GET(fmi3GetInt64, fmi3Int64)
NO_SUCH_GET(fmi3GetUInt64, fmi3UInt64)
NO_SUCH_GET(fmi3GetString, fmi3String)
NO_SUCH_SET(fmi3SetFloat32, fmi3Float32)
NO_SUCH_SET(fmi3SetInt8, fmi3Int8)
NO_SUCH_SET(fmi3SetUInt8, fmi3UInt8)
NO_SUCH_SET(fmi3SetInt16, fmi3Int16)
NO_SUCH_SET(fmi3SetUInt16, fmi3UInt16)
NO_SUCH_SET(fmi3SetUInt32, fmi3UInt32)
NO_SUCH_SET(fmi3SetInt64, fmi3Int64)
NO_SUCH_SET(fmi3SetUInt64, fmi3UInt64)
NO_SUCH_SET(fmi3SetString, fmi3String)

fmi3Status fmi3GetBinary(fmi3Instance c, const fmi3ValueReference vr[], size_t nvr,
                         size_t valueSizes[], fmi3Binary values[], size_t nValues) {
    (void)valueSizes, (void)values, (void)nValues;
    return no_such(c, "fmi3GetBinary", vr, nvr);
}

fmi3Status fmi3SetBinary(fmi3Instance c, const fmi3ValueReference vr[], size_t nvr,
                         const size_t valueSizes[], const fmi3Binary values[],
                         size_t nValues) {
    (void)valueSizes, (void)values, (void)nValues;
    return no_such(c, "fmi3SetBinary", vr, nvr);
}

/* -- features the FMU does not have -------------------------------------------------- */
static fmi3Status absent(fmi3Instance c, const char *call, const char *why) {
    instance *self = checked(c, call, ANY_MODE);
    if (self != NULL) refuse(self, call, why);
    return fmi3Error;
}

#define NO_CLOCKS "the FMU has no clocks"
#define NO_ME "the FMU is for co-simulation only"

fmi3Status fmi3GetClock(fmi3Instance c, const fmi3ValueReference vr[], size_t nvr,
                        fmi3Clock values[]) {
    (void)vr, (void)nvr, (void)values;
    return absent(c, "fmi3GetClock", NO_CLOCKS);
}
fmi3Status fmi3SetClock(fmi3Instance c, const fmi3ValueReference vr[], size_t nvr,
                        const fmi3Clock values[]) {
    (void)vr, (void)nvr, (void)values;
    return absent(c, "fmi3SetClock", NO_CLOCKS);
}
fmi3Status fmi3GetIntervalDecimal(fmi3Instance c, const fmi3ValueReference vr[], size_t nvr,
                                  fmi3Float64 intervals[], fmi3IntervalQualifier qualifiers[]) {
    (void)vr, (void)nvr, (void)intervals, (void)qualifiers;
    return absent(c, "fmi3GetIntervalDecimal", NO_CLOCKS);
}
fmi3Status fmi3GetIntervalFraction(fmi3Instance c, const fmi3ValueReference vr[], size_t nvr,
                                   fmi3UInt64 counters[], fmi3UInt64 resolutions[],
                                   fmi3IntervalQualifier qualifiers[]) {
    (void)vr, (void)nvr, (void)counters, (void)resolutions, (void)qualifiers;
    return absent(c, "fmi3GetIntervalFraction", NO_CLOCKS);
}
fmi3Status fmi3GetShiftDecimal(fmi3Instance c, const fmi3ValueReference vr[], size_t nvr,
                               fmi3Float64 shifts[]) {
    (void)vr, (void)nvr, (void)shifts;
    return absent(c, "fmi3GetShiftDecimal", NO_CLOCKS);
}
fmi3Status fmi3GetShiftFraction(fmi3Instance c, const fmi3ValueReference vr[], size_t nvr,
                                fmi3UInt64 counters[], fmi3UInt64 resolutions[]) {
    (void)vr, (void)nvr, (void)counters, (void)resolutions;
    return absent(c, "fmi3GetShiftFraction", NO_CLOCKS);
}
fmi3Status fmi3SetIntervalDecimal(fmi3Instance c, const fmi3ValueReference vr[], size_t nvr,
                                  const fmi3Float64 intervals[]) {
    (void)vr, (void)nvr, (void)intervals;
    return absent(c, "fmi3SetIntervalDecimal", NO_CLOCKS);
}
fmi3Status fmi3SetIntervalFraction(fmi3Instance c, const fmi3ValueReference vr[], size_t nvr,
                                   const fmi3UInt64 counters[],
                                   const fmi3UInt64 resolutions[]) {
    (void)vr, (void)nvr, (void)counters, (void)resolutions;
    return absent(c, "fmi3SetIntervalFraction", NO_CLOCKS);
}
fmi3Status fmi3SetShiftDecimal(fmi3Instance c, const fmi3ValueReference vr[], size_t nvr,
                               const fmi3Float64 shifts[]) {
    (void)vr, (void)nvr, (void)shifts;
    return absent(c, "fmi3SetShiftDecimal", NO_CLOCKS);
}
fmi3Status fmi3SetShiftFraction(fmi3Instance c, const fmi3ValueReference vr[], size_t nvr,
                                const fmi3UInt64 counters[], const fmi3UInt64 resolutions[]) {
    (void)vr, (void)nvr, (void)counters, (void)resolutions;
    return absent(c, "fmi3SetShiftFraction", NO_CLOCKS);
}
fmi3Status fmi3ActivateModelPartition(fmi3Instance c, fmi3ValueReference clockReference,
                                      fmi3Float64 activationTime) {
    (void)clockReference, (void)activationTime;
    return absent(c, "fmi3ActivateModelPartition", NO_CLOCKS);
}
fmi3Status fmi3EnterEventMode(fmi3Instance c) {
    return absent(c, "fmi3EnterEventMode", "the FMU has no event mode");
}
fmi3Status fmi3EnterConfigurationMode(fmi3Instance c) {
    return absent(c, "fmi3EnterConfigurationMode", "the FMU has no structural parameters");
}
fmi3Status fmi3ExitConfigurationMode(fmi3Instance c) {
    return absent(c, "fmi3ExitConfigurationMode", "the FMU has no structural parameters");
}
fmi3Status fmi3GetNumberOfVariableDependencies(fmi3Instance c, fmi3ValueReference vr,
                                               size_t *nDependencies) {
    (void)vr, (void)nDependencies;
    return absent(c, "fmi3GetNumberOfVariableDependencies", "dependencies are not provided");
}
fmi3Status fmi3GetVariableDependencies(fmi3Instance c, fmi3ValueReference dependent,
                                       size_t elementIndicesOfDependent[],
                                       fmi3ValueReference independents[],
                                       size_t elementIndicesOfIndependents[],
                                       fmi3DependencyKind dependencyKinds[],
                                       size_t nDependencies) {
    (void)dependent, (void)elementIndicesOfDependent, (void)independents;
    (void)elementIndicesOfIndependents, (void)dependencyKinds, (void)nDependencies;
    return absent(c, "fmi3GetVariableDependencies", "dependencies are not provided");
}
fmi3Status fmi3GetDirectionalDerivative(fmi3Instance c, const fmi3ValueReference unknowns[],
                                        size_t nUnknowns, const fmi3ValueReference knowns[],
                                        size_t nKnowns, const fmi3Float64 seed[], size_t nSeed,
                                        fmi3Float64 sensitivity[], size_t nSensitivity) {
    (void)unknowns, (void)nUnknowns, (void)knowns, (void)nKnowns, (void)seed, (void)nSeed;
    (void)sensitivity, (void)nSensitivity;
    return absent(c, "fmi3GetDirectionalDerivative", "derivatives are not provided");
}
fmi3Status fmi3GetAdjointDerivative(fmi3Instance c, const fmi3ValueReference unknowns[],
                                    size_t nUnknowns, const fmi3ValueReference knowns[],
                                    size_t nKnowns, const fmi3Float64 seed[], size_t nSeed,
                                    fmi3Float64 sensitivity[], size_t nSensitivity) {
    (void)unknowns, (void)nUnknowns, (void)knowns, (void)nKnowns, (void)seed, (void)nSeed;
    (void)sensitivity, (void)nSensitivity;
    return absent(c, "fmi3GetAdjointDerivative", "derivatives are not provided");
}
fmi3Status fmi3GetOutputDerivatives(fmi3Instance c, const fmi3ValueReference vr[], size_t nvr,
                                    const fmi3Int32 orders[], fmi3Float64 values[],
                                    size_t nValues) {
    (void)vr, (void)nvr, (void)orders, (void)values, (void)nValues;
    return absent(c, "fmi3GetOutputDerivatives", "derivatives are not provided");
}
fmi3Status fmi3EvaluateDiscreteStates(fmi3Instance c) {
    return absent(c, "fmi3EvaluateDiscreteStates", NO_ME);
}
fmi3Status fmi3UpdateDiscreteStates(fmi3Instance c, fmi3Boolean *discreteStatesNeedUpdate,
                                    fmi3Boolean *terminateSimulation,
                                    fmi3Boolean *nominalsOfContinuousStatesChanged,
                                    fmi3Boolean *valuesOfContinuousStatesChanged,
                                    fmi3Boolean *nextEventTimeDefined,
                                    fmi3Float64 *nextEventTime) {
    (void)discreteStatesNeedUpdate, (void)terminateSimulation;
    (void)nominalsOfContinuousStatesChanged, (void)valuesOfContinuousStatesChanged;
    (void)nextEventTimeDefined, (void)nextEventTime;
    return absent(c, "fmi3UpdateDiscreteStates", "the FMU has no event mode");
}
fmi3Status fmi3EnterContinuousTimeMode(fmi3Instance c) {
    return absent(c, "fmi3EnterContinuousTimeMode", NO_ME);
}
fmi3Status fmi3CompletedIntegratorStep(fmi3Instance c,
                                       fmi3Boolean noSetFMUStatePriorToCurrentPoint,
                                       fmi3Boolean *enterEventMode,
                                       fmi3Boolean *terminateSimulation) {
    (void)noSetFMUStatePriorToCurrentPoint, (void)enterEventMode, (void)terminateSimulation;
    return absent(c, "fmi3CompletedIntegratorStep", NO_ME);
}
fmi3Status fmi3SetTime(fmi3Instance c, fmi3Float64 time) {
    (void)time;
    return absent(c, "fmi3SetTime", NO_ME);
}
fmi3Status fmi3SetContinuousStates(fmi3Instance c, const fmi3Float64 continuousStates[],
                                   size_t nContinuousStates) {
    (void)continuousStates, (void)nContinuousStates;
    return absent(c, "fmi3SetContinuousStates", NO_ME);
}
fmi3Status fmi3GetContinuousStateDerivatives(fmi3Instance c, fmi3Float64 derivatives[],
                                             size_t nContinuousStates) {
    (void)derivatives, (void)nContinuousStates;
    return absent(c, "fmi3GetContinuousStateDerivatives", NO_ME);
}
fmi3Status fmi3GetEventIndicators(fmi3Instance c, fmi3Float64 eventIndicators[],
                                  size_t nEventIndicators) {
    (void)eventIndicators, (void)nEventIndicators;
    return absent(c, "fmi3GetEventIndicators", NO_ME);
}
fmi3Status fmi3GetContinuousStates(fmi3Instance c, fmi3Float64 continuousStates[],
                                   size_t nContinuousStates) {
    (void)continuousStates, (void)nContinuousStates;
    return absent(c, "fmi3GetContinuousStates", NO_ME);
}
fmi3Status fmi3GetNominalsOfContinuousStates(fmi3Instance c, fmi3Float64 nominals[],
                                             size_t nContinuousStates) {
    (void)nominals, (void)nContinuousStates;
    return absent(c, "fmi3GetNominalsOfContinuousStates", NO_ME);
}
fmi3Status fmi3GetNumberOfEventIndicators(fmi3Instance c, size_t *nEventIndicators) {
    (void)nEventIndicators;
    return absent(c, "fmi3GetNumberOfEventIndicators", NO_ME);
}
fmi3Status fmi3GetNumberOfContinuousStates(fmi3Instance c, size_t *nContinuousStates) {
    (void)nContinuousStates;
    return absent(c, "fmi3GetNumberOfContinuousStates", NO_ME);
}
fmi3Status fmi3EnterStepMode(fmi3Instance c) {
    return absent(c, "fmi3EnterStepMode", "the FMU has no event mode: it is in step mode");
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
