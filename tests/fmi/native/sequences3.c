/* FMI 3 call sequences against the C layer linked in (not loaded), for a sanitizer build:
   as sequences2.c for FMI 3, plus the functions of features the FMU has not. Prints "all
   sequences passed" and exits 0 when every expectation held. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmi3Functions.h"
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

static void logger(fmi3InstanceEnvironment env, fmi3Status status, fmi3String category,
                   fmi3String message) {
    (void)env, (void)status, (void)category;
    snprintf(last, sizeof last, "%s", message);
    messages++;
}

static fmi3ValueReference input(const char *name) {
    for (int j = 0; j < VC_N_FMU_INPUTS; j++)
        if (strcmp(VC_INPUT_NAMES[j], name) == 0) return VC_VR_INPUTS + j;
    abort();
}

static fmi3ValueReference parameter(const char *name) {
    for (int k = 0; k < VC_N_PARAMETERS; k++)
        if (strcmp(VC_PARAMETER_NAMES[k], name) == 0) return VC_VR_PARAMETERS + k;
    abort();
}

static fmi3Instance instantiate(const char *token) {
    return fmi3InstantiateCoSimulation("car", token, "", false, false, false, false, NULL, 0,
                                       NULL, logger, NULL);
}

static fmi3Boolean event, stop, early;
static fmi3Float64 reached;

static fmi3Status step(fmi3Instance c, double size) {
    return fmi3DoStep(c, 0.0, size, false, &event, &stop, &early, &reached);
}

static fmi3Instance started(void) {
    fmi3Instance c = instantiate(VC_GUID);
    EXPECT(c != NULL);
    EXPECT(fmi3EnterInitializationMode(c, false, 0.0, 0.0, false, 0.0) == fmi3OK);
    EXPECT(fmi3ExitInitializationMode(c) == fmi3OK);
    return c;
}

int main(void) {
    const fmi3ValueReference throttle = input("throttle"), gear = input("gear");
    const fmi3ValueReference speed = VC_VR_OUTPUTS, fuel = parameter("engine.initial_fuel");
    const fmi3ValueReference time = VC_VR_TIME, automatic = VC_VR_FLAGS;
    fmi3Float64 value = 0.0;
    fmi3Int32 integer = 0;
    fmi3Boolean flag = false;

    /* refused instantiations */
    EXPECT(instantiate("{not-it}") == NULL);
    EXPECT(instantiate(NULL) == NULL);
    EXPECT(strstr(last, "instantiation token") != NULL);
    EXPECT(fmi3InstantiateCoSimulation("x", VC_GUID, "", false, false, true, false, NULL, 0,
                                       NULL, logger, NULL) == NULL); /* event mode */
    EXPECT(fmi3InstantiateModelExchange("x", VC_GUID, "", false, false, NULL, logger) == NULL);
    EXPECT(fmi3InstantiateScheduledExecution("x", VC_GUID, "", false, false, NULL, logger, NULL,
                                             NULL, NULL) == NULL);
    fmi3Instance quiet = fmi3InstantiateCoSimulation(NULL, VC_GUID, NULL, false, false, false,
                                                     false, NULL, 0, NULL, NULL, NULL);
    EXPECT(quiet != NULL); /* no logger: it must not log through NULL */
    EXPECT(step(quiet, 0.001) == fmi3Error);
    fmi3FreeInstance(quiet);

    /* calls out of order, NULL arguments, unknown and mistyped references */
    fmi3Instance c = instantiate(VC_GUID);
    EXPECT(step(c, 0.001) == fmi3Error);
    EXPECT(fmi3ExitInitializationMode(c) == fmi3Error);
    EXPECT(fmi3Terminate(c) == fmi3Error);
    EXPECT(fmi3GetFloat64(c, NULL, 1, &value, 1) == fmi3Error);
    EXPECT(fmi3GetFloat64(c, &speed, 1, NULL, 1) == fmi3Error);
    EXPECT(fmi3GetFloat64(c, &speed, 1, &value, 2) == fmi3Error); /* one value per reference */
    EXPECT(fmi3GetFloat64(NULL, &speed, 1, &value, 1) == fmi3Error);
    EXPECT(fmi3GetFloat64(c, &time, 1, &value, 1) == fmi3OK && value == 0.0);
    EXPECT(fmi3SetFloat64(c, &time, 1, &value, 1) == fmi3Error);
    const fmi3ValueReference nowhere = VC_VR_END + 7;
    EXPECT(fmi3GetFloat64(c, &nowhere, 1, &value, 1) == fmi3Error);
    EXPECT(fmi3GetInt32(c, &speed, 1, &integer, 1) == fmi3Error);
    EXPECT(fmi3GetInt32(c, &gear, 1, &integer, 1) == fmi3OK && integer == 1);
    EXPECT(fmi3GetInt32(c, &gear, 1, NULL, 1) == fmi3Error);
    EXPECT(fmi3SetInt32(c, NULL, 1, &integer, 1) == fmi3Error);
    EXPECT(fmi3SetBoolean(c, &automatic, 1, NULL, 1) == fmi3Error);
    EXPECT(fmi3SetInt32(c, &gear, 1, &integer, 3) == fmi3Error);
    EXPECT(fmi3GetBoolean(c, &automatic, 1, &flag, 1) == fmi3OK && flag);
    fmi3Float32 single = 0.0f;
    EXPECT(fmi3GetFloat32(c, &speed, 1, &single, 1) == fmi3Error);
    EXPECT(fmi3GetFloat32(c, &speed, 0, &single, 0) == fmi3OK);
    fmi3String text = NULL;
    EXPECT(fmi3GetString(c, &speed, 1, &text, 1) == fmi3Error);
    EXPECT(fmi3SetFloat64(c, &speed, 1, &value, 1) == fmi3Error); /* an output */
    EXPECT(fmi3GetFMUState(c, NULL) == fmi3Error);
    EXPECT(fmi3SetFMUState(c, NULL) == fmi3Error);
    fmi3FMUState none = NULL;
    EXPECT(fmi3DeserializeFMUState(c, NULL, 10, &none) == fmi3Error && none == NULL);
    EXPECT(fmi3GetClock(c, &speed, 1, &flag) == fmi3Error);
    EXPECT(fmi3EnterEventMode(c) == fmi3Error);
    EXPECT(fmi3SetTime(c, 1.0) == fmi3Error);
    EXPECT(fmi3GetDirectionalDerivative(c, NULL, 0, NULL, 0, NULL, 0, NULL, 0) == fmi3Error);

    /* refused parameters: exitInitializationMode fails, then every step; free twice */
    EXPECT(fmi3EnterInitializationMode(c, false, 0.0, 0.0, false, 0.0) == fmi3OK);
    const fmi3Float64 too_much = 2.0;
    EXPECT(fmi3SetFloat64(c, &fuel, 1, &too_much, 1) == fmi3OK);
    EXPECT(fmi3ExitInitializationMode(c) == fmi3Error);
    EXPECT(strstr(last, "engine.initial_fuel: Input should be less than or equal to 1") != NULL);
    EXPECT(step(c, 0.001) == fmi3Error);
    EXPECT(fmi3Terminate(c) == fmi3OK);
    fmi3FreeInstance(c);
    fmi3FreeInstance(c); /* the master's error: refused, nothing touched */
    EXPECT(step(c, 0.001) == fmi3Error);

    /* a running instance: refused inputs, parameters and step sizes; it carries on */
    c = started();
    const fmi3Float64 half = 0.5, nan = NAN;
    EXPECT(fmi3SetFloat64(c, &throttle, 1, &half, 1) == fmi3OK);
    EXPECT(fmi3SetFloat64(c, &throttle, 1, &nan, 1) == fmi3Warning);
    EXPECT(fmi3GetFloat64(c, &throttle, 1, &value, 1) == fmi3OK && value == 0.5);
    EXPECT(fmi3SetFloat64(c, &fuel, 1, &half, 1) == fmi3Error); /* after initialization */
    EXPECT(step(c, 0.0007) == fmi3Discard && reached == 0.0);
    EXPECT(step(c, 0.0) == fmi3Discard);
    EXPECT(step(c, -0.001) == fmi3Discard);
    EXPECT(step(c, NAN) == fmi3Discard);
    EXPECT(step(c, 0.001) == fmi3OK && reached == 0.001 && !event && !stop && !early);
    EXPECT(fmi3DoStep(c, 0.0, 0.001, false, NULL, NULL, NULL, NULL) == fmi3OK);
    EXPECT(fmi3GetFloat64(c, &time, 1, &value, 1) == fmi3OK && value == 0.002);

    /* state: get, set, serialize, refuse a foreign or short one */
    fmi3FMUState saved = NULL, copy = NULL;
    EXPECT(fmi3GetFMUState(c, &saved) == fmi3OK && saved != NULL);
    fmi3Float64 before = 0.0, after = 0.0;
    for (int k = 0; k < 100; k++) EXPECT(step(c, 0.005) == fmi3OK);
    EXPECT(fmi3GetFloat64(c, &speed, 1, &before, 1) == fmi3OK);
    size_t size = 0;
    EXPECT(fmi3SerializedFMUStateSize(c, saved, &size) == fmi3OK && size > 0);
    fmi3Byte *bytes = malloc(size);
    EXPECT(fmi3SerializeFMUState(c, saved, bytes, size - 1) == fmi3Error);
    EXPECT(fmi3SerializeFMUState(c, saved, bytes, size) == fmi3OK);
    EXPECT(fmi3DeserializeFMUState(c, bytes, size - 1, &copy) == fmi3Error && copy == NULL);
    bytes[size - 1] ^= 1;
    bytes[0] ^= 1;
    EXPECT(fmi3DeserializeFMUState(c, bytes, size, &copy) == fmi3Error && copy == NULL);
    bytes[size - 1] ^= 1;
    bytes[0] ^= 1;
    EXPECT(fmi3DeserializeFMUState(c, bytes, size, &copy) == fmi3OK && copy != NULL);
    free(bytes);
    EXPECT(fmi3SetFMUState(c, copy) == fmi3OK);
    for (int k = 0; k < 100; k++) EXPECT(step(c, 0.005) == fmi3OK);
    EXPECT(fmi3GetFloat64(c, &speed, 1, &after, 1) == fmi3OK && after == before);
    EXPECT(fmi3FreeFMUState(c, &saved) == fmi3OK && saved == NULL);
    EXPECT(fmi3FreeFMUState(c, &copy) == fmi3OK && copy == NULL);
    EXPECT(fmi3Reset(c) == fmi3OK);
    EXPECT(step(c, 0.001) == fmi3Error); /* instantiated again */
    EXPECT(fmi3EnterInitializationMode(c, false, 0.0, 0.0, false, 0.0) == fmi3OK);
    EXPECT(fmi3ExitInitializationMode(c) == fmi3OK);
    EXPECT(fmi3Terminate(c) == fmi3OK);
    EXPECT(step(c, 0.001) == fmi3Error); /* terminated */
    fmi3FreeInstance(c);

    /* 20 side by side, then 1000 cycles */
    fmi3Instance many[20];
    for (int i = 0; i < 20; i++) many[i] = started();
    for (int i = 0; i < 20; i++) EXPECT(step(many[i], 0.01) == fmi3OK);
    for (int i = 0; i < 20; i++) fmi3FreeInstance(many[i]);
    for (int i = 0; i < 1000; i++) {
        c = started();
        EXPECT(step(c, 0.001) == fmi3OK);
        fmi3FreeInstance(c);
    }
    if (failures == 0) printf("all sequences passed (%d messages logged)\n", messages);
    return failures != 0;
}
