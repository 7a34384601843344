/* The controller side of the tight coupling as a native FMI 2.0 co-simulation FMU.

   What vcosim.fmi.coupling does over vcosim's controller block, in C and in the master's
   thread: one doStep is one exchange. It answers the message taken last with the inputs the
   master set since (with `memory`, the previous step's answer: a Simulink memory block),
   then waits at most `timeout` for the next acceptable message and shows it on the
   outputs. Leaving initialization binds the socket and waits for the first message.

   A message is acceptable if it is 111 little-endian doubles from the simulator's host (any
   port, until the first is taken; then only that sender, until a reset) and its id is above
   the largest taken, or equal to it once after a reset, and not implausibly far above it.
   A step that waits in vain counts a timeout and resets: ids start afresh, the sender is
   free again (the simulator may come back from another port).

   Built for a BeamNG interface CSV (VC_CSV), the wire carries that CSV's signals: a message
   of VC_SIM_WIRE doubles is shown through the fixed layout's slots (NaN where the CSV
   carries nothing), and the reply of VC_REPLY_WIRE doubles takes each value from its fixed
   slot, keeping the last value sent where the master's is NaN (BeamNG's CSV coupling has no
   "leave as it is"), as vcosim's controller block does (vcosim.tight.interface). */
#if !defined(_WIN32)
#define _POSIX_C_SOURCE 200809L /* sockets, getaddrinfo, clock_gettime under -std=c11 */
#endif
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef _WIN32
#include <netdb.h>
#include <sys/select.h>
#include <time.h>
#include <unistd.h>
#define close_socket close
#else
#define close_socket closesocket
#endif

#include "coupling.h"

#define ID_LIMIT 9007199254740992.0 /* 2^53 */
#define ID_JUMP 1048576.0           /* 2^20 */

void cp_say(cp_link *c, const char *text) {
    if (c->log != NULL) c->log(c->log_env, text);
}

static double now_s(void) {
#ifdef _WIN32
    LARGE_INTEGER count, frequency;
    QueryPerformanceCounter(&count);
    QueryPerformanceFrequency(&frequency);
    return (double)count.QuadPart / (double)frequency.QuadPart;
#else
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
#endif
}

static int resolve(const char *host, int port, struct sockaddr_in *out) {
    struct addrinfo hints, *found = NULL;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_INET;
    hints.ai_socktype = SOCK_DGRAM;
    if (getaddrinfo(host, NULL, &hints, &found) != 0 || found == NULL) return 0;
    memcpy(out, found->ai_addr, sizeof *out);
    out->sin_port = htons((uint16_t)port);
    freeaddrinfo(found);
    return 1;
}

/* -- variables: value references from the generated header ----------------------------- */
int cp_kind(unsigned int vr) {
    if (vr == VC_VR_LISTEN_HOST || vr == VC_VR_SIM_HOST) return K_STRING;
    if (vr == VC_VR_LISTEN_PORT || vr == VC_VR_SIM_PORT) return K_INTEGER;
    if (vr == VC_VR_MEMORY) return K_BOOLEAN;
    if (vr == VC_VR_TIMEOUT) return K_REAL;
    if (vr >= VC_VR_INPUTS && vr < VC_VR_OUTPUTS) return VC_INPUT_KIND[vr - VC_VR_INPUTS];
    if (vr >= VC_VR_OUTPUTS && vr < VC_VR_STATUS) return K_REAL;
    if (vr == VC_VR_STATUS) return K_BOOLEAN; /* connected */
    if (vr > VC_VR_STATUS && vr < VC_VR_END) return K_INTEGER;
    return K_NONE;
}

double cp_get(const cp_link *c, unsigned int vr) {
    switch (vr) {
    case VC_VR_LISTEN_PORT: return c->listen_port;
    case VC_VR_SIM_PORT: return c->sim_port;
    case VC_VR_MEMORY: return c->memory;
    case VC_VR_TIMEOUT: return c->timeout;
    case VC_VR_STATUS: return c->took ? 1.0 : 0.0;
    case VC_VR_STATUS + 1: return c->message[0];
    case VC_VR_STATUS + 2: return c->received;
    case VC_VR_STATUS + 3: return c->timeouts;
    case VC_VR_STATUS + 4: return c->stale;
    default: break;
    }
    if (vr >= VC_VR_INPUTS && vr < VC_VR_OUTPUTS) return c->controls[vr - VC_VR_INPUTS];
    return c->message[VC_OUTPUT_SLOT[vr - VC_VR_OUTPUTS]];
}

