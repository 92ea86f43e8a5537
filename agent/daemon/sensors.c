/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sensors.c — what the agent learns of the machine's owner in user space:
 * the idle time of the terminals of logged-in users (their devices' access
 * times, from utmp, as HTCondor does), of the console devices
 * (CONSOLE_DEVICES), and the machine's load average. The kernel probes of
 * bpf/ replace the idle times where they load.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <utmpx.h>

#include "daemon.h"

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
