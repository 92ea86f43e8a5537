/* SPDX-License-Identifier: Apache-2.0 */
/*
 * hello.c — the version handshake: the Hello message, the server's check
 * of a client's Hello and the client's connect-and-greet.
 */
#define _GNU_SOURCE

#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include <strings.h>

#include "common-internal.h"
#include "proto.h"

int glean_hello_new(const char *peer_name, ClassAd **ret) {
        _cleanup_classad_ ClassAd *ad = NULL;
        int r;

        if (!peer_name || !*peer_name)
                return -EINVAL;
        r = glean_msg_new(GLEAN_CMD_HELLO, &ad);
        if (r < 0)
                return r;
        r = classad_set_int(ad, "ProtocolVersion", GLEAN_PROTOCOL_VERSION);
        if (r < 0)
                return r;
        r = classad_set_string(ad, "Peer", peer_name);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(ad);
        return 0;
}

int glean_hello_check_as(const ClassAd *hello, const char *self, char *why, size_t whylen) {
        _cleanup_free_ char *cmd = NULL;
        int64_t version;
        int r;

        r = classad_eval_string(hello, "Command", GLEAN_CA_MODE, &cmd);
        if (r == -ENOMEM)
                return r;
        if (r < 0 || strcasecmp(cmd, "Hello") != 0)
                return glean_why(-EBADMSG, why, whylen, "expected Hello, got %s%.64s%s", cmd ? "\"" : "",
                                 cmd ? cmd : "no Command", cmd ? "\"" : "");
        r = classad_eval_int(hello, "ProtocolVersion", GLEAN_CA_MODE, &version);
        if (r < 0)
                return glean_why(-EBADMSG, why, whylen, "Hello: no integer ProtocolVersion");
        if (version != GLEAN_PROTOCOL_VERSION)
                return glean_why(-EPROTONOSUPPORT, why, whylen, "protocol version %" PRId64
                                 " not supported (this %s speaks %d)", version, self ? self : "agent",
                                 GLEAN_PROTOCOL_VERSION);
        return 0;
}

int glean_hello_check(const ClassAd *hello, char *why, size_t whylen) {
        return glean_hello_check_as(hello, "agent", why, whylen);
}

/* Interprets the server's answer to our Hello. */
static int check_answer(const ClassAd *answer, GleanCommand cmd, const char *self, char *why, size_t whylen) {
        _cleanup_free_ char *reason = NULL;
        bool ok = false;

        switch (cmd) {
        case GLEAN_CMD_HELLO:
                return glean_hello_check_as(answer, self, why, whylen);
        case GLEAN_CMD_REPLY:
                (void) classad_eval_bool(answer, "Ok", GLEAN_CA_MODE, &ok);
                if (ok)
                        return glean_why(-EPROTO, why, whylen, "the server answered Hello with Reply Ok=true");
                (void) classad_eval_string(answer, "Reason", GLEAN_CA_MODE, &reason);
                return glean_why(-EPROTONOSUPPORT, why, whylen, "the server refused the connection: %s",
                                 reason ? reason : "no reason given");
        default:
                return glean_why(-EPROTO, why, whylen, "the server answered Hello with %s",
                                 glean_command_name(cmd));
        }
}

int glean_client_connect(const char *socket_path, const char *peer_name, int timeout_ms, int *ret_fd, char *why,
                         size_t whylen) {
        _cleanup_classad_ ClassAd *hello = NULL, *answer = NULL;
        _cleanup_close_ int fd = -1;
        int64_t deadline = glean_deadline(timeout_ms);
        GleanCommand cmd;
        int r;

        r = glean_hello_new(peer_name, &hello);
        if (r < 0)
                return glean_why(r, why, whylen, "cannot build Hello: %s", strerror(-r));

        r = glean_sock_connect_unix(socket_path, timeout_ms, &fd);
        if (r < 0)
                return glean_why(r, why, whylen, "cannot connect to %s: %s", socket_path, strerror(-r));

        r = glean_msg_send(fd, hello, glean_remaining_ms(deadline));
        char reason[256];
        if (r == -EPIPE || r == -ECONNRESET) {
                /* A server that refuses the connection (its limits) answers
                 * before our Hello and closes: its Reply may be there to read. */
                if (glean_msg_recv(fd, 100, &answer, &cmd, reason, sizeof(reason)) >= 0)
                        return check_answer(answer, cmd, peer_name, why, whylen) < 0
                                       ? -EPROTONOSUPPORT
                                       : glean_why(-EPROTO, why, whylen, "%s closed the connection", socket_path);
        }
        if (r < 0)
                return glean_why(r, why, whylen, "cannot send Hello to %s: %s", socket_path, strerror(-r));

        r = glean_msg_recv(fd, glean_remaining_ms(deadline), &answer, &cmd, reason, sizeof(reason));
        if (r < 0)
                return glean_why(r, why, whylen, "no answer to Hello from %s: %s", socket_path, reason);

        r = check_answer(answer, cmd, peer_name, why, whylen);
        if (r < 0)
                return r;
        *ret_fd = TAKE_FD(fd);
        return 0;
}
