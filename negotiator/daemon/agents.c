/* SPDX-License-Identifier: Apache-2.0 */
/*
 * agents.c — what comes from the agents over their sealed connections:
 * their slot ads, the replies to what we asked (by RequestId), job exits,
 * events, and the commands they relay for their local users. Each agent
 * answers only for its own machine: a reply, an exit or an event about a
 * claim of another machine is refused and logged.
 *
 * The agent keeps each JobExit and each end of a claim (an Event with
 * ClaimEnded) until our Reply to its RequestId, and sends it again on its
 * next connection until then: the Reply is queued behind what the message
 * changed, so it leaves only once the batch that took it committed (a
 * commit that fails takes the connection down instead: the agent sends it
 * again). One heard twice changes nothing the second time (claims.c).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "daemon.h"
#include "users.h"

void nego_pending_free(Pending *p) {
        if (!p)
                return;
        classad_free(p->user_req);
        free(p);
}

int nego_agent_request(Nego *n, const char *machine, ClassAd *msg, PendingKind kind, const char *claim_id,
                       Pending **ret) {
        Conn *c = nego_agent_conn(n, machine);
        if (!c)
                return -ENOTCONN;
        Pending *p = calloc(1, sizeof *p);
        if (!p)
                return -ENOMEM;
        uint64_t id = n->next_request++;
        snprintf(p->key, sizeof p->key, "%" PRIu64, id);
        p->conn = c->id;
        p->kind = kind;
        if (claim_id)
                snprintf(p->claim_id, sizeof p->claim_id, "%s", claim_id);
        int r = classad_set_int(msg, "RequestId", (int64_t) id);
        if (r >= 0)
                r = nego_send(c, msg);
        if (r >= 0)
                r = glean_strmap_put(n->pending, p->key, p);
        if (r < 0) {
                free(p);
                return r;
        }
        if (ret)
                *ret = p;
        return 0;
}

static char *get_string(const ClassAd *ad, const char *name) {
        char *v = NULL;
        return classad_eval_string(ad, name, GLEAN_CA_MODE, &v) >= 0 ? v : NULL;
}

/* The Reply to a user's request that an agent carried out. */
static void forward_reply(Nego *n, Pending *p, const ClassAd *reply) {
        Conn *u = nego_conn_by_id(n, p->user_conn);
        if (!u)
                return;
        ClassAd *copy = NULL;
        if (classad_copy(reply, &copy) < 0)
                return;
        int64_t rid;
        if (classad_eval_int(p->user_req, "RequestId", GLEAN_CA_MODE, &rid) >= 0)
                classad_set_int(copy, "RequestId", rid);
        else
                classad_delete(copy, "RequestId");
        nego_send(u, copy);
        classad_free(copy);
}

static void on_reply(Conn *c, const ClassAd *msg) {
        Nego *n = c->nego;
        int64_t rid;
        char key[24];
        if (classad_eval_int(msg, "RequestId", GLEAN_CA_MODE, &rid) < 0)
                return; /* a reply to nothing we asked */
        snprintf(key, sizeof key, "%" PRId64, rid);
        Pending *p = glean_strmap_get(n->pending, key);
        if (!p || p->conn != c->id) {
                glean_log(LOG_DEBUG, NULL, NULL, 0, "agent %s: a Reply to request %s, which we did not send it",
                          c->machine, key);
                return;
        }
        glean_strmap_remove(n->pending, key);
        bool ok = false;
        classad_eval_bool(msg, "Ok", GLEAN_CA_MODE, &ok);
        char *reason = ok ? NULL : get_string(msg, "Reason");
        Claim *cl = p->claim_id[0] ? nego_claim(n, p->claim_id) : NULL;
        switch (p->kind) {
        case PEND_MATCH:
                if (!ok && cl)
                        nego_log_job(LOG_DEBUG, NULL, cl->job, cl->submitter, cl->slot, cl, reason,
                                     "%s refused the match: %s", cl->slot, reason ? reason : "");
                break;
        case PEND_REQUEST_CLAIM:
                if (cl && cl->state == CLAIM_REQUESTED) {
                        if (ok)
                                nego_claim_granted(n, cl, msg);
                        else
                                nego_claim_refused(n, cl, reason ? reason : "refused");
                }
                break;
        case PEND_ACTIVATE:
                if (cl && ok)
                        nego_claim_activated(n, cl, msg);
                else if (cl) {
                        char why[600];
                        snprintf(why, sizeof why, "the agent did not start the job: %s", reason ? reason : "refused");
                        nego_claim_start_failed(n, cl, msg, why);
                }
                break;
        case PEND_KEEP_ALIVE:
                if (cl && ok)
                        nego_claim_alive(n, cl, msg);
                else if (cl && cl->state != CLAIM_REQUESTED) {
                        char why[600];
                        snprintf(why, sizeof why, "the agent no longer has the claim (%s)",
                                 reason ? reason : "refused");
                        nego_claim_lost(n, cl, why);
                }
                break;
        case PEND_OTHER:
                if (!ok)
                        glean_log(LOG_INFO, NULL, NULL, 0, "agent %s refused a request: %s", c->machine,
                                  reason ? reason : "");
                break;
        case PEND_FORWARD:
                forward_reply(n, p, msg);
                break;
        }
        free(reason);
        nego_pending_free(p);
}

