/* SPDX-License-Identifier: Apache-2.0 */
/*
 * daemon-start.c — see daemon-start.h.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "daemon-start.h"
#include "log.h"

void glean_daemon_begin(const char *ident) {
        sigset_t mask;

        glean_log_open(ident);
        signal(SIGPIPE, SIG_IGN);
        sigemptyset(&mask);
        sigaddset(&mask, SIGTERM);
        sigaddset(&mask, SIGINT);
        sigaddset(&mask, SIGHUP);
        sigprocmask(SIG_BLOCK, &mask, NULL);
}

int glean_daemon_raise_fd_limit(uint64_t *ret_limit) {
        struct rlimit rl;

        if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
                return glean_log_errno(LOG_WARNING, errno, "cannot read the limit of open files: %m");
        if (rl.rlim_cur != rl.rlim_max) {
                struct rlimit want = { .rlim_cur = rl.rlim_max, .rlim_max = rl.rlim_max };
                if (setrlimit(RLIMIT_NOFILE, &want) < 0)
                        glean_log_errno(LOG_WARNING, errno, "cannot raise the limit of open files from %llu to %llu: %m",
                                        (unsigned long long) rl.rlim_cur, (unsigned long long) rl.rlim_max);
                else
                        rl = want;
        }
        if (ret_limit)
                *ret_limit = rl.rlim_cur == RLIM_INFINITY ? UINT64_MAX : (uint64_t) rl.rlim_cur;
        return 0;
}

int glean_daemon_log_level(const char *name) {
        int level;

        if (!name || !*name)
                return 0;
        level = glean_log_level_from_string(name);
        if (level < 0)
                return -EINVAL;
        glean_log_set_level(level);
        return 0;
}

void glean_daemon_log_lines(int prio, char **lines) {
        if (!lines)
                return;
        for (char **l = lines; *l; l++) {
                glean_log(prio, NULL, NULL, 0, "%s", *l);
                free(*l);
        }
        free(lines);
}

void glean_daemon_args_free(GleanDaemonArgs *a) {
        if (!a)
                return;
        for (size_t i = 0; i < a->n_sets; i++)
                free(a->sets[i].name);
        free(a->sets);
        *a = (GleanDaemonArgs) {};
}

int glean_daemon_args(int argc, char **argv, const char *prog, const char *usage, const GleanDaemonOption *own,
                      size_t n_own, GleanDaemonArgs *ret) {
        struct option opts[3 + GLEAN_DAEMON_OPTIONS_MAX + 1] = {
                { "config", required_argument, NULL, 'c' },
                { "set", required_argument, NULL, 'S' },
                { "help", no_argument, NULL, 'h' },
        };
        char shorts[2 * (3 + GLEAN_DAEMON_OPTIONS_MAX) + 1] = "c:S:h";
        const char *values[GLEAN_DAEMON_OPTIONS_MAX] = { 0 };
        GleanDaemonArgs a = { 0 };
        size_t len = strlen(shorts);
        int c, r = 0;

        if (n_own > GLEAN_DAEMON_OPTIONS_MAX)
                return -EINVAL;
        for (size_t i = 0; i < n_own; i++) {
                opts[3 + i] = (struct option) { own[i].name, own[i].flag ? no_argument : required_argument, NULL,
                                                own[i].letter };
                shorts[len++] = own[i].letter;
                if (!own[i].flag)
                        shorts[len++] = ':';
        }
        shorts[len] = 0;
        a.sets = calloc((size_t) argc + 1, sizeof(*a.sets));
        if (!a.sets)
                return -ENOMEM;
        optind = 0; /* from the start, whatever read argv before */
        while (r == 0 && (c = getopt_long(argc, argv, shorts, opts, NULL)) >= 0) {
                const GleanDaemonOption *o = NULL;
                const char *eq;
                switch (c) {
                case 'c':
                        a.config_path = optarg;
                        break;
                case 'S':
                        if (!(eq = strchr(optarg, '='))) {
                                fprintf(stderr, "%s: --set needs NAME=VALUE\n", prog);
                                r = -EINVAL;
                                break;
                        }
                        if (!(a.sets[a.n_sets].name = strndup(optarg, (size_t) (eq - optarg)))) {
                                r = -ENOMEM;
                                break;
                        }
                        a.sets[a.n_sets++].value = eq + 1;
                        break;
                case 'h':
                        fputs(usage, stdout);
                        r = 1;
                        break;
                default:
                        for (size_t i = 0; i < n_own && !o; i++)
                                if (c == own[i].letter) {
                                        o = &own[i];
                                        values[i] = own[i].flag ? "" : optarg;
                                }
                        if (!o) {
                                fputs(usage, stderr);
                                r = -EINVAL;
                        }
                }
        }
        if (r == 0 && optind < argc) {
                fputs(usage, stderr);
                r = -EINVAL;
        }
        if (r != 0) {
                glean_daemon_args_free(&a);
                return r;
        }
        for (size_t i = 0; i < n_own; i++)
                if (values[i])
                        *own[i].ret = values[i];
        *ret = a;
        return 0;
}
