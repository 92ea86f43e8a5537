/* SPDX-License-Identifier: Apache-2.0 */
/*
 * groups-test.h — what the accounting suites share: a configuration from
 * text ("t.conf" in errors) and the group tree it defines.
 */
#pragma once

#include "accounting/accounting.h"
#include "test-util.h"

/* The built-in defaults and text on top; fails the test when it does not load. */
static inline Config *groups_test_config(const char *text) {
        Config *cfg = NULL;
        ConfigError err = {};
        int r;

        GLEAN_TEST_CHECK_FATAL(config_new(&cfg) == 0, "config_new() failed");
        r = config_load_string(cfg, text, "t.conf", &err);
        GLEAN_TEST_CHECK_FATAL(r == 0, "loading failed: %d: %s", err.line, err.msg);
        return cfg;
}

/* The groups of that configuration; fails the test when it has none. */
static inline AcctGroups *groups_test_groups(const char *text) {
        Config *cfg = groups_test_config(text);
        AcctGroups *g = NULL;
        ConfigError err = {};
        int r;

        r = acct_groups_from_config(cfg, &g, &err);
        config_free(cfg);
        GLEAN_TEST_CHECK_FATAL(r == 0, "acct_groups_from_config: %d: %s:%d: %s", r, err.file, err.line, err.msg);
        return g;
}
