/* SPDX-License-Identifier: Apache-2.0 */
/*
 * agent.c — `glean agent ...`: talk to the glean-agent of this machine
 * over its unix socket.
 *
 *   glean agent [--socket PATH] status [-l | --json] [SLOT]
 *   glean agent [--socket PATH] run [--slot SLOT] SUBMITFILE
 *   glean agent [--socket PATH] vacate [--fast] [SLOT]
 *   glean agent [--socket PATH] drain [--how graceful|quick|fast] | --cancel
 *   glean agent [--socket PATH] shutdown [--fast | --peaceful]
 *
 * The socket: --socket, else $GLEAN_AGENT_SOCKET, else AGENT_SOCKET of the
 * configuration, else /run/glean/agent.sock.
 */
#include <errno.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "common/proto.h"
#include "config/config.h"
#include "jobs.h"

#define TIMEOUT_MS 10000

static const char usage[] =
        "usage: glean agent [--socket PATH] status [-l | --json] [SLOT]\n"
        "       glean agent [--socket PATH] run [--slot SLOT] SUBMITFILE\n"
        "       glean agent [--socket PATH] vacate [--fast] [SLOT]\n"
        "       glean agent [--socket PATH] drain [--how graceful|quick|fast] | --cancel\n"
        "       glean agent [--socket PATH] shutdown [--fast | --peaceful]";

typedef struct Client {
        int fd;
        int64_t next_id;
} Client;

static char *socket_path(const char *opt) {
        if (opt)
                return strdup(opt);
        const char *env = getenv("GLEAN_AGENT_SOCKET");
        if (env && *env)
                return strdup(env);
        Config *cfg = NULL;
        ConfigError err;
        char *v = NULL;
        if (config_load_default(&cfg, &err) >= 0 && config_get(cfg, "AGENT_SOCKET", &v, &err) >= 0 && *v) {
                config_free(cfg);
                return v;
        }
        free(v);
        config_free(cfg);
        return strdup("/run/glean/agent.sock");
}

static int client_open(const char *path, Client *ret) {
        char why[512];
        int fd;
        int r = glean_client_connect(path, "glean", TIMEOUT_MS, &fd, why, sizeof why);
        if (r < 0) {
                fprintf(stderr, "glean agent: cannot talk to the agent at %s: %s\n", path, why);
                return r;
        }
        *ret = (Client){ .fd = fd, .next_id = 1 };
        return 0;
}

/* Prints an Event of the agent (a state change of our slot). */
static void print_event(const ClassAd *ev) {
        char *slot = NULL, *state = NULL, *act = NULL, *reason = NULL;
        int64_t tr = 0;
        classad_eval_string(ev, "Slot", CA_MODE_OLD, &slot);
        classad_eval_string(ev, "State", CA_MODE_OLD, &state);
        classad_eval_string(ev, "Activity", CA_MODE_OLD, &act);
        classad_eval_string(ev, "Reason", CA_MODE_OLD, &reason);
        bool ended = false;
        classad_eval_bool(ev, "ClaimEnded", CA_MODE_OLD, &ended);
        if (ended)
                fprintf(stderr, "glean agent: %s: claim ended (%s)\n", slot ? slot : "?", reason ? reason : "");
        else if (classad_eval_int(ev, "Transition", CA_MODE_OLD, &tr) >= 0)
                fprintf(stderr, "glean agent: %s: %s/%s (transition %lld: %s)\n", slot ? slot : "?",
                        state ? state : "?", act ? act : "?", (long long) tr, reason ? reason : "");
        free(slot);
        free(state);
        free(act);
        free(reason);
}

/* Sends req and waits for its Reply; Events meanwhile are printed, a
 * JobExit is handed to *ret_exit (when not NULL). */
