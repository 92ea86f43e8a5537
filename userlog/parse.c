/* SPDX-License-Identifier: Apache-2.0 */
/*
 * parse.c — one event's text back into its fields: the header (the ISO
 * date of modern HTCondor or the legacy MM/DD one, UTC with a Z), and the
 * bodies of the types glean writes, read as HTCondor's readEvent reads
 * them (leading tabs or spaces, the usage and bytes lines, the resources
 * table by its columns). Other types are events of their number only.
 * Numbers are scanned by hand with bounds; nothing here trusts the text.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "userlog.h"

#include "common/cleanup.h"

#define NUM_DIGITS_MAX 18

/* ---- scanning ---- */

static const char *skip_ws(const char *s) {
        while (*s == ' ' || *s == '\t')
                s++;
        return s;
}

static const char *lit(const char *s, const char *word) {
        size_t n;

        if (!s)
                return NULL;
        n = strlen(word);
        return strncmp(s, word, n) == 0 ? s + n : NULL;
}

/* An optional '-' and 1..18 digits. */
static const char *num(const char *s, int64_t *ret) {
        bool neg = false;
        int64_t v = 0;
        int n = 0;

        if (!s)
                return NULL;
        if (*s == '-')
                neg = true, s++;
        for (; *s >= '0' && *s <= '9'; s++, n++) {
                if (n >= NUM_DIGITS_MAX)
                        return NULL;
                v = v * 10 + (*s - '0');
        }
        if (n == 0)
                return NULL;
        *ret = neg ? -v : v;
        return s;
}

static const char *num_int(const char *s, int *ret) {
        int64_t v;

        s = num(s, &v);
        if (!s || v < INT32_MIN || v > INT32_MAX)
                return NULL;
        *ret = (int) v;
        return s;
}

/* A decimal number (digits, optionally a fraction) as a double. */
static const char *num_real(const char *s, double *ret) {
        int64_t whole;
        double frac = 0, scale = 1;
        bool neg = *s == '-';

        s = num(s, &whole);
        if (!s)
                return NULL;
        if (*s == '.') {
                int n = 0;
                for (s++; *s >= '0' && *s <= '9'; s++, n++)
                        if (n < NUM_DIGITS_MAX) {
                                scale /= 10;
                                frac += (*s - '0') * scale;
                        }
        }
        *ret = (double) whole + (neg ? -frac : frac);
        return s;
}

static bool at_end(const char *s) {
        return s && *skip_ws(s) == 0;
}

/* A field as format writes it back: control characters as spaces, no
 * blanks around it. */
static void copy_field(char *dst, size_t size, const char *src) {
        size_t n = 0;

        while (*src == ' ' || *src == '\t' || (unsigned char) *src < 0x20 || *src == 0x7f) {
                if (!*src)
                        break;
                src++;
        }
        for (; *src && n + 1 < size; src++) {
                unsigned char c = (unsigned char) *src;
                dst[n++] = c < 0x20 || c == 0x7f ? ' ' : (char) c;
        }
        while (n > 0 && dst[n - 1] == ' ')
                n--;
        dst[n] = 0;
}

/* ---- the header ---- */

/* "DD:DD:DD" */
static const char *clock_time(const char *s, struct tm *tm) {
        int h, m, sec;

        if (!(s = num_int(s, &h)) || !(s = lit(s, ":")) || !(s = num_int(s, &m)) || !(s = lit(s, ":")) ||
            !(s = num_int(s, &sec)))
                return NULL;
        if (h < 0 || h > 23 || m < 0 || m > 59 || sec < 0 || sec > 60)
                return NULL;
        tm->tm_hour = h, tm->tm_min = m, tm->tm_sec = sec;
        return s;
}

