/* SPDX-License-Identifier: Apache-2.0 */
/*
 * authz.c — HTCondor's ALLOW_ and DENY_ lists (authz.h): the knobs, the
 * entries, matching, and the decision with the rule that made it.
 *
 * A list is kept as two copies of its text, cut into entries in place:
 * as written (for reasons) and in lower case (the patterns, compared
 * with a peer's names lowered once per check). Nothing is allocated
 * while checking.
 */
#define _GNU_SOURCE /* memmem */

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "authz.h"
#include "cleanup.h"

/* ASCII only, whatever the locale: names and patterns fold A-Z alone. */
static char lower(char c) {
        return c >= 'A' && c <= 'Z' ? (char) (c - 'A' + 'a') : c;
}

static char upper(char c) {
        return c >= 'a' && c <= 'z' ? (char) (c - 'a' + 'A') : c;
}

/* Knobs name the levels, and DEFAULT, which only lists have. */
#define LEVEL_DEFAULT GLEAN_AUTHZ_KNOB_DEFAULT
#define KNOB_LEVELS (GLEAN_AUTHZ_LEVELS + 1)
#define LEVEL_OWNER GLEAN_AUTHZ_KNOB_OWNER
#define LEVEL_NONE (-1)

#define SUBSYSTEM_MAX 48
#define KNOB_MAX (sizeof("ALLOW_ADVERTISE_STARTD_") + SUBSYSTEM_MAX)
#define UNAUTHENTICATED "unauthenticated@unmapped" /* HTCondor's UNAUTHENTICATED_FQU */

static const char *const level_names[KNOB_LEVELS] = {
        [GLEAN_AUTHZ_ALLOW] = "ALLOW",
        [GLEAN_AUTHZ_READ] = "READ",
        [GLEAN_AUTHZ_WRITE] = "WRITE",
        [GLEAN_AUTHZ_NEGOTIATOR] = "NEGOTIATOR",
        [GLEAN_AUTHZ_ADMINISTRATOR] = "ADMINISTRATOR",
        [GLEAN_AUTHZ_CONFIG] = "CONFIG",
        [GLEAN_AUTHZ_DAEMON] = "DAEMON",
        [GLEAN_AUTHZ_CLIENT] = "CLIENT",
        [GLEAN_AUTHZ_ADVERTISE_STARTD] = "ADVERTISE_STARTD",
        [GLEAN_AUTHZ_ADVERTISE_SCHEDD] = "ADVERTISE_SCHEDD",
        [GLEAN_AUTHZ_ADVERTISE_MASTER] = "ADVERTISE_MASTER",
        [LEVEL_DEFAULT] = "DEFAULT",
};

/* The level each one implies (condor_perms.cpp, aImpliedNext): having it
 * grants that one too, and so on up. LEVEL_NONE: none. */
static const int implies[GLEAN_AUTHZ_LEVELS] = {
        [GLEAN_AUTHZ_ALLOW] = LEVEL_NONE,
        [GLEAN_AUTHZ_READ] = LEVEL_NONE,
        [GLEAN_AUTHZ_WRITE] = GLEAN_AUTHZ_READ,
        [GLEAN_AUTHZ_NEGOTIATOR] = GLEAN_AUTHZ_READ,
        [GLEAN_AUTHZ_ADMINISTRATOR] = GLEAN_AUTHZ_WRITE,
        [GLEAN_AUTHZ_CONFIG] = GLEAN_AUTHZ_READ,
        [GLEAN_AUTHZ_DAEMON] = GLEAN_AUTHZ_WRITE,
        [GLEAN_AUTHZ_CLIENT] = LEVEL_NONE,
        [GLEAN_AUTHZ_ADVERTISE_STARTD] = GLEAN_AUTHZ_READ,
        [GLEAN_AUTHZ_ADVERTISE_SCHEDD] = GLEAN_AUTHZ_READ,
        [GLEAN_AUTHZ_ADVERTISE_MASTER] = GLEAN_AUTHZ_READ,
};

/* The level whose knobs a level falls back to when its own are unset
 * (condor_perms.cpp, aConfigNext and aConfigNextLegacy). */
static int fallback(int level, bool legacy) {
        switch (level) {
        case GLEAN_AUTHZ_ADVERTISE_STARTD:
        case GLEAN_AUTHZ_ADVERTISE_SCHEDD:
        case GLEAN_AUTHZ_ADVERTISE_MASTER:
                return GLEAN_AUTHZ_DAEMON;
        case GLEAN_AUTHZ_DAEMON:
                return legacy ? GLEAN_AUTHZ_WRITE : LEVEL_DEFAULT;
        case LEVEL_DEFAULT:
                return LEVEL_NONE;
        default:
                return LEVEL_DEFAULT;
        }
}

/* ---- lists ---- */

enum { HOST_ANY, HOST_LOCAL, HOST_NET, HOST_NAME };

