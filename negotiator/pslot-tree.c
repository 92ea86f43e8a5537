/* SPDX-License-Identifier: Apache-2.0 */
/*
 * pslot-tree.c — the partitionable slots of one candidate order, best
 * first (a treap keyed by the ranks NEGOTIATOR_PRE_JOB_RANK, the job's
 * Rank, NEGOTIATOR_POST_JOB_RANK, then the slot's number), each subtree
 * knowing the most of each resource left in it: a search for the best
 * p-slot a job fits in skips what is too small as a whole.
 *
 * A p-slot's ranks change as it is consumed (HTCondor's default
 * NEGOTIATOR_PRE_JOB_RANK prefers the slot with fewer Cpus and less
 * Memory left), so a consumed p-slot is moved, not merely re-checked.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "pslot-tree.h"

typedef struct Node {
        double key[3];
        double rem[NEGO_PTREE_MAX_RES]; /* NaN as +inf: plain matching lets a NaN amount fit anything */
        double max[NEGO_PTREE_MAX_RES]; /* over the subtree */
        uint32_t slot, prio;
        int32_t left, right;
        bool in;
} Node;

struct NegoPTree {
        Node *nodes; /* by ordinal */
        uint32_t n;
        size_t n_res;
        int32_t root;
};

int nego_ptree_new(uint32_t n, size_t n_res, NegoPTree **ret) {
        NegoPTree *t = calloc(1, sizeof(NegoPTree));

        if (n_res > NEGO_PTREE_MAX_RES) {
                free(t);
                return -E2BIG;
        }
        if (!t || !(t->nodes = calloc(n + 1, sizeof(Node)))) {
                free(t);
                return -ENOMEM;
        }
        t->n = n;
        t->n_res = n_res;
        t->root = -1;
        for (uint32_t i = 0; i < n; i++) {
                uint64_t x = (i + 1) * 0x9E3779B97F4A7C15ull;
                x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
                t->nodes[i].prio = (uint32_t) (x >> 32);
                t->nodes[i].left = t->nodes[i].right = -1;
        }
        *ret = t;
        return 0;
}

void nego_ptree_free(NegoPTree *t) {
        if (!t)
                return;
        free(t->nodes);
        free(t);
}

/* Whether a comes before b: better ranks first, then the lower slot. */
static bool before(const double *ka, uint32_t sa, const double *kb, uint32_t sb) {
        for (int i = 0; i < 3; i++)
                if (ka[i] != kb[i])
                        return ka[i] > kb[i];
        return sa < sb;
}

static void update(NegoPTree *t, int32_t i) {
        Node *n = &t->nodes[i];

        for (size_t r = 0; r < t->n_res; r++) {
                double m = n->rem[r];
                if (n->left >= 0 && t->nodes[n->left].max[r] > m)
                        m = t->nodes[n->left].max[r];
                if (n->right >= 0 && t->nodes[n->right].max[r] > m)
                        m = t->nodes[n->right].max[r];
                n->max[r] = m;
        }
}

static int32_t rotate_right(NegoPTree *t, int32_t i) {
        int32_t l = t->nodes[i].left;

        t->nodes[i].left = t->nodes[l].right;
        t->nodes[l].right = i;
        update(t, i);
        update(t, l);
        return l;
}

static int32_t rotate_left(NegoPTree *t, int32_t i) {
        int32_t r = t->nodes[i].right;

        t->nodes[i].right = t->nodes[r].left;
        t->nodes[r].left = i;
        update(t, i);
        update(t, r);
        return r;
}

static int32_t insert(NegoPTree *t, int32_t at, int32_t i) {
        Node *n = &t->nodes[i];

        if (at < 0) {
                update(t, i);
                return i;
        }
        if (before(n->key, n->slot, t->nodes[at].key, t->nodes[at].slot)) {
                t->nodes[at].left = insert(t, t->nodes[at].left, i);
                if (t->nodes[t->nodes[at].left].prio > t->nodes[at].prio)
                        return rotate_right(t, at);
        } else {
                t->nodes[at].right = insert(t, t->nodes[at].right, i);
                if (t->nodes[t->nodes[at].right].prio > t->nodes[at].prio)
                        return rotate_left(t, at);
        }
        update(t, at);
        return at;
}

