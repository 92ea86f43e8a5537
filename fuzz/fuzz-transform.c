/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz-transform — libFuzzer target for job transforms (queue/transform.h):
 * the compiler, the macro expander and every statement, on a job ad.
 *
 * Input: a transform's text, then (after the first NUL byte, if any) a
 * job ad in the bracketed syntax; without one, a fixed job. The text is
 * compiled as JOB_TRANSFORM_F of a configuration that defines a knob
 * KNOB; a job that does not parse is replaced by the fixed one. Checks,
 * each an abort() when broken:
 *
 *   - a refused transform says why, with the knob's name;
 *   - applied to the job (Owner "alice", User "alice@fuzz" set), a failure
 *     says why and names the transform; a success leaves Owner and User
 *     as they were, and the ad unparses to text that parses again;
 *   - the job split as a submission splits it (the ad as the cluster, a
 *     proc [ ProcId = 0 ], a proc without attributes of its own) through
 *     queue_xform_part fails exactly when the direct application to the
 *     job with ProcId 0 or 1 does, and when it succeeds each proc's ad
 *     over the new cluster shows every attribute (Owner, User and ProcId
 *     aside) as the direct application made it, an absent one as
 *     undefined: the proc without attributes shares the cluster's run
 *     only when nothing read ProcId.
 *     Transforms with a regex COPY or RENAME are not compared (the two
 *     list the attributes in different orders, and two names copied to
 *     one may then end differently).
 */

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "queue/transform-internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static _Noreturn void fail(const char *what, const char *detail) {
        fprintf(stderr, "FUZZ-TRANSFORM FAILURE: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
        abort();
}

static const Config *knobs(void) {
        static Config *cfg;
        ConfigError err = { 0 };
        if (!cfg && (config_new(&cfg) < 0 ||
                     config_load_string(cfg, "KNOB = knob_value\nEXPR = 1 + 2\n", "<fuzz>", &err) < 0))
                fail("the configuration does not load", err.msg);
        return cfg;
}

static ClassAd *job_of(const char *text) {
        static const char fixed[] = "[ Cmd = \"/bin/true\"; JobUniverse = 5; RequestCpus = 2; RequestMemory = 1024; "
                                    "Requirements = TARGET.Memory > RequestMemory; Args = \"a b\"; "
                                    "AcctGroup = \"group_x\"; L = { 1, \"s\" }; R = [ a = 1 ] ]";
        ClassAd *ad = NULL;
        CaError e = { 0 };
        if (!text || classad_parse(text, strlen(text), XF_MODE, &ad, &e) < 0) {
                classad_free(ad);
                ad = NULL;
                if (classad_parse(fixed, strlen(fixed), XF_MODE, &ad, &e) < 0)
                        fail("the fixed job does not parse", e.msg);
        }
        if (classad_set_string(ad, "Owner", "alice") < 0 || classad_set_string(ad, "User", "alice@fuzz") < 0)
                fail("out of memory", NULL);
        return ad;
}

static bool has_regex_copy(const QueueXforms *xs) {
        for (size_t i = 0; i < xs->n; i++)
                for (size_t k = 0; k < xs->x[i]->n; k++) {
                        const XfStmt *st = &xs->x[i]->st[k];
                        if (st->re && st->kind != XF_DELETE)
                                return true;
                }
        return false;
}

static char *text_of(const ClassAd *ad, const char *name) {
        char *t = classad_unparse_attr(ad, name);
        return t ? t : strdup("undefined");
}

