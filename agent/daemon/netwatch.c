/* SPDX-License-Identifier: Apache-2.0 */
/*
 * netwatch.c — glean-agent's view of the machine's network, from
 * rtnetlink through libnl: the interfaces and their addresses, and the
 * route to the central manager, advertised in every slot ad (MyAddress,
 * NetworkInterfaces, ManagerInterface: agent/netinfo.h) and kept current
 * by netlink notifications (RTNLGRP_LINK, RTNLGRP_IPV4_IFADDR,
 * RTNLGRP_IPV6_IFADDR, RTNLGRP_IPV4_ROUTE, RTNLGRP_IPV6_ROUTE) read in the
 * event loop.
 *
 * A notification only says that something changed: 100 ms later (a burst
 * of them, a laptop joining a network, is one refresh) the links and the
 * addresses are dumped again and the route to the central manager looked
 * up again, on a second socket. That also covers notifications lost to an
 * overrun socket (ENOBUFS). Then:
 *   - when the change concerns the connection to the central manager (its
 *     address or interface gone or down, no route, another interface:
 *     agent_net_concerns()), the connection is closed and made again;
 *   - when the attributes changed, every slot's ad gets them and is
 *     published again;
 *   - when they changed while the agent waits to dial again, it dials now
 *     (a network that came back is used at once, not after the back-off).
 *
 * Never fatal: without netlink (a seccomp filter, a kernel without it) the
 * agent runs on, advertising the local address of its connection only.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include <linux/if_addr.h>
#include <linux/rtnetlink.h>
#include <netlink/addr.h>
#include <netlink/cache.h>
#include <netlink/netlink.h>
#include <netlink/route/addr.h>
#include <netlink/route/link.h>
#include <netlink/route/nexthop.h>
#include <netlink/route/route.h>
#include <netlink/socket.h>

#include "common/timer.h"
#include "daemon.h"
#include "netinfo.h"

#ifndef IFF_LOWER_UP
#define IFF_LOWER_UP 0x10000 /* <linux/if.h>, which clashes with <net/if.h> */
#endif

#define SETTLE_USEC 100000ull /* from the first notification to the refresh */

struct NetWatch {
        Agent *agent;
        struct nl_sock *events; /* notifications */
        struct nl_sock *req;    /* dumps and route lookups */
        sd_event_source *io, *timer;
        AgentNetState st;
        struct sockaddr_storage peer; /* the central manager, as last connected to */
        bool have_peer;
        ClassAd *attrs;         /* the attributes every slot ad gets */
        char *text;             /* attrs unparsed: to tell a change */
        bool dump_failed;       /* logged once until a dump works again */
};

static uint64_t mono_usec(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * 1000000ull + (uint64_t) ts.tv_nsec / 1000;
}

/* ---- reading the kernel's tables ---- */

static int dump_links(NetWatch *nw, AgentNetState *st) {
        struct nl_cache *cache = NULL;
        int r = rtnl_link_alloc_cache(nw->req, AF_UNSPEC, &cache);
        if (r < 0)
                return r;
        int n = nl_cache_nitems(cache);
        st->links = calloc(n > 0 ? (size_t) n : 1, sizeof *st->links);
        if (!st->links) {
                nl_cache_free(cache);
                return -NLE_NOMEM;
        }
        for (struct nl_object *o = nl_cache_get_first(cache); o && st->n_links < (size_t) n;
             o = nl_cache_get_next(o)) {
                struct rtnl_link *l = (struct rtnl_link *) o;
                AgentNetLink *out = &st->links[st->n_links++];
                unsigned flags = rtnl_link_get_flags(l);
                const char *name = rtnl_link_get_name(l);
                out->index = rtnl_link_get_ifindex(l);
                snprintf(out->name, sizeof out->name, "%s", name ? name : "?");
                out->up = flags & IFF_UP;
                out->lower_up = flags & IFF_LOWER_UP;
                out->loopback = flags & IFF_LOOPBACK;
        }
        nl_cache_free(cache);
        return 0;
}

