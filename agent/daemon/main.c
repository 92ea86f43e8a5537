/* SPDX-License-Identifier: Apache-2.0 */
/*
 * main.c — glean-agent: the execute daemon.
 *
 *   glean-agent [--config FILE] [--socket PATH] [--set NAME=VALUE]...
 *
 * Reads the configuration ($GLEAN_CONFIG or /etc/glean/glean.conf, then
 * LOCAL_CONFIG_DIR), detects the machine, carves it into slots
 * (SLOT_TYPE_*), listens on AGENT_SOCKET (default /run/glean/agent.sock)
 * and runs each slot's policy: every POLLING_INTERVAL while a slot is
 * claimed, every UPDATE_INTERVAL otherwise, and at the deadlines of the
 * state machines. SIGTERM: graceful shutdown (claims retire, jobs vacate);
 * a second SIGTERM or SIGINT: fast shutdown (jobs killed). Under systemd:
 * READY=1 once listening, WATCHDOG=1 from the event loop (WatchdogSec=).
 *
 * Exit: 0 after a shutdown; 1 when it cannot start (the reason logged).
 */
#include <errno.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <syslog.h>
#include <unistd.h>

#include <systemd/sd-daemon.h>

#include "common/timer.h"
#include "daemon-start.h"
#include "daemon.h"

static const char usage[] = "usage: glean-agent [--config FILE] [--socket PATH] [--set NAME=VALUE]...\n";

void agent_request_defer(Agent *a) {
        if (a->defer)
                sd_event_source_set_enabled(a->defer, SD_EVENT_ONESHOT);
}

/* Deferred work: free released d-slots, drop dead connections, exit when
 * shutdown has finished. */
static int on_defer(sd_event_source *src, void *userdata) {
        (void) src;
        Agent *a = userdata;
        agent_server_reap(a);
        for (Slot *s = a->slots, *next; s; s = next) {
                next = s->next;
                if (s->release && !s->job)
                        agent_slot_destroy(s);
        }
        if (agent_idle_for_exit(a)) {
                glean_log(LOG_NOTICE, NULL, NULL, 0, "every job is gone; exiting");
                sd_event_exit(a->event, 0);
        }
        return 0;
}

static void begin_shutdown(Agent *a, AgentShutdownHow how) {
        static const char *const names[] = { "graceful", "peaceful", "fast" };
        glean_log(LOG_NOTICE, NULL, NULL, 0, "%s shutdown", names[how]);
        sd_notify(0, "STOPPING=1");
        a->shutting_down = true;
        a->shutdown_how = how;
        AgentEvent ev = { .type = AGENT_EV_SHUTDOWN, .shutdown = how };
        for (Slot *s = a->slots; s; s = s->next) {
                if (s->job && !s->exit_reason)
                        s->exit_reason = "agent shutting down";
                agent_sm_handle(s->sm, agent_now(), &ev, NULL, 0);
        }
        agent_schedule(a);
        agent_request_defer(a);
}

static int on_signal(sd_event_source *src, const struct signalfd_siginfo *si, void *userdata) {
        (void) src;
        Agent *a = userdata;
        if (si->ssi_signo == SIGHUP) {
                glean_log(LOG_NOTICE, NULL, NULL, 0, "SIGHUP: a new configuration takes effect at the next start");
                return 0;
        }
        if (si->ssi_signo == SIGTERM && !a->shutting_down)
                begin_shutdown(a, AGENT_SHUTDOWN_GRACEFUL);
        else
                begin_shutdown(a, AGENT_SHUTDOWN_FAST);
        return 0;
}

int agent_knob_string(const Config *cfg, const char *name, const char *def, char **ret) {
        ConfigError err;
        char *v = NULL;
        int r = config_get(cfg, name, &v, &err);
        if (r == -ENOENT || (r >= 0 && !*v)) {
                free(v);
                *ret = def ? strdup(def) : NULL;
                return def && !*ret ? -ENOMEM : 0;
        }
        if (r < 0) {
                char *m = config_error_format(&err);
                glean_log(LOG_ERR, NULL, NULL, 0, "%s", m ? m : name);
                free(m);
                return r;
        }
        *ret = v;
        return 0;
}

int agent_log_config_error(const ConfigError *err, int r, const char *what) {
        char *m = config_error_format(err);
        glean_log(LOG_ERR, NULL, NULL, 0, "%s: %s", what, m && *m ? m : strerror(-r));
        free(m);
        return r;
}

