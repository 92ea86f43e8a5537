/* SPDX-License-Identifier: Apache-2.0 */
/*
 * common-internal.h — helpers shared by the files of common/ (not public).
 */
#pragma once

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "classad.h"
#include "cleanup.h"

#define _cleanup_classad_ _cleanup_(glean_classad_freep)

#define ELEMENTSOF(x) (sizeof(x) / sizeof((x)[0]))

static inline void glean_classad_freep(ClassAd **ad) {
        classad_free(*ad);
}

/* Monotonic deadlines in milliseconds; timeout_ms < 0 means none (-1). */
static inline int64_t glean_now_ms(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static inline int64_t glean_deadline(int timeout_ms) {
        return timeout_ms < 0 ? -1 : glean_now_ms() + timeout_ms;
}

/* Milliseconds left before deadline, for poll(): -1 none, 0 expired. */
static inline int glean_remaining_ms(int64_t deadline) {
        if (deadline < 0)
                return -1;
        int64_t left = deadline - glean_now_ms();
        if (left <= 0)
                return 0;
        return left > INT32_MAX ? INT32_MAX : (int) left;
}

/* Waits until fd is ready for events (POLLIN or POLLOUT) or the deadline
 * passes: 0 ready (or hung up: the next read/write says what), -ETIMEDOUT,
 * -errno. Implemented in frame.c. */
int glean_wait_fd(int fd, short events, int64_t deadline);
