/* SPDX-License-Identifier: Apache-2.0 */
/*
 * scenario-items.c — the lines of a scenario that make its pool, its
 * submitters and their jobs: slot, slots, submitter, jobs (the format:
 * scenario.c, docs/simulate.md), with the defaults every slot ad and job
 * ad gets.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/cleanup.h"
#include "scenario-internal.h"

/* ---- ClassAds ---- */

/* The ad at text (from '[' to the end of the item, which may span lines);
 * an empty text is an empty ad. col: text's column in the item's first
 * line, for the message. */
static int parse_ad(ScnReader *rd, const char *text, int line, int col, ClassAd **ret) {
        CaError cerr = { 0 };

        if (!*text)
                return classad_new(ret);
        if (classad_parse(text, strlen(text), CA_MODE_OLD, ret, &cerr) < 0) {
                if (!cerr.msg[0])
                        return -ENOMEM;
                return scn_fail(rd, line + (cerr.line > 1 ? cerr.line - 1 : 0),
                            "not a ClassAd (column %d): %s", cerr.line > 1 ? cerr.column : col + cerr.column,
                            cerr.msg);
        }
        return 0;
}

/* name = text, unless the ad has name already. */
static int set_default(ClassAd *ad, const char *name, const char *text) {
        CaError cerr;

        if (classad_has(ad, name))
                return 0;
        return classad_set_expr_text(ad, name, text, CA_MODE_OLD, &cerr) < 0 ? -ENOMEM : 0;
}

static int set_default_int(ClassAd *ad, const char *name, int64_t v) {
        return classad_has(ad, name) ? 0 : classad_set_int(ad, name, v);
}

static int set_default_string(ClassAd *ad, const char *name, const char *v) {
        return classad_has(ad, name) ? 0 : classad_set_string(ad, name, v);
}

/* The string attribute name of ad, if it has one: 0 and *ret (NULL when
 * absent), or a message and -EINVAL when it is not a string. */
static int string_attr(ScnReader *rd, const ClassAd *ad, const char *name, int line, char **ret) {
        int r;

        *ret = NULL;
        if (!classad_has(ad, name))
                return 0;
        r = classad_eval_string(ad, name, CA_MODE_OLD, ret);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return scn_fail(rd, line, "%s must be a string", name);
        return 0;
}

/* A resource of a slot: a number >= 0. */
static int resource(ScnReader *rd, const ClassAd *ad, const char *name, int line, double *ret) {
        int r = classad_eval_real(ad, name, CA_MODE_OLD, ret);

        if (r == -ENOMEM)
                return r;
        if (r < 0 || !isfinite(*ret) || *ret < 0)
                return scn_fail(rd, line, "%s must be a number, 0 or more", name);
        return 0;
}

/* ---- slots ---- */

/* The defaults of a slot ad (docs/simulate.md lists them). */
static int fill_slot(ScnReader *rd, ClassAd *ad, const char *machine, bool pslot, int64_t at) {
        int r = 0;

        r = r < 0 ? r : set_default_string(ad, "MyType", "Machine");
        r = r < 0 ? r : set_default_string(ad, "Machine", machine);
        r = r < 0 ? r : set_default_string(ad, "SlotType", pslot ? "Partitionable" : "Static");
        r = r < 0 ? r : classad_set_string(ad, "State", "Unclaimed");
        r = r < 0 ? r : classad_set_string(ad, "Activity", "Idle");
        r = r < 0 ? r : set_default_int(ad, "EnteredCurrentState", NEGO_SCENARIO_EPOCH + at);
        r = r < 0 ? r : set_default(ad, "Start", rd->start);
        r = r < 0 ? r : set_default(ad, "Requirements", "START");
        r = r < 0 ? r : set_default(ad, "Rank", rd->rank);
        r = r < 0 ? r : set_default_int(ad, "Cpus", 1);
        r = r < 0 ? r : set_default_int(ad, "Memory", 1024);
        r = r < 0 ? r : set_default_int(ad, "Disk", 1000000);
        r = r < 0 ? r : set_default_string(ad, "Arch", "X86_64");
        r = r < 0 ? r : set_default_string(ad, "OpSys", "LINUX");
        r = r < 0 ? r : set_default(ad, "SlotWeight", rd->slot_weight);
        r = r < 0 ? r : set_default_int(ad, "LoadAvg", 0);
        return r;
}

