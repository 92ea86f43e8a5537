/* SPDX-License-Identifier: Apache-2.0 */
/*
 * slottype.c — the slots of the machine (seed 002, 3.5.10.1): NUM_SLOTS
 * even slots, or NUM_SLOTS_TYPE_<N> slots of each SLOT_TYPE_<N>.
 *
 * As HTCondor's slot builder: a share is "auto", a fraction ("1/4"), a
 * percentage ("25%") or an absolute amount; CPUs and memory in a slot are
 * at least 1 (a fraction is truncated, then raised to 1); disk and swap
 * are fractions of the machine's; every explicit share is handed out
 * first, and the "auto" shares of a resource then split what is left
 * evenly (custom resources: rounded up, the first slots getting the
 * excess). A resource over-committed, or an auto share below one CPU or
 * one MB, makes the configuration impossible.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "slots-internal.h"

typedef enum ShareKind { SHARE_UNSET, SHARE_AUTO, SHARE_FRAC, SHARE_ABS } ShareKind;

typedef struct Share {
        ShareKind kind;
        double v; /* FRAC: 0.25 for 25%; ABS: in the resource's unit */
} Share;

/* Resource indices of a TypeReq: the four standard ones, then the custom. */
enum { R_CPUS, R_MEMORY, R_DISK, R_SWAP, R_STD };
#define R_MAX (R_STD + AGENT_MAX_CUSTOM)

typedef struct SlotType {
        unsigned type;       /* N of SLOT_TYPE_<N>, 0 for NUM_SLOTS */
        int64_t count;       /* NUM_SLOTS_TYPE_<N> */
        bool partitionable;
        Share share[R_MAX];  /* as written (UNSET -> the bare share) */
        double amount[R_MAX];/* explicit amount per slot; disk, swap: fraction */
        bool automatic[R_MAX];
} SlotType;

typedef struct Layout {
        const Config *cfg;
        const AgentMachine *m;
        SlotType *types;
        size_t n_types;
        size_t n_res;        /* R_STD + m->n_custom */
        ConfigError *err;
} Layout;

static const char *res_name(const Layout *l, size_t r) {
        static const char *const std[R_STD] = { "CPUs", "memory", "disk", "swap" };

        return r < R_STD ? std[r] : l->m->custom_name[r - R_STD];
}

static double res_total(const Layout *l, size_t r) {
        switch (r) {
        case R_CPUS: return (double) l->m->total.cpus;
        case R_MEMORY: return (double) l->m->total.memory;
        case R_DISK: return (double) l->m->total.disk;
        case R_SWAP: return (double) l->m->total.swap;
        default: return l->m->total.custom[r - R_STD];
        }
}

/* "SLOT_TYPE_3", or "NUM_SLOTS" for the even layout: the knob to blame. */
static void type_knob(const SlotType *t, char *buf, size_t size) {
        if (t->type == 0)
                snprintf(buf, size, "NUM_SLOTS");
        else
                snprintf(buf, size, "SLOT_TYPE_%u", t->type);
}

/* The knob an error about t points at: SLOT_TYPE_<N> when it is defined,
 * else NUM_SLOTS_TYPE_<N> (or NUM_SLOTS). */
static void blame_knob(const Layout *l, const SlotType *t, char *buf, size_t size) {
        type_knob(t, buf, size);
        if (t->type > 0 && !config_raw(l->cfg, buf))
                snprintf(buf, size, "NUM_SLOTS_TYPE_%u", t->type);
}

/* "SLOT_TYPE_1 x NUM_SLOTS_TYPE_1=4", or "NUM_SLOTS=4". */
static void type_label(const SlotType *t, char *buf, size_t size) {
        if (t->type == 0)
                snprintf(buf, size, "NUM_SLOTS=%lld", (long long) t->count);
        else
                snprintf(buf, size, "SLOT_TYPE_%u x NUM_SLOTS_TYPE_%u=%lld", t->type, t->type, (long long) t->count);
}

/* ---- parsing one SLOT_TYPE_<N> ---- */

/* Which resource a name in a slot type means: a custom resource by its
 * name, else (HTCondor 8.1.4 and later) any prefix of cpus, ram, memory,
 * swap, virtualmemory or disk; "cores" for cpus. -1 when unknown. */