/* "YYYY-MM-DD HH:MM:SS[.fff][Z]" or the legacy "MM/DD HH:MM:SS" (this year). */
static const char *header_date(const char *s, time_t *ret) {
        struct tm tm = { .tm_isdst = -1 };
        int a, b, c;
        bool utc = false;
        time_t t;

        if (!(s = num_int(s, &a)))
                return NULL;
        if (*s == '/') {
                time_t now = time(NULL);
                struct tm today;
                if (!(s = num_int(s + 1, &b)) || *s != ' ')
                        return NULL;
                localtime_r(&now, &today);
                tm.tm_year = today.tm_year, tm.tm_mon = a - 1, tm.tm_mday = b;
        } else {
                if (!(s = lit(s, "-")) || !(s = num_int(s, &b)) || !(s = lit(s, "-")) || !(s = num_int(s, &c)) ||
                    (*s != ' ' && *s != 'T'))
                        return NULL;
                if (a < 1900 || a > 9999)
                        return NULL;
                tm.tm_year = a - 1900, tm.tm_mon = b - 1, tm.tm_mday = c;
        }
        if (tm.tm_mon < 0 || tm.tm_mon > 11 || tm.tm_mday < 1 || tm.tm_mday > 31)
                return NULL;
        if (!(s = clock_time(s + 1, &tm)))
                return NULL;
        if (*s == '.')
                for (s++; *s >= '0' && *s <= '9'; s++)
                        ;
        if (*s == 'Z')
                utc = true, s++;
        t = utc ? timegm(&tm) : mktime(&tm);
        if (t == (time_t) -1)
                return NULL;
        *ret = t;
        return s;
}

/* "NNN (C.P.S) DATE rest": the fields, and the rest (the body's first line). */
static const char *header(const char *s, UserlogEvent *ev) {
        int64_t type;

        if (!(s[0] >= '0' && s[0] <= '9' && s[1] >= '0' && s[1] <= '9' && s[2] >= '0' && s[2] <= '9' && s[3] == ' '))
                return NULL;
        (void) num(s, &type);
        userlog_event_init(ev, (int) type, 0, 0, 0);
        s = lit(s + 4, "(");
        if (!(s = num(s, &ev->cluster)) || !(s = lit(s, ".")) || !(s = num(s, &ev->proc)) || !(s = lit(s, ".")) ||
            !(s = num(s, &ev->subproc)) || !(s = lit(s, ") ")))
                return NULL;
        if (!(s = header_date(s, &ev->time)))
                return NULL;
        if (*s == 0)
                return s;
        return *s == ' ' ? s + 1 : NULL;
}

/* ---- body lines shared by 004 and 005 ---- */

typedef struct Lines {
        char **v; /* untrimmed (the table needs its columns), without \r\n */
        size_t n;
} Lines;

static bool usage_line(const char *s, UserlogEvent *ev) {
        static const struct {
                const char *label;
                size_t off;
        } labels[] = {
                { "Run Remote Usage", offsetof(UserlogEvent, run_remote) },
                { "Run Local Usage", offsetof(UserlogEvent, run_local) },
                { "Total Remote Usage", offsetof(UserlogEvent, total_remote) },
                { "Total Local Usage", offsetof(UserlogEvent, total_local) },
        };
        int64_t d[2], h[2], m[2], sec[2];

        s = lit(s, "Usr ");
        for (int i = 0; i < 2; i++) {
                if (i == 1)
                        s = lit(s, ", Sys ");
                if (!(s = num(s, &d[i])) || !(s = lit(s, " ")) || !(s = num(s, &h[i])) || !(s = lit(s, ":")) ||
                    !(s = num(s, &m[i])) || !(s = lit(s, ":")) || !(s = num(s, &sec[i])))
                        return false;
                if (d[i] < 0 || d[i] > 1000000000 || h[i] < 0 || m[i] < 0 || sec[i] < 0 || h[i] > 1000 ||
                    m[i] > 1000 || sec[i] > 1000)
                        return false;
        }
        if (!(s = lit(s, "  -  ")))
                return false;
        for (size_t i = 0; i < sizeof(labels) / sizeof(labels[0]); i++)
                if (strcmp(s, labels[i].label) == 0) {
                        UserlogUsage *u = (UserlogUsage *) ((char *) ev + labels[i].off);
                        u->usr = d[0] * 86400 + h[0] * 3600 + m[0] * 60 + sec[0];
                        u->sys = d[1] * 86400 + h[1] * 3600 + m[1] * 60 + sec[1];
                        return true;
                }
        return false;
}

