/* SPDX-License-Identifier: Apache-2.0 */
/*
 * config.c — `glean config`, also `glean condor_config_val` and a link
 * named condor_config_val: print configuration values as HTCondor's
 * condor_config_val does, with its options (-dump, -verbose, -raw,
 * -expand, -default, -evaluate, -used, -unused, -config, -summary,
 * -writeconfig) and glean's GNU ones (--raw, --verbose, --dump, --file).
 *
 * The configuration is the standard one (config_load_default: $GLEAN_CONFIG
 * or /etc/glean/glean.conf, then LOCAL_CONFIG_DIR), or FILE then
 * LOCAL_CONFIG_DIR with --file (-root-config). glean config reads local
 * files only: the options that ask a daemon (-name, -pool, ...) or change
 * a daemon's configuration (-set, -rset, ...) are refused with the reason.
 * Exit status in usage().
 */
#define _GNU_SOURCE
#include <errno.h>
#include <regex.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli.h"
#include "config/config.h"
#include "queue/jobcmd.h"

#ifndef GLEAN_VERSION
#define GLEAN_VERSION "unknown"
#endif

typedef enum ConfigView {
        VIEW_EXPAND,   /* the value, macros expanded (names: the default) */
        VIEW_RAW,      /* as written (-dump: the default) */
        VIEW_DEFAULT,  /* the built-in default */
        VIEW_EVALUATE, /* expanded, then evaluated as a ClassAd expression */
} ConfigView;

typedef enum ConfigUse {
        USE_ALL,
        USE_USED,   /* -used: names glean reads (or a name read refers to) */
        USE_UNUSED, /* -unused: names a file sets that nothing reads */
} ConfigUse;

typedef struct ConfigOptions {
        ConfigView view;
        bool view_set;      /* -raw, -expand, -default or -evaluate given */
        bool verbose;
        bool dump;          /* -dump: HTCondor's, raw unless -expand, header and files */
        bool gnu_dump;      /* --dump: glean's, expanded unless --raw, names only */
        bool sources;       /* -config */
        bool summary;       /* -summary */
        ConfigUse use;
        const char *file;   /* --file, -root-config */
        const char *write;  /* -writeconfig FILE ("-": stdout) */
        bool upgrade;       /* -writeconfig:upgrade */
} ConfigOptions;

typedef struct ConfigRun {
        const ConfigOptions *o;
        const Config *cfg;
        Config *defaults; /* config_new(): the built-in defaults, loaded on first use */
        char **used;      /* config_used(), loaded on first use */
        int n_used;
        bool used_loaded;
} ConfigRun;

static void config_freep_cli(Config **cfg) {
        config_free(*cfg);
}

static void strv_freep_cli(char ***strv) {
        config_strv_free(*strv);
}

