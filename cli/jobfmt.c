/* SPDX-License-Identifier: Apache-2.0 */
/*
 * jobfmt.c — condor_q's, condor_history's and condor_status's listings as
 * pure functions over ads (jobs.h): the batch view, -nobatch, -held,
 * -run, the history, -l, -af, the slots and their summary table.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "jobs.h"

#define MODE CA_MODE_OLD

/* ---- attribute helpers ---- */

static int64_t get_int(const ClassAd *ad, const char *name, int64_t dflt) {
        double d;

        if (classad_eval_real(ad, name, MODE, &d) < 0)
                return dflt;
        return (int64_t) d;
}

static double get_real(const ClassAd *ad, const char *name, double dflt) {
        double d;

        return classad_eval_real(ad, name, MODE, &d) < 0 ? dflt : d;
}

/* The string value, or dflt; malloc'd (NULL only on ENOMEM). */
static char *get_str(const ClassAd *ad, const char *name, const char *dflt) {
        char *s = NULL;

        if (classad_eval_string(ad, name, MODE, &s) < 0 || !s)
                return strdup(dflt);
        return s;
}

#define S(p) ((p) ? (p) : "?")

/* ---- values ---- */

void cli_fmt_duration(int64_t secs, char *buf, size_t size) {
        if (secs < 0)
                secs = 0;
        snprintf(buf, size, "%lld+%02lld:%02lld:%02lld", (long long) (secs / 86400), (long long) (secs / 3600 % 24),
                 (long long) (secs / 60 % 60), (long long) (secs % 60));
}

void cli_fmt_date(int64_t t, char *buf, size_t size) {
        time_t tt = (time_t) t;
        struct tm tm;

        if (t <= 0 || !localtime_r(&tt, &tm)) {
                snprintf(buf, size, "???");
                return;
        }
        snprintf(buf, size, "%d/%-2d %02d:%02d", tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min);
}

void cli_fmt_job_id(const ClassAd *job, char *buf, size_t size) {
        int64_t c = get_int(job, "ClusterId", -1), p = get_int(job, "ProcId", -1);

        if (c < 0)
                snprintf(buf, size, "?");
        else if (p < 0)
                snprintf(buf, size, "%lld.?", (long long) c);
        else
                snprintf(buf, size, "%lld.%lld", (long long) c, (long long) p);
}

int64_t cli_job_run_time(const ClassAd *job, int64_t now) {
        int64_t t = get_int(job, "RemoteWallClockTime", 0);
        int64_t start = get_int(job, "JobCurrentStartDate", 0);

        if (get_int(job, "JobStatus", 0) == 2 && start > 0 && now > start)
                t += now - start;
        return t < 0 ? 0 : t;
}

double cli_job_size_mb(const ClassAd *job) {
        double mem = get_real(job, "MemoryUsage", -1);

        if (mem >= 0)
                return mem;
        return get_real(job, "ImageSize", 0) / 1024.0;
}

char *cli_job_cmd(const ClassAd *job) {
        _cleanup_free_ char *cmd = get_str(job, "Cmd", ""), *args = NULL;
        const char *base;
        char *out = NULL;

        if (classad_eval_string(job, "Arguments", MODE, &args) < 0)
                classad_eval_string(job, "Args", MODE, &args);
        if (!cmd)
                return NULL;
        base = strrchr(cmd, '/');
        base = base ? base + 1 : cmd;
        if (asprintf(&out, "%s%s%s", base, args && *args ? " " : "", args ? args : "") < 0)
                return NULL;
        return out;
}

const char *cli_job_status_letter(int64_t status) {
        static const char *const letters[] = { "?", "I", "R", "X", "C", "H", "E", "S" };

        return status >= 1 && status <= 7 ? letters[status] : "?";
}

void cli_job_counts_add(CliJobCounts *c, const ClassAd *job) {
        c->total++;
        switch (get_int(job, "JobStatus", 0)) {
        case 1:
                c->idle++;
                break;
        case 2:
                c->running++;
                break;
        case 3:
                c->removed++;
                break;
        case 4:
                c->completed++;
                break;
        case 5:
                c->held++;
                break;
        case 7:
                c->suspended++;
                break;
        }
}

void cli_print_totals(FILE *f, const char *who, const CliJobCounts *c) {
        fprintf(f, "Total for %s: %zu jobs; %zu completed, %zu removed, %zu idle, %zu running, %zu held, %zu suspended\n",
                who, c->total, c->completed, c->removed, c->idle, c->running, c->held, c->suspended);
}

/* ---- sorting by job id ---- */

