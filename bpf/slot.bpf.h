/* SPDX-License-Identifier: Apache-2.0 */
/*
 * slot.bpf.h — which slot a task belongs to, for the kernel programs: its
 * cgroup (in the cgroup v2 hierarchy) or one of its first ancestors is a
 * slot's cgroup, registered by the agent in slot_ids. Included by the
 * .bpf.c files that need it; each defines the map, the loader shares it.
 */
#pragma once

struct {
        __uint(type, BPF_MAP_TYPE_HASH);
        __uint(max_entries, GLEAN_LOAD_MAX_SLOTS);
        __type(key, __u64);   /* the slot cgroup's id (its inode number) */
        __type(value, __u32); /* the slot's number for load_cpu */
} slot_ids SEC(".maps");

/* The smallest level of a registered slot cgroup, 0 when there is none:
 * a task in a shallower cgroup belongs to no slot, at the cost of one read. */
__u32 slot_min_level = 0;

/* The cgroup id of p's slot (0: none) and the slot's number in *idx. */
static __always_inline __u64 slot_of(struct task_struct *p, __u32 *idx) {
        __u32 min = slot_min_level;
        if (!min)
                return 0;
        struct cgroup *cg = BPF_CORE_READ(p, cgroups, dfl_cgrp);
        for (int i = 0; i < GLEAN_LOAD_MAX_WALK && cg; i++) {
                if ((__u32) BPF_CORE_READ(cg, level) < min)
                        return 0;
                __u64 id = BPF_CORE_READ(cg, kn, id);
                __u32 *v = bpf_map_lookup_elem(&slot_ids, &id);
                if (v) {
                        *idx = *v;
                        return id;
                }
                cg = (struct cgroup *) BPF_CORE_READ(cg, self.parent);
        }
        return 0;
}