static bool bytes_line(const char *s, UserlogEvent *ev) {
        static const struct {
                const char *label;
                size_t off;
        } labels[] = {
                { "Run Bytes Sent By Job", offsetof(UserlogEvent, sent_bytes) },
                { "Run Bytes Received By Job", offsetof(UserlogEvent, recvd_bytes) },
                { "Total Bytes Sent By Job", offsetof(UserlogEvent, total_sent_bytes) },
                { "Total Bytes Received By Job", offsetof(UserlogEvent, total_recvd_bytes) },
        };
        double v;

        if (!(s = num_real(s, &v)) || !(s = lit(s, "  -  ")))
                return false;
        for (size_t i = 0; i < sizeof(labels) / sizeof(labels[0]); i++)
                if (strcmp(s, labels[i].label) == 0) {
                        *(double *) ((char *) ev + labels[i].off) = v;
                        return true;
                }
        return false;
}

static bool termination_line(const char *s, UserlogEvent *ev) {
        const char *p;

        if ((p = lit(s, "(1) Normal termination (return value ")) && (p = num_int(p, &ev->return_value)) &&
            strcmp(p, ")") == 0) {
                ev->normal = true;
                return true;
        }
        if ((p = lit(s, "(0) Abnormal termination (signal ")) && (p = num_int(p, &ev->signal)) && strcmp(p, ")") == 0) {
                ev->normal = false;
                return true;
        }
        if (strcmp(s, "(0) No core file") == 0)
                return true;
        if ((p = lit(s, "(1) Corefile in: "))) {
                copy_field(ev->core_file, sizeof(ev->core_file), p);
                return true;
        }
        return false;
}

/* The right edges of the columns after the header's colon. */
typedef struct Table {
        size_t colon;
        size_t edge[3];
        size_t ncols;
} Table;

static bool table_header(const char *raw, Table *t) {
        const char *s = skip_ws(raw), *colon = strchr(raw, ':'), *p;

        if (!lit(s, "Partitionable Resources ") || !colon)
                return false;
        t->colon = (size_t) (colon - raw);
        t->ncols = 0;
        for (p = colon + 1; *p && t->ncols < 3;) {
                while (*p == ' ')
                        p++;
                if (!*p)
                        break;
                while (*p && *p != ' ')
                        p++;
                t->edge[t->ncols++] = (size_t) (p - (colon + 1));
        }
        return t->ncols >= 2;
}

/* A cell: the text of the columns (prev, edge] after the colon, trimmed. */
static bool cell(const char *after, size_t len, size_t from, size_t to, double *ret) {
        char buf[48];
        size_t n;
        const char *s, *e;

        if (from >= len)
                return false;
        if (to > len)
                to = len;
        n = to - from;
        if (n >= sizeof(buf))
                return false;
        memcpy(buf, after + from, n);
        buf[n] = 0;
        s = skip_ws(buf);
        if (!*s)
                return false;
        e = num_real(s, ret);
        return e && at_end(e);
}

static bool table_row(const char *raw, const Table *t, UserlogEvent *ev) {
        const char *colon = strchr(raw, ':'), *after;
        char name[64];
        double v[3] = { 0 };
        bool has[3] = { false };
        size_t len, prev = 0;
        const char *s = skip_ws(raw), *paren;
        size_t n;

        if (!colon || colon < s)
                return false;
        n = (size_t) (colon - s);
        paren = memchr(s, '(', n);
        if (paren)
                n = (size_t) (paren - s);
        if (n >= sizeof(name))
                n = sizeof(name) - 1;
        memcpy(name, s, n);
        name[n] = 0;
        while (n > 0 && name[n - 1] == ' ')
                name[--n] = 0;
        if (n == 0 || n >= sizeof(ev->resources[0].name))
                return false;
        after = colon + 1;
        len = strlen(after);
        /* Header and rows print the same widths after their colons. */
        for (size_t c = 0; c < t->ncols; c++) {
                has[c] = cell(after, len, prev, t->edge[c], &v[c]);
                prev = t->edge[c];
        }
        (void) userlog_event_set_resource(ev, name, v[0], has[0], v[1], has[1], v[2], has[2]);
        return true;
}

