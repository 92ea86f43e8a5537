/* SPDX-License-Identifier: Apache-2.0 */
/*
 * negotiate.c — `glean negotiate --simulate SCENARIO [--cycles N]
 * [--interval SECONDS] [--json] [--plot FILE.svg|FILE.png]`: the
 * matchmaker run over a scenario (sim/scenario.h,
 * docs/simulate.md), cycle after cycle, printing every match, preemption
 * and rejection and where each submitter and group stands; --json as one
 * object per cycle per line; --plot each submitter's weight in use and
 * EUP over the cycles, drawn by gnuplot (negotiate-plot.c).
 *
 * Exit: 0; 1 when the system fails us (memory, gnuplot); 2 for a bad
 * command line or a malformed scenario (file:line: reason on stderr).
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "negotiate.h"
#include "sim/simulate.h"

static const char usage[] =
        "usage: glean negotiate --simulate SCENARIO [--cycles N] [--interval SECONDS] [--json]\n"
        "                       [--rejections all|summary|none] [--plot FILE.svg|FILE.png]";

typedef enum Rejections { REJ_ALL, REJ_SUMMARY, REJ_NONE } Rejections;

typedef struct Opts {
        const char *scenario, *plot;
        unsigned cycles;  /* 0: the scenario's (else 1) */
        int64_t interval; /* 0: the scenario's NEGOTIATOR_INTERVAL */
        bool json;
        Rejections rejections; /* every idle job's reason, one per submitter and reason, or none */
} Opts;

/* ---- text ---- */

const char *cli_duration(int64_t t, char *buf, size_t size) {
        static const struct {
                int64_t secs;
                char unit;
        } units[] = { { 86400, 'd' }, { 3600, 'h' }, { 60, 'm' }, { 1, 's' } };
        size_t n = 0;

        buf[0] = 0;
        for (size_t i = 0; i < 4 && n < size; i++)
                if (t >= units[i].secs) {
                        n += (size_t) snprintf(buf + n, size - n, "%" PRId64 "%c", t / units[i].secs, units[i].unit);
                        t %= units[i].secs;
                }
        if (!buf[0])
                snprintf(buf, size, "0s");
        return buf;
}

/* A priority or a weight in a column: 2 decimals, or 4 significant
 * digits when large (a nice user's EUP is in the millions). */
static const char *number(double v, char *buf, size_t size) {
        snprintf(buf, size, fabs(v) < 1e6 ? "%.2f" : "%.3e", v);
        return buf;
}

static const char *cost_text(double v, char *buf, size_t size) {
        snprintf(buf, size, "%.4g", v);
        return buf;
}

/* The rejections grouped by submitter and reason: group[j] is the first
 * rejection of j's group (the cycle's order). NULL: out of memory. */
static size_t *rejection_groups(const SimReport *rep) {
        size_t *group = calloc(rep->n_rejections + 1, sizeof *group);

        for (size_t j = 0; group && j < rep->n_rejections; j++) {
                const SimRejection *b = &rep->rejections[j];
                group[j] = j;
                for (size_t i = 0; i < j; i++)
                        if (group[i] == i && strcmp(rep->rejections[i].submitter, b->submitter) == 0 &&
                            strcmp(rep->rejections[i].reason, b->reason) == 0) {
                                group[j] = i;
                                break;
                        }
        }
        return group;
}

/* The rejections, one line per submitter and reason, in the cycle's order. */
static void print_rejections(const SimReport *rep) {
        _cleanup_free_ size_t *group = rejection_groups(rep);

        for (size_t i = 0; group && i < rep->n_rejections; i++) {
                const SimRejection *a = &rep->rejections[i];
                size_t n = 0;

                if (group[i] != i)
                        continue;
                for (size_t j = i; j < rep->n_rejections; j++)
                        n += group[j] == i;
                printf("  reject   %s, %zu job%s (", a->submitter, n, n == 1 ? "" : "s");
                for (size_t j = i, shown = 0; j < rep->n_rejections; j++) {
                        if (group[j] != i)
                                continue;
                        if (shown < 5)
                                printf("%s%s", shown ? " " : "", rep->rejections[j].job);
                        else if (shown == 5)
                                printf(" ...");
                        shown++;
                }
                printf("): %s\n", a->reason);
        }
}

