/* SPDX-License-Identifier: Apache-2.0 */
/*
 * psi.h — Linux pressure stall information (PSI) as ClassAd attributes a
 * policy can use: the parser of a pressure file, reading the machine's
 * /proc/pressure/{cpu,memory,io} and a cgroup v2 directory's
 * {cpu,memory,io}.pressure, and the attributes of an ad.
 *
 * A pressure file (Documentation/accounting/psi.rst) is
 *
 *     some avg10=0.00 avg60=0.00 avg300=0.04 total=2966267775
 *     full avg10=0.00 avg60=0.00 avg300=0.00 total=0
 *
 * avgN the share of the last N seconds (a percentage, 0 to 100) in which
 * some (or all non-idle) tasks were stalled on the resource, total the
 * stalled time in microseconds since boot. The 'full' line is missing from
 * cpu.pressure before Linux 5.13.
 *
 * Conventions: >= 0 on success, -errno on failure; outputs last, named
 * ret_*, set only on success (but see the AgentPsiSet readers).
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "classad.h"

#define AGENT_PSI_MAX_LINE 512 /* bytes of a line, newline excluded */
#define AGENT_PSI_MAX_TEXT 2048 /* bytes of a whole pressure file */

typedef enum AgentPsiResource {
        AGENT_PSI_CPU,
        AGENT_PSI_MEMORY,
        AGENT_PSI_IO,
        AGENT_PSI__MAX,
} AgentPsiResource;

/* One line: "some ..." or "full ...". */
typedef struct AgentPsiLine {
        double avg10, avg60, avg300; /* percent, 0 to 100 */
        uint64_t total;              /* microseconds stalled since boot */
} AgentPsiLine;

/* One pressure file. */
typedef struct AgentPsi {
        AgentPsiLine some;
        AgentPsiLine full; /* all zero when !has_full */
        bool has_full;
} AgentPsi;

/* The three resources of the machine or of a cgroup. */
typedef struct AgentPsiSet {
        bool available[AGENT_PSI__MAX]; /* read and parsed; psi[r] meaningful only then */
        AgentPsi psi[AGENT_PSI__MAX];
} AgentPsiSet;

/* Parses the len bytes of text (need not be NUL-terminated). A 'some' line
 * and at most one 'full' line, each with avg10, avg60, avg300 and total
 * exactly once, in any order; other key=value pairs (which a newer kernel
 * may add) are accepted and ignored. Every line ends with a newline.
 * Anything else (a missing or repeated field or line, an unknown line, a
 * value that is not a plain decimal number, a negative one, an average
 * above 100, a total beyond 2^64-1, a NUL byte, a line longer than
 * AGENT_PSI_MAX_LINE, a text longer than AGENT_PSI_MAX_TEXT, no final
 * newline) is -EINVAL, with the line and what was wrong written into why
 * (when whylen > 0). */
int agent_psi_parse(const char *text, size_t len, AgentPsi *ret, char *why, size_t whylen);

/* Reads {cpu,memory,io}.pressure of the cgroup v2 directory dirfd
 * (agent_psi_read_machine: /proc/pressure/{cpu,memory,io}). *ret is always
 * filled, each resource marked available or not, so that it can go to an
 * ad as it stands. Returns 0 when at least one resource was read and the
 * others are merely absent; -ENOENT when none is there (PSI unavailable:
 * not worth more than a debug message); otherwise the first other error
 * (-EINVAL for a file that does not parse, -EACCES, ...) with the file and
 * the reason in why. A file that exists but says EOPNOTSUPP (PSI disabled
 * at boot) counts as absent. Never writes or creates anything. */
int agent_psi_read_dir(int dirfd, AgentPsiSet *ret, char *why, size_t whylen);
int agent_psi_read_machine(AgentPsiSet *ret, char *why, size_t whylen);

/* Sets prefix + {Cpu,Memory,Io}Pressure{Some,Full}{10,60,300} in ad as
 * reals (the kernel's percentages): "CpuPressureSome10" for a slot (prefix
 * NULL or ""), "TotalCpuPressureSome10" for the machine (prefix "Total").
 * The Full attributes of a resource without a 'full' line, and all six of
 * an unavailable resource, are deleted from the ad (they may be there
 * from a previous reading). -EINVAL for a prefix longer than 64 bytes,
 * -ENOMEM; the ad may then be half updated. */
int agent_psi_to_ad(const AgentPsiSet *p, const char *prefix, ClassAd *ad);
