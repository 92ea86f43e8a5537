/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sensors-shared.h — what the kernel programs (input.bpf.c, load.bpf.c)
 * and their loader (sensors.c) agree on: the classes of input, the map
 * records and their sizes. Fixed-width types only: it is read on both
 * sides of the bpf() system call.
 */
#pragma once

/* Input classes: one record each in the input_last map. */
#define GLEAN_INPUT_KEYBOARD 0 /* EV_KEY outside the button ranges */
#define GLEAN_INPUT_POINTER  1 /* buttons, relative and absolute axes */
#define GLEAN_INPUT_TTY      2 /* input written to a pseudo-terminal's master */
#define GLEAN_INPUT_NCLASS   3

/* Slots whose cgroups the scheduler probes count, at most. */
#define GLEAN_LOAD_MAX_SLOTS 1024
/* Threads of the slots counted at once, at most (their records are
 * preallocated: about 2.5 MB). */
#define GLEAN_LOAD_MAX_TASKS 32768
/* Cgroup levels a task's cgroup is walked up to find its slot (its own
 * cgroup, the job leaf, the slot, a partitionable slot above). */
#define GLEAN_LOAD_MAX_WALK 4

/* The class of an input event, -1 for those that tell nothing of a user
 * (EV_SYN, EV_MSC scan codes, EV_LED, EV_SW, ...). Buttons (BTN_MISC to
 * BTN_GEAR_UP, BTN_DPAD_*, BTN_TRIGGER_HAPPY*) belong to pointers and game
 * pads; every other key code to a keyboard. */
static inline __attribute__((always_inline)) int glean_input_event_class(__u32 type, __u32 code) {
        switch (type) {
        case 0x01: /* EV_KEY */
                if ((code >= 0x100 && code < 0x160) || (code >= 0x220 && code < 0x224) ||
                    (code >= 0x2c0 && code < 0x2e8))
                        return GLEAN_INPUT_POINTER;
                return GLEAN_INPUT_KEYBOARD;
        case 0x02: /* EV_REL */
        case 0x03: /* EV_ABS */
                return GLEAN_INPUT_POINTER;
        default:
                return -1;
        }
}

struct glean_input_rec {
        __u64 last_ns; /* CLOCK_BOOTTIME of the last event, 0: none yet */
        __u64 count;   /* events seen */
};

/* One per slot and CPU. nr is what this CPU added to and took from the
 * slot's runnable tasks (a task woken here may sleep on another CPU, so a
 * CPU's share can be "negative"); integral is the time integral of nr in
 * ns x tasks. All arithmetic is modulo 2^64: summed over the CPUs the
 * figures are exact, each one alone means nothing. */
struct glean_load_cpu {
        __u64 nr;
        __u64 last_ns;  /* CLOCK_MONOTONIC of the last change */
        __u64 integral;
};

/* Per thread of a slot: whether it is counted as runnable, and
 * in which slot (its number, and its cgroup id, which a re-used slot
 * number never has). */
struct glean_task_rec {
        __u64 slot_cgid;
        __u32 slot_idx;
        __u32 queued;
};
