/* SPDX-License-Identifier: Apache-2.0 */
/*
 * submit-split.c — a submission as Submit messages carry it (jobs.h): the
 * cluster's shared attributes, each proc's own, parts under the frame
 * limit; and $(Cluster) turned back into ClusterId.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "common/proto.h"
#include "jobs.h"

#define MODE CA_MODE_OLD
#define SLACK 256 /* bytes kept free in each message for what unparsing nested ads adds */

void cli_submit_plan_clear(CliSubmitPlan *p) {
        if (!p)
                return;
        classad_free(p->cluster);
        for (size_t i = 0; i < p->n; i++)
                classad_free(p->procs[i]);
        free(p->procs);
        free(p->part_end);
        *p = (CliSubmitPlan){};
}

static bool assigned(const char *name) {
        return strcasecmp(name, "ClusterId") == 0 || strcasecmp(name, "ProcId") == 0;
}

/* Whether attribute name has the same expression in every ad. */
static bool shared(ClassAd *const *ads, size_t n, const char *name) {
        const CaName *atom = classad_name(name);

        if (!atom)
                return false;
        for (size_t i = 1; i < n; i++)
                if (!classad_has(ads[i], name) || !classad_attr_same(ads[0], ads[i], atom))
                        return false;
        return true;
}

int cli_submit_message(const CliSubmitPlan *p, size_t k, ClassAd **ret) {
        size_t from = k ? p->part_end[k - 1] : 0, to = p->part_end[k];
        ClassAd *msg = NULL;
        int r;

        if (k >= p->n_parts)
                return -EINVAL;
        if ((r = glean_msg_new(GLEAN_CMD_SUBMIT, &msg)) < 0 || (r = glean_msg_set_ad(msg, "Cluster", p->cluster)) < 0 ||
            (r = glean_msg_set_ad_list(msg, "Procs", p->procs + from, to - from)) < 0 ||
            (r = classad_set_bool(msg, "More", k + 1 < p->n_parts)) < 0) {
                classad_free(msg);
                return r;
        }
        *ret = msg;
        return 0;
}

int cli_submit_plan(ClassAd *const *ads, size_t n, size_t frame_max, CliSubmitPlan *ret, char *why, size_t whylen) {
        CliSubmitPlan p = {};
        ClassAdIter it;
        const char *name;
        size_t base, used = 0, cap = 0;
        int r = -ENOMEM;

        if (n == 0) {
                snprintf(why, whylen, "no job to submit");
                return -EINVAL;
        }
        p.procs = calloc(n, sizeof(*p.procs));
        if (!p.procs || classad_new(&p.cluster) < 0)
                goto fail;
        for (size_t i = 0; i < n; i++)
                if (classad_copy(ads[i], &p.procs[i]) < 0)
                        goto fail;
                else
                        p.n++;

        /* What every proc has alike goes to the cluster ad. */
        it = classad_iter(ads[0]);
        while (classad_iter_next(&it, &name, NULL)) {
                if (assigned(name)) {
                        for (size_t i = 0; i < n; i++)
                                classad_delete(p.procs[i], name);
                        continue;
                }
                if (!shared(ads, n, name))
                        continue;
                _cleanup_free_ char *text = classad_unparse_attr(ads[0], name);
                if (!text || classad_set_expr_text(p.cluster, name, text, MODE, NULL) < 0)
                        goto fail;
                for (size_t i = 0; i < n; i++)
                        classad_delete(p.procs[i], name);
        }
        for (size_t i = 1; i < n; i++) {
                classad_delete(p.procs[i], "ClusterId");
                classad_delete(p.procs[i], "ProcId");
        }

        /* The parts: as many procs as fit beside the cluster ad. */
        {
                ClassAd *empty = NULL;
                CliSubmitPlan probe = p;
                size_t end = 0;
                _cleanup_free_ char *text = NULL;

                probe.part_end = &end;
                probe.n_parts = 1;
                if (cli_submit_message(&probe, 0, &empty) < 0)
                        goto fail;
                classad_set_int(empty, "RequestId", INT64_MAX);
                /* Room for the longest SubmitId (submit.c sets it on each part). */
                classad_set_string(empty, "SubmitId", "0123456789012345678901234567890123456789012345678901234567890123");
                classad_set_int(empty, "TotalProcs", INT64_MAX);
                text = classad_unparse(empty);
                classad_free(empty);
                if (!text)
                        goto fail;
                base = strlen(text) + SLACK;
        }
        if (base >= frame_max) {
                snprintf(why, whylen, "the attributes the jobs share take %zu bytes, more than a message holds (%zu)",
                         base - SLACK, frame_max);
                r = -E2BIG;
                goto fail;
        }
        for (size_t i = 0; i < n; i++) {
                _cleanup_free_ char *text = classad_unparse(p.procs[i]);
                size_t len;

                if (!text)
                        goto fail;
                len = strlen(text) + 2;
                if (base + len > frame_max) {
                        snprintf(why, whylen, "job %zu's own attributes take %zu bytes, more than a message holds",
                                 i, len);
                        r = -E2BIG;
                        goto fail;
                }
                if (used > 0 && base + used + len > frame_max) {
                        if (p.n_parts == cap) {
                                size_t *grown = realloc(p.part_end, (cap = cap ? 2 * cap : 8) * sizeof(size_t));
                                if (!grown)
                                        goto fail;
                                p.part_end = grown;
                        }
                        p.part_end[p.n_parts++] = i;
                        used = 0;
                }
                used += len;
        }
        if (p.n_parts == cap) {
                size_t *grown = realloc(p.part_end, (cap + 1) * sizeof(size_t));
                if (!grown)
                        goto fail;
                p.part_end = grown;
        }
        p.part_end[p.n_parts++] = n;
        *ret = p;
        return 0;
fail:
        if (r == -ENOMEM)
                snprintf(why, whylen, "out of memory");
        cli_submit_plan_clear(&p);
        return r;
}

