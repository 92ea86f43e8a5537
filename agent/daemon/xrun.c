/* SPDX-License-Identifier: Apache-2.0 */
/*
 * xrun.c — glean-agent as an execute agent for a run whose files travel
 * (docs/transfer.md): ActivateClaim carries Transfer [ TransferId;
 * TransferKey; Address ]; the job's sandbox (its scratch directory, made
 * before the job, the job user's, 0700), its input fetched from the
 * submit agent by a process forked for it (xfer_dial, xfer_fetch_input),
 * the job started only once the input is there, in the sandbox; after its
 * exit (or an eviction, with WhenToTransferOutput ON_EXIT_OR_EVICT) its
 * output sent back (xfer_send_output), then JobExit with the bytes moved
 * (BytesSent: the input, BytesRecvd: the output, as HTCondor's shadow
 * counts them) and, when a transfer failed for the files' sake, the hold
 * (HoldReasonCode 13 input, 12 output; HoldReasonSubCode; the reason
 * naming the file). A failure of the connection is tried again after 1,
 * 4 and 16 s; after the fourth try the run is reported ended with a
 * Reason (the job goes back to Idle). A Vacate or Deactivate while a transfer runs
 * kills its process and removes the sandbox. While a transfer runs the
 * slot stays Claimed/Busy and its ad says TransferringInput or
 * TransferringOutput = true.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include "daemon.h"

#define TRIES 4 /* the first and three more, after 1, 4 and 16 s */
#define XRUN_TIMEOUT_MS (600 * 1000)
#define DIAL_TIMEOUT_MS (30 * 1000)

struct AgentXrun {
        Slot *s;
        char id[XFER_ID_LEN + 1];
        GleanPoolKey key;
        char *address;
        XferJob *xjob;
        GleanUserCred user;
        char *manifest;
        bool output;            /* the output's transfer (else the input's) */
        unsigned tries;
        AgentXferChild *child;
        sd_event_source *retry, *finish;
        uint64_t bytes_in, bytes_out;
        bool have_exit;         /* the job ran: its exit */
        AgentJobExit ex;
        char reason[1024];      /* why the job was ended, or why the run is over */
        bool have_reason;
        ClassAd *hold;          /* the hold a transfer asked for */
};

static void job_key(const Slot *s, char *buf, size_t len) {
        const ClassAd *job = agent_sm_job(s->sm);
        int64_t c = -1, p = -1;
        if (job) {
                classad_eval_int(job, "ClusterId", CA_MODE_OLD, &c);
                classad_eval_int(job, "ProcId", CA_MODE_OLD, &p);
        }
        snprintf(buf, len, "%lld.%lld", (long long) c, (long long) p);
}

static void set_flag(Slot *s, const char *attr, bool on) {
        if (on)
                classad_set_bool(s->ad, attr, true);
        else
                classad_delete(s->ad, attr);
}

static void publish_flags(AgentXrun *xr, bool running) {
        Slot *s = xr->s;
        set_flag(s, "TransferringInput", running && !xr->output);
        set_flag(s, "TransferringOutput", running && xr->output);
        agent_publish(s->agent, s);
}

void agent_xrun_free(Slot *s) {
        AgentXrun *xr = s->xrun;
        if (!xr)
                return;
        agent_xfer_child_cancel(xr->child); /* reaped by transfer.c */
        sd_event_source_disable_unref(xr->retry);
        sd_event_source_disable_unref(xr->finish);
        if (s->spec && s->spec->scratch_kept && s->spec->scratch)
                (void) agent_remove_tree(s->spec->scratch);
        if (xr->manifest)
                (void) unlink(xr->manifest);
        set_flag(s, "TransferringInput", false);
        set_flag(s, "TransferringOutput", false);
        glean_pool_key_clear(&xr->key);
        xfer_job_free(xr->xjob);
        classad_free(xr->hold);
        free(xr->address);
        free(xr->manifest);
        free(xr);
        s->xrun = NULL;
}

bool agent_xrun_busy(const Slot *s) {
        const AgentXrun *xr = s->xrun;
        return xr && (xr->child || xr->retry || xr->finish);
}

/* ---- prepare: at ActivateClaim ---- */

static char *ad_string(const ClassAd *ad, const char *attr) {
        char *v = NULL;
        return classad_eval_string(ad, attr, CA_MODE_OLD, &v) >= 0 ? v : NULL;
}

