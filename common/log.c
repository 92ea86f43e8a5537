/* SPDX-License-Identifier: Apache-2.0 */
/*
 * log.c — structured logging to journald or to stderr (see log.h).
 */
#define _GNU_SOURCE

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include <systemd/sd-journal.h>

#include "common-internal.h"
#include "log.h"

#define FIELD_NAME_MAX 64

static struct {
        bool opened;
        char ident[64];
        GleanLogTarget target;
        bool journal_missing; /* sd_journal_sendv() drops records silently then */
        int level;
        GleanLogSink sink;
        void *sink_userdata;
} logger = { .level = LOG_INFO };

static const char *const level_names[] = {
        [LOG_EMERG] = "emerg",   [LOG_ALERT] = "alert",   [LOG_CRIT] = "crit", [LOG_ERR] = "error",
        [LOG_WARNING] = "warning", [LOG_NOTICE] = "notice", [LOG_INFO] = "info", [LOG_DEBUG] = "debug",
};

const char *glean_log_level_name(int priority) {
        return level_names[priority & LOG_PRIMASK];
}

int glean_log_level_from_string(const char *s) {
        if (!s || !*s)
                return -EINVAL;
        if (s[0] >= '0' && s[0] <= '7' && !s[1])
                return s[0] - '0';
        if (strcasecmp(s, "err") == 0)
                return LOG_ERR;
        if (strcasecmp(s, "warn") == 0)
                return LOG_WARNING;
        if (strcasecmp(s, "emergency") == 0)
                return LOG_EMERG;
        if (strcasecmp(s, "critical") == 0)
                return LOG_CRIT;
        for (int i = 0; i < (int) ELEMENTSOF(level_names); i++)
                if (strcasecmp(s, level_names[i]) == 0)
                        return i;
        return -EINVAL;
}

void glean_log_set_level(int level) {
        logger.level = level & LOG_PRIMASK;
}

int glean_log_get_level(void) {
        return logger.level;
}

void glean_log_set_sink(GleanLogSink sink, void *userdata) {
        logger.sink = sink;
        logger.sink_userdata = userdata;
}

GleanLogTarget glean_log_target(void) {
        if (!logger.opened)
                glean_log_open(NULL);
        return logger.target;
}

/* systemd's documented test: $JOURNAL_STREAM is "DEV:INO" of the stream
 * that stderr is, when a service's stderr goes to the journal. */
static bool stderr_is_journal(void) {
        const char *e = getenv("JOURNAL_STREAM");
        unsigned long long dev, ino;
        struct stat st;
        int used = 0;

        if (!e || sscanf(e, "%llu:%llu%n", &dev, &ino, &used) != 2 || e[used] != '\0')
                return false;
        if (fstat(STDERR_FILENO, &st) < 0)
                return false;
        return (unsigned long long) st.st_dev == dev && (unsigned long long) st.st_ino == ino;
}

void glean_log_open(const char *ident) {
        const char *e;
        int saved = errno;

        if (!ident || !*ident)
                ident = program_invocation_short_name;
        snprintf(logger.ident, sizeof(logger.ident), "%s", ident && *ident ? ident : "glean");

        e = getenv("GLEAN_LOG");
        if (e && strcmp(e, "journal") == 0)
                logger.target = GLEAN_LOG_TARGET_JOURNAL;
        else if (e && strcmp(e, "stderr") == 0)
                logger.target = GLEAN_LOG_TARGET_STDERR;
        else
                logger.target = stderr_is_journal() ? GLEAN_LOG_TARGET_JOURNAL : GLEAN_LOG_TARGET_STDERR;

        logger.journal_missing = access("/run/systemd/journal/socket", F_OK) < 0;

        int level = glean_log_level_from_string(getenv("GLEAN_LOG_LEVEL"));
        logger.level = level >= 0 ? level : LOG_INFO;
        logger.opened = true;
        errno = saved;
}

