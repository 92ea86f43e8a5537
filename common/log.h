/* SPDX-License-Identifier: Apache-2.0 */
/*
 * log.h — structured logging: to journald when stderr is connected to the
 * journal (or GLEAN_LOG=journal), else one readable line per record on
 * stderr:
 *
 *   2026-11-22T02:40:00.123Z glean-agent[4242] info: Slot changed state GLEAN_SLOT=slot1 GLEAN_STATE=Owner
 *
 * Priorities are syslog's (LOG_ERR, LOG_INFO, ... from <syslog.h>).
 * Records below the threshold (GLEAN_LOG_LEVEL: debug, info, notice,
 * warning, err/error, crit, alert, emerg or 0..7; default info) are
 * dropped.
 *
 * Fields are NAME=value pairs, sent to journald as they are. A name must be
 * 1..64 characters of A-Z, 0-9 and '_', not start with a digit or '_', and
 * not be one the logger sets itself (MESSAGE, PRIORITY, SYSLOG_IDENTIFIER,
 * MESSAGE_ID, ERRNO); other names are skipped (glean_log_field_name_valid()
 * says which). A message_id is 32 hexadecimal digits (journalctl
 * --new-id128) or NULL; an invalid one is dropped.
 *
 * On stderr a record is one line: control bytes of the message and of the
 * values are escaped (\n, \r, \t, others as \xHH); a value that is empty
 * or holds a space, '"', '\\', '=' or a control byte is quoted ("...", with
 * \" and \\ inside).
 *
 * Not thread-safe: log from one thread at a time (the daemons log from
 * their event loop).
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <syslog.h>

typedef struct GleanLogField {
        const char *name;
        const char *value;
} GleanLogField;

typedef enum GleanLogTarget {
        GLEAN_LOG_TARGET_STDERR,
        GLEAN_LOG_TARGET_JOURNAL,
} GleanLogTarget;

/* Chooses the sink and reads GLEAN_LOG_LEVEL. ident (NULL: the program's
 * name) is copied. May be called again (e.g. after changing the
 * environment). Logging before any call opens with NULL. */
void glean_log_open(const char *ident);

/* Where records go now (the test sink aside). When the journal was chosen
 * but its socket (/run/systemd/journal/socket) was missing at
 * glean_log_open(), or sending fails, records go to stderr instead. */
GleanLogTarget glean_log_target(void);

void glean_log(int priority, const char *message_id, const GleanLogField *fields, size_t n_fields, const char *fmt,
               ...) __attribute__((format(printf, 5, 6)));

/* Logs with an ERRNO= field; %m in fmt stands for strerror(abs(err)).
 * Returns -abs(err) (or -EINVAL when err is 0), for
 * `return glean_log_errno(LOG_ERR, r, "Failed to open %s: %m", path);`. */
int glean_log_errno(int priority, int err, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#define glean_log_debug(...) glean_log(LOG_DEBUG, NULL, NULL, 0, __VA_ARGS__)
#define glean_log_info(...) glean_log(LOG_INFO, NULL, NULL, 0, __VA_ARGS__)
#define glean_log_notice(...) glean_log(LOG_NOTICE, NULL, NULL, 0, __VA_ARGS__)
#define glean_log_warning(...) glean_log(LOG_WARNING, NULL, NULL, 0, __VA_ARGS__)
#define glean_log_error(...) glean_log(LOG_ERR, NULL, NULL, 0, __VA_ARGS__)

/* The threshold: records with priority > level are dropped. */
void glean_log_set_level(int level);
int glean_log_get_level(void);
/* "debug" -> LOG_DEBUG, ..., "err"/"error" -> LOG_ERR, "3" -> 3; -EINVAL. */
int glean_log_level_from_string(const char *s);
/* "debug", "info", "notice", "warning", "error", "crit", "alert", "emerg". */
const char *glean_log_level_name(int priority);

bool glean_log_field_name_valid(const char *name);

/* Test hook: when sink is non-NULL every record that passes the threshold
 * goes to it instead of journald/stderr, with the fields that are valid
 * (invalid names already skipped) and the formatted message. NULL restores
 * the normal sink. */
typedef void (*GleanLogSink)(int priority, const char *message_id, const GleanLogField *fields, size_t n,
                             const char *message, void *userdata);
void glean_log_set_sink(GleanLogSink sink, void *userdata);

/* The stderr line of a record, without the trailing newline, as written
 * (exposed for tests): malloc'd, NULL on ENOMEM. realtime_usec: the time
 * stamp in microseconds since the epoch. */
char *glean_log_format_line(unsigned long long realtime_usec, const char *ident, long pid, int priority,
                            const GleanLogField *fields, size_t n, const char *message);
