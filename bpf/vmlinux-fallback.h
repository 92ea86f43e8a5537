/* SPDX-License-Identifier: Apache-2.0 */
/*
 * vmlinux-fallback.h — the kernel types glean's programs use, for a build
 * machine without /sys/kernel/btf/vmlinux or bpftool to generate the full
 * vmlinux.h. The Makefile copies it to build/gen/vmlinux.h in that case.
 * Only the fields read are declared: with preserve_access_index CO-RE
 * relocates every access against the running kernel's BTF, so offsets
 * here do not matter, names do. The UAPI headers give the rest.
 */
#pragma once

/* What libbpf's bpf_tracing.h looks for to name registers as the kernel does. */
#define __VMLINUX_H__

#include <linux/types.h>
#include <linux/bpf.h>

typedef __u8 u8;
typedef __u16 u16;
typedef __u32 u32;
typedef __u64 u64;
typedef __s64 s64;
typedef _Bool bool;
enum { false = 0, true = 1 };

#pragma clang attribute push(__attribute__((preserve_access_index)), apply_to = record)

/* x86-64's, in the kernel's order (kprobe arguments are read from it). */
struct pt_regs {
        unsigned long r15, r14, r13, r12, bp, bx, r11, r10, r9, r8;
        unsigned long ax, cx, dx, si, di, orig_ax, ip, cs, flags, sp, ss;
};

struct kernfs_node {
        u64 id;
};

struct cgroup;

struct cgroup_subsys_state {
        struct cgroup *cgroup;
        struct cgroup_subsys_state *parent;
};

struct cgroup {
        struct cgroup_subsys_state self;
        int level;
        struct kernfs_node *kn;
};

struct css_set {
        struct cgroup *dfl_cgrp;
};

struct task_struct {
        int pid;
        int tgid;
        struct css_set *cgroups;
};

struct tty_driver {
        const char *driver_name;
};

struct tty_struct {
        struct tty_driver *driver;
};

struct input_dev;
struct irqaction;

#pragma clang attribute pop
