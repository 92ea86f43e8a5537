/* SPDX-License-Identifier: Apache-2.0 */
/*
 * grants.c — the central manager's part in moving a job's files
 * (docs/transfer.md): at the activation of a run that transfers, a grant
 * (a random TransferId, not secret, and a random 32-byte TransferKey)
 * goes to the two agents of that run and to no other: TransferGrant
 * [ TransferId; TransferKey; JobAd; ExecuteMachine ] to the job's submit
 * agent (its SubmitMachine, which the queue took from the relaying
 * connection), then Transfer [ TransferId; TransferKey; Address ] in the
 * execute agent's ActivateClaim, Address being the submit agent's address
 * as its connection shows it and the TransferPort of its Hello. The grant
 * lives with the claim's run; TransferRevoke when the run ends (sent when
 * the submit agent is back if it is away); an agent that connects again
 * gets the live grants whose submit agent it is once more.
 *
 * The TransferKey is never logged: records name the TransferId alone.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <sodium.h>

#include "common/cleanup.h"
#include "daemon.h"
#include "xfer/xfer.h"

#define GRANT_ID_BYTES 16  /* TransferId: 32 hex digits */
#define GRANT_KEY_BYTES 32 /* TransferKey: 64 hex digits */
#define GRANT_MAX_REVOKES 65536 /* undelivered revokes kept at most */

struct Grant {
        char id[2 * GRANT_ID_BYTES + 1];
        char key[2 * GRANT_KEY_BYTES + 1];
        char *submit_machine;  /* the job's SubmitMachine: the only agent that gets the TransferGrant */
        char *execute_machine; /* the claim's: the only one that gets the Transfer */
};

static void grant_free(Grant *g) {
        if (!g)
                return;
        sodium_memzero(g->key, sizeof g->key);
        free(g->submit_machine);
        free(g->execute_machine);
        free(g);
}

/* "ip:port", an IPv6 address in brackets. */
static void format_address(const Conn *c, char *buf, size_t len) {
        if (strchr(c->peer_ip, ':'))
                snprintf(buf, len, "[%s]:%u", c->peer_ip, (unsigned) c->transfer_port);
        else
                snprintf(buf, len, "%s:%u", c->peer_ip, (unsigned) c->transfer_port);
}

/* A record about g (never its key): what happened to it. */
static void log_grant(int prio, const Claim *c, const Grant *g, const char *what) {
        GleanLogField f[] = { { "GLEAN_TRANSFER_ID", g->id }, { "GLEAN_MACHINE", g->submit_machine } };
        glean_log(prio, NULL, f, 2, "job %s: transfer %s %s (submit agent %s, execute agent %s)", c->jobkey, g->id,
                  what, g->submit_machine, g->execute_machine);
}

/* TransferGrant for c's run to its submit agent: only ever that agent. */
static int send_grant(Nego *n, const Claim *c, const Grant *g, const ClassAd *job_ad) {
        ClassAd *m = NULL;
        int r = glean_msg_new(GLEAN_CMD_TRANSFER_GRANT, &m);
        if (r >= 0)
                r = classad_set_string(m, "TransferId", g->id);
        if (r >= 0)
                r = classad_set_string(m, "TransferKey", g->key);
        if (r >= 0)
                r = glean_msg_set_ad(m, "JobAd", job_ad);
        if (r >= 0)
                r = classad_set_string(m, "ExecuteMachine", g->execute_machine);
        if (r >= 0)
                r = nego_agent_request(n, g->submit_machine, m, PEND_OTHER, c->id, NULL);
        classad_free(m); /* the queued copy is text: nothing of the key stays in this ad */
        return r;
}

static int send_revoke(Nego *n, const char *machine, const char *id) {
        ClassAd *m = NULL;
        int r = glean_msg_new(GLEAN_CMD_TRANSFER_REVOKE, &m);
        if (r >= 0)
                r = classad_set_string(m, "TransferId", id);
        if (r >= 0)
                r = nego_agent_request(n, machine, m, PEND_OTHER, NULL, NULL);
        classad_free(m);
        return r;
}

/* The connection of the agent that serves job's files, or NULL with why. */
static Conn *submit_agent(Nego *n, const Job *job, int *ret, char *why, size_t whylen) {
        _cleanup_free_ char *submit = NULL;
        if (classad_eval_string(job->ad, "SubmitMachine", GLEAN_CA_MODE, &submit) < 0 || !*submit) {
                *ret = glean_why(-ENOENT, why, whylen,
                                 "its files cannot travel: it was submitted on the central manager's own socket, "
                                 "where no agent serves them (submit through glean-agent; -spool is not done yet)");
                return NULL;
        }
        Conn *sc = nego_agent_conn(n, submit);
        if (!sc || sc->dead) {
                *ret = glean_why(-ENOTCONN, why, whylen,
                                 "its submit machine %s (the agent that serves its files) is not connected", submit);
                return NULL;
        }
        if (!sc->transfer_port || !sc->peer_ip[0]) {
                *ret = glean_why(-ENOTCONN, why, whylen,
                                 "its submit machine %s serves no files (its agent advertises no TransferPort)",
                                 submit);
                return NULL;
        }
        *ret = 1;
        return sc;
}

