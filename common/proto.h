/* SPDX-License-Identifier: Apache-2.0 */
/*
 * proto.h — glean's wire protocol: frames, messages, the Hello handshake,
 * unix sockets and their peers.
 *
 * The same protocol runs over the agent's local unix socket (the `glean`
 * CLI; the caller is known by SO_PEERCRED) and over TCP between agents and
 * the central manager, where every frame is sealed after a handshake that
 * proves the pool key (secure.h, docs/protocol.md).
 *
 * Frames. A frame is a 4-byte big-endian length N followed by N bytes of
 * payload. 0 < N <= GLEAN_FRAME_MAX. A declared length of 0 is -EBADMSG, one
 * above the limit -EMSGSIZE; after either the stream cannot be resynchronised
 * and the connection must be closed (a reader that saw a bad header keeps
 * returning the error).
 *
 * Messages. The payload of a frame is one ClassAd in the bracketed syntax
 * ("[ Command = "Status"; RequestId = 7 ]", as classad_unparse() writes it),
 * parsed and evaluated in CA_MODE_OLD (GLEAN_CA_MODE), the mode HTCondor's
 * daemons use. Every message has a string attribute Command; requests may
 * carry an integer RequestId that the Reply echoes. Attributes a command
 * does not define are allowed and ignored (forward compatibility); the ones
 * it defines are type-checked by evaluating them (see glean_msg_parse()).
 *
 *   Command         required (optional)
 *   Hello           ProtocolVersion int, Peer string ("glean", "glean-agent",
 *                   "glean-negotiator")
 *   Reply           Ok bool, Reason string when !Ok; (RequestId int,
 *                   Slots list of ads, Slot string, ClaimId string,
 *                   Ads list of ads, Ad ad, Results list of ads, Count int,
 *                   More bool, ClusterId int, NumProcs int,
 *                   LeaseDuration int >= 0, Errno string: when a slot's
 *                   state machine refused, the errno name of why, as
 *                   agent/policy.h lists them: "EBUSY", "EPERM", ...)
 *   Status          (Slot string)
 *   SlotUpdate      SlotAd ad; (ClaimId string: on an agent's connection,
 *                   the id of the slot's claim when the central manager
 *                   holds it)
 *   Match           Slot string, ClaimId string
 *   RequestClaim    Slot string, ClaimId string, JobAd ad; (Rank real,
 *                   ByPriority bool: on a claimed slot, a preemption the
 *                   negotiator decided for user priority (its reason
 *                   Priority), which needs a RANK no worse than the
 *                   current claim's rather than a better one; root and
 *                   ADMINISTRATORS only)
 *   ActivateClaim   ClaimId string, JobAd ad
 *   KeepAlive       ClaimId string
 *   Deactivate      ClaimId string; (Graceful bool, default true)
 *   Release         ClaimId string
 *   Vacate          (Slot string: absent means every slot), (Fast bool, default false)
 *   Drain           (How string: "graceful" | "quick" | "fast", default graceful),
 *                   (Reason string)
 *   CancelDrain     -
 *   Shutdown        (Fast bool), (Peaceful bool)
 *   JobExit         ClaimId string, ExitBySignal bool, ExitCode int 0..255 when
 *                   !ExitBySignal, ExitSignal int 1..64 when ExitBySignal;
 *                   (CoreDumped bool, RemoteUserCpu, RemoteSysCpu,
 *                   RemoteWallClockTime real >= 0, ResidentSetSize,
 *                   ImageSize int >= 0 (KiB), Reason string, ClusterId,
 *                   ProcId, NumJobStarts int >= 0: the job ad that ran, so
 *                   that an exit heard twice is told from the next run's)
 *   Event           Slot string, State string, Activity string; (Transition int;
 *                   ClaimEnded bool, ClaimId string, Reason string: the
 *                   claim ended by itself)
 *
 * From an agent to the central manager, JobExit and Event with ClaimEnded
 * carry a RequestId of the agent's; the manager answers Reply Ok = true
 * with it once what the message changed is committed (a duplicate, or one
 * about a claim or run it no longer has, is answered too and changes
 * nothing). The agent keeps the message until then and sends it again on
 * every new connection.
 *
 * The central manager (glean-negotiator) and its users. Over the
 * negotiator's unix socket the caller is known by SO_PEERCRED; on an
 * agent's sealed connection a user's request is one the agent relays for a
 * local caller, and carries RelayUser string and RelayUid int (set by the
 * agent from SO_PEERCRED; the agent replaces any the caller wrote). A
 * request from an agent without RelayUser acts as the pool (root). The
 * manager takes RelayUser as a name ("bob" or "bob@UID_DOMAIN" of the
 * pool), never the uid; an administrator's only from an agent of
 * ADMINISTRATORS_RELAYED_BY (negotiator/daemon/agents.c).
 *
 *   Submit          Cluster ad (the attributes every proc of the cluster
 *                   shares), Procs list of ads (each proc's own attributes,
 *                   in ProcId order; [] when a proc has none of its own);
 *                   (More bool: another Submit part of the same cluster
 *                   follows on this connection; nothing is queued until the
 *                   last part, and all parts go in as one transaction).
 *                   Owner, User, ClusterId, ProcId, QDate, JobStatus ... are
 *                   the central manager's to set, whatever the request says.
 *                   Reply (last part): ClusterId int, NumProcs int
 *   Query           (Ids string: "C" or "C.P" separated by spaces/commas;
 *                   Constraint string: an expression over the job ad;
 *                   Attrs string: names to return (all when absent);
 *                   Limit int >= 0: at most so many ads (0 none: count only))
 *                   Reply: Ads list of ads, Count int; More bool
 *   History         as Query, over the jobs that left the queue, newest first
 *   QuerySlots      (Constraint string, Attrs string, Limit int) as Query, over the
 *                   collector's slot ads
 *   JobAction       Action string ("Remove", "Hold", "Release", "SetPrio",
 *                   "Vacate"); (Ids string, Constraint string, Reason string,
 *                   Prio int (SetPrio), Fast bool (Vacate))
 *                   Reply: Results list of [ Id = "C.P"; Ok; Reason ], Count int
 *                   (of jobs changed); Ok false when some target was not found
 *                   or refused
 *   UserPrio        (Action string: "list" (the default), "setprio",
 *                   "setfactor", "resetusage", "delete"; Submitter string;
 *                   Value real) Reply: Ads list, one per account entry
 *   Wait            Id string "C.P"; (Timeout real seconds >= 0: none when
 *                   absent) Reply once the job left the queue: Ad (its
 *                   history ad: JobStatus, ExitCode, ...); Ok false with
 *                   Errno "ETIMEDOUT" when the time ran out first
 *   Vacate, Drain, CancelDrain to the central manager name their target with
 *                   Machine string (every slot of that agent) or Slot string
 *                   ("slot1@host"); the central manager forwards them.
 *
 * Listings come in pieces: a Reply with More = true is followed by another
 * Reply with the same RequestId, until one without More (or More = false).
 * Each piece stays under GLEAN_FRAME_MAX.
 *
 * "real" accepts an integer too; "bool" accepts only true/false. Required
 * strings must not be empty. Every command may carry RequestId (int).
 *
 * Handshake. The client sends Hello first. The server answers with its own
 * Hello, or with a Reply Ok=false Reason="protocol version N not supported
 * (this agent speaks 1)" and closes the connection.
 *
 * Conventions: functions return >= 0 on success and -errno on failure;
 * outputs come last, are named ret_*, and are set only on success. `why`
 * buffers (may be NULL when whylen is 0) receive a one-line reason on
 * failure. Not thread-safe beyond what the ClassAd library allows (one
 * thread handling messages at a time); the frame functions alone are.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "classad.h"

#define GLEAN_PROTOCOL_VERSION 1
#define GLEAN_FRAME_MAX (1024u * 1024u) /* bytes of payload */
#define GLEAN_FRAME_HEADER 4u
#define GLEAN_CA_MODE CA_MODE_OLD       /* how message ads are parsed and evaluated */