static int request(Client *c, ClassAd *req, ClassAd **ret_reply, ClassAd **ret_exit) {
        int64_t id = c->next_id++;
        classad_set_int(req, "RequestId", id);
        int r = glean_msg_send(c->fd, req, TIMEOUT_MS);
        if (r < 0) {
                fprintf(stderr, "glean agent: cannot send: %s\n", strerror(-r));
                return r;
        }
        for (;;) {
                ClassAd *msg = NULL;
                GleanCommand cmd;
                char why[512];
                r = glean_msg_recv(c->fd, TIMEOUT_MS, &msg, &cmd, why, sizeof why);
                if (r < 0) {
                        fprintf(stderr, "glean agent: no answer: %s\n", why);
                        return r;
                }
                int64_t rid = -1;
                if (cmd == GLEAN_CMD_REPLY && classad_eval_int(msg, "RequestId", CA_MODE_OLD, &rid) >= 0 && rid == id) {
                        *ret_reply = msg;
                        return 0;
                }
                if (cmd == GLEAN_CMD_EVENT)
                        print_event(msg);
                if (cmd == GLEAN_CMD_JOB_EXIT && ret_exit && !*ret_exit) {
                        *ret_exit = msg;
                        continue;
                }
                classad_free(msg);
        }
}

/* Ok of a reply; prints its Reason otherwise. */
static bool reply_ok(const ClassAd *reply, const char *what) {
        bool ok = false;
        classad_eval_bool(reply, "Ok", CA_MODE_OLD, &ok);
        if (!ok) {
                char *reason = NULL;
                classad_eval_string(reply, "Reason", CA_MODE_OLD, &reason);
                fprintf(stderr, "glean agent %s: refused: %s\n", what, reason ? reason : "(no reason given)");
                free(reason);
        }
        return ok;
}

static int simple(Client *c, GleanCommand cmd, ClassAd *req, const char *what) {
        ClassAd *reply = NULL;
        int r = request(c, req, &reply, NULL);
        classad_free(req);
        if (r < 0)
                return CLI_EXIT_FAILURE;
        bool ok = reply_ok(reply, what);
        classad_free(reply);
        (void) cmd;
        return ok ? CLI_EXIT_OK : CLI_EXIT_FAILURE;
}

/* ---- status ---- */

static char *attr_str(const ClassAd *ad, const char *name) {
        char *v = NULL;
        if (classad_eval_string(ad, name, CA_MODE_OLD, &v) < 0)
                return strdup("?");
        return v;
}

static void print_table(ClassAd **ads, size_t n) {
        printf("%-24s %-6s %-8s %-10s %-10s %6s %8s %10s\n", "Name", "OpSys", "Arch", "State", "Activity", "LoadAv",
               "Mem", "ActvtyTime");
        int64_t now = (int64_t) time(NULL);
        for (size_t i = 0; i < n; i++) {
                char *name = attr_str(ads[i], "Name"), *opsys = attr_str(ads[i], "OpSys"),
                     *arch = attr_str(ads[i], "Arch"), *state = attr_str(ads[i], "State"),
                     *act = attr_str(ads[i], "Activity");
                double load = 0;
                int64_t mem = 0, entered = now;
                classad_eval_real(ads[i], "LoadAvg", CA_MODE_OLD, &load);
                classad_eval_int(ads[i], "Memory", CA_MODE_OLD, &mem);
                classad_eval_int(ads[i], "EnteredCurrentActivity", CA_MODE_OLD, &entered);
                int64_t t = now - entered;
                if (t < 0)
                        t = 0;
                printf("%-24s %-6s %-8s %-10s %-10s %6.3f %8lld %3lld+%02lld:%02lld:%02lld\n", name, opsys, arch, state,
                       act, load, (long long) mem, (long long) (t / 86400), (long long) (t / 3600 % 24),
                       (long long) (t / 60 % 60), (long long) (t % 60));
                free(name);
                free(opsys);
                free(arch);
                free(state);
                free(act);
        }
}

