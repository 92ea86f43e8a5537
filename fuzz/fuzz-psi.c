/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz-psi — libFuzzer target for the parser of Linux pressure files
 * (agent/psi.h): agent_psi_parse() and agent_psi_to_ad().
 *
 * Input: the bytes of a pressure file as they are, NUL bytes included
 * (the parser must refuse them), with no terminator after them, so that
 * ASan sees any read past the end. Checks, each an abort() when broken:
 *
 *   - the result is 0 or -EINVAL; a refusal has a reason naming a line
 *     (or the whole text) and leaves the output untouched;
 *   - an accepted text has averages between 0 and 100, no 'full' figures
 *     without a 'full' line, and parses the same way twice;
 *   - the figures written back in the kernel's format ("%.2f") parse
 *     again to the same totals and averages within 0.005;
 *   - the ad gets 3 attributes per line per resource, and none after the
 *     resources become unavailable.
 */

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "psi.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static _Noreturn void fail(const char *what, const char *detail) {
        fprintf(stderr, "FUZZ-PSI FAILURE: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
        abort();
}

static bool avg_ok(double v) {
        return isfinite(v) && v >= 0 && v <= 100;
}

static bool line_ok(const AgentPsiLine *l) {
        return avg_ok(l->avg10) && avg_ok(l->avg60) && avg_ok(l->avg300);
}

/* Within half a hundredth, and a little more for the binary rounding of
 * a figure like 0.305 (which "%.2f" prints as 0.30). */
#define ROUNDING (0.005 + 1e-9)

static bool close_to(const AgentPsiLine *a, const AgentPsiLine *b) {
        return fabs(a->avg10 - b->avg10) <= ROUNDING && fabs(a->avg60 - b->avg60) <= ROUNDING &&
               fabs(a->avg300 - b->avg300) <= ROUNDING && a->total == b->total;
}

static int print_line(char *buf, size_t size, const char *kind, const AgentPsiLine *l) {
        return snprintf(buf, size, "%s avg10=%.2f avg60=%.2f avg300=%.2f total=%llu\n", kind, l->avg10, l->avg60,
                        l->avg300, (unsigned long long) l->total);
}

static void check_ad(const AgentPsi *psi) {
        AgentPsiSet set = {};
        ClassAd *ad = NULL;
        size_t want = psi->has_full ? 6 * AGENT_PSI__MAX : 3 * AGENT_PSI__MAX;

        for (int i = 0; i < AGENT_PSI__MAX; i++) {
                set.available[i] = true;
                set.psi[i] = *psi;
        }
        if (classad_new(&ad) < 0)
                return;
        if (agent_psi_to_ad(&set, "Total", ad) < 0)
                goto out;
        if (classad_size(ad) != want)
                fail("wrong number of attributes", NULL);
        memset(set.available, 0, sizeof(set.available));
        if (agent_psi_to_ad(&set, "Total", ad) < 0 || classad_size(ad) != 0)
                fail("attributes of unavailable resources left in the ad", NULL);
out:
        classad_free(ad);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        const char *text = (const char *) data;
        AgentPsi psi, again, before;
        char why[256] = "", buf[256];
        int r, n;

        memset(&psi, 0x5a, sizeof(psi));
        before = psi;
        r = agent_psi_parse(text, size, &psi, why, sizeof(why));
        if (r != 0 && r != -EINVAL)
                fail("neither 0 nor -EINVAL", why);
        if (r < 0) {
                if (strncmp(why, "line ", 5) != 0 && strcmp(why, "empty text") != 0 &&
                    strcmp(why, "no 'some' line") != 0 && !strstr(why, " bytes, more than "))
                        fail("a refusal without a line or a reason", why);
                if (memcmp(&psi, &before, sizeof(psi)) != 0)
                        fail("a refusal touched the output", why);
                return 0;
        }

        if (!line_ok(&psi.some) || !line_ok(&psi.full))
                fail("an average outside 0..100", NULL);
        if (!psi.has_full && (psi.full.avg10 != 0 || psi.full.avg60 != 0 || psi.full.avg300 != 0 || psi.full.total))
                fail("'full' figures without a 'full' line", NULL);
        if (agent_psi_parse(text, size, &again, why, sizeof(why)) != 0 || memcmp(&psi, &again, sizeof(psi)) != 0)
                fail("two parses differ", why);

        n = print_line(buf, sizeof(buf), "some", &psi.some);
        if (psi.has_full)
                n += print_line(buf + n, sizeof(buf) - (size_t) n, "full", &psi.full);
        if (agent_psi_parse(buf, (size_t) n, &again, why, sizeof(why)) != 0)
                fail("the figures written back do not parse", why);
        if (again.has_full != psi.has_full || !close_to(&again.some, &psi.some) ||
            (psi.has_full && !close_to(&again.full, &psi.full)))
                fail("the figures written back parse to others", buf);

        check_ad(&psi);
        return 0;
}
