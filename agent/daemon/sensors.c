/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sensors.c — what the agent learns of the machine's owner and of its
 * slots' load. From the kernel (bpf/sensors.h), each with the first method
 * the kernel accepts: the last key and pointer event (INPUT_SENSOR_METHODS),
 * the last input to a pseudo-terminal (TTY_SENSOR_METHODS), the runnable
 * tasks of each slot's cgroup (LOAD_SENSOR). In user space, always: the
 * access times of the terminals of logged-in users (from utmp, as HTCondor
 * does) and of CONSOLE_DEVICES, the machine's load average, and pressure
 * stall information (PSI) of the machine and of each slot's cgroup.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>
#include <utmpx.h>

#include "common/timer.h"
#include "daemon.h"
#include "psi.h"

#define IDLE_UNKNOWN INT32_MAX /* "assuming infinite keyboard idle time", as HTCondor */

static int64_t dev_idle(const char *dev, int64_t now, dev_t null_rdev) {
        char path[300];
        if (dev[0] == '/')
                snprintf(path, sizeof path, "%s", dev);
        else
                snprintf(path, sizeof path, "/dev/%s", dev);
        struct stat st;
        if (stat(path, &st) < 0)
                return IDLE_UNKNOWN;
        /* Devices of /dev/null's driver (null, zero, kmem...) tell nothing. */
        if (S_ISCHR(st.st_mode) && major(st.st_rdev) == major(null_rdev))
                return IDLE_UNKNOWN;
        int64_t idle = now - (int64_t) st.st_atime;
        return idle < 0 ? 0 : idle;
}

/* Seconds since the kernel last saw input of class c; IDLE_UNKNOWN when it
 * has seen none since the sensors were opened (the other sources speak). */
static int64_t sensor_idle(const Agent *a, GleanInputClass c, uint64_t now_boot) {
        uint64_t last = 0;
        if (!a->sensors || glean_sensors_input(a->sensors, c, &last, NULL) < 0 || last == 0)
                return IDLE_UNKNOWN;
        return last >= now_boot ? 0 : (int64_t) ((now_boot - last) / 1000000000ULL);
}

static int64_t min64(int64_t a, int64_t b) {
        return a < b ? a : b;
}

void agent_sense_idle(const Agent *a, int64_t now, int64_t *ret_kbd, int64_t *ret_console) {
        struct stat nst;
        dev_t null_rdev = stat("/dev/null", &nst) == 0 ? nst.st_rdev : 0;
        int64_t kbd = IDLE_UNKNOWN;

        setutxent();
        struct utmpx *u;
        while ((u = getutxent())) {
                if (u->ut_type != USER_PROCESS || !u->ut_line[0])
                        continue;
                char line[sizeof u->ut_line + 1];
                memcpy(line, u->ut_line, sizeof u->ut_line);
                line[sizeof u->ut_line] = 0;
                int64_t idle = dev_idle(line, now, null_rdev);
                if (idle < kbd)
                        kbd = idle;
        }
        endutxent();

        int64_t console = IDLE_UNKNOWN;
        char **devs = NULL;
        ConfigError err;
        if (config_get_list(a->cfg, "CONSOLE_DEVICES", &devs, &err) >= 0) {
                for (size_t i = 0; devs[i]; i++) {
                        const char *d = strncmp(devs[i], "/dev/", 5) == 0 ? devs[i] + 5 : devs[i];
                        int64_t idle = dev_idle(d, now, null_rdev);
                        if (idle < console)
                                console = idle;
                }
                config_strv_free(devs);
        }
        /* The kernel's view: keys for both, the pointer for the console,
         * pseudo-terminal input (SSH sessions) for the keyboard. */
        uint64_t nb = glean_sensors_boot_ns();
        int64_t keys = sensor_idle(a, GLEAN_INPUT_CLASS_KEYBOARD, nb);
        console = min64(console, min64(keys, sensor_idle(a, GLEAN_INPUT_CLASS_POINTER, nb)));
        kbd = min64(kbd, min64(keys, sensor_idle(a, GLEAN_INPUT_CLASS_TTY, nb)));

        /* The console counts for the keyboard too; ConsoleIdle >= KeyboardIdle. */
        if (console < kbd)
                kbd = console;
        if (console == IDLE_UNKNOWN)
                console = -1; /* unknown: not advertised */
        else if (console < kbd)
                console = kbd;
        *ret_kbd = kbd;
        *ret_console = console;
}