/* The status ads of the agent's slots (or of one), for other verbs. */
static int fetch_status(Client *c, const char *slot, ClassAd ***ret_ads, size_t *ret_n) {
        ClassAd *req = NULL, *reply = NULL;
        if (glean_msg_new(GLEAN_CMD_STATUS, &req) < 0)
                return -ENOMEM;
        if (slot)
                classad_set_string(req, "Slot", slot);
        int r = request(c, req, &reply, NULL);
        classad_free(req);
        if (r < 0)
                return r;
        if (!reply_ok(reply, "status")) {
                classad_free(reply);
                return -EIO;
        }
        r = glean_msg_get_ad_list(reply, "Slots", ret_ads, ret_n);
        classad_free(reply);
        if (r < 0)
                fprintf(stderr, "glean agent status: the reply holds no slot list\n");
        return r;
}

int cli_agent_status(const char *socket_opt, ClassAd ***ret_ads, size_t *ret_n) {
        char *path = socket_path(socket_opt);
        if (!path)
                return -ENOMEM;
        Client c;
        int r = client_open(path, &c);
        free(path);
        if (r < 0)
                return r;
        r = fetch_status(&c, NULL, ret_ads, ret_n);
        close(c.fd);
        return r;
}

static int cmd_status(Client *c, int argc, char **argv) {
        bool longform = false, json = false;
        const char *slot = NULL;
        for (int i = 1; i < argc; i++) {
                if (strcmp(argv[i], "-l") == 0 || strcmp(argv[i], "--long") == 0)
                        longform = true;
                else if (strcmp(argv[i], "--json") == 0)
                        json = true;
                else if (argv[i][0] == '-' || slot)
                        return cli_usage_error("agent status", usage, "unexpected '%s'", argv[i]), CLI_EXIT_USAGE;
                else
                        slot = argv[i];
        }
        ClassAd **ads = NULL;
        size_t n = 0;
        if (fetch_status(c, slot, &ads, &n) < 0)
                return CLI_EXIT_FAILURE;
        if (slot && n == 0) {
                fprintf(stderr, "glean agent status: no slot %s\n", slot);
                glean_ad_list_free(ads, n);
                return CLI_EXIT_FAILURE;
        }
        if (json) {
                cli_json_ads(stdout, ads, n);
        } else if (longform) {
                for (size_t i = 0; i < n; i++) {
                        char *text = classad_unparse_old(ads[i]);
                        printf("%s%s", i ? "\n" : "", text ? text : "");
                        free(text);
                }
        } else
                print_table(ads, n);
        glean_ad_list_free(ads, n);
        return CLI_EXIT_OK;
}

/* ---- vacate, drain, shutdown ---- */

static int cmd_vacate(Client *c, int argc, char **argv) {
        ClassAd *req = NULL;
        if (glean_msg_new(GLEAN_CMD_VACATE, &req) < 0)
                return CLI_EXIT_FAILURE;
        for (int i = 1; i < argc; i++) {
                if (strcmp(argv[i], "--fast") == 0)
                        classad_set_bool(req, "Fast", true);
                else if (argv[i][0] != '-' && !classad_has(req, "Slot"))
                        classad_set_string(req, "Slot", argv[i]);
                else {
                        classad_free(req);
                        return cli_usage_error("agent vacate", usage, "unexpected '%s'", argv[i]), CLI_EXIT_USAGE;
                }
        }
        return simple(c, GLEAN_CMD_VACATE, req, "vacate");
}

static int cmd_drain(Client *c, int argc, char **argv) {
        bool cancel = false;
        const char *how = NULL;
        for (int i = 1; i < argc; i++) {
                if (strcmp(argv[i], "--cancel") == 0)
                        cancel = true;
                else if (strcmp(argv[i], "--how") == 0 && i + 1 < argc)
                        how = argv[++i];
                else
                        return cli_usage_error("agent drain", usage, "unexpected '%s'", argv[i]), CLI_EXIT_USAGE;
        }
        if (cancel && how)
                return cli_usage_error("agent drain", usage, "--cancel takes no --how"), CLI_EXIT_USAGE;
        if (how && strcmp(how, "graceful") != 0 && strcmp(how, "quick") != 0 && strcmp(how, "fast") != 0)
                return cli_usage_error("agent drain", usage, "--how is graceful, quick or fast"), CLI_EXIT_USAGE;
        ClassAd *req = NULL;
        if (glean_msg_new(cancel ? GLEAN_CMD_CANCEL_DRAIN : GLEAN_CMD_DRAIN, &req) < 0)
                return CLI_EXIT_FAILURE;
        if (how)
                classad_set_string(req, "How", how);
        return simple(c, GLEAN_CMD_DRAIN, req, cancel ? "drain --cancel" : "drain");
}

