/* SPDX-License-Identifier: Apache-2.0 */
/*
 * dial.c — the dialler's side of a transfer connection: a TCP connect
 * within a timeout (non-blocking connect, then poll), and the cleartext
 * preamble "GLEANXFR <TransferId>\n" that tells the submit agent which
 * grant the connection is for.
 */
#define _GNU_SOURCE

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/proto.h"
#include "xfer-internal.h"

#define PREAMBLE_MAGIC "GLEANXFR "

static bool valid_id(const char *id, size_t len) {
        if (len != XFER_ID_LEN)
                return false;
        for (size_t i = 0; i < len; i++)
                if (!isxdigit((unsigned char) id[i]))
                        return false;
        return true;
}

int xfer_preamble_write(int fd, const char *transfer_id, int timeout_ms) {
        char buf[sizeof PREAMBLE_MAGIC + XFER_ID_LEN + 2];

        if (!transfer_id || !valid_id(transfer_id, strlen(transfer_id)))
                return -EINVAL;
        int n = snprintf(buf, sizeof buf, PREAMBLE_MAGIC "%s\n", transfer_id);
        return glean_frame_write(fd, buf, (size_t) n, timeout_ms);
}

int xfer_preamble_parse(const char *payload, size_t len, char ret_id[XFER_ID_LEN + 1]) {
        const size_t m = sizeof PREAMBLE_MAGIC - 1;

        if (!payload || len != m + XFER_ID_LEN + 1 || memcmp(payload, PREAMBLE_MAGIC, m) != 0 ||
            payload[len - 1] != '\n' || !valid_id(payload + m, XFER_ID_LEN))
                return -EBADMSG;
        memcpy(ret_id, payload + m, XFER_ID_LEN);
        ret_id[XFER_ID_LEN] = '\0';
        return 0;
}

/* "ip:port" or "[ipv6]:port" */
static int parse_address(const char *address, struct sockaddr_storage *ss, socklen_t *sl) {
        char host[INET6_ADDRSTRLEN + 1];
        const char *colon, *h = address;
        size_t hl;

        if (!address)
                return -EINVAL;
        if (*address == '[') {
                const char *e = strchr(address, ']');
                if (!e || e[1] != ':')
                        return -EINVAL;
                h = address + 1;
                hl = (size_t) (e - h);
                colon = e + 1;
        } else {
                colon = strrchr(address, ':');
                if (!colon)
                        return -EINVAL;
                hl = (size_t) (colon - address);
        }
        if (hl == 0 || hl >= sizeof host)
                return -EINVAL;
        memcpy(host, h, hl);
        host[hl] = '\0';
        char *end;
        unsigned long port = strtoul(colon + 1, &end, 10);
        if (*end || end == colon + 1 || port == 0 || port > 65535)
                return -EINVAL;
        memset(ss, 0, sizeof *ss);
        struct sockaddr_in *s4 = (struct sockaddr_in *) ss;
        struct sockaddr_in6 *s6 = (struct sockaddr_in6 *) ss;
        if (inet_pton(AF_INET, host, &s4->sin_addr) == 1) {
                s4->sin_family = AF_INET;
                s4->sin_port = htons((uint16_t) port);
                *sl = sizeof *s4;
        } else if (inet_pton(AF_INET6, host, &s6->sin6_addr) == 1) {
                s6->sin6_family = AF_INET6;
                s6->sin6_port = htons((uint16_t) port);
                *sl = sizeof *s6;
        } else
                return -EINVAL;
        return 0;
}

int xfer_dial(const char *address, const char *transfer_id, int timeout_ms, int *ret_fd, char *why, size_t whylen) {
        struct sockaddr_storage ss;
        socklen_t sl;
        _cleanup_close_ int fd = -1;
        int r;

        if (!ret_fd)
                return -EINVAL;
        r = parse_address(address, &ss, &sl);
        if (r < 0)
                return glean_why(r, why, whylen, "bad transfer address '%s'", address ? address : "");
        fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (fd < 0)
                return glean_why(-errno, why, whylen, "socket: %m");
        if (connect(fd, (struct sockaddr *) &ss, sl) < 0) {
                if (errno != EINPROGRESS)
                        return glean_why(-errno, why, whylen, "cannot connect to %s: %m", address);
                struct pollfd p = { .fd = fd, .events = POLLOUT };
                do
                        r = poll(&p, 1, timeout_ms);
                while (r < 0 && errno == EINTR);
                if (r == 0)
                        return glean_why(-ETIMEDOUT, why, whylen, "cannot connect to %s: timed out", address);
                int soerr = 0;
                socklen_t el = sizeof soerr;
                if (r < 0 || getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &el) < 0)
                        return glean_why(-errno, why, whylen, "cannot connect to %s: %m", address);
                if (soerr)
                        return glean_why(-soerr, why, whylen, "cannot connect to %s: %s", address, strerror(soerr));
        }
        int one = 1;
        (void) setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        r = xfer_preamble_write(fd, transfer_id, timeout_ms);
        if (r < 0)
                return glean_why(r, why, whylen, "cannot send the transfer preamble to %s: %s", address, strerror(-r));
        *ret_fd = TAKE_FD(fd);
        return 0;
}