static void print_accounts(const SimReport *rep) {
        int w = 9;
        char a[32], b[32], c[32], d[32];

        for (size_t i = 0; i < rep->n_submitters; i++)
                if ((int) strlen(rep->submitters[i].name) > w)
                        w = (int) strlen(rep->submitters[i].name);
        printf("  %-*s %10s %10s %10s %6s %8s %6s %8s %6s\n", w, "submitter", "RUP", "EUP", "factor", "slots",
               "weight", "idle", "running", "done");
        for (size_t i = 0; i < rep->n_submitters; i++) {
                const SimSubmitter *s = &rep->submitters[i];
                printf("  %-*s %10s %10s %10s %6u %8s %6zu %8zu %6zu\n", w, s->name, number(s->rup, a, sizeof a),
                       number(s->eup, b, sizeof b), number(s->factor, c, sizeof c), s->in_use,
                       number(s->weight_in_use, d, sizeof d), s->idle, s->running, s->done);
        }
        if (!rep->n_groups)
                return;
        w = 9;
        for (size_t i = 0; i < rep->n_groups; i++)
                if ((int) strlen(rep->groups[i].name) > w)
                        w = (int) strlen(rep->groups[i].name);
        printf("  %-*s %10s %10s %10s\n", w, "group", "quota", "allocated", "in use");
        for (size_t i = 0; i < rep->n_groups; i++) {
                const SimGroup *g = &rep->groups[i];
                printf("  %-*s %10s %10s %10s\n", w, g->name, number(g->quota, a, sizeof a),
                       number(g->allocated, b, sizeof b), number(g->in_use, c, sizeof c));
        }
}

static void print_text(const SimReport *rep, Rejections rejections) {
        char t[64], c[32], w[32], pool[32];
        double in_use = 0;

        for (size_t i = 0; i < rep->n_submitters; i++)
                in_use += rep->submitters[i].weight_in_use;
        printf("%scycle %u at %s: %zu match%s, %zu preemption%s, %zu rejection%s; %zu slot%s busy, weight %s of %s\n",
               rep->cycle > 1 ? "\n" : "", rep->cycle, cli_duration(rep->time, t, sizeof t), rep->n_matches,
               rep->n_matches == 1 ? "" : "es", rep->n_preemptions, rep->n_preemptions == 1 ? "" : "s",
               rep->n_rejections, rep->n_rejections == 1 ? "" : "s", rep->slots_busy,
               rep->slots_busy == 1 ? "" : "s", cost_text(in_use, w, sizeof w),
               cost_text(rep->pool_weight, pool, sizeof pool));
        if (rep->finished)
                printf("  %zu job%s finished since the last cycle\n", rep->finished, rep->finished == 1 ? "" : "s");
        for (size_t i = 0; i < rep->n_preemptions; i++) {
                const SimPreemption *p = &rep->preemptions[i];
                printf("  preempt  %s (%s) on %s for %s (%s): %s\n", p->job, p->submitter, p->slot, p->by_job,
                       p->by_submitter, nego_reason_name(p->reason));
        }
        for (size_t i = 0; i < rep->n_matches; i++) {
                const SimMatch *m = &rep->matches[i];
                printf("  match    %s (%s) on %s: %s, cost %s\n", m->job, m->submitter, m->slot,
                       nego_reason_name(m->reason), cost_text(m->cost, c, sizeof c));
        }
        if (rejections != REJ_NONE)
                print_rejections(rep);
        print_accounts(rep);
}

/* ---- JSON ---- */

/* ,"key": (no comma first) */
static void json_key(const char *key, bool first) {
        printf("%s", first ? "" : ",");
        cli_json_string(stdout, key);
        putchar(':');
}

/* ,"key":"value" and ,"key":number */
static void json_str(const char *key, const char *v, bool first) {
        json_key(key, first);
        cli_json_string(stdout, v);
}

static void json_num(const char *key, double v, bool first) {
        json_key(key, first);
        cli_json_number(stdout, v);
}

/* ,"name":{ */
static void json_object(const char *name, bool first) {
        json_key(name, first);
        putchar('{');
}

