/* SPDX-License-Identifier: Apache-2.0 */
/*
 * collector.c — the latest ad of every slot of the pool, by Name, as the
 * agents send them (SlotUpdate, on every change and every
 * UPDATE_INTERVAL). An ad lives CLASSAD_LIFETIME after it came, as
 * HTCondor's collector keeps them: an agent that is gone takes its slots
 * with it that long afterwards, and a dynamic slot its agent gave back
 * (and no longer advertises) leaves the same way. QuerySlots lists them.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "daemon.h"

#define PIECE_BYTES (GLEAN_FRAME_MAX - 64 * 1024) /* a listing's piece, with room for the Reply around it */

SlotRec *nego_slot(Nego *n, const char *name) {
        return name ? glean_strmap_get(n->slots, name) : NULL;
}

static void slot_free(SlotRec *s) {
        if (!s)
                return;
        classad_free(s->ad);
        free(s->name);
        free(s->machine);
        free(s->claim_id);
        free(s->dropped);
        free(s);
}

void nego_slots_free(Nego *n) {
        size_t pos = 0;
        const char *key;
        void *v;
        while (glean_strmap_next(n->slots, &pos, &key, &v))
                slot_free(v);
}

void nego_slots_clear(Nego *n) {
        const char *key;
        void *v;
        for (size_t pos = 0; glean_strmap_next(n->slots, &pos, &key, &v); pos = 0) {
                glean_strmap_remove(n->slots, key);
                slot_free(v);
        }
}

void nego_slot_state(const SlotRec *s, char *state, size_t sl, char *activity, size_t al) {
        char *v = NULL;
        snprintf(state, sl, "%s", classad_eval_string(s->ad, "State", GLEAN_CA_MODE, &v) >= 0 ? v : "");
        free(v);
        v = NULL;
        snprintf(activity, al, "%s", classad_eval_string(s->ad, "Activity", GLEAN_CA_MODE, &v) >= 0 ? v : "");
        free(v);
}

static void refuse(Conn *c, const ClassAd *msg, const char *why) {
        GleanLogField f[] = { { "GLEAN_MACHINE", c->machine }, { "GLEAN_REASON", why } };
        glean_log(LOG_NOTICE, NULL, f, 2, "agent %s: SlotUpdate refused: %s", c->machine, why);
        ClassAd *reply = NULL;
        if (glean_msg_reply(msg, false, why, &reply) >= 0)
                nego_send(c, reply);
        classad_free(reply);
}

/* Who runs on a slot our claim holds is ours to say, as decided once at
 * submit (the queue's literals and the claim's submitter): what the
 * agent's ad says of it (evaluated there from the job ad) is replaced, so
 * that the matchmaker weighs a preemption by the submitter it charges. */
static void slot_identity(Nego *n, SlotRec *s) {
        Claim *cl = s->held;
        Job *j = cl && cl->submitter ? queue_find(n->queue, cl->job) : NULL;
        char *user = NULL;
        if (!j || !j->owner || acct_literal_string(j->ad, "User", &user) <= 0)
                return;
        classad_set_string(s->ad, "RemoteOwner", j->owner);
        classad_set_string(s->ad, "RemoteUser", user);
        if (strcmp(user, cl->submitter) != 0)
                classad_set_string(s->ad, "AccountingGroup", cl->submitter); /* a group's, or a nice user's */
        else
                classad_delete(s->ad, "AccountingGroup");
        free(user);
}

/* What the slot of a running job says of its files on the way
 * (TransferringInput, TransferringOutput) goes to the job's ad when it
 * changes, for `glean q` to show (< and >, as condor_q). */
static void slot_transferring(Nego *n, SlotRec *s) {
        Claim *cl = s->held;
        if (!cl || (cl->state != CLAIM_RUNNING && cl->state != CLAIM_ACTIVATING))
                return;
        Job *j = queue_find(n->queue, cl->job);
        if (!j || !j->claim_id || strcmp(j->claim_id, cl->id) != 0)
                return;
        bool in = false, out = false, was_in = false, was_out = false;
        (void) classad_eval_bool(s->ad, "TransferringInput", GLEAN_CA_MODE, &in);
        (void) classad_eval_bool(s->ad, "TransferringOutput", GLEAN_CA_MODE, &out);
        (void) classad_eval_bool(j->ad, "TransferringInput", GLEAN_CA_MODE, &was_in);
        (void) classad_eval_bool(j->ad, "TransferringOutput", GLEAN_CA_MODE, &was_out);
        if (in == was_in && out == was_out)
                return;
        nego_batch_queue(n);
        int r = queue_job_set_transferring(n->queue, cl->job, in, out);
        if (r < 0)
                glean_log_errno(LOG_WARNING, r, "job %s: cannot record its transfer state: %m", cl->jobkey);
}

