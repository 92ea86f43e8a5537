/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test-psi.c — Linux pressure stall information (agent/psi.h): parsing
 * real pressure files (with and without the 'full' line, keys a newer
 * kernel may add), every kind of malformed text refused with the line and
 * the reason, reading this machine's /proc/pressure and the cgroup v2 root
 * (read-only; each test says it was skipped when the file is absent),
 * reading a scratch directory of pressure files, and the ClassAd
 * attributes (names, values, deletion when unavailable).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/psi.h"
#include "test-util.h"

/* Parses a malloc'd copy of exactly len bytes, no NUL after them, so that
 * the sanitizer build sees any read past the end. */
static int parse_exact(const char *text, size_t len, AgentPsi *ret, char *why, size_t whylen) {
        char *copy = malloc(len ? len : 1);
        int r;

        GLEAN_TEST_CHECK_FATAL(copy, "out of memory");
        memcpy(copy, text, len);
        r = agent_psi_parse(copy, len, ret, why, whylen);
        free(copy);
        return r;
}

/* ---- well-formed ---- */

#define LINE(a, b, c, t) { .avg10 = (a), .avg60 = (b), .avg300 = (c), .total = (t) }

typedef struct GoodCase {
        const char *what;
        const char *text;
        AgentPsi want;
} GoodCase;

static const GoodCase good_cases[] = {
        { "cpu.pressure of Linux >= 5.13, with a full line",
          "some avg10=0.49 avg60=0.44 avg300=0.13 total=2966730508\n"
          "full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n",
          { LINE(0.49, 0.44, 0.13, 2966730508u), LINE(0, 0, 0, 0), true } },
        { "cpu.pressure before Linux 5.13: 'some' only",
          "some avg10=0.00 avg60=0.00 avg300=0.04 total=2966267775\n",
          { LINE(0, 0, 0.04, 2966267775u), LINE(0, 0, 0, 0), false } },
        { "io.pressure under load",
          "some avg10=2.34 avg60=1.33 avg300=0.33 total=30722892\n"
          "full avg10=2.29 avg60=1.28 avg300=0.32 total=17151127\n",
          { LINE(2.34, 1.33, 0.33, 30722892), LINE(2.29, 1.28, 0.32, 17151127), true } },
        { "memory.pressure fully stalled, the largest total",
          "some avg10=100.00 avg60=99.99 avg300=12.50 total=18446744073709551615\n"
          "full avg10=100.00 avg60=0.01 avg300=7.00 total=18446744073709551614\n",
          { LINE(100, 99.99, 12.5, UINT64_MAX), LINE(100, 0.01, 7, UINT64_MAX - 1), true } },
        { "keys a newer kernel may add are ignored",
          "some avg10=0.10 avg60=0.20 avg300=0.30 avg900=0.40 total=5 peak=x=y\n"
          "full max_stall=-3 avg10=0.01 avg60=0.02 avg300=0.03 total=6 Foo=garbage!\n",
          { LINE(0.10, 0.20, 0.30, 5), LINE(0.01, 0.02, 0.03, 6), true } },
        { "keys in another order, runs of spaces, a trailing space",
          "some  total=7 avg300=0.03   avg60=0.02 avg10=0.01 \n",
          { LINE(0.01, 0.02, 0.03, 7), LINE(0, 0, 0, 0), false } },
        { "'full' before 'some'",
          "full avg10=1.00 avg60=2.00 avg300=3.00 total=4\n"
          "some avg10=5.00 avg60=6.00 avg300=7.00 total=8\n",
          { LINE(5, 6, 7, 8), LINE(1, 2, 3, 4), true } },
        { "whole numbers, leading zeros, more decimals",
          "some avg10=5 avg60=007 avg300=0.125 total=0000\n",
          { LINE(5, 7, 0.125, 0), LINE(0, 0, 0, 0), false } },
};

static bool line_eq(const AgentPsiLine *a, const AgentPsiLine *b) {
        return a->avg10 == b->avg10 && a->avg60 == b->avg60 && a->avg300 == b->avg300 && a->total == b->total;
}

