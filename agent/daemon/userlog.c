/* SPDX-License-Identifier: Apache-2.0 */
/*
 * userlog.c — the submit agent's part of the job event log
 * (docs/transfer.md): a UserLogEvent from the central manager, on the
 * upstream connection only (never from the unix socket: a user could
 * otherwise write into another's log), is appended to its Path as its
 * Owner: the file opened by a child that became the user
 * (glean_open_as_user: O_WRONLY|O_APPEND|O_CREAT, 0644, O_NOFOLLOW; never
 * as root, and Owner root refused), the event written whole with one
 * write(2), so that the jobs sharing a log never interleave. The Reply Ok
 * goes only after the write. The descriptor is kept a second for the
 * events that follow (a cluster's thousand 000s would fork as many
 * children), never once the file lost its name.
 *
 * A log that cannot be written (the directory gone, permission denied,
 * a symbolic link, no such user) is logged once per job and acknowledged
 * all the same, so that the queue does not keep the event forever: that
 * event is lost, and the record says so.
 *
 * Duplicates: the last Seq written of each job is remembered (in memory,
 * for the JOBS_REMEMBERED most recent jobs), and an event at or below it
 * is acknowledged without writing again: the central manager sends again
 * what it did not see acknowledged (its restart, a lost connection). An
 * agent restart forgets the record: an event written just before it and
 * not yet acknowledged is written twice (at least once, not exactly once).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/asuser.h"
#include "common/cleanup.h"
#include "daemon.h"
#include "userlog/userlog.h"

#define JOBS_REMEMBERED 4096

typedef struct JobRec {
        int64_t cluster, proc, seq;
        bool failed; /* a failure was logged */
} JobRec;

static JobRec jobs[JOBS_REMEMBERED];
static size_t n_jobs, next_evict;

static JobRec *job_rec(int64_t cluster, int64_t proc, bool add) {
        JobRec *j;

        for (size_t i = 0; i < n_jobs; i++)
                if (jobs[i].cluster == cluster && jobs[i].proc == proc)
                        return &jobs[i];
        if (!add)
                return NULL;
        if (n_jobs < JOBS_REMEMBERED)
                j = &jobs[n_jobs++];
        else {
                j = &jobs[next_evict];
                next_evict = (next_evict + 1) % JOBS_REMEMBERED;
        }
        *j = (JobRec){ cluster, proc, 0, false };
        return j;
}

static char *get_string(const ClassAd *ad, const char *name) {
        char *v = NULL;
        return classad_eval_string(ad, name, CA_MODE_OLD, &v) >= 0 ? v : NULL;
}

/* Opens path for appending as cred's user. A non-root agent (tests, a
 * personal pool) can only open its own user's files, directly. */
static int open_log(const GleanUserCred *cred, const char *path, int *ret_fd) {
        const int flags = O_WRONLY | O_APPEND | O_CREAT | O_NOCTTY;
        int fd;

        if (geteuid() == 0)
                return glean_open_as_user(cred, path, flags, 0644, ret_fd);
        if (cred->uid != geteuid())
                return -EPERM;
        fd = open(path, flags | O_NOFOLLOW | O_CLOEXEC, 0644);
        if (fd < 0)
                return -errno;
        *ret_fd = fd;
        return 0;
}

/* The last log opened, kept a moment for the events that follow it (a
 * cluster's thousand 000s, each of which would fork a child to open it):
 * reused for CACHE_USEC at most, for the same owner and path, and not once
 * the file lost its last name. */
#define CACHE_USEC 1000000
static struct {
        int fd;
        uid_t uid;
        char path[4096];
        uint64_t at;
} cache = { .fd = -1 };

static uint64_t mono_usec(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * 1000000 + (uint64_t) ts.tv_nsec / 1000;
}

static void cache_drop(void) {
        if (cache.fd >= 0)
                close(cache.fd);
        cache.fd = -1;
}

