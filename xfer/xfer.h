/* SPDX-License-Identifier: Apache-2.0 */
/*
 * xfer.h — a job's files between its submit agent and its execute agent
 * (docs/transfer.md): what a job transfers, read from its ad; the
 * sessions, each run blocking in a process forked from the agent (root),
 * which holds the sealed state and forks a worker that becomes the user
 * (common/asuser.h) for every file operation; their results.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "classad/classad.h"
#include "common/asuser.h"
#include "common/secure.h"

#define XFER_ID_LEN 32u          /* hex digits of a TransferId */
#define XFER_PREAMBLE_TIMEOUT_MS 10000

/* HTCondor's hold codes of a transfer that failed (HoldReasonCode). */
#define XFER_HOLD_OUTPUT 12 /* TransferOutputError */
#define XFER_HOLD_INPUT 13  /* TransferInputError */

/* The job's standard output and error in its sandbox (HTCondor's names):
 * the execute agent points the job's stdout and stderr there when Out and
 * Err are transferred; xfer_send_output() sends them back as Out and Err
 * (a sandbox file named like Out's basename is taken when these are
 * missing). The executable is sent as its basename, In as its basename. */
#define XFER_STDOUT_NAME "_condor_stdout"
#define XFER_STDERR_NAME "_condor_stderr"

typedef struct XferRemap {
        char *name; /* as the job wrote it in its sandbox */
        char *path; /* where it goes: relative to Iwd, or absolute inside Iwd */
} XferRemap;

/* What one job transfers (its ad's HTCondor attributes). */
typedef struct XferJob {
        char *iwd;                 /* Iwd, absolute */
        bool transfer_executable;  /* TransferExecutable (default true) */
        char *cmd;                 /* Cmd (absolute) when transfer_executable */
        char *in;                  /* In when TransferIn (default true) and not /dev/null */
        char **input;              /* TransferInput, as written (comma/space list) */
        size_t n_input;
        bool output_given;         /* TransferOutput defined: exactly these; else automatic */
        char **output;
        size_t n_output;
        char *out, *err;           /* Out/Err when TransferOut/TransferErr (default true) and not /dev/null */
        XferRemap *remaps;         /* TransferOutputRemaps */
        size_t n_remaps;
        bool preserve_relative_paths; /* PreserveRelativePaths */
        bool on_exit_or_evict;     /* WhenToTransferOutput == "ON_EXIT_OR_EVICT" */
        uint64_t max_input_bytes;  /* MaxTransferInputMB, else the knob; 0: no limit */
        uint64_t max_output_bytes; /* MaxTransferOutputMB, else the knob; 0: no limit */
} XferJob;

/* The job's transfer from its ad; knob_max_*_mb are MAX_TRANSFER_INPUT_MB
 * and MAX_TRANSFER_OUTPUT_MB (0: none). -EINVAL with why for an ad that
 * cannot be transferred (no Iwd, a remap that is not "name = path",
 * an entry naming an URL scheme other than file://, ...), -ENOMEM. */
int xfer_job_from_ad(const ClassAd *job, uint64_t knob_max_input_mb, uint64_t knob_max_output_mb, XferJob **ret,
                     char *why, size_t whylen);
void xfer_job_free(XferJob *job);

/* Whether a run of job in a slot whose FileSystemDomain is slot_fs_domain
 * transfers: ShouldTransferFiles "YES", or "IF_NEEDED" when the job's
 * FileSystemDomain differs from the slot's (HTCondor's rule). "NO" or no
 * ShouldTransferFiles: false. */
bool xfer_job_wanted(const ClassAd *job, const char *slot_fs_domain);

/* How a session ended. hold_code 0 with error < 0 is a failure that may
 * pass (the connection lost, the peer gone, a timeout): retried. */
typedef struct XferResult {
        int error;            /* 0, or -errno */
        int hold_code;        /* 0, XFER_HOLD_INPUT or XFER_HOLD_OUTPUT */
        int hold_subcode;     /* the errno of the failure */
        char reason[512];     /* names the file: "cannot read input file 'data/a.txt': No such file..." */
        uint64_t bytes_sent, bytes_received; /* of file data, this end's view */
        uint64_t files;       /* files moved */
} XferResult;

/* The result as a one-line ClassAd (the session child's report to the
 * agent over a pipe) and back. */
char *xfer_result_to_text(const XferResult *res);
int xfer_result_from_text(const char *text, size_t len, XferResult *ret);

/* The dialler's first frame, in clear: "GLEANXFR <TransferId>\n". */
int xfer_preamble_write(int fd, const char *transfer_id, int timeout_ms);
/* Parses it; ret_id gets the id (XFER_ID_LEN hex digits and a NUL).
 * -EBADMSG for anything else. */
int xfer_preamble_parse(const char *payload, size_t len, char ret_id[XFER_ID_LEN + 1]);

/* Connects to address ("ip:port", IPv4 or [IPv6]:port) within timeout_ms
 * and writes the preamble for transfer_id: 0 and the connected socket. */
int xfer_dial(const char *address, const char *transfer_id, int timeout_ms, int *ret_fd, char *why, size_t whylen);

/* ---- the sessions (blocking; each in a process forked from the agent) ----
 *
 * user (owner) NULL: the worker keeps the caller's identity (tests and
 * benchmarks run by a plain user); an agent always passes the user. */

/* Execute side, before the job: on a dialled fd, the sealed handshake with
 * key, then the job's input into sandbox (an existing directory the user
 * owns), written as user. What arrived is recorded in manifest_path (a
 * file in a directory only root writes), for xfer_send_output() to tell
 * the job's new and changed files from its input. 0 or -errno, res
 * filled either way (hold_code XFER_HOLD_INPUT when the input itself is
 * at fault). */
int xfer_fetch_input(int fd, const GleanPoolKey *key, const XferJob *job, const GleanUserCred *user,
                     const char *sandbox, const char *manifest_path, int timeout_ms, XferResult *res);

/* Execute side, after the job (and at an eviction when on_exit_or_evict):
 * on a dialled fd, the job's output read from sandbox as user: the
 * TransferOutput entries, or the new and changed files of the sandbox's
 * top level (manifest_path says what was input), and Out/Err. res's
 * hold_code is XFER_HOLD_OUTPUT when the output is at fault (too big, a
 * named file missing, a path leaving Iwd on the other side). */
int xfer_send_output(int fd, const GleanPoolKey *key, const XferJob *job, const GleanUserCred *user,
                     const char *sandbox, const char *manifest_path, int timeout_ms, XferResult *res);

/* Submit side: one accepted connection whose preamble named this job's
 * grant: the sealed handshake with key, then whatever the execute side
 * asks (its input, read as owner from job->iwd; its output, written as
 * owner into job->iwd or where the remaps say, never outside it). */
int xfer_serve(int fd, const GleanPoolKey *key, const XferJob *job, const GleanUserCred *owner, int timeout_ms,
               XferResult *res);