int nego_grant_check(Nego *n, const Claim *c, const Job *job, char *why, size_t whylen) {
        SlotRec *s = nego_slot(n, c->slot);
        _cleanup_free_ char *fsd = NULL;
        int r;
        if (s)
                (void) classad_eval_string(s->ad, "FileSystemDomain", GLEAN_CA_MODE, &fsd);
        if (!xfer_job_wanted(job->ad, fsd))
                return 0;
        (void) submit_agent(n, job, &r, why, whylen);
        return r;
}

int nego_grant_make(Nego *n, Claim *c, const Job *job, ClassAd **ret_transfer, char *why, size_t whylen) {
        int r;
        *ret_transfer = NULL;
        Conn *sc = submit_agent(n, job, &r, why, whylen);
        if (!sc)
                return r;
        nego_grant_end(n, c); /* a grant of an earlier run still there: revoked */
        Grant *g = calloc(1, sizeof *g);
        if (!g)
                return glean_why(-ENOMEM, why, whylen, "out of memory");
        uint8_t raw[GRANT_KEY_BYTES];
        randombytes_buf(raw, GRANT_ID_BYTES);
        sodium_bin2hex(g->id, sizeof g->id, raw, GRANT_ID_BYTES);
        randombytes_buf(raw, GRANT_KEY_BYTES);
        sodium_bin2hex(g->key, sizeof g->key, raw, GRANT_KEY_BYTES);
        sodium_memzero(raw, sizeof raw);
        g->submit_machine = strdup(sc->machine);
        g->execute_machine = strdup(c->machine);
        char address[80];
        format_address(sc, address, sizeof address);
        ClassAd *t = NULL;
        r = g->submit_machine && g->execute_machine ? classad_new(&t) : -ENOMEM;
        if (r >= 0)
                r = classad_set_string(t, "TransferId", g->id);
        if (r >= 0)
                r = classad_set_string(t, "TransferKey", g->key);
        if (r >= 0)
                r = classad_set_string(t, "Address", address);
        if (r >= 0)
                r = send_grant(n, c, g, job->ad);
        if (r < 0) {
                classad_free(t);
                r = glean_why(r == -ENOTCONN ? r : -ENOMEM, why, whylen, "the grant could not be sent to %s: %s",
                              g->submit_machine ? g->submit_machine : "its submit agent", strerror(-r));
                grant_free(g);
                return r;
        }
        c->grant = g;
        char what[120];
        snprintf(what, sizeof what, "granted; the execute agent dials %s", address);
        log_grant(LOG_INFO, c, g, what);
        *ret_transfer = t;
        return 1;
}

void nego_grant_end(Nego *n, Claim *c) {
        Grant *g = c->grant;
        if (!g)
                return;
        c->grant = NULL;
        if (send_revoke(n, g->submit_machine, g->id) >= 0)
                log_grant(LOG_DEBUG, c, g, "revoked");
        else if (n->revokes && glean_strmap_size(n->revokes) < GRANT_MAX_REVOKES) {
                char *m = strdup(g->submit_machine);
                if (m && glean_strmap_put(n->revokes, g->id, m) >= 0)
                        log_grant(LOG_DEBUG, c, g, "revoked; told when its submit agent is back");
                else
                        free(m);
        }
        grant_free(g);
}

void nego_grant_drop(Claim *c) {
        grant_free(c->grant);
        c->grant = NULL;
}

void nego_grants_agent_back(Nego *n, Conn *conn) {
        size_t pos = 0;
        const char *key;
        void *v;
        if (!conn->machine)
                return;
        while (glean_strmap_next(n->claims, &pos, &key, &v)) {
                Claim *c = v;
                Grant *g = c->grant;
                if (!g || strcasecmp(g->submit_machine, conn->machine) != 0)
                        continue;
                const Job *job = queue_find(n->queue, c->job);
                if (job && send_grant(n, c, g, job->ad) >= 0)
                        log_grant(LOG_INFO, c, g, "granted again (its submit agent is back)");
        }
        /* The revokes it missed; the map is changed only after the walk. */
        if (!n->revokes)
                return;
        size_t k = 0, total = glean_strmap_size(n->revokes);
        char **ids = calloc(total ? total : 1, sizeof *ids);
        if (!ids)
                return;
        pos = 0;
        while (glean_strmap_next(n->revokes, &pos, &key, &v))
                if (strcasecmp(v, conn->machine) == 0 && (ids[k] = strdup(key)))
                        k++;
        for (size_t i = 0; i < k; i++) {
                if (send_revoke(n, conn->machine, ids[i]) >= 0)
                        free(glean_strmap_remove(n->revokes, ids[i]));
                free(ids[i]);
        }
        free(ids);
}

int nego_grants_init(Nego *n) {
        return n->revokes ? 0 : glean_strmap_new(false, &n->revokes);
}

void nego_grants_free(Nego *n) {
        size_t pos = 0;
        const char *key;
        void *v;
        while (n->revokes && glean_strmap_next(n->revokes, &pos, &key, &v))
                free(v);
        glean_strmap_free(n->revokes);
        n->revokes = NULL;
}
