/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cron-output.c — what a startd cron run writes on stdout, as HTCondor's
 * CronJobOut and ClassAdCronJob read it: one `Attr = expression` a line
 * (the expression in the ClassAd language, parsed by classad/), the job's
 * PREFIX put before every name, a line starting with '-' ending one ad
 * (`- tag update:true`: the rest of the line names the ad within the job
 * and asks for an advertisement now), the lines after the last '-' one ad
 * more at the end. Each ad gets <prefix>LastUpdate, the time of the run.
 *
 * Bounded against a hostile or broken program: AGENT_CRON_MAX_OUTPUT bytes
 * a run (the rest dropped, the caller stops the run), AGENT_CRON_MAX_LINE
 * bytes a line, AGENT_CRON_MAX_ATTRS attributes a run. A line that is not
 * an attribute (no '=', a bad name, an expression that does not parse, a
 * NUL byte, too long) is skipped and counted, never fatal; so is an
 * attribute agent_cron_protected() names.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "cron.h"

/* ---- the protected attributes ---- */

/* Exact names (case-insensitive). HTCondor refuses only Name, SlotID,
 * SlotTypeId, SlotName and SlotMergeConstraint (its dont_merge_these);
 * glean also keeps the slot's identity, resources, state, claim, policy
 * and measurements for the agent: cron output informs policy, it does
 * not rewrite it. */
static const char *const protected_names[] = {
        "AccountingGroup", "Activity", "AddressV1", "Arch", "ClaimId", "ClientMachine", "CondorLoadAvg",
        "ConsoleIdle", "Cpus", "CurrentRank", "CurrentTime", "Disk", "DynamicSlot", "EnteredCurrentActivity",
        "EnteredCurrentState", "ExecutorName", "GleanVersion", "GlobalJobId", "GPUs", "IsOwner", "JobId",
        "JobStart", "KeyboardIdle", "LastHeardFrom", "LoadAvg", "Machine", "MachineResources", "Memory",
        "MyAddress", "MyCurrentTime", "MyType", "Name", "OpSys", "ParentSlotId", "PartitionableSlot",
        "PublicClaimId", "Rank", "RemoteGroup", "RemoteOwner", "RemoteUser", "Requirements", "SlotBrokenReason",
        "SlotID", "SlotMergeConstraint", "SlotName", "SlotType", "SlotTypeID", "Start", "State", "Swap",
        "TargetType", "UidDomain", "VirtualMemory",
};

/* Families: Total* (TotalCpus, TotalLoadAvg, ...), Detected*, Assigned*,
 * Child*, Glean*. */
static const char *const protected_prefixes[] = { "Total", "Detected", "Assigned", "Child", "Glean" };

bool agent_cron_protected(const char *name) {
        for (size_t i = 0; i < sizeof protected_names / sizeof *protected_names; i++)
                if (!strcasecmp(name, protected_names[i]))
                        return true;
        for (size_t i = 0; i < sizeof protected_prefixes / sizeof *protected_prefixes; i++)
                if (!strncasecmp(name, protected_prefixes[i], strlen(protected_prefixes[i])))
                        return true;
        return false;
}

/* The attributes that say which slots an ad is for. */
static bool is_selector(const char *name) {
        static const char *const sel[] = { "SlotMergeConstraint", "SlotName", "Name", "SlotTypeId", "SlotId" };
        for (size_t i = 0; i < sizeof sel / sizeof *sel; i++)
                if (!strcasecmp(name, sel[i]))
                        return true;
        return false;
}

/* ---- ads ---- */

void agent_cron_ad_free(AgentCronAd *ad) {
        if (!ad)
                return;
        free(ad->tag);
        classad_free(ad->attrs);
        classad_free(ad->select);
        free(ad);
}

static int ad_new(AgentCronAd **ret) {
        AgentCronAd *ad = calloc(1, sizeof *ad);
        if (!ad)
                return -ENOMEM;
        ad->update = -1;
        if (classad_new(&ad->attrs) < 0 || classad_new(&ad->select) < 0) {
                agent_cron_ad_free(ad);
                return -ENOMEM;
        }
        *ret = ad;
        return 0;
}

/* ---- the parser ---- */

