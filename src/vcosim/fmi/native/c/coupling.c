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
   free again (the simulator may come back from another port). */
#if !defined(_WIN32)
#define _POSIX_C_SOURCE 200809L /* sockets, getaddrinfo, clock_gettime under -std=c11 */
#endif
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef _WIN32
#include <winsock2.h>
#include <ws2tcpip.h>
typedef SOCKET sock_t;
#define NO_SOCKET INVALID_SOCKET
#define close_socket closesocket
#else
#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
typedef int sock_t;
#define NO_SOCKET (-1)
#define close_socket close
#endif

#include "fmi2Functions.h"
#include "registry.h"

enum { K_REAL, K_INTEGER, K_BOOLEAN, K_STRING, K_NONE };

#include "vcosim_coupling.h" /* generated for each build: the step, defaults, variables */

#define SIM_TO_CONTROLLER 111
#define CONTROLLER_TO_SIM 64
#define N_CONTROLS 13
#define ID_LIMIT 9007199254740992.0 /* 2^53 */
#define ID_JUMP 1048576.0           /* 2^20 */

enum { INSTANTIATED, INITIALIZING, STEPPING, TERMINATED, FAILED };

typedef struct {
    fmi2CallbackLogger logger;
    fmi2ComponentEnvironment environment;
    char name[128];
    int mode;
    /* parameters */
    char listen_host[256], sim_host[256];
    double listen_port, sim_port, memory, timeout;
    /* inputs, the answer held for `memory`, the message shown */
    double controls[N_CONTROLS], held[N_CONTROLS];
    double message[SIM_TO_CONTROLLER];
    /* the link */
    sock_t sock;
    struct sockaddr_in simulator, pinned;
    int is_pinned, pending, took;
    double largest, ceiling;
    int fresh;
    double received, timeouts, stale;
    char failed[400];
} instance;

static void say(instance *c, fmi2Status status, const char *text) {
    if (c->logger != NULL)
        c->logger(c->environment, c->name, status,
                  status == fmi2Error ? "logStatusError" : "logAll", text);
}

static instance *checked(fmi2Component c, const char *call, int modes) {
    if (!vc_known(c, 0)) return NULL;
    instance *self = c;
    if (!(modes & (1 << self->mode))) {
        char text[200];
        snprintf(text, sizeof text, "%s is not allowed in this state of the FMU (%d)", call,
                 self->mode);
        say(self, fmi2Error, text);
        return NULL;
    }
    return self;
}

#define ANY_MODE 0x1f
#define BIT(m) (1 << (m))

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
static int kind_of(unsigned int vr) {
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

static double get_value(instance *c, unsigned int vr) {
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

static fmi2Status set_value(instance *c, unsigned int vr, double value) {
    if (vr >= VC_VR_INPUTS && vr < VC_VR_OUTPUTS) {
        c->controls[vr - VC_VR_INPUTS] = value;
        return fmi2OK;
    }
    if (c->mode == STEPPING) {
        say(c, fmi2Error, "parameters are fixed once the coupling has started");
        return fmi2Error;
    }
    if (vr == VC_VR_LISTEN_PORT) c->listen_port = value;
    else if (vr == VC_VR_SIM_PORT) c->sim_port = value;
    else if (vr == VC_VR_MEMORY) c->memory = value;
    else if (vr == VC_VR_TIMEOUT) c->timeout = value;
    else {
        say(c, fmi2Error, "an output cannot be set");
        return fmi2Error;
    }
    return fmi2OK;
}

/* -- the link ------------------------------------------------------------------------------ */
static void reset_ids(instance *c) {
    c->largest = 0.0;
    c->fresh = 1;
    c->ceiling = ID_LIMIT;
    c->is_pinned = 0;
}

/* Take the next acceptable message within `timeout`; 0 if none came. */
static int take(instance *c) {
    double deadline = now_s() + c->timeout;
    unsigned char datagram[SIM_TO_CONTROLLER * 8 + 8];
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
        if (size != SIM_TO_CONTROLLER * 8) continue; /* malformed (or an error): dropped */
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
        memcpy(c->message, datagram, sizeof c->message);
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
static void answer(instance *c) {
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
    sendto(c->sock, (const char *)reply, sizeof reply, 0, (struct sockaddr *)&to, sizeof to);
    c->pending = 0;
}

static int start_link(instance *c) {
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

static void stop_link(instance *c) {
    if (c->sock != NO_SOCKET) close_socket(c->sock);
    c->sock = NO_SOCKET;
}

/* -- FMI 2 ---------------------------------------------------------------------------------- */
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
    snprintf(self->listen_host, sizeof self->listen_host, "%s", VC_LISTEN_HOST);
    snprintf(self->sim_host, sizeof self->sim_host, "%s", VC_SIM_HOST);
    self->listen_port = VC_LISTEN_PORT;
    self->sim_port = VC_SIM_PORT;
    self->memory = 0.0;
    self->timeout = VC_TIMEOUT;
    for (int k = 0; k < N_CONTROLS; k++) self->held[k] = NAN;
    self->sock = NO_SOCKET;
    reset_ids(self);
    return self;
}

void fmi2FreeInstance(fmi2Component c) {
    if (!vc_known(c, 1)) return;
    stop_link(c);
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
    if (!start_link(self)) {
        say(self, fmi2Error, self->failed);
        self->mode = FAILED;
        return fmi2Error;
    }
    self->mode = STEPPING;
    take(self); /* the first message: the outputs at the start time are the simulator's */
    return fmi2OK;
}

fmi2Status fmi2Terminate(fmi2Component c) {
    instance *self = checked(c, "fmi2Terminate", BIT(STEPPING) | BIT(FAILED));
    if (self == NULL) return fmi2Error;
    stop_link(self);
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
            if (kind_of(vr[i]) != (wanted)) {                                            \
                say(self, fmi2Error, #name ": no variable of this type");                \
                return fmi2Error;                                                        \
            }                                                                            \
            value[i] = convert(get_value(self, vr[i]));                                  \
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
            if (kind_of(vr[i]) != (wanted)) {                                            \
                say(self, fmi2Error, #name ": no variable of this type");                \
                return fmi2Error;                                                        \
            }                                                                            \
            if (set_value(self, vr[i], (double)value[i]) != fmi2OK) return fmi2Error;    \
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
        if (vr[i] == VC_VR_LISTEN_HOST) value[i] = self->listen_host;
        else if (vr[i] == VC_VR_SIM_HOST) value[i] = self->sim_host;
        else {
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
        char *target = vr[i] == VC_VR_LISTEN_HOST ? self->listen_host
                       : vr[i] == VC_VR_SIM_HOST  ? self->sim_host
                                                  : NULL;
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
        say(self, fmi2Error, self->failed);
        return fmi2Error;
    }
    if (!(fabs(communicationStepSize - VC_STEP) <= VC_STEP_TOLERANCE * VC_STEP)) {
        char text[300];
        snprintf(text, sizeof text,
                 "communication step %.17g s: this FMU exchanges one message per step and was "
                 "built for %g s (the simulator's --ext-time); rebuild it with vcosim fmu "
                 "coupling --ext-time %g",
                 communicationStepSize, VC_STEP, communicationStepSize);
        say(self, fmi2Error, text);
        return fmi2Discard;
    }
    if (self->pending) answer(self);
    take(self);
    return fmi2OK;
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
