/* SPDX-License-Identifier: Apache-2.0 */
/*
 * queue.c — the job queue in memory (queue.h): settings, open and close,
 * the jobs by id, by claim, the counts per status, owner and submitter,
 * submitting, batches and the transactions shared with the Accountant.
 *
 * Each change follows one pattern: queue_change_begin() (a transaction of
 * its own, unless the caller holds a batch), memory and rows changed
 * together (every job whose row is written is "touched"), then
 * queue_change_end(), which commits unless in a batch. When any write or
 * the commit fails, the Accountant rolls the transaction back, reads the
 * accounts back and tells us (queue_tx_end, committed false): the touched
 * jobs are read back from their rows, so memory is again what the last
 * commit holds, and only what the transaction touched costs anything.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cleanup.h"
#include "queue-internal.h"

/* ---- names ---- */

const char *job_status_name(JobStatus s) {
        static const char *const names[] = {
                [JOB_IDLE] = "Idle",          [JOB_RUNNING] = "Running", [JOB_REMOVED] = "Removed",
                [JOB_COMPLETED] = "Completed", [JOB_HELD] = "Held",
        };
        return s >= JOB_IDLE && s <= JOB_HELD ? names[s] : NULL;
}

char job_status_letter(JobStatus s) {
        return s >= JOB_IDLE && s <= JOB_HELD ? "?IRXCH"[s] : '?';
}

/* A decimal int64 >= min at *p, advancing *p. */
static bool parse_int(const char **p, int64_t min, int64_t *ret) {
        const char *s = *p;
        int64_t v = 0;

        if (*s < '0' || *s > '9')
                return false;
        for (; *s >= '0' && *s <= '9'; s++) {
                if (v > (INT64_MAX - (*s - '0')) / 10)
                        return false;
                v = v * 10 + (*s - '0');
        }
        if (v < min)
                return false;
        *p = s;
        *ret = v;
        return true;
}

int job_id_parse(const char *s, JobId *ret) {
        JobId id = { 0, -1 };

        if (!s)
                return -EINVAL;
        while (*s == ' ' || *s == '\t')
                s++;
        if (!parse_int(&s, 1, &id.cluster))
                return -EINVAL;
        if (*s == '.') {
                s++;
                if (!parse_int(&s, 0, &id.proc))
                        return -EINVAL;
        }
        while (*s == ' ' || *s == '\t')
                s++;
        if (*s)
                return -EINVAL;
        *ret = id;
        return 0;
}

const char *job_id_format(JobId id, char buf[static JOB_ID_STRLEN]) {
        if (id.proc < 0)
                snprintf(buf, JOB_ID_STRLEN, "%" PRId64, id.cluster);
        else
                snprintf(buf, JOB_ID_STRLEN, "%" PRId64 ".%" PRId64, id.cluster, id.proc);
        return buf;
}

/* ---- settings ---- */

static int get_expr(const Config *cfg, const char *name, ClassAdExpr **ret, ConfigError *err) {
        int r = config_get_expr(cfg, name, QUEUE_MODE, ret, err);

        if (r == -ENOENT) {
                *ret = NULL;
                return 0;
        }
        return r;
}

/* A limit of the queue as HTCondor's schedd reads it: unset (or empty) no
 * limit (0); 0 or less: none allowed (-1). */
static int get_limit(const Config *cfg, const char *name, int64_t *ret, ConfigError *err) {
        int r = config_get_int(cfg, name, ret, err);

        if (r == -ENOENT) {
                *ret = 0;
                return 0;
        }
        if (r >= 0 && *ret <= 0)
                *ret = -1;
        return r;
}

