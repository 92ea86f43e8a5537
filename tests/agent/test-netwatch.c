/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test-netwatch.c — the agent's addresses from the kernel (rtnetlink), in
 * network namespaces of the test's own; the host's interfaces and
 * namespaces are never touched.
 *
 * main() forks; the child leaves the host's network namespace
 * (unshare(CLONE_NEWNET): namespace A) and runs the suites. Each test
 * makes a namespace B of its own and a veth pair between them: gl0 in A
 * with 10.99.0.1/24, where a fake central manager listens, and gl1 in B
 * with 10.99.0.2/24, where the real glean-agent (fork executor) runs and
 * dials it. Then:
 *   - the slot ads say MyAddress "<10.99.0.2:0>", ManagerInterface "gl1"
 *     and the interfaces of B with their addresses, in the SlotUpdates
 *     and in the status of the unix socket;
 *   - an address added to gl1, then removed, shows in the ads within two
 *     seconds (UPDATE_INTERVAL is long: the netlink notification, not the
 *     periodic update, brings it), the connection staying as it is;
 *   - the address the agent reaches the manager from removed: it drops
 *     the connection with the reason logged; another address given: it
 *     dials again at once and advertises the new MyAddress;
 *   - gl1 taken down and up again: the same.
 *
 * Needs root (skipped otherwise, and when unshare() is refused).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <sys/socket.h>

#include <netlink/addr.h>
#include <netlink/netlink.h>
#include <netlink/route/addr.h>
#include <netlink/route/link.h>
#include <netlink/route/link/veth.h>

#include "agent-test.h"
#include "common/secure.h"

#define MGR_ADDR "10.99.0.1"

/* ---- the namespaces ---- */

typedef struct Net {
        int ns_a, ns_b;             /* fds of the namespaces */
        struct nl_sock *sa, *sb;    /* rtnetlink in A, in B */
} Net;

static int ifindex_of(struct nl_sock *sk, const char *name) {
        struct rtnl_link *l = NULL;
        if (rtnl_link_get_kernel(sk, 0, name, &l) < 0)
                return 0;
        int i = rtnl_link_get_ifindex(l);
        rtnl_link_put(l);
        return i;
}

static int link_set_up(struct nl_sock *sk, const char *name, bool up) {
        struct rtnl_link *l = NULL, *change = rtnl_link_alloc();
        int r = rtnl_link_get_kernel(sk, 0, name, &l);
        if (r >= 0 && change) {
                if (up)
                        rtnl_link_set_flags(change, IFF_UP);
                else
                        rtnl_link_unset_flags(change, IFF_UP);
                r = rtnl_link_change(sk, l, change, 0);
        }
        rtnl_link_put(l);
        rtnl_link_put(change);
        return r;
}

/* "10.99.0.2/24" on name: added (add) or removed. */
static int addr_change(struct nl_sock *sk, const char *name, const char *cidr, bool add) {
        int ifindex = ifindex_of(sk, name);
        struct nl_addr *local = NULL;
        struct rtnl_addr *a = rtnl_addr_alloc();
        int r = ifindex && a ? nl_addr_parse(cidr, AF_UNSPEC, &local) : -NLE_NOMEM;
        if (r >= 0) {
                rtnl_addr_set_ifindex(a, ifindex);
                r = rtnl_addr_set_local(a, local);
        }
        if (r >= 0)
                r = add ? rtnl_addr_add(sk, a, 0) : rtnl_addr_delete(sk, a, 0);
        nl_addr_put(local);
        rtnl_addr_put(a);
        if (r < 0)
                fprintf(stderr, "%s %s on %s: %s\n", add ? "adding" : "removing", cidr, name, nl_geterror(r));
        return r;
}

static struct nl_sock *rtnl_socket(void) {
        struct nl_sock *sk = nl_socket_alloc();
        if (sk && nl_connect(sk, NETLINK_ROUTE) < 0) {
                nl_socket_free(sk);
                return NULL;
        }
        return sk;
}

