/* SPDX-License-Identifier: Apache-2.0 */
/*
 * scenario-internal.h — what the two files of the scenario reader share:
 * scenario.c (the file's structure, the configuration part, the entry
 * points) and scenario-items.c (the slot, submitter and jobs lines); the
 * simulator (simulate.c) borrows scn_grow() and scn_set_number().
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/strmap.h"
#include "common/words.h"
#include "scenario.h"

typedef struct ScnReader {
        SimScenario *sc;
        const SimScenarioLimits *limits;
        ConfigError *err;
        AcctGroups *groups;                /* GROUP_NAMES, to check the group of a submitter */
        char *start, *rank, *slot_weight;  /* the slot ads' defaults, from the configuration */
        GleanStrMap *names;                /* slot Name -> its index + 1, to keep names unique */
        GleanStrMap *machines;             /* Machine -> ScnMachine */
        GleanStrMap *submitters;           /* accounting name -> its index + 1 */
        size_t cap_slots, cap_submitters, cap_jobs;
} ScnReader;

typedef struct ScnMachine {
        unsigned next; /* the next slot number to try */
        char name[];
} ScnMachine;

/* err = file, line and the reason; returns code. */
int scn_error(ConfigError *err, int code, const char *file, int line, const char *fmt, ...)
        __attribute__((format(printf, 5, 6)));
/* err = the scenario's file, line and the reason; returns -EINVAL
 * (scn_too_many: -E2BIG). */
int scn_fail(ScnReader *rd, int line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
int scn_too_many(ScnReader *rd, int line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Room for one more of n elements of size in *p (capacity *cap). */
int scn_grow(void **p, size_t *cap, size_t n, size_t size);
/* name = v, an integer when v is one (Cpus = 4, not 4.0). */
int scn_set_number(ClassAd *ad, const char *name, double v);

/* An integer from 1 to max; a finite number. -EINVAL otherwise. */
int scn_parse_count(const char *s, size_t max, size_t *ret);
int scn_parse_number(const char *s, double *ret);

/* The lines: p is what follows the line's keyword, start the line's
 * beginning (for columns), at the arrival time. */
int scn_slots_item(ScnReader *rd, const char *what, char *p, const char *start, int64_t at, int line);
int scn_submitter_item(ScnReader *rd, char *p, int line);
int scn_jobs_item(ScnReader *rd, char *p, const char *start, int64_t at, int line);
void scn_submitter_clear(SimScenarioSubmitter *s);
