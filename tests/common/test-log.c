/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test-log.c — structured logging (common/log.h): the stderr line (format,
 * escaping of the message and of field values), what reaches stderr
 * (captured by dup2() onto a temporary file), the level threshold, field
 * name checks and the test sink, glean_log_errno(), and the choice of
 * journald by $JOURNAL_STREAM / $GLEAN_LOG (no journal needed).
 */
#define _GNU_SOURCE

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <CUnit/CUnit.h>

#include "log.h"
#include "test-util.h"

#define ELEMS(x) (sizeof(x) / sizeof((x)[0]))

static char tmpdir[64];

/* ---- the line ---- */

static unsigned long long usec_of(int y, int mo, int d, int h, int mi, int s, int ms) {
        struct tm tm = { .tm_year = y - 1900, .tm_mon = mo - 1, .tm_mday = d, .tm_hour = h, .tm_min = mi, .tm_sec = s };
        return (unsigned long long) timegm(&tm) * 1000000ULL + (unsigned long long) ms * 1000ULL + 456;
}

static void test_line_format(void) {
        GleanLogField f[] = { { "GLEAN_SLOT", "slot1" }, { "GLEAN_STATE", "Owner" } };
        char *line = glean_log_format_line(usec_of(2026, 11, 22, 2, 40, 0, 123), "glean-agent", 4242, LOG_INFO, f, 2,
                                           "Slot changed state");

        CU_ASSERT_PTR_NOT_NULL_FATAL(line);
        CU_ASSERT_STRING_EQUAL(line, "2026-11-22T02:40:00.123Z glean-agent[4242] info: Slot changed state "
                                     "GLEAN_SLOT=slot1 GLEAN_STATE=Owner");
        free(line);

        static const struct {
                int prio;
                const char *name;
        } prios[] = {
                { LOG_EMERG, "emerg" }, { LOG_ALERT, "alert" },   { LOG_CRIT, "crit" }, { LOG_ERR, "error" },
                { LOG_WARNING, "warning" }, { LOG_NOTICE, "notice" }, { LOG_INFO, "info" }, { LOG_DEBUG, "debug" },
        };
        for (size_t i = 0; i < ELEMS(prios); i++) {
                char want[128];
                line = glean_log_format_line(0, "x", 1, prios[i].prio, NULL, 0, "m");
                snprintf(want, sizeof(want), "1970-01-01T00:00:00.000Z x[1] %s: m", prios[i].name);
                GLEAN_TEST_CHECK(line && strcmp(line, want) == 0, "priority %d: %s, want %s", prios[i].prio, line ? line : "(null)",
                                 want);
                free(line);
        }
}

static void test_escaping(void) {
        static const struct {
                const char *value;
                const char *shown;
        } values[] = {
                { "slot1", "slot1" },
                { "slot1@host.example", "slot1@host.example" },
                { "", "\"\"" },
                { "two words", "\"two words\"" },
                { "say \"hi\"", "\"say \\\"hi\\\"\"" },
                { "a\nb", "\"a\\nb\"" },
                { "tab\there", "\"tab\\there\"" },
                { "cr\r", "\"cr\\r\"" },
                { "back\\slash", "\"back\\\\slash\"" },
                { "a=b", "\"a=b\"" },
                { "bell\x07", "\"bell\\x07\"" },
                { "del\x7f", "\"del\\x7f\"" },
                { "caf\xc3\xa9", "caf\xc3\xa9" },
        };

        for (size_t i = 0; i < ELEMS(values); i++) {
                GleanLogField f = { "GLEAN_V", values[i].value };
                char want[128];
                char *line = glean_log_format_line(0, "t", 1, LOG_INFO, &f, 1, "m");
                snprintf(want, sizeof(want), "1970-01-01T00:00:00.000Z t[1] info: m GLEAN_V=%s", values[i].shown);
                GLEAN_TEST_CHECK(line && strcmp(line, want) == 0, "value %zu: %s, want %s", i, line ? line : "(null)", want);
                GLEAN_TEST_CHECK(line && !strchr(line, '\n'), "value %zu: newline in the record", i);
                free(line);
        }

        /* the message: control bytes escaped, quotes and backslashes kept */
        char *line = glean_log_format_line(0, "t", 1, LOG_INFO, NULL, 0, "first\nsecond \"q\" \\ \x01");
        CU_ASSERT_STRING_EQUAL(line, "1970-01-01T00:00:00.000Z t[1] info: first\\nsecond \"q\" \\ \\x01");
        free(line);
        /* a NULL value reads as empty */
        GleanLogField f = { "GLEAN_V", NULL };
        line = glean_log_format_line(0, "t", 1, LOG_INFO, &f, 1, "m");
        CU_ASSERT_STRING_EQUAL(line, "1970-01-01T00:00:00.000Z t[1] info: m GLEAN_V=\"\"");
        free(line);
}

