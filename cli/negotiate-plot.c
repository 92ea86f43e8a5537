/* SPDX-License-Identifier: Apache-2.0 */
/*
 * negotiate-plot.c — `glean negotiate --plot FILE.svg|FILE.png`: each
 * submitter's slot weight in use and EUP over the cycles of a simulation,
 * two panels one above the other on the same time axis, drawn by gnuplot
 * (Debian's gnuplot-nox) from a data file and a script written into a
 * temporary directory.
 *
 * The top panel shows the weight each submitter holds as the cycle leaves
 * it (steps: it holds until the next cycle) under the pool's total
 * weight, dashed; the bottom one each submitter's EUP on a log scale (a
 * nice user's is millions of times the others'), lower being better. A
 * submitter has the same colour in both, and the legend is beside them.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "negotiate.h"

extern char **environ;

struct CliPlot {
        char *title;
        size_t n_subs;
        char **names;
        size_t n, cap;   /* cycles recorded */
        double *time;    /* seconds after time 0 */
        double *pool;
        double *weight;  /* [cycle * n_subs + submitter] */
        double *eup;
};

/* Distinct colours (Tableau 10), one per submitter, in turn. */
static const char *const colours[] = {
        "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
        "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf",
};

/* The first submitters' lines wider, so that lines on top of each other
 * (equal shares) still show both colours. */
static double line_width(size_t i) {
        return i < 3 ? 4.0 - (double) i : 1.5;
}

static bool ends_with(const char *s, const char *suffix) {
        size_t n = strlen(s), m = strlen(suffix);

        return n > m && strcasecmp(s + n - m, suffix) == 0;
}

bool cli_plot_format(const char *path) {
        return ends_with(path, ".svg") || ends_with(path, ".png");
}

void cli_plot_free(CliPlot *p) {
        if (!p)
                return;
        for (size_t i = 0; i < p->n_subs; i++)
                free(p->names[i]);
        free(p->names);
        free(p->title);
        free(p->time);
        free(p->pool);
        free(p->weight);
        free(p->eup);
        free(p);
}

int cli_plot_new(const SimScenario *sc, const char *scenario_path, unsigned cycles, CliPlot **ret) {
        CliPlot *p = calloc(1, sizeof *p);
        const char *base = strrchr(scenario_path, '/');

        if (!p)
                return -ENOMEM;
        p->n_subs = sc->n_submitters;
        p->names = calloc(p->n_subs + 1, sizeof *p->names);
        p->title = strdup(base ? base + 1 : scenario_path);
        p->cap = cycles ? cycles : 1;
        p->time = calloc(p->cap, sizeof *p->time);
        p->pool = calloc(p->cap, sizeof *p->pool);
        p->weight = calloc(p->cap * (p->n_subs + 1), sizeof *p->weight);
        p->eup = calloc(p->cap * (p->n_subs + 1), sizeof *p->eup);
        bool ok = p->names && p->title && p->time && p->pool && p->weight && p->eup;
        for (size_t i = 0; ok && i < p->n_subs; i++)
                ok = (p->names[i] = strdup(sc->submitters[i].name)) != NULL;
        if (!ok) {
                cli_plot_free(p);
                return -ENOMEM;
        }
        *ret = p;
        return 0;
}

int cli_plot_add(CliPlot *p, const SimReport *rep) {
        if (p->n == p->cap || rep->n_submitters != p->n_subs)
                return -ENOSPC;
        p->time[p->n] = (double) rep->time;
        p->pool[p->n] = rep->pool_weight;
        for (size_t i = 0; i < p->n_subs; i++) {
                p->weight[p->n * p->n_subs + i] = rep->submitters[i].weight_in_use;
                p->eup[p->n * p->n_subs + i] = rep->submitters[i].eup;
        }
        p->n++;
        return 0;
}

/* The time axis's unit for a simulation lasting span seconds. */
static void time_unit(double span, double *ret_secs, const char **ret_name) {
        if (span <= 2 * 3600)
                *ret_secs = 60, *ret_name = "minutes";
        else if (span <= 3 * 86400)
                *ret_secs = 3600, *ret_name = "hours";
        else
                *ret_secs = 86400, *ret_name = "days";
}

static int write_data(const CliPlot *p, const char *path, double unit) {
        FILE *f = fopen(path, "we");

        if (!f)
                return -errno;
        fprintf(f, "# time pool");
        for (size_t i = 0; i < p->n_subs; i++)
                fprintf(f, " weight(%s) eup(%s)", p->names[i], p->names[i]);
        fputc('\n', f);
        for (size_t c = 0; c < p->n; c++) {
                fprintf(f, "%.9g %.9g", p->time[c] / unit, p->pool[c]);
                for (size_t i = 0; i < p->n_subs; i++)
                        fprintf(f, " %.9g %.9g", p->weight[c * p->n_subs + i], p->eup[c * p->n_subs + i]);
                fputc('\n', f);
        }
        return fclose(f) == 0 ? 0 : -errno;
}

/* s in single quotes for gnuplot, where '' is a quote. */
static void quoted(FILE *f, const char *s) {
        fputc('\'', f);
        for (; *s; s++)
                fputs(*s == '\'' ? "''" : (char[]){ *s, 0 }, f);
        fputc('\'', f);
}

