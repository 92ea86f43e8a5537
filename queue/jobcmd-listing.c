/* SPDX-License-Identifier: Apache-2.0 */
/*
 * jobcmd-listing.c — replies: small ones, and listings in pieces under
 * GLEAN_FRAME_MAX. A piece is written as text: the envelope (Command,
 * RequestId, Ok, More, Count: a Reply ad unparsed) with the list spliced
 * in as "<name> = { ad, ad, ... }", so that each ad is unparsed once and
 * the size of every piece is known exactly.
 *
 * Also the readers of a request's Ids, Constraint and Attrs.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cleanup.h"
#include "jobcmd-internal.h"

/* Room kept in every piece for its envelope. */
#define ENVELOPE_MAX 512
#define PIECE_BUDGET (GLEAN_FRAME_MAX - ENVELOPE_MAX)

struct JobCmdListing {
        const ClassAd *request;
        const JobCmdSink *sink;
        char name[64];
        char *items; /* "ad, ad, ..." */
        size_t len, cap, n;
};

int jobcmd_send_ad(const ClassAd *reply, const JobCmdSink *sink) {
        _cleanup_free_ char *text = classad_unparse(reply);

        if (!text)
                return -ENOMEM;
        return sink->send(sink->userdata, text, strlen(text));
}

int jobcmd_reply(const ClassAd *request, bool ok, const char *reason, const JobCmdSink *sink) {
        ClassAd *reply = NULL;
        int r = glean_msg_reply(request, ok, reason, &reply);

        if (r >= 0)
                r = jobcmd_send_ad(reply, sink);
        classad_free(reply);
        return r;
}

int jobcmd_listing_begin(const ClassAd *request, const char *list_name, const JobCmdSink *sink,
                         JobCmdListing **ret) {
        JobCmdListing *l = calloc(1, sizeof(*l));

        if (!l)
                return -ENOMEM;
        l->request = request;
        l->sink = sink;
        snprintf(l->name, sizeof(l->name), "%s", list_name);
        l->cap = 64 * 1024;
        l->items = malloc(l->cap);
        if (!l->items) {
                free(l);
                return -ENOMEM;
        }
        *ret = l;
        return 0;
}

void jobcmd_listing_free(JobCmdListing *l) {
        if (!l)
                return;
        free(l->items);
        free(l);
}

/* Sends what is gathered as one piece. */
static int send_piece(JobCmdListing *l, bool more, int64_t count, bool ok, const char *reason) {
        _cleanup_free_ char *env = NULL, *out = NULL;
        ClassAd *reply = NULL;
        size_t elen, olen;
        int r;

        r = glean_msg_reply(l->request, ok, reason, &reply);
        if (r >= 0 && more)
                r = classad_set_bool(reply, "More", true);
        if (r >= 0 && !more)
                r = classad_set_int(reply, "Count", count);
        if (r >= 0 && !(env = classad_unparse(reply)))
                r = -ENOMEM;
        classad_free(reply);
        if (r < 0)
                return r;
        /* "[ ... ]" -> "[ ...; Name = { items } ]" */
        elen = strlen(env);
        while (elen > 0 && env[elen - 1] != ']')
                elen--;
        if (elen == 0)
                return -EINVAL;
        elen--;
        while (elen > 0 && env[elen - 1] == ' ')
                elen--;
        out = malloc(elen + strlen(l->name) + l->len + 32);
        if (!out)
                return -ENOMEM;
        memcpy(out, env, elen);
        olen = elen;
        olen += (size_t) sprintf(out + olen, "; %s = { ", l->name);
        memcpy(out + olen, l->items, l->len);
        olen += l->len;
        olen += (size_t) sprintf(out + olen, " } ]");
        l->len = 0;
        l->n = 0;
        return l->sink->send(l->sink->userdata, out, olen);
}

static int append(JobCmdListing *l, const char *text, size_t k) {
        if (l->len + k + 2 > l->cap) {
                size_t cap = l->cap;
                while (l->len + k + 2 > cap)
                        cap *= 2;
                char *n = realloc(l->items, cap);
                if (!n)
                        return -ENOMEM;
                l->items = n;
                l->cap = cap;
        }
        if (l->n > 0) {
                l->items[l->len++] = ',';
                l->items[l->len++] = ' ';
        }
        memcpy(l->items + l->len, text, k);
        l->len += k;
        l->n++;
        return 0;
}

/* "[ A = expr; B = expr ]" of the attributes of attrs that ad has. */
static char *project(const ClassAd *ad, char *const *attrs) {
        size_t len = 2, cap = 256;
        char *out = malloc(cap);

        if (!out)
                return NULL;
        memcpy(out, "[ ", 2);
        for (char *const *a = attrs; *a; a++) {
                _cleanup_free_ char *e = classad_unparse_attr(ad, *a);
                size_t need;

                if (!e)
                        continue;
                need = strlen(*a) + strlen(e) + 8;
                if (len + need + 4 > cap) {
                        while (len + need + 4 > cap)
                                cap *= 2;
                        char *n = realloc(out, cap);
                        if (!n) {
                                free(out);
                                return NULL;
                        }
                        out = n;
                }
                len += (size_t) sprintf(out + len, "%s%s = %s", len > 2 ? "; " : "", *a, e);
        }
        memcpy(out + len, " ]", 3);
        return out;
}

