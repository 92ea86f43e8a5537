/* SPDX-License-Identifier: Apache-2.0 */
/*
 * config.h — HTCondor-syntax configuration and submit description files.
 *
 * Configuration: files of NAME = value lines (case-insensitive names,
 * backslash continuations, # comments, a later definition replaces an
 * earlier one, include : path, config.d directories), macros expanded at
 * lookup ($(NAME), $(NAME:default), $ENV(VAR), $(DOLLAR), self-reference
 * building on the previous definition, HTCondor's macro functions $INT(),
 * $REAL(), $STRING(), $EVAL(), $SUBSTR(), $CHOICE(), $RANDOM_INTEGER(),
 * $RANDOM_CHOICE(), $F...(), $BASENAME(), $DIRNAME()), built-in defaults for every knob
 * and policy macro of the manual, and the lookups the daemons need
 * (SLOT<N>_NAME, NAME_VANILLA, STARTD_ATTRS merging, typed getters).
 *
 * Submit description files: the HTCondor submit language for vanilla
 * jobs, producing job ClassAds with HTCondor's attribute names. The
 * argument and environment syntaxes those ads hold: argsyntax.h.
 *
 * Conventions: >= 0 on success, -errno on failure; outputs last, named
 * ret_*, set only on success. Errors that come from outside input fill a
 * ConfigError with the file, the line and the reason.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "classad.h"

typedef struct Config Config;

typedef struct ConfigError {
        char file[256]; /* "" when not from a file (e.g. "<string>", "<default>") */
        int line;       /* 1-based; 0 when not about one line */
        char msg[512];  /* the reason, without file and line */
} ConfigError;

/* "file:line: reason" (or "reason" when there is no file), malloc'd. */
char *config_error_format(const ConfigError *err);

/* ---- loading ---- */

/* A configuration holding only the built-in defaults. */
int config_new(Config **ret);
void config_free(Config *cfg); /* accepts NULL */

/* Read a file (and everything it includes) on top of cfg. On error cfg
 * is unchanged (all or nothing) and err says where and why. */
int config_load_file(Config *cfg, const char *path, ConfigError *err);
/* The same for text; source_name is used in errors and --verbose. Text
 * has no owner to check, so include commands in it are refused (files it
 * includes follow the rules of files). */
int config_load_string(Config *cfg, const char *text, const char *source_name, ConfigError *err);
/* The standard configuration: the file named by $GLEAN_CONFIG, else
 * $CONDOR_CONFIG, else /etc/glean/glean.conf (absent is fine); then, in
 * HTCondor's order, the files of the directories LOCAL_CONFIG_DIR lists
 * (each in lexical order; one that does not exist holds nothing), the
 * files LOCAL_CONFIG_FILE lists (re-read when one of them changes it; a
 * missing one is an error unless REQUIRE_LOCAL_CONFIG_FILE is false), and
 * LOCAL_CONFIG_DIR again if they changed it. "/dev/null" or "ONLY_ENV":
 * no file at all (built-in defaults); "COMMAND |": its output. Include
 * commands run only from files of root or of the user running that no one
 * else can write; config_load_string() text never runs them. */
int config_load_default(Config **ret, ConfigError *err);
/* Define NAME = value as if read last (command-line overrides, tests). */
int config_set(Config *cfg, const char *name, const char *value);

/* Like config_load_default, but reading path (which must exist) instead of
 * $GLEAN_CONFIG or /etc/glean/glean.conf; path NULL: config_load_default.
 * (`glean config --file`.) */
int config_load_path(const char *path, Config **ret, ConfigError *err);

/* ---- the HTCondor version glean follows ---- */

/* The HTCondor release whose configuration language and defaults glean
 * follows: `if version >= X.Y.Z` in a configuration file compares against
 * it (24.0.0: the 24.0 long-term-support series, so that HTCondor's
 * shipped files, which test `version >= 23.10.0`, take their modern
 * branch). */
#define GLEAN_HTCONDOR_VERSION "24.0.0"
/* Compare GLEAN_HTCONDOR_VERSION with version ("X.Y" or "X.Y.Z", an
 * optional 'v' before it; X at least 6, as HTCondor requires; a missing Z
 * matches any): *ret -1, 0 or 1 when glean's is older, equal or newer.
 * -EINVAL when version is not of that form. */
int config_version_compare(const char *version, int *ret);

/* The files the load of cfg read, in the order first read, each once: the
 * main file, included files, the files of LOCAL_CONFIG_DIR and
 * LOCAL_CONFIG_FILE, `include command into` cache files; commands whose
 * output was read appear as "COMMAND |". *ret NULL-terminated (NULL when
 * none; free with config_strv_free), the count returned; -ENOMEM.
 * (`glean config -config`.) */
int config_files_read(const Config *cfg, char ***ret);

/* ---- lookups ---- */

/* The value as written (unexpanded), NULL when undefined. Valid until cfg
 * is changed or freed. */
const char *config_raw(const Config *cfg, const char *name);
/* Where the current definition comes from: file ("<default>" for built-in
 * ones) and line. -ENOENT when undefined. */
