/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz-userlog — libFuzzer target for the job event log's reader
 * (userlog/userlog.h), what `glean wait LOGFILE` runs on a file a user
 * writes.
 *
 * Input: the bytes of a log, NUL bytes included. Checks, each an abort()
 * when broken:
 *
 *   - fed whole, or in two pieces split where the first byte says, or in
 *     pieces of 7 bytes, the reader gives the same events with the same
 *     texts and skips the same garbage;
 *   - every event's text is within the reader's limits, starts with a
 *     header and ends with a "..." line, and parses alone to the same event;
 *   - an event of a type glean writes, formatted again, parses back to a
 *     text that formats identically (format is a fixed point after one
 *     round) and is one event to the reader, however hostile its fields.
 */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "userlog.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static _Noreturn void fail(const char *what) {
        fprintf(stderr, "FUZZ-USERLOG FAILURE: %s\n", what);
        abort();
}

#define MAX_EVENTS 4096

typedef struct Seen {
        size_t n;
        uint64_t hash[MAX_EVENTS];
        int type[MAX_EVENTS];
} Seen;

static uint64_t fnv(const char *s, size_t n) {
        uint64_t h = 1469598103934665603ULL;
        for (size_t i = 0; i < n; i++)
                h = (h ^ (unsigned char) s[i]) * 1099511628211ULL;
        return h;
}

static int one_event(const char *text, size_t len) {
        UserlogEvent *again = malloc(sizeof(*again));
        char *f1 = NULL, *f2 = NULL;
        UserlogReader *rd = NULL;
        int n;

        if (!again)
                fail("malloc");
        if (userlog_parse_event(text, len, again, NULL, 0) < 0)
                fail("an event the reader gave does not parse alone");
        if (userlog_format(again, true, &f1) > 0) {
                UserlogEvent *back = malloc(sizeof(*back));
                if (!back)
                        fail("malloc");
                if (userlog_parse_event(f1, strlen(f1), back, NULL, 0) < 0)
                        fail("a formatted event does not parse");
                if (userlog_format(back, true, &f2) < 0 || strcmp(f1, f2) != 0)
                        fail("format is not a fixed point");
                if (userlog_reader_new(&rd) < 0)
                        fail("reader");
                n = userlog_reader_feed(rd, f1, strlen(f1), NULL, NULL);
                if (n != 1 || userlog_reader_pending(rd) || userlog_reader_skipped(rd) != 0)
                        fail("a formatted event is not one event to the reader");
                userlog_reader_free(rd);
                free(back);
        }
        free(f1);
        free(f2);
        free(again);
        return 0;
}

static int record_cb(const UserlogEvent *ev, const char *text, size_t len, void *userdata) {
        Seen *s = userdata;

        if (len < 8 || len > USERLOG_EVENT_BYTES_MAX || text[len - 1] != '\n' || memcmp(text + len - 4, "...", 3) != 0)
                fail("an event text without its end line, or too long");
        if (memchr(text, 0, len))
                fail("NUL in an event");
        if (s->n < MAX_EVENTS) {
                s->hash[s->n] = fnv(text, len);
                s->type[s->n] = ev->type;
        }
        s->n++;
        return one_event(text, len);
}

static void run(const uint8_t *data, size_t size, size_t step, Seen *s, size_t *ret_skipped) {
        UserlogReader *rd = NULL;
        size_t off = 0;

        if (userlog_reader_new(&rd) < 0)
                fail("reader");
        while (off < size) {
                size_t k = step && size - off > step ? step : size - off;
                if (userlog_reader_feed(rd, data + off, k, record_cb, s) < 0)
                        fail("feed");
                off += k;
        }
        *ret_skipped = userlog_reader_skipped(rd);
        userlog_reader_free(rd);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        static Seen a, b, c;
        size_t sa, sb, sc, split;

        if (size == 0)
                return 0;
        memset(&a, 0, sizeof(a)), memset(&b, 0, sizeof(b)), memset(&c, 0, sizeof(c));
        run(data, size, 0, &a, &sa);
        split = data[0] % (size + 1);
        {
                UserlogReader *rd = NULL;
                if (userlog_reader_new(&rd) < 0)
                        fail("reader");
                if (userlog_reader_feed(rd, data, split, record_cb, &b) < 0 ||
                    userlog_reader_feed(rd, data + split, size - split, record_cb, &b) < 0)
                        fail("feed");
                sb = userlog_reader_skipped(rd);
                userlog_reader_free(rd);
        }
        run(data, size, 7, &c, &sc);
        if (a.n != b.n || a.n != c.n || sa != sb || sa != sc)
                fail("the pieces the bytes come in change the events");
        for (size_t i = 0; i < a.n && i < MAX_EVENTS; i++)
                if (a.hash[i] != b.hash[i] || a.hash[i] != c.hash[i] || a.type[i] != b.type[i])
                        fail("the pieces the bytes come in change an event");
        return 0;
}