static void print_json(const SimReport *rep, Rejections rejections) {
        printf("{\"cycle\":%u,\"time\":%" PRId64 ",\"matches\":[", rep->cycle, rep->time);
        for (size_t i = 0; i < rep->n_matches; i++) {
                const SimMatch *m = &rep->matches[i];
                printf("%s{", i ? "," : "");
                json_str("job", m->job, true);
                json_str("slot", m->slot, false);
                json_str("submitter", m->submitter, false);
                json_str("reason", nego_reason_name(m->reason), false);
                json_num("cost", m->cost, false);
                putchar('}');
        }
        printf("],\"preemptions\":[");
        for (size_t i = 0; i < rep->n_preemptions; i++) {
                const SimPreemption *p = &rep->preemptions[i];
                printf("%s{", i ? "," : "");
                json_str("job", p->job, true);
                json_str("slot", p->slot, false);
                json_str("submitter", p->submitter, false);
                json_str("by_job", p->by_job, false);
                json_str("by_submitter", p->by_submitter, false);
                json_str("reason", nego_reason_name(p->reason), false);
                putchar('}');
        }
        putchar(']');
        if (rejections == REJ_ALL) {
                printf(",\"rejections\":{");
                for (size_t i = 0; i < rep->n_rejections; i++)
                        json_str(rep->rejections[i].job, rep->rejections[i].reason, i == 0);
                putchar('}');
        } else if (rejections == REJ_SUMMARY) {
                /* one entry per submitter and reason: how many jobs, the first five */
                _cleanup_free_ size_t *group = rejection_groups(rep);
                printf(",\"rejection_summary\":[");
                for (size_t i = 0, first = 1; group && i < rep->n_rejections; i++) {
                        if (group[i] != i)
                                continue;
                        size_t n = 0;
                        for (size_t j = i; j < rep->n_rejections; j++)
                                n += group[j] == i;
                        printf("%s{", first ? "" : ",");
                        first = 0;
                        json_str("submitter", rep->rejections[i].submitter, true);
                        json_str("reason", rep->rejections[i].reason, false);
                        json_num("jobs", (double) n, false);
                        json_key("first_jobs", false);
                        putchar('[');
                        for (size_t j = i, shown = 0; j < rep->n_rejections && shown < 5; j++)
                                if (group[j] == i) {
                                        printf("%s", shown++ ? "," : "");
                                        cli_json_string(stdout, rep->rejections[j].job);
                                }
                        printf("]}");
                }
                putchar(']');
        }
        printf(",\"submitters\":{");
        for (size_t i = 0; i < rep->n_submitters; i++) {
                const SimSubmitter *s = &rep->submitters[i];
                json_object(s->name, i == 0);
                json_num("rup", s->rup, true);
                json_num("eup", s->eup, false);
                json_num("in_use", s->in_use, false);
                json_num("weight_in_use", s->weight_in_use, false);
                putchar('}');
        }
        printf("},\"groups\":{");
        for (size_t i = 0; i < rep->n_groups; i++) {
                json_object(rep->groups[i].name, i == 0);
                json_num("quota", rep->groups[i].quota, true);
                json_num("allocated", rep->groups[i].allocated, false);
                json_num("in_use", rep->groups[i].in_use, false);
                putchar('}');
        }
        printf("}}\n");
}

/* ---- the verb ---- */