double agent_sense_loadavg(void) {
        FILE *f = fopen("/proc/loadavg", "re");
        double l = 0;
        if (f) {
                if (fscanf(f, "%lf", &l) != 1)
                        l = 0;
                fclose(f);
        }
        return l;
}

/* ---- the kernel sensors ---- */

static int knob_list(Agent *a, const char *name, char ***ret) {
        ConfigError err = { 0 };
        int r = config_get_list(a->cfg, name, ret, &err);
        if (r == -ENOENT) {
                *ret = NULL; /* the defaults */
                return 0;
        }
        return r < 0 ? agent_log_config_error(&err, r, name) : r;
}

static int on_sensor_io(sd_event_source *src, int fd, uint32_t revents, void *userdata) {
        (void) src;
        (void) fd;
        (void) revents;
        Agent *a = userdata;
        glean_sensors_dispatch(a->sensors);
        return 0;
}

static int on_sensor_timer(sd_event_source *src, uint64_t usec, void *userdata) {
        Agent *a = userdata;
        agent_sensors_sample(a);
        glean_sensors_rescan(a->sensors);
        int r = glean_timer_arm(NULL, &src, CLOCK_MONOTONIC, usec + (uint64_t) a->sensor_interval * 1000000ULL, 0,
                                NULL, NULL);
        if (r < 0)
                glean_log_errno(LOG_ERR, r, "the sensors' timer: %m");
        return 0;
}

/* One record per sensor: the method in use, and what was refused first. */
static void log_sensor(const Agent *a, GleanSensorKind kind, const char *fallback) {
        const char *m = glean_sensors_method(a->sensors, kind);
        const char *refused = glean_sensors_refused(a->sensors, kind);
        bool none = strcmp(m, "none") == 0;
        GleanLogField f[] = {
                { "GLEAN_SENSOR", glean_sensor_kind_name(kind) },
                { "GLEAN_METHOD", none ? fallback : m },
                { "GLEAN_REFUSED", refused },
        };
        size_t n_refused = 0; /* "a: why; b: why" */
        if (*refused) {
                n_refused = 1;
                for (const char *p = refused; (p = strstr(p, "; ")); p += 2)
                        n_refused++;
        }
        glean_log(*refused ? LOG_WARNING : LOG_INFO, NULL, f, *refused ? 3 : 2, "%s sensor: %s%s%s",
                  glean_sensor_kind_name(kind), none ? fallback : m, none ? " (user space)" : " (kernel)",
                  n_refused == 0 ? "" : n_refused == 1 ? "; 1 method refused (GLEAN_REFUSED)"
                                                       : "; methods refused (GLEAN_REFUSED)");
}

int agent_sensors_open(Agent *a) {
        ConfigError err = { 0 };
        bool load = true;
        double d;
        int64_t v;
        if (config_get_bool(a->cfg, "LOAD_SENSOR", &load, &err) < 0)
                load = true;
        /* Without cgroups (the fork executor) there is no slot to count:
         * the scheduler's probes would run at every switch for nothing. */
        load = load && a->cgroot;
        a->load_decay = config_get_real(a->cfg, "SLOT_LOAD_DECAY_TIME", &d, &err) >= 0 && d >= 0 ? d : 60;
        a->sensor_interval = config_get_int(a->cfg, "SENSOR_SAMPLE_INTERVAL", &v, &err) >= 0 && v > 0 ? v : 5;

        char **input = NULL, **tty = NULL, **irqs = NULL;
        int r;
        if ((r = knob_list(a, "INPUT_SENSOR_METHODS", &input)) < 0 || (r = knob_list(a, "TTY_SENSOR_METHODS", &tty)) < 0)
                goto out;
        if ((r = knob_list(a, "INPUT_SENSOR_IRQS", &irqs)) < 0)
                goto out;
        static char *no_methods[] = { NULL };
        GleanSensorConfig cfg = { .input_methods = input, .tty_methods = tty, .irq_names = irqs, .load = load };
        if (geteuid() != 0) { /* the kernel sensors need root: user space only */
                cfg.input_methods = cfg.tty_methods = no_methods;
                cfg.load = false;
        }
        r = glean_sensors_open(&cfg, &a->sensors);
        if (r < 0) {
                glean_log_errno(LOG_WARNING, r, "the kernel sensors: %m; user space only");
                r = 0;
                goto out;
        }
        if (geteuid() != 0)
                glean_log(LOG_NOTICE, NULL, NULL, 0, "not root: no kernel sensors, user space only");
        else {
                log_sensor(a, GLEAN_SENSOR_INPUT, "none");
                log_sensor(a, GLEAN_SENSOR_TTY, "atime");
                if (load)
                        log_sensor(a, GLEAN_SENSOR_LOAD, "cpu.stat");
        }
        int fd = glean_sensors_fd(a->sensors);
        if (fd >= 0 && (r = sd_event_add_io(a->event, &a->sensor_io, fd, EPOLLIN, on_sensor_io, a)) < 0)
                goto out;
        uint64_t now;
        sd_event_now(a->event, CLOCK_MONOTONIC, &now);
        r = sd_event_add_time(a->event, &a->sensor_timer, CLOCK_MONOTONIC,
                              now + (uint64_t) a->sensor_interval * 1000000ULL, 100000, on_sensor_timer, a);
        if (r >= 0)
                sd_event_source_set_enabled(a->sensor_timer, SD_EVENT_ON);
out:
        config_strv_free(input);
        config_strv_free(tty);
        config_strv_free(irqs);
        return r;
}