static int dump_addrs(NetWatch *nw, AgentNetState *st) {
        struct nl_cache *cache = NULL;
        int r = rtnl_addr_alloc_cache(nw->req, &cache);
        if (r < 0)
                return r;
        int n = nl_cache_nitems(cache);
        st->addrs = calloc(n > 0 ? (size_t) n : 1, sizeof *st->addrs);
        if (!st->addrs) {
                nl_cache_free(cache);
                return -NLE_NOMEM;
        }
        for (struct nl_object *o = nl_cache_get_first(cache); o && st->n_addrs < (size_t) n;
             o = nl_cache_get_next(o)) {
                struct rtnl_addr *a = (struct rtnl_addr *) o;
                struct nl_addr *local = rtnl_addr_get_local(a);
                int family = rtnl_addr_get_family(a);
                size_t want = family == AF_INET ? 4 : family == AF_INET6 ? 16 : 0;
                if (!local || !want || nl_addr_get_len(local) != want)
                        continue;
                AgentNetAddr *out = &st->addrs[st->n_addrs++];
                out->ifindex = rtnl_addr_get_ifindex(a);
                out->family = family;
                memcpy(out->addr, nl_addr_get_binary_addr(local), want);
                out->prefixlen = (unsigned) rtnl_addr_get_prefixlen(a);
                out->scope = (unsigned) rtnl_addr_get_scope(a);
                out->dad_failed = rtnl_addr_get_flags(a) & IFA_F_DADFAILED;
        }
        nl_cache_free(cache);
        return 0;
}

static const void *sa_addr(const struct sockaddr_storage *ss, int *ret_family) {
        *ret_family = ss->ss_family;
        if (ss->ss_family == AF_INET)
                return &((const struct sockaddr_in *) ss)->sin_addr;
        if (ss->ss_family == AF_INET6)
                return &((const struct sockaddr_in6 *) ss)->sin6_addr;
        return NULL;
}

/* Whether the kernel has no route to ss: what connect() of a UDP socket
 * says (it sends nothing). libnl turns the lookup's errno into
 * "unspecific failure", which does not tell. */