typedef struct Entry {
        const char *text; /* as written */
        const char *user; /* lower-case pattern */
        const char *host; /* HOST_NAME: lower-case pattern */
        uint8_t kind;
        uint8_t bits;     /* HOST_NET: the prefix length */
        int family;       /* HOST_NET: AF_INET or AF_INET6 */
        uint8_t addr[16]; /* HOST_NET: the network, host bits zero */
} Entry;

typedef struct List {
        char knob[KNOB_MAX]; /* upper case: "ALLOW_WRITE", "DENY_READ_COLLECTOR" */
        char *source;        /* NULL: none given */
        char *text, *lower;  /* the list's text twice, entries NUL-terminated */
        Entry *e;
        size_t n;
} List;

struct GleanAuthz {
        char subsystem[SUBSYSTEM_MAX + 1]; /* upper case; "" none */
        bool legacy;
        List *lists[2][KNOB_LEVELS][2]; /* [deny][level][for the subsystem] */
};

static void list_free(List *l) {
        if (!l)
                return;
        free(l->source);
        free(l->text);
        free(l->lower);
        free(l->e);
        free(l);
}

/* s (n bytes) for a reason: at most 64 characters, '"', '\' and bytes
 * that are not printable ASCII escaped, "..." when cut. */
#define QUOTE_MAX (64 * 4 + 4)
static const char *quote(const char *s, size_t n, char buf[QUOTE_MAX]) {
        size_t k = 0, shown = 0;

        for (size_t i = 0; i < n; i++) {
                unsigned char c = (unsigned char) s[i];
                if (shown++ == 64) {
                        memcpy(buf + k, "...", 3);
                        k += 3;
                        break;
                }
                if (c == '"' || c == '\\') {
                        buf[k++] = '\\';
                        buf[k++] = (char) c;
                } else if (c < 0x20 || c >= 0x7f)
                        k += (size_t) snprintf(buf + k, 5, "\\x%02x", c);
                else
                        buf[k++] = (char) c;
        }
        buf[k] = 0;
        return buf;
}