static void test_parse_good(void) {
        for (size_t i = 0; i < sizeof(good_cases) / sizeof(good_cases[0]); i++) {
                const GoodCase *c = &good_cases[i];
                AgentPsi got;
                char why[256] = "";
                int r;

                memset(&got, 0xa5, sizeof(got));
                r = parse_exact(c->text, strlen(c->text), &got, why, sizeof(why));
                GLEAN_TEST_CHECK(r == 0, "%s: %d (%s)", c->what, r, why);
                if (r != 0)
                        continue;
                GLEAN_TEST_CHECK(line_eq(&got.some, &c->want.some),
                                 "%s: some %.2f %.2f %.2f %llu, want %.2f %.2f %.2f %llu", c->what, got.some.avg10,
                                 got.some.avg60, got.some.avg300, (unsigned long long) got.some.total,
                                 c->want.some.avg10, c->want.some.avg60, c->want.some.avg300,
                                 (unsigned long long) c->want.some.total);
                GLEAN_TEST_CHECK(got.has_full == c->want.has_full, "%s: has_full %d", c->what, got.has_full);
                GLEAN_TEST_CHECK(line_eq(&got.full, &c->want.full),
                                 "%s: full %.2f %.2f %.2f %llu, want %.2f %.2f %.2f %llu", c->what, got.full.avg10,
                                 got.full.avg60, got.full.avg300, (unsigned long long) got.full.total,
                                 c->want.full.avg10, c->want.full.avg60, c->want.full.avg300,
                                 (unsigned long long) c->want.full.total);
        }
}

/* ---- malformed ---- */

#define SOME "some avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"
#define FULL "full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"
#define WITH_NUL SOME "full avg10=0.00\0avg60=0.00 avg300=0.00 total=0\n"

typedef struct BadCase {
        const char *what;
        const char *text;
        size_t len; /* 0: strlen(text) */
        const char *why; /* must appear in the reason */
} BadCase;

