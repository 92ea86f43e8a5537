/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ratelimit.c — failed handshakes per source address (ratelimit.h): a
 * GCRA token bucket per address in a bounded set-associative table.
 */
#define _GNU_SOURCE

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "common-internal.h"
#include "ratelimit.h"

#define WAYS 8u
#define CAPACITY_MAX (1u << 24)

typedef struct Entry {
        GleanAddrKey key;
        bool used;
        uint64_t tat;          /* theoretical arrival time: the bucket is full when tat <= now */
        uint64_t banned_until; /* 0: not banned */
        uint64_t last;         /* the last failure */
} Entry;

struct GleanRateLimit {
        GleanRateLimitPolicy policy;
        uint64_t cost;         /* interval / burst: what one failure costs */
        size_t ways, sets;     /* sets is a power of two */
        size_t used;
        unsigned char hash_key[crypto_shorthash_KEYBYTES];
        Entry entries[];       /* sets * ways, set s at s * ways */
};

/* ---- addresses ---- */

static const unsigned char v4_mapped_prefix[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

static void key_v4(const void *addr, GleanAddrKey *ret) {
        *ret = (GleanAddrKey){ .family = AF_INET };
        memcpy(ret->bytes, addr, 4);
}

static void key_v6(const struct in6_addr *a, GleanAddrKey *ret) {
        if (memcmp(a->s6_addr, v4_mapped_prefix, sizeof(v4_mapped_prefix)) == 0) {
                key_v4(a->s6_addr + 12, ret);
                return;
        }
        *ret = (GleanAddrKey){ .family = AF_INET6 };
        memcpy(ret->bytes, a->s6_addr, 8); /* the /64 */
}

int glean_addr_key_from_sockaddr(const struct sockaddr *sa, socklen_t len, GleanAddrKey *ret) {
        if (!sa || len < (socklen_t) sizeof(sa_family_t))
                return -EINVAL;
        switch (sa->sa_family) {
        case AF_INET: {
                struct sockaddr_in in;
                if (len < (socklen_t) sizeof(in))
                        return -EINVAL;
                memcpy(&in, sa, sizeof(in));
                key_v4(&in.sin_addr, ret);
                return 0;
        }
        case AF_INET6: {
                struct sockaddr_in6 in6;
                if (len < (socklen_t) sizeof(in6))
                        return -EINVAL;
                memcpy(&in6, sa, sizeof(in6));
                key_v6(&in6.sin6_addr, ret);
                return 0;
        }
        default:
                return -EAFNOSUPPORT;
        }
}

int glean_addr_key_from_string(const char *s, GleanAddrKey *ret) {
        struct in6_addr a6;
        struct in_addr a4;

        if (!s)
                return -EINVAL;
        if (inet_pton(AF_INET, s, &a4) == 1) {
                key_v4(&a4, ret);
                return 0;
        }
        if (inet_pton(AF_INET6, s, &a6) == 1) {
                key_v6(&a6, ret);
                return 0;
        }
        return -EINVAL;
}

void glean_addr_key_format(const GleanAddrKey *k, char buf[GLEAN_ADDR_KEY_STRLEN]) {
        char text[INET6_ADDRSTRLEN];

        if (k->family == AF_INET && inet_ntop(AF_INET, k->bytes, text, sizeof(text)))
                snprintf(buf, GLEAN_ADDR_KEY_STRLEN, "%s", text);
        else if (k->family == AF_INET6 && inet_ntop(AF_INET6, k->bytes, text, sizeof(text)))
                snprintf(buf, GLEAN_ADDR_KEY_STRLEN, "%s/64", text);
        else
                snprintf(buf, GLEAN_ADDR_KEY_STRLEN, "(family %u)", k->family);
}

static bool key_equal(const GleanAddrKey *a, const GleanAddrKey *b) {
        return a->family == b->family && memcmp(a->bytes, b->bytes, sizeof(a->bytes)) == 0;
}

/* ---- the table ---- */

int glean_ratelimit_new(const GleanRateLimitPolicy *policy, size_t capacity, GleanRateLimit **ret) {
        GleanRateLimitPolicy p = policy ? *policy : GLEAN_RATELIMIT_DEFAULT;
        GleanRateLimit *rl;
        size_t n = 1;
        int r;

        if (p.burst == 0 || p.interval_usec == 0 || capacity == 0 || capacity > CAPACITY_MAX)
                return -EINVAL;
        r = glean_sodium_init();
        if (r < 0)
                return r;
        while (n < capacity)
                n *= 2;
        rl = calloc(1, sizeof(*rl) + n * sizeof(Entry));
        if (!rl)
                return -ENOMEM;
        rl->policy = p;
        rl->cost = p.interval_usec / p.burst;
        if (rl->cost == 0)
                rl->cost = 1;
        rl->ways = n < WAYS ? n : WAYS;
        rl->sets = n / rl->ways;
        crypto_shorthash_keygen(rl->hash_key);
        *ret = rl;
        return 0;
}

void glean_ratelimit_free(GleanRateLimit *rl) {
        free(rl);
}

size_t glean_ratelimit_size(const GleanRateLimit *rl) {
        return rl->used;
}

size_t glean_ratelimit_capacity(const GleanRateLimit *rl) {
        return rl->sets * rl->ways;
}

static Entry *set_of(GleanRateLimit *rl, const GleanAddrKey *k) {
        unsigned char h[crypto_shorthash_BYTES];
        uint64_t v = 0;

        crypto_shorthash(h, (const unsigned char *) k, sizeof(*k), rl->hash_key);
        for (size_t i = 0; i < sizeof(v); i++)
                v = v << 8 | h[i];
        return rl->entries + (size_t) (v & (rl->sets - 1)) * rl->ways;
}

static Entry *find(GleanRateLimit *rl, const GleanAddrKey *k) {
        Entry *set = set_of(rl, k);

        for (size_t i = 0; i < rl->ways; i++)
                if (set[i].used && key_equal(&set[i].key, k))
                        return &set[i];
        return NULL;
}

static bool banned(const Entry *e, uint64_t now) {
        return e->banned_until > now;
}

/* How reluctantly e is given to a new address, lowest first: free (0),
 * refilled and not banned (1), not banned (2, the least recently failed
 * first), banned (3, the ban that ends first first). */
static int victim_rank(const Entry *e, uint64_t now) {
        if (!e->used)
                return 0;
        if (!banned(e, now) && e->tat <= now)
                return 1;
        return banned(e, now) ? 3 : 2;
}

static Entry *take(GleanRateLimit *rl, const GleanAddrKey *k, uint64_t now) {
        Entry *set = set_of(rl, k), *best = &set[0];
        int best_rank = victim_rank(best, now);

        for (size_t i = 1; i < rl->ways && best_rank > 0; i++) {
                Entry *e = &set[i];
                int rank = victim_rank(e, now);
                if (rank < best_rank || (rank == best_rank && rank == 2 && e->last < best->last) ||
                    (rank == best_rank && rank == 3 && e->banned_until < best->banned_until)) {
                        best = e;
                        best_rank = rank;
                }
        }
        if (!best->used)
                rl->used++;
        *best = (Entry){ .key = *k, .used = true, .tat = now, .last = now };
        return best;
}

bool glean_ratelimit_allow(GleanRateLimit *rl, const GleanAddrKey *k, uint64_t now, uint64_t *ret_until) {
        Entry *e = find(rl, k);

        if (!e || !banned(e, now))
                return true;
        if (ret_until)
                *ret_until = e->banned_until;
        return false;
}

bool glean_ratelimit_fail(GleanRateLimit *rl, const GleanAddrKey *k, uint64_t now, uint64_t *ret_until) {
        const GleanRateLimitPolicy *p = &rl->policy;
        Entry *e = find(rl, k);

        if (!e)
                e = take(rl, k, now);
        e->last = now;
        if (!banned(e, now)) {
                /* GCRA: the bucket is empty when another failure would
                 * take tat beyond now + interval. */
                e->tat = (e->tat > now ? e->tat : now) + rl->cost;
                if (e->tat - now <= p->interval_usec - rl->cost)
                        return false;
                e->banned_until = now + (p->ban_usec ? p->ban_usec : 1);
                e->tat = e->banned_until; /* a full bucket once the ban ends */
        }
        if (ret_until)
                *ret_until = e->banned_until;
        return true;
}

void glean_ratelimit_forget(GleanRateLimit *rl, const GleanAddrKey *k) {
        Entry *e = find(rl, k);

        if (!e)
                return;
        *e = (Entry){};
        rl->used--;
}