static int write_script(const CliPlot *p, const char *path, const char *data, const char *out) {
        FILE *f = fopen(path, "we");
        double span = p->n ? p->time[p->n - 1] : 0, unit, top = 1;
        const char *unit_name;
        char dur[64];

        if (!f)
                return -errno;
        time_unit(span, &unit, &unit_name);
        cli_duration((int64_t) span, dur, sizeof dur);
        if (ends_with(out, ".svg"))
                fprintf(f, "set terminal svg size 1100,800 font 'Sans,12' noenhanced background rgb 'white'\n");
        else
                fprintf(f, "set terminal pngcairo size 1100,800 font 'Sans,10' noenhanced\n");
        fprintf(f, "set output ");
        quoted(f, out);
        fprintf(f, "\nset multiplot title ");
        quoted(f, p->title);
        fprintf(f, ".': %zu cycles over %s of simulated time' font ',14'\n", p->n, dur);
        /* The legend beside the panels, as wide as the longest name. */
        size_t longest = strlen("pool (total)");
        for (size_t i = 0; i < p->n_subs; i++)
                longest = strlen(p->names[i]) > longest ? strlen(p->names[i]) : longest;
        double right = fmin(0.82, fmax(0.5, 1 - (double) (longest * 7 + 80) / 1100));
        fprintf(f, "set lmargin at screen 0.08\nset rmargin at screen %.3f\n"
                   "set grid lc rgb '#d0d0d0'\nset border 3\nset tics nomirror\n"
                   "set key at screen %.3f, graph 1 left top Left reverse samplen 2 spacing 1.2 box lc rgb '#d0d0d0'\n"
                   "set xrange [0:%.9g]\n\n",
                right, right + 0.015, span > 0 ? span / unit : 1);

        for (size_t c = 0; c < p->n; c++) {
                top = fmax(top, p->pool[c]);
                for (size_t i = 0; i < p->n_subs; i++)
                        top = fmax(top, p->weight[c * p->n_subs + i]);
        }
        fprintf(f, "\nset tmargin at screen 0.89\nset bmargin at screen 0.54\n"
                   "set title 'Slot weight in use (as each cycle leaves it)'\n"
                   "set ylabel 'slot weight'\nset yrange [%.9g:%.9g]\nset format x ''\n",
                -0.03 * top, 1.08 * top);
        fprintf(f, "plot ");
        quoted(f, data);
        fprintf(f, " using 1:2 with lines dt 2 lw 1.5 lc rgb '#555555' title 'pool (total)'");
        for (size_t i = 0; i < p->n_subs; i++) {
                fprintf(f, ", \\\n     '' using 1:%zu with steps lw %.1f lc rgb '%s' title ", 3 + 2 * i,
                        line_width(i), colours[i % (sizeof colours / sizeof *colours)]);
                quoted(f, p->names[i]);
        }

        fprintf(f, "\n\nset tmargin at screen 0.46\nset bmargin at screen 0.09\n"
                   "set title 'Effective user priority, EUP (log scale; lower is better)'\n"
                   "set ylabel 'EUP'\nset logscale y\nset yrange [0.35:*]\nset format x '%%g'\n"
                   "set format y '%%.0s%%c'\nset xlabel 'simulated time (%s)'\n",
                unit_name);
        for (size_t i = 0; i < p->n_subs; i++) {
                fprintf(f, "%s", i ? ", \\\n     " : "plot ");
                if (i == 0)
                        quoted(f, data);
                else
                        fprintf(f, "''");
                fprintf(f, " using 1:%zu with lines lw %.1f lc rgb '%s' title ", 4 + 2 * i, line_width(i),
                        colours[i % (sizeof colours / sizeof *colours)]);
                quoted(f, p->names[i]);
        }
        fprintf(f, "%s\nunset multiplot\n", p->n_subs ? "" : "plot 0 notitle");
        return fclose(f) == 0 ? 0 : -errno;
}

static int run_gnuplot(const char *script) {
        char *argv[] = { (char *) "gnuplot", (char *) script, NULL };
        pid_t pid;
        int status, r;

        r = posix_spawnp(&pid, "gnuplot", NULL, NULL, argv, environ);
        if (r == ENOENT) {
                fprintf(stderr, "glean negotiate: --plot needs gnuplot (Debian: apt-get install gnuplot-nox)\n");
                return -ENOENT;
        }
        if (r != 0) {
                fprintf(stderr, "glean negotiate: cannot run gnuplot: %s\n", strerror(r));
                return -r;
        }
        while (waitpid(pid, &status, 0) < 0)
                if (errno != EINTR)
                        return -errno;
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
                fprintf(stderr, "glean negotiate: gnuplot failed (%s %d)\n",
                        WIFEXITED(status) ? "exit status" : "signal",
                        WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
                return -EIO;
        }
        return 0;
}

int cli_plot_draw(const CliPlot *p, const char *path) {
        char dir[] = "/tmp/glean-plot-XXXXXX", data[64], script[64];
        double unit;
        const char *unit_name;
        int r;

        if (!mkdtemp(dir)) {
                fprintf(stderr, "glean negotiate: cannot make a temporary directory: %m\n");
                return -errno;
        }
        snprintf(data, sizeof data, "%s/plot.dat", dir);
        snprintf(script, sizeof script, "%s/plot.gp", dir);
        time_unit(p->n ? p->time[p->n - 1] : 0, &unit, &unit_name);
        r = write_data(p, data, unit);
        if (r >= 0)
                r = write_script(p, script, data, path);
        if (r < 0)
                fprintf(stderr, "glean negotiate: writing the plot's files in %s: %s\n", dir, strerror(-r));
        else
                r = run_gnuplot(script);
        unlink(data);
        unlink(script);
        rmdir(dir);
        return r;
}
