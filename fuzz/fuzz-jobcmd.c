/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz-jobcmd — libFuzzer target for what the central manager reads from
 * its users (queue/jobcmd*.c over queue/queue*.c): messages as
 * they arrive in frames, parsed and validated (glean_msg_parse), then
 * handed to the Submit, Query, History, JobAction and UserPrio handlers
 * of an in-memory queue and accounts.
 *
 * Input: messages separated by NUL bytes. The first byte of each says who
 * sends it: bit 0 an administrator, bit 1 "alice" rather than "bob"; the
 * rest is the frame's payload. A multi-part submit in progress is kept
 * between messages as a connection keeps it. Checks, each an abort():
 *
 *   - a payload glean_msg_parse refuses says why; one it takes is a
 *     message of a known command;
 *   - every handler answers a request with at least one reply (except a
 *     Submit part with More = true), every reply is a valid Reply message
 *     under GLEAN_FRAME_MAX that echoes the request's RequestId, and a
 *     listing's pieces carry More = true except the last;
 *   - a handler fails (< 0) only for want of memory;
 *   - the queue holds what it says: queue_size() equals the jobs
 *     queue_foreach() visits, and each job's status is the JobStatus of
 *     its ad.
 */

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "accounting.h"
#include "common/proto.h"
#include "config.h"
#include "queue/jobcmd.h"
#include "queue/queue.h"