/* ---- capturing stderr ---- */

typedef struct Capture {
        int saved;
        int fd;
        char path[128];
} Capture;

static void capture_start(Capture *c) {
        snprintf(c->path, sizeof(c->path), "%s/stderr-XXXXXX", tmpdir);
        c->fd = mkstemp(c->path);
        CU_ASSERT_FATAL(c->fd >= 0);
        fflush(stderr);
        c->saved = dup(STDERR_FILENO);
        CU_ASSERT_FATAL(c->saved >= 0);
        CU_ASSERT_FATAL(dup2(c->fd, STDERR_FILENO) == STDERR_FILENO);
}

/* Restores stderr; returns what was written (malloc'd). */
static char *capture_end(Capture *c) {
        char *text = NULL;

        fflush(stderr);
        dup2(c->saved, STDERR_FILENO);
        close(c->saved);
        close(c->fd);
        CU_ASSERT(glean_test_read_file(c->path, &text, NULL) == 0);
        unlink(c->path);
        return text ? text : strdup("");
}

static size_t count_char(const char *s, char ch) {
        size_t n = 0;
        for (; *s; s++)
                n += *s == ch;
        return n;
}

/* "YYYY-MM-DDTHH:MM:SS.mmmZ " */
static bool looks_like_timestamp(const char *s) {
        static const char pattern[] = "dddd-dd-ddTdd:dd:dd.dddZ ";
        for (size_t i = 0; i < sizeof(pattern) - 1; i++) {
                if (pattern[i] == 'd' ? !(s[i] >= '0' && s[i] <= '9') : s[i] != pattern[i])
                        return false;
        }
        return true;
}

static void test_stderr_output(void) {
        GleanLogField f[] = { { "GLEAN_SLOT", "slot1" }, { "GLEAN_NOTE", "two words" } };
        Capture c;
        char want[256];

        setenv("GLEAN_LOG", "stderr", 1);
        unsetenv("GLEAN_LOG_LEVEL");
        glean_log_open("glean-test");
        CU_ASSERT_EQUAL(glean_log_target(), GLEAN_LOG_TARGET_STDERR);
        CU_ASSERT_EQUAL(glean_log_get_level(), LOG_INFO);

        capture_start(&c);
        errno = EBUSY;
        glean_log(LOG_INFO, NULL, f, ELEMS(f), "hello %d\nworld", 5);
        CU_ASSERT_EQUAL(errno, EBUSY); /* logging keeps errno */
        glean_log_debug("not shown at the default level");
        glean_log_warning("careful");
        glean_log_error("bad: %s", "thing");
        glean_log_info("plain");
        char *out = capture_end(&c);

        CU_ASSERT_EQUAL(count_char(out, '\n'), 4);
        CU_ASSERT_PTR_NULL(strstr(out, "not shown"));
        const char *line = out;
        CU_ASSERT(looks_like_timestamp(line));
        snprintf(want, sizeof(want), "glean-test[%ld] info: hello 5\\nworld GLEAN_SLOT=slot1 GLEAN_NOTE=\"two words\"\n",
                 (long) getpid());
        GLEAN_TEST_CHECK(strncmp(line + 25, want, strlen(want)) == 0, "line 1: %s", line);
        line = strchr(line, '\n') + 1;
        CU_ASSERT(looks_like_timestamp(line));
        snprintf(want, sizeof(want), "glean-test[%ld] warning: careful\n", (long) getpid());
        GLEAN_TEST_CHECK(strncmp(line + 25, want, strlen(want)) == 0, "line 2: %s", line);
        line = strchr(line, '\n') + 1;
        snprintf(want, sizeof(want), "glean-test[%ld] error: bad: thing\n", (long) getpid());
        GLEAN_TEST_CHECK(strncmp(line + 25, want, strlen(want)) == 0, "line 3: %s", line);
        line = strchr(line, '\n') + 1;
        snprintf(want, sizeof(want), "glean-test[%ld] info: plain\n", (long) getpid());
        GLEAN_TEST_CHECK(strncmp(line + 25, want, strlen(want)) == 0, "line 4: %s", line);
        free(out);
}

