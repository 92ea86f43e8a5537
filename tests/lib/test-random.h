/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test-random.h — a seeded generator for the suites that make up pools
 * and jobs: the same seed, the same workload, on every machine.
 */
#pragma once

#include <stdint.h>

/* SplitMix64: the next number of the sequence *s. */
static inline uint64_t splitmix(uint64_t *s) {
        uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        return z ^ (z >> 31);
}

/* One of 0 .. n-1. */
static inline unsigned pick(uint64_t *s, unsigned n) {
        return (unsigned) (splitmix(s) % n);
}

/* One element of a static array. */
#define PICK(s, arr) (arr)[pick((s), sizeof(arr) / sizeof((arr)[0]))]
