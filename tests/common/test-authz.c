/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test-authz.c — HTCondor's ALLOW_ and DENY_ lists (common/authz.h): every
 * form of entry (users, host names with wildcards at either end, IPv4 and
 * IPv6 addresses, HTCondor's IPv4 and IPv6 wildcards, CIDR and dotted
 * netmasks, {:local_ips:}), IPv4-mapped IPv6 on either side, case,
 * unauthenticated peers; DENY over ALLOW and over implied levels, the
 * hierarchy, unset lists and their fallbacks against empty ones,
 * subsystem knobs, the legacy fallback; the manual's own example
 * configurations; malformed entries with their exact messages; the bounds
 * and a pathological wildcard.
 */
#define _GNU_SOURCE

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/un.h>

#include <CUnit/CUnit.h>

#include "common/authz.h"
#include "test-util.h"

typedef struct Knob {
        const char *name, *text;
} Knob;

/* A policy from knobs, the i-th set from "t.conf:i+1". */
static GleanAuthz *make_policy(const char *subsystem, const Knob *knobs, size_t n) {
        GleanAuthz *a = NULL;

        CU_ASSERT_EQUAL_FATAL(glean_authz_new(subsystem, &a), 0);
        for (size_t i = 0; i < n; i++) {
                char src[32], why[512] = "";
                snprintf(src, sizeof src, "t.conf:%zu", i + 1);
                int r = glean_authz_set(a, knobs[i].name, knobs[i].text, src, why, sizeof why);
                GLEAN_TEST_CHECK(r == 0, "%s = %s: %d (%s)", knobs[i].name, knobs[i].text, r, why);
        }
        return a;
}
#define POLICY(subsystem, ...) \
        make_policy(subsystem, (const Knob[]){ __VA_ARGS__ }, sizeof((const Knob[]){ __VA_ARGS__ }) / sizeof(Knob))

static GleanAuthzPeer peer_of(const char *user, const char *host, const char *addr) {
        GleanAuthzPeer p = { .user = user, .host = host };

        if (addr)
                GLEAN_TEST_CHECK(glean_authz_peer_address(&p, addr) == 0, "address %s", addr);
        return p;
}

static int check(const GleanAuthz *a, GleanAuthzLevel level, const char *user, const char *host, const char *addr,
                 char *why, size_t whylen) {
        GleanAuthzPeer p = peer_of(user, host, addr);
        return glean_authz_check(a, level, &p, why, whylen);
}

/* ---- every form of entry ---- */

static void test_forms(void) {
        static const struct {
                const char *list, *user, *host, *addr;
                bool local, want;
        } rows[] = {
                /* anyone */
                { "*", NULL, NULL, NULL, false, true },
                { "*", "alice@example.org", "h.example.org", "192.0.2.1", false, true },
                { "*/*", "alice@example.org", NULL, "2001:db8::1", false, true },
                { "*@*", NULL, NULL, NULL, false, true },
                /* host names, compared without case */
                { "bird.cs.wisc.edu", NULL, "bird.cs.wisc.edu", NULL, false, true },
                { "bird.cs.wisc.edu", NULL, "BIRD.CS.Wisc.EDU", NULL, false, true },
                { "BIRD.cs.wisc.edu", "x@y", "bird.cs.wisc.edu", NULL, false, true },
                { "bird.cs.wisc.edu", NULL, "fish.cs.wisc.edu", NULL, false, false },
                { "bird.cs.wisc.edu", NULL, NULL, "192.0.2.1", false, false }, /* names are not resolved */
                { "bird.cs.wisc.edu", NULL, "bird.cs.wisc.edu.evil.org", NULL, false, false },
                /* wildcards at the start, the end, both, inside */
                { "*.cs.wisc.edu", NULL, "bird.cs.wisc.edu", NULL, false, true },
                { "*.cs.wisc.edu", NULL, "a.b.cs.wisc.edu", NULL, false, true },
                { "*.cs.wisc.edu", NULL, "cs.wisc.edu", NULL, false, false },
                { "*.cs.wisc.edu", NULL, "bird.cs.wisc.edu.evil.org", NULL, false, false },
                { "*.cs.wisc.edu", NULL, "birdcs.wisc.edu", NULL, false, false },
                { "sol*.cs.wisc.edu", NULL, "sol12.cs.wisc.edu", NULL, false, true },
                { "sol*.cs.wisc.edu", NULL, "sol.cs.wisc.edu", NULL, false, true },
                { "sol*.cs.wisc.edu", NULL, "luna.cs.wisc.edu", NULL, false, false },
                { "node*", NULL, "node7.example.org", NULL, false, true },
                { "node*", NULL, "anode7.example.org", NULL, false, false },
                { "*cs*", NULL, "bird.cs.wisc.edu", NULL, false, true },
                { "*cs*", NULL, "bird.ee.wisc.edu", NULL, false, false },
                { "a*b*c", NULL, "axxbyyc", NULL, false, true },
                { "a*b*c", NULL, "axxcyyb", NULL, false, false },
                { "a*bc*bc", NULL, "abcbc", NULL, false, true },
                { "a*bc*bc", NULL, "abc", NULL, false, false },
                { "*", NULL, "", NULL, false, true },
                /* IPv4: addresses, HTCondor's wildcards and partial addresses */
                { "192.0.2.7", NULL, NULL, "192.0.2.7", false, true },
                { "192.0.2.7", NULL, NULL, "192.0.2.8", false, false },
                { "192.0.2.7", NULL, "192.0.2.7", NULL, false, false }, /* an address entry, a name peer */
                { "192.168.*", NULL, NULL, "192.168.3.4", false, true },
                { "192.168.*", NULL, NULL, "192.169.3.4", false, false },
                { "192.168.", NULL, NULL, "192.168.3.4", false, true },
                { "192.168", NULL, NULL, "192.168.3.4", false, true },
                { "192.168.1*", NULL, NULL, "192.168.1.7", false, true },
                { "192.168.1*", NULL, NULL, "192.168.10.7", false, false }, /* HTCondor: 192.168.1.* */
                { "10.*", NULL, NULL, "10.200.0.1", false, true },
                { "177.55.*", "x@y", NULL, "177.55.0.9", false, true },
                /* CIDR and dotted netmasks */
                { "10.0.0.0/8", NULL, NULL, "10.255.1.1", false, true },
                { "10.0.0.0/8", NULL, NULL, "11.0.0.1", false, false },
                { "10.1.2.3/8", NULL, NULL, "10.9.9.9", false, true }, /* host bits ignored */
                { "192.0.2.128/25", NULL, NULL, "192.0.2.200", false, true },
                { "192.0.2.128/25", NULL, NULL, "192.0.2.100", false, false },
                { "0.0.0.0/0", NULL, NULL, "203.0.113.5", false, true },
                { "0.0.0.0/0", NULL, NULL, "2001:db8::1", false, false },
                { "192.0.2.7/32", NULL, NULL, "192.0.2.7", false, true },
                { "128.105.0.0/255.255.0.0", NULL, NULL, "128.105.7.7", false, true },
                { "128.105.0.0/255.255.0.0", NULL, NULL, "128.106.0.1", false, false },
                { "128.105.64.0/255.255.192.0", NULL, NULL, "128.105.127.1", false, true },
                { "128.105.64.0/255.255.192.0", NULL, NULL, "128.105.128.1", false, false },
                { "10.0.0.0/0.0.0.0", NULL, NULL, "1.2.3.4", false, true },
                /* IPv6 */
                { "2001:db8::1", NULL, NULL, "2001:db8::1", false, true },
                { "2001:DB8::1", NULL, NULL, "2001:db8:0:0::1", false, true },
                { "2001:db8::/32", NULL, NULL, "2001:db8:1::5", false, true },
                { "2001:db8::/32", NULL, NULL, "2001:db9::1", false, false },
                { "2001:db8::/32", NULL, NULL, "192.0.2.1", false, false },
                { "2001:db8:8000::/33", NULL, NULL, "2001:db8:ffff::1", false, true },
                { "2001:db8:8000::/33", NULL, NULL, "2001:db8:7fff::1", false, false },
                { "2001:db8:*", NULL, NULL, "2001:db8:1:2::3", false, true },
                { "2001:db8:*", NULL, NULL, "2001:db9::3", false, false },
                { "::/0", NULL, NULL, "2001:db8::1", false, true },
                { "::/0", NULL, NULL, "192.0.2.1", false, false },
                { "::1", NULL, NULL, "::1", false, true },
                /* IPv4-mapped IPv6: the peer's, the entry's */
                { "192.0.2.7", NULL, NULL, "::ffff:192.0.2.7", false, true },
                { "192.0.2.0/24", NULL, NULL, "::ffff:192.0.2.9", false, true },
                { "192.0.*", NULL, NULL, "::ffff:192.0.3.9", false, true },
                { "::ffff:192.0.2.7", NULL, NULL, "192.0.2.7", false, true },
                { "::ffff:192.0.2.0/120", NULL, NULL, "192.0.2.9", false, true },
                { "::ffff:192.0.2.0/120", NULL, NULL, "192.0.3.9", false, false },
                /* this machine */
                { "{:local_ips:}", NULL, NULL, "127.0.0.1", true, true },
                { "{:LOCAL_IPS:}", NULL, NULL, "127.0.0.1", true, true },
                { "{:local_ips:}", NULL, NULL, "192.0.2.1", false, false },
                { "*/{:local_ips:}", "alice@example.org", NULL, NULL, true, true },
                /* users */
                { "alice@example.org", "alice@example.org", NULL, NULL, false, true },
                { "alice@example.org", "ALICE@Example.ORG", "any.where", "198.51.100.1", false, true },
                { "alice@example.org", "bob@example.org", NULL, NULL, false, false },
                { "alice@example.org", NULL, NULL, NULL, false, false },
                { "alice@example.org", "alice@example.org.evil", NULL, NULL, false, false },
                { "condor@*", "condor@cm.example.org", NULL, NULL, false, true },
                { "condor@*", "condorx@cm.example.org", NULL, NULL, false, false },
                { "*@example.org", "carol@example.org", NULL, NULL, false, true },
                { "*@example.org", "carol@example.org.au", NULL, NULL, false, false },
                { "agent*@*", "agent@node1.example.org", NULL, NULL, false, true },
                /* user and host */
                { "*@example.org/*.example.org", "carol@example.org", "h.example.org", NULL, false, true },
                { "*@example.org/*.example.org", "carol@example.org", "h.other.org", NULL, false, false },
                { "*@example.org/*.example.org", "carol@other.org", "h.example.org", NULL, false, false },
                { "*@example.org/*.example.org", "carol@example.org", NULL, "192.0.2.1", false, false },
                { "alice@example.org/10.0.0.0/8", "alice@example.org", NULL, "10.1.1.1", false, true },
                { "alice@example.org/10.0.0.0/8", "alice@example.org", NULL, "11.1.1.1", false, false },
                { "alice@example.org/10.0.0.0/8", "bob@example.org", NULL, "10.1.1.1", false, false },
                { "alice@example.org/10.*", "alice@example.org", NULL, "10.1.1.1", false, true },
                { "alice@example.org/*", "alice@example.org", NULL, NULL, false, true },
                { "*/10.0.0.0/8", NULL, NULL, "10.0.0.1", false, true },
                { "*/2001:db8::1", "x@y", NULL, "2001:db8::1", false, true },
                { "*/bird.cs.wisc.edu", NULL, "bird.cs.wisc.edu", NULL, false, true },
                { "joesmith@cs.wisc.edu/192.0.2.0/24", "joesmith@cs.wisc.edu", NULL, "192.0.2.77", false, true },
                { "*@cs.wisc.edu/128.105.*", "zmiller@cs.wisc.edu", NULL, "128.105.1.2", false, true },
                { "*@cs.wisc.edu/128.105.*", "zmiller@cs.wisc.edu", NULL, "128.106.1.2", false, false },
                /* separators: commas and/or white space */
                { "a.example.org,b.example.org  c.example.org\n\td.example.org", NULL, "d.example.org", NULL, false,
                  true },
                { " , a.example.org ,, \r\n", NULL, "a.example.org", NULL, false, true },
                { "a.example.org,b.example.org", NULL, "c.example.org", NULL, false, false },
        };
        for (size_t i = 0; i < sizeof rows / sizeof *rows; i++) {
                GleanAuthz *a = POLICY(NULL, { "ALLOW_READ", rows[i].list });
                GleanAuthzPeer p = peer_of(rows[i].user, rows[i].host, rows[i].addr);
                char why[512] = "";
                p.local = rows[i].local;
                int r = glean_authz_check(a, GLEAN_AUTHZ_READ, &p, why, sizeof why);
                GLEAN_TEST_CHECK(r == (rows[i].want ? 0 : -EACCES), "row %zu: '%s' for %s/%s/%s gave %d (%s)", i,
                                 rows[i].list, rows[i].user ? rows[i].user : "-", rows[i].host ? rows[i].host : "-",
                                 rows[i].addr ? rows[i].addr : "-", r, why);
                GLEAN_TEST_CHECK(why[0] != 0, "row %zu: no reason", i);
                glean_authz_free(a);
        }
}