/* TotalCpus, TotalSlotCpus, ... (the MODIFY_REQUEST_EXPR_* defaults read
 * TotalSlotMemory / TotalSlotCpus). */
static int fill_totals(ClassAd *ad, const SimScenarioSlot *s) {
        static const char *const res[] = { "Cpus", "Memory", "Disk" };
        const double v[] = { s->cpus, s->memory, s->disk };
        char name[32];
        int r = 0;

        for (size_t i = 0; r >= 0 && i < 3; i++) {
                snprintf(name, sizeof name, "Total%s", res[i]);
                if (!classad_has(ad, name))
                        r = scn_set_number(ad, name, v[i]);
                snprintf(name, sizeof name, "TotalSlot%s", res[i]);
                if (r >= 0 && !classad_has(ad, name))
                        r = scn_set_number(ad, name, v[i]);
        }
        return r;
}

static ScnMachine *machine_get(ScnReader *rd, const char *name) {
        ScnMachine *m = glean_strmap_get(rd->machines, name);
        size_t len = strlen(name);

        if (m)
                return m;
        m = malloc(sizeof *m + len + 1);
        if (!m)
                return NULL;
        m->next = 1;
        memcpy(m->name, name, len + 1);
        if (glean_strmap_put(rd->machines, m->name, m) < 0) {
                free(m);
                return NULL;
        }
        return m;
}


/* One slot, a copy of base (whose defaults are filled): named given, or
 * slotK@MACHINE with the machine's next free K (and SlotID K). */
static int add_slot(ScnReader *rd, const ClassAd *base, const char *given, ScnMachine *m,
                    const SimScenarioSlot *proto) {
        _cleanup_free_ char *name = NULL;
        ClassAd *ad = NULL;
        int64_t id = 1;
        int r;

        if (given) {
                uintptr_t other = (uintptr_t) glean_strmap_get(rd->names, given);
                if (other)
                        return scn_fail(rd, proto->line, "a second slot named %s (the first is on line %d)", given,
                                    rd->sc->slots[other - 1].line);
                if (!(name = strdup(given)))
                        return -ENOMEM;
        } else
                do {
                        free(TAKE_PTR(name));
                        id = m->next++;
                        if (asprintf(&name, "slot%" PRId64 "@%s", id, m->name) < 0)
                                return name = NULL, -ENOMEM;
                } while (glean_strmap_get(rd->names, name));

        if ((r = scn_grow((void **) &rd->sc->slots, &rd->cap_slots, rd->sc->n_slots, sizeof *rd->sc->slots)) < 0)
                return r;
        if ((r = classad_copy(base, &ad)) < 0)
                return r;
        r = classad_set_string(ad, "Name", name);
        if (r >= 0)
                r = set_default_int(ad, "SlotID", id);
        if (r >= 0)
                r = glean_strmap_put(rd->names, name, (void *) (uintptr_t) (rd->sc->n_slots + 1));
        if (r < 0) {
                classad_free(ad);
                return r;
        }
        SimScenarioSlot *s = &rd->sc->slots[rd->sc->n_slots++];
        *s = *proto;
        s->ad = ad;
        s->name = TAKE_PTR(name);
        return 0;
}