int cp_set(cp_link *c, unsigned int vr, double value, int started) {
    if (vr >= VC_VR_INPUTS && vr < VC_VR_OUTPUTS) {
        c->controls[vr - VC_VR_INPUTS] = value;
        return 1;
    }
    if (started) {
        cp_say(c, "parameters are fixed once the coupling has started");
        return 0;
    }
    if (vr == VC_VR_LISTEN_PORT) c->listen_port = value;
    else if (vr == VC_VR_SIM_PORT) c->sim_port = value;
    else if (vr == VC_VR_MEMORY) c->memory = value;
    else if (vr == VC_VR_TIMEOUT) c->timeout = value;
    else {
        cp_say(c, "an output cannot be set");
        return 0;
    }
    return 1;
}

/* -- the link ------------------------------------------------------------------------------ */
static void reset_ids(cp_link *c) {
    c->largest = 0.0;
    c->fresh = 1;
    c->ceiling = ID_LIMIT;
    c->is_pinned = 0;
}

/* Show a message on the fixed layout's slots (little-endian doubles on every platform this
   FMU is built for). */
static void show(cp_link *c, const unsigned char *datagram) {
#if VC_CSV
    double wire[VC_SIM_WIRE];
    memcpy(wire, datagram, sizeof wire);
    for (int k = 0; k < SIM_TO_CONTROLLER; k++) c->message[k] = NAN;
    c->message[0] = wire[0];
    for (int k = 0; k < VC_SPREAD_PAIRS; k++)
        c->message[VC_SPREAD[2 * k + 1]] = wire[VC_SPREAD[2 * k]];
#else
    memcpy(c->message, datagram, sizeof c->message);
#endif
}

/* Take the next acceptable message within `timeout`; 0 if none came. */
int cp_take(cp_link *c) {
    double deadline = now_s() + c->timeout;
    unsigned char datagram[VC_SIM_WIRE * 8 + 8];
    for (;;) {
        double remaining = deadline - now_s();
        if (remaining <= 0.0) break;
        fd_set ready;
        FD_ZERO(&ready);
        FD_SET(c->sock, &ready);
        struct timeval wait = {(long)remaining, (long)((remaining - (long)remaining) * 1e6)};
        if (select((int)c->sock + 1, &ready, NULL, NULL, &wait) <= 0) continue;
        struct sockaddr_in sender;
        socklen_t length = sizeof sender;
        int size = (int)recvfrom(c->sock, (char *)datagram, sizeof datagram, 0,
                                 (struct sockaddr *)&sender, &length);
        if (size != VC_SIM_WIRE * 8) continue; /* malformed (or an error): dropped */
        if (c->is_pinned ? (sender.sin_addr.s_addr != c->pinned.sin_addr.s_addr ||
                            sender.sin_port != c->pinned.sin_port)
                         : sender.sin_addr.s_addr != c->simulator.sin_addr.s_addr)
            continue; /* a stranger */
        double id;
        memcpy(&id, datagram, 8); /* little-endian on every platform this FMU is built for */
        if (!(id > c->largest || (c->fresh && id == c->largest))) {
            c->stale += 1;
            continue;
        }
        if (id > c->ceiling) continue; /* implausible: a stray datagram */
        show(c, datagram);
        c->largest = id;
        c->fresh = 0;
        c->ceiling = id + ID_JUMP;
        if (!c->is_pinned) {
            c->pinned = sender;
            c->is_pinned = 1;
        }
        c->received += 1;
        c->pending = c->took = 1;
        return 1;
    }
    c->timeouts += 1;
    c->took = 0;
    reset_ids(c);
    return 0;
}