/* Whether the agent on c may relay administrators' requests: its token
 * grants it (relay-admins), or its Machine (its token's, or what the Hello
 * of a pool-key agent says) is in ADMINISTRATORS_RELAYED_BY. */
static bool relays_admins(const Conn *c) {
        char *const *list = c->nego->k.relay_admins;
        if (c->has_token && (c->token_rights & GLEAN_RIGHT_RELAY_ADMINS))
                return true;
        for (size_t i = 0; c->machine && list && list[i]; i++)
                if (strcasecmp(list[i], c->machine) == 0)
                        return true;
        return false;
}

/* A relayed user's request: RelayUser/RelayUid, or the pool itself. The
 * user is a name ("bob", or "bob@UID_DOMAIN" of this pool), decided by
 * the agent from its caller's uid; the uid is the agent machine's and
 * decides nothing here. An administrator only by name, and only from an
 * agent that ADMINISTRATORS_RELAYED_BY lets relay them; root relayed is
 * just a user called root otherwise. */
static void on_relayed(Conn *c, const ClassAd *msg, GleanCommand cmd) {
        char *user = get_string(msg, "RelayUser");
        int64_t uid = -1;
        QueueRequester who;
        const char *refusal = NULL;
        char why[600];
        if (c->has_token && !(c->token_rights & GLEAN_RIGHT_RELAY)) {
                snprintf(why, sizeof why, "the token of %s does not let it relay its users' requests",
                         c->token_name);
                refusal = why;
        } else if (!user && c->has_token) {
                /* An agent relays users, always naming them: a request of
                 * nobody from a machine with its own identity is nobody's. */
                refusal = "a relayed request needs RelayUser and RelayUid";
        } else if (!user) {
                who = (QueueRequester){ .user = "root", .uid = 0, .admin = true, .machine = c->machine };
                nego_user_message(c, msg, cmd, &who);
                return;
        }
        char *at = user ? strchr(user, '@') : NULL;
        if (!refusal && at) {
                if (strcasecmp(at + 1, c->nego->k.uid_domain) != 0) {
                        snprintf(why, sizeof why, "the relayed user %.100s is not of this pool's UID_DOMAIN (%.100s)",
                                 user, c->nego->k.uid_domain);
                        refusal = why;
                }
                *at = '\0';
        }
        if (!refusal && (classad_eval_int(msg, "RelayUid", GLEAN_CA_MODE, &uid) < 0 || uid < 0 ||
                         uid > UINT32_MAX - 1 || !*user || strlen(user) >= sizeof ((GleanPeer *) 0)->user))
                refusal = "a relayed request needs RelayUser and RelayUid";
        if (refusal) {
                GleanLogField f[] = { { "GLEAN_MACHINE", c->machine ? c->machine : "" },
                                      { "GLEAN_USER", user ? user : "" },
                                      { "GLEAN_COMMAND", glean_command_name(cmd) },
                                      { "GLEAN_REASON", refusal } };
                glean_log(LOG_NOTICE, NULL, f, 4, "refused %s relayed by %s for %s: %s", glean_command_name(cmd),
                          c->machine ? c->machine : c->addr_text, user ? user : "nobody", refusal);
                ClassAd *reply = NULL;
                if (glean_msg_reply(msg, false, refusal, &reply) >= 0)
                        nego_send(c, reply);
                classad_free(reply);
                free(user);
                return;
        }
        bool admin = relays_admins(c) && (strcmp(user, "root") == 0 || glean_name_is_admin(user, c->nego->k.admins));
        who = (QueueRequester){ .user = user, .uid = (uid_t) uid, .admin = admin, .machine = c->machine };
        nego_user_message(c, msg, cmd, &who);
        free(user);
}

/* The agent is (back) on a new connection: every claim it holds for us
 * gets a keep-alive at once, so that one it no longer has (it restarted
 * without the job) is known lost now rather than at the end of its lease;
 * the live grants whose submit agent it is are sent again, and the claims
 * that waited for it to serve their job's files go on (grants.c). */