/* ---- frames ---- */

typedef struct GleanFrameReader GleanFrameReader;

/* max: the largest payload accepted (0 means GLEAN_FRAME_MAX; larger values
 * are clamped to GLEAN_FRAME_MAX). */
int glean_frame_reader_new(size_t max, GleanFrameReader **ret);
void glean_frame_reader_free(GleanFrameReader *r); /* accepts NULL */

/* Appends n bytes to the reader's buffer. 0, -ENOMEM, or the error of a
 * bad header seen before (then nothing is appended). */
int glean_frame_reader_feed(GleanFrameReader *r, const void *buf, size_t n);

/* Takes the next whole frame out of the buffer: returns 1 and a malloc'd,
 * NUL-terminated copy of its payload (ret_len: payload bytes, may be NULL);
 * 0 when more bytes are needed; -EMSGSIZE / -EBADMSG on a bad header (and
 * from then on). Several frames fed at once come out one call each. */
int glean_frame_reader_next(GleanFrameReader *r, char **ret, size_t *ret_len);

/* Bytes buffered and not yet returned as frames. */
size_t glean_frame_reader_buffered(const GleanFrameReader *r);

/* For a non-blocking fd that polled readable: returns a frame already
 * buffered, otherwise reads until a whole frame is there (1, as _next) or
 * the fd would block (0). -EPIPE at end of file (between frames or in the
 * middle of one), -EMSGSIZE / -EBADMSG as _next, -errno from read().
 * Because frames may stay buffered after a 1, call it again until it
 * returns 0 before waiting for the fd again. */
