/* SPDX-License-Identifier: Apache-2.0 */
/*
 * timer.c — one-shot timers (timer.h).
 */
#include <errno.h>

#include "timer.h"

int glean_timer_arm(sd_event *e, sd_event_source **src, clockid_t clock, uint64_t usec, uint64_t accuracy,
                    sd_event_time_handler_t callback, void *userdata) {
        int r;

        if (!*src && !e)
                return -EINVAL;
        if (!*src)
                return sd_event_add_time(e, src, clock, usec, accuracy, callback, userdata); /* one-shot */
        if ((r = sd_event_source_set_time(*src, usec)) < 0)
                return r;
        return sd_event_source_set_enabled(*src, SD_EVENT_ONESHOT);
}

int glean_timer_arm_in(sd_event *e, sd_event_source **src, clockid_t clock, uint64_t usec, uint64_t accuracy,
                       sd_event_time_handler_t callback, void *userdata) {
        int r;

        if (!*src && !e)
                return -EINVAL;
        if (!*src)
                return sd_event_add_time_relative(e, src, clock, usec, accuracy, callback, userdata);
        if ((r = sd_event_source_set_time_relative(*src, usec)) < 0)
                return r;
        return sd_event_source_set_enabled(*src, SD_EVENT_ONESHOT);
}
