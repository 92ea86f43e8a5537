/* SPDX-License-Identifier: Apache-2.0 */
/*
 * xfer-grants.c — the grants a submit agent keeps (agent/transfer.h): a
 * map from TransferId to its key and job ad, bounded, each with the count
 * of the sessions running on it; and the reading of a dialler's preamble
 * frame exactly, never a byte of what follows it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/strmap.h"
#include "proto.h"
#include "transfer.h"

struct AgentGrants {
        GleanStrMap *map; /* id -> AgentGrant */
        size_t max;
};

static void why_set(char *why, size_t whylen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void why_set(char *why, size_t whylen, const char *fmt, ...) {
        if (!why || !whylen)
                return;
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(why, whylen, fmt, ap);
        va_end(ap);
}

static void grant_free(AgentGrant *gr) {
        if (!gr)
                return;
        glean_pool_key_clear(&gr->key);
        classad_free(gr->job);
        free(gr);
}

int agent_grants_new(size_t max, AgentGrants **ret) {
        AgentGrants *g = calloc(1, sizeof *g);
        if (!g)
                return -ENOMEM;
        int r = glean_strmap_new(false, &g->map);
        if (r < 0) {
                free(g);
                return r;
        }
        g->max = max ? max : AGENT_GRANTS_MAX;
        *ret = g;
        return 0;
}

void agent_grants_free(AgentGrants *g) {
        if (!g)
                return;
        size_t pos = 0;
        const char *k;
        void *v;
        while (glean_strmap_next(g->map, &pos, &k, &v))
                grant_free(v);
        glean_strmap_free(g->map);
        free(g);
}

size_t agent_grants_count(const AgentGrants *g) {
        return g ? glean_strmap_size(g->map) : 0;
}

static bool is_id(const char *s) {
        if (!s || strlen(s) != 32)
                return false;
        for (; *s; s++)
                if (!((*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'f') || (*s >= 'A' && *s <= 'F')))
                        return false;
        return true;
}

int agent_grants_add(AgentGrants *g, const ClassAd *msg, char *why, size_t whylen) {
        char *id = NULL, *key = NULL;
        AgentGrant *gr = NULL;
        int r;

        if (classad_eval_string(msg, "TransferId", CA_MODE_OLD, &id) < 0 || !is_id(id)) {
                why_set(why, whylen, "TransferId is not 32 hex digits");
                r = -EINVAL;
                goto out;
        }
        if (!(gr = calloc(1, sizeof *gr))) {
                r = -ENOMEM;
                goto out;
        }
        char because[200] = "";
        if (classad_eval_string(msg, "TransferKey", CA_MODE_OLD, &key) < 0 ||
            glean_pool_key_parse(key, strlen(key), &gr->key, because, sizeof because) < 0) {
                why_set(why, whylen, "TransferKey is not a key of 64 hex digits%s%s", because[0] ? ": " : "",
                        because);
                r = -EINVAL;
                goto out;
        }
        if (glean_msg_get_ad(msg, "JobAd", &gr->job) < 0) {
                why_set(why, whylen, "JobAd is not a ClassAd");
                r = -EINVAL;
                goto out;
        }
        snprintf(gr->id, sizeof gr->id, "%s", id);
        AgentGrant *old = glean_strmap_get(g->map, gr->id);
        if (!old && glean_strmap_size(g->map) >= g->max) {
                why_set(why, whylen, "%zu grants are kept already (the most an agent keeps)", g->max);
                r = -ENOSPC;
                goto out;
        }
        if (old)
                gr->conns = old->conns;
        if ((r = glean_strmap_put(g->map, gr->id, gr)) < 0)
                goto out;
        grant_free(old);
        gr = NULL;
        r = 0;
out:
        if (r == -ENOMEM)
                why_set(why, whylen, "out of memory");
        grant_free(gr);
        if (key)
                memset(key, 0, strlen(key));
        free(key);
        free(id);
        return r;
}

int agent_grants_revoke(AgentGrants *g, const char *id) {
        AgentGrant *gr = id ? glean_strmap_remove(g->map, id) : NULL;
        if (!gr)
                return -ENOENT;
        grant_free(gr);
        return 0;
}

AgentGrant *agent_grants_find(AgentGrants *g, const char *id) {
        return g && id ? glean_strmap_get(g->map, id) : NULL;
}

int agent_grants_hold(AgentGrants *g, const char *id) {
        AgentGrant *gr = agent_grants_find(g, id);
        if (!gr)
                return -ENOENT;
        if (gr->conns >= AGENT_GRANT_CONNS_MAX)
                return -EBUSY;
        gr->conns++;
        return 0;
}

void agent_grants_unhold(AgentGrants *g, const char *id) {
        AgentGrant *gr = agent_grants_find(g, id);
        if (gr && gr->conns > 0)
                gr->conns--;
}

/* ---- the preamble ---- */

void agent_preamble_init(AgentPreamble *p) {
        memset(p, 0, sizeof *p);
        p->need = 4;
}

size_t agent_preamble_want(const AgentPreamble *p) {
        return p->need - p->have;
}

int agent_preamble_feed(AgentPreamble *p, const void *data, size_t n) {
        if (n > agent_preamble_want(p))
                return -EINVAL;
        memcpy(p->buf + p->have, data, n);
        p->have += n;
        if (p->have == 4 && p->need == 4) {
                uint32_t len = (uint32_t) p->buf[0] << 24 | (uint32_t) p->buf[1] << 16 | (uint32_t) p->buf[2] << 8 |
                               (uint32_t) p->buf[3];
                if (len == 0 || len > AGENT_PREAMBLE_MAX)
                        return -EMSGSIZE;
                p->need = 4 + (size_t) len;
        }
        return p->need > 4 && p->have == p->need ? 1 : 0;
}

const char *agent_preamble_payload(const AgentPreamble *p, size_t *ret_len) {
        *ret_len = p->have > 4 ? p->have - 4 : 0;
        return (const char *) p->buf + 4;
}