static int resource_index(const Layout *l, const char *name, size_t len) {
        static const struct { const char *word; int r; } std[] = {
                { "cpus", R_CPUS }, { "cores", R_CPUS }, { "ram", R_MEMORY }, { "memory", R_MEMORY },
                { "swap", R_SWAP }, { "virtualmemory", R_SWAP }, { "disk", R_DISK },
        };

        for (size_t i = 0; i < l->m->n_custom; i++)
                if (strlen(l->m->custom_name[i]) == len && strncasecmp(l->m->custom_name[i], name, len) == 0)
                        return (int) (R_STD + i);
        if (len == 0)
                return -1;
        for (size_t i = 0; i < sizeof(std) / sizeof(std[0]); i++)
                if (len <= strlen(std[i].word) && strncasecmp(std[i].word, name, len) == 0)
                        return std[i].r;
        return -1;
}

/* One share: auto, a fraction a/b, a percentage, or an absolute amount
 * (units allowed for memory, disk, swap). */
static int parse_share(const char *v, size_t len, int r, Share *ret) {
        char buf[64];
        const char *slash, *pct;
        double a, b;

        if (len >= sizeof(buf))
                return -EINVAL;
        memcpy(buf, v, len);
        buf[len] = '\0';
        if (strcasecmp(buf, "auto") == 0 || strcasecmp(buf, "automatic") == 0) {
                *ret = (Share){ SHARE_AUTO, 0 };
                return 0;
        }
        pct = strchr(buf, '%');
        if (pct) {
                if (pct[1] || agent_parse_amount(buf, (size_t) (pct - buf), false, 1, &a) < 0)
                        return -EINVAL;
                *ret = (Share){ SHARE_FRAC, a / 100.0 };
                return 0;
        }
        slash = strchr(buf, '/');
        if (slash) {
                if (agent_parse_amount(buf, (size_t) (slash - buf), false, 1, &a) < 0 ||
                    agent_parse_amount(slash + 1, strlen(slash + 1), false, 1, &b) < 0 || b <= 0)
                        return -EINVAL;
                *ret = (Share){ SHARE_FRAC, a / b };
                return 0;
        }
        if (r == R_MEMORY || r == R_DISK || r == R_SWAP) {
                if (agent_parse_amount(buf, len, true, r == R_MEMORY ? 1048576.0 : 1024.0, &a) < 0)
                        return -EINVAL;
        } else if (agent_parse_amount(buf, len, false, 1, &a) < 0)
                return -EINVAL;
        *ret = (Share){ SHARE_ABS, a };
        return 0;
}

static bool is_sep(char c) {
        return c == ',' || isspace((unsigned char) c);
}