/* A fresh namespace B and the veth pair gl0 (A) / gl1 (B), both up with
 * their addresses; the test stays in A. */
static bool net_setup(Net *n) {
        *n = (Net){ .ns_a = -1, .ns_b = -1 };
        n->ns_a = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
        if (n->ns_a < 0 || unshare(CLONE_NEWNET) < 0)
                return GLEAN_TEST_CHECK(false, "a namespace B: %s", strerror(errno));
        n->ns_b = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
        n->sb = rtnl_socket();
        bool ok = n->ns_b >= 0 && n->sb && setns(n->ns_a, CLONE_NEWNET) == 0;
        n->sa = ok ? rtnl_socket() : NULL;
        if (!GLEAN_TEST_CHECK(ok && n->sa, "netlink sockets in A and B: %s", strerror(errno)))
                return false;
        struct rtnl_link *veth = rtnl_link_veth_alloc();
        if (!veth)
                return false;
        struct rtnl_link *peer = rtnl_link_veth_get_peer(veth);
        rtnl_link_set_name(veth, "gl0");
        rtnl_link_set_name(peer, "gl1");
        rtnl_link_set_ns_fd(peer, n->ns_b);
        int r = rtnl_link_add(n->sa, veth, NLM_F_CREATE | NLM_F_EXCL);
        rtnl_link_put(peer);
        rtnl_link_veth_release(veth);
        if (!GLEAN_TEST_CHECK(r >= 0, "the veth pair: %s", nl_geterror(r)))
                return false;
        r = link_set_up(n->sa, "lo", true);
        if (r >= 0)
                r = addr_change(n->sa, "gl0", MGR_ADDR "/24", true);
        if (r >= 0)
                r = link_set_up(n->sa, "gl0", true);
        if (r >= 0)
                r = link_set_up(n->sb, "lo", true);
        if (r >= 0)
                r = addr_change(n->sb, "gl1", "10.99.0.2/24", true);
        if (r >= 0)
                r = link_set_up(n->sb, "gl1", true);
        return GLEAN_TEST_CHECK(r >= 0, "the addresses: %s", nl_geterror(r));
}

/* The pair goes (both ends with one), then B with its last reference
 * (the agent has exited). */
static void net_teardown(Net *n) {
        struct rtnl_link *l = NULL;
        if (n->sa && rtnl_link_get_kernel(n->sa, 0, "gl0", &l) >= 0) {
                int r = rtnl_link_delete(n->sa, l);
                GLEAN_TEST_CHECK(r >= 0, "removing gl0: %s", nl_geterror(r));
                rtnl_link_put(l);
        }
        nl_socket_free(n->sa);
        nl_socket_free(n->sb);
        if (n->ns_b >= 0)
                close(n->ns_b);
        if (n->ns_a >= 0)
                close(n->ns_a);
        *n = (Net){ .ns_a = -1, .ns_b = -1 };
}

/* ---- a fake central manager in A ---- */

typedef struct Manager {
        char dir[64];
        char key_path[128];
        GleanPoolKey key;
        int lfd;
        unsigned port;
        int fd;
        GleanSecure *s;
} Manager;

static bool mgr_open(Manager *m) {
        memset(m, 0, sizeof *m);
        m->fd = m->lfd = -1;
        snprintf(m->dir, sizeof m->dir, "/tmp/glean-netwatch-test-XXXXXX");
        if (!mkdtemp(m->dir))
                return false;
        snprintf(m->key_path, sizeof m->key_path, "%s/pool.key", m->dir);
        char why[256];
        if (glean_pool_key_generate(&m->key) < 0 ||
            glean_pool_key_save(m->key_path, &m->key, false, why, sizeof why) < 0)
                return false;
        m->lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        struct sockaddr_in sa = { .sin_family = AF_INET };
        inet_pton(AF_INET, MGR_ADDR, &sa.sin_addr);
        socklen_t len = sizeof sa;
        if (m->lfd < 0 || bind(m->lfd, (struct sockaddr *) &sa, sizeof sa) < 0 || listen(m->lfd, 16) < 0 ||
            getsockname(m->lfd, (struct sockaddr *) &sa, &len) < 0)
                return false;
        m->port = ntohs(sa.sin_port);
        return true;
}