/* ---- $(Cluster) ---- */

static bool word_char(char c) {
        return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '.';
}

/* text with the placeholder digits ph replaced: inside a string literal
 * by `", string(ClusterId), "` (the whole wrapped in strcat()) where no
 * digit touches it, outside by ClusterId where it is a whole token. NULL
 * when nothing changes. */
static char *rewrite(const char *text, const char *ph, bool whole_string) {
        size_t len = strlen(text), pl = strlen(ph), cap = len * 4 + 32, o = 0;
        char *out = malloc(cap), quote = 0;
        bool changed = false;

        if (!out)
                return NULL;
        if (whole_string)
                o += (size_t) snprintf(out, cap, "strcat(");
        for (size_t i = 0; i < len;) {
                char ch = text[i];

                if (quote && ch == '\\' && i + 1 < len) {
                        out[o++] = text[i++];
                        out[o++] = text[i++];
                        continue;
                }
                if (strncmp(text + i, ph, pl) == 0) {
                        bool whole = (i == 0 || !word_char(text[i - 1])) && !word_char(text[i + pl]);
                        bool digits_apart = (i == 0 || !isdigit((unsigned char) text[i - 1])) &&
                                            !isdigit((unsigned char) text[i + pl]);
                        if (quote == '"' && whole_string && digits_apart) {
                                o += (size_t) snprintf(out + o, cap - o, "\", string(ClusterId), \"");
                                i += pl;
                                changed = true;
                                continue;
                        }
                        if (!quote && whole) {
                                o += (size_t) snprintf(out + o, cap - o, "ClusterId");
                                i += pl;
                                changed = true;
                                continue;
                        }
                }
                if (quote && ch == quote)
                        quote = 0;
                else if (!quote && (ch == '"' || ch == '\''))
                        quote = ch;
                out[o++] = text[i++];
        }
        if (whole_string)
                out[o++] = ')';
        out[o] = '\0';
        if (!changed) {
                free(out);
                return NULL;
        }
        return out;
}

int cli_submit_cluster_refs(ClassAd **ads, size_t n, int64_t placeholder) {
        char ph[32];
        int changed = 0;

        snprintf(ph, sizeof ph, "%lld", (long long) placeholder);
        for (size_t i = 0; i < n; i++) {
                ClassAdIter it = classad_iter(ads[i]);
                const char *name;
                char *text;
                /* Names first: setting attributes while iterating is not safe. */
                char **todo_names = NULL, **todo_texts = NULL;
                size_t nt = 0;

                while (classad_iter_next(&it, &name, &text)) {
                        if (text && !assigned(name) && strstr(text, ph)) {
                                CaValue v = ca_undefined();
                                bool is_string;
                                char *lit, *new_text;

                                classad_eval_attr(ads[i], name, MODE, &v);
                                lit = ca_value_unparse(&v);
                                is_string = v.type == CA_STRING && lit && strcmp(lit, text) == 0;
                                free(lit);
                                ca_value_clear(&v);
                                new_text = rewrite(text, ph, is_string);
                                if (new_text) {
                                        char **a = realloc(todo_names, (nt + 1) * sizeof(char *));
                                        char **b = a ? realloc(todo_texts, (nt + 1) * sizeof(char *)) : NULL;
                                        if (a)
                                                todo_names = a;
                                        if (b)
                                                todo_texts = b;
                                        if (!a || !b || !(todo_names[nt] = strdup(name))) {
                                                free(new_text);
                                                free(text);
                                                changed = -ENOMEM;
                                                break;
                                        }
                                        todo_texts[nt++] = new_text;
                                }
                        }
                        free(text);
                }
                for (size_t k = 0; k < nt; k++) {
                        if (changed >= 0 && classad_set_expr_text(ads[i], todo_names[k], todo_texts[k], MODE, NULL) >= 0)
                                changed++;
                        free(todo_names[k]);
                        free(todo_texts[k]);
                }
                free(todo_names);
                free(todo_texts);
                if (changed < 0)
                        return changed;
        }
        return changed;
}