/* "c=1, r=25%, d=1/4, s=25%", "1/4", "cpus=1, disk=auto, 50%", "gpu=50%,actuator=6,50%" */
static int parse_type(Layout *l, SlotType *t, const char *text) {
        char knob[32];
        Share bare = { SHARE_AUTO, 0 };
        const char *p = text;

        type_knob(t, knob, sizeof(knob));
        for (;;) {
                const char *name, *val;
                size_t name_len, val_len;
                Share s;
                int r;

                while (*p && is_sep(*p))
                        p++;
                if (!*p)
                        break;
                name = p;
                while (*p && !is_sep(*p) && *p != '=')
                        p++;
                name_len = (size_t) (p - name);
                while (*p && isspace((unsigned char) *p) && *p != '\n')
                        p++;
                if (*p != '=') {
                        /* a bare share for every resource not listed */
                        if (parse_share(name, name_len, -1, &s) < 0 || s.kind == SHARE_ABS || s.v > 1.0)
                                return agent_slots_error(l->err, l->cfg, knob, -EINVAL,
                                                         "%s: '%.*s' is invalid: give a percentage (like \"25%%\"), "
                                                         "a fraction (like \"1/4\"), or list the resources "
                                                         "(like \"c=1, r=25%%, s=25%%, d=25%%\")",
                                                         knob, (int) name_len, name);
                        bare = s;
                        continue;
                }
                p++;
                while (*p && isspace((unsigned char) *p))
                        p++;
                val = p;
                while (*p && !is_sep(*p))
                        p++;
                val_len = (size_t) (p - val);
                if (name_len == 0 || val_len == 0)
                        return agent_slots_error(l->err, l->cfg, knob, -EINVAL, "%s: cannot parse '%.*s'", knob,
                                                 (int) (p - name), name);
                r = resource_index(l, name, name_len);
                if (parse_share(val, val_len, r, &s) < 0)
                        return agent_slots_error(l->err, l->cfg, knob, -EINVAL,
                                                 "%s: '%.*s' is not auto, a fraction, a percentage or an amount%s",
                                                 knob, (int) (p - name), name,
                                                 r == R_MEMORY ? " (MB, or with a unit: K, M, G, T)" :
                                                 r == R_DISK || r == R_SWAP ? " (KB, or with a unit: K, M, G, T)" : "");
                if (r < 0) {
                        /* As HTCondor: asking for none or a share of an unknown
                         * resource is tolerated, asking for an amount is not. */
                        if (s.kind == SHARE_ABS && s.v > 0)
                                return agent_slots_error(l->err, l->cfg, knob, -EINVAL,
                                                         "%s: unknown resource '%.*s' (not cpus, memory, disk, swap, "
                                                         "nor one of MACHINE_RESOURCE_NAMES)",
                                                         knob, (int) name_len, name);
                        continue;
                }
                t->share[r] = s;
        }
        for (size_t r = 0; r < l->n_res; r++)
                if (t->share[r].kind == SHARE_UNSET)
                        t->share[r] = bare;
        return 0;
}

/* Explicit amounts per slot from the shares. */
static void type_amounts(Layout *l, SlotType *t) {
        for (size_t r = 0; r < l->n_res; r++) {
                const Share *s = &t->share[r];
                double total = res_total(l, r), a;

                t->automatic[r] = s->kind == SHARE_AUTO || s->kind == SHARE_UNSET;
                if (t->automatic[r])
                        continue;
                switch (r) {
                case R_CPUS:
                case R_MEMORY:
                        a = s->kind == SHARE_FRAC ? floor(s->v * total) : floor(s->v);
                        t->amount[r] = a < 1 ? 1 : a;
                        break;
                case R_DISK:
                case R_SWAP: /* fractions of the machine's */
                        t->amount[r] = s->kind == SHARE_FRAC ? s->v : total > 0 ? s->v / total : (s->v > 0 ? INFINITY : 0);
                        break;
                default:
                        t->amount[r] = s->kind == SHARE_FRAC ? floor(s->v * total + 1e-9) : s->v;
                        break;
                }
        }
}

/* ---- checking that it adds up ---- */

static void format_amount(const Layout *l, size_t r, double a, char *buf, size_t size) {
        switch (r) {
        case R_CPUS:
                snprintf(buf, size, "%.0f CPU%s", a, a == 1 ? "" : "s");
                break;
        case R_MEMORY:
                snprintf(buf, size, "%.0f MB of memory", a);
                break;
        case R_DISK:
        case R_SWAP:
                snprintf(buf, size, "%.4g%% of the %s", a * 100.0, res_name(l, r));
                break;
        default:
                snprintf(buf, size, "%.6g %s", a, res_name(l, r));
                break;
        }
}

static void format_total(const Layout *l, size_t r, char *buf, size_t size) {
        double t = res_total(l, r);

        switch (r) {
        case R_CPUS: snprintf(buf, size, "%.0f", t); break;
        case R_MEMORY: snprintf(buf, size, "%.0f MB", t); break;
        case R_DISK:
        case R_SWAP: snprintf(buf, size, "100%% (%.0f KB)", t); break;
        default: snprintf(buf, size, "%.6g", t); break;
        }
}

