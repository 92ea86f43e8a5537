/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test-userlog.c — the job event log: each event's text against the text
 * HTCondor writes (its condor_event.cpp format strings, and events of its
 * own test logs and manual, tests/userlog/htcondor/), the round trip
 * through the reader, HTCondor's sample logs read whole and byte by byte,
 * and hostile logs (long lines, binary, NUL bytes, truncation, forged
 * lines in a field).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "test-util.h"
#include "userlog/userlog.h"

#define FIX "tests/userlog/htcondor/"

/* 2026-12-01 10:00:00 UTC; the tests run with TZ=UTC. */
static time_t t0(void) {
        struct tm tm = { .tm_year = 126, .tm_mon = 11, .tm_mday = 1, .tm_hour = 10 };
        return timegm(&tm);
}

static UserlogEvent mk(int type) {
        UserlogEvent ev;
        userlog_event_init(&ev, type, 123, 0, t0());
        return ev;
}

/* ---- formatting against HTCondor's text ---- */

typedef struct FormatCase {
        const char *what;
        UserlogEvent ev;
        const char *want;
} FormatCase;

static void set(char *dst, size_t n, const char *s) {
        snprintf(dst, n, "%s", s);
}
#define SET(field, s) set(field, sizeof(field), s)

static size_t make_cases(FormatCase *c) {
        size_t n = 0;
        UserlogEvent e;

        e = mk(USERLOG_SUBMIT);
        SET(e.host, "<192.0.2.44:46062>");
        c[n++] = (FormatCase){ "submit", e,
                               "000 (123.000.000) 2026-12-01 10:00:00 Job submitted from host: <192.0.2.44:46062>\n"
                               "...\n" };
        SET(e.notes, "DAG Node: A");
        c[n++] = (FormatCase){ "submit with notes", e,
                               "000 (123.000.000) 2026-12-01 10:00:00 Job submitted from host: <192.0.2.44:46062>\n"
                               "    DAG Node: A\n"
                               "...\n" };
        e = mk(USERLOG_EXECUTE);
        SET(e.host, "<192.0.2.5:43051?PrivNet=cs.wisc.edu>");
        c[n++] = (FormatCase){ "execute", e,
                               "001 (123.000.000) 2026-12-01 10:00:00 Job executing on host: "
                               "<192.0.2.5:43051?PrivNet=cs.wisc.edu>\n"
                               "...\n" };
        SET(e.slot_name, "slot1_1@node1.example");
        c[n++] = (FormatCase){ "execute with slot", e,
                               "001 (123.000.000) 2026-12-01 10:00:00 Job executing on host: "
                               "<192.0.2.5:43051?PrivNet=cs.wisc.edu>\n"
                               "\tSlotName: slot1_1@node1.example\n"
                               "...\n" };
        e = mk(USERLOG_EXECUTABLE_ERROR);
        c[n++] = (FormatCase){ "executable error", e,
                               "002 (123.000.000) 2026-12-01 10:00:00 (0) Job file not executable.\n...\n" };
        e.exec_error = USERLOG_EXEC_BAD_LINK;
        c[n++] = (FormatCase){ "executable error link", e,
                               "002 (123.000.000) 2026-12-01 10:00:00 (1) Job not properly linked for Condor.\n...\n" };
        e = mk(USERLOG_EVICTED);
        e.run_remote.usr = 6;
        e.sent_bytes = 552, e.recvd_bytes = 3739141;
        c[n++] = (FormatCase){ "evicted", e,
                               "004 (123.000.000) 2026-12-01 10:00:00 Job was evicted.\n"
                               "\t(0) CPU times\n"
                               "\t\tUsr 0 00:00:06, Sys 0 00:00:00  -  Run Remote Usage\n"
                               "\t\tUsr 0 00:00:00, Sys 0 00:00:00  -  Run Local Usage\n"
                               "\t552  -  Run Bytes Sent By Job\n"
                               "\t3739141  -  Run Bytes Received By Job\n"
                               "...\n" };
        e.code = 21, e.subcode = 102;
        SET(e.reason, "The system macro SYSTEM_PERIODIC_VACATE expression evaluated to true");
        c[n++] = (FormatCase){ "evicted with code and reason", e,
                               "004 (123.000.000) 2026-12-01 10:00:00 Job was evicted. Code 21 Subcode 102\n"
                               "\t(0) CPU times\n"
                               "\t\tUsr 0 00:00:06, Sys 0 00:00:00  -  Run Remote Usage\n"
                               "\t\tUsr 0 00:00:00, Sys 0 00:00:00  -  Run Local Usage\n"
                               "\t552  -  Run Bytes Sent By Job\n"
                               "\t3739141  -  Run Bytes Received By Job\n"
                               "\tReason: The system macro SYSTEM_PERIODIC_VACATE expression evaluated to true\n"
                               "...\n" };
        e = mk(USERLOG_EVICTED);
        e.requeued = true, e.normal = false, e.signal = 9;
        SET(e.reason, "OnExitRemove evaluated to false");
        c[n++] = (FormatCase){ "evicted requeued", e,
                               "004 (123.000.000) 2026-12-01 10:00:00 Job was evicted.\n"
                               "\t(0) Job terminated and was requeued\n"
                               "\t\tUsr 0 00:00:00, Sys 0 00:00:00  -  Run Remote Usage\n"
                               "\t\tUsr 0 00:00:00, Sys 0 00:00:00  -  Run Local Usage\n"
                               "\t0  -  Run Bytes Sent By Job\n"
                               "\t0  -  Run Bytes Received By Job\n"
                               "\t(0) Abnormal termination (signal 9)\n"
                               "\t(0) No core file\n"
                               "\tOnExitRemove evaluated to false\n"
                               "...\n" };
        e = mk(USERLOG_TERMINATED);
        e.sent_bytes = e.total_sent_bytes = 23;
        e.recvd_bytes = e.total_recvd_bytes = 113;
        userlog_event_set_resource(&e, "Memory", 0, true, 98, true, 2001, true);
        userlog_event_set_resource(&e, "Cpus", 0, false, 1, true, 1, true);
        userlog_event_set_resource(&e, "Disk", 100000, true, 100000, true, 2033496, true);
        c[n++] = (FormatCase){ "terminated normally, with resources", e,
                               "005 (123.000.000) 2026-12-01 10:00:00 Job terminated.\n"
                               "\t(1) Normal termination (return value 0)\n"
                               "\t\tUsr 0 00:00:00, Sys 0 00:00:00  -  Run Remote Usage\n"
                               "\t\tUsr 0 00:00:00, Sys 0 00:00:00  -  Run Local Usage\n"
                               "\t\tUsr 0 00:00:00, Sys 0 00:00:00  -  Total Remote Usage\n"
                               "\t\tUsr 0 00:00:00, Sys 0 00:00:00  -  Total Local Usage\n"
                               "\t23  -  Run Bytes Sent By Job\n"
                               "\t113  -  Run Bytes Received By Job\n"
                               "\t23  -  Total Bytes Sent By Job\n"
                               "\t113  -  Total Bytes Received By Job\n"
                               "\tPartitionable Resources :    Usage  Request Allocated \n"
                               "\t   Cpus                 :                 1         1 \n"
                               "\t   Disk (KB)            :   100000   100000   2033496 \n"
                               "\t   Memory (MB)          :        0       98      2001 \n"
                               "...\n" };
        e = mk(USERLOG_TERMINATED);
        e.normal = false, e.signal = 11;
        e.run_remote = (UserlogUsage){ 90061, 3725 };
        e.total_remote = (UserlogUsage){ 90061, 3725 };
        c[n++] = (FormatCase){ "terminated by a signal", e,
                               "005 (123.000.000) 2026-12-01 10:00:00 Job terminated.\n"
                               "\t(0) Abnormal termination (signal 11)\n"
                               "\t(0) No core file\n"
                               "\t\tUsr 1 01:01:01, Sys 0 01:02:05  -  Run Remote Usage\n"
                               "\t\tUsr 0 00:00:00, Sys 0 00:00:00  -  Run Local Usage\n"
                               "\t\tUsr 1 01:01:01, Sys 0 01:02:05  -  Total Remote Usage\n"
                               "\t\tUsr 0 00:00:00, Sys 0 00:00:00  -  Total Local Usage\n"
                               "\t0  -  Run Bytes Sent By Job\n"
                               "\t0  -  Run Bytes Received By Job\n"
                               "\t0  -  Total Bytes Sent By Job\n"
                               "\t0  -  Total Bytes Received By Job\n"
                               "...\n" };
        e = mk(USERLOG_TERMINATED);
        e.return_value = 3;
        userlog_event_set_resource(&e, "Cpus", 0.25, true, 1, true, 1, true);
        userlog_event_set_resource(&e, "Memory", 12, true, 128, true, 128, true);
        c[n++] = (FormatCase){ "terminated, fractional usage", e,
                               "005 (123.000.000) 2026-12-01 10:00:00 Job terminated.\n"
                               "\t(1) Normal termination (return value 3)\n"
                               "\t\tUsr 0 00:00:00, Sys 0 00:00:00  -  Run Remote Usage\n"
                               "\t\tUsr 0 00:00:00, Sys 0 00:00:00  -  Run Local Usage\n"
                               "\t\tUsr 0 00:00:00, Sys 0 00:00:00  -  Total Remote Usage\n"
                               "\t\tUsr 0 00:00:00, Sys 0 00:00:00  -  Total Local Usage\n"
                               "\t0  -  Run Bytes Sent By Job\n"
                               "\t0  -  Run Bytes Received By Job\n"
                               "\t0  -  Total Bytes Sent By Job\n"
                               "\t0  -  Total Bytes Received By Job\n"
                               "\tPartitionable Resources :    Usage  Request Allocated \n"
                               "\t   Cpus                 :     0.25        1         1 \n"
                               "\t   Memory (MB)          :    12         128       128 \n"
                               "...\n" };
        e = mk(USERLOG_IMAGE_SIZE);
        e.image_size_kb = 100000, e.memory_mb = 0, e.rss_kb = 0;
        c[n++] = (FormatCase){ "image size", e,
                               "006 (123.000.000) 2026-12-01 10:00:00 Image size of job updated: 100000\n"
                               "\t0  -  MemoryUsage of job (MB)\n"
                               "\t0  -  ResidentSetSize of job (KB)\n"
                               "...\n" };
        e = mk(USERLOG_ABORTED);
        SET(e.reason, "via condor_rm (by user alice)");
        c[n++] = (FormatCase){ "aborted", e,
                               "009 (123.000.000) 2026-12-01 10:00:00 Job was aborted.\n"
                               "\tvia condor_rm (by user alice)\n"
                               "...\n" };
        e = mk(USERLOG_SUSPENDED);
        e.num_pids = 2;
        c[n++] = (FormatCase){ "suspended", e,
                               "010 (123.000.000) 2026-12-01 10:00:00 Job was suspended.\n"
                               "\tNumber of processes actually suspended: 2\n"
                               "...\n" };
        e = mk(USERLOG_UNSUSPENDED);
        c[n++] = (FormatCase){ "unsuspended", e,
                               "011 (123.000.000) 2026-12-01 10:00:00 Job was unsuspended.\n...\n" };
        e = mk(USERLOG_HELD);
        SET(e.reason, "via condor_hold (by user alice)");
        e.code = 1;
        c[n++] = (FormatCase){ "held", e,
                               "012 (123.000.000) 2026-12-01 10:00:00 Job was held.\n"
                               "\tvia condor_hold (by user alice)\n"
                               "\tCode 1 Subcode 0\n"
                               "...\n" };
        e = mk(USERLOG_HELD);
        e.code = 13, e.subcode = 2;
        c[n++] = (FormatCase){ "held without reason", e,
                               "012 (123.000.000) 2026-12-01 10:00:00 Job was held.\n"
                               "\tReason unspecified\n"
                               "\tCode 13 Subcode 2\n"
                               "...\n" };
        e = mk(USERLOG_RELEASED);
        SET(e.reason, "via condor_release (by user alice)");
        c[n++] = (FormatCase){ "released", e,
                               "013 (123.000.000) 2026-12-01 10:00:00 Job was released.\n"
                               "\tvia condor_release (by user alice)\n"
                               "...\n" };
        e = mk(USERLOG_FILE_TRANSFER);
        e.transfer = USERLOG_XFER_IN_STARTED;
        SET(e.host, "<192.0.2.5:9618>");
        c[n++] = (FormatCase){ "transfer input started", e,
                               "040 (123.000.000) 2026-12-01 10:00:00 Started transferring input files\n"
                               "\tTransferring to host: <192.0.2.5:9618>\n"
                               "...\n" };
        e = mk(USERLOG_FILE_TRANSFER);
        e.transfer = USERLOG_XFER_OUT_FINISHED;
        c[n++] = (FormatCase){ "transfer output finished", e,
                               "040 (123.000.000) 2026-12-01 10:00:00 Finished transferring output files\n...\n" };
        e = mk(USERLOG_FILE_TRANSFER);
        e.transfer = USERLOG_XFER_IN_QUEUED, e.queueing_delay = 4;
        c[n++] = (FormatCase){ "transfer input queued", e,
                               "040 (123.000.000) 2026-12-01 10:00:00 Entered queue to transfer input files\n"
                               "\tSeconds spent in queue: 4\n"
                               "...\n" };
        return n;
}