static int32_t erase(NegoPTree *t, int32_t at, int32_t i) {
        if (at < 0)
                return at;
        if (at == i) {
                Node *n = &t->nodes[at];
                if (n->left < 0)
                        return n->right;
                if (n->right < 0)
                        return n->left;
                if (t->nodes[n->left].prio > t->nodes[n->right].prio) {
                        at = rotate_right(t, at);
                        t->nodes[at].right = erase(t, t->nodes[at].right, i);
                } else {
                        at = rotate_left(t, at);
                        t->nodes[at].left = erase(t, t->nodes[at].left, i);
                }
        } else if (before(t->nodes[i].key, t->nodes[i].slot, t->nodes[at].key, t->nodes[at].slot))
                t->nodes[at].left = erase(t, t->nodes[at].left, i);
        else
                t->nodes[at].right = erase(t, t->nodes[at].right, i);
        update(t, at);
        return at;
}

void nego_ptree_set(NegoPTree *t, uint32_t ordinal, uint32_t slot, const double key[3], const double *rem) {
        Node *n = &t->nodes[ordinal];

        if (n->in)
                t->root = erase(t, t->root, (int32_t) ordinal);
        for (int i = 0; i < 3; i++)
                n->key[i] = key[i];
        for (size_t r = 0; r < t->n_res; r++)
                n->rem[r] = isnan(rem[r]) ? INFINITY : rem[r];
        n->slot = slot;
        n->left = n->right = -1;
        n->in = true;
        t->root = insert(t, t->root, (int32_t) ordinal);
}

typedef struct Search {
        const NegoPTree *t;
        const double *bound_key;
        uint32_t bound_slot;
        const double *need;
        NegoPTreeVisit visit;
        void *userdata;
        uint32_t found;
} Search;

/* Too small for need in some resource (need: at least what any p-slot
 * would be asked for). */
static bool too_small(const NegoPTree *t, const double *have, const double *need) {
        for (size_t r = 0; r < t->n_res; r++)
                if (have[r] + 1e-9 < need[r])
                        return true;
        return false;
}

/* 1: found; -1: past the bound; 0: go on. */
static int search(Search *s, int32_t i) {
        const Node *n;
        int r;

        if (i < 0)
                return 0;
        n = &s->t->nodes[i];
        if (too_small(s->t, n->max, s->need))
                return 0;
        if ((r = search(s, n->left)) != 0)
                return r;
        if (s->bound_key && !before(n->key, n->slot, s->bound_key, s->bound_slot))
                return -1;
        if (!too_small(s->t, n->rem, s->need) && s->visit(s->userdata, n->slot)) {
                s->found = n->slot;
                return 1;
        }
        return search(s, n->right);
}

bool nego_ptree_search(const NegoPTree *t, const double *bound_key, uint32_t bound_slot, const double *need,
                       NegoPTreeVisit visit, void *userdata, uint32_t *ret_slot) {
        Search s = { t, bound_key, bound_slot, need, visit, userdata, 0 };

        if (search(&s, t->root) != 1)
                return false;
        *ret_slot = s.found;
        return true;
}

typedef struct Count {
        const NegoPTree *t;
        const double *need;
        NegoPTreeVisit fits;
        void *userdata;
        size_t n;
} Count;

static void count(Count *c, int32_t i) {
        const Node *n;

        if (i < 0)
                return;
        n = &c->t->nodes[i];
        if (too_small(c->t, n->max, c->need))
                return;
        count(c, n->left);
        if (!too_small(c->t, n->rem, c->need) && c->fits(c->userdata, n->slot))
                c->n++;
        count(c, n->right);
}

size_t nego_ptree_count(const NegoPTree *t, const double *need, NegoPTreeVisit fits, void *userdata) {
        Count c = { t, need, fits, userdata, 0 };

        count(&c, t->root);
        return c.n;
}