/* An unauthenticated peer is unauthenticated@unmapped, however the caller says it. */
static void test_unauthenticated(void) {
        GleanAuthz *a = POLICY(NULL, { "ALLOW_READ", "*@example.org" }, { "ALLOW_WRITE", "*@*" },
                               { "ALLOW_ADMINISTRATOR", "*@unmapped" }, { "ALLOW_DAEMON", "h.example.org" },
                               { "ALLOW_NEGOTIATOR", "*@*/h.example.org" });
        const char *const unauth[] = { NULL, "", "unauthenticated" };
        char why[512];

        for (size_t i = 0; i < 3; i++) {
                const char *u = unauth[i];
                GLEAN_TEST_CHECK(check(a, GLEAN_AUTHZ_READ, u, NULL, NULL, why, sizeof why) == 0, "%zu: READ (%s)",
                                 i, why); /* through WRITE */
                GLEAN_TEST_CHECK(check(a, GLEAN_AUTHZ_WRITE, u, NULL, NULL, why, sizeof why) == 0, "%zu: WRITE", i);
                GLEAN_TEST_CHECK(check(a, GLEAN_AUTHZ_ADMINISTRATOR, u, NULL, NULL, why, sizeof why) == 0,
                                 "%zu: ADMINISTRATOR", i);
                GLEAN_TEST_CHECK(check(a, GLEAN_AUTHZ_DAEMON, u, "h.example.org", NULL, why, sizeof why) == 0,
                                 "%zu: DAEMON by host", i);
                GLEAN_TEST_CHECK(check(a, GLEAN_AUTHZ_DAEMON, u, "g.example.org", NULL, why, sizeof why) == -EACCES,
                                 "%zu: DAEMON, another host", i);
                GLEAN_TEST_CHECK(check(a, GLEAN_AUTHZ_NEGOTIATOR, u, "h.example.org", NULL, why, sizeof why) == 0,
                                 "%zu: NEGOTIATOR", i);
        }
        glean_authz_free(a);
        a = POLICY(NULL, { "ALLOW_READ", "*@example.org" });
        CU_ASSERT_EQUAL(check(a, GLEAN_AUTHZ_READ, NULL, "h.example.org", "192.0.2.1", why, sizeof why), -EACCES);
        CU_ASSERT_STRING_EQUAL(why, "not in ALLOW_READ (1 entry) of t.conf:1, and none of WRITE, NEGOTIATOR, CONFIG, "
                                    "ADVERTISE_STARTD, ADVERTISE_SCHEDD, ADVERTISE_MASTER access (which imply READ) "
                                    "is allowed");
        CU_ASSERT_EQUAL(check(a, GLEAN_AUTHZ_READ, "bob@example.org", NULL, NULL, why, sizeof why), 0);
        glean_authz_free(a);
}

/* ---- DENY over ALLOW, and the hierarchy ---- */