#define MAX_CASES 40

static void test_format(void) {
        static FormatCase c[MAX_CASES];
        size_t n = make_cases(c);

        for (size_t i = 0; i < n; i++) {
                char *text = NULL;
                int r = userlog_format(&c[i].ev, false, &text);
                GLEAN_TEST_CHECK(r == (int) strlen(c[i].want) && strcmp(text, c[i].want) == 0,
                                 "%s: got (%d)\n%s\nwant\n%s", c[i].what, r, text ? text : "(none)", c[i].want);
                free(text);
        }
}

static void test_format_utc_and_errors(void) {
        UserlogEvent e = mk(USERLOG_UNSUSPENDED);
        char *text = NULL;
        int r;

        e.cluster = 7, e.proc = 12;
        r = userlog_format(&e, true, &text);
        GLEAN_TEST_CHECK(r > 0 && strcmp(text, "011 (007.012.000) 2026-12-01 10:00:00Z Job was unsuspended.\n...\n") == 0,
                         "got %s", text);
        free(text);
        e.cluster = 1234567;
        r = userlog_format(&e, false, &text);
        GLEAN_TEST_CHECK(r > 0 && strncmp(text, "011 (1234567.012.000) ", 22) == 0, "got %s", text);
        free(text);
        /* a figure no integer holds is printed whole, not cast */
        {
                UserlogEvent big = mk(USERLOG_TERMINATED);
                char *t = NULL;
                userlog_event_set_resource(&big, "Memory", 1e30, true, -1e300, true, 0, false);
                r = userlog_format(&big, false, &t);
                GLEAN_TEST_CHECK(r > 0 && strstr(t, "1000000000000000019884624838656") != NULL, "got %s", t);
                free(t);
        }
        e.type = 3; /* checkpointed: not one glean writes */
        GLEAN_TEST_CHECK(userlog_format(&e, false, &text) == -EINVAL, "type 3 formatted");
        e = mk(USERLOG_FILE_TRANSFER); /* no kind */
        GLEAN_TEST_CHECK(userlog_format(&e, false, &text) == -EINVAL, "040 without a kind formatted");
}

