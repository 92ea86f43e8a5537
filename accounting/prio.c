/* SPDX-License-Identifier: Apache-2.0 */
/*
 * prio.c — the priority arithmetic of 3.4.1, 3.4.2, 3.4.4 and 3.4.6: the
 * decay of a real user priority over time and the shares inverse to the
 * effective priorities. Pure functions.
 */
#include <errno.h>
#include <math.h>

#include "accounting.h"

double acct_decay(double dt, double halflife) {
        if (!(dt > 0))
                return 1.0;
        if (!(halflife > 0))
                return 0.0;
        /* exp2 underflows to 0 for the seed 004 limit (h = 0.0001 s). */
        return exp2(-dt / halflife);
}

double acct_rup_advance(double rup, double usage, double dt, double halflife) {
        double beta = acct_decay(dt, halflife);
        double r = beta * rup + (1.0 - beta) * usage;

        return r < ACCT_MIN_PRIORITY ? ACCT_MIN_PRIORITY : r;
}

int acct_shares(const double *eup, size_t n, double *ret_shares) {
        double sum = 0.0;

        for (size_t i = 0; i < n; i++) {
                if (!(eup[i] > 0) || !isfinite(eup[i]))
                        return -EINVAL;
                sum += 1.0 / eup[i];
        }
        for (size_t i = 0; i < n; i++)
                ret_shares[i] = (1.0 / eup[i]) / sum;
        return 0;
}