static void mgr_drop(Manager *m) {
        glean_secure_free(m->s);
        m->s = NULL;
        if (m->fd >= 0)
                close(m->fd);
        m->fd = -1;
}

static void mgr_close(Manager *m) {
        mgr_drop(m);
        if (m->lfd >= 0)
                close(m->lfd);
        remove_dir(m->dir);
}

/* Whether a TCP connection waits to be accepted within ms. */
static bool mgr_pending(Manager *m, int ms) {
        struct pollfd p = { .fd = m->lfd, .events = POLLIN };
        return poll(&p, 1, ms) > 0;
}

/* The next connection within seconds, through the sealed handshake. */
static bool mgr_accept(Manager *m, int seconds) {
        if (!mgr_pending(m, seconds * 1000))
                return GLEAN_TEST_CHECK(false, "no connection from the agent within %d s", seconds);
        mgr_drop(m);
        m->fd = accept4(m->lfd, NULL, NULL, SOCK_CLOEXEC);
        char why[256] = "";
        int r = m->fd >= 0 ? glean_secure_handshake(m->fd, GLEAN_SECURE_NEGOTIATOR, GLEAN_SECURE_POOL_AUTH(&m->key), 5000, &m->s, why,
                                                    sizeof why)
                           : -errno;
        return GLEAN_TEST_CHECK(r >= 0, "the handshake: %s", why[0] ? why : strerror(-r));
}

static ClassAd *mgr_recv(Manager *m, int ms, GleanCommand *ret_cmd) {
        char *payload = NULL;
        size_t len = 0;
        if (!m->s || glean_secure_recv(m->s, m->fd, ms, &payload, &len) < 0)
                return NULL;
        ClassAd *ad = NULL;
        char why[256];
        int r = glean_msg_parse(payload, len, &ad, ret_cmd, why, sizeof why);
        GLEAN_TEST_CHECK(r >= 0, "the agent sent an invalid message: %s", why);
        free(payload);
        return r >= 0 ? ad : NULL;
}

/* The slot ad of the next SlotUpdate within ms (other messages dropped). */
static ClassAd *mgr_slot_update(Manager *m, int ms) {
        int64_t end = (int64_t) time(NULL) * 1000 + ms;
        for (;;) {
                int64_t left = end - (int64_t) time(NULL) * 1000;
                GleanCommand c;
                ClassAd *msg = mgr_recv(m, left > 200 ? 200 : (int) (left > 0 ? left : 1), &c);
                ClassAd *ad = NULL;
                if (msg && c == GLEAN_CMD_SLOT_UPDATE)
                        glean_msg_get_ad(msg, "SlotAd", &ad);
                classad_free(msg);
                if (ad)
                        return ad;
                if (left <= 0 || (m->s && glean_secure_error(m->s) < 0))
                        return NULL;
        }
}

/* The agent's Hello, ours back, and the SlotUpdate of each of its 2 slots. */
static bool mgr_greet(Manager *m, ClassAd *ret_ads[2]) {
        GleanCommand c;
        ClassAd *hello = mgr_recv(m, 5000, &c);
        bool ok = GLEAN_TEST_CHECK(hello && c == GLEAN_CMD_HELLO, "the agent's Hello");
        classad_free(hello);
        ClassAd *ours = NULL;
        glean_hello_new("glean-negotiator", &ours);
        char *text = ok ? classad_unparse(ours) : NULL;
        ok = text && glean_secure_send(m->s, m->fd, text, strlen(text), 5000) >= 0;
        free(text);
        classad_free(ours);
        for (int i = 0; i < 2 && ok; i++)
                ok = GLEAN_TEST_CHECK((ret_ads[i] = mgr_slot_update(m, 5000)) != NULL, "SlotUpdate %d", i + 1);
        return ok;
}