int glean_frame_read(GleanFrameReader *r, int fd, char **ret, size_t *ret_len);

/* Writes header and payload completely (EINTR, EAGAIN via poll() and short
 * writes handled; send() with MSG_NOSIGNAL on sockets, so no SIGPIPE).
 * timeout_ms < 0: no timeout. 0 < len <= GLEAN_FRAME_MAX, else -EINVAL /
 * -EMSGSIZE. -ETIMEDOUT, -EPIPE, -errno. After a failure part of the frame
 * may have been written: close the connection. */
int glean_frame_write(int fd, const void *payload, size_t len, int timeout_ms);

/* Receives exactly one frame (reads no byte beyond it), waiting at most
 * timeout_ms in all (< 0: forever); blocking or non-blocking fd. max as
 * glean_frame_reader_new(). Returns 0 and a malloc'd NUL-terminated payload;
 * -ETIMEDOUT, -EPIPE (end of file), -EMSGSIZE, -EBADMSG, -errno. */
int glean_frame_recv(int fd, size_t max, int timeout_ms, char **ret, size_t *ret_len);

/* ---- an output queue of frames, for event loops ---- */

/* Frames waiting to be sent on a non-blocking socket, consumed from the
 * front without moving what is left (a listing of many megabytes drains
 * in linear time). All zeros is empty; free with glean_outq_clear(). */
typedef struct GleanOutQueue {
        unsigned char *data;
        size_t start, end, cap;
} GleanOutQueue;

/* Appends one frame (header and payload). -EMSGSIZE when len is 0 or
 * above GLEAN_FRAME_MAX, -ENOBUFS when more than max bytes would then be
 * queued (a peer that does not read), -ENOMEM; nothing is queued then. */
int glean_outq_push(GleanOutQueue *q, const void *payload, size_t len, size_t max);
/* Sends as much as fd takes now (MSG_NOSIGNAL | MSG_DONTWAIT): 1 all is
 * sent, 0 some is left (wait for POLLOUT), -errno (close the connection). */
int glean_outq_flush(GleanOutQueue *q, int fd);
static inline size_t glean_outq_size(const GleanOutQueue *q) {
        return q->end - q->start;
}
/* Takes back what was pushed after the queue held size bytes (a batch
 * that failed to commit); nothing may have been flushed since. size
 * larger than what is queued changes nothing. */
static inline void glean_outq_truncate(GleanOutQueue *q, size_t size) {
        if (size < q->end - q->start)
                q->end = q->start + size;
}
void glean_outq_clear(GleanOutQueue *q);

/* ---- messages ---- */