typedef struct JobRef {
        int64_t cluster, proc;
        ClassAd *ad;
} JobRef;

static int by_id(const void *x, const void *y) {
        const JobRef *a = x, *b = y;

        if (a->cluster != b->cluster)
                return a->cluster < b->cluster ? -1 : 1;
        return a->proc < b->proc ? -1 : a->proc > b->proc;
}

/* jobs in id order; NULL on ENOMEM (then nothing is printed). */
static JobRef *sorted(ClassAd **jobs, size_t n) {
        JobRef *refs = calloc(n ? n : 1, sizeof(*refs));

        if (!refs)
                return NULL;
        for (size_t i = 0; i < n; i++)
                refs[i] = (JobRef){ get_int(jobs[i], "ClusterId", -1), get_int(jobs[i], "ProcId", -1), jobs[i] };
        qsort(refs, n, sizeof(*refs), by_id);
        return refs;
}

/* ---- the batch view ---- */

typedef struct Batch {
        char *owner, *name;
        size_t first, last; /* refs[] indices of its first and last job */
        int64_t qdate, total_procs;
        bool one_cluster;
        CliJobCounts counts;
} Batch;

static void batch_key(const ClassAd *job, int64_t cluster, char **ret_owner, char **ret_name) {
        char *name = NULL;

        *ret_owner = get_str(job, "Owner", "?");
        if (classad_eval_string(job, "JobBatchName", MODE, &name) < 0 || !name || !*name) {
                free(name);
                name = NULL;
                if (asprintf(&name, "ID: %lld", (long long) cluster) < 0)
                        name = NULL;
        }
        *ret_name = name;
}

static void count_cell(FILE *f, size_t v) {
        if (v)
                fprintf(f, " %6zu", v);
        else
                fprintf(f, " %6s", "_");
}

void cli_print_batch(FILE *f, ClassAd **jobs, size_t n) {
        _cleanup_free_ JobRef *refs = sorted(jobs, n);
        _cleanup_free_ Batch *b = calloc(n ? n : 1, sizeof(*b));
        size_t nb = 0, owner_w = 5, name_w = 12;
        bool any_held = false;

        if (!refs || !b)
                return;
        for (size_t i = 0; i < n; i++) {
                char *owner, *name;
                size_t k;

                batch_key(refs[i].ad, refs[i].cluster, &owner, &name);
                for (k = 0; k < nb; k++)
                        if (strcmp(S(b[k].owner), S(owner)) == 0 && strcmp(S(b[k].name), S(name)) == 0)
                                break;
                if (k == nb) {
                        b[nb++] = (Batch){ .owner = owner, .name = name, .first = i, .qdate = INT64_MAX,
                                           .one_cluster = true };
                        owner = name = NULL;
                }
                free(owner);
                free(name);
                if (refs[i].cluster != refs[b[k].first].cluster)
                        b[k].one_cluster = false;
                b[k].last = i;
                int64_t q = get_int(refs[i].ad, "QDate", 0);
                if (q > 0 && q < b[k].qdate)
                        b[k].qdate = q;
                b[k].total_procs = get_int(refs[i].ad, "TotalSubmitProcs", -1);
                cli_job_counts_add(&b[k].counts, refs[i].ad);
                any_held = any_held || get_int(refs[i].ad, "JobStatus", 0) == 5;
        }
        for (size_t k = 0; k < nb; k++) {
                size_t lo = strlen(S(b[k].owner)), ln = strlen(S(b[k].name));
                owner_w = lo > owner_w ? lo : owner_w;
                name_w = ln > name_w ? ln : name_w;
        }

        fprintf(f, "%-*s %-*s %11s   DONE   RUN    IDLE%s  TOTAL JOB_IDS\n", (int) owner_w, "OWNER", (int) name_w,
                "BATCH_NAME", "SUBMITTED", any_held ? "   HOLD" : "");
        for (size_t k = 0; k < nb; k++) {
                const Batch *x = &b[k];
                const JobRef *first = &refs[x->first], *last = &refs[x->last];
                size_t present = x->counts.total, total = present, done = 0;
                char date[32], ids[96];

                /* Procs gone from the queue are done, when the cluster
                 * says how many it had (TotalSubmitProcs). */
                if (x->one_cluster && x->total_procs > 0 && (size_t) x->total_procs >= present) {
                        total = (size_t) x->total_procs;
                        done = total - present;
                }
                done += x->counts.completed;
                cli_fmt_date(x->qdate == INT64_MAX ? 0 : x->qdate, date, sizeof date);
                if (x->first == x->last)
                        snprintf(ids, sizeof ids, "%lld.%lld", (long long) first->cluster, (long long) first->proc);
                else if (x->one_cluster)
                        snprintf(ids, sizeof ids, "%lld.%lld-%lld", (long long) first->cluster,
                                 (long long) first->proc, (long long) last->proc);
                else
                        snprintf(ids, sizeof ids, "%lld.%lld ... %lld.%lld", (long long) first->cluster,
                                 (long long) first->proc, (long long) last->cluster, (long long) last->proc);
                fprintf(f, "%-*s %-*s %11s", (int) owner_w, S(x->owner), (int) name_w, S(x->name), date);
                count_cell(f, done);
                count_cell(f, x->counts.running);
                count_cell(f, x->counts.idle);
                if (any_held)
                        count_cell(f, x->counts.held);
                count_cell(f, total);
                fprintf(f, " %s\n", ids);
        }
        for (size_t k = 0; k < nb; k++) {
                free(b[k].owner);
                free(b[k].name);
        }
}

