/* SPDX-License-Identifier: Apache-2.0 */
/*
 * wait-log.c — `glean wait LOGFILE [JOBID]`: condor_wait on a job event
 * log. Follows the file (polling every 100 ms; a file that shrinks is read
 * again from its start) until the jobs end, as condor_wait decides it
 * (src/condor_tools/wait.cpp):
 *
 *   - the events already in the file are read first (the initial scan);
 *     a job is watched from its 000 (Submit) and done at its 005
 *     (Terminated) or 009 (Aborted); JOBID (C, C.P or C.P.S) keeps only
 *     its events;
 *   - `-num N`: done when N jobs ended; else done when every job
 *     submitted has ended ("All jobs done.", also at the end of the
 *     initial scan when none is left). One deviation: condor_wait says
 *     "All jobs done." at once for a log with no Submit event (of JOBID's
 *     when named); glean's log is written by the submit machine's agent a
 *     moment after `glean submit` returns, so glean waits for the job to
 *     appear (bounded by -wait);
 *   - `-wait SECONDS` gives up ("Time expired.", exit 1); `-wait 0` reads
 *     what is there and stops; `-allevents` reads on after the jobs ended
 *     (to the end of the file unless -wait);
 *   - `-echo` prints each event as read, `-status` one line per submit,
 *     execute and end;
 *   - a log that does not exist yet is waited for (10 s, or -wait's
 *     time), since the agent creates it with the job's first event; then
 *     "couldn't open" as condor_wait says at once.
 *
 * Exit status: 0 when the jobs ended, 1 on a timeout or a missing or
 * unreadable log; 2 on a usage error.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "common/cleanup.h"
#include "jobs.h"
#include "userlog/userlog.h"

#define ANY -1
#define APPEAR_GRACE 10.0 /* seconds a log that is not there yet is waited for */
#define JOBS_MAX 100000

static const char usage[] = "usage: glean wait [-echo] [-status] [-wait SECONDS] [-num N] [-allevents] "
                            "[-log] LOGFILE [CLUSTER[.PROC[.SUBPROC]]]\n"
                            "       glean wait [--timeout SECONDS] [--socket PATH] CLUSTER.PROC";

typedef struct JobKey {
        int64_t cluster, proc, subproc;
} JobKey;

typedef struct Watch {
        int64_t cluster, proc, subproc; /* the JOBID, ANY */
        bool echo, status;
        int minjobs;
        bool allevents;

        JobKey *active; /* submitted, not yet ended */
        size_t n_active, cap;
        int submitted, ended;
        bool initial_scan;
        int done; /* 1: exit 0 now */
} Watch;

static bool matches(const Watch *w, const UserlogEvent *ev) {
        return (w->cluster == ANY || ev->cluster == w->cluster) && (w->proc == ANY || ev->proc == w->proc) &&
               (w->subproc == ANY || ev->subproc == w->subproc);
}

static ssize_t find_active(const Watch *w, const UserlogEvent *ev) {
        for (size_t i = 0; i < w->n_active; i++)
                if (w->active[i].cluster == ev->cluster && w->active[i].proc == ev->proc &&
                    w->active[i].subproc == ev->subproc)
                        return (ssize_t) i;
        return -1;
}

static int add_active(Watch *w, const UserlogEvent *ev) {
        if (find_active(w, ev) >= 0)
                return 0;
        if (w->n_active >= JOBS_MAX)
                return -E2BIG;
        if (w->n_active == w->cap) {
                size_t cap = w->cap ? 2 * w->cap : 16;
                JobKey *k = realloc(w->active, cap * sizeof(*k));
                if (!k)
                        return -ENOMEM;
                w->active = k, w->cap = cap;
        }
        w->active[w->n_active++] = (JobKey){ ev->cluster, ev->proc, ev->subproc };
        return 0;
}

static void remove_active(Watch *w, const UserlogEvent *ev) {
        ssize_t i = find_active(w, ev);

        if (i >= 0)
                w->active[i] = w->active[--w->n_active];
}

