/* SPDX-License-Identifier: Apache-2.0 */
/*
 * glean-defaults.c — a build tool: prints the built-in configuration (the
 * one table of defaults, config/defaults.c, as config_new() defines it) so
 * that glean.conf(5) and the installed /etc/glean/glean.conf are made from
 * it and cannot drift from it.
 *
 *   glean-defaults --man    troff: one .TP entry per knob, NAME and its
 *                           default as written; then the detected names
 *   glean-defaults --conf   the knobs commented out ("#NAME = default")
 *   glean-defaults --list   NAME<TAB>default, one a line
 *   glean-defaults --metaknobs   troff: one .TP entry per metaknob
 *                           (config_metaknobs()), its status and note
 *
 * Only definitions whose source is "<default>" are knobs; the "<detected>"
 * ones (DETECTED_CPUS, FULL_HOSTNAME, ...) are listed by name in --man.
 * Exit: 0; 1 on failure (the reason on stderr); 2 for a bad command line.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "config/config.h"

typedef enum Mode {
        MODE_MAN,
        MODE_CONF,
        MODE_LIST,
} Mode;

/* A value as troff text: backslashes as \e, a leading . or ' guarded by \&,
 * hyphens as \- so that they copy and search as ASCII, and a zero-width
 * break point (\:) after each ',' and '|'. */
static void put_troff(const char *s) {
        if (*s == '.' || *s == '\'')
                fputs("\\&", stdout);
        for (; *s; s++) {
                if (*s == '\\')
                        fputs("\\e", stdout);
                else if (*s == '-')
                        fputs("\\-", stdout);
                else
                        putchar(*s);
                /* A place to break a long expression (zero width). */
                if (*s == ',' || *s == '|')
                        fputs("\\:", stdout);
        }
}

static bool source_is(const Config *cfg, const char *name, const char *source) {
        const char *file = NULL;
        int line = 0;
        return config_where(cfg, name, &file, &line) >= 0 && file && strcmp(file, source) == 0;
}

static void print_knob(Mode mode, const char *name, const char *value) {
        switch (mode) {
        case MODE_MAN:
                printf(".TP\n.B ");
                put_troff(name);
                putchar('\n');
                if (value[0]) {
                        fputs("Default: \\f(CW", stdout);
                        put_troff(value);
                        fputs("\\fR\n", stdout);
                } else
                        fputs("Default: empty.\n", stdout);
                break;
        case MODE_CONF:
                printf("#%s = %s\n", name, value);
                break;
        case MODE_LIST:
                printf("%s\t%s\n", name, value);
                break;
        }
}

/* The table of metaknobs, for glean.conf(5): "use CATEGORY : Name(args)",
 * then its status and what it means for glean. */
static int print_metaknobs(void) {
        size_t n = 0;
        const ConfigMetaknob *m = config_metaknobs(&n);

        for (size_t i = 0; i < n; i++) {
                printf(".TP\n\\fBuse %s : ", m[i].category);
                put_troff(m[i].name);
                fputs("\\fR", stdout);
                if (m[i].args)
                        put_troff(m[i].args);
                printf("\n%s%s: ", config_metaknob_status_name(m[i].status), m[i].glean ? " (glean's own)" : "");
                put_troff(m[i].note);
                fputs(".\n", stdout);
        }
        return fflush(stdout) == 0 ? 0 : 1;
}

int main(int argc, char **argv) {
        Config *cfg = NULL;
        char **names = NULL;
        Mode mode;
        int r;

        if (argc != 2)
                goto usage;
        if (strcmp(argv[1], "--man") == 0)
                mode = MODE_MAN;
        else if (strcmp(argv[1], "--conf") == 0)
                mode = MODE_CONF;
        else if (strcmp(argv[1], "--list") == 0)
                mode = MODE_LIST;
        else if (strcmp(argv[1], "--metaknobs") == 0)
                return print_metaknobs();
        else
                goto usage;

        r = config_new(&cfg);
        if (r >= 0)
                r = config_names(cfg, &names);
        if (r < 0) {
                fprintf(stderr, "glean-defaults: %s\n", strerror(-r));
                config_free(cfg);
                return 1;
        }

        if (mode == MODE_CONF)
                fputs("# /etc/glean/glean.conf: the configuration of glean (glean.conf(5)).\n"
                      "#\n"
                      "# HTCondor's configuration language and knobs. Below, every knob with a\n"
                      "# built-in default, commented out, with that default: uncomment and\n"
                      "# change what this machine needs, or put it in a file of config.d/\n"
                      "# (read after this one). glean config -v NAME shows a value and where it\n"
                      "# comes from. A pool needs at least, on every execute machine:\n"
                      "#   CONDOR_HOST = central-manager.example\n"
                      "# and the same /etc/glean/pool.key everywhere (glean pool-key --new).\n"
                      "\n"
                      "# What this machine is, as HTCondor's packages say it: an execute machine\n"
                      "# runs jobs whenever a slot is free (HTCondor's policy: START = True,\n"
                      "# never suspend or preempt for the owner). glean-agent runs jobs,\n"
                      "# glean-negotiator is the central manager. Instead, or as well:\n"
                      "#   use ROLE : CentralManager   the central manager (glean-negotiator)\n"
                      "#   use ROLE : Personal         the whole pool on this one machine\n"
                      "#   use POLICY : Desktop        a desktop: jobs only while the owner is away\n"
                      "# (glean.conf(5), METAKNOBS; glean config -v START shows what applies).\n"
                      "use ROLE : Execute\n"
                      "\n",
                      stdout);

        for (char **n = names; *n; n++)
                if (source_is(cfg, *n, "<default>"))
                        print_knob(mode, *n, config_raw(cfg, *n));

        if (mode == MODE_MAN) {
                printf(".PP\nDetected on the machine at start, before any file is read:\n");
                bool first = true;
                for (char **n = names; *n; n++)
                        if (source_is(cfg, *n, "<detected>")) {
                                printf("%s\\fB", first ? "" : ",\n");
                                put_troff(*n);
                                printf("\\fR");
                                first = false;
                        }
                printf(".\n");
        }

        config_strv_free(names);
        config_free(cfg);
        return fflush(stdout) == 0 ? 0 : 1;

usage:
        fprintf(stderr, "usage: glean-defaults --man | --conf | --list | --metaknobs\n");
        return 2;
}
