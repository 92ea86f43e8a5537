/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test-token.c — `glean token` as an administrator runs it: the signing
 * key made once (root-only) and its public key; a machine's credential
 * made (0600), recorded, listed, revoked by a prefix of its id; installed
 * on a machine only when it verifies against the pinned key: refused when
 * altered, of another pool, expired, readable by others, or when its key
 * is not the token's; a registry line that is not one named with its
 * file and line; bad host names and lifetimes are usage errors.
 */
#define _GNU_SOURCE

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <CUnit/CUnit.h>

#include "test-util.h"

static char dir[64], conf[128], conf2[128];

static const char *glean_path(void) {
        const char *p = getenv("GLEAN");
        return p && *p ? p : "build/bin/glean";
}

/* glean token ARGS... (NULL-terminated) with config cfg; r filled. */
static int tok(GleanTestRun *r, const char *cfg, ...) {
        char *argv[16] = { (char *) glean_path(), "token" };
        va_list ap;
        va_start(ap, cfg);
        int n = 2;
        for (const char *a; n < 15 && (a = va_arg(ap, const char *));)
                argv[n++] = (char *) a;
        va_end(ap);
        argv[n] = NULL;
        setenv("GLEAN_CONFIG", cfg, 1);
        int k = glean_test_run(argv, r);
        unsetenv("GLEAN_CONFIG");
        return k < 0 ? k : r->status;
}

static bool has(const char *s, const char *what) {
        return s && strstr(s, what);
}

static void write_conf(const char *path, const char *etc) {
        FILE *f = fopen(path, "w");
        CU_ASSERT_PTR_NOT_NULL_FATAL(f);
        fprintf(f, "ETC = %s/%s\nSPOOL = %s/spool\n", dir, etc, dir);
        fclose(f);
}

static int suite_init(void) {
        snprintf(dir, sizeof dir, "/tmp/glean-token-test-XXXXXX");
        if (!mkdtemp(dir))
                return 1;
        snprintf(conf, sizeof conf, "%s/glean.conf", dir);
        snprintf(conf2, sizeof conf2, "%s/other.conf", dir);
        char sub[128];
        for (size_t i = 0; i < 3; i++) {
                snprintf(sub, sizeof sub, "%s/%s", dir, (const char *[]) { "etc", "other", "spool" }[i]);
                if (mkdir(sub, 0755) < 0)
                        return 1;
        }
        return 0;
}

static int suite_cleanup(void) {
        char cmd[128];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
        return system(cmd) == 0 ? 0 : 1;
}

static int mode_of(const char *path) {
        struct stat st;
        return stat(path, &st) == 0 ? (int) (st.st_mode & 0777) : -1;
}

