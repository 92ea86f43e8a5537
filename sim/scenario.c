/* SPDX-License-Identifier: Apache-2.0 */
/*
 * scenario.c — the reader of simulation scenarios (docs/simulate.md).
 *
 * A scenario is a text file. Everything before a line "---" is
 * configuration (glean's configuration language, read on top of the
 * built-in defaults and of UID_DOMAIN = sim); a file without a "---" line
 * has none. After it, one item per line, "#" outside a string starting a
 * comment; a ClassAd may go on over several lines until its closing "]":
 *
 *     cycles N                         how many negotiation cycles to run
 *     slot [AD]                        one slot
 *     slots N [AD]                     N copies, named slot1@MACHINE, slot2@MACHINE, ...
 *     submitter NAME [factor F] [rup R] [usage W for DURATION] [nice] [group G]
 *     jobs NAME N [runtime DURATION|forever] [AD]
 *     at TIME slot ... | slots ... | jobs ...   the same, arriving at TIME
 *
 * NAME is a user ("alice", charged as alice@UID_DOMAIN) or user@domain; a
 * jobs line names a submitter declared before it. Every slot ad and job
 * ad gets the attributes it lacks (scenario-items.c: fill_slot(), fill_job()). TIME and
 * DURATION are seconds, or with units s, m, h, d that add up ("1h30m").
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/cleanup.h"
#include "common/file.h"
#include "scenario-internal.h"

#define DEFAULT_DOMAIN "UID_DOMAIN = sim\n"

__attribute__((format(printf, 5, 0))) static int fail_code(ConfigError *err, int code, const char *file, int line,
                                                           const char *fmt, va_list ap) {
        snprintf(err->file, sizeof err->file, "%s", file);
        err->line = line;
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        return code;
}

int scn_error(ConfigError *err, int code, const char *file, int line, const char *fmt, ...) {
        va_list ap;
        va_start(ap, fmt);
        int r = fail_code(err, code, file, line, fmt, ap);
        va_end(ap);
        return r;
}

int scn_fail(ScnReader *rd, int line, const char *fmt, ...) {
        va_list ap;
        va_start(ap, fmt);
        int r = fail_code(rd->err, -EINVAL, rd->sc->source, line, fmt, ap);
        va_end(ap);
        return r;
}

int scn_too_many(ScnReader *rd, int line, const char *fmt, ...) {
        va_list ap;
        va_start(ap, fmt);
        int r = fail_code(rd->err, -E2BIG, rd->sc->source, line, fmt, ap);
        va_end(ap);
        return r;
}

int scn_grow(void **p, size_t *cap, size_t n, size_t size) {
        if (n < *cap)
                return 0;
        size_t c = *cap ? *cap * 2 : 16;
        void *q = reallocarray(*p, c, size);
        if (!q)
                return -ENOMEM;
        *p = q;
        *cap = c;
        return 0;
}

int scn_set_number(ClassAd *ad, const char *name, double v) {
        if (v == floor(v) && fabs(v) < 9007199254740992.0)
                return classad_set_int(ad, name, (int64_t) v);
        return classad_set_real(ad, name, v);
}

/* ---- words ---- */

int sim_scenario_parse_duration(const char *s, int64_t *ret) {
        int64_t total = 0;

        if (!isdigit((unsigned char) *s))
                return -EINVAL;
        while (*s) {
                int64_t v = 0, unit = 1;

                if (!isdigit((unsigned char) *s))
                        return -EINVAL;
                for (; isdigit((unsigned char) *s); s++) {
                        v = v * 10 + (*s - '0');
                        if (v > NEGO_SCENARIO_MAX_TIME)
                                return -EINVAL;
                }
                switch (*s) {
                case 'd': unit = 86400; s++; break;
                case 'h': unit = 3600; s++; break;
                case 'm': unit = 60; s++; break;
                case 's': s++; break;
                default:
                        if (*s)
                                return -EINVAL;
                }
                total += v * unit;
                if (total > NEGO_SCENARIO_MAX_TIME)
                        return -EINVAL;
        }
        *ret = total;
        return 0;
}

