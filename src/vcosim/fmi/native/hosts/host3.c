/* A plain C master for an FMI 3 co-simulation FMU: dlopen, the FMI C API, no Python.

   host3 LIBRARY TOKEN THROTTLE_VR SPEED_VR SECONDS CYCLES
   steps SECONDS at 1 ms with throttle 0.5 and prints the speed (as %a: every bit), the
   physics steps per second (of wall-clock time, and of its CPU time), then instantiates and frees the FMU CYCLES times and prints the
   resident memory before and after (kB). Exit 0 only if every FMI call returned fmi2OK. */
#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "fmi3FunctionTypes.h"

static void logger(fmi3InstanceEnvironment env, fmi3Status status, fmi3String category,
                   fmi3String message) {
    (void)env;
    fprintf(stderr, "%d %s: %s\n", (int)status, category, message);
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
        if ((call) != fmi3OK) {                              \
            fprintf(stderr, "failed: %s\n", #call);          \
            return 1;                                        \
        }                                                    \
    } while (0)

static fmi3Instance instantiate(fmi3InstantiateCoSimulationTYPE *f, const char *name,
                                const char *token) {
    return f(name, token, "", fmi3False, fmi3False, fmi3False, fmi3False, NULL, 0, NULL, logger,
             NULL);
}

int main(int argc, char **argv) {
    if (argc != 7) {
        fprintf(stderr, "usage: host3 LIBRARY TOKEN THROTTLE_VR SPEED_VR SECONDS CYCLES\n");
        return 2;
    }
    void *library = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (library == NULL) {
        fprintf(stderr, "dlopen: %s\n", dlerror());
        return 3;
    }
    fmi3InstantiateCoSimulationTYPE *create = need(library, "fmi3InstantiateCoSimulation");
    fmi3FreeInstanceTYPE *free_instance = need(library, "fmi3FreeInstance");
    fmi3EnterInitializationModeTYPE *enter = need(library, "fmi3EnterInitializationMode");
    fmi3ExitInitializationModeTYPE *leave = need(library, "fmi3ExitInitializationMode");
    fmi3SetFloat64TYPE *set_float = need(library, "fmi3SetFloat64");
    fmi3GetFloat64TYPE *get_float = need(library, "fmi3GetFloat64");
    fmi3DoStepTYPE *do_step = need(library, "fmi3DoStep");
    fmi3TerminateTYPE *terminate = need(library, "fmi3Terminate");
    const fmi3ValueReference throttle = (fmi3ValueReference)atoi(argv[3]);
    const fmi3ValueReference speed = (fmi3ValueReference)atoi(argv[4]);
    const long steps = (long)(atof(argv[5]) * 1000.0 + 0.5);
    const int cycles = atoi(argv[6]);
    fmi3Boolean event, stop, early;
    fmi3Float64 reached;

    fmi3Instance car = instantiate(create, "car", argv[2]);
    if (car == NULL) return 1;
    CHECK(enter(car, fmi3False, 0.0, 0.0, fmi3False, 0.0));
    CHECK(leave(car));
    const fmi3Float64 half = 0.5;
    CHECK(set_float(car, &throttle, 1, &half, 1));
    struct timespec start, end;
    clock_gettime(CLOCK_MONOTONIC, &start);
    struct timespec cpu_start, cpu_end; /* this thread's CPU time: the cost, whatever the load */
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu_start);
    for (long k = 0; k < steps; k++)
        CHECK(do_step(car, k * 0.001, 0.001, fmi3True, &event, &stop, &early, &reached));
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu_end);
    clock_gettime(CLOCK_MONOTONIC, &end);
    fmi3Float64 v = 0.0;
    CHECK(get_float(car, &speed, 1, &v, 1));
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
        fmi3Instance c = instantiate(create, "cycle", argv[2]);
        if (c == NULL) return 1;
        CHECK(enter(c, fmi3False, 0.0, 0.0, fmi3False, 0.0));
        CHECK(leave(c));
        CHECK(do_step(c, 0.0, 0.001, fmi3True, &event, &stop, &early, &reached));
        CHECK(terminate(c));
        free_instance(c);
    }
    printf("resident_kb %ld %ld\n", before, resident_kb());
    return 0;
}