typedef enum GleanCommand {
        GLEAN_CMD_HELLO,
        GLEAN_CMD_REPLY,
        GLEAN_CMD_STATUS,
        GLEAN_CMD_SLOT_UPDATE,
        GLEAN_CMD_MATCH,
        GLEAN_CMD_REQUEST_CLAIM,
        GLEAN_CMD_ACTIVATE_CLAIM,
        GLEAN_CMD_KEEP_ALIVE,
        GLEAN_CMD_DEACTIVATE,
        GLEAN_CMD_RELEASE,
        GLEAN_CMD_VACATE,
        GLEAN_CMD_DRAIN,
        GLEAN_CMD_CANCEL_DRAIN,
        GLEAN_CMD_SHUTDOWN,
        GLEAN_CMD_JOB_EXIT,
        GLEAN_CMD_EVENT,
        GLEAN_CMD_SUBMIT,
        GLEAN_CMD_QUERY,
        GLEAN_CMD_HISTORY,
        GLEAN_CMD_QUERY_SLOTS,
        GLEAN_CMD_JOB_ACTION,
        GLEAN_CMD_USER_PRIO,
        GLEAN_CMD_WAIT,
        GLEAN_CMD_TRANSFER_GRANT,  /* central manager -> submit agent (docs/transfer.md) */
        GLEAN_CMD_TRANSFER_REVOKE, /* central manager -> submit agent */
        GLEAN_CMD_USER_LOG_EVENT,  /* central manager -> submit agent: one event of a job's log */
        GLEAN_CMD__MAX,
} GleanCommand;

/* "Hello", "Reply", "SlotUpdate", ...; NULL when out of range. */
const char *glean_command_name(GleanCommand c);
/* The command named s (case-insensitive); -EINVAL when unknown. */
int glean_command_from_name(const char *s, GleanCommand *ret);

/* Parses payload (len bytes; need not be NUL-terminated) as a message and
 * validates it against the table above. -EBADMSG with why set when it is
 * not a ClassAd (line and column), has no or an unknown Command, lacks a
 * required attribute or has a defined attribute of the wrong type or out
 * of range; -ENOMEM. ret_ad and ret_cmd may be NULL. */
int glean_msg_parse(const char *payload, size_t len, ClassAd **ret_ad, GleanCommand *ret_cmd, char *why,
                    size_t whylen);

/* Validates an ad built in memory the same way (what glean_msg_parse()
 * does after parsing). 0 and the command, or -EBADMSG with why. */
int glean_msg_validate(const ClassAd *msg, GleanCommand *ret_cmd, char *why, size_t whylen);

/* A new message with Command set. */
int glean_msg_new(GleanCommand c, ClassAd **ret);

/* Sets attribute name of msg to a copy of nested (its expressions kept
 * unevaluated), or to the list { ads[0], ..., ads[n-1] }. */
int glean_msg_set_ad(ClassAd *msg, const char *name, const ClassAd *nested);
int glean_msg_set_ad_list(ClassAd *msg, const char *name, ClassAd *const *ads, size_t n);

/* A standalone copy of the nested ad in attribute name (free with
 * classad_free()): -ENOENT when absent or undefined, -EINVAL when it is not
 * an ad. The copy has no parent scope: references to attributes of msg
 * from inside it are UNDEFINED. */
int glean_msg_get_ad(const ClassAd *msg, const char *name, ClassAd **ret);
/* The list of ads in attribute name (e.g. Slots of a Status reply):
 * *ret is a malloc'd array of *ret_n standalone ads (NULL when n is 0);
 * free with glean_ad_list_free(). -ENOENT absent, -EINVAL not a list of ads. */
int glean_msg_get_ad_list(const ClassAd *msg, const char *name, ClassAd ***ret, size_t *ret_n);
void glean_ad_list_free(ClassAd **ads, size_t n);

/* A Reply to request (NULL allowed: no RequestId to echo): Command=Reply,
 * RequestId copied when the request has an integer one, Ok=ok, Reason=
 * reason when reason is non-NULL (when !ok and reason is NULL:
 * "unspecified error"). */