static bool is_separator(char c) {
        return c == ',' || c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

/* Whether s..end holds only what an address is written with: digits and
 * dots, or hexadecimal digits, dots and at least one ':'. */
static bool looks_numeric(const char *s, const char *end) {
        bool colon = memchr(s, ':', (size_t) (end - s)) != NULL;

        if (s == end)
                return false;
        for (; s < end; s++)
                if (!(isdigit((unsigned char) *s) || *s == '.' || (colon && (*s == ':' || isxdigit((unsigned char) *s)))))
                        return false;
        return true;
}

/* The network addr/bits into e: an IPv4-mapped IPv6 network of /96 or
 * longer becomes the IPv4 one, host bits are cleared. */
static void set_net(Entry *e, int family, const uint8_t *addr, unsigned bits) {
        static const uint8_t mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

        e->kind = HOST_NET;
        memset(e->addr, 0, sizeof e->addr);
        if (family == AF_INET6 && bits >= 96 && memcmp(addr, mapped, 12) == 0) {
                family = AF_INET;
                addr += 12;
                bits -= 96;
        }
        e->family = family;
        e->bits = (uint8_t) bits;
        memcpy(e->addr, addr, family == AF_INET ? 4 : 16);
        for (unsigned i = bits; i < 128; i++)
                e->addr[i / 8] &= (uint8_t) ~(0x80u >> (i % 8));
}

/* "a.b.c.d/N", "a.b.c.d/m.m.m.m", "v6/N" (net: NUL-terminated, cut here). */
static int parse_net(Entry *e, char *net, char *why, size_t whylen) {
        char *slash = strchr(net, '/'), *mask = slash + 1;
        uint8_t addr[16], m4[4];
        int family;
        unsigned bits = 0, max;

        *slash = 0;
        if (!*mask)
                return glean_why(-EBADMSG, why, whylen, "no netmask after the '/'");
        if (inet_pton(AF_INET, net, addr) == 1)
                family = AF_INET, max = 32;
        else if (inet_pton(AF_INET6, net, addr) == 1)
                family = AF_INET6, max = 128;
        else
                return glean_why(-EBADMSG, why, whylen, "the network %s is not an IP address", net);
        if (strspn(mask, "0123456789") == strlen(mask)) {
                for (const char *p = mask; *p && bits <= 1000; p++)
                        bits = bits * 10 + (unsigned) (*p - '0');
                if (bits > max)
                        return glean_why(-EBADMSG, why, whylen, "the netmask is longer than %u bits", max);
        } else if (inet_pton(AF_INET, mask, m4) == 1) {
                if (family != AF_INET)
                        return glean_why(-EBADMSG, why, whylen, "a dotted netmask is for IPv4 networks only");
                uint32_t v = (uint32_t) m4[0] << 24 | (uint32_t) m4[1] << 16 | (uint32_t) m4[2] << 8 | m4[3];
                while (bits < 32 && (v & (0x80000000u >> bits)))
                        bits++;
                if (bits < 32 && (v << bits) != 0)
                        return glean_why(-EBADMSG, why, whylen,
                                         "the netmask %s is not ones then zeros (255.255.192.0 is one)", mask);
        } else
                return glean_why(-EBADMSG, why, whylen, "the netmask %s is neither a number of bits nor dotted", mask);
        set_net(e, family, addr, bits);
        return 0;
}

/* HTCondor's IPv4 networks without '/' (is_ipv4_addr_implementation):
 * up to four numbers, a trailing "*", ".*" or "." dropped, the numbers
 * given are the network ("192.168.*" and "192.168" are 192.168.0.0/16). */
static int parse_ipv4(Entry *e, const char *host, char *why, size_t whylen) {
        static const char form[] = "not an IPv4 address or network (192.0.2.7, 192.0.2.*, 192.0.*)";
        size_t len = strlen(host);
        uint8_t addr[4] = {};
        unsigned parts = 0;

        if (len > 1 && (host[len - 1] == '*' || host[len - 1] == '.'))
                len -= host[len - 2] == '.' ? 2 : 1;
        for (size_t i = 0; i < len;) {
                unsigned v = 0, digits = 0;
                while (i < len && isdigit((unsigned char) host[i]) && digits < 4)
                        v = v * 10 + (unsigned) (host[i++] - '0'), digits++;
                if (i < len && host[i] == '*')
                        return glean_why(-EBADMSG, why, whylen, "a '*' may only end an IPv4 address, as in 192.168.*");
                if (digits == 0 || digits > 3 || v > 255 || parts == 4)
                        return glean_why(-EBADMSG, why, whylen, form);
                addr[parts++] = (uint8_t) v;
                if (i < len && host[i++] != '.')
                        return glean_why(-EBADMSG, why, whylen, form);
                if (i == len && host[i - 1] == '.')
                        return glean_why(-EBADMSG, why, whylen, form);
        }
        if (parts == 0)
                return glean_why(-EBADMSG, why, whylen, form);
        set_net(e, AF_INET, addr, 8 * parts);
        return 0;
}

/* An IPv6 address, or HTCondor's "2001:db8:*": the groups before a '*'
 * that follows the last ':' and ends the text, 16 bits each. */
static int parse_ipv6(Entry *e, const char *host, char *why, size_t whylen) {
        const char *star = strchr(host, '*');
        uint8_t addr[16];
        char buf[INET6_ADDRSTRLEN + 2];
        size_t len = strlen(host);

        if (!star) {
                if (inet_pton(AF_INET6, host, addr) != 1)
                        return glean_why(-EBADMSG, why, whylen, "not an IPv6 address (a host:port? give the host alone)");
                set_net(e, AF_INET6, addr, 128);
                return 0;
        }
        if (star != strrchr(host, ':') + 1 || star[1] != 0)
                return glean_why(-EBADMSG, why, whylen,
                                 "a '*' in an IPv6 address may only end it, after a ':', as in 2001:db8:*");
        unsigned colons = 0;
        for (const char *p = host; *p; p++)
                colons += *p == ':';
        if (len >= sizeof buf || colons > 7)
                return glean_why(-EBADMSG, why, whylen, "not an IPv6 network");
        memcpy(buf, host, len + 1);
        buf[len - 1] = ':';
        if (inet_pton(AF_INET6, buf, addr) != 1)
                return glean_why(-EBADMSG, why, whylen, "not an IPv6 network (2001:db8:* is one)");
        set_net(e, AF_INET6, addr, 16 * colons);
        return 0;
}

/* The host part (lower case, NUL-terminated, may be cut). */
static int parse_host(Entry *e, char *host, char *why, size_t whylen) {
        if (!*host)
                return glean_why(-EBADMSG, why, whylen, "nothing after the '/'");
        if (strcmp(host, "*") == 0 || strcmp(host, "*/*") == 0) {
                e->kind = HOST_ANY;
                return 0;
        }
        if (strcmp(host, "{:local_ips:}") == 0) {
                e->kind = HOST_LOCAL;
                return 0;
        }
        if (strpbrk(host, "<>?"))
                return glean_why(-EBADMSG, why, whylen,
                                 "this looks like a daemon's contact address (a Sinful string), which says how to "
                                 "reach it, not where it connects from: give its host name or IP address");
        if (strchr(host, '/'))
                return parse_net(e, host, why, whylen);
        if (strchr(host, ':'))
                return parse_ipv6(e, host, why, whylen);
        if (strspn(host, "0123456789.*") == strlen(host) && strpbrk(host, "0123456789"))
                return parse_ipv4(e, host, why, whylen);
        for (const char *p = host; *p; p++) {
                unsigned char c = (unsigned char) *p;
                if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_' || c == '*')) {
                        if (c > 0x20 && c < 0x7f)
                                return glean_why(-EBADMSG, why, whylen, "'%c' cannot be in a host name", c);
                        return glean_why(-EBADMSG, why, whylen, "the byte 0x%02x cannot be in a host name", c);
                }
        }
        e->kind = HOST_NAME;
        e->host = host;
        return 0;
}