static void test_deny_wins(void) {
        GleanAuthz *a = POLICY(NULL, { "ALLOW_WRITE", "*.example.org, alice@example.org" },
                               { "DENY_WRITE", "bad.example.org *@evil.org 192.0.2.0/24" },
                               { "ALLOW_ADMINISTRATOR", "root@example.org" }, { "DENY_READ", "root@example.org/lab*" },
                               { "DENY_ADMINISTRATOR", "root@example.org/kiosk.example.org" });
        char why[512];

        CU_ASSERT_EQUAL(check(a, GLEAN_AUTHZ_WRITE, NULL, "good.example.org", NULL, why, sizeof why), 0);
        CU_ASSERT_STRING_EQUAL(why, "allowed by ALLOW_WRITE entry \"*.example.org\" of t.conf:1");
        CU_ASSERT_EQUAL(check(a, GLEAN_AUTHZ_WRITE, NULL, "bad.example.org", NULL, why, sizeof why), -EACCES);
        CU_ASSERT_STRING_EQUAL(why, "denied by DENY_WRITE entry \"bad.example.org\" of t.conf:2");
        CU_ASSERT_EQUAL(check(a, GLEAN_AUTHZ_WRITE, "mallory@evil.org", "good.example.org", NULL, why, sizeof why),
                        -EACCES);
        CU_ASSERT_STRING_EQUAL(why, "denied by DENY_WRITE entry \"*@evil.org\" of t.conf:2");
        /* a listed user from a denied address */
        CU_ASSERT_EQUAL(check(a, GLEAN_AUTHZ_WRITE, "alice@example.org", NULL, "192.0.2.5", why, sizeof why),
                        -EACCES);
        CU_ASSERT_STRING_EQUAL(why, "denied by DENY_WRITE entry \"192.0.2.0/24\" of t.conf:2");
        CU_ASSERT_EQUAL(check(a, GLEAN_AUTHZ_WRITE, "alice@example.org", NULL, "192.0.3.5", why, sizeof why), 0);
        /* DENY_WRITE beats ADMINISTRATOR's implied WRITE, not ADMINISTRATOR itself */
        CU_ASSERT_EQUAL(check(a, GLEAN_AUTHZ_WRITE, "root@example.org", "bad.example.org", NULL, why, sizeof why),
                        -EACCES);
        CU_ASSERT_EQUAL(check(a, GLEAN_AUTHZ_ADMINISTRATOR, "root@example.org", "bad.example.org", NULL, why,
                              sizeof why),
                        0);
        CU_ASSERT_EQUAL(check(a, GLEAN_AUTHZ_WRITE, "root@example.org", "cm.other.org", NULL, why, sizeof why), 0);
        CU_ASSERT_STRING_EQUAL(why, "allowed by ALLOW_ADMINISTRATOR entry \"root@example.org\" of t.conf:3 "
                                    "(ADMINISTRATOR implies WRITE)");
        /* DENY_READ beats every level that implies READ */
        CU_ASSERT_EQUAL(check(a, GLEAN_AUTHZ_READ, "root@example.org", "lab1.example.org", NULL, why, sizeof why),
                        -EACCES);
        CU_ASSERT_STRING_EQUAL(why, "denied by DENY_READ entry \"root@example.org/lab*\" of t.conf:4");
        CU_ASSERT_EQUAL(check(a, GLEAN_AUTHZ_WRITE, "root@example.org", "lab1.example.org", NULL, why, sizeof why),
                        0);
        /* DENY_ADMINISTRATOR: no ADMINISTRATOR, so no WRITE through it; ALLOW_WRITE still lets */
        CU_ASSERT_EQUAL(check(a, GLEAN_AUTHZ_ADMINISTRATOR, "root@example.org", "kiosk.example.org", NULL, why,
                              sizeof why),
                        -EACCES);
        CU_ASSERT_EQUAL(check(a, GLEAN_AUTHZ_WRITE, "root@example.org", "kiosk.example.org", NULL, why, sizeof why),
                        0);
        CU_ASSERT_STRING_EQUAL(why, "allowed by ALLOW_WRITE entry \"*.example.org\" of t.conf:1");
        CU_ASSERT_EQUAL(check(a, GLEAN_AUTHZ_WRITE, "root@example.org", "kiosk.other.org", NULL, why, sizeof why),
                        0); /* ADMINISTRATOR from another kiosk */
        glean_authz_free(a);

        /* denied WRITE does not give READ through WRITE */
        a = POLICY(NULL, { "ALLOW_WRITE", "alice@example.org" }, { "DENY_WRITE", "alice@example.org/bad*" });
        CU_ASSERT_EQUAL(check(a, GLEAN_AUTHZ_READ, "alice@example.org", "good", NULL, why, sizeof why), 0);
        CU_ASSERT_STRING_EQUAL(why, "allowed by ALLOW_WRITE entry \"alice@example.org\" of t.conf:1 (WRITE implies "
                                    "READ)");
        CU_ASSERT_EQUAL(check(a, GLEAN_AUTHZ_READ, "alice@example.org", "bad1", NULL, why, sizeof why), -EACCES);
        CU_ASSERT_STRING_EQUAL(why, "ALLOW_READ is not set, and none of WRITE, NEGOTIATOR, CONFIG, "
                                    "ADVERTISE_STARTD, ADVERTISE_SCHEDD, ADVERTISE_MASTER access (which imply READ) "
                                    "is allowed");
        glean_authz_free(a);

        /* DENY * denies everyone, ALLOW * with a DENY list everyone else */
        a = POLICY(NULL, { "ALLOW_READ", "*" }, { "DENY_READ", "*" }, { "ALLOW_WRITE", "*" },
                   { "DENY_WRITE", "*.evil.org" });
        CU_ASSERT_EQUAL(check(a, GLEAN_AUTHZ_READ, "a@b", "h", "192.0.2.1", why, sizeof why), -EACCES);
        CU_ASSERT_EQUAL(check(a, GLEAN_AUTHZ_WRITE, "a@b", "h.evil.org", NULL, why, sizeof why), -EACCES);
        CU_ASSERT_EQUAL(check(a, GLEAN_AUTHZ_WRITE, "a@b", "h.good.org", NULL, why, sizeof why), 0);
        CU_ASSERT_EQUAL(check(a, GLEAN_AUTHZ_WRITE, "a@b", NULL, NULL, why, sizeof why), 0);
        glean_authz_free(a);
}

static void test_hierarchy(void) {
        GleanAuthz *a = POLICY(NULL, { "ALLOW_ADMINISTRATOR", "admin@example.org" },
                               { "ALLOW_DAEMON", "condor@example.org" },
                               { "ALLOW_NEGOTIATOR", "neg@example.org/cm.example.org" },
                               { "ALLOW_CONFIG", "cfg@example.org" }, { "ALLOW_ADVERTISE_STARTD", "agent@*" },
                               { "ALLOW_WRITE", "writer@example.org" });
        enum { R = 1 << GLEAN_AUTHZ_READ, W = 1 << GLEAN_AUTHZ_WRITE, N = 1 << GLEAN_AUTHZ_NEGOTIATOR,
               A = 1 << GLEAN_AUTHZ_ADMINISTRATOR, C = 1 << GLEAN_AUTHZ_CONFIG, D = 1 << GLEAN_AUTHZ_DAEMON,
               AST = 1 << GLEAN_AUTHZ_ADVERTISE_STARTD, ASC = 1 << GLEAN_AUTHZ_ADVERTISE_SCHEDD,
               AM = 1 << GLEAN_AUTHZ_ADVERTISE_MASTER };
        static const struct {
                const char *user, *host;
                unsigned levels; /* exactly these, of READ .. ADVERTISE_MASTER but CLIENT */
        } rows[] = {
                { "admin@example.org", "any", A | W | R },
                { "condor@example.org", "any", D | W | R | ASC | AM }, /* ADVERTISE_STARTD has its own list */
                { "neg@example.org", "cm.example.org", N | R },
                { "neg@example.org", "other.example.org", 0 },
                { "cfg@example.org", "any", C | R },
                { "agent@node1.example.org", "node1.example.org", AST | R },
                { "writer@example.org", "any", W | R },
                { "nobody@example.org", "any", 0 },
                { NULL, "any", 0 },
        };
        char why[512];

        for (size_t i = 0; i < sizeof rows / sizeof *rows; i++)
                for (int l = GLEAN_AUTHZ_READ; l < GLEAN_AUTHZ_LEVELS; l++) {
                        if (l == GLEAN_AUTHZ_CLIENT)
                                continue;
                        int r = check(a, l, rows[i].user, rows[i].host, NULL, why, sizeof why);
                        bool want = rows[i].levels & (1u << l);
                        GLEAN_TEST_CHECK(r == (want ? 0 : -EACCES), "%s from %s, %s: %d (%s)",
                                         rows[i].user ? rows[i].user : "unauthenticated", rows[i].host,
                                         glean_authz_level_name(l), r, why);
                }
        CU_ASSERT_EQUAL(check(a, GLEAN_AUTHZ_READ, "admin@example.org", NULL, NULL, why, sizeof why), 0);
        CU_ASSERT_STRING_EQUAL(why, "allowed by ALLOW_ADMINISTRATOR entry \"admin@example.org\" of t.conf:1 "
                                    "(ADMINISTRATOR implies WRITE, which implies READ)");
        CU_ASSERT_EQUAL(check(a, GLEAN_AUTHZ_READ, "agent@n", NULL, NULL, why, sizeof why), 0);
        CU_ASSERT_STRING_EQUAL(why, "allowed by ALLOW_ADVERTISE_STARTD entry \"agent@*\" of t.conf:5 "
                                    "(ADVERTISE_STARTD implies READ)");
        CU_ASSERT_EQUAL(check(a, GLEAN_AUTHZ_ADVERTISE_SCHEDD, "condor@example.org", NULL, NULL, why, sizeof why), 0);
        CU_ASSERT_STRING_EQUAL(why, "allowed by ALLOW_DAEMON entry \"condor@example.org\" of t.conf:2");
        CU_ASSERT_EQUAL(check(a, GLEAN_AUTHZ_WRITE, "nobody@example.org", NULL, NULL, why, sizeof why), -EACCES);
        CU_ASSERT_STRING_EQUAL(why, "not in ALLOW_WRITE (1 entry) of t.conf:6, and neither ADMINISTRATOR nor DAEMON "
                                    "access (which imply WRITE) is allowed");
        CU_ASSERT_EQUAL(check(a, GLEAN_AUTHZ_ADVERTISE_STARTD, "condor@example.org", NULL, NULL, why, sizeof why),
                        -EACCES);
        CU_ASSERT_STRING_EQUAL(why, "not in ALLOW_ADVERTISE_STARTD (1 entry) of t.conf:5");
        /* ALLOW is open, whatever is set */
        CU_ASSERT_EQUAL(check(a, GLEAN_AUTHZ_ALLOW, NULL, NULL, NULL, why, sizeof why), 0);
        glean_authz_free(a);

        /* The brief's form of the message, with three entries */
        a = POLICY(NULL, { "ALLOW_WRITE", "a@x b@x c@x" });
        CU_ASSERT_EQUAL(check(a, GLEAN_AUTHZ_WRITE, "d@x", NULL, NULL, why, sizeof why), -EACCES);
        CU_ASSERT_PTR_NOT_NULL(strstr(why, "not in ALLOW_WRITE (3 entries) of t.conf:1"));
        glean_authz_free(a);
}

/* ---- unset lists, their fallbacks, empty lists ---- */