int jobcmd_listing_add(JobCmdListing *l, const ClassAd *ad, char *const *attrs) {
        _cleanup_free_ char *text = attrs ? project(ad, attrs) : classad_unparse(ad);
        size_t k;
        int r;

        if (!text)
                return -ENOMEM;
        k = strlen(text);
        if (k + 2 > PIECE_BUDGET) {
                static char *const ids[] = { "ClusterId", "ProcId", "Name", NULL };
                char *stub = project(ad, ids);
                if (!stub)
                        return -ENOMEM;
                free(text);
                k = strlen(stub);
                text = malloc(k + 32);
                if (!text) {
                        free(stub);
                        return -ENOMEM;
                }
                memcpy(text, stub, k - 2);
                k = (size_t) sprintf(text + k - 2, "%sGleanTruncated = true ]", k > 4 ? "; " : "") + k - 2;
                free(stub);
        }
        if (l->n > 0 && l->len + k + 2 > PIECE_BUDGET) {
                r = send_piece(l, true, 0, true, NULL);
                if (r < 0)
                        return r;
        }
        return append(l, text, k);
}

int jobcmd_listing_end(JobCmdListing *l, int64_t count) {
        return jobcmd_listing_end_ok(l, count, true, NULL);
}

int jobcmd_listing_end_ok(JobCmdListing *l, int64_t count, bool ok, const char *reason) {
        int r = send_piece(l, false, count, ok, reason);

        jobcmd_listing_free(l);
        return r;
}

/* ---- reading requests ---- */

static bool is_sep(char c) {
        return c == ',' || c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* The optional string attribute name of request (NULL when absent). */
static int opt_string(const ClassAd *request, const char *name, char **ret) {
        int r = classad_eval_string(request, name, JOBCMD_MODE, ret);

        if (r == -ENOENT) {
                *ret = NULL;
                return 0;
        }
        return r;
}

int jobcmd_parse_ids(const ClassAd *request, JobCmdIds *ret, char *why, size_t whylen) {
        _cleanup_free_ char *text = NULL;
        JobCmdIds ids = {};
        int r;

        r = opt_string(request, "Ids", &text);
        if (r < 0)
                return glean_why(-EINVAL, why, whylen, "Ids is not a string");
        for (char *p = text; p && *p;) {
                char *end;
                JobId id;

                while (*p && is_sep(*p))
                        p++;
                if (!*p)
                        break;
                for (end = p; *end && !is_sep(*end); end++)
                        ;
                char save = *end;
                *end = 0;
                if (job_id_parse(p, &id) < 0) {
                        r = glean_why(-EINVAL, why, whylen, "Ids: '%.64s' is not a job id (C or C.P)", p);
                        free(ids.ids);
                        return r;
                }
                *end = save;
                JobId *n = realloc(ids.ids, (ids.n + 1) * sizeof(*n));
                if (!n) {
                        free(ids.ids);
                        return -ENOMEM;
                }
                ids.ids = n;
                ids.ids[ids.n++] = id;
                p = end;
        }
        *ret = ids;
        return 0;
}

int jobcmd_parse_constraint(const ClassAd *request, ClassAdExpr **ret, char *why, size_t whylen) {
        _cleanup_free_ char *text = NULL;
        CaError err = {};
        int r;

        r = opt_string(request, "Constraint", &text);
        if (r < 0)
                return glean_why(-EINVAL, why, whylen, "Constraint is not a string");
        if (!text) {
                *ret = NULL;
                return 0;
        }
        r = classad_expr_parse(text, strlen(text), JOBCMD_MODE, ret, &err);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return glean_why(-EINVAL, why, whylen, "Constraint: column %d: %s", err.column,
                                 err.msg[0] ? err.msg : "not an expression");
        return 0;
}

void jobcmd_strv_free(char **v) {
        for (char **p = v; p && *p; p++)
                free(*p);
        free(v);
}

static bool is_name(const char *s, size_t n) {
        if (n == 0 || n > 256 || !(isalpha((unsigned char) s[0]) || s[0] == '_'))
                return false;
        for (size_t i = 1; i < n; i++)
                if (!(isalnum((unsigned char) s[i]) || s[i] == '_'))
                        return false;
        return true;
}

int jobcmd_parse_attrs(const ClassAd *request, char ***ret, char *why, size_t whylen) {
        _cleanup_free_ char *text = NULL;
        char **v = NULL;
        size_t n = 0;
        int r;

        r = opt_string(request, "Attrs", &text);
        if (r < 0)
                return glean_why(-EINVAL, why, whylen, "Attrs is not a string");
        if (!text) {
                *ret = NULL;
                return 0;
        }
        for (char *p = text; *p;) {
                size_t k;

                while (*p && is_sep(*p))
                        p++;
                for (k = 0; p[k] && !is_sep(p[k]); k++)
                        ;
                if (k == 0)
                        break;
                if (!is_name(p, k)) {
                        jobcmd_strv_free(v);
                        return glean_why(-EINVAL, why, whylen, "Attrs: '%.*s' is not an attribute name",
                                         (int) (k > 64 ? 64 : k), p);
                }
                char **nv = realloc(v, (n + 2) * sizeof(*nv));
                if (!nv || !(nv[n] = strndup(p, k))) {
                        jobcmd_strv_free(nv ? nv : v);
                        return -ENOMEM;
                }
                v = nv;
                v[++n] = NULL;
                p += k;
        }
        if (!v && !(v = calloc(1, sizeof(*v))))
                return -ENOMEM;
        *ret = v;
        return 0;
}

int jobcmd_holds(const ClassAdExpr *constraint, const ClassAd *ad) {
        CaValue v = ca_undefined();
        uint64_t hits = classad_budget_hits();
        bool yes;

        if (!constraint)
                return 1;
        yes = classad_expr_eval(constraint, ad, NULL, JOBCMD_MODE, &v) >= 0 && v.type == CA_BOOL && v.u.b;
        ca_value_clear(&v);
        if (classad_budget_hits() != hits)
                return -E2BIG;
        return yes;
}