const char *cli_job_status_cell(const ClassAd *ad) {
        int64_t st = get_int(ad, "JobStatus", 0);
        bool b = false;

        /* condor_q: a running job whose files are on their way. */
        if (st == 2 && classad_eval_bool(ad, "TransferringInput", MODE, &b) >= 0 && b)
                return "<";
        b = false;
        if (st == 2 && classad_eval_bool(ad, "TransferringOutput", MODE, &b) >= 0 && b)
                return ">";
        return cli_job_status_letter(st);
}

/* ---- one line per job ---- */

/* "   1.0  ": the cluster right-aligned in 4, the proc left in 3. */
static void id_cell(FILE *f, const JobRef *j) {
        fprintf(f, "%4lld.%-3lld ", (long long) j->cluster, (long long) j->proc);
}

/* ID OWNER SUBMITTED RUN_TIME: what -nobatch and -run begin with. */
static void job_head(FILE *f, const JobRef *j, int64_t now) {
        _cleanup_free_ char *owner = get_str(j->ad, "Owner", "?");
        char date[32], run[32];

        cli_fmt_date(get_int(j->ad, "QDate", 0), date, sizeof date);
        cli_fmt_duration(cli_job_run_time(j->ad, now), run, sizeof run);
        id_cell(f, j);
        fprintf(f, "%-14s %11s %12s", S(owner), date, run);
}

void cli_print_nobatch(FILE *f, ClassAd **jobs, size_t n, int64_t now) {
        _cleanup_free_ JobRef *refs = sorted(jobs, n);

        if (!refs)
                return;
        fprintf(f, " ID      OWNER            SUBMITTED     RUN_TIME ST PRI SIZE CMD\n");
        for (size_t i = 0; i < n; i++) {
                _cleanup_free_ char *cmd = cli_job_cmd(refs[i].ad);

                job_head(f, &refs[i], now);
                fprintf(f, " %-2s %-3lld %-4.1f %s\n", cli_job_status_cell(refs[i].ad),
                        (long long) get_int(refs[i].ad, "JobPrio", 0), cli_job_size_mb(refs[i].ad), S(cmd));
        }
}

void cli_print_run(FILE *f, ClassAd **jobs, size_t n, int64_t now) {
        _cleanup_free_ JobRef *refs = sorted(jobs, n);

        if (!refs)
                return;
        fprintf(f, " ID      OWNER            SUBMITTED     RUN_TIME HOST(S)\n");
        for (size_t i = 0; i < n; i++) {
                _cleanup_free_ char *host = get_str(refs[i].ad, "RemoteHost", "");

                job_head(f, &refs[i], now);
                fprintf(f, " %s\n", S(host));
        }
}

void cli_print_held(FILE *f, ClassAd **jobs, size_t n) {
        _cleanup_free_ JobRef *refs = sorted(jobs, n);

        if (!refs)
                return;
        fprintf(f, " ID      OWNER           HELD_SINCE  HOLD_REASON\n");
        for (size_t i = 0; i < n; i++) {
                _cleanup_free_ char *owner = get_str(refs[i].ad, "Owner", "?");
                _cleanup_free_ char *reason = get_str(refs[i].ad, "HoldReason", "");
                char since[32];

                cli_fmt_date(get_int(refs[i].ad, "EnteredCurrentStatus", 0), since, sizeof since);
                id_cell(f, &refs[i]);
                fprintf(f, "%-14s %11s  %s\n", S(owner), since, S(reason));
        }
}

