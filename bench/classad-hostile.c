/* SPDX-License-Identifier: Apache-2.0 */
/*
 * classad-hostile — what hostile ClassAd text costs (issue 20, items 2
 * and 3): parsing an ad full of regular expressions that backtrack, one
 * such regexp() evaluated, and the 677-byte Requirements that calls
 * eval(unparse(Requirements)) 20 times.
 *
 * Usage: classad-hostile [--calls N] [--skip-req]
 *
 *   regexp   one regexp("(\\w+\\s?)+$", "aaaa...a!") (33 a's: no match,
 *            every way of splitting them tried) parsed and evaluated, N
 *            times (default 20): microseconds per call, and its value
 *   parse    a Hello-like ad of about 1.1 KB and one of about 5.5 KB,
 *            every attribute such a call, parsed with classad_parse
 *            (milliseconds), then every attribute evaluated (milliseconds)
 *   req677   the Requirements of 677 bytes evaluated once (milliseconds),
 *            its value, and whether it ran out of the evaluation budget;
 *            --skip-req leaves it out (it took 15 s before the budget)
 *
 * The last line is always
 *
 *   regexp_us=U regexp_value=V parse_1k_ms=M parse_5k_ms=M eval_1k_ms=M eval_5k_ms=M
 *   req677_bytes=B req677_ms=M req677_value=V req677_budget_hit=0|1
 *
 * (on one line). Exit status 0, or 1 when something fails to parse.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "classad.h"

#ifndef CLASSAD_EVAL_BUDGET /* built against the code before the budget, for the figures before */
static uint64_t classad_budget_hits(void) {
        return 0;
}
#endif

static double now_ms(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

#define CALL "regexp(\"(\\\\w+\\\\s?)+$\", \"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!\")"

/* "[ MyType = "Machine"; Name = "slot1@x"; R0 = <call>; ... ]" of about bytes. */
static char *hostile_ad(size_t bytes) {
        size_t cap = bytes + 256, len = 0;
        char *s = malloc(cap);

        if (!s)
                return NULL;
        len += (size_t) snprintf(s + len, cap - len, "[ MyType = \"Machine\"; Name = \"slot1@x\"");
        for (int i = 0; len + strlen(CALL) + 16 < bytes; i++)
                len += (size_t) snprintf(s + len, cap - len, "; R%d = %s", i, CALL);
        snprintf(s + len, cap - len, " ]");
        return s;
}

static int parse_and_eval(size_t bytes, double *ret_parse_ms, double *ret_eval_ms) {
        char *text = hostile_ad(bytes);
        ClassAd *ad = NULL;
        CaError err = { 0 };
        double t0, t1, t2;

        if (!text)
                return -1;
        t0 = now_ms();
        if (classad_parse(text, strlen(text), CA_MODE_OLD, &ad, &err) < 0) {
                fprintf(stderr, "classad-hostile: parse: %s\n", err.msg);
                free(text);
                return -1;
        }
        t1 = now_ms();
        ClassAdIter it = classad_iter(ad);
        const char *name;
        while (classad_iter_next(&it, &name, NULL)) {
                CaValue v;
                if (classad_eval_attr(ad, name, CA_MODE_OLD, &v) >= 0)
                        ca_value_clear(&v);
        }
        t2 = now_ms();
        printf("parse %zu bytes (%zu attributes): %.1f ms, evaluated in %.1f ms\n", strlen(text), classad_size(ad),
               t1 - t0, t2 - t1);
        classad_free(ad);
        free(text);
        *ret_parse_ms = t1 - t0;
        *ret_eval_ms = t2 - t1;
        return 0;
}

static char *value_text(const CaValue *v) {
        char *s = ca_value_unparse(v);
        return s ? s : strdup("?");
}

int main(int argc, char **argv) {
        int calls = 20;
        bool skip_req = false;
        double p1, e1, p5, e5, t0, us, req_ms = 0;
        char *rv = NULL, *qv = NULL;
        uint64_t hits;
        bool req_hit = false;
        size_t req_len = 0;

        for (int i = 1; i < argc; i++) {
                if (strcmp(argv[i], "--calls") == 0 && i + 1 < argc)
                        calls = atoi(argv[++i]);
                else if (strcmp(argv[i], "--skip-req") == 0)
                        skip_req = true;
                else {
                        fprintf(stderr, "usage: classad-hostile [--calls N] [--skip-req]\n");
                        return 2;
                }
        }
        if (calls < 1)
                calls = 1;

        /* one catastrophic call, parsed and evaluated */
        t0 = now_ms();
        for (int i = 0; i < calls; i++) {
                ClassAdExpr *e = NULL;
                CaValue v;
                if (classad_expr_parse(CALL, strlen(CALL), CA_MODE_OLD, &e, NULL) < 0) {
                        fprintf(stderr, "classad-hostile: the call does not parse\n");
                        return 1;
                }
                if (classad_expr_eval(e, NULL, NULL, CA_MODE_OLD, &v) >= 0) {
                        if (!rv)
                                rv = value_text(&v);
                        ca_value_clear(&v);
                }
                classad_expr_free(e);
        }
        us = (now_ms() - t0) * 1e3 / calls;
        printf("regexp: %.1f us a call (%d calls), value %s\n", us, calls, rv ? rv : "?");

        if (parse_and_eval(1100, &p1, &e1) < 0 || parse_and_eval(5500, &p5, &e5) < 0)
                return 1;

        if (!skip_req) {
                char text[1024];
                size_t len = (size_t) snprintf(text, sizeof(text), "[ requirements = (");
                for (int i = 0; i < 20; i++)
                        len += (size_t) snprintf(text + len, sizeof(text) - len, "%seval(unparse(Requirements))",
                                                 i ? " + " : "");
                len += (size_t) snprintf(text + len, sizeof(text) - len, ") >= 0 || true ]");
                ClassAd *ad = NULL;
                CaError err = { 0 };
                CaValue v;
                if (classad_parse(text, len, CA_MODE_OLD, &ad, &err) < 0) {
                        fprintf(stderr, "classad-hostile: requirements: %s\n", err.msg);
                        return 1;
                }
                char *attr = classad_unparse_attr(ad, "requirements");
                req_len = strlen("requirements = ") + (attr ? strlen(attr) : 0);
                free(attr);
                hits = classad_budget_hits();
                t0 = now_ms();
                if (classad_eval_attr(ad, "requirements", CA_MODE_OLD, &v) >= 0) {
                        qv = value_text(&v);
                        ca_value_clear(&v);
                }
                req_ms = now_ms() - t0;
                req_hit = classad_budget_hits() != hits;
                printf("requirements of %zu bytes: %.1f ms, value %s%s\n", req_len, req_ms, qv ? qv : "?",
                       req_hit ? " (out of the evaluation budget)" : "");
                classad_free(ad);
        }
        printf("regexp_us=%.1f regexp_value=%s parse_1k_ms=%.2f parse_5k_ms=%.2f eval_1k_ms=%.2f eval_5k_ms=%.2f "
               "req677_bytes=%zu req677_ms=%.1f req677_value=%s req677_budget_hit=%d\n",
               us, rv ? rv : "?", p1, p5, e1, e5, req_len, req_ms, qv ? qv : "-", req_hit ? 1 : 0);
        free(rv);
        free(qv);
        return 0;
}