static void test_unset_and_empty(void) {
        GleanAuthz *a = POLICY(NULL, { "ALLOW_READ", NULL });
        char why[512];

        /* nothing set: nobody has anything but ALLOW and CLIENT */
        for (int l = GLEAN_AUTHZ_READ; l < GLEAN_AUTHZ_LEVELS; l++) {
                int r = check(a, l, "root@example.org", "h", "127.0.0.1", why, sizeof why);
                GLEAN_TEST_CHECK(r == (l == GLEAN_AUTHZ_CLIENT ? 0 : -EACCES), "%s: %d (%s)",
                                 glean_authz_level_name(l), r, why);
        }
        CU_ASSERT_EQUAL(check(a, GLEAN_AUTHZ_CLIENT, NULL, NULL, NULL, why, sizeof why), 0);
        CU_ASSERT_STRING_EQUAL(why, "allowed: ALLOW_CLIENT is not set, and its default is *");
        CU_ASSERT_EQUAL(check(a, GLEAN_AUTHZ_NEGOTIATOR, NULL, NULL, NULL, why, sizeof why), -EACCES);
        CU_ASSERT_STRING_EQUAL(why, "ALLOW_NEGOTIATOR is not set (nor ALLOW_DEFAULT): nobody has NEGOTIATOR access");
        CU_ASSERT_EQUAL(check(a, GLEAN_AUTHZ_ADVERTISE_STARTD, NULL, NULL, NULL, why, sizeof why), -EACCES);
        CU_ASSERT_STRING_EQUAL(why, "ALLOW_ADVERTISE_STARTD is not set (nor ALLOW_DAEMON, ALLOW_DEFAULT): nobody has "
                                    "ADVERTISE_STARTD access");
        CU_ASSERT_EQUAL(check(a, GLEAN_AUTHZ_WRITE, NULL, NULL, NULL, why, sizeof why), -EACCES);
        CU_ASSERT_STRING_EQUAL(why, "ALLOW_WRITE is not set, and neither ADMINISTRATOR nor DAEMON access (which "
                                    "imply WRITE) is allowed");
        glean_authz_free(a);

        /* CLIENT: the default * with a DENY list */
        a = POLICY(NULL, { "DENY_CLIENT", "*.evil.org" });
        CU_ASSERT_EQUAL(check(a, GLEAN_AUTHZ_CLIENT, NULL, "cm.evil.org", NULL, why, sizeof why), -EACCES);
        CU_ASSERT_EQUAL(check(a, GLEAN_AUTHZ_CLIENT, NULL, "cm.good.org", NULL, why, sizeof why), 0);
        glean_authz_free(a);
        a = POLICY(NULL, { "ALLOW_CLIENT", "cm.good.org" });
        CU_ASSERT_EQUAL(check(a, GLEAN_AUTHZ_CLIENT, NULL, "cm.other.org", NULL, why, sizeof why), -EACCES);
        glean_authz_free(a);

        /* ADVERTISE_* unset: DAEMON's lists, ALLOW and DENY each */
        a = POLICY(NULL, { "ALLOW_DAEMON", "condor@*" }, { "DENY_DAEMON", "condor@*/bad.example.org" },
                   { "DENY_ADVERTISE_MASTER", "condor@*/m.example.org" });
        CU_ASSERT_EQUAL(check(a, GLEAN_AUTHZ_ADVERTISE_STARTD, "condor@x", "n.example.org", NULL, why, sizeof why),
                        0);
        CU_ASSERT_STRING_EQUAL(why, "allowed by ALLOW_DAEMON entry \"condor@*\" of t.conf:1");
        CU_ASSERT_EQUAL(check(a, GLEAN_AUTHZ_ADVERTISE_STARTD, "condor@x", "bad.example.org", NULL, why, sizeof why),
                        -EACCES);
        CU_ASSERT_STRING_EQUAL(why, "denied by DENY_DAEMON entry \"condor@*/bad.example.org\" of t.conf:2");
        /* its own DENY list replaces DAEMON's */
        CU_ASSERT_EQUAL(check(a, GLEAN_AUTHZ_ADVERTISE_MASTER, "condor@x", "bad.example.org", NULL, why, sizeof why),
                        0);
        CU_ASSERT_EQUAL(check(a, GLEAN_AUTHZ_ADVERTISE_MASTER, "condor@x", "m.example.org", NULL, why, sizeof why),
                        -EACCES);
        CU_ASSERT_EQUAL(check(a, GLEAN_AUTHZ_ADVERTISE_STARTD, "other@x", "n.example.org", NULL, why, sizeof why),
                        -EACCES);
        CU_ASSERT_STRING_EQUAL(why, "not in ALLOW_DAEMON (1 entry) of t.conf:1");
        /* an empty ALLOW_ADVERTISE_STARTD is nobody, no fallback; unset again, the fallback again */
        char w2[512];
        CU_ASSERT_EQUAL(glean_authz_set(a, "ALLOW_ADVERTISE_STARTD", " , ", "t.conf:9", w2, sizeof w2), 0);
        CU_ASSERT_EQUAL(check(a, GLEAN_AUTHZ_ADVERTISE_STARTD, "condor@x", "n.example.org", NULL, why, sizeof why),
                        -EACCES);
        CU_ASSERT_STRING_EQUAL(why, "not in ALLOW_ADVERTISE_STARTD (0 entries) of t.conf:9");
        CU_ASSERT_EQUAL(glean_authz_set(a, "ALLOW_ADVERTISE_STARTD", NULL, NULL, w2, sizeof w2), 0);
        CU_ASSERT_EQUAL(check(a, GLEAN_AUTHZ_ADVERTISE_STARTD, "condor@x", "n.example.org", NULL, why, sizeof why),
                        0);
        glean_authz_free(a);

        /* an empty ALLOW_WRITE: only the levels that imply WRITE */
        a = POLICY(NULL, { "ALLOW_WRITE", "" }, { "ALLOW_ADMINISTRATOR", "admin@x" });
        CU_ASSERT_EQUAL(check(a, GLEAN_AUTHZ_WRITE, "admin@x", NULL, NULL, why, sizeof why), 0);
        CU_ASSERT_EQUAL(check(a, GLEAN_AUTHZ_WRITE, "user@x", NULL, NULL, why, sizeof why), -EACCES);
        CU_ASSERT_STRING_EQUAL(why, "not in ALLOW_WRITE (0 entries) of t.conf:1, and neither ADMINISTRATOR nor "
                                    "DAEMON access (which imply WRITE) is allowed");
        glean_authz_free(a);

        /* ALLOW_DEFAULT and DENY_DEFAULT: every level's last fallback (DAEMON's too, and so ADVERTISE_*'s) */
        a = POLICY(NULL, { "ALLOW_DEFAULT", "*.example.org" }, { "DENY_DEFAULT", "bad.example.org" },
                   { "ALLOW_NEGOTIATOR", "cm.example.org" });
        for (int l = GLEAN_AUTHZ_READ; l < GLEAN_AUTHZ_LEVELS; l++) {
                bool want = l != GLEAN_AUTHZ_NEGOTIATOR;
                int r = check(a, l, NULL, "h.example.org", NULL, why, sizeof why);
                GLEAN_TEST_CHECK(r == (want ? 0 : -EACCES), "DEFAULT, %s: %d (%s)", glean_authz_level_name(l), r,
                                 why);
                r = check(a, l, NULL, "bad.example.org", NULL, why, sizeof why);
                /* CLIENT's ALLOW default is *, not ALLOW_DEFAULT; DENY_DEFAULT is its DENY */
                GLEAN_TEST_CHECK(r == -EACCES, "DEFAULT, %s, bad: %d (%s)", glean_authz_level_name(l), r, why);
        }
        CU_ASSERT_EQUAL(check(a, GLEAN_AUTHZ_CLIENT, NULL, "h.other.org", NULL, why, sizeof why), 0);
        CU_ASSERT_EQUAL(check(a, GLEAN_AUTHZ_ADVERTISE_STARTD, NULL, "h.example.org", NULL, why, sizeof why), 0);
        CU_ASSERT_STRING_EQUAL(why, "allowed by ALLOW_DEFAULT entry \"*.example.org\" of t.conf:1");
        glean_authz_free(a);

        /* CONFIG unset: nobody, ADMINISTRATOR or not */
        a = POLICY(NULL, { "ALLOW_ADMINISTRATOR", "*" });
        CU_ASSERT_EQUAL(check(a, GLEAN_AUTHZ_CONFIG, "root@x", NULL, NULL, why, sizeof why), -EACCES);
        glean_authz_free(a);
}

/* LEGACY_ALLOW_SEMANTICS: DAEMON falls back to WRITE's lists. */
static void test_legacy(void) {
        GleanAuthz *a = POLICY(NULL, { "ALLOW_WRITE", "*.example.org" }, { "DENY_WRITE", "bad.example.org" });
        char why[512];

        CU_ASSERT_EQUAL(check(a, GLEAN_AUTHZ_DAEMON, NULL, "h.example.org", NULL, why, sizeof why), -EACCES);
        CU_ASSERT_STRING_EQUAL(why, "ALLOW_DAEMON is not set (nor ALLOW_DEFAULT): nobody has DAEMON access");
        glean_authz_set_legacy(a, true);
        CU_ASSERT_EQUAL(check(a, GLEAN_AUTHZ_DAEMON, NULL, "h.example.org", NULL, why, sizeof why), 0);
        CU_ASSERT_STRING_EQUAL(why, "allowed by ALLOW_WRITE entry \"*.example.org\" of t.conf:1");
        CU_ASSERT_EQUAL(check(a, GLEAN_AUTHZ_ADVERTISE_STARTD, NULL, "h.example.org", NULL, why, sizeof why), 0);
        CU_ASSERT_EQUAL(check(a, GLEAN_AUTHZ_ADVERTISE_STARTD, NULL, "bad.example.org", NULL, why, sizeof why),
                        -EACCES);
        CU_ASSERT_EQUAL(check(a, GLEAN_AUTHZ_ADMINISTRATOR, NULL, "h.example.org", NULL, why, sizeof why), -EACCES);
        glean_authz_set_legacy(a, false);
        glean_authz_free(a);
        a = POLICY(NULL, { "ALLOW_WRITE", "w.example.org" });
        glean_authz_set_legacy(a, true);
        CU_ASSERT_EQUAL(check(a, GLEAN_AUTHZ_ADVERTISE_STARTD, NULL, "x.example.org", NULL, why, sizeof why),
                        -EACCES);
        CU_ASSERT_STRING_EQUAL(why, "not in ALLOW_WRITE (1 entry) of t.conf:1");
        glean_authz_free(a);
}

