/* SPDX-License-Identifier: Apache-2.0 */
/*
 * submit-test.h — what the submit description suites share: parsing a
 * description with fixed options, and checking attributes of the ads with
 * one-line expectations.
 *
 * An expectation is "N:Attr = text" (job N's Attr unparses to text),
 * "N:!Attr" (job N has no Attr) or "N:Attr ~ text" (its unparsed text
 * contains text). In text, @ARCH@ stands for the Arch condor_submit
 * requires on this machine, @DIR@ for the directory of the test data,
 * @FSDOMAIN@ for this machine's FileSystemDomain (the built-in
 * configuration's) and @XFER@ for the clause condor_submit ends the
 * Requirements of a job with should_transfer_files IF_NEEDED (the default).
 */
#pragma once

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config/config.h"
#include "config/submit-internal.h"
#include "test-util.h"

#define SUBMIT_TEST_CLUSTER 42
#define SUBMIT_TEST_QDATE 1700000000
#define SUBMIT_TEST_OWNER "alice"
#define SUBMIT_TEST_IWD "/home/alice/run"
#define SUBMIT_TEST_DATA "tests/config/submit"

/* The Arch the jobs require: the library's own notion of this host's. */
static inline const char *submit_test_arch(void) {
        return submit_host_arch();
}

/* The absolute directory of the test data, once. */
static inline const char *submit_test_data_dir(void) {
        static char dir[4096];

        if (!dir[0]) {
                char cwd[3072];

                if (!getcwd(cwd, sizeof(cwd)))
                        abort();
                snprintf(dir, sizeof(dir), "%s/%s", cwd, SUBMIT_TEST_DATA);
        }
        return dir;
}

#define SUBMIT_TEST_XFER_CLAUSE "((TARGET.FileSystemDomain == MY.FileSystemDomain) || (TARGET.HasFileTransfer))"

/* The FileSystemDomain of the built-in configuration, once. */
static inline const char *submit_test_fsdomain(void) {
        static char domain[512];

        if (!domain[0]) {
                Config *cfg = NULL;
                char *d = NULL;

                if (config_new(&cfg) < 0 || config_filesystem_domain(cfg, &d, NULL) < 0)
                        abort();
                snprintf(domain, sizeof(domain), "%s", d);
                free(d);
                config_free(cfg);
        }
        return domain;
}

/* text with @ARCH@, @DIR@, @FSDOMAIN@ and @XFER@ replaced; malloc'd. */
static inline char *submit_test_subst(const char *text) {
        size_t cap = strlen(text) + 4096, n = 0;
        char *out = malloc(cap);

        if (!out)
                abort();
        while (*text && n + 1 < cap) {
                const char *v = NULL;
                size_t skip = 0;

                if (strncmp(text, "@ARCH@", 6) == 0)
                        v = submit_test_arch(), skip = 6;
                else if (strncmp(text, "@DIR@", 5) == 0)
                        v = submit_test_data_dir(), skip = 5;
                else if (strncmp(text, "@FSDOMAIN@", 10) == 0)
                        v = submit_test_fsdomain(), skip = 10;
                else if (strncmp(text, "@XFER@", 6) == 0)
                        v = SUBMIT_TEST_XFER_CLAUSE, skip = 6;
                if (v) {
                        n += (size_t) snprintf(out + n, cap - n, "%s", v);
                        text += skip;
                } else
                        out[n++] = *text++;
        }
        out[n < cap ? n : cap - 1] = '\0';
        return out;
}

/* Parse with the fixed options (iwd: SUBMIT_TEST_IWD, or the data
 * directory when data_dir). */
static inline int submit_test_parse(const char *text, const Config *cfg, bool data_dir, ClassAd ***ret_ads,
                                    size_t *ret_n, ConfigError *err) {
        ConfigSubmitOptions opts = {
                .cluster_id = SUBMIT_TEST_CLUSTER,
                .qdate = SUBMIT_TEST_QDATE,
                .owner = SUBMIT_TEST_OWNER,
                .iwd = data_dir ? submit_test_data_dir() : SUBMIT_TEST_IWD,
        };

        return config_submit_parse_string(text, "test.sub", cfg, &opts, ret_ads, ret_n, err);
}

/* Check one expectation (see above); what names the case in failures. */
static inline void submit_test_expect(ClassAd **ads, size_t n, const char *expect, const char *what) {
        char *end, *got = NULL, *want;
        const char *attr, *op;
        long job = strtol(expect, &end, 10);
        char name[128];
        size_t len;

        GLEAN_TEST_CHECK_FATAL(end != expect && *end == ':', "%s: bad expectation '%s'", what, expect);
        attr = end + 1;
        if (*attr == '!') {
                GLEAN_TEST_CHECK(job >= 0 && (size_t) job < n && !classad_has(ads[job], attr + 1),
                                 "%s: job %ld has %s, want none", what, job, attr + 1);
                return;
        }
        op = strpbrk(attr, "=~");
        GLEAN_TEST_CHECK_FATAL(op && op > attr + 1 && op[-1] == ' ' && op[1] == ' ', "%s: bad expectation '%s'",
                               what, expect);
        len = (size_t) (op - 1 - attr);
        snprintf(name, sizeof(name), "%.*s", (int) len, attr);
        if (job < 0 || (size_t) job >= n) {
                GLEAN_TEST_CHECK(false, "%s: no job %ld (%zu jobs)", what, job, n);
                return;
        }
        got = classad_unparse_attr(ads[job], name);
        want = submit_test_subst(op + 2);
        if (*op == '=')
                GLEAN_TEST_CHECK(got && strcmp(got, want) == 0, "%s: job %ld: %s = %s, want %s", what, job, name,
                                 got ? got : "(absent)", want);
        else
                GLEAN_TEST_CHECK(got && strstr(got, want), "%s: job %ld: %s = %s, want it to contain %s", what, job,
                                 name, got ? got : "(absent)", want);
        free(got);
        free(want);
}