struct AgentCronParser {
        char *prefix;
        int64_t now;
        bool continuous;      /* the budget counts from each ad; LastUpdate is time() */
        AgentCronAdFn emit;
        void *userdata;
        char line[AGENT_CRON_MAX_LINE + 1];
        size_t len;
        bool overlong, has_nul;
        size_t total;
        AgentCronAd *cur;     /* the ad being read (NULL: none yet) */
        size_t cur_attrs;     /* attributes of cur, selectors included */
        AgentCronParseStats stats;
};

int agent_cron_parser_new(const char *prefix, int64_t now, AgentCronAdFn emit, void *userdata,
                          AgentCronParser **ret) {
        AgentCronParser *p = calloc(1, sizeof *p);
        if (!p || !(p->prefix = strdup(prefix ? prefix : ""))) {
                free(p);
                return -ENOMEM;
        }
        p->now = now;
        p->emit = emit;
        p->userdata = userdata;
        *ret = p;
        return 0;
}

void agent_cron_parser_free(AgentCronParser *p) {
        if (!p)
                return;
        agent_cron_ad_free(p->cur);
        free(p->prefix);
        free(p);
}

void agent_cron_parser_set_continuous(AgentCronParser *p) {
        p->continuous = true;
}

const AgentCronParseStats *agent_cron_parser_stats(const AgentCronParser *p) {
        return &p->stats;
}

static void problem(AgentCronParser *p, const char *what, const char *line) {
        if (p->stats.first_problem[0])
                return;
        snprintf(p->stats.first_problem, sizeof p->stats.first_problem, "line %zu: %s: %.80s%s", p->stats.lines,
                 what, line, strlen(line) > 80 ? "..." : "");
}

/* The separator's words: a tag (a first word without ':') and update:<bool>. */
static int read_separator(const char *args, AgentCronAd *ad) {
        char buf[AGENT_CRON_MAX_LINE + 1];
        snprintf(buf, sizeof buf, "%s", args);
        char *save = NULL;
        bool first = true;
        for (char *w = strtok_r(buf, " \t,", &save); w; w = strtok_r(NULL, " \t,", &save), first = false) {
                if (!strncasecmp(w, "update", 6) && (w[6] == 0 || w[6] == ':')) {
                        const char *v = w[6] ? w + 7 : "true";
                        if (!strcasecmp(v, "true") || !strcasecmp(v, "yes") || !strcmp(v, "1"))
                                ad->update = 1;
                        else if (!strcasecmp(v, "false") || !strcasecmp(v, "no") || !strcmp(v, "0"))
                                ad->update = 0;
                        continue;
                }
                if (first && !strchr(w, ':')) {
                        free(ad->tag);
                        if (!(ad->tag = strdup(w)))
                                return -ENOMEM;
                }
        }
        return 0;
}

/* The ad read so far ends (args: the separator's text, NULL at the end of
 * the output). Emitted when it has an attribute. */
static int end_ad(AgentCronParser *p, const char *args) {
        if (p->continuous) {
                p->now = (int64_t) time(NULL);
                if (args) { /* the budget starts again with the next ad */
                        p->total = 0;
                        p->stats.attrs = 0;
                }
        }
        AgentCronAd *ad = p->cur;
        p->cur = NULL;
        size_t n = p->cur_attrs;
        p->cur_attrs = 0;
        if (!ad)
                return 0;
        if (!n) {
                agent_cron_ad_free(ad);
                return 0;
        }
        int r = args ? read_separator(args, ad) : 0;
        if (r >= 0 && !ad->tag && !(ad->tag = strdup("")))
                r = -ENOMEM;
        char name[200];
        snprintf(name, sizeof name, "%sLastUpdate", p->prefix);
        if (r >= 0)
                r = classad_set_int(ad->attrs, name, p->now);
        if (r < 0) {
                agent_cron_ad_free(ad);
                return r;
        }
        p->emit(p->userdata, ad);
        return 0;
}

