/* SPDX-License-Identifier: Apache-2.0 */
/*
 * agent-policy — what an execute node's agent spends its time on, per
 * slot: the periodic policy evaluation, carving dynamic slots out of a
 * partitionable one, and handing out the machine's load to the slots.
 *
 * Usage: agent-policy [--repeat K] [--only PREFIX]
 *
 * Single thread, CLOCK_MONOTONIC. Every figure is the median of K (default
 * 5) timed runs, each run long enough (>= 0.2 s) to make the clock's
 * resolution irrelevant. Figures, one "name = value" line each:
 *
 *   policy_eval_us_N     agent_sm_eval() of one slot, in microseconds, on a
 *                        machine of N static one-CPU slots (N = 1, 64, 1024)
 *                        under the default configuration plus
 *                        `use POLICY : DESKTOP`, every slot Claimed/Busy with
 *                        a vanilla job, its ad filled as the agent fills it
 *                        (agent_slot_ad_resources, agent_policy_fill_ad,
 *                        CurrentTime, the load and idle sensors);
 *                        the N slots are evaluated in turn, as the agent does
 *                        every POLLING_INTERVAL
 *   carve_per_s          agent_pslot_carve() + agent_res_sub() per second on a
 *                        partitionable slot of 1024 CPUs and 4 TB of memory:
 *                        a job of RequestCpus = 1, RequestMemory = 1000,
 *                        RequestDisk = 1000 (KB) rewritten by the default
 *                        MODIFY_REQUEST_EXPR_* (3.5.10.7); the slot is
 *                        refilled when it is full
 *   carve_consumption_per_s  the same with seed 003's consumption policy
 *                        (ConsumptionCpus/Memory/Disk = quantize(...)) in the
 *                        p-slot's ad
 *   load_distribute_ns_1024_static     agent_load_distribute() over 1024
 *                        static slots, ns per call
 *   load_distribute_ns_1024_dslots     over 1 p-slot and 1023 d-slots
 *   load_distribute_ns_1024_pslots     over 1024 p-slots, no d-slots
 *
 * The program checks that its setup is what it says (every slot
 * Claimed/Busy before and after the timing, carvings that succeed) and
 * exits with status 1 when it is not; the figures themselves are never
 * judged.
 */

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "policy.h"
#include "slots.h"

#define MIN_RUN_S 0.2

static unsigned repeat = 5;
static const char *only; /* --only: the figures whose name starts with it */

static bool wanted(const char *figure) {
        return !only || strncmp(figure, only, strlen(only)) == 0;
}

static _Noreturn void die(const char *fmt, const char *detail) {
        fprintf(stderr, "agent-policy: %s%s%s\n", fmt, detail ? ": " : "", detail ? detail : "");
        exit(1);
}

static double now_seconds(void) {
        struct timespec ts;

        (void) clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double) ts.tv_sec + (double) ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b) {
        double x = *(const double *) a, y = *(const double *) b;

        return x < y ? -1 : x > y;
}

