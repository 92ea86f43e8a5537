/* SPDX-License-Identifier: Apache-2.0 */
/*
 * glean-reaper — the job's reaper proper, exec'd by the agent's copy that
 * cloned the job (agent/exec/exec-child.c): the job is its child, it is root's,
 * in a session of its own, every signal blocked and its parent-death
 * signal set, all of which exec keeps.
 *
 *   glean-reaper AGENT_PID JOB_PID TOKEN EXIT_FILE [LEASE STATE_FILE]
 *
 * TOKEN in hex, EXIT_FILE "-" for none; LEASE the claim's lease in
 * seconds (0: none), STATE_FILE the file whose mtime is the claim's last
 * keep-alive ("-": none): once the agent died, the job is killed when the
 * lease ran out. Not a command for people: it
 * waits for JOB_PID, which must be its child (agent/exec/reaper-core.c).
 * Static and libc only, so that exec'ing it costs a job next to nothing.
 */
#define _GNU_SOURCE

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "agent/exec/exec-internal.h"

static int parse(const char *s, unsigned base, uint64_t max, uint64_t *ret) {
        char *end;

        errno = 0;
        if (!s || !*s || *s == '-' || *s == '+')
                return -EINVAL;
        *ret = strtoull(s, &end, (int) base);
        return errno == 0 && *end == '\0' && *ret <= max ? 0 : -EINVAL;
}

int main(int argc, char **argv) {
        uint64_t agent, job, token, seconds = 0;
        ExecLease lease = { 0, NULL };

        exec_block_all_signals(); /* kept from the copy already; to be sure */
        if ((argc != 5 && argc != 7) || parse(argv[1], 10, INT32_MAX, &agent) < 0 || parse(argv[2], 10, INT32_MAX, &job) < 0 ||
            parse(argv[3], 16, UINT64_MAX, &token) < 0 || (strcmp(argv[4], "-") != 0 && argv[4][0] != '/') ||
            (argc == 7 && (parse(argv[5], 10, INT32_MAX, &seconds) < 0 ||
                           (strcmp(argv[6], "-") != 0 && argv[6][0] != '/')))) {
                fprintf(stderr, "glean-reaper: not a command for people (see agent/reaper/glean-reaper.c)\n");
                return 2;
        }
        /* exec keeps it; set again in case this one was exec'd otherwise. */
        (void) prctl(PR_SET_PDEATHSIG, EXEC_SIG_AGENT_DIED, 0, 0, 0);
        /* Neither traced nor dumped by anyone but root. */
        (void) prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
        if (argc == 7 && strcmp(argv[6], "-") != 0)
                lease = (ExecLease) { (int64_t) seconds, argv[6] };
        exec_reaper_finish((pid_t) job, (pid_t) agent, token, strcmp(argv[4], "-") == 0 ? NULL : argv[4], &lease);
}
