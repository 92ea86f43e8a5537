/* SPDX-License-Identifier: Apache-2.0 */
/*
 * negotiate.c — one negotiation cycle on a realistic pool (fixed seed):
 * the first cycle on an empty pool, and a steady-state one with 90% of
 * the static slots and 7/8 of the partitionable ones claimed (in
 * dynamic slots, ads of their own) and preemption by priority considered
 * (PREEMPTION_REQUIREMENTS = RemoteUserPrio > SubmitterUserPrio * 1.2,
 * the seed's "20% better priority" rule),
 * by the fast path and by the plain one. Prints the cycle's time (wall
 * clock, and the CPU time it took: the figure on a shared machine),
 * matches per CPU second, Requirements evaluations, autoclusters and slot
 * shapes, and the peak memory (ru_maxrss: the pool's ads included). Goals (issue 13, one core): the small
 * pool's cycle under 1 s, the large pool's under 10 s, the large pool's
 * peak memory under 2 GB.
 *
 *   build/bench/negotiate [--large] [--path fast|plain|both] [--cycle first|steady|both] [--plain-share N]
 *
 * The small pool: 10,000 slots (80% static slots on machines of 20
 * hardware types, desktops with their LoadAvg and KeyboardIdle and the
 * desktop START policy, department machines, cluster nodes; 20% 64-core
 * partitionable slots with consumption policies), 100,000 idle jobs of
 * 500 submitters in 50 quota groups, 2,000 distinct job shapes
 * (Requirements as condor_submit writes them plus user clauses, Rank on
 * Memory or KFlops), in clusters of 25. --large: 100,000 slots and
 * 1,000,000 jobs of 2,000 submitters in 100 groups, 5,000 shapes; the
 * procs of a cluster share one job ad there (as a schedd shares its
 * cluster ad), or a million ads alone would take 3.7 GB.
 *
 * The plain path costs jobs x slots: it runs on every --plain-share'th
 * job of each submitter only (default 10), and says so.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "negotiator/negotiator.h"

#define T0 1.8e9
#define PROCS 25 /* per cluster */

typedef struct Scale {
        size_t slots, jobs, submitters, groups, shapes;
        bool shared_ads;
} Scale;

static const Scale small_pool = { 10000, 100000, 500, 50, 2000, false };
static const Scale large_pool = { 100000, 1000000, 2000, 100, 5000, true };

static double now_s(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return ts.tv_sec + ts.tv_nsec / 1e9;
}

static uint64_t splitmix(uint64_t *s) {
        uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        return z ^ (z >> 31);
}

static unsigned pick(uint64_t *s, unsigned n) {
        return (unsigned) (splitmix(s) % n);
}

static double uniform(uint64_t *s) {
        return (splitmix(s) >> 11) * (1.0 / 9007199254740992.0);
}

static void die(const char *what, int r) {
        fprintf(stderr, "negotiate: %s: %s\n", what, strerror(r < 0 ? -r : r));
        exit(1);
}

static ClassAd *parse(const char *text) {
        ClassAd *ad = NULL;
        CaError err = {};

        if (classad_parse(text, strlen(text), CA_MODE_OLD, &ad, &err) < 0) {
                fprintf(stderr, "negotiate: bad ad (%s): %s\n", err.msg, text);
                exit(1);
        }
        return ad;
}

/* ---- the machines ---- */

typedef struct HwType {
        const char *arch;
        int major, cpus, mem_per_core, slot_cpus, kflops, mips;
        long disk;
        bool docker;
        double cuda;
} HwType;

static HwType types[20];

static void make_types(uint64_t *s) {
        static const int cpus[] = { 8, 16, 24, 32, 48 }, mem[] = { 2048, 4096, 8192 };

        for (int t = 0; t < 20; t++)
                types[t] = (HwType){
                        .arch = t >= 18 ? "aarch64" : "X86_64",
                        .major = 8 + (t % 3 != 0),
                        .cpus = cpus[pick(s, 5)],
                        .mem_per_core = mem[pick(s, 3)],
                        .slot_cpus = 1 + (t % 4 == 3),
                        .kflops = 900000 + 60000 * t,
                        .mips = 10000 + 900 * t,
                        .disk = 200000000L + 50000000L * pick(s, 8),
                        .docker = t % 3 != 1,
                        .cuda = t == 15 || t == 16 ? 7.0 + 0.5 * (t - 15) : 0,
                };
}

