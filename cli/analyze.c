/* SPDX-License-Identifier: Apache-2.0 */
/*
 * analyze.c — condor_q -analyze and -better-analyze (jobs.h): why a job
 * does not run, from the matchmaker's last reason and a fresh evaluation
 * of the job's Requirements, clause by clause, against the slots.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "jobs.h"

#define MODE CA_MODE_OLD
#define MAX_SLOT_LINES 10 /* slots named in the slots' side */

size_t cli_split_clauses(const char *text, char **clauses, size_t max) {
        size_t n = 0, depth = 0, start = 0, len = strlen(text);
        char quote = 0;

        for (size_t i = 0; i <= len && n < max; i++) {
                char ch = text[i];

                if (quote) {
                        if (ch == '\\' && text[i + 1])
                                i++;
                        else if (ch == quote)
                                quote = 0;
                        continue;
                }
                if (ch == '"' || ch == '\'')
                        quote = ch;
                else if (ch == '(' || ch == '[' || ch == '{')
                        depth++;
                else if ((ch == ')' || ch == ']' || ch == '}') && depth > 0)
                        depth--;
                else if (ch == '\0' || (depth == 0 && ch == '&' && text[i + 1] == '&')) {
                        size_t b = start, e = i;

                        while (b < e && (text[b] == ' ' || text[b] == '\t' || text[b] == '\n'))
                                b++;
                        while (e > b && (text[e - 1] == ' ' || text[e - 1] == '\t' || text[e - 1] == '\n'))
                                e--;
                        /* "(a)" alone: the parentheses say nothing here. */
                        if (e - b >= 2 && text[b] == '(' && text[e - 1] == ')') {
                                size_t d = 0, k;
                                for (k = b; k < e; k++) {
                                        d += text[k] == '(';
                                        d -= text[k] == ')';
                                        if (d == 0)
                                                break;
                                }
                                if (k == e - 1) {
                                        b++;
                                        e--;
                                }
                        }
                        if (e > b) {
                                char *c = strndup(text + b, e - b);
                                if (c)
                                        clauses[n++] = c;
                        }
                        start = i + 2;
                        i++;
                }
        }
        return n;
}

static bool is_true(const CaValue *v) {
        return v->type == CA_BOOL && v->u.b;
}

static char *str_attr(const ClassAd *ad, const char *name) {
        char *s = NULL;

        if (classad_eval_string(ad, name, MODE, &s) < 0)
                return NULL;
        return s;
}

/* The job's own attributes its Requirements reads. */
typedef struct Refs {
        const ClassAd *job;
        const CaName *names[64];
        size_t n;
} Refs;

static void collect_ref(const CaName *name, CaRefKind kind, void *userdata) {
        Refs *r = userdata;

        if (!name || (kind != CA_REF_PLAIN && kind != CA_REF_MY) || r->n >= 64)
                return;
        if (!classad_has(r->job, classad_name_str(name)))
                return;
        for (size_t i = 0; i < r->n; i++)
                if (r->names[i] == name)
                        return;
        r->names[r->n++] = name;
}

static void print_defined(FILE *f, const ClassAd *job, const char *id) {
        Refs refs = { .job = job };

        classad_attr_refs(job, classad_name("Requirements"), collect_ref, &refs);
        if (refs.n == 0)
                return;
        fprintf(f, "Job %s defines the following attributes:\n\n", id);
        for (size_t i = 0; i < refs.n; i++) {
                const char *name = classad_name_str(refs.names[i]);
                _cleanup_free_ char *text = classad_unparse_attr(job, name);
                fprintf(f, "    %s = %s\n", name, text ? text : "?");
        }
        fputc('\n', f);
}

static void print_clauses(FILE *f, const ClassAd *job, const char *req, ClassAd **slots, size_t n, const char *id) {
        char *clauses[CLI_MAX_CLAUSES];
        size_t nc = cli_split_clauses(req, clauses, CLI_MAX_CLAUSES);

        fprintf(f, "The Requirements expression for job %s reduces to these conditions:\n\n", id);
        fprintf(f, "         Slots\nStep    Matched  Condition\n-----  --------  ---------\n");
        for (size_t k = 0; k < nc; k++) {
                ClassAdExpr *e = NULL;
                size_t matched = 0;
                char step[24];

                snprintf(step, sizeof step, "[%zu]", k);
                if (classad_expr_parse(clauses[k], strlen(clauses[k]), MODE, &e, NULL) >= 0) {
                        for (size_t i = 0; i < n; i++) {
                                CaValue v = ca_undefined();
                                classad_expr_eval(e, job, slots[i], MODE, &v);
                                matched += is_true(&v);
                                ca_value_clear(&v);
                        }
                        fprintf(f, "%-5s%10zu  %s\n", step, matched, clauses[k]);
                } else
                        fprintf(f, "%-5s%10s  %s\n", step, "?", clauses[k]);
                classad_expr_free(e);
                free(clauses[k]);
        }
        fputc('\n', f);
}