static const BadCase bad_cases[] = {
        { "empty", "", 0, "empty text" },
        { "no newline at the end", "some avg10=0.00 avg60=0.00 avg300=0.00 total=0", 0,
          "line 1: no newline at the end" },
        { "no newline after 'full'", SOME "full avg10=0.00 avg60=0.00 avg300=0.00 total=0", 0,
          "line 2: no newline at the end" },
        { "avg10 missing", "some avg60=0.00 avg300=0.00 total=0\n", 0, "line 1 (some): avg10 missing" },
        { "avg300 missing", "some avg10=0.00 avg60=0.00 total=0\n", 0, "line 1 (some): avg300 missing" },
        { "total missing from 'full'", SOME "full avg10=0.00 avg60=0.00 avg300=0.00\n", 0,
          "line 2 (full): total missing" },
        { "a bare 'some'", "some\n", 0, "line 1 (some): avg10 missing" },
        { "garbage", "hello world\n", 0, "line 1: starts with 'hello', not 'some' or 'full'" },
        { "a line kind in capitals", "Some avg10=0.00 avg60=0.00 avg300=0.00 total=0\n", 0, "starts with 'Some'" },
        { "an unknown line", SOME "half avg10=0.00 avg60=0.00 avg300=0.00 total=0\n", 0,
          "line 2: starts with 'half'" },
        { "binary", "\xff\xfe\x01\n", 0, "line 1: unexpected byte 0xff at column 1" },
        { "CRLF", "some avg10=0.00 avg60=0.00 avg300=0.00 total=0\r\n", 0, "line 1: unexpected byte 0x0d at column 47" },
        { "a tab between fields", "some avg10=0.00\tavg60=0.00 avg300=0.00 total=0\n", 0,
          "line 1: unexpected byte 0x09 at column 16" },
        { "a NUL byte", WITH_NUL, sizeof(WITH_NUL) - 1, "line 2: NUL byte" },
        { "a NUL byte ending the text", SOME "\0", sizeof(SOME), "line 2: NUL byte" },
        { "negative average", "some avg10=0.00 avg60=-0.50 avg300=0.00 total=0\n", 0,
          "line 1 (some): avg60=-0.50 is negative" },
        { "negative total", SOME "full avg10=0.00 avg60=0.00 avg300=0.00 total=-1\n", 0,
          "line 2 (full): total=-1 is negative" },
        { "an average above 100", "some avg10=100.01 avg60=0.00 avg300=0.00 total=0\n", 0,
          "avg10=100.01 is above 100" },
        { "a huge average", "some avg10=99999999999999999999999999 avg60=0 avg300=0 total=0\n", 0,
          "avg10=99999999999999999999999999 is above 100" },
        { "a total beyond 2^64-1", "some avg10=0.00 avg60=0.00 avg300=0.00 total=18446744073709551616\n", 0,
          "total=18446744073709551616 is beyond 2^64-1" },
        { "an exponent", "some avg10=1e2 avg60=0.00 avg300=0.00 total=0\n", 0, "avg10=1e2 is not a decimal number" },
        { "nan", "some avg10=nan avg60=0.00 avg300=0.00 total=0\n", 0, "avg10=nan is not a decimal number" },
        { "inf", "some avg10=0.00 avg60=inf avg300=0.00 total=0\n", 0, "avg60=inf is not a decimal number" },
        { "a plus sign", "some avg10=+1.00 avg60=0.00 avg300=0.00 total=0\n", 0, "avg10=+1.00 is not a decimal" },
        { "no digit before the point", "some avg10=.50 avg60=0.00 avg300=0.00 total=0\n", 0,
          "avg10=.50 is not a decimal number" },
        { "no digit after the point", "some avg10=1. avg60=0.00 avg300=0.00 total=0\n", 0,
          "avg10=1. is not a decimal number" },
        { "hex", "some avg10=0x10 avg60=0.00 avg300=0.00 total=0\n", 0, "avg10=0x10 is not a decimal number" },
        { "two points", "some avg10=1.2.3 avg60=0.00 avg300=0.00 total=0\n", 0, "avg10=1.2.3 is not a decimal" },
        { "a fractional total", "some avg10=0.00 avg60=0.00 avg300=0.00 total=1.5\n", 0,
          "total=1.5 is not a decimal number" },
        { "a total with a unit", "some avg10=0.00 avg60=0.00 avg300=0.00 total=15us\n", 0,
          "total=15us is not a decimal number" },
        { "an empty value", "some avg10= avg60=0.00 avg300=0.00 total=0\n", 0,
          "line 1 (some): 'avg10=' is not key=value" },
        { "a key without a value", "some avg10 avg60=0.00 avg300=0.00 total=0\n", 0, "'avg10' is not key=value" },
        { "a value without a key", "some =0.00 avg10=0.00 avg60=0.00 avg300=0.00 total=0\n", 0,
          "'=0.00' is not key=value" },
        { "a key given twice", "some avg10=0.00 avg60=0.00 avg10=0.00 avg300=0.00 total=0\n", 0,
          "line 1 (some): avg10 given twice" },
        { "two 'some' lines", SOME SOME, 0, "line 2: a second 'some' line" },
        { "two 'full' lines", SOME FULL FULL, 0, "line 3: a second 'full' line" },
        { "'full' only", FULL, 0, "no 'some' line" },
        { "an empty line", SOME "\n" FULL, 0, "line 2: empty" },
        { "a line of spaces", SOME "   \n", 0, "line 2: empty" },
        { "only a newline", "\n", 0, "line 1: empty" },
};

