/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test-timer.c — the one-shot timers of common/timer.h on a real sd-event
 * loop: made on first use and fired once, re-armed (absolute and relative)
 * and fired again with the callback it was made with, moved earlier
 * before it fired, and refused without a loop to make it on.
 */
#define _GNU_SOURCE

#include <errno.h>
#include <stdint.h>
#include <time.h>

#include <CUnit/CUnit.h>

#include "timer.h"
#include "test-util.h"

static int fired;

static int on_timer(sd_event_source *src, uint64_t usec, void *userdata) {
        (void) src;
        (void) usec;
        fired++;
        *(int *) userdata += 1;
        return 0;
}

static uint64_t now_usec(sd_event *e) {
        uint64_t t = 0;
        CU_ASSERT(sd_event_now(e, CLOCK_MONOTONIC, &t) >= 0);
        return t;
}

/* Runs the loop for ms milliseconds. */
static void run_for(sd_event *e, int ms) {
        struct timespec t0, t;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        do {
                CU_ASSERT(sd_event_run(e, 20000) >= 0);
                clock_gettime(CLOCK_MONOTONIC, &t);
        } while ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 < ms);
}

static void test_arm(void) {
        sd_event *e = NULL;
        sd_event_source *src = NULL;
        int mine = 0;

        CU_ASSERT_FATAL(sd_event_new(&e) >= 0);
        fired = 0;
        CU_ASSERT(glean_timer_arm(e, &src, CLOCK_MONOTONIC, now_usec(e) + 10000, 1, on_timer, &mine) >= 0);
        CU_ASSERT_FATAL(src != NULL);
        run_for(e, 100);
        CU_ASSERT_EQUAL(fired, 1); /* once: one-shot */
        CU_ASSERT_EQUAL(mine, 1);
        /* re-armed: no loop or callback needed, the source's own are kept */
        CU_ASSERT(glean_timer_arm(NULL, &src, CLOCK_MONOTONIC, now_usec(e) + 10000, 1, NULL, NULL) >= 0);
        run_for(e, 100);
        CU_ASSERT_EQUAL(fired, 2);
        CU_ASSERT_EQUAL(mine, 2);
        /* relative, and moved earlier before it fires */
        CU_ASSERT(glean_timer_arm_in(NULL, &src, CLOCK_MONOTONIC, 10 * 1000000ULL, 1, NULL, NULL) >= 0);
        CU_ASSERT(glean_timer_arm_in(NULL, &src, CLOCK_MONOTONIC, 10000, 1, NULL, NULL) >= 0);
        run_for(e, 100);
        CU_ASSERT_EQUAL(fired, 3);
        src = sd_event_source_unref(src);
        /* a relative one made on first use */
        CU_ASSERT(glean_timer_arm_in(e, &src, CLOCK_MONOTONIC, 10000, 1, on_timer, &mine) >= 0);
        run_for(e, 100);
        CU_ASSERT_EQUAL(fired, 4);
        src = sd_event_source_unref(src);
        /* nothing to make it on */
        CU_ASSERT_EQUAL(glean_timer_arm(NULL, &src, CLOCK_MONOTONIC, 1, 0, on_timer, NULL), -EINVAL);
        CU_ASSERT_EQUAL(glean_timer_arm_in(NULL, &src, CLOCK_MONOTONIC, 1, 0, on_timer, NULL), -EINVAL);
        CU_ASSERT(src == NULL);
        sd_event_unref(e);
}

static CU_TestInfo tests[] = {
        { "made, fired once, re-armed, moved", test_arm },
        CU_TEST_INFO_NULL,
};

static CU_SuiteInfo suites[] = {
        { "timer", NULL, NULL, NULL, NULL, tests },
        CU_SUITE_INFO_NULL,
};

int main(int argc, char **argv) {
        return glean_test_main(argc, argv, suites);
}