/* slot [AD], slots N [AD] */
int scn_slots_item(ScnReader *rd, const char *what, char *p, const char *start, int64_t at, int line) {
        _cleanup_free_ char *given = NULL, *state = NULL, *machine = NULL;
        ClassAd *base = NULL;
        size_t count = 1, max = rd->limits->max_slots;
        int r;

        if (strcmp(what, "slots") == 0 && scn_parse_count(glean_next_word(&p), SIZE_MAX, &count) < 0)
                return scn_fail(rd, line, "slots: expected the number of slots (1 or more), then the ad");
        p = glean_skip_space(p);
        if (*p && *p != '[')
                return scn_fail(rd, line, "%s: unexpected '%s' (the ad goes in [ ])", what, glean_next_word(&p));
        if (count > max - rd->sc->n_slots)
                return scn_too_many(rd, line, "more than %zu slots", max);
        if ((r = parse_ad(rd, p, line, (int) (p - start), &base)) < 0)
                return r;

        SimScenarioSlot proto = { .at = at, .line = line };
        bool pslot = false;
        if ((r = string_attr(rd, base, "Name", line, &given)) < 0 ||
            (r = string_attr(rd, base, "State", line, &state)) < 0 ||
            (r = string_attr(rd, base, "Machine", line, &machine)) < 0)
                goto out;
        r = -EINVAL;
        if (given && count > 1) {
                scn_fail(rd, line, "slots %zu: leave Name out, the copies are named slot1@MACHINE, slot2@MACHINE, ...",
                     count);
                goto out;
        }
        if ((given && !*given) || (machine && !*machine)) {
                scn_fail(rd, line, "%s cannot be empty", given && !*given ? "Name" : "Machine");
                goto out;
        }
        if (state && strcasecmp(state, "Unclaimed") != 0) {
                scn_fail(rd, line, "State = \"%s\": every slot starts Unclaimed", state);
                goto out;
        }
        if (classad_has(base, "PartitionableSlot") &&
            classad_eval_bool(base, "PartitionableSlot", CA_MODE_OLD, &pslot) < 0) {
                scn_fail(rd, line, "PartitionableSlot must be true or false");
                goto out;
        }
        const char *host = machine ? machine : given && strchr(given, '@') ? strchr(given, '@') + 1 : "sim";
        ScnMachine *m = machine_get(rd, *host ? host : "sim");
        r = m ? fill_slot(rd, base, m->name, pslot, at) : -ENOMEM;
        if (r >= 0)
                r = resource(rd, base, "Cpus", line, &proto.cpus);
        if (r >= 0)
                r = resource(rd, base, "Memory", line, &proto.memory);
        if (r >= 0)
                r = resource(rd, base, "Disk", line, &proto.disk);
        if (r >= 0)
                r = fill_totals(base, &proto);
        if (r >= 0) {
                double weight;
                r = resource(rd, base, "SlotWeight", line, &weight);
        }
        proto.partitionable = pslot;
        for (size_t i = 0; r >= 0 && i < count; i++)
                r = add_slot(rd, base, given, m, &proto);
out:
        classad_free(base);
        return r;
}

/* ---- submitters ---- */

/* The GROUP_NAMES, for a message. */
static char *group_list(const AcctGroups *g) {
        char *s = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&s, &len);

        if (!f)
                return NULL;
        for (size_t i = 1; i < acct_groups_count(g); i++)
                fprintf(f, "%s%s", i > 1 ? ", " : "", acct_groups_get(g, i)->name);
        if (fclose(f) != 0) {
                free(s);
                return NULL;
        }
        return s;
}

static int check_group(ScnReader *rd, const char *group, int line) {
        char why[256];
        size_t k;

        if (acct_check_group_name(group, why, sizeof why) < 0)
                return scn_fail(rd, line, "submitter: %s", why);
        if (acct_groups_find(rd->groups, group, &k) >= 0 && k > 0)
                return 0;
        if (acct_groups_count(rd->groups) <= 1)
                return scn_fail(rd, line, "group %s: the configuration has no GROUP_NAMES", group);
        _cleanup_free_ char *list = group_list(rd->groups);
        return scn_fail(rd, line, "group %s is not one of GROUP_NAMES (%s)", group, list ? list : "");
}