int agent_xrun_prepare(Slot *s, const ClassAd *req, const ClassAd *job, char *why, size_t whylen) {
        Agent *a = s->agent;
        ClassAd *t = NULL;
        if (!classad_has(req, "Transfer"))
                return 0;
        if (glean_msg_get_ad(req, "Transfer", &t) < 0) {
                snprintf(why, whylen, "Transfer is not a ClassAd");
                return -EINVAL;
        }
        AgentXrun *xr = calloc(1, sizeof *xr);
        char *id = ad_string(t, "TransferId"), *key = ad_string(t, "TransferKey");
        char because[300] = "";
        int r = 0;
        if (!xr)
                r = -ENOMEM;
        else if (!id || strlen(id) != XFER_ID_LEN) {
                snprintf(why, whylen, "Transfer: TransferId is not %u hex digits", XFER_ID_LEN);
                r = -EINVAL;
        } else if (!key || glean_pool_key_parse(key, strlen(key), &xr->key, because, sizeof because) < 0) {
                snprintf(why, whylen, "Transfer: TransferKey is not a key of 64 hex digits%s%s", because[0] ? ": " : "",
                         because);
                r = -EINVAL;
        } else if (!(xr->address = ad_string(t, "Address")) || !*xr->address) {
                snprintf(why, whylen, "Transfer: no Address (ip:port) to fetch the job's files from");
                r = -EINVAL;
        }
        if (key)
                memset(key, 0, strlen(key));
        free(key);
        classad_free(t);
        uint64_t max_in, max_out;
        agent_transfer_knobs(a, &max_in, &max_out);
        if (r >= 0 && (r = xfer_job_from_ad(job, max_in, max_out, &xr->xjob, because, sizeof because)) < 0)
                snprintf(why, whylen, "the job's files cannot travel: %s", because);
        if (r >= 0 && (r = glean_user_cred(s->spec->user, &xr->user)) < 0)
                snprintf(why, whylen, "the job's account %s: %s", s->spec->user, strerror(-r));
        char dir[4096];
        if (r >= 0 && ((r = agent_state_dir(a, dir, sizeof dir)) < 0 ||
                       asprintf(&xr->manifest, "%s/%s.manifest", dir, s->name) < 0)) {
                xr->manifest = NULL;
                snprintf(why, whylen, "no state directory for the transfer's manifest");
                r = r < 0 ? r : -ENOMEM;
        }
        if (r >= 0 && (r = agent_jobspec_sandbox(s->spec, job, because, sizeof because)) < 0)
                snprintf(why, whylen, "%s", because[0] ? because : strerror(-r));
        if (r < 0) {
                if (r == -ENOMEM)
                        snprintf(why, whylen, "out of memory");
                if (xr) {
                        glean_pool_key_clear(&xr->key);
                        xfer_job_free(xr->xjob);
                        free(xr->address);
                        free(xr->manifest);
                        free(xr);
                }
                free(id);
                return r;
        }
        xr->s = s;
        snprintf(xr->id, sizeof xr->id, "%s", id);
        free(id);
        s->xrun = xr;
        return 0;
}

/* ---- the sessions ---- */

static void fetch_run(void *arg, XferResult *res) {
        AgentXrun *xr = arg;
        int fd = -1;
        int r = xfer_dial(xr->address, xr->id, DIAL_TIMEOUT_MS, &fd, res->reason, sizeof res->reason);
        if (r < 0) {
                res->error = r;
                return;
        }
        if (xr->output)
                xfer_send_output(fd, &xr->key, xr->xjob, &xr->user, xr->s->spec->scratch, xr->manifest,
                                 XRUN_TIMEOUT_MS, res);
        else
                xfer_fetch_input(fd, &xr->key, xr->xjob, &xr->user, xr->s->spec->scratch, xr->manifest,
                                 XRUN_TIMEOUT_MS, res);
        close(fd);
}

static void transfer_done(void *userdata, const XferResult *res);
static void begin(AgentXrun *xr);

/* The run is over: its JobExit (from the event loop, never under the
 * state machine's feet). */