static void test_parse_bad(void) {
        for (size_t i = 0; i < sizeof(bad_cases) / sizeof(bad_cases[0]); i++) {
                const BadCase *c = &bad_cases[i];
                size_t len = c->len ? c->len : strlen(c->text);
                AgentPsi got, before;
                char why[256] = "";
                int r;

                memset(&got, 0xa5, sizeof(got));
                before = got;
                r = parse_exact(c->text, len, &got, why, sizeof(why));
                GLEAN_TEST_CHECK(r == -EINVAL, "%s: %d, want -EINVAL", c->what, r);
                GLEAN_TEST_CHECK(strstr(why, c->why), "%s: reason '%s', want '%s' in it", c->what, why, c->why);
                GLEAN_TEST_CHECK(memcmp(&got, &before, sizeof(got)) == 0, "%s: the output was touched", c->what);
        }
}

/* A line past AGENT_PSI_MAX_LINE and a text past AGENT_PSI_MAX_TEXT, made
 * of keys that would be accepted in a short line. */
static void test_parse_overlong(void) {
        char text[AGENT_PSI_MAX_TEXT + 64], why[256] = "";
        size_t len;
        AgentPsi got;
        int r;

        len = (size_t) snprintf(text, sizeof(text), "some avg10=0.00 avg60=0.00 avg300=0.00 total=0 x=");
        memset(text + len, 'y', AGENT_PSI_MAX_LINE);
        len += AGENT_PSI_MAX_LINE;
        text[len++] = '\n';
        r = parse_exact(text, len, &got, why, sizeof(why));
        GLEAN_TEST_CHECK(r == -EINVAL && strstr(why, "line 1: longer than 512 bytes"), "long line: %d '%s'", r, why);

        /* exactly the longest line there may be: accepted */
        len = (size_t) snprintf(text, sizeof(text), "some avg10=0.00 avg60=0.00 avg300=0.00 total=0 x=");
        memset(text + len, 'y', AGENT_PSI_MAX_LINE - len);
        len = AGENT_PSI_MAX_LINE;
        text[len++] = '\n';
        r = parse_exact(text, len, &got, why, sizeof(why));
        GLEAN_TEST_CHECK(r == 0 && got.some.total == 0 && !got.has_full, "longest line: %d '%s'", r, why);

        /* a long last line without its newline says it is too long */
        memcpy(text + AGENT_PSI_MAX_LINE, "yy", 2);
        r = parse_exact(text, AGENT_PSI_MAX_LINE + 2, &got, why, sizeof(why));
        GLEAN_TEST_CHECK(r == -EINVAL && strstr(why, "line 1: longer than"), "long last line: %d '%s'", r, why);

        memset(text, '\n', sizeof(text));
        r = parse_exact(text, AGENT_PSI_MAX_TEXT + 1, &got, why, sizeof(why));
        GLEAN_TEST_CHECK(r == -EINVAL && strstr(why, "2049 bytes, more than 2048"), "long text: %d '%s'", r, why);
}

/* The reason: truncated to whylen, or not written at all. */
static void test_parse_why_buffer(void) {
        static const char text[] = "some avg10=0.00 avg60=0.00 avg300=0.00\n";
        char why[8];
        AgentPsi got;

        memset(why, 'z', sizeof(why));
        GLEAN_TEST_CHECK(agent_psi_parse(text, strlen(text), &got, why, sizeof(why)) == -EINVAL, "short why");
        GLEAN_TEST_CHECK(memcmp(why, "line 1 ", 8) == 0, "truncated reason '%.8s'", why);
        GLEAN_TEST_CHECK(agent_psi_parse(text, strlen(text), &got, NULL, 0) == -EINVAL, "no why");
        GLEAN_TEST_CHECK(agent_psi_parse(NULL, 0, &got, NULL, 0) == -EINVAL, "no text");
        GLEAN_TEST_CHECK(agent_psi_parse(SOME, strlen(SOME), NULL, NULL, 0) == -EINVAL, "no output");
        /* a prefix of a good text is parsed as what it is: its first line */
        GLEAN_TEST_CHECK(agent_psi_parse(SOME FULL, strlen(SOME), &got, NULL, 0) == 0 && !got.has_full,
                         "first line only");
}

/* ---- reading ---- */