static bool no_route(const struct sockaddr_storage *ss) {
        int fd = socket(ss->ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return false;
        socklen_t len = ss->ss_family == AF_INET ? sizeof(struct sockaddr_in) : sizeof(struct sockaddr_in6);
        struct sockaddr_storage probe = *ss;
        if (ss->ss_family == AF_INET)
                ((struct sockaddr_in *) &probe)->sin_port = htons(9);
        else
                ((struct sockaddr_in6 *) &probe)->sin6_port = htons(9);
        bool none = connect(fd, (struct sockaddr *) &probe, len) < 0 &&
                    (errno == ENETUNREACH || errno == EHOSTUNREACH || errno == EACCES || errno == EPERM);
        close(fd);
        return none;
}

/* The kernel's route to ss: its interface and preferred source. */
static int lookup_route(NetWatch *nw, const struct sockaddr_storage *ss, AgentNetPath *ret, bool *ret_unreachable) {
        int family;
        const void *bin = sa_addr(ss, &family);
        *ret_unreachable = false;
        if (!bin || !nw->req)
                return -EAFNOSUPPORT;
        struct nl_addr *dst = nl_addr_build(family, bin, family == AF_INET ? 4 : 16);
        if (!dst)
                return -ENOMEM;
        struct rtnl_route *route = NULL;
        int r = rtnl_route_lookup(nw->req, dst, &route);
        nl_addr_put(dst);
        if (r < 0) {
                *ret_unreachable = no_route(ss);
                return -EHOSTUNREACH;
        }
        AgentNetPath p = { .known = true, .family = family };
        struct rtnl_nexthop *nh = rtnl_route_nexthop_n(route, 0);
        if (nh)
                p.ifindex = rtnl_route_nh_get_ifindex(nh);
        struct nl_addr *src = rtnl_route_get_pref_src(route);
        if (src && nl_addr_get_family(src) == family && nl_addr_get_len(src) == (family == AF_INET ? 4u : 16u)) {
                memcpy(p.src, nl_addr_get_binary_addr(src), nl_addr_get_len(src));
                p.has_src = true;
        }
        rtnl_route_put(route);
        *ret = p;
        return 0;
}

/* ---- the attributes ---- */

/* Sets nw->attrs from the state: true when they changed. */
static bool render(NetWatch *nw) {
        ClassAd *ad = NULL;
        if (classad_new(&ad) < 0 || agent_net_ad(&nw->st, ad) < 0) {
                classad_free(ad);
                return false;
        }
        char *text = classad_unparse(ad);
        if (!text) {
                classad_free(ad);
                return false;
        }
        bool changed = !nw->text || strcmp(text, nw->text) != 0;
        free(nw->text);
        nw->text = text;
        classad_free(nw->attrs);
        nw->attrs = ad;
        return changed;
}

static void log_network(NetWatch *nw) {
        char *my = NULL, *via = NULL;
        classad_eval_string(nw->attrs, "MyAddress", CA_MODE_OLD, &my);
        classad_eval_string(nw->attrs, "ManagerInterface", CA_MODE_OLD, &via);
        char list[512] = "";
        size_t len = 0;
        for (size_t i = 0; i < nw->st.n_links && len < sizeof list; i++) {
                const AgentNetLink *l = &nw->st.links[i];
                len += (size_t) snprintf(list + len, sizeof list - len, "%s%s%s", len ? ", " : "", l->name,
                                         l->up ? "" : " (down)");
                for (size_t j = 0; j < nw->st.n_addrs && len < sizeof list; j++) {
                        char host[64];
                        const AgentNetAddr *a = &nw->st.addrs[j];
                        if (a->ifindex == l->index && !a->dad_failed &&
                            agent_net_addr_string(a->family, a->addr, host, sizeof host) >= 0)
                                len += (size_t) snprintf(list + len, sizeof list - len, " %s/%u", host, a->prefixlen);
                }
        }
        GleanLogField f[] = { { "GLEAN_ADDRESS", my ? my : "" } };
        glean_log(LOG_INFO, NULL, f, 1, "network: MyAddress %s%s%s; interfaces: %s", my ? my : "unknown",
                  via ? " through " : "", via ? via : "", list[0] ? list : "none");
        free(my);
        free(via);
}

/* Every slot ad gets the attributes, and goes to the managers again. */
static void readvertise(NetWatch *nw) {
        Agent *a = nw->agent;
        for (Slot *s = a->slots; s; s = s->next)
                agent_netwatch_ad(a, s->ad);
        for (Slot *s = a->slots; s; s = s->next)
                if (!s->release)
                        agent_publish(a, s);
}

/* ---- refreshing ---- */

static bool same_path(const AgentNetPath *x, const AgentNetPath *y) {
        return x->known == y->known && x->family == y->family && x->has_src == y->has_src &&
               x->ifindex == y->ifindex && memcmp(x->src, y->src, sizeof x->src) == 0;
}

/* The same interfaces, addresses and route (the connection aside). The
 * arrays come from calloc(), so their padding compares equal. */
static bool same_network(const AgentNetState *x, const AgentNetState *y) {
        return x->n_links == y->n_links && x->n_addrs == y->n_addrs && x->unreachable == y->unreachable &&
               (!x->n_links || memcmp(x->links, y->links, x->n_links * sizeof *x->links) == 0) &&
               (!x->n_addrs || memcmp(x->addrs, y->addrs, x->n_addrs * sizeof *x->addrs) == 0) &&
               same_path(&x->route, &y->route);
}

static void refresh(NetWatch *nw) {
        if (!nw->req) {
                /* No netlink: the connection's address, when there is one. */
                if (render(nw))
                        readvertise(nw);
                return;
        }
        AgentNetState st = { .conn = nw->st.conn };
        int r = dump_links(nw, &st);
        if (r >= 0)
                r = dump_addrs(nw, &st);
        if (r < 0) {
                if (!nw->dump_failed)
                        glean_log(LOG_WARNING, NULL, NULL, 0, "cannot read the network interfaces: %s; advertising "
                                  "what was known before", nl_geterror(r));
                nw->dump_failed = true;
                agent_net_state_clear(&st);
                return;
        }
        nw->dump_failed = false;
        if (nw->have_peer)
                lookup_route(nw, &nw->peer, &st.route, &st.unreachable);
        agent_net_state_sort(&st);
        bool changed = !same_network(&st, &nw->st);
        agent_net_state_clear(&nw->st);
        nw->st = st;

        Agent *a = nw->agent;
        char why[256];
        if (agent_net_concerns(&nw->st, why, sizeof why)) {
                agent_upstream_fail(a, "the network changed: %s", why);
                /* Not the address of a connection any more. */
                nw->st.conn = (AgentNetPath){ 0 };
        }
        if (render(nw)) {
                log_network(nw);
                readvertise(nw);
        }
        /* A network that came (back) is tried at once. */
        if (changed)
                agent_upstream_retry_now(a);
}

static int on_timer(sd_event_source *src, uint64_t usec, void *userdata) {
        (void) src;
        (void) usec;
        refresh(userdata);
        return 0;
}

static void schedule_refresh(NetWatch *nw) {
        if (!nw->timer)
                return;
        int enabled = SD_EVENT_OFF;
        sd_event_source_get_enabled(nw->timer, &enabled);
        if (enabled != SD_EVENT_OFF)
                return; /* already coming: a burst is one refresh */
        int r = glean_timer_arm(NULL, &nw->timer, CLOCK_MONOTONIC, mono_usec() + SETTLE_USEC, 0, NULL, NULL);
        if (r < 0)
                glean_log_errno(LOG_WARNING, r, "the network watch's timer: %m; the addresses are read again at the "
                                                "next change");
}

static int on_notification(struct nl_msg *msg, void *arg) {
        (void) msg;
        (void) arg;
        return NL_OK; /* what changed does not matter: everything is read again */
}

static int on_io(sd_event_source *src, int fd, uint32_t revents, void *userdata) {
        (void) src;
        (void) fd;
        (void) revents;
        NetWatch *nw = userdata;
        /* Everything there is now; an overrun (ENOBUFS) lost some, which
         * the refresh makes up for. */
        for (int i = 0; i < 1024; i++) {
                int r = nl_recvmsgs_default(nw->events);
                if (r == 0 || r == -NLE_AGAIN)
                        break;
                if (r < 0 && r != -NLE_NOMEM && r != -NLE_DUMP_INTR) {
                        glean_log(LOG_DEBUG, NULL, NULL, 0, "netlink notification: %s", nl_geterror(r));
                        break;
                }
        }
        schedule_refresh(nw);
        return 0;
}

/* ---- the daemon's side ---- */

int agent_netwatch_open(Agent *a) {
        NetWatch *nw = calloc(1, sizeof *nw);
        if (!nw)
                return -ENOMEM;
        nw->agent = a;
        a->net = nw;
        int r = sd_event_add_time(a->event, &nw->timer, CLOCK_MONOTONIC, 0, 10000, on_timer, nw);
        if (r >= 0)
                r = sd_event_source_set_enabled(nw->timer, SD_EVENT_OFF);
        if (r < 0)
                return glean_log_errno(LOG_ERR, r, "cannot set up the network watch");

        nw->req = nl_socket_alloc();
        nw->events = nl_socket_alloc();
        int e = nw->req && nw->events ? 0 : -NLE_NOMEM;
        if (e >= 0)
                e = nl_connect(nw->req, NETLINK_ROUTE);
        if (e >= 0) {
                nl_socket_disable_seq_check(nw->events);
                nl_socket_modify_cb(nw->events, NL_CB_VALID, NL_CB_CUSTOM, on_notification, nw);
                e = nl_connect(nw->events, NETLINK_ROUTE);
        }
        if (e >= 0)
                e = nl_socket_add_memberships(nw->events, RTNLGRP_LINK, RTNLGRP_IPV4_IFADDR, RTNLGRP_IPV6_IFADDR,
                                              RTNLGRP_IPV4_ROUTE, RTNLGRP_IPV6_ROUTE, 0);
        if (e >= 0)
                e = nl_socket_set_nonblocking(nw->events);
        if (e >= 0) {
                (void) nl_socket_set_buffer_size(nw->events, 1 << 20, 0);
                r = sd_event_add_io(a->event, &nw->io, nl_socket_get_fd(nw->events), EPOLLIN, on_io, nw);
                if (r < 0)
                        e = -NLE_FAILURE;
        }
        if (e < 0) {
                glean_log(LOG_WARNING, NULL, NULL, 0,
                          "cannot watch the network through netlink: %s; the slot ads carry the address of the "
                          "connection to the central manager only",
                          nl_geterror(e));
                nw->io = sd_event_source_disable_unref(nw->io);
                nl_socket_free(nw->events);
                nl_socket_free(nw->req);
                nw->events = nw->req = NULL;
                render(nw);
                return 0;
        }
        refresh(nw);
        return 0;
}

void agent_netwatch_close(Agent *a) {
        NetWatch *nw = a->net;
        if (!nw)
                return;
        sd_event_source_disable_unref(nw->io);
        sd_event_source_disable_unref(nw->timer);
        nl_socket_free(nw->events);
        nl_socket_free(nw->req);
        agent_net_state_clear(&nw->st);
        classad_free(nw->attrs);
        free(nw->text);
        free(nw);
        a->net = NULL;
}

void agent_netwatch_ad(Agent *a, ClassAd *ad) {
        NetWatch *nw = a->net;
        if (!nw || !nw->attrs)
                return;
        classad_update(ad, nw->attrs);
        if (!classad_has(nw->attrs, "MyAddress"))
                classad_delete(ad, "MyAddress");
        if (!classad_has(nw->attrs, "ManagerInterface"))
                classad_delete(ad, "ManagerInterface");
}

void agent_netwatch_connected(Agent *a, int fd) {
        NetWatch *nw = a->net;
        struct sockaddr_storage local = { 0 }, peer = { 0 };
        socklen_t llen = sizeof local, plen = sizeof peer;
        if (!nw || getsockname(fd, (struct sockaddr *) &local, &llen) < 0 ||
            getpeername(fd, (struct sockaddr *) &peer, &plen) < 0)
                return;
        int family;
        const void *bin = sa_addr(&local, &family);
        if (!bin)
                return;
        nw->peer = peer;
        nw->have_peer = true;
        AgentNetPath conn = { .known = true, .family = family, .has_src = true };
        memcpy(conn.src, bin, family == AF_INET ? 4 : 16);
        AgentNetPath route;
        bool unreachable;
        if (lookup_route(nw, &peer, &route, &unreachable) >= 0) {
                conn.ifindex = route.ifindex;
                nw->st.route = route;
                nw->st.unreachable = false;
        }
        nw->st.conn = conn;
        /* Before the Hello: the advertisement that follows it says so. */
        if (render(nw)) {
                log_network(nw);
                readvertise(nw);
        }
}

void agent_netwatch_disconnected(Agent *a) {
        NetWatch *nw = a->net;
        if (!nw || !nw->st.conn.known)
                return;
        nw->st.conn = (AgentNetPath){ 0 };
        /* From the event loop: this runs under the upstream's own work. */
        schedule_refresh(nw);
}
