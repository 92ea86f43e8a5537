/* SPDX-License-Identifier: Apache-2.0 */
/*
 * jobs.h — what the job verbs (submit, q, history, rm, hold, release,
 * prio, status, userprio, vacate, drain, wait) share: the client of the
 * central manager (client.c), the listings as pure functions over ads
 * (jobfmt.c, analyze.c), and the split of a submission into parts
 * (submit-split.c).
 *
 * Where the client connects: --socket PATH (that socket only); otherwise
 * the central manager's socket (GLEAN_NEGOTIATOR_SOCKET, else the knob
 * NEGOTIATOR_SOCKET) when that socket file exists, i.e. on the central
 * manager's machine; otherwise, or when it does not answer, this
 * machine's agent (GLEAN_AGENT_SOCKET, else AGENT_SOCKET), which relays
 * the same messages to the central manager. When none answers, the error
 * names each socket tried and why it failed.
 *
 * The formatting functions take `now` and print local times as condor_q
 * does ("%m/%d %H:%M" with the month unpadded); they never fail (memory
 * aside: what cannot be allocated is printed as "?").
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "classad/classad.h"

/* ---- the client (client.c) ---- */

typedef struct CliConn {
        int fd;
        int64_t next_id;
        char *path;     /* the socket connected to */
        bool via_agent; /* the agent relays */
} CliConn;

/* Connects as described above. verb names the command in error messages
 * ("glean VERB: ..."), which are printed here. -errno. */
int cli_cm_connect(const char *verb, const char *socket_opt, CliConn *ret);
/* The same at path (a socket connect_to'd before), printing nothing: why
 * gets the reason. -errno. */
int cli_cm_connect_quiet(const char *path, bool via_agent, CliConn *ret, char *why, size_t whylen);
void cli_cm_close(CliConn *c);

/* Everything the pieces of one reply carried. */
typedef struct CliReply {
        bool ok;
        char *reason;      /* Reason, when !ok; else NULL */
        char *errno_name;  /* Errno, or NULL */
        ClassAd **ads;     /* Ads of every piece, in order */
        size_t n_ads;
        ClassAd **results; /* Results of every piece */
        size_t n_results;
        int64_t count;     /* Count of the last piece that has one; -1: none */
        size_t pieces;
        ClassAd *last;     /* the last piece itself (Ad, ClusterId, NumProcs, ...) */
} CliReply;

/* Sends req (RequestId is set here) and collects every piece of its Reply
 * (More = true until the last), each within timeout_ms (< 0: forever).
 * -EBADMSG when a piece is not a valid Reply or its Ads/Results are not
 * lists of ads, -EPIPE/-ETIMEDOUT/... from the transport; the error is
 * printed ("glean VERB: ..."). A Reply with Ok = false is a success here:
 * ret->ok says so. */
int cli_cm_request(CliConn *c, const char *verb, ClassAd *req, int timeout_ms, CliReply *ret);
void cli_reply_clear(CliReply *r);

/* One request on a new connection: connect, request, close. */
int cli_cm_call(const char *verb, const char *socket_opt, ClassAd *req, int timeout_ms, CliReply *ret);

/* Whether arg is the option name, written with one or two dashes, or a
 * prefix of it at least min characters long ("-const" for "constraint",
 * as condor_q accepts). */
bool cli_opt(const char *arg, const char *name, size_t min);

/* Whether s is a job id "C" or "C.P" (digits). */
bool cli_is_job_id(const char *s);

/* s as a ClassAd string literal (quotes and escapes), malloc'd. */
char *cli_quote(const char *s);

/* The user running the command (malloc'd): the passwd name, else the uid. */
char *cli_user_name(void);

/* ---- listings (jobfmt.c) ---- */

/* "0+00:01:05": days+hours:minutes:seconds; negative counts as 0. */
void cli_fmt_duration(int64_t secs, char *buf, size_t size);
/* condor_q's date: "4/21 21:04", "11/3  09:05" (local time); "???" for t <= 0. */
void cli_fmt_date(int64_t t, char *buf, size_t size);
/* "C.P" of a job ad ("?" parts when missing). */
void cli_fmt_job_id(const ClassAd *job, char *buf, size_t size);

/* Wall-clock run time: RemoteWallClockTime plus, while Running, now -
 * JobCurrentStartDate. */
int64_t cli_job_run_time(const ClassAd *job, int64_t now);
/* condor_q's SIZE in MB: MemoryUsage, else ImageSize (KiB) / 1024. */
double cli_job_size_mb(const ClassAd *job);
/* condor_q's CMD: the base name of Cmd and the arguments; malloc'd. */
char *cli_job_cmd(const ClassAd *job);
/* "I", "R", "X", "C", "H", "S" ("?" unknown). */
const char *cli_job_status_letter(int64_t status);
/* The ST column of a job: its letter, or condor_q's "<" / ">" for a
 * running job whose input / output is on its way (TransferringInput,
 * TransferringOutput). */
