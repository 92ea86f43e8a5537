/* SPDX-License-Identifier: Apache-2.0 */
/*
 * accounting.c — the accountant's cycle at scale (fixed seed): 100,000
 * submitters in 1,000 accounting groups four levels deep, 1,000,000
 * claims. Between two cycles 1% of the claims end and as many begin,
 * charged as their events arrive (100 events per transaction, as the
 * daemon commits an event loop iteration's); the cycle is the priority
 * update (decay, forgetting), every EUP and the shares, the quota tree
 * for the demand, written in one transaction. Prints each part's time and
 * the store's size. Goal: a cycle under 100 ms. (The quota function alone
 * for 10,000 groups: bench/acct-quota.c.)
 *
 *   build/bench/accounting [DIR]   (default build/bench-data; the database
 *                                    is made anew there)
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "accounting/accounting.h"

#define N_SUBMITTERS 100000
#define N_CLAIMS 1000000
#define CHURN (N_CLAIMS / 100)
#define CHURN_BATCH 100 /* claim events per transaction */
#define CYCLES 7
#define T0 1.8e9

static double now_s(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Groups four levels deep: 5 top, 25, 150, then the rest below those;
 * names g<i> dotted below their parent. *names[i] is the full name. */
static char *group_config(size_t n_groups, unsigned *seed, char ***ret_names) {
        size_t level_n[4] = { 5, 25, 150, 0 }, start[5] = { 0 }, cap = 1 << 20, len = 0;
        char **names = calloc(n_groups, sizeof(char *));
        char *cfg = malloc(cap);

        level_n[3] = n_groups - 180;
        for (int l = 0; l < 4; l++)
                start[l + 1] = start[l] + level_n[l];
        len += (size_t) snprintf(cfg + len, cap - len, "GROUP_NAMES = ");
        for (size_t i = 0; i < n_groups; i++) {
                int l = i < start[1] ? 0 : i < start[2] ? 1 : i < start[3] ? 2 : 3;
                char buf[64];

                if (l == 0)
                        snprintf(buf, sizeof(buf), "g%zu", i);
                else {
                        size_t parent = start[l - 1] + (i - start[l]) % level_n[l - 1];
                        snprintf(buf, sizeof(buf), "%s.g%zu", names[parent], i);
                }
                names[i] = strdup(buf);
                len += (size_t) snprintf(cfg + len, cap - len, "%s%s", i ? ", " : "", names[i]);
                if (len > cap - 4096)
                        cfg = realloc(cfg, cap *= 2);
        }
        len += (size_t) snprintf(cfg + len, cap - len, "\n");
        for (size_t i = 0; i < n_groups; i++) {
                if (len > cap - 4096)
                        cfg = realloc(cfg, cap *= 2);
                if (rand_r(seed) % 2)
                        len += (size_t) snprintf(cfg + len, cap - len, "GROUP_QUOTA_DYNAMIC_%s = %.3f\n", names[i],
                                                 (rand_r(seed) % 300) / 1000.0);
                else
                        len += (size_t) snprintf(cfg + len, cap - len, "GROUP_QUOTA_%s = %d\n", names[i],
                                                 rand_r(seed) % 2000);
                if (rand_r(seed) % 3 == 0)
                        len += (size_t) snprintf(cfg + len, cap - len, "GROUP_ACCEPT_SURPLUS_%s = True\n", names[i]);
        }
        *ret_names = names;
        return cfg;
}

static Config *make_config(const char *text) {
        Config *cfg = NULL;
        ConfigError err = {};

        if (config_new(&cfg) < 0 || config_load_string(cfg, "UID_DOMAIN = pool.test\n", "<bench>", &err) < 0 ||
            config_load_string(cfg, text, "<groups>", &err) < 0) {
                fprintf(stderr, "config: %s\n", err.msg);
                exit(1);
        }
        return cfg;
}

static long long file_size(const char *path) {
        struct stat st;

        return stat(path, &st) == 0 ? (long long) st.st_size : 0;
}

static int cmp_double(const void *a, const void *b) {
        double x = *(const double *) a, y = *(const double *) b;
        return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
        const char *dir = argc > 1 ? argv[1] : "build/bench-data";
        char path[512], cmd[1200], why[512] = "", id[32];
        unsigned seed = 12345;
        char **gnames = NULL, **subs = calloc(N_SUBMITTERS, sizeof(char *));
        unsigned *claim_sub = calloc(N_CLAIMS + (size_t) CHURN * CYCLES, sizeof(unsigned));
        char *text = group_config(1000, &seed, &gnames);
        Config *cfg = make_config(text);
        AcctSettings s = {};
        AcctGroups *g = NULL;
        Accountant *a = NULL;
        ConfigError err = {};
        double t, setup, cycle_times[CYCLES], clock = T0;
        size_t first_live = 0, next_claim = 0;

        snprintf(cmd, sizeof(cmd), "mkdir -p '%s' && rm -f '%s'/accounting.db*", dir, dir);
        if (system(cmd) != 0)
                return 1;
        snprintf(path, sizeof(path), "%s/accounting.db", dir);
        if (acct_settings_from_config(cfg, &s, &err) < 0 || acct_groups_from_config(cfg, &g, &err) < 0) {
                fprintf(stderr, "config: %s\n", err.msg);
                return 1;
        }
        if (acct_open(path, 0, NULL, &s, g, T0, &a, why, sizeof(why)) < 0) {
                fprintf(stderr, "%s\n", why);
                return 1;
        }
        for (size_t i = 0; i < N_SUBMITTERS; i++) {
                char buf[96];
                snprintf(buf, sizeof(buf), "%s.u%zu@pool.test", gnames[rand_r(&seed) % 1000], i);
                subs[i] = strdup(buf);
        }

        /* 1,000,000 claims, skewed: a few submitters hold many. */
        t = now_s();
        acct_batch_begin(a);
        for (; next_claim < N_CLAIMS; next_claim++) {
                unsigned u = (unsigned) (pow(rand_r(&seed) / (double) RAND_MAX, 2) * (N_SUBMITTERS - 1));
                claim_sub[next_claim] = u;
                snprintf(id, sizeof(id), "c%zu", next_claim);
                if (acct_claim_begin(a, id, subs[u], 1 + rand_r(&seed) % 8, clock) < 0) {
                        fprintf(stderr, "claim_begin failed\n");
                        return 1;
                }
        }
        if (acct_batch_commit(a) < 0) {
                fprintf(stderr, "commit: %s\n", acct_last_error(a));
                return 1;
        }
        setup = now_s() - t;
        printf("setup_1M_claims_s %.2f  (one transaction)\n", setup);

        for (int c = 0; c < CYCLES; c++) {
                double t_churn, t_update, t_eup, t_quota, t_commit, start;
                AcctEntry *list = NULL;
                size_t n = 0;
                const AcctGroups *groups = acct_groups(a);
                size_t ng = acct_groups_count(groups);
                double *demand = calloc(ng, sizeof(double)), *eups, *shares, pool = 0;
                AcctQuotaResult q = {};

                clock += 60;
                /* Claims begin and end as their events arrive, between cycles:
                 * the daemon commits each event loop iteration's (here 100). */
                t = now_s();
                for (int i = 0; i < CHURN; i++, first_live++, next_claim++) {
                        unsigned u = (unsigned) (rand_r(&seed) % N_SUBMITTERS);
                        if (i % (CHURN_BATCH / 2) == 0)
                                acct_batch_begin(a);
                        snprintf(id, sizeof(id), "c%zu", first_live);
                        acct_claim_end(a, id, clock - 30);
                        claim_sub[next_claim] = u;
                        snprintf(id, sizeof(id), "c%zu", next_claim);
                        acct_claim_begin(a, id, subs[u], 1 + rand_r(&seed) % 8, clock - 30);
                        if (i % (CHURN_BATCH / 2) == CHURN_BATCH / 2 - 1 && acct_batch_commit(a) < 0) {
                                fprintf(stderr, "commit: %s\n", acct_last_error(a));
                                return 1;
                        }
                }
                t_churn = now_s() - t;

                start = now_s();
                acct_batch_begin(a);
                t = now_s();
                acct_update(a, clock, NULL, NULL);
                t_update = now_s() - t;

                t = now_s();
                acct_list(a, &list, &n);
                eups = calloc(n, sizeof(double));
                shares = calloc(n, sizeof(double));
                size_t k = 0;
                for (size_t i = 0; i < n; i++)
                        if (!list[i].is_group) {
                                eups[k++] = list[i].eup;
                                demand[list[i].group] += list[i].weighted_in_use + 2;
                                pool += list[i].weighted_in_use;
                        }
                acct_shares(eups, k, shares);
                t_eup = now_s() - t;

                t = now_s();
                acct_quotas_compute(groups, pool * 1.1, demand, &q);
                t_quota = now_s() - t;

                t = now_s();
                acct_set_meta(a, "pool_size", pool * 1.1);
                if (acct_batch_commit(a) < 0) {
                        fprintf(stderr, "commit: %s\n", acct_last_error(a));
                        return 1;
                }
                t_commit = now_s() - t;
                cycle_times[c] = now_s() - start;
                printf("cycle %d: %.1f ms (update %.1f, eups+shares %.1f of %zu, quotas %.2f, commit %.1f); "
                       "before it %d claims ended and %d begun in %.0f ms (%.1f us per claim event, %d per transaction)\n",
                       c, cycle_times[c] * 1e3, t_update * 1e3, t_eup * 1e3, k, t_quota * 1e3, t_commit * 1e3, CHURN,
                       CHURN, t_churn * 1e3, t_churn * 1e6 / (2 * CHURN), CHURN_BATCH);
                free(list);
                free(eups);
                free(shares);
                free(demand);
                acct_quota_result_clear(&q);
        }
        qsort(cycle_times, CYCLES, sizeof(double), cmp_double);
        printf("cycle_ms_median %.1f  (goal < 100: decay, EUPs and shares, quota tree, one transaction; %d cycles)\n",
               cycle_times[CYCLES / 2] * 1e3, CYCLES);
        snprintf(cmd, sizeof(cmd), "%s-wal", path);
        printf("store_bytes %lld  (+ wal %lld)  claims %zu\n", file_size(path), file_size(cmd), acct_claims_count(a));
        acct_close(a);
        return 0;
}
