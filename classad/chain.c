/* SPDX-License-Identifier: Apache-2.0 */
/*
 * chain.c — chained ads, as HTCondor's ChainToAd: an ad shows the
 * attributes of the ad it is chained to (its parent) that it does not
 * define itself. A job queue keeps what the procs of a cluster share once,
 * in the cluster's ad, and each proc's own attributes in a small ad
 * chained to it.
 *
 * Reading goes through the chain (ca_ad_lookup, and so evaluation,
 * matching, references and fingerprints), with the child as the scope of
 * what it inherits; writing never does (ca_ad_lookup_own). Here: making
 * and breaking the link, and walking the flattened view.
 */
#include "classad-internal.h"

int classad_chain(ClassAd *ad, ClassAd *parent) {
        /* one level: a parent is never chained itself, a chained ad is
         * never a parent; top-level ads only (embedded ones have no
         * reference to take) */
        if (!ad || !parent || ad == parent || ad->refs < 0 || parent->refs < 0 || parent->chain || ad->n_chained)
                return -EINVAL;
        if (ad->chain == parent)
                return 0;
        parent->n_chained++;
        classad_ref(parent);
        classad_unchain(ad);
        ad->chain = parent;
        ad->no_fast = true; /* the evaluator's fast leaves do not look through chains */
        return 0;
}

void classad_unchain(ClassAd *ad) {
        ClassAd *parent = ad ? ad->chain : NULL;

        if (!parent)
                return;
        ad->chain = NULL;
        parent->n_chained--;
        classad_free(parent);
        ad->no_fast = ad->has_special;
}

const ClassAd *classad_chained_parent(const ClassAd *ad) {
        return ad ? ad->chain : NULL;
}

const CaAttr *ca_ad_next(const ClassAd *ad, size_t *pos, bool own) {
        const ClassAd *up = own ? NULL : ad->chain;
        size_t n_up = up ? up->n : 0;

        /* positions [0, n_up): the parent's entries; then ad's */
        while (*pos < n_up) {
                const CaAttr *a = &up->attrs[(*pos)++];
                if (a->atom && !ca_ad_lookup_own(ad, a->atom))
                        return a;
        }
        while (*pos - n_up < ad->n) {
                const CaAttr *a = &ad->attrs[(*pos)++ - n_up];
                if (a->atom)
                        return a;
        }
        return NULL;
}