int queue_settings_from_config(const Config *cfg, QueueSettings *ret, ConfigError *err) {
        QueueSettings s = {};
        int r;

        r = config_get(cfg, "UID_DOMAIN", &s.uid_domain, err);
        if (r == -ENOENT)
                r = (s.uid_domain = strdup("")) ? 0 : -ENOMEM;
        if (r >= 0)
                r = queue_knob_count(cfg, "HISTORY_DURATION", 604800, &s.history_duration, err);
        if (r >= 0)
                r = queue_knob_count(cfg, "HISTORY_MAX_JOBS", 1000000, &s.history_max_jobs, err);
        if (r >= 0)
                r = get_limit(cfg, "MAX_JOBS_PER_SUBMISSION", &s.max_jobs_per_submission, err);
        if (r >= 0)
                r = get_limit(cfg, "MAX_JOBS_PER_OWNER", &s.max_jobs_per_owner, err);
        if (r >= 0)
                r = get_limit(cfg, "MAX_JOBS_SUBMITTED", &s.max_jobs_submitted, err);
        if (r >= 0)
                r = queue_knob_count(cfg, "SUBMIT_ID_LIFETIME", 86400, &s.submit_id_lifetime, err);
        if (r >= 0)
                r = queue_knob_count(cfg, "SUBMIT_IDS_PER_USER", 1000000, &s.submit_ids_per_user, err);
        if (r >= 0)
                r = get_expr(cfg, "SYSTEM_PERIODIC_HOLD", &s.system_periodic_hold, err);
        if (r >= 0)
                r = get_expr(cfg, "SYSTEM_PERIODIC_RELEASE", &s.system_periodic_release, err);
        if (r >= 0)
                r = get_expr(cfg, "SYSTEM_PERIODIC_REMOVE", &s.system_periodic_remove, err);
        if (r >= 0)
                r = get_expr(cfg, "SYSTEM_PERIODIC_HOLD_REASON", &s.system_periodic_hold_reason, err);
        if (r >= 0)
                r = get_expr(cfg, "SYSTEM_PERIODIC_RELEASE_REASON", &s.system_periodic_release_reason, err);
        if (r >= 0)
                r = get_expr(cfg, "SYSTEM_PERIODIC_REMOVE_REASON", &s.system_periodic_remove_reason, err);
        if (r >= 0)
                r = get_expr(cfg, "SYSTEM_PERIODIC_HOLD_SUBCODE", &s.system_periodic_hold_subcode, err);
        if (r >= 0)
                r = queue_limits_from_config(cfg, &s, err);
        if (r < 0) {
                queue_settings_clear(&s);
                return r;
        }
        *ret = s;
        return 0;
}

void queue_settings_clear(QueueSettings *s) {
        if (!s)
                return;
        free(s->uid_domain);
        classad_expr_free(s->system_periodic_hold);
        classad_expr_free(s->system_periodic_release);
        classad_expr_free(s->system_periodic_remove);
        classad_expr_free(s->system_periodic_hold_reason);
        classad_expr_free(s->system_periodic_release_reason);
        classad_expr_free(s->system_periodic_remove_reason);
        classad_expr_free(s->system_periodic_hold_subcode);
        *s = (QueueSettings) {};
}

/* ---- job ads ---- */

/* The one place a job's ad is made from its cluster's attributes and its
 * own: the proc's ad chained to its cluster's (lookups fall through to the
 * cluster; iteration, unparse and copy see the flattened view), so that
 * what a `queue N` shares is held once. The job's ad is the proc ad
 * itself (no reference of its own): qjob_set_* write it once, and its row
 * stores its own attributes only (classad_unparse_own). */
int queue_make_job_ad(ClassAd *cluster_ad, ClassAd *proc_ad, ClassAd **ret) {
        int r = classad_chain(proc_ad, cluster_ad);

        if (r < 0)
                return r;
        *ret = proc_ad;
        return 0;
}

int queue_fit_ad(ClassAd **ad) {
        ClassAd *fit = NULL;
        int r = classad_copy(*ad, &fit);

        if (r < 0)
                return r;
        classad_free(*ad);
        *ad = fit;
        return 0;
}

/* Procs alike (queue_next_idle): own attributes only of these names. */
static const char *const alike_names[] = {
        "ProcId",          "JobStatus",          "LastJobStatus",     "EnteredCurrentStatus",
        "NumJobStarts",    "LastRejMatchReason", "LastRejMatchTime",  "SubmitterUserPrio",
        "SubmitterGroup",  "SubmitterUserResourcesInUse", "SubmitterGroupResourcesInUse",
        "SubmitterGroupQuota",
};

bool qjob_alike_name(const char *name) {
        for (size_t k = 0; k < sizeof(alike_names) / sizeof(alike_names[0]); k++)
                if (strcasecmp(name, alike_names[k]) == 0)
                        return true;
        return false;
}

static bool own_attrs_alike(const ClassAd *proc) {
        ClassAdIter it = classad_iter_own(proc);
        const char *name;

        while (classad_iter_next(&it, &name, NULL))
                if (!qjob_alike_name(name))
                        return false;
        return true;
}

/* A proc given an attribute of its own that is not alike is unlike from
 * then on (deleting it again does not make it alike: a guess on the safe
 * side). */
static void qjob_mark(QJob *j, const char *name) {
        if (j->unlike || qjob_alike_name(name))
                return;
        j->unlike = true;
        if (j->counted)
                j->cluster->n_unlike++;
}

/* Each setter writes the job's own attributes and, while the ad is a copy,
 * the ad too. */
#define QJOB_SET(call_proc, call_ad)                          \
        do {                                                  \
                qjob_mark(j, name);                           \
                int _r = (call_proc);                         \
                if (_r >= 0 && j->pub.ad != j->proc)          \
                        _r = (call_ad);                       \
                return _r;                                    \
        } while (0)