static bool sane(const AgentPsiLine *l) {
        return l->avg10 >= 0 && l->avg10 <= 100 && l->avg60 >= 0 && l->avg60 <= 100 && l->avg300 >= 0 &&
               l->avg300 <= 100;
}

static void test_read_machine(void) {
        AgentPsiSet set;
        char why[256] = "";
        int r;

        if (access("/proc/pressure/cpu", R_OK) < 0) {
                printf("\n    SKIPPED inside the suite: no /proc/pressure/cpu here (%s)\n", strerror(errno));
                return;
        }
        r = agent_psi_read_machine(&set, why, sizeof(why));
        GLEAN_TEST_CHECK_FATAL(r == 0, "agent_psi_read_machine: %d (%s)", r, why);
        GLEAN_TEST_CHECK(set.available[AGENT_PSI_CPU], "/proc/pressure/cpu not read");
        for (int i = 0; i < AGENT_PSI__MAX; i++)
                if (set.available[i])
                        GLEAN_TEST_CHECK(sane(&set.psi[i].some) && sane(&set.psi[i].full), "resource %d: %.2f", i,
                                         set.psi[i].some.avg10);
        GLEAN_TEST_CHECK(!set.available[AGENT_PSI_MEMORY] || set.psi[AGENT_PSI_MEMORY].has_full,
                         "memory without 'full'");
        GLEAN_TEST_CHECK(!set.available[AGENT_PSI_IO] || set.psi[AGENT_PSI_IO].has_full, "io without 'full'");
}

