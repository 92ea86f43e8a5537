/* SPDX-License-Identifier: Apache-2.0 */
/*
 * format.c — an event's text as HTCondor writes it in the user log: the
 * header (condor_event.cpp's formatHeader with ISO_DATE), each type's body
 * (its formatBody: the same words, tabs and spacing, the usage lines, the
 * bytes lines, the Partitionable Resources table) and the "..." line.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "userlog.h"

#include "common/cleanup.h"

static const char *const transfer_words[USERLOG_XFER__MAX] = {
        [USERLOG_XFER_IN_QUEUED] = "Entered queue to transfer input files",
        [USERLOG_XFER_IN_STARTED] = "Started transferring input files",
        [USERLOG_XFER_IN_FINISHED] = "Finished transferring input files",
        [USERLOG_XFER_OUT_QUEUED] = "Entered queue to transfer output files",
        [USERLOG_XFER_OUT_STARTED] = "Started transferring output files",
        [USERLOG_XFER_OUT_FINISHED] = "Finished transferring output files",
};

const char *userlog_transfer_words(int kind) {
        return kind > USERLOG_XFER_NONE && kind < USERLOG_XFER__MAX ? transfer_words[kind] : NULL;
}

const char *userlog_type_name(int type) {
        switch (type) {
        case USERLOG_SUBMIT: return "ULOG_SUBMIT";
        case USERLOG_EXECUTE: return "ULOG_EXECUTE";
        case USERLOG_EXECUTABLE_ERROR: return "ULOG_EXECUTABLE_ERROR";
        case USERLOG_EVICTED: return "ULOG_JOB_EVICTED";
        case USERLOG_TERMINATED: return "ULOG_JOB_TERMINATED";
        case USERLOG_IMAGE_SIZE: return "ULOG_IMAGE_SIZE";
        case USERLOG_ABORTED: return "ULOG_JOB_ABORTED";
        case USERLOG_SUSPENDED: return "ULOG_JOB_SUSPENDED";
        case USERLOG_UNSUSPENDED: return "ULOG_JOB_UNSUSPENDED";
        case USERLOG_HELD: return "ULOG_JOB_HELD";
        case USERLOG_RELEASED: return "ULOG_JOB_RELEASED";
        case USERLOG_FILE_TRANSFER: return "ULOG_FILE_TRANSFER";
        default: return NULL;
        }
}

void userlog_event_init(UserlogEvent *ev, int type, int64_t cluster, int64_t proc, time_t t) {
        memset(ev, 0, sizeof(*ev));
        ev->type = type;
        ev->cluster = cluster;
        ev->proc = proc;
        ev->time = t;
        ev->normal = true;
        ev->image_size_kb = ev->memory_mb = ev->rss_kb = ev->pss_kb = -1;
        ev->queueing_delay = -1;
}

int userlog_event_set_resource(UserlogEvent *ev, const char *name, double use, bool has_use, double request,
                               bool has_request, double allocated, bool has_allocated) {
        UserlogResource *res = NULL;

        if (!name || !*name || strlen(name) >= sizeof(res->name))
                return -EINVAL;
        for (size_t i = 0; i < ev->n_resources; i++)
                if (strcmp(ev->resources[i].name, name) == 0)
                        res = &ev->resources[i];
        if (!res) {
                if (ev->n_resources >= USERLOG_RESOURCES_MAX)
                        return -ENOSPC;
                res = &ev->resources[ev->n_resources++];
        }
        memset(res, 0, sizeof(*res));
        snprintf(res->name, sizeof(res->name), "%s", name);
        res->use = use, res->has_use = has_use;
        res->request = request, res->has_request = has_request;
        res->allocated = allocated, res->has_allocated = has_allocated;
        return 0;
}

/* ---- a growing text ---- */

typedef struct Out {
        FILE *f;
} Out;

__attribute__((format(printf, 2, 3))) static void out(Out *o, const char *fmt, ...) {
        va_list ap;
        va_start(ap, fmt);
        vfprintf(o->f, fmt, ap);
        va_end(ap);
}

/* A string field as one line: control characters (a newline above all,
 * which could forge a "..." line or a whole event) become spaces. */