int scn_parse_count(const char *s, size_t max, size_t *ret) {
        char *end;

        if (!s || !isdigit((unsigned char) *s))
                return -EINVAL;
        errno = 0;
        unsigned long long v = strtoull(s, &end, 10);
        if (errno || *end || v < 1 || v > max)
                return -EINVAL;
        *ret = (size_t) v;
        return 0;
}

int scn_parse_number(const char *s, double *ret) {
        char *end;

        if (!s || !*s)
                return -EINVAL;
        errno = 0;
        double v = strtod(s, &end);
        if (errno || *end || !isfinite(v))
                return -EINVAL;
        *ret = v;
        return 0;
}

int sim_scenario_find_submitter(const SimScenario *sc, const char *label, size_t *ret) {
        size_t found = SIZE_MAX, n = 0;

        for (size_t i = 0; i < sc->n_submitters; i++)
                if (strcmp(sc->submitters[i].label, label) == 0) {
                        found = i;
                        n++;
                }
        if (n == 0)
                for (size_t i = 0; i < sc->n_submitters; i++) {
                        const char *name = sc->submitters[i].name;
                        size_t len = strlen(label);
                        if (strcmp(name, label) == 0 || (!strchr(label, '@') && strncmp(name, label, len) == 0 &&
                                                         name[len] == '@')) {
                                found = i;
                                n++;
                        }
                }
        if (n > 1)
                return -EEXIST;
        if (n == 0)
                return -ENOENT;
        *ret = found;
        return 0;
}

/* ---- items ---- */

static int item(ScnReader *rd, char *p, const char *start, int line) {
        char *w = glean_next_word(&p), *t;
        int64_t at = 0;
        size_t n;

        if (!w)
                return scn_fail(rd, line, "expected slot, slots, submitter, jobs, at or cycles before the ad");
        if (strcmp(w, "at") == 0) {
                if (!(t = glean_next_word(&p)) || sim_scenario_parse_duration(t, &at) < 0)
                        return scn_fail(rd, line, "at: expected a time (90, 30m, 1h30m, 2d) after 'at'");
                w = glean_next_word(&p);
                if (!w || (strcmp(w, "slot") != 0 && strcmp(w, "slots") != 0 && strcmp(w, "jobs") != 0))
                        return scn_fail(rd, line, "at %s: expected slot, slots or jobs (only those arrive later)", t);
        }
        if (strcmp(w, "slot") == 0 || strcmp(w, "slots") == 0)
                return scn_slots_item(rd, w, p, start, at, line);
        if (strcmp(w, "jobs") == 0)
                return scn_jobs_item(rd, p, start, at, line);
        if (strcmp(w, "submitter") == 0)
                return scn_submitter_item(rd, p, line);
        if (strcmp(w, "cycles") == 0) {
                if (rd->sc->cycles)
                        return scn_fail(rd, line, "cycles given twice");
                if (scn_parse_count(glean_next_word(&p), NEGO_SCENARIO_MAX_CYCLES, &n) < 0 || *glean_skip_space(p))
                        return scn_fail(rd, line, "cycles: expected a number from 1 to %d", NEGO_SCENARIO_MAX_CYCLES);
                rd->sc->cycles = (unsigned) n;
                return 0;
        }
        return scn_fail(rd, line, "unknown line '%s' (expected slot, slots, submitter, jobs, at or cycles)", w);
}

/* Blanks the comment of the line at l (up to the newline or the end)
 * and returns the line's end; *depth counts the brackets left open. */
static char *scan_line(char *l, int *depth) {
        bool in_str = false;
        char *c = l;

        for (; *c && *c != '\n'; c++) {
                if (in_str && *c == '\\' && c[1] && c[1] != '\n')
                        c++;
                else if (*c == '"')
                        in_str = !in_str;
                else if (in_str)
                        continue;
                else if (*c == '[')
                        (*depth)++;
                else if (*c == ']')
                        (*depth)--;
                else if (*c == '#') {
                        while (*c && *c != '\n')
                                *c++ = ' ';
                        break;
                }
        }
        return c;
}

/* The items of text (whose first line is line): one per line, or over
 * several while an ad's brackets are open. */