static const char *const departments[] = { "physics", "chemistry", "biology", "cs", "economics" };

/* A static slot of machine m (type t), slot number id of n. */
static ClassAd *static_slot(uint64_t *s, size_t m, const HwType *t, int id, int n, int policy, double load,
                            unsigned kbd) {
        char text[4096], gpu[64] = "", start[256], rank[128];
        int cpus = t->slot_cpus, mem = t->mem_per_core * cpus;

        (void) s;
        if (t->cuda > 0)
                snprintf(gpu, sizeof(gpu), "CUDACapability = %.1f; GPUs = 1; ", t->cuda);
        switch (policy) {
        case 0: /* a desktop: the owner comes first */
                snprintf(start, sizeof(start), "(KeyboardIdle > 15 * 60) && ((LoadAvg - CondorLoadAvg) <= 0.3)");
                snprintf(rank, sizeof(rank), "0");
                break;
        case 1: /* a department's machine: its own jobs first, others when idle */
                snprintf(start, sizeof(start), "(TARGET.Department =?= \"%s\") || (KeyboardIdle > 3600)",
                         departments[m % 5]);
                snprintf(rank, sizeof(rank), "(TARGET.Department =?= \"%s\") * 10", departments[m % 5]);
                break;
        default: /* a cluster node */
                snprintf(start, sizeof(start), "True");
                snprintf(rank, sizeof(rank), "0");
                break;
        }
        snprintf(text, sizeof(text),
                 "[ MyType = \"Machine\"; Name = \"slot%d@node%05zu.example.org\"; Machine = \"node%05zu.example.org\"; "
                 "SlotID = %d; SlotType = \"Static\"; Arch = \"%s\"; OpSys = \"LINUX\"; OpSysMajorVer = %d; "
                 "OpSysAndVer = \"AlmaLinux%d\"; Cpus = %d; Memory = %d; Disk = %ld; TotalCpus = %d; "
                 "TotalMemory = %d; TotalSlots = %d; KFlops = %d; Mips = %d; HasDocker = %s; HasFileTransfer = true; "
                 "FileSystemDomain = \"example.org\"; UidDomain = \"example.org\"; LoadAvg = %.2f; "
                 "CondorLoadAvg = 0.0; KeyboardIdle = %u; ConsoleIdle = %u; IsDesktop = %s; %s"
                 "State = \"Unclaimed\"; Activity = \"Idle\"; Start = %s; Requirements = START; Rank = %s ]",
                 id, m, m, id, t->arch, t->major, t->major, cpus, mem, t->disk / n, t->cpus,
                 t->cpus * t->mem_per_core, n, t->kflops, t->mips, t->docker ? "true" : "false", load, kbd, kbd,
                 policy == 0 ? "true" : "false", gpu, start, rank);
        return parse(text);
}

#define DSLOTS 2 /* per p-slot on a steady pool, each of 28 cores, 8 cores left */

static int pslot_memory(const HwType *t) {
        return 64 * (t->mem_per_core < 4096 ? 4096 : t->mem_per_core);
}

/* A 64-core partitionable slot with a consumption policy, or (k > 0) the
 * k-th dynamic slot carved out of it. */