static int agent_setup(Agent *a, const GleanDaemonArgs *args, const char *socket_path) {
        ConfigError err = { 0 };
        int r = config_load_path(args->config_path, &a->cfg, &err);
        if (r < 0)
                return agent_log_config_error(&err, r, "configuration");
        for (size_t i = 0; i < args->n_sets; i++)
                if ((r = config_set(a->cfg, args->sets[i].name, args->sets[i].value)) < 0)
                        return glean_log_errno(LOG_ERR, r, "--set %s=%s", args->sets[i].name, args->sets[i].value);
        char *level = NULL;
        if (config_get(a->cfg, "AGENT_LOG_LEVEL", &level, &err) >= 0)
                (void) glean_daemon_log_level(level);
        free(level);
        if ((r = agent_cron_configure(a)) < 0)
                return r;
        /* what the configuration asks that glean does not do, each with its line */
        char **lines = NULL;
        (void) config_unenforced(a->cfg, &lines);
        glean_daemon_log_lines(LOG_WARNING, lines);
        lines = NULL;
        (void) config_warnings(a->cfg, &lines);
        glean_daemon_log_lines(LOG_WARNING, lines);
        lines = NULL;
        (void) config_unused(a->cfg, &lines);
        glean_daemon_log_lines(LOG_WARNING, lines);

        if ((r = agent_knob_string(a->cfg, "EXECUTE", "/var/lib/glean/execute", &a->execute)) < 0)
                return r;
        if (socket_path)
                a->socket_path = strdup(socket_path);
        else if ((r = agent_knob_string(a->cfg, "AGENT_SOCKET", "/run/glean/agent.sock", &a->socket_path)) < 0)
                return r;
        if (!a->socket_path)
                return -ENOMEM;
        if (mkdir(a->execute, 0755) < 0 && errno != EEXIST)
                return glean_log_errno(LOG_ERR, errno, "cannot create EXECUTE directory %s", a->execute);

        int64_t v;
        a->polling_interval = config_get_int(a->cfg, "POLLING_INTERVAL", &v, &err) >= 0 && v > 0 ? v : 5;
        a->update_interval = config_get_int(a->cfg, "UPDATE_INTERVAL", &v, &err) >= 0 && v > 0 ? v : 300;
        r = config_get_list(a->cfg, "ADMINISTRATORS", &a->admins, &err);
        if (r < 0 && r != -ENOENT)
                return agent_log_config_error(&err, r, "ADMINISTRATORS");

        if ((r = agent_knob_string(a->cfg, "SLOT_USER", "nobody", &a->slot_user)) < 0)
                return r;
        bool b;
        a->runas.slot_user = a->slot_user;
        a->runas.allow_runas_owner = config_get_bool(a->cfg, "STARTER_ALLOW_RUNAS_OWNER", &b, &err) >= 0 ? b : true;
        a->runas.refuse_unknown_owner =
                config_get_bool(a->cfg, "REFUSE_UNKNOWN_OWNER", &b, &err) >= 0 ? b : false;

        r = agent_idle_knobs(a->cfg, &a->idle, &err);
        if (r < 0)
                return agent_log_config_error(&err, r, "keyboard knobs");
        r = agent_machine_detect(a->cfg, &a->machine, &err);
        if (r < 0)
                return agent_log_config_error(&err, r, "machine resources");
        if ((r = agent_machine_define_detected(a->cfg, &a->machine)) < 0)
                return glean_log_errno(LOG_ERR, r, "cannot define the DETECTED_* macros");
        r = agent_carve_policy(a->cfg, &a->machine, &a->carve, &err);
        if (r < 0)
                return agent_log_config_error(&err, r, "partitionable slot carving");
        r = agent_cgroups_setup(a);
        if (r < 0)
                return glean_log_errno(LOG_ERR, r, "cannot set up the executor");
        a->start_time = agent_now();
        if ((r = agent_sensors_open(a)) < 0)
                return r;
        if ((r = agent_netwatch_open(a)) < 0)
                return r;
        r = agent_slots_create(a, &err);
        if (r < 0)
                return agent_log_config_error(&err, r, "slots");
        unsigned n = 0;
        for (Slot *s = a->slots; s; s = s->next)
                n++;
        glean_log(LOG_NOTICE, NULL, NULL, 0,
                  "%s: %lld CPUs, %lld MB memory, %lld KB disk in %s; %u slots; executor %s; running as uid %d",
                  a->machine.name, (long long) a->machine.total.cpus, (long long) a->machine.total.memory,
                  (long long) a->machine.total.disk, a->execute, n, agent_executor_name(a->exec), (int) getuid());
        if ((r = agent_transfer_setup(a)) < 0)
                return r;
        if ((r = agent_upstream_setup(a)) < 0)
                return r;
        agent_adopt_jobs(a);
        r = sd_event_add_defer(a->event, &a->defer, on_defer, a);
        if (r < 0)
                return r;
        sd_event_source_set_enabled(a->defer, SD_EVENT_OFF);
        if ((r = agent_conns_setup(a)) < 0)
                return r;
        if ((r = agent_cron_start(a)) < 0)
                return r;
        return agent_server_start(a);
}