/* One entry: text as written, low its lower-case copy (cut in place).
 * HTCondor's split (IpVerify::split_entry): no '/': a user when it holds
 * '@', else a host; one '/': user/host when an '@' comes before it or the
 * entry starts with '*', a network when an address does; two: user/net. */
static int parse_entry(Entry *e, const char *text, char *low, char *why, size_t whylen) {
        char *slash = strchr(low, '/'), *user, *host;

        *e = (Entry){ .text = text };
        if (low[0] == '+')
                return glean_why(-EBADMSG, why, whylen, "netgroups (+name) are not supported");
        if (!slash) {
                bool is_user = strchr(low, '@') != NULL;
                user = is_user ? low : "*";
                host = is_user ? "*" : low;
        } else {
                char *at = strchr(low, '@');
                if (!strchr(slash + 1, '/') && !(at && at < slash) && low[0] != '*' && looks_numeric(low, slash)) {
                        user = "*";
                        host = low;
                } else {
                        *slash = 0;
                        user = low;
                        host = slash + 1;
                }
        }
        if (!*user)
                return glean_why(-EBADMSG, why, whylen, "nothing before the '/'");
        for (const char *p = user; *p; p++)
                if ((unsigned char) *p < 0x20 || *p == 0x7f)
                        return glean_why(-EBADMSG, why, whylen, "the byte 0x%02x cannot be in a user name",
                                         (unsigned char) *p);
        if (!strpbrk(user, "@*")) {
                char q[QUOTE_MAX];
                quote(text + (user - low), strlen(user), q);
                return glean_why(-EBADMSG, why, whylen, "the user \"%s\" has no @domain: write %s@DOMAIN, %s@* or *", q,
                                 q, q);
        }
        e->user = user;
        return parse_host(e, (char *) host, why, whylen);
}

/* Why-prefix "source: KNOB: " */
static int list_error(int r, const char *knob, const char *source, const char *entry, size_t n, const char *reason,
                      char *why, size_t whylen) {
        char q[QUOTE_MAX];
        const char *sep = source && *source ? ": " : "";

        if (!entry)
                return glean_why(r, why, whylen, "%s%s%s: %s", source ? source : "", sep, knob, reason);
        return glean_why(r, why, whylen, "%s%s%s: \"%s\": %s", source ? source : "", sep, knob, quote(entry, n, q),
                         reason);
}

static int list_parse(const char *knob, const char *text, const char *source, List **ret, char *why,
                      size_t whylen) {
        size_t len = strlen(text), n = 0;
        List *l;

        /* count first: the bounds before any allocation */
        for (size_t i = 0; i < len;) {
                while (i < len && is_separator(text[i]))
                        i++;
                size_t start = i;
                while (i < len && !is_separator(text[i]))
                        i++;
                if (i == start)
                        break;
                if (i - start > GLEAN_AUTHZ_MAX_ENTRY) {
                        char reason[64];
                        snprintf(reason, sizeof reason, "longer than %d bytes", GLEAN_AUTHZ_MAX_ENTRY);
                        return list_error(-E2BIG, knob, source, text + start, i - start, reason, why, whylen);
                }
                if (++n > GLEAN_AUTHZ_MAX_ENTRIES) {
                        char reason[64];
                        snprintf(reason, sizeof reason, "more than %d entries", GLEAN_AUTHZ_MAX_ENTRIES);
                        return list_error(-E2BIG, knob, source, NULL, 0, reason, why, whylen);
                }
        }
        l = calloc(1, sizeof *l);
        if (!l)
                return -ENOMEM;
        snprintf(l->knob, sizeof l->knob, "%s", knob);
        l->text = strdup(text);
        l->lower = strdup(text);
        l->e = calloc(n ? n : 1, sizeof *l->e);
        if (source)
                l->source = strdup(source);
        if (!l->text || !l->lower || !l->e || (source && !l->source)) {
                list_free(l);
                return -ENOMEM;
        }
        for (size_t i = 0; i < len; i++) {
                l->lower[i] = lower(l->lower[i]);
                if (is_separator(text[i]))
                        l->text[i] = l->lower[i] = 0;
        }
        for (size_t i = 0; i < len;) {
                while (i < len && !l->text[i])
                        i++;
                if (i == len)
                        break;
                char reason[512];
                size_t start = i, elen = strlen(l->text + start);
                int r = parse_entry(&l->e[l->n], l->text + start, l->lower + start, reason, sizeof reason);
                if (r < 0) {
                        r = list_error(r, knob, source, text + start, elen, reason, why, whylen);
                        list_free(l);
                        return r;
                }
                l->n++;
                i = start + elen;
        }
        *ret = l;
        return 0;
}