/* Answer the message taken last with the controls (or, with memory, the previous ones). */
void cp_answer(cp_link *c) {
    double reply[CONTROLLER_TO_SIM];
    const double *sent = c->controls;
    double previous[N_CONTROLS];
    if (c->memory != 0.0) {
        memcpy(previous, c->held, sizeof previous);
        memcpy(c->held, c->controls, sizeof c->held);
        sent = previous;
    }
    reply[0] = c->message[0];
    for (int k = 0; k < N_CONTROLS; k++) reply[1 + k] = sent[k];
    for (int k = 1 + N_CONTROLS; k < CONTROLLER_TO_SIM; k++) reply[k] = NAN;
    struct sockaddr_in to = c->sim_port == 0.0 ? c->pinned : c->simulator;
#if VC_CSV
    c->wire_reply[0] = reply[0];
    for (int k = 0; k < VC_GATHER_PAIRS; k++) {
        double value = reply[VC_GATHER[2 * k + 1]];
        if (value == value) c->wire_reply[VC_GATHER[2 * k]] = value;
    }
    const double *wire = c->wire_reply;
#else
    const double *wire = reply;
#endif
    sendto(c->sock, (const char *)wire, VC_REPLY_WIRE * 8, 0, (struct sockaddr *)&to, sizeof to);
    c->pending = 0;
}

int cp_start(cp_link *c) {
    struct sockaddr_in here;
    if (!resolve(c->sim_host, (int)c->sim_port, &c->simulator)) {
        snprintf(c->failed, sizeof c->failed, "cannot start the coupling: sim_host %s unknown",
                 c->sim_host);
        return 0;
    }
    if (!resolve(c->listen_host, (int)c->listen_port, &here)) {
        snprintf(c->failed, sizeof c->failed,
                 "cannot start the coupling: listen_host %s unknown", c->listen_host);
        return 0;
    }
    c->sock = socket(AF_INET, SOCK_DGRAM, 0);
    if (c->sock == NO_SOCKET || bind(c->sock, (struct sockaddr *)&here, sizeof here) != 0) {
        snprintf(c->failed, sizeof c->failed,
                 "cannot start the coupling: cannot bind %s:%d (in use?)", c->listen_host,
                 (int)c->listen_port);
        return 0;
    }
    return 1;
}

void cp_stop(cp_link *c) {
    if (c->sock != NO_SOCKET) close_socket(c->sock);
    c->sock = NO_SOCKET;
}

void cp_init(cp_link *c, cp_logger log, void *log_env) {
    memset(c, 0, sizeof *c);
    c->log = log;
    c->log_env = log_env;
    snprintf(c->listen_host, sizeof c->listen_host, "%s", VC_LISTEN_HOST);
    snprintf(c->sim_host, sizeof c->sim_host, "%s", VC_SIM_HOST);
    c->listen_port = VC_LISTEN_PORT;
    c->sim_port = VC_SIM_PORT;
    c->memory = 0.0;
    c->timeout = VC_TIMEOUT;
    for (int k = 0; k < N_CONTROLS; k++) c->held[k] = NAN;
#if VC_CSV
    memcpy(c->wire_reply, VC_FIRST_REPLY, sizeof c->wire_reply);
#endif
    c->sock = NO_SOCKET;
    reset_ids(c);
}

int cp_step(cp_link *c, double step_size) {
    if (!(fabs(step_size - VC_STEP) <= VC_STEP_TOLERANCE * VC_STEP)) {
        char text[300];
        snprintf(text, sizeof text,
                 "communication step %.17g s: this FMU exchanges one message per step and was "
                 "built for %g s (the simulator's --ext-time); rebuild it with vcosim fmu "
                 "coupling --ext-time %g",
                 step_size, VC_STEP, step_size);
        cp_say(c, text);
        return 0;
    }
    if (c->pending) cp_answer(c);
    cp_take(c);
    return 1;
}

char *cp_string(cp_link *c, unsigned int vr) {
    return vr == VC_VR_LISTEN_HOST ? c->listen_host : vr == VC_VR_SIM_HOST ? c->sim_host : NULL;
}