static void test_levels(void) {
        static const struct {
                const char *s;
                int level;
        } names[] = {
                { "debug", LOG_DEBUG }, { "info", LOG_INFO },   { "notice", LOG_NOTICE }, { "warning", LOG_WARNING },
                { "warn", LOG_WARNING }, { "err", LOG_ERR },    { "error", LOG_ERR },     { "ERR", LOG_ERR },
                { "crit", LOG_CRIT },   { "alert", LOG_ALERT }, { "emerg", LOG_EMERG },   { "7", LOG_DEBUG },
                { "0", LOG_EMERG },     { "8", -EINVAL },       { "", -EINVAL },          { "loud", -EINVAL },
        };
        Capture c;

        for (size_t i = 0; i < ELEMS(names); i++)
                GLEAN_TEST_CHECK(glean_log_level_from_string(names[i].s) == names[i].level, "\"%s\": %d, want %d",
                                 names[i].s, glean_log_level_from_string(names[i].s), names[i].level);
        CU_ASSERT_EQUAL(glean_log_level_from_string(NULL), -EINVAL);

        setenv("GLEAN_LOG", "stderr", 1);
        setenv("GLEAN_LOG_LEVEL", "warning", 1);
        glean_log_open("lvl");
        CU_ASSERT_EQUAL(glean_log_get_level(), LOG_WARNING);
        capture_start(&c);
        glean_log_info("dropped");
        glean_log_notice("dropped too");
        glean_log_warning("kept");
        char *out = capture_end(&c);
        CU_ASSERT_EQUAL(count_char(out, '\n'), 1);
        CU_ASSERT_PTR_NOT_NULL(strstr(out, "warning: kept"));
        free(out);

        setenv("GLEAN_LOG_LEVEL", "debug", 1);
        glean_log_open("lvl");
        capture_start(&c);
        glean_log_debug("now shown");
        out = capture_end(&c);
        CU_ASSERT_PTR_NOT_NULL(strstr(out, "debug: now shown"));
        free(out);

        /* garbage: the default */
        setenv("GLEAN_LOG_LEVEL", "chatty", 1);
        glean_log_open("lvl");
        CU_ASSERT_EQUAL(glean_log_get_level(), LOG_INFO);
        glean_log_set_level(LOG_ERR);
        CU_ASSERT_EQUAL(glean_log_get_level(), LOG_ERR);
        unsetenv("GLEAN_LOG_LEVEL");
        glean_log_open("glean-test");
}

/* ---- the sink ---- */

typedef struct Record {
        int priority;
        char message_id[40];
        char message[256];
        char fields[512]; /* "NAME=value;" ... */
        size_t n;
} Record;

typedef struct Records {
        Record r[8];
        size_t n;
} Records;

static void sink(int priority, const char *message_id, const GleanLogField *fields, size_t n, const char *message,
                 void *userdata) {
        Records *rs = userdata;
        if (rs->n >= ELEMS(rs->r))
                return;
        Record *r = &rs->r[rs->n++];
        r->priority = priority;
        snprintf(r->message_id, sizeof(r->message_id), "%s", message_id ? message_id : "");
        snprintf(r->message, sizeof(r->message), "%s", message);
        r->fields[0] = '\0';
        for (size_t i = 0; i < n; i++) {
                size_t used = strlen(r->fields);
                snprintf(r->fields + used, sizeof(r->fields) - used, "%s=%s;", fields[i].name, fields[i].value);
        }
        r->n = n;
}

