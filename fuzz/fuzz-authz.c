/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz-authz — libFuzzer target for HTCondor's authorization lists
 * (common/authz.h): the list text an administrator writes and the peer a
 * daemon is asked about.
 *
 * Input: fields separated by NUL bytes.
 *   byte 0        flags: bit 0 legacy fallback, bit 1 made for the
 *                 subsystem COLLECTOR, bit 2 the peer is local, bits 4-7
 *                 the level of the final DENY check
 *   field 1       the peer's user ("" : unauthenticated)
 *   field 2       its host name ("" : none)
 *   field 3       its address as text ("" or unreadable: none)
 *   fields 4...   knobs (at most 16): the first byte picks one (ALLOW or
 *                 DENY, a level or DEFAULT, no suffix, _COLLECTOR or
 *                 _STARTD; bit 7: unset it), the rest is the list
 *
 * It aborts when:
 * - glean_authz_set() gives anything but 0, GLEAN_AUTHZ_IGNORED, -EBADMSG
 *   or -E2BIG (-ENOMEM aside), refuses or ignores without a reason, or
 *   changes a decision when it refused or ignored;
 * - an accepted list does not match the peer exactly when one of its
 *   entries alone does (or an entry of it alone is refused);
 * - glean_authz_check() gives anything but 0 or -EACCES, no reason, or
 *   another answer or reason the second time;
 * - with no DENY list on READ, WRITE or DEFAULT, a level is allowed and a
 *   level it implies is not;
 * - after DENY_<level> = "*" the level is allowed;
 * - an address glean_authz_peer_address() accepts does not read back the
 *   same once written with inet_ntop().
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "authz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_KNOBS 16
#define MAX_SPLIT 64 /* entries checked one by one */