void cli_print_history(FILE *f, ClassAd **jobs, size_t n) {
        fprintf(f, " ID     OWNER          SUBMITTED   RUN_TIME     ST COMPLETED   CMD\n");
        for (size_t i = 0; i < n; i++) {
                const ClassAd *j = jobs[i];
                JobRef ref = { get_int(j, "ClusterId", -1), get_int(j, "ProcId", -1), jobs[i] };
                _cleanup_free_ char *owner = get_str(j, "Owner", "?"), *cmd = cli_job_cmd(j);
                char date[32], run[32], done[32];
                int64_t completed = get_int(j, "CompletionDate", 0);

                cli_fmt_date(get_int(j, "QDate", 0), date, sizeof date);
                cli_fmt_duration(get_int(j, "RemoteWallClockTime", 0), run, sizeof run);
                if (completed <= 0)
                        completed = get_int(j, "EnteredCurrentStatus", 0);
                cli_fmt_date(completed, done, sizeof done);
                id_cell(f, &ref);
                fprintf(f, "%-14s %11s %12s %-2s %11s %s\n", S(owner), date, run,
                        cli_job_status_letter(get_int(j, "JobStatus", 0)), done, S(cmd));
        }
}

/* ---- -l, -af ---- */

void cli_print_long(FILE *f, ClassAd **ads, size_t n) {
        for (size_t i = 0; i < n; i++) {
                _cleanup_free_ char *text = classad_unparse_old(ads[i]);

                fprintf(f, "%s\n", S(text));
        }
}

void cli_print_af(FILE *f, ClassAd **ads, size_t n, char *const *attrs, size_t n_attrs) {
        /* condor's -af takes attributes or expressions: each is parsed once
         * and evaluated in every ad (an item that does not parse prints
         * as an error value) */
        ClassAdExpr **e = calloc(n_attrs ? n_attrs : 1, sizeof *e);

        for (size_t k = 0; e && k < n_attrs; k++) {
                CaError err;
                if (classad_expr_parse(attrs[k], strlen(attrs[k]), MODE, &e[k], &err) < 0)
                        e[k] = NULL;
        }
        for (size_t i = 0; i < n; i++) {
                for (size_t k = 0; k < n_attrs; k++) {
                        CaValue v = ca_undefined();

                        if (k)
                                fputc(' ', f);
                        if (e && e[k])
                                classad_expr_eval(e[k], ads[i], NULL, MODE, &v);
                        else if (e)
                                v = ca_error();
                        else
                                classad_eval_attr(ads[i], attrs[k], MODE, &v);
                        if (v.type == CA_STRING)
                                fputs(v.u.s->s, f);
                        else {
                                _cleanup_free_ char *text = ca_value_unparse(&v);
                                fputs(S(text), f);
                        }
                        ca_value_clear(&v);
                }
                fputc('\n', f);
        }
        for (size_t k = 0; e && k < n_attrs; k++)
                classad_expr_free(e[k]);
        free(e);
}

/* ---- condor_status ---- */

void cli_print_status(FILE *f, ClassAd **slots, size_t n, int64_t now) {
        size_t name_w = 4;

        for (size_t i = 0; i < n; i++) {
                _cleanup_free_ char *name = get_str(slots[i], "Name", "?");
                size_t l = strlen(S(name));
                name_w = l > name_w ? l : name_w;
        }
        fprintf(f, "%-*s %-10s %-6s %-9s %-8s %6s %-5s %10s\n\n", (int) name_w, "Name", "OpSys", "Arch", "State",
                "Activity", "LoadAv", "Mem", "ActvtyTime");
        for (size_t i = 0; i < n; i++) {
                const ClassAd *s = slots[i];
                _cleanup_free_ char *name = get_str(s, "Name", "?"), *opsys = get_str(s, "OpSys", "?"),
                                    *arch = get_str(s, "Arch", "?"), *state = get_str(s, "State", "?"),
                                    *act = get_str(s, "Activity", "?");
                int64_t entered = get_int(s, "EnteredCurrentActivity", now);
                char t[32];

                cli_fmt_duration(now - entered, t, sizeof t);
                fprintf(f, "%-*s %-10s %-6s %-9s %-8s %6.3f %-5lld %10s\n", (int) name_w, S(name), S(opsys), S(arch),
                        S(state), S(act), get_real(s, "LoadAvg", 0), (long long) get_int(s, "Memory", 0), t);
        }
        fputc('\n', f);
        cli_print_status_summary(f, slots, n);
}

enum { SUM_TOTAL, SUM_OWNER, SUM_CLAIMED, SUM_UNCLAIMED, SUM_MATCHED, SUM_PREEMPTING, SUM_DRAIN, SUM_BACKFILL,
       SUM_BKIDLE, SUM_N };