static void test_sink_and_fields(void) {
        static const struct {
                const char *name;
                bool valid;
        } names[] = {
                { "GLEAN_SLOT", true },   { "A", true },         { "X9_", true },         { "CODE_LINE", true },
                { "glean_slot", false },  { "Glean", false },    { "_PID", false },       { "9LIVES", false },
                { "A-B", false },         { "A B", false },      { "", false },           { NULL, false },
                { "MESSAGE", false },     { "PRIORITY", false }, { "MESSAGE_ID", false }, { "SYSLOG_IDENTIFIER", false },
                { "ERRNO", false },
                { "A234567890123456789012345678901234567890123456789012345678901234", true },
                { "A2345678901234567890123456789012345678901234567890123456789012345", false },
        };
        Records rs = {};

        for (size_t i = 0; i < ELEMS(names); i++)
                GLEAN_TEST_CHECK(glean_log_field_name_valid(names[i].name) == names[i].valid, "name %s: want %s",
                                 names[i].name ? names[i].name : "(null)", names[i].valid ? "valid" : "invalid");

        glean_log_set_sink(sink, &rs);
        GleanLogField f[] = {
                { "GLEAN_SLOT", "slot1" }, { "lowercase", "x" }, { "MESSAGE", "forged" },
                { "_TRUSTED", "y" },       { "GLEAN_STATE", "Claimed" },
        };
        glean_log(LOG_NOTICE, "a1b2c3d4e5f60718293a4b5c6d7e8f90", f, ELEMS(f), "state %s", "changed");
        glean_log(LOG_INFO, "not-an-id", NULL, 0, "bad id");
        glean_log(LOG_INFO, "A1B2C3D4E5F60718293A4B5C6D7E8F9", NULL, 0, "31 digits");
        glean_log_debug("below the threshold");
        int r = glean_log_errno(LOG_ERR, -ENOENT, "open %s: %m", "/nowhere");
        CU_ASSERT_EQUAL(r, -ENOENT);
        CU_ASSERT_EQUAL(glean_log_errno(LOG_WARNING, EACCES, "denied"), -EACCES);
        CU_ASSERT_EQUAL(glean_log_errno(LOG_WARNING, 0, "zero"), -EINVAL);
        glean_log_set_sink(NULL, NULL);

        CU_ASSERT_EQUAL_FATAL(rs.n, 6);
        CU_ASSERT_EQUAL(rs.r[0].priority, LOG_NOTICE);
        CU_ASSERT_STRING_EQUAL(rs.r[0].message_id, "a1b2c3d4e5f60718293a4b5c6d7e8f90");
        CU_ASSERT_STRING_EQUAL(rs.r[0].message, "state changed");
        CU_ASSERT_STRING_EQUAL(rs.r[0].fields, "GLEAN_SLOT=slot1;GLEAN_STATE=Claimed;");
        CU_ASSERT_EQUAL(rs.r[0].n, 2);
        CU_ASSERT_STRING_EQUAL(rs.r[1].message_id, "");
        CU_ASSERT_STRING_EQUAL(rs.r[2].message_id, "");
        CU_ASSERT_EQUAL(rs.r[3].priority, LOG_ERR);
        CU_ASSERT_STRING_EQUAL(rs.r[3].message, "open /nowhere: No such file or directory");
        CU_ASSERT_STRING_EQUAL(rs.r[3].fields, "ERRNO=2;");
        CU_ASSERT_STRING_EQUAL(rs.r[4].fields, "ERRNO=13;");
        CU_ASSERT_STRING_EQUAL(rs.r[5].fields, "ERRNO=22;");

        /* with the sink gone, nothing more arrives there */
        Capture c;
        capture_start(&c);
        glean_log_info("to stderr again");
        char *out = capture_end(&c);
        CU_ASSERT_EQUAL(rs.n, 6);
        CU_ASSERT_PTR_NOT_NULL(strstr(out, "info: to stderr again"));
        free(out);
}