/* The identity of a submitter's jobs into ad: Owner, User, AccountingGroup, NiceUser. */
static int set_identity(ClassAd *ad, const SimScenarioSubmitter *s) {
        _cleanup_free_ char *owner = strndup(s->user, strcspn(s->user, "@")), *group = NULL;
        int r;

        if (!owner)
                return -ENOMEM;
        r = set_default_string(ad, "Owner", owner);
        if (r >= 0)
                r = set_default_string(ad, "User", s->user);
        if (r >= 0 && s->group) {
                if (asprintf(&group, "%s.%s", s->group, owner) < 0)
                        return -ENOMEM;
                r = set_default_string(ad, "AccountingGroup", group);
        }
        if (r >= 0 && s->nice && !classad_has(ad, "NiceUser"))
                r = classad_set_bool(ad, "NiceUser", true);
        return r;
}

static bool valid_user(const char *s) {
        const char *at = strchr(s, '@');

        if (!*s || *s == '@' || strpbrk(s, "\"'\\[]") || (at && (!at[1] || strchr(at + 1, '@'))))
                return false;
        return strncasecmp(s, ACCT_NICE_PREFIX, strlen(ACCT_NICE_PREFIX)) != 0;
}

/* One option of a submitter line at w (its values follow in *p). */
static int submitter_option(ScnReader *rd, SimScenarioSubmitter *s, const char *w, char **p, int line) {
        const char *v;
        int r;

        if (strcmp(w, "nice") == 0) {
                if (s->nice)
                        return scn_fail(rd, line, "submitter: nice given twice");
                s->nice = true;
        } else if (strcmp(w, "factor") == 0) {
                if (s->has_factor)
                        return scn_fail(rd, line, "submitter: factor given twice");
                s->has_factor = true;
                if (scn_parse_number(glean_next_word(p), &s->factor) < 0 || s->factor < 1)
                        return scn_fail(rd, line, "factor: expected a number, 1 or more");
        } else if (strcmp(w, "rup") == 0) {
                if (s->has_rup)
                        return scn_fail(rd, line, "submitter: rup given twice");
                s->has_rup = true;
                if (scn_parse_number(glean_next_word(p), &s->rup) < 0 || s->rup < ACCT_MIN_PRIORITY)
                        return scn_fail(rd, line, "rup: expected a number, %g or more", ACCT_MIN_PRIORITY);
        } else if (strcmp(w, "usage") == 0) {
                if (s->usage_time)
                        return scn_fail(rd, line, "submitter: usage given twice");
                const char *weight = glean_next_word(p), *f = glean_next_word(p), *dur = glean_next_word(p);
                if (scn_parse_number(weight, &s->usage_weight) < 0 || s->usage_weight <= 0 || !f ||
                    strcmp(f, "for") != 0 || !dur || sim_scenario_parse_duration(dur, &s->usage_time) < 0 ||
                    s->usage_time <= 0)
                        return scn_fail(rd, line, "usage: expected 'usage WEIGHT for DURATION' "
                                              "(usage 10 for 2h: a slot weight of 10 for the 2 hours before time 0)");
        } else if (strcmp(w, "group") == 0) {
                if (s->group)
                        return scn_fail(rd, line, "submitter: group given twice");
                if (!(v = glean_next_word(p)))
                        return scn_fail(rd, line, "group: expected a group of GROUP_NAMES");
                if ((r = check_group(rd, v, line)) < 0)
                        return r;
                if (!(s->group = strdup(v)))
                        return -ENOMEM;
        } else
                return scn_fail(rd, line, "submitter: unexpected '%s' (expected factor, rup, usage, nice or group)", w);
        return 0;
}

void scn_submitter_clear(SimScenarioSubmitter *s) {
        free(s->label);
        free(s->name);
        free(s->user);
        free(s->group);
        *s = (SimScenarioSubmitter){ 0 };
}

