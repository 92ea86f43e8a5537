/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cpus.c — sets of CPU numbers for ASSIGN_CPU_AFFINITY: the kernel's list
 * format in and out, taking a slot's CPUs out of a pool and giving them
 * back, and the shell that reads the agent's own affinity mask.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "slots-internal.h"

void agent_cpus_add(AgentCpus *set, unsigned cpu) {
        if (cpu < AGENT_MAX_CPUS)
                set->bits[cpu / 64] |= UINT64_C(1) << (cpu % 64);
}

static void cpus_del(AgentCpus *set, unsigned cpu) {
        set->bits[cpu / 64] &= ~(UINT64_C(1) << (cpu % 64));
}

bool agent_cpus_has(const AgentCpus *set, unsigned cpu) {
        return cpu < AGENT_MAX_CPUS && (set->bits[cpu / 64] >> (cpu % 64)) & 1;
}

unsigned agent_cpus_count(const AgentCpus *set) {
        unsigned n = 0;

        for (size_t i = 0; i < AGENT_MAX_CPUS / 64; i++)
                n += (unsigned) __builtin_popcountll(set->bits[i]);
        return n;
}

static const char *skip_space(const char *s) {
        while (isspace((unsigned char) *s))
                s++;
        return s;
}

/* A CPU number at *s: digits only, below AGENT_MAX_CPUS. */
static int parse_cpu(const char **s, unsigned *ret) {
        unsigned long v = 0;
        const char *p = *s;

        if (!isdigit((unsigned char) *p))
                return -EINVAL;
        for (; isdigit((unsigned char) *p); p++) {
                v = v * 10 + (unsigned long) (*p - '0');
                if (v >= AGENT_MAX_CPUS)
                        return -EINVAL;
        }
        *s = p;
        *ret = (unsigned) v;
        return 0;
}

int agent_cpus_parse(const char *text, AgentCpus *ret) {
        AgentCpus set = {};
        const char *s;

        if (!text)
                return -EINVAL;
        s = skip_space(text);
        while (*s) {
                unsigned lo, hi;

                if (parse_cpu(&s, &lo) < 0)
                        return -EINVAL;
                hi = lo;
                s = skip_space(s);
                if (*s == '-') {
                        s = skip_space(s + 1);
                        if (parse_cpu(&s, &hi) < 0 || hi < lo)
                                return -EINVAL;
                        s = skip_space(s);
                }
                for (unsigned c = lo; c <= hi; c++)
                        agent_cpus_add(&set, c);
                if (*s == ',') {
                        s = skip_space(s + 1);
                        if (!*s)
                                return -EINVAL; /* "0," */
                } else if (*s)
                        return -EINVAL;
        }
        *ret = set;
        return 0;
}

int agent_cpus_format(const AgentCpus *set, bool ranges, char *buf, size_t len) {
        size_t used = 0;
        bool fits = true;

        if (!buf || len == 0)
                return -ENOBUFS;
        buf[0] = '\0';
        for (unsigned c = 0; c < AGENT_MAX_CPUS && fits; c++) {
                unsigned end = c;
                char item[32];
                int n;

                if (!agent_cpus_has(set, c))
                        continue;
                if (ranges)
                        while (end + 1 < AGENT_MAX_CPUS && agent_cpus_has(set, end + 1))
                                end++;
                if (end > c)
                        n = snprintf(item, sizeof(item), "%s%u-%u", used ? "," : "", c, end);
                else
                        n = snprintf(item, sizeof(item), "%s%u", used ? "," : "", c);
                if (n < 0 || used + (size_t) n >= len) {
                        fits = false;
                        break;
                }
                memcpy(buf + used, item, (size_t) n + 1);
                used += (size_t) n;
                c = end;
        }
        return fits ? 0 : -ENOBUFS;
}

int agent_cpus_take(AgentCpus *pool, unsigned n, AgentCpus *ret) {
        AgentCpus got = {};
        unsigned start = 0, run = 0;
        bool found = false;

        if (agent_cpus_count(pool) < n)
                return -ENOSPC;
        /* The lowest run of n consecutive CPUs... */
        for (unsigned c = 0; c < AGENT_MAX_CPUS && n > 0 && !found; c++) {
                if (!agent_cpus_has(pool, c)) {
                        run = 0;
                        continue;
                }
                if (run++ == 0)
                        start = c;
                found = run == n;
        }
        if (found)
                for (unsigned c = start; c < start + n; c++)
                        agent_cpus_add(&got, c);
        else
                /* ... else the n lowest. */
                for (unsigned c = 0, k = 0; c < AGENT_MAX_CPUS && k < n; c++)
                        if (agent_cpus_has(pool, c)) {
                                agent_cpus_add(&got, c);
                                k++;
                        }
        for (unsigned c = 0; c < AGENT_MAX_CPUS; c++)
                if (agent_cpus_has(&got, c))
                        cpus_del(pool, c);
        *ret = got;
        return 0;
}

void agent_cpus_give(AgentCpus *pool, const AgentCpus *set) {
        for (size_t i = 0; i < AGENT_MAX_CPUS / 64; i++)
                pool->bits[i] |= set->bits[i];
}

int agent_cpus_allowed(AgentCpus *ret) {
        size_t size = CPU_ALLOC_SIZE(AGENT_MAX_CPUS);
        cpu_set_t *mask = CPU_ALLOC(AGENT_MAX_CPUS);
        AgentCpus set = {};

        if (!mask)
                return -ENOMEM;
        CPU_ZERO_S(size, mask);
        if (sched_getaffinity(0, size, mask) < 0) {
                int r = -errno;

                CPU_FREE(mask);
                return r;
        }
        for (unsigned c = 0; c < AGENT_MAX_CPUS; c++)
                if (CPU_ISSET_S(c, size, mask))
                        agent_cpus_add(&set, c);
        CPU_FREE(mask);
        *ret = set;
        return 0;
}
