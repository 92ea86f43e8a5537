/* SPDX-License-Identifier: Apache-2.0 */
/*
 * job.c — what a job transfers, read from its ad (HTCondor's attributes,
 * docs/transfer.md), and whether a run of it in a slot transfers.
 */
#define _GNU_SOURCE

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/cleanup.h"
#include "common/proto.h"
#include "xfer-internal.h"

static char *ad_string(const ClassAd *ad, const char *name) {
        char *s = NULL;

        if (classad_eval_string(ad, name, GLEAN_CA_MODE, &s) < 0)
                return NULL;
        return s;
}

static bool ad_bool(const ClassAd *ad, const char *name, bool dflt) {
        bool b;

        return classad_eval_bool(ad, name, GLEAN_CA_MODE, &b) < 0 ? dflt : b;
}

/* MB from the ad when it says a number >= 0, else the knob; in bytes. */
static uint64_t ad_limit(const ClassAd *ad, const char *name, uint64_t knob_mb) {
        double mb;

        if (classad_eval_real(ad, name, GLEAN_CA_MODE, &mb) < 0 || mb < 0)
                return knob_mb * 1024u * 1024u;
        return (uint64_t) (mb * 1024.0 * 1024.0);
}

static bool is_null_file(const char *s) {
        return !s || !*s || strcmp(s, "/dev/null") == 0;
}

static int push(char ***v, size_t *n, const char *s, size_t len) {
        char **nv = realloc(*v, (*n + 1) * sizeof **v);

        if (!nv)
                return -ENOMEM;
        *v = nv;
        nv[*n] = strndup(s, len);
        if (!nv[*n])
                return -ENOMEM;
        (*n)++;
        return 0;
}

/* An entry of a transfer list: file://PATH is PATH; another scheme is
 * refused (it needs a transfer plugin). */
static int list_entry(const char *attr, const char *s, size_t len, char ***v, size_t *n, char *why, size_t whylen) {
        size_t i = 0;

        while (i < len && (isalnum((unsigned char) s[i]) || s[i] == '+' || s[i] == '-' || s[i] == '.'))
                i++;
        if (i > 0 && i + 3 <= len && memcmp(s + i, "://", 3) == 0) {
                if (i == 4 && strncasecmp(s, "file", 4) == 0) {
                        if (len == 7)
                                return glean_why(-EINVAL, why, whylen, "%s entry 'file://' names no file", attr);
                        return push(v, n, s + 7, len - 7);
                }
                return glean_why(-EINVAL, why, whylen,
                                 "%s entry '%.*s' uses the URL scheme '%.*s', which needs a file transfer plugin "
                                 "(FILETRANSFER_PLUGINS), not supported yet",
                                 attr, (int) len, s, (int) i, s);
        }
        return push(v, n, s, len);
}

/* A comma (or blank) separated list. */
static int split_list(const char *attr, const char *text, char ***v, size_t *n, char *why, size_t whylen) {
        const char *p = text;

        while (*p) {
                while (*p == ',' || isspace((unsigned char) *p))
                        p++;
                const char *s = p;
                while (*p && *p != ',' && !isspace((unsigned char) *p))
                        p++;
                if (p > s) {
                        int r = list_entry(attr, s, (size_t) (p - s), v, n, why, whylen);
                        if (r < 0)
                                return r == -ENOMEM ? glean_why(r, why, whylen, "out of memory") : r;
                }
        }
        return 0;
}

static char *trimmed(const char *s, size_t len) {
        while (len > 0 && isspace((unsigned char) *s))
                s++, len--;
        while (len > 0 && isspace((unsigned char) s[len - 1]))
                len--;
        return strndup(s, len);
}

/* "name = path; name2 = path2" */
static int parse_remaps(const char *text, XferJob *job, char *why, size_t whylen) {
        const char *p = text;

        while (*p) {
                const char *e = strchr(p, ';');
                size_t len = e ? (size_t) (e - p) : strlen(p);
                const char *eq = memchr(p, '=', len);
                _cleanup_free_ char *item = trimmed(p, len);
                if (!item)
                        return -ENOMEM;
                if (*item) {
                        if (!eq)
                                return glean_why(-EINVAL, why, whylen,
                                                 "TransferOutputRemaps entry '%s' is not 'name = path'", item);
                        _cleanup_free_ char *name = trimmed(p, (size_t) (eq - p));
                        _cleanup_free_ char *path = trimmed(eq + 1, len - (size_t) (eq - p) - 1);
                        if (!name || !path)
                                return -ENOMEM;
                        if (!*name || !*path)
                                return glean_why(-EINVAL, why, whylen,
                                                 "TransferOutputRemaps entry '%s' is not 'name = path'", item);
                        XferRemap *nv = realloc(job->remaps, (job->n_remaps + 1) * sizeof *nv);
                        if (!nv)
                                return -ENOMEM;
                        job->remaps = nv;
                        nv[job->n_remaps++] = (XferRemap){ .name = TAKE_PTR(name), .path = TAKE_PTR(path) };
                }
                if (!e)
                        break;
                p = e + 1;
        }
        return 0;
}

