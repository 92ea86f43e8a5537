/* SPDX-License-Identifier: Apache-2.0 */
/*
 * match.c — matchmaking as HTCondor's matchmaker sets it up: the two ads
 * form a match context (each is the other's TARGET), Requirements must
 * evaluate to true on both sides, Rank is a number (else 0.0); one
 * attribute of an ad evaluated with a TARGET.
 */
#include <errno.h>
#include <string.h>

#include "classad-internal.h"

static void eval_in_match(const ClassAd *ad, const ClassAd *other, CaWellKnown which, CaMode mode, CaValue *ret) {
        CaEval ev;
        ca_eval_init(&ev, mode, ad, ad, other);
        const CaAtom *atom = ca_atom_wk(which);
        if (!atom || !ca_ad_lookup(ad, atom)) {
                *ret = ca_undefined(); /* no Requirements (or Rank) of its own */
                return;
        }
        ca_eval_attr_ref(&ev, atom, ret);
        ca_eval_settle(&ev, ret);
}

bool classad_requirements_met(const ClassAd *a, const ClassAd *b, CaMode mode) {
        CaValue v;
        bool ok = false;
        eval_in_match(a, b, CA_WK_REQUIREMENTS, mode, &v);
        bool met = ca_to_bool(&v, &ok) && ok;
        ca_value_clear(&v);
        return met;
}

bool classad_match(const ClassAd *a, const ClassAd *b, CaMode mode) {
        return classad_requirements_met(a, b, mode) && classad_requirements_met(b, a, mode);
}

double classad_rank(const ClassAd *ad, const ClassAd *target, CaMode mode) {
        CaValue v;
        double d = 0.0;
        eval_in_match(ad, target, CA_WK_RANK, mode, &v);
        if (!ca_to_real(&v, &d))
                d = 0.0; /* UNDEFINED, ERROR, strings...: no preference */
        ca_value_clear(&v);
        return d;
}

int classad_eval_attr_with(const ClassAd *ad, const char *name, const ClassAd *target, CaMode mode, CaValue *ret) {
        const CaAtom *atom = ca_atom(name, strlen(name));
        CaEval ev;
        CaValue v;
        int r;

        if (!atom)
                return -ENOMEM;
        if (!ca_ad_lookup(ad, atom)) {
                *ret = ca_undefined();
                return 0;
        }
        ca_eval_init(&ev, mode, ad, target ? ad : NULL, target);
        ca_eval_attr_ref(&ev, atom, &v);
        ca_eval_settle(&ev, &v);
        r = ca_value_detach(&v);
        if (r < 0)
                return r;
        *ret = v;
        return 0;
}

void classad_prefetch(const ClassAd *ad) {
        if (!ad)
                return;
        __builtin_prefetch(ad);
        const char *p = (const char *) ad->attrs;
        size_t bytes = (size_t) ad->n * sizeof(CaAttr);
        for (size_t off = 0; off < bytes; off += 64)
                __builtin_prefetch(p + off);
}
