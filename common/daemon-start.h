/* SPDX-License-Identifier: Apache-2.0 */
/*
 * daemon-start.h — what glean-agent and glean-negotiator share at their
 * start: the process's log and signals, the log level of their knob
 * (AGENT_LOG_LEVEL, NEGOTIATOR_LOG_LEVEL), and the command line:
 *
 *   PROG [--config FILE] [--set NAME=VALUE]... [their own options] [--help]
 *
 * (short forms -c, -S, -h). --config names the configuration file; each
 * --set is a knob set on top of it, in order; a daemon adds options of its
 * own, each with an argument (the agent's --socket, the central manager's
 * --port-file) or a flag (the central manager's --init-db). Nothing else: an operand or an unknown option is a bad
 * command line.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One --set NAME=VALUE. */
typedef struct GleanSetting {
        char *name;        /* a copy */
        const char *value; /* in argv */
} GleanSetting;

typedef struct GleanDaemonArgs {
        const char *config_path; /* --config (in argv); NULL when not given */
        GleanSetting *sets;      /* --set, in their order */
        size_t n_sets;
} GleanDaemonArgs;

/* A daemon's own option: --name ARG (or -letter ARG) stores ARG (in argv)
 * at *ret; a flag (no argument) stores "" there when given. */
typedef struct GleanDaemonOption {
        const char *name;
        char letter;
        const char **ret;
        bool flag;
} GleanDaemonOption;

#define GLEAN_DAEMON_OPTIONS_MAX 4

/* Reads argv (getopt_long, from the start) with the daemon's own options
 * own[0..n_own) (at most GLEAN_DAEMON_OPTIONS_MAX). 0: *ret filled
 * (glean_daemon_args_free() frees it); 1: --help, `usage` (its whole
 * text) printed on stdout, the caller exits 0; -EINVAL: a bad command
 * line, said on stderr (getopt's reason and `usage`, "PROG: --set needs
 * NAME=VALUE", or `usage` for an operand), the caller exits 2; -ENOMEM. */
int glean_daemon_args(int argc, char **argv, const char *prog, const char *usage, const GleanDaemonOption *own,
                      size_t n_own, GleanDaemonArgs *ret);

void glean_daemon_args_free(GleanDaemonArgs *a); /* accepts NULL */

/* The process made a daemon's: the log opened as `ident`, SIGPIPE
 * ignored, SIGTERM, SIGINT and SIGHUP blocked (the event loop takes them
 * as its signal sources). */
void glean_daemon_begin(const char *ident);

/* Raises the soft limit of open files (RLIMIT_NOFILE) to the hard one:
 * the daemons poll with epoll, so the 1,024 kept by default for select()
 * is no reason to run short of descriptors (LimitNOFILE= in their units
 * sets the hard one). A failure is logged as a warning and the limit left
 * as it was. 0 and the soft limit in force now in *ret_limit (may be
 * NULL; UINT64_MAX for no limit), or -errno when it cannot be read. */
int glean_daemon_raise_fd_limit(uint64_t *ret_limit);

/* The log level named by a daemon's knob ("debug", "7"): set, 0; NULL or
 * empty: the level unchanged, 0; a name that is no level: unchanged,
 * -EINVAL. */
int glean_daemon_log_level(const char *name);

/* Log each of lines (NULL-terminated "file:line: reason" messages, as the
 * configuration's config_warnings(), config_unused(), ... give them; NULL:
 * none) at priority prio, one record each, then free them and the array. */
void glean_daemon_log_lines(int prio, char **lines);