static int on_finish(sd_event_source *src, void *userdata) {
        (void) src;
        AgentXrun *xr = userdata;
        Slot *s = xr->s;
        xr->finish = sd_event_source_disable_unref(xr->finish);
        ClassAd *extra = xr->hold;
        xr->hold = NULL;
        if (!extra && classad_new(&extra) < 0)
                extra = NULL;
        if (extra) {
                classad_set_int(extra, "BytesSent", (int64_t) xr->bytes_in);
                classad_set_int(extra, "BytesRecvd", (int64_t) xr->bytes_out);
        }
        classad_free(s->exit_extra);
        s->exit_extra = extra;
        AgentJobExit ex = xr->ex;
        bool have_exit = xr->have_exit;
        char reason[sizeof xr->reason];
        snprintf(reason, sizeof reason, "%s", xr->reason);
        bool have_reason = xr->have_reason;
        agent_xrun_free(s); /* the sandbox goes */
        agent_slot_run_over(s, have_exit ? &ex : NULL, have_reason ? reason : NULL);
        return 0;
}

static void finish(AgentXrun *xr) {
        publish_flags(xr, false);
        if (!xr->finish && sd_event_add_defer(xr->s->agent->event, &xr->finish, on_finish, xr) < 0)
                on_finish(NULL, xr);
}

static int on_retry(sd_event_source *src, uint64_t usec, void *userdata) {
        (void) src;
        (void) usec;
        AgentXrun *xr = userdata;
        xr->retry = sd_event_source_disable_unref(xr->retry);
        begin(xr);
        return 0;
}

static void hold(AgentXrun *xr, const XferResult *res) {
        Slot *s = xr->s;
        ClassAd *h = NULL;
        if (classad_new(&h) < 0)
                return;
        char reason[1024];
        snprintf(reason, sizeof reason, "Error from %s@%s: %.500s", s->name, s->agent->machine.name,
                 res->reason[0] ? res->reason : strerror(-res->error));
        classad_set_bool(h, "Hold", true);
        classad_set_int(h, "HoldReasonCode", res->hold_code);
        classad_set_int(h, "HoldReasonSubCode", res->hold_subcode);
        classad_set_string(h, "HoldReason", reason);
        classad_free(xr->hold);
        xr->hold = h;
        snprintf(xr->reason, sizeof xr->reason, "%.900s", reason);
        xr->have_reason = true;
}

static void log_result(AgentXrun *xr, const XferResult *res, const char *what) {
        Slot *s = xr->s;
        char job[48], bytes[32], files[32];
        job_key(s, job, sizeof job);
        snprintf(bytes, sizeof bytes, "%llu", (unsigned long long) (res->bytes_sent + res->bytes_received));
        snprintf(files, sizeof files, "%llu", (unsigned long long) res->files);
        const char *result = res->error < 0 ? (res->reason[0] ? res->reason : strerror(-res->error)) : "ok";
        GleanLogField f[] = { { "GLEAN_SLOT", s->name },       { "GLEAN_JOB", job },
                              { "GLEAN_TRANSFER_ID", xr->id }, { "GLEAN_BYTES", bytes },
                              { "GLEAN_FILES", files },        { "GLEAN_RESULT", result } };
        glean_log(res->error < 0 ? LOG_NOTICE : LOG_INFO, NULL, f, 6,
                  "%s: %s of job %s from %s (try %u): %s bytes, %s files: %s", s->name, what, job, xr->address,
                  xr->tries, bytes, files, result);
}

static void transfer_done(void *userdata, const XferResult *res) {
        AgentXrun *xr = userdata;
        Slot *s = xr->s;
        xr->child = NULL;
        log_result(xr, res, xr->output ? "output" : "input");
        if (xr->output)
                xr->bytes_out += res->bytes_sent;
        else
                xr->bytes_in += res->bytes_received;
        if (res->error >= 0 && !xr->output) {
                publish_flags(xr, false);
                agent_slot_start_job(s);
                if (s->job)
                        return;
                /* Its files are there, the job would not start. */
                xr->hold = agent_slot_start_hold(s);
                snprintf(xr->reason, sizeof xr->reason, "cannot start the job: %.300s", s->start_error);
                xr->have_reason = true;
                finish(xr);
                return;
        }
        if (res->error >= 0) {
                finish(xr);
                return;
        }
        if (res->hold_code > 0) {
                hold(xr, res);
                finish(xr);
                return;
        }
        if (xr->tries < TRIES) {
                static const uint64_t wait_s[] = { 1, 4, 16 };
                uint64_t now;
                sd_event_now(s->agent->event, CLOCK_MONOTONIC, &now);
                uint64_t w = wait_s[xr->tries - 1 < 3 ? xr->tries - 1 : 2];
                if (sd_event_add_time(s->agent->event, &xr->retry, CLOCK_MONOTONIC, now + w * 1000000, 100000,
                                      on_retry, xr) >= 0)
                        return;
        }
        char why[sizeof xr->reason];
        snprintf(why, sizeof why, "the transfer of its %s failed %u times: %.500s", xr->output ? "output" : "input",
                 xr->tries, res->reason[0] ? res->reason : strerror(-res->error));
        if (!xr->have_reason || !xr->have_exit) {
                snprintf(xr->reason, sizeof xr->reason, "%s", why);
                xr->have_reason = true;
        }
        finish(xr);
}

