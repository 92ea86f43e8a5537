/* SPDX-License-Identifier: Apache-2.0 */
/*
 * daemon-test.h — what the suites that drive the real glean-negotiator
 * share: the daemon on a private configuration (Rig: its own port, chosen
 * by the kernel, socket, database and pool key), a fake agent that speaks
 * the pool's sealed protocol through common/secure.h (Agent), and a user
 * on the daemon's unix socket.
 *
 * Every function is static inline, so that a suite uses what it needs.
 * Needs _GNU_SOURCE, defined before the first #include. The binary:
 * $GLEAN_NEGOTIATOR (set by make check to the flavour being tested), else
 * build/bin/glean-negotiator.
 */
#pragma once

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/proto.h"
#include "common/secure.h"
#include "test-util.h"

#define MODE CA_MODE_OLD

/* ---- the daemon on a private configuration ---- */

typedef struct Rig {
        char dir[64], conf[128], log[128], sock[128], portfile[128], keyfile[128];
        char notify[128];       /* NOTIFY_SOCKET for the daemon, when set */
        const char *arg;        /* one more argument of the daemon's (e.g. "--init-db"), or NULL */
        unsigned nofile;        /* when set: its RLIMIT_NOFILE, soft and hard */
        GleanPoolKey key;
        pid_t pid;
        int port;
} Rig;

static inline const char *me(void) {
        struct passwd *pw = getpwuid(getuid());
        return pw ? pw->pw_name : "root";
}

static inline const char *nego_bin(void) {
        const char *p = getenv("GLEAN_NEGOTIATOR");
        return p && *p ? p : "build/bin/glean-negotiator";
}