static void test_token_cli(void) {
        GleanTestRun r;
        char path[256], cred[256];
        write_conf(conf, "etc");
        write_conf(conf2, "other");

        /* the signing key, once */
        CU_ASSERT_EQUAL(tok(&r, conf, "--init", NULL), 0);
        GLEAN_TEST_CHECK(has(r.out, "fingerprint "), "init: %s", r.out);
        char fp[64] = "";
        const char *f = r.out ? strstr(r.out, "fingerprint ") : NULL;
        if (f)
                snprintf(fp, sizeof fp, "%.39s", f + 12);
        glean_test_run_done(&r);
        snprintf(path, sizeof path, "%s/etc/signing.key", dir);
        CU_ASSERT_EQUAL(mode_of(path), 0600);
        snprintf(path, sizeof path, "%s/etc/manager.pub", dir);
        CU_ASSERT_EQUAL(mode_of(path), 0644);
        CU_ASSERT_EQUAL(tok(&r, conf, "--init", NULL), 1);
        GLEAN_TEST_CHECK(has(r.err, "already exists; not replacing it"), "second init: %s", r.err);
        glean_test_run_done(&r);
        CU_ASSERT_EQUAL(tok(&r, conf, "--fingerprint", NULL), 0);
        GLEAN_TEST_CHECK(fp[0] && has(r.out, fp), "fingerprint %s, want %s", r.out, fp);
        glean_test_run_done(&r);

        /* a credential, recorded and listed */
        snprintf(cred, sizeof cred, "%s/node1.cred", dir);
        CU_ASSERT_EQUAL(tok(&r, conf, "create", "--machine", "Node1.Example.ORG", "--output", cred, NULL), 0);
        GLEAN_TEST_CHECK(has(r.err, "for agent@node1.example.org"), "create: %s", r.err);
        glean_test_run_done(&r);
        CU_ASSERT_EQUAL(mode_of(cred), 0600);
        CU_ASSERT_EQUAL(tok(&r, conf, "create", "--machine", "node1.example.org", "--output", cred, NULL), 1);
        GLEAN_TEST_CHECK(has(r.err, "already exists"), "a credential not replaced: %s", r.err);
        glean_test_run_done(&r);
        CU_ASSERT_EQUAL(tok(&r, conf, "list", NULL), 0);
        GLEAN_TEST_CHECK(has(r.out, "agent@node1.example.org") && has(r.out, "advertise,run,relay ") &&
                                 has(r.out, "valid"),
                         "list: %s", r.out);
        char id[40] = "";
        const char *line = r.out ? strstr(r.out, "\n") : NULL;
        if (line)
                snprintf(id, sizeof id, "%.32s", line + 1);
        glean_test_run_done(&r);

        /* installed on the machine: verifies against the pinned key */
        char pub[256];
        snprintf(pub, sizeof pub, "%s/etc/manager.pub", dir);
        CU_ASSERT_EQUAL(tok(&r, conf2, "install", cred, "--manager-key", pub, NULL), 0);
        GLEAN_TEST_CHECK(has(r.out, "agent@node1.example.org: token ") && has(r.out, fp), "install: %s%s", r.out,
                         r.err);
        glean_test_run_done(&r);
        snprintf(path, sizeof path, "%s/other/tokens.d/machine", dir);
        CU_ASSERT_EQUAL(mode_of(path), 0600);
        snprintf(path, sizeof path, "%s/other/manager.pub", dir);
        CU_ASSERT_EQUAL(mode_of(path), 0644);
        /* pinned now: again without --manager-key */
        CU_ASSERT_EQUAL(tok(&r, conf2, "install", cred, NULL), 0);
        glean_test_run_done(&r);

        /* refused: readable by others; altered; its key not the token's */
        char text[2048];
        FILE *in = fopen(cred, "r");
        size_t n = in ? fread(text, 1, sizeof text - 1, in) : 0;
        if (in)
                fclose(in);
        text[n] = 0;
        char bad[256];
        snprintf(bad, sizeof bad, "%s/bad.cred", dir);
        chmod(cred, 0644);
        CU_ASSERT_EQUAL(tok(&r, conf2, "install", cred, NULL), 1);
        GLEAN_TEST_CHECK(has(r.err, "group or others have access"), "0644: %s", r.err);
        glean_test_run_done(&r);
        chmod(cred, 0600);
        char *t = strstr(text, "glean-token-1.");
        CU_ASSERT_PTR_NOT_NULL_FATAL(t);
        char altered[2048];
        snprintf(altered, sizeof altered, "%s", text);
        char *c = altered + (t - text) + 60;
        *c = *c == 'A' ? 'B' : 'A';
        FILE *o = fopen(bad, "w");
        fputs(altered, o);
        fclose(o);
        chmod(bad, 0600);
        CU_ASSERT_EQUAL(tok(&r, conf2, "install", bad, NULL), 1);
        GLEAN_TEST_CHECK(has(r.err, "does not verify") || has(r.err, "another pool") || has(r.err, "not the one"),
                         "altered: %s", r.err);
        glean_test_run_done(&r);
        /* the machine key of another credential */
        char cred2[256];
        snprintf(cred2, sizeof cred2, "%s/node2.cred", dir);
        CU_ASSERT_EQUAL(tok(&r, conf, "create", "--machine", "node2", "--output", cred2, NULL), 0);
        glean_test_run_done(&r);
        char text2[2048];
        in = fopen(cred2, "r");
        n = in ? fread(text2, 1, sizeof text2 - 1, in) : 0;
        if (in)
                fclose(in);
        text2[n] = 0;
        char *seed1 = strstr(text, "ed25519-seed:"), *tok2 = strstr(text2, "glean-token-1.");
        CU_ASSERT_FATAL(seed1 && tok2);
        o = fopen(bad, "w");
        fprintf(o, "%.*s%s", (int) strcspn(tok2, "\n") + 1, tok2, seed1);
        fclose(o);
        CU_ASSERT_EQUAL(tok(&r, conf2, "install", bad, NULL), 1);
        GLEAN_TEST_CHECK(has(r.err, "the key is not the one the token names"), "swapped key: %s", r.err);
        glean_test_run_done(&r);

        /* another pool's manager key pinned: refused as another pool's */
        char conf3[128], pub3[256];
        snprintf(conf3, sizeof conf3, "%s/third.conf", dir);
        write_conf(conf3, "third");
        CU_ASSERT_EQUAL(tok(&r, conf3, "--init", NULL), 0);
        glean_test_run_done(&r);
        snprintf(pub3, sizeof pub3, "%s/third/manager.pub", dir);
        CU_ASSERT_EQUAL(tok(&r, conf2, "install", cred, "--manager-key", pub3, NULL), 1);
        GLEAN_TEST_CHECK(has(r.err, "signed by another pool's key"), "another pool: %s", r.err);
        glean_test_run_done(&r);

        /* expired */
        char cred3[256];
        snprintf(cred3, sizeof cred3, "%s/short.cred", dir);
        CU_ASSERT_EQUAL(tok(&r, conf, "create", "--machine", "short", "--lifetime", "1s", "--output", cred3, NULL), 0);
        glean_test_run_done(&r);
        sleep(2);
        CU_ASSERT_EQUAL(tok(&r, conf2, "install", cred3, NULL), 1);
        GLEAN_TEST_CHECK(has(r.err, "expired"), "expired: %s", r.err);
        glean_test_run_done(&r);

        /* revoked by a prefix of its id; listed so; twice is said */
        char prefix[16];
        snprintf(prefix, sizeof prefix, "%.10s", id);
        CU_ASSERT_EQUAL(tok(&r, conf, "revoke", prefix, NULL), 0);
        GLEAN_TEST_CHECK(has(r.out, "of agent@node1.example.org revoked"), "revoke: %s%s", r.out, r.err);
        glean_test_run_done(&r);
        CU_ASSERT_EQUAL(tok(&r, conf, "revoke", prefix, NULL), 0);
        GLEAN_TEST_CHECK(has(r.out, "revoked already"), "revoke again: %s", r.out);
        glean_test_run_done(&r);
        CU_ASSERT_EQUAL(tok(&r, conf, "revoke", "0123456789", NULL), 1);
        GLEAN_TEST_CHECK(has(r.err, "no token 0123456789"), "unknown: %s", r.err);
        glean_test_run_done(&r);
        CU_ASSERT_EQUAL(tok(&r, conf, "list", NULL), 0);
        GLEAN_TEST_CHECK(has(r.out, "revoked") && has(r.out, "expired") && has(r.out, "agent@node2"), "list: %s",
                         r.out);
        glean_test_run_done(&r);

        /* a registry line that is not one: file and line */
        char reg[256];
        snprintf(reg, sizeof reg, "%s/spool/tokens", dir);
        FILE *a = fopen(reg, "a");
        fputs("not a record\n", a);
        fclose(a);
        CU_ASSERT_EQUAL(tok(&r, conf, "list", NULL), 1);
        GLEAN_TEST_CHECK(has(r.err, "/spool/tokens:6: want 6 fields"), "bad registry: %s", r.err);
        glean_test_run_done(&r);

        /* usage errors */
        CU_ASSERT_EQUAL(tok(&r, conf, "create", "--machine", "bad host", NULL), 2);
        glean_test_run_done(&r);
        CU_ASSERT_EQUAL(tok(&r, conf, "create", "--machine", "h", "--lifetime", "20y", NULL), 2);
        glean_test_run_done(&r);
        CU_ASSERT_EQUAL(tok(&r, conf, "create", NULL), 2);
        glean_test_run_done(&r);
        CU_ASSERT_EQUAL(tok(&r, conf, "revoke", "xyz", NULL), 2);
        glean_test_run_done(&r);
        CU_ASSERT_EQUAL(tok(&r, conf, "--force", "list", NULL), 2);
        glean_test_run_done(&r);
}

static CU_TestInfo tests[] = {
        { "glean token: init, create, list, revoke, install", test_token_cli },
        CU_TEST_INFO_NULL,
};

static CU_SuiteInfo suites[] = {
        { "cli token", suite_init, suite_cleanup, NULL, NULL, tests },
        CU_SUITE_INFO_NULL,
};

int main(int argc, char **argv) {
        return glean_test_main(argc, argv, suites);
}
