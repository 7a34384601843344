/* BeamNG's tight coupling as its own FMU speaks it (tests/helpers/coupling_fmu.py says how),
   as a tiny.c model. Linux only: the tests' masters run here. */
#include <stdint.h>
#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MESSAGE_DOUBLES 111
#define REPLY_DOUBLES 64
#define N_CONTROLS 13
#define N_OUTPUTS 60
#define FIRST_MESSAGE_TIMEOUT 2.0
#define RESET_AFTER 2.0
#define GIVE_UP_AFTER 10.0

typedef struct {
    int sock;
    double counter, largest;
    int equal_ok, must_receive;
} beamng_link;

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int address(const char *host, double port, struct sockaddr_in *out) {
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

/* Block for the next acceptable message, at most `limit` s (BeamNG's id filter: above the
   largest seen, or equal to it once; the largest returns to 0 after RESET_AFTER s with
   nothing acceptable). 1 if one came: its slots 1..60 are on the outputs. */
static int receive(tiny *m, beamng_link *l, double limit) {
    double message[MESSAGE_DOUBLES];
    double now = now_s(), deadline = now + limit, reset_at = now + RESET_AFTER;
    while (now < deadline) {
        if (now >= reset_at) {
            l->largest = 0.0;
            l->equal_ok = 1;
            reset_at = now + RESET_AFTER;
        }
        double wait = fmin(deadline, reset_at) - now;
        fd_set ready;
        FD_ZERO(&ready);
        FD_SET(l->sock, &ready);
        struct timeval tv = {(long)wait, (long)((wait - (long)wait) * 1e6)};
        int size = -1;
        if (select(l->sock + 1, &ready, NULL, NULL, &tv) > 0)
            size = (int)recv(l->sock, message, sizeof message, 0);
        now = now_s();
        if (size != (int)sizeof message) continue;
        double id = message[0];
        if (id > l->largest || (id == l->largest && l->equal_ok)) {
            l->equal_ok = id > l->largest;
            l->largest = id;
            for (int k = 0; k < N_OUTPUTS; k++) m->v[V_driver_controls_throttle + k] = message[1 + k];
            return 1;
        }
    }
    return 0;
}

static int model_init(tiny *m) {
    beamng_link *l = calloc(1, sizeof *l);
    if (l == NULL) return 0;
    l->sock = -1;
    l->equal_ok = l->must_receive = 1;
    m->data = l;
    return 1;
}

static int model_start(tiny *m) {
    beamng_link *l = m->data;
    struct sockaddr_in here;
    if (!address(m->s[V_socket_inAddress], m->v[V_socket_inPort], &here)) {
        tiny_say(m, "socket_inAddress unknown");
        return 0;
    }
    l->sock = socket(AF_INET, SOCK_DGRAM, 0);
    if (l->sock < 0 || bind(l->sock, (struct sockaddr *)&here, sizeof here) != 0) {
        tiny_say(m, "cannot bind socket_inAddress:socket_inPort");
        return 0;
    }
    l->must_receive = !receive(m, l, FIRST_MESSAGE_TIMEOUT);
    return 1;
}

static int model_step(tiny *m, double t, double h) {
    (void)t, (void)h;
    beamng_link *l = m->data;
    if (l->sock < 0) {
        tiny_say(m, "doStep before initialization");
        return 0;
    }
    if (l->must_receive && !receive(m, l, GIVE_UP_AFTER)) {
        tiny_say(m, "no message from the simulator");
        return 0;
    }
    double reply[REPLY_DOUBLES] = {0};
    struct sockaddr_in to;
    if (!address(m->s[V_socket_outAddress], m->v[V_socket_outPort], &to)) {
        tiny_say(m, "socket_outAddress unknown");
        return 0;
    }
    l->counter += 1.0;
    reply[0] = l->counter;
    for (int k = 0; k < N_CONTROLS; k++) reply[1 + k] = m->v[V_input_throttleInput + k];
    sendto(l->sock, reply, sizeof reply, 0, (struct sockaddr *)&to, sizeof to);
    l->must_receive = 1;
    return 1;
}

static void model_stop(tiny *m) {
    beamng_link *l = m->data;
    if (l == NULL) return;
    if (l->sock >= 0) close(l->sock);
    free(l);
    m->data = NULL;
}