int qjob_set_int(QJob *j, const char *name, int64_t v) {
        QJOB_SET(classad_set_int(j->proc, name, v), classad_set_int(j->pub.ad, name, v));
}

int qjob_set_real(QJob *j, const char *name, double v) {
        QJOB_SET(classad_set_real(j->proc, name, v), classad_set_real(j->pub.ad, name, v));
}

int qjob_set_bool(QJob *j, const char *name, bool v) {
        QJOB_SET(classad_set_bool(j->proc, name, v), classad_set_bool(j->pub.ad, name, v));
}

int qjob_set_string(QJob *j, const char *name, const char *v) {
        QJOB_SET(classad_set_string(j->proc, name, v), classad_set_string(j->pub.ad, name, v));
}

int qjob_set_value(QJob *j, const char *name, const CaValue *v) {
        QJOB_SET(classad_set_value(j->proc, name, v), classad_set_value(j->pub.ad, name, v));
}

/* The queue keeps its own attributes in the proc's ad only (never in the
 * cluster's), so deleting them there deletes them from the view. */
void qjob_delete(QJob *j, const char *name) {
        qjob_mark(j, name);
        (void) classad_delete(j->proc, name);
        if (j->pub.ad != j->proc)
                (void) classad_delete(j->pub.ad, name);
}

/* ---- counts ---- */

static int count_add(GleanStrMap *m, const char *name, long delta) {
        QCount *c = glean_strmap_get(m, name);
        int r;

        if (!c) {
                if (delta <= 0)
                        return 0;
                c = calloc(1, sizeof(*c) + strlen(name) + 1);
                if (!c)
                        return -ENOMEM;
                strcpy(c->name, name);
                r = glean_strmap_put(m, c->name, c);
                if (r < 0) {
                        free(c);
                        return r;
                }
        }
        if (delta < 0 && c->n <= (size_t) -delta) {
                glean_strmap_remove(m, c->name);
                free(c);
                return 0;
        }
        c->n += delta;
        return 0;
}

static size_t count_of(const GleanStrMap *m, const char *name) {
        QCount *c = glean_strmap_get(m, name);
        return c ? c->n : 0;
}

static void free_counts(GleanStrMap *m) {
        size_t pos = 0;
        void *v;

        while (m && glean_strmap_next(m, &pos, NULL, &v))
                free(v);
        glean_strmap_free(m);
}

int qjob_set_status(JobQueue *q, QJob *j, JobStatus s, double now) {
        int r;

        r = qjob_set_int(j, "LastJobStatus", j->pub.status);
        if (r >= 0)
                r = qjob_set_int(j, "JobStatus", s);
        if (r >= 0)
                r = qjob_set_int(j, "EnteredCurrentStatus", (int64_t) now);
        if (r < 0)
                return r;
        q->counts[j->pub.status]--;
        q->counts[s]++;
        j->pub.status = s;
        return 0;
}

int qjob_set_claim(JobQueue *q, QJob *j, const char *claim, const char *slot) {
        char *c = NULL, *sl = NULL;
        int r;

        if (claim && (!(c = strdup(claim)) || !(sl = strdup(slot ? slot : "")))) {
                free(c);
                return -ENOMEM;
        }
        if (c && (r = glean_strmap_put(q->claims, c, j)) < 0) {
                free(c);
                free(sl);
                return r;
        }
        if (j->claim)
                glean_strmap_remove(q->claims, j->claim);
        free(j->claim);
        free(j->slot);
        j->claim = c;
        j->slot = sl;
        j->pub.claim_id = c;
        j->pub.slot = sl;
        return 0;
}

/* ---- the jobs by id ---- */

static int id_cmp(int64_t c1, int64_t p1, int64_t c2, int64_t p2) {
        return c1 < c2 ? -1 : c1 > c2 ? 1 : p1 < p2 ? -1 : p1 > p2 ? 1 : 0;
}

/* The first entry not below (cluster, proc). */
static size_t lower_bound(const JobQueue *q, int64_t cluster, int64_t proc) {
        size_t lo = 0, hi = q->n_entries;

        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                if (id_cmp(q->entries[mid].cluster, q->entries[mid].proc, cluster, proc) < 0)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return lo;
}

QJob *queue_lookup(const JobQueue *q, int64_t cluster, int64_t proc) {
        size_t i = lower_bound(q, cluster, proc);

        if (i < q->n_entries && q->entries[i].cluster == cluster && q->entries[i].proc == proc)
                return q->entries[i].j;
        return NULL;
}

QCluster *queue_cluster(const JobQueue *q, int64_t id) {
        size_t i = lower_bound(q, id, 0);

        for (; i < q->n_entries && q->entries[i].cluster == id; i++)
                if (q->entries[i].j)
                        return q->entries[i].j->cluster;
        return NULL;
}

