/* The functions of FMI 3 for features the native FMUs do not have (model exchange,
   scheduled execution, clocks, event mode, structural parameters, derivatives, and the
   variable types none of their variables has): each refuses, saying why, through the FMU's
   own fmi3_absent and fmi3_no_such. Shared by the vehicle's and the coupling's FMI 3 layer. */
#include <stdio.h>

#include "fmi3Functions.h"

/* Log `why` for `call` on a live instance; fmi3Error. */
fmi3Status fmi3_absent(fmi3Instance c, const char *call, const char *why);
/* Refuse any value reference (fmi3OK for none): no variable of this type. */
fmi3Status fmi3_no_such(fmi3Instance c, const char *call, const fmi3ValueReference vr[],
                        size_t nvr);

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

#define NO_SUCH_GET(name, type)                                                           \
    fmi3Status name(fmi3Instance c, const fmi3ValueReference vr[], size_t nvr,           \
                    type values[], size_t nValues) {                                     \
        (void)values, (void)nValues;                                                     \
        return fmi3_no_such(c, #name, vr, nvr);                                               \
    }
#define NO_SUCH_SET(name, type)                                                           \
    fmi3Status name(fmi3Instance c, const fmi3ValueReference vr[], size_t nvr,           \
                    const type values[], size_t nValues) {                               \
        (void)values, (void)nValues;                                                     \
        return fmi3_no_such(c, #name, vr, nvr);                                               \
    }

NO_SUCH_GET(fmi3GetFloat32, fmi3Float32)
NO_SUCH_GET(fmi3GetInt8, fmi3Int8)
NO_SUCH_GET(fmi3GetUInt8, fmi3UInt8)
NO_SUCH_GET(fmi3GetInt16, fmi3Int16)
NO_SUCH_GET(fmi3GetUInt16, fmi3UInt16)
NO_SUCH_GET(fmi3GetUInt32, fmi3UInt32)
NO_SUCH_GET(fmi3GetInt64, fmi3Int64)
NO_SUCH_GET(fmi3GetUInt64, fmi3UInt64)
NO_SUCH_SET(fmi3SetFloat32, fmi3Float32)
NO_SUCH_SET(fmi3SetInt8, fmi3Int8)
NO_SUCH_SET(fmi3SetUInt8, fmi3UInt8)
NO_SUCH_SET(fmi3SetInt16, fmi3Int16)
NO_SUCH_SET(fmi3SetUInt16, fmi3UInt16)
NO_SUCH_SET(fmi3SetUInt32, fmi3UInt32)
NO_SUCH_SET(fmi3SetInt64, fmi3Int64)
NO_SUCH_SET(fmi3SetUInt64, fmi3UInt64)

fmi3Status fmi3GetBinary(fmi3Instance c, const fmi3ValueReference vr[], size_t nvr,
                         size_t valueSizes[], fmi3Binary values[], size_t nValues) {
    (void)valueSizes, (void)values, (void)nValues;
    return fmi3_no_such(c, "fmi3GetBinary", vr, nvr);
}

fmi3Status fmi3SetBinary(fmi3Instance c, const fmi3ValueReference vr[], size_t nvr,
                         const size_t valueSizes[], const fmi3Binary values[],
                         size_t nValues) {
    (void)valueSizes, (void)values, (void)nValues;
    return fmi3_no_such(c, "fmi3SetBinary", vr, nvr);
}

/* -- features the FMU does not have -------------------------------------------------- */

#define NO_CLOCKS "the FMU has no clocks"
#define NO_ME "the FMU is for co-simulation only"

fmi3Status fmi3GetClock(fmi3Instance c, const fmi3ValueReference vr[], size_t nvr,
                        fmi3Clock values[]) {
    (void)vr, (void)nvr, (void)values;
    return fmi3_absent(c, "fmi3GetClock", NO_CLOCKS);
}
fmi3Status fmi3SetClock(fmi3Instance c, const fmi3ValueReference vr[], size_t nvr,
                        const fmi3Clock values[]) {
    (void)vr, (void)nvr, (void)values;
    return fmi3_absent(c, "fmi3SetClock", NO_CLOCKS);
}
fmi3Status fmi3GetIntervalDecimal(fmi3Instance c, const fmi3ValueReference vr[], size_t nvr,
                                  fmi3Float64 intervals[], fmi3IntervalQualifier qualifiers[]) {
    (void)vr, (void)nvr, (void)intervals, (void)qualifiers;
    return fmi3_absent(c, "fmi3GetIntervalDecimal", NO_CLOCKS);
}
fmi3Status fmi3GetIntervalFraction(fmi3Instance c, const fmi3ValueReference vr[], size_t nvr,
                                   fmi3UInt64 counters[], fmi3UInt64 resolutions[],
                                   fmi3IntervalQualifier qualifiers[]) {
    (void)vr, (void)nvr, (void)counters, (void)resolutions, (void)qualifiers;
    return fmi3_absent(c, "fmi3GetIntervalFraction", NO_CLOCKS);
}
fmi3Status fmi3GetShiftDecimal(fmi3Instance c, const fmi3ValueReference vr[], size_t nvr,
                               fmi3Float64 shifts[]) {
    (void)vr, (void)nvr, (void)shifts;
    return fmi3_absent(c, "fmi3GetShiftDecimal", NO_CLOCKS);
}
fmi3Status fmi3GetShiftFraction(fmi3Instance c, const fmi3ValueReference vr[], size_t nvr,
                                fmi3UInt64 counters[], fmi3UInt64 resolutions[]) {
    (void)vr, (void)nvr, (void)counters, (void)resolutions;
    return fmi3_absent(c, "fmi3GetShiftFraction", NO_CLOCKS);
}
fmi3Status fmi3SetIntervalDecimal(fmi3Instance c, const fmi3ValueReference vr[], size_t nvr,
                                  const fmi3Float64 intervals[]) {
    (void)vr, (void)nvr, (void)intervals;
    return fmi3_absent(c, "fmi3SetIntervalDecimal", NO_CLOCKS);
}
fmi3Status fmi3SetIntervalFraction(fmi3Instance c, const fmi3ValueReference vr[], size_t nvr,
                                   const fmi3UInt64 counters[],
                                   const fmi3UInt64 resolutions[]) {
    (void)vr, (void)nvr, (void)counters, (void)resolutions;
    return fmi3_absent(c, "fmi3SetIntervalFraction", NO_CLOCKS);
}
fmi3Status fmi3SetShiftDecimal(fmi3Instance c, const fmi3ValueReference vr[], size_t nvr,
                               const fmi3Float64 shifts[]) {
    (void)vr, (void)nvr, (void)shifts;
    return fmi3_absent(c, "fmi3SetShiftDecimal", NO_CLOCKS);
}
fmi3Status fmi3SetShiftFraction(fmi3Instance c, const fmi3ValueReference vr[], size_t nvr,
                                const fmi3UInt64 counters[], const fmi3UInt64 resolutions[]) {
    (void)vr, (void)nvr, (void)counters, (void)resolutions;
    return fmi3_absent(c, "fmi3SetShiftFraction", NO_CLOCKS);
}
fmi3Status fmi3ActivateModelPartition(fmi3Instance c, fmi3ValueReference clockReference,
                                      fmi3Float64 activationTime) {
    (void)clockReference, (void)activationTime;
    return fmi3_absent(c, "fmi3ActivateModelPartition", NO_CLOCKS);
}
fmi3Status fmi3EnterEventMode(fmi3Instance c) {
    return fmi3_absent(c, "fmi3EnterEventMode", "the FMU has no event mode");
}
fmi3Status fmi3EnterConfigurationMode(fmi3Instance c) {
    return fmi3_absent(c, "fmi3EnterConfigurationMode", "the FMU has no structural parameters");
}
fmi3Status fmi3ExitConfigurationMode(fmi3Instance c) {
    return fmi3_absent(c, "fmi3ExitConfigurationMode", "the FMU has no structural parameters");
}
fmi3Status fmi3GetNumberOfVariableDependencies(fmi3Instance c, fmi3ValueReference vr,
                                               size_t *nDependencies) {
    (void)vr, (void)nDependencies;
    return fmi3_absent(c, "fmi3GetNumberOfVariableDependencies", "dependencies are not provided");
}
fmi3Status fmi3GetVariableDependencies(fmi3Instance c, fmi3ValueReference dependent,
                                       size_t elementIndicesOfDependent[],
                                       fmi3ValueReference independents[],
                                       size_t elementIndicesOfIndependents[],
                                       fmi3DependencyKind dependencyKinds[],
                                       size_t nDependencies) {
    (void)dependent, (void)elementIndicesOfDependent, (void)independents;
    (void)elementIndicesOfIndependents, (void)dependencyKinds, (void)nDependencies;
    return fmi3_absent(c, "fmi3GetVariableDependencies", "dependencies are not provided");
}
fmi3Status fmi3GetDirectionalDerivative(fmi3Instance c, const fmi3ValueReference unknowns[],
                                        size_t nUnknowns, const fmi3ValueReference knowns[],
                                        size_t nKnowns, const fmi3Float64 seed[], size_t nSeed,
                                        fmi3Float64 sensitivity[], size_t nSensitivity) {
    (void)unknowns, (void)nUnknowns, (void)knowns, (void)nKnowns, (void)seed, (void)nSeed;
    (void)sensitivity, (void)nSensitivity;
    return fmi3_absent(c, "fmi3GetDirectionalDerivative", "derivatives are not provided");
}
fmi3Status fmi3GetAdjointDerivative(fmi3Instance c, const fmi3ValueReference unknowns[],
                                    size_t nUnknowns, const fmi3ValueReference knowns[],
                                    size_t nKnowns, const fmi3Float64 seed[], size_t nSeed,
                                    fmi3Float64 sensitivity[], size_t nSensitivity) {
    (void)unknowns, (void)nUnknowns, (void)knowns, (void)nKnowns, (void)seed, (void)nSeed;
    (void)sensitivity, (void)nSensitivity;
    return fmi3_absent(c, "fmi3GetAdjointDerivative", "derivatives are not provided");
}
fmi3Status fmi3GetOutputDerivatives(fmi3Instance c, const fmi3ValueReference vr[], size_t nvr,
                                    const fmi3Int32 orders[], fmi3Float64 values[],
                                    size_t nValues) {
    (void)vr, (void)nvr, (void)orders, (void)values, (void)nValues;
    return fmi3_absent(c, "fmi3GetOutputDerivatives", "derivatives are not provided");
}
fmi3Status fmi3EvaluateDiscreteStates(fmi3Instance c) {
    return fmi3_absent(c, "fmi3EvaluateDiscreteStates", NO_ME);
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
    return fmi3_absent(c, "fmi3UpdateDiscreteStates", "the FMU has no event mode");
}
fmi3Status fmi3EnterContinuousTimeMode(fmi3Instance c) {
    return fmi3_absent(c, "fmi3EnterContinuousTimeMode", NO_ME);
}
fmi3Status fmi3CompletedIntegratorStep(fmi3Instance c,
                                       fmi3Boolean noSetFMUStatePriorToCurrentPoint,
                                       fmi3Boolean *enterEventMode,
                                       fmi3Boolean *terminateSimulation) {
    (void)noSetFMUStatePriorToCurrentPoint, (void)enterEventMode, (void)terminateSimulation;
    return fmi3_absent(c, "fmi3CompletedIntegratorStep", NO_ME);
}
fmi3Status fmi3SetTime(fmi3Instance c, fmi3Float64 time) {
    (void)time;
    return fmi3_absent(c, "fmi3SetTime", NO_ME);
}
fmi3Status fmi3SetContinuousStates(fmi3Instance c, const fmi3Float64 continuousStates[],
                                   size_t nContinuousStates) {
    (void)continuousStates, (void)nContinuousStates;
    return fmi3_absent(c, "fmi3SetContinuousStates", NO_ME);
}
fmi3Status fmi3GetContinuousStateDerivatives(fmi3Instance c, fmi3Float64 derivatives[],
                                             size_t nContinuousStates) {
    (void)derivatives, (void)nContinuousStates;
    return fmi3_absent(c, "fmi3GetContinuousStateDerivatives", NO_ME);
}
fmi3Status fmi3GetEventIndicators(fmi3Instance c, fmi3Float64 eventIndicators[],
                                  size_t nEventIndicators) {
    (void)eventIndicators, (void)nEventIndicators;
    return fmi3_absent(c, "fmi3GetEventIndicators", NO_ME);
}
fmi3Status fmi3GetContinuousStates(fmi3Instance c, fmi3Float64 continuousStates[],
                                   size_t nContinuousStates) {
    (void)continuousStates, (void)nContinuousStates;
    return fmi3_absent(c, "fmi3GetContinuousStates", NO_ME);
}
fmi3Status fmi3GetNominalsOfContinuousStates(fmi3Instance c, fmi3Float64 nominals[],
                                             size_t nContinuousStates) {
    (void)nominals, (void)nContinuousStates;
    return fmi3_absent(c, "fmi3GetNominalsOfContinuousStates", NO_ME);
}
fmi3Status fmi3GetNumberOfEventIndicators(fmi3Instance c, size_t *nEventIndicators) {
    (void)nEventIndicators;
    return fmi3_absent(c, "fmi3GetNumberOfEventIndicators", NO_ME);
}
fmi3Status fmi3GetNumberOfContinuousStates(fmi3Instance c, size_t *nContinuousStates) {
    (void)nContinuousStates;
    return fmi3_absent(c, "fmi3GetNumberOfContinuousStates", NO_ME);
}
fmi3Status fmi3EnterStepMode(fmi3Instance c) {
    return fmi3_absent(c, "fmi3EnterStepMode", "the FMU has no event mode: it is in step mode");
}

