/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sensors.c — `glean sensors`: what the agent senses of the machine's
 * owner and of its slots, and by which method.
 *
 *   glean sensors [--socket PATH] [--watch SECONDS]
 *           the agent's readings: the methods in use (InputSensor,
 *           TtySensor, LoadSensor), KeyboardIdle, ConsoleIdle, the load,
 *           the pressure (PSI) of the machine and of each slot
 *   glean sensors --local [--watch SECONDS]
 *           loads the kernel sensors in this process (root), with the
 *           configuration's INPUT_SENSOR_METHODS, TTY_SENSOR_METHODS and
 *           INPUT_SENSOR_IRQS: the methods taken, what was refused and
 *           why, and the input events seen — to try the probes on a
 *           machine without disturbing its agent
 *
 * --watch repeats every SECONDS until interrupted.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bpf/sensors.h"
#include "cli.h"
#include "common/proto.h"
#include "config/config.h"

static const char usage[] =
        "usage: glean sensors [--socket PATH] [--watch SECONDS]\n"
        "       glean sensors --local [--watch SECONDS]";

static volatile sig_atomic_t stop;

static void on_signal(int sig) {
        (void) sig;
        stop = 1;
}

static double real_of(const ClassAd *ad, const char *name, double def) {
        double v = def;
        classad_eval_real(ad, name, CA_MODE_OLD, &v);
        return v;
}

static char *str_of(const ClassAd *ad, const char *name) {
        char *v = NULL;
        if (classad_eval_string(ad, name, CA_MODE_OLD, &v) < 0)
                return strdup("-");
        return v;
}

/* "12 s", "3 min", "unknown": an idle time. */
static void idle_text(const ClassAd *ad, const char *name, char *buf, size_t len) {
        int64_t v = -1;
        if (classad_eval_int(ad, name, CA_MODE_OLD, &v) < 0 || v < 0)
                snprintf(buf, len, "unknown");
        else if (v >= INT32_MAX)
                snprintf(buf, len, "never seen");
        else if (v < 120)
                snprintf(buf, len, "%lld s", (long long) v);
        else if (v < 7200)
                snprintf(buf, len, "%lld min", (long long) (v / 60));
        else
                snprintf(buf, len, "%lld h", (long long) (v / 3600));
}

static void print_pressure(const ClassAd *ad, const char *prefix) {
        static const char *const res[] = { "Cpu", "Memory", "Io" };
        for (size_t i = 0; i < 3; i++) {
                char a[64], b[64], c[64];
                snprintf(a, sizeof a, "%s%sPressureSome10", prefix, res[i]);
                snprintf(b, sizeof b, "%s%sPressureSome60", prefix, res[i]);
                snprintf(c, sizeof c, "%s%sPressureSome300", prefix, res[i]);
                double x = real_of(ad, a, -1), y = real_of(ad, b, -1), z = real_of(ad, c, -1);
                if (x < 0)
                        printf("  %-7s -\n", res[i]);
                else
                        printf("  %-7s %6.2f %6.2f %6.2f\n", res[i], x, y, z);
        }
}

static int show_agent(const char *sock) {
        ClassAd **ads = NULL;
        size_t n = 0;
        if (cli_agent_status(sock, &ads, &n) < 0)
                return CLI_EXIT_FAILURE;
        if (n == 0) {
                fprintf(stderr, "glean sensors: the agent has no slot\n");
                glean_ad_list_free(ads, n);
                return CLI_EXIT_FAILURE;
        }
        const ClassAd *m = ads[0];
        char *in = str_of(m, "InputSensor"), *tty = str_of(m, "TtySensor");
        char kbd[32], con[32];
        idle_text(m, "KeyboardIdle", kbd, sizeof kbd);
        idle_text(m, "ConsoleIdle", con, sizeof con);
        printf("methods: input %s, tty %s (the agent's log says what was refused and why)\n", in, tty);
        printf("machine: KeyboardIdle %s, ConsoleIdle %s, TotalLoadAvg %.2f, TotalCondorLoadAvg %.2f\n", kbd, con,
               real_of(m, "TotalLoadAvg", 0), real_of(m, "TotalCondorLoadAvg", 0));
        printf("machine pressure, some %% of 10/60/300 s:\n");
        print_pressure(m, "Total");
        printf("\n%-12s %-18s %-9s %8s %8s %9s %10s %6s %6s %6s\n", "SLOT", "STATE", "LOAD", "LoadAvg", "Condor",
               "Keyboard", "CpuTime", "cpu%", "mem%", "io%");
        for (size_t i = 0; i < n; i++) {
                char *name = str_of(ads[i], "Name"), *st = str_of(ads[i], "State"), *act = str_of(ads[i], "Activity"),
                     *load = str_of(ads[i], "LoadSensor");
                char state[64], k[32];
                snprintf(state, sizeof state, "%s/%s", st, act);
                idle_text(ads[i], "KeyboardIdle", k, sizeof k);
                double cpu = real_of(ads[i], "SlotCpuTime", -1);
                char cpus[32] = "-";
                if (cpu >= 0)
                        snprintf(cpus, sizeof cpus, "%.1f s", cpu);
                printf("%-12.*s %-18s %-9s %8.2f %8.2f %9s %10s", (int) strcspn(name, "@"), name, state, load,
                       real_of(ads[i], "LoadAvg", 0), real_of(ads[i], "CondorLoadAvg", 0), k, cpus);
                static const char *const p[] = { "CpuPressureSome10", "MemoryPressureSome10", "IoPressureSome10" };
                for (size_t j = 0; j < 3; j++) {
                        double v = real_of(ads[i], p[j], -1);
                        if (v < 0)
                                printf(" %6s", "-");
                        else
                                printf(" %6.2f", v);
                }
                printf("\n");
                free(name);
                free(st);
                free(act);
                free(load);
        }
        free(in);
        free(tty);
        glean_ad_list_free(ads, n);
        return CLI_EXIT_OK;
}

