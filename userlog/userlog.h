/* SPDX-License-Identifier: Apache-2.0 */
/*
 * userlog.h — the job event log (`log = FILE`, the job ad's UserLog):
 * HTCondor's user-log events, their text exactly as HTCondor writes it
 * (condor_event.cpp's formatBody, the ISO date of modern HTCondor), and a
 * reader that turns a log's bytes back into events, bounded against
 * hostile files (what `glean wait LOGFILE` reads).
 *
 * An event in the log:
 *
 *     005 (123.000.000) 2026-12-01 10:00:00 Job terminated.
 *     	(1) Normal termination (return value 0)
 *     	...
 *     ...
 *
 * the header (type, cluster.proc.subproc, date, the body's first line),
 * body lines, and a line of three dots.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

/* HTCondor's ULogEventNumber, the ones glean writes (the reader knows the
 * others by number only). */
typedef enum UserlogType {
        USERLOG_SUBMIT = 0,
        USERLOG_EXECUTE = 1,
        USERLOG_EXECUTABLE_ERROR = 2,
        USERLOG_EVICTED = 4,
        USERLOG_TERMINATED = 5,
        USERLOG_IMAGE_SIZE = 6,
        USERLOG_ABORTED = 9,
        USERLOG_SUSPENDED = 10,
        USERLOG_UNSUSPENDED = 11,
        USERLOG_HELD = 12,
        USERLOG_RELEASED = 13,
        USERLOG_FILE_TRANSFER = 40,
        USERLOG_TYPE_MAX = 999,
} UserlogType;

/* 002's error numbers (CONDOR_EVENT_NOT_EXECUTABLE, _BAD_LINK). */
enum { USERLOG_EXEC_NOT_EXECUTABLE = 0, USERLOG_EXEC_BAD_LINK = 1 };

/* 040's kinds (FileTransferEventType). */
typedef enum UserlogTransfer {
        USERLOG_XFER_NONE = 0,
        USERLOG_XFER_IN_QUEUED = 1,
        USERLOG_XFER_IN_STARTED = 2,
        USERLOG_XFER_IN_FINISHED = 3,
        USERLOG_XFER_OUT_QUEUED = 4,
        USERLOG_XFER_OUT_STARTED = 5,
        USERLOG_XFER_OUT_FINISHED = 6,
        USERLOG_XFER__MAX,
} UserlogTransfer;

#define USERLOG_HOST_MAX 256
#define USERLOG_NAME_MAX 128
#define USERLOG_TEXT_MAX 2048
#define USERLOG_RESOURCES_MAX 8

/* Limits of the reader: a longer line, or an event of more lines or
 * bytes, is skipped as garbage. */
#define USERLOG_LINE_MAX 16384
#define USERLOG_EVENT_LINES_MAX 1024
#define USERLOG_EVENT_BYTES_MAX 65536

/* CPU times of a usage line ("Usr 0 00:00:06, Sys 0 00:00:00"), seconds. */
typedef struct UserlogUsage {
        int64_t usr;
        int64_t sys;
} UserlogUsage;

/* A row of the Partitionable Resources table (005, 004): Usage, Request,
 * Allocated; a missing one (has_*) prints empty. */
typedef struct UserlogResource {
        char name[32]; /* Cpus, Disk, Memory, Gpus, ... (sorted by name when printed) */
        double use, request, allocated;
        bool has_use, has_request, has_allocated;
} UserlogResource;

/* One event: the header's fields and each type's own (zero when unused;
 * strings are NUL-terminated, cut at their size, and printed with any
 * control character turned into a space so that no field can forge a
 * line of the log). */
typedef struct UserlogEvent {
        int type;
        int64_t cluster, proc, subproc;
        time_t time;

        char host[USERLOG_HOST_MAX];      /* 000 submit host, 001 execute host, 040 "Transferring to host" */
        char slot_name[USERLOG_NAME_MAX]; /* 001 SlotName (empty: not written) */
        char notes[USERLOG_TEXT_MAX];     /* 000 the submit's log notes (empty: none) */
        char reason[USERLOG_TEXT_MAX];    /* 004, 009, 012, 013 */
        int code, subcode;                /* 012 (and 004's "Code N Subcode M" when code != 0) */
        int exec_error;                   /* 002 USERLOG_EXEC_* */

        /* 005 (and 004 when requeued) */
        bool normal;
        int return_value, signal;
        char core_file[USERLOG_NAME_MAX];
        /* 004 */
        bool checkpointed, requeued;

        UserlogUsage run_remote, run_local, total_remote, total_local;
        double sent_bytes, recvd_bytes, total_sent_bytes, total_recvd_bytes;
        UserlogResource resources[USERLOG_RESOURCES_MAX];
        size_t n_resources;

        /* 006 (-1: not written) */
        int64_t image_size_kb, memory_mb, rss_kb, pss_kb;
        /* 010 */
        int num_pids;
        /* 040 */
        int transfer;          /* UserlogTransfer */
        int64_t queueing_delay; /* -1: not written */
} UserlogEvent;

/* A zeroed event of type for the job cluster.proc at t, the "not written"
 * fields at -1. */
void userlog_event_init(UserlogEvent *ev, int type, int64_t cluster, int64_t proc, time_t t);

/* Adds (or replaces) a row of the resources table; -ENOSPC when full. */
int userlog_event_set_resource(UserlogEvent *ev, const char *name, double use, bool has_use, double request,
                               bool has_request, double allocated, bool has_allocated);

/* HTCondor's name of a type ("ULOG_SUBMIT"...), NULL when glean has none. */
const char *userlog_type_name(int type);

/* 040's words for a UserlogTransfer ("Started transferring input files"),
 * NULL for none. */
const char *userlog_transfer_words(int kind);

/* The event's text, header to the "...\n" line, as HTCondor writes it
 * (the date in local time, or UTC with a trailing Z when utc). Returns
 * the length, or -EINVAL for a type glean does not write, -ENOMEM. */
int userlog_format(const UserlogEvent *ev, bool utc, char **ret_text);

/* ---- reading ---- */

typedef struct UserlogReader UserlogReader;

/* Called for each complete event, with its text as read (header to the
 * "..." line). A negative return stops the feed, which returns it. */
typedef int (*UserlogEventFn)(const UserlogEvent *ev, const char *text, size_t len, void *userdata);

int userlog_reader_new(UserlogReader **ret);
void userlog_reader_free(UserlogReader *r);

/* Feeds the next n bytes of the log. Each event completed by them goes to
 * fn; a partial last line or event waits for the next feed. Garbage (a
 * line outside an event, an event that does not parse or breaks a limit)
 * is skipped and counted. Returns the number of events delivered. */
int userlog_reader_feed(UserlogReader *r, const void *data, size_t n, UserlogEventFn fn, void *userdata);

/* How many stretches of garbage were skipped so far. */
size_t userlog_reader_skipped(const UserlogReader *r);

/* Whether the reader holds a partial event or line (bytes not yet an event). */
bool userlog_reader_pending(const UserlogReader *r);

/* Parses one event's text (header line to the "..." line, which may be
 * missing); -EBADMSG with a reason in why when it is not one. */
int userlog_parse_event(const char *text, size_t len, UserlogEvent *ret, char *why, size_t whylen);