typedef struct SumRow {
        char *label;
        size_t v[SUM_N];
} SumRow;

static void sum_add(SumRow *row, const char *state, const char *activity) {
        static const struct {
                const char *state;
                int col;
        } map[] = {
                { "Owner", SUM_OWNER },     { "Claimed", SUM_CLAIMED },       { "Unclaimed", SUM_UNCLAIMED },
                { "Matched", SUM_MATCHED }, { "Preempting", SUM_PREEMPTING }, { "Drained", SUM_DRAIN },
                { "Backfill", SUM_BACKFILL },
        };

        row->v[SUM_TOTAL]++;
        for (size_t k = 0; k < sizeof map / sizeof *map; k++)
                if (state && strcmp(state, map[k].state) == 0)
                        row->v[map[k].col]++;
        if (state && activity && strcmp(state, "Backfill") == 0 && strcmp(activity, "Idle") == 0)
                row->v[SUM_BKIDLE]++;
}

static void sum_print(FILE *f, const SumRow *row) {
        fprintf(f, "%14s %5zu %5zu %7zu %9zu %7zu %10zu %5zu %8zu %6zu\n\n", S(row->label), row->v[SUM_TOTAL],
                row->v[SUM_OWNER], row->v[SUM_CLAIMED], row->v[SUM_UNCLAIMED], row->v[SUM_MATCHED],
                row->v[SUM_PREEMPTING], row->v[SUM_DRAIN], row->v[SUM_BACKFILL], row->v[SUM_BKIDLE]);
}

static int by_label(const void *x, const void *y) {
        return strcmp(S(((const SumRow *) x)->label), S(((const SumRow *) y)->label));
}

void cli_print_status_summary(FILE *f, ClassAd **slots, size_t n) {
        _cleanup_free_ SumRow *rows = calloc(n ? n : 1, sizeof(*rows));
        SumRow total = { .label = (char *) "Total" };
        size_t nr = 0;

        if (!rows)
                return;
        for (size_t i = 0; i < n; i++) {
                _cleanup_free_ char *arch = get_str(slots[i], "Arch", "?"), *opsys = get_str(slots[i], "OpSys", "?"),
                                    *state = get_str(slots[i], "State", "?"),
                                    *act = get_str(slots[i], "Activity", "?");
                char *label = NULL;
                size_t k;

                if (asprintf(&label, "%s/%s", S(arch), S(opsys)) < 0)
                        label = NULL;
                for (k = 0; k < nr; k++)
                        if (strcmp(S(rows[k].label), S(label)) == 0)
                                break;
                if (k == nr)
                        rows[nr++].label = TAKE_PTR(label);
                free(label);
                sum_add(&rows[k], state, act);
                sum_add(&total, state, act);
        }
        if (nr > 1)
                qsort(rows, nr, sizeof(*rows), by_label);
        fprintf(f, "%14s %5s %5s %7s %9s %7s %10s %5s %8s %6s\n\n", "", "Total", "Owner", "Claimed", "Unclaimed",
                "Matched", "Preempting", "Drain", "Backfill", "BkIdle");
        for (size_t k = 0; k < nr; k++) {
                sum_print(f, &rows[k]);
                free(rows[k].label);
        }
        sum_print(f, &total);
}

void cli_print_status_claimed(FILE *f, ClassAd **slots, size_t n) {
        size_t name_w = 4;

        for (size_t i = 0; i < n; i++) {
                _cleanup_free_ char *name = get_str(slots[i], "Name", "?");
                size_t l = strlen(S(name));
                name_w = l > name_w ? l : name_w;
        }
        fprintf(f, "%-*s %-10s %-6s %6s %-20s %s\n\n", (int) name_w, "Name", "OpSys", "Arch", "LoadAv", "RemoteUser",
                "ClientMachine");
        for (size_t i = 0; i < n; i++) {
                const ClassAd *s = slots[i];
                _cleanup_free_ char *name = get_str(s, "Name", "?"), *opsys = get_str(s, "OpSys", "?"),
                                    *arch = get_str(s, "Arch", "?"), *user = get_str(s, "RemoteUser", ""),
                                    *client = get_str(s, "ClientMachine", "");

                fprintf(f, "%-*s %-10s %-6s %6.3f %-20s %s\n", (int) name_w, S(name), S(opsys), S(arch),
                        get_real(s, "LoadAvg", 0), S(user), S(client));
        }
        fputc('\n', f);
}