static int on_event(const UserlogEvent *ev, const char *text, size_t len, void *userdata) {
        Watch *w = userdata;
        char key[80];
        int r;

        if (w->done)
                return 0;
        snprintf(key, sizeof(key), "%lld.%lld.%lld", (long long) ev->cluster, (long long) ev->proc,
                 (long long) ev->subproc);
        if (matches(w, ev)) {
                if (w->echo)
                        fwrite(text, 1, len, stdout);
                switch (ev->type) {
                case USERLOG_SUBMIT:
                        if (w->status)
                                printf("%s submitted\n", key);
                        r = add_active(w, ev);
                        if (r < 0)
                                return r;
                        w->submitted++;
                        break;
                case USERLOG_TERMINATED:
                case USERLOG_ABORTED:
                        if (w->status)
                                printf("%s %s\n", key, ev->type == USERLOG_TERMINATED ? "completed" : "aborted");
                        remove_active(w, ev);
                        w->ended++;
                        break;
                case USERLOG_EXECUTE:
                        if (w->status)
                                printf("%s executing on host %s\n", key, ev->host);
                        break;
                default: break;
                }
        }
        if (w->minjobs && w->ended >= w->minjobs) {
                printf("Specified number of jobs (%d) done.\n", w->minjobs);
                w->done = 1;
        } else if (w->n_active == 0 && w->submitted > 0 && !w->minjobs && !w->initial_scan) {
                printf("All jobs done.\n");
                w->done = 1;
        }
        return 0;
}

static double now_s(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double) ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Reads what the file holds beyond *off; -errno on a read error. */
static int read_more(int fd, off_t *off, UserlogReader **rd, Watch *w) {
        char buf[65536];
        struct stat st;

        if (fstat(fd, &st) < 0)
                return -errno;
        if (st.st_size < *off) {
                /* truncated or replaced in place: start again */
                UserlogReader *fresh = NULL;
                int r = userlog_reader_new(&fresh);
                if (r < 0)
                        return r;
                userlog_reader_free(*rd);
                *rd = fresh;
                *off = 0;
        }
        for (;;) {
                ssize_t n = pread(fd, buf, sizeof(buf), *off);
                int r;
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                if (n == 0)
                        return 0;
                *off += n;
                r = userlog_reader_feed(*rd, buf, (size_t) n, on_event, w);
                if (r < 0)
                        return r;
                if (w->done)
                        return 0;
        }
}

static int parse_jobid(const char *s, Watch *w) {
        int64_t v[3] = { ANY, ANY, ANY };
        int n = 0;

        if (strcmp(s, "-1") == 0)
                return 0;
        while (n < 3) {
                char *end;
                long long x;
                errno = 0;
                x = strtoll(s, &end, 10);
                if (end == s || errno || x < 0)
                        return -EINVAL;
                v[n++] = x;
                if (*end == 0)
                        break;
                if (*end != '.' || n == 3)
                        return -EINVAL;
                s = end + 1;
        }
        w->cluster = v[0], w->proc = v[1], w->subproc = v[2];
        return 0;
}

static bool is_flag(const char *a, const char *name) {
        return a[0] == '-' && (strcmp(a + 1, name) == 0 || (a[1] == '-' && strcmp(a + 2, name) == 0));
}

/* Whether `glean wait ARGS` means a log: a condor_wait option, or a first
 * operand that names an existing file or is no job id (`glean wait 7`
 * stays the queue's usage error). */
bool cli_wait_is_log(int argc, char **argv) {
        for (int i = 1; i < argc; i++) {
                const char *a = argv[i];
                if (is_flag(a, "log") || is_flag(a, "num") || is_flag(a, "echo") || is_flag(a, "status") ||
                    is_flag(a, "allevents"))
                        return true;
                if ((is_flag(a, "wait") || is_flag(a, "timeout") || is_flag(a, "socket")) && i + 1 < argc) {
                        i++;
                        continue;
                }
                if (a[0] == '-')
                        continue;
                if (strchr(a, '/') || access(a, F_OK) == 0)
                        return true;
                return !cli_is_job_id(a);
        }
        return false;
}

