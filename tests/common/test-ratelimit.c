/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test-ratelimit.c — failed handshakes per address (common/ratelimit.h),
 * with the time given by the test: a burst then a ban and a full bucket
 * after it, failures at the allowed rate never banned and faster ones
 * eventually, addresses apart from each other, IPv6 by /64 and IPv4-mapped
 * as IPv4, forgetting, and the bounded table under a flood of addresses
 * (bans survive it).
 */
#define _GNU_SOURCE

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/un.h>

#include <CUnit/CUnit.h>

#include "ratelimit.h"
#include "test-util.h"

#define SEC 1000000ull
#define T0 (1000 * SEC) /* any start: time is ours */

static GleanAddrKey addr(const char *s) {
        GleanAddrKey k;

        GLEAN_TEST_CHECK_FATAL(glean_addr_key_from_string(s, &k) == 0, "'%s' does not parse", s);
        return k;
}

static GleanRateLimit *limiter(size_t capacity) {
        GleanRateLimit *rl = NULL;

        CU_ASSERT_EQUAL_FATAL(glean_ratelimit_new(NULL, capacity, &rl), 0);
        return rl;
}

static void test_burst_then_ban(void) {
        GleanRateLimit *rl = limiter(64);
        GleanAddrKey a = addr("192.0.2.7");
        uint64_t until = 0;

        CU_ASSERT(glean_ratelimit_allow(rl, &a, T0, NULL));
        /* 4 failures in a second: still allowed; the 5th bans */
        for (int i = 0; i < 4; i++) {
                CU_ASSERT_FALSE(glean_ratelimit_fail(rl, &a, T0 + (uint64_t) i * 200000, &until));
                CU_ASSERT(glean_ratelimit_allow(rl, &a, T0 + (uint64_t) i * 200000 + 1, NULL));
        }
        CU_ASSERT_EQUAL(until, 0);
        CU_ASSERT(glean_ratelimit_fail(rl, &a, T0 + SEC, &until));
        CU_ASSERT_EQUAL(until, T0 + SEC + 300 * SEC);

        /* refused for five minutes, whatever else happens */
        uint64_t when = 0;
        CU_ASSERT_FALSE(glean_ratelimit_allow(rl, &a, T0 + 2 * SEC, &when));
        CU_ASSERT_EQUAL(when, until);
        CU_ASSERT_FALSE(glean_ratelimit_allow(rl, &a, until - 1, NULL));
        CU_ASSERT(glean_ratelimit_fail(rl, &a, T0 + 3 * SEC, &when)); /* a late failure: still banned, not longer */
        CU_ASSERT_EQUAL(when, until);
        CU_ASSERT(glean_ratelimit_allow(rl, &a, until, NULL));

        /* after the ban, a full bucket again */
        for (int i = 0; i < 4; i++)
                CU_ASSERT_FALSE(glean_ratelimit_fail(rl, &a, until + (uint64_t) i, NULL));
        CU_ASSERT(glean_ratelimit_fail(rl, &a, until + 4, NULL));
        CU_ASSERT_EQUAL(glean_ratelimit_size(rl), 1);
        glean_ratelimit_free(rl);
        glean_ratelimit_free(NULL);
}

/* 5 a minute is allowed forever; a little faster is banned in the end. */
static void test_rates(void) {
        GleanRateLimit *rl = limiter(64);
        GleanAddrKey a = addr("198.51.100.1"), b = addr("198.51.100.2");
        int banned_at = -1;

        for (int i = 0; i < 1000; i++)
                CU_ASSERT_FALSE_FATAL(glean_ratelimit_fail(rl, &a, T0 + (uint64_t) i * 12 * SEC, NULL));
        for (int i = 0; i < 1000 && banned_at < 0; i++)
                if (glean_ratelimit_fail(rl, &b, T0 + (uint64_t) i * 11 * SEC, NULL))
                        banned_at = i;
        /* the bucket of 5 loses 1 s in 12 per failure: 4 spare failures
         * hold 48 s, gone after 37 failures (the 38th bans) */
        GLEAN_TEST_CHECK(banned_at == 37, "banned after %d failures 11 s apart", banned_at + 1);
        glean_ratelimit_free(rl);
}

