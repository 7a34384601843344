/* The live instances of this library, so that a call on a freed or foreign pointer (a
   master's error, e.g. freeing twice) is refused instead of touching freed memory; and the
   life cycle every FMI layer here (vehicle and coupling, FMI 2 and 3) keeps for them. */
#ifndef VCOSIM_REGISTRY_H
#define VCOSIM_REGISTRY_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>

/* The modes of an instance, and a set of them as bits (BIT(STEPPING) | BIT(TERMINATED)). */
enum { INSTANTIATED, INITIALIZING, STEPPING, TERMINATED, FAILED };
#define ANY_MODE 0x1f
#define BIT(m) (1 << (m))

/* 1 if `mode` is among `modes`; else 0, and why not in `text`. */
static int vc_mode_allows(int mode, int modes, char *text, size_t size) {
    static const char *const names[] = {"instantiated", "in initialization mode",
                                        "in step mode", "terminated", "failed"};
    if (modes & BIT(mode)) return 1;
    snprintf(text, size, "not allowed when the FMU is %s", names[mode]);
    return 0;
}

#define VC_MAX_INSTANCES 1024

static void *vc_live[VC_MAX_INSTANCES];
static atomic_flag vc_live_lock = ATOMIC_FLAG_INIT;

static void vc_lock(void) {
    while (atomic_flag_test_and_set_explicit(&vc_live_lock, memory_order_acquire)) {
    }
}

static void vc_unlock(void) { atomic_flag_clear_explicit(&vc_live_lock, memory_order_release); }

/* Register an instance; 0 when there are too many. */
static int vc_register(void *instance) {
    int done = 0;
    vc_lock();
    for (int i = 0; i < VC_MAX_INSTANCES && !done; i++) {
        if (vc_live[i] == NULL) {
            vc_live[i] = instance;
            done = 1;
        }
    }
    vc_unlock();
    return done;
}

/* 1 if the instance is live (and, with forget, no longer). */
static int vc_known(const void *instance, int forget) {
    int found = 0;
    if (instance == NULL) return 0;
    vc_lock();
    for (int i = 0; i < VC_MAX_INSTANCES; i++) {
        if (vc_live[i] == instance) {
            found = 1;
            if (forget) vc_live[i] = NULL;
            break;
        }
    }
    vc_unlock();
    return found;
}

#endif