static double median(double *v, size_t n) {
        qsort(v, n, sizeof(double), cmp_double);
        return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Runs fn(arg, iters) with iters doubled until a run takes MIN_RUN_S,
 * then `repeat` runs of that many; the median seconds per unit of work
 * (fn returns how many units it did). */
static double time_per_unit(uint64_t (*fn)(void *arg, uint64_t iters), void *arg) {
        double runs[64], t;
        uint64_t iters = 1, units;

        for (;;) {
                t = now_seconds();
                (void) fn(arg, iters);
                t = now_seconds() - t;
                if (t >= MIN_RUN_S / 4 || iters >= (UINT64_C(1) << 40))
                        break;
                iters *= 2;
        }
        if (t > 0 && t < MIN_RUN_S)
                iters = (uint64_t) ((double) iters * MIN_RUN_S / t) + 1;
        for (unsigned i = 0; i < repeat; i++) {
                t = now_seconds();
                units = fn(arg, iters);
                runs[i] = (now_seconds() - t) / (double) (units ? units : 1);
        }
        return median(runs, repeat);
}

static Config *config_with(const char *text) {
        Config *cfg = NULL;
        ConfigError err = {};

        if (config_new(&cfg) < 0)
                die("config_new() failed", NULL);
        if (config_load_string(cfg, text, "bench.conf", &err) < 0)
                die("the configuration does not load", err.msg);
        return cfg;
}

static AgentMachine machine(const Config *cfg, int64_t cpus, int64_t memory_mb) {
        AgentRes d = { .cpus = cpus, .memory = memory_mb, .disk = 1024LL * 1024 * 1024, .swap = 8 * 1024 * 1024 };
        ConfigError err = {};
        AgentMachine m;

        if (agent_machine_configure(cfg, &d, "x86_64", "bench.example.org", &m, &err) < 0)
                die("agent_machine_configure() refused", err.msg);
        return m;
}

static ClassAd *parse_old(const char *text) {
        ClassAd *ad = NULL;
        CaError cerr = {};

        if (classad_parse_old(text, strlen(text), CA_MODE_OLD, &ad, &cerr) < 0)
                die("an ad does not parse", cerr.msg);
        return ad;
}

/* ---- (a) the policy evaluation of a slot ---- */

static const char job_text[] =
        "MyType = \"Job\"\n"
        "TargetType = \"Machine\"\n"
        "ClusterId = 17\n"
        "ProcId = 0\n"
        "GlobalJobId = \"submit.example.org#17.0#1700000000\"\n"
        "Owner = \"alice\"\n"
        "User = \"alice@example.org\"\n"
        "AccountingGroup = \"group_physics.alice\"\n"
        "JobUniverse = 5\n"
        "JobStatus = 2\n"
        "Cmd = \"/home/alice/sim\"\n"
        "ImageSize = 250000\n"
        "RequestCpus = 1\n"
        "RequestMemory = 2048\n"
        "RequestDisk = 1000000\n"
        "Requirements = (TARGET.Arch == \"X86_64\") && (TARGET.OpSys == \"LINUX\") && "
        "(TARGET.Memory >= RequestMemory) && (TARGET.Disk >= RequestDisk)\n"
        "Rank = TARGET.Memory\n";

typedef struct Bench {
        size_t n;
        int64_t t0;
        uint64_t tick;
        AgentSlotSM **sm;
        ClassAd **ad;
} Bench;

static void no_transition(void *userdata, const AgentTransition *t) {
        (void) userdata;
        (void) t;
}

static void no_action(void *userdata, const AgentAction *a) {
        (void) userdata;
        (void) a;
}

static void set_sensors(ClassAd *ad, size_t n) {
        (void) classad_set_int(ad, "KeyboardIdle", 7200);
        (void) classad_set_int(ad, "ConsoleIdle", 7200);
        (void) classad_set_real(ad, "LoadAvg", 1.0);
        (void) classad_set_real(ad, "CondorLoadAvg", 1.0);
        (void) classad_set_real(ad, "TotalLoadAvg", (double) n);
        (void) classad_set_real(ad, "TotalCondorLoadAvg", (double) n);
}

static void check_busy(const Bench *b, const char *when) {
        for (size_t i = 0; i < b->n; i++)
                if (agent_sm_state(b->sm[i]) != AGENT_STATE_CLAIMED || agent_sm_activity(b->sm[i]) != AGENT_ACT_BUSY)
                        die("a slot is not Claimed/Busy", when);
}

static void bench_setup(Bench *b, size_t n) {
        static const AgentPolicyHooks hooks = { .transition = no_transition, .action = no_action };
        Config *cfg = config_with("use POLICY : DESKTOP\n");
        AgentMachine m = machine(cfg, (int64_t) n, 4096 * (int64_t) n);
        ClassAd *job = parse_old(job_text);
        AgentSlotDef *defs = NULL;
        ConfigError err = {};
        size_t n_defs = 0;

        *b = (Bench){ .n = n, .t0 = (int64_t) time(NULL) };
        if (agent_slots_layout(cfg, &m, &defs, &n_defs, &err) < 0 || n_defs != n)
                die("the layout is not one slot per CPU", err.msg);
        b->sm = calloc(n, sizeof(*b->sm));
        b->ad = calloc(n, sizeof(*b->ad));
        if (!b->sm || !b->ad)
                die("out of memory", NULL);
        for (size_t i = 0; i < n; i++) {
                AgentPolicyKnobs knobs;
                CaError cerr = {};
                char name[32], claim[64], why[256] = "";
                AgentEvent ev;

                snprintf(name, sizeof(name), "slot%u", defs[i].id);
                snprintf(claim, sizeof(claim), "<10.0.0.1:9618>#%zu#bench", i);
                if (classad_new(&b->ad[i]) < 0 ||
                    agent_slot_ad_resources(b->ad[i], &m, &defs[i], name, false, &defs[i].res) < 0)
                        die("cannot build a slot ad", name);
                (void) classad_set_string(b->ad[i], "MyType", "Machine");
                (void) classad_set_string(b->ad[i], "TargetType", "Job");
                (void) classad_set_expr_text(b->ad[i], "CurrentTime", "time()", CA_MODE_OLD, &cerr);
                set_sensors(b->ad[i], n);
                if (agent_policy_fill_ad(cfg, defs[i].id, b->ad[i], &err) < 0 ||
                    agent_policy_knobs(cfg, defs[i].id, &knobs, &err) < 0)
                        die("the policy does not fill the ad", err.msg);
                if (agent_sm_new(name, b->ad[i], &knobs, &hooks, NULL, b->t0, &b->sm[i]) < 0)
                        die("agent_sm_new() failed", name);
                agent_sm_eval(b->sm[i], b->t0);
                if (agent_sm_state(b->sm[i]) != AGENT_STATE_UNCLAIMED)
                        die("a slot is not Unclaimed after its first evaluation", name);
                ev = (AgentEvent){ .type = AGENT_EV_CLAIM, .claim_id = claim, .job = job };
                if (agent_sm_handle(b->sm[i], b->t0 + 1, &ev, why, sizeof(why)) < 0)
                        die("the claim is refused", why);
                ev = (AgentEvent){ .type = AGENT_EV_ACTIVATE, .claim_id = claim, .job = job };
                if (agent_sm_handle(b->sm[i], b->t0 + 2, &ev, why, sizeof(why)) < 0)
                        die("the activation is refused", why);
        }
        check_busy(b, "after the activation");
        free(defs);
        classad_free(job);
        config_free(cfg);
}

static void bench_free(Bench *b) {
        for (size_t i = 0; i < b->n; i++) {
                agent_sm_free(b->sm[i]);
                classad_free(b->ad[i]);
        }
        free(b->sm);
        free(b->ad);
}

/* iters passes over every slot; the clock moves one second every 64
 * passes (at most ~20 minutes over a whole run: within the claim's lease). */
static uint64_t run_eval(void *arg, uint64_t iters) {
        Bench *b = arg;

        for (uint64_t k = 0; k < iters; k++, b->tick++) {
                int64_t now = b->t0 + 10 + (int64_t) ((b->tick / 64) % 1200);

                for (size_t i = 0; i < b->n; i++)
                        agent_sm_eval(b->sm[i], now);
        }
        return iters * b->n;
}

static void policy_eval(size_t n) {
        char figure[64];
        Bench b;
        double t;

        snprintf(figure, sizeof(figure), "policy_eval_us_%zu", n);
        if (!wanted(figure))
                return;
        bench_setup(&b, n);
        t = time_per_unit(run_eval, &b);
        check_busy(&b, "after the timing");
        printf("%s = %.3f\n", figure, t * 1e6);
        fflush(stdout);
        bench_free(&b);
}

/* ---- (b) carving d-slots ---- */

typedef struct Carving {
        Config *cfg;
        CarvePolicy *policy;
        AgentMachine m;
        AgentSlotDef def;
        ClassAd *pslot, *job;
        AgentRes avail;
        uint64_t refills;
} Carving;

static void carving_setup(Carving *c, const char *extra) {
        char conf[1024];
        AgentSlotDef *defs = NULL;
        ConfigError err = {};
        size_t n = 0;

        snprintf(conf, sizeof(conf),
                 "SLOT_TYPE_1 = 100%%\nSLOT_TYPE_1_PARTITIONABLE = True\nNUM_SLOTS_TYPE_1 = 1\n%s", extra);
        *c = (Carving){ .cfg = config_with(conf) };
        c->m = machine(c->cfg, 1024, 4LL * 1024 * 1024);
        if (agent_slots_layout(c->cfg, &c->m, &defs, &n, &err) < 0 || n != 1 || !defs[0].partitionable)
                die("the layout is not one partitionable slot", err.msg);
        c->def = defs[0];
        if (agent_carve_policy(c->cfg, &c->m, &c->policy, &err) < 0)
                die("the carving policy is refused", err.msg);
        free(defs);
        c->avail = c->def.res;
        if (classad_new(&c->pslot) < 0 ||
            agent_slot_ad_resources(c->pslot, &c->m, &c->def, "slot1", false, &c->avail) < 0)
                die("cannot build the p-slot's ad", NULL);
        if (strstr(extra, "Consumption")) {
                CaError cerr = {};

                if (classad_set_expr_text(c->pslot, "ConsumptionCpus", "quantize(target.RequestCpus, {1})",
                                          CA_MODE_OLD, &cerr) < 0 ||
                    classad_set_expr_text(c->pslot, "ConsumptionMemory", "quantize(target.RequestMemory, {128})",
                                          CA_MODE_OLD, &cerr) < 0 ||
                    classad_set_expr_text(c->pslot, "ConsumptionDisk", "quantize(target.RequestDisk, {1024})",
                                          CA_MODE_OLD, &cerr) < 0)
                        die("cannot set the consumption policy", cerr.msg);
        }
        c->job = parse_old("RequestCpus = 1\nRequestMemory = 1000\nRequestDisk = 1000\nJobUniverse = 5\n");
}

static uint64_t run_carve(void *arg, uint64_t iters) {
        Carving *c = arg;
        char why[256];

        for (uint64_t k = 0; k < iters; k++) {
                AgentRes got;
                int r = agent_pslot_carve(c->policy, &c->m, c->pslot, c->job, &c->avail, &got, why, sizeof(why));

                if (r == -ENOSPC) { /* full: the d-slots are gone, start again */
                        c->avail = c->def.res;
                        c->refills++;
                        r = agent_pslot_carve(c->policy, &c->m, c->pslot, c->job, &c->avail, &got, why, sizeof(why));
                }
                if (r < 0)
                        die("a carving is refused", why);
                agent_res_sub(&c->avail, &got, c->m.n_custom);
        }
        return iters;
}

static void carve(const char *figure, const char *extra) {
        Carving c;
        AgentRes got;
        char why[256];
        double t;

        if (!wanted(figure))
                return;
        carving_setup(&c, extra);
        if (agent_pslot_carve(c.policy, &c.m, c.pslot, c.job, &c.avail, &got, why, sizeof(why)) < 0)
                die("the first carving is refused", why);
        if (got.cpus != 1 || got.memory != 1024 || got.disk != 1024)
                fprintf(stderr, "agent-policy: %s: a d-slot of %" PRId64 " CPUs, %" PRId64 " MB, %" PRId64 " KB\n",
                        figure, got.cpus, got.memory, got.disk);
        t = time_per_unit(run_carve, &c);
        printf("%s = %.0f\n", figure, 1.0 / t);
        fflush(stdout);
        classad_free(c.job);
        classad_free(c.pslot);
        carve_policy_free(c.policy);
        config_free(c.cfg);
}

/* ---- (c) the load of 1024 slots ---- */

typedef enum Mix { MIX_STATIC, MIX_DSLOTS, MIX_PSLOTS } Mix;

typedef struct Loads {
        AgentLoadSlot slots[1024];
        double sink;
} Loads;

static void loads_setup(Loads *l, Mix mix) {
        for (size_t i = 0; i < 1024; i++) {
                AgentLoadSlot *s = &l->slots[i];

                *s = (AgentLoadSlot){ .state = AGENT_STATE_CLAIMED, .cpus = 1, .parent = -1 };
                s->condor_load = i % 3 == 0 ? 0.0 : 1.0;
                if (i % 7 == 0)
                        s->state = i % 2 ? AGENT_STATE_UNCLAIMED : AGENT_STATE_OWNER;
                if (mix == MIX_PSLOTS) {
                        s->partitionable = true;
                        s->cpus = 2;
                } else if (mix == MIX_DSLOTS) {
                        if (i == 0) {
                                s->partitionable = true;
                                s->state = AGENT_STATE_UNCLAIMED;
                                s->cpus = 64;
                        } else
                                s->parent = 0;
                }
        }
}

static uint64_t run_loads(void *arg, uint64_t iters) {
        Loads *l = arg;

        for (uint64_t k = 0; k < iters; k++) {
                /* a machine load that varies, as it does */
                l->sink += agent_load_distribute(700.0 + (double) (k % 512), l->slots, 1024);
        }
        return iters;
}

static void load_distribute(const char *figure, Mix mix) {
        Loads *l;
        double t;

        if (!wanted(figure))
                return;
        l = calloc(1, sizeof(Loads));
        if (!l)
                die("out of memory", NULL);
        loads_setup(l, mix);
        t = time_per_unit(run_loads, l);
        printf("%s = %.0f\n", figure, t * 1e9);
        fflush(stdout);
        free(l);
}

int main(int argc, char **argv) {
        static const struct option options[] = {
                { "repeat", required_argument, NULL, 'r' },
                { "only", required_argument, NULL, 'o' },
                { "help", no_argument, NULL, 'h' },
                {},
        };
        int c;

        while ((c = getopt_long(argc, argv, "r:o:h", options, NULL)) >= 0)
                switch (c) {
                case 'r': {
                        char *end;
                        unsigned long v = strtoul(optarg, &end, 10);

                        if (*end || v < 1 || v > 63)
                                die("--repeat takes a number from 1 to 63", optarg);
                        repeat = (unsigned) v;
                        break;
                }
                case 'o':
                        only = optarg;
                        break;
                case 'h':
                        printf("Usage: %s [--repeat K] [--only PREFIX]\n", argv[0]);
                        return 0;
                default:
                        return 1;
                }
        if (optind != argc)
                die("no arguments expected", argv[optind]);

        policy_eval(1);
        policy_eval(64);
        policy_eval(1024);
        carve("carve_per_s", "");
        carve("carve_consumption_per_s",
              "STARTD_EXPRS = ConsumptionCpus, ConsumptionMemory, ConsumptionDisk\n"
              "ConsumptionCpus = quantize(target.RequestCpus, {1})\n"
              "ConsumptionMemory = quantize(target.RequestMemory, {128})\n"
              "ConsumptionDisk = quantize(target.RequestDisk, {1024})\n");
        load_distribute("load_distribute_ns_1024_static", MIX_STATIC);
        load_distribute("load_distribute_ns_1024_dslots", MIX_DSLOTS);
        load_distribute("load_distribute_ns_1024_pslots", MIX_PSLOTS);
        return 0;
}