static void usage(FILE *f) {
        fprintf(f,
                "usage: glean config [OPTIONS] NAME...\n"
                "       glean config -dump [OPTIONS] [PATTERN...]\n"
                "       glean config --dump [--raw] [--verbose] [--file FILE]\n"
                "       glean config -config | -summary | -writeconfig[:upgrade] FILE\n"
                "       (also glean condor_config_val, or a link named condor_config_val)\n"
                "\n"
                "Print the value of each configuration macro NAME, expanded, as HTCondor's\n"
                "condor_config_val does.\n"
                "\n"
                "  -raw, -r, --raw        values as written, macros not expanded\n"
                "  -expand                values expanded (for NAMEs the default; not for -dump)\n"
                "  -default               the built-in default values\n"
                "  -evaluate              the expanded value evaluated as a ClassAd expression\n"
                "                         against an empty ad\n"
                "  -verbose, -v           NAME = value, then # at: file, line N, # raw: or\n"
                "                         # expanded:, and # default: (if there is one)\n"
                "  -dump, -d [PATTERN...] every name (or those matching a PATTERN: a regular\n"
                "                         expression, case-insensitive, anywhere in the name),\n"
                "                         NAME = value, raw unless -expand, with the files read\n"
                "  --dump                 every name, NAME = value, expanded unless --raw\n"
                "  -used                  only the names glean reads (or a name read refers to)\n"
                "  -unused                only the names a file sets that glean reads nothing from\n"
                "                         (not those a metaknob set: its status says)\n"
                "                         (alone: -dump -unused)\n"
                "  -config                the configuration files read, in order\n"
                "  -summary               the knobs the files change from the defaults, by file\n"
                "  -writeconfig[:upgrade] FILE\n"
                "                         write what the files set to FILE (-: stdout), values equal\n"
                "                         to the default commented out (:upgrade: left out); FILE\n"
                "                         read back gives the same values\n"
                "  --file, -f, -root-config FILE\n"
                "                         read FILE instead of $GLEAN_CONFIG or /etc/glean/glean.conf\n"
                "  -subsystem NAME, -local-name NAME\n"
                "                         accepted; they change nothing: glean reads no SUBSYS.NAME\n"
                "                         or LOCALNAME.NAME knobs, every program sees the same values\n"
                "  -mixedcase             accepted (names are printed as they are defined)\n"
                "  -version               glean's version\n"
                "\n"
                "Refused: -name, -pool, -address, -master, -schedd, -startd, -collector,\n"
                "-negotiator (glean config reads this machine's files only: run it on the machine)\n"
                "and -set, -rset, -unset, -runset (glean daemons have no protocol to set their\n"
                "configuration at run time: edit the file, then reload glean-negotiator or\n"
                "restart glean-agent).\n"
                "\n"
                "Exit status: 0; 1 when a NAME is not defined (the other names are still\n"
                "printed) or on a system failure; 2 when the configuration is broken\n"
                "(file:line: reason), the command line is wrong, or an option is refused.\n");
}

/* CLI_EXIT_USAGE for broken configuration, CLI_EXIT_FAILURE for the rest. */
static int report(int r, const ConfigError *err) {
        _cleanup_free_ char *msg = config_error_format(err);

        if (r == -ENOMEM) {
                fprintf(stderr, "glean config: out of memory\n");
                return CLI_EXIT_FAILURE;
        }
        fprintf(stderr, "%s\n", msg && msg[0] ? msg : strerror(-r));
        return CLI_EXIT_USAGE;
}

/* The worse of two exit statuses: usage/config errors over undefined names. */
static int worse(int a, int b) {
        return a == CLI_EXIT_USAGE || b == CLI_EXIT_USAGE ? CLI_EXIT_USAGE : a > b ? a : b;
}

/* ---- what the lookups need ---- */

static const char *default_raw(ConfigRun *run, const char *name) {
        if (!run->defaults && config_new(&run->defaults) < 0)
                return NULL;
        return config_raw(run->defaults, name);
}

static int cmp_name(const void *a, const void *b) {
        return strcasecmp(*(const char *const *) a, *(const char *const *) b);
}

static bool is_used(ConfigRun *run, const char *name) {
        if (!run->used_loaded) {
                run->used_loaded = true;
                run->n_used = config_used(run->cfg, &run->used);
                if (run->n_used < 0) {
                        fprintf(stderr, "glean config: out of memory\n");
                        exit(CLI_EXIT_FAILURE);
                }
        }
        return run->n_used > 0 && bsearch(&name, run->used, (size_t) run->n_used, sizeof(char *), cmp_name);
}

static bool from_file(const Config *cfg, const char *name) {
        const char *file = NULL;
        int line = 0;

        return config_where(cfg, name, &file, &line) >= 0 && file && file[0] && file[0] != '<';
}

/* name passes -used / -unused. */
static bool wanted(ConfigRun *run, const char *name) {
        const char *raw;

        switch (run->o->use) {
        case USE_USED:
                return is_used(run, name);
        case USE_UNUSED:
                raw = config_raw(run->cfg, name);
                return raw && raw[0] && from_file(run->cfg, name) && !config_from_metaknob(run->cfg, name) &&
                       !is_used(run, name);
        default:
                return true;
        }
}

static void print_at(const Config *cfg, const char *name) {
        const char *file = "";
        int line = 0;

        (void) config_where(cfg, name, &file, &line);
        if (line > 0)
                printf(" # at: %s, line %d\n", file, line);
        else
                printf(" # at: %s\n", file);
}

