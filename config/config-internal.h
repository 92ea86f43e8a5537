/* SPDX-License-Identifier: Apache-2.0 */
/*
 * config-internal.h — what the files of the configuration language share
 * (not part of the public API of config.h).
 *
 *   config.c     the Config table: definitions, sources, copies, errors
 *   util.c       growable strings, the case-insensitive name index, lists
 *   argsyntax.c  HTCondor's argument and environment syntaxes (argsyntax.h)
 *   expand.c     $(NAME) references: scanning, self-references, expansion
 *   macrofn.c    the macro functions: $INT(), $SUBSTR(), $F...(), $RANDOM_*(), ...
 *   parse.c      lines and statements of a configuration text
 *   cond.c       if / elif / else / endif
 *   load.c       files, includes, directories, globs, the standard files
 *   command.c    include command, LOCAL_CONFIG_FILE = COMMAND |
 *   defaults.c   built-in defaults and detected values
 *   metaknobs.c  `use CATEGORY : NAME[(ARGS)]`: arguments, warnings
 *   metaknob-texts.c  the metaknobs' table and texts
 *   getters.c    typed getters, SLOT<N>_ and _VANILLA lookups, STARTD_ATTRS
 *   knobs.c      the knob registry: the names glean reads (config_unused)
 */
#pragma once

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "config.h"

#ifndef _cleanup_
#define _cleanup_(f) __attribute__((cleanup(f)))
#endif

static inline void config_freep(void *p) {
        free(*(void **) p);
}
#define _cleanup_config_free_ _cleanup_(config_freep)

static inline void config_strv_freep(char ***p) {
        config_strv_free(*p);
}

static inline void config_freep_config(Config **p) {
        config_free(*p);
}

/* Hard limits against hostile input. */
#define CONFIG_MAX_FILE_SIZE (16u * 1024u * 1024u) /* bytes of one file or text */
#define CONFIG_MAX_VALUE (1024u * 1024u)           /* bytes of one value, raw or expanded */
#define CONFIG_MAX_EXPANSION (1024u * 1024u)       /* bytes produced by one lookup, all macros counted */
#define CONFIG_MAX_DEPTH 64                        /* macro references nested in one lookup */
#define CONFIG_MAX_NAME 255                        /* bytes of a name */
#define CONFIG_MAX_INCLUDE_DEPTH 20                /* nested include and use */
#define CONFIG_MAX_IF_DEPTH 63                     /* nested if (bits of a uint64_t) */
#define CONFIG_COMMAND_TIMEOUT 30                  /* seconds an include command may run (knob below) */
#define CONFIG_COMMAND_TIMEOUT_KNOB "GLEAN_CONFIG_COMMAND_TIMEOUT"

/* Pseudo file names of definitions that do not come from a file. */
#define CONFIG_SOURCE_DEFAULT "<default>"
#define CONFIG_SOURCE_DETECTED "<detected>"
#define CONFIG_SOURCE_SET "<set>"
#define CONFIG_SOURCE_STRING "<string>"

/* ---- errors ---- */

/* Fill err (may be NULL) with file (NULL: ""), line and the formatted
 * reason; returns r, which must be < 0. */
int config_error(ConfigError *err, const char *file, int line, int r, const char *fmt, ...)
        __attribute__((format(printf, 5, 6)));
/* Fill msg (msg_size bytes; may be NULL when 0) with the formatted reason;
 * returns -EINVAL. */
