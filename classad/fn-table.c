/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fn-table.c — the registry of built-in functions: HTCondor's own ClassAd
 * library (fnCall.cpp) plus what the HTCondor daemons register on top
 * (compat_classad.cpp). Names are looked up case-insensitively, as in
 * HTCondor's case-insensitive function table.
 */
#include "fn-internal.h"

#include <strings.h>

static const CaFnGroup *const groups[] = {
        &ca_fn_group_type,   &ca_fn_group_math,  &ca_fn_group_list, &ca_fn_group_string, &ca_fn_group_stringlist,
        &ca_fn_group_regex,  &ca_fn_group_time,  &ca_fn_group_misc, &ca_fn_group_env,
};

const CaFunc *ca_func_lookup(const char *name, size_t len) {
        if (!name)
                return NULL;
        for (size_t g = 0; g < ELEMENTSOF(groups); g++) {
                const CaFnGroup *grp = groups[g];
                for (size_t i = 0; i < grp->n; i++) {
                        const CaFunc *f = &grp->fns[i];
                        if (strlen(f->name) != len || strncasecmp(f->name, name, len) != 0)
                                continue;
                        if ((f->flags & CA_FN_EXACT_CASE) && memcmp(f->name, name, len) != 0)
                                return &ca_fn_version_miscased;
                        return f;
                }
        }
        return NULL;
}
