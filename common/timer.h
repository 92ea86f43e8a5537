/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
/*
 * timer.h — the daemons' one-shot timers (sd-event): made on first use,
 * re-armed after, each error returned rather than dropped.
 */
#include <stdint.h>
#include <time.h>

#include <systemd/sd-event.h>

/* *src fires once at usec (on clock, with accuracy usec; 0: the default):
 * made on e with callback and userdata when *src is NULL, else moved to
 * usec and enabled (SD_EVENT_ONESHOT; e, callback and userdata are then
 * not used: the source keeps its own). -errno from sd-event, -EINVAL
 * without a source or e; *src stays as it was on a failure to make it. */
int glean_timer_arm(sd_event *e, sd_event_source **src, clockid_t clock, uint64_t usec, uint64_t accuracy,
                    sd_event_time_handler_t callback, void *userdata);

/* The same, usec from now on clock. */
int glean_timer_arm_in(sd_event *e, sd_event_source **src, clockid_t clock, uint64_t usec, uint64_t accuracy,
                       sd_event_time_handler_t callback, void *userdata);
