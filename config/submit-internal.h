/* SPDX-License-Identifier: Apache-2.0 */
/*
 * submit-internal.h — what the files of the submit description parser
 * share (not part of the public API of config.h).
 *
 *   submit-parse.c  entry points, lines and statements, variables, macro
 *                   lookups, the queue loop
 *   submit-queue.c  the arguments of a queue statement and its items
 *   submit-value.c  values with a syntax of their own: arguments and
 *                   environment (old and new syntax), sizes with units,
 *                   signals, booleans, integer expressions
 *   submit-ad.c     one job ad from the variables of one job
 *   submit-req.c    what the job requests of a slot (request_*, their
 *                   defaults) and the Requirements condor_submit builds
 *   submit-xfer.c   the file transfer commands (should_transfer_files,
 *                   transfer_input_files, ...) and the sizes of the input
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "argsyntax.h"
#include "config-internal.h"

static inline void submit_classad_freep(ClassAd **p) {
        classad_free(*p);
}

static inline void submit_expr_freep(ClassAdExpr **p) {
        classad_expr_free(*p);
}

/* Hard limits against hostile input. */
#define SUBMIT_MAX_QUEUE_VARS 32      /* variables of one queue statement */
#define SUBMIT_DEFAULT_MAX_JOBS 20000 /* MAX_JOBS_PER_SUBMISSION when unset */

/* Where warnings go ("file:line: warning: ..."): stderr unless set.
 * Tests and the fuzz target point it elsewhere. */
extern FILE *submit_warning_stream;

/* ---- the state of one parse ---- */

/* A Python-style slice [start:end:step] over the items of a queue. */
typedef struct SubmitSlice {
        bool set;
        bool has_start, has_end, has_step;
        int64_t start, end, step;
} SubmitSlice;

typedef enum SubmitForeach {
        SUBMIT_FOREACH_NONE,
        SUBMIT_FOREACH_IN,
        SUBMIT_FOREACH_FROM,
} SubmitForeach;

/* A parsed queue statement: count jobs for each (selected) item. */
typedef struct SubmitQueue {
        int64_t count;
        SubmitForeach foreach;
        char **vars;  /* loop variable names (NULL-terminated), "Item" by default */
        size_t n_vars;
        char **items; /* the items, each one line or list element */
        size_t n_items;
        SubmitSlice slice;
        int line;     /* of the queue statement */
} SubmitQueue;

typedef struct Submit {
        const char *file; /* source name for errors */
        ConfigReader rd;  /* the whole description, and where reading is */

        const Config *cfg;
        int64_t cluster;
        int64_t qdate;
        char *owner;
        char *iwd;        /* absolute directory initialdir is relative to */
        int64_t max_jobs;

        /* `name = value` (commands and the user's macros alike), raw with
         * self-references resolved, in the order first defined; used[i]
         * says whether vars->entries[i] was read as a command or through
         * $(name). */
        Config *vars;
        bool *used;
        size_t n_used;
        /* `+Name = expr` and `MY.Name = expr`, Name without + or MY. */
        Config *attrs;
        bool queued;      /* a queue statement was seen */

        /* The job being built (for $(Process), $(Item), ...). */
        const SubmitQueue *queue;
        char **item_values; /* values of queue->vars for the current item */
        int64_t proc, step, row;
        char live_cluster[24], live_proc[24], live_step[24], live_row[24];

        ClassAd **ads;
        size_t n_ads;

        char **warnings; /* "file:line: warning: ...", printed on success */
        size_t n_warnings;

        ConfigError *err;
} Submit;