int nego_slot_update(Nego *n, Conn *c, const ClassAd *msg) {
        ClassAd *ad = NULL;
        char *name = NULL, *claim = NULL;
        char why[300];
        int r = glean_msg_get_ad(msg, "SlotAd", &ad);
        if (r < 0) {
                refuse(c, msg, "SlotAd is not a ClassAd");
                return 0;
        }
        if (classad_eval_string(ad, "Name", GLEAN_CA_MODE, &name) < 0 || !*name || strlen(name) > 255) {
                refuse(c, msg, "the slot ad has no Name");
                goto out;
        }
        if (c->has_token && !(c->token_rights & GLEAN_RIGHT_ADVERTISE)) {
                snprintf(why, sizeof why, "the token of %s does not let it advertise slots", c->token_name);
                refuse(c, msg, why);
                goto out;
        }
        /* An agent speaks for its own machine only. */
        const char *at = strrchr(name, '@');
        if (!at || strcasecmp(at + 1, c->machine) != 0) {
                snprintf(why, sizeof why, "slot %s is not of machine %s", name, c->machine);
                refuse(c, msg, why);
                goto out;
        }
        classad_set_string(ad, "Machine", c->machine);
        if (classad_eval_string(msg, "ClaimId", GLEAN_CA_MODE, &claim) >= 0 && !*claim) {
                free(claim);
                claim = NULL;
        }
        SlotRec *s = nego_slot(n, name);
        /* A dynamic slot that is no longer Claimed and holds no claim of
         * ours is on its way back to its partitionable slot (an agent
         * announces no release: these are its last ads): not kept. */
        bool dyn = false;
        char *st = NULL;
        if (!claim && classad_eval_bool(ad, "DynamicSlot", GLEAN_CA_MODE, &dyn) >= 0 && dyn &&
            classad_eval_string(ad, "State", GLEAN_CA_MODE, &st) >= 0 && strcmp(st, "Claimed") != 0 &&
            (!s || (!s->held && !s->waiting && !s->requests))) {
                free(st);
                if (s)
                        nego_slot_forget(n, s);
                goto out;
        }
        free(st);
        bool fresh = !s;
        if (!s) {
                s = calloc(1, sizeof *s);
                if (!s || !(s->name = strdup(name)) || !(s->machine = strdup(c->machine)) ||
                    glean_strmap_put(n->slots, s->name, s) < 0) {
                        slot_free(s);
                        r = -ENOMEM;
                        goto out;
                }
        }
        classad_free(s->ad);
        s->ad = ad;
        ad = NULL;
        free(s->claim_id);
        s->claim_id = claim;
        claim = NULL;
        s->updated = nego_now();
        bool b = false;
        s->partitionable = classad_eval_bool(s->ad, "PartitionableSlot", GLEAN_CA_MODE, &b) >= 0 && b;
        b = false;
        s->dynamic = classad_eval_bool(s->ad, "DynamicSlot", GLEAN_CA_MODE, &b) >= 0 && b;
        nego_claim_seen(n, c, s, s->claim_id);
        slot_identity(n, s);
        slot_transferring(n, s);
        char state[32], act[32];
        nego_slot_state(s, state, sizeof state, act, sizeof act);
        if (fresh || strcmp(state, "Unclaimed") == 0)
                nego_want_cycle(n);
out:
        classad_free(ad);
        free(name);
        free(claim);
        return r;
}

void nego_slot_forget(Nego *n, SlotRec *s) {
        GleanLogField f[] = { { "GLEAN_SLOT", s->name } };
        glean_log(LOG_INFO, NULL, f, 1, "slot %s leaves the pool: its claim ended, its agent gives it back", s->name);
        glean_strmap_remove(n->slots, s->name);
        slot_free(s);
}