/* The root of the cgroup v2 hierarchy, only read. */
static void test_read_cgroup(void) {
        static const char *const roots[] = { "/sys/fs/cgroup/unified", "/sys/fs/cgroup" };
        AgentPsiSet set;
        char why[256] = "";
        int fd = -1, r;
        size_t i;

        for (i = 0; i < sizeof(roots) / sizeof(roots[0]) && fd < 0; i++) {
                fd = open(roots[i], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                if (fd >= 0 && faccessat(fd, "cpu.pressure", R_OK, 0) < 0) {
                        close(fd);
                        fd = -1;
                }
        }
        if (fd < 0) {
                printf("\n    SKIPPED inside the suite: no cgroup v2 directory with a cpu.pressure here\n");
                return;
        }
        r = agent_psi_read_dir(fd, &set, why, sizeof(why));
        close(fd);
        GLEAN_TEST_CHECK_FATAL(r == 0, "%s: %d (%s)", roots[i - 1], r, why);
        GLEAN_TEST_CHECK(set.available[AGENT_PSI_CPU] && sane(&set.psi[AGENT_PSI_CPU].some), "%s/cpu.pressure",
                         roots[i - 1]);
}

typedef struct Scratch {
        char dir[64];
        int fd;
} Scratch;

static void scratch_new(Scratch *s) {
        snprintf(s->dir, sizeof(s->dir), "/tmp/glean-test-psi.XXXXXX");
        GLEAN_TEST_CHECK_FATAL(mkdtemp(s->dir), "mkdtemp: %s", strerror(errno));
        s->fd = open(s->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        GLEAN_TEST_CHECK_FATAL(s->fd >= 0, "open %s: %s", s->dir, strerror(errno));
}

static void scratch_write(Scratch *s, const char *file, const char *text, size_t len) {
        int fd = openat(s->fd, file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

        GLEAN_TEST_CHECK_FATAL(fd >= 0, "create %s/%s: %s", s->dir, file, strerror(errno));
        GLEAN_TEST_CHECK_FATAL(write(fd, text, len) == (ssize_t) len, "write %s/%s", s->dir, file);
        close(fd);
}

static void scratch_done(Scratch *s) {
        static const char *const files[] = { "cpu.pressure", "memory.pressure", "io.pressure" };

        for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++)
                (void) unlinkat(s->fd, files[i], 0);
        close(s->fd);
        GLEAN_TEST_CHECK(rmdir(s->dir) == 0, "rmdir %s: %s", s->dir, strerror(errno));
}

static void test_read_dir(void) {
        static const char cpu[] = "some avg10=1.25 avg60=0.50 avg300=0.25 total=1000\n";
        char big[AGENT_PSI_MAX_TEXT + 100];
        AgentPsiSet set;
        Scratch s;
        char why[256] = "";
        int r;

        scratch_new(&s);

        /* nothing there: PSI unavailable */
        memset(&set, 0xa5, sizeof(set));
        r = agent_psi_read_dir(s.fd, &set, why, sizeof(why));
        GLEAN_TEST_CHECK(r == -ENOENT, "empty directory: %d (%s)", r, why);
        GLEAN_TEST_CHECK(strstr(why, "no cpu.pressure, memory.pressure or io.pressure"), "why '%s'", why);
        for (int i = 0; i < AGENT_PSI__MAX; i++)
                GLEAN_TEST_CHECK(!set.available[i], "empty directory: resource %d available", i);

        /* cpu only, of an old kernel */
        scratch_write(&s, "cpu.pressure", cpu, strlen(cpu));
        r = agent_psi_read_dir(s.fd, &set, why, sizeof(why));
        GLEAN_TEST_CHECK(r == 0, "cpu only: %d (%s)", r, why);
        GLEAN_TEST_CHECK(set.available[AGENT_PSI_CPU] && !set.psi[AGENT_PSI_CPU].has_full &&
                                 set.psi[AGENT_PSI_CPU].some.avg10 == 1.25 && set.psi[AGENT_PSI_CPU].some.total == 1000,
                         "cpu.pressure read wrong");
        GLEAN_TEST_CHECK(!set.available[AGENT_PSI_MEMORY] && !set.available[AGENT_PSI_IO], "memory or io available");

        /* a garbled io.pressure: said, the others still read */
        scratch_write(&s, "memory.pressure", SOME FULL, strlen(SOME FULL));
        scratch_write(&s, "io.pressure", "some avg10=oops\n", 16);
        r = agent_psi_read_dir(s.fd, &set, why, sizeof(why));
        GLEAN_TEST_CHECK(r == -EINVAL, "garbled io: %d", r);
        GLEAN_TEST_CHECK(strcmp(why, "io.pressure: line 1 (some): avg10=oops is not a decimal number") == 0,
                         "why '%s'", why);
        GLEAN_TEST_CHECK(set.available[AGENT_PSI_CPU] && set.available[AGENT_PSI_MEMORY] &&
                                 set.psi[AGENT_PSI_MEMORY].has_full && !set.available[AGENT_PSI_IO],
                         "garbled io: what was read");

        /* an endless file */
        memset(big, 'x', sizeof(big));
        scratch_write(&s, "io.pressure", big, sizeof(big));
        r = agent_psi_read_dir(s.fd, &set, why, sizeof(why));
        GLEAN_TEST_CHECK(r == -EINVAL && strcmp(why, "io.pressure: longer than 2048 bytes") == 0, "big io: %d '%s'",
                         r, why);

        /* all three */
        scratch_write(&s, "io.pressure", SOME FULL, strlen(SOME FULL));
        r = agent_psi_read_dir(s.fd, &set, why, sizeof(why));
        GLEAN_TEST_CHECK(r == 0 && set.available[0] && set.available[1] && set.available[2], "all three: %d (%s)",
                         r, why);

        /* not a directory fd */
        r = agent_psi_read_dir(-1, &set, why, sizeof(why));
        GLEAN_TEST_CHECK(r == -EBADF && strstr(why, "cpu.pressure: "), "bad fd: %d '%s'", r, why);

        scratch_done(&s);
}

/* ---- the ad ---- */

static const char *const slot_names[] = {
        "CpuPressureSome10",    "CpuPressureSome60",    "CpuPressureSome300",
        "CpuPressureFull10",    "CpuPressureFull60",    "CpuPressureFull300",
        "MemoryPressureSome10", "MemoryPressureSome60", "MemoryPressureSome300",
        "MemoryPressureFull10", "MemoryPressureFull60", "MemoryPressureFull300",
        "IoPressureSome10",     "IoPressureSome60",     "IoPressureSome300",
        "IoPressureFull10",     "IoPressureFull60",     "IoPressureFull300",
};
#define N_NAMES (sizeof(slot_names) / sizeof(slot_names[0]))

static AgentPsiSet full_set(void) {
        AgentPsiSet set = {};

        for (int i = 0; i < AGENT_PSI__MAX; i++) {
                set.available[i] = true;
                set.psi[i] = (AgentPsi){ LINE(i * 10 + 1, i * 10 + 2, i * 10 + 3, 1),
                                         LINE(i * 10 + 4, i * 10 + 5, i * 10 + 6, 1), true };
        }
        return set;
}

static double real_of(const ClassAd *ad, const char *name) {
        CaValue v;

        if (classad_eval_attr(ad, name, CA_MODE_OLD, &v) < 0)
                return -1;
        if (v.type != CA_REAL) {
                ca_value_clear(&v);
                return -2;
        }
        return v.u.r;
}

static void test_ad_names(void) {
        AgentPsiSet set = full_set();
        ClassAd *ad = NULL;
        char name[64];
        int r;

        GLEAN_TEST_CHECK_FATAL(classad_new(&ad) == 0, "classad_new");
        r = agent_psi_to_ad(&set, NULL, ad);
        GLEAN_TEST_CHECK(r == 0, "slot: %d", r);
        r = agent_psi_to_ad(&set, "Total", ad);
        GLEAN_TEST_CHECK(r == 0, "machine: %d", r);
        GLEAN_TEST_CHECK(classad_size(ad) == 2 * N_NAMES, "%zu attributes, want %zu", classad_size(ad), 2 * N_NAMES);
        for (size_t i = 0; i < N_NAMES; i++) {
                /* resource i / 6, line (i / 3) % 2, window i % 3: value 10 * res + 3 * line + window + 1 */
                double want = (double) (10 * (i / 6) + 3 * ((i / 3) % 2) + i % 3 + 1);

                GLEAN_TEST_CHECK(real_of(ad, slot_names[i]) == want, "%s = %g, want %g", slot_names[i],
                                 real_of(ad, slot_names[i]), want);
                snprintf(name, sizeof(name), "Total%s", slot_names[i]);
                GLEAN_TEST_CHECK(real_of(ad, name) == want, "%s = %g, want %g", name, real_of(ad, name), want);
        }
        classad_free(ad);
}

/* Full of a cpu.pressure without it and everything of an unavailable
 * resource: left out, and deleted when a previous reading put them there. */
static void test_ad_unavailable(void) {
        AgentPsiSet set = full_set();
        ClassAd *ad = NULL;

        GLEAN_TEST_CHECK_FATAL(classad_new(&ad) == 0, "classad_new");
        GLEAN_TEST_CHECK(classad_set_string(ad, "Name", "slot1@host") == 0, "Name");
        GLEAN_TEST_CHECK(agent_psi_to_ad(&set, "", ad) == 0, "first reading");
        GLEAN_TEST_CHECK(agent_psi_to_ad(&set, "Total", ad) == 0, "first machine reading");

        set.psi[AGENT_PSI_CPU].has_full = false;
        set.available[AGENT_PSI_IO] = false;
        GLEAN_TEST_CHECK(agent_psi_to_ad(&set, "", ad) == 0, "second reading");
        for (size_t i = 0; i < N_NAMES; i++) {
                bool gone = (i >= 3 && i < 6) || i >= 12;

                GLEAN_TEST_CHECK(classad_has(ad, slot_names[i]) == !gone, "%s %s", slot_names[i],
                                 gone ? "still there" : "missing");
        }
        GLEAN_TEST_CHECK(classad_size(ad) == 1 + 9 + N_NAMES, "%zu attributes: the machine's were touched",
                         classad_size(ad));

        /* nothing at all: only Name and the machine's remain */
        memset(set.available, 0, sizeof(set.available));
        GLEAN_TEST_CHECK(agent_psi_to_ad(&set, NULL, ad) == 0, "third reading");
        GLEAN_TEST_CHECK(classad_size(ad) == 1 + N_NAMES, "%zu attributes", classad_size(ad));
        GLEAN_TEST_CHECK(classad_has(ad, "Name") && classad_has(ad, "TotalIoPressureFull300"), "the rest kept");

        GLEAN_TEST_CHECK(agent_psi_to_ad(&set, "AVeryLongPrefixThatNoOneWouldEverUseForAnAttributeNameOfAClassAd!",
                                         ad) == -EINVAL,
                         "a prefix too long");
        classad_free(ad);
}

/* What the attributes are for: a policy expression over them, UNDEFINED
 * when the kernel has no PSI. */
static void test_ad_policy(void) {
        static const char text[] = "some avg10=62.50 avg60=40.00 avg300=10.00 total=123\n"
                                   "full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n";
        static const char policy[] = "TotalCpuPressureSome10 > 50 && CpuPressureSome60 >= 40";
        AgentPsiSet set = {};
        ClassAd *ad = NULL;
        ClassAdExpr *e = NULL;
        CaError err = {};
        CaValue v;
        char why[128] = "";

        GLEAN_TEST_CHECK_FATAL(agent_psi_parse(text, strlen(text), &set.psi[AGENT_PSI_CPU], why, sizeof(why)) == 0,
                               "parse: %s", why);
        set.available[AGENT_PSI_CPU] = true;
        GLEAN_TEST_CHECK_FATAL(classad_new(&ad) == 0, "classad_new");
        GLEAN_TEST_CHECK_FATAL(classad_expr_parse(policy, strlen(policy), CA_MODE_OLD, &e, &err) == 0, "%s", err.msg);
        GLEAN_TEST_CHECK(agent_psi_to_ad(&set, "Total", ad) == 0 && agent_psi_to_ad(&set, NULL, ad) == 0, "to_ad");
        GLEAN_TEST_CHECK(classad_expr_eval(e, ad, NULL, CA_MODE_OLD, &v) == 0 && v.type == CA_BOOL && v.u.b,
                         "the policy is not true");
        ca_value_clear(&v);

        set.available[AGENT_PSI_CPU] = false;
        GLEAN_TEST_CHECK(agent_psi_to_ad(&set, "Total", ad) == 0 && agent_psi_to_ad(&set, NULL, ad) == 0, "to_ad");
        GLEAN_TEST_CHECK(classad_size(ad) == 0, "%zu attributes left", classad_size(ad));
        GLEAN_TEST_CHECK(classad_expr_eval(e, ad, NULL, CA_MODE_OLD, &v) == 0 && v.type == CA_UNDEFINED,
                         "without PSI: type %s", ca_type_name(v.type));
        ca_value_clear(&v);
        classad_expr_free(e);
        classad_free(ad);
}

static CU_TestInfo parse_tests[] = {
        { "well-formed", test_parse_good },
        { "malformed", test_parse_bad },
        { "overlong", test_parse_overlong },
        { "reason buffer", test_parse_why_buffer },
        CU_TEST_INFO_NULL,
};
static CU_TestInfo read_tests[] = {
        { "machine", test_read_machine },
        { "cgroup v2 root", test_read_cgroup },
        { "directory", test_read_dir },
        CU_TEST_INFO_NULL,
};
static CU_TestInfo ad_tests[] = {
        { "names", test_ad_names },
        { "unavailable", test_ad_unavailable },
        { "policy", test_ad_policy },
        CU_TEST_INFO_NULL,
};
static CU_SuiteInfo suites[] = {
        { "parse", NULL, NULL, NULL, NULL, parse_tests },
        { "read", NULL, NULL, NULL, NULL, read_tests },
        { "ad", NULL, NULL, NULL, NULL, ad_tests },
        CU_SUITE_INFO_NULL,
};

int main(int argc, char **argv) {
        return glean_test_main(argc, argv, suites);
}