/* ---- subsystem knobs, knob names ---- */

static void test_knobs(void) {
        char why[512];
        int r;

        GleanAuthz *a = POLICY("collector", { "ALLOW_WRITE", "*.example.org" },
                               { "ALLOW_WRITE_COLLECTOR", "cm.example.org" }, { "allow_read_Collector", "x@y" },
                               { "ALLOW_ADVERTISE_STARTD", "agent@*" }, { "ALLOW_DAEMON_COLLECTOR", "condor@*" },
                               { "DENY_ADVERTISE_STARTD_COLLECTOR", "agent@*/bad*" });
        CU_ASSERT_EQUAL(check(a, GLEAN_AUTHZ_WRITE, NULL, "h.example.org", NULL, why, sizeof why), -EACCES);
        CU_ASSERT_EQUAL(check(a, GLEAN_AUTHZ_WRITE, NULL, "cm.example.org", NULL, why, sizeof why), 0);
        CU_ASSERT_STRING_EQUAL(why, "allowed by ALLOW_WRITE_COLLECTOR entry \"cm.example.org\" of t.conf:2");
        CU_ASSERT_EQUAL(check(a, GLEAN_AUTHZ_READ, "x@y", NULL, NULL, why, sizeof why), 0);
        CU_ASSERT_STRING_EQUAL(why, "allowed by ALLOW_READ_COLLECTOR entry \"x@y\" of t.conf:3");
        /* ALLOW_ADVERTISE_STARTD comes before ALLOW_DAEMON_COLLECTOR (HTCondor's getSecSetting) */
        CU_ASSERT_EQUAL(check(a, GLEAN_AUTHZ_ADVERTISE_STARTD, "condor@cm", NULL, NULL, why, sizeof why), -EACCES);
        CU_ASSERT_EQUAL(check(a, GLEAN_AUTHZ_ADVERTISE_STARTD, "agent@n", "n", NULL, why, sizeof why), 0);
        CU_ASSERT_EQUAL(check(a, GLEAN_AUTHZ_ADVERTISE_STARTD, "agent@n", "bad1", NULL, why, sizeof why), -EACCES);
        CU_ASSERT_STRING_EQUAL(why, "denied by DENY_ADVERTISE_STARTD_COLLECTOR entry \"agent@*/bad*\" of t.conf:6");
        CU_ASSERT_EQUAL(check(a, GLEAN_AUTHZ_ADVERTISE_SCHEDD, "condor@cm", NULL, NULL, why, sizeof why), 0);
        CU_ASSERT_STRING_EQUAL(why, "allowed by ALLOW_DAEMON_COLLECTOR entry \"condor@*\" of t.conf:5");
        /* another subsystem's knob: ignored, said so, nothing changed */
        r = glean_authz_set(a, "ALLOW_WRITE_STARTD", "*", "t.conf:7", why, sizeof why);
        CU_ASSERT_EQUAL(r, GLEAN_AUTHZ_IGNORED);
        CU_ASSERT_STRING_EQUAL(why, "t.conf:7: ALLOW_WRITE_STARTD: for the STARTD subsystem, not COLLECTOR: ignored");
        CU_ASSERT_EQUAL(check(a, GLEAN_AUTHZ_WRITE, NULL, "h.example.org", NULL, why, sizeof why), -EACCES);
        r = glean_authz_set(a, "ALLOW_OWNER", "*", "t.conf:8", why, sizeof why);
        CU_ASSERT_EQUAL(r, GLEAN_AUTHZ_IGNORED);
        CU_ASSERT_STRING_EQUAL(why, "t.conf:8: ALLOW_OWNER: HTCondor has no OWNER level any more (its commands need "
                                    "ADMINISTRATOR): ignored");
        /* unset the subsystem's: the plain list again */
        CU_ASSERT_EQUAL(glean_authz_set(a, "ALLOW_WRITE_COLLECTOR", NULL, NULL, why, sizeof why), 0);
        CU_ASSERT_EQUAL(check(a, GLEAN_AUTHZ_WRITE, NULL, "h.example.org", NULL, why, sizeof why), 0);
        glean_authz_free(a);

        a = POLICY(NULL, { "ALLOW_READ", "*" });
        r = glean_authz_set(a, "DENY_READ_SCHEDD", "*", NULL, why, sizeof why);
        CU_ASSERT_EQUAL(r, GLEAN_AUTHZ_IGNORED);
        CU_ASSERT_STRING_EQUAL(why, "DENY_READ_SCHEDD: for the SCHEDD subsystem only, and this is none: ignored");
        CU_ASSERT_EQUAL(check(a, GLEAN_AUTHZ_READ, NULL, NULL, NULL, why, sizeof why), 0);
        static const char *const bad[] = { "ALLOW_WRITER",     "ALLOW_",          "PERMIT_READ", "ALLOW_ALLOW",
                                           "ALLOW_WRITE_",     "ALLOW_WRITE_C-D", "DENY",        "",
                                           "ALLOW_ADVERTISE",  "SEC_READ_AUTHENTICATION",
                                           "ALLOW_READ_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA" };
        int level;
        bool deny;
        const char *sub;
        for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
                why[0] = 0;
                r = glean_authz_set(a, bad[i], "*", "t.conf:3", why, sizeof why);
                GLEAN_TEST_CHECK(r == -EINVAL && strstr(why, "t.conf:3: ") && strstr(why, "not an authorization knob"),
                                 "knob '%s': %d (%s)", bad[i], r, why);
                GLEAN_TEST_CHECK(glean_authz_knob(bad[i], &level, &deny, &sub) == -EINVAL, "glean_authz_knob('%s')",
                                 bad[i]);
        }
        /* the name's reading, which the agent's list of knobs it does not enforce shares */
        static const struct {
                const char *name;
                int level;
                bool deny;
                const char *sub;
        } good[] = {
                { "ALLOW_WRITE", GLEAN_AUTHZ_WRITE, false, NULL },
                { "deny_read_Collector", GLEAN_AUTHZ_READ, true, "Collector" },
                { "ALLOW_ADVERTISE_STARTD", GLEAN_AUTHZ_ADVERTISE_STARTD, false, NULL },
                { "DENY_ADVERTISE_STARTD_COLLECTOR", GLEAN_AUTHZ_ADVERTISE_STARTD, true, "COLLECTOR" },
                { "ALLOW_DEFAULT", GLEAN_AUTHZ_KNOB_DEFAULT, false, NULL },
                { "DENY_OWNER", GLEAN_AUTHZ_KNOB_OWNER, true, NULL },
        };
        for (size_t i = 0; i < sizeof good / sizeof *good; i++) {
                r = glean_authz_knob(good[i].name, &level, &deny, &sub);
                GLEAN_TEST_CHECK(r == 0 && level == good[i].level && deny == good[i].deny &&
                                         (good[i].sub ? sub && strcmp(sub, good[i].sub) == 0 : sub == NULL),
                                 "glean_authz_knob('%s'): %d level %d deny %d sub %s", good[i].name, r, level, deny,
                                 sub ? sub : "-");
        }
        CU_ASSERT_EQUAL(glean_authz_knob(NULL, &level, &deny, &sub), -EINVAL);
        /* the longest subsystem name there is room for */
        r = glean_authz_set(a, "ALLOW_ADVERTISE_STARTD_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", "*", NULL,
                            why, sizeof why);
        CU_ASSERT_EQUAL(r, GLEAN_AUTHZ_IGNORED);
        glean_authz_free(a);

        GleanAuthz *b = NULL;
        CU_ASSERT_EQUAL(glean_authz_new("bad-name", &b), -EINVAL);
        CU_ASSERT_EQUAL(glean_authz_new("", &b), -EINVAL);
        glean_authz_free(NULL);
}