static int cmd_shutdown(Client *c, int argc, char **argv) {
        ClassAd *req = NULL;
        if (glean_msg_new(GLEAN_CMD_SHUTDOWN, &req) < 0)
                return CLI_EXIT_FAILURE;
        for (int i = 1; i < argc; i++) {
                if (strcmp(argv[i], "--fast") == 0)
                        classad_set_bool(req, "Fast", true);
                else if (strcmp(argv[i], "--peaceful") == 0)
                        classad_set_bool(req, "Peaceful", true);
                else {
                        classad_free(req);
                        return cli_usage_error("agent shutdown", usage, "unexpected '%s'", argv[i]), CLI_EXIT_USAGE;
                }
        }
        return simple(c, GLEAN_CMD_SHUTDOWN, req, "shutdown");
}

/* ---- run ---- */

static volatile sig_atomic_t interrupted;

static void on_interrupt(int sig) {
        (void) sig;
        interrupted++;
}

static int claim_id_new(char *buf, size_t len) {
        unsigned char raw[16];
        if (getrandom(raw, sizeof raw, 0) != (ssize_t) sizeof raw || len < 2 * sizeof raw + 1)
                return -EIO;
        for (size_t i = 0; i < sizeof raw; i++)
                snprintf(buf + 2 * i, 3, "%02x", raw[i]);
        return 0;
}

static int send_claim_msg(Client *c, GleanCommand cmd, const char *claim_id) {
        ClassAd *m = NULL;
        int r = glean_msg_new(cmd, &m);
        if (r >= 0) {
                classad_set_string(m, "ClaimId", claim_id);
                classad_set_int(m, "RequestId", c->next_id++);
                r = glean_msg_send(c->fd, m, TIMEOUT_MS);
        }
        classad_free(m);
        return r;
}

/* Claims a slot for job; *ret_slot and *ret_lease on success. */
static int claim_slot(Client *c, const char *only, const ClassAd *job, const char *claim_id, char **ret_slot,
                      int64_t *ret_lease, bool *ret_ready) {
        ClassAd *req = NULL, *reply = NULL;
        if (glean_msg_new(GLEAN_CMD_STATUS, &req) < 0 || request(c, req, &reply, NULL) < 0 ||
            !reply_ok(reply, "run")) {
                classad_free(req);
                classad_free(reply);
                return -EIO;
        }
        classad_free(req);
        ClassAd **ads = NULL;
        size_t n = 0;
        glean_msg_get_ad_list(reply, "Slots", &ads, &n);
        classad_free(reply);
        int r = -ENOENT;
        for (size_t i = 0; i < n && r < 0; i++) {
                char *name = attr_str(ads[i], "Name"), *state = attr_str(ads[i], "State");
                bool dynamic = false;
                classad_eval_bool(ads[i], "DynamicSlot", CA_MODE_OLD, &dynamic);
                size_t nl = strcspn(name, "@");
                bool wanted = only ? strncmp(name, only, nl) == 0 && strlen(only) == nl
                                   : !dynamic && (strcmp(state, "Unclaimed") == 0 || strcmp(state, "Owner") == 0 ||
                                                  strcmp(state, "Backfill") == 0);
                if (wanted) {
                        req = reply = NULL;
                        glean_msg_new(GLEAN_CMD_REQUEST_CLAIM, &req);
                        name[nl] = 0;
                        classad_set_string(req, "Slot", name);
                        classad_set_string(req, "ClaimId", claim_id);
                        glean_msg_set_ad(req, "JobAd", job);
                        if (request(c, req, &reply, NULL) >= 0) {
                                bool ok = false;
                                classad_eval_bool(reply, "Ok", CA_MODE_OLD, &ok);
                                if (ok) {
                                        *ret_slot = attr_str(reply, "Slot");
                                        char *st = attr_str(reply, "State");
                                        *ret_ready = strcmp(st, "Claimed") == 0 || strcmp(st, "?") == 0;
                                        free(st);
                                        if (classad_eval_int(reply, "LeaseDuration", CA_MODE_OLD, ret_lease) < 0)
                                                *ret_lease = 1200;
                                        r = 0;
                                } else {
                                        char *why = attr_str(reply, "Reason");
                                        fprintf(stderr, "glean agent run: %s: %s\n", name, why);
                                        free(why);
                                }
                        }
                        classad_free(req);
                        classad_free(reply);
                }
                free(name);
                free(state);
        }
        glean_ad_list_free(ads, n);
        if (r == -ENOENT)
                fprintf(stderr, "glean agent run: no slot %s took the job\n", only ? only : "of this machine");
        return r;
}