static void agent_teardown(Agent *a) {
        agent_cron_stop(a);
        agent_upstream_stop(a);
        agent_server_stop(a);
        agent_conns_free(a);
        agent_slots_free(a);
        agent_transfer_stop(a); /* after the slots: their transfers' processes are reaped here */
        agent_upstream_free(a);
        agent_netwatch_close(a);
        agent_sensors_close(a);
        agent_executor_free(a->exec);
        cg_root_free(a->cgroot);
        cg_root_free(a->fork_leaves);
        sd_event_source_unref(a->eval_timer);
        sd_event_source_unref(a->update_timer);
        sd_event_source_unref(a->defer);
        config_strv_free(a->admins);
        carve_policy_free(a->carve);
        config_free(a->cfg);
        free(a->execute);
        free(a->socket_path);
        free(a->slot_user);
        sd_event_unref(a->event);
}

static int on_update_timer(sd_event_source *src, uint64_t usec, void *userdata) {
        Agent *a = userdata;
        agent_refresh_ads(a);
        for (Slot *s = a->slots; s; s = s->next)
                agent_publish(a, s);
        int r = glean_timer_arm(NULL, &src, CLOCK_REALTIME, usec + (uint64_t) a->update_interval * 1000000ULL, 0,
                                NULL, NULL);
        if (r < 0)
                glean_log_errno(LOG_ERR, r, "the timer of the slot updates: %m");
        return 0;
}

int main(int argc, char **argv) {
        const char *socket_path = NULL;
        const GleanDaemonOption own[] = { { "socket", 's', &socket_path, false } };
        GleanDaemonArgs args;
        int r = glean_daemon_args(argc, argv, "glean-agent", usage, own, 1, &args);
        if (r != 0)
                return r == 1 ? 0 : r == -EINVAL ? 2 : 1;

        glean_daemon_begin("glean-agent");
        glean_daemon_raise_fd_limit(NULL);

        Agent a = { 0 };
        r = sd_event_default(&a.event);
        if (r >= 0) {
                sd_event_add_signal(a.event, NULL, SIGTERM, on_signal, &a);
                sd_event_add_signal(a.event, NULL, SIGINT, on_signal, &a);
                sd_event_add_signal(a.event, NULL, SIGHUP, on_signal, &a);
                r = agent_setup(&a, &args, socket_path);
        }
        glean_daemon_args_free(&args);
        if (r >= 0) {
                uint64_t now_usec;
                sd_event_now(a.event, CLOCK_REALTIME, &now_usec);
                r = sd_event_add_time(a.event, &a.update_timer, CLOCK_REALTIME,
                                      now_usec + (uint64_t) a.update_interval * 1000000ULL, 1000000, on_update_timer,
                                      &a);
                if (r >= 0)
                        sd_event_source_set_enabled(a.update_timer, SD_EVENT_ON);
        }
        if (r < 0) {
                glean_log(LOG_ERR, NULL, NULL, 0, "cannot start: %s", strerror(-r));
                agent_teardown(&a);
                cg_scope_free(a.scope);
                return 1;
        }
        agent_evaluate(&a);
        agent_upstream_start(&a);
        /* Under WatchdogSec= the event loop sends WATCHDOG=1 (at half the
         * interval) for as long as it turns; a no-op otherwise. */
        sd_event_set_watchdog(a.event, true);
        sd_notify(0, "READY=1\nSTATUS=running");
        glean_log(LOG_NOTICE, NULL, NULL, 0, "listening on %s", a.socket_path);
        r = sd_event_loop(a.event);
        bool clean = r >= 0 && a.shutting_down;
        agent_teardown(&a);
        /* Every job is gone: the jobs' scope too (cgroup-systemd.c). */
        if (clean)
                cg_scope_end(a.scope);
        cg_scope_free(a.scope);
        return r < 0 ? 1 : 0;
}