static void test_levels(void) {
        for (int l = 0; l < GLEAN_AUTHZ_LEVELS; l++)
                CU_ASSERT_EQUAL(glean_authz_level_from_name(glean_authz_level_name(l)), l);
        CU_ASSERT_EQUAL(glean_authz_level_from_name("write"), GLEAN_AUTHZ_WRITE);
        CU_ASSERT_EQUAL(glean_authz_level_from_name("Advertise_Startd"), GLEAN_AUTHZ_ADVERTISE_STARTD);
        CU_ASSERT_EQUAL(glean_authz_level_from_name("DEFAULT"), -EINVAL);
        CU_ASSERT_EQUAL(glean_authz_level_from_name("OWNER"), -EINVAL);
        CU_ASSERT_EQUAL(glean_authz_level_from_name(""), -EINVAL);
        CU_ASSERT_EQUAL(glean_authz_level_from_name(NULL), -EINVAL);
        CU_ASSERT_PTR_NULL(glean_authz_level_name(GLEAN_AUTHZ_LEVELS));
        CU_ASSERT_STRING_EQUAL(glean_authz_level_name(GLEAN_AUTHZ_ADMINISTRATOR), "ADMINISTRATOR");

        GleanAuthz *a = POLICY(NULL, { "ALLOW_READ", "*" });
        GleanAuthzPeer p = { 0 };
        char why[128];
        CU_ASSERT_EQUAL(glean_authz_check(a, GLEAN_AUTHZ_LEVELS, &p, why, sizeof why), -EINVAL);
        CU_ASSERT_EQUAL(glean_authz_check(a, (GleanAuthzLevel) -1, &p, why, sizeof why), -EINVAL);
        CU_ASSERT_EQUAL(glean_authz_check(a, GLEAN_AUTHZ_READ, NULL, why, sizeof why), -EINVAL);
        p.family = 12345;
        CU_ASSERT_EQUAL(glean_authz_check(a, GLEAN_AUTHZ_READ, &p, why, sizeof why), -EINVAL);
        p.family = AF_UNSPEC;
        CU_ASSERT_EQUAL(glean_authz_check(a, GLEAN_AUTHZ_READ, &p, NULL, 0), 0);
        glean_authz_free(a);
}

/* ---- peers' addresses ---- */

static void test_peer_address(void) {
        GleanAuthzPeer p = { 0 };
        uint8_t v4[4] = { 192, 0, 2, 7 };

        CU_ASSERT_EQUAL(glean_authz_peer_address(&p, "192.0.2.7"), 0);
        CU_ASSERT(p.family == AF_INET && memcmp(p.addr, v4, 4) == 0);
        memset(&p, 0xff, sizeof p);
        CU_ASSERT_EQUAL(glean_authz_peer_address(&p, "::ffff:192.0.2.7"), 0);
        CU_ASSERT(p.family == AF_INET && memcmp(p.addr, v4, 4) == 0);
        CU_ASSERT_EQUAL(glean_authz_peer_address(&p, "[2001:db8::1]"), 0);
        CU_ASSERT(p.family == AF_INET6 && p.addr[0] == 0x20 && p.addr[15] == 1);
        CU_ASSERT_EQUAL(glean_authz_peer_address(&p, "2001:db8::1"), 0);
        CU_ASSERT_EQUAL(p.family, AF_INET6);
        static const char *const bad[] = { "", "1.2.3", "[::1", "[]", "host", "1.2.3.4:80", "[1.2.3.4]",
                                           "2001:db8::1%eth0", "01234567890123456789012345678901234567890123456789" };
        for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
                GLEAN_TEST_CHECK(glean_authz_peer_address(&p, bad[i]) == -EINVAL, "address '%s' accepted", bad[i]);
        CU_ASSERT_EQUAL(glean_authz_peer_address(&p, NULL), -EINVAL);

        struct sockaddr_storage ss = { 0 };
        struct sockaddr_in *sin = (struct sockaddr_in *) &ss;
        sin->sin_family = AF_INET;
        memcpy(&sin->sin_addr, v4, 4);
        memset(&p, 0, sizeof p);
        CU_ASSERT_EQUAL(glean_authz_peer_sockaddr(&p, (struct sockaddr *) &ss, sizeof ss), 0);
        CU_ASSERT(p.family == AF_INET && memcmp(p.addr, v4, 4) == 0 && !p.local);
        CU_ASSERT_EQUAL(glean_authz_peer_sockaddr(&p, (struct sockaddr *) &ss, sizeof(struct sockaddr_in) - 1),
                        -EINVAL);
        struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *) &ss;
        memset(&ss, 0, sizeof ss);
        sin6->sin6_family = AF_INET6;
        CU_ASSERT_EQUAL(inet_pton(AF_INET6, "::ffff:192.0.2.7", &sin6->sin6_addr), 1);
        CU_ASSERT_EQUAL(glean_authz_peer_sockaddr(&p, (struct sockaddr *) sin6, sizeof *sin6), 0);
        CU_ASSERT(p.family == AF_INET && memcmp(p.addr, v4, 4) == 0);
        CU_ASSERT_EQUAL(inet_pton(AF_INET6, "2001:db8::7", &sin6->sin6_addr), 1);
        CU_ASSERT_EQUAL(glean_authz_peer_sockaddr(&p, (struct sockaddr *) sin6, sizeof *sin6), 0);
        CU_ASSERT_EQUAL(p.family, AF_INET6);
        struct sockaddr_un sun = { .sun_family = AF_UNIX };
        CU_ASSERT_EQUAL(glean_authz_peer_sockaddr(&p, (struct sockaddr *) &sun, sizeof sun), 0);
        CU_ASSERT(p.family == AF_UNSPEC && p.local);
        ss.ss_family = AF_PACKET;
        CU_ASSERT_EQUAL(glean_authz_peer_sockaddr(&p, (struct sockaddr *) &ss, sizeof ss), -EAFNOSUPPORT);
        CU_ASSERT_EQUAL(glean_authz_peer_sockaddr(&p, NULL, 0), -EINVAL);

        /* a mapped address the caller filled in itself matches IPv4 entries too */
        GleanAuthz *a = POLICY(NULL, { "ALLOW_READ", "10.0.0.0/8" }, { "ALLOW_WRITE", "{:local_ips:}" });
        GleanAuthzPeer q = { .family = AF_INET6 };
        CU_ASSERT_EQUAL(inet_pton(AF_INET6, "::ffff:10.1.2.3", q.addr), 1);
        char why[256];
        CU_ASSERT_EQUAL(glean_authz_check(a, GLEAN_AUTHZ_READ, &q, why, sizeof why), 0);
        /* a unix socket's peer is this machine */
        CU_ASSERT_EQUAL(glean_authz_peer_sockaddr(&q, (struct sockaddr *) &sun, sizeof sun), 0);
        CU_ASSERT_EQUAL(glean_authz_check(a, GLEAN_AUTHZ_WRITE, &q, why, sizeof why), 0);
        CU_ASSERT_EQUAL(glean_authz_check(a, GLEAN_AUTHZ_READ, &q, why, sizeof why), 0); /* through WRITE */
        q.local = false;
        CU_ASSERT_EQUAL(glean_authz_check(a, GLEAN_AUTHZ_READ, &q, why, sizeof why), -EACCES);
        glean_authz_free(a);
}

/* ---- the manual's example configurations ---- */

