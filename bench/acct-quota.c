/* SPDX-License-Identifier: Apache-2.0 */
/*
 * acct-quota — the hierarchical group quota function (accounting/quota.c)
 * on a large tree: what the central manager computes every negotiation
 * cycle.
 *
 * Usage: acct-quota [--repeat K]
 *
 * The workload (splitmix64, fixed seed; no clock): 9,999 groups under the
 * root, four levels deep (10 top-level groups, 100 below them, 1,000 below
 * those, 8,889 leaves under random level-3 parents), a pool of 100,000
 * slots. A quarter of the groups have a static quota, half a dynamic one
 * (some siblings over-subscribe their parent, so some are scaled), the
 * rest none; half accept surplus; each group's own submitters demand 0 to
 * 60 slots.
 *
 * Figures, one "name = value" line each, single thread, CLOCK_MONOTONIC:
 *
 *   groups_from_config_ms  acct_groups_from_config() of that configuration
 *   quota_compute_us       acct_quotas_compute(), median of K runs (default
 *                          201), each averaged over enough calls to last
 *                          >= 20 ms; the goal is under 1,000
 *   quota_compute_us_min   the fastest of those runs (a busy machine
 *                          shows in the median first)
 *   groups, warnings, allocated_of_pool  what it computed (a sanity line)
 */

#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "accounting.h"

#define LEVEL1 10
#define LEVEL2 100
#define LEVEL3 1000
#define LEVEL4 8889
#define POOL 100000.0
#define MIN_RUN_S 0.02

static uint64_t rng_state = 12;

static uint64_t rnd(void) { /* splitmix64 */
        uint64_t z = (rng_state += 0x9e3779b97f4a7c15);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9;
        z = (z ^ (z >> 27)) * 0x94d049bb133111eb;
        return z ^ (z >> 31);
}

static unsigned below(unsigned n) {
        return (unsigned) (rnd() % n);
}

static double now_s(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double) ts.tv_sec + (double) ts.tv_nsec * 1e-9;
}

typedef struct Text {
        char *s;
        size_t len, cap;
} Text;

__attribute__((format(printf, 2, 3))) static void add(Text *t, const char *fmt, ...) {
        va_list ap;
        int n;

        for (;;) {
                va_start(ap, fmt);
                n = vsnprintf(t->s + t->len, t->cap - t->len, fmt, ap);
                va_end(ap);
                if (n >= 0 && (size_t) n < t->cap - t->len)
                        break;
                t->cap = 2 * t->cap + (size_t) n;
                t->s = realloc(t->s, t->cap);
                if (!t->s) {
                        fprintf(stderr, "out of memory\n");
                        exit(1);
                }
        }
        t->len += (size_t) n;
}

/* The configuration of the workload above. */
static char *workload(void) {
        static const unsigned level_size[] = { LEVEL1, LEVEL2, LEVEL3, LEVEL4 };
        static char names[LEVEL1 + LEVEL2 + LEVEL3 + LEVEL4][48];
        Text t = { .cap = 1 << 20 };
        unsigned first = 0, prev_first = 0, prev_n = 0, id = 0;

        t.s = malloc(t.cap);
        if (!t.s)
                return NULL;
        t.s[0] = '\0';
        add(&t, "GROUP_ACCEPT_SURPLUS = False\n");
        for (unsigned level = 0; level < 4; level++) {
                for (unsigned i = 0; i < level_size[level]; i++, id++) {
                        char *name = names[first + i];
                        /* level 2 and 3: ten under each; leaves under random parents */
                        unsigned parent = prev_first + (level < 3 ? i / 10 : below(prev_n));
                        char buf[sizeof names[0]];
                        if (level == 0)
                                snprintf(buf, sizeof buf, "g%u", id);
                        else
                                snprintf(buf, sizeof buf, "%s.g%u", names[parent], id);
                        memcpy(name, buf, sizeof buf);
                        switch (below(4)) {
                        case 0:
                                add(&t, "GROUP_QUOTA_%s = %u\n", name, 1 + below(level == 0 ? 20000 : 400));
                                break;
                        case 1:
                        case 2:
                                add(&t, "GROUP_QUOTA_DYNAMIC_%s = %.3f\n", name, (1 + below(250)) / 1000.0);
                                break;
                        default:
                                break;
                        }
                        if (below(2))
                                add(&t, "GROUP_ACCEPT_SURPLUS_%s = True\n", name);
                }
                prev_first = first;
                prev_n = level_size[level];
                first += level_size[level];
        }
        add(&t, "GROUP_NAMES =");
        for (unsigned i = 0; i < first; i++)
                add(&t, " %s", names[i]);
        add(&t, "\n");
        return t.s;
}