/* Drops the entries of jobs that left (none may be pending a rollback). */
static void compact(JobQueue *q) {
        size_t k = 0;

        if (q->n_touched > 0 || q->n_entries - q->n_jobs < q->n_entries / 4 + 64)
                return;
        for (size_t i = 0; i < q->n_entries; i++)
                if (q->entries[i].j)
                        q->entries[k++] = q->entries[i];
        q->n_entries = k;
}

static int place_entry(JobQueue *q, QJob *j) {
        int64_t c = j->pub.id.cluster, p = j->pub.id.proc;
        size_t i;

        if (q->n_entries == 0 ||
            id_cmp(q->entries[q->n_entries - 1].cluster, q->entries[q->n_entries - 1].proc, c, p) < 0)
                i = q->n_entries; /* the usual case: a new job comes last */
        else {
                i = lower_bound(q, c, p);
                if (i < q->n_entries && q->entries[i].cluster == c && q->entries[i].proc == p) {
                        if (q->entries[i].j)
                                return -EEXIST;
                        q->entries[i].j = j;
                        return 0;
                }
        }
        if (q->n_entries == q->cap_entries) {
                size_t cap = q->cap_entries ? q->cap_entries + q->cap_entries / 2 : 1024;
                QEntry *e = realloc(q->entries, cap * sizeof(*e));
                if (!e)
                        return -ENOMEM;
                q->entries = e;
                q->cap_entries = cap;
        }
        memmove(q->entries + i + 1, q->entries + i, (q->n_entries - i) * sizeof(*q->entries));
        q->entries[i] = (QEntry) { c, p, j };
        q->n_entries++;
        return 0;
}

void qjob_free(QJob *j) {
        if (!j)
                return;
        if (j->pub.ad != j->proc)
                classad_free(j->pub.ad);
        classad_free(j->proc);
        free(j->claim);
        free(j->slot);
        free(j->own_submitter);
        free(j);
}

void qcluster_free(QCluster *c) {
        if (!c)
                return;
        classad_free(c->ad);
        free(c->owner);
        free(c->submitter);
        free(c);
}

/* The job of cluster c with its own attributes proc_ad (taken), made and
 * checked but not linked in. */
int queue_make_job(JobQueue *q, QCluster *c, int64_t proc, ClassAd *proc_ad, QJob **ret, char *why, size_t whylen) {
        _cleanup_free_ char *submitter = NULL;
        char idbuf[JOB_ID_STRLEN];
        JobId id = { c->id, proc };
        int64_t status = 0;
        QJob *j;
        int r;

        j = calloc(1, sizeof(*j));
        if (!j) {
                classad_free(proc_ad);
                return -ENOMEM;
        }
        j->proc = proc_ad;
        j->cluster = c;
        j->pub.id = id;
        r = queue_make_job_ad(c->ad, j->proc, &j->pub.ad);
        if (r < 0)
                goto fail;
        if (classad_eval_int(j->pub.ad, "JobStatus", QUEUE_MODE, &status) < 0 || status < JOB_IDLE ||
            status > JOB_HELD || status == JOB_COMPLETED) {
                r = glean_why(-EBADMSG, why, whylen, "job %s: JobStatus is not that of a job in the queue",
                              job_id_format(id, idbuf));
                goto fail;
        }
        j->pub.status = (JobStatus) status;
        j->pub.owner = c->owner;
        r = acct_job_submitter(j->pub.ad, q->settings.uid_domain, &submitter, why, whylen);
        if (r < 0)
                goto fail;
        if (strcmp(submitter, c->submitter) == 0)
                j->pub.submitter = c->submitter;
        else
                j->pub.submitter = j->own_submitter = TAKE_PTR(submitter);
        j->unlike = !own_attrs_alike(j->proc);
        *ret = j;
        return 0;
fail:
        qjob_free(j);
        return r;
}

/* j counted in: its cluster's, the queue's, its owner's and submitter's. */
static int count_in(JobQueue *q, QJob *j) {
        int r = count_add(q->owners, j->pub.owner, 1);

        if (r >= 0 && (r = count_add(q->submitters, j->pub.submitter, 1)) < 0)
                (void) count_add(q->owners, j->pub.owner, -1);
        if (r < 0)
                return r;
        j->cluster->n_procs++;
        q->n_jobs++;
        q->counts[j->pub.status]++;
        j->counted = true;
        j->cluster->n_unlike += j->unlike;
        return 0;
}

/* Makes the job of cluster c with its own attributes proc_ad (taken) and
 * links it in: entries, counts, claims. */
