/* SPDX-License-Identifier: Apache-2.0 */
/*
 * client.c — the job verbs' client of the central manager: which socket,
 * the handshake, one request and every piece of its reply (jobs.h).
 */
#include <errno.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "common/proto.h"
#include "config/config.h"
#include "jobs.h"

#define CONNECT_TIMEOUT_MS 10000

/* $env, else the knob, else fallback; malloc'd. */
static char *socket_from(const char *env, const char *knob, const char *fallback) {
        const char *e = getenv(env);
        Config *cfg = NULL;
        ConfigError err = {};
        char *v = NULL;

        if (e && *e)
                return strdup(e);
        if (config_load_default(&cfg, &err) >= 0 && config_get(cfg, knob, &v, &err) >= 0 && v && *v) {
                config_free(cfg);
                return v;
        }
        free(v);
        config_free(cfg);
        return strdup(fallback);
}

/* A hint after the transport's reason. */
static const char *hint(int r, bool agent) {
        if (r == -ENOENT)
                return agent ? " (is glean-agent running on this machine?)"
                             : " (glean-negotiator runs on the central manager's machine)";
        if (r == -ECONNREFUSED)
                return agent ? " (glean-agent is not running)" : " (glean-negotiator is not running)";
        if (r == -EACCES)
                return " (permission denied on the socket)";
        return "";
}

static int try_connect(const char *path, char *why, size_t whylen, int *ret_fd) {
        char reason[512] = "";
        int r = glean_client_connect(path, "glean", CONNECT_TIMEOUT_MS, ret_fd, reason, sizeof reason);

        if (r < 0)
                snprintf(why, whylen, "%s", reason[0] ? reason : strerror(-r));
        return r;
}

int cli_cm_connect(const char *verb, const char *socket_opt, CliConn *ret) {
        return cli_cm_connect_via(verb, socket_opt, false, ret);
}

/* Tries path; fills *ret on success. */
static int connect_one(const char *path, bool via_agent, char *why, size_t whylen, CliConn *ret) {
        int fd, r = try_connect(path, why, whylen, &fd);
        char *copy;

        if (r < 0)
                return r;
        copy = strdup(path);
        if (!copy) {
                close(fd);
                snprintf(why, whylen, "out of memory");
                return -ENOMEM;
        }
        *ret = (CliConn){ .fd = fd, .next_id = 1, .path = copy, .via_agent = via_agent };
        return 0;
}

int cli_cm_connect_via(const char *verb, const char *socket_opt, bool agent_first, CliConn *ret) {
        _cleanup_free_ char *cm = NULL, *agent = NULL;
        char why_cm[600] = "", why_agent[600] = "";
        struct stat st;
        int r, r_cm = -ENOENT, r_agent = -ENOENT;

        if (socket_opt) {
                r = connect_one(socket_opt, false, why_cm, sizeof why_cm, ret);
                if (r < 0)
                        fprintf(stderr, "glean %s: cannot talk to %s: %s\n", verb, socket_opt, why_cm);
                return r;
        }

        cm = socket_from("GLEAN_NEGOTIATOR_SOCKET", "NEGOTIATOR_SOCKET", "/run/glean/negotiator.sock");
        agent = socket_from("GLEAN_AGENT_SOCKET", "AGENT_SOCKET", "/run/glean/agent.sock");
        if (!cm || !agent) {
                fprintf(stderr, "glean %s: out of memory\n", verb);
                return -ENOMEM;
        }
        if (agent_first) {
                r_agent = connect_one(agent, true, why_agent, sizeof why_agent, ret);
                if (r_agent >= 0)
                        return 0;
        }
        if (stat(cm, &st) == 0) {
                r_cm = connect_one(cm, false, why_cm, sizeof why_cm, ret);
                if (r_cm >= 0)
                        return 0;
        } else
                snprintf(why_cm, sizeof why_cm, "no such socket");
        if (!agent_first) {
                r_agent = connect_one(agent, true, why_agent, sizeof why_agent, ret);
                if (r_agent >= 0)
                        return 0;
        }
        fprintf(stderr,
                "glean %s: cannot reach the central manager:\n"
                "  its socket %s: %s%s\n"
                "  through this machine's agent at %s: %s%s\n",
                verb, cm, why_cm, hint(r_cm, false), agent, why_agent, hint(r_agent, true));
        return r_agent;
}

int cli_cm_connect_quiet(const char *path, bool via_agent, CliConn *ret, char *why, size_t whylen) {
        return connect_one(path, via_agent, why, whylen, ret);
}

void cli_cm_close(CliConn *c) {
        if (!c)
                return;
        if (c->fd >= 0)
                close(c->fd);
        free(c->path);
        *c = (CliConn){ .fd = -1 };
}

void cli_reply_clear(CliReply *r) {
        if (!r)
                return;
        free(r->reason);
        free(r->errno_name);
        glean_ad_list_free(r->ads, r->n_ads);
        glean_ad_list_free(r->results, r->n_results);
        classad_free(r->last);
        *r = (CliReply){ .count = -1 };
}