static inline double now_mono(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

static inline bool rig_init(Rig *r, const char *extra) {
        memset(r, 0, sizeof *r);
        snprintf(r->dir, sizeof r->dir, "/tmp/glean-nego-test-XXXXXX");
        if (!mkdtemp(r->dir))
                return false;
        snprintf(r->conf, sizeof r->conf, "%s/glean.conf", r->dir);
        snprintf(r->log, sizeof r->log, "%s/negotiator.log", r->dir);
        snprintf(r->sock, sizeof r->sock, "%s/negotiator.sock", r->dir);
        snprintf(r->portfile, sizeof r->portfile, "%s/port", r->dir);
        snprintf(r->keyfile, sizeof r->keyfile, "%s/pool.key", r->dir);
        char why[256];
        if (glean_pool_key_generate(&r->key) < 0 || glean_pool_key_save(r->keyfile, &r->key, false, why, sizeof why) < 0)
                return false;
        FILE *f = fopen(r->conf, "we");
        if (!f)
                return false;
        fprintf(f,
                "SPOOL = %s\n"
                "NEGOTIATOR_DATABASE = %s/negotiator.db\n"
                "NEGOTIATOR_SOCKET = %s\n"
                "POOL_KEY_FILE = %s\n"
                "NEGOTIATOR_ADDRESS = 127.0.0.1\n"
                "COLLECTOR_PORT = 0\n"
                "NEGOTIATOR_PORT_FILE = %s\n"
                "NEGOTIATOR_INTERVAL = 1\n"
                "NEGOTIATOR_MIN_INTERVAL = 0\n"
                "ALIVE_INTERVAL = 1\n"
                "NEGOTIATOR_TIMEOUT = 3\n"
                "UID_DOMAIN = test.pool\n"
                "ADMINISTRATORS = %s\n"
                "%s",
                r->dir, r->dir, r->sock, r->keyfile, r->portfile, me(), extra ? extra : "");
        fclose(f);
        return true;
}

/* Daemons still running when the program ends (a test that failed half-way) are killed. */
static pid_t started[64];

static inline void kill_leftovers(void) {
        for (size_t i = 0; i < sizeof started / sizeof *started; i++)
                if (started[i] > 0 && waitpid(started[i], NULL, WNOHANG) == 0) {
                        kill(started[i], SIGKILL);
                        waitpid(started[i], NULL, 0);
                }
}

static inline bool rig_start(Rig *r) {
        unlink(r->portfile);
        r->pid = fork();
        for (size_t i = 0; r->pid > 0 && i < sizeof started / sizeof *started; i++)
                if (started[i] <= 0 || waitpid(started[i], NULL, WNOHANG) != 0) {
                        started[i] = r->pid;
                        break;
                }
        if (r->pid == 0) {
                int fd = open(r->log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
                if (fd >= 0) {
                        dup2(fd, 1);
                        dup2(fd, 2);
                }
                setenv("GLEAN_LOG", "stderr", 1);
                setenv("GLEAN_LOG_LEVEL", "debug", 1);
                if (r->notify[0]) {
                        char pid[16];
                        snprintf(pid, sizeof pid, "%d", (int) getpid());
                        setenv("NOTIFY_SOCKET", r->notify, 1);
                        setenv("WATCHDOG_USEC", "1000000", 1);
                        setenv("WATCHDOG_PID", pid, 1);
                } else
                        unsetenv("NOTIFY_SOCKET");
                if (r->nofile) {
                        struct rlimit rl = { .rlim_cur = r->nofile, .rlim_max = r->nofile };
                        if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
                                _exit(126);
                }
                execl(nego_bin(), nego_bin(), "--config", r->conf, r->arg, (char *) NULL);
                _exit(127);
        }
        for (int i = 0; i < 400; i++) {
                int status;
                if (waitpid(r->pid, &status, WNOHANG) == r->pid) {
                        r->pid = 0;
                        fprintf(stderr, "glean-negotiator exited at start (status %d)\n", status);
                        return false;
                }
                FILE *f = fopen(r->portfile, "re");
                int port = 0, fd = -1;
                if (f) {
                        if (fscanf(f, "%d", &port) != 1)
                                port = 0;
                        fclose(f);
                }
                if (port > 0 && glean_sock_connect_unix(r->sock, 0, &fd) >= 0) {
                        close(fd);
                        r->port = port;
                        return true;
                }
                usleep(25000);
        }
        fprintf(stderr, "glean-negotiator did not come up within 10 s\n");
        return false;
}

static inline void rig_kill(Rig *r) {
        if (r->pid > 0) {
                kill(r->pid, SIGKILL);
                waitpid(r->pid, NULL, 0);
                r->pid = 0;
        }
}

/* SIGTERM; its exit status (-1 when it had to be killed). */
static inline int rig_stop(Rig *r) {
        int status = -1;
        if (r->pid <= 0)
                return -1;
        kill(r->pid, SIGTERM);
        for (int i = 0; i < 400; i++) {
                if (waitpid(r->pid, &status, WNOHANG) == r->pid) {
                        r->pid = 0;
                        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
                }
                usleep(25000);
        }
        rig_kill(r);
        return -1;
}

static inline char *rig_log(const Rig *r) {
        char *log = NULL;
        if (glean_test_read_file(r->log, &log, NULL) < 0)
                return strdup("");
        return log;
}

static inline bool log_has(const Rig *r, const char *needle, int seconds) {
        double end = now_mono() + seconds;
        do {
                char *log = rig_log(r);
                bool yes = strstr(log, needle) != NULL;
                free(log);
                if (yes)
                        return true;
                usleep(50000);
        } while (now_mono() < end);
        return false;
}

static inline void rig_done(Rig *r, bool show) {
        int status = r->pid > 0 ? rig_stop(r) : 0;
        if (show || status != 0 || getenv("GLEAN_TEST_VERBOSE")) {
                char *log = rig_log(r);
                fprintf(stderr, "--- negotiator log (exit %d) ---\n%s--- end ---\n", status, log);
                free(log);
        }
        CU_ASSERT(status == 0);
        char cmd[128];
        snprintf(cmd, sizeof cmd, "rm -rf -- '%s'", r->dir);
        if (system(cmd) != 0)
                fprintf(stderr, "cannot remove %s\n", r->dir);
}

/* ---- a fake agent ---- */

typedef struct Agent {
        int fd;
        GleanSecure *s;
        char machine[64];
        int request_claims, activations, keep_alives, releases, deactivations;
} Agent;

static inline int tcp_connect(int port) {
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons((uint16_t) port) };
        sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        if (fd < 0 || connect(fd, (struct sockaddr *) &sin, sizeof sin) < 0) {
                if (fd >= 0)
                        close(fd);
                return -1;
        }
        return fd;
}

static inline void agent_close(Agent *a) {
        glean_secure_free(a->s);
        a->s = NULL;
        if (a->fd >= 0)
                close(a->fd);
        a->fd = -1;
}

static inline bool agent_send_text(Agent *a, const char *text) {
        return glean_secure_send(a->s, a->fd, text, strlen(text), 5000) >= 0;
}

static inline bool agent_send(Agent *a, const ClassAd *msg) {
        char *text = classad_unparse(msg);
        bool ok = text && agent_send_text(a, text);
        free(text);
        return ok;
}

/* The next message within ms; NULL on timeout or a closed connection. */
static inline ClassAd *agent_recv(Agent *a, int ms, GleanCommand *ret_cmd) {
        char *payload = NULL;
        size_t len = 0;
        if (glean_secure_recv(a->s, a->fd, ms, &payload, &len) < 0)
                return NULL;
        ClassAd *msg = NULL;
        char why[256];
        int r = glean_msg_parse(payload, len, &msg, ret_cmd, why, sizeof why);
        free(payload);
        return r < 0 ? NULL : msg;
}

static inline void agent_reply(Agent *a, const ClassAd *req, bool ok, const char *extra) {
        ClassAd *m = NULL;
        CU_ASSERT_FATAL(glean_msg_reply(req, ok, ok ? NULL : "refused", &m) >= 0);
        if (extra) {
                ClassAd *x = NULL;
                CaError err;
                CU_ASSERT_FATAL(classad_parse(extra, strlen(extra), MODE, &x, &err) >= 0);
                classad_update(m, x);
                classad_free(x);
        }
        agent_send(a, m);
        classad_free(m);
}

/* Messages until one of want (NULL after seconds); what the agent answers
 * by itself (KeepAlive, Match, Release, Deactivate: Ok) is answered and
 * counted on the way. */
static inline ClassAd *agent_expect(Agent *a, GleanCommand want, double seconds) {
        double end = now_mono() + seconds;
        while (now_mono() < end) {
                GleanCommand cmd;
                int ms = (int) ((end - now_mono()) * 1000) + 1;
                ClassAd *m = agent_recv(a, ms, &cmd);
                if (!m)
                        return NULL;
                a->request_claims += cmd == GLEAN_CMD_REQUEST_CLAIM;
                a->activations += cmd == GLEAN_CMD_ACTIVATE_CLAIM;
                a->keep_alives += cmd == GLEAN_CMD_KEEP_ALIVE;
                a->releases += cmd == GLEAN_CMD_RELEASE;
                a->deactivations += cmd == GLEAN_CMD_DEACTIVATE;
                if (cmd == want)
                        return m;
                if (cmd == GLEAN_CMD_KEEP_ALIVE || cmd == GLEAN_CMD_MATCH || cmd == GLEAN_CMD_RELEASE ||
                    cmd == GLEAN_CMD_DEACTIVATE)
                        agent_reply(a, m, true, NULL);
                classad_free(m);
        }
        return NULL;
}

static inline bool agent_connect_key(Agent *a, const Rig *r, const char *machine, int64_t start,
                                     const GleanPoolKey *key) {
        memset(a, 0, sizeof *a);
        a->fd = tcp_connect(r->port);
        snprintf(a->machine, sizeof a->machine, "%s", machine);
        char why[256] = "", hello[256];
        if (a->fd < 0 || glean_secure_handshake(a->fd, GLEAN_SECURE_AGENT, GLEAN_SECURE_POOL_AUTH(key), 5000, &a->s, why, sizeof why) < 0) {
                agent_close(a);
                return false;
        }
        snprintf(hello, sizeof hello,
                 "[ Command = \"Hello\"; ProtocolVersion = 1; Peer = \"glean-agent\"; Machine = \"%s\"; "
                 "AgentStartTime = %" PRId64 " ]",
                 machine, start);
        GleanCommand cmd;
        ClassAd *m = agent_send_text(a, hello) ? agent_recv(a, 5000, &cmd) : NULL;
        bool ok = m && cmd == GLEAN_CMD_HELLO;
        classad_free(m);
        if (!ok)
                agent_close(a);
        return ok;
}

static inline bool agent_connect(Agent *a, const Rig *r, const char *machine) {
        return agent_connect_key(a, r, machine, 1000, &r->key);
}

static inline void agent_slot(Agent *a, const char *slot, const char *state, const char *activity, const char *claim) {
        char text[1024], claim_attr[160] = "";
        if (claim)
                snprintf(claim_attr, sizeof claim_attr, "ClaimId = \"%s\"; ", claim);
        snprintf(text, sizeof text,
                 "[ Command = \"SlotUpdate\"; %sSlotAd = [ Name = \"%s@%s\"; Machine = \"%s\"; MyType = \"Machine\"; "
                 "State = \"%s\"; Activity = \"%s\"; Cpus = 1; Memory = 1024; Disk = 100000; SlotWeight = Cpus; "
                 "OpSys = \"LINUX\"; Arch = \"X86_64\"; START = true; Requirements = START; Rank = 0; "
                 "CurrentRank = 0; SlotID = 1 ] ]",
                 claim_attr, slot, a->machine, a->machine, state, activity);
        CU_ASSERT(agent_send_text(a, text));
}

/* Grants a RequestClaim (LeaseDuration lease); returns its ClaimId. */
static inline char *agent_grant(Agent *a, const ClassAd *req, const char *slot, int lease) {
        char *id = NULL, extra[256];
        classad_eval_string(req, "ClaimId", MODE, &id);
        snprintf(extra, sizeof extra,
                 "[ ClaimId = \"%s\"; Slot = \"%s\"; LeaseDuration = %d; State = \"Claimed\"; Activity = \"Idle\" ]",
                 id ? id : "", slot, lease);
        agent_reply(a, req, true, extra);
        return id;
}

static inline void agent_exit(Agent *a, const char *claim, int code) {
        char text[512];
        snprintf(text, sizeof text,
                 "[ Command = \"JobExit\"; ClaimId = \"%s\"; Slot = \"slot1\"; ExitBySignal = false; ExitCode = %d; "
                 "RemoteUserCpu = 1.5; RemoteSysCpu = 0.25; RemoteWallClockTime = 4.0; ResidentSetSize = 2048 ]",
                 claim, code);
        CU_ASSERT(agent_send_text(a, text));
}

/* A JobExit as an agent that keeps it until acknowledged sends it: naming
 * the run that ended (job cluster.proc, its NumJobStarts), under the
 * agent's RequestId rid. */
static inline void agent_exit_run(Agent *a, const char *claim, int code, int64_t cluster, int64_t proc, int64_t starts,
                                  int64_t rid) {
        char text[640];
        snprintf(text, sizeof text,
                 "[ Command = \"JobExit\"; RequestId = %" PRId64 "; ClaimId = \"%s\"; Slot = \"slot1\"; "
                 "ClusterId = %" PRId64 "; ProcId = %" PRId64 "; NumJobStarts = %" PRId64 "; ExitBySignal = false; "
                 "ExitCode = %d; RemoteUserCpu = 1.5; RemoteSysCpu = 0.25; RemoteWallClockTime = 4.0; "
                 "ResidentSetSize = 2048 ]",
                 rid, claim, cluster, proc, starts, code);
        CU_ASSERT(agent_send_text(a, text));
}

/* The Reply to the agent's request rid within seconds (NULL: none); what
 * comes meanwhile is as agent_expect() has it (answered, counted). */
static inline ClassAd *agent_wait_reply(Agent *a, int64_t rid, double seconds) {
        double end = now_mono() + seconds;
        while (now_mono() < end) {
                ClassAd *m = agent_expect(a, GLEAN_CMD_REPLY, end - now_mono());
                int64_t id = -1;
                if (!m)
                        return NULL;
                classad_eval_int(m, "RequestId", MODE, &id);
                if (id == rid)
                        return m;
                classad_free(m);
        }
        return NULL;
}

/* ---- a user on the unix socket ---- */

static inline int user_connect(const Rig *r) {
        int fd = -1;
        char why[256];
        if (glean_client_connect(r->sock, "glean", 5000, &fd, why, sizeof why) < 0) {
                fprintf(stderr, "cannot connect to %s: %s\n", r->sock, why);
                return -1;
        }
        return fd;
}

static inline ClassAd *user_call(int fd, const char *text) {
        if (glean_frame_write(fd, text, strlen(text), 5000) < 0)
                return NULL;
        ClassAd *m = NULL;
        GleanCommand cmd;
        char why[256];
        if (glean_msg_recv(fd, 10000, &m, &cmd, why, sizeof why) < 0)
                return NULL;
        return m;
}

static const char submit_cluster[] = "Cmd = \"/bin/echo\"; Arguments = \"hello\"; Requirements = true; "
                                     "JobUniverse = 5; RequestCpus = 1; RequestMemory = 64; Iwd = \"/tmp\"";

static inline int64_t user_submit_with(int fd, int procs, const char *extra) {
        char text[1024], list[256] = "";
        for (int i = 0; i < procs && i < 60; i++)
                strcat(list, i ? ", []" : "[]");
        snprintf(text, sizeof text, "[ Command = \"Submit\"; RequestId = 7; Cluster = [ %s%s%s ]; Procs = { %s } ]",
                 submit_cluster, extra ? "; " : "", extra ? extra : "", list);
        ClassAd *m = user_call(fd, text);
        bool ok = false;
        int64_t cluster = -1;
        if (m) {
                classad_eval_bool(m, "Ok", MODE, &ok);
                classad_eval_int(m, "ClusterId", MODE, &cluster);
        }
        if (!ok) {
                char *t = m ? classad_unparse(m) : NULL;
                fprintf(stderr, "submit refused: %s\n", t ? t : "(no reply)");
                free(t);
        }
        classad_free(m);
        return ok ? cluster : -1;
}

static inline int64_t user_submit(int fd, int procs) {
        return user_submit_with(fd, procs, NULL);
}

/* The ad of job C.P in the queue (NULL when not there). */
static inline ClassAd *user_job(int fd, int64_t cluster, int64_t proc) {
        char text[256];
        snprintf(text, sizeof text, "[ Command = \"Query\"; RequestId = 8; Ids = \"%" PRId64 ".%" PRId64 "\" ]",
                 cluster, proc);
        ClassAd *m = user_call(fd, text), **ads = NULL, *ad = NULL;
        size_t n = 0;
        if (m && glean_msg_get_ad_list(m, "Ads", &ads, &n) >= 0 && n == 1) {
                ad = ads[0];
                ads[0] = NULL;
        }
        glean_ad_list_free(ads, n);
        classad_free(m);
        return ad;
}

static inline int64_t ad_int(const ClassAd *ad, const char *name) {
        int64_t v = -1;
        if (ad)
                classad_eval_int(ad, name, MODE, &v);
        return v;
}

static inline double ad_real(const ClassAd *ad, const char *name) {
        double v = -1;
        if (ad)
                classad_eval_real(ad, name, MODE, &v);
        return v;
}

static inline int64_t job_status(int fd, int64_t cluster, int64_t proc) {
        ClassAd *ad = user_job(fd, cluster, proc);
        int64_t st = ad_int(ad, "JobStatus");
        classad_free(ad);
        return st;
}

static inline bool wait_status(int fd, int64_t cluster, int64_t proc, int64_t want, double seconds) {
        double end = now_mono() + seconds;
        do {
                if (job_status(fd, cluster, proc) == want)
                        return true;
                usleep(100000);
        } while (now_mono() < end);
        return false;
}

/* A job of cluster on the agent's slot: claimed and activated; its claim id. */
static inline char *run_one(Agent *a, const char *slot, int64_t cluster) {
        ClassAd *req = agent_expect(a, GLEAN_CMD_REQUEST_CLAIM, 10), *job = NULL;
        if (!req)
                return NULL;
        glean_msg_get_ad(req, "JobAd", &job);
        GLEAN_TEST_CHECK(ad_int(job, "ClusterId") == cluster, "RequestClaim for cluster %" PRId64 ": %" PRId64,
                         cluster, ad_int(job, "ClusterId"));
        classad_free(job);
        char *claim = agent_grant(a, req, slot, 30);
        classad_free(req);
        ClassAd *act = agent_expect(a, GLEAN_CMD_ACTIVATE_CLAIM, 5);
        if (!act) {
                free(claim);
                return NULL;
        }
        agent_reply(a, act, true, NULL);
        classad_free(act);
        return claim;
}

static inline bool reply_ok(const ClassAd *m) {
        bool ok = false;
        if (m)
                classad_eval_bool(m, "Ok", MODE, &ok);
        return ok;
}