void nego_slots_expire(Nego *n, double now) {
        size_t pos = 0, k = 0;
        const char *key;
        void *v;
        SlotRec **gone = NULL;
        size_t cap = 0;
        while (glean_strmap_next(n->slots, &pos, &key, &v)) {
                SlotRec *s = v;
                bool old = now - s->updated > (double) n->k.classad_lifetime;
                /* A dynamic slot its agent gave back is not announced: its
                 * agent stopped advertising it (after a reconnection, or
                 * for two of its update intervals). */
                Conn *c = s->dynamic && !old ? nego_agent_conn(n, s->machine) : NULL;
                if (c && s->updated < c->hello_at && now > c->hello_at + (double) n->k.timeout)
                        old = true;
                if (c && now - s->updated > 2.0 * (double) c->update_interval + (double) n->k.timeout)
                        old = true;
                if (!old || s->held || s->waiting || s->requests)
                        continue;
                if (k == cap) {
                        cap = cap ? 2 * cap : 16;
                        SlotRec **g = realloc(gone, cap * sizeof *g);
                        if (!g)
                                break;
                        gone = g;
                }
                gone[k++] = s;
        }
        for (size_t i = 0; i < k; i++) {
                GleanLogField f[] = { { "GLEAN_SLOT", gone[i]->name } };
                glean_log(LOG_INFO, NULL, f, 1, "slot %s leaves the pool: its agent no longer advertises it (%.0f s)",
                          gone[i]->name, now - gone[i]->updated);
                glean_strmap_remove(n->slots, gone[i]->name);
                slot_free(gone[i]);
        }
        free(gone);
}

size_t nego_slots_forget_machine(Nego *n, const char *machine, const char *why) {
        size_t pos = 0, k = 0, left = 0;
        const char *key;
        void *v;
        SlotRec *gone[256];

        do {
                k = 0;
                pos = 0;
                left = 0;
                while (glean_strmap_next(n->slots, &pos, &key, &v)) {
                        SlotRec *s = v;
                        if (strcasecmp(s->machine, machine) != 0)
                                continue;
                        if (s->held || s->waiting || s->requests) {
                                left++;
                                continue;
                        }
                        if (k < sizeof gone / sizeof *gone)
                                gone[k++] = s;
                }
                for (size_t i = 0; i < k; i++) {
                        GleanLogField f[] = { { "GLEAN_SLOT", gone[i]->name } };
                        glean_log(LOG_INFO, NULL, f, 1, "slot %s leaves the pool: %s", gone[i]->name, why);
                        glean_strmap_remove(n->slots, gone[i]->name);
                        slot_free(gone[i]);
                }
        } while (k == sizeof gone / sizeof *gone);
        return left;
}

void nego_slots_summary(Nego *n, char *buf, size_t len) {
        /* Counts by State, Claimed by State/Activity, in order of first sight. */
        char names[16][72];
        size_t counts[16] = { 0 }, kinds = 0, total = 0, pos = 0;
        const char *key;
        void *v;
        while (glean_strmap_next(n->slots, &pos, &key, &v)) {
                SlotRec *s = v;
                char state[32], act[32], what[72];
                if (s->partitionable)
                        continue; /* what is left of it is in no state of its own */
                nego_slot_state(s, state, sizeof state, act, sizeof act);
                if (strcmp(state, "Claimed") == 0)
                        snprintf(what, sizeof what, "%s/%s", state, act);
                else
                        snprintf(what, sizeof what, "%s", *state ? state : "Unknown");
                total++;
                size_t i = 0;
                while (i < kinds && strcmp(names[i], what) != 0)
                        i++;
                if (i == kinds && kinds < 16)
                        snprintf(names[kinds++], sizeof names[0], "%s", what);
                if (i < kinds)
                        counts[i]++;
        }
        int k = snprintf(buf, len, "%zu slot%s", total, total == 1 ? "" : "s");
        for (size_t i = 0; i < kinds && k > 0 && (size_t) k < len; i++)
                k += snprintf(buf + k, len - (size_t) k, "%s%zu %s", i ? ", " : ": ", counts[i], names[i]);
}

/* ---- QuerySlots ---- */

static ClassAd *project(const ClassAd *ad, char *const *attrs) {
        ClassAd *out = NULL;
        if (!attrs)
                return classad_copy(ad, &out) >= 0 ? out : NULL;
        if (classad_new(&out) < 0)
                return NULL;
        for (size_t i = 0; attrs[i]; i++) {
                char *text = classad_unparse_attr(ad, attrs[i]);
                CaError err;
                if (text)
                        classad_set_expr_text(out, attrs[i], text, GLEAN_CA_MODE, &err);
                free(text);
        }
        return out;
}