static int cmp_double(const void *a, const void *b) {
        double x = *(const double *) a, y = *(const double *) b;
        return (x > y) - (x < y);
}

int main(int argc, char **argv) {
        static const struct option options[] = { { "repeat", required_argument, NULL, 'r' }, {} };
        unsigned repeat = 201;
        ConfigError err = {};
        Config *cfg = NULL;
        AcctGroups *g = NULL;
        AcctQuotaResult res = {};
        int c, r;

        while ((c = getopt_long(argc, argv, "", options, NULL)) >= 0) {
                if (c != 'r' || (repeat = (unsigned) strtoul(optarg, NULL, 10)) == 0) {
                        fprintf(stderr, "usage: %s [--repeat K]\n", argv[0]);
                        return 2;
                }
        }

        char *text = workload();
        if (!text || config_new(&cfg) < 0 || config_load_string(cfg, text, "<bench>", &err) < 0) {
                fprintf(stderr, "acct-quota: configuration: %d: %s\n", err.line, err.msg);
                return 1;
        }
        double t0 = now_s();
        r = acct_groups_from_config(cfg, &g, &err);
        double t_groups = now_s() - t0;
        if (r < 0) {
                fprintf(stderr, "acct-quota: groups: %s:%d: %s\n", err.file, err.line, err.msg);
                return 1;
        }

        size_t n = acct_groups_count(g);
        double *demand = calloc(n, sizeof *demand), *us = calloc(repeat, sizeof *us);
        if (!demand || !us)
                return 1;
        for (size_t i = 0; i < n; i++)
                demand[i] = below(61);

        for (unsigned k = 0; k < repeat; k++) {
                unsigned calls = 0;
                double start = now_s(), elapsed;
                do {
                        acct_quota_result_clear(&res);
                        r = acct_quotas_compute(g, POOL, demand, &res);
                        if (r < 0) {
                                fprintf(stderr, "acct-quota: acct_quotas_compute: %s\n", strerror(-r));
                                return 1;
                        }
                        calls++;
                } while ((elapsed = now_s() - start) < MIN_RUN_S);
                us[k] = elapsed / calls * 1e6;
        }
        qsort(us, repeat, sizeof *us, cmp_double);

        double allocated = 0;
        for (size_t i = 0; i < res.n; i++)
                allocated += res.q[i].allocated;
        if (n != LEVEL1 + LEVEL2 + LEVEL3 + LEVEL4 + 1 || allocated > POOL + 1e-6) {
                fprintf(stderr, "acct-quota: the workload is not what it says (%zu groups, %g allocated)\n", n,
                        allocated);
                return 1;
        }
        printf("groups_from_config_ms = %.2f\n", t_groups * 1e3);
        printf("quota_compute_us = %.1f\n", us[repeat / 2]);
        printf("quota_compute_us_min = %.1f\n", us[0]);
        printf("groups = %zu\nwarnings = %zu\nallocated_of_pool = %.0f / %.0f\n", n, res.n_warnings, allocated, POOL);

        acct_quota_result_clear(&res);
        acct_groups_free(g);
        config_free(cfg);
        free(demand);
        free(us);
        free(text);
        return 0;
}