/* A field holding a newline cannot forge a line, let alone an event. */
static int count_cb(const UserlogEvent *ev, const char *text, size_t len, void *userdata) {
        (void) ev, (void) text, (void) len;
        (*(int *) userdata)++;
        return 0;
}

static void test_format_forgery(void) {
        UserlogEvent e = mk(USERLOG_HELD), back;
        UserlogReader *rd = NULL;
        char *text = NULL;
        int events = 0, r;

        SET(e.reason, "bad\n...\n005 (123.000.000) 2026-12-01 10:00:00 Job terminated.\n\t(1) Normal termination "
                      "(return value 0)\n...\n\r\x1b");
        r = userlog_format(&e, false, &text);
        GLEAN_TEST_CHECK_FATAL(r > 0, "format: %d", r);
        GLEAN_TEST_CHECK(strstr(text, "\n...\n005") == NULL && strchr(text, '\r') == NULL && !strchr(text, '\x1b'),
                         "a field forged lines:\n%s", text);
        GLEAN_TEST_CHECK_FATAL(userlog_reader_new(&rd) == 0, "reader");
        r = userlog_reader_feed(rd, text, strlen(text), count_cb, &events);
        GLEAN_TEST_CHECK(r == 1 && events == 1, "read %d events from one", events);
        GLEAN_TEST_CHECK(userlog_parse_event(text, strlen(text), &back, NULL, 0) == 0 && back.type == USERLOG_HELD,
                         "not one held event");
        userlog_reader_free(rd);
        free(text);
}