static void out_field(Out *o, const char *s) {
        for (; *s; s++) {
                unsigned char c = (unsigned char) *s;
                fputc(c < 0x20 || c == 0x7f ? ' ' : c, o->f);
        }
}

static void out_usage(Out *o, const UserlogUsage *u) {
        long long us = u->usr < 0 ? 0 : u->usr, ss = u->sys < 0 ? 0 : u->sys;
        out(o, "\tUsr %lld %02lld:%02lld:%02lld, Sys %lld %02lld:%02lld:%02lld", us / 86400, us % 86400 / 3600,
            us % 3600 / 60, us % 60, ss / 86400, ss % 86400 / 3600, ss % 3600 / 60, ss % 60);
}

/* formatUsageAd's value: %.2f when there is a fraction, else an integer. */
static bool value_text(double v, bool has, char *buf, size_t len) {
        double whole;

        if (!has) {
                buf[0] = 0;
                return false;
        }
        if (!isfinite(v) || fabs(v) >= 9e18) {
                snprintf(buf, len, "%.0f", v); /* no integer holds it */
                return false;
        }
        if (modf(v, &whole) > 0.0) {
                snprintf(buf, len, "%.2f", v);
                return true;
        }
        snprintf(buf, len, "%lld", (long long) whole);
        return false;
}

static bool bare_integer(const char *s) {
        if (!*s)
                return false;
        while (*s >= '0' && *s <= '9')
                s++;
        return *s == 0;
}

static int cmp_resource(const void *a, const void *b) {
        return strcmp(((const UserlogResource *) a)->name, ((const UserlogResource *) b)->name);
}

static const char *resource_unit(const char *name) {
        if (strcmp(name, "Memory") == 0 || strcmp(name, "GpusMemory") == 0)
                return " (MB)";
        if (strcmp(name, "Disk") == 0)
                return " (KB)";
        if (strcmp(name, "Gpus") == 0)
                return " (Average)";
        if (strcmp(name, "TimeExecute") == 0 || strcmp(name, "TimeSlotBusy") == 0)
                return " (s)";
        return "";
}

#define COLS 3 /* Usage, Request, Allocated */

/* The Partitionable Resources table, laid out as formatUsageAd does. */
static void out_resources(Out *o, const UserlogEvent *ev) {
        UserlogResource rows[USERLOG_RESOURCES_MAX];
        char text[USERLOG_RESOURCES_MAX][COLS][40];
        bool frac[COLS] = { false };
        int width[COLS] = { 8, 8, 0 }, wres = (int) sizeof("Memory (MB)");
        size_t n = ev->n_resources;

        if (n == 0)
                return;
        memcpy(rows, ev->resources, n * sizeof(rows[0]));
        qsort(rows, n, sizeof(rows[0]), cmp_resource);
        for (size_t i = 0; i < n; i++) {
                frac[0] |= value_text(rows[i].use, rows[i].has_use, text[i][0], sizeof(text[i][0]));
                frac[1] |= value_text(rows[i].request, rows[i].has_request, text[i][1], sizeof(text[i][1]));
                frac[2] |= value_text(rows[i].allocated, rows[i].has_allocated, text[i][2], sizeof(text[i][2]));
        }
        for (size_t i = 0; i < n; i++) {
                for (int c = 0; c < COLS; c++) {
                        if (frac[c] && bare_integer(text[i][c]))
                                strcat(text[i][c], "   ");
                        if ((int) strlen(text[i][c]) > width[c])
                                width[c] = (int) strlen(text[i][c]);
                }
                if ((int) strlen(rows[i].name) > wres)
                        wres = (int) strlen(rows[i].name);
        }
        out(o, "\tPartitionable Resources : %*s %*s %*s %s\n", width[0], "Usage", width[1], "Request",
            width[2] > 9 ? width[2] : 9, width[2] ? "Allocated" : "", "");
        for (size_t i = 0; i < n; i++) {
                char label[64];
                snprintf(label, sizeof(label), "%.31s%s", rows[i].name, resource_unit(rows[i].name));
                out(o, "\t   %-*s : %*s %*s %*s %s\n", wres + 8, label, width[0], text[i][0], width[1], text[i][1],
                    width[2] > 9 ? width[2] : 9, text[i][2], "");
        }
}