static void test_addresses_apart(void) {
        GleanRateLimit *rl = limiter(64);
        GleanAddrKey a = addr("203.0.113.9"), b = addr("203.0.113.10");
        GleanAddrKey v6a = addr("2001:db8:1:2::1"), v6b = addr("2001:db8:1:2:ffff::7"), v6c = addr("2001:db8:1:3::1");
        GleanAddrKey mapped = addr("::ffff:203.0.113.9");

        for (int i = 0; i < 5; i++)
                (void) glean_ratelimit_fail(rl, &a, T0, NULL);
        CU_ASSERT_FALSE(glean_ratelimit_allow(rl, &a, T0 + 1, NULL));
        CU_ASSERT(glean_ratelimit_allow(rl, &b, T0 + 1, NULL));
        CU_ASSERT_FALSE(glean_ratelimit_allow(rl, &mapped, T0 + 1, NULL));

        /* a whole /64 is one address */
        for (int i = 0; i < 5; i++)
                (void) glean_ratelimit_fail(rl, i % 2 ? &v6a : &v6b, T0, NULL);
        CU_ASSERT_FALSE(glean_ratelimit_allow(rl, &v6a, T0 + 1, NULL));
        CU_ASSERT_FALSE(glean_ratelimit_allow(rl, &v6b, T0 + 1, NULL));
        CU_ASSERT(glean_ratelimit_allow(rl, &v6c, T0 + 1, NULL));

        /* forgotten after a good handshake */
        glean_ratelimit_forget(rl, &a);
        glean_ratelimit_forget(rl, &b); /* never seen: nothing */
        CU_ASSERT(glean_ratelimit_allow(rl, &a, T0 + 2, NULL));
        CU_ASSERT_EQUAL(glean_ratelimit_size(rl), 1);
        glean_ratelimit_free(rl);
}

static void test_parse_and_format(void) {
        const struct {
                const char *in, *out;
        } cases[] = {
                { "127.0.0.1", "127.0.0.1" },
                { "::ffff:10.1.2.3", "10.1.2.3" },
                { "2001:db8:aaaa:bbbb:cccc:dddd:eeee:ffff", "2001:db8:aaaa:bbbb::/64" },
                { "::1", "::/64" },
                { "fe80::1", "fe80::/64" },
        };
        char buf[GLEAN_ADDR_KEY_STRLEN];
        GleanAddrKey k, s;

        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                k = addr(cases[i].in);
                glean_addr_key_format(&k, buf);
                GLEAN_TEST_CHECK(strcmp(buf, cases[i].out) == 0, "%s: '%s', want '%s'", cases[i].in, buf,
                                 cases[i].out);
        }
        const char *bad[] = { "", "localhost", "1.2.3", "1.2.3.4.5", "::g", "192.0.2.1/24", " 1.2.3.4" };
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
                GLEAN_TEST_CHECK(glean_addr_key_from_string(bad[i], &k) == -EINVAL, "'%s' parsed", bad[i]);
        CU_ASSERT_EQUAL(glean_addr_key_from_string(NULL, &k), -EINVAL);

        struct sockaddr_in in = { .sin_family = AF_INET, .sin_port = htons(9618) };
        CU_ASSERT_EQUAL(inet_pton(AF_INET, "192.0.2.55", &in.sin_addr), 1);
        CU_ASSERT_EQUAL(glean_addr_key_from_sockaddr((struct sockaddr *) &in, sizeof(in), &s), 0);
        k = addr("192.0.2.55");
        CU_ASSERT(memcmp(&k, &s, sizeof(k)) == 0);
        CU_ASSERT_EQUAL(glean_addr_key_from_sockaddr((struct sockaddr *) &in, sizeof(in) - 1, &s), -EINVAL);

        struct sockaddr_in6 in6 = { .sin6_family = AF_INET6 };
        CU_ASSERT_EQUAL(inet_pton(AF_INET6, "2001:db8:5:6:7::8", &in6.sin6_addr), 1);
        CU_ASSERT_EQUAL(glean_addr_key_from_sockaddr((struct sockaddr *) &in6, sizeof(in6), &s), 0);
        k = addr("2001:db8:5:6::");
        CU_ASSERT(memcmp(&k, &s, sizeof(k)) == 0);

        struct sockaddr_un un = { .sun_family = AF_UNIX };
        CU_ASSERT_EQUAL(glean_addr_key_from_sockaddr((struct sockaddr *) &un, sizeof(un), &s), -EAFNOSUPPORT);
        CU_ASSERT_EQUAL(glean_addr_key_from_sockaddr(NULL, 0, &s), -EINVAL);
}

static void test_bounded(void) {
        GleanRateLimit *rl = limiter(1000);
        char ip[32];

        CU_ASSERT_EQUAL(glean_ratelimit_capacity(rl), 1024);
        for (unsigned i = 0; i < 100000; i++) {
                snprintf(ip, sizeof(ip), "10.%u.%u.%u", i >> 16 & 0xff, i >> 8 & 0xff, i & 0xff);
                GleanAddrKey k = addr(ip);
                (void) glean_ratelimit_fail(rl, &k, T0 + i, NULL);
                CU_ASSERT_FATAL(glean_ratelimit_size(rl) <= 1024);
        }
        CU_ASSERT(glean_ratelimit_size(rl) > 900);
        glean_ratelimit_free(rl);
}