int queue_insert_job(JobQueue *q, QCluster *c, int64_t proc, ClassAd *proc_ad, const char *claim, const char *slot,
                     char *why, size_t whylen) {
        char idbuf[JOB_ID_STRLEN];
        QJob *j = NULL;
        int r = queue_make_job(q, c, proc, proc_ad, &j, why, whylen);

        if (r < 0)
                return r;
        if (j->pub.status == JOB_RUNNING && !claim) {
                r = glean_why(-EBADMSG, why, whylen, "job %s: Running without a claim", job_id_format(j->pub.id, idbuf));
                goto fail;
        }
        if (claim && (r = qjob_set_claim(q, j, claim, slot)) < 0)
                goto fail;
        r = place_entry(q, j);
        if (r == -EEXIST)
                r = glean_why(r, why, whylen, "job %s twice", job_id_format(j->pub.id, idbuf));
        if (r < 0)
                goto fail;
        if ((r = count_in(q, j)) < 0) {
                queue_drop_job(q, j);
                return r;
        }
        return 0;
fail:
        if (j->claim)
                glean_strmap_remove(q->claims, j->claim);
        qjob_free(j);
        return r;
}

int queue_place_cluster(JobQueue *q, QCluster *c, QJob **jobs, size_t n, const QPlaceTally *t) {
        size_t i = lower_bound(q, c->id, 0), done = 0, same = n - t->n_own;
        int r;

        if (n == 0 || (i < q->n_entries && q->entries[i].cluster == c->id))
                return -EEXIST;
        if (q->n_entries + n > q->cap_entries) {
                size_t cap = q->cap_entries ? q->cap_entries : 1024;
                while (cap < q->n_entries + n)
                        cap += cap / 2;
                QEntry *e = realloc(q->entries, cap * sizeof(*e));
                if (!e)
                        return -ENOMEM;
                q->entries = e;
                q->cap_entries = cap;
        }
        if (q->db && q->n_placed == q->cap_placed) {
                size_t cap = q->cap_placed ? 2 * q->cap_placed : 8;
                int64_t *p = realloc(q->placed, cap * sizeof(*p));
                if (!p)
                        return -ENOMEM;
                q->placed = p;
                q->cap_placed = cap;
        }
        /* The counts: the cluster's owner and submitter once for all; a
         * proc with a submitter of its own, one by one. */
        r = count_add(q->owners, c->owner, (long) n);
        for (; r >= 0 && done < t->n_own; done++)
                if ((r = count_add(q->submitters, jobs[t->own[done]]->pub.submitter, 1)) < 0)
                        break;
        if (r >= 0 && (r = count_add(q->submitters, c->submitter, (long) same)) < 0)
                done = t->n_own;
        if (r < 0) {
                /* Counted out again: nothing linked. */
                for (size_t k = 0; k < done; k++)
                        (void) count_add(q->submitters, jobs[t->own[k]]->pub.submitter, -1);
                (void) count_add(q->owners, c->owner, -(long) n);
                return r;
        }
        for (size_t s = 0; s <= JOB_HELD; s++)
                q->counts[s] += t->counts[s];
        c->n_unlike += t->unlike;
        c->n_procs += n;
        q->n_jobs += n;
        memmove(q->entries + i + n, q->entries + i, (q->n_entries - i) * sizeof(*q->entries));
        for (size_t k = 0; k < n; k++)
                q->entries[i + k] = (QEntry) { c->id, (int64_t) k, jobs[k] };
        q->n_entries += n;
        if (q->db)
                q->placed[q->n_placed++] = c->id;
        return 0;
}

/* The jobs of clusters placed whole by a transaction that failed: their
 * rows were never there. */
static void drop_placed(JobQueue *q) {
        for (size_t k = 0; k < q->n_placed; k++)
                for (size_t i = lower_bound(q, q->placed[k], 0);
                     i < q->n_entries && q->entries[i].cluster == q->placed[k]; i++)
                        if (q->entries[i].j)
                                queue_drop_job(q, q->entries[i].j);
        q->n_placed = 0;
}

void queue_drop_job(JobQueue *q, QJob *j) {
        size_t i = lower_bound(q, j->pub.id.cluster, j->pub.id.proc);
        QCluster *c = j->cluster;

        if (j->leaving)
                c->n_leaving--;
        if (i < q->n_entries && q->entries[i].j == j) {
                q->entries[i].j = NULL;
                q->n_jobs--;
                q->counts[j->pub.status]--;
                c->n_procs--;
                if (j->counted && j->unlike)
                        c->n_unlike--;
                j->counted = false;
                (void) count_add(q->owners, j->pub.owner, -1);
                (void) count_add(q->submitters, j->pub.submitter, -1);
        }
        if (j->claim)
                glean_strmap_remove(q->claims, j->claim);
        qjob_free(j);
        if (c->n_procs == 0)
                qcluster_free(c);
}

