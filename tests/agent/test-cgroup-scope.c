/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test-cgroup-scope.c — the jobs' scope under systemd (agent/cgroup/cgroup-scope.c):
 * the scope's name, slice and cgroup for a service's cgroup (none for
 * anything else).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "agent/cgroup.h"
#include "test-util.h"

static void test_plan(void) {
        static const struct {
                const char *own, *knob;
                int r;
                const char *service, *slice, *name, *cgroup;
        } rows[] = {
                { "/system.slice/glean-agent.service", NULL, 0, "glean-agent.service", "system.slice",
                  "glean-agent-jobs.scope", "/system.slice/glean-agent-jobs.scope" },
                { "/system.slice/glean-agent.service", "auto", 0, "glean-agent.service", "system.slice",
                  "glean-agent-jobs.scope", "/system.slice/glean-agent-jobs.scope" },
                { "/system.slice/glean-agent.service/", NULL, 0, "glean-agent.service", "system.slice",
                  "glean-agent-jobs.scope", "/system.slice/glean-agent-jobs.scope" },
                { "/system.slice/glean-agent.service", "batch.scope", 0, "glean-agent.service", "system.slice",
                  "batch.scope", "/system.slice/batch.scope" },
                { "/glean.slice/glean-batch.slice/glean-agent@b.service", NULL, 0, "glean-agent@b.service",
                  "glean-batch.slice", "glean-agent@b-jobs.scope", "/glean.slice/glean-batch.slice/glean-agent@b-jobs.scope" },
                { "/x.service", NULL, 0, "x.service", "-.slice", "x-jobs.scope", "/x-jobs.scope" },
                /* Not a service: no scope. */
                { "/system.slice/glean-demo-agent-1.scope", NULL, -ENOMEDIUM, NULL, NULL, NULL, NULL },
                { "/system.slice/glean-agent.service/agent", NULL, -ENOMEDIUM, NULL, NULL, NULL, NULL },
                { "/user.slice/user-1000.slice/session-2.scope", NULL, -ENOMEDIUM, NULL, NULL, NULL, NULL },
                { "/", NULL, -ENOMEDIUM, NULL, NULL, NULL, NULL },
                { "/.service", NULL, -ENOMEDIUM, NULL, NULL, NULL, NULL },
                { "/notaslice/glean-agent.service", NULL, -ENOMEDIUM, NULL, NULL, NULL, NULL },
                { "/system.slice/bad name.service", NULL, -ENOMEDIUM, NULL, NULL, NULL, NULL },
                /* A knob that is no scope's name. */
                { "/system.slice/glean-agent.service", "jobs.service", -EINVAL, NULL, NULL, NULL, NULL },
                { "/system.slice/glean-agent.service", "a/b.scope", -EINVAL, NULL, NULL, NULL, NULL },
                { "/system.slice/glean-agent.service", ".scope", -EINVAL, NULL, NULL, NULL, NULL },
                { "/system.slice/glean-agent.service", "-x.scope", -EINVAL, NULL, NULL, NULL, NULL },
                { "relative.slice/x.service", NULL, -EINVAL, NULL, NULL, NULL, NULL },
                { NULL, NULL, -EINVAL, NULL, NULL, NULL, NULL },
        };

        for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
                CgScopePlan p;
                memset(&p, 'x', sizeof(p));
                int r = cg_scope_plan(rows[i].own, rows[i].knob, &p);
                GLEAN_TEST_CHECK(r == rows[i].r, "row %zu (%s): %d, want %d", i, rows[i].own ? rows[i].own : "NULL",
                                 r, rows[i].r);
                if (r != 0 || rows[i].r != 0)
                        continue;
                GLEAN_TEST_CHECK(strcmp(p.service, rows[i].service) == 0, "row %zu: service '%s'", i, p.service);
                GLEAN_TEST_CHECK(strcmp(p.slice, rows[i].slice) == 0, "row %zu: slice '%s'", i, p.slice);
                GLEAN_TEST_CHECK(strcmp(p.name, rows[i].name) == 0, "row %zu: name '%s'", i, p.name);
                GLEAN_TEST_CHECK(strcmp(p.cgroup, rows[i].cgroup) == 0, "row %zu: cgroup '%s'", i, p.cgroup);
        }
}

static CU_TestInfo tests[] = {
        { "the scope of a service", test_plan },
        CU_TEST_INFO_NULL,
};

static CU_SuiteInfo suites[] = {
        { "cgroup-scope", NULL, NULL, NULL, NULL, tests },
        CU_SUITE_INFO_NULL,
};

int main(int argc, char **argv) {
        return glean_test_main(argc, argv, suites);
}
