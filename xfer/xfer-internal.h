/* SPDX-License-Identifier: Apache-2.0 */
/*
 * xfer-internal.h — what the files of xfer/ share: a worker's connection
 * (plain frames, buffered), the protocol's frame types (proto.c says the
 * protocol), safe paths beneath a directory (path.c), the manifest, and
 * the workers' entry points, which run the protocol over plain
 * descriptors without crypto or a user switch (the unit tests and the
 * fuzzer call them directly; session.c runs them in the user's worker).
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <sodium.h>

#include "xfer.h"

/* Frame types (the first byte of every frame's payload; proto.c). */
enum {
        XFER_T_REQUEST = 'R', /* execute side: what it wants */
        XFER_T_HEADER = 'H',  /* one entry: type, mode, mtime, size, role, name (and a link's target) */
        XFER_T_DATA = 'D',    /* bytes of the current file */
        XFER_T_SUM = 'S',     /* the current file's SHA-256 */
        XFER_T_END = 'E',     /* no more entries: count, bytes */
        XFER_T_FAIL = 'F',    /* the sender gives up: hold code, errno, reason */
        XFER_T_STATUS = 'T',  /* the receiver's final word */
};

enum { XFER_REQ_INPUT = 1, XFER_REQ_OUTPUT = 2 };
enum { XFER_KIND_FILE = 1, XFER_KIND_DIR = 2, XFER_KIND_LINK = 3 };
enum { XFER_ROLE_PLAIN = 0, XFER_ROLE_STDOUT = 1, XFER_ROLE_STDERR = 2 };

#define XFER_PROTO_VERSION 1
#define XFER_DATA_CHUNK (GLEAN_FRAME_MAX - 1u) /* bytes of file per data frame */
#define XFER_NAME_MAX 4096u
#define XFER_TMP_PREFIX ".glean-xfer."

/* ---- a worker's connection: frames over in/out descriptors ---- */

typedef struct XferConn {
        int in_fd, out_fd;
        int timeout_ms; /* per wait */
        unsigned char *obuf; /* frames not yet written */
        size_t olen, ocap;
        unsigned char *ibuf; /* bytes read, not yet framed */
        size_t istart, iend, icap;
} XferConn;

int xfer_conn_init(XferConn *c, int in_fd, int out_fd, int timeout_ms);
void xfer_conn_done(XferConn *c);
/* Queues one frame of type and body (a body of len bytes, plus more
 * bytes more2 of len2 after it); writes out when the buffer is full. */
int xfer_conn_put(XferConn *c, int type, const void *body, size_t len, const void *more2, size_t len2);
/* Room for a data frame of up to max bytes written in place: returns
 * where to put them; xfer_conn_commit_data(c, n) queues the frame. */
unsigned char *xfer_conn_data_room(XferConn *c, size_t max);
int xfer_conn_commit_data(XferConn *c, size_t n);
int xfer_conn_flush(XferConn *c);
/* The next frame: 0 and its type, body (pointing into c's buffer, valid
 * until the next call) and length. -EPIPE at end of file, -EBADMSG,
 * -ETIMEDOUT, -errno. */
int xfer_conn_get(XferConn *c, int *ret_type, const unsigned char **ret_body, size_t *ret_len);
/* Whether a frame (or end of file) is waiting, without blocking. */
bool xfer_conn_pending(XferConn *c);

/* ---- proto.c: the frames' bodies ---- */

typedef struct XferHeader {
        int kind, role;
        uint32_t mode;
        int64_t mtime_sec;
        uint32_t mtime_nsec;
        uint64_t size;   /* file: bytes; link: the target's length */
        char name[XFER_NAME_MAX + 1];
        char target[XFER_NAME_MAX + 1]; /* link */
} XferHeader;

int xfer_put_request(XferConn *c, int what);
int xfer_parse_request(const unsigned char *b, size_t n, int *ret_what);
int xfer_put_header(XferConn *c, const XferHeader *h);
int xfer_parse_header(const unsigned char *b, size_t n, XferHeader *ret);
int xfer_put_end(XferConn *c, uint64_t files, uint64_t bytes);
int xfer_parse_end(const unsigned char *b, size_t n, uint64_t *ret_files, uint64_t *ret_bytes);
/* FAIL and STATUS share a body: hold code, errno, files, bytes, reason. */
int xfer_put_outcome(XferConn *c, int type, const XferResult *res);
int xfer_parse_outcome(const unsigned char *b, size_t n, XferResult *ret);

