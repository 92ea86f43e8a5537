/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz-replay — libFuzzer target for `glean policy-replay`: the timeline
 * parser (agent/policy/replay.c), the configuration part read on top of the
 * defaults, and the slot's policy state machine (agent/policy*.c) driven
 * by whatever events, sensor values and clocks the input makes up.
 *
 * Input: a timeline (NUL bytes read as newlines), replayed by
 * agent_replay_string_opts() with its output to /dev/null and at most
 * 2,000 periodic evaluations (a longer timeline is rejected as too long,
 * so that no input takes long). Inputs that mention "include" are skipped:
 * the fuzzer must not read the file system. Checks, each an abort() when
 * broken:
 *
 *   - a rejected timeline says why, in which file and at which line
 *     (not before line 0);
 *   - an accepted one counts no more failed expectations than it checked;
 *   - the sanitizers' own checks (memory, undefined behaviour, leaks).
 *
 * Seeds: the timelines of tests/agent/timelines/. Run, from the
 * repository root:
 *
 *     make fuzz && mkdir -p /root/glean-fuzz/replay &&
 *     cp -n tests/agent/timelines/?*.tl /root/glean-fuzz/replay/ &&
 *     build/fuzz/fuzz-replay -max_total_time=180 -max_len=8192 /root/glean-fuzz/replay
 */

#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/replay.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static _Noreturn void fail(const char *what, const char *detail) {
        fprintf(stderr, "FUZZ-REPLAY FAILURE: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        static FILE *null;
        if (!null && !(null = fopen("/dev/null", "we")))
                fail("cannot open /dev/null", NULL);

        char *text = malloc(size + 1);
        if (!text)
                return 0;
        for (size_t i = 0; i < size; i++)
                text[i] = data[i] ? (char) data[i] : '\n';
        text[size] = '\0';
        if (strcasestr(text, "include")) {
                free(text);
                return 0;
        }

        AgentReplayOptions opts = { .max_evaluations = 2000 };
        AgentReplayResult res = { 0 };
        ConfigError err = { 0 };
        int r = agent_replay_string_opts(text, "<fuzz>", &opts, null, &res, &err);
        if (r < 0 && r != -ENOMEM) {
                if (!err.msg[0])
                        fail("a rejected timeline without a reason", NULL);
                if (!err.file[0] || err.line < 0)
                        fail("a rejected timeline without file or line", err.msg);
        }
        if (r == 0 && res.failed > res.expectations)
                fail("more failed expectations than expectations", NULL);
        free(text);
        return 0;
}
