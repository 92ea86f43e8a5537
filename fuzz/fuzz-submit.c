/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz-submit — libFuzzer target for submit description files
 * (config_submit_parse_string of config/config.h).
 *
 * Input: the text of a submit description (up to the first NUL byte).
 * It is parsed with fixed options (cluster 1, a fixed QDate, owner
 * "fuzz", initial directory /) and a configuration whose
 * MAX_JOBS_PER_SUBMISSION is 64, so that `queue 1000000` is an error
 * rather than a slow input. Warnings are thrown away.
 *
 * What must hold, otherwise the target prints why and calls abort():
 *   - on error: the error has a reason, and the outputs are untouched;
 *   - on success: ProcId counts 0, 1, 2, ... and ClusterId is 1 in every
 *     ad; every ad has Cmd, JobUniverse and a Requirements that evaluates
 *     without a crash; each ad unparsed (old format) parses again and
 *     unparses to the same text, and its bracketed form parses too.
 *
 * The parser reads files when the description says so (the executable's
 * size, `queue from FILE`): only regular files, at most 16 MiB.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "submit-internal.h"

#define FUZZ_MAX_JOBS "64"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static _Noreturn void fail(const char *what, const char *text) {
        fprintf(stderr, "FUZZ-SUBMIT FAILURE: %s\n", what);
        if (text)
                fprintf(stderr, "<<%s>>\n", text);
        abort();
}

static const Config *fuzz_config(void) {
        static Config *cfg;

        if (cfg)
                return cfg;
        if (config_new(&cfg) < 0 || config_set(cfg, "MAX_JOBS_PER_SUBMISSION", FUZZ_MAX_JOBS) < 0)
                fail("cannot make the configuration", NULL);
        submit_warning_stream = fopen("/dev/null", "we");
        if (!submit_warning_stream)
                fail("cannot open /dev/null", NULL);
        return cfg;
}

static void check_int(const ClassAd *ad, const char *name, int64_t want) {
        int64_t v;

        if (classad_eval_int(ad, name, CA_MODE_OLD, &v) < 0 || v != want)
                fail(name, NULL);
}

static void check_ad(const ClassAd *ad, size_t proc) {
        ClassAd *again = NULL, *bracketed_again = NULL;
        char *old = NULL, *old2 = NULL, *bracketed = NULL, *bracketed2 = NULL;
        CaValue v = ca_undefined();
        CaError err = {};

        check_int(ad, "ProcId", (int64_t) proc);
        check_int(ad, "ClusterId", 1);
        check_int(ad, "JobUniverse", 5);
        if (!classad_has(ad, "Cmd") || !classad_has(ad, "Requirements"))
                fail("an ad without Cmd or Requirements", NULL);
        if (classad_eval_attr(ad, "Requirements", CA_MODE_OLD, &v) >= 0)
                ca_value_clear(&v);
        (void) classad_match(ad, ad, CA_MODE_OLD);

        old = classad_unparse_old(ad);
        bracketed = classad_unparse(ad);
        if (!old || !bracketed)
                fail("unparse returned NULL", NULL);
        if (classad_parse(bracketed, strlen(bracketed), CA_MODE_OLD, &bracketed_again, &err) < 0)
                fail("the bracketed ad does not parse again", bracketed);
        bracketed2 = classad_unparse(bracketed_again);
        if (!bracketed2 || strcmp(bracketed, bracketed2) != 0)
                fail("the bracketed ad does not round-trip", bracketed);
        if (!strchr(bracketed, '\\')) {
                if (classad_parse_old(old, strlen(old), CA_MODE_OLD, &again, &err) < 0)
                        fail("the old-format ad does not parse again", old);
                old2 = classad_unparse_old(again);
                if (!old2 || strcmp(old, old2) != 0)
                        fail("the old-format ad does not round-trip", old);
        }

        classad_free(bracketed_again);
        classad_free(again);
        free(old2);
        free(bracketed2);
        free(bracketed);
        free(old);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        const ConfigSubmitOptions opts = { .cluster_id = 1, .qdate = 1700000000, .owner = "fuzz", .iwd = "/" };
        ClassAd *sentinel[1] = { NULL };
        ClassAd **ads = sentinel;
        ConfigError err = {};
        size_t n = 7;
        char *text;
        int r;

        text = malloc(size + 1);
        if (!text)
                return 0;
        memcpy(text, data, size);
        text[size] = '\0';

        r = config_submit_parse_string(text, "fuzz.sub", fuzz_config(), &opts, &ads, &n, &err);
        if (r < 0) {
                if (ads != sentinel || n != 7)
                        fail("outputs set on error", text);
                if (!err.msg[0])
                        fail("an error without a reason", text);
                free(config_error_format(&err));
        } else {
                for (size_t i = 0; i < n; i++)
                        check_ad(ads[i], i);
                config_submit_free(ads, n);
        }
        free(text);
        return 0;
}
