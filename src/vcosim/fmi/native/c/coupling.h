/* The controller side of the tight coupling, independent of the FMI version (coupling.c). */
#ifndef VCOSIM_COUPLING_LINK_H
#define VCOSIM_COUPLING_LINK_H

#ifdef _WIN32
#include <winsock2.h>
#include <ws2tcpip.h>
typedef SOCKET sock_t;
#define NO_SOCKET INVALID_SOCKET
#else
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
typedef int sock_t;
#define NO_SOCKET (-1)
#endif

enum { K_REAL, K_INTEGER, K_BOOLEAN, K_STRING, K_NONE };

#include "vcosim_coupling.h" /* generated for each build: step, defaults, variables, wire */

#define SIM_TO_CONTROLLER 111
#define CONTROLLER_TO_SIM 64
#define N_CONTROLS 13

typedef void (*cp_logger)(void *env, const char *error);

typedef struct {
    cp_logger log;
    void *log_env;
    /* parameters */
    char listen_host[256], sim_host[256];
    double listen_port, sim_port, memory, timeout;
    /* inputs, the answer held for `memory`, the message shown */
    double controls[N_CONTROLS], held[N_CONTROLS];
    double message[SIM_TO_CONTROLLER];
    /* with an interface CSV: the CSV reply, each value kept until the master sets another */
    double wire_reply[VC_REPLY_WIRE];
    /* the link */
    sock_t sock;
    struct sockaddr_in simulator, pinned;
    int is_pinned, pending, took;
    double largest, ceiling;
    int fresh;
    double received, timeouts, stale;
    char failed[400];
} cp_link;

/* The parameters' defaults, no socket yet. */
void cp_init(cp_link *c, cp_logger log, void *log_env);
/* Log an error through the FMI layer's logger. */
void cp_say(cp_link *c, const char *text);
/* The kind of a value reference (K_NONE: no variable). */
int cp_kind(unsigned int vr);
/* A numeric variable's value (inputs, parameters, banks, status). */
double cp_get(const cp_link *c, unsigned int vr);
/* Set an input, or a parameter before the start; 0 (said why) if refused. */
int cp_set(cp_link *c, unsigned int vr, double value, int started);
/* The string parameter of a value reference, or NULL. */
char *cp_string(cp_link *c, unsigned int vr);
/* Resolve the hosts and bind (0: failed, the reason in c->failed). */
int cp_start(cp_link *c);
/* Take the next acceptable message within the timeout (0: none; a timeout counted). */
int cp_take(cp_link *c);
/* One exchange: answer the message taken last, take the next (0: refused step size). */
int cp_step(cp_link *c, double step_size);
/* Close the socket (safe twice). */
void cp_stop(cp_link *c);

#endif
