/* SPDX-License-Identifier: Apache-2.0 */
/*
 * topology.c — how many cores a set of CPUs is on, from the kernel's
 * thread_siblings_list of each CPU (COUNT_HYPERTHREAD_CPUS = False and
 * DETECTED_PHYSICAL_CPUS). The sysfs root is a parameter, so that tests
 * read a fake tree.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "slots-internal.h"

/* The CPUs that share cpu's core (cpu among them), from
 * <root>/devices/system/cpu/cpu<cpu>/topology/thread_siblings_list. */
static int read_siblings(const char *root, unsigned cpu, AgentCpus *ret) {
        char path[4200], line[4096];
        FILE *f;
        int r;

        if (snprintf(path, sizeof(path), "%s/devices/system/cpu/cpu%u/topology/thread_siblings_list", root, cpu) >=
            (int) sizeof(path))
                return -ENAMETOOLONG;
        f = fopen(path, "re");
        if (!f)
                return -errno;
        if (!fgets(line, sizeof(line), f)) {
                fclose(f);
                return -EIO;
        }
        fclose(f);
        line[strcspn(line, "\n")] = '\0';
        r = agent_cpus_parse(line, ret);
        if (r < 0)
                return r;
        if (!agent_cpus_has(ret, cpu))
                return -EINVAL; /* a list that does not hold its own CPU is not one to trust */
        return 0;
}

int agent_cpus_physical(const char *sysfs_root, const AgentCpus *set, int64_t *ret) {
        int64_t cores = 0;

        if (!sysfs_root || !set || !ret)
                return -EINVAL;
        for (unsigned c = 0; c < AGENT_MAX_CPUS; c++) {
                AgentCpus siblings;
                bool first = true;

                if (!agent_cpus_has(set, c))
                        continue;
                /* A core counts at its lowest CPU of the set. */
                if (read_siblings(sysfs_root, c, &siblings) >= 0)
                        for (unsigned s = 0; s < c && first; s++)
                                if (agent_cpus_has(&siblings, s) && agent_cpus_has(set, s))
                                        first = false;
                if (first)
                        cores++;
        }
        *ret = cores;
        return 0;
}