/* ---- the knobs ---- */

/* "ALLOW_WRITE_COLLECTOR": deny false, level WRITE, subsystem "COLLECTOR"
 * (NULL: none); LEVEL_OWNER for ALLOW_OWNER and DENY_OWNER. -EINVAL. */
static int parse_knob(const char *knob, bool *ret_deny, int *ret_level, const char **ret_subsystem) {
        const char *rest;
        int level = LEVEL_NONE;
        size_t best = 0;

        if (strncasecmp(knob, "ALLOW_", 6) == 0)
                *ret_deny = false, rest = knob + 6;
        else if (strncasecmp(knob, "DENY_", 5) == 0)
                *ret_deny = true, rest = knob + 5;
        else
                return -EINVAL;
        /* the longest level name that ends at '\0' or '_' (ADVERTISE_STARTD before a subsystem) */
        for (int i = GLEAN_AUTHZ_READ; i <= KNOB_LEVELS; i++) {
                const char *name = i == KNOB_LEVELS ? "OWNER" : level_names[i];
                size_t n = strlen(name);
                if (n > best && strncasecmp(rest, name, n) == 0 && (rest[n] == 0 || rest[n] == '_'))
                        level = i == KNOB_LEVELS ? LEVEL_OWNER : i, best = n;
        }
        if (level == LEVEL_NONE)
                return -EINVAL;
        rest += best;
        *ret_subsystem = NULL;
        if (*rest == '_') {
                size_t n = strlen(++rest);
                if (n == 0 || n > SUBSYSTEM_MAX || strspn(rest, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                                                "0123456789_") != n)
                        return -EINVAL;
                *ret_subsystem = rest;
        }
        *ret_level = level;
        return 0;
}

int glean_authz_knob(const char *name, int *ret_level, bool *ret_deny, const char **ret_subsystem) {
        bool deny = false;
        int level = LEVEL_NONE;
        const char *sub = NULL;
        int r = name ? parse_knob(name, &deny, &level, &sub) : -EINVAL;

        if (r < 0)
                return r;
        *ret_level = level;
        *ret_deny = deny;
        *ret_subsystem = sub;
        return 0;
}

static bool valid_subsystem(const char *s) {
        size_t n = strlen(s);
        return n > 0 && n <= SUBSYSTEM_MAX &&
               strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_") == n;
}

int glean_authz_new(const char *subsystem, GleanAuthz **ret) {
        GleanAuthz *a;

        if (subsystem && !valid_subsystem(subsystem))
                return -EINVAL;
        a = calloc(1, sizeof *a);
        if (!a)
                return -ENOMEM;
        for (size_t i = 0; subsystem && subsystem[i]; i++)
                a->subsystem[i] = upper(subsystem[i]);
        *ret = a;
        return 0;
}

void glean_authz_free(GleanAuthz *a) {
        if (!a)
                return;
        for (int d = 0; d < 2; d++)
                for (int l = 0; l < KNOB_LEVELS; l++)
                        for (int s = 0; s < 2; s++)
                                list_free(a->lists[d][l][s]);
        free(a);
}

void glean_authz_set_legacy(GleanAuthz *a, bool legacy) {
        a->legacy = legacy;
}

int glean_authz_set(GleanAuthz *a, const char *knob, const char *text, const char *source, char *why,
                    size_t whylen) {
        const char *src = source && *source ? source : "", *sep = *src ? ": " : "", *subsystem = NULL;
        char name[KNOB_MAX];
        bool deny = false;
        int level = LEVEL_NONE, r;
        List *l = NULL;

        if (!a || !knob)
                return -EINVAL;
        if (strlen(knob) >= sizeof name || parse_knob(knob, &deny, &level, &subsystem) < 0) {
                char q[QUOTE_MAX];
                return glean_why(-EINVAL, why, whylen,
                                 "%s%s%s: not an authorization knob (ALLOW_ or DENY_, then READ, WRITE, "
                                 "ADMINISTRATOR, CONFIG, DAEMON, NEGOTIATOR, CLIENT, ADVERTISE_STARTD, "
                                 "ADVERTISE_SCHEDD, ADVERTISE_MASTER or DEFAULT, perhaps then _SUBSYSTEM)",
                                 src, sep, quote(knob, strlen(knob), q));
        }
        for (size_t i = 0; i <= strlen(knob); i++)
                name[i] = upper(knob[i]);
        if (level == LEVEL_OWNER)
                return glean_why(GLEAN_AUTHZ_IGNORED, why, whylen,
                                 "%s%s%s: HTCondor has no OWNER level any more (its commands need ADMINISTRATOR): "
                                 "ignored",
                                 src, sep, name);
        if (subsystem && strcasecmp(subsystem, a->subsystem) != 0) {
                if (!a->subsystem[0])
                        return glean_why(GLEAN_AUTHZ_IGNORED, why, whylen,
                                         "%s%s%s: for the %s subsystem only, and this is none: ignored", src, sep,
                                         name, name + strlen(name) - strlen(subsystem));
                return glean_why(GLEAN_AUTHZ_IGNORED, why, whylen, "%s%s%s: for the %s subsystem, not %s: ignored",
                                 src, sep, name, name + strlen(name) - strlen(subsystem), a->subsystem);
        }
        List **slot = &a->lists[deny][level][subsystem != NULL];
        if (!text) {
                list_free(*slot);
                *slot = NULL;
                return 0;
        }
        r = list_parse(name, text, source, &l, why, whylen);
        if (r < 0)
                return r;
        list_free(*slot);
        *slot = l;
        return 0;
}