int config_where(const Config *cfg, const char *name, const char **ret_file, int *ret_line);
/* Expanded value, malloc'd. -ENOENT when undefined; -ELOOP with err naming
 * the macros of an expansion loop; -EINVAL on a malformed $(...). */
int config_get(const Config *cfg, const char *name, char **ret, ConfigError *err);
/* Expand macros in any text against cfg. */
int config_expand(const Config *cfg, const char *text, char **ret, ConfigError *err);

/* Typed getters. -ENOENT when undefined (the caller applies its default);
 * -EINVAL when the expanded value is not of the type, with err naming the
 * file and line of the definition, the name and the value. */
int config_get_int(const Config *cfg, const char *name, int64_t *ret, ConfigError *err);
int config_get_real(const Config *cfg, const char *name, double *ret, ConfigError *err);
int config_get_bool(const Config *cfg, const char *name, bool *ret, ConfigError *err);
/* SEC_DEFAULT_AUTHENTICATION_METHODS as the methods of the pool's
 * connections (the values of GLEAN_SECURE_POOL_KEY and _TOKEN): TOKEN
 * (TOKENS, IDTOKEN, IDTOKENS) and PASSWORD (POOL_KEY), case-insensitive;
 * FS is accepted and means nothing more (local users are always known by
 * their socket's credentials). Unset or empty: 0, meaning what the
 * machine holds (a daemon decides: secure.h, docs). Any other word (SSL,
 * KERBEROS, ...) or a list without TOKEN or PASSWORD is -EINVAL with err
 * naming the knob's file and line. */
enum {
        CONFIG_AUTH_POOL_KEY = 1u << 0,
        CONFIG_AUTH_TOKEN = 1u << 1,
};
int config_get_auth_methods(const Config *cfg, unsigned *ret, ConfigError *err);
/* A ClassAd expression (START, RANK, ...), parsed in the given mode. */
int config_get_expr(const Config *cfg, const char *name, CaMode mode, ClassAdExpr **ret, ConfigError *err);
/* A list: items separated by commas and/or white space; NULL-terminated,
 * free with config_strv_free. */
int config_get_list(const Config *cfg, const char *name, char ***ret, ConfigError *err);
void config_strv_free(char **strv);

/* NAME for slot N: SLOT<N>_NAME if defined, else NAME (seed 002 3.5.10.5). */
int config_get_slot(const Config *cfg, unsigned slot, const char *name, char **ret, ConfigError *err);
/* NAME_VANILLA for vanilla jobs if defined, else NAME (3.5.7.4). */
int config_get_universe(const Config *cfg, const char *name, bool vanilla, char **ret, ConfigError *err);
/* The attribute names to publish in slot N's ad: STARTD_ATTRS,
 * STARTD_EXPRS, SLOT<N>_STARTD_ATTRS, SLOT<N>_STARTD_EXPRS merged, each
 * name once (3.5.10.5). NULL-terminated. */
int config_startd_attrs(const Config *cfg, unsigned slot, char ***ret, ConfigError *err);

/* Every defined name in lexical order (for --dump), NULL-terminated. */
int config_names(const Config *cfg, char ***ret);

/* The knobs of cfg that glean reads but cannot enforce yet (HTCondor's
 * ALLOW_<level> and DENY_<level>), one message each naming its file and
 * line: *ret NULL-terminated (NULL when none; free with config_strv_free),
 * the count returned; -ENOMEM. The daemons log each as a warning at start. */
int config_unenforced(const Config *cfg, char ***ret);

/* ---- the knob registry (knobs.c) ---- */

/* The knobs a file of cfg sets (to something not empty) that nothing in
 * glean reads, neither by itself (a knob of the registry, or one of its
 * patterns: SLOT<N>_NAME, SLOT_TYPE_<N>, GROUP_QUOTA_<group of
 * GROUP_NAMES>, ALLOW_<level>, ...) nor as a $(NAME) reference of a value
 * read (policy macros): "file:line: NAME is set but glean reads nothing
 * from it", each knob once, by name. What a `use` line's metaknob set is
 * left out: the metaknob's status (config_metaknobs) says what glean does
 * with it, and a PARTIAL or REFUSED one warned at its line already; a
 * file's own definition after the use line counts again. *ret
 * NULL-terminated (NULL when none; free with config_strv_free), the count
 * returned; -ENOMEM. The daemons log each as a warning at start. */
int config_unused(const Config *cfg, char ***ret);
/* Was name's current definition set by a `use` line's metaknob? */
bool config_from_metaknob(const Config *cfg, const char *name);
/* The defined names that glean reads or that a name read refers to, in
 * lexical order; as config_unused. (`glean config -used`.) */
int config_used(const Config *cfg, char ***ret);

/* What loading cfg warned about, in the order met, each once:
 * "file:line: reason" (a `warning :` statement, a metaknob or a knob glean
 * cannot honour, ...). *ret NULL-terminated (NULL when none; free with
 * config_strv_free), the count returned; -ENOMEM. The daemons log each as
 * a warning at start, `glean config` prints them on stderr. */