/* Explicit shares of resource r over every slot must fit the machine. */
static int check_explicit(Layout *l, size_t r, double *ret_left) {
        double sum = 0, total = r == R_DISK || r == R_SWAP ? 1.0 : res_total(l, r);
        size_t n_askers = 0, first = 0;
        char what[96], has[64], knob[32];

        for (size_t i = 0; i < l->n_types; i++) {
                const SlotType *t = &l->types[i];

                if (t->automatic[r] || t->count == 0)
                        continue;
                sum += t->amount[r] * (double) t->count;
                if (t->amount[r] > 0 && n_askers++ == 0)
                        first = i;
        }
        if (sum <= total + 1e-9) {
                *ret_left = total - sum < 0 ? 0 : total - sum;
                return 0;
        }

        char msg[sizeof(l->err->msg)];
        size_t len = 0;

        for (size_t i = 0, k = 0; i < l->n_types; i++) {
                const SlotType *t = &l->types[i];
                char label[96];

                if (t->automatic[r] || t->count == 0 || t->amount[r] <= 0)
                        continue;
                type_label(t, label, sizeof(label));
                format_amount(l, r, t->amount[r] * (double) t->count, what, sizeof(what));
                if (len < sizeof(msg))
                        len += (size_t) snprintf(msg + len, sizeof(msg) - len, "%s%s", k == 0 ? "" :
                                                 k + 1 == n_askers ? " and " : ", ", label);
                if (n_askers > 1 && len < sizeof(msg))
                        len += (size_t) snprintf(msg + len, sizeof(msg) - len, " (%s)", what);
                k++;
        }
        format_amount(l, r, sum, what, sizeof(what));
        format_total(l, r, has, sizeof(has));
        blame_knob(l, &l->types[first], knob, sizeof(knob));
        return agent_slots_error(l->err, l->cfg, knob, -EINVAL, "%.300s %s for %s, the machine has %s", msg,
                                 n_askers > 1 ? "ask" : "asks", what, has);
}

/* The auto share of resource r: what is left split evenly. */
static int check_auto(Layout *l, size_t r, double left, double *ret_share) {
        int64_t n_auto = 0;
        size_t first = 0;
        char label[96], knob[32], has[64];
        double share;

        for (size_t i = l->n_types; i-- > 0;)
                if (l->types[i].automatic[r] && l->types[i].count > 0) {
                        first = i;
                        n_auto += l->types[i].count;
                }
        *ret_share = 0;
        if (n_auto == 0)
                return 0;
        switch (r) {
        case R_CPUS:
        case R_MEMORY:
                share = floor(left / (double) n_auto);
                if (share >= 1)
                        break;
                type_label(&l->types[first], label, sizeof(label));
                blame_knob(l, &l->types[first], knob, sizeof(knob));
                format_total(l, r, has, sizeof(has));
                return agent_slots_error(l->err, l->cfg, knob, -EINVAL,
                                         "the %lld slot%s with an automatic share of %s (%s%s) would get less "
                                         "than 1 %s each: the explicit shares leave %.0f of the machine's %s",
                                         (long long) n_auto, n_auto == 1 ? "" : "s", r == R_CPUS ? "CPUs" : "memory",
                                         label, n_auto > l->types[first].count ? ", ..." : "",
                                         r == R_CPUS ? "CPU" : "MB", left, has);
        case R_DISK:
        case R_SWAP:
                share = left / (double) n_auto;
                if (share > 0)
                        break;
                type_label(&l->types[first], label, sizeof(label));
                blame_knob(l, &l->types[first], knob, sizeof(knob));
                return agent_slots_error(l->err, l->cfg, knob, -EINVAL,
                                         "%s takes an automatic share of the %s, but the explicit shares "
                                         "leave none of it", label, res_name(l, r));
        default:
                share = left; /* handed out slot by slot below */
                break;
        }
        *ret_share = share;
        return 0;
}

/* ---- reading the types ---- */

static int read_count(Layout *l, const char *knob, int64_t def, int64_t *ret) {
        double d;
        int r;

        r = agent_knob_number(l->cfg, knob, l->m, &d, l->err);
        if (r == -ENOENT) {
                *ret = def;
                return 0;
        }
        if (r < 0)
                return r;
        if (d < 0 || d != floor(d) || d > AGENT_MAX_SLOTS)
                return agent_slots_error(l->err, l->cfg, knob, -EINVAL,
                                         "%s = %g: give a whole number of slots from 0 to %d", knob, d,
                                         AGENT_MAX_SLOTS);
        *ret = (int64_t) d;
        return 0;
}

