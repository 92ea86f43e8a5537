/* SPDX-License-Identifier: Apache-2.0 */
/*
 * agent-cgroup-test.h — the real glean-agent with the cgroup executor in
 * a test subtree of our own (tests/agent/cgroup-test.h): an agent on
 * BASE_CGROUP = <test subtree>/agent-N, its cgroups' files, submit files
 * and the jobs' files, waiting for processes and paths.
 *
 * Include it after agent-test.h and cgroup-test.h, and after defining in
 * the suite: static CgTestEnv env (set up by cgtest_setup) and static bool
 * in_vm.
 */
#pragma once

static unsigned n_agents;

/* ---- an agent in the test subtree ---- */

typedef struct CgPool {
        Pool p;
        char base[128]; /* BASE_CGROUP, relative to the mount */
        char abs[256];  /* <mount>/<base> */
} CgPool;

static inline void cgpool_config(CgPool *cp, const char *extra, char *buf, size_t len) {
        snprintf(cp->base, sizeof cp->base, "%s/agent-%u", env.base, ++n_agents);
        snprintf(cp->abs, sizeof cp->abs, "%s/%s", env.mount, cp->base);
        snprintf(buf, len, "AGENT_EXECUTOR = cgroup\nBASE_CGROUP = %s\n%s", cp->base, extra ? extra : "");
}

static inline bool cgpool_start(CgPool *cp, const char *extra) {
        char config[1024];
        cgpool_config(cp, extra, config, sizeof config);
        return pool_start(&cp->p, config);
}

/* Another agent on the base of cp (its configuration directory is new). */
static inline bool cgpool_restart(CgPool *cp, const char *extra) {
        char config[1024];
        snprintf(config, sizeof config, "AGENT_EXECUTOR = cgroup\nBASE_CGROUP = %s\n%s", cp->base, extra ? extra : "");
        return pool_start(&cp->p, config);
}

/* Stops the agent (it must exit 0), checks that its slots' cgroups went
 * with it, and removes what is left of its base. */
static inline void cgpool_stop(CgPool *cp) {
        char path[320];
        GLEAN_TEST_CHECK(pool_stop(&cp->p) == 0, "the agent exits 0 after SIGTERM");
        snprintf(path, sizeof path, "%s/slots/slot1", cp->abs);
        GLEAN_TEST_CHECK(access(path, F_OK) < 0, "%s outlives the agent", path);
        cgtest_destroy(cp->abs);
}

static inline int slow(int seconds) {
        return seconds * agent_test_slowdown();
}

static inline bool exists(const char *path) {
        return access(path, F_OK) == 0;
}

/* Waits up to seconds for path to be gone. */
static inline bool wait_gone(const char *path, int seconds) {
        for (int i = 0; i < seconds * 50 && exists(path); i++)
                usleep(20000);
        return !exists(path);
}

/* Waits up to seconds for pid to end (gone, or a zombie its new parent
 * has not reaped yet): 0, else its state letter. */
static inline char wait_ended(pid_t pid, int seconds) {
        char st = proc_state(pid);
        for (int i = 0; i < seconds * 50 && st && st != 'Z'; i++) {
                usleep(20000);
                st = proc_state(pid);
        }
        return st == 'Z' ? 0 : st;
}

/* A file of a cgroup of the agent: <abs>/slots/<rel>/<file>, "" when unreadable. */
static inline void cg_file(const CgPool *cp, const char *rel, const char *file, char *buf, size_t len) {
        char path[512];
        snprintf(path, sizeof path, "%s/slots/%s/%s", cp->abs, rel, file);
        if (cgtest_read(path, buf, len) < 0)
                buf[0] = 0;
        buf[strcspn(buf, "\n")] = 0;
}

/* A submit file in the jobs directory running /bin/sh -c script; its path into sub. */
static inline void write_sub(const Pool *p, const char *name, const char *script, char *sub, size_t len) {
        char text[1024];
        snprintf(sub, len, "%s/%s", p->jobs, name);
        snprintf(text, sizeof text,
                 "executable = /bin/sh\narguments = \"-c '%s'\"\noutput = out.txt\nerror = err.txt\n"
                 "initialdir = %s\nqueue\n",
                 script, p->jobs);
        write_file(sub, text);
}

static inline char *read_job_file(const Pool *p, const char *name) {
        char path[256], *text = NULL;
        snprintf(path, sizeof path, "%s/%s", p->jobs, name);
        if (glean_test_read_file(path, &text, NULL) < 0)
                return strdup("");
        return text;
}