/* Prints a JobExit; returns the job's exit status as a shell would see it. */
static int report_exit(const char *jobid, const ClassAd *ex) {
        bool by_signal = false;
        int64_t code = 0, sig = 0;
        double wall = 0, user = 0, sys = 0;
        char *reason = NULL;
        classad_eval_bool(ex, "ExitBySignal", CA_MODE_OLD, &by_signal);
        classad_eval_int(ex, "ExitCode", CA_MODE_OLD, &code);
        classad_eval_int(ex, "ExitSignal", CA_MODE_OLD, &sig);
        classad_eval_real(ex, "RemoteWallClockTime", CA_MODE_OLD, &wall);
        classad_eval_real(ex, "RemoteUserCpu", CA_MODE_OLD, &user);
        classad_eval_real(ex, "RemoteSysCpu", CA_MODE_OLD, &sys);
        classad_eval_string(ex, "Reason", CA_MODE_OLD, &reason);
        if (by_signal)
                printf("job %s killed by signal %lld", jobid, (long long) sig);
        else
                printf("job %s exited with status %lld", jobid, (long long) code);
        printf(" after %.1f s (user %.2f s, system %.2f s)%s%s%s\n", wall, user, sys, reason ? " (" : "",
               reason ? reason : "", reason ? ")" : "");
        bool hold = false;
        classad_eval_bool(ex, "Hold", CA_MODE_OLD, &hold);
        if (hold)
                printf("job %s is held: %s\n", jobid, reason ? reason : "");
        fflush(stdout);
        free(reason);
        return by_signal ? 128 + (int) sig : (int) code;
}

/* A claim on a slot that runs its backfill command is Claimed once the
 * command is gone (transition 31): wait for that Event. */
static int wait_claimed(Client *c, const char *slot) {
        time_t start = time(NULL);
        while (time(NULL) - start < 60 && !interrupted) {
                ClassAd *msg = NULL;
                GleanCommand cmd;
                char why[512];
                if (glean_msg_recv(c->fd, 60000, &msg, &cmd, why, sizeof why) < 0) {
                        fprintf(stderr, "glean agent run: lost the agent: %s\n", why);
                        return -EIO;
                }
                char *state = NULL;
                bool ended = false;
                if (cmd == GLEAN_CMD_EVENT) {
                        print_event(msg);
                        classad_eval_string(msg, "State", CA_MODE_OLD, &state);
                        classad_eval_bool(msg, "ClaimEnded", CA_MODE_OLD, &ended);
                }
                bool claimed = state && strcmp(state, "Claimed") == 0 && !ended;
                free(state);
                classad_free(msg);
                if (ended) {
                        fprintf(stderr, "glean agent run: %s: the claim ended before it could be used\n", slot);
                        return -EIO;
                }
                if (claimed)
                        return 0;
        }
        fprintf(stderr, "glean agent run: %s did not become Claimed\n", slot);
        return -ETIMEDOUT;
}