static void out_termination(Out *o, const UserlogEvent *ev, bool tab_after) {
        if (ev->normal) {
                out(o, "\t(1) Normal termination (return value %d)\n%s", ev->return_value, tab_after ? "\t" : "");
                return;
        }
        out(o, "\t(0) Abnormal termination (signal %d)\n", ev->signal);
        if (ev->core_file[0]) {
                out(o, "\t(1) Corefile in: ");
                out_field(o, ev->core_file);
                out(o, "\n%s", tab_after ? "\t" : "");
        } else
                out(o, "\t(0) No core file\n%s", tab_after ? "\t" : "");
}

/* ---- the bodies ---- */

static int body_submit(Out *o, const UserlogEvent *ev) {
        out(o, "Job submitted from host: ");
        out_field(o, ev->host);
        out(o, "\n");
        if (ev->notes[0]) {
                out(o, "    ");
                out_field(o, ev->notes);
                out(o, "\n");
        }
        return 0;
}

static int body_execute(Out *o, const UserlogEvent *ev) {
        out(o, "Job executing on host: ");
        out_field(o, ev->host);
        out(o, "\n");
        if (ev->slot_name[0]) {
                out(o, "\tSlotName: ");
                out_field(o, ev->slot_name);
                out(o, "\n");
        }
        return 0;
}

static int body_executable_error(Out *o, const UserlogEvent *ev) {
        switch (ev->exec_error) {
        case USERLOG_EXEC_NOT_EXECUTABLE: out(o, "(%d) Job file not executable.\n", ev->exec_error); break;
        case USERLOG_EXEC_BAD_LINK: out(o, "(%d) Job not properly linked for Condor.\n", ev->exec_error); break;
        default: out(o, "(%d) [Bad error number.]\n", ev->exec_error); break;
        }
        return 0;
}

static int body_evicted(Out *o, const UserlogEvent *ev) {
        if (ev->code != 0)
                out(o, "Job was evicted. Code %d Subcode %d\n\t", ev->code, ev->subcode);
        else
                out(o, "Job was evicted.\n\t");
        if (ev->requeued)
                out(o, "(0) Job terminated and was requeued\n\t");
        else if (ev->checkpointed)
                out(o, "(1) Job was checkpointed.\n\t");
        else
                out(o, "(0) CPU times\n\t");
        out_usage(o, &ev->run_remote);
        out(o, "  -  Run Remote Usage\n\t");
        out_usage(o, &ev->run_local);
        out(o, "  -  Run Local Usage\n");
        out(o, "\t%.0f  -  Run Bytes Sent By Job\n", ev->sent_bytes);
        out(o, "\t%.0f  -  Run Bytes Received By Job\n", ev->recvd_bytes);
        if (ev->requeued)
                out_termination(o, ev, false);
        if (ev->reason[0]) {
                out(o, ev->requeued ? "\t" : "\tReason: ");
                out_field(o, ev->reason);
                out(o, "\n");
        }
        out_resources(o, ev);
        return 0;
}

static int body_terminated(Out *o, const UserlogEvent *ev) {
        out(o, "Job terminated.\n");
        out_termination(o, ev, true);
        out_usage(o, &ev->run_remote);
        out(o, "  -  Run Remote Usage\n\t");
        out_usage(o, &ev->run_local);
        out(o, "  -  Run Local Usage\n\t");
        out_usage(o, &ev->total_remote);
        out(o, "  -  Total Remote Usage\n\t");
        out_usage(o, &ev->total_local);
        out(o, "  -  Total Local Usage\n");
        out(o, "\t%.0f  -  Run Bytes Sent By Job\n", ev->sent_bytes);
        out(o, "\t%.0f  -  Run Bytes Received By Job\n", ev->recvd_bytes);
        out(o, "\t%.0f  -  Total Bytes Sent By Job\n", ev->total_sent_bytes);
        out(o, "\t%.0f  -  Total Bytes Received By Job\n", ev->total_recvd_bytes);
        out_resources(o, ev);
        return 0;
}