/* ---- what the ads say ---- */

/* The addresses of interface name in ad's NetworkInterfaces, as text:
 * "{ "10.99.0.2/24", ... }", or "" when the interface is not there. */
static char *iface_addrs(const ClassAd *ad, const char *name) {
        char *text = ad ? classad_unparse_attr(ad, "NetworkInterfaces") : NULL;
        char key[64];
        snprintf(key, sizeof key, "Name = \"%s\"", name);
        char *at = text ? strstr(text, key) : NULL, *out = NULL;
        if (at) {
                char *addrs = strstr(at, "Addresses = ");
                char *end = addrs ? strchr(addrs, '}') : NULL;
                if (end)
                        out = strndup(addrs + 12, (size_t) (end - addrs - 12 + 1));
        }
        free(text);
        return out ? out : strdup("");
}

static bool iface_has(const ClassAd *ad, const char *name, const char *cidr) {
        char *a = iface_addrs(ad, name), want[80];
        snprintf(want, sizeof want, "\"%s\"", cidr);
        bool has = strstr(a, want) != NULL;
        free(a);
        return has;
}

/* The agent's ad of slot1 over the unix socket until pred holds (true) or seconds pass. */
static bool status_until(Pool *p, const char *cidr, bool present, int seconds) {
        for (int i = 0; i < seconds * 20; i++) {
                ClassAd *ad = slot_ad(p, "slot1");
                bool has = iface_has(ad, "gl1", cidr);
                classad_free(ad);
                if (has == present)
                        return true;
                usleep(50000);
        }
        return false;
}

/* A SlotUpdate whose gl1 has (or has not) cidr within ms; its latency in *ret_ms. */
static bool update_until(Manager *m, const char *cidr, bool present, int ms, double *ret_ms) {
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        for (;;) {
                clock_gettime(CLOCK_MONOTONIC, &t1);
                double spent = (double) (t1.tv_sec - t0.tv_sec) * 1e3 + (double) (t1.tv_nsec - t0.tv_nsec) / 1e6;
                if (spent > ms)
                        return false;
                ClassAd *ad = mgr_slot_update(m, ms - (int) spent);
                if (!ad)
                        return false;
                bool has = iface_has(ad, "gl1", cidr);
                classad_free(ad);
                if (has == present) {
                        clock_gettime(CLOCK_MONOTONIC, &t1);
                        *ret_ms = (double) (t1.tv_sec - t0.tv_sec) * 1e3 + (double) (t1.tv_nsec - t0.tv_nsec) / 1e6;
                        return true;
                }
        }
}

/* ---- the agent in B ---- */

/* The manager in A, the agent started in B and greeted; ads[] its slots' ads. */
static bool start_all(Net *n, Manager *m, Pool *p, ClassAd *ads[2]) {
        if (!net_setup(n))
                return false;
        if (!GLEAN_TEST_CHECK(mgr_open(m), "the fake central manager: %s", strerror(errno)))
                return false;
        char extra[512];
        snprintf(extra, sizeof extra,
                 "AGENT_EXECUTOR = fork\nCOLLECTOR_HOST = " MGR_ADDR ":%u\nPOOL_KEY_FILE = %s\n"
                 "NEGOTIATOR_RECONNECT_MAX = 30\nUPDATE_INTERVAL = 600\nAGENT_LOG_LEVEL = info\n",
                 m->port, m->key_path);
        bool ok = setns(n->ns_b, CLONE_NEWNET) == 0;
        ok = ok && pool_start(p, extra);
        if (setns(n->ns_a, CLONE_NEWNET) < 0)
                ok = false;
        if (!ok) {
                mgr_close(m);
                return false;
        }
        return mgr_accept(m, 10) && mgr_greet(m, ads);
}

static void stop_all(Net *n, Manager *m, Pool *p) {
        GLEAN_TEST_CHECK(pool_stop(p) == 0, "the agent exits 0 after SIGTERM");
        mgr_close(m);
        net_teardown(n);
}

/* ---- tests ---- */