int config_warnings(const Config *cfg, char ***ret);

/* ---- metaknobs: use CATEGORY : NAME[(ARGS)] ---- */

/* Every metaknob of HTCondor (param_info.in: ROLE, POLICY, FEATURE,
 * SECURITY, EXPERIMENTAL) and glean's own, with what it means here:
 * IMPLEMENTED (the knobs HTCondor's sets, with HTCondor's meaning),
 * PARTIAL (set, but note says what glean leaves out; `use` warns) or
 * REFUSED (nothing set, note says why; `use` warns). glean.conf(5) has
 * the same table. */
enum {
        CONFIG_METAKNOB_IMPLEMENTED,
        CONFIG_METAKNOB_PARTIAL,
        CONFIG_METAKNOB_REFUSED,
};
typedef struct ConfigMetaknob {
        const char *category; /* "ROLE", "POLICY", "FEATURE", "SECURITY", "EXPERIMENTAL" */
        const char *name;     /* HTCondor's spelling; names compare case-insensitively */
        int status;           /* CONFIG_METAKNOB_* */
        const char *note;     /* what it means for glean; PARTIAL: what is left out; REFUSED: why */
        const char *text;     /* what `use` reads in place of its line, before argument
                               * substitution ($(0), $(1), $(1?), ...); NULL when refused */
        bool glean;           /* glean's own, not HTCondor's */
        const char *args;     /* the arguments it takes, "(policy_variable)"; NULL: none */
} ConfigMetaknob;
/* The table, in a fixed order (by category); *ret_n entries. */
const ConfigMetaknob *config_metaknobs(size_t *ret_n);
/* The entry of CATEGORY : NAME (any case), NULL if none. */
const ConfigMetaknob *config_metaknob_find(const char *category, const char *name);
/* "IMPLEMENTED", "PARTIAL", "REFUSED". */
const char *config_metaknob_status_name(int status);

/* Limits: a value (raw or expanded) is at most 1 MiB; one lookup copies
 * at most 1 MiB of text in all (every macro it expands counted) and nests
 * macro references at most 64 levels deep; beyond that, lookups fail with
 * -E2BIG (too much text) or -ELOOP (too deep), err saying so. An empty
 * value counts as undefined for the typed getters of numbers, booleans and
 * expressions (-ENOENT), as HTCondor's param_integer() and friends do;
 * config_get_list() gives an empty list. */

/* ---- macro expansion with another namespace (submit files) ---- */

/* Raw value of name, or NULL if undefined there. */
typedef const char *(*ConfigLookupFn)(void *userdata, const char *name);
/* Expand $(NAME), $(NAME:default), $ENV(VAR), $(DOLLAR) and the macro
 * functions in text, looking names up with lookup. Errors as config_get. */
int config_expand_with(const char *text, ConfigLookupFn lookup, void *userdata, char **ret, ConfigError *err);

/* ---- macro functions ($INT(), $SUBSTR(), $F...(), $RANDOM_*(), ...) ---- */

/* Seeds the generator $RANDOM_INTEGER() and $RANDOM_CHOICE() draw from
 * (process-wide, not thread-safe; tests use it to draw the same values
 * every run). Unseeded, it seeds itself from getrandom() at the first draw. */
void config_random_seed(uint64_t seed);

/* ---- the machine's file system domain (issue 24) ---- */

/* FILESYSTEM_DOMAIN, expanded and trimmed; undefined or empty: the host's
 * full name (FULL_HOSTNAME, else gethostname()), as the agent's slot ads
 * say FileSystemDomain. *ret malloc'd. -EINVAL (err naming the knob's file
 * and line) for a value with a blank, a quote or a backslash. */
int config_filesystem_domain(const Config *cfg, char **ret, ConfigError *err);

/* ---- submit description files ---- */

typedef struct ConfigSubmitOptions {
        int64_t cluster_id; /* $(Cluster), ClusterId */
        int64_t qdate;      /* QDate; 0: now */
        const char *owner;  /* Owner; NULL: the user running the command */
        const char *iwd;    /* default initialdir; NULL: the current directory */
} ConfigSubmitOptions;

/* Parse a submit description and produce one job ad per queued job, in
 * order; the whole file is rejected on the first error (nothing is
 * produced) with err naming file and line. cfg supplies
 * JOB_DEFAULT_REQUESTMEMORY and the like (may be NULL: built-in defaults).
 * *ret_ads is a malloc'd array of *ret_n ads; free with
 * config_submit_free. */
int config_submit_parse_file(const char *path, const Config *cfg, const ConfigSubmitOptions *opts,
                             ClassAd ***ret_ads, size_t *ret_n, ConfigError *err);
int config_submit_parse_string(const char *text, const char *source_name, const Config *cfg,
                               const ConfigSubmitOptions *opts, ClassAd ***ret_ads, size_t *ret_n,
                               ConfigError *err);
void config_submit_free(ClassAd **ads, size_t n);