static int read_items(ScnReader *rd, char *text, int line) {
        while (*text) {
                int depth = 0, first = line;
                char *start = text, *end = scan_line(text, &depth);

                while (depth > 0 && *end) {
                        line++;
                        end = scan_line(end + 1, &depth);
                }
                if (depth > 0)
                        return scn_fail(rd, first, "the ClassAd begun on this line has no closing ']'");
                bool last = !*end;
                *end = 0;
                if (*glean_skip_space(start)) {
                        int r = item(rd, start, start, first);
                        if (r < 0)
                                return r;
                }
                if (last)
                        break;
                text = end + 1;
                line++;
        }
        return 0;
}

/* ---- the configuration part ---- */

/* The expression text of a knob for the slot ads: its expanded value, or
 * dflt when the value is empty (or, with default_too, when it is the
 * built-in default). */
static int knob_expr(ScnReader *rd, const char *name, const char *dflt, bool default_too, char **ret) {
        const Config *cfg = rd->sc->cfg;
        _cleanup_free_ char *v = NULL;
        ClassAdExpr *e = NULL;
        const char *file = "<default>";
        CaError cerr;
        int line = 0, r;

        config_where(cfg, name, &file, &line);
        if (default_too && strcmp(file, "<default>") == 0)
                return (*ret = strdup(dflt)) ? 0 : -ENOMEM;
        r = config_get(cfg, name, &v, rd->err);
        if (r == -ENOENT || (r >= 0 && !*glean_skip_space(v)))
                return (*ret = strdup(dflt)) ? 0 : -ENOMEM;
        if (r < 0)
                return r;
        if (classad_expr_parse(v, strlen(v), CA_MODE_OLD, &e, &cerr) < 0)
                return scn_error(rd->err, -EINVAL, file, line, "%s = %.200s is not a ClassAd expression: %s", name, v,
                                 cerr.msg);
        classad_expr_free(e);
        *ret = TAKE_PTR(v);
        return 0;
}

int sim_scenario_accounts(const SimScenario *sc, AcctSettings *ret_settings, AcctGroups **ret_groups,
                           ConfigError *err) {
        AcctSettings s = { 0 };
        AcctGroups *g = NULL;
        int r = acct_settings_from_config(sc->cfg, &s, err);

        if (r >= 0)
                r = acct_groups_from_config(sc->cfg, &g, err);
        if (r < 0) {
                acct_settings_clear(&s);
                return r;
        }
        *ret_settings = s;
        *ret_groups = g;
        return 0;
}

static int read_config(ScnReader *rd, const char *text) {
        SimScenario *sc = rd->sc;
        AcctSettings s = { 0 };
        const char *file = "<default>";
        int64_t iv;
        int line = 0, r;

        if ((r = config_new(&sc->cfg)) < 0)
                return r;
        if ((r = config_load_string(sc->cfg, DEFAULT_DOMAIN, "<simulator>", rd->err)) < 0)
                return r;
        if (text && (r = config_load_string(sc->cfg, text, sc->source, rd->err)) < 0)
                return r;
        if ((r = sim_scenario_accounts(sc, &s, &rd->groups, rd->err)) < 0)
                return r;
        acct_settings_clear(&s);
        if ((r = config_get(sc->cfg, "UID_DOMAIN", &sc->domain, rd->err)) < 0 && r != -ENOENT)
                return r;
        config_where(sc->cfg, "UID_DOMAIN", &file, &line);
        if (!sc->domain || !*sc->domain || strpbrk(sc->domain, " \t\r\n\"'\\@"))
                return scn_error(rd->err, -EINVAL, file, line, "UID_DOMAIN must be a domain name");
        r = config_get_int(sc->cfg, "NEGOTIATOR_INTERVAL", &iv, rd->err);
        if (r < 0 && r != -ENOENT)
                return r;
        config_where(sc->cfg, "NEGOTIATOR_INTERVAL", &file, &line);
        if (r == -ENOENT || iv <= 0 || iv > NEGO_SCENARIO_MAX_TIME)
                return scn_error(rd->err, -EINVAL, file, line,
                                 "NEGOTIATOR_INTERVAL must be a number of seconds over 0");
        sc->interval = iv;
        if ((r = knob_expr(rd, "START", "true", true, &rd->start)) < 0 ||
            (r = knob_expr(rd, "RANK", "0", false, &rd->rank)) < 0 ||
            (r = knob_expr(rd, "SLOT_WEIGHT", "Cpus", false, &rd->slot_weight)) < 0)
                return r;
        return 0;
}

