/* SPDX-License-Identifier: Apache-2.0 */
/*
 * agent-test.h — what the suites that start the real glean-agent share: an
 * agent on a temporary configuration (Pool), `glean agent` against it, the
 * protocol (claims, status, waiting for messages and states), the agent's
 * log and the state of processes.
 *
 * Every function is static inline, so that a suite uses what it needs.
 * Needs _GNU_SOURCE, defined before the first #include. The binaries:
 * $GLEAN and $GLEAN_AGENT (set by make check to the flavour being tested),
 * else build/bin/.
 */
#pragma once

#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/proto.h"
#include "test-util.h"

/* ---- an agent on a temporary configuration ---- */

typedef struct Pool {
        char dir[64];
        char sock[128];
        char conf[128];
        char log[128];
        char jobs[128];
        pid_t pid;       /* 0 once it has exited (and was reaped) */
        int status;      /* its wait status, once seen to exit (pool_wait_exit, a start that failed) */
        int exit_status; /* the same as an exit status (128 + signal when killed), -1 while it runs */
} Pool;

static inline const char *bin(const char *env, const char *def) {
        const char *p = getenv(env);
        return p && *p ? p : def;
}

/* 1, or more in the VM rig (GLEAN_VM=1), where everything is slower. */
static inline int agent_test_slowdown(void) {
        const char *vm = getenv("GLEAN_VM");
        return vm && strcmp(vm, "1") == 0 ? 4 : 1;
}

static inline void write_file(const char *path, const char *text) {
        FILE *f = fopen(path, "we");
        CU_ASSERT_PTR_NOT_NULL_FATAL(f);
        fputs(text, f);
        fclose(f);
}

static inline const char *me(void) {
        struct passwd *pw = getpwuid(getuid());
        return pw ? pw->pw_name : "root";
}

static inline uid_t nobody_uid(void) {
        struct passwd *pw = getpwnam("nobody");
        return pw ? pw->pw_uid : 65534;
}

static const char agent_test_base_config[] = "NUM_CPUS = 2\n"
                                             "START = True\n"
                                             "SUSPEND = False\n"
                                             "PREEMPT = False\n"
                                             "KILL = False\n"
                                             "WANT_SUSPEND = False\n"
                                             "POLLING_INTERVAL = 1\n"
                                             "UPDATE_INTERVAL = 5\n"
                                             "MachineMaxVacateTime = 5\n"
                                             /* no transfer port: agents of parallel tests would share 9620 */
                                             "TRANSFER_PORT = 0\n";

static inline void remove_dir(const char *dir) {
        char cmd[200];
        snprintf(cmd, sizeof cmd, "rm -rf -- '%s'", dir);
        if (system(cmd) != 0)
                fprintf(stderr, "cannot remove %s\n", dir);
}