static ClassAd *pslot(size_t m, const HwType *t, bool steady, int k) {
        char text[4096];
        int mem = pslot_memory(t), cpus = 64;
        long disk = 2000000000L;

        if (steady)
                cpus = k > 0 ? 28 : 64 - DSLOTS * 28;
        snprintf(text, sizeof(text),
                 "[ MyType = \"Machine\"; Name = \"slot1%s%.0d@node%05zu.example.org\"; "
                 "Machine = \"node%05zu.example.org\"; SlotID = 1; SlotType = \"%s\"; %s = true; Arch = \"X86_64\"; "
                 "OpSys = \"LINUX\"; OpSysMajorVer = %d; OpSysAndVer = \"AlmaLinux%d\"; Cpus = %d; Memory = %d; "
                 "Disk = %ld; TotalSlotCpus = %d; TotalSlotMemory = %d; TotalSlotDisk = %ld; TotalCpus = 64; "
                 "TotalMemory = %d; KFlops = %d; Mips = %d; HasDocker = true; HasFileTransfer = true; "
                 "FileSystemDomain = \"example.org\"; UidDomain = \"example.org\"; LoadAvg = %.2f; CondorLoadAvg = %.2f; "
                 "KeyboardIdle = 86400; ConsoleIdle = 86400; IsDesktop = false; %s"
                 "WithinResourceLimits = (TARGET.RequestCpus <= MY.Cpus) && (TARGET.RequestMemory <= MY.Memory) && "
                 "(TARGET.RequestDisk <= MY.Disk); State = \"Unclaimed\"; Activity = \"Idle\"; Start = True; "
                 "Requirements = START && WithinResourceLimits; Rank = 0 ]",
                 k > 0 ? "_" : "", k, m, m, k > 0 ? "Dynamic" : "Partitionable",
                 k > 0 ? "DynamicSlot" : "PartitionableSlot", t->major, t->major, cpus, mem / 64 * cpus,
                 disk / 64 * cpus, k > 0 ? cpus : 64, k > 0 ? mem / 64 * cpus : mem, k > 0 ? disk / 64 * cpus : disk,
                 mem, t->kflops, t->mips, steady ? 0.875 * 64 : 0, steady ? 0.875 * 64 : 0,
                 k > 0 ? "" : "ConsumptionCpus = quantize(target.RequestCpus, {1}); "
                              "ConsumptionMemory = quantize(target.RequestMemory, {128}); "
                              "ConsumptionDisk = quantize(target.RequestDisk, {1024}); SlotWeight = Cpus; ");
        return parse(text);
}

/* ---- the pool ---- */

typedef struct Pool {
        Config *cfg;
        Accountant *acct;
        NegoSettings *settings;
        ClassAd **slots;
        size_t n_slots;
        NegoSubmitter *subs;
        size_t n_subs;
        char **names;
} Pool;

static char *groups_config(const Scale *sc, bool steady) {
        size_t cap = 64 * sc->groups + 4096, len = 0;
        char *cfg = malloc(cap);

        len += (size_t) snprintf(cfg + len, cap - len, "UID_DOMAIN = pool\nGROUP_NAMES = ");
        for (size_t g = 0; g < sc->groups; g++)
                len += (size_t) snprintf(cfg + len, cap - len, "%sg%03zu", g ? ", " : "", g);
        len += (size_t) snprintf(cfg + len, cap - len,
                                 "\nGROUP_ACCEPT_SURPLUS = True\nGROUP_AUTOREGROUP = False\n");
        for (size_t g = 0; g < sc->groups; g++)
                len += (size_t) snprintf(cfg + len, cap - len, "GROUP_QUOTA_DYNAMIC_g%03zu = %.4f\n", g,
                                         (0.5 + (g % 7) / 6.0) / sc->groups);
        if (steady)
                len += (size_t) snprintf(cfg + len, cap - len,
                                         "PREEMPTION_REQUIREMENTS = RemoteUserPrio > SubmitterUserPrio * 1.2\n");
        return cfg;
}

static void pool_open(Pool *p, const Scale *sc, bool steady) {
        char *text = groups_config(sc, steady), why[256] = "";
        ConfigError err = {};
        AcctSettings s = {};
        AcctGroups *g = NULL;
        int r;

        *p = (Pool){};
        if ((r = config_new(&p->cfg)) < 0 || (r = config_load_string(p->cfg, text, "<bench>", &err)) < 0 ||
            (r = acct_settings_from_config(p->cfg, &s, &err)) < 0 || (r = acct_groups_from_config(p->cfg, &g, &err)) < 0 ||
            (r = nego_settings_from_config(p->cfg, &p->settings, &err)) < 0) {
                fprintf(stderr, "negotiate: configuration: %s\n", err.msg);
                exit(1);
        }
        if ((r = acct_open(NULL, 0, NULL, &s, g, T0, &p->acct, why, sizeof(why))) < 0) {
                fprintf(stderr, "negotiate: accounts: %s\n", why);
                exit(1);
        }
        free(text);
}

/* Slot ad (on a steady pool) runs a job of submitter u, charged to the accounts. */
static void claim(Pool *p, ClassAd *ad, size_t u, double weight, uint64_t *s) {
        char id[32];

        classad_set_string(ad, "State", "Claimed");
        classad_set_string(ad, "Activity", "Busy");
        classad_set_string(ad, "RemoteUser", p->names[u]);
        classad_set_string(ad, "RemoteOwner", p->names[u]);
        classad_set_real(ad, "CurrentRank", 0);
        classad_set_int(ad, "TotalJobRuntime", pick(s, 36000));
        snprintf(id, sizeof(id), "c%zu", p->n_slots);
        if (acct_claim_begin(p->acct, id, p->names[u], weight, T0) < 0)
                die("acct_claim_begin", EINVAL);
}