void cli_print_analysis(FILE *f, const ClassAd *job, ClassAd **slots, size_t n, bool better, int64_t now) {
        _cleanup_free_ char *req = classad_unparse_attr(job, "Requirements");
        _cleanup_free_ char *user = str_attr(job, "User"), *owner = str_attr(job, "Owner");
        _cleanup_free_ char *reason = str_attr(job, "LastRejMatchReason");
        size_t job_no = 0, slot_no = 0, mine = 0, others = 0, avail = 0, named = 0;
        double rej_time = 0;
        int64_t status = 0;
        char id[64];

        (void) now;
        cli_fmt_job_id(job, id, sizeof id);
        classad_eval_int(job, "JobStatus", MODE, &status);
        if (status == 2) {
                _cleanup_free_ char *host = str_attr(job, "RemoteHost");
                fprintf(f, "Job %s is running on %s.\n\n", id, host ? host : "a slot");
        } else if (status == 5) {
                _cleanup_free_ char *hold = str_attr(job, "HoldReason");
                fprintf(f, "Job %s is held.\n\nHold reason: %s\n\n", id, hold ? hold : "(none given)");
        } else if (status == 3 || status == 4)
                fprintf(f, "Job %s is %s.\n\n", id, status == 3 ? "removed" : "completed");

        if (better && req) {
                fprintf(f, "The Requirements expression for job %s is\n\n    %s\n\n", id, req);
                print_defined(f, job, id);
                print_clauses(f, job, req, slots, n, id);
        } else if (better)
                fprintf(f, "Job %s has no Requirements expression: it matches no slot.\n\n", id);

        if (classad_eval_real(job, "LastRejMatchTime", MODE, &rej_time) >= 0 && rej_time > 0) {
                time_t t = (time_t) rej_time;
                char when[64];
                struct tm tm;
                if (localtime_r(&t, &tm))
                        strftime(when, sizeof when, "%a %b %e %H:%M:%S %Y", &tm);
                else
                        snprintf(when, sizeof when, "%.0f", rej_time);
                fprintf(f, "Last failed match: %s\n\n", when);
        } else if (!reason)
                fprintf(f, "No successful match recorded.\n\n");
        if (reason)
                fprintf(f, "Reason for last match failure: %s\n\n", reason);

        for (size_t i = 0; i < n; i++) {
                _cleanup_free_ char *state = str_attr(slots[i], "State");
                _cleanup_free_ char *ruser = str_attr(slots[i], "RemoteUser"), *rowner = str_attr(slots[i], "RemoteOwner");

                if (!classad_requirements_met(job, slots[i], MODE)) {
                        job_no++;
                        continue;
                }
                if (!classad_requirements_met(slots[i], job, MODE)) {
                        slot_no++;
                        continue;
                }
                if (state && strcmp(state, "Claimed") == 0) {
                        bool same = (user && ruser && strcmp(user, ruser) == 0) ||
                                    (owner && rowner && strcmp(owner, rowner) == 0);
                        if (same)
                                mine++;
                        else
                                others++;
                } else
                        avail++;
        }
        fprintf(f,
                "%s:  Run analysis summary ignoring user priority.  Of %zu slots,\n"
                "%6zu are rejected by your job's requirements\n"
                "%6zu reject your job because of their own requirements\n"
                "%6zu match and are already running your jobs\n"
                "%6zu match but are serving other users\n"
                "%6zu are able to run your job\n",
                id, n, job_no, slot_no, mine, others, avail);
        if (job_no == n && n > 0)
                fprintf(f, "\nWARNING:  Be advised:\n   No slots matched the job's constraints\n");

        if (!better || slot_no == 0)
                return;
        fprintf(f, "\nThe slots' side: of the slots that match the job's Requirements, %zu refuse%s the job by their\n"
                   "own Requirements:\n\n",
                slot_no, slot_no == 1 ? "s" : "");
        for (size_t i = 0; i < n && named < MAX_SLOT_LINES; i++) {
                if (!classad_requirements_met(job, slots[i], MODE) || classad_requirements_met(slots[i], job, MODE))
                        continue;
                _cleanup_free_ char *name = str_attr(slots[i], "Name");
                _cleanup_free_ char *sreq = classad_unparse_attr(slots[i], "Requirements");
                _cleanup_free_ char *start = classad_unparse_attr(slots[i], "START");
                fprintf(f, "    %s: Requirements = %s\n", name ? name : "?", sreq ? sreq : "(none: undefined)");
                if (start)
                        fprintf(f, "    %*s  START = %s\n", (int) strlen(name ? name : "?"), "", start);
                named++;
        }
        if (slot_no > named)
                fprintf(f, "    ... and %zu more\n", slot_no - named);
}