/* One set of 8 ways (capacity 8): which entry a newcomer takes. */
static void test_eviction_keeps_bans(void) {
        GleanRateLimit *rl = limiter(8);
        GleanAddrKey bad = addr("192.0.2.66");
        char ip[32];

        CU_ASSERT_EQUAL(glean_ratelimit_capacity(rl), 8);
        for (int i = 0; i < 5; i++)
                (void) glean_ratelimit_fail(rl, &bad, T0, NULL);
        CU_ASSERT_FALSE(glean_ratelimit_allow(rl, &bad, T0, NULL));
        /* a flood of addresses failing once each, all within the minute */
        for (unsigned i = 0; i < 5000; i++) {
                snprintf(ip, sizeof(ip), "10.0.%u.%u", i >> 8, i & 0xff);
                GleanAddrKey k = addr(ip);
                CU_ASSERT_FALSE(glean_ratelimit_fail(rl, &k, T0 + i, NULL));
        }
        CU_ASSERT_EQUAL(glean_ratelimit_size(rl), 8);
        CU_ASSERT_FALSE(glean_ratelimit_allow(rl, &bad, T0 + 5000, NULL));

        /* the least recently failed goes first: 10.0.19.135 (i = 4999) stays
         * while the 7 ways that are not banned turn over */
        GleanAddrKey recent = addr("10.0.19.135"), old = addr("10.0.0.1");
        for (int i = 0; i < 4; i++)
                (void) glean_ratelimit_fail(rl, &recent, T0 + 5000, NULL);
        CU_ASSERT_FALSE(glean_ratelimit_allow(rl, &recent, T0 + 5001, NULL));
        CU_ASSERT(glean_ratelimit_allow(rl, &old, T0 + 5001, NULL));

        /* with every way banned, the ban that ends first makes room */
        GleanRateLimit *full = limiter(8);
        for (unsigned i = 0; i < 8; i++) {
                snprintf(ip, sizeof(ip), "172.16.0.%u", i);
                GleanAddrKey k = addr(ip);
                for (int j = 0; j < 5; j++)
                        (void) glean_ratelimit_fail(full, &k, T0 + i * SEC, NULL);
        }
        GleanAddrKey first = addr("172.16.0.0"), second = addr("172.16.0.1"), newcomer = addr("172.16.1.1");
        (void) glean_ratelimit_fail(full, &newcomer, T0 + 10 * SEC, NULL);
        CU_ASSERT(glean_ratelimit_allow(full, &first, T0 + 10 * SEC, NULL));
        CU_ASSERT_FALSE(glean_ratelimit_allow(full, &second, T0 + 10 * SEC, NULL));
        glean_ratelimit_free(full);
        glean_ratelimit_free(rl);
}

static void test_policy(void) {
        GleanRateLimit *rl = NULL;
        GleanRateLimitPolicy p = { .burst = 0, .interval_usec = SEC, .ban_usec = SEC };

        CU_ASSERT_EQUAL(glean_ratelimit_new(&p, 8, &rl), -EINVAL);
        p = (GleanRateLimitPolicy){ .burst = 1, .interval_usec = 0, .ban_usec = SEC };
        CU_ASSERT_EQUAL(glean_ratelimit_new(&p, 8, &rl), -EINVAL);
        CU_ASSERT_EQUAL(glean_ratelimit_new(NULL, 0, &rl), -EINVAL);
        CU_ASSERT_PTR_NULL(rl);

        /* burst 1: the first failure bans */
        p = (GleanRateLimitPolicy){ .burst = 1, .interval_usec = 10 * SEC, .ban_usec = 2 * SEC };
        CU_ASSERT_EQUAL_FATAL(glean_ratelimit_new(&p, 1, &rl), 0);
        GleanAddrKey a = addr("192.0.2.1");
        uint64_t until = 0;
        CU_ASSERT(glean_ratelimit_fail(rl, &a, T0, &until));
        CU_ASSERT_EQUAL(until, T0 + 2 * SEC);
        glean_ratelimit_free(rl);
}

static CU_TestInfo tests[] = {
        { "burst then ban", test_burst_then_ban },
        { "allowed and faster rates", test_rates },
        { "addresses apart, /64, mapped", test_addresses_apart },
        { "parse and format", test_parse_and_format },
        { "bounded memory", test_bounded },
        { "eviction keeps bans", test_eviction_keeps_bans },
        { "policy", test_policy },
        CU_TEST_INFO_NULL,
};

static CU_SuiteInfo suites[] = {
        { "ratelimit", NULL, NULL, NULL, NULL, tests },
        CU_SUITE_INFO_NULL,
};

int main(int argc, char **argv) {
        return glean_test_main(argc, argv, suites);
}
