/* SPDX-License-Identifier: Apache-2.0 */
/*
 * slots-test.h — helpers the slot suites share: a configuration from text
 * and a machine from injected values.
 */
#pragma once

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/slots.h"
#include "test-util.h"

/* The built-in defaults plus text (read as the file "t.conf"). */
static inline Config *slots_test_config(const char *text) {
        Config *cfg = NULL;
        ConfigError err = {};
        int r;

        GLEAN_TEST_CHECK_FATAL(config_new(&cfg) == 0, "config_new() failed");
        r = config_load_string(cfg, text ? text : "", "t.conf", &err);
        GLEAN_TEST_CHECK_FATAL(r == 0, "loading failed: %d: %s", err.line, err.msg);
        return cfg;
}

/* A machine of cpus / memory MB / disk KB / swap KB under cfg. */
static inline AgentMachine slots_test_machine(const Config *cfg, int64_t cpus, int64_t memory, int64_t disk,
                                              int64_t swap) {
        AgentRes d = { .cpus = cpus, .memory = memory, .disk = disk, .swap = swap };
        AgentMachine m;
        ConfigError err = {};
        int r;

        r = agent_machine_configure(cfg, &d, "x86_64", "host.example.org", &m, &err);
        GLEAN_TEST_CHECK_FATAL(r == 0, "agent_machine_configure: %d: %s", r, err.msg);
        return m;
}
