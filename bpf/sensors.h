/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sensors.h — the owner's activity and each slot's load, from the kernel.
 *
 * Three sensors, each with the first method this kernel accepts, tried in
 * the configured order:
 *
 *   input  the last key and pointer event: "fentry" or "kprobe" on the
 *          input core's input_event(), "irq" (irq_handler_entry of named
 *          interrupts), "evdev" (reading /dev/input/event* in user space)
 *   tty    the last input to a pseudo-terminal (SSH, terminal emulators):
 *          "fentry" or "kprobe" on pty_write() from the master side
 *   load   runnable tasks per slot cgroup: "tp_btf" scheduler tracepoints
 *
 * A sensor none of whose methods works is "none"; the caller then falls
 * back to what user space can see (terminal access times, CPU time) and
 * says so. What was refused, and why, is kept for one log record.
 *
 * Times of input are CLOCK_BOOTTIME nanoseconds; load integrals are in
 * task-nanoseconds on CLOCK_MONOTONIC. Needs CAP_BPF and CAP_PERFMON (root).
 * Not thread-safe.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct GleanSensors GleanSensors;

typedef enum GleanSensorKind {
        GLEAN_SENSOR_INPUT,
        GLEAN_SENSOR_TTY,
        GLEAN_SENSOR_LOAD,
        _GLEAN_SENSOR_MAX,
} GleanSensorKind;

typedef enum GleanInputClass {
        GLEAN_INPUT_CLASS_KEYBOARD,
        GLEAN_INPUT_CLASS_POINTER,
        GLEAN_INPUT_CLASS_TTY,
        _GLEAN_INPUT_CLASS_MAX,
} GleanInputClass;

typedef struct GleanSensorConfig {
        /* Methods to try, in order (NULL-terminated; NULL: the defaults
         * "fentry kprobe irq evdev" and "fentry kprobe"; empty: none). */
        char **input_methods;
        char **tty_methods;
        /* Interrupt names (the last column of /proc/interrupts) for "irq";
         * NULL: i8042, the PS/2 controller. */
        char **irq_names;
        bool load;              /* load the scheduler probes */
} GleanSensorConfig;

int glean_sensors_open(const GleanSensorConfig *cfg, GleanSensors **ret);
void glean_sensors_free(GleanSensors *s);

/* "fentry", "kprobe", "irq", "evdev", "tp_btf" or "none". */
const char *glean_sensors_method(const GleanSensors *s, GleanSensorKind kind);
/* What was tried before the method in use and why it failed, as
 * "fentry: reason; kprobe: reason" ("" when the first one worked). */
const char *glean_sensors_refused(const GleanSensors *s, GleanSensorKind kind);
const char *glean_sensor_kind_name(GleanSensorKind kind); /* "input", "tty", "load" */

/* The last event of class c (CLOCK_BOOTTIME ns, 0: none seen since the
 * sensors were opened) and how many were seen. */
int glean_sensors_input(GleanSensors *s, GleanInputClass c, uint64_t *ret_last_ns, uint64_t *ret_count);

/* Now on the clock of glean_sensors_input()'s times (CLOCK_BOOTTIME), ns. */
uint64_t glean_sensors_boot_ns(void);

/* The "evdev" method reads devices in user space: poll this descriptor
 * (-1 when there is nothing to poll) and call dispatch when it is
 * readable; rescan picks up devices plugged in since. */
int glean_sensors_fd(const GleanSensors *s);
int glean_sensors_dispatch(GleanSensors *s);
int glean_sensors_rescan(GleanSensors *s);

/* Counts the runnable tasks of the cgroup open at cgroup_fd (a directory
 * of the cgroup v2 hierarchy) and of its descendants up to
 * GLEAN_LOAD_MAX_WALK levels down, as slot *ret_idx. -EOPNOTSUPP without
 * the load sensor, -ENOSPC past GLEAN_LOAD_MAX_SLOTS. */
int glean_sensors_slot_add(GleanSensors *s, int cgroup_fd, unsigned *ret_idx);
int glean_sensors_slot_remove(GleanSensors *s, unsigned idx);
/* The time integral of the slot's runnable tasks since it was added
 * (task-ns) at *ret_now_ns (CLOCK_MONOTONIC). The mean number of runnable
 * tasks between two readings is the difference of the integrals over the
 * difference of the times. */
int glean_sensors_slot_runnable(GleanSensors *s, unsigned idx, uint64_t *ret_integral, uint64_t *ret_now_ns);

/* For the "irq" method: the interrupt numbers of /proc/interrupts (text)
 * whose device names include one of names. Returns how many were found
 * (at most max). Pure. */
size_t glean_sensors_parse_interrupts(const char *text, char *const *names, uint32_t *irqs, size_t max);

/* Input event classification shared with the kernel programs: the class
 * of an event (EV_KEY, code), (EV_REL, ...), (EV_ABS, ...), -1 for the
 * others (synchronisation, LEDs, scan codes...). Pure. */
int glean_sensors_event_class(unsigned type, unsigned code);

/* The program of a sensor in use (for its run-time statistics), else -1. */
int glean_sensors_prog_fds(const GleanSensors *s, GleanSensorKind kind, int *fds, size_t max);
