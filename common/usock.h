/* SPDX-License-Identifier: Apache-2.0 */
/*
 * usock.h — the daemons' unix-socket server: the listening socket (its
 * directory made, a stale socket file replaced, unlinked at the end), the
 * accept loop (peer credentials, the daemon's admission, a refusal told in
 * a Reply before the close, a pause while no descriptor is left), and per
 * connection its sd-event source, its frame reader (bounded frames) and
 * its queue of output (bounded by the caller), all over common/frame.c.
 *
 * What differs between the daemons is theirs, through GleanUsockOps: who
 * is admitted (the per-user caps), what a frame means, how a failure is
 * recorded, when output goes (the agent at once, the central manager after
 * its batch commits). The server calls back only from its event sources;
 * it never frees a connection the daemon has (glean_usock_conn_free() is
 * the daemon's call), but frees those left when it is freed.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <systemd/sd-event.h>

#include "proto.h"

typedef struct GleanUsock GleanUsock;
typedef struct GleanUsockConn GleanUsockConn;

typedef struct GleanUsockOps {
        /* Optional: the first call of each event of the server (its
         * listening socket's and its connections'). */
        void (*dispatch)(void *userdata);
        /* Optional: before each accept, whether a connection may be taken
         * now; false leaves the others for a later event (the daemon may
         * have paused the server meanwhile). */
        bool (*room)(void *userdata);
        /* Optional: whether peer may have a connection: 0 yes, -errno no,
         * with why (the Reason of the Reply it gets before the close). */
        int (*admit)(void *userdata, const GleanPeer *peer, char *why, size_t whylen);
        /* Optional: a connection refused, for the daemon's record: by admit,
         * for want of memory, or its peer not known (peer NULL). */
        void (*refused)(void *userdata, const GleanPeer *peer, const char *why);
        /* Optional: accept4() found no descriptor (or memory) left (err:
         * EMFILE, ENFILE, ENOBUFS, ENOMEM). The daemon pauses the server
         * (glean_usock_pause) until it has room again; NULL: the server
         * pauses itself and resumes when one of its connections is freed. */
        void (*exhausted)(void *userdata, int err);
        /* A connection taken: the daemon makes its record of it
         * (glean_usock_conn_set_data). < 0 refuses it: the server tells the
         * peer why and frees c (the daemon keeps nothing of it then). */
        int (*open)(void *userdata, GleanUsockConn *c);
        /* One frame of c, payload NUL-terminated. < 0: c was freed or
         * stopped, nothing more is read of it now. */
        int (*frame)(GleanUsockConn *c, const char *payload, size_t len);
        /* Reading c failed: err is -EPIPE at its end (between frames or in
         * the middle of one), -EMSGSIZE or -EBADMSG for a bad frame header,
         * -errno. The daemon frees or stops c. */
        void (*gone)(GleanUsockConn *c, int err);
        /* Optional: c's socket takes output again; < 0 when c was freed or
         * stopped. NULL: glean_usock_conn_flush(), a failure given to gone. */
        int (*writable)(GleanUsockConn *c);
} GleanUsockOps;

/* Listens on path (mode: the socket file's; its directory made 0755 when
 * missing) and takes its connections on e. ops must outlive the server.
 * The failures are logged ("cannot create DIR", "cannot listen on PATH",
 * "cannot watch PATH", with the reason) and returned as -errno. */
int glean_usock_new(sd_event *e, const char *path, mode_t mode, const GleanUsockOps *ops, void *userdata,
                    GleanUsock **ret);
/* Frees the connections left, closes the socket and unlinks its file.
 * Accepts NULL; returns NULL. */
GleanUsock *glean_usock_free(GleanUsock *s);

/* At most n connections taken in one event (0, the default: until none is
 * waiting); the others come at the next, after what else is ready. */
void glean_usock_set_accepts_per_event(GleanUsock *s, unsigned n);
/* How long the Reply of a refusal may take to go (default 0: what the
 * socket takes at once; a new socket takes a Reply whole). */
void glean_usock_set_refuse_timeout(GleanUsock *s, int timeout_ms);

/* No connection is taken while paused (the listening socket is
 * level-triggered: at the descriptor limit it would wake the loop at once,
 * for ever). */
void glean_usock_pause(GleanUsock *s);
void glean_usock_resume(GleanUsock *s);
bool glean_usock_paused(const GleanUsock *s);
/* Connections taken and not yet freed. */
size_t glean_usock_conns(const GleanUsock *s);

/* Tells the peer on fd why it is refused: a Reply with Ok = false and
 * Reason why, given timeout_ms to go (glean_msg_send). */
void glean_usock_tell(int fd, const char *why, int timeout_ms);
/* The same, then closes fd. */
void glean_usock_refuse(int fd, const char *why, int timeout_ms);
/* Whether fd takes output within timeout_ms (poll POLLOUT): for the last
 * flush of a daemon that stops. */
bool glean_usock_fd_writable(int fd, int timeout_ms);

/* ---- a connection ---- */

int glean_usock_conn_fd(const GleanUsockConn *c);
const GleanPeer *glean_usock_conn_peer(const GleanUsockConn *c); /* SO_PEERCRED at connect() */
void *glean_usock_conn_data(const GleanUsockConn *c);
void glean_usock_conn_set_data(GleanUsockConn *c, void *data);

/* Queues one frame of payload: -EMSGSIZE when len is 0 or above
 * GLEAN_FRAME_MAX, -ENOBUFS when more than max bytes would then wait (a
 * peer that does not read), -ENOMEM; nothing is queued then. */
int glean_usock_conn_queue(GleanUsockConn *c, const void *payload, size_t len, size_t max);
/* Bytes queued and not yet taken by the socket. */
size_t glean_usock_conn_queued(const GleanUsockConn *c);
/* Takes back what was queued after the queue held size bytes (nothing
 * flushed since). */
void glean_usock_conn_truncate(GleanUsockConn *c, size_t size);
/* Sends what the socket takes now, and waits for it to take more
 * (EPOLLOUT) while some is left: 1 all sent, 0 some left, -errno (the
 * connection is broken: free it). */
int glean_usock_conn_flush(GleanUsockConn *c);
/* Reads and hands over c's frames until the socket would block (what
 * its event does): 0, or < 0 when c was freed or stopped meanwhile. */
int glean_usock_conn_read(GleanUsockConn *c);
/* No more events of c (a connection to be freed later). */
void glean_usock_conn_stop(GleanUsockConn *c);
/* Closes c and frees it, what it had queued dropped; a paused server
 * without an exhausted callback resumes. Accepts NULL; returns NULL. */
GleanUsockConn *glean_usock_conn_free(GleanUsockConn *c);