static void test_advertised(void) {
        Net n;
        Manager m;
        Pool p;
        ClassAd *ads[2] = { 0 };
        CU_ASSERT_FATAL(start_all(&n, &m, &p, ads));
        for (int i = 0; i < 2; i++) {
                char *my = ad_string(ads[i], "MyAddress"), *via = ad_string(ads[i], "ManagerInterface");
                char *gl1 = iface_addrs(ads[i], "gl1"), *lo = iface_addrs(ads[i], "lo");
                GLEAN_TEST_CHECK(strcmp(my, "<10.99.0.2:0>") == 0 && strcmp(via, "gl1") == 0,
                                 "slot%d's SlotUpdate: MyAddress %s, ManagerInterface %s", i + 1, my, via);
                GLEAN_TEST_CHECK(strstr(gl1, "\"10.99.0.2/24\"") && strstr(lo, "\"127.0.0.1/8\"") &&
                                         !iface_has(ads[i], "gl0", MGR_ADDR "/24"),
                                 "slot%d's NetworkInterfaces: gl1 %s, lo %s (and nothing of namespace A)", i + 1,
                                 gl1, lo);
                free(my);
                free(via);
                free(gl1);
                free(lo);
                classad_free(ads[i]);
        }
        char *my = slot_string(&p, "slot2", "MyAddress");
        GLEAN_TEST_CHECK(strcmp(my, "<10.99.0.2:0>") == 0, "the status of slot2: MyAddress %s", my);
        free(my);
        GLEAN_TEST_CHECK(log_line(&p, "network: MyAddress <10.99.0.2:0> through gl1", "gl1 10.99.0.2/24", NULL),
                         "the log record of the network");
        stop_all(&n, &m, &p);
}

static void test_address_change(void) {
        Net n;
        Manager m;
        Pool p;
        ClassAd *ads[2] = { 0 };
        CU_ASSERT_FATAL(start_all(&n, &m, &p, ads));
        classad_free(ads[0]);
        classad_free(ads[1]);
        double ms = 0;
        CU_ASSERT_FATAL(addr_change(n.sb, "gl1", "10.99.7.7/24", true) >= 0);
        GLEAN_TEST_CHECK(update_until(&m, "10.99.7.7/24", true, 2000, &ms),
                         "no SlotUpdate with the address added within 2 s");
        printf("\n    address added: in a SlotUpdate after %.0f ms ", ms);
        GLEAN_TEST_CHECK(status_until(&p, "10.99.7.7/24", true, 2), "the slot's status shows the address added");
        CU_ASSERT_FATAL(addr_change(n.sb, "gl1", "fd00:99::2/64", true) >= 0);
        GLEAN_TEST_CHECK(update_until(&m, "fd00:99::2/64", true, 2000, &ms),
                         "no SlotUpdate with the IPv6 address added within 2 s");
        CU_ASSERT_FATAL(addr_change(n.sb, "gl1", "10.99.7.7/24", false) >= 0);
        GLEAN_TEST_CHECK(update_until(&m, "10.99.7.7/24", false, 2000, &ms),
                         "no SlotUpdate without the address removed within 2 s");
        printf("removed: after %.0f ms ", ms);
        GLEAN_TEST_CHECK(status_until(&p, "10.99.7.7/24", false, 2), "the slot's status without the address");
        /* Nothing of that concerned the connection: it is the same one. */
        GLEAN_TEST_CHECK(!mgr_pending(&m, 300) && !log_line(&p, "the network changed", NULL),
                         "the agent reconnected for an address it does not use");
        char *my = slot_string(&p, "slot1", "MyAddress");
        GLEAN_TEST_CHECK(strcmp(my, "<10.99.0.2:0>") == 0, "MyAddress stays: %s", my);
        free(my);
        stop_all(&n, &m, &p);
}