/* Add a warning about line (0: none). Returns 0 or -ENOMEM. */
int submit_warn(Submit *s, int line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* The definition of variable name, NULL if none (case-insensitive);
 * marks it used. */
const ConfigEntry *submit_use_var(Submit *s, const char *name);

/* Expand the macros of text for the current job; *ret malloc'd. line
 * names where text comes from in errors. */
int submit_expand(Submit *s, const char *text, int line, char **ret);

/* The expanded, trimmed value of the first of names that is defined
 * (names is NULL-terminated: a command and its aliases). *ret is NULL when
 * none is defined or the value is empty; *ret_line is the definition's
 * line (or the queue statement's when undefined). */
int submit_lookup(Submit *s, const char *const *names, char **ret, int *ret_line);

/* ---- submit-queue.c ---- */

/* Parse the (expanded) arguments of a queue statement: args is the text
 * after the word "queue". When the items are a multi-line (...) list,
 * reads the following lines of the description. */
int submit_queue_parse(Submit *s, const char *args, int line, SubmitQueue *ret);
void submit_queue_done(SubmitQueue *q);
/* Whether item ix of n is selected by the slice. */
bool submit_slice_selected(const SubmitSlice *slice, size_t ix, size_t n);
/* Split an item into one value per variable (the last one gets the rest):
 * *ret is a NULL-terminated array of q->n_vars malloc'd strings. */
int submit_item_split(const SubmitQueue *q, const char *item, char ***ret);

/* Next physical line of the description, without its newline (and \r);
 * *ret malloc'd, NULL at the end. *ret_line is its number. */
int submit_next_physical_line(Submit *s, char **ret, int *ret_line);

/* ---- submit-value.c ---- */

/* `arguments`: new syntax ("..." with '' and "" escapes) when the value
 * starts with a double quote, else the old one (white space separates,
 * \" is a quote, a bare " is an error). *ret_new_syntax tells which.
 * Errors fill msg. The job ad holds them as config_args_join_v2 or _v1
 * (argsyntax.h) writes them. */
int submit_args_parse(const char *value, ConfigStrv *ret, bool *ret_new_syntax, char *msg, size_t msg_size);

/* `environment`: new syntax ("NAME=value NAME='a b'") when the value starts
 * with a double quote, else the old one (NAME=value;NAME=value). A later
 * NAME replaces an earlier one in place. */
int submit_env_parse(const char *value, ConfigStrv *ret, char *msg, size_t msg_size);
/* Add NAME=value from the environment of this process for every name not
 * in env already (getenv = true). */
int submit_env_import(ConfigStrv *env);

/* HTCondor's parse_int64_bytes: a number (maybe with a fraction) and an
 * optional unit K, M, G, T (optionally followed by B, any case), rounded
 * up to a whole number of `base` bytes; no unit means `base`. Returns 1
 * and sets *ret when text is such a size, 0 when it is not (an expression
 * then), -ERANGE when the size does not fit, -EINVAL when negative. */
int submit_parse_size(const char *text, int64_t base, int64_t *ret);

/* A signal name (SIGTERM, TERM, term) or number, as "SIGTERM"; NULL when
 * unknown. */
const char *submit_signal_name(const char *text);

/* true/false/yes/no/t/f/1/0 (any case); -EINVAL otherwise. */
int submit_parse_bool(const char *text, bool *ret);
/* A ClassAd attribute name that needs no quoting: [A-Za-z_][A-Za-z0-9_]*. */
bool submit_is_attr_name(const char *n);

/* Evaluate a ClassAd expression without an ad; -EINVAL unless it parses
 * and gives an integer (or a real with no fraction). */
int submit_eval_int(const char *text, int64_t *ret);
/* The same for any number; *ret_is_number false when the expression
 * parses but its value is not a number. -EINVAL when it does not parse. */
int submit_eval_number(const char *text, double *ret, bool *ret_is_number);

/* HTCondor's name of this machine's architecture: X86_64, aarch64, ... */
const char *submit_host_arch(void);

/* ---- submit-ad.c ---- */

/* Build the ad of the current job (s->proc, s->step, ... set). */
int submit_job_ad(Submit *s, ClassAd **ret);
/* attr = text parsed as an expression; an error names line and `what`
 * (the command the text comes from). */
int submit_set_expr(Submit *s, ClassAd *ad, const char *attr, const char *text, int line, const char *what);

/* ---- submit-req.c ---- */

/* Whether a variable is request_<name> for a machine resource (not cpus,
 * memory, disk); *ret_name is <name> with its first letter upper-case. */
bool submit_custom_resource(const char *var_name, char *ret_name, size_t size);
/* RequestCpus, RequestMemory, RequestDisk (or their defaults) and
 * Request<Name>. */
int submit_set_requests(Submit *s, ClassAd *ad);
/* The Requirements of the job: the user's (if any), then what the job
 * requests of the slot, as condor_submit appends it. user_req is the
 * expanded requirements command or NULL; *ret malloc'd. */
int submit_requirements(Submit *s, const ClassAd *job, const char *user_req, char **ret);

/* ---- submit-xfer.c ---- */

/* ShouldTransferFiles, WhenToTransferOutput, TransferInput, TransferOutput,
 * TransferOutputRemaps, ..., FileSystemDomain, TransferInputSizeMB and
 * DiskUsage (the executable's DiskUsage plus the input's), In/Out/Err set
 * already; iwd is the job's Iwd, which input files are relative to. */
int submit_set_transfer(Submit *s, ClassAd *ad, const char *iwd);