static int parse_args(int argc, char **argv, Opts *o) {
        for (int i = 1; i < argc; i++) {
                const char *a = argv[i];
                const char *v = i + 1 < argc ? argv[i + 1] : NULL;

                if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
                        printf("%s\n\nRuns the matchmaker over a scenario of slots, submitters and jobs, cycle\n"
                               "after cycle, and prints every match, preemption and rejection and each\n"
                               "submitter's priority and usage. See docs/simulate.md.\n",
                               usage);
                        return 1;
                }
                if (strcmp(a, "--json") == 0) {
                        o->json = true;
                        continue;
                }
                if (strcmp(a, "--simulate") != 0 && strcmp(a, "--cycles") != 0 && strcmp(a, "--interval") != 0 &&
                    strcmp(a, "--plot") != 0 && strcmp(a, "--rejections") != 0)
                        return cli_usage_error("negotiate", usage, "unknown %s '%s'",
                                               a[0] == '-' ? "option" : "argument", a);
                if (!v)
                        return cli_usage_error("negotiate", usage, "%s needs a value", a);
                i++;
                if (strcmp(a, "--simulate") == 0)
                        o->scenario = v;
                else if (strcmp(a, "--rejections") == 0) {
                        if (strcmp(v, "all") == 0)
                                o->rejections = REJ_ALL;
                        else if (strcmp(v, "summary") == 0)
                                o->rejections = REJ_SUMMARY;
                        else if (strcmp(v, "none") == 0)
                                o->rejections = REJ_NONE;
                        else
                                return cli_usage_error("negotiate", usage,
                                                       "--rejections: all, summary or none, not '%s'", v);
                }
                else if (strcmp(a, "--plot") == 0) {
                        if (!cli_plot_format(v))
                                return cli_usage_error("negotiate", usage, "--plot: FILE.svg or FILE.png, not '%s'", v);
                        o->plot = v;
                } else if (strcmp(a, "--cycles") == 0) {
                        char *end;
                        errno = 0;
                        unsigned long long c = strtoull(v, &end, 10);
                        if (errno || *end || v[0] == '-' || c < 1 || c > NEGO_SCENARIO_MAX_CYCLES)
                                return cli_usage_error("negotiate", usage, "--cycles: a number from 1 to %d, not '%s'",
                                                       NEGO_SCENARIO_MAX_CYCLES, v);
                        o->cycles = (unsigned) c;
                } else if (sim_scenario_parse_duration(v, &o->interval) < 0 || o->interval <= 0)
                        return cli_usage_error("negotiate", usage,
                                               "--interval: seconds over 0 (or 30s, 5m, 1h), not '%s'", v);
        }
        if (!o->scenario)
                return cli_usage_error("negotiate", usage, "--simulate SCENARIO is needed (the only mode for now)");
        return 0;
}

int cli_verb_negotiate(int argc, char **argv) {
        Opts o = { 0 };
        SimScenario *sc = NULL;
        Sim *sim = NULL;
        CliPlot *plot = NULL;
        ConfigError err = { 0 };
        int r, status = CLI_EXIT_OK;

        r = parse_args(argc, argv, &o);
        if (r != 0)
                return r > 0 ? CLI_EXIT_OK : CLI_EXIT_USAGE;
        r = sim_scenario_load(o.scenario, &sc, &err);
        if (r == -ENOMEM)
                return fprintf(stderr, "glean negotiate: out of memory\n"), CLI_EXIT_FAILURE;
        if (r < 0) {
                cli_config_error("negotiate", &err);
                return CLI_EXIT_USAGE;
        }
        r = sim_new(sc, o.interval, &sim, &err);
        if (r < 0) {
                if (r == -ENOMEM)
                        fprintf(stderr, "glean negotiate: out of memory\n");
                else
                        cli_config_error("negotiate", &err);
                sim_scenario_free(sc);
                return r == -ENOMEM ? CLI_EXIT_FAILURE : CLI_EXIT_USAGE;
        }
        unsigned cycles = o.cycles ? o.cycles : sc->cycles ? sc->cycles : 1;
        if (o.plot && cli_plot_new(sc, o.scenario, cycles, &plot) < 0) {
                fprintf(stderr, "glean negotiate: out of memory\n");
                status = CLI_EXIT_FAILURE;
        }
        for (unsigned i = 0; status == CLI_EXIT_OK && i < cycles; i++) {
                const SimReport *rep;
                r = sim_step(sim, &rep);
                if (r < 0) {
                        fprintf(stderr, "glean negotiate: cycle %u failed: %s\n", i + 1, strerror(-r));
                        status = CLI_EXIT_FAILURE;
                        break;
                }
                if (o.json)
                        print_json(rep, o.rejections);
                else
                        print_text(rep, o.rejections);
                if (plot)
                        cli_plot_add(plot, rep);
        }
        if (fflush(stdout) != 0 && status == CLI_EXIT_OK) {
                fprintf(stderr, "glean negotiate: writing the output: %m\n");
                status = CLI_EXIT_FAILURE;
        }
        if (plot && status == CLI_EXIT_OK && cli_plot_draw(plot, o.plot) < 0)
                status = CLI_EXIT_FAILURE;
        cli_plot_free(plot);
        sim_free(sim);
        sim_scenario_free(sc);
        return status;
}