static void test_manual_examples(void) {
        char why[512];

        /* security.rst, "Example of Authorization Security Configuration" */
        GleanAuthz *a = POLICY(NULL, { "ALLOW_READ", "*@cs.wisc.edu/*" },
                               { "ALLOW_WRITE", "*@cs.wisc.edu/*.cs.wisc.edu" },
                               { "ALLOW_ADMINISTRATOR", "condor-admin@cs.wisc.edu/*.cs.wisc.edu" },
                               { "ALLOW_CONFIG", "condor-admin@cs.wisc.edu/*.cs.wisc.edu" },
                               { "ALLOW_NEGOTIATOR", "condor@cs.wisc.edu/condor.cs.wisc.edu, \t"
                                                     "condor@cs.wisc.edu/condor2.cs.wisc.edu" },
                               { "ALLOW_DAEMON", "condor@cs.wisc.edu/*.cs.wisc.edu" });
        static const struct {
                const char *user, *host;
                GleanAuthzLevel level;
                bool want;
        } rows[] = {
                /* "any authenticated user in the cs.wisc.edu domain ... READ ... from any machine" */
                { "zmiller@cs.wisc.edu", "laptop.home.net", GLEAN_AUTHZ_READ, true },
                { NULL, "bird.cs.wisc.edu", GLEAN_AUTHZ_READ, false },
                { "zmiller@math.wisc.edu", "bird.cs.wisc.edu", GLEAN_AUTHZ_READ, false },
                /* "... WRITE ... from any machine in the cs.wisc.edu domain" */
                { "zmiller@cs.wisc.edu", "bird.cs.wisc.edu", GLEAN_AUTHZ_WRITE, true },
                { "zmiller@cs.wisc.edu", "laptop.home.net", GLEAN_AUTHZ_WRITE, false },
                /* "Only the user called condor-admin may ... ADMINISTRATOR ... CONFIG" */
                { "condor-admin@cs.wisc.edu", "bird.cs.wisc.edu", GLEAN_AUTHZ_ADMINISTRATOR, true },
                { "condor-admin@cs.wisc.edu", "bird.cs.wisc.edu", GLEAN_AUTHZ_CONFIG, true },
                { "zmiller@cs.wisc.edu", "bird.cs.wisc.edu", GLEAN_AUTHZ_ADMINISTRATOR, false },
                { "zmiller@cs.wisc.edu", "bird.cs.wisc.edu", GLEAN_AUTHZ_CONFIG, false },
                /* "Only the negotiator daemon, running as condor on the two central managers" */
                { "condor@cs.wisc.edu", "condor2.cs.wisc.edu", GLEAN_AUTHZ_NEGOTIATOR, true },
                { "condor@cs.wisc.edu", "bird.cs.wisc.edu", GLEAN_AUTHZ_NEGOTIATOR, false },
                /* DAEMON for condor from any cs.wisc.edu machine, and what it implies */
                { "condor@cs.wisc.edu", "bird.cs.wisc.edu", GLEAN_AUTHZ_DAEMON, true },
                { "condor@cs.wisc.edu", "bird.cs.wisc.edu", GLEAN_AUTHZ_ADVERTISE_STARTD, true },
                { "condor@cs.wisc.edu", "bird.cs.wisc.edu", GLEAN_AUTHZ_WRITE, true },
                { "condor@cs.wisc.edu", "laptop.home.net", GLEAN_AUTHZ_DAEMON, false },
        };
        for (size_t i = 0; i < sizeof rows / sizeof *rows; i++) {
                int r = check(a, rows[i].level, rows[i].user, rows[i].host, NULL, why, sizeof why);
                GLEAN_TEST_CHECK(r == (rows[i].want ? 0 : -EACCES), "cs.wisc.edu row %zu: %d (%s)", i, r, why);
        }
        glean_authz_free(a);

        /* security.rst, host-based examples: NCSA and the Math department but their labs and 177.55 */
        a = POLICY(NULL, { "ALLOW_WRITE", "*.ncsa.uiuc.edu, *.math.uiuc.edu" },
                   { "DENY_WRITE", "lab-*.edu, *.lab.uiuc.edu, 177.55.*" },
                   { "ALLOW_ADMINISTRATOR", "bigcheese.ncsa.uiuc.edu" });
        CU_ASSERT_EQUAL(check(a, GLEAN_AUTHZ_WRITE, NULL, "n1.ncsa.uiuc.edu", "141.142.2.2", why, sizeof why), 0);
        CU_ASSERT_EQUAL(check(a, GLEAN_AUTHZ_WRITE, NULL, "n1.ncsa.uiuc.edu", "177.55.2.2", why, sizeof why),
                        -EACCES);
        CU_ASSERT_STRING_EQUAL(why, "denied by DENY_WRITE entry \"177.55.*\" of t.conf:2");
        CU_ASSERT_EQUAL(check(a, GLEAN_AUTHZ_WRITE, NULL, "pc.lab.uiuc.edu", NULL, why, sizeof why), -EACCES);
        CU_ASSERT_EQUAL(check(a, GLEAN_AUTHZ_WRITE, NULL, "cs.uiuc.edu", NULL, why, sizeof why), -EACCES);
        CU_ASSERT_EQUAL(check(a, GLEAN_AUTHZ_ADMINISTRATOR, NULL, "bigcheese.ncsa.uiuc.edu", NULL, why, sizeof why),
                        0);
        CU_ASSERT_EQUAL(check(a, GLEAN_AUTHZ_READ, NULL, "bigcheese.ncsa.uiuc.edu", NULL, why, sizeof why), 0);
        glean_authz_free(a);

        /* param_info.in, SECURITY:recommended_v9_0 expanded (condor, root@* as admins) */
        a = POLICY(NULL, { "ALLOW_ADMINISTRATOR", "condor@* condor_pool@* root@*" },
                   { "ALLOW_DAEMON", "condor@*  condor_pool@*" }, { "ALLOW_NEGOTIATOR", "condor@* condor_pool@*" },
                   { "ALLOW_WRITE", "*" }, { "ALLOW_READ", "*" });
        CU_ASSERT_EQUAL(check(a, GLEAN_AUTHZ_READ, NULL, NULL, "203.0.113.9", why, sizeof why), 0);
        CU_ASSERT_EQUAL(check(a, GLEAN_AUTHZ_WRITE, NULL, NULL, "203.0.113.9", why, sizeof why), 0);
        CU_ASSERT_EQUAL(check(a, GLEAN_AUTHZ_DAEMON, NULL, NULL, "203.0.113.9", why, sizeof why), -EACCES);
        CU_ASSERT_EQUAL(check(a, GLEAN_AUTHZ_ADVERTISE_STARTD, "condor@cm.example.org", NULL, NULL, why, sizeof why),
                        0);
        CU_ASSERT_EQUAL(check(a, GLEAN_AUTHZ_ADMINISTRATOR, "root@node1", NULL, NULL, why, sizeof why), 0);
        CU_ASSERT_EQUAL(check(a, GLEAN_AUTHZ_ADMINISTRATOR, "alice@node1", NULL, NULL, why, sizeof why), -EACCES);
        CU_ASSERT_EQUAL(check(a, GLEAN_AUTHZ_CONFIG, "root@node1", NULL, NULL, why, sizeof why), -EACCES);
        glean_authz_free(a);
}

/* ---- malformed entries, with their messages ---- */

static void test_malformed(void) {
        static const struct {
                const char *entry, *message;
        } rows[] = {
                { "10.0.0.0/33", "\"10.0.0.0/33\": the netmask is longer than 32 bits" },
                { "10.0.0.0/0033", "\"10.0.0.0/0033\": the netmask is longer than 32 bits" },
                { "2001:db8::/129", "\"2001:db8::/129\": the netmask is longer than 128 bits" },
                { "10.0.0.0/", "\"10.0.0.0/\": no netmask after the '/'" },
                { "10.0.0.0/255.0.255.0",
                  "\"10.0.0.0/255.0.255.0\": the netmask 255.0.255.0 is not ones then zeros (255.255.192.0 is one)" },
                { "2001:db8::/255.255.0.0", "\"2001:db8::/255.255.0.0\": a dotted netmask is for IPv4 networks only" },
                { "10.0.0.0/abc", "\"10.0.0.0/abc\": the netmask abc is neither a number of bits nor dotted" },
                { "10.0/8", "\"10.0/8\": the network 10.0 is not an IP address" },
                { "x@y/10.0/8", "\"x@y/10.0/8\": the network 10.0 is not an IP address" },
                { "192.*.1.1", "\"192.*.1.1\": a '*' may only end an IPv4 address, as in 192.168.*" },
                { "300.1.1.1", "\"300.1.1.1\": not an IPv4 address or network (192.0.2.7, 192.0.2.*, 192.0.*)" },
                { "1.2.3.4.5", "\"1.2.3.4.5\": not an IPv4 address or network (192.0.2.7, 192.0.2.*, 192.0.*)" },
                { "1..2", "\"1..2\": not an IPv4 address or network (192.0.2.7, 192.0.2.*, 192.0.*)" },
                { "1234.1.1.1", "\"1234.1.1.1\": not an IPv4 address or network (192.0.2.7, 192.0.2.*, 192.0.*)" },
                { "2001:db8:*:1",
                  "\"2001:db8:*:1\": a '*' in an IPv6 address may only end it, after a ':', as in 2001:db8:*" },
                { "2001:db8::*", "\"2001:db8::*\": not an IPv6 network (2001:db8:* is one)" },
                { "host.example.org:9618",
                  "\"host.example.org:9618\": not an IPv6 address (a host:port? give the host alone)" },
                { "<10.0.0.1:9618>",
                  "\"<10.0.0.1:9618>\": this looks like a daemon's contact address (a Sinful string), which says "
                  "how to reach it, not where it connects from: give its host name or IP address" },
                { "+admins", "\"+admins\": netgroups (+name) are not supported" },
                { "condor/host.example.org",
                  "\"condor/host.example.org\": the user \"condor\" has no @domain: write condor@DOMAIN, condor@* or "
                  "*" },
                { "Condor/h", "\"Condor/h\": the user \"Condor\" has no @domain: write Condor@DOMAIN, Condor@* or *" },
                { "alice@example.org/", "\"alice@example.org/\": nothing after the '/'" },
                { "/host.example.org", "\"/host.example.org\": nothing before the '/'" },
                { "bad!host", "\"bad!host\": '!' cannot be in a host name" },
                { "a\"b", "\"a\\\"b\": '\"' cannot be in a host name" },
                { "h\xc3\xa9llo.org", "\"h\\xc3\\xa9llo.org\": the byte 0xc3 cannot be in a host name" },
                { "a@b\x01", "\"a@b\\x01\": the byte 0x01 cannot be in a user name" },
                { "a@b/{:local_ips:}/8", "\"a@b/{:local_ips:}/8\": the network {:local_ips:} is not an IP address" },
        };
        char why[1024];

        for (size_t i = 0; i < sizeof rows / sizeof *rows; i++) {
                GleanAuthz *a = POLICY(NULL, { "ALLOW_WRITE", "good.example.org" });
                char text[256], want[1024];
                /* the bad entry between good ones: named alone */
                snprintf(text, sizeof text, "a.example.org, %s b.example.org", rows[i].entry);
                snprintf(want, sizeof want, "/etc/glean/glean.conf:12: ALLOW_WRITE: %s", rows[i].message);
                why[0] = 0;
                int r = glean_authz_set(a, "ALLOW_WRITE", text, "/etc/glean/glean.conf:12", why, sizeof why);
                GLEAN_TEST_CHECK(r == -EBADMSG && strcmp(why, want) == 0, "row %zu '%s': %d\n  got:  %s\n  want: %s",
                                 i, rows[i].entry, r, why, want);
                /* nothing changed */
                r = check(a, GLEAN_AUTHZ_WRITE, NULL, "good.example.org", NULL, why, sizeof why);
                GLEAN_TEST_CHECK(r == 0, "row %zu: the old list is gone (%s)", i, why);
                r = check(a, GLEAN_AUTHZ_WRITE, NULL, "a.example.org", NULL, why, sizeof why);
                GLEAN_TEST_CHECK(r == -EACCES, "row %zu: half a new list (%s)", i, why);
                glean_authz_free(a);
        }
        /* without a source, and for another knob */
        GleanAuthz *a = POLICY(NULL, { "ALLOW_READ", "*" });
        CU_ASSERT_EQUAL(glean_authz_set(a, "deny_daemon", "10.0.0.0/33", NULL, why, sizeof why), -EBADMSG);
        CU_ASSERT_STRING_EQUAL(why, "DENY_DAEMON: \"10.0.0.0/33\": the netmask is longer than 32 bits");
        /* a short why buffer is cut, terminated */
        char tiny[8];
        CU_ASSERT_EQUAL(glean_authz_set(a, "ALLOW_READ", "10.0.0.0/33", "src", tiny, sizeof tiny), -EBADMSG);
        CU_ASSERT_STRING_EQUAL(tiny, "src: AL");
        CU_ASSERT_EQUAL(glean_authz_set(a, "ALLOW_READ", "10.0.0.0/33", "src", NULL, 0), -EBADMSG);
        glean_authz_free(a);
}