/* "NUM_SLOTS_TYPE_12" -> 12; "SLOT_TYPE_0" -> 0; -1 for anything else. */
static long type_number(const char *name, const char *prefix) {
        size_t n = strlen(prefix);
        char *end;
        long v;

        if (strncasecmp(name, prefix, n) != 0 || !isdigit((unsigned char) name[n]))
                return -1;
        v = strtol(name + n, &end, 10);
        return *end || v < 0 || v > 1000000 ? -1 : v;
}

static int add_type(Layout *l, unsigned type, int64_t count) {
        SlotType *t = realloc(l->types, (l->n_types + 1) * sizeof(SlotType));

        if (!t)
                return agent_slots_error(l->err, NULL, NULL, -ENOMEM, "out of memory");
        l->types = t;
        l->types[l->n_types++] = (SlotType){ .type = type, .count = count };
        return 0;
}

static int cmp_type(const void *a, const void *b) {
        const SlotType *x = a, *y = b;

        return x->type < y->type ? -1 : x->type > y->type;
}

static int read_types(Layout *l) {
        _agent_cleanup_strv_ char **names = NULL;
        int64_t total = 0;
        int r;

        r = config_names(l->cfg, &names);
        if (r < 0)
                return agent_slots_error(l->err, NULL, NULL, r, "out of memory");
        for (char **n = names; *n; n++) {
                long type = type_number(*n, "NUM_SLOTS_TYPE_");
                int64_t count;

                if (type_number(*n, "SLOT_TYPE_") == 0 || type == 0)
                        return agent_slots_error(l->err, l->cfg, *n, -EINVAL,
                                                 "%s cannot be defined: type 0 is the even split of NUM_SLOTS", *n);
                if (type < 0)
                        continue;
                r = read_count(l, *n, 0, &count);
                if (r < 0)
                        return r;
                if (count == 0)
                        continue;
                total += count;
                if (total > AGENT_MAX_SLOTS)
                        return agent_slots_error(l->err, l->cfg, *n, -EINVAL,
                                                 "the NUM_SLOTS_TYPE_<N> ask for more than %d slots in all",
                                                 AGENT_MAX_SLOTS);
                r = add_type(l, (unsigned) type, count);
                if (r < 0)
                        return r;
        }
        if (l->n_types > 0) {
                qsort(l->types, l->n_types, sizeof(SlotType), cmp_type);
                return 0;
        }

        /* No types: NUM_SLOTS even slots, one CPU each by default. */
        int64_t count;

        r = read_count(l, "NUM_SLOTS", l->m->total.cpus, &count);
        if (r < 0)
                return r;
        if (count < 1)
                return agent_slots_error(l->err, l->cfg, "NUM_SLOTS", -EINVAL,
                                         "NUM_SLOTS=%lld: the machine needs at least one slot", (long long) count);
        if (count > l->m->total.cpus)
                return agent_slots_error(l->err, l->cfg, "NUM_SLOTS", -EINVAL,
                                         "NUM_SLOTS=%lld asks for more slots than the machine has CPUs (%lld)",
                                         (long long) count, (long long) l->m->total.cpus);
        return add_type(l, 0, count);
}

static int read_type(Layout *l, SlotType *t) {
        _cleanup_free_ char *text = NULL;
        char knob[64];
        int r;

        for (size_t i = 0; i < R_MAX; i++)
                t->share[i] = (Share){ SHARE_AUTO, 0 };
        if (t->type == 0)
                return 0;
        snprintf(knob, sizeof(knob), "SLOT_TYPE_%u_PARTITIONABLE", t->type);
        r = config_get_bool(l->cfg, knob, &t->partitionable, l->err);
        if (r == -ENOENT)
                t->partitionable = false;
        else if (r < 0)
                return r;
        snprintf(knob, sizeof(knob), "SLOT_TYPE_%u", t->type);
        r = agent_knob_text(l->cfg, knob, l->m, &text, l->err);
        if (r == -ENOENT)
                return 0; /* everything auto */
        if (r < 0)
                return r;
        for (size_t i = 0; i < R_MAX; i++)
                t->share[i] = (Share){ SHARE_UNSET, 0 };
        return parse_type(l, t, text);
}