/* ---- round trip ---- */

static bool same_event(const UserlogEvent *a, const UserlogEvent *b, char *why, size_t n) {
        _Pragma("GCC diagnostic ignored \"-Wformat-truncation\"")
#define F(x)                                                                         \
        if (a->x != b->x) {                                                          \
                snprintf(why, n, "%s: %lld != %lld", #x, (long long) a->x, (long long) b->x); \
                return false;                                                        \
        }
#define S(x)                                                          \
        if (strcmp(a->x, b->x) != 0) {                                \
                snprintf(why, n, "%s: '%.100s' != '%.100s'", #x, a->x, b->x); \
                return false;                                         \
        }
        F(type) F(cluster) F(proc) F(subproc) F(time) S(host) S(slot_name) S(notes) S(reason) F(code) F(subcode)
        F(exec_error) F(return_value) F(signal) S(core_file) F(checkpointed) F(requeued)
        F(run_remote.usr) F(run_remote.sys) F(run_local.usr) F(total_remote.usr) F(total_remote.sys)
        F(total_local.sys) F(sent_bytes) F(recvd_bytes) F(total_sent_bytes) F(total_recvd_bytes) F(n_resources)
        F(image_size_kb) F(memory_mb) F(rss_kb) F(pss_kb) F(num_pids) F(transfer) F(queueing_delay);
        if (a->type == USERLOG_TERMINATED || (a->type == USERLOG_EVICTED && a->requeued))
                F(normal);
#undef F
#undef S
        return true;
}

static void test_roundtrip(void) {
        static FormatCase c[MAX_CASES];
        size_t n = make_cases(c);

        for (size_t i = 0; i < n; i++) {
                UserlogEvent back;
                char why[256] = "", *text = NULL, *again = NULL;
                int r = userlog_format(&c[i].ev, false, &text);
                GLEAN_TEST_CHECK_FATAL(r > 0, "%s: format", c[i].what);
                r = userlog_parse_event(text, strlen(text), &back, why, sizeof(why));
                GLEAN_TEST_CHECK(r == 0, "%s: parse: %s", c[i].what, why);
                if (r == 0) {
                        GLEAN_TEST_CHECK(same_event(&c[i].ev, &back, why, sizeof(why)), "%s: %s", c[i].what, why);
                        /* the resources come back sorted: compare the texts */
                        GLEAN_TEST_CHECK(userlog_format(&back, false, &again) > 0 && strcmp(again, text) == 0,
                                         "%s: again\n%s", c[i].what, again);
                }
                free(text);
                free(again);
        }
        /* the UTC form reads back to the same time */
        {
                UserlogEvent e = mk(USERLOG_SUBMIT), back;
                char *text = NULL;
                SET(e.host, "<10.0.0.1:9618>");
                GLEAN_TEST_CHECK_FATAL(userlog_format(&e, true, &text) > 0, "format");
                GLEAN_TEST_CHECK(userlog_parse_event(text, strlen(text), &back, NULL, 0) == 0 && back.time == e.time,
                                 "utc time not read back");
                free(text);
        }
}

/* ---- HTCondor's own logs ---- */

typedef struct Collect {
        UserlogEvent *ev;
        char **text;
        size_t n, cap;
} Collect;

static int collect_cb(const UserlogEvent *ev, const char *text, size_t len, void *userdata) {
        Collect *c = userdata;

        if (c->n == c->cap) {
                c->cap = c->cap ? 2 * c->cap : 64;
                c->ev = realloc(c->ev, c->cap * sizeof(*c->ev));
                c->text = realloc(c->text, c->cap * sizeof(*c->text));
                if (!c->ev || !c->text)
                        return -ENOMEM;
        }
        c->ev[c->n] = *ev;
        c->text[c->n] = strndup(text, len);
        c->n++;
        return 0;
}

static void collect_done(Collect *c) {
        for (size_t i = 0; i < c->n; i++)
                free(c->text[i]);
        free(c->ev);
        free(c->text);
        *c = (Collect){ 0 };
}

static size_t count_events(const char *s) {
        size_t n = 0;
        for (const char *p = s; (p = strstr(p, "\n...")); p += 4)
                if (p[4] == '\n' || p[4] == 0)
                        n++;
        return n;
}

/* Reads path whole (step 0) or step bytes at a time. */
static int read_log(const char *text, size_t len, size_t step, Collect *c, size_t *ret_skipped) {
        UserlogReader *rd = NULL;
        int r = userlog_reader_new(&rd);

        if (r < 0)
                return r;
        for (size_t off = 0; off < len && r >= 0;) {
                size_t k = step ? (len - off < step ? len - off : step) : len;
                r = userlog_reader_feed(rd, text + off, k, collect_cb, c);
                off += k;
        }
        if (ret_skipped)
                *ret_skipped = userlog_reader_skipped(rd);
        if (r >= 0 && userlog_reader_pending(rd))
                r = -EAGAIN;
        userlog_reader_free(rd);
        return r < 0 ? r : 0;
}

static const char *const fixtures[] = {
        "test_condor.log",
        "job_dagman_gt1957.testlog",
        "job_dagman_recovery_event_check.log.dummy",
        "job_dagman_abnormal_term_recovery_retries-nodeA.dummy_log",
        "python_bindings_test_log.txt",
        "test_condor_history.log",
        "test_dagman_ignores_transfer_shadow_events.log",
        "quick-start-guide.log",
};

static void test_htcondor_logs(void) {
        for (size_t i = 0; i < sizeof(fixtures) / sizeof(fixtures[0]); i++) {
                char path[256], *text = NULL;
                size_t len = 0, skipped = 99, want;
                Collect whole = { 0 }, bytes = { 0 };
                int r;

                snprintf(path, sizeof(path), FIX "%s", fixtures[i]);
                GLEAN_TEST_CHECK_FATAL(glean_test_read_file(path, &text, &len) == 0, "%s: unreadable", path);
                want = count_events(text) + (strncmp(text, "...\n", 4) == 0);
                r = read_log(text, len, 0, &whole, &skipped);
                GLEAN_TEST_CHECK(r == 0 && whole.n == want && skipped == 0, "%s: %d, %zu events of %zu, %zu skipped",
                                 path, r, whole.n, want, skipped);
                r = read_log(text, len, 1, &bytes, &skipped);
                GLEAN_TEST_CHECK(r == 0 && bytes.n == whole.n && skipped == 0, "%s byte by byte: %zu events of %zu",
                                 path, bytes.n, whole.n);
                for (size_t k = 0; k < bytes.n && k < whole.n; k++) {
                        char why[256];
                        GLEAN_TEST_CHECK(same_event(&whole.ev[k], &bytes.ev[k], why, sizeof(why)) &&
                                                 strcmp(whole.text[k], bytes.text[k]) == 0,
                                         "%s event %zu: %s", path, k, why);
                }
                collect_done(&whole);
                collect_done(&bytes);
                free(text);
        }
}

/* Every line of text with its trailing blanks dropped, and in `expand`
 * mode each leading run of 8 spaces made the tab it was (the manual's
 * code blocks expand tabs). */
static char *normalize(const char *text, bool expand) {
        size_t n = strlen(text);
        char *out = malloc(n + 1), *o = out;
        bool bol = true;

        for (const char *p = text; *p; p++) {
                if (bol && expand && strncmp(p, "        ", 8) == 0) {
                        *o++ = '\t';
                        p += 7;
                        continue;
                }
                if (*p == '\n') {
                        while (o > out && (o[-1] == ' ' || o[-1] == '\t') && !(o - 1 == out || o[-2] == '\n'))
                                o--;
                        bol = true;
                } else if (*p != '\t')
                        bol = false;
                *o++ = *p;
        }
        *o = 0;
        return out;
}

/* The events of HTCondor's logs, read and written again, are HTCondor's
 * text (the date aside: glean writes the ISO form). */
static void test_htcondor_text(void) {
        static const struct {
                const char *file;
                bool expand;
                size_t events; /* how many of the file's events glean's format must give back exactly */
        } files[] = {
                /* its 009 is older HTCondor's "Job was aborted by the user." */
                { "job_dagman_gt1957.testlog", false, 6 },
                /* its 016 (POST script) is not glean's */
                { "job_dagman_recovery_event_check.log.dummy", false, 6 },
                { "test_dagman_ignores_transfer_shadow_events.log", false, 4 },
                { "quick-start-guide.log", true, 4 },
        };

        for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
                char path[256], *text = NULL;
                Collect c = { 0 };
                size_t exact = 0;

                snprintf(path, sizeof(path), FIX "%s", files[i].file);
                GLEAN_TEST_CHECK_FATAL(glean_test_read_file(path, &text, NULL) == 0, "%s", path);
                GLEAN_TEST_CHECK_FATAL(read_log(text, strlen(text), 0, &c, NULL) == 0, "%s: read", path);
                for (size_t k = 0; k < c.n; k++) {
                        char *mine = NULL, *theirs, *ours;
                        const char *body_t, *body_m;
                        if (userlog_format(&c.ev[k], false, &mine) < 0)
                                continue;
                        theirs = normalize(c.text[k], files[i].expand);
                        ours = normalize(mine, false);
                        /* the body: after "NNN (C.P.S) DATE TIME " */
                        body_t = strchr(strchr(strchr(theirs, ')') + 2, ' ') + 1, ' ') + 1;
                        body_m = strchr(strchr(strchr(ours, ')') + 2, ' ') + 1, ' ') + 1;
                        if (strcmp(body_t, body_m) == 0 && strncmp(theirs, ours, 18) == 0)
                                exact++;
                        else if (!strstr(theirs, "aborted by the user"))
                                GLEAN_TEST_CHECK(false, "%s event %zu differs:\n%s\nglean:\n%s", path, k, theirs, ours);
                        free(mine);
                        free(theirs);
                        free(ours);
                }
                GLEAN_TEST_CHECK(exact == files[i].events, "%s: %zu exact of %zu", path, exact, files[i].events);
                collect_done(&c);
                free(text);
        }
}

/* The fields read from HTCondor's logs. */
static void test_htcondor_fields(void) {
        char *text = NULL;
        Collect c = { 0 };

        GLEAN_TEST_CHECK_FATAL(glean_test_read_file(FIX "test_condor_history.log", &text, NULL) == 0, "fixture");
        GLEAN_TEST_CHECK_FATAL(read_log(text, strlen(text), 0, &c, NULL) == 0 && c.n == 4, "%zu events", c.n);
        GLEAN_TEST_CHECK(c.ev[0].type == 0 && c.ev[0].cluster == 984 && strncmp(c.ev[0].host, "<127.0.0.1:51045?", 17) == 0,
                         "submit: %s", c.ev[0].host);
        GLEAN_TEST_CHECK(c.ev[2].type == 6 && c.ev[2].image_size_kb == 150 && c.ev[2].memory_mb == 2 &&
                                 c.ev[2].rss_kb == 2000 && c.ev[2].pss_kb == -1,
                         "image size");
        {
                const UserlogEvent *t = &c.ev[3];
                struct tm tm;
                gmtime_r(&t->time, &tm);
                GLEAN_TEST_CHECK(t->type == 5 && t->normal && t->return_value == 0 && tm.tm_year == 123 &&
                                         tm.tm_mon == 0 && tm.tm_mday == 24 && tm.tm_hour == 9 && tm.tm_min == 43,
                                 "terminated header");
                GLEAN_TEST_CHECK_FATAL(t->n_resources == 3, "%zu resources", t->n_resources);
                GLEAN_TEST_CHECK(strcmp(t->resources[0].name, "Cpus") == 0 && !t->resources[0].has_use &&
                                         t->resources[0].request == 1 && t->resources[0].allocated == 1,
                                 "Cpus row");
                GLEAN_TEST_CHECK(strcmp(t->resources[1].name, "Disk") == 0 && t->resources[1].use == 150 &&
                                         t->resources[1].request == 150 && t->resources[1].allocated == 45831539,
                                 "Disk row");
                GLEAN_TEST_CHECK(strcmp(t->resources[2].name, "Memory") == 0 && t->resources[2].use == 2 &&
                                         t->resources[2].request == 1 && t->resources[2].allocated == 4096,
                                 "Memory row");
        }
        collect_done(&c);
        free(text);

        GLEAN_TEST_CHECK_FATAL(glean_test_read_file(FIX "job_dagman_gt1957.testlog", &text, NULL) == 0, "fixture");
        GLEAN_TEST_CHECK_FATAL(read_log(text, strlen(text), 0, &c, NULL) == 0 && c.n == 7, "%zu events", c.n);
        GLEAN_TEST_CHECK(c.ev[2].type == 5 && !c.ev[2].normal && c.ev[2].signal == 11, "abnormal termination");
        GLEAN_TEST_CHECK(c.ev[5].type == 9 && c.ev[5].cluster == 180158, "aborted");
        GLEAN_TEST_CHECK(strcmp(c.ev[0].notes, "DAG Node: A") == 0, "notes '%s'", c.ev[0].notes);
        collect_done(&c);
        free(text);

        GLEAN_TEST_CHECK_FATAL(glean_test_read_file(FIX "test_condor.log", &text, NULL) == 0, "fixture");
        GLEAN_TEST_CHECK_FATAL(read_log(text, strlen(text), 0, &c, NULL) == 0, "test_condor.log");
        {
                size_t per[64] = { 0 };
                for (size_t k = 0; k < c.n; k++)
                        if (c.ev[k].type >= 0 && c.ev[k].type < 64)
                                per[c.ev[k].type]++;
                GLEAN_TEST_CHECK(c.n == 851 && per[0] == 42 && per[5] == 43 && per[9] == 40 && per[12] == 48 &&
                                         per[13] == 43 && per[28] == 0,
                                 "%zu events, %zu submit %zu terminated", c.n, per[0], per[5]);
                GLEAN_TEST_CHECK(c.ev[2].type == 5 && c.ev[2].run_remote.usr == 6 && c.ev[2].sent_bytes == 552 &&
                                         c.ev[2].total_recvd_bytes == 3739141,
                                 "the first terminated event's usage");
                GLEAN_TEST_CHECK(c.ev[6].cluster == -1 && c.ev[6].type == 1 && c.ev[6].host[0] == 0, "-01 ids");
        }
        collect_done(&c);
        free(text);
}

/* ---- hostile logs ---- */

static const char good[] = "000 (1.000.000) 2026-12-01 10:00:00 Job submitted from host: <10.0.0.1:9618>\n...\n";

static size_t feed_all(const char *text, size_t len, size_t *ret_skipped, bool *ret_pending, Collect *c) {
        UserlogReader *rd = NULL;
        int r;

        if (userlog_reader_new(&rd) < 0)
                return (size_t) -1;
        r = userlog_reader_feed(rd, text, len, collect_cb, c);
        *ret_skipped = userlog_reader_skipped(rd);
        *ret_pending = userlog_reader_pending(rd);
        userlog_reader_free(rd);
        return r < 0 ? (size_t) -1 : c->n;
}

static void test_hostile(void) {
        size_t big = 3 * USERLOG_LINE_MAX, skipped, n;
        char *text = malloc(big + 4096), *p;
        bool pending;
        Collect c = { 0 };

        /* a very long line inside an event: that event goes, the next stays */
        p = text;
        p += sprintf(p, "012 (1.000.000) 2026-12-01 10:00:00 Job was held.\n\t");
        memset(p, 'x', big);
        p += big;
        p += sprintf(p, "\n\tCode 1 Subcode 0\n...\n%s", good);
        n = feed_all(text, (size_t) (p - text), &skipped, &pending, &c);
        GLEAN_TEST_CHECK(n == 1 && c.ev[0].type == 0 && skipped == 1 && !pending, "long line: %zu events, %zu skipped",
                         n, skipped);
        collect_done(&c);

        /* binary garbage between events, NUL bytes in it */
        p = text;
        p += sprintf(p, "%s", good);
        for (int i = 0; i < 2000; i++)
                *p++ = (char) (i * 7919 % 256);
        *p++ = '\n';
        p += sprintf(p, "%s", good);
        n = feed_all(text, (size_t) (p - text), &skipped, &pending, &c);
        GLEAN_TEST_CHECK(n == 2 && skipped >= 1 && !pending, "binary: %zu events, %zu skipped", n, skipped);
        collect_done(&c);

        /* a NUL inside an event */
        {
                static const char nul[] = "009 (1.000.000) 2026-12-01 10:00:00 Job was aborted.\n\tby\0me\n...\n";
                n = feed_all(nul, sizeof(nul) - 1, &skipped, &pending, &c);
                GLEAN_TEST_CHECK(n == 0 && skipped == 1, "NUL: %zu events", n);
                collect_done(&c);
        }

        /* truncated: the last event is not one yet, the bytes that finish it make it one */
        {
                static const char part[] = "005 (2.000.000) 2026-12-01 10:00:00 Job terminated.\n"
                                           "\t(1) Normal termination (return value 4)\n..";
                UserlogReader *rd = NULL;
                int r;
                GLEAN_TEST_CHECK_FATAL(userlog_reader_new(&rd) == 0, "reader");
                r = userlog_reader_feed(rd, part, sizeof(part) - 1, collect_cb, &c);
                GLEAN_TEST_CHECK(r == 0 && c.n == 0 && userlog_reader_pending(rd), "partial event delivered");
                r = userlog_reader_feed(rd, ".\n", 2, collect_cb, &c);
                GLEAN_TEST_CHECK(r == 1 && c.n == 1 && c.ev[0].return_value == 4 && !userlog_reader_pending(rd),
                                 "completed event: %d", r);
                userlog_reader_free(rd);
                collect_done(&c);
        }

        /* too many lines in one event */
        p = text;
        p += sprintf(p, "008 (1.000.000) 2026-12-01 10:00:00 note\n");
        for (int i = 0; i < USERLOG_EVENT_LINES_MAX + 5; i++)
                p += sprintf(p, "x\n");
        p += sprintf(p, "...\n%s", good);
        n = feed_all(text, (size_t) (p - text), &skipped, &pending, &c);
        GLEAN_TEST_CHECK(n == 1 && skipped == 1, "many lines: %zu events, %zu skipped", n, skipped);
        collect_done(&c);

        /* an event cut by another header; headers that do not parse; a stray "..." */
        {
                static const char cut[] =
                        "001 (1.000.000) 2026-12-01 10:00:00 Job executing on host: <a>\n"
                        "000 (1.000.000) 2026-12-01 10:00:00 Job submitted from host: <b>\n...\n"
                        "005 (1.000.000) 2026-13-01 10:00:00 Job terminated.\n...\n"
                        "005 (1.x00.000) 2026-12-01 10:00:00 Job terminated.\n...\n"
                        "005 (1.000.000) 2026-12-01 10:00:00 Job was held.\n...\n"
                        "...\n"
                        "099 (1.000.000) 2026-12-01 10:00:00 Something new\n\tmore\n...\n";
                n = feed_all(cut, sizeof(cut) - 1, &skipped, &pending, &c);
                GLEAN_TEST_CHECK(n == 2 && c.ev[0].type == 0 && strcmp(c.ev[0].host, "<b>") == 0 && c.ev[1].type == 99 &&
                                         skipped == 5,
                                 "cut: %zu events, %zu skipped", n, skipped);
                collect_done(&c);
        }

        /* numbers too big for their fields */
        {
                static const char huge[] = "010 (99999999999999999999.000.000) 2026-12-01 10:00:00 Job was suspended.\n...\n"
                                           "006 (1.000.000) 2026-12-01 10:00:00 Image size of job updated: "
                                           "123456789012345678901234567890\n...\n";
                n = feed_all(huge, sizeof(huge) - 1, &skipped, &pending, &c);
                GLEAN_TEST_CHECK(n == 0 && skipped == 2, "huge numbers: %zu events", n);
                collect_done(&c);
        }
        free(text);
}

static CU_TestInfo tests[] = {
        { "format", test_format },
        { "format-utc-errors", test_format_utc_and_errors },
        { "format-forgery", test_format_forgery },
        { "roundtrip", test_roundtrip },
        { "htcondor-logs", test_htcondor_logs },
        { "htcondor-text", test_htcondor_text },
        { "htcondor-fields", test_htcondor_fields },
        { "hostile", test_hostile },
        CU_TEST_INFO_NULL,
};

static CU_SuiteInfo suites[] = {
        { "userlog", NULL, NULL, NULL, NULL, tests },
        CU_SUITE_INFO_NULL,
};

int main(int argc, char **argv) {
        setenv("TZ", "UTC", 1);
        tzset();
        return glean_test_main(argc, argv, suites);
}