/* The body lines of 004 and 005 after the first. */
static int terminated_body(const Lines *l, UserlogEvent *ev) {
        Table t = { 0 };
        bool in_table = false;

        for (size_t i = 1; i < l->n; i++) {
                const char *s = skip_ws(l->v[i]);
                if (!*s) {
                        in_table = false;
                        continue;
                }
                if (in_table && table_row(l->v[i], &t, ev))
                        continue;
                in_table = false;
                if (table_header(l->v[i], &t)) {
                        in_table = true;
                        continue;
                }
                if (usage_line(s, ev) || bytes_line(s, ev) || termination_line(s, ev))
                        continue;
                if (ev->type == USERLOG_EVICTED) {
                        const char *p;
                        if (strcmp(s, "(0) Job terminated and was requeued") == 0) {
                                ev->requeued = true;
                                continue;
                        }
                        if (strcmp(s, "(1) Job was checkpointed.") == 0) {
                                ev->checkpointed = true;
                                continue;
                        }
                        if (strcmp(s, "(0) CPU times") == 0 || strcmp(s, "(0) Job was not checkpointed.") == 0)
                                continue;
                        if ((p = lit(s, "Reason: ")) || (ev->requeued && !ev->reason[0] && (p = s))) {
                                copy_field(ev->reason, sizeof(ev->reason), p);
                                continue;
                        }
                }
                /* anything else (HTCondor's later additions): not ours */
        }
        return 0;
}

/* ---- the bodies ---- */

static int body(const char *first, const Lines *l, UserlogEvent *ev) {
        const char *p;

        switch (ev->type) {
        case USERLOG_SUBMIT:
                if (!(p = lit(first, "Job submitted from host:")))
                        return -EBADMSG;
                copy_field(ev->host, sizeof(ev->host), skip_ws(p));
                if (l->n > 1)
                        copy_field(ev->notes, sizeof(ev->notes), skip_ws(l->v[1]));
                return 0;
        case USERLOG_EXECUTE:
                if (!(p = lit(first, "Job executing on host:")))
                        return -EBADMSG;
                copy_field(ev->host, sizeof(ev->host), skip_ws(p));
                for (size_t i = 1; i < l->n; i++)
                        if ((p = lit(skip_ws(l->v[i]), "SlotName: ")))
                                copy_field(ev->slot_name, sizeof(ev->slot_name), p);
                return 0;
        case USERLOG_EXECUTABLE_ERROR:
                if (!(p = lit(first, "(")) || !(p = num_int(p, &ev->exec_error)) || !lit(p, ")"))
                        return -EBADMSG;
                return 0;
        case USERLOG_EVICTED:
                if (!(p = lit(first, "Job was evicted.")))
                        return -EBADMSG;
                if ((p = lit(p, " Code ")) && (p = num_int(p, &ev->code)) && (p = lit(p, " Subcode ")))
                        (void) num_int(p, &ev->subcode);
                return terminated_body(l, ev);
        case USERLOG_TERMINATED:
                if (!lit(first, "Job terminated."))
                        return -EBADMSG;
                return terminated_body(l, ev);
        case USERLOG_IMAGE_SIZE:
                if (!(p = lit(first, "Image size of job updated: ")) || !(p = num(p, &ev->image_size_kb)))
                        return -EBADMSG;
                for (size_t i = 1; i < l->n; i++) {
                        int64_t v;
                        const char *s = num(skip_ws(l->v[i]), &v);
                        if (!(s = lit(s, "  -  ")))
                                continue;
                        if (strcmp(s, "MemoryUsage of job (MB)") == 0)
                                ev->memory_mb = v;
                        else if (strcmp(s, "ResidentSetSize of job (KB)") == 0)
                                ev->rss_kb = v;
                        else if (strcmp(s, "ProportionalSetSize of job (KB)") == 0)
                                ev->pss_kb = v;
                }
                return 0;
        case USERLOG_ABORTED:
        case USERLOG_RELEASED:
                if (!lit(first, ev->type == USERLOG_ABORTED ? "Job was aborted" : "Job was released."))
                        return -EBADMSG;
                if (l->n > 1)
                        copy_field(ev->reason, sizeof(ev->reason), skip_ws(l->v[1]));
                return 0;
        case USERLOG_SUSPENDED:
                if (!lit(first, "Job was suspended."))
                        return -EBADMSG;
                for (size_t i = 1; i < l->n; i++)
                        if ((p = lit(skip_ws(l->v[i]), "Number of processes actually suspended: ")))
                                (void) num_int(p, &ev->num_pids);
                return 0;
        case USERLOG_UNSUSPENDED:
                return lit(first, "Job was unsuspended.") ? 0 : -EBADMSG;
        case USERLOG_HELD:
                if (!lit(first, "Job was held."))
                        return -EBADMSG;
                for (size_t i = 1; i < l->n; i++) {
                        const char *s = skip_ws(l->v[i]);
                        if ((p = lit(s, "Code ")) && (p = num_int(p, &ev->code)) && (p = lit(p, " Subcode ")))
                                (void) num_int(p, &ev->subcode);
                        else if (i == 1 && strcmp(s, "Reason unspecified") != 0)
                                copy_field(ev->reason, sizeof(ev->reason), s);
                }
                return 0;
        case USERLOG_FILE_TRANSFER:
                for (int k = USERLOG_XFER_NONE + 1; k < USERLOG_XFER__MAX; k++)
                        if (strcmp(first, userlog_transfer_words(k)) == 0)
                                ev->transfer = k;
                if (ev->transfer == USERLOG_XFER_NONE)
                        return -EBADMSG;
                for (size_t i = 1; i < l->n; i++) {
                        const char *s = skip_ws(l->v[i]);
                        int64_t v;
                        if ((p = lit(s, "Seconds spent in queue: ")) && num(p, &v) && v >= 0)
                                ev->queueing_delay = v;
                        else if ((p = lit(s, "Transferring to host: ")))
                                copy_field(ev->host, sizeof(ev->host), p);
                }
                return 0;
        default:
                return 0; /* known by its number only */
        }
}

