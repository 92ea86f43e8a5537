/* SPDX-License-Identifier: Apache-2.0 */
/*
 * argsyntax.h — HTCondor's argument and environment syntaxes, written once
 * for the submit parser (config/submit-*.c, which puts them into job ads)
 * and for the agent (agent/exec/jobspec.c, which reads them back out of a job
 * ad as HTCondor's starter does: condor_arglist.cpp split_args,
 * AppendArgsV1Raw_unix; env.cpp MergeFromV2Raw, MergeFromV1AutoDelim).
 *
 * The raw forms, as a job ad holds them (no outer double quotes):
 *   Arguments (new syntax): white space separates arguments, '...' groups
 *     them (white space included), '' inside single quotes is a literal
 *     single quote; nothing else is special.
 *   Args (old syntax): white space separates; nothing else is special.
 *   Environment (new syntax): NAME=value words in the new argument syntax.
 *   Env (old syntax): NAME=value entries separated by a delimiter.
 * White space is space, tab, newline and carriage return. In an
 * environment, a later NAME replaces an earlier one in place.
 *
 * Conventions as in config.h: >= 0 on success, -errno on failure. Text
 * that does not parse is -EINVAL, with msg (msg_size bytes; may be NULL
 * when msg_size is 0) saying why. The split functions add to a list; on
 * failure the list may hold part of what the text adds (free it).
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* A list of malloc'd strings, NULL-terminated once anything was added
 * (v is NULL while empty); {} is the empty list. */
typedef struct ConfigStrv {
        char **v;
        size_t n;
} ConfigStrv;

/* Append s (taken, also on failure; NULL: -ENOMEM). */
int config_strv_push(ConfigStrv *l, char *s);
/* Free the strings and the array; l is left empty. (A list's v alone can
 * be freed with config_strv_free of config.h.) */
void config_strv_done(ConfigStrv *l);

/* ---- arguments ---- */

/* Add the arguments of new-syntax text (Arguments) to args. */
int config_args_split_v2(const char *raw, ConfigStrv *args, char *msg, size_t msg_size);
/* Add the arguments of old-syntax text (Args) to args. */
int config_args_split_v1(const char *raw, ConfigStrv *args);
/* args as Arguments holds them, malloc'd: quoted as HTCondor's append_arg()
 * quotes, white space and single quotes inside single quotes, a quoted
 * section directly after another merged with it. */
int config_args_join_v2(const ConfigStrv *args, char **ret);
/* args joined by single spaces, as Args holds them (the old syntax cannot
 * carry white space inside an argument). */
int config_args_join_v1(const ConfigStrv *args, char **ret);

/* ---- environment ---- */

/* Set entry ("NAME=value", taken, also on failure; NULL: -ENOMEM) in env:
 * it replaces NAME in place, or is appended. -EINVAL when entry has no '='
 * or no name. */
int config_env_set(ConfigStrv *env, char *entry, char *msg, size_t msg_size);
/* The index of the entry of NAME (the name_len bytes of name) in env; -1
 * when there is none. */
ssize_t config_env_find(const ConfigStrv *env, const char *name, size_t name_len);
/* Set the entries of new-syntax text (Environment) in env. */
int config_env_split_v2(const char *raw, ConfigStrv *env, char *msg, size_t msg_size);
/* Set the entries of old-syntax text in env, entries separated by any
 * character of seps: white space before an entry is skipped, empty entries
 * are ignored. (A submit description's environment: seps ";".) */
int config_env_split_v1(const char *raw, const char *seps, ConfigStrv *env, char *msg, size_t msg_size);
/* A job ad's Env as HTCondor's starter reads it (MergeFromV1AutoDelim):
 * config_env_split_v1 with delim (EnvDelim; 0: ';') and a newline as the
 * separators, except that a leading ';' or '|' names the delimiter. */
int config_env_split_ad_v1(const char *raw, char delim, ConfigStrv *env, char *msg, size_t msg_size);
