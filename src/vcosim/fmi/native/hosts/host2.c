/* A plain C master for an FMI 2 co-simulation FMU: dlopen, the FMI C API, no Python.

   host2 LIBRARY GUID THROTTLE_VR SPEED_VR SECONDS CYCLES
   steps SECONDS at 1 ms with throttle 0.5 and prints the speed (as %a: every bit), the
   physics steps per second (of wall-clock time, and of its CPU time), then instantiates and frees the FMU CYCLES times and prints the
   resident memory before and after (kB). Exit 0 only if every FMI call returned fmi2OK. */
#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "fmi2FunctionTypes.h"

static void logger(fmi2ComponentEnvironment env, fmi2String name, fmi2Status status,
                   fmi2String category, fmi2String message, ...) {
    (void)env;
    fprintf(stderr, "[%s] %d %s: %s\n", name, (int)status, category, message);
}

static long resident_kb(void) {
    long pages = 0, resident = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (f == NULL) return -1;
    if (fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = -1;
    fclose(f);
    return resident * 4;
}

static void *need(void *library, const char *name) {
    void *f = dlsym(library, name);
    if (f == NULL) {
        fprintf(stderr, "missing %s\n", name);
        exit(3);
    }
    return f;
}

#define CHECK(call)                                          \
    do {                                                     \
        if ((call) != fmi2OK) {                              \
            fprintf(stderr, "failed: %s\n", #call);          \
            return 1;                                        \
        }                                                    \
    } while (0)

int main(int argc, char **argv) {
    if (argc != 7) {
        fprintf(stderr, "usage: host2 LIBRARY GUID THROTTLE_VR SPEED_VR SECONDS CYCLES\n");
        return 2;
    }
    void *library = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (library == NULL) {
        fprintf(stderr, "dlopen: %s\n", dlerror());
        return 3;
    }
    fmi2InstantiateTYPE *instantiate = need(library, "fmi2Instantiate");
    fmi2FreeInstanceTYPE *free_instance = need(library, "fmi2FreeInstance");
    fmi2SetupExperimentTYPE *setup = need(library, "fmi2SetupExperiment");
    fmi2EnterInitializationModeTYPE *enter = need(library, "fmi2EnterInitializationMode");
    fmi2ExitInitializationModeTYPE *leave = need(library, "fmi2ExitInitializationMode");
    fmi2SetRealTYPE *set_real = need(library, "fmi2SetReal");
    fmi2GetRealTYPE *get_real = need(library, "fmi2GetReal");
    fmi2DoStepTYPE *do_step = need(library, "fmi2DoStep");
    fmi2TerminateTYPE *terminate = need(library, "fmi2Terminate");
    fmi2CallbackFunctions callbacks = {logger, calloc, free, NULL, NULL};
    const fmi2ValueReference throttle = (fmi2ValueReference)atoi(argv[3]);
    const fmi2ValueReference speed = (fmi2ValueReference)atoi(argv[4]);
    const long steps = (long)(atof(argv[5]) * 1000.0 + 0.5);
    const int cycles = atoi(argv[6]);

    fmi2Component car = instantiate("car", fmi2CoSimulation, argv[2], "", &callbacks, 0, 0);
    if (car == NULL) return 1;
    CHECK(setup(car, fmi2False, 0.0, 0.0, fmi2False, 0.0));
    CHECK(enter(car));
    CHECK(leave(car));
    const fmi2Real half = 0.5;
    CHECK(set_real(car, &throttle, 1, &half));
    struct timespec start, end;
    clock_gettime(CLOCK_MONOTONIC, &start);
    struct timespec cpu_start, cpu_end; /* this thread's CPU time: the cost, whatever the load */
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu_start);
    for (long k = 0; k < steps; k++) CHECK(do_step(car, k * 0.001, 0.001, fmi2True));
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu_end);
    clock_gettime(CLOCK_MONOTONIC, &end);
    fmi2Real v = 0.0;
    CHECK(get_real(car, &speed, 1, &v));
    double seconds = (double)(end.tv_sec - start.tv_sec) + 1e-9 * (end.tv_nsec - start.tv_nsec);
    printf("speed %a\n", v);
    double cpu_seconds = (double)(cpu_end.tv_sec - cpu_start.tv_sec) +
                         1e-9 * (cpu_end.tv_nsec - cpu_start.tv_nsec);
    printf("physics_steps_per_s %.0f\n", 2.0 * steps / seconds);
    printf("physics_steps_per_cpu_s %.0f\n", 2.0 * steps / cpu_seconds);
    CHECK(terminate(car));
    free_instance(car);

    long before = resident_kb();
    for (int i = 0; i < cycles; i++) {
        fmi2Component c = instantiate("cycle", fmi2CoSimulation, argv[2], "", &callbacks, 0, 0);
        if (c == NULL) return 1;
        CHECK(setup(c, fmi2False, 0.0, 0.0, fmi2False, 0.0));
        CHECK(enter(c));
        CHECK(leave(c));
        CHECK(do_step(c, 0.0, 0.001, fmi2True));
        CHECK(terminate(c));
        free_instance(c);
    }
    printf("resident_kb %ld %ld\n", before, resident_kb());
    return 0;
}