static int body_image_size(Out *o, const UserlogEvent *ev) {
        out(o, "Image size of job updated: %lld\n", (long long) ev->image_size_kb);
        if (ev->memory_mb >= 0)
                out(o, "\t%lld  -  MemoryUsage of job (MB)\n", (long long) ev->memory_mb);
        if (ev->rss_kb >= 0)
                out(o, "\t%lld  -  ResidentSetSize of job (KB)\n", (long long) ev->rss_kb);
        if (ev->pss_kb >= 0)
                out(o, "\t%lld  -  ProportionalSetSize of job (KB)\n", (long long) ev->pss_kb);
        return 0;
}

/* "<words>\n" then "\t<reason>\n" when there is one (009, 013). */
static int body_words_reason(Out *o, const UserlogEvent *ev, const char *words) {
        out(o, "%s\n", words);
        if (ev->reason[0]) {
                out(o, "\t");
                out_field(o, ev->reason);
                out(o, "\n");
        }
        return 0;
}

static int body_held(Out *o, const UserlogEvent *ev) {
        out(o, "Job was held.\n\t");
        out_field(o, ev->reason[0] ? ev->reason : "Reason unspecified");
        out(o, "\n\tCode %d Subcode %d\n", ev->code, ev->subcode);
        return 0;
}

static int body_file_transfer(Out *o, const UserlogEvent *ev) {
        const char *words = userlog_transfer_words(ev->transfer);

        if (!words)
                return -EINVAL;
        out(o, "%s\n", words);
        if (ev->queueing_delay != -1)
                out(o, "\tSeconds spent in queue: %llu\n", (unsigned long long) ev->queueing_delay);
        if (ev->host[0]) {
                out(o, "\tTransferring to host: ");
                out_field(o, ev->host);
                out(o, "\n");
        }
        return 0;
}

static int body(Out *o, const UserlogEvent *ev) {
        switch (ev->type) {
        case USERLOG_SUBMIT: return body_submit(o, ev);
        case USERLOG_EXECUTE: return body_execute(o, ev);
        case USERLOG_EXECUTABLE_ERROR: return body_executable_error(o, ev);
        case USERLOG_EVICTED: return body_evicted(o, ev);
        case USERLOG_TERMINATED: return body_terminated(o, ev);
        case USERLOG_IMAGE_SIZE: return body_image_size(o, ev);
        case USERLOG_ABORTED: return body_words_reason(o, ev, "Job was aborted.");
        case USERLOG_SUSPENDED:
                out(o, "Job was suspended.\n\tNumber of processes actually suspended: %d\n", ev->num_pids);
                return 0;
        case USERLOG_UNSUSPENDED: out(o, "Job was unsuspended.\n"); return 0;
        case USERLOG_HELD: return body_held(o, ev);
        case USERLOG_RELEASED: return body_words_reason(o, ev, "Job was released.");
        case USERLOG_FILE_TRANSFER: return body_file_transfer(o, ev);
        default: return -EINVAL;
        }
}

int userlog_format(const UserlogEvent *ev, bool utc, char **ret_text) {
        _cleanup_free_ char *text = NULL;
        size_t len = 0;
        struct tm tm;
        Out o;
        int r;

        if (!ev || !ret_text || !userlog_type_name(ev->type))
                return -EINVAL;
        if (!(utc ? gmtime_r(&ev->time, &tm) : localtime_r(&ev->time, &tm)))
                return -EINVAL;
        o.f = open_memstream(&text, &len);
        if (!o.f)
                return -ENOMEM;
        out(&o, "%03d (%03lld.%03lld.%03lld) %04d-%02d-%02d %02d:%02d:%02d%s ", ev->type, (long long) ev->cluster,
            (long long) ev->proc, (long long) ev->subproc, tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
            tm.tm_min, tm.tm_sec, utc ? "Z" : "");
        r = body(&o, ev);
        out(&o, "...\n");
        if (fclose(o.f) != 0)
                return -ENOMEM;
        if (r < 0)
                return r;
        if (len > INT32_MAX)
                return -E2BIG;
        *ret_text = TAKE_PTR(text);
        return (int) len;
}
