/* SPDX-License-Identifier: Apache-2.0 */
/*
 * netinfo.h — the machine's network as the agent advertises it, without
 * the kernel: its interfaces and their addresses (plain structs that
 * glean-agent fills from rtnetlink, agent/daemon/netwatch.c, and that
 * tests fill by hand), the path to the central manager, the attributes of
 * every slot ad, and whether a change of the network concerns the
 * connection to the central manager.
 *
 * The attributes (docs/protocol.md, "The agent's addresses"):
 *
 *   MyAddress          "<192.0.2.10:0>", "<[2001:db8::10]:0>": HTCondor's
 *                      sinful string of the address the central manager
 *                      reaches the agent at. Port 0: the agent listens on
 *                      no TCP port, the manager reaches it through the
 *                      connection the agent keeps open (as through CCB).
 *   ManagerInterface   "eth0": the interface the connection to the central
 *                      manager leaves through (absent when not known).
 *   NetworkInterfaces  every interface, by index:
 *                      { [ Name = "lo"; Up = true; Loopback = true;
 *                          Addresses = { "127.0.0.1/8", "::1/128" } ], ... }
 *
 * Conventions: >= 0 on success, -errno on failure; outputs last, named
 * ret_*, set only on success.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "classad.h"

#define AGENT_NET_IFNAMSIZ 16 /* IFNAMSIZ */
/* "<[ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.255]:65535>" and a NUL */
#define AGENT_NET_SINFUL_MAX 64

typedef struct AgentNetLink {
        int index;
        char name[AGENT_NET_IFNAMSIZ];
        bool up;        /* administratively up (IFF_UP) */
        bool lower_up;  /* has a carrier (IFF_LOWER_UP) */
        bool loopback;  /* IFF_LOOPBACK */
} AgentNetLink;

typedef struct AgentNetAddr {
        int ifindex;
        int family;         /* AF_INET or AF_INET6 */
        uint8_t addr[16];   /* 4 bytes for AF_INET */
        unsigned prefixlen;
        unsigned scope;     /* RT_SCOPE_UNIVERSE 0, SITE 200, LINK 253, HOST 254 */
        bool dad_failed;    /* IFA_F_DADFAILED: not usable */
} AgentNetAddr;

/* A way out to the central manager: a local (source) address and the
 * interface the packets leave through. */
typedef struct AgentNetPath {
        bool known;
        int family;
        uint8_t src[16];
        bool has_src;       /* the kernel named the source address */
        int ifindex;        /* 0: not known */
} AgentNetPath;

typedef struct AgentNetState {
        AgentNetLink *links;
        size_t n_links;
        AgentNetAddr *addrs;
        size_t n_addrs;
        /* The connection to the central manager as it was made (its local
         * address; the interface of the route then). !known: not connected. */
        AgentNetPath conn;
        /* The kernel's route to the central manager's address now. !known:
         * no address of the manager is known yet, or the lookup failed. */
        AgentNetPath route;
        bool unreachable;   /* the lookup said there is no route (ENETUNREACH, EHOSTUNREACH) */
} AgentNetState;

/* Frees the arrays; leaves an empty state. */
void agent_net_state_clear(AgentNetState *st);
/* Orders links by index and addresses by interface, family, address:
 * two states of the same network render the same attributes. */
void agent_net_state_sort(AgentNetState *st);

const AgentNetLink *agent_net_link(const AgentNetState *st, int ifindex);
/* An address of the machine equal to (family, addr) that is usable (not DAD-failed). */
const AgentNetAddr *agent_net_addr_find(const AgentNetState *st, int family, const uint8_t *addr);

/* "192.0.2.10", "2001:db8::10". -EAFNOSUPPORT for another family,
 * -ENOBUFS when len is too small. */
int agent_net_addr_string(int family, const uint8_t *addr, char *buf, size_t len);
/* HTCondor's sinful string: "<192.0.2.10:9618>", "<[2001:db8::10]:9618>". */
int agent_net_sinful(int family, const uint8_t *addr, unsigned port, char *buf, size_t len);

/* The address to advertise: the connection's local address, else the
 * route's source, else the machine's best address (global before link
 * scope, a non-loopback interface that is up before the rest, IPv4 before
 * IPv6, then the lowest interface index). -ENOENT when it has none. */
int agent_net_my_address(const AgentNetState *st, int *ret_family, uint8_t ret_addr[16]);

/* Sets MyAddress, NetworkInterfaces and ManagerInterface in ad; those
 * that are not known (no address, no path) are removed from it. */
int agent_net_ad(const AgentNetState *st, ClassAd *ad);

/* Whether the connection to the central manager (st->conn) must be made
 * again because of the network as st says it is now: its local address is
 * gone, its interface is gone or down, there is no route to the manager
 * any more, or the route now leaves through another interface. A new
 * preferred source on the same interface while the old address stays (a
 * new IPv6 temporary address) is not a reason. True with why (one line)
 * set; false when not connected. */
bool agent_net_concerns(const AgentNetState *st, char *why, size_t len);