/* ---- transactions ---- */

int queue_touch(JobQueue *q, JobId id) {
        if (!q->db)
                return 0;
        if (q->n_touched == q->cap_touched) {
                size_t cap = q->cap_touched ? 2 * q->cap_touched : 64;
                JobId *t = realloc(q->touched, cap * sizeof(*t));
                if (!t)
                        return -ENOMEM;
                q->touched = t;
                q->cap_touched = cap;
        }
        q->touched[q->n_touched++] = id;
        return 0;
}

/* The Accountant's word that a transaction ended. */
static void queue_tx_end(void *userdata, bool committed) {
        JobQueue *q = userdata;
        char why[512] = "";

        if (!committed)
                drop_placed(q);
        q->n_placed = 0;
        if (!committed && (q->n_touched > 0 || q->touched_meta)) {
                /* Memory back to the last commit. Should reading fail too
                 * (the disk gone), what could not be read stays out. */
                (void) qstore_reload_touched(q, why, sizeof(why));
        }
        q->n_touched = 0;
        q->touched_meta = false;
        qsubmit_ids_tx_end(q, committed);
        queue_submissions_tx_end(q, committed);
        qhistory_bytes_tx_end(q, committed);
        qlog_tx_end(q, committed);
        compact(q);
}

int queue_change_begin(JobQueue *q) {
        if (q->readonly)
                return -EROFS;
        return acct_change_begin(q->acct);
}

int queue_change_end(JobQueue *q, int r, char *why, size_t whylen) {
        return queue_change_end_then(q, r, why, whylen, NULL, NULL);
}

int queue_change_end_then(JobQueue *q, int r, char *why, size_t whylen, void (*then)(void *), void *userdata) {
        const char *err;

        r = acct_change_end(q->acct, r, q->write_why[0] ? q->write_why : NULL);
        if (r >= 0 && then)
                then(userdata);
        if (r >= 0) {
                for (size_t i = 0; i < q->n_leaving; i++)
                        queue_drop_job(q, q->leaving[i]);
        } else if (!q->db) {
                /* Nothing to read back: the jobs stay. */
                for (size_t i = 0; i < q->n_leaving; i++) {
                        q->leaving[i]->leaving = false;
                        q->leaving[i]->cluster->n_leaving--;
                }
        } /* else the rollback read them back (and freed these) */
        q->n_leaving = 0;
        if (r < 0 && why && whylen > 0) {
                err = acct_last_error(q->acct);
                if (err && *err)
                        snprintf(why, whylen, "%s", err);
                else
                        snprintf(why, whylen, "queue database %s: %s", q->path, strerror(-r));
        }
        q->write_why[0] = 0;
        if (!q->db)
                compact(q);
        return r;
}

int queue_batch_begin(JobQueue *q) {
        if (q->readonly)
                return -EROFS;
        return acct_batch_begin(q->acct);
}

int queue_batch_commit(JobQueue *q, char *why, size_t whylen) {
        int r = acct_batch_commit(q->acct);

        if (r < 0) {
                const char *err = acct_last_error(q->acct);
                glean_why(r, why, whylen, "%s", err && *err ? err : strerror(-r));
        }
        if (!q->db)
                compact(q);
        return r;
}

size_t queue_unfinished_rows(const JobQueue *q) {
        return q->unfinished_rows;
}

bool queue_in_batch(const JobQueue *q) {
        return acct_in_batch(q->acct);
}

/* ---- open, close ---- */

int queue_open(Accountant *a, QueueSettings *settings, JobQueue **ret, char *why, size_t whylen) {
        JobQueue *q = calloc(1, sizeof(*q));
        int r;

        if (!q) {
                queue_settings_clear(settings);
                return -ENOMEM;
        }
        q->settings = *settings;
        *settings = (QueueSettings) {};
        if (!q->settings.uid_domain && !(q->settings.uid_domain = strdup(""))) {
                queue_close(q);
                return -ENOMEM;
        }
        q->acct = a;
        q->db = acct_sqlite(a);
        q->readonly = acct_readonly(a);
        q->next_cluster = 1;
        if ((r = glean_strmap_new(false, &q->claims)) < 0 || (r = glean_strmap_new(false, &q->owners)) < 0 ||
            (r = glean_strmap_new(false, &q->submitters)) < 0 || (r = glean_strmap_new(false, &q->submit_ids)) < 0 ||
            (r = glean_strmap_new(false, &q->submit_id_users)) < 0) {
                queue_close(q);
                return r;
        }
        if (q->db) {
                r = qstore_prepare(q, why, whylen);
                if (r >= 0)
                        r = qstore_load(q, why, whylen);
                if (r >= 0)
                        r = qlog_open(q, why, whylen);
                if (r < 0) {
                        queue_close(q);
                        return r;
                }
        } else {
                q->path = "(in memory)";
                r = qlog_open(q, why, whylen);
                if (r < 0) {
                        queue_close(q);
                        return r;
                }
        }
        acct_set_partner(a, &(AcctPartner) { queue_tx_end, q });
        *ret = q;
        return 0;
}