/* "NAME = value", or "NAME @=end" and the lines then "@end" for a value of
 * several lines (a tag the value does not hold as a line). */
static void print_assignment(FILE *f, const char *prefix, const char *name, const char *value) {
        char tag[32] = "end";

        if (!strchr(value, '\n')) {
                fprintf(f, "%s%s = %s\n", prefix, name, value);
                return;
        }
        for (unsigned i = 1; i < 1000; i++) {
                char line[40];
                size_t n = (size_t) snprintf(line, sizeof line, "@%s", tag);
                const char *p = value;
                bool clash = false;

                for (; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
                        if (strncmp(p, line, n) == 0 && (p[n] == '\n' || p[n] == '\0'))
                                clash = true;
                if (!clash)
                        break;
                snprintf(tag, sizeof tag, "end%u", i);
        }
        fprintf(f, "%s%s @=%s\n%s\n@%s\n", prefix, name, tag, value, tag);
}

/* value evaluated as a ClassAd expression against an empty ad, unparsed;
 * NULL if it is not an expression. */
static char *evaluate(const char *value) {
        ClassAdExpr *e = NULL;
        ClassAd *ad = NULL;
        CaValue v = ca_undefined();
        CaError cerr = {};
        char *s = NULL;

        if (classad_expr_parse(value, strlen(value), CA_MODE_OLD, &e, &cerr) < 0)
                return NULL;
        if (classad_new(&ad) >= 0 && classad_expr_eval(e, ad, NULL, CA_MODE_OLD, &v) >= 0)
                s = ca_value_unparse(&v);
        ca_value_clear(&v);
        classad_free(ad);
        classad_expr_free(e);
        return s;
}

/* The value of name as view shows it, malloc'd; *ret NULL (and 0) when
 * there is none (undefined, or no default). */
static int view_value(ConfigRun *run, const char *name, ConfigView view, char **ret) {
        const char *raw = config_raw(run->cfg, name);
        ConfigError err = {};
        char *value = NULL;
        int r;

        *ret = NULL;
        if (view == VIEW_DEFAULT) {
                const char *d = default_raw(run, name);

                if (d && !(*ret = strdup(d)))
                        return -ENOMEM;
                return 0;
        }
        if (!raw)
                return 0;
        if (view == VIEW_RAW) {
                *ret = strdup(raw);
                return *ret ? 0 : -ENOMEM;
        }
        r = config_get(run->cfg, name, &value, &err);
        if (r < 0)
                return report(r, &err) == CLI_EXIT_FAILURE ? -ENOMEM : -EINVAL;
        if (view == VIEW_EVALUATE) {
                char *ev = evaluate(value);

                if (!ev)
                        fprintf(stderr, "Warning: Failed to evaluate '%s', returning it as config value\n", value);
                else {
                        free(value);
                        value = ev;
                }
        }
        *ret = value;
        return 0;
}

static int status_of(int r) {
        return r == -ENOMEM ? CLI_EXIT_FAILURE : CLI_EXIT_USAGE;
}

/* ---- NAME... ---- */

/* One name; returns the exit status it deserves. */
static int print_name(ConfigRun *run, const char *name) {
        const ConfigOptions *o = run->o;
        _cleanup_free_ char *value = NULL;
        const char *raw = config_raw(run->cfg, name), *def;
        int r;

        if (raw && !wanted(run, name))
                return CLI_EXIT_OK;
        r = view_value(run, name, o->view, &value);
        if (r < 0)
                return status_of(r);
        if (!value) {
                if (o->view == VIEW_DEFAULT && raw)
                        fprintf(stderr, "%s has no default\n", name);
                else
                        fprintf(stderr, "%s is not defined\n", name);
                return CLI_EXIT_FAILURE;
        }
        if (!o->verbose) {
                printf("%s\n", value);
                return CLI_EXIT_OK;
        }
        printf("%s = %s\n", name, value);
        if (raw) {
                print_at(run->cfg, name);
                if (o->view != VIEW_RAW)
                        printf(" # raw: %s = %s\n", name, raw);
        }
        if ((def = default_raw(run, name)))
                printf(" # default: %s\n", def);
        printf("\n");
        return CLI_EXIT_OK;
}

/* ---- -dump, --dump ---- */

static int dump_one(ConfigRun *run, const char *name, ConfigView view) {
        _cleanup_free_ char *value = NULL, *other = NULL;
        const char *def;
        int r;

        r = view_value(run, name, view, &value);
        if (r < 0)
                return status_of(r);
        print_assignment(stdout, "", name, value ? value : "");
        if (!run->o->verbose)
                return CLI_EXIT_OK;
        print_at(run->cfg, name);
        if (view == VIEW_RAW) {
                if ((r = view_value(run, name, VIEW_EXPAND, &other)) < 0)
                        return status_of(r);
                if (other && other[0])
                        printf(" # expanded: %s\n", other);
        } else if (view != VIEW_DEFAULT) {
                const char *raw = config_raw(run->cfg, name);

                if (raw && (!value || strcmp(raw, value) != 0))
                        printf(" # raw: %s\n", raw);
        }
        if (view != VIEW_DEFAULT && (def = default_raw(run, name)))
                printf(" # default: %s\n", def);
        return CLI_EXIT_OK;
}

static void print_files_trailer(const Config *cfg) {
        _cleanup_(strv_freep_cli) char **files = NULL;

        printf("# Contributing configuration file(s):\n");
        if (config_files_read(cfg, &files) > 0)
                for (char **f = files; *f; f++)
                        printf("#\t%s\n", *f);
}

/* HTCondor's -dump: patterns (none: every name). */
static int dump(ConfigRun *run, char **patterns, int n_patterns) {
        const ConfigOptions *o = run->o;
        _cleanup_(strv_freep_cli) char **names = NULL;
        _cleanup_free_ char *host = NULL;
        ConfigView view = o->view_set ? o->view : VIEW_RAW;
        int status = CLI_EXIT_OK, r;

        if (view == VIEW_EVALUATE)
                view = VIEW_EXPAND;
        r = config_names(run->cfg, &names);
        if (r < 0)
                return status_of(r);
        if (o->gnu_dump) {
                for (char **n = names; *n; n++)
                        if (wanted(run, *n))
                                status = worse(status, dump_one(run, *n, o->view_set ? o->view : VIEW_EXPAND));
                return status;
        }
        (void) config_get(run->cfg, "FULL_HOSTNAME", &host, NULL);
        printf("# Configuration from machine: %s\n", host && host[0] ? host : "<unknown hostname>");
        for (int p = 0; p < (n_patterns > 0 ? n_patterns : 1); p++) {
                regex_t re;
                bool all = n_patterns == 0 || !patterns[p][0];

                if (!all) {
                        int rc = regcomp(&re, patterns[p], REG_EXTENDED | REG_ICASE | REG_NOSUB);

                        if (rc != 0) {
                                char why[128];

                                regerror(rc, &re, why, sizeof why);
                                fprintf(stderr, "glean config: -dump: '%s' is not a regular expression: %s\n",
                                        patterns[p], why);
                                return CLI_EXIT_USAGE;
                        }
                        printf("\n# Parameters with names that match %s:\n", patterns[p]);
                }
                for (char **n = names; *n; n++)
                        if ((all || regexec(&re, *n, 0, NULL, 0) == 0) && wanted(run, *n))
                                status = worse(status, dump_one(run, *n, view));
                if (!all)
                        regfree(&re);
        }
        if (!o->verbose)
                print_files_trailer(run->cfg);
        return status;
}

/* ---- -config ---- */

static int print_sources(const Config *cfg) {
        _cleanup_(strv_freep_cli) char **files = NULL;
        int n = config_files_read(cfg, &files);

        if (n < 0)
                return status_of(n);
        if (n == 0) {
                fprintf(stderr, "Configuration source: none (the built-in defaults only)\n");
                return CLI_EXIT_OK;
        }
        fprintf(stderr, "Configuration source:\n");
        fflush(stderr);
        printf("\t%s\n", files[0]);
        fflush(stdout);
        if (n > 1) {
                fprintf(stderr, n == 2 ? "Local configuration source:\n" : "Local configuration sources:\n");
                fflush(stderr);
                for (int i = 1; i < n; i++)
                        printf("\t%s\n", files[i]);
                fflush(stdout);
                fprintf(stderr, "\n");
        }
        return CLI_EXIT_OK;
}

/* ---- -summary, -writeconfig ---- */

typedef struct Setting {
        const char *name;
        const char *file;
        int line;
        size_t order; /* of the file among the files read; then line */
} Setting;

static int cmp_setting(const void *a, const void *b) {
        const Setting *x = a, *y = b;

        if (x->order != y->order)
                return x->order < y->order ? -1 : 1;
        if (x->line != y->line)
                return x->line < y->line ? -1 : 1;
        return strcasecmp(x->name, y->name);
}

/* raw equals the built-in default (an empty value and no default count as equal). */
static bool matches_default(ConfigRun *run, const char *name, const char *raw) {
        const char *def = default_raw(run, name);

        return def ? strcmp(def, raw) == 0 : raw[0] == '\0';
}

/* What the files set, grouped by file in the order read, each file's
 * settings in the order of their lines: upgrade leaves out the values
 * equal to the defaults, else they are commented out. */
static int write_config(ConfigRun *run, FILE *f, bool upgrade, bool version) {
        _cleanup_(strv_freep_cli) char **names = NULL, **files = NULL;
        _cleanup_free_ Setting *set = NULL;
        size_t n = 0, n_names = 0;
        int n_files, r;

        if ((r = config_names(run->cfg, &names)) < 0 || (n_files = config_files_read(run->cfg, &files)) < 0)
                return status_of(r < 0 ? r : n_files);
        while (names[n_names])
                n_names++;
        set = calloc(n_names + 1, sizeof *set);
        if (!set)
                return status_of(-ENOMEM);
        for (size_t i = 0; i < n_names; i++) {
                const char *file = NULL, *raw = config_raw(run->cfg, names[i]);
                int line = 0;
                size_t order = (size_t) n_files;

                if (!raw || config_where(run->cfg, names[i], &file, &line) < 0 || !file || !file[0] || file[0] == '<')
                        continue;
                if (upgrade && matches_default(run, names[i], raw))
                        continue;
                for (int k = 0; k < n_files; k++)
                        if (strcmp(files[k], file) == 0)
                                order = (size_t) k;
                set[n++] = (Setting){ names[i], file, line, order };
        }
        qsort(set, n, sizeof *set, cmp_setting);
        if (version && n > 0)
                fprintf(f, "# glean config %s\n", GLEAN_VERSION);
        for (size_t i = 0; i < n; i++) {
                const char *raw = config_raw(run->cfg, set[i].name);

                if (i == 0 || strcmp(set[i].file, set[i - 1].file) != 0)
                        fprintf(f, "\n#\n# from %s\n#\n", set[i].file);
                print_assignment(f, matches_default(run, set[i].name, raw) ? "#" : "", set[i].name, raw);
        }
        return CLI_EXIT_OK;
}

static int write_config_file(ConfigRun *run, const char *path, bool upgrade) {
        FILE *f;
        int status;

        if (strcmp(path, "-") == 0)
                return write_config(run, stdout, upgrade, false);
        f = fopen(path, "we");
        if (!f) {
                fprintf(stderr, "glean config: -writeconfig: cannot create %s: %s\n", path, strerror(errno));
                return CLI_EXIT_FAILURE;
        }
        status = write_config(run, f, upgrade, false);
        if (fclose(f) != 0 && status == CLI_EXIT_OK) {
                fprintf(stderr, "glean config: -writeconfig: cannot write %s: %s\n", path, strerror(errno));
                status = CLI_EXIT_FAILURE;
        }
        return status;
}

/* ---- the command line ---- */

/* a is -word or --word, word a prefix of name at least min long. */
static bool is_opt(const char *a, const char *name, size_t min) {
        size_t n;

        if (a[0] != '-')
                return false;
        a += a[1] == '-' ? 2 : 1;
        n = strcspn(a, ":");
        return n >= min && n <= strlen(name) && strncmp(a, name, n) == 0;
}

/* The text after ':' of -word:text, NULL if none. */
static const char *opt_arg(const char *a) {
        const char *c = strchr(a, ':');

        return c ? c + 1 : NULL;
}

static int refuse_daemon(const char *a) {
        fprintf(stderr,
                "glean config: %s: glean config reads this machine's configuration files only; it cannot ask a "
                "daemon (glean daemons answer no configuration queries): run glean config on that machine\n",
                a);
        return CLI_EXIT_USAGE;
}

static int refuse_set(const char *a) {
        fprintf(stderr,
                "glean config: %s: glean daemons have no protocol to set their configuration at run time; edit "
                "the configuration file (or a file of LOCAL_CONFIG_DIR), then systemctl reload glean-negotiator "
                "or systemctl restart glean-agent\n",
                a);
        return CLI_EXIT_USAGE;
}

static int set_view(ConfigOptions *o, ConfigView v, const char *a) {
        if (o->view_set && o->view != v) {
                fprintf(stderr, "glean config: %s cannot be used with another of -raw, -expand, -default, -evaluate\n",
                        a);
                return -EINVAL;
        }
        o->view = v;
        o->view_set = true;
        return 0;
}

/* Parse argv[1..]: options anywhere, as condor_config_val takes them, the
 * other words (all after "--") into names (*ret_n of them). Returns -1 to
 * go on, else the exit status. */
static int parse_args(int argc, char **argv, ConfigOptions *o, char **names, int *ret_n) {
        int n = 0;

        for (int i = 1; i < argc; i++) {
                const char *a = argv[i];

                if (strcmp(a, "--") == 0) {
                        while (++i < argc)
                                names[n++] = argv[i];
                        break;
                }
                if (a[0] != '-' || !a[1]) {
                        names[n++] = argv[i];
                        continue;
                }
                /* glean's GNU options */
                if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0 || is_opt(a, "help", 2)) {
                        usage(stdout);
                        return CLI_EXIT_OK;
                } else if (strcmp(a, "--raw") == 0 || strcmp(a, "-r") == 0 || is_opt(a, "raw", 3)) {
                        if (set_view(o, VIEW_RAW, a) < 0)
                                return CLI_EXIT_USAGE;
                } else if (strcmp(a, "--dump") == 0)
                        o->gnu_dump = true;
                else if (strcmp(a, "--file") == 0 || strcmp(a, "-f") == 0 || is_opt(a, "root-config", 4)) {
                        if (i + 1 >= argc) {
                                fprintf(stderr, "glean config: %s needs a file name\n", a);
                                return CLI_EXIT_USAGE;
                        }
                        o->file = argv[++i];
                } else if (strncmp(a, "--file=", 7) == 0)
                        o->file = a + 7;
                /* HTCondor's: refused */
                else if (is_opt(a, "name", 1) || is_opt(a, "pool", 1) || is_opt(a, "address", 1))
                        return refuse_daemon(a);
                else if (is_opt(a, "master", 2) || is_opt(a, "schedd", 2) || is_opt(a, "startd", 2) ||
                         is_opt(a, "collector", 3) || is_opt(a, "negotiator", 3))
                        return refuse_daemon(a);
                else if (is_opt(a, "set", 2) || is_opt(a, "unset", 3) || is_opt(a, "rset", 3) ||
                         is_opt(a, "runset", 5))
                        return refuse_set(a);
                /* HTCondor's: accepted */
                else if (is_opt(a, "local-name", 2) || is_opt(a, "subsystem", 3)) {
                        if (i + 1 >= argc) {
                                fprintf(stderr, "glean config: %s needs a name\n", a);
                                return CLI_EXIT_USAGE;
                        }
                        i++;
                } else if (is_opt(a, "mixedcase", 2))
                        ;
                else if (is_opt(a, "default", 3)) {
                        if (set_view(o, VIEW_DEFAULT, a) < 0)
                                return CLI_EXIT_USAGE;
                } else if (is_opt(a, "config", 2))
                        o->sources = true;
                else if (strcmp(a, "--verbose") == 0 || is_opt(a, "verbose", 1))
                        o->verbose = true;
                else if (is_opt(a, "dump", 1))
                        o->dump = true;
                else if (is_opt(a, "expanded", 2)) {
                        if (set_view(o, VIEW_EXPAND, a) < 0)
                                return CLI_EXIT_USAGE;
                } else if (is_opt(a, "evaluate", 2)) {
                        if (set_view(o, VIEW_EVALUATE, a) < 0)
                                return CLI_EXIT_USAGE;
                } else if (is_opt(a, "unused", 4))
                        o->use = USE_UNUSED;
                else if (is_opt(a, "used", 2))
                        o->use = USE_USED;
                else if (is_opt(a, "summary", 3))
                        o->summary = true;
                else if (is_opt(a, "writeconfig", 3)) {
                        const char *filter = opt_arg(a);

                        if (filter && strcmp(filter, "upgrade") != 0) {
                                fprintf(stderr, "glean config: %s: glean knows the filter upgrade only\n", a);
                                return CLI_EXIT_USAGE;
                        }
                        if (i + 1 >= argc) {
                                fprintf(stderr, "glean config: %s needs a file name (- for stdout)\n", a);
                                return CLI_EXIT_USAGE;
                        }
                        o->upgrade = filter != NULL;
                        o->write = argv[++i];
                } else if (is_opt(a, "version", 3)) {
                        printf("glean %s\n", GLEAN_VERSION);
                        return CLI_EXIT_OK;
                } else {
                        fprintf(stderr, "glean config: unknown option '%s'; try 'glean config --help'\n", a);
                        return CLI_EXIT_USAGE;
                }
        }
        if (o->verbose && o->view_set && o->view == VIEW_DEFAULT) {
                fprintf(stderr, "glean config: -default cannot be used with -verbose\n");
                return CLI_EXIT_USAGE;
        }
        if (o->summary && o->write) {
                fprintf(stderr, "glean config: -summary cannot be used with -writeconfig\n");
                return CLI_EXIT_USAGE;
        }
        if (o->gnu_dump && (n > 0 || o->dump)) {
                fprintf(stderr, "glean config: --dump takes no names\n");
                return CLI_EXIT_USAGE;
        }
        if (o->use == USE_UNUSED && !o->gnu_dump && n == 0)
                o->dump = true;
        if (!o->dump && !o->gnu_dump && !o->sources && !o->summary && !o->write && n == 0) {
                usage(stderr);
                return CLI_EXIT_USAGE;
        }
        *ret_n = n;
        return -1;
}

