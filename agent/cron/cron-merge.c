/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cron-merge.c — the ads startd cron runs published (HTCondor's
 * StartdNamedClassAd list: one per job and tag, a new one replacing the
 * old), which of them reach a slot (StartdNamedClassAd::ShouldMergeInto:
 * SlotMergeConstraint, SlotName or Name, SlotTypeId, SlotId, in that
 * order, after the job's SLOTS), their merge into the slot ad and out of
 * it again, and when a job starts next.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cron.h"

typedef struct Entry {
        size_t job;
        AgentCronAd *ad;
        bool seen;     /* published since agent_cron_store_begin */
} Entry;

struct AgentCronStore {
        Entry *e;
        size_t n, cap;
};

int agent_cron_store_new(AgentCronStore **ret) {
        AgentCronStore *st = calloc(1, sizeof *st);
        if (!st)
                return -ENOMEM;
        *ret = st;
        return 0;
}

void agent_cron_store_free(AgentCronStore *st) {
        if (!st)
                return;
        for (size_t i = 0; i < st->n; i++)
                agent_cron_ad_free(st->e[i].ad);
        free(st->e);
        free(st);
}

size_t agent_cron_store_count(const AgentCronStore *st) {
        return st ? st->n : 0;
}

static bool is_last_update(const char *name) {
        size_t n = strlen(name);
        return n >= 10 && !strcasecmp(name + n - 10, "LastUpdate");
}

/* Do a and b hold the same attributes, LastUpdate aside? */
static bool ad_same(const ClassAd *a, const ClassAd *b) {
        size_t na = 0, nb = 0;
        ClassAdIter it = classad_iter(a);
        const char *name;
        char *text;
        bool same = true;
        while (classad_iter_next(&it, &name, &text)) {
                if (!is_last_update(name)) {
                        na++;
                        char *other = same ? classad_unparse_attr(b, name) : NULL;
                        if (same && (!other || !text || strcmp(other, text)))
                                same = false;
                        free(other);
                }
                free(text);
        }
        it = classad_iter(b);
        while (classad_iter_next(&it, &name, NULL))
                if (!is_last_update(name))
                        nb++;
        return same && na == nb;
}

static void entry_remove(AgentCronStore *st, size_t i) {
        agent_cron_ad_free(st->e[i].ad);
        memmove(&st->e[i], &st->e[i + 1], (st->n - i - 1) * sizeof *st->e);
        st->n--;
}

int agent_cron_store_put(AgentCronStore *st, size_t job, AgentCronAd *ad, bool *ret_changed) {
        for (size_t i = 0; i < st->n; i++)
                if (st->e[i].job == job && !strcasecmp(st->e[i].ad->tag, ad->tag)) {
                        bool changed = !ad_same(ad->attrs, st->e[i].ad->attrs) ||
                                       !ad_same(ad->select, st->e[i].ad->select);
                        agent_cron_ad_free(st->e[i].ad);
                        st->e[i].ad = ad;
                        st->e[i].seen = true;
                        if (ret_changed)
                                *ret_changed = changed;
                        return 0;
                }
        size_t mine = 0;
        for (size_t i = 0; i < st->n; i++)
                mine += st->e[i].job == job;
        if (mine >= AGENT_CRON_MAX_ADS) {
                agent_cron_ad_free(ad);
                return -E2BIG;
        }
        if (st->n == st->cap) {
                size_t cap = st->cap ? st->cap * 2 : 8;
                Entry *e = realloc(st->e, cap * sizeof *e);
                if (!e) {
                        agent_cron_ad_free(ad);
                        return -ENOMEM;
                }
                st->e = e;
                st->cap = cap;
        }
        st->e[st->n++] = (Entry){ .job = job, .ad = ad, .seen = true };
        if (ret_changed)
                *ret_changed = true;
        return 0;
}

void agent_cron_store_begin(AgentCronStore *st, size_t job) {
        for (size_t i = 0; i < st->n; i++)
                if (st->e[i].job == job)
                        st->e[i].seen = false;
}

void agent_cron_store_end(AgentCronStore *st, size_t job) {
        bool any = false;
        for (size_t i = 0; i < st->n; i++)
                if (st->e[i].job == job && st->e[i].seen)
                        any = true;
        if (!any)
                return; /* a run that published nothing leaves the last ads */
        for (size_t i = st->n; i-- > 0;)
                if (st->e[i].job == job && !st->e[i].seen)
                        entry_remove(st, i);
}

void agent_cron_store_drop(AgentCronStore *st, size_t job) {
        for (size_t i = st->n; i-- > 0;)
                if (st->e[i].job == job)
                        entry_remove(st, i);
}

/* ---- which slots an ad reaches ---- */

static bool reaches(const AgentCronJob *j, const AgentCronAd *ad, const ClassAd *slot) {
        int64_t id = 0, type = 0;
        bool has_id = classad_eval_int(slot, "SlotID", CA_MODE_OLD, &id) >= 0;
        if (j && j->n_slots) {
                bool in = false;
                for (size_t i = 0; i < j->n_slots && has_id; i++)
                        if ((int64_t) j->slots[i] == id)
                                in = true;
                if (!in)
                        return false;
        }
        const ClassAd *sel = ad->select;
        if (classad_has(sel, "SlotMergeConstraint")) {
                CaValue v = ca_undefined();
                bool yes = classad_eval_attr_with(sel, "SlotMergeConstraint", slot, CA_MODE_OLD, &v) >= 0 &&
                           v.type == CA_BOOL && v.u.b;
                ca_value_clear(&v);
                return yes;
        }
        char *want = NULL, *name = NULL;
        if (classad_eval_string(sel, "SlotName", CA_MODE_OLD, &want) >= 0 ||
            classad_eval_string(sel, "Name", CA_MODE_OLD, &want) >= 0) {
                if (*want && classad_eval_string(slot, "Name", CA_MODE_OLD, &name) >= 0) {
                        bool yes = !strncasecmp(name, want, strlen(want));
                        free(want);
                        free(name);
                        return yes;
                }
        }
        free(want);
        int64_t v;
        if (classad_eval_int(sel, "SlotTypeId", CA_MODE_OLD, &v) >= 0 &&
            classad_eval_int(slot, "SlotTypeID", CA_MODE_OLD, &type) >= 0)
                return v == type;
        if (classad_eval_int(sel, "SlotId", CA_MODE_OLD, &v) >= 0 && has_id)
                return v == id;
        return true;
}

/* ---- the merge ---- */

struct AgentCronMerged {
        char **names;   /* what the last merge put into the slot ad */
        size_t n;
        ClassAd *saved; /* the slot's own values of overridable attributes it replaced */
};

void agent_cron_merged_free(AgentCronMerged *m) {
        if (!m)
                return;
        for (size_t i = 0; i < m->n; i++)
                free(m->names[i]);
        free(m->names);
        classad_free(m->saved);
        free(m);
}

size_t agent_cron_merged_count(const AgentCronMerged *m) {
        return m ? m->n : 0;
}

static bool in_names(char *const *names, size_t n, const char *name) {
        for (size_t i = 0; i < n; i++)
                if (!strcasecmp(names[i], name))
                        return true;
        return false;
}

static bool in_strv(const char *const *v, const char *name) {
        for (; v && *v; v++)
                if (!strcasecmp(*v, name))
                        return true;
        return false;
}

/* What reaches the slot, merged into one ad: jobs in order, each job's
 * untagged ad first. */
static int collect(const AgentCronStore *st, const AgentCronTable *t, const ClassAd *slot, ClassAd *out) {
        size_t njobs = t ? t->n : 0;
        for (size_t j = 0; j <= njobs; j++)
                for (int tagged = 0; tagged < 2; tagged++)
                        for (size_t i = 0; i < st->n; i++) {
                                const Entry *e = &st->e[i];
                                /* Entries of jobs past the table (none, normally) come last. */
                                if (j < njobs ? e->job != j : e->job < njobs)
                                        continue;
                                if ((e->ad->tag[0] != 0) != (tagged != 0))
                                        continue;
                                if (!reaches(j < njobs ? &t->jobs[j] : NULL, e->ad, slot))
                                        continue;
                                int r = classad_update(out, e->ad->attrs);
                                if (r < 0)
                                        return r;
                        }
        return 0;
}

static int set_text(ClassAd *ad, const char *name, const char *text) {
        CaError cerr;
        return classad_set_expr_text(ad, name, text, CA_MODE_OLD, &cerr);
}

int agent_cron_merge(const AgentCronStore *st, const AgentCronTable *t, ClassAd *slot_ad,
                     const char *const *overridable, AgentCronMerged **m) {
        if (!*m) {
                if (!(*m = calloc(1, sizeof **m)))
                        return -ENOMEM;
                if (classad_new(&(*m)->saved) < 0) {
                        free(*m);
                        *m = NULL;
                        return -ENOMEM;
                }
        }
        AgentCronMerged *mg = *m;
        ClassAd *want = NULL;
        int r = classad_new(&want);
        if (r < 0)
                return r;
        if ((r = collect(st, t, slot_ad, want)) < 0) {
                classad_free(want);
                return r;
        }
        size_t n = classad_size(want);
        char **names = calloc(n ? n : 1, sizeof *names);
        if (!names) {
                classad_free(want);
                return -ENOMEM;
        }
        size_t got = 0;
        int refused = 0;
        ClassAdIter it = classad_iter(want);
        const char *name;
        char *text;
        while (r >= 0 && classad_iter_next(&it, &name, &text)) {
                bool ours = in_names(mg->names, mg->n, name);
                if (!ours && classad_has(slot_ad, name)) {
                        if (!in_strv(overridable, name)) {
                                refused++; /* the agent's own */
                                free(text);
                                continue;
                        }
                        char *orig = classad_unparse_attr(slot_ad, name);
                        if (orig && !classad_has(mg->saved, name))
                                r = set_text(mg->saved, name, orig);
                        free(orig);
                }
                if (r >= 0 && text)
                        r = set_text(slot_ad, name, text);
                if (r >= 0 && !(names[got] = strdup(name)))
                        r = -ENOMEM;
                if (r >= 0)
                        got++;
                free(text);
        }
        /* What no ad carries any more goes (or gets its own value back). */
        for (size_t i = 0; i < mg->n; i++) {
                if (!in_names(names, got, mg->names[i])) {
                        char *orig = classad_unparse_attr(mg->saved, mg->names[i]);
                        if (orig) {
                                (void) set_text(slot_ad, mg->names[i], orig);
                                (void) classad_delete(mg->saved, mg->names[i]);
                        } else
                                (void) classad_delete(slot_ad, mg->names[i]);
                        free(orig);
                }
                free(mg->names[i]);
        }
        free(mg->names);
        mg->names = names;
        mg->n = got;
        classad_free(want);
        return r < 0 ? r : refused;
}

/* ---- the schedule ---- */

int64_t agent_cron_next_start(const AgentCronJob *j, int64_t last_due, int64_t exited, bool running,
                              int64_t now) {
        switch (j->mode) {
        case AGENT_CRON_PERIODIC:
                if (!last_due)
                        return now;
                if (last_due > INT64_MAX - j->period)
                        return INT64_MAX;
                return last_due + j->period;
        case AGENT_CRON_WAIT_FOR_EXIT:
                if (running)
                        return INT64_MAX;
                if (!last_due)
                        return now;
                /* PERIOD 0 (HTCondor's continuous template): again at
                 * once, but never sooner than a second after the exit. */
                if (exited > INT64_MAX - j->period - 1)
                        return INT64_MAX;
                return (exited ? exited : now) + (j->period > 0 ? j->period : 1);
        case AGENT_CRON_ONE_SHOT:
                return last_due ? INT64_MAX : now;
        case AGENT_CRON_ON_DEMAND:
        default:
                return INT64_MAX;
        }
}

bool agent_cron_wants_publish(AgentCronAutoPublish autopublish, int update, bool changed) {
        if (update >= 0)
                return update == 1;
        return autopublish == AGENT_CRON_PUBLISH_ALWAYS || (autopublish == AGENT_CRON_PUBLISH_IF_CHANGED && changed);
}

bool agent_cron_may_start(double running_load, double job_load, double max_load) {
        if (running_load <= 0)
                return true;
        return running_load + job_load <= max_load + 1e-9;
}