void agent_sensors_close(Agent *a) {
        a->sensor_io = sd_event_source_disable_unref(a->sensor_io);
        a->sensor_timer = sd_event_source_disable_unref(a->sensor_timer);
        glean_sensors_free(a->sensors);
        a->sensors = NULL;
}

void agent_sensors_slot_add(Slot *s) {
        s->load_idx = -1;
        Agent *a = s->agent;
        if (!a->sensors || !s->cg || strcmp(glean_sensors_method(a->sensors, GLEAN_SENSOR_LOAD), "none") == 0)
                return;
        unsigned idx;
        int r = glean_sensors_slot_add(a->sensors, cg_dirfd(s->cg), &idx);
        if (r < 0) {
                GleanLogField f[] = { { "GLEAN_SLOT", s->name } };
                glean_log(LOG_WARNING, NULL, f, 1, "%s: its load is not counted by the kernel (%s): from CPU time",
                          s->name, strerror(-r));
                return;
        }
        s->load_idx = (int) idx;
        s->load_sampled = false;
}

void agent_sensors_slot_remove(Slot *s) {
        if (s->load_idx >= 0 && s->agent->sensors)
                glean_sensors_slot_remove(s->agent->sensors, (unsigned) s->load_idx);
        s->load_idx = -1;
}

void agent_sensors_sample(Agent *a) {
        for (Slot *s = a->slots; s; s = s->next) {
                uint64_t integral, t;
                if (s->load_idx < 0 ||
                    glean_sensors_slot_runnable(a->sensors, (unsigned) s->load_idx, &integral, &t) < 0)
                        continue;
                if (s->load_sampled && t > s->load_t) {
                        double dt = (double) (t - s->load_t) / 1e9;
                        /* Differences modulo 2^64: see bpf/sensors-shared.h. */
                        double mean = (double) (int64_t) (integral - s->load_integral) / 1e9 / dt;
                        s->condor_load = agent_load_decay(s->condor_load, mean < 0 ? 0 : mean, dt, a->load_decay);
                }
                s->load_integral = integral;
                s->load_t = t;
                s->load_sampled = true;
        }
}

void agent_sensors_ad(const Agent *a, Slot *s) {
        const char *in = glean_sensors_method(a->sensors, GLEAN_SENSOR_INPUT);
        const char *tty = glean_sensors_method(a->sensors, GLEAN_SENSOR_TTY);
        classad_set_string(s->ad, "InputSensor", in);
        classad_set_string(s->ad, "TtySensor", strcmp(tty, "none") == 0 ? "atime" : tty);
        classad_set_string(s->ad, "LoadSensor", s->load_idx >= 0 ? "tp_btf" : "cpu.stat");
}

/* ---- pressure ---- */

void agent_sense_pressure(Agent *a) {
        AgentPsiSet machine;
        char why[256];
        int r = agent_psi_read_machine(&machine, why, sizeof why);
        if (r < 0 && r != -ENOENT && !a->psi_warned) {
                glean_log(LOG_WARNING, NULL, NULL, 0, "pressure stall information: %s", why);
                a->psi_warned = true;
        }
        for (Slot *s = a->slots; s; s = s->next) {
                agent_psi_to_ad(&machine, "Total", s->ad);
                AgentPsiSet own = { 0 };
                if (s->cg)
                        agent_psi_read_dir(cg_dirfd(s->cg), &own, why, sizeof why);
                agent_psi_to_ad(&own, "", s->ad);
                CgUsage u;
                if (s->cg && cg_usage(s->cg, &u) == 0)
                        classad_set_real(s->ad, "SlotCpuTime", (double) u.usage_usec / 1e6);
        }
}