static _Noreturn void fail(const char *what, const char *detail) {
        fprintf(stderr, "FUZZ-AUTHZ FAILURE: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
        abort();
}

static const char *const levels[] = { "READ",      "WRITE",  "NEGOTIATOR",       "ADMINISTRATOR",
                                      "CONFIG",    "DAEMON", "CLIENT",           "ADVERTISE_STARTD",
                                      "ADVERTISE_SCHEDD",    "ADVERTISE_MASTER", "DEFAULT" };
#define NLEVELS (sizeof levels / sizeof *levels)
static const char *const suffixes[] = { "", "_COLLECTOR", "_STARTD" };

/* Every level's answer for p, as a bit mask (bit l: allowed), checking
 * the answers and reasons on the way. */
static unsigned decide(const GleanAuthz *a, const GleanAuthzPeer *p) {
        unsigned mask = 0;
        char why[1024], again[1024];

        for (int l = 0; l < GLEAN_AUTHZ_LEVELS; l++) {
                why[0] = again[0] = 0;
                int r = glean_authz_check(a, l, p, why, sizeof why);
                if (r != 0 && r != -EACCES)
                        fail("check gave neither 0 nor -EACCES", why);
                if (!why[0])
                        fail("a decision without a reason", glean_authz_level_name(l));
                if (glean_authz_check(a, l, p, again, sizeof again) != r || strcmp(why, again) != 0)
                        fail("the same check answered twice differently", why);
                if (r == 0)
                        mask |= 1u << l;
        }
        return mask;
}

/* The list text as one ALLOW_READ, and each of its entries alone. */
static void check_split(const char *text, const GleanAuthzPeer *p) {
        GleanAuthz *whole = NULL, *one = NULL;
        char why[1024], *copy = strdup(text);
        bool any = false;
        size_t n = 0;

        if (!copy || glean_authz_new(NULL, &whole) < 0)
                goto out;
        if (glean_authz_set(whole, "ALLOW_READ", text, NULL, why, sizeof why) != 0)
                fail("a list accepted as one knob is refused as another", why);
        bool allowed = glean_authz_check(whole, GLEAN_AUTHZ_READ, p, why, sizeof why) == 0;
        for (char *save = NULL, *e = strtok_r(copy, ", \t\n\r\f\v", &save); e && n < MAX_SPLIT;
             e = strtok_r(NULL, ", \t\n\r\f\v", &save), n++) {
                glean_authz_free(one);
                one = NULL;
                if (glean_authz_new(NULL, &one) < 0)
                        goto out;
                if (glean_authz_set(one, "ALLOW_READ", e, NULL, why, sizeof why) != 0)
                        fail("an entry of an accepted list is refused alone", why);
                any |= glean_authz_check(one, GLEAN_AUTHZ_READ, p, why, sizeof why) == 0;
        }
        if (n < MAX_SPLIT && any != allowed)
                fail("a list does not match as its entries do", text);
out:
        glean_authz_free(whole);
        glean_authz_free(one);
        free(copy);
}

static void check_address(const char *text) {
        GleanAuthzPeer p = { 0 }, q = { 0 };
        char buf[INET6_ADDRSTRLEN];

        int r = glean_authz_peer_address(&p, text);
        if (r != 0 && r != -EINVAL)
                fail("an address gave neither 0 nor -EINVAL", text);
        if (r < 0)
                return;
        if (p.family != AF_INET && p.family != AF_INET6)
                fail("an address of no family", text);
        if (!inet_ntop(p.family, p.addr, buf, sizeof buf) || glean_authz_peer_address(&q, buf) != 0 ||
            q.family != p.family || memcmp(q.addr, p.addr, p.family == AF_INET ? 4 : 16) != 0)
                fail("an address does not read back", text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        const char *field[3 + MAX_KNOBS];
        size_t nfields = 0, flags;
        char *text;

        if (size < 1 || size > 65536)
                return 0;
        text = malloc(size);
        if (!text)
                return 0;
        memcpy(text, data + 1, size - 1);
        text[size - 1] = 0;
        flags = data[0];
        for (char *p = text; nfields < sizeof field / sizeof *field;) {
                field[nfields++] = p;
                char *nul = memchr(p, 0, (size_t) (text + size - 1 - p) + 1);
                if (!nul || nul == text + size - 1)
                        break;
                p = nul + 1;
        }
        while (nfields < 3)
                field[nfields++] = "";

        GleanAuthzPeer peer = { .user = field[0], .host = field[1][0] ? field[1] : NULL, .local = flags & 4 };
        check_address(field[2]);
        (void) glean_authz_peer_address(&peer, field[2]);

        GleanAuthz *a = NULL;
        if (glean_authz_new(flags & 2 ? "COLLECTOR" : NULL, &a) < 0) {
                free(text);
                return 0;
        }
        glean_authz_set_legacy(a, flags & 1);
        bool low_deny = false;
        unsigned before = decide(a, &peer);
        for (size_t k = 3; k < nfields; k++) {
                unsigned sel = (unsigned char) field[k][0];
                const char *list = field[k][0] ? field[k] + 1 : "";
                unsigned pick = (sel & 0x7f) % (2 * NLEVELS * 3);
                bool deny = pick & 1;
                size_t level = (pick >> 1) % NLEVELS;
                const char *suffix = suffixes[(pick >> 1) / NLEVELS];
                char knob[64], why[1024] = "";
                snprintf(knob, sizeof knob, "%s_%s%s", deny ? "DENY" : "ALLOW", levels[level], suffix);

                int r = glean_authz_set(a, knob, sel & 0x80 ? NULL : list, "fuzz.conf:1", why, sizeof why);
                if (r == -ENOMEM)
                        break;
                if (r != 0 && r != GLEAN_AUTHZ_IGNORED && r != -EBADMSG && r != -E2BIG)
                        fail("set gave an unexpected result", why);
                if (r != 0 && !why[0])
                        fail("refused or ignored without a reason", knob);
                unsigned after = decide(a, &peer);
                if (r != 0 && after != before)
                        fail("a refused or ignored knob changed a decision", why);
                if (r == 0 && !(sel & 0x80)) {
                        check_split(list, &peer);
                        if (deny && (strcmp(levels[level], "READ") == 0 || strcmp(levels[level], "WRITE") == 0 ||
                                     strcmp(levels[level], "DEFAULT") == 0))
                                low_deny = true;
                }
                before = after;
        }
        if (!low_deny) {
                static const int implied[][2] = {
                        { GLEAN_AUTHZ_ADMINISTRATOR, GLEAN_AUTHZ_WRITE },   { GLEAN_AUTHZ_DAEMON, GLEAN_AUTHZ_WRITE },
                        { GLEAN_AUTHZ_WRITE, GLEAN_AUTHZ_READ },            { GLEAN_AUTHZ_NEGOTIATOR, GLEAN_AUTHZ_READ },
                        { GLEAN_AUTHZ_CONFIG, GLEAN_AUTHZ_READ },           { GLEAN_AUTHZ_ADVERTISE_STARTD, GLEAN_AUTHZ_READ },
                        { GLEAN_AUTHZ_ADVERTISE_SCHEDD, GLEAN_AUTHZ_READ }, { GLEAN_AUTHZ_ADVERTISE_MASTER, GLEAN_AUTHZ_READ },
                };
                for (size_t i = 0; i < sizeof implied / sizeof *implied; i++)
                        if ((before & (1u << implied[i][0])) && !(before & (1u << implied[i][1])))
                                fail("a level is allowed and one it implies is not",
                                     glean_authz_level_name(implied[i][0]));
        }
        /* DENY_<level> = * (and the subsystem's, which would come first) denies it */
        int level = 1 + (int) ((flags >> 4) % (GLEAN_AUTHZ_LEVELS - 1));
        char knob[64], why[1024];
        snprintf(knob, sizeof knob, "DENY_%s", glean_authz_level_name(level));
        int r1 = glean_authz_set(a, knob, "*", NULL, why, sizeof why);
        snprintf(knob, sizeof knob, "DENY_%s_COLLECTOR", glean_authz_level_name(level));
        int r2 = glean_authz_set(a, knob, "*", NULL, why, sizeof why);
        if (r1 == 0 && r2 >= 0 && glean_authz_check(a, level, &peer, why, sizeof why) != -EACCES)
                fail("allowed after DENY = *", why);
        glean_authz_free(a);
        free(text);
        return 0;
}
