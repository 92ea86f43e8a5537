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

/* What slot_of() found for a cgroup (cgroups never move, so the answer
 * stands until the agent adds or removes a slot, which bumps slot_gen):
 * one look-up per event instead of a walk. */
struct slot_cache_val {
        __u32 gen;
        __u32 idx_plus1; /* 0: in no slot */
        __u64 slot_cgid;
};

struct {
        __uint(type, BPF_MAP_TYPE_LRU_HASH);
        __uint(max_entries, 4096);
        __type(key, __u64); /* a task's cgroup id */
        __type(value, struct slot_cache_val);
} slot_cache SEC(".maps");

/* The smallest level of a registered slot cgroup, 0 when there is none:
 * a task in a shallower cgroup belongs to no slot, at the cost of one read. */
__u32 slot_min_level = 0;
/* Bumped by the agent with every change of slot_ids. */
__u32 slot_gen = 0;

/* p's cgroup when p may be in a slot: NULL when no slot is registered or
 * p's cgroup is shallower than every slot's (most of a machine's tasks),
 * at the cost of a few reads. p is a pointer the verifier knows the type
 * of (a tp_btf or fentry argument, bpf_get_current_task_btf()): the
 * fields are read directly, each load a plain one the kernel guards
 * against faults, not a bpf_probe_read call. */
static __always_inline struct cgroup *slot_candidate(struct task_struct *p) {
        __u32 min = slot_min_level;
        if (!min)
                return NULL;
        struct cgroup *cg = p->cgroups->dfl_cgrp;
        if (!cg || (__u32) cg->level < min)
                return NULL;
        return cg;
}

/* The cgroup id of the slot of a task in cg (from slot_candidate()), 0 for
 * none, and the slot's number in *idx. */
static __always_inline __u64 slot_of(struct cgroup *cg, __u32 *idx) {
        __u32 min = slot_min_level;
        __u64 own = cg->kn->id;
        __u32 gen = slot_gen;
        struct slot_cache_val *c = bpf_map_lookup_elem(&slot_cache, &own);
        if (c && c->gen == gen) {
                if (!c->idx_plus1)
                        return 0;
                *idx = c->idx_plus1 - 1;
                return c->slot_cgid;
        }
        struct slot_cache_val found = { .gen = gen };
        for (int i = 0; i < GLEAN_LOAD_MAX_WALK && cg; i++) {
                if ((__u32) cg->level < min)
                        break;
                __u64 id = cg->kn->id;
                __u32 *v = bpf_map_lookup_elem(&slot_ids, &id);
                if (v) {
                        found.idx_plus1 = *v + 1;
                        found.slot_cgid = id;
                        break;
                }
                struct cgroup_subsys_state *parent = cg->self.parent;
                cg = parent ? parent->cgroup : NULL;
        }
        bpf_map_update_elem(&slot_cache, &own, &found, BPF_ANY);
        if (!found.idx_plus1)
                return 0;
        *idx = found.idx_plus1 - 1;
        return found.slot_cgid;
}
