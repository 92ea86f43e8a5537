/* SPDX-License-Identifier: Apache-2.0 */
/*
 * netinfo.c — the machine's network as ClassAd attributes, and whether a
 * change of it concerns the connection to the central manager (netinfo.h).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "netinfo.h"

#define SCOPE_LINK 253 /* RT_SCOPE_LINK */
#define SCOPE_HOST 254 /* RT_SCOPE_HOST */

static size_t addr_len(int family) {
        return family == AF_INET ? 4 : family == AF_INET6 ? 16 : 0;
}

void agent_net_state_clear(AgentNetState *st) {
        free(st->links);
        free(st->addrs);
        *st = (AgentNetState){ 0 };
}

static int cmp_link(const void *x, const void *y) {
        const AgentNetLink *a = x, *b = y;
        return (a->index > b->index) - (a->index < b->index);
}

static int cmp_addr(const void *x, const void *y) {
        const AgentNetAddr *a = x, *b = y;
        if (a->ifindex != b->ifindex)
                return (a->ifindex > b->ifindex) - (a->ifindex < b->ifindex);
        if (a->family != b->family)
                return a->family == AF_INET ? -1 : 1;
        int c = memcmp(a->addr, b->addr, sizeof a->addr);
        if (c)
                return c;
        return (a->prefixlen > b->prefixlen) - (a->prefixlen < b->prefixlen);
}

void agent_net_state_sort(AgentNetState *st) {
        if (st->n_links > 1)
                qsort(st->links, st->n_links, sizeof *st->links, cmp_link);
        if (st->n_addrs > 1)
                qsort(st->addrs, st->n_addrs, sizeof *st->addrs, cmp_addr);
}

const AgentNetLink *agent_net_link(const AgentNetState *st, int ifindex) {
        for (size_t i = 0; i < st->n_links; i++)
                if (st->links[i].index == ifindex)
                        return &st->links[i];
        return NULL;
}

const AgentNetAddr *agent_net_addr_find(const AgentNetState *st, int family, const uint8_t *addr) {
        size_t n = addr_len(family);
        for (size_t i = 0; n && i < st->n_addrs; i++) {
                const AgentNetAddr *a = &st->addrs[i];
                if (a->family == family && !a->dad_failed && memcmp(a->addr, addr, n) == 0)
                        return a;
        }
        return NULL;
}

int agent_net_addr_string(int family, const uint8_t *addr, char *buf, size_t len) {
        char tmp[INET6_ADDRSTRLEN];
        if (!addr_len(family))
                return -EAFNOSUPPORT;
        if (!inet_ntop(family, addr, tmp, sizeof tmp))
                return -errno;
        if (strlen(tmp) >= len)
                return -ENOBUFS;
        strcpy(buf, tmp);
        return 0;
}

int agent_net_sinful(int family, const uint8_t *addr, unsigned port, char *buf, size_t len) {
        char host[INET6_ADDRSTRLEN];
        int r = agent_net_addr_string(family, addr, host, sizeof host);
        if (r < 0)
                return r;
        if (port > 65535)
                return -EINVAL;
        int n = family == AF_INET6 ? snprintf(buf, len, "<[%s]:%u>", host, port)
                                   : snprintf(buf, len, "<%s:%u>", host, port);
        return n < 0 || (size_t) n >= len ? -ENOBUFS : 0;
}

/* How good an address is to advertise when no path names one: lower is better. */
static int addr_rank(const AgentNetState *st, const AgentNetAddr *a) {
        const AgentNetLink *l = agent_net_link(st, a->ifindex);
        int rank = 0;
        if (a->scope >= SCOPE_HOST || (l && l->loopback))
                rank += 8;
        else if (a->scope >= SCOPE_LINK)
                rank += 4;
        if (!l || !l->up)
                rank += 16;
        if (a->family != AF_INET)
                rank += 1;
        return rank;
}

int agent_net_my_address(const AgentNetState *st, int *ret_family, uint8_t ret_addr[16]) {
        const AgentNetPath *p = st->conn.known && st->conn.has_src     ? &st->conn
                                : st->route.known && st->route.has_src ? &st->route
                                                                       : NULL;
        if (p && addr_len(p->family)) {
                *ret_family = p->family;
                memcpy(ret_addr, p->src, 16);
                return 0;
        }
        const AgentNetAddr *best = NULL;
        int best_rank = 0;
        for (size_t i = 0; i < st->n_addrs; i++) {
                const AgentNetAddr *a = &st->addrs[i];
                if (a->dad_failed || !addr_len(a->family))
                        continue;
                int rank = addr_rank(st, a);
                /* Ties: the first (the addresses are sorted by interface index). */
                if (!best || rank < best_rank) {
                        best = a;
                        best_rank = rank;
                }
        }
        if (!best)
                return -ENOENT;
        *ret_family = best->family;
        memcpy(ret_addr, best->addr, 16);
        return 0;
}

/* A growing string. */
typedef struct Text {
        char *s;
        size_t len, cap;
        bool oom;
} Text;