int glean_authz_level_from_name(const char *name) {
        for (int i = 0; name && i < GLEAN_AUTHZ_LEVELS; i++)
                if (strcasecmp(name, level_names[i]) == 0)
                        return i;
        return -EINVAL;
}

const char *glean_authz_level_name(GleanAuthzLevel level) {
        return (unsigned) level < GLEAN_AUTHZ_LEVELS ? level_names[level] : NULL;
}

/* ---- peers ---- */

static void normalize(int *family, uint8_t addr[16]) {
        static const uint8_t mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

        if (*family == AF_INET6 && memcmp(addr, mapped, 12) == 0) {
                memmove(addr, addr + 12, 4);
                memset(addr + 4, 0, 12);
                *family = AF_INET;
        }
}

int glean_authz_peer_sockaddr(GleanAuthzPeer *peer, const struct sockaddr *sa, socklen_t len) {
        if (!peer || !sa || len < (socklen_t) sizeof(sa_family_t))
                return -EINVAL;
        switch (sa->sa_family) {
        case AF_INET:
                if (len < (socklen_t) sizeof(struct sockaddr_in))
                        return -EINVAL;
                memset(peer->addr, 0, sizeof peer->addr);
                memcpy(peer->addr, &((const struct sockaddr_in *) sa)->sin_addr, 4);
                peer->family = AF_INET;
                return 0;
        case AF_INET6:
                if (len < (socklen_t) sizeof(struct sockaddr_in6))
                        return -EINVAL;
                memcpy(peer->addr, &((const struct sockaddr_in6 *) sa)->sin6_addr, 16);
                peer->family = AF_INET6;
                normalize(&peer->family, peer->addr);
                return 0;
        case AF_UNIX:
                memset(peer->addr, 0, sizeof peer->addr);
                peer->family = AF_UNSPEC;
                peer->local = true;
                return 0;
        default:
                return -EAFNOSUPPORT;
        }
}

int glean_authz_peer_address(GleanAuthzPeer *peer, const char *text) {
        char buf[INET6_ADDRSTRLEN + 2];
        size_t len = text ? strlen(text) : 0;
        uint8_t addr[16] = {};

        if (!peer || len == 0 || len >= sizeof buf)
                return -EINVAL;
        if (text[0] == '[') {
                if (len < 3 || text[len - 1] != ']')
                        return -EINVAL;
                memcpy(buf, text + 1, len - 2);
                buf[len - 2] = 0;
                if (inet_pton(AF_INET6, buf, addr) != 1)
                        return -EINVAL;
                peer->family = AF_INET6;
        } else if (inet_pton(AF_INET, text, addr) == 1)
                peer->family = AF_INET;
        else if (inet_pton(AF_INET6, text, addr) == 1)
                peer->family = AF_INET6;
        else
                return -EINVAL;
        memcpy(peer->addr, addr, 16);
        normalize(&peer->family, peer->addr);
        return 0;
}

/* ---- matching ---- */

/* The peer as matched: names in lower case, the address normalized. */
typedef struct View {
        char user[GLEAN_AUTHZ_MAX_NAME + 1], host[GLEAN_AUTHZ_MAX_NAME + 1];
        size_t user_len, host_len;
        bool has_host, local;
        int family;
        uint8_t addr[16];
} View;

/* Whether s (n bytes) matches pat, '*' standing for any run of bytes:
 * the text before the first '*' must start s, the text after the last
 * end it, and the pieces between are found left to right, each where it
 * first occurs (the earliest place leaves the most room for the rest, so
 * no other place need ever be tried): linear in pat and s. */