bool glean_log_field_name_valid(const char *name) {
        static const char *const reserved[] = { "MESSAGE", "PRIORITY", "SYSLOG_IDENTIFIER", "MESSAGE_ID", "ERRNO" };
        size_t n;

        if (!name || !*name || name[0] == '_' || (name[0] >= '0' && name[0] <= '9'))
                return false;
        for (n = 0; name[n]; n++) {
                char c = name[n];
                if (!((c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_'))
                        return false;
        }
        if (n > FIELD_NAME_MAX)
                return false;
        for (size_t i = 0; i < ELEMENTSOF(reserved); i++)
                if (strcmp(name, reserved[i]) == 0)
                        return false;
        return true;
}

static bool message_id_valid(const char *id) {
        size_t n;

        if (!id)
                return false;
        for (n = 0; id[n]; n++)
                if (!((id[n] >= '0' && id[n] <= '9') || (id[n] >= 'a' && id[n] <= 'f') ||
                      (id[n] >= 'A' && id[n] <= 'F')))
                        return false;
        return n == 32;
}

/* ---- the stderr line ---- */

typedef struct Buf {
        char *s;
        size_t len, cap;
        bool oom;
} Buf;

static void buf_add(Buf *b, const char *s, size_t n) {
        if (b->oom)
                return;
        if (n + 1 > b->cap - b->len) {
                size_t cap = b->cap ? b->cap : 256;
                while (n + 1 > cap - b->len)
                        cap *= 2;
                char *t = realloc(b->s, cap);
                if (!t) {
                        b->oom = true;
                        return;
                }
                b->s = t;
                b->cap = cap;
        }
        memcpy(b->s + b->len, s, n);
        b->len += n;
        b->s[b->len] = '\0';
}

static void buf_str(Buf *b, const char *s) {
        buf_add(b, s, strlen(s));
}

/* Appends s with control bytes escaped; inside quotes also '"' and '\\'. */
static void buf_escaped(Buf *b, const char *s, bool quoted) {
        for (const unsigned char *p = (const unsigned char *) s; *p; p++) {
                char esc[5];
                switch (*p) {
                case '\n':
                        buf_str(b, "\\n");
                        break;
                case '\r':
                        buf_str(b, "\\r");
                        break;
                case '\t':
                        buf_str(b, "\\t");
                        break;
                case '"':
                case '\\':
                        if (quoted)
                                buf_add(b, "\\", 1);
                        buf_add(b, (const char *) p, 1);
                        break;
                default:
                        if (*p < 0x20 || *p == 0x7f) {
                                snprintf(esc, sizeof(esc), "\\x%02x", *p);
                                buf_str(b, esc);
                        } else
                                buf_add(b, (const char *) p, 1);
                }
        }
}

static bool needs_quotes(const char *v) {
        if (!*v)
                return true;
        for (const unsigned char *p = (const unsigned char *) v; *p; p++)
                if (*p <= 0x20 || *p == 0x7f || *p == '"' || *p == '\\' || *p == '=')
                        return true;
        return false;
}

char *glean_log_format_line(unsigned long long realtime_usec, const char *ident, long pid, int priority,
                            const GleanLogField *fields, size_t n, const char *message) {
        time_t secs = (time_t) (realtime_usec / 1000000ULL);
        unsigned ms = (unsigned) (realtime_usec % 1000000ULL / 1000ULL);
        char head[128];
        struct tm tm;
        Buf b = {};

        if (!gmtime_r(&secs, &tm))
                memset(&tm, 0, sizeof(tm));
        snprintf(head, sizeof(head), "%04d-%02d-%02dT%02d:%02d:%02d.%03uZ ", tm.tm_year + 1900, tm.tm_mon + 1,
                 tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, ms);
        buf_str(&b, head);
        buf_escaped(&b, ident ? ident : "glean", false);
        snprintf(head, sizeof(head), "[%ld] %s: ", pid, glean_log_level_name(priority));
        buf_str(&b, head);
        buf_escaped(&b, message ? message : "", false);
        for (size_t i = 0; i < n; i++) {
                const char *v = fields[i].value ? fields[i].value : "";
                buf_str(&b, " ");
                buf_str(&b, fields[i].name);
                buf_str(&b, "=");
                if (needs_quotes(v)) {
                        buf_str(&b, "\"");
                        buf_escaped(&b, v, true);
                        buf_str(&b, "\"");
                } else
                        buf_str(&b, v);
        }
        if (b.oom || !b.s) {
                free(b.s);
                return NULL;
        }
        return b.s;
}

static void write_all(int fd, const char *s, size_t n) {
        while (n > 0) {
                ssize_t k = write(fd, s, n);
                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        return;
                }
                s += k;
                n -= (size_t) k;
        }
}

static void to_stderr(int priority, const GleanLogField *fields, size_t n, const char *message) {
        struct timespec ts;
        char *line;

        clock_gettime(CLOCK_REALTIME, &ts);
        line = glean_log_format_line((unsigned long long) ts.tv_sec * 1000000ULL + (unsigned long long) ts.tv_nsec / 1000,
                                     logger.ident, (long) getpid(), priority, fields, n, message);
        if (!line) {
                write_all(STDERR_FILENO, message, strlen(message));
                write_all(STDERR_FILENO, "\n", 1);
                return;
        }
        size_t len = strlen(line);
        line[len] = '\n'; /* replaces the NUL: one write per record */
        write_all(STDERR_FILENO, line, len + 1);
        free(line);
}

/* ---- journald ---- */

static int to_journal(int priority, const char *message_id, const GleanLogField *fields, size_t n,
                      const char *message) {
        size_t k = 0, max = n + 4;
        struct iovec *iov = calloc(max, sizeof(*iov));
        int r = -ENOMEM;

        if (!iov)
                return -ENOMEM;
#define ADD(...)                                                               \
        do {                                                                   \
                char *s_;                                                      \
                int l_ = asprintf(&s_, __VA_ARGS__);                           \
                if (l_ < 0)                                                    \
                        goto out;                                              \
                iov[k++] = (struct iovec){ .iov_base = s_, .iov_len = (size_t) l_ }; \
        } while (0)
        ADD("MESSAGE=%s", message);
        ADD("PRIORITY=%d", priority);
        ADD("SYSLOG_IDENTIFIER=%s", logger.ident);
        if (message_id)
                ADD("MESSAGE_ID=%s", message_id);
        for (size_t i = 0; i < n; i++)
                ADD("%s=%s", fields[i].name, fields[i].value ? fields[i].value : "");
#undef ADD
        r = sd_journal_sendv(iov, (int) k);
out:
        for (size_t i = 0; i < k; i++)
                free(iov[i].iov_base);
        free(iov);
        return r;
}

/* ---- records ---- */

__attribute__((format(printf, 6, 0))) static void vlog(int priority, const char *message_id, const GleanLogField *fields, size_t n_fields, int err,
                 const char *fmt, va_list ap) {
        _cleanup_free_ char *message = NULL;
        _cleanup_free_ GleanLogField *valid = NULL;
        char errno_text[16];
        size_t n = 0;
        int saved = errno;

        if (!logger.opened)
                glean_log_open(NULL);
        priority &= LOG_PRIMASK;
        if (priority > logger.level)
                goto out;

        errno = err ? err : saved; /* for %m */
        if (vasprintf(&message, fmt, ap) < 0) {
                message = NULL;
                goto out;
        }

        valid = calloc(n_fields + 1, sizeof(GleanLogField));
        if (!valid)
                goto out;
        for (size_t i = 0; i < n_fields; i++)
                if (glean_log_field_name_valid(fields[i].name))
                        valid[n++] = fields[i];
        if (err) {
                snprintf(errno_text, sizeof(errno_text), "%d", err);
                valid[n++] = (GleanLogField){ "ERRNO", errno_text };
        }
        if (!message_id_valid(message_id))
                message_id = NULL;

        if (logger.sink)
                logger.sink(priority, message_id, valid, n, message, logger.sink_userdata);
        else if (logger.target != GLEAN_LOG_TARGET_JOURNAL || logger.journal_missing ||
                 to_journal(priority, message_id, valid, n, message) < 0)
                to_stderr(priority, valid, n, message);
out:
        errno = saved;
}

void glean_log(int priority, const char *message_id, const GleanLogField *fields, size_t n_fields, const char *fmt,
               ...) {
        va_list ap;

        va_start(ap, fmt);
        vlog(priority, message_id, n_fields ? fields : NULL, fields ? n_fields : 0, 0, fmt, ap);
        va_end(ap);
}

int glean_log_errno(int priority, int err, const char *fmt, ...) {
        va_list ap;

        err = err < 0 ? -err : err;
        if (err == 0)
                err = EINVAL;
        va_start(ap, fmt);
        vlog(priority, NULL, NULL, 0, err, fmt, ap);
        va_end(ap);
        return -err;
}