static char *join_path(const char *dir, const char *name) {
        char *s = NULL;

        if (name[0] == '/')
                return strdup(name);
        if (asprintf(&s, "%s/%s", dir, name) < 0)
                return NULL;
        return s;
}

static void xfer_job_freep(XferJob **j) {
        xfer_job_free(*j);
}

int xfer_job_from_ad(const ClassAd *ad, uint64_t knob_max_input_mb, uint64_t knob_max_output_mb, XferJob **ret,
                     char *why, size_t whylen) {
        _cleanup_(xfer_job_freep) XferJob *job = NULL;
        int r;

        if (!ad || !ret)
                return -EINVAL;
        job = calloc(1, sizeof *job);
        if (!job)
                return -ENOMEM;
        job->iwd = ad_string(ad, "Iwd");
        if (!job->iwd || job->iwd[0] != '/')
                return glean_why(-EINVAL, why, whylen, "the job has no absolute Iwd");

        job->transfer_executable = ad_bool(ad, "TransferExecutable", true);
        if (job->transfer_executable) {
                _cleanup_free_ char *cmd = ad_string(ad, "Cmd");
                if (!cmd || !*cmd)
                        return glean_why(-EINVAL, why, whylen, "the job transfers its executable but has no Cmd");
                job->cmd = join_path(job->iwd, cmd);
                if (!job->cmd)
                        return -ENOMEM;
        }
        if (ad_bool(ad, "TransferIn", true)) {
                char *in = ad_string(ad, "In");
                if (is_null_file(in))
                        free(in);
                else
                        job->in = in;
        }
        if (ad_bool(ad, "TransferOut", true)) {
                char *s = ad_string(ad, "Out");
                if (is_null_file(s))
                        free(s);
                else
                        job->out = s;
        }
        if (ad_bool(ad, "TransferErr", true)) {
                char *s = ad_string(ad, "Err");
                if (is_null_file(s))
                        free(s);
                else
                        job->err = s;
        }

        _cleanup_free_ char *input = ad_string(ad, "TransferInput");
        if (input && (r = split_list("TransferInput", input, &job->input, &job->n_input, why, whylen)) < 0)
                return r;
        if (classad_has(ad, "TransferOutput")) {
                _cleanup_free_ char *output = ad_string(ad, "TransferOutput");
                job->output_given = true;
                if (output &&
                    (r = split_list("TransferOutput", output, &job->output, &job->n_output, why, whylen)) < 0)
                        return r;
        }
        _cleanup_free_ char *remaps = ad_string(ad, "TransferOutputRemaps");
        if (remaps && (r = parse_remaps(remaps, job, why, whylen)) < 0)
                return r == -ENOMEM ? glean_why(r, why, whylen, "out of memory") : r;

        job->preserve_relative_paths = ad_bool(ad, "PreserveRelativePaths", false);
        _cleanup_free_ char *when = ad_string(ad, "WhenToTransferOutput");
        job->on_exit_or_evict = when && strcasecmp(when, "ON_EXIT_OR_EVICT") == 0;
        job->max_input_bytes = ad_limit(ad, "MaxTransferInputMB", knob_max_input_mb);
        job->max_output_bytes = ad_limit(ad, "MaxTransferOutputMB", knob_max_output_mb);
        *ret = TAKE_PTR(job);
        return 0;
}

static void free_list(char **v, size_t n) {
        for (size_t i = 0; i < n; i++)
                free(v[i]);
        free(v);
}

void xfer_job_free(XferJob *job) {
        if (!job)
                return;
        free(job->iwd);
        free(job->cmd);
        free(job->in);
        free(job->out);
        free(job->err);
        free_list(job->input, job->n_input);
        free_list(job->output, job->n_output);
        for (size_t i = 0; i < job->n_remaps; i++) {
                free(job->remaps[i].name);
                free(job->remaps[i].path);
        }
        free(job->remaps);
        free(job);
}

bool xfer_job_wanted(const ClassAd *job, const char *slot_fs_domain) {
        _cleanup_free_ char *should = ad_string(job, "ShouldTransferFiles");

        if (!should)
                return false;
        if (strcasecmp(should, "YES") == 0)
                return true;
        if (strcasecmp(should, "IF_NEEDED") != 0)
                return false;
        _cleanup_free_ char *domain = ad_string(job, "FileSystemDomain");
        return !domain || !slot_fs_domain || strcasecmp(domain, slot_fs_domain) != 0;
}
