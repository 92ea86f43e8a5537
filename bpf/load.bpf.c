/* SPDX-License-Identifier: GPL-2.0 OR Apache-2.0 */
/*
 * load.bpf.c — the runnable tasks of each slot, counted by the scheduler's
 * tracepoints, as a time integral the agent turns into each slot's
 * CondorLoadAvg (an exponentially decayed average, as the kernel's load
 * average). A task counts from its wake-up (or from the first time it is
 * switched in, for those runnable when the probes were loaded) until it
 * leaves the CPU to sleep or exits; it counts in the slot it was in then.
 */
#include "vmlinux.h"

#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "sensors-shared.h"
#include "slot.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

struct {
        __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
        __uint(max_entries, GLEAN_LOAD_MAX_SLOTS);
        __type(key, __u32);
        __type(value, struct glean_load_cpu);
} load_cpu SEC(".maps");

/* Slot number -> its cgroup id (0: free), set with slot_ids. */
struct {
        __uint(type, BPF_MAP_TYPE_ARRAY);
        __uint(max_entries, GLEAN_LOAD_MAX_SLOTS);
        __type(key, __u32);
        __type(value, __u64);
} slot_cgids SEC(".maps");

/* Thread id -> its record, for the tasks of the slots only. Preallocated,
 * as every map here: the scheduler's tracepoints run with a run queue
 * locked, where an allocation (task local storage allocates) may wake
 * kswapd, take that same lock, and hang the CPU. A task past the last
 * free record is not counted. */
struct {
        __uint(type, BPF_MAP_TYPE_HASH);
        __uint(max_entries, GLEAN_LOAD_MAX_TASKS);
        __type(key, __u32);
        __type(value, struct glean_task_rec);
} task_recs SEC(".maps");

static __always_inline void load_add(__u32 idx, __u64 d) {
        struct glean_load_cpu *c = bpf_map_lookup_elem(&load_cpu, &idx);
        if (!c)
                return;
        __u64 now = bpf_ktime_get_ns();
        c->integral += c->nr * (now - c->last_ns);
        c->last_ns = now;
        c->nr += d;
}

static __always_inline void enqueue(struct task_struct *p) {
        struct cgroup *cg = slot_candidate(p);
        if (!cg)
                return;
        /* Counted already (switched in again after a preemption, woken
         * while running): no need to find its slot. */
        __u32 tid = (__u32) p->pid;
        struct glean_task_rec *r = bpf_map_lookup_elem(&task_recs, &tid);
        if (r && r->queued)
                return;
        __u32 idx;
        __u64 cgid = slot_of(cg, &idx);
        if (!cgid)
                return;
        if (!r) {
                struct glean_task_rec fresh = {};
                bpf_map_update_elem(&task_recs, &tid, &fresh, BPF_NOEXIST);
                r = bpf_map_lookup_elem(&task_recs, &tid);
        }
        if (!r || r->queued)
                return;
        r->queued = 1;
        r->slot_cgid = cgid;
        r->slot_idx = idx;
        load_add(idx, 1);
}

/* The record of p, NULL when it has none: a task in a cgroup shallower
 * than every slot has none (tasks leave a slot's cgroup by dying, not by
 * moving), which spares most of a machine's tasks the look-up. */
static __always_inline struct glean_task_rec *record_of(struct task_struct *p, __u32 *tid) {
        if (!slot_candidate(p))
                return NULL;
        *tid = (__u32) p->pid;
        return bpf_map_lookup_elem(&task_recs, tid);
}

static __always_inline void dequeue(struct task_struct *p) {
        __u32 tid = 0;
        struct glean_task_rec *r = record_of(p, &tid);
        if (!r || !r->queued)
                return;
        r->queued = 0;
        __u32 idx = r->slot_idx;
        __u64 *cgid = bpf_map_lookup_elem(&slot_cgids, &idx);
        if (cgid && *cgid == r->slot_cgid) /* else the slot is gone: nothing to take from */
                load_add(idx, (__u64) -1);
}

SEC("tp_btf/sched_wakeup")
int BPF_PROG(load_wakeup, struct task_struct *p) {
        enqueue(p);
        return 0;
}

SEC("tp_btf/sched_wakeup_new")
int BPF_PROG(load_wakeup_new, struct task_struct *p) {
        enqueue(p);
        return 0;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(load_switch, bool preempt, struct task_struct *prev, struct task_struct *next, unsigned int prev_state) {
        if (!preempt && prev_state != 0) /* not TASK_RUNNING: it leaves the run queue */
                dequeue(prev);
        enqueue(next);
        return 0;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(load_exit, struct task_struct *p) {
        dequeue(p);
        __u32 tid = 0;
        if (record_of(p, &tid))
                bpf_map_delete_elem(&task_recs, &tid);
        return 0;
}