/* Activates the claim with job and waits for its end, keeping the claim alive. */
static int run_job(Client *c, const char *claim_id, const char *slot, const ClassAd *job, int64_t keepalive,
                   int *ret_status) {
        int64_t cluster = 0, proc = 0;
        classad_eval_int(job, "ClusterId", CA_MODE_OLD, &cluster);
        classad_eval_int(job, "ProcId", CA_MODE_OLD, &proc);
        char jobid[48];
        snprintf(jobid, sizeof jobid, "%lld.%lld", (long long) cluster, (long long) proc);

        ClassAd *req = NULL, *reply = NULL, *ex = NULL;
        glean_msg_new(GLEAN_CMD_ACTIVATE_CLAIM, &req);
        classad_set_string(req, "ClaimId", claim_id);
        glean_msg_set_ad(req, "JobAd", job);
        int r = request(c, req, &reply, &ex);
        classad_free(req);
        if (r < 0 || !reply_ok(reply, "run")) {
                classad_free(reply);
                classad_free(ex);
                return -EIO;
        }
        char *user = attr_str(reply, "RunAs");
        int64_t pid = 0;
        classad_eval_int(reply, "JobPid", CA_MODE_OLD, &pid);
        fprintf(stderr, "glean agent run: job %s running on %s as %s, pid %lld\n", jobid, slot, user, (long long) pid);
        free(user);
        classad_free(reply);

        bool released = false;
        int64_t next_alive = (int64_t) time(NULL) + keepalive;
        while (!ex) {
                if (interrupted && !released) {
                        fprintf(stderr, "glean agent run: interrupted: releasing the claim (the job is vacated)\n");
                        send_claim_msg(c, GLEAN_CMD_RELEASE, claim_id);
                        released = true;
                }
                int64_t now = (int64_t) time(NULL);
                if (now >= next_alive) {
                        if (send_claim_msg(c, GLEAN_CMD_KEEP_ALIVE, claim_id) < 0)
                                break;
                        next_alive = now + keepalive;
                }
                struct pollfd p = { .fd = c->fd, .events = POLLIN };
                int timeout = (int) (next_alive - now) * 1000;
                int pr = poll(&p, 1, timeout > 0 ? timeout : 0);
                if (pr < 0 && errno == EINTR)
                        continue;
                if (pr <= 0)
                        continue;
                ClassAd *msg = NULL;
                GleanCommand cmd;
                char why[512];
                if (glean_msg_recv(c->fd, TIMEOUT_MS, &msg, &cmd, why, sizeof why) < 0) {
                        fprintf(stderr, "glean agent run: lost the agent: %s\n", why);
                        return -EIO;
                }
                if (cmd == GLEAN_CMD_JOB_EXIT)
                        ex = msg;
                else {
                        if (cmd == GLEAN_CMD_EVENT)
                                print_event(msg);
                        else if (cmd == GLEAN_CMD_REPLY)
                                reply_ok(msg, "run");
                        classad_free(msg);
                }
        }
        if (!ex)
                return -EIO;
        *ret_status = report_exit(jobid, ex);
        classad_free(ex);
        return released ? -EINTR : 0;
}