int cli_verb_config(int argc, char **argv) {
        _cleanup_(config_freep_cli) Config *cfg = NULL;
        _cleanup_(strv_freep_cli) char **warnings = NULL;
        ConfigOptions o = {};
        ConfigRun run = { .o = &o };
        _cleanup_free_ char **names = calloc((size_t) argc + 1, sizeof(char *));
        ConfigError err = {};
        int n = 0, status = CLI_EXIT_OK, r;

        if (!names) {
                fprintf(stderr, "glean config: out of memory\n");
                return CLI_EXIT_FAILURE;
        }
        r = parse_args(argc, argv, &o, names, &n);
        if (r >= 0)
                return r;

        r = config_load_path(o.file, &cfg, &err);
        if (r < 0)
                return report(r, &err);
        if (config_warnings(cfg, &warnings) > 0)
                for (char **w = warnings; *w; w++)
                        fprintf(stderr, "glean config: warning: %s\n", *w);
        run.cfg = cfg;
        {
                /* The job queue's knobs glean does not do as written (HISTORY naming a file, ...). */
                char **queue_warnings = NULL;
                if (jobcmd_config_warnings(cfg, &queue_warnings) > 0)
                        for (char **w = queue_warnings; *w; w++)
                                fprintf(stderr, "glean config: warning: %s\n", *w);
                config_strv_free(queue_warnings);
        }

        if (o.sources)
                status = worse(status, print_sources(cfg));
        if (o.summary)
                status = worse(status, write_config(&run, stdout, true, true));
        if (o.write)
                status = worse(status, write_config_file(&run, o.write, o.upgrade));
        if (o.dump || o.gnu_dump)
                status = worse(status, dump(&run, names, n));
        else
                for (int i = 0; i < n; i++)
                        status = worse(status, print_name(&run, names[i]));

        config_free(run.defaults);
        config_strv_free(run.used);
        return status;
}