static void begin(AgentXrun *xr) {
        xr->tries++;
        publish_flags(xr, true);
        int r = agent_xfer_child_start(xr->s->agent, -1, fetch_run, xr, transfer_done, xr, &xr->child);
        if (r < 0) {
                XferResult res = { .error = r };
                snprintf(res.reason, sizeof res.reason, "cannot fork the transfer: %s", strerror(-r));
                transfer_done(xr, &res);
        }
}

/* ---- the run's steps ---- */

bool agent_xrun_start(Slot *s) {
        AgentXrun *xr = s->xrun;
        if (!xr || s->job || xr->child || xr->output)
                return false;
        Agent *a = s->agent;
        s->start_error[0] = 0;
        s->exit_reason = NULL;
        if (agent_scratch_create(a->exec, s->spec) < 0) {
                snprintf(s->start_error, sizeof s->start_error, "%s", agent_executor_last_error(a->exec));
                s->start_failure = AGENT_START_OTHER;
                s->start_errno = EIO;
                agent_xrun_free(s); /* nothing made */
                return true;
        }
        GleanLogField f[] = { { "GLEAN_SLOT", s->name }, { "GLEAN_TRANSFER_ID", xr->id } };
        glean_log(LOG_INFO, NULL, f, 2, "%s: fetching the job's input from %s into %s", s->name, xr->address,
                  s->spec->scratch);
        begin(xr);
        return true;
}

bool agent_xrun_job_ended(Slot *s, const AgentJobExit *ex, const char *reason) {
        AgentXrun *xr = s->xrun;
        if (!xr)
                return false;
        xr->ex = *ex;
        xr->have_exit = true;
        if (reason) {
                snprintf(xr->reason, sizeof xr->reason, "%.600s", reason);
                xr->have_reason = true;
        }
        /* Evicted: its files come back only with ON_EXIT_OR_EVICT. */
        if (reason && !xr->xjob->on_exit_or_evict) {
                finish(xr);
                return true;
        }
        xr->output = true;
        xr->tries = 0;
        begin(xr);
        return true;
}

bool agent_xrun_kill(Slot *s, const char *reason) {
        AgentXrun *xr = s->xrun;
        if (!xr || s->job || (!xr->child && !xr->retry))
                return false;
        agent_xfer_child_cancel(xr->child);
        xr->child = NULL;
        xr->retry = sd_event_source_disable_unref(xr->retry);
        if (!xr->have_reason || !xr->have_exit) {
                snprintf(xr->reason, sizeof xr->reason, "%.300s during the transfer of its %s",
                         reason ? reason : "vacated", xr->output ? "output" : "input");
                xr->have_reason = true;
        }
        GleanLogField f[] = { { "GLEAN_SLOT", s->name }, { "GLEAN_TRANSFER_ID", xr->id } };
        glean_log(LOG_NOTICE, NULL, f, 2, "%s: %s; the transfer is killed, the sandbox removed", s->name, xr->reason);
        finish(xr);
        return true;
}

/* ---- a run that outlives its agent ---- */

int agent_xrun_state(const Slot *s, ClassAd *st) {
        const AgentXrun *xr = s->xrun;
        if (!xr)
                return 0;
        char hex[2 * sizeof xr->key.bytes + 1];
        for (size_t i = 0; i < sizeof xr->key.bytes; i++)
                snprintf(hex + 2 * i, 3, "%02x", xr->key.bytes[i]);
        ClassAd *t = NULL;
        int r = classad_new(&t);
        if (r >= 0 && (r = classad_set_string(t, "TransferId", xr->id)) >= 0 &&
            (r = classad_set_string(t, "TransferKey", hex)) >= 0 &&
            (r = classad_set_string(t, "Address", xr->address)) >= 0)
                r = glean_msg_set_ad(st, "Transfer", t);
        explicit_bzero(hex, sizeof hex);
        classad_free(t); /* the key's text in it: the state file is root's, 0600 */
        return r;
}
