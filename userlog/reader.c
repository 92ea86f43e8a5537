/* SPDX-License-Identifier: Apache-2.0 */
/*
 * reader.c — a log's bytes, fed as they come (a file being appended),
 * into events: lines gathered from a header line to the "..." line, each
 * gathering parsed whole. Bounded: a line longer than USERLOG_LINE_MAX is
 * dropped as it arrives (never stored), an event of more than
 * USERLOG_EVENT_LINES_MAX lines or USERLOG_EVENT_BYTES_MAX bytes is
 * dropped up to its "..." line; both, and lines outside any event, are
 * garbage, skipped and counted once per stretch. A partial last line or
 * event is kept until the bytes that complete it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "userlog.h"

struct UserlogReader {
        char line[USERLOG_LINE_MAX + 1];
        size_t line_len;
        bool line_bad; /* too long, or holds a NUL */

        char *event; /* the lines of the event being gathered */
        size_t event_len, event_lines;
        bool in_event, event_bad, in_garbage;

        size_t skipped;
};

int userlog_reader_new(UserlogReader **ret) {
        UserlogReader *r = calloc(1, sizeof(*r));

        if (!r)
                return -ENOMEM;
        r->event = malloc(USERLOG_EVENT_BYTES_MAX);
        if (!r->event) {
                free(r);
                return -ENOMEM;
        }
        *ret = r;
        return 0;
}

void userlog_reader_free(UserlogReader *r) {
        if (!r)
                return;
        free(r->event);
        free(r);
}

size_t userlog_reader_skipped(const UserlogReader *r) {
        return r ? r->skipped : 0;
}

bool userlog_reader_pending(const UserlogReader *r) {
        return r && (r->in_event || r->line_len > 0 || r->line_bad);
}

static void garbage(UserlogReader *r) {
        if (!r->in_garbage)
                r->skipped++;
        r->in_garbage = true;
}

static bool is_sync(const char *s, size_t n) {
        if (n > 0 && s[n - 1] == '\r')
                n--;
        return n == 3 && memcmp(s, "...", 3) == 0;
}

/* Looks like "NNN (": a header line (the full check comes at the end). */
static bool is_header(const char *s, size_t n) {
        return n >= 5 && s[0] >= '0' && s[0] <= '9' && s[1] >= '0' && s[1] <= '9' && s[2] >= '0' && s[2] <= '9' &&
               s[3] == ' ' && s[4] == '(';
}

static void start_event(UserlogReader *r, const char *s, size_t n) {
        r->in_event = true;
        r->event_bad = false;
        r->in_garbage = false;
        memcpy(r->event, s, n);
        r->event[n] = '\n';
        r->event_len = n + 1;
        r->event_lines = 1;
}

/* One whole line (without its \n); returns 1 when it completed an event
 * that went to fn, fn's negative return, else 0. */
static int line(UserlogReader *r, const char *s, size_t n, bool bad, UserlogEventFn fn, void *userdata) {
        if (!r->in_event) {
                if (bad || !is_header(s, n)) {
                        garbage(r);
                        return 0;
                }
                start_event(r, s, n);
                return 0;
        }
        if (!bad && is_sync(s, n)) {
                UserlogEvent ev;
                int k;
                r->in_event = false;
                if (r->event_bad || r->event_len + n + 1 > USERLOG_EVENT_BYTES_MAX) {
                        garbage(r);
                        r->in_garbage = false; /* the "..." ends the stretch */
                        return 0;
                }
                memcpy(r->event + r->event_len, s, n);
                r->event_len += n;
                r->event[r->event_len++] = '\n';
                if (userlog_parse_event(r->event, r->event_len, &ev, NULL, 0) < 0) {
                        garbage(r);
                        r->in_garbage = false;
                        return 0;
                }
                k = fn ? fn(&ev, r->event, r->event_len, userdata) : 0;
                return k < 0 ? k : 1;
        }
        if (!bad && is_header(s, n)) {
                /* a new event before this one's "...": this one is lost */
                r->skipped++;
                start_event(r, s, n);
                return 0;
        }
        if (r->event_bad)
                return 0;
        if (bad || r->event_lines >= USERLOG_EVENT_LINES_MAX || r->event_len + n + 1 + 4 > USERLOG_EVENT_BYTES_MAX) {
                r->event_bad = true;
                return 0;
        }
        memcpy(r->event + r->event_len, s, n);
        r->event_len += n;
        r->event[r->event_len++] = '\n';
        r->event_lines++;
        return 0;
}

int userlog_reader_feed(UserlogReader *r, const void *data, size_t n, UserlogEventFn fn, void *userdata) {
        const char *p = data, *end = p + n;
        int delivered = 0;

        if (!r || (!data && n))
                return -EINVAL;
        while (p < end) {
                const char *nl = memchr(p, '\n', (size_t) (end - p));
                size_t take = (size_t) ((nl ? nl : end) - p);
                int k;

                if (!r->line_bad) {
                        if (memchr(p, 0, take))
                                r->line_bad = true;
                        else if (r->line_len + take > USERLOG_LINE_MAX)
                                r->line_bad = true;
                        else {
                                memcpy(r->line + r->line_len, p, take);
                                r->line_len += take;
                        }
                }
                p += take;
                if (!nl)
                        break;
                p++;
                r->line[r->line_len] = 0;
                k = line(r, r->line, r->line_len, r->line_bad, fn, userdata);
                r->line_len = 0;
                r->line_bad = false;
                if (k < 0)
                        return k;
                if (delivered < INT32_MAX)
                        delivered += k;
        }
        return delivered;
}