/* Sets res to a failure: error, hold code, subcode (errno), reason. Returns error. */
int xfer_fail(XferResult *res, int error, int hold, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* ---- sum.c: SHA-256 (the CPU's SHA extensions, else libsodium) ---- */

typedef struct XferSum {
        bool ni;
        uint32_t state[8];
        uint8_t buf[64];
        size_t buffered;
        uint64_t total;
        crypto_hash_sha256_state sodium;
} XferSum;

/* portable: libsodium's code even where the CPU has SHA extensions (tests) */
void xfer_sum_init(XferSum *s, bool portable);
void xfer_sum_update(XferSum *s, const void *data, size_t n);
void xfer_sum_final(XferSum *s, uint8_t out[32]);

/* ---- path.c: names beneath a directory ---- */

/* Whether name is a relative path of plain components ("a/b/c"): no
 * empty, ".", ".." component, not absolute, no component starting with
 * XFER_TMP_PREFIX, at most XFER_NAME_MAX bytes. */
bool xfer_name_ok(const char *name);
/* Opens (creating missing ones when create, mode 0755) the directories of
 * rel beneath dirfd, never through a symbolic link: an O_PATH-free
 * O_DIRECTORY descriptor. -ELOOP through a link, -ENOTDIR, -errno. */
int xfer_open_dir_beneath(int dirfd, const char *rel, bool create, int *ret_fd);
/* Removes the XFER_TMP_PREFIX files of the directory dirfd (one level). */
void xfer_clean_leftovers(int dirfd);
/* Whether the symbolic link target, met at directory dir (relative to the
 * tree's root, "" for the root), stays inside the tree when read with
 * no knowledge of links (no component goes above the root). */
bool xfer_link_lexically_inside(const char *dir, const char *target);

/* ---- the manifest (what arrived; text, one entry a line) ---- */

typedef struct XferManifestEntry {
        char *name;
        uint64_t size;
        int64_t mtime_sec;
        uint32_t mtime_nsec;
} XferManifestEntry;

typedef struct XferManifest {
        XferManifestEntry *v;
        size_t n, cap;
} XferManifest;

int xfer_manifest_add(XferManifest *m, const char *name, uint64_t size, int64_t sec, uint32_t nsec);
char *xfer_manifest_to_text(const XferManifest *m);
int xfer_manifest_parse(const char *text, size_t len, XferManifest *ret);
const XferManifestEntry *xfer_manifest_find(const XferManifest *m, const char *name);
void xfer_manifest_clear(XferManifest *m);

/* ---- the two halves of a transfer (send.c, recv.c) ---- */

/* What a receiver is for. */
typedef enum XferRecvMode {
        XFER_RECV_INPUT,  /* into a sandbox: names as sent */
        XFER_RECV_OUTPUT, /* into Iwd: remaps, Out/Err */
} XferRecvMode;

/* Receives entries until END (or FAIL) into dir, then sends STATUS.
 * manifest (may be NULL) gets what arrived. */
int xfer_recv_files(XferConn *c, XferRecvMode mode, const XferJob *job, const char *dir, XferManifest *manifest,
                    XferResult *res);
/* Sends the job's input read from job->iwd, then waits for STATUS. */
int xfer_send_input_files(XferConn *c, const XferJob *job, XferResult *res);
/* Sends the job's output read from sandbox (manifest: what was input,
 * may be NULL), then waits for STATUS. */
int xfer_send_output_files(XferConn *c, const XferJob *job, const char *sandbox, const XferManifest *manifest,
                           XferResult *res);

/* ---- worker.c: the workers, over plain descriptors ---- */

int xfer_worker_fetch(int in_fd, int out_fd, const XferJob *job, const char *sandbox, int timeout_ms,
                      XferManifest *manifest, XferResult *res);
int xfer_worker_output(int in_fd, int out_fd, const XferJob *job, const char *sandbox, const XferManifest *manifest,
                       int timeout_ms, XferResult *res);
int xfer_worker_serve(int in_fd, int out_fd, const XferJob *job, int timeout_ms, XferResult *res);