static int attr_line(AgentCronParser *p, char *s) {
        while (*s == ' ' || *s == '\t')
                s++;
        char *name = s;
        if (!isalpha((unsigned char) *s) && *s != '_') {
                p->stats.malformed++;
                problem(p, "not an attribute name", name);
                return 0;
        }
        while (isalnum((unsigned char) *s) || *s == '_')
                s++;
        size_t nlen = (size_t) (s - name);
        while (*s == ' ' || *s == '\t')
                s++;
        if (*s != '=' || nlen > 120) {
                p->stats.malformed++;
                problem(p, nlen > 120 ? "a name longer than 120 bytes" : "no '=' after the name", name);
                return 0;
        }
        char *expr = s + 1;
        char full[260];
        snprintf(full, sizeof full, "%s%.*s", p->prefix, (int) nlen, name);

        ClassAdExpr *e = NULL;
        CaError cerr;
        if (classad_expr_parse(expr, strlen(expr), CA_MODE_OLD, &e, &cerr) < 0) {
                p->stats.malformed++;
                problem(p, "not a ClassAd expression", name);
                return 0;
        }
        bool sel = is_selector(full);
        int r = 0;
        if (!sel && agent_cron_protected(full)) {
                p->stats.refused++;
                problem(p, "a protected attribute", full);
        } else if (p->stats.attrs >= AGENT_CRON_MAX_ATTRS) {
                p->stats.over_attrs++;
        } else {
                if (!p->cur && (r = ad_new(&p->cur)) < 0) {
                        classad_expr_free(e);
                        return r;
                }
                r = classad_set_expr(sel ? p->cur->select : p->cur->attrs, full, e);
                if (r >= 0) {
                        p->stats.attrs++;
                        p->cur_attrs++;
                }
        }
        classad_expr_free(e);
        return r < 0 ? r : 0;
}

static int end_line(AgentCronParser *p) {
        p->line[p->len] = 0;
        size_t len = p->len;
        bool overlong = p->overlong, nul = p->has_nul;
        p->len = 0;
        p->overlong = p->has_nul = false;
        p->stats.lines++;
        if (len && p->line[len - 1] == '\r')
                p->line[--len] = 0;
        if (overlong) {
                p->stats.malformed++;
                problem(p, "a line longer than 8 KiB", p->line);
                return 0;
        }
        if (nul) {
                p->stats.malformed++;
                problem(p, "a NUL byte", p->line);
                return 0;
        }
        if (p->line[0] == '-') {
                char *args = p->line + 1;
                return end_ad(p, args);
        }
        const char *s = p->line;
        while (*s == ' ' || *s == '\t')
                s++;
        if (!*s || *s == '#')
                return 0;
        return attr_line(p, p->line);
}

int agent_cron_parser_feed(AgentCronParser *p, const char *buf, size_t n) {
        if (p->stats.truncated)
                return -E2BIG;
        for (size_t i = 0; i < n; i++) {
                if (p->total == AGENT_CRON_MAX_OUTPUT) {
                        p->stats.truncated = true;
                        /* What was being read when the output was cut is dropped. */
                        p->len = 0;
                        p->overlong = p->has_nul = false;
                        agent_cron_ad_free(p->cur);
                        p->cur = NULL;
                        p->cur_attrs = 0;
                        return -E2BIG;
                }
                p->total++; /* (an ad's end sets it back to 0 for a continuous job) */
                char c = buf[i];
                if (c == '\n') {
                        int r = end_line(p);
                        if (r < 0)
                                return r;
                        continue;
                }
                if (c == 0)
                        p->has_nul = true;
                if (p->len < AGENT_CRON_MAX_LINE)
                        p->line[p->len++] = c ? c : ' ';
                else
                        p->overlong = true;
        }
        return 0;
}

int agent_cron_parser_finish(AgentCronParser *p) {
        if (p->stats.truncated)
                return 0;
        int r = 0;
        if (p->len || p->overlong || p->has_nul)
                r = end_line(p);
        if (r >= 0)
                r = end_ad(p, NULL);
        return r;
}

int agent_cron_parse_text(const char *text, size_t n, const char *prefix, int64_t now, AgentCronAdFn emit,
                          void *userdata, AgentCronParseStats *ret_stats) {
        AgentCronParser *p = NULL;
        int r = agent_cron_parser_new(prefix, now, emit, userdata, &p);
        if (r < 0)
                return r;
        r = agent_cron_parser_feed(p, text, n);
        if (r >= 0 || r == -E2BIG) {
                int k = agent_cron_parser_finish(p);
                if (k < 0)
                        r = k;
        }
        if (ret_stats)
                *ret_stats = p->stats;
        agent_cron_parser_free(p);
        return r;
}