static int cached_fd(const GleanUserCred *cred, const char *path) {
        struct stat st;

        if (cache.fd < 0)
                return -1;
        if (cache.uid != cred->uid || strcmp(cache.path, path) != 0 || mono_usec() - cache.at > CACHE_USEC ||
            fstat(cache.fd, &st) < 0 || st.st_nlink == 0) {
                cache_drop();
                return -1;
        }
        return cache.fd;
}

/* Appends text to path as owner: 0, or -errno with why. */
static int append(const char *owner, const char *path, const char *text, size_t len, char *why, size_t whylen) {
        GleanUserCred cred;
        ssize_t n;
        int fd, r;

        r = glean_user_cred(owner, &cred);
        if (r < 0)
                return glean_why(r, why, whylen, "%s", r == -EPERM ? "the job's owner is root" : "no such user");
        fd = cached_fd(&cred, path);
        if (fd < 0) {
                r = open_log(&cred, path, &fd);
                if (r < 0)
                        return glean_why(r, why, whylen, "cannot open it as %s: %s", owner, strerror(-r));
                if (strlen(path) < sizeof cache.path) {
                        cache.fd = fd;
                        cache.uid = cred.uid;
                        snprintf(cache.path, sizeof cache.path, "%s", path);
                        cache.at = mono_usec();
                }
        }
        n = write(fd, text, len);
        r = n < 0 ? -errno : (size_t) n != len ? -EIO : 0;
        if (r < 0)
                glean_why(r, why, whylen, "%s", n < 0 ? strerror(-r) : "a short write");
        if (fd != cache.fd) {
                if (close(fd) < 0 && r >= 0) {
                        r = -errno;
                        glean_why(r, why, whylen, "closing it: %s", strerror(-r));
                }
        } else if (r < 0)
                cache_drop();
        return r;
}

int agent_userlog_event(Conn *c, const ClassAd *req) {
        int64_t cluster = 0, proc = 0, seq = 0;
        char *owner = NULL, *path = NULL, *text = NULL, why[512] = "", jobid[48];
        JobRec *rec;
        size_t len;
        int r;

        if (!c->upstream)
                return agent_reply(c, req, false, "UserLogEvent comes from the central manager only", NULL);
        (void) classad_eval_int(req, "ClusterId", CA_MODE_OLD, &cluster);
        (void) classad_eval_int(req, "ProcId", CA_MODE_OLD, &proc);
        (void) classad_eval_int(req, "Seq", CA_MODE_OLD, &seq);
        owner = get_string(req, "Owner");
        path = get_string(req, "Path");
        text = get_string(req, "Text");
        snprintf(jobid, sizeof jobid, "%" PRId64 ".%" PRId64, cluster, proc);
        len = text ? strlen(text) : 0;
        rec = job_rec(cluster, proc, true);
        if (rec->seq >= seq && seq > 0) {
                r = agent_reply(c, req, true, NULL, NULL); /* written already */
                goto out;
        }
        if (!owner || !path || !text)
                snprintf(why, sizeof why, "Owner, Path and Text are needed");
        else if (path[0] != '/')
                snprintf(why, sizeof why, "the path is not absolute");
        else if (len < 8 || len > USERLOG_EVENT_BYTES_MAX || strcmp(text + len - 4, "...\n") != 0)
                snprintf(why, sizeof why, "the text is not one event");
        else if (append(owner, path, text, len, why, sizeof why) >= 0)
                why[0] = 0;
        if (why[0] && !rec->failed) {
                GleanLogField f[] = { { "GLEAN_JOB", jobid },
                                      { "GLEAN_USER", owner ? owner : "" },
                                      { "GLEAN_REASON", why } };
                glean_log(LOG_WARNING, NULL, f, 3,
                          "cannot write the event log %s of job %s: %s; its events are dropped (acknowledged, "
                          "so that the central manager does not keep them)",
                          path ? path : "(none)", jobid, why);
                rec->failed = true;
        }
        rec->seq = seq;
        r = agent_reply(c, req, true, NULL, NULL);
out:
        free(owner);
        free(path);
        free(text);
        return r;
}
