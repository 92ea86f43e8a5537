/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test-install.c — `make install` and `make uninstall` into a scratch
 * DESTDIR, and what they install: the tree, the units (ExecStart where the
 * programs went; systemd-analyze verify), the journal catalog (compiled
 * with journalctl --root), the man pages (groff -ww renders them without a
 * warning; glean.conf(5) lists every knob of config/defaults.c with its
 * default; glean(1) every verb and its options), the default glean.conf
 * kept when present, the bash completion. A tool that is missing
 * (systemd-analyze, journalctl, groff, bash) skips its test with a message.
 *
 * The build flavour is the one $GLEAN (set by make check) comes from.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "test-util.h"

#define PREFIX "/usr/local"

static char root[] = "/var/tmp/glean-test-install.XXXXXX"; /* the DESTDIR */
static const char *build = "build";

static bool have(const char *tool) {
        char cmd[256];
        snprintf(cmd, sizeof cmd, "command -v %s >/dev/null 2>&1", tool);
        return system(cmd) == 0;
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
        (void) st, (void) flag, (void) ftw;
        return remove(path);
}

static void rm_tree(const char *path) {
        nftw(path, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* sh -c cmd; its status, output in *ret_out (may be NULL). */
static int sh(const char *cmd, char **ret_out) {
        char *argv[] = { "sh", "-c", (char *) cmd, NULL };
        GleanTestRun r;
        int status;
        if (glean_test_run(argv, &r) < 0)
                return -1;
        status = r.status;
        if (status != 0)
                fprintf(stderr, "\n  $ %s\n  exit %d\n%s%s", cmd, status, r.out, r.err);
        if (ret_out) {
                size_t n = r.out_len + r.err_len;
                *ret_out = malloc(n + 1);
                memcpy(*ret_out, r.out, r.out_len);
                memcpy(*ret_out + r.out_len, r.err, r.err_len);
                (*ret_out)[n] = 0;
        }
        glean_test_run_done(&r);
        return status;
}

/* make TARGET DESTDIR=dest, of this build flavour, outside make check's
 * jobserver. */
static int make(const char *target, const char *dest) {
        char cmd[1024];
        snprintf(cmd, sizeof cmd,
                 "env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s --no-print-directory %s DESTDIR=%s SAN=%d",
                 target, dest, strcmp(build, "build-san") == 0);
        return sh(cmd, NULL);
}

static char *in_root(const char *path) {
        char *p;
        if (asprintf(&p, "%s%s", root, path) < 0)
                abort();
        return p;
}

static mode_t mode_of(const char *path) {
        _cleanup_free_ char *p = in_root(path);
        struct stat st;
        return lstat(p, &st) == 0 ? st.st_mode : 0;
}

static char *read_in_root(const char *path) {
        _cleanup_free_ char *p = in_root(path);
        char *text = NULL;
        return glean_test_read_file(p, &text, NULL) == 0 ? text : NULL;
}

static const char *const files[] = {
        PREFIX "/bin/glean",
        PREFIX "/sbin/glean-agent",
        PREFIX "/sbin/glean-negotiator",
        PREFIX "/libexec/glean/glean-reaper",
        PREFIX "/lib/systemd/system/glean-agent.service",
        PREFIX "/lib/systemd/system/glean-negotiator.service",
        PREFIX "/lib/systemd/catalog/glean.catalog",
        PREFIX "/lib/tmpfiles.d/glean.conf",
        PREFIX "/lib/sysusers.d/glean.conf",
        PREFIX "/share/bash-completion/completions/glean",
        PREFIX "/share/man/man1/glean.1",
        PREFIX "/share/man/man5/glean.conf.5",
        PREFIX "/share/man/man8/glean-agent.8",
        PREFIX "/share/man/man8/glean-negotiator.8",
        PREFIX "/share/doc/glean/README.md",
        PREFIX "/share/doc/glean/operations.md",
        "/etc/glean/glean.conf",
};

static void test_tree(void) {
        for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
                mode_t m = mode_of(files[i]);
                bool program = strstr(files[i], "bin/") != NULL || strstr(files[i], "/libexec/") != NULL;
                GLEAN_TEST_CHECK(S_ISREG(m), "%s is installed", files[i]);
                GLEAN_TEST_CHECK((m & 07777) == (program ? 0755u : 0644u), "%s has mode %o, want %o", files[i],
                                 m & 07777, program ? 0755u : 0644u);
        }
        GLEAN_TEST_CHECK(S_ISDIR(mode_of("/etc/glean/config.d")), "/etc/glean/config.d is made");

        /* The installed default configuration is the one made from the table. */
        _cleanup_free_ char *conf = read_in_root("/etc/glean/glean.conf"), *want = NULL, *path = NULL;
        if (asprintf(&path, "%s/etc/glean.conf", build) < 0)
                abort();
        CU_ASSERT_FATAL(glean_test_read_file(path, &want, NULL) == 0);
        GLEAN_TEST_CHECK(conf && strcmp(conf, want) == 0, "/etc/glean/glean.conf is %s", path);
        GLEAN_TEST_CHECK(conf && strstr(conf, "\n#NEGOTIATOR_INTERVAL = 60\n"), "glean.conf has the knobs commented out");
}

/* Every ExecStart names a program install put there. */
static void test_units_exec(void) {
        static const char *const units[] = { "glean-agent", "glean-negotiator" };
        for (size_t i = 0; i < 2; i++) {
                char path[256], want[256];
                snprintf(path, sizeof path, PREFIX "/lib/systemd/system/%s.service", units[i]);
                snprintf(want, sizeof want, "\nExecStart=" PREFIX "/sbin/%s", units[i]);
                _cleanup_free_ char *text = read_in_root(path);
                CU_ASSERT_FATAL(text != NULL);
                GLEAN_TEST_CHECK(strstr(text, want) != NULL, "%s: %s", path, want + 1);
                GLEAN_TEST_CHECK(!strstr(text, "@SBINDIR@") && !strstr(text, "@DOCDIR@") && !strstr(text, "@CONFDIR@"),
                                 "%s: every @...@ replaced", path);
                GLEAN_TEST_CHECK(strstr(text, "\nType=notify\n") && strstr(text, "\nWatchdogSec="),
                                 "%s: Type=notify with a watchdog", path);
        }
}

/* systemd-analyze verify on the installed units, ExecStart pointed at the
 * programs under DESTDIR (it checks that they exist). */
static void test_units_verify(void) {
        char cmd[2048];
        _cleanup_free_ char *out = NULL;
        if (!have("systemd-analyze")) {
                printf("\n  SKIPPED: no systemd-analyze here (Debian: systemd)\n");
                return;
        }
        snprintf(cmd, sizeof cmd,
                 "set -e; d=%s/verify; mkdir -p $d; for u in glean-agent glean-negotiator; do "
                 "sed 's|^ExecStart=" PREFIX "|ExecStart=%s" PREFIX "|' %s" PREFIX
                 "/lib/systemd/system/$u.service >$d/$u.service; done; "
                 "systemd-analyze verify --man=no $d/glean-agent.service $d/glean-negotiator.service 2>&1; "
                 "systemd-analyze security --offline=yes $d/glean-negotiator.service 2>&1 | tail -1",
                 root, root, root);
        CU_ASSERT_FATAL(sh(cmd, &out) == 0);
        /* verify prints nothing for units without a fault. */
        GLEAN_TEST_CHECK(strncmp(out, "\xe2\x86\x92 Overall exposure level", 24) == 0,
                         "systemd-analyze verify says nothing: '%s'", out);
        printf("\n  %s", out);
        double score = 10;
        char *at = strstr(out, "service: ");
        GLEAN_TEST_CHECK(at && sscanf(at + 9, "%lf", &score) == 1 && score <= 2.0,
                         "glean-negotiator's exposure is at most 2.0: %s", out);
}

/* The message ids of the catalog, as "-- ID" lines. */
static size_t catalog_ids(const char *text, char ids[][33], size_t max) {
        size_t n = 0;
        for (const char *p = text; (p = strstr(p, "\n-- ")) && n < max; p += 4) {
                memcpy(ids[n], p + 4, 32);
                ids[n++][32] = 0;
        }
        return n;
}

static void test_catalog(void) {
        _cleanup_free_ char *text = read_in_root(PREFIX "/lib/systemd/catalog/glean.catalog"), *list = NULL;
        _cleanup_free_ char *ids_h = NULL;
        char ids[64][33], cmd[1024];
        CU_ASSERT_FATAL(text != NULL);
        size_t n = catalog_ids(text, ids, 64);
        GLEAN_TEST_CHECK(n >= 12, "the catalog has %zu entries", n);

        /* Every MESSAGE_ID the daemons log (all in one header) has an entry, and every entry an id. */
        CU_ASSERT_FATAL(glean_test_read_file("systemd/glean-messages.h", &ids_h, NULL) == 0);
        size_t defined = 0;
        for (const char *p = ids_h; (p = strstr(p, "#define MESSAGE_ID_")); p++, defined++) {
                const char *q = strchr(p, '"');
                GLEAN_TEST_CHECK(q && memmem(text, strlen(text), q + 1, 32), "the catalog explains %.40s", p + 8);
        }
        for (size_t i = 0; i < n; i++)
                GLEAN_TEST_CHECK(strstr(ids_h, ids[i]) != NULL, "catalog entry %s: no MESSAGE_ID in glean-messages.h",
                                 ids[i]);
        GLEAN_TEST_CHECK(defined == n, "%zu ids defined, %zu catalog entries", defined, n);
        /* and no daemon defines one of its own */
        static const char *const daemons[] = { "negotiator/daemon/daemon.h", "agent/daemon/slots.c",
                                               "agent/daemon/daemon.h" };
        for (size_t s = 0; s < sizeof daemons / sizeof *daemons; s++) {
                _cleanup_free_ char *src = NULL;
                if (glean_test_read_file(daemons[s], &src, NULL) == 0)
                        GLEAN_TEST_CHECK(!strstr(src, "#define MESSAGE_ID_"), "%s defines a MESSAGE_ID", daemons[s]);
        }

        if (!have("journalctl")) {
                printf("\n  SKIPPED: no journalctl here (Debian: systemd)\n");
                return;
        }
        snprintf(cmd, sizeof cmd, "journalctl --root=%s --update-catalog && journalctl --root=%s --list-catalog",
                 root, root);
        CU_ASSERT_FATAL(sh(cmd, &list) == 0);
        for (size_t i = 0; i < n; i++)
                GLEAN_TEST_CHECK(strstr(list, ids[i]) != NULL, "journalctl --list-catalog has %s", ids[i]);
        _cleanup_free_ char *db = in_root("/var/lib/systemd/catalog/database");
        GLEAN_TEST_CHECK(access(db, F_OK) == 0, "%s compiled", db);
}

static void test_man_render(void) {
        static const char *const pages[] = { "man1/glean.1", "man5/glean.conf.5", "man8/glean-agent.8",
                                             "man8/glean-negotiator.8" };
        if (!have("groff")) {
                printf("\n  SKIPPED: no groff here (Debian: groff-base)\n");
                return;
        }
        for (size_t i = 0; i < 4; i++) {
                char cmd[1024];
                _cleanup_free_ char *out = NULL;
                snprintf(cmd, sizeof cmd, "groff -man -Tutf8 -ww %s" PREFIX "/share/man/%s 2>&1 >/dev/null",
                         root, pages[i]);
                GLEAN_TEST_CHECK(sh(cmd, &out) == 0 && out[0] == 0, "%s renders without a warning: %s", pages[i],
                                 out ? out : "");
        }
}

/* Turns a man page's text back to plain: \- -, \e \, no \: or \&. */
static void unroff(char *s) {
        char *w = s;
        for (char *r = s; *r; r++) {
                if (r[0] == '\\' && (r[1] == '-' || r[1] == 'e')) {
                        *w++ = r[1] == '-' ? '-' : '\\';
                        r++;
                } else if (r[0] == '\\' && (r[1] == ':' || r[1] == '&'))
                        r++;
                else
                        *w++ = *r;
        }
        *w = 0;
}

/* Parses the table of config/defaults.c: after `defaults[] = {`, each
 * `{ "NAME", "part" "part" }`, the C string literals joined. */
typedef struct Knob {
        char name[64];
        char value[512];
} Knob;

static const char *c_string(const char *p, char *buf, size_t *len, size_t max) {
        for (p++; *p && *p != '"'; p++) {
                char c = *p;
                if (c == '\\') {
                        c = *++p;
                        c = c == 'n' ? '\n' : c == 't' ? '\t' : c;
                }
                if (*len + 1 < max)
                        buf[(*len)++] = c;
        }
        buf[*len] = 0;
        return *p ? p + 1 : p;
}

static size_t parse_defaults(const char *src, Knob *knobs, size_t max) {
        const char *p = strstr(src, "defaults[] = {"), *end;
        size_t n = 0;
        if (!p)
                return 0;
        end = strstr(p, "\n};");
        for (p = strchr(p, '\n'); p && p < end && n < max; p++) {
                while (*p == ' ' || *p == '\t' || *p == '\n')
                        p++;
                if (strncmp(p, "/*", 2) == 0) {
                        p = strstr(p, "*/") + 1;
                        continue;
                }
                if (*p != '{')
                        continue;
                p += strspn(p + 1, " ") + 1;
                if (*p != '"')
                        continue;
                size_t len = 0;
                p = c_string(p, knobs[n].name, &len, sizeof knobs[n].name);
                len = 0;
                knobs[n].value[0] = 0;
                while (*p && *p != '}') {
                        if (*p == '"')
                                p = c_string(p, knobs[n].value, &len, sizeof knobs[n].value);
                        else
                                p++;
                }
                n++;
        }
        return n;
}

static void test_conf_page_lists_every_knob(void) {
        _cleanup_free_ char *src = NULL, *page = read_in_root(PREFIX "/share/man/man5/glean.conf.5");
        static Knob knobs[512];
        CU_ASSERT_FATAL(glean_test_read_file("config/defaults.c", &src, NULL) == 0);
        CU_ASSERT_FATAL(page != NULL);
        size_t n = parse_defaults(src, knobs, 512);
        GLEAN_TEST_CHECK_FATAL(n > 100, "config/defaults.c has %zu knobs", n);
        unroff(page);
        /* the entries of the DEFAULTS section (the others describe knobs too) */
        const char *defaults = strstr(page, "\n.SH DEFAULTS\n");
        GLEAN_TEST_CHECK_FATAL(defaults != NULL, "glean.conf(5) has a DEFAULTS section");
        const char *next = strstr(defaults + 1, "\n.SH ");
        size_t entries = 0;
        for (const char *p = defaults; (p = strstr(p, "\n.TP\n.B ")) && (!next || p < next); p++)
                entries++;
        GLEAN_TEST_CHECK(entries == n, "glean.conf(5) has %zu entries for the %zu knobs", entries, n);
        for (size_t i = 0; i < n; i++) {
                _cleanup_free_ char *want = NULL;
                int r = knobs[i].value[0]
                                ? asprintf(&want, "\n.TP\n.B %s\nDefault: \\f(CW%s\\fR\n", knobs[i].name,
                                           knobs[i].value)
                                : asprintf(&want, "\n.TP\n.B %s\nDefault: empty.\n", knobs[i].name);
                CU_ASSERT_FATAL(r > 0);
                GLEAN_TEST_CHECK(strstr(page, want) != NULL, "glean.conf(5) lists %s = %s", knobs[i].name,
                                 knobs[i].value);
        }
}

/* word in text, not as the start of a longer option (-l in -limit). */
static bool has_word(const char *text, const char *word) {
        size_t n = strlen(word);
        for (const char *p = text; (p = strstr(p, word)); p++)
                if (!isalnum((unsigned char) p[n]) && p[n] != '-')
                        return true;
        return false;
}

/* The verbs glean --help lists. */
static size_t verbs(char names[][32], size_t max) {
        const char *glean = getenv("GLEAN") ?: "build/bin/glean";
        char *argv[] = { (char *) glean, "--help", NULL };
        GleanTestRun r;
        size_t n = 0;
        if (glean_test_run(argv, &r) < 0)
                return 0;
        for (const char *p = r.out; (p = strstr(p, "\n  ")) && n < max; p++)
                if (islower((unsigned char) p[3]) && sscanf(p + 3, "%31[a-z-]", names[n]) == 1)
                        n++;
        glean_test_run_done(&r);
        return n;
}

static void test_glean1_has_every_verb_and_option(void) {
        _cleanup_free_ char *page = read_in_root(PREFIX "/share/man/man1/glean.1");
        const char *glean = getenv("GLEAN") ?: "build/bin/glean";
        char names[64][32];
        size_t n = verbs(names, 64);
        CU_ASSERT_FATAL(page != NULL);
        GLEAN_TEST_CHECK_FATAL(n >= 19, "glean --help lists %zu verbs", n);
        unroff(page);
        for (size_t i = 0; i < n; i++) {
                char want[64], cmd[512];
                _cleanup_free_ char *opts = NULL;
                snprintf(want, sizeof want, ".SS \"glean %s", names[i]);
                GLEAN_TEST_CHECK(strstr(page, want) != NULL, "glean(1) has the verb %s", names[i]);
                /* Each option of the verb's usage appears in the page. */
                snprintf(cmd, sizeof cmd,
                         "%s %s --help 2>&1 | sed -n '1,/^$/p' | grep -oE '(^|[][ |(])--?[a-zA-Z][-a-zA-Z0-9]*' | "
                         "sed 's/^[][ |(]//' | sort -u",
                         glean, names[i]);
                CU_ASSERT_FATAL(sh(cmd, &opts) == 0);
                for (char *save = NULL, *o = strtok_r(opts, "\n", &save); o; o = strtok_r(NULL, "\n", &save))
                        GLEAN_TEST_CHECK(has_word(page, o), "glean(1) names %s %s", names[i], o);
        }
}

static void test_completion(void) {
        const char *glean = getenv("GLEAN") ?: "build/bin/glean";
        char names[64][32], cmd[2048];
        _cleanup_free_ char *out = NULL, *opts = NULL;
        size_t n = verbs(names, 64);
        if (!have("bash")) {
                printf("\n  SKIPPED: no bash here\n");
                return;
        }
        snprintf(cmd, sizeof cmd,
                 "bash -c 'source %s" PREFIX "/share/bash-completion/completions/glean; "
                 "COMP_WORDS=(%s \"\"); COMP_CWORD=1; _glean; echo \"${COMPREPLY[*]}\"'",
                 root, glean);
        CU_ASSERT_FATAL(sh(cmd, &out) == 0);
        for (size_t i = 0; i < n; i++) {
                char word[40];
                snprintf(word, sizeof word, " %s ", names[i]);
                char padded[2048];
                snprintf(padded, sizeof padded, " %s ", out);
                padded[strcspn(padded, "\n")] = ' ';
                GLEAN_TEST_CHECK(strstr(padded, word) != NULL, "glean <TAB> offers %s: %s", names[i], out);
        }
        snprintf(cmd, sizeof cmd,
                 "bash -c 'source %s" PREFIX "/share/bash-completion/completions/glean; "
                 "COMP_WORDS=(%s submit --); COMP_CWORD=2; _glean; echo \"${COMPREPLY[*]}\"; "
                 "COMP_WORDS=(%s q -a); _glean; echo \"${COMPREPLY[*]}\"; "
                 "COMP_WORDS=(%s agent \"\"); COMP_CWORD=2; _glean; echo \"${COMPREPLY[*]}\"'",
                 root, glean, glean, glean);
        CU_ASSERT_FATAL(sh(cmd, &opts) == 0);
        GLEAN_TEST_CHECK(strstr(opts, "--bracketed --cluster --dry-run --help --socket\n"), "submit --: %s", opts);
        GLEAN_TEST_CHECK(strstr(opts, "-af -allusers -analyze\n"), "q -a: %s", opts);
        GLEAN_TEST_CHECK(strstr(opts, "status run vacate drain shutdown"), "agent: %s", opts);
}

/* An edited glean.conf survives install and uninstall; the rest goes. */
static void test_conf_kept_and_uninstall(void) {
        _cleanup_free_ char *conf = in_root("/etc/glean/glean.conf");
        FILE *f = fopen(conf, "w");
        CU_ASSERT_FATAL(f != NULL);
        fputs("CONDOR_HOST = cm.example\n", f);
        fclose(f);
        CU_ASSERT_FATAL(make("install", root) == 0);
        _cleanup_free_ char *text = read_in_root("/etc/glean/glean.conf");
        GLEAN_TEST_CHECK(text && strcmp(text, "CONDOR_HOST = cm.example\n") == 0, "install keeps an edited glean.conf");

        CU_ASSERT_FATAL(make("uninstall", root) == 0);
        GLEAN_TEST_CHECK(access(conf, F_OK) == 0, "uninstall keeps an edited glean.conf");
        for (size_t i = 0; i < sizeof files / sizeof *files - 1; i++)
                GLEAN_TEST_CHECK(mode_of(files[i]) == 0, "uninstall removes %s", files[i]);
        unlink(conf);

        /* A fresh install and its uninstall leave no file, link or folder of
         * ours (the catalog database of test_catalog and the verify folder
         * are the tests'). */
        char cmd[1024];
        _cleanup_free_ char *left = NULL;
        snprintf(cmd, sizeof cmd, "rm -rf %s/var %s/verify", root, root);
        sh(cmd, NULL);
        CU_ASSERT_FATAL(make("install", root) == 0);
        CU_ASSERT_FATAL(make("uninstall", root) == 0);
        snprintf(cmd, sizeof cmd, "cd %s && find . \\( ! -type d -o -name '*glean*' \\) -print", root);
        CU_ASSERT_FATAL(sh(cmd, &left) == 0);
        GLEAN_TEST_CHECK(left[0] == 0, "make uninstall leaves nothing of ours: %s", left);
}

static int suite_init(void) {
        const char *glean = getenv("GLEAN");
        if (glean && strncmp(glean, "build-san/", 10) == 0)
                build = "build-san";
        if (!mkdtemp(root))
                return -1;
        return make("install", root) == 0 ? 0 : -1;
}

static int suite_clean(void) {
        rm_tree(root);
        return 0;
}

static CU_TestInfo tests[] = {
        { "tree", test_tree },
        { "units_exec", test_units_exec },
        { "units_verify", test_units_verify },
        { "catalog", test_catalog },
        { "man_render", test_man_render },
        { "conf_page_lists_every_knob", test_conf_page_lists_every_knob },
        { "glean1_has_every_verb_and_option", test_glean1_has_every_verb_and_option },
        { "completion", test_completion },
        { "conf_kept_and_uninstall", test_conf_kept_and_uninstall },
        CU_TEST_INFO_NULL,
};

static CU_SuiteInfo suites[] = {
        { "install", suite_init, suite_clean, NULL, NULL, tests },
        CU_SUITE_INFO_NULL,
};

int main(int argc, char **argv) {
        if (access("Makefile", R_OK) != 0 || !getenv("PATH"))
                return glean_test_skip("run from the repository root (make check)");
        return glean_test_main(argc, argv, suites);
}