const char *cli_job_status_cell(const ClassAd *ad);

typedef struct CliJobCounts {
        size_t total, completed, removed, idle, running, held, suspended;
} CliJobCounts;

void cli_job_counts_add(CliJobCounts *c, const ClassAd *job);
/* "Total for WHO: 3 jobs; 0 completed, 0 removed, 3 idle, 0 running, 0 held, 0 suspended" */
void cli_print_totals(FILE *f, const char *who, const CliJobCounts *c);

/* condor_q's views. jobs need not be sorted: they are printed in id order
 * (batches in the order of their first job). */
void cli_print_batch(FILE *f, ClassAd **jobs, size_t n);
void cli_print_nobatch(FILE *f, ClassAd **jobs, size_t n, int64_t now);
void cli_print_held(FILE *f, ClassAd **jobs, size_t n);
void cli_print_run(FILE *f, ClassAd **jobs, size_t n, int64_t now);
/* condor_history's: newest first, as given. */
void cli_print_history(FILE *f, ClassAd **jobs, size_t n);

/* -l: every ad's attributes one a line, a blank line after each ad. */
void cli_print_long(FILE *f, ClassAd **ads, size_t n);
/* -af: the attributes' values, space separated, one line per ad; strings
 * bare, other values as ClassAd text ("undefined" when absent). */
void cli_print_af(FILE *f, ClassAd **ads, size_t n, char *const *attrs, size_t n_attrs);

/* condor_status: the slots, then the summary by Arch/OpSys and Total. */
void cli_print_status(FILE *f, ClassAd **slots, size_t n, int64_t now);
void cli_print_status_summary(FILE *f, ClassAd **slots, size_t n);
/* condor_status -claimed. */
void cli_print_status_claimed(FILE *f, ClassAd **slots, size_t n);

/* ---- JSON (json.c) ---- */

/* An ad as a JSON object: literal values as JSON values, any other
 * expression as its text. */
void cli_json_ad(FILE *f, const ClassAd *ad);
/* The ads as a JSON array, then a newline. */
void cli_json_ads(FILE *f, ClassAd **ads, size_t n);

/* ---- -analyze (analyze.c) ---- */

#define CLI_MAX_CLAUSES 64

/* The top-level && clauses of an expression's text (quotes and brackets
 * respected), each malloc'd and trimmed; at most max. */
size_t cli_split_clauses(const char *text, char **clauses, size_t max);

/* condor_q -analyze (better = false) / -better-analyze of job against the
 * slot ads: the matchmaker's last reason (LastRejMatchReason), and a fresh
 * evaluation: how many slots each clause of the job's Requirements
 * matches, and the slots' side (their Requirements against the job). */
void cli_print_analysis(FILE *f, const ClassAd *job, ClassAd **slots, size_t n, bool better, int64_t now);

/* ---- submit (submit-split.c) ---- */

/* A submission as the Submit messages carry it: the attributes every proc
 * shares (same name, same expression text), each proc's own, and where
 * each part ends so that every message stays under the frame limit. */
typedef struct CliSubmitPlan {
        ClassAd *cluster;
        ClassAd **procs;  /* n */
        size_t n;
        size_t *part_end; /* part k sends procs [part_end[k-1], part_end[k]) */
        size_t n_parts;
} CliSubmitPlan;

/* ads: the job ads of config_submit_parse_*(). ClusterId and ProcId are
 * left out (the central manager assigns them). frame_max: the payload
 * limit (GLEAN_FRAME_MAX). -E2BIG with why when one proc's ad alone does
 * not fit a message, -ENOMEM. */
int cli_submit_plan(ClassAd *const *ads, size_t n, size_t frame_max, CliSubmitPlan *ret, char *why, size_t whylen);
void cli_submit_plan_clear(CliSubmitPlan *p);
/* One Submit message: part k of plan (More = true but on the last). */
int cli_submit_message(const CliSubmitPlan *p, size_t k, ClassAd **ret);

/* The cluster id is the central manager's to give, so a submit file is
 * expanded with placeholder as $(Cluster). This turns what the expansion
 * left in the ads back into references to ClusterId: an attribute whose
 * value is the number becomes ClusterId, a string holding it becomes
 * strcat("...", string(ClusterId), "..."). Returns how many attributes
 * changed; -ENOMEM. */
#define CLI_CLUSTER_PLACEHOLDER 987654321
int cli_submit_cluster_refs(ClassAd **ads, size_t n, int64_t placeholder);