/* The slots. On a steady pool 90% of the static slots run jobs, and each
 * p-slot has given 56 of its 64 cores to two dynamic slots (ads of their
 * own, as condor_status shows them) that run jobs. */
static void make_slots(Pool *p, const Scale *sc, bool steady) {
        uint64_t s = 42;
        size_t n_static = sc->slots * 8 / 10, n_pslots = sc->slots - n_static, m = 0;

        make_types(&s);
        p->slots = calloc(sc->slots + (steady ? DSLOTS * n_pslots : 0), sizeof(ClassAd *));
        while (p->n_slots < n_static) {
                const HwType *t = &types[pick(&s, 20)];
                int n = t->cpus / t->slot_cpus, policy = pick(&s, 100) < 25 ? 0 : pick(&s, 100) < 20 ? 1 : 2;
                double load = policy == 0 ? uniform(&s) * 1.2 : uniform(&s) * 0.1;
                unsigned kbd = policy == 0 && pick(&s, 3) == 0 ? pick(&s, 900) : 900 + pick(&s, 200000);

                for (int id = 1; id <= n && p->n_slots < n_static; id++) {
                        ClassAd *ad = static_slot(&s, m, t, id, n, policy, load, kbd);
                        if (steady && pick(&s, 10) != 0)
                                claim(p, ad, pick(&s, (unsigned) p->n_subs), t->slot_cpus, &s);
                        p->slots[p->n_slots++] = ad;
                }
                m++;
        }
        for (size_t k = 0; k < n_pslots; k++, m++) {
                const HwType *t = &types[pick(&s, 18)];
                p->slots[p->n_slots++] = pslot(m, t, steady, 0);
                for (int d = 1; steady && d <= DSLOTS; d++) {
                        ClassAd *ad = pslot(m, t, steady, d);
                        claim(p, ad, pick(&s, (unsigned) p->n_subs), 28, &s);
                        p->slots[p->n_slots++] = ad;
                }
        }
}

/* ---- the jobs ---- */

typedef struct Shape {
        char text[1024];
} Shape;

static Shape *make_shapes(size_t n) {
        static const int cpus[] = { 1, 1, 1, 1, 1, 1, 1, 2, 2, 4, 4, 8, 16 };
        static const int mem[] = { 512, 1024, 1024, 2048, 2048, 3000, 4096, 8192, 16384, 32768 };
        static const int disk[] = { 1024, 10240, 102400, 1048576 };
        static const char *const clauses[] = {
                "(TARGET.OpSysMajorVer >= 9)", "(TARGET.HasDocker =?= true)", "(TARGET.KFlops >= 1500000)",
                "(TARGET.Mips > 15000)",       "(TARGET.Cpus >= 2)",          "(TARGET.TotalMemory >= 65536)",
        };
        Shape *v = calloc(n, sizeof(Shape));
        uint64_t s = 7;

        for (size_t k = 0; k < n;) {
                char req[768];
                int c = cpus[pick(&s, 13)], arch = pick(&s, 100);
                size_t len = (size_t) snprintf(req, sizeof(req),
                                               "(TARGET.Arch == \"%s\") && (TARGET.OpSys == \"LINUX\") && "
                                               "(TARGET.Disk >= RequestDisk) && (TARGET.Memory >= RequestMemory) && "
                                               "(TARGET.Cpus >= RequestCpus) && (TARGET.HasFileTransfer)",
                                               arch < 3 ? "aarch64" : "X86_64");
                for (unsigned u = pick(&s, 3); u > 0; u--)
                        len += (size_t) snprintf(req + len, sizeof(req) - len, " && %s", clauses[pick(&s, 6)]);
                if (pick(&s, 50) == 0)
                        snprintf(req + len, sizeof(req) - len, " && (TARGET.CUDACapability >= 7.0)");
                snprintf(v[k].text, sizeof(v[k].text),
                         "RequestCpus = %d; RequestMemory = %d; RequestDisk = %d; Department = \"%s\"; "
                         "Requirements = %s; Rank = %s",
                         c, mem[pick(&s, 10)] * (c > 4 ? 2 : 1), disk[pick(&s, 4)], departments[pick(&s, 5)], req,
                         (const char *[]){ "0", "0", "Memory", "TARGET.KFlops" }[pick(&s, 4)]);
                bool dup = false;
                for (size_t j = 0; j < k && !dup; j++)
                        dup = strcmp(v[j].text, v[k].text) == 0;
                k += !dup;
        }
        return v;
}