static void test_address_gone(void) {
        Net n;
        Manager m;
        Pool p;
        ClassAd *ads[2] = { 0 };
        CU_ASSERT_FATAL(start_all(&n, &m, &p, ads));
        classad_free(ads[0]);
        classad_free(ads[1]);
        /* The address it reaches the manager from goes: the connection with it. */
        CU_ASSERT_FATAL(addr_change(n.sb, "gl1", "10.99.0.2/24", false) >= 0);
        GLEAN_TEST_CHECK(wait_log(&p, 3, "lost the connection to the central manager at " MGR_ADDR,
                                  "the network changed: its address 10.99.0.2 is gone"),
                         "no log record of the connection dropped for the address");
        /* Another address: it dials at once, from it. */
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        CU_ASSERT_FATAL(addr_change(n.sb, "gl1", "10.99.0.3/24", true) >= 0);
        GLEAN_TEST_CHECK_FATAL(mgr_accept(&m, 3), "the agent came back within 3 s of the new address");
        clock_gettime(CLOCK_MONOTONIC, &t1);
        printf("\n    new address to a new connection: %.0f ms ",
               (double) (t1.tv_sec - t0.tv_sec) * 1e3 + (double) (t1.tv_nsec - t0.tv_nsec) / 1e6);
        CU_ASSERT_FATAL(mgr_greet(&m, ads));
        for (int i = 0; i < 2; i++) {
                char *my = ad_string(ads[i], "MyAddress");
                GLEAN_TEST_CHECK(strcmp(my, "<10.99.0.3:0>") == 0 && iface_has(ads[i], "gl1", "10.99.0.3/24") &&
                                         !iface_has(ads[i], "gl1", "10.99.0.2/24"),
                                 "slot%d advertised again: MyAddress %s", i + 1, my);
                free(my);
                classad_free(ads[i]);
        }
        stop_all(&n, &m, &p);
}

static void test_link_down(void) {
        Net n;
        Manager m;
        Pool p;
        ClassAd *ads[2] = { 0 };
        CU_ASSERT_FATAL(start_all(&n, &m, &p, ads));
        classad_free(ads[0]);
        classad_free(ads[1]);
        CU_ASSERT_FATAL(link_set_up(n.sb, "gl1", false) >= 0);
        GLEAN_TEST_CHECK(wait_log(&p, 3, "the network changed: its interface gl1 is down", NULL),
                         "no log record of the connection dropped for the interface");
        GLEAN_TEST_CHECK(!mgr_pending(&m, 1500), "the agent connected through an interface that is down");
        CU_ASSERT_FATAL(link_set_up(n.sb, "gl1", true) >= 0);
        GLEAN_TEST_CHECK_FATAL(mgr_accept(&m, 5), "the agent came back within 5 s of the interface");
        CU_ASSERT_FATAL(mgr_greet(&m, ads));
        for (int i = 0; i < 2; i++) {
                char *my = ad_string(ads[i], "MyAddress");
                GLEAN_TEST_CHECK(strcmp(my, "<10.99.0.2:0>") == 0, "slot%d: MyAddress %s", i + 1, my);
                free(my);
                classad_free(ads[i]);
        }
        stop_all(&n, &m, &p);
}

static CU_TestInfo tests[] = {
        { "advertised", test_advertised },
        { "address-change", test_address_change },
        { "address-gone", test_address_gone },
        { "link-down", test_link_down },
        CU_TEST_INFO_NULL,
};

static CU_SuiteInfo suites[] = {
        { "netwatch", NULL, NULL, NULL, NULL, tests },
        CU_SUITE_INFO_NULL,
};

int main(int argc, char **argv) {
        if (geteuid() != 0)
                return glean_test_skip("needs root (network namespaces, veth links)");
        fflush(stdout);
        pid_t pid = fork();
        if (pid < 0)
                return 1;
        if (pid == 0) {
                /* Namespace A: the host's own network is never touched. */
                if (unshare(CLONE_NEWNET) < 0)
                        exit(glean_test_skip("unshare(CLONE_NEWNET): %s", strerror(errno)));
                fflush(stdout);
                exit(glean_test_main(argc, argv, suites));
        }
        int status;
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
                ;
        return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