/* ---- --local ---- */

static char **knob_list(Config *cfg, const char *name) {
        char **v = NULL;
        ConfigError err;
        if (!cfg || config_get_list(cfg, name, &v, &err) < 0)
                return NULL;
        return v;
}

static void show_local(GleanSensors *s) {
        static const char *const classes[] = { "keyboard", "pointer", "tty" };
        glean_sensors_dispatch(s);
        uint64_t now = glean_sensors_boot_ns(); /* after: dispatch stamps what it reads */
        for (int c = 0; c < _GLEAN_INPUT_CLASS_MAX; c++) {
                uint64_t last = 0, count = 0;
                glean_sensors_input(s, (GleanInputClass) c, &last, &count);
                if (last)
                        printf("  %-8s %8llu events, the last %.1f s ago\n", classes[c], (unsigned long long) count,
                               (double) (now - last) / 1e9);
                else
                        printf("  %-8s %8llu events\n", classes[c], (unsigned long long) count);
        }
}

static int run_local(int watch) {
        if (geteuid() != 0) {
                fprintf(stderr, "glean sensors --local: the kernel sensors need root\n");
                return CLI_EXIT_FAILURE;
        }
        Config *cfg = NULL;
        ConfigError err;
        if (config_load_default(&cfg, &err) < 0)
                cfg = NULL;
        char **in = knob_list(cfg, "INPUT_SENSOR_METHODS"), **tty = knob_list(cfg, "TTY_SENSOR_METHODS"),
             **irqs = knob_list(cfg, "INPUT_SENSOR_IRQS");
        GleanSensorConfig sc = { .input_methods = in, .tty_methods = tty, .irq_names = irqs, .load = true };
        GleanSensors *s = NULL;
        int r = glean_sensors_open(&sc, &s);
        config_strv_free(in);
        config_strv_free(tty);
        config_strv_free(irqs);
        config_free(cfg);
        if (r < 0) {
                fprintf(stderr, "glean sensors --local: %s\n", strerror(-r));
                return CLI_EXIT_FAILURE;
        }
        for (int k = 0; k < _GLEAN_SENSOR_MAX; k++) {
                const char *refused = glean_sensors_refused(s, (GleanSensorKind) k);
                printf("%-5s %s\n", glean_sensor_kind_name((GleanSensorKind) k),
                       glean_sensors_method(s, (GleanSensorKind) k));
                if (*refused)
                        printf("      refused: %s\n", refused);
        }
        printf("input seen since the sensors were loaded:\n");
        show_local(s);
        while (watch > 0 && !stop) {
                sleep((unsigned) watch);
                if (stop)
                        break;
                glean_sensors_rescan(s);
                printf("\n");
                show_local(s);
                fflush(stdout);
        }
        glean_sensors_free(s);
        return CLI_EXIT_OK;
}

int cli_verb_sensors(int argc, char **argv) {
        const char *sock = NULL;
        bool local = false;
        int watch = 0;
        for (int i = 1; i < argc; i++) {
                if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
                        printf("%s\n", usage);
                        return CLI_EXIT_OK;
                } else if (strcmp(argv[i], "--local") == 0)
                        local = true;
                else if (strcmp(argv[i], "--socket") == 0 && i + 1 < argc)
                        sock = argv[++i];
                else if (strcmp(argv[i], "--watch") == 0 && i + 1 < argc) {
                        char *end;
                        long w = strtol(argv[++i], &end, 10);
                        if (*end || w <= 0 || w > 86400)
                                return cli_usage_error("sensors", usage, "--watch takes seconds (1 to 86400), not '%s'",
                                                       argv[i]),
                                       CLI_EXIT_USAGE;
                        watch = (int) w;
                } else
                        return cli_usage_error("sensors", usage, "unexpected '%s'", argv[i]), CLI_EXIT_USAGE;
        }
        if (local && sock)
                return cli_usage_error("sensors", usage, "--local and --socket exclude each other"), CLI_EXIT_USAGE;
        struct sigaction sa = { .sa_handler = on_signal };
        sigaction(SIGINT, &sa, NULL);
        sigaction(SIGTERM, &sa, NULL);
        if (local)
                return run_local(watch);
        int status;
        for (;;) {
                status = show_agent(sock);
                if (watch == 0 || stop || status != CLI_EXIT_OK)
                        return status;
                sleep((unsigned) watch);
                if (stop)
                        return status;
                printf("\n");
                fflush(stdout);
        }
}
