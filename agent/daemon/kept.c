/* SPDX-License-Identifier: Apache-2.0 */
/*
 * kept.c — the messages the central manager must receive (JobExits, the
 * ends of its claims) outlive the agent: upstream.c keeps each until the
 * manager acknowledges it, and each is also a file
 * EXECUTE/.glean-state/kept/NNNNNNNNNNNNNNNNNNNN.ad (its place in the
 * order, 20 digits, so that names sort as they were kept), written when it
 * is kept and removed when it is acknowledged or dropped. An agent that
 * was killed, or stopped, before the acknowledgement sends them again,
 * after its slots, when it is started. Written whole under a temporary
 * name, then renamed; not fsync'd: like the job state files beside them
 * they serve an agent restarted on a machine that kept running (after a
 * power loss no claim survives).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <syslog.h>
#include <unistd.h>

#include "common/file.h"
#include "daemon.h"

#define KEPT_FILE_MAX (4u << 20)

/* EXECUTE/.glean-state/kept, made (0700) if it is not there. */
static int kept_dir(const Agent *a, char *buf, size_t len) {
        char state[PATH_MAX];
        int r = agent_state_dir(a, state, sizeof state);
        if (r < 0)
                return r;
        int n = snprintf(buf, len, "%s/kept", state);
        if (n < 0 || (size_t) n >= len)
                return -ENAMETOOLONG;
        return mkdir(buf, 0700) < 0 && errno != EEXIST ? -errno : 0;
}

static int kept_path(const Agent *a, uint64_t seq, char *buf, size_t len) {
        char dir[PATH_MAX];
        int r = kept_dir(a, dir, sizeof dir);
        if (r < 0)
                return r;
        int n = snprintf(buf, len, "%s/%020" PRIu64 ".ad", dir, seq);
        return n < 0 || (size_t) n >= len ? -ENAMETOOLONG : 0;
}

int agent_kept_save(const Agent *a, uint64_t seq, const char *text, size_t len) {
        char path[PATH_MAX];
        int r = kept_path(a, seq, path, sizeof path);
        return r < 0 ? r : glean_write_file_replace(path, text, len, 0600);
}

void agent_kept_forget(const Agent *a, uint64_t seq) {
        char path[PATH_MAX];
        if (kept_path(a, seq, path, sizeof path) >= 0)
                (void) unlink(path);
}

/* NNNNNNNNNNNNNNNNNNNN.ad: its number; false for any other name. */
static bool kept_name(const char *name, uint64_t *ret) {
        if (strlen(name) != 23 || strcmp(name + 20, ".ad") != 0)
                return false;
        uint64_t v = 0;
        for (size_t i = 0; i < 20; i++) {
                if (name[i] < '0' || name[i] > '9' || v > (UINT64_MAX - 9) / 10)
                        return false;
                v = v * 10 + (uint64_t) (name[i] - '0');
        }
        *ret = v;
        return true;
}

static int by_name(const struct dirent **x, const struct dirent **y) {
        return strcmp((*x)->d_name, (*y)->d_name);
}

int agent_kept_load(const Agent *a, AgentKeptFn each, void *userdata, uint64_t *ret_next) {
        char dir[PATH_MAX];
        struct dirent **names = NULL;
        uint64_t next = 1;
        int r = kept_dir(a, dir, sizeof dir);
        if (r < 0)
                return r;
        int n = scandir(dir, &names, NULL, by_name);
        if (n < 0)
                return -errno;
        int loaded = 0;
        for (int i = 0; i < n; i++) {
                const char *name = names[i]->d_name;
                char path[PATH_MAX * 2];
                uint64_t seq;
                snprintf(path, sizeof path, "%s/%s", dir, name);
                if (!kept_name(name, &seq)) {
                        size_t len = strlen(name);
                        if (len > 4 && strcmp(name + len - 4, ".new") == 0)
                                (void) unlink(path); /* a write the agent did not finish */
                        continue;
                }
                if (seq >= next)
                        next = seq + 1;
                char *text = NULL;
                ClassAd *msg = NULL;
                CaError cerr = {};
                const char *why = NULL;
                if (glean_read_file(path, KEPT_FILE_MAX, &text, NULL) < 0)
                        why = "cannot be read";
                else if (classad_parse(text, strlen(text), CA_MODE_OLD, &msg, &cerr) < 0)
                        why = "is not a ClassAd";
                else if (each(userdata, seq, msg) < 0)
                        why = "is not a job exit or a claim's end";
                else
                        loaded++;
                if (why) {
                        GleanLogField f[] = { { "GLEAN_REASON", why } };
                        glean_log(LOG_WARNING, NULL, f, 1, "%s %s: removed, never sent", path, why);
                        (void) unlink(path);
                }
                classad_free(msg);
                free(text);
        }
        for (int i = 0; i < n; i++)
                free(names[i]);
        free(names);
        *ret_next = next;
        return loaded;
}
