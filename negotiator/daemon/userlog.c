/* SPDX-License-Identifier: Apache-2.0 */
/*
 * userlog.c — the job event log's events (queue.h, "the job event log's
 * outbox"), sent to the agent of each job's SubmitMachine over its sealed
 * connection as UserLogEvent [ ClusterId; ProcId; Seq; Owner; Path; Text;
 * RequestId ], in seq order, at most NEGO_USERLOG_IN_FLIGHT awaiting a
 * Reply per agent. The agent's Reply Ok (sent once it appended the event,
 * or gave up on a log it cannot write) forgets the event, in the batch of
 * the iteration that took the Reply. An agent that comes back (a new
 * connection: its Conn starts at ulog_sent 0) gets the rest from the
 * first; one not connected keeps its events in the database meanwhile.
 * An event may so reach an agent twice (sent, written, the Reply lost);
 * the agent tells by Seq (agent/daemon/userlog.c).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "daemon.h"

/* Sends c the next events of its machine; false when it cannot take more. */
static void pump_agent(Nego *n, Conn *c) {
        while (c->ulog_in_flight < NEGO_USERLOG_IN_FLIGHT && !c->dead) {
                const QueueUserlogEvent *e = queue_userlog_next(n->queue, c->machine, c->ulog_sent);
                ClassAd *msg = NULL;
                Pending *p = NULL;
                int r;

                if (!e)
                        return;
                r = glean_msg_new(GLEAN_CMD_USER_LOG_EVENT, &msg);
                if (r >= 0)
                        r = classad_set_int(msg, "ClusterId", e->job.cluster);
                if (r >= 0)
                        r = classad_set_int(msg, "ProcId", e->job.proc);
                if (r >= 0)
                        r = classad_set_int(msg, "Seq", e->seq);
                if (r >= 0)
                        r = classad_set_string(msg, "Owner", e->owner);
                if (r >= 0)
                        r = classad_set_string(msg, "Path", e->path);
                if (r >= 0)
                        r = classad_set_string(msg, "Text", e->text);
                if (r >= 0)
                        r = nego_agent_request(n, c->machine, msg, PEND_USERLOG, NULL, &p);
                classad_free(msg);
                if (r < 0) {
                        glean_log_errno(LOG_WARNING, r, "cannot send agent %s an event of job %" PRId64 ".%" PRId64
                                        "'s log: %m; again when it comes back", c->machine, e->job.cluster,
                                        e->job.proc);
                        return;
                }
                p->seq = e->seq;
                c->ulog_sent = e->seq;
                c->ulog_in_flight++;
        }
}

void nego_userlog_pump(Nego *n) {
        uint64_t gen = queue_userlog_generation(n->queue);
        size_t pos = 0;
        const char *key;
        void *v;

        if (gen == n->ulog_generation && !n->ulog_wanted)
                return;
        n->ulog_generation = gen;
        n->ulog_wanted = false;
        if (queue_userlog_pending(n->queue) == 0)
                return;
        while (glean_strmap_next(n->agent_conns, &pos, &key, &v)) {
                Conn *c = v;
                if (c->hello && c->machine)
                        pump_agent(n, c);
        }
}

void nego_userlog_hello(Conn *c) {
        c->ulog_sent = 0;
        c->ulog_in_flight = 0;
        c->nego->ulog_wanted = true;
}

void nego_userlog_reply(Conn *c, const Pending *p, bool ok, const char *reason) {
        Nego *n = c->nego;
        char why[512] = "";
        int r;

        if (c->ulog_in_flight > 0)
                c->ulog_in_flight--;
        n->ulog_wanted = true;
        if (!ok) {
                /* Kept: sent again when the agent comes back. */
                glean_log(LOG_WARNING, NULL, NULL, 0, "agent %s refused event %" PRId64 " of a job's log: %s",
                          c->machine, p->seq, reason ? reason : "no reason");
                return;
        }
        nego_batch_queue(n);
        r = queue_userlog_done(n->queue, p->seq, why, sizeof why);
        if (r < 0 && r != -ENOENT)
                glean_log_errno(LOG_WARNING, r, "cannot forget event %" PRId64 " of a job's log: %s", p->seq,
                                why[0] ? why : "");
}

void nego_userlog_suspended(Nego *n, SlotRec *s, bool suspended) {
        Claim *cl = s->held;
        char why[512] = "";
        int r;

        if (!cl || (cl->state != CLAIM_RUNNING && cl->state != CLAIM_ACTIVATING))
                return;
        nego_batch_queue(n);
        r = queue_job_log_suspension(n->queue, cl->job, suspended, nego_now(), why, sizeof why);
        if (r < 0 && r != -ENOENT)
                glean_log_errno(LOG_WARNING, r, "cannot log the %s of job %" PRId64 ".%" PRId64 ": %s",
                                suspended ? "suspension" : "resumption", cl->job.cluster, cl->job.proc, why);
}