static int send_piece(Conn *c, const ClassAd *req, ClassAd **ads, size_t n, size_t count, bool more) {
        ClassAd *reply = NULL;
        int r = glean_msg_reply(req, true, NULL, &reply);
        if (r >= 0)
                r = glean_msg_set_ad_list(reply, "Ads", ads, n);
        if (r >= 0)
                r = classad_set_int(reply, "Count", (int64_t) count);
        if (r >= 0 && more)
                r = classad_set_bool(reply, "More", true);
        if (r >= 0)
                r = nego_send(c, reply);
        classad_free(reply);
        return r;
}

static int query_refuse(Conn *c, const ClassAd *req, const char *why) {
        ClassAd *reply = NULL;
        int r = glean_msg_reply(req, false, why, &reply);
        if (r >= 0)
                r = nego_send(c, reply);
        classad_free(reply);
        return r;
}

int nego_query_slots(Nego *n, Conn *c, const ClassAd *req) {
        char *text = NULL, *attrs_text = NULL;
        ClassAdExpr *constraint = NULL;
        char **attrs = NULL;
        int64_t limit = -1;
        int r = 0;
        if (classad_eval_string(req, "Constraint", GLEAN_CA_MODE, &text) >= 0 && *text) {
                CaError err;
                if (classad_expr_parse(text, strlen(text), GLEAN_CA_MODE, &constraint, &err) < 0) {
                        char why[300];
                        snprintf(why, sizeof why, "Constraint: %s", err.msg);
                        r = query_refuse(c, req, why);
                        goto out;
                }
        }
        if (classad_eval_string(req, "Attrs", GLEAN_CA_MODE, &attrs_text) >= 0 && *attrs_text) {
                size_t k = 0;
                attrs = calloc(strlen(attrs_text) / 2 + 2, sizeof *attrs);
                if (!attrs) {
                        r = -ENOMEM;
                        goto out;
                }
                for (char *save = NULL, *w = strtok_r(attrs_text, " ,\t", &save); w; w = strtok_r(NULL, " ,\t", &save))
                        attrs[k++] = w;
        }
        if (classad_eval_int(req, "Limit", GLEAN_CA_MODE, &limit) < 0)
                limit = -1;

        /* Matching ads in name order, in pieces under a frame. */
        size_t total = glean_strmap_size(n->slots), k = 0, pos = 0;
        SlotRec **all = calloc(total ? total : 1, sizeof *all);
        const char *key;
        void *v;
        if (!all) {
                r = -ENOMEM;
                goto out;
        }
        while (glean_strmap_next(n->slots, &pos, &key, &v)) {
                SlotRec *s = v;
                if (constraint) {
                        CaValue val;
                        bool yes = false;
                        if (classad_expr_eval(constraint, s->ad, NULL, GLEAN_CA_MODE, &val) >= 0) {
                                yes = val.type == CA_BOOL && val.u.b;
                                ca_value_clear(&val);
                        }
                        if (!yes)
                                continue;
                }
                all[k++] = s;
        }
        for (size_t i = 1; i < k; i++) /* few thousand: insertion sort */
                for (size_t j = i; j > 0 && strcasecmp(all[j - 1]->name, all[j]->name) > 0; j--) {
                        SlotRec *t = all[j];
                        all[j] = all[j - 1];
                        all[j - 1] = t;
                }
        size_t count = k, send_n = limit >= 0 && (size_t) limit < k ? (size_t) limit : k;
        ClassAd **piece = calloc(send_n ? send_n : 1, sizeof *piece);
        size_t np = 0, bytes = 0;
        if (!piece) {
                free(all);
                r = -ENOMEM;
                goto out;
        }
        for (size_t i = 0; i < send_n && r >= 0; i++) {
                ClassAd *ad = project(all[i]->ad, attrs);
                char *t = ad ? classad_unparse(ad) : NULL;
                size_t len = t ? strlen(t) + 2 : 0;
                free(t);
                if (!ad)
                        continue;
                if (np > 0 && bytes + len > PIECE_BYTES) {
                        r = send_piece(c, req, piece, np, count, true);
                        for (size_t j = 0; j < np; j++)
                                classad_free(piece[j]);
                        np = bytes = 0;
                }
                piece[np++] = ad;
                bytes += len;
        }
        if (r >= 0)
                r = send_piece(c, req, piece, np, count, false);
        for (size_t j = 0; j < np; j++)
                classad_free(piece[j]);
        free(piece);
        free(all);
out:
        classad_expr_free(constraint);
        free(text);
        free(attrs_text);
        free(attrs);
        return r;
}
