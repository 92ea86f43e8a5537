/* SPDX-License-Identifier: Apache-2.0 */
/*
 * words.h — the line formats of policy-replay timelines and simulation
 * scenarios: words separated by white space, then perhaps a ClassAd in
 * brackets ("claim c1 [ Owner = \"bob\" ]", "slots 4 [ Cpus = 2 ]").
 */
#pragma once

/* The next white-space separated word of *p, cut there (a NUL written
 * after it) with *p moved past it; NULL at the end or at a '[', *p then
 * at it. */
char *glean_next_word(char **p);
/* p past its white space. */
char *glean_skip_space(char *p);