static void text_add(Text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void text_add(Text *t, const char *fmt, ...) {
        if (t->oom)
                return;
        for (;;) {
                va_list ap;
                va_start(ap, fmt);
                int n = vsnprintf(t->s ? t->s + t->len : NULL, t->s ? t->cap - t->len : 0, fmt, ap);
                va_end(ap);
                if (n < 0) {
                        t->oom = true;
                        return;
                }
                if (t->s && t->len + (size_t) n < t->cap) {
                        t->len += (size_t) n;
                        return;
                }
                size_t cap = (t->cap ? t->cap : 256) * 2 + (size_t) n;
                char *s = realloc(t->s, cap);
                if (!s) {
                        t->oom = true;
                        return;
                }
                t->s = s;
                t->cap = cap;
        }
}

/* A ClassAd string literal of an interface name (which may hold any byte
 * but '/', NUL and white space): quotes and backslashes escaped, bytes
 * outside printable ASCII as '?'. */
static void text_add_name(Text *t, const char *name) {
        text_add(t, "\"");
        for (const char *c = name; *c; c++) {
                if (*c == '"' || *c == '\\')
                        text_add(t, "\\%c", *c);
                else
                        text_add(t, "%c", *c >= 0x20 && *c < 0x7f ? *c : '?');
        }
        text_add(t, "\"");
}

static char *interfaces_expr(const AgentNetState *st) {
        Text t = { 0 };
        text_add(&t, "{ ");
        for (size_t i = 0; i < st->n_links; i++) {
                const AgentNetLink *l = &st->links[i];
                text_add(&t, "%s[ Name = ", i ? ", " : "");
                text_add_name(&t, l->name);
                text_add(&t, "; Up = %s; Loopback = %s; Addresses = { ", l->up ? "true" : "false",
                         l->loopback ? "true" : "false");
                bool first = true;
                for (size_t j = 0; j < st->n_addrs; j++) {
                        const AgentNetAddr *a = &st->addrs[j];
                        char host[INET6_ADDRSTRLEN];
                        if (a->ifindex != l->index || a->dad_failed ||
                            agent_net_addr_string(a->family, a->addr, host, sizeof host) < 0)
                                continue;
                        text_add(&t, "%s\"%s/%u\"", first ? "" : ", ", host, a->prefixlen);
                        first = false;
                }
                text_add(&t, " } ]");
        }
        text_add(&t, " }");
        if (t.oom) {
                free(t.s);
                return NULL;
        }
        return t.s;
}

int agent_net_ad(const AgentNetState *st, ClassAd *ad) {
        int family, r;
        uint8_t addr[16];
        char sinful[AGENT_NET_SINFUL_MAX];
        if (agent_net_my_address(st, &family, addr) >= 0 &&
            agent_net_sinful(family, addr, 0, sinful, sizeof sinful) >= 0)
                r = classad_set_string(ad, "MyAddress", sinful);
        else
                r = classad_delete(ad, "MyAddress");
        if (r < 0 && r != -ENOENT)
                return r;

        const AgentNetPath *p = st->conn.known && st->conn.ifindex ? &st->conn
                                : st->route.known && st->route.ifindex ? &st->route
                                                                       : NULL;
        const AgentNetLink *l = p ? agent_net_link(st, p->ifindex) : NULL;
        r = l ? classad_set_string(ad, "ManagerInterface", l->name) : classad_delete(ad, "ManagerInterface");
        if (r < 0 && r != -ENOENT)
                return r;

        char *expr = interfaces_expr(st);
        if (!expr)
                return -ENOMEM;
        CaError err;
        r = classad_set_expr_text(ad, "NetworkInterfaces", expr, CA_MODE_OLD, &err);
        free(expr);
        return r < 0 ? r : 0;
}

static const char *link_name(const AgentNetState *st, int ifindex, char *buf, size_t len) {
        const AgentNetLink *l = agent_net_link(st, ifindex);
        if (l)
                return l->name;
        snprintf(buf, len, "interface %d", ifindex);
        return buf;
}

bool agent_net_concerns(const AgentNetState *st, char *why, size_t len) {
        const AgentNetPath *c = &st->conn;
        char host[INET6_ADDRSTRLEN] = "?", b1[32], b2[32];
        if (!c->known)
                return false;
        if (c->has_src) {
                agent_net_addr_string(c->family, c->src, host, sizeof host);
                if (!agent_net_addr_find(st, c->family, c->src)) {
                        snprintf(why, len, "its address %s is gone", host);
                        return true;
                }
        }
        if (c->ifindex) {
                const AgentNetLink *l = agent_net_link(st, c->ifindex);
                if (!l) {
                        snprintf(why, len, "its interface (index %d) is gone", c->ifindex);
                        return true;
                }
                if (!l->up) {
                        snprintf(why, len, "its interface %s is down", l->name);
                        return true;
                }
        }
        if (st->unreachable) {
                snprintf(why, len, "there is no route to the central manager any more");
                return true;
        }
        if (c->ifindex && st->route.known && st->route.ifindex && st->route.ifindex != c->ifindex) {
                snprintf(why, len, "the route to the central manager now leaves through %s, not %s",
                         link_name(st, st->route.ifindex, b1, sizeof b1), link_name(st, c->ifindex, b2, sizeof b2));
                return true;
        }
        return false;
}