/* Every attribute of either ad the same in both (absent = undefined). */
static void compare(const ClassAd *direct, const ClassAd *view) {
        const ClassAd *ads[2] = { direct, view };
        for (int k = 0; k < 2; k++) {
                ClassAdIter it = classad_iter(ads[k]);
                const char *name;
                while (classad_iter_next(&it, &name, NULL)) {
                        if (strcasecmp(name, "Owner") == 0 || strcasecmp(name, "User") == 0 ||
                            strcasecmp(name, "ProcId") == 0)
                                continue;
                        char *a = text_of(direct, name), *b = text_of(view, name);
                        if (!a || !b)
                                fail("out of memory", NULL);
                        if (strcmp(a, b) != 0) {
                                fprintf(stderr, "%s: direct %s, split %s\n", name, a, b);
                                fail("the split submission differs from the direct transform", name);
                        }
                        free(a);
                        free(b);
                }
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        char *input = malloc(size + 1);
        QueueXforms *xs = NULL;
        ConfigError err = { 0 };
        char why[512] = "", why2[512] = "";
        int r;

        if (!input)
                return 0;
        memcpy(input, data, size);
        input[size] = '\0';
        const char *adtext = strlen(input) < size ? input + strlen(input) + 1 : NULL;
        if (queue_xforms_new(&xs) < 0)
                fail("out of memory", NULL);
        r = queue_xforms_add(xs, "F", input, "<fuzz>", 1, knobs(), &err);
        if (r < 0) {
                if (r != -ENOMEM && (!strstr(err.msg, "JOB_TRANSFORM_F") || err.line != 1))
                        fail("a refused transform does not say where", err.msg);
                goto out;
        }

        ClassAd *job = job_of(adtext);
        ClassAd *direct = NULL;
        if (classad_copy(job, &direct) < 0 || classad_set_int(direct, "ProcId", 0) < 0)
                fail("out of memory", NULL);
        r = queue_xforms_apply(xs, direct, NULL, why, sizeof why);
        if (r < 0 && r != -ENOMEM && !strstr(why, "JOB_TRANSFORM_F"))
                fail("a failed transform does not say which", why);
        if (r >= 0) {
                char *owner = classad_unparse_attr(direct, "Owner"), *user = classad_unparse_attr(direct, "User");
                if (!owner || !user || strcmp(owner, "\"alice\"") != 0 || strcmp(user, "\"alice@fuzz\"") != 0)
                        fail("the transform changed Owner or User", owner);
                free(owner);
                free(user);
                char *text = classad_unparse(direct);
                ClassAd *again = NULL;
                CaError e = { 0 };
                if (!text)
                        fail("out of memory", NULL);
                if (classad_parse(text, strlen(text), XF_MODE, &again, &e) < 0)
                        fail("the transformed job does not parse again", text);
                classad_free(again);
                free(text);
        }

        /* Proc 1 without attributes of its own: the same job with ProcId 1. */
        ClassAd *direct1 = NULL;
        char why1[512] = "";
        if (classad_copy(job, &direct1) < 0 || classad_set_int(direct1, "ProcId", 1) < 0)
                fail("out of memory", NULL);
        int r1 = queue_xforms_apply(xs, direct1, NULL, why1, sizeof why1);

        /* The same jobs as a submission: the cluster, [ ProcId = 0 ] and a proc without attributes. */
        ClassAd *cluster = NULL, *procs[2] = { NULL, NULL };
        QueueXformSubmit *state = NULL;
        if (classad_copy(job, &cluster) < 0 || classad_delete(cluster, "Owner") < 0 ||
            classad_delete(cluster, "User") < 0 || classad_parse("[ ProcId = 0 ]", 14, XF_MODE, &procs[0], NULL) < 0)
                fail("out of memory", NULL);
        int r2 = queue_xform_part(xs, &state, &cluster, procs, 2, 0, "alice", "alice@fuzz", why2, sizeof why2);
        bool compared = r != -ENOMEM && r1 != -ENOMEM && r2 != -ENOMEM && !has_regex_copy(xs);
        if (compared && (r < 0 || r1 < 0) != (r2 < 0)) {
                fprintf(stderr, "direct: %d %s\ndirect proc 1: %d %s\nsplit: %d %s\n", r, why, r1, why1, r2, why2);
                fail("the split submission and the direct transform disagree on failing", NULL);
        }
        if (compared && r2 >= 0) {
                const ClassAd *directs[2] = { direct, direct1 };
                for (int k = 0; k < 2; k++) {
                        ClassAd *view = NULL;
                        if (procs[k]) {
                                if (classad_copy_own(procs[k], &view) < 0 || classad_chain(view, cluster) < 0)
                                        fail("the proc does not chain to the cluster", NULL);
                        } else if (classad_copy(cluster, &view) < 0)
                                fail("out of memory", NULL);
                        compare(directs[k], view);
                        classad_free(view);
                }
        }
        classad_free(procs[1]);
        classad_free(direct1);
        queue_xform_submit_free(state);
        classad_free(procs[0]);
        classad_free(cluster);
        classad_free(direct);
        classad_free(job);
out:
        queue_xforms_free(xs);
        free(input);
        return 0;
}