static bool glob_match(const char *pat, const char *s, size_t n) {
        const char *first = strchr(pat, '*'), *last, *cur, *end;
        size_t pre, post;

        if (!first)
                return strlen(pat) == n && memcmp(pat, s, n) == 0;
        last = strrchr(pat, '*');
        pre = (size_t) (first - pat);
        post = strlen(last + 1);
        if (pre + post > n || memcmp(pat, s, pre) != 0 || memcmp(last + 1, s + n - post, post) != 0)
                return false;
        cur = s + pre;
        end = s + n - post;
        for (const char *p = first; p != last;) {
                const char *q = strchr(p + 1, '*');
                size_t len = (size_t) (q - p - 1);
                if (len > 0) {
                        const char *found = memmem(cur, (size_t) (end - cur), p + 1, len);
                        if (!found)
                                return false;
                        cur = found + len;
                }
                p = q;
        }
        return true;
}

static bool prefix_equal(const uint8_t *a, const uint8_t *b, unsigned bits) {
        unsigned whole = bits / 8, rest = bits % 8;

        if (memcmp(a, b, whole) != 0)
                return false;
        if (rest == 0)
                return true;
        uint8_t mask = (uint8_t) (0xff00u >> rest);
        return (a[whole] & mask) == (b[whole] & mask);
}

static bool entry_match(const Entry *e, const View *v) {
        if (!glob_match(e->user, v->user, v->user_len))
                return false;
        switch (e->kind) {
        case HOST_ANY:
                return true;
        case HOST_LOCAL:
                return v->local;
        case HOST_NET:
                return v->family == e->family && prefix_equal(e->addr, v->addr, e->bits);
        default:
                return v->has_host && glob_match(e->host, v->host, v->host_len);
        }
}

/* The first entry of l that matches, or l->n. */
static size_t list_match(const List *l, const View *v) {
        size_t i = 0;
        while (i < l->n && !entry_match(&l->e[i], v))
                i++;
        return i;
}

/* The list that applies to level (authz.h): the subsystem's, the plain
 * one, then those of the level it falls back to. ALLOW_CLIENT has a
 * built-in value ("*", param_info.in), so HTCondor never looks further
 * for it: NULL here, which verify() reads as that "*". */
static const List *effective(const GleanAuthz *a, bool deny, int level) {
        for (int l = level; l != LEVEL_NONE; l = fallback(l, a->legacy)) {
                if (a->lists[deny][l][1])
                        return a->lists[deny][l][1];
                if (a->lists[deny][l][0])
                        return a->lists[deny][l][0];
                if (!deny && l == GLEAN_AUTHZ_CLIENT)
                        break;
        }
        return NULL;
}

/* ---- the decision ---- */

enum { BY_OPEN, BY_CLIENT_DEFAULT, BY_ENTRY, BY_UNSET, BY_NOT_LISTED };

typedef struct Verdict {
        bool allowed;
        int how;
        int level;       /* whose rule decided */
        const List *list; /* BY_ENTRY, BY_NOT_LISTED (NULL: none set) */
        size_t entry;
} Verdict;

static Verdict verify(const GleanAuthz *a, int level, const View *v) {
        const List *allow, *deny;
        size_t i;

        if (level == GLEAN_AUTHZ_ALLOW)
                return (Verdict){ .allowed = true, .how = BY_OPEN, .level = level };
        allow = effective(a, false, level);
        deny = effective(a, true, level);
        if (!allow && level != GLEAN_AUTHZ_READ && level != GLEAN_AUTHZ_WRITE && level != GLEAN_AUTHZ_CLIENT)
                return (Verdict){ .how = BY_UNSET, .level = level };
        if (deny && (i = list_match(deny, v)) < deny->n)
                return (Verdict){ .how = BY_ENTRY, .level = level, .list = deny, .entry = i };
        if (!allow && level == GLEAN_AUTHZ_CLIENT)
                return (Verdict){ .allowed = true, .how = BY_CLIENT_DEFAULT, .level = level };
        if (allow && (i = list_match(allow, v)) < allow->n)
                return (Verdict){ .allowed = true, .how = BY_ENTRY, .level = level, .list = allow, .entry = i };
        /* the levels that imply this one, in HTCondor's order */
        for (int p = 0; p < GLEAN_AUTHZ_LEVELS; p++) {
                if (implies[p] != level)
                        continue;
                Verdict up = verify(a, p, v);
                if (up.allowed)
                        return up;
        }
        return (Verdict){ .how = BY_NOT_LISTED, .level = level, .list = allow };
}

/* Appends to why, keeping it terminated. */
typedef struct Out {
        char *buf;
        size_t len, at;
} Out;

__attribute__((format(printf, 2, 3))) static void out(Out *o, const char *fmt, ...) {
        va_list ap;

        if (!o->buf || o->len == 0 || o->at >= o->len - 1)
                return;
        va_start(ap, fmt);
        int n = vsnprintf(o->buf + o->at, o->len - o->at, fmt, ap);
        va_end(ap);
        if (n > 0)
                o->at = o->at + (size_t) n < o->len ? o->at + (size_t) n : o->len - 1;
}