int cli_wait_log(int argc, char **argv) {
        Watch w = { .cluster = ANY, .proc = ANY, .subproc = ANY, .initial_scan = true };
        const char *path = NULL, *jobid = NULL;
        double waittime = -1, stop = 0;
        bool dont_wait = false;
        UserlogReader *rd = NULL;
        _cleanup_close_ int fd = -1;
        off_t off = 0;
        int r, ret = CLI_EXIT_FAILURE;

        for (int i = 1; i < argc; i++) {
                const char *a = argv[i];
                if (cli_opt(a, "help", 1) || strcmp(a, "-h") == 0) {
                        printf("%s\n\nWaits until the jobs of a job event log (`log =` in the submit file) end,\n"
                               "as condor_wait does: all the jobs the log mentions, JOBID's, or -num N of them.\n\n"
                               "Exit status: 0 when they ended; 1 when the time ran out or the log is\n"
                               "missing; 2 on a usage error.\n",
                               usage);
                        return CLI_EXIT_OK;
                } else if (is_flag(a, "echo"))
                        w.echo = true;
                else if (is_flag(a, "status"))
                        w.status = true;
                else if (is_flag(a, "allevents")) {
                        if (w.minjobs)
                                return cli_usage_error("wait", usage, "-allevents cannot be used with -num"),
                                       CLI_EXIT_USAGE;
                        w.allevents = true;
                        w.minjobs = INT_MAX;
                } else if ((is_flag(a, "wait") || is_flag(a, "timeout")) && i + 1 < argc) {
                        char *end;
                        waittime = strtod(argv[++i], &end);
                        if (*end || end == argv[i] || !isfinite(waittime) || waittime < 0 || waittime > 1e9)
                                return cli_usage_error("wait", usage, "-wait: '%s' is not a number of seconds",
                                                       argv[i]),
                                       CLI_EXIT_USAGE;
                } else if (is_flag(a, "num") && i + 1 < argc) {
                        char *end;
                        long n = strtol(argv[++i], &end, 10);
                        if (w.allevents)
                                return cli_usage_error("wait", usage, "-num cannot be used with -allevents"),
                                       CLI_EXIT_USAGE;
                        if (*end || end == argv[i] || n < 1 || n > INT_MAX - 1)
                                return cli_usage_error("wait", usage, "-num must be greater than zero"),
                                       CLI_EXIT_USAGE;
                        w.minjobs = (int) n;
                } else if (is_flag(a, "log") && i + 1 < argc)
                        path = argv[++i];
                else if (path && !jobid && strcmp(a, "-1") == 0)
                        jobid = a;
                else if (a[0] == '-' && a[1])
                        return cli_usage_error("wait", usage, "unexpected '%s'", a), CLI_EXIT_USAGE;
                else if (!path)
                        path = a;
                else if (!jobid)
                        jobid = a;
                else
                        return cli_usage_error("wait", usage, "extra argument '%s'", a), CLI_EXIT_USAGE;
        }
        if (!path)
                return cli_usage_error("wait", usage, "which log?"), CLI_EXIT_USAGE;
        if (jobid && parse_jobid(jobid, &w) < 0) {
                fprintf(stderr, "glean wait: couldn't understand job number: %s\n", jobid);
                return CLI_EXIT_FAILURE;
        }
        if (waittime == 0 || (w.allevents && waittime < 0))
                dont_wait = true;
        else if (waittime > 0)
                stop = now_s() + waittime;

        /* The agent creates the log with the job's first event, a moment
         * after the submit returned: a log not there yet is waited for,
         * APPEAR_GRACE seconds (or -wait's) before giving up. */
        for (double give_up = now_s() + (stop > 0 ? waittime : APPEAR_GRACE);;) {
                fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
                if (fd >= 0 || errno != ENOENT || dont_wait || now_s() >= give_up)
                        break;
                (void) nanosleep(&(struct timespec){ .tv_nsec = 100 * 1000 * 1000 }, NULL);
        }
        if (fd < 0) {
                fprintf(stderr, "glean wait: couldn't open %s: %s\n", path, strerror(errno));
                return CLI_EXIT_FAILURE;
        }
        if (userlog_reader_new(&rd) < 0)
                return CLI_EXIT_FAILURE;

        /* the initial scan: what the file holds now */
        r = read_more(fd, &off, &rd, &w);
        if (r < 0)
                goto fail;
        w.initial_scan = false;
        if (!w.done && w.n_active == 0 && w.submitted > 0 && !w.minjobs) {
                printf("All jobs done.\n");
                w.done = 1;
        }
        while (!w.done) {
                if (dont_wait) {
                        ret = CLI_EXIT_OK;
                        goto out;
                }
                if (stop > 0 && now_s() >= stop) {
                        printf("Time expired.\n");
                        goto out;
                }
                fflush(stdout);
                (void) nanosleep(&(struct timespec){ .tv_nsec = 100 * 1000 * 1000 }, NULL);
                r = read_more(fd, &off, &rd, &w);
                if (r < 0)
                        goto fail;
        }
        ret = CLI_EXIT_OK;
        goto out;
fail:
        fprintf(stderr, "glean wait: %s: %s\n", path, strerror(-r));
out:
        if (userlog_reader_skipped(rd) > 0)
                fprintf(stderr, "glean wait: %s: %zu stretch(es) of garbage skipped\n", path,
                        userlog_reader_skipped(rd));
        userlog_reader_free(rd);
        free(w.active);
        fflush(stdout);
        return ret;
}