static inline void pool_exited(Pool *p, int status) {
        p->pid = 0;
        p->status = status;
        p->exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* An agent that did not start: why, and nothing left behind. */
static inline bool pool_failed(Pool *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static inline bool pool_failed(Pool *p, const char *fmt, ...) {
        char *log = NULL;
        glean_test_read_file(p->log, &log, NULL);
        fprintf(stderr, "the agent did not start: ");
        va_list ap;
        va_start(ap, fmt);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
        fprintf(stderr, "\n%s", log ? log : "");
        free(log);
        if (p->pid > 0) {
                kill(p->pid, SIGKILL);
                waitpid(p->pid, NULL, 0);
                p->pid = 0;
        }
        remove_dir(p->dir);
        return false;
}

/* Starts the agent on the base configuration followed by extra (which so
 * overrides it) and waits for its socket. expect_exit: the agent is meant
 * to refuse to start: true once it has exited by itself (p->exit_status),
 * its directory and log left for the test to read until pool_stop(). */
static inline bool pool_launch(Pool *p, const char *extra, bool expect_exit) {
        memset(p, 0, sizeof *p);
        p->exit_status = -1;
        snprintf(p->dir, sizeof p->dir, "/tmp/glean-agent-test-XXXXXX");
        if (!mkdtemp(p->dir))
                return false;
        chmod(p->dir, 0755);
        snprintf(p->sock, sizeof p->sock, "%s/agent.sock", p->dir);
        snprintf(p->conf, sizeof p->conf, "%s/glean.conf", p->dir);
        snprintf(p->log, sizeof p->log, "%s/agent.log", p->dir);
        snprintf(p->jobs, sizeof p->jobs, "%s/jobs", p->dir);
        mkdir(p->jobs, 0777);
        chmod(p->jobs, 0777); /* jobs of root run as nobody and write here */
        char *text = NULL;
        /* ADMINISTRATORS: Match and Shutdown work when the tests do not run as root too. */
        if (asprintf(&text, "EXECUTE = %s/execute\nAGENT_SOCKET = %s\nADMINISTRATORS = %s\n%s%s", p->dir, p->sock,
                     me(), agent_test_base_config, extra ? extra : "") < 0)
                return pool_failed(p, "out of memory");
        write_file(p->conf, text);
        free(text);
        p->pid = fork();
        if (p->pid == 0) {
                int fd = open(p->log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
                if (fd >= 0) {
                        dup2(fd, 2);
                        dup2(fd, 1);
                }
                setenv("GLEAN_LOG", "stderr", 1);
                const char *agent = bin("GLEAN_AGENT", "build/bin/glean-agent");
                execl(agent, agent, "--config", p->conf, (char *) NULL);
                _exit(127);
        }
        int tries = 400 * agent_test_slowdown();
        for (int i = 0; i < tries; i++) {
                /* Listening, not only there: the socket's file appears when
                 * it is bound, a moment before it listens (a connection
                 * then is refused). */
                int fd = -1;
                if (!expect_exit && glean_sock_connect_unix(p->sock, 0, &fd) >= 0) {
                        close(fd);
                        return true;
                }
                int status;
                if (waitpid(p->pid, &status, WNOHANG) == p->pid) {
                        pool_exited(p, status);
                        return expect_exit ? true : pool_failed(p, "it exited, wait status %d", status);
                }
                usleep(25000);
        }
        if (expect_exit) {
                fprintf(stderr, "the agent did not exit within %d s\n", tries / 40);
                return false; /* pool_stop() stops it */
        }
        return pool_failed(p, "no socket after %d s", tries / 40);
}

static inline bool pool_start(Pool *p, const char *extra) {
        return pool_launch(p, extra, false);
}

/* Waits up to seconds for the agent to exit by itself: its wait status,
 * or -1 when it is still running. */
static inline int pool_wait_exit(Pool *p, int seconds) {
        if (p->pid <= 0)
                return p->status;
        for (int i = 0; i < seconds * 20; i++) {
                int status;
                if (waitpid(p->pid, &status, WNOHANG) == p->pid) {
                        pool_exited(p, status);
                        return status;
                }
                usleep(50000);
        }
        return -1;
}

/* SIGTERM (unless the agent has exited already), then its exit status (-1
 * if it had to be killed); the log is printed when that is not 0. */
static inline int pool_stop(Pool *p) {
        int status = -1;
        if (p->pid > 0) {
                kill(p->pid, SIGTERM);
                for (int i = 0; i < 400 * agent_test_slowdown(); i++) {
                        if (waitpid(p->pid, &status, WNOHANG) == p->pid)
                                break;
                        usleep(25000);
                        status = -1;
                }
                if (status == -1) {
                        kill(p->pid, SIGKILL);
                        waitpid(p->pid, NULL, 0);
                }
                p->pid = 0;
        } else
                status = p->status;
        char *log = NULL;
        if (glean_test_read_file(p->log, &log, NULL) >= 0 && (status != 0 || getenv("GLEAN_TEST_VERBOSE")))
                fprintf(stderr, "--- agent log ---\n%s--- end ---\n", log);
        free(log);
        remove_dir(p->dir);
        return status;
}

/* `glean agent --socket SOCK ARG...` (the arguments end with NULL). */
static inline int glean_cli(Pool *p, GleanTestRun *r, ...) __attribute__((sentinel));
static inline int glean_cli(Pool *p, GleanTestRun *r, ...) {
        char *argv[16] = { (char *) bin("GLEAN", "build/bin/glean"), "agent", "--socket", p->sock };
        size_t n = 4;
        va_list ap;
        va_start(ap, r);
        for (char *a; n < sizeof argv / sizeof *argv - 1 && (a = va_arg(ap, char *));)
                argv[n++] = a;
        va_end(ap);
        argv[n] = NULL;
        return glean_test_run(argv, r);
}

/* ---- the agent's log ---- */

static inline char *read_log(const Pool *p) {
        char *log = NULL;
        if (glean_test_read_file(p->log, &log, NULL) < 0)
                return strdup("");
        return log;
}

static inline size_t count(const char *hay, const char *needle) {
        size_t n = 0;
        for (const char *s = hay; (s = strstr(s, needle)); s += strlen(needle))
                n++;
        return n;
}

/* Is there a line of the log with every one of the strings (NULL-terminated)? */
static inline bool log_line(const Pool *p, const char *first, ...) __attribute__((sentinel));
static inline bool log_line(const Pool *p, const char *first, ...) {
        char *log = read_log(p);
        bool found = false;
        for (char *line = log, *next; line && *line && !found; line = next) {
                next = strchr(line, '\n');
                if (next)
                        *next++ = 0;
                found = true;
                va_list ap;
                va_start(ap, first);
                for (const char *s = first; s && found; s = va_arg(ap, const char *))
                        found = strstr(line, s) != NULL;
                va_end(ap);
        }
        free(log);
        return found;
}

/* A transition of slot in the log: "slot1: Matched/Idle -> Owner/Idle (transition 8". */
static inline bool log_transition(const Pool *p, const char *slot, const char *from, const char *to, int number) {
        char a[96], b[64];
        snprintf(a, sizeof a, "%s: %s -> %s ", slot, from, to);
        snprintf(b, sizeof b, "(transition %d:", number);
        return log_line(p, a, b, NULL);
}

static inline bool wait_log(const Pool *p, int seconds, const char *first, const char *second) {
        for (int i = 0; i < seconds * 10; i++) {
                if (log_line(p, first, second, NULL))
                        return true;
                usleep(100000);
        }
        return false;
}

/* ---- the protocol ---- */

static inline int connect_agent(Pool *p) {
        int fd = -1;
        char why[256];
        int r = glean_client_connect(p->sock, "glean", 5000, &fd, why, sizeof why);
        GLEAN_TEST_CHECK(r >= 0, "connect: %s", why);
        return fd;
}

/* Sends msg and returns the Reply (Events and JobExits before it are dropped). */
static inline ClassAd *call(int fd, ClassAd *msg) {
        static int64_t id = 100;
        classad_set_int(msg, "RequestId", ++id);
        if (glean_msg_send(fd, msg, 5000) < 0)
                return NULL;
        for (;;) {
                ClassAd *ad = NULL;
                GleanCommand cmd;
                char why[256];
                if (glean_msg_recv(fd, 10000, &ad, &cmd, why, sizeof why) < 0)
                        return NULL;
                int64_t rid = 0;
                if (cmd == GLEAN_CMD_REPLY && classad_eval_int(ad, "RequestId", CA_MODE_OLD, &rid) >= 0 && rid == id)
                        return ad;
                classad_free(ad);
        }
}

static inline bool reply_ok(const ClassAd *reply, char **ret_reason) {
        bool ok = false;
        if (reply)
                classad_eval_bool(reply, "Ok", CA_MODE_OLD, &ok);
        if (ret_reason) {
                *ret_reason = NULL;
                if (reply)
                        classad_eval_string(reply, "Reason", CA_MODE_OLD, ret_reason);
        }
        return ok;
}

/* The reply's Ok, its Reason written to why (for the failure messages); the reply is freed. */
static inline bool ok_why(ClassAd *reply, char *why, size_t len) {
        char *reason = NULL;
        bool ok = reply_ok(reply, &reason);
        snprintf(why, len, "%s", reply ? reason ? reason : "(no reason)" : "(no reply)");
        free(reason);
        classad_free(reply);
        return ok;
}

static inline ClassAd *job_ad(const Pool *p, const char *cmd, const char *args, const char *extra) {
        char *text = NULL;
        ClassAd *ad = NULL;
        CaError err;
        if (asprintf(&text,
                     "[ Owner = \"%s\"; Cmd = \"%s\"; Arguments = \"%s\"; Iwd = \"%s\"; Out = \"out.txt\"; "
                     "Err = \"err.txt\"; ClusterId = 7; ProcId = 0; JobUniverse = 5; RequestCpus = 1; "
                     "RequestMemory = 64; RequestDisk = 1024; Requirements = true; %s ]",
                     me(), cmd, args, p->jobs, extra ? extra : "") < 0)
                return NULL;
        if (classad_parse(text, strlen(text), CA_MODE_OLD, &ad, &err) < 0)
                ad = NULL;
        free(text);
        return ad;
}

/* RequestClaim; by_priority: a preemption the negotiator decided for user priority. */
static inline ClassAd *claim_full(int fd, const char *slot, const char *id, const ClassAd *job, bool by_priority) {
        ClassAd *m = NULL;
        glean_msg_new(GLEAN_CMD_REQUEST_CLAIM, &m);
        classad_set_string(m, "Slot", slot);
        classad_set_string(m, "ClaimId", id);
        glean_msg_set_ad(m, "JobAd", job);
        if (by_priority)
                classad_set_bool(m, "ByPriority", true);
        ClassAd *r = call(fd, m);
        classad_free(m);
        return r;
}

static inline ClassAd *claim(int fd, const char *slot, const char *id, const ClassAd *job) {
        return claim_full(fd, slot, id, job, false);
}

static inline ClassAd *claim_cmd(int fd, GleanCommand c, const char *id, const ClassAd *job) {
        ClassAd *m = NULL;
        glean_msg_new(c, &m);
        classad_set_string(m, "ClaimId", id);
        if (job)
                glean_msg_set_ad(m, "JobAd", job);
        ClassAd *r = call(fd, m);
        classad_free(m);
        return r;
}

static inline ClassAd *match(int fd, const char *slot, const char *id) {
        ClassAd *m = NULL;
        glean_msg_new(GLEAN_CMD_MATCH, &m);
        classad_set_string(m, "Slot", slot);
        classad_set_string(m, "ClaimId", id);
        ClassAd *r = call(fd, m);
        classad_free(m);
        return r;
}

/* Claims slot with job and activates the claim: the job's pid, or 0. */
static inline pid_t claim_and_run(int fd, const char *slot, const char *id, const ClassAd *job) {
        char why[512];
        if (!GLEAN_TEST_CHECK(ok_why(claim(fd, slot, id, job), why, sizeof why), "claim %s: %s", id, why))
                return 0;
        ClassAd *r = claim_cmd(fd, GLEAN_CMD_ACTIVATE_CLAIM, id, job);
        int64_t pid = 0;
        if (r)
                classad_eval_int(r, "JobPid", CA_MODE_OLD, &pid);
        GLEAN_TEST_CHECK(ok_why(r, why, sizeof why) && pid > 0, "activate %s: %s", id, why);
        return (pid_t) pid;
}

/* The next message cmd on fd (others dropped) within seconds, or NULL.
 * With attr, only a message where attr is true (a bool) or is one of the
 * integers want1/want2. */
static inline ClassAd *wait_msg(int fd, GleanCommand want, int seconds, const char *attr, int64_t want1,
                                int64_t want2) {
        time_t end = time(NULL) + seconds;
        while (time(NULL) <= end) {
                ClassAd *ad = NULL;
                GleanCommand cmd;
                char why[256];
                int ms = (int) (end - time(NULL)) * 1000 + 500;
                if (glean_msg_recv(fd, ms, &ad, &cmd, why, sizeof why) < 0)
                        return NULL;
                if (cmd == want) {
                        bool b = false;
                        int64_t v = 0;
                        if (!attr || (classad_eval_bool(ad, attr, CA_MODE_OLD, &b) >= 0 && b) ||
                            (classad_eval_int(ad, attr, CA_MODE_OLD, &v) >= 0 && (v == want1 || v == want2)))
                                return ad;
                }
                classad_free(ad);
        }
        return NULL;
}

static inline char *ad_string(const ClassAd *ad, const char *attr) {
        char *s = NULL;
        if (!ad || classad_eval_string(ad, attr, CA_MODE_OLD, &s) < 0)
                return strdup("");
        return s;
}

/* The status ad of one slot (NULL when there is no such slot). */
static inline ClassAd *slot_ad(Pool *p, const char *slot) {
        int fd = connect_agent(p);
        if (fd < 0)
                return NULL;
        ClassAd *m = NULL;
        glean_msg_new(GLEAN_CMD_STATUS, &m);
        classad_set_string(m, "Slot", slot);
        ClassAd *r = call(fd, m);
        ClassAd **ads = NULL, *ad = NULL;
        size_t n = 0;
        if (r && glean_msg_get_ad_list(r, "Slots", &ads, &n) >= 0 && n == 1) {
                ad = ads[0];
                ads[0] = NULL;
        }
        glean_ad_list_free(ads, n);
        classad_free(r);
        classad_free(m);
        close(fd);
        return ad;
}

/* State/Activity of slot (e.g. "Claimed/Busy"), or "" when it does not exist. */
static inline void slot_state(Pool *p, const char *slot, char *buf, size_t len) {
        ClassAd *ad = slot_ad(p, slot);
        buf[0] = 0;
        if (ad) {
                char *s = ad_string(ad, "State"), *a = ad_string(ad, "Activity");
                snprintf(buf, len, "%s/%s", s, a);
                free(s);
                free(a);
        }
        classad_free(ad);
}

static inline bool wait_state(Pool *p, const char *slot, const char *want, int seconds) {
        char buf[64];
        for (int i = 0; i < seconds * 20; i++) {
                slot_state(p, slot, buf, sizeof buf);
                if (strcmp(buf, want) == 0)
                        return true;
                usleep(50000);
        }
        GLEAN_TEST_CHECK(false, "%s: want %s, still %s after %d s", slot, want, buf, seconds);
        return false;
}

static inline char *slot_string(Pool *p, const char *slot, const char *attr) {
        ClassAd *ad = slot_ad(p, slot);
        char *s = ad_string(ad, attr);
        classad_free(ad);
        return s;
}

/* An integer attribute of slot's ad, -1 when there is none. */
static inline int64_t slot_int(Pool *p, const char *slot, const char *attr) {
        ClassAd *ad = slot_ad(p, slot);
        int64_t v = -1;
        if (ad)
                classad_eval_int(ad, attr, CA_MODE_OLD, &v);
        classad_free(ad);
        return v;
}

/* ---- processes ---- */

/* The state letter of /proc/PID/stat ('R', 'S', 'T', ...), 0 when it is gone. */
static inline char proc_state(pid_t pid) {
        char path[64], buf[512];
        snprintf(path, sizeof path, "/proc/%d/stat", (int) pid);
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return 0;
        ssize_t n = read(fd, buf, sizeof buf - 1);
        close(fd);
        if (n <= 0)
                return 0;
        buf[n] = 0;
        char *paren = strrchr(buf, ')');
        return paren && paren[1] == ' ' ? paren[2] : 0;
}

/* Waits up to ms for the process to be (want_stopped) or not be stopped. */
static inline char wait_proc_state(pid_t pid, bool want_stopped, int ms) {
        char st = proc_state(pid);
        for (int i = 0; i < ms / 20 && st && (st == 'T') != want_stopped; i++) {
                usleep(20000);
                st = proc_state(pid);
        }
        return st;
}
