/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ratelimit.h — failed handshakes per source address, so that a host
 * guessing at the pool key (or just broken) is refused for a while.
 *
 * Addresses. An IPv4 address counts alone; an IPv6 address counts with
 * its /64 (one host or site usually holds a whole /64, and could otherwise
 * take a fresh address for every attempt); an IPv4-mapped IPv6 address
 * (::ffff:a.b.c.d) is its IPv4 address.
 *
 * The rule. A token bucket per address, kept as its theoretical arrival
 * time (GCRA), in integers: a failure costs interval / burst; once burst
 * failures have come within interval (the bucket is empty) the address is
 * banned for ban_usec: glean_ratelimit_allow() refuses it. The bucket
 * refills at burst per interval, so failures at that rate or slower are
 * never banned. After a ban the address starts with a full bucket.
 *
 * Memory is bounded: capacity entries (rounded up to a power of two),
 * set-associative (8 ways, the set chosen by a keyed hash, SipHash with a
 * random key, so that addresses cannot be picked to collide). A new
 * address takes, in its set, a free entry, else one whose bucket has
 * refilled and that is not banned, else the least recently failed of those
 * not banned, else the banned one whose ban ends first: a flood of new
 * addresses cannot push out a ban without being banned itself.
 *
 * Time is the caller's: every call takes now in microseconds of a
 * monotonic clock (CLOCK_MONOTONIC); nothing here reads a clock.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

typedef struct GleanAddrKey {
        uint8_t family; /* AF_INET or AF_INET6 */
        uint8_t bytes[16]; /* the IPv4 address, or the IPv6 /64 then zeros */
} GleanAddrKey;

/* Room for glean_addr_key_format(). */
#define GLEAN_ADDR_KEY_STRLEN 52 /* INET6_ADDRSTRLEN and "/64" */

/* The key of an AF_INET or AF_INET6 address. -EAFNOSUPPORT for other
 * families, -EINVAL when len is too short. */
int glean_addr_key_from_sockaddr(const struct sockaddr *sa, socklen_t len, GleanAddrKey *ret);
/* The key of "192.0.2.7" or "2001:db8::1". -EINVAL when it is neither. */
int glean_addr_key_from_string(const char *s, GleanAddrKey *ret);
/* "192.0.2.7" or "2001:db8:0:1::/64", for log records. */
void glean_addr_key_format(const GleanAddrKey *k, char buf[GLEAN_ADDR_KEY_STRLEN]);

typedef struct GleanRateLimitPolicy {
        unsigned burst;         /* failures allowed within interval */
        uint64_t interval_usec;
        uint64_t ban_usec;      /* how long an address is refused then */
} GleanRateLimitPolicy;

/* At most 5 failed handshakes a minute, then 5 minutes refused. */
#define GLEAN_RATELIMIT_DEFAULT \
        ((GleanRateLimitPolicy){ .burst = 5, .interval_usec = 60000000ull, .ban_usec = 300000000ull })

typedef struct GleanRateLimit GleanRateLimit;

/* policy NULL: GLEAN_RATELIMIT_DEFAULT. -EINVAL when burst, interval or
 * capacity is 0 (or capacity above 2^24), -ENOMEM, -EIO (libsodium). */
int glean_ratelimit_new(const GleanRateLimitPolicy *policy, size_t capacity, GleanRateLimit **ret);
void glean_ratelimit_free(GleanRateLimit *rl); /* accepts NULL */

/* Whether k may start a handshake at now. When it may not, *ret_until
 * (may be NULL) is when its ban ends. */
bool glean_ratelimit_allow(GleanRateLimit *rl, const GleanAddrKey *k, uint64_t now, uint64_t *ret_until);

/* Records a failed handshake from k at now. Returns true when k is banned
 * from now on (this failure emptied its bucket, or it was banned already),
 * with *ret_until (may be NULL) the end of the ban. */
bool glean_ratelimit_fail(GleanRateLimit *rl, const GleanAddrKey *k, uint64_t now, uint64_t *ret_until);

/* Forgets k (after a handshake from it succeeded). */
void glean_ratelimit_forget(GleanRateLimit *rl, const GleanAddrKey *k);

/* Entries in use, and the most there can be. */
size_t glean_ratelimit_size(const GleanRateLimit *rl);
size_t glean_ratelimit_capacity(const GleanRateLimit *rl);