/* ---- the layout ---- */

int agent_slots_layout(const Config *cfg, const AgentMachine *m, AgentSlotDef **ret, size_t *ret_n, ConfigError *err) {
        Layout l = { .cfg = cfg, .m = m, .err = err };
        double auto_share[R_MAX] = {}, left[R_MAX] = {};
        double remain_cap[AGENT_MAX_CUSTOM] = {};
        int64_t remain_cnt[AGENT_MAX_CUSTOM] = {};
        AgentSlotDef *defs = NULL;
        size_t n = 0, total = 0;
        int r;

        if (!cfg || !m || !ret || !ret_n || m->n_custom > AGENT_MAX_CUSTOM)
                return -EINVAL;
        l.n_res = R_STD + m->n_custom;
        r = read_types(&l);
        for (size_t i = 0; r >= 0 && i < l.n_types; i++) {
                r = read_type(&l, &l.types[i]);
                if (r >= 0)
                        type_amounts(&l, &l.types[i]);
                total += (size_t) l.types[i].count;
        }
        for (size_t res = 0; r >= 0 && res < l.n_res; res++) {
                r = check_explicit(&l, res, &left[res]);
                if (r >= 0)
                        r = check_auto(&l, res, left[res], &auto_share[res]);
        }
        if (r >= 0) {
                defs = calloc(total ? total : 1, sizeof(AgentSlotDef));
                if (!defs)
                        r = agent_slots_error(err, NULL, NULL, -ENOMEM, "out of memory");
        }
        if (r < 0) {
                free(l.types);
                return r;
        }

        for (size_t c = 0; c < m->n_custom; c++) {
                remain_cap[c] = left[R_STD + c];
                for (size_t i = 0; i < l.n_types; i++)
                        if (l.types[i].automatic[R_STD + c])
                                remain_cnt[c] += l.types[i].count;
        }
        for (size_t i = 0; i < l.n_types; i++) {
                const SlotType *t = &l.types[i];

                for (int64_t k = 0; k < t->count; k++, n++) {
                        AgentSlotDef *d = &defs[n];
                        double a;

                        d->id = (unsigned) n + 1;
                        d->type = t->type;
                        d->partitionable = t->partitionable;
                        d->res.cpus = (int64_t) (t->automatic[R_CPUS] ? auto_share[R_CPUS] : t->amount[R_CPUS]);
                        d->res.memory = (int64_t) (t->automatic[R_MEMORY] ? auto_share[R_MEMORY] : t->amount[R_MEMORY]);
                        d->disk_fraction = t->automatic[R_DISK] ? auto_share[R_DISK] : t->amount[R_DISK];
                        d->swap_fraction = t->automatic[R_SWAP] ? auto_share[R_SWAP] : t->amount[R_SWAP];
                        for (size_t c = 0; c < m->n_custom; c++) {
                                if (!t->automatic[R_STD + c]) {
                                        d->res.custom[c] = t->amount[R_STD + c];
                                        continue;
                                }
                                /* integral shares, rounded up: the first slots get the
                                 * excess; never more than is left (a total that is not
                                 * a whole number: the last slot gets the fraction) */
                                a = remain_cap[c] < 1 || remain_cnt[c] <= 0 ? 0 :
                                    fmin(ceil(remain_cap[c] / (double) remain_cnt[c] - 1e-9), remain_cap[c]);
                                d->res.custom[c] = a;
                                remain_cap[c] -= a;
                                remain_cnt[c]--;
                        }
                }
        }
        agent_slots_rescale(defs, n, m->total.disk, m->total.swap);
        free(l.types);
        *ret = defs;
        *ret_n = n;
        return 0;
}

void agent_slots_rescale(AgentSlotDef *defs, size_t n, int64_t total_disk, int64_t total_swap) {
        for (size_t i = 0; i < n; i++) {
                defs[i].res.disk = (int64_t) floor(defs[i].disk_fraction * (double) total_disk + 1e-6);
                defs[i].res.swap = (int64_t) floor(defs[i].swap_fraction * (double) total_swap + 1e-6);
        }
}