/* ---- choosing journald ---- */

static void test_journal_selection(void) {
        struct stat st;
        char stream[64];

        CU_ASSERT_FATAL(fstat(STDERR_FILENO, &st) == 0);
        snprintf(stream, sizeof(stream), "%llu:%llu", (unsigned long long) st.st_dev, (unsigned long long) st.st_ino);

        static const struct {
                const char *glean_log;  /* NULL: unset */
                int stream;             /* 0 unset, 1 stderr's, 2 another inode, 3 garbage */
                GleanLogTarget want;
        } rows[] = {
                { NULL, 0, GLEAN_LOG_TARGET_STDERR },
                { NULL, 1, GLEAN_LOG_TARGET_JOURNAL },
                { NULL, 2, GLEAN_LOG_TARGET_STDERR },
                { NULL, 3, GLEAN_LOG_TARGET_STDERR },
                { "stderr", 1, GLEAN_LOG_TARGET_STDERR },
                { "journal", 0, GLEAN_LOG_TARGET_JOURNAL },
                { "journal", 2, GLEAN_LOG_TARGET_JOURNAL },
                { "something", 1, GLEAN_LOG_TARGET_JOURNAL },
                { "something", 0, GLEAN_LOG_TARGET_STDERR },
        };
        for (size_t i = 0; i < ELEMS(rows); i++) {
                char other[80];
                if (rows[i].glean_log)
                        setenv("GLEAN_LOG", rows[i].glean_log, 1);
                else
                        unsetenv("GLEAN_LOG");
                switch (rows[i].stream) {
                case 0:
                        unsetenv("JOURNAL_STREAM");
                        break;
                case 1:
                        setenv("JOURNAL_STREAM", stream, 1);
                        break;
                case 2:
                        snprintf(other, sizeof(other), "%llu:%llu", (unsigned long long) st.st_dev,
                                 (unsigned long long) st.st_ino + 1);
                        setenv("JOURNAL_STREAM", other, 1);
                        break;
                default:
                        snprintf(other, sizeof(other), "%s:junk", stream);
                        setenv("JOURNAL_STREAM", other, 1);
                }
                glean_log_open("sel");
                GLEAN_TEST_CHECK(glean_log_target() == rows[i].want, "row %zu: target %d, want %d", i,
                                 glean_log_target(), rows[i].want);
        }

        /* With no journald to take it, a record aimed at the journal falls
         * back to stderr rather than being lost. */
        if (access("/run/systemd/journal/socket", F_OK) != 0) {
                Capture c;
                setenv("GLEAN_LOG", "journal", 1);
                glean_log_open("sel");
                capture_start(&c);
                glean_log_info("fallback");
                char *out = capture_end(&c);
                CU_ASSERT_PTR_NOT_NULL(strstr(out, "sel["));
                CU_ASSERT_PTR_NOT_NULL(strstr(out, "info: fallback\n"));
                free(out);
        } else
                printf("(a journal runs here: the fallback is not checked) ");

        unsetenv("JOURNAL_STREAM");
        setenv("GLEAN_LOG", "stderr", 1);
        glean_log_open("glean-test");
}

static int suite_init(void) {
        snprintf(tmpdir, sizeof(tmpdir), "/tmp/glean-test-log-XXXXXX");
        return mkdtemp(tmpdir) ? 0 : -1;
}

static int suite_clean(void) {
        return rmdir(tmpdir) == 0 ? 0 : -1;
}

static CU_TestInfo tests[] = {
        { "line format", test_line_format },
        { "escaping", test_escaping },
        { "stderr output", test_stderr_output },
        { "levels", test_levels },
        { "sink and field names", test_sink_and_fields },
        { "journald selection", test_journal_selection },
        CU_TEST_INFO_NULL,
};

static CU_SuiteInfo suites[] = {
        { "log", suite_init, suite_clean, NULL, NULL, tests },
        CU_SUITE_INFO_NULL,
};

int main(int argc, char **argv) {
        return glean_test_main(argc, argv, suites);
}