static void drop_all(JobQueue *q) {
        for (size_t i = 0; i < q->n_entries; i++)
                if (q->entries[i].j)
                        queue_drop_job(q, q->entries[i].j);
        q->n_entries = 0;
}

void queue_close(JobQueue *q) {
        if (!q)
                return;
        while (q->submissions)
                queue_submission_free(q, q->submissions);
        if (q->acct)
                acct_set_partner(q->acct, NULL);
        drop_all(q);
        free(q->entries);
        glean_strmap_free(q->claims);
        free_counts(q->owners);
        free_counts(q->submitters);
        free(q->touched);
        free(q->placed);
        free(q->leaving);
        qsubmit_ids_free(q);
        qlog_free(q);
        qstore_finalize(q);
        queue_settings_clear(&q->settings);
        free(q);
}

void queue_reconfigure(JobQueue *q, QueueSettings *settings) {
        queue_settings_clear(&q->settings);
        q->settings = *settings;
        *settings = (QueueSettings) {};
        if (!q->settings.uid_domain)
                q->settings.uid_domain = strdup("");
}

const QueueSettings *queue_settings(const JobQueue *q) {
        return &q->settings;
}

/* ---- looking ---- */

Job *queue_find(const JobQueue *q, JobId id) {
        QJob *j = queue_lookup(q, id.cluster, id.proc);
        return j ? &j->pub : NULL;
}

Job *queue_find_claim(const JobQueue *q, const char *claim_id) {
        QJob *j = claim_id ? glean_strmap_get(q->claims, claim_id) : NULL;
        return j ? &j->pub : NULL;
}

size_t queue_size(const JobQueue *q) {
        return q->n_jobs;
}

size_t queue_count(const JobQueue *q, JobStatus s) {
        return s >= JOB_IDLE && s <= JOB_HELD ? q->counts[s] : 0;
}

int64_t queue_next_cluster(const JobQueue *q) {
        return q->next_cluster;
}

static int foreach_from(const JobQueue *q, size_t i, int64_t only, QueueJobFn fn, void *userdata) {
        for (; i < q->n_entries; i++) {
                QJob *j = q->entries[i].j;
                int r;

                if (only > 0 && q->entries[i].cluster != only)
                        break;
                if (j && (r = fn(userdata, &j->pub)) < 0)
                        return r;
        }
        return 0;
}

int queue_foreach(const JobQueue *q, QueueJobFn fn, void *userdata) {
        return foreach_from(q, 0, 0, fn, userdata);
}

int queue_foreach_cluster(const JobQueue *q, int64_t cluster, QueueJobFn fn, void *userdata) {
        if (cluster <= 0)
                return queue_foreach(q, fn, userdata);
        return foreach_from(q, lower_bound(q, cluster, 0), cluster, fn, userdata);
}

bool queue_submitter_has_jobs(const JobQueue *q, const char *name) {
        return name && count_of(q->submitters, name) > 0;
}

bool queue_has_jobs_fn(void *q, const char *submitter) {
        return queue_submitter_has_jobs(q, submitter);
}

void queue_idle_clear(QueueIdle *idle) {
        if (!idle)
                return;
        for (size_t s = 0; s < idle->n; s++) {
                free(idle->ads[s]);
                free(idle->jobs[s]);
        }
        free(idle->names);
        free(idle->ads);
        free(idle->jobs);
        free(idle->counts);
        *idle = (QueueIdle) {};
}

static bool is_idle(const QJob *j) {
        return j->pub.status == JOB_IDLE && !j->claim;
}

/* ---- the next job for a claim ---- */

