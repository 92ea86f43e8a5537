/* SPDX-License-Identifier: Apache-2.0 */
/*
 * negotiate.h — what the two files of `glean negotiate` share: the plot
 * of a simulation (negotiate-plot.c), fed by the verb (negotiate.c).
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sim/simulate.h"

/* A time in seconds for people: 5400 as "1h30m", 0 as "0s". Returns buf. */
const char *cli_duration(int64_t t, char *buf, size_t size);

typedef struct CliPlot CliPlot;

/* Whether path names a picture gnuplot can make: FILE.svg or FILE.png. */
bool cli_plot_format(const char *path);

/* A plot of sc's submitters over cycles (a hint), titled after the
 * scenario's file name. -ENOMEM. */
int cli_plot_new(const SimScenario *sc, const char *scenario_path, unsigned cycles, CliPlot **ret);
/* One cycle's figures: the time, each submitter's weight in use and EUP. */
int cli_plot_add(CliPlot *p, const SimReport *rep);
/* Writes the data and a gnuplot script into a temporary directory, runs
 * gnuplot to draw path, removes them. Errors are printed; -errno. */
int cli_plot_draw(const CliPlot *p, const char *path);
void cli_plot_free(CliPlot *p); /* accepts NULL */