/* Submitters gNNN.uMMMM@pool with EUPs from 1 to 2000; each has
 * jobs/submitters idle jobs in clusters of PROCS, a shape per cluster. */
static void make_submitters(Pool *p, const Scale *sc) {
        uint64_t s = 99;

        p->n_subs = sc->submitters;
        p->subs = calloc(p->n_subs, sizeof(NegoSubmitter));
        p->names = calloc(p->n_subs, sizeof(char *));
        for (size_t u = 0; u < p->n_subs; u++) {
                if (asprintf(&p->names[u], "g%03zu.u%04zu@pool", u % sc->groups, u) < 0)
                        die("asprintf", ENOMEM);
                acct_ensure(p->acct, p->names[u], T0);
                acct_set_priority(p->acct, p->names[u], 1 + pow(uniform(&s), 2) * 2000, T0);
                p->subs[u].name = p->names[u];
        }
}

/* Every submitter's jobs (the same ads for both cycles). */
static void make_jobs(Pool *p, const Scale *sc, const Shape *shapes) {
        size_t per = sc->jobs / sc->submitters, clusters = (per + PROCS - 1) / PROCS, cluster = 1;

        for (size_t u = 0; u < p->n_subs; u++) {
                NegoSubmitter *sub = &p->subs[u];
                sub->jobs = calloc(per, sizeof(ClassAd *));
                for (size_t j = 0; j < per; j += PROCS, cluster++) {
                        const Shape *sh = &shapes[(u * clusters + j / PROCS) % sc->shapes];
                        for (size_t k = 0; k < PROCS && j + k < per; k++) {
                                char text[2048];
                                if (sc->shared_ads && k > 0) {
                                        sub->jobs[sub->n_jobs++] = classad_ref(sub->jobs[j]);
                                        continue;
                                }
                                snprintf(text, sizeof(text),
                                         "[ MyType = \"Job\"; Owner = \"u%04zu\"; User = \"%s\"; ClusterId = %zu; "
                                         "ProcId = %zu; QDate = %.0f; JobPrio = %d; JobUniverse = 5; JobStatus = 1; %s ]",
                                         u, p->names[u], cluster, k, T0 - 86400 + (double) cluster,
                                         cluster % 10 == 0 ? 5 : 0, sh->text);
                                sub->jobs[sub->n_jobs++] = parse(text);
                        }
                }
        }
}

static void pool_close(Pool *p) {
        for (size_t i = 0; i < p->n_slots; i++)
                classad_free(p->slots[i]);
        free(p->slots);
        for (size_t u = 0; u < p->n_subs; u++)
                free(p->names[u]);
        free(p->names);
        free(p->subs);
        nego_settings_free(p->settings);
        acct_close(p->acct);
        config_free(p->cfg);
}

/* ---- a cycle ---- */

/* CPU time of the process (user + system), in seconds: on a shared
 * machine, what the cycle itself took of one core. */
static double cpu_s(void) {
        struct rusage ru;

        getrusage(RUSAGE_SELF, &ru);
        return ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
}

static long peak_mb(void) {
        struct rusage ru;

        getrusage(RUSAGE_SELF, &ru);
        return ru.ru_maxrss / 1024;
}

