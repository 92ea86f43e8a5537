/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cli.h — what the files of the glean command share: the verbs, their exit
 * codes and cleanup helpers.
 */
#pragma once

#include <stdio.h>
#include <stdlib.h>

#include "classad/classad.h"
#include "common/cleanup.h"
#include "config/config.h"

/* Exit codes of every verb. */
enum {
        CLI_EXIT_OK = 0,
        CLI_EXIT_FAILURE = 1, /* the system failed us (memory, I/O) */
        CLI_EXIT_USAGE = 2,   /* bad command line or unparsable input */
};

/* A verb: `glean NAME ARGS...`. argv[0] is the verb's name. Returns the
 * process exit code. */
typedef int (*CliVerbFn)(int argc, char **argv);

/* "glean VERB: <message>" and the usage line on stderr; returns -EINVAL. */
int cli_usage_error(const char *verb, const char *usage, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

int cli_verb_eval(int argc, char **argv);
int cli_verb_config(int argc, char **argv);
int cli_verb_submit(int argc, char **argv);
int cli_verb_policy_replay(int argc, char **argv);
int cli_verb_agent(int argc, char **argv);
int cli_verb_sensors(int argc, char **argv);
int cli_verb_userprio(int argc, char **argv);
int cli_verb_negotiate(int argc, char **argv);
int cli_verb_pool_key(int argc, char **argv);
int cli_verb_token(int argc, char **argv);
int cli_verb_q(int argc, char **argv);
int cli_verb_history(int argc, char **argv);
int cli_verb_rm(int argc, char **argv);
int cli_verb_hold(int argc, char **argv);
int cli_verb_release(int argc, char **argv);
int cli_verb_prio(int argc, char **argv);
int cli_verb_status(int argc, char **argv);
int cli_verb_vacate(int argc, char **argv);
int cli_verb_drain(int argc, char **argv);
int cli_verb_wait(int argc, char **argv);
/* `glean wait LOGFILE [JOBID]` (wait-log.c): whether the arguments name a
 * log rather than a job, and condor_wait on it. */
bool cli_wait_is_log(int argc, char **argv);
int cli_wait_log(int argc, char **argv);

/* The status ads of every slot of the agent at socket_opt (NULL: the
 * configured socket), from cli/agent.c; errors are printed. Free with
 * glean_ad_list_free(). */
int cli_agent_status(const char *socket_opt, ClassAd ***ret_ads, size_t *ret_n);

/* Umask = the caller's umask in each job ad that has none (cli/submit.c):
 * glean submit and glean agent run, so that a job's output files honour
 * its owner's umask. */
void cli_submit_record_umask(ClassAd **ads, size_t n);

/* "glean VERB: file:line: reason" on stderr for a configuration error. */
void cli_config_error(const char *verb, const ConfigError *err);

/* s as a JSON string literal (quotes, escapes) on f. */
void cli_json_string(FILE *f, const char *s);
/* v as a JSON number on f (15 significant digits); null when not finite. */
void cli_json_number(FILE *f, double v);

/* ---- cleanup helpers (systemd style) ---- */

/* _cleanup_, _cleanup_free_, _cleanup_close_ and TAKE_PTR: common/cleanup.h */

static inline void cli_classad_freep(ClassAd **p) {
        classad_free(*p);
}

static inline void cli_expr_freep(ClassAdExpr **p) {
        classad_expr_free(*p);
}

static inline void cli_value_clearp(CaValue *v) {
        ca_value_clear(v);
}