static int cli_agent_run(Client *c, int argc, char **argv) {
        const char *only = NULL, *file = NULL;
        for (int i = 1; i < argc; i++) {
                if (strcmp(argv[i], "--slot") == 0 && i + 1 < argc)
                        only = argv[++i];
                else if (argv[i][0] == '-' || file)
                        return cli_usage_error("agent run", usage, "unexpected '%s'", argv[i]), CLI_EXIT_USAGE;
                else
                        file = argv[i];
        }
        if (!file)
                return cli_usage_error("agent run", usage, "which submit file?"), CLI_EXIT_USAGE;

        Config *cfg = NULL;
        ConfigError err = {};
        ClassAd **ads = NULL;
        size_t n = 0;
        ConfigSubmitOptions opts = { .cluster_id = 1 };
        int r = config_load_default(&cfg, &err);
        if (r >= 0)
                r = config_submit_parse_file(file, cfg, &opts, &ads, &n, &err);
        int64_t alive = 300;
        if (cfg)
                config_get_int(cfg, "ALIVE_INTERVAL", &alive, &err);
        config_free(cfg);
        if (r < 0) {
                char *m = config_error_format(&err);
                fprintf(stderr, "glean agent run: %s\n", m ? m : strerror(-r));
                free(m);
                return CLI_EXIT_USAGE;
        }
        if (n == 0) {
                fprintf(stderr, "glean agent run: %s queues no job\n", file);
                return CLI_EXIT_USAGE;
        }
        cli_submit_record_umask(ads, n);

        struct sigaction sa = { .sa_handler = on_interrupt };
        sigaction(SIGINT, &sa, NULL);
        sigaction(SIGTERM, &sa, NULL);

        char claim_id[40];
        char *slot = NULL;
        int64_t lease = 1200;
        int status = CLI_EXIT_FAILURE;
        bool ready = true;
        if (claim_id_new(claim_id, sizeof claim_id) < 0 ||
            claim_slot(c, only, ads[0], claim_id, &slot, &lease, &ready) < 0)
                goto out;
        if (!ready && wait_claimed(c, slot) < 0) {
                send_claim_msg(c, GLEAN_CMD_RELEASE, claim_id);
                goto out;
        }
        int64_t keepalive = lease / 3 < alive ? lease / 3 : alive;
        if (keepalive < 1)
                keepalive = 1;
        fprintf(stderr, "glean agent run: claimed %s (lease %lld s, keep-alive every %lld s)\n", slot,
                (long long) lease, (long long) keepalive);
        int last = 0;
        bool all_ok = true;
        for (size_t i = 0; i < n; i++) {
                int st = 0;
                r = run_job(c, claim_id, slot, ads[i], keepalive, &st);
                if (r < 0) {
                        all_ok = false;
                        last = r == -EINTR ? 130 : CLI_EXIT_FAILURE;
                        break;
                }
                last = st;
                all_ok = all_ok && st == 0;
        }
        if (r != -EINTR) {
                ClassAd *req = NULL, *reply = NULL;
                glean_msg_new(GLEAN_CMD_RELEASE, &req);
                classad_set_string(req, "ClaimId", claim_id);
                if (request(c, req, &reply, NULL) >= 0)
                        reply_ok(reply, "run");
                classad_free(req);
                classad_free(reply);
        }
        status = n == 1 ? last : all_ok ? CLI_EXIT_OK : (last ? last : CLI_EXIT_FAILURE);
out:
        free(slot);
        config_submit_free(ads, n);
        return status;
}

int cli_verb_agent(int argc, char **argv) {
        const char *sock = NULL;
        int i = 1;
        while (i < argc && argv[i][0] == '-') {
                if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
                        printf("%s\n", usage);
                        return CLI_EXIT_OK;
                }
                if (strcmp(argv[i], "--socket") == 0 && i + 1 < argc) {
                        sock = argv[i + 1];
                        i += 2;
                        continue;
                }
                return cli_usage_error("agent", usage, "unknown option '%s'", argv[i]), CLI_EXIT_USAGE;
        }
        if (i >= argc)
                return cli_usage_error("agent", usage, "which command?"), CLI_EXIT_USAGE;
        const char *cmd = argv[i];
        typedef int (*Fn)(Client *, int, char **);
        static const struct {
                const char *name;
                Fn fn;
        } cmds[] = {
                { "status", cmd_status },     { "run", cli_agent_run },   { "vacate", cmd_vacate },
                { "drain", cmd_drain },       { "shutdown", cmd_shutdown },
        };
        Fn fn = NULL;
        for (size_t k = 0; k < sizeof cmds / sizeof *cmds; k++)
                if (strcmp(cmds[k].name, cmd) == 0)
                        fn = cmds[k].fn;
        if (!fn)
                return cli_usage_error("agent", usage, "unknown command '%s'", cmd), CLI_EXIT_USAGE;
        char *path = socket_path(sock);
        if (!path)
                return CLI_EXIT_FAILURE;
        Client c;
        int r = client_open(path, &c);
        free(path);
        if (r < 0)
                return CLI_EXIT_FAILURE;
        int status = fn(&c, argc - i, argv + i);
        close(c.fd);
        return status;
}