/* Appends the list name of msg to *list. */
static int take_list(const ClassAd *msg, const char *name, ClassAd ***list, size_t *n) {
        ClassAd **ads = NULL, **grown;
        size_t k = 0;
        int r = glean_msg_get_ad_list(msg, name, &ads, &k);

        if (r == -ENOENT)
                return 0;
        if (r < 0)
                return r;
        if (k == 0) {
                free(ads);
                return 0;
        }
        grown = realloc(*list, (*n + k) * sizeof(*grown));
        if (!grown) {
                glean_ad_list_free(ads, k);
                return -ENOMEM;
        }
        memcpy(grown + *n, ads, k * sizeof(*ads));
        free(ads);
        *list = grown;
        *n += k;
        return 0;
}

int cli_cm_request(CliConn *c, const char *verb, ClassAd *req, int timeout_ms, CliReply *ret) {
        CliReply rep = { .count = -1 };
        int64_t id = c->next_id++;
        int r;

        classad_set_int(req, "RequestId", id);
        r = glean_msg_send(c->fd, req, timeout_ms < 0 ? CONNECT_TIMEOUT_MS : timeout_ms);
        if (r < 0) {
                fprintf(stderr, "glean %s: cannot send the request to %s: %s\n", verb, c->path,
                        r == -EMSGSIZE ? "larger than a frame" : strerror(-r));
                return r;
        }
        for (;;) {
                ClassAd *msg = NULL;
                GleanCommand cmd;
                char why[512] = "";
                int64_t rid = -1, count;
                bool more = false;

                r = glean_msg_recv(c->fd, timeout_ms, &msg, &cmd, why, sizeof why);
                if (r < 0) {
                        fprintf(stderr, "glean %s: %s %s: %s\n", verb,
                                r == -EBADMSG ? "malformed reply from" : "no answer from", c->path, why);
                        cli_reply_clear(&rep);
                        return r;
                }
                if (cmd != GLEAN_CMD_REPLY ||
                    (classad_eval_int(msg, "RequestId", GLEAN_CA_MODE, &rid) >= 0 && rid != id)) {
                        classad_free(msg); /* not ours: an event, a stale reply */
                        continue;
                }
                rep.pieces++;
                if ((r = take_list(msg, "Ads", &rep.ads, &rep.n_ads)) < 0 ||
                    (r = take_list(msg, "Results", &rep.results, &rep.n_results)) < 0) {
                        fprintf(stderr, "glean %s: malformed reply from %s: %s\n", verb, c->path,
                                r == -ENOMEM ? "out of memory" : "Ads or Results is not a list of ads");
                        classad_free(msg);
                        cli_reply_clear(&rep);
                        return r == -ENOMEM ? r : -EBADMSG;
                }
                if (classad_eval_int(msg, "Count", GLEAN_CA_MODE, &count) >= 0)
                        rep.count = count;
                classad_eval_bool(msg, "More", GLEAN_CA_MODE, &more);
                classad_eval_bool(msg, "Ok", GLEAN_CA_MODE, &rep.ok);
                free(rep.reason);
                rep.reason = NULL;
                if (!rep.ok && classad_eval_string(msg, "Reason", GLEAN_CA_MODE, &rep.reason) < 0)
                        rep.reason = strdup("no reason given");
                free(rep.errno_name);
                rep.errno_name = NULL;
                classad_eval_string(msg, "Errno", GLEAN_CA_MODE, &rep.errno_name);
                classad_free(rep.last);
                rep.last = msg;
                if (!more || !rep.ok)
                        break;
        }
        *ret = rep;
        return 0;
}

int cli_cm_call(const char *verb, const char *socket_opt, ClassAd *req, int timeout_ms, CliReply *ret) {
        CliConn c;
        int r = cli_cm_connect(verb, socket_opt, &c);

        if (r < 0)
                return r;
        r = cli_cm_request(&c, verb, req, timeout_ms, ret);
        cli_cm_close(&c);
        return r;
}

bool cli_opt(const char *arg, const char *name, size_t min) {
        size_t len;

        if (arg[0] != '-')
                return false;
        arg += arg[1] == '-' ? 2 : 1;
        len = strlen(arg);
        if (len == 0 || len > strlen(name))
                return false;
        if (strcmp(arg, name) == 0)
                return true;
        return len >= min && strncmp(arg, name, len) == 0;
}

bool cli_is_job_id(const char *s) {
        size_t d = strspn(s, "0123456789");

        if (d == 0)
                return false;
        if (s[d] == '\0')
                return true;
        return s[d] == '.' && strspn(s + d + 1, "0123456789") > 0 && s[d + 1 + strspn(s + d + 1, "0123456789")] == '\0';
}

char *cli_quote(const char *s) {
        CaValue v = ca_string(s);
        char *text = v.type == CA_STRING ? ca_value_unparse(&v) : NULL;

        ca_value_clear(&v);
        return text;
}

char *cli_user_name(void) {
        struct passwd *pw = getpwuid(getuid());
        char buf[32];

        if (pw && pw->pw_name)
                return strdup(pw->pw_name);
        snprintf(buf, sizeof buf, "%u", (unsigned) getuid());
        return strdup(buf);
}