int glean_msg_reply(const ClassAd *request, bool ok, const char *reason, ClassAd **ret);
/* Reply Ok=false to a payload glean_msg_parse() refused: still echoes its
 * RequestId when the payload is a ClassAd with an integer one. */
int glean_msg_reply_invalid(const char *payload, size_t len, const char *reason, ClassAd **ret);

/* Unparses msg and writes it as one frame (see glean_frame_write()). */
int glean_msg_send(int fd, const ClassAd *msg, int timeout_ms);
/* Receives one frame and glean_msg_parse()s it. On a transport error why
 * says so too ("connection closed", "timed out", ...). */
int glean_msg_recv(int fd, int timeout_ms, ClassAd **ret_ad, GleanCommand *ret_cmd, char *why, size_t whylen);

/* ---- the Hello handshake ---- */

/* Hello with ProtocolVersion = GLEAN_PROTOCOL_VERSION and Peer = peer_name. */
int glean_hello_new(const char *peer_name, ClassAd **ret);

/* Checks a received Hello (a validated message): 0 when its version is
 * ours; -EPROTONOSUPPORT with why "protocol version N not supported (this
 * agent speaks 1)"; -EBADMSG when it is not a Hello. Use why as the Reason
 * of the Ok=false Reply. */
int glean_hello_check(const ClassAd *hello, char *why, size_t whylen);
/* The same, naming ourselves: "(this <self> speaks 1)". */
int glean_hello_check_as(const ClassAd *hello, const char *self, char *why, size_t whylen);

/* Connects to the unix socket at socket_path (SOCK_CLOEXEC, non-blocking:
 * the frame and message functions poll), sends Hello with Peer=peer_name
 * and waits for the server's Hello, all within timeout_ms (< 0: forever).
 * Returns 0 and the connected fd; otherwise closes it and returns -errno
 * from socket()/connect() (-ENOENT no socket, -ECONNREFUSED no server,
 * -EACCES), -ENAMETOOLONG, -ETIMEDOUT, -EPIPE, -EBADMSG (the answer is not
 * a valid message), -EPROTO (an answer other than Hello or Reply),
 * -EPROTONOSUPPORT (the server refused the Hello: why carries its Reason;
 * or its Hello has another version); why says which. */
int glean_client_connect(const char *socket_path, const char *peer_name, int timeout_ms, int *ret_fd, char *why,
                         size_t whylen);

/* ---- unix sockets and peers ---- */

/* A listening unix stream socket at path (SOCK_NONBLOCK|SOCK_CLOEXEC),
 * chmod()ed to mode, backlog SOMAXCONN. It is made at "<path>.new" (or a short name beside it) and
 * renamed to path once listening, so a client never finds a socket file
 * that refuses it. A socket file already at path (or path.new) is replaced
 * when nothing accepts on it (a stale one) and is -EADDRINUSE when a
 * server answers; any other file type there is never removed: -EEXIST.
 * -ENAMETOOLONG when path does not fit sun_path. */
int glean_sock_listen_unix(const char *path, mode_t mode, int *ret_fd);

/* Connects a unix stream socket to path (SOCK_CLOEXEC|SOCK_NONBLOCK), with
 * no handshake; waits up to timeout_ms while the listener's backlog is
 * full. -errno. */
int glean_sock_connect_unix(const char *path, int timeout_ms, int *ret_fd);

typedef struct GleanPeer {
        pid_t pid;
        uid_t uid;
        gid_t gid;
        char user[64]; /* user name; the uid as decimal text when unknown or too long */
} GleanPeer;

/* The credentials of the peer of a connected unix socket (SO_PEERCRED:
 * as they were at connect()), and its user name. */
int glean_sock_peer(int fd, GleanPeer *ret);

/* Whether p may administer: uid 0 always; otherwise when administrators
 * (a NULL-terminated list, may be NULL) has an entry that is p's user name
 * (or its uid as decimal text), or "%group" where group is p's primary gid
 * or a supplementary group of p's user (getgrouplist()). */
bool glean_peer_is_admin(const GleanPeer *p, char *const *administrators);