/* ---- bounds ---- */

static char *repeat(const char *piece, size_t times, const char *sep) {
        size_t n = strlen(piece), s = strlen(sep);
        char *t = malloc(times * (n + s) + 1), *p = t;

        CU_ASSERT_PTR_NOT_NULL_FATAL(t);
        for (size_t i = 0; i < times; i++) {
                memcpy(p, piece, n);
                p += n;
                if (i + 1 < times) {
                        memcpy(p, sep, s);
                        p += s;
                }
        }
        *p = 0;
        return t;
}

static void test_bounds(void) {
        GleanAuthz *a = POLICY(NULL, { "ALLOW_READ", "nobody@x" });
        char why[1024];

        /* 1,024 entries, then 1,025 */
        char *list = repeat("h.example.org", GLEAN_AUTHZ_MAX_ENTRIES, ",");
        CU_ASSERT_EQUAL(glean_authz_set(a, "ALLOW_WRITE", list, "t.conf:2", why, sizeof why), 0);
        free(list);
        CU_ASSERT_EQUAL(check(a, GLEAN_AUTHZ_WRITE, NULL, "g.example.org", NULL, why, sizeof why), -EACCES);
        CU_ASSERT_PTR_NOT_NULL(strstr(why, "not in ALLOW_WRITE (1024 entries) of t.conf:2"));
        list = repeat("h.example.org", GLEAN_AUTHZ_MAX_ENTRIES + 1, " ");
        CU_ASSERT_EQUAL(glean_authz_set(a, "ALLOW_WRITE", list, "t.conf:3", why, sizeof why), -E2BIG);
        CU_ASSERT_STRING_EQUAL(why, "t.conf:3: ALLOW_WRITE: more than 1024 entries");
        free(list);
        CU_ASSERT_EQUAL(check(a, GLEAN_AUTHZ_WRITE, NULL, "h.example.org", NULL, why, sizeof why), 0);

        /* an entry of 1,024 bytes, then 1,025 */
        char *name = repeat("a", GLEAN_AUTHZ_MAX_ENTRY, "");
        CU_ASSERT_EQUAL(glean_authz_set(a, "ALLOW_WRITE", name, "t.conf:4", why, sizeof why), 0);
        CU_ASSERT_EQUAL(check(a, GLEAN_AUTHZ_WRITE, NULL, name, NULL, why, sizeof why), 0);
        free(name);
        name = repeat("a", GLEAN_AUTHZ_MAX_ENTRY + 1, "");
        CU_ASSERT_EQUAL(glean_authz_set(a, "ALLOW_WRITE", name, "t.conf:5", why, sizeof why), -E2BIG);
        CU_ASSERT_STRING_EQUAL(why, "t.conf:5: ALLOW_WRITE: "
                                    "\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa...\": longer "
                                    "than 1024 bytes");
        free(name);

        /* a peer name over the bound is refused, even by ALLOW *, and so never escapes a DENY entry */
        CU_ASSERT_EQUAL(glean_authz_set(a, "ALLOW_READ", "*", NULL, why, sizeof why), 0);
        CU_ASSERT_EQUAL(glean_authz_set(a, "DENY_READ", "*.evil.org", NULL, why, sizeof why), 0);
        name = repeat("a", GLEAN_AUTHZ_MAX_NAME + 1, "");
        CU_ASSERT_EQUAL(check(a, GLEAN_AUTHZ_READ, name, NULL, NULL, why, sizeof why), -EACCES);
        CU_ASSERT_STRING_EQUAL(why, "denied: the peer's user name is longer than 1024 bytes");
        CU_ASSERT_EQUAL(check(a, GLEAN_AUTHZ_READ, NULL, name, NULL, why, sizeof why), -EACCES);
        CU_ASSERT_STRING_EQUAL(why, "denied: the peer's host name is longer than 1024 bytes");
        CU_ASSERT_EQUAL(check(a, GLEAN_AUTHZ_ALLOW, NULL, name, NULL, why, sizeof why), 0); /* open is open */
        name[GLEAN_AUTHZ_MAX_NAME] = 0;
        CU_ASSERT_EQUAL(check(a, GLEAN_AUTHZ_READ, NULL, name, NULL, why, sizeof why), 0);
        free(name);
        glean_authz_free(a);
}

/* A pattern that takes a backtracking matcher exponential time: the
 * results are asserted, and the suite's run time shows the rest. */
static void test_pathological_wildcard(void) {
        static const char pat[] = "*a*a*a*a*a*a*a*a*b";
        char why[512];
        char *as = repeat("a", 1000, ""), *asb = repeat("a", 1000, "");
        asb[999] = 'b';

        GleanAuthz *a = POLICY(NULL, { "ALLOW_READ", pat }, { "ALLOW_WRITE", "*a*a*a*a*a*a*a*a*b@*" },
                               { "ALLOW_NEGOTIATOR", "*a*a*a*a*a*a*a*a*c*b" });
        CU_ASSERT_EQUAL(check(a, GLEAN_AUTHZ_READ, NULL, as, NULL, why, sizeof why), -EACCES);
        CU_ASSERT_EQUAL(check(a, GLEAN_AUTHZ_READ, NULL, asb, NULL, why, sizeof why), 0);
        /* the ends match, a middle piece is nowhere */
        CU_ASSERT_EQUAL(check(a, GLEAN_AUTHZ_NEGOTIATOR, NULL, asb, NULL, why, sizeof why), -EACCES);
        /* as a user pattern, against a 1,000-byte user name */
        char user[1100];
        snprintf(user, sizeof user, "%s@x", as);
        CU_ASSERT_EQUAL(check(a, GLEAN_AUTHZ_WRITE, user, NULL, NULL, why, sizeof why), -EACCES);
        snprintf(user, sizeof user, "%s@x", asb);
        CU_ASSERT_EQUAL(check(a, GLEAN_AUTHZ_WRITE, user, NULL, NULL, why, sizeof why), 0);
        glean_authz_free(a);

        /* 1,024 such entries (of 1,024 bytes each) against a 1,024-byte name: a million bytes compared per entry
         * at most, never 2^n */
        char *big = repeat("*a", GLEAN_AUTHZ_MAX_ENTRY / 2, "");
        big[GLEAN_AUTHZ_MAX_ENTRY - 1] = 'b';
        char *list = repeat(big, GLEAN_AUTHZ_MAX_ENTRIES, " ");
        a = POLICY(NULL, { "ALLOW_READ", list });
        char *name = repeat("a", GLEAN_AUTHZ_MAX_NAME, "");
        CU_ASSERT_EQUAL(check(a, GLEAN_AUTHZ_READ, NULL, name, NULL, why, sizeof why), -EACCES);
        CU_ASSERT_PTR_NOT_NULL(strstr(why, "not in ALLOW_READ (1024 entries)"));
        name[GLEAN_AUTHZ_MAX_NAME - 1] = 'b';
        CU_ASSERT_EQUAL(check(a, GLEAN_AUTHZ_READ, NULL, name, NULL, why, sizeof why), 0);
        glean_authz_free(a);
        free(name);
        free(list);
        free(big);
        free(as);
        free(asb);
}

static CU_TestInfo tests[] = {
        { "every form of entry: users, names, wildcards, addresses, networks, mapped IPv6", test_forms },
        { "unauthenticated peers are unauthenticated@unmapped", test_unauthenticated },
        { "DENY over ALLOW and over the levels that imply one", test_deny_wins },
        { "the hierarchy: ADMINISTRATOR and DAEMON imply WRITE, which and others imply READ", test_hierarchy },
        { "unset lists fall back (ADVERTISE_* to DAEMON, all to DEFAULT), empty ones do not", test_unset_and_empty },
        { "LEGACY_ALLOW_SEMANTICS: DAEMON falls back to WRITE", test_legacy },
        { "subsystem knobs, OWNER, names that are not knobs", test_knobs },
        { "level names", test_levels },
        { "peers' addresses: text, sockaddr, mapped, unix sockets", test_peer_address },
        { "the manual's example configurations mean what the manual says", test_manual_examples },
        { "malformed entries: refused with file:line, knob, entry and reason", test_malformed },
        { "bounds: 1,024 entries of 1,024 bytes, peer names", test_bounds },
        { "a pathological wildcard is linear", test_pathological_wildcard },
        CU_TEST_INFO_NULL,
};

static CU_SuiteInfo suites[] = {
        { "authz", NULL, NULL, NULL, NULL, tests },
        CU_SUITE_INFO_NULL,
};

int main(int argc, char **argv) {
        return glean_test_main(argc, argv, suites);
}