/* The submitter's accounting name, from what its jobs will say. */
static int submitter_identity(ScnReader *rd, SimScenarioSubmitter *s) {
        ClassAd *ad = NULL;
        char why[256];
        int r;

        if (strchr(s->label, '@'))
                s->user = strdup(s->label);
        else if (asprintf(&s->user, "%s@%s", s->label, rd->sc->domain) < 0)
                s->user = NULL;
        if (!s->user)
                return -ENOMEM;
        if ((r = classad_new(&ad)) < 0)
                return r;
        r = set_identity(ad, s);
        if (r >= 0)
                r = acct_job_submitter(ad, rd->sc->domain, &s->name, why, sizeof why);
        classad_free(ad);
        if (r < 0 && r != -ENOMEM)
                return scn_fail(rd, s->line, "submitter %s: %s", s->label, why);
        return r;
}

/* submitter NAME [factor F] [rup R] [usage W for DURATION] [nice] [group G] */
int scn_submitter_item(ScnReader *rd, char *p, int line) {
        SimScenarioSubmitter s = { .line = line };
        const char *label = glean_next_word(&p);
        char *w;
        int r = 0;

        if (!label || !valid_user(label))
                return scn_fail(rd, line, "submitter: expected a user name (alice, or alice@domain)%s",
                            label && strncasecmp(label, ACCT_NICE_PREFIX, strlen(ACCT_NICE_PREFIX)) == 0
                                    ? ": for a nice user, write 'submitter NAME nice'"
                                    : "");
        while (r >= 0 && (w = glean_next_word(&p)))
                r = submitter_option(rd, &s, w, &p, line);
        if (r >= 0 && *glean_skip_space(p))
                r = scn_fail(rd, line, "submitter: unexpected '%s'", glean_skip_space(p));
        if (r >= 0 && s.nice && s.group)
                r = scn_fail(rd, line, "submitter: a nice user is in no quota group (nice and group exclude "
                                       "each other)");
        if (r >= 0)
                r = (s.label = strdup(label)) ? submitter_identity(rd, &s) : -ENOMEM;
        if (r < 0)
                goto out;
        uintptr_t other = (uintptr_t) glean_strmap_get(rd->submitters, s.name);
        if (other) {
                r = scn_fail(rd, line, "submitter %s is declared twice (first on line %d)", s.name,
                         rd->sc->submitters[other - 1].line);
                goto out;
        }
        r = scn_grow((void **) &rd->sc->submitters, &rd->cap_submitters, rd->sc->n_submitters,
                 sizeof *rd->sc->submitters);
        if (r >= 0)
                r = glean_strmap_put(rd->submitters, s.name, (void *) (uintptr_t) (rd->sc->n_submitters + 1));
        if (r >= 0) {
                rd->sc->submitters[rd->sc->n_submitters++] = s;
                return 0;
        }
out:
        scn_submitter_clear(&s);
        return r;
}

/* ---- jobs ---- */

/* The Requirements condor_submit writes for a job that gives none. */
#define DEFAULT_JOB_REQUIREMENTS                                                                          \
        "(TARGET.Arch == \"X86_64\") && (TARGET.OpSys == \"LINUX\") && (TARGET.Disk >= RequestDisk) && " \
        "(TARGET.Memory >= RequestMemory) && (TARGET.Cpus >= RequestCpus)"

/* The defaults of a job ad (docs/simulate.md lists them). */
static int fill_job(ClassAd *ad, const SimScenarioSubmitter *s, int64_t cluster, int64_t at) {
        int r = set_identity(ad, s);

        r = r < 0 ? r : set_default_string(ad, "MyType", "Job");
        r = r < 0 ? r : set_default_int(ad, "QDate", NEGO_SCENARIO_EPOCH + at);
        r = r < 0 ? r : classad_set_int(ad, "ClusterId", cluster);
        r = r < 0 ? r : classad_set_int(ad, "ProcId", 0);
        r = r < 0 ? r : set_default_int(ad, "JobPrio", 0);
        r = r < 0 ? r : set_default_int(ad, "JobUniverse", 5);
        r = r < 0 ? r : classad_set_int(ad, "JobStatus", 1);
        r = r < 0 ? r : set_default(ad, "Requirements", DEFAULT_JOB_REQUIREMENTS);
        r = r < 0 ? r : set_default(ad, "Rank", "0.0");
        r = r < 0 ? r : set_default_int(ad, "RequestCpus", 1);
        r = r < 0 ? r : set_default_int(ad, "RequestMemory", 128);
        r = r < 0 ? r : set_default_int(ad, "RequestDisk", 1024);
        return r;
}