Job *queue_next_idle(JobQueue *q, const char *submitter, QueueFitFn fit, void *userdata) {
        QJob *best = NULL;
        int64_t best_prio = 0, cluster_prio = 0;
        const QCluster *cluster = NULL;
        bool decided = false; /* nothing alike in the cluster can do better than best */

        for (size_t i = 0; i < q->n_entries; i++) {
                QJob *j = q->entries[i].j;
                int64_t prio;

                if (!j)
                        continue;
                if (j->cluster != cluster) {
                        cluster = j->cluster;
                        decided = strcmp(cluster->submitter, submitter) != 0;
                        cluster_prio = 0;
                        classad_eval_int(cluster->ad, "JobPrio", QUEUE_MODE, &cluster_prio);
                }
                /* A cluster whose procs are all alike, decided: the next one. */
                if (decided && cluster->n_unlike == 0) {
                        i = lower_bound(q, cluster->id + 1, INT64_MIN) - 1;
                        continue;
                }
                if (!is_idle(j) || (j->unlike && strcmp(j->pub.submitter, submitter) != 0) ||
                    (!j->unlike && decided))
                        continue;
                prio = cluster_prio;
                if (j->unlike)
                        classad_eval_int(j->pub.ad, "JobPrio", QUEUE_MODE, &prio);
                if (best && prio <= best_prio)
                        continue;
                switch (fit(&j->pub, userdata)) {
                case QUEUE_FITS:
                        best = j;
                        best_prio = prio;
                        decided = decided || !j->unlike; /* the alike rest have its JobPrio */
                        break;
                case QUEUE_FITS_NOT:
                        decided = decided || !j->unlike; /* the alike rest do not fit either */
                        break;
                case QUEUE_FIT_SKIP:
                        break;
                }
        }
        return best ? &best->pub : NULL;
}

int queue_idle(JobQueue *q, QueueIdle *ret) {
        QueueIdle idle = {};
        GleanStrMap *index = NULL; /* submitter -> its number + 1 */
        size_t *fill = NULL;
        int r;

        r = glean_strmap_new(false, &index);
        if (r < 0)
                return r;
        /* Submitters first, with their counts; then the arrays, filled. */
        for (size_t i = 0; i < q->n_entries; i++) {
                QJob *j = q->entries[i].j;
                uintptr_t k;

                if (!j || !is_idle(j))
                        continue;
                k = (uintptr_t) glean_strmap_get(index, j->pub.submitter);
                if (!k) {
                        size_t n = idle.n + 1;
                        const char **names = realloc(idle.names, n * sizeof(*names));
                        size_t *counts = names ? realloc(idle.counts, n * sizeof(*counts)) : NULL;
                        if (names)
                                idle.names = names;
                        if (counts)
                                idle.counts = counts;
                        if (!names || !counts) {
                                r = -ENOMEM;
                                goto out;
                        }
                        idle.names[idle.n] = j->pub.submitter;
                        idle.counts[idle.n] = 0;
                        k = ++idle.n;
                        r = glean_strmap_put(index, j->pub.submitter, (void *) k);
                        if (r < 0)
                                goto out;
                }
                idle.counts[k - 1]++;
        }
        if (idle.n > 0) {
                idle.ads = calloc(idle.n, sizeof(*idle.ads));
                idle.jobs = calloc(idle.n, sizeof(*idle.jobs));
                fill = calloc(idle.n, sizeof(*fill));
                if (!idle.ads || !idle.jobs || !fill) {
                        r = -ENOMEM;
                        goto out;
                }
                for (size_t s = 0; s < idle.n; s++) {
                        idle.ads[s] = malloc(idle.counts[s] * sizeof(ClassAd *));
                        idle.jobs[s] = malloc(idle.counts[s] * sizeof(Job *));
                        if (!idle.ads[s] || !idle.jobs[s]) {
                                r = -ENOMEM;
                                goto out;
                        }
                }
        }
        for (size_t i = 0; i < q->n_entries; i++) {
                QJob *j = q->entries[i].j;
                size_t s;

                if (!j || !is_idle(j))
                        continue;
                s = (uintptr_t) glean_strmap_get(index, j->pub.submitter) - 1;
                idle.ads[s][fill[s]] = j->pub.ad;
                idle.jobs[s][fill[s]++] = &j->pub;
        }
        *ret = idle;
        idle = (QueueIdle) {};
        r = 0;
out:
        queue_idle_clear(&idle);
        free(fill);
        glean_strmap_free(index);
        return r;
}

/* ---- leaving for the history ---- */

int queue_retire(JobQueue *q, QJob *j, double now) {
        QCluster *c = j->cluster;
        int r;

        if (j->leaving)
                return 0;
        if (q->n_leaving == q->cap_leaving) {
                size_t cap = q->cap_leaving ? 2 * q->cap_leaving : 16;
                QJob **l = realloc(q->leaving, cap * sizeof(*l));
                if (!l)
                        return -ENOMEM;
                q->leaving = l;
                q->cap_leaving = cap;
        }
        r = queue_touch(q, j->pub.id);
        if (r >= 0)
                r = qstore_put_history(q, j, now);
        if (r >= 0)
                r = qstore_delete_job(q, j->pub.id);
        if (r >= 0 && c->n_procs == c->n_leaving + 1)
                r = qstore_delete_cluster(q, c->id);
        if (r < 0)
                return r;
        j->leaving = true;
        c->n_leaving++;
        q->leaving[q->n_leaving++] = j;
        return 0;
}