#define FUZZ_NOW 1700000000.0

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static _Noreturn void fail(const char *what, const char *detail) {
        fprintf(stderr, "FUZZ-JOBCMD FAILURE: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
        abort();
}

typedef struct Sink {
        int64_t request_id; /* -1: the request had none */
        size_t replies;
        bool last_more;     /* the last reply said More = true */
} Sink;

static int on_send(void *userdata, const char *payload, size_t len) {
        Sink *s = userdata;
        ClassAd *reply = NULL;
        GleanCommand cmd;
        char why[256];
        int64_t rid = -1;

        if (len == 0 || len > GLEAN_FRAME_MAX)
                fail("a reply of a size no frame carries", NULL);
        if (glean_msg_parse(payload, len, &reply, &cmd, why, sizeof why) < 0)
                fail("a reply that is not a valid message", why);
        if (cmd != GLEAN_CMD_REPLY)
                fail("a handler answered with something else than a Reply", payload);
        if (classad_eval_int(reply, "RequestId", GLEAN_CA_MODE, &rid) < 0)
                rid = -1;
        if (rid != s->request_id)
                fail("a reply that does not echo the RequestId", payload);
        s->last_more = false;
        (void) classad_eval_bool(reply, "More", GLEAN_CA_MODE, &s->last_more);
        s->replies++;
        classad_free(reply);
        return 0;
}

static void on_vacate(void *userdata, const Job *job, const char *claim_id, const char *reason) {
        (void) userdata;
        (void) reason;
        if (!job || !claim_id)
                fail("vacate of nothing", NULL);
}

static int count_job(void *userdata, Job *job) {
        int64_t status = 0;

        if (classad_eval_int(job->ad, "JobStatus", GLEAN_CA_MODE, &status) < 0 || status != (int64_t) job->status)
                fail("a job whose ad says another JobStatus than the queue", NULL);
        (*(size_t *) userdata)++;
        return 0;
}

static bool open_queue(Accountant **ret_a, JobQueue **ret_q) {
        Config *cfg = NULL;
        ConfigError err = {};
        AcctSettings s = {};
        AcctGroups *g = NULL;
        QueueSettings qs = {};
        char why[512];

        if (config_new(&cfg) < 0 ||
            config_load_string(cfg, "UID_DOMAIN = fuzz.pool\nGROUP_NAMES = group_a\n", "<fuzz>", &err) < 0 ||
            acct_settings_from_config(cfg, &s, &err) < 0)
                fail("the configuration", err.msg);
        if (acct_groups_from_config(cfg, &g, &err) < 0 || queue_settings_from_config(cfg, &qs, &err) < 0)
                fail("the configuration", err.msg);
        config_free(cfg);
        if (acct_open(NULL, 0, NULL, &s, g, FUZZ_NOW, ret_a, why, sizeof why) < 0)
                fail("acct_open", why);
        if (queue_open(*ret_a, &qs, ret_q, why, sizeof why) < 0)
                fail("queue_open", why);
        return true;
}

static void handle(Accountant *a, JobQueue *q, JobCmdSubmit **pending, uint8_t who_byte, const char *payload,
                   size_t len) {
        QueueRequester who = {
                .user = who_byte & 2 ? "alice" : "bob",
                .uid = who_byte & 2 ? 1001 : 1002,
                .admin = who_byte & 1,
        };
        ClassAd *req = NULL;
        GleanCommand cmd = GLEAN_CMD__MAX;
        char why[512] = "";
        int r;

        r = glean_msg_parse(payload, len, &req, &cmd, why, sizeof why);
        if (r < 0) {
                if (r != -EBADMSG && r != -ENOMEM)
                        fail("glean_msg_parse failed with an unexpected error", NULL);
                if (r == -EBADMSG && !why[0])
                        fail("a refused message without a reason", NULL);
                return;
        }
        if ((unsigned) cmd >= GLEAN_CMD__MAX)
                fail("a message of no known command", NULL);

        Sink s = { .request_id = -1 };
        if (classad_eval_int(req, "RequestId", GLEAN_CA_MODE, &s.request_id) < 0)
                s.request_id = -1;
        JobCmdSink sink = { .send = on_send, .vacate = on_vacate, .userdata = &s };
        bool more = false;
        switch (cmd) {
        case GLEAN_CMD_SUBMIT:
                (void) classad_eval_bool(req, "More", GLEAN_CA_MODE, &more);
                r = jobcmd_submit(pending, q, &who, req, FUZZ_NOW, &sink);
                break;
        case GLEAN_CMD_QUERY:
                r = jobcmd_query(q, req, &sink);
                break;
        case GLEAN_CMD_HISTORY:
                r = jobcmd_history(q, req, &sink);
                break;
        case GLEAN_CMD_JOB_ACTION:
                r = jobcmd_job_action(q, &who, req, FUZZ_NOW, &sink);
                if (r == -EOPNOTSUPP) { /* Vacate: the daemon's */
                        classad_free(req);
                        return;
                }
                break;
        case GLEAN_CMD_USER_PRIO:
                r = jobcmd_user_prio(a, &who, req, FUZZ_NOW, &sink);
                break;
        default:
                classad_free(req);
                return;
        }
        if (r < 0 && r != -ENOMEM)
                fail("a handler failed with something else than -ENOMEM", NULL);
        if (r >= 0 && !more && s.replies == 0)
                fail("a request without a reply", payload);
        if (s.replies > 0 && s.last_more)
                fail("the last reply says More = true", payload);
        classad_free(req);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        Accountant *a = NULL;
        JobQueue *q = NULL;
        JobCmdSubmit *pending = NULL;

        open_queue(&a, &q);
        for (size_t start = 0; start < size;) {
                const uint8_t *end = memchr(data + start, 0, size - start);
                size_t n = (end ? (size_t) (end - data) : size) - start;
                if (n >= 2) {
                        char *payload = malloc(n);
                        if (!payload)
                                break;
                        memcpy(payload, data + start + 1, n - 1);
                        payload[n - 1] = 0;
                        handle(a, q, &pending, data[start], payload, n - 1);
                        free(payload);
                }
                start += n + 1;
        }
        size_t seen = 0;
        if (queue_foreach(q, count_job, &seen) < 0 || seen != queue_size(q))
                fail("queue_size() and queue_foreach() disagree", NULL);
        jobcmd_submit_free(pending);
        queue_close(q);
        acct_close(a);
        return 0;
}