/* ---- entry points ---- */

/* The line "---" of text, NULL when none; *ret_line: the line after it. */
static char *find_separator(char *text, int *ret_line) {
        int n = 1;

        for (char *l = text; l && *l; n++) {
                char *nl = strchr(l, '\n');
                size_t len = nl ? (size_t) (nl - l) : strlen(l);

                while (len && isspace((unsigned char) l[len - 1]))
                        len--;
                if (len == 3 && memcmp(l, "---", 3) == 0) {
                        *ret_line = n + 1;
                        return l;
                }
                l = nl ? nl + 1 : NULL;
        }
        return NULL;
}

void sim_scenario_free(SimScenario *sc) {
        if (!sc)
                return;
        for (size_t i = 0; i < sc->n_slots; i++) {
                classad_free(sc->slots[i].ad);
                free(sc->slots[i].name);
        }
        for (size_t i = 0; i < sc->n_submitters; i++)
                scn_submitter_clear(&sc->submitters[i]);
        for (size_t i = 0; i < sc->n_jobs; i++)
                classad_free(sc->jobs[i].ad);
        free(sc->slots);
        free(sc->submitters);
        free(sc->jobs);
        config_free(sc->cfg);
        free(sc->domain);
        free(sc->source);
        free(sc);
}

static void reader_done(ScnReader *rd) {
        size_t pos = 0;
        void *m;

        while (rd->machines && glean_strmap_next(rd->machines, &pos, NULL, &m))
                free(m);
        glean_strmap_free(rd->machines);
        glean_strmap_free(rd->names);
        glean_strmap_free(rd->submitters);
        acct_groups_free(rd->groups);
        free(rd->start);
        free(rd->rank);
        free(rd->slot_weight);
}

int sim_scenario_parse(const char *text, const char *source_name, const SimScenarioLimits *limits,
                        SimScenario **ret, ConfigError *err) {
        SimScenarioLimits lim = {
                .max_slots = limits && limits->max_slots ? limits->max_slots : NEGO_SCENARIO_MAX_SLOTS,
                .max_jobs = limits && limits->max_jobs ? limits->max_jobs : NEGO_SCENARIO_MAX_JOBS,
        };
        _cleanup_free_ char *copy = strdup(text);
        SimScenario *sc = calloc(1, sizeof *sc);
        ScnReader rd = { .sc = sc, .limits = &lim, .err = err };
        char *items, *sep;
        int line = 1, r = -ENOMEM;

        if (!copy || !sc || !(sc->source = strdup(source_name ? source_name : "<scenario>")))
                goto out;
        if ((r = glean_strmap_new(false, &rd.names)) < 0 || (r = glean_strmap_new(true, &rd.machines)) < 0 ||
            (r = glean_strmap_new(false, &rd.submitters)) < 0)
                goto out;
        sep = find_separator(copy, &line);
        items = copy;
        if (sep) {
                char *nl = strchr(sep, '\n');
                items = nl ? nl + 1 : sep + strlen(sep);
                *sep = 0;
        }
        if ((r = read_config(&rd, sep ? copy : NULL)) < 0)
                goto out;
        r = read_items(&rd, items, line);
out:
        reader_done(&rd);
        if (r < 0) {
                sim_scenario_free(sc);
                return r;
        }
        *ret = sc;
        return 0;
}

int sim_scenario_load(const char *path, SimScenario **ret, ConfigError *err) {
        _cleanup_free_ char *buf = NULL;
        size_t len = 0;
        int r = glean_read_file(path, 16 << 20, &buf, &len);

        if (r == -EFBIG)
                return scn_error(err, -EINVAL, path, 0, "larger than 16 MiB");
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return scn_error(err, r, path, 0, "cannot read: %s", strerror(-r));
        if (memchr(buf, 0, len))
                return scn_error(err, -EINVAL, path, 0, "a NUL byte: not a text file");
        return sim_scenario_parse(buf, path, NULL, ret, err);
}