int config_msg_error(char *msg, size_t msg_size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* ---- growable strings ---- */

typedef struct ConfigBuf {
        char *s;    /* NUL-terminated once anything was added; may be NULL */
        size_t len;
        size_t cap;
} ConfigBuf;

/* -ENOMEM, or -E2BIG past CONFIG_MAX_VALUE bytes. */
int config_buf_add(ConfigBuf *b, const char *s, size_t n);
int config_buf_adds(ConfigBuf *b, const char *s);
int config_buf_addc(ConfigBuf *b, char c);
/* The text (never NULL: "" when empty), malloc'd; b is left empty. */
char *config_buf_steal(ConfigBuf *b);
void config_buf_done(ConfigBuf *b);

/* Lines of a configuration or submit description: physical lines (white
 * space trimmed) and logical ones (a line ending in '\' continues on the
 * next; comment lines are skipped, also inside a continuation; blank
 * lines between statements are skipped). */
typedef struct ConfigReader {
        const char *text; /* NUL-terminated */
        size_t pos;
        int lineno;       /* of the last physical line read */
} ConfigReader;

/* The next physical line, trimmed (not NUL-terminated); false at the end. */
bool config_reader_physical(ConfigReader *rd, const char **ret, size_t *ret_len);
/* The next logical line into line: 1, or 0 at the end, or < 0 (-E2BIG from
 * config_buf_add when too long). *ret_lineno is its first physical line. */
int config_reader_logical(ConfigReader *rd, ConfigBuf *line, int *ret_lineno);

/* ---- case-insensitive name index: name -> number ---- */

typedef struct ConfigMap {
        const char **keys; /* not owned */
        size_t *vals;
        size_t cap;        /* 0 or a power of two */
        size_t n;
} ConfigMap;

int config_map_get(const ConfigMap *m, const char *key, size_t *ret);
/* Room for n keys without growing. */
int config_map_reserve(ConfigMap *m, size_t n);
/* Insert, or replace value and key pointer of an equal key. */
int config_map_put(ConfigMap *m, const char *key, size_t val);
void config_map_done(ConfigMap *m);

/* ---- small string helpers ---- */

bool config_is_name_char(int c);                 /* [A-Za-z0-9_./] */
bool config_is_valid_name(const char *s, size_t n);
/* s with leading and trailing white space removed, in place. */
char *config_strip(char *s);
/* Split on commas and white space; empty items dropped. */
int config_split_list(const char *s, char ***ret);
/* Append a copy of item to *strv (of *n items) unless an equal item
 * (case-insensitively) is there already. */
int config_strv_add_unique(char ***strv, size_t *n, const char *item);
/* The white space that separates arguments (argsyntax.c): space, tab,
 * newline, carriage return. */
bool config_is_arg_space(char c);

/* ---- the table ---- */

typedef struct ConfigEntry {
        char *name;    /* spelling of the latest definition */
        char *value;   /* raw, self-references already resolved */
        size_t source; /* index into Config.sources */
        int line;      /* 0 when not from a line of a file */
        bool metaknob; /* set by a `use` line's metaknob: the metaknob's status says what glean does with it */
} ConfigEntry;

struct Config {
        ConfigEntry *entries;
        size_t n_entries;
        size_t cap_entries;
        ConfigMap index;  /* name -> entry */
        char **sources;   /* file names and pseudo names, each once */
        size_t n_sources;
        size_t cap_sources;
        unsigned in_metaknob; /* > 0 while a metaknob's text is read (config_define marks what it sets) */
        char **warnings;  /* "file:line: reason", each once, in the order met */
        size_t n_warnings;
        char **files;     /* files (and "COMMAND |") read, each once, in order: config_files_read */
        size_t n_files;
};

/* Record a warning about file:line (file NULL or "": none) for
 * config_warnings(); an equal one recorded already is not repeated.
 * -ENOMEM, or -E2BIG past CONFIG_MAX_WARNINGS warnings. */
#define CONFIG_MAX_WARNINGS 4096
int config_warn(Config *cfg, const char *file, int line, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* An empty Config: no defaults. */
int config_new_empty(Config **ret);
const ConfigEntry *config_find(const Config *cfg, const char *name);
const char *config_entry_file(const Config *cfg, const ConfigEntry *e);
/* Define name = value (raw, self-references resolved by the caller). */
int config_define(Config *cfg, const char *name, const char *value, const char *file, int line);
int config_copy(const Config *src, Config **ret);
/* Exchange the contents of a and b. */
void config_swap(Config *a, Config *b);

/* ---- macro references and expansion (expand.c) ---- */

/* A definition as the expander sees it. */
typedef struct ConfigDef {
        const char *name;  /* as defined */
        const char *value; /* raw */
        const char *file;  /* "" if unknown */
        int line;
} ConfigDef;

/* 0 and *ret filled, or -ENOENT. */
typedef int (*ConfigResolveFn)(void *userdata, const char *name, ConfigDef *ret);

/* Expand text, looking names up with fn. self (may be NULL) is the
 * definition text comes from: expanding it counts as expanding self for
 * loop detection, and errors in text point at it. */
int config_expand_full(const char *text, ConfigResolveFn fn, void *userdata, const ConfigDef *self, char **ret,
                       ConfigError *err);
/* Call fn for every name text refers to, as its expansion would look it
 * up: $(NAME), the names in $(NAME:default) defaults, and the words of a
 * macro function's arguments ($INT(NAME), $CHOICE(i, LIST), ...), which
 * may name macros; not $$(...) (match time) nor $ENV(VAR). Malformed
 * references refer to nothing. fn's < 0 stops the walk and is returned;
 * -ENOMEM. (The knob registry: what a knob read uses.) */
typedef int (*ConfigRefFn)(const char *name, size_t n, void *userdata);
int config_refs(const char *text, ConfigRefFn fn, void *userdata);
/* The resolver over a Config. */
int config_resolve(void *userdata, const char *name, ConfigDef *ret);

/* The value to store for name = value: every $(name) and $(name:default)
 * replaced by the previous raw value of name in cfg (or the default, or
 * nothing), and every reference checked. -EINVAL on a malformed reference,
 * -E2BIG when too long; err->msg says why (file and line left to the
 * caller). */
int config_resolve_self(const Config *cfg, const char *name, const char *value, char **ret, ConfigError *err);

/* ---- macro functions (macrofn.c; expand.c finds them) ---- */

/* config_expand_full, with the directory $Ff() makes relative paths
 * absolute against (the submit language's; NULL: none, as in a
 * configuration, where $Ff() leaves them relative). */
int config_expand_full_cwd(const char *text, ConfigResolveFn fn, void *userdata, const ConfigDef *self,
                           const char *cwd, char **ret, ConfigError *err);
/* The value to store for a configuration line: value with every
 * $RANDOM_INTEGER() and $RANDOM_CHOICE() replaced by a draw (its
 * arguments expanded against cfg as read so far), the rest as it is, so
 * that every lookup sees the same draw until the configuration is read
 * again. Errors as config_resolve_self. */
int config_resolve_random(const Config *cfg, const char *value, char **ret, ConfigError *err);

enum {
        CONFIG_FN_RANDOM_CHOICE = 1,
        CONFIG_FN_RANDOM_INTEGER,
        CONFIG_FN_CHOICE,
        CONFIG_FN_SUBSTR,
        CONFIG_FN_INT,
        CONFIG_FN_REAL,
        CONFIG_FN_STRING,
        CONFIG_FN_EVAL,
        CONFIG_FN_BASENAME,
        CONFIG_FN_DIRNAME,
        CONFIG_FN_FILENAME, /* $F[fpduwnxbqa]*() */
};
/* What $word( starts: a CONFIG_FN_*, 0 when nothing (the text is
 * literal), -EINVAL (why says why) for a $F...( word with a letter the
 * filename functions do not have. */
int config_fn_lookup(const char *word, size_t len, char *why, size_t why_size);
bool config_fn_is_random(int fn);

typedef struct Expander ConfigExpander;
/* Append the value of $word(body) to out; errors through the expander. */
int config_fn_expand(ConfigExpander *x, int fn, const char *word, size_t word_len, const char *body, size_t body_len,
                     unsigned depth, ConfigBuf *out);
/* What macrofn.c uses of the expander (expand.c): expand text; expand the
 * definition of name (*ret_defined false and nothing added when there is
 * none); append; fail with the innermost definition's file and line. */
int config_expander_text(ConfigExpander *x, const char *text, size_t len, unsigned depth, ConfigBuf *out);
int config_expander_name(ConfigExpander *x, const char *name, unsigned depth, ConfigBuf *out, bool *ret_defined);
int config_expander_emit(ConfigExpander *x, ConfigBuf *out, const char *s, size_t n);
int config_expander_fail(ConfigExpander *x, int r, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
const char *config_expander_cwd(const ConfigExpander *x);
unsigned *config_expander_evals(ConfigExpander *x); /* ClassAd evaluations in this lookup */

/* ---- parsing (parse.c, cond.c, load.c) ---- */

enum {
        CONFIG_LOAD_NO_INCLUDE = 1 << 0, /* refuse include (fuzzing: no file system) */
        CONFIG_LOAD_COMMANDS = 1 << 1,   /* text (not a file) may run include commands: the program's own */
        CONFIG_LOAD_WARNED = 1 << 2,     /* inside a metaknob that warned already: the partial
                                          * ones it uses do not warn again (metaknobs.c) */
};

typedef struct ConfigIfStack {
        unsigned depth;           /* open ifs */
        uint64_t active;          /* bit d: the branch at depth d is being read */
        uint64_t taken;           /* bit d: a branch at depth d was true already */
        uint64_t in_else;         /* bit d: else seen at depth d */
        int lines[CONFIG_MAX_IF_DEPTH + 1]; /* line of each open if */
} ConfigIfStack;

/* One text being read: a file, a string or a template. */
typedef struct ConfigLoad {
        Config *cfg;
        const char *file;  /* name for errors and definitions */
        const char *dir;   /* relative includes start here; NULL: the current directory */
        int line_offset;   /* templates: every definition gets this line instead of its own */
        unsigned depth;    /* include and use nesting */
        unsigned flags;    /* CONFIG_LOAD_* */
        ConfigError *err;
        const char *untrusted; /* NULL, or why this text may not run include commands */
} ConfigLoad;

/* Read text (NUL-terminated) into ld->cfg; not all or nothing by itself. */
int config_parse_text(ConfigLoad *ld, const char *text);

/* if / elif / else / endif: returns 1 if line was one of them (handled),
 * 0 if not, < 0 on error (err filled). */
int config_cond_line(ConfigLoad *ld, ConfigIfStack *st, const char *line, int lineno);
bool config_cond_active(const ConfigIfStack *st);

/* May ld include (not CONFIG_LOAD_NO_INCLUDE, not nested too deep)?
 * 0, or < 0 with ld->err naming line at. */
int config_include_check(ConfigLoad *ld, int at);
/* include [ifexist] : path — a file, a directory or a glob. */
int config_include(ConfigLoad *ld, const char *path, bool if_exists, int lineno);
/* include [ifexist] command [into FILE] : COMMAND, and include : COMMAND |
 * (command.c): run COMMAND (split as HTCondor splits it, no shell), read
 * its output as configuration; with into, FILE caches it (read instead
 * of running COMMAND when it exists). into NULL: no cache. */
int config_include_command(ConfigLoad *ld, const char *command, const char *into, bool if_exists, int lineno);
/* Run cmdline, its output malloc'd and NUL-terminated in *ret. On
 * failure why (why_size bytes) says why: it did not start, exited with a
 * status, was killed, ran longer than timeout_s seconds, printed more
 * than CONFIG_MAX_FILE_SIZE bytes or a NUL byte. */
int config_run_command(const char *cmdline, unsigned timeout_s, char **ret, char *why, size_t why_size);
/* Why the file open as fd (named path) may not run include commands (not
 * owned by root or the user running, or writable by group or others),
 * into why; 0 when it may. */
int config_file_untrusted(int fd, const char *path, char *why, size_t why_size);
/* Read the file at path (as it is: not joined to ld->dir) as included
 * from ld's line lineno. */
int config_include_file(ConfigLoad *ld, const char *path, int lineno);
/* Note path as read, for config_files_read(); once. -ENOMEM. */
int config_note_file(Config *cfg, const char *path);
/* Read text from a command's output (or a cache file's text) as if it
 * were a file named name, included at depth. */
int config_parse_output(ConfigLoad *ld, const char *name, const char *text, int lineno);

/* A whole file on top of cfg (not all or nothing by itself). */
int config_parse_file(Config *cfg, const char *path, unsigned depth, unsigned flags, ConfigError *err);
/* The paths of the regular files of a directory in lexical order, without
 * those whose name matches LOCAL_CONFIG_DIR_EXCLUDE_REGEXP of cfg. On
 * error, -errno and why says why. */
int config_dir_files(const Config *cfg, const char *dir, char ***ret, char *why, size_t why_size);

int config_load_string_flags(Config *cfg, const char *text, const char *source_name, unsigned flags,
                             ConfigError *err);

/* ---- built-in defaults ---- */

/* Define every built-in default and detected value. */
int config_add_defaults(Config *cfg);

/* ---- metaknobs (metaknobs.c; the table: metaknob-texts.c) ---- */

extern const ConfigMetaknob config_metaknob_table[];
extern const size_t config_metaknob_count;

/* Whether category (any case) is one of the metaknobs' (ROLE, POLICY,
 * FEATURE, SECURITY, EXPERIMENTAL). */
bool config_metaknob_category(const char *category);

/* `use category : rhs` read at line at of ld: rhs is NAME[(ARGS)], several
 * separated by commas or white space. Errors fill ld->err with ld->file
 * and at. */
int config_use(ConfigLoad *ld, const char *category, const char *rhs, int at);
/* text with the metaknob arguments args ("a, b, c"; NULL: none)
 * substituted for $(0), $(N), $(N?), $(N+), $(N#), $(N:default), as
 * HTCondor's expand_meta_args(); *ret malloc'd. -ENOMEM, -E2BIG, or
 * -EINVAL with why filled (a malformed $(N...)). */
int config_meta_args(const char *text, const char *args, char **ret, char *why, size_t why_size);