int userlog_parse_event(const char *text, size_t len, UserlogEvent *ret, char *why, size_t whylen) {
        _cleanup_free_ char *copy = NULL;
        _cleanup_free_ char **v = NULL;
        UserlogEvent ev;
        Lines l = { 0 };
        const char *first;
        size_t nlines = 1;
        char *p;
        int r;

        if (!text || !ret)
                return -EINVAL;
        if (len > USERLOG_EVENT_BYTES_MAX)
                return glean_why(-EBADMSG, why, whylen, "event of %zu bytes, more than %d", len,
                                 USERLOG_EVENT_BYTES_MAX);
        if (memchr(text, 0, len))
                return glean_why(-EBADMSG, why, whylen, "NUL byte in the event");
        copy = strndup(text, len);
        if (!copy)
                return -ENOMEM;
        for (p = copy; (p = strchr(p, '\n')); p++)
                nlines++;
        if (nlines > USERLOG_EVENT_LINES_MAX + 2)
                return glean_why(-EBADMSG, why, whylen, "event of %zu lines, more than %d", nlines,
                                 USERLOG_EVENT_LINES_MAX);
        v = calloc(nlines, sizeof(*v));
        if (!v)
                return -ENOMEM;
        for (p = copy; p;) {
                char *nl = strchr(p, '\n');
                size_t n;
                if (nl)
                        *nl = 0;
                n = strlen(p);
                if (n > 0 && p[n - 1] == '\r')
                        p[--n] = 0;
                if (strcmp(p, "...") == 0)
                        break; /* the end; anything after it is not this event */
                v[l.n++] = p;
                p = nl ? nl + 1 : NULL;
        }
        /* a trailing empty line of the split is no line */
        while (l.n > 1 && !*v[l.n - 1] && l.n == nlines)
                l.n--;
        l.v = v;
        if (l.n == 0 || !(first = header(v[0], &ev)))
                return glean_why(-EBADMSG, why, whylen, "not an event header: '%.40s'", l.n ? v[0] : "");
        r = body(first, &l, &ev);
        if (r < 0)
                return glean_why(r, why, whylen, "event %03d: unexpected first line '%.60s'", ev.type, first);
        *ret = ev;
        return 0;
}
