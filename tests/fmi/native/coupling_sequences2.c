/* FMI 2 call sequences against the native coupling's C layer linked in, for a sanitizer
   build, with this program as the simulator on loopback: a message taken and answered with
   its id and the inputs, a malformed datagram and a stale id ignored, timeouts counted, and
   the error paths (refused instantiation, parameters after the start, mistyped references,
   NULL arguments, a wrong step size, freeing twice), 20 links side by side and 1000
   instantiate/free cycles. Prints "all sequences passed" and exits 0 when all held. */
#define _POSIX_C_SOURCE 200809L
#include <arpa/inet.h>
#include <math.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "coupling.h"
#include "fmi2Functions.h"

static int failures = 0;
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
}

static const fmi2CallbackFunctions callbacks = {logger, calloc, free, NULL, NULL};

static int bound_socket(int *port) {
    int s = socket(AF_INET, SOCK_DGRAM, 0);
    struct sockaddr_in here = {0};
    here.sin_family = AF_INET;
    here.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    bind(s, (struct sockaddr *)&here, sizeof here);
    socklen_t length = sizeof here;
    getsockname(s, (struct sockaddr *)&here, &length);
    *port = ntohs(here.sin_port);
    struct timeval wait = {2, 0};
    setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &wait, sizeof wait);
    return s;
}

static void send_to(int s, int port, const double *values, size_t count) {
    struct sockaddr_in to = {0};
    to.sin_family = AF_INET;
    to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    to.sin_port = htons((unsigned short)port);
    sendto(s, values, count * sizeof(double), 0, (struct sockaddr *)&to, sizeof to);
}

static fmi2Component linked(int listen_port, int sim_port, double timeout) {
    fmi2Component c = fmi2Instantiate("link", fmi2CoSimulation, VC_GUID, "", &callbacks, 0, 0);
    EXPECT(c != NULL);
    const fmi2ValueReference ports[] = {VC_VR_LISTEN_PORT, VC_VR_SIM_PORT};
    const fmi2Integer values[] = {listen_port, sim_port};
    const fmi2ValueReference wait = VC_VR_TIMEOUT;
    EXPECT(fmi2SetInteger(c, ports, 2, values) == fmi2OK);
    EXPECT(fmi2SetReal(c, &wait, 1, &timeout) == fmi2OK);
    EXPECT(fmi2SetupExperiment(c, 0, 0.0, 0.0, 0, 0.0) == fmi2OK);
    EXPECT(fmi2EnterInitializationMode(c) == fmi2OK);
    return c;
}

