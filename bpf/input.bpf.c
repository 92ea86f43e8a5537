/* SPDX-License-Identifier: GPL-2.0 OR Apache-2.0 */
/*
 * input.bpf.c — the owner's activity, seen in the kernel: the time of the
 * last key, pointer and terminal input. The loader (sensors.c) enables one
 * program per instance, the first method the kernel accepts:
 *
 *   input_fentry / input_kprobe  input_event(), the input core's entry for
 *                                every event of every device (keyboards,
 *                                mice, touchpads, tablets, uinput)
 *   input_irq                    irq_handler_entry for the interrupts the
 *                                agent names (e.g. i8042), a coarser sign
 *   tty_fentry / tty_kprobe      pty_write() from a pseudo-terminal's master:
 *                                what sshd, terminal emulators and tmux pass
 *                                on of their user's typing; writes by tasks
 *                                of glean's own slots do not count
 */
#include "vmlinux.h"

#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "sensors-shared.h"
#include "slot.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

struct {
        __uint(type, BPF_MAP_TYPE_ARRAY);
        __uint(max_entries, GLEAN_INPUT_NCLASS);
        __type(key, __u32);
        __type(value, struct glean_input_rec);
} input_last SEC(".maps");

/* Interrupt number -> input class, for input_irq. */
struct {
        __uint(type, BPF_MAP_TYPE_HASH);
        __uint(max_entries, 64);
        __type(key, __u32);
        __type(value, __u32);
} input_irqs SEC(".maps");


static __always_inline void touch(__u32 cls) {
        struct glean_input_rec *r = bpf_map_lookup_elem(&input_last, &cls);
        if (!r)
                return;
        r->last_ns = bpf_ktime_get_boot_ns();
        __sync_fetch_and_add(&r->count, 1);
}

static __always_inline void input(unsigned int type, unsigned int code) {
        int cls = glean_input_event_class(type, code);
        if (cls >= 0)
                touch((__u32) cls);
}

SEC("fentry/input_event")
int BPF_PROG(input_fentry, struct input_dev *dev, unsigned int type, unsigned int code, int value) {
        input(type, code);
        return 0;
}

SEC("kprobe/input_event")
int BPF_KPROBE(input_kprobe, struct input_dev *dev, unsigned int type, unsigned int code) {
        input(type, code);
        return 0;
}

SEC("tp_btf/irq_handler_entry")
int BPF_PROG(input_irq, int irq, struct irqaction *action) {
        __u32 key = (__u32) irq;
        __u32 *cls = bpf_map_lookup_elem(&input_irqs, &key);
        if (cls)
                touch(*cls);
        return 0;
}

/* Is t the master side of a pseudo-terminal? By its driver's name: the
 * type of tty_driver.subtype changed (short, later an enum), CO-RE would
 * refuse one or the other; "pty_master" is the name of both the Unix 98
 * and the BSD master drivers. */
static __always_inline bool pty_master(struct tty_struct *t) {
        static const char want[] = "pty_master";
        char name[sizeof want];
        const char *p = BPF_CORE_READ(t, driver, driver_name);
        if (bpf_probe_read_kernel_str(name, sizeof name, p) != sizeof name)
                return false;
        for (int i = 0; i < (int) sizeof want; i++)
                if (name[i] != want[i])
                        return false;
        return true;
}

static __always_inline void tty(struct tty_struct *t) {
        if (!pty_master(t))
                return; /* the other way: a program's output to its terminal */
        __u32 idx;
        struct cgroup *cg = slot_candidate(bpf_get_current_task_btf());
        if (cg && slot_of(cg, &idx))
                return; /* a job driving a terminal of its own */
        touch(GLEAN_INPUT_TTY);
}

SEC("fentry/pty_write")
int BPF_PROG(tty_fentry, struct tty_struct *t) {
        tty(t);
        return 0;
}

SEC("kprobe/pty_write")
int BPF_KPROBE(tty_kprobe, struct tty_struct *t) {
        tty(t);
        return 0;
}
