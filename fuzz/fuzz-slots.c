/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz-slots — libFuzzer target for the machine's resources and slots
 * (agent/slots.h): agent_machine_configure(), agent_slots_layout(),
 * agent_slot_ad_resources(), agent_pslot_carve() with agent_res_sub(),
 * agent_slots_rescale(), agent_load_distribute() and the idle knobs.
 *
 * Input: a configuration text, then optionally a line "%%" and a job ad
 * in the old format (one "Name = expr" per line). NUL bytes of the
 * configuration read as newlines. The configuration is loaded on a fresh
 * config_new() (the built-in defaults) with include refused (the fuzzer
 * must not read the file system or run commands); the machine has the
 * fixed detected values 16 CPUs, 64 GB of memory, 1 TB of disk and 8 GB
 * of swap. Then the slot layout, an ad for each of the first slots (with
 * STARTD_ATTRS, so that a consumption policy of seed 003 reaches the
 * p-slot's ad), and on the first partitionable slot up to FUZZ_CARVES
 * carvings, alternately with the job ad of the tail (when there is one
 * and it parses) and with a job made of the input's last bytes; each
 * accepted carving is subtracted from the p-slot's resources and its ad
 * refreshed. Finally the load of the slots and d-slots is distributed.
 *
 * Checks, each an abort() when broken:
 *
 *   - a refusal (configure, layout, idle knobs) has a non-empty
 *     ConfigError message; a refused carving has a reason and is -EINVAL
 *     or -ENOSPC;
 *   - a machine has at least 1 CPU and 1 MB, no negative disk, swap or
 *     custom resource, named custom resources;
 *   - a layout has 1..AGENT_MAX_SLOTS slots numbered 1, 2, 3, ..., each
 *     with at least one CPU and one MB; the slots' CPUs, memory, disk,
 *     swap and custom resources add up to no more than the machine's;
 *   - a carving fits what the p-slot has left, carves no swap, is not all
 *     zero and leaves nothing negative;
 *   - the distributed owner load is the machine's load less glean's, and
 *     every slot's load is finite and not negative.
 */

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config-internal.h"
#include "slots.h"

#define FUZZ_CARVES 8     /* carvings per input */
#define FUZZ_ADS 64       /* slots that get an ad */
#define FUZZ_JOB_BYTES 8  /* the synthesized job's bytes, from the input's end */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static _Noreturn void fail(const char *what, const char *detail) {
        fprintf(stderr, "FUZZ-SLOTS FAILURE: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
        abort();
}

/* FUZZ_SLOTS_VERBOSE=1 in the environment: say what an input does (for
 * checking the seeds: build/fuzz/fuzz-slots fuzz/corpus/slots/FILE). */
static bool verbose(void) {
        static int v = -1;

        if (v < 0)
                v = getenv("FUZZ_SLOTS_VERBOSE") != NULL;
        return v;
}

#define note(...) (verbose() ? (void) fprintf(stderr, __VA_ARGS__) : (void) 0)

static void check_refusal(int r, const ConfigError *err, const char *what) {
        if (r < 0)
                note("%s: %d: %s\n", what, r, err->msg);
        if (r >= 0 || r == -ENOMEM)
                return;
        if (!err->msg[0])
                fail("a refusal without a reason", what);
}

static void check_machine(const AgentMachine *m) {
        if (m->total.cpus < 1 || m->total.memory < 1 || m->total.disk < 0 || m->total.swap < 0)
                fail("a machine without a CPU or a MB, or with negative disk or swap", NULL);
        if (m->n_custom > AGENT_MAX_CUSTOM)
                fail("too many custom resources", NULL);
        for (size_t i = 0; i < m->n_custom; i++) {
                if (!m->custom_name[i][0] || !memchr(m->custom_name[i], '\0', sizeof(m->custom_name[i])))
                        fail("a custom resource without a name", NULL);
                if (!isfinite(m->total.custom[i]) || m->total.custom[i] < 0)
                        fail("a negative or infinite custom resource", m->custom_name[i]);
        }
}

static void check_layout(const AgentMachine *m, const AgentSlotDef *defs, size_t n) {
        AgentRes sum = {};
        char id[32];

        if (n < 1 || n > AGENT_MAX_SLOTS)
                fail("a layout without slots or with too many", NULL);
        for (size_t i = 0; i < n; i++) {
                const AgentSlotDef *d = &defs[i];

                snprintf(id, sizeof(id), "slot%zu", i + 1);
                if (d->id != i + 1)
                        fail("slots not numbered 1, 2, 3, ...", id);
                if (d->res.cpus < 1 || d->res.memory < 1)
                        fail("a slot with less than one CPU or one MB", id);
                if (d->res.disk < 0 || d->res.swap < 0 || !isfinite(d->disk_fraction) || d->disk_fraction < 0 ||
                    !isfinite(d->swap_fraction) || d->swap_fraction < 0)
                        fail("a slot with negative or infinite disk or swap", id);
                for (size_t c = 0; c < m->n_custom; c++)
                        if (!isfinite(d->res.custom[c]) || d->res.custom[c] < 0)
                                fail("a slot with a negative or infinite custom resource", id);
                agent_res_add(&sum, &d->res, m->n_custom);
        }
        if (sum.cpus > m->total.cpus)
                fail("the slots have more CPUs than the machine", NULL);
        if (sum.memory > m->total.memory)
                fail("the slots have more memory than the machine", NULL);
        if (sum.disk > m->total.disk)
                fail("the slots have more disk than the machine", NULL);
        if (sum.swap > m->total.swap)
                fail("the slots have more swap than the machine", NULL);
        for (size_t c = 0; c < m->n_custom; c++)
                if (sum.custom[c] > m->total.custom[c] * (1 + 1e-9) + 1e-6)
                        fail("the slots have more of a custom resource than the machine", m->custom_name[c]);
}

/* STARTD_ATTRS of the slot into its ad, as the agent does; values that are
 * no expression are skipped. */
static void startd_attrs(const Config *cfg, unsigned id, ClassAd *ad) {
        ConfigError err = {};
        char **names = NULL;
        int r;

        r = config_startd_attrs(cfg, id, &names, &err);
        check_refusal(r, &err, "config_startd_attrs");
        if (r < 0)
                return;
        for (size_t i = 0; names[i]; i++) {
                CaError cerr = {};
                char *v = NULL;

                err = (ConfigError){};
                if (config_get_slot(cfg, id, names[i], &v, &err) >= 0 && v[0])
                        (void) classad_set_expr_text(ad, names[i], v, CA_MODE_OLD, &cerr);
                free(v);
        }
        config_strv_free(names);
}

static ClassAd *slot_ad(const Config *cfg, const AgentMachine *m, const AgentSlotDef *def, const char *name,
                        bool dynamic, const AgentRes *res) {
        ClassAd *ad = NULL;

        if (classad_new(&ad) < 0)
                fail("classad_new() failed", NULL);
        if (agent_slot_ad_resources(ad, m, def, name, dynamic, res) < 0)
                fail("agent_slot_ad_resources() refused a slot", name);
        if (!dynamic)
                startd_attrs(cfg, def->id, ad);
        return ad;
}

/* A job from the input's last bytes: requests of every kind, some missing,
 * some real, some as _condor_Request<Res>. */
static ClassAd *made_job(const AgentMachine *m, const uint8_t *data, size_t size) {
        uint8_t b[FUZZ_JOB_BYTES] = {};
        size_t k = size < FUZZ_JOB_BYTES ? size : FUZZ_JOB_BYTES;
        ClassAd *job = NULL;
        char attr[96];

        memcpy(b + FUZZ_JOB_BYTES - k, data + size - k, k);
        if (classad_new(&job) < 0)
                fail("classad_new() failed", NULL);
        /* the last byte: bit 7 with bit 0, 1 or 2 leaves a request out (text
         * never does), bits 3 to 6 vary the kinds */
        if ((b[7] & 0x81) != 0x81)
                (void) classad_set_int(job, "RequestCpus", b[0] % 9);
        if ((b[7] & 0x82) != 0x82) {
                if (b[7] & 8)
                        (void) classad_set_real(job, "RequestMemory", b[1] * 256.0 + 0.5);
                else
                        (void) classad_set_int(job, "RequestMemory", (int64_t) b[1] * 256);
        }
        if ((b[7] & 0x84) != 0x84)
                (void) classad_set_int(job, "RequestDisk", (int64_t) b[2] * 65536);
        if (b[7] & 16)
                (void) classad_set_int(job, "_condor_RequestMemory", (int64_t) b[3] * 64);
        if (b[7] & 32)
                (void) classad_set_int(job, "_condor_RequestCpus", b[4] % 5);
        if (b[7] & 64)
                (void) classad_set_int(job, "RequestCpus", -(int64_t) (b[0] % 3));
        for (size_t c = 0; c < m->n_custom; c++) {
                snprintf(attr, sizeof(attr), "Request%s", m->custom_name[c]);
                (void) classad_set_int(job, attr, (b[5] >> (c % 8)) % 4);
        }
        (void) classad_set_int(job, "MemoryUsage", (int64_t) b[6] * 16);
        return job;
}

static void check_carving(const AgentMachine *m, const AgentRes *got, const AgentRes *avail) {
        bool any = got->cpus > 0 || got->memory > 0 || got->disk > 0;

        if (!agent_res_fits(got, avail, m->n_custom))
                fail("a carving that does not fit what is left", NULL);
        if (got->cpus < 0 || got->memory < 0 || got->disk < 0 || got->swap != 0)
                fail("a carving with a negative amount or swap", NULL);
        for (size_t c = 0; c < m->n_custom; c++) {
                if (!isfinite(got->custom[c]) || got->custom[c] < 0)
                        fail("a carving with a negative custom resource", m->custom_name[c]);
                any = any || got->custom[c] > 0;
        }
        if (!any)
                fail("a carving of nothing", NULL);
}

typedef struct Carved {
        AgentRes res[FUZZ_CARVES];
        size_t n;
} Carved;

/* Up to FUZZ_CARVES carvings out of the first partitionable slot. */
static void carve(const Config *cfg, const AgentMachine *m, const AgentSlotDef *def, const ClassAd *tail_job,
                  const uint8_t *data, size_t size, Carved *carved) {
        char name[32], why[256];
        ClassAd *pad, *job = made_job(m, data, size);
        AgentRes avail = def->res;
        CarvePolicy *policy = NULL;

        if (agent_carve_policy(cfg, m, &policy, NULL) < 0) {
                note("a malformed MODIFY_REQUEST_EXPR_* or MUST_MODIFY_REQUEST_EXPRS: nothing carved\n");
                classad_free(job);
                return;
        }
        snprintf(name, sizeof(name), "slot%u", def->id);
        pad = slot_ad(cfg, m, def, name, false, &avail);
        for (size_t i = 0; i < FUZZ_CARVES; i++) {
                const ClassAd *j = tail_job && i % 2 == 0 ? tail_job : job;
                AgentRes got = {};
                int r;

                memset(why, 'x', sizeof(why));
                r = agent_pslot_carve(policy, m, pad, j, &avail, &got, why, sizeof(why));
                if (!memchr(why, '\0', sizeof(why)))
                        fail("an unterminated reason", NULL);
                if (r < 0) {
                        if (r != -EINVAL && r != -ENOSPC && r != -ENOMEM)
                                fail("a carving refused with an unexpected error", strerror(-r));
                        if (!why[0])
                                fail("a carving refused without a reason", NULL);
                        note("carve %zu: %d: %s\n", i, r, why);
                        continue;
                }
                check_carving(m, &got, &avail);
                note("carve %zu: cpus=%lld memory=%lld disk=%lld\n", i, (long long) got.cpus,
                     (long long) got.memory, (long long) got.disk);
                agent_res_sub(&avail, &got, m->n_custom);
                if (avail.cpus < 0 || avail.memory < 0 || avail.disk < 0 || avail.swap < 0)
                        fail("a p-slot left with negative resources", NULL);
                for (size_t c = 0; c < m->n_custom; c++)
                        if (avail.custom[c] < -1e-9)
                                fail("a p-slot left with a negative custom resource", m->custom_name[c]);
                carved->res[carved->n++] = got;

                /* the d-slot's ad and the p-slot's, refreshed */
                snprintf(name, sizeof(name), "slot%u_%zu", def->id, carved->n);
                classad_free(slot_ad(cfg, m, def, name, true, &got));
                snprintf(name, sizeof(name), "slot%u", def->id);
                if (agent_slot_ad_resources(pad, m, def, name, false, &avail) < 0)
                        fail("agent_slot_ad_resources() refused to refresh a p-slot", name);
        }
        classad_free(job);
        classad_free(pad);
        carve_policy_free(policy);
}

/* Loads of every slot and d-slot, from the input's first bytes. */
static void loads(const AgentSlotDef *defs, size_t n, size_t first_p, const Carved *carved, const uint8_t *data,
                  size_t size) {
        size_t total = n + carved->n;
        AgentLoadSlot *slots = calloc(total, sizeof(AgentLoadSlot));
        double load, owner, glean = 0, handed = 0;

        if (!slots)
                fail("out of memory", NULL);
        for (size_t i = 0; i < total; i++) {
                uint8_t b = size ? data[i % size] : 0;
                AgentLoadSlot *s = &slots[i];

                s->state = (AgentState) (b % AGENT_STATE__MAX);
                s->condor_load = (b >> 3) / 8.0;
                s->parent = -1;
                if (i < n) {
                        s->cpus = (double) defs[i].res.cpus;
                        s->partitionable = defs[i].partitionable;
                } else {
                        s->cpus = (double) carved->res[i - n].cpus;
                        s->parent = (int) first_p;
                }
                glean += s->condor_load;
        }
        load = size ? data[0] / 4.0 : 0;
        owner = agent_load_distribute(load, slots, total);
        if (!isfinite(owner) || owner < 0 || fabs(owner - fmax(0, load - glean)) > 1e-9 * (1 + load))
                fail("the owner load is not the machine's less glean's", NULL);
        for (size_t i = 0; i < total; i++) {
                if (!isfinite(slots[i].load) || slots[i].load < 0 || slots[i].owner_load < 0)
                        fail("a slot with a negative or infinite load", NULL);
                handed += slots[i].owner_load;
        }
        if (fabs(handed - owner) > 1e-6 * (1 + owner))
                fail("the owner load handed out is not the owner load", NULL);
        free(slots);
}

static void idle(const Config *cfg) {
        AgentIdleKnobs k;
        ConfigError err = {};
        int64_t kbd, console;
        int r;

        r = agent_idle_knobs(cfg, &k, &err);
        check_refusal(r, &err, "agent_idle_knobs");
        if (r < 0)
                return;
        for (unsigned id = 1; id <= 3; id++) {
                agent_slot_idle(&k, id, 100, 200, 50, &kbd, &console);
                if (console >= 0 && kbd > console)
                        fail("KeyboardIdle > ConsoleIdle", NULL);
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        static const AgentRes detected = {
                .cpus = 16, .memory = 64 * 1024, .disk = 1024LL * 1024 * 1024, .swap = 8 * 1024 * 1024,
        };
        Config *cfg = NULL;
        ConfigError err = {};
        AgentMachine m;
        AgentSlotDef *defs = NULL;
        ClassAd *tail_job = NULL;
        Carved carved = {};
        size_t n = 0, first_p = SIZE_MAX, conf_len = size;
        char *text;
        int r;

        /* the configuration up to a line "%%", the job ad after it */
        for (size_t i = 0; i + 2 <= size; i++)
                if ((i == 0 || data[i - 1] == '\n') && data[i] == '%' && data[i + 1] == '%' &&
                    (i + 2 == size || data[i + 2] == '\n')) {
                        CaError cerr = {};
                        size_t start = i + 2 < size ? i + 3 : size;

                        conf_len = i;
                        if (classad_parse_old((const char *) data + start, size - start, CA_MODE_OLD, &tail_job,
                                              &cerr) < 0)
                                tail_job = NULL;
                        break;
                }
        text = malloc(conf_len + 1);
        if (!text)
                return 0;
        for (size_t i = 0; i < conf_len; i++)
                text[i] = data[i] ? (char) data[i] : '\n';
        text[conf_len] = '\0';

        if (config_new(&cfg) < 0)
                fail("config_new() failed", NULL);
        r = config_load_string_flags(cfg, text, "<fuzz>", CONFIG_LOAD_NO_INCLUDE, &err);
        if (r < 0) {
                note("load: %d: %s\n", r, err.msg);
                goto out;
        }

        err = (ConfigError){};
        r = agent_machine_configure(cfg, &detected, "x86_64", "fuzz.example.org", &m, &err);
        check_refusal(r, &err, "agent_machine_configure");
        if (r < 0)
                goto out;
        check_machine(&m);

        err = (ConfigError){};
        r = agent_slots_layout(cfg, &m, &defs, &n, &err);
        check_refusal(r, &err, "agent_slots_layout");
        if (r < 0)
                goto out;
        check_layout(&m, defs, n);
        note("%zu slots, tail job %s\n", n, tail_job ? "parsed" : "none");

        for (size_t i = 0; i < n; i++) {
                char name[32];

                if (defs[i].partitionable && first_p == SIZE_MAX)
                        first_p = i;
                if (i < FUZZ_ADS) {
                        snprintf(name, sizeof(name), "slot%u", defs[i].id);
                        classad_free(slot_ad(cfg, &m, &defs[i], name, false, &defs[i].res));
                }
        }
        if (first_p != SIZE_MAX)
                carve(cfg, &m, &defs[first_p], tail_job, data, size, &carved);
        loads(defs, n, first_p == SIZE_MAX ? 0 : first_p, &carved, data, size);

        /* disk and swap shrink: no slot gets more than the machine has */
        agent_slots_rescale(defs, n, m.total.disk / 3, m.total.swap / 7);
        for (size_t i = 0; i < n; i++)
                if (defs[i].res.disk > m.total.disk / 3 || defs[i].res.swap > m.total.swap / 7)
                        fail("a rescaled slot with more than the machine has", NULL);

        idle(cfg);

out:
        free(defs);
        classad_free(tail_job);
        config_free(cfg);
        free(text);
        return 0;
}
