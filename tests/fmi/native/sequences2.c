/* FMI 2 call sequences against the C layer linked in (not loaded), for a sanitizer build:
   the normal life cycle, every error path (refused instantiation, parameters, step sizes
   and serialized states; calls out of order; NULL arguments; unknown references; freeing
   twice), 20 instances side by side and 1000 instantiate/step/free cycles. Prints "all
   sequences passed" and exits 0 when every expectation held. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmi2Functions.h"
#include "vehicle.h"

static int failures = 0;
static int messages = 0;
static char last[1024];

#define EXPECT(cond)                                                   \
    do {                                                               \
        if (!(cond)) {                                                 \
            fprintf(stderr, "line %d: expected %s\n", __LINE__, #cond); \
            failures++;                                                \
        }                                                              \
    } while (0)

static void logger(fmi2ComponentEnvironment env, fmi2String name, fmi2Status status,
                   fmi2String category, fmi2String message, ...) {
    (void)env, (void)name, (void)status, (void)category;
    snprintf(last, sizeof last, "%s", message);
    messages++;
}

static fmi2ValueReference input(const char *name) {
    for (int j = 0; j < VC_N_FMU_INPUTS; j++)
        if (strcmp(VC_INPUT_NAMES[j], name) == 0) return VC_VR_INPUTS + j;
    abort();
}

static fmi2ValueReference parameter(const char *name) {
    for (int k = 0; k < VC_N_PARAMETERS; k++)
        if (strcmp(VC_PARAMETER_NAMES[k], name) == 0) return VC_VR_PARAMETERS + k;
    abort();
}

static const fmi2CallbackFunctions callbacks = {logger, calloc, free, NULL, NULL};

static fmi2Component started(void) {
    fmi2Component c = fmi2Instantiate("car", fmi2CoSimulation, VC_GUID, "", &callbacks, 0, 0);
    EXPECT(c != NULL);
    EXPECT(fmi2SetupExperiment(c, 0, 0.0, 0.0, 0, 0.0) == fmi2OK);
    EXPECT(fmi2EnterInitializationMode(c) == fmi2OK);
    EXPECT(fmi2ExitInitializationMode(c) == fmi2OK);
    return c;
}

int main(void) {
    const fmi2ValueReference throttle = input("throttle"), gear = input("gear");
    const fmi2ValueReference speed = VC_VR_OUTPUTS, fuel = parameter("engine.initial_fuel");
    fmi2Real value = 0.0;
    fmi2Integer integer = 0;
    fmi2String text0 = "";

    /* refused instantiations */
    EXPECT(fmi2Instantiate("x", fmi2ModelExchange, VC_GUID, "", &callbacks, 0, 0) == NULL);
    EXPECT(fmi2Instantiate("x", fmi2CoSimulation, "{not-it}", "", &callbacks, 0, 0) == NULL);
    EXPECT(fmi2Instantiate("x", fmi2CoSimulation, NULL, "", &callbacks, 0, 0) == NULL);
    EXPECT(strstr(last, "GUID") != NULL);
    fmi2Component quiet = fmi2Instantiate(NULL, fmi2CoSimulation, VC_GUID, NULL, NULL, 0, 0);
    EXPECT(quiet != NULL); /* no callbacks at all: it must not log through NULL */
    EXPECT(fmi2DoStep(quiet, 0.0, 0.001, 0) == fmi2Error);
    fmi2FreeInstance(quiet);

    /* calls out of order, NULL arguments, unknown and mistyped references */
    fmi2Component c = fmi2Instantiate("car", fmi2CoSimulation, VC_GUID, "", &callbacks, 0, 0);
    EXPECT(fmi2DoStep(c, 0.0, 0.001, 0) == fmi2Error);
    EXPECT(fmi2ExitInitializationMode(c) == fmi2Error);
    EXPECT(fmi2Terminate(c) == fmi2Error);
    EXPECT(fmi2GetReal(c, NULL, 1, &value) == fmi2Error);
    EXPECT(fmi2GetReal(c, &speed, 1, NULL) == fmi2Error);
    EXPECT(fmi2GetReal(NULL, &speed, 1, &value) == fmi2Error);
    EXPECT(fmi2GetReal(c, &speed, 0, NULL) == fmi2OK);
    EXPECT(fmi2GetInteger(c, &gear, 1, NULL) == fmi2Error);
    EXPECT(fmi2SetInteger(c, NULL, 1, &integer) == fmi2Error);
    EXPECT(fmi2GetBoolean(c, &gear, 1, NULL) == fmi2Error);
    EXPECT(fmi2SetBoolean(c, &gear, 1, NULL) == fmi2Error);
    EXPECT(strstr(last, "fmi2SetBoolean: NULL") != NULL);
    EXPECT(fmi2SetString(c, &speed, 1, &text0) == fmi2Error);
    EXPECT(fmi2SetInteger(c, &gear, 0, NULL) == fmi2OK);
    const fmi2ValueReference nowhere = VC_VR_END + 7;
    EXPECT(fmi2GetReal(c, &nowhere, 1, &value) == fmi2Error);
    EXPECT(fmi2GetInteger(c, &speed, 1, &integer) == fmi2Error); /* a Real */
    EXPECT(fmi2GetInteger(c, &gear, 1, &integer) == fmi2OK && integer == 1);
    fmi2String text = NULL;
    EXPECT(fmi2GetString(c, &speed, 1, &text) == fmi2Error);
    EXPECT(fmi2SetReal(c, &speed, 1, &value) == fmi2Error); /* an output */
    EXPECT(fmi2GetFMUstate(c, NULL) == fmi2Error);
    EXPECT(fmi2SetFMUstate(c, NULL) == fmi2Error);
    fmi2FMUstate none = NULL;
    EXPECT(fmi2DeSerializeFMUstate(c, NULL, 10, &none) == fmi2Error && none == NULL);
    EXPECT(fmi2GetDirectionalDerivative(c, NULL, 0, NULL, 0, NULL, NULL) == fmi2Error);
    EXPECT(fmi2CancelStep(c) == fmi2Error);

    /* refused parameters: exitInitializationMode fails, then every step; free twice */
    EXPECT(fmi2EnterInitializationMode(c) == fmi2OK);
    const fmi2Real too_much = 2.0;
    EXPECT(fmi2SetReal(c, &fuel, 1, &too_much) == fmi2OK);
    EXPECT(fmi2ExitInitializationMode(c) == fmi2Error);
    EXPECT(strstr(last, "engine.initial_fuel: Input should be less than or equal to 1") != NULL);
    EXPECT(fmi2DoStep(c, 0.0, 0.001, 0) == fmi2Error);
    EXPECT(fmi2Terminate(c) == fmi2OK);
    fmi2FreeInstance(c);
    fmi2FreeInstance(c); /* the master's error: refused, nothing touched */
    EXPECT(fmi2DoStep(c, 0.0, 0.001, 0) == fmi2Error);

    /* a running instance: refused inputs, parameters and step sizes; it carries on */
    c = started();
    const fmi2Real half = 0.5, nan = NAN, later = 1000.0;
    EXPECT(fmi2SetReal(c, &throttle, 1, &half) == fmi2OK);
    EXPECT(fmi2SetReal(c, &throttle, 1, &nan) == fmi2Warning);
    EXPECT(fmi2GetReal(c, &throttle, 1, &value) == fmi2OK && value == 0.5);
    EXPECT(fmi2SetReal(c, &fuel, 1, &half) == fmi2Error); /* after initialization */
    EXPECT(fmi2DoStep(c, 0.0, 0.0007, 0) == fmi2Discard);
    EXPECT(fmi2DoStep(c, 0.0, 0.0, 0) == fmi2Discard);
    EXPECT(fmi2DoStep(c, 0.0, -0.001, 0) == fmi2Discard);
    EXPECT(fmi2DoStep(c, 0.0, 1e300, 0) == fmi2Discard);
    EXPECT(fmi2DoStep(c, 0.0, NAN, 0) == fmi2Discard);
    EXPECT(fmi2DoStep(c, 0.0, 0.001, 0) == fmi2OK);
    EXPECT(fmi2GetRealStatus(c, fmi2LastSuccessfulTime, &value) == fmi2OK && value == 0.001);
    EXPECT(fmi2SetReal(c, &throttle, 1, &later) == fmi2OK); /* clamped by the model */

    /* state: get, set, serialize, refuse a foreign or short one */
    fmi2FMUstate saved = NULL, copy = NULL;
    EXPECT(fmi2GetFMUstate(c, &saved) == fmi2OK && saved != NULL);
    EXPECT(fmi2GetFMUstate(c, &saved) == fmi2OK); /* reused in place */
    fmi2Real before = 0.0, after = 0.0;
    for (int k = 0; k < 100; k++) EXPECT(fmi2DoStep(c, 0.0, 0.005, 0) == fmi2OK);
    EXPECT(fmi2GetReal(c, &speed, 1, &before) == fmi2OK);
    size_t size = 0;
    EXPECT(fmi2SerializedFMUstateSize(c, saved, &size) == fmi2OK && size > 0);
    char *bytes = malloc(size);
    EXPECT(fmi2SerializeFMUstate(c, saved, bytes, size - 1) == fmi2Error);
    EXPECT(fmi2SerializeFMUstate(c, saved, bytes, size) == fmi2OK);
    EXPECT(fmi2DeSerializeFMUstate(c, bytes, size - 1, &copy) == fmi2Error && copy == NULL);
    bytes[0] ^= 1;
    EXPECT(fmi2DeSerializeFMUstate(c, bytes, size, &copy) == fmi2Error && copy == NULL);
    bytes[0] ^= 1;
    EXPECT(fmi2DeSerializeFMUstate(c, bytes, size, &copy) == fmi2OK && copy != NULL);
    free(bytes);
    EXPECT(fmi2SetFMUstate(c, copy) == fmi2OK);
    for (int k = 0; k < 100; k++) EXPECT(fmi2DoStep(c, 0.0, 0.005, 0) == fmi2OK);
    EXPECT(fmi2GetReal(c, &speed, 1, &after) == fmi2OK && after == before);
    EXPECT(fmi2FreeFMUstate(c, &saved) == fmi2OK && saved == NULL);
    EXPECT(fmi2FreeFMUstate(c, &copy) == fmi2OK && copy == NULL);
    EXPECT(fmi2FreeFMUstate(c, &copy) == fmi2OK); /* NULL: nothing to free */
    EXPECT(fmi2Reset(c) == fmi2OK);
    EXPECT(fmi2DoStep(c, 0.0, 0.001, 0) == fmi2Error); /* instantiated again */
    EXPECT(fmi2EnterInitializationMode(c) == fmi2OK);
    EXPECT(fmi2ExitInitializationMode(c) == fmi2OK);
    EXPECT(fmi2Terminate(c) == fmi2OK);
    EXPECT(fmi2DoStep(c, 0.0, 0.001, 0) == fmi2Error); /* terminated */
    fmi2FreeInstance(c);

    /* 20 side by side, then 1000 cycles */
    fmi2Component many[20];
    for (int i = 0; i < 20; i++) many[i] = started();
    for (int i = 0; i < 20; i++) EXPECT(fmi2DoStep(many[i], 0.0, 0.01, 0) == fmi2OK);
    for (int i = 0; i < 20; i++) fmi2FreeInstance(many[i]);
    for (int i = 0; i < 1000; i++) {
        c = started();
        EXPECT(fmi2DoStep(c, 0.0, 0.001, 0) == fmi2OK);
        fmi2FreeInstance(c);
    }
    if (failures == 0) printf("all sequences passed (%d messages logged)\n", messages);
    return failures != 0;
}