/* jobs NAME N [runtime DURATION|forever] [AD] */
int scn_jobs_item(ScnReader *rd, char *p, const char *start, int64_t at, int line) {
        SimScenario *sc = rd->sc;
        const char *label = glean_next_word(&p), *w;
        _cleanup_free_ char *name = NULL;
        size_t sub, count, max = rd->limits->max_jobs;
        int64_t runtime = NEGO_RUNTIME_FOREVER;
        bool has_runtime = false;
        ClassAd *ad = NULL;
        char why[256];
        int r;

        if (!label)
                return scn_fail(rd, line, "jobs: expected a submitter, the number of jobs, then the ad");
        r = sim_scenario_find_submitter(sc, label, &sub);
        if (r == -EEXIST)
                return scn_fail(rd, line, "jobs: '%s' names several submitters: write the accounting name", label);
        if (r < 0)
                return scn_fail(rd, line, "jobs: no submitter '%s' (declare it with a submitter line before)", label);
        if (scn_parse_count(glean_next_word(&p), SIZE_MAX, &count) < 0)
                return scn_fail(rd, line, "jobs: expected the number of jobs (1 or more) after the submitter");
        while ((w = glean_next_word(&p))) {
                const char *v = glean_next_word(&p);

                if (strcmp(w, "runtime") != 0)
                        return scn_fail(rd, line, "jobs: unexpected '%s' (expected runtime, or the ad in [ ])", w);
                if (has_runtime)
                        return scn_fail(rd, line, "jobs: runtime given twice");
                has_runtime = true;
                if (v && strcmp(v, "forever") == 0)
                        continue;
                if (!v || sim_scenario_parse_duration(v, &runtime) < 0 || runtime <= 0)
                        return scn_fail(rd, line,
                                        "runtime: expected a duration over 0 (90, 30m, 1h30m, 2d) or forever");
        }
        if (count > max - sc->total_jobs)
                return scn_too_many(rd, line, "more than %zu jobs", max);
        p = glean_skip_space(p);
        if ((r = parse_ad(rd, p, line, (int) (p - start), &ad)) < 0)
                return r;
        if (classad_has(ad, "ClusterId") || classad_has(ad, "ProcId")) {
                r = scn_fail(rd, line, "ClusterId and ProcId are the simulator's: each jobs line is a cluster");
                goto out;
        }
        const SimScenarioSubmitter *s = &sc->submitters[sub];
        if ((r = fill_job(ad, s, (int64_t) sc->n_jobs + 1, at)) < 0)
                goto out;
        r = acct_job_submitter(ad, sc->domain, &name, why, sizeof why);
        if (r == -ENOMEM)
                goto out;
        if (r < 0) {
                r = scn_fail(rd, line, "jobs: %s", why);
                goto out;
        }
        if (strcmp(name, s->name) != 0) {
                r = scn_fail(rd, line,
                             "the ad makes these jobs %s's, not %s's (its Owner, User, AccountingGroup or NiceUser)",
                             name, s->name);
                goto out;
        }
        if ((r = scn_grow((void **) &sc->jobs, &rd->cap_jobs, sc->n_jobs, sizeof *sc->jobs)) < 0)
                goto out;
        sc->jobs[sc->n_jobs] = (SimScenarioJobs){
                .submitter = sub,
                .ad = TAKE_PTR(ad),
                .cluster = (int64_t) sc->n_jobs + 1,
                .count = count,
                .runtime = runtime,
                .at = at,
                .line = line,
        };
        sc->n_jobs++;
        sc->total_jobs += count;
out:
        classad_free(ad);
        return r;
}