/* One cycle; the plain path on every share'th job of each submitter. */
static void run(const char *title, Pool *p, NegoSubmitter *all, bool plain, size_t share) {
        NegoSubmitter *subs = calloc(p->n_subs, sizeof(NegoSubmitter));
        NegoResult res = {};
        size_t jobs = 0, preempt = 0, pmatch = 0;
        double t, cpu;
        int r;

        for (size_t u = 0; u < p->n_subs; u++) {
                subs[u] = all[u];
                if (share > 1) {
                        subs[u].jobs = calloc(all[u].n_jobs / share + 1, sizeof(ClassAd *));
                        subs[u].n_jobs = 0;
                        for (size_t j = 0; j < all[u].n_jobs; j += share)
                                subs[u].jobs[subs[u].n_jobs++] = all[u].jobs[j];
                }
                jobs += subs[u].n_jobs;
        }
        NegoInput in = {
                .slots = p->slots,
                .n_slots = p->n_slots,
                .submitters = subs,
                .n_submitters = p->n_subs,
                .accounts = p->acct,
                .settings = p->settings,
                .plain = plain,
        };
        t = now_s();
        cpu = cpu_s();
        if ((r = nego_cycle(&in, &res)) < 0)
                die("nego_cycle", r);
        t = now_s() - t;
        cpu = cpu_s() - cpu;
        for (size_t i = 0; i < res.n_matches; i++) {
                preempt += res.matches[i].reason != NEGO_NO_PREEMPTION;
                pmatch += res.matches[i].partitionable;
        }
        printf("%-34s %s  jobs %7zu  cycle_s %8.3f  cpu_s %8.3f  matches %6zu (%zu preempting, %zu of p-slots)  "
               "matches_per_s %9.0f  evaluations %10zu  considered %7zu  autoclusters %5zu  slot_shapes %5zu  spins %zu  "
               "peak_mb %ld\n",
               title, plain ? "plain" : "fast ", jobs, t, cpu, res.n_matches, preempt, pmatch, res.n_matches / cpu,
               res.stats.evaluations, res.stats.jobs_considered, res.stats.autoclusters, res.stats.slot_shapes,
               res.stats.spins, peak_mb());
        fflush(stdout);
        nego_result_clear(&res);
        if (share > 1)
                for (size_t u = 0; u < p->n_subs; u++)
                        free(subs[u].jobs);
        free(subs);
}

static void usage(void) {
        fprintf(stderr, "usage: negotiate [--large] [--path fast|plain|both] [--cycle first|steady|both] [--plain-share N]\n");
        exit(2);
}

int main(int argc, char **argv) {
        const Scale *sc = &small_pool;
        bool fast = true, plain = true, states[2] = { true, true };
        size_t share = 10;
        Shape *shapes;
        double t;

        for (int i = 1; i < argc; i++) {
                if (strcmp(argv[i], "--large") == 0)
                        sc = &large_pool;
                else if (strcmp(argv[i], "--path") == 0 && i + 1 < argc) {
                        const char *w = argv[++i];
                        fast = strcmp(w, "plain") != 0;
                        plain = strcmp(w, "fast") != 0;
                } else if (strcmp(argv[i], "--cycle") == 0 && i + 1 < argc) {
                        const char *w = argv[++i];
                        states[0] = strcmp(w, "steady") != 0;
                        states[1] = strcmp(w, "first") != 0;
                } else if (strcmp(argv[i], "--plain-share") == 0 && i + 1 < argc)
                        share = strtoul(argv[++i], NULL, 10);
                else
                        usage();
        }
        if (share < 1)
                usage();
        printf("pool: %zu slots (80%% static, 20%% 64-core partitionable), %zu jobs of %zu submitters in %zu groups, "
               "%zu job shapes%s\n",
               sc->slots, sc->jobs, sc->submitters, sc->groups, sc->shapes,
               sc->shared_ads ? " (a cluster's procs share one ad)" : "");
        shapes = make_shapes(sc->shapes);
        for (int steady = 0; steady < 2; steady++) {
                Pool p;
                const char *title = steady ? "steady (90% claimed, preemption)" : "first cycle (empty pool)";

                if (!states[steady])
                        continue;
                t = now_s();
                pool_open(&p, sc, steady);
                make_submitters(&p, sc);
                make_slots(&p, sc, steady);
                make_jobs(&p, sc, shapes);
                fprintf(stderr, "%s: pool made in %.1f s (peak %ld MB so far)\n", title, now_s() - t, peak_mb());
                fflush(stderr);
                if (fast)
                        run(title, &p, p.subs, false, 1);
                if (plain) {
                        if (share > 1)
                                printf("%-34s plain: every %zu%s job of each submitter only (the plain path costs jobs x "
                                       "slots)\n",
                                       title, share, share == 2 ? "nd" : share == 3 ? "rd" : "th");
                        run(title, &p, p.subs, true, share);
                        if (fast && share > 1)
                                run(title, &p, p.subs, false, share);
                }
                for (size_t u = 0; u < p.n_subs; u++) {
                        for (size_t j = 0; j < p.subs[u].n_jobs; j++)
                                classad_free(p.subs[u].jobs[j]);
                        free(p.subs[u].jobs);
                }
                pool_close(&p);
        }
        free(shapes);
        return 0;
}