int main(void) {
    const fmi2ValueReference throttle = VC_VR_INPUTS, first_output = VC_VR_OUTPUTS;
    const fmi2ValueReference connected = VC_VR_STATUS, id = VC_VR_STATUS + 1;
    const fmi2ValueReference received = VC_VR_STATUS + 2, timeouts = VC_VR_STATUS + 3;
    const fmi2ValueReference stale = VC_VR_STATUS + 4, host = VC_VR_LISTEN_HOST;
    fmi2Real real = 0.0;
    fmi2Integer integer = 0;
    fmi2Boolean flag = 0;

    EXPECT(fmi2Instantiate("x", fmi2CoSimulation, "{not-it}", "", &callbacks, 0, 0) == NULL);
    EXPECT(fmi2Instantiate("x", fmi2ModelExchange, VC_GUID, "", &callbacks, 0, 0) == NULL);

    int sim_port = 0, fmu_port = 0;
    int sim = bound_socket(&sim_port);
    int probe = bound_socket(&fmu_port);
    close(probe); /* a free port for the FMU */
    fmi2Component c = linked(fmu_port, sim_port, 0.3);
    fmi2String text = NULL;
    EXPECT(fmi2GetString(c, &host, 1, &text) == fmi2OK && strcmp(text, "127.0.0.1") == 0);
    EXPECT(fmi2GetReal(c, &id, 1, &real) == fmi2Error); /* an Integer */
    EXPECT(fmi2GetReal(c, NULL, 1, &real) == fmi2Error);
    EXPECT(fmi2GetInteger(c, &id, 1, NULL) == fmi2Error);
    EXPECT(fmi2SetReal(c, &first_output, 1, &real) == fmi2Error); /* an output */
    EXPECT(fmi2DoStep(c, 0.0, VC_STEP, 0) == fmi2Error);           /* not yet started */

    /* leaving initialization waits for the first message: none comes */
    EXPECT(fmi2ExitInitializationMode(c) == fmi2OK);
    EXPECT(fmi2GetInteger(c, &timeouts, 1, &integer) == fmi2OK && integer == 1);
    EXPECT(fmi2GetBoolean(c, &connected, 1, &flag) == fmi2OK && !flag);
    EXPECT(fmi2SetString(c, &host, 1, &text) == fmi2Error); /* started: fixed */
    const fmi2ValueReference wait = VC_VR_TIMEOUT;
    EXPECT(fmi2SetReal(c, &wait, 1, &real) == fmi2Error);
    EXPECT(fmi2DoStep(c, 0.0, 2.0 * VC_STEP, 0) == fmi2Discard); /* one message per step */

    /* a malformed datagram, then message 0: taken */
    double message[SIM_TO_CONTROLLER] = {0}, reply[CONTROLLER_TO_SIM];
    send_to(sim, fmu_port, message, 10);
    message[0] = 0.0;
    message[VC_OUTPUT_SLOT[0]] = 12.5; /* the first bank value the FMU shows */
    send_to(sim, fmu_port, message, SIM_TO_CONTROLLER);
    EXPECT(fmi2DoStep(c, 0.0, VC_STEP, 0) == fmi2OK);
    EXPECT(fmi2GetBoolean(c, &connected, 1, &flag) == fmi2OK && flag);
    EXPECT(fmi2GetInteger(c, &received, 1, &integer) == fmi2OK && integer == 1);
    EXPECT(fmi2GetReal(c, &first_output, 1, &real) == fmi2OK && real == 12.5);
    const fmi2Real half = 0.5;
    EXPECT(fmi2SetReal(c, &throttle, 1, &half) == fmi2OK);

    /* message 0 again (stale), then 1: the step answers 0 and takes 1 */
    send_to(sim, fmu_port, message, SIM_TO_CONTROLLER);
    message[0] = 1.0;
    send_to(sim, fmu_port, message, SIM_TO_CONTROLLER);
    EXPECT(fmi2DoStep(c, 0.0, VC_STEP, 0) == fmi2OK);
    EXPECT(recv(sim, reply, sizeof reply, 0) == (ssize_t)sizeof reply);
    EXPECT(reply[0] == 0.0 && reply[1] == 0.5 && isnan(reply[20]));
    EXPECT(fmi2GetInteger(c, &id, 1, &integer) == fmi2OK && integer == 1);
    EXPECT(fmi2GetInteger(c, &stale, 1, &integer) == fmi2OK && integer == 1);

    /* nothing more: the step answers 1 and times out */
    EXPECT(fmi2DoStep(c, 0.0, VC_STEP, 0) == fmi2OK);
    EXPECT(recv(sim, reply, sizeof reply, 0) == (ssize_t)sizeof reply && reply[0] == 1.0);
    EXPECT(fmi2GetInteger(c, &timeouts, 1, &integer) == fmi2OK && integer == 2);
    EXPECT(fmi2GetFMUstate(c, NULL) == fmi2Error);
    EXPECT(fmi2Terminate(c) == fmi2OK);
    fmi2FreeInstance(c);
    fmi2FreeInstance(c); /* the master's error: refused, nothing touched */
    EXPECT(fmi2DoStep(c, 0.0, VC_STEP, 0) == fmi2Error);

    /* a port in use: leaving initialization fails, and so does every step */
    c = linked(sim_port, sim_port, 0.05);
    EXPECT(fmi2ExitInitializationMode(c) == fmi2Error && strstr(last, "cannot bind") != NULL);
    EXPECT(fmi2DoStep(c, 0.0, VC_STEP, 0) == fmi2Error);
    fmi2FreeInstance(c);

    /* 20 links side by side (ephemeral ports), then 1000 instantiate/free cycles */
    fmi2Component many[20];
    for (int i = 0; i < 20; i++) {
        many[i] = linked(0, sim_port, 0.001);
        EXPECT(fmi2ExitInitializationMode(many[i]) == fmi2OK);
    }
    for (int i = 0; i < 20; i++) fmi2FreeInstance(many[i]);
    for (int i = 0; i < 1000; i++) {
        c = fmi2Instantiate("cycle", fmi2CoSimulation, VC_GUID, "", &callbacks, 0, 0);
        EXPECT(c != NULL);
        fmi2FreeInstance(c);
    }
    close(sim);
    if (failures == 0) printf("all sequences passed\n");
    return failures != 0;
}