static void out_source(Out *o, const List *l) {
        if (l->source && *l->source)
                out(o, " of %s", l->source);
}

/* ", and neither ADMINISTRATOR nor DAEMON access (which imply WRITE) is allowed" */
static void out_implied_by(Out *o, int level) {
        int by[GLEAN_AUTHZ_LEVELS], n = 0;

        for (int p = 0; p < GLEAN_AUTHZ_LEVELS; p++)
                if (implies[p] == level)
                        by[n++] = p;
        if (n == 0)
                return;
        out(o, n == 2 ? ", and neither " : ", and none of ");
        for (int k = 0; k < n; k++)
                out(o, "%s%s", k == 0 ? "" : n == 2 ? " nor " : ", ", level_names[by[k]]);
        out(o, " access (which imply%s %s) is allowed", n == 1 ? "s" : "", level_names[level]);
}

static void out_verdict(Out *o, const GleanAuthz *a, int asked, const Verdict *v) {
        char q[QUOTE_MAX];

        switch (v->how) {
        case BY_OPEN:
                out(o, "the ALLOW level is open to everyone");
                return;
        case BY_CLIENT_DEFAULT:
                out(o, "allowed: ALLOW_CLIENT is not set, and its default is *");
                return;
        case BY_ENTRY: {
                const Entry *e = &v->list->e[v->entry];
                out(o, "%s by %s entry \"%s\"", v->allowed ? "allowed" : "denied", v->list->knob,
                    quote(e->text, strlen(e->text), q));
                out_source(o, v->list);
                if (v->level != asked) {
                        out(o, " (%s", level_names[v->level]);
                        for (int l = implies[v->level]; l != LEVEL_NONE; l = l == asked ? LEVEL_NONE : implies[l])
                                out(o, " implies %s%s", level_names[l], l == asked ? "" : ", which");
                        out(o, ")");
                }
                return;
        }
        case BY_UNSET:
                out(o, "ALLOW_%s is not set", level_names[asked]);
                for (int l = fallback(asked, a->legacy), k = 0; l != LEVEL_NONE; l = fallback(l, a->legacy), k++)
                        out(o, "%sALLOW_%s", k == 0 ? " (nor " : ", ", level_names[l]);
                if (fallback(asked, a->legacy) != LEVEL_NONE)
                        out(o, ")");
                out(o, ": nobody has %s access", level_names[asked]);
                return;
        default:
                if (v->list) {
                        out(o, "not in %s (%zu entr%s)", v->list->knob, v->list->n, v->list->n == 1 ? "y" : "ies");
                        out_source(o, v->list);
                } else
                        out(o, "ALLOW_%s is not set", level_names[asked]);
                out_implied_by(o, asked);
                return;
        }
}

/* dst = src in lower case (n < sizeof dst, checked by the caller). */
static void lower_copy(char *dst, const char *src, size_t n) {
        for (size_t i = 0; i < n; i++)
                dst[i] = lower(src[i]);
        dst[n] = 0;
}

int glean_authz_check(const GleanAuthz *a, GleanAuthzLevel level, const GleanAuthzPeer *peer, char *why,
                      size_t whylen) {
        Out o = { why, whylen, 0 };
        View v;
        const char *user;

        if (why && whylen)
                why[0] = 0;
        if (!a || !peer || (unsigned) level >= GLEAN_AUTHZ_LEVELS ||
            (peer->family != AF_UNSPEC && peer->family != AF_INET && peer->family != AF_INET6))
                return glean_why(-EINVAL, why, whylen, "not a level or not a peer");
        if (level == GLEAN_AUTHZ_ALLOW)
                return glean_why(0, why, whylen, "the ALLOW level is open to everyone");
        user = peer->user && *peer->user && strcmp(peer->user, "unauthenticated") != 0 ? peer->user
                                                                                      : UNAUTHENTICATED;
        v.user_len = strlen(user);
        v.has_host = peer->host != NULL;
        v.host_len = v.has_host ? strlen(peer->host) : 0;
        if (v.user_len > GLEAN_AUTHZ_MAX_NAME || v.host_len > GLEAN_AUTHZ_MAX_NAME)
                return glean_why(-EACCES, why, whylen, "denied: the peer's %s name is longer than %d bytes",
                                 v.user_len > GLEAN_AUTHZ_MAX_NAME ? "user" : "host", GLEAN_AUTHZ_MAX_NAME);
        lower_copy(v.user, user, v.user_len);
        lower_copy(v.host, v.has_host ? peer->host : "", v.host_len);
        v.local = peer->local;
        v.family = peer->family;
        memcpy(v.addr, peer->addr, sizeof v.addr);
        normalize(&v.family, v.addr);

        Verdict d = verify(a, (int) level, &v);
        out_verdict(&o, a, (int) level, &d);
        return d.allowed ? 0 : -EACCES;
}