static void on_agent_hello(Conn *c) {
        Nego *n = c->nego;
        size_t pos = 0;
        const char *key;
        void *v;
        while (glean_strmap_next(n->claims, &pos, &key, &v)) {
                Claim *cl = v;
                if (cl->machine && strcasecmp(cl->machine, c->machine) == 0 && cl->state != CLAIM_REQUESTED)
                        cl->next_alive = 0;
        }
        nego_grants_agent_back(n, c);
        nego_claims_transfer_retry(n, c->machine, nego_now());
        nego_claims_tick(n, nego_now());
        nego_want_cycle(n);
}

/* The agent may forget msg (a JobExit or the end of a claim, taken): our
 * Reply to its RequestId, which leaves after this iteration's commit. */
static void acknowledge(Conn *c, const ClassAd *msg) {
        int64_t id;
        if (classad_eval_int(msg, "RequestId", GLEAN_CA_MODE, &id) < 0)
                return; /* an agent that keeps nothing for us */
        ClassAd *reply = NULL;
        if (glean_msg_reply(msg, true, NULL, &reply) >= 0)
                nego_send(c, reply);
        classad_free(reply);
}

int nego_agent_message(Conn *c, const ClassAd *msg, GleanCommand cmd) {
        Nego *n = c->nego;
        switch (cmd) {
        case GLEAN_CMD_HELLO:
                on_agent_hello(c);
                return 0;
        case GLEAN_CMD_SLOT_UPDATE:
                return nego_slot_update(n, c, msg);
        case GLEAN_CMD_REPLY:
                on_reply(c, msg);
                return 0;
        case GLEAN_CMD_JOB_EXIT:
                nego_claim_job_exit(n, c, msg);
                if (n->fault == NEGO_FAULT_KILL_BEFORE_COMMIT_JOB_EXIT && n->in_batch)
                        n->fault_due = true; /* main.c: SIGKILL instead of this batch's commit */
                acknowledge(c, msg);
                return 0;
        case GLEAN_CMD_EVENT:
                nego_claim_event(n, c, msg);
                acknowledge(c, msg);
                return 0;
        case GLEAN_CMD_SUBMIT:
        case GLEAN_CMD_QUERY:
        case GLEAN_CMD_HISTORY:
        case GLEAN_CMD_QUERY_SLOTS:
        case GLEAN_CMD_JOB_ACTION:
        case GLEAN_CMD_USER_PRIO:
        case GLEAN_CMD_WAIT:
        case GLEAN_CMD_VACATE:
        case GLEAN_CMD_DRAIN:
        case GLEAN_CMD_CANCEL_DRAIN:
                on_relayed(c, msg, cmd);
                return 0;
        default: {
                char why[128];
                snprintf(why, sizeof why, "the central manager does not take %s from an agent",
                         glean_command_name(cmd));
                ClassAd *reply = NULL;
                if (glean_msg_reply(msg, false, why, &reply) >= 0)
                        nego_send(c, reply);
                classad_free(reply);
                return 0;
        }
        }
}

void nego_agent_gone(Conn *c) {
        Nego *n = c->nego;
        /* What we asked of it and it did not answer. */
        size_t np = glean_strmap_size(n->pending), k = 0, pos = 0;
        Pending **ps = calloc(np ? np : 1, sizeof *ps);
        const char *key;
        void *v;
        if (!ps)
                return;
        while (glean_strmap_next(n->pending, &pos, &key, &v))
                if (((Pending *) v)->conn == c->id)
                        ps[k++] = v;
        for (size_t i = 0; i < k; i++)
                glean_strmap_remove(n->pending, ps[i]->key);
        for (size_t i = 0; i < k; i++) {
                Pending *p = ps[i];
                Claim *cl = p->claim_id[0] ? nego_claim(n, p->claim_id) : NULL;
                if (p->kind == PEND_REQUEST_CLAIM && cl && cl->state == CLAIM_REQUESTED)
                        nego_claim_refused(n, cl, "the agent's connection closed before it answered");
                else if (p->kind == PEND_FORWARD) {
                        Conn *u = nego_conn_by_id(n, p->user_conn);
                        ClassAd *reply = NULL;
                        if (u && glean_msg_reply(p->user_req, false, "the agent's connection closed", &reply) >= 0)
                                nego_send(u, reply);
                        classad_free(reply);
                }
                nego_pending_free(p);
        }
        free(ps);
        if (c->machine) {
                GleanLogField f[] = { { "GLEAN_MACHINE", c->machine } };
                glean_log(LOG_NOTICE, NULL, f, 1,
                          "agent %s is gone; its slots stay for CLASSAD_LIFETIME, its claims for their leases",
                          c->machine);
        }
}
