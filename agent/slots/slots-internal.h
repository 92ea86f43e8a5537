/* SPDX-License-Identifier: Apache-2.0 */
/*
 * slots-internal.h — what machine.c, names.c, slottype.c, pslot.c and
 * slotad-res.c share and nobody else needs.
 */
#pragma once

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "common/cleanup.h"
#include "slots.h"


static inline void agent_strvp(char ***p) {
        config_strv_free(*p);
}
#define _agent_cleanup_strv_ __attribute__((cleanup(agent_strvp)))

/* Fills err (may be NULL) with the reason and, when knob is defined in cfg,
 * the file and line of its definition. Returns r. */
int agent_slots_error(ConfigError *err, const Config *cfg, const char *knob, int r, const char *fmt, ...)
        __attribute__((format(printf, 5, 6)));

/* The expanded, trimmed value of knob, with $(DETECTED_CPUS), $(DETECTED_CORES),
 * $(DETECTED_PHYSICAL_CPUS) and $(DETECTED_MEMORY) standing for what m detected
 * (m->detected.cpus, m->detected_cores, m->detected_physical_cpus,
 * m->detected.memory; m may be NULL: as cfg says).
 * -ENOENT when undefined or empty. *ret malloc'd. */
int agent_knob_text(const Config *cfg, const char *knob, const AgentMachine *m, char **ret, ConfigError *err);
/* The same read as a number: a literal, else a ClassAd expression of no ad
 * (as HTCondor's param_integer() reads). -EINVAL with err when it is not one. */
int agent_knob_number(const Config *cfg, const char *knob, const AgentMachine *m, double *ret, ConfigError *err);

/* m->name (STARTD_NAME), m->uid_domain and m->filesystem_domain of m, whose
 * hostname is set (names.c); -EINVAL with err naming a bad knob. */
int agent_machine_names(const Config *cfg, AgentMachine *m, ConfigError *err);

/* Parses a whole number or real in text[0..len) with an optional unit suffix
 * (K, M, G, T, optionally followed by B, case-insensitive) into units of
 * `base` bytes (1024 for KB, 1048576 for MB); allow_units false rejects any
 * suffix. -EINVAL when it is not such a number or is negative. */
int agent_parse_amount(const char *text, size_t len, bool allow_units, double base, double *ret);
