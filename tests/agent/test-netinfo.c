/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test-netinfo.c — the machine's network as slot ad attributes, without a
 * kernel (agent/netinfo.h): sinful strings; the address advertised as
 * MyAddress (the connection's, the route's, else the best the machine
 * has); NetworkInterfaces and ManagerInterface as a policy reads them;
 * and which changes of the network concern the connection to the central
 * manager (a table of cases).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "netinfo.h"
#include "test-util.h"

/* ---- building states ---- */

/* "index name flags": flags among U (up), C (carrier), L (loopback). */
static AgentNetLink link_of(int index, const char *name, const char *flags) {
        AgentNetLink l = { .index = index };
        snprintf(l.name, sizeof l.name, "%s", name);
        l.up = strchr(flags, 'U') != NULL;
        l.lower_up = strchr(flags, 'C') != NULL;
        l.loopback = strchr(flags, 'L') != NULL;
        return l;
}

static void parse_ip(const char *text, int *ret_family, uint8_t out[16]) {
        memset(out, 0, 16);
        *ret_family = strchr(text, ':') ? AF_INET6 : AF_INET;
        GLEAN_TEST_CHECK_FATAL(inet_pton(*ret_family, text, out) == 1, "bad address in the test: %s", text);
}

/* "192.0.2.10/24" on ifindex, with scope (0 universe, 253 link, 254 host). */
static AgentNetAddr addr_of(int ifindex, const char *cidr, unsigned scope) {
        AgentNetAddr a = { .ifindex = ifindex, .scope = scope };
        char host[64];
        snprintf(host, sizeof host, "%s", cidr);
        char *slash = strchr(host, '/');
        *slash = 0;
        a.prefixlen = (unsigned) atoi(slash + 1);
        parse_ip(host, &a.family, a.addr);
        return a;
}

static AgentNetPath path_of(const char *src, int ifindex) {
        AgentNetPath p = { .known = true, .ifindex = ifindex };
        if (src) {
                parse_ip(src, &p.family, p.src);
                p.has_src = true;
        }
        return p;
}

/* A laptop: lo, eth0 (up, 192.0.2.10/24 and 2001:db8::10/64 and a
 * link-local), wlan0 (down, no carrier, 10.1.2.3/16). */
static void laptop(AgentNetState *st) {
        *st = (AgentNetState){ 0 };
        st->links = calloc(3, sizeof *st->links);
        st->addrs = calloc(8, sizeof *st->addrs);
        CU_ASSERT_FATAL(st->links && st->addrs);
        /* Out of order: agent_net_state_sort() orders them. */
        st->links[st->n_links++] = link_of(3, "wlan0", "");
        st->links[st->n_links++] = link_of(1, "lo", "UCL");
        st->links[st->n_links++] = link_of(2, "eth0", "UC");
        st->addrs[st->n_addrs++] = addr_of(2, "fe80::1/64", 253);
        st->addrs[st->n_addrs++] = addr_of(3, "10.1.2.3/16", 0);
        st->addrs[st->n_addrs++] = addr_of(2, "2001:db8::10/64", 0);
        st->addrs[st->n_addrs++] = addr_of(1, "::1/128", 254);
        st->addrs[st->n_addrs++] = addr_of(2, "192.0.2.10/24", 0);
        st->addrs[st->n_addrs++] = addr_of(1, "127.0.0.1/8", 254);
        agent_net_state_sort(st);
}

static char *string_of(const ClassAd *ad, const char *attr) {
        char *s = NULL;
        if (classad_eval_string(ad, attr, CA_MODE_OLD, &s) < 0)
                return strdup("(none)");
        return s;
}

/* attr of ad evaluated as an expression over ad ("NetworkInterfaces[1].Name"). */
static char *eval_text(const ClassAd *ad, const char *expr) {
        ClassAd *tmp = NULL;
        CaError err;
        char *out = NULL;
        if (classad_copy(ad, &tmp) >= 0 && classad_set_expr_text(tmp, "Probe__", expr, CA_MODE_OLD, &err) >= 0) {
                CaValue v = ca_undefined();
                if (classad_eval_attr(tmp, "Probe__", CA_MODE_OLD, &v) >= 0)
                        out = ca_value_unparse(&v);
                ca_value_clear(&v);
        }
        classad_free(tmp);
        return out ? out : strdup("(error)");
}

static void squeeze(const char *in, char *out, size_t len) {
        size_t n = 0;
        for (; *in && n + 1 < len; in++)
                if (*in != ' ')
                        out[n++] = *in;
        out[n] = 0;
}

/* ---- tests ---- */

static void test_sinful(void) {
        static const struct {
                const char *ip;
                unsigned port;
                const char *want;
        } rows[] = {
                { "192.0.2.10", 0, "<192.0.2.10:0>" },
                { "127.0.0.1", 9618, "<127.0.0.1:9618>" },
                { "2001:db8::10", 0, "<[2001:db8::10]:0>" },
                { "::1", 65535, "<[::1]:65535>" },
                { "::ffff:192.0.2.1", 1, "<[::ffff:192.0.2.1]:1>" },
                { "1111:2222:3333:4444:5555:6666:7777:8888", 65535,
                  "<[1111:2222:3333:4444:5555:6666:7777:8888]:65535>" },
        };
        for (size_t i = 0; i < sizeof rows / sizeof *rows; i++) {
                int family;
                uint8_t a[16];
                char buf[AGENT_NET_SINFUL_MAX];
                parse_ip(rows[i].ip, &family, a);
                int r = agent_net_sinful(family, a, rows[i].port, buf, sizeof buf);
                GLEAN_TEST_CHECK(r == 0 && strcmp(buf, rows[i].want) == 0, "row %zu: %s port %u gave %d '%s', want %s",
                                 i, rows[i].ip, rows[i].port, r, r == 0 ? buf : "", rows[i].want);
        }
        uint8_t a[16] = { 192, 0, 2, 1 };
        char small[8];
        CU_ASSERT_EQUAL(agent_net_sinful(AF_INET, a, 0, small, sizeof small), -ENOBUFS);
        CU_ASSERT_EQUAL(agent_net_sinful(AF_UNIX, a, 0, small, sizeof small), -EAFNOSUPPORT);
        CU_ASSERT_EQUAL(agent_net_sinful(AF_INET, a, 70000, small, sizeof small), -EINVAL);
}

static void test_my_address(void) {
        AgentNetState st;
        laptop(&st);
        int family;
        uint8_t a[16];
        char buf[64];
        /* No path: the global IPv4 address of the interface that is up
         * (wlan0's is down, lo's is loopback). */
        CU_ASSERT_FATAL(agent_net_my_address(&st, &family, a) == 0);
        agent_net_addr_string(family, a, buf, sizeof buf);
        GLEAN_TEST_CHECK(strcmp(buf, "192.0.2.10") == 0, "no path: %s", buf);
        /* The route's source, then the connection's. */
        st.route = path_of("2001:db8::10", 2);
        CU_ASSERT_FATAL(agent_net_my_address(&st, &family, a) == 0);
        agent_net_addr_string(family, a, buf, sizeof buf);
        GLEAN_TEST_CHECK(strcmp(buf, "2001:db8::10") == 0, "the route's source: %s", buf);
        st.conn = path_of("127.0.0.1", 1);
        CU_ASSERT_FATAL(agent_net_my_address(&st, &family, a) == 0);
        agent_net_addr_string(family, a, buf, sizeof buf);
        GLEAN_TEST_CHECK(strcmp(buf, "127.0.0.1") == 0, "the connection's: %s", buf);
        /* A route without a source names none. */
        st.conn = (AgentNetPath){ 0 };
        st.route = path_of(NULL, 2);
        CU_ASSERT_FATAL(agent_net_my_address(&st, &family, a) == 0);
        agent_net_addr_string(family, a, buf, sizeof buf);
        GLEAN_TEST_CHECK(strcmp(buf, "192.0.2.10") == 0, "a route without a source: %s", buf);
        agent_net_state_clear(&st);

        /* Only loopback and link-local: link-local (it reaches the link) before loopback. */
        AgentNetLink links[] = { link_of(1, "lo", "UCL"), link_of(2, "eth0", "UC") };
        AgentNetAddr addrs[] = { addr_of(1, "127.0.0.1/8", 254), addr_of(2, "fe80::2/64", 253) };
        AgentNetState s2 = { .links = links, .n_links = 2, .addrs = addrs, .n_addrs = 2 };
        CU_ASSERT_FATAL(agent_net_my_address(&s2, &family, a) == 0);
        agent_net_addr_string(family, a, buf, sizeof buf);
        GLEAN_TEST_CHECK(strcmp(buf, "fe80::2") == 0, "link-local before loopback: %s", buf);
        s2.n_addrs = 1;
        CU_ASSERT_FATAL(agent_net_my_address(&s2, &family, a) == 0);
        agent_net_addr_string(family, a, buf, sizeof buf);
        GLEAN_TEST_CHECK(strcmp(buf, "127.0.0.1") == 0, "loopback alone: %s", buf);
        /* A DAD-failed address is not one. */
        addrs[0].dad_failed = true;
        CU_ASSERT_EQUAL(agent_net_my_address(&s2, &family, a), -ENOENT);
        s2.n_addrs = 0;
        CU_ASSERT_EQUAL(agent_net_my_address(&s2, &family, a), -ENOENT);
}

static void test_ad(void) {
        AgentNetState st;
        laptop(&st);
        st.conn = path_of("192.0.2.10", 2);
        ClassAd *ad = NULL;
        CU_ASSERT_FATAL(classad_new(&ad) >= 0);
        CU_ASSERT_FATAL(agent_net_ad(&st, ad) == 0);
        char *s = string_of(ad, "MyAddress");
        GLEAN_TEST_CHECK(strcmp(s, "<192.0.2.10:0>") == 0, "MyAddress: %s", s);
        free(s);
        s = string_of(ad, "ManagerInterface");
        GLEAN_TEST_CHECK(strcmp(s, "eth0") == 0, "ManagerInterface: %s", s);
        free(s);
        /* As a policy reads them: by index order, addresses of each. */
        static const struct {
                const char *expr, *want;
        } rows[] = {
                { "size(NetworkInterfaces)", "3" },
                { "NetworkInterfaces[0].Name", "\"lo\"" },
                { "NetworkInterfaces[0].Loopback", "true" },
                { "NetworkInterfaces[0].Addresses", "{ \"127.0.0.1/8\",\"::1/128\" }" },
                { "NetworkInterfaces[1].Name", "\"eth0\"" },
                { "NetworkInterfaces[1].Up", "true" },
                { "NetworkInterfaces[1].Addresses", "{ \"192.0.2.10/24\",\"2001:db8::10/64\",\"fe80::1/64\" }" },
                { "member(\"2001:db8::10/64\", NetworkInterfaces[1].Addresses)", "true" },
                { "NetworkInterfaces[2].Name", "\"wlan0\"" },
                { "NetworkInterfaces[2].Up", "false" },
                { "size(NetworkInterfaces[2].Addresses)", "1" },
        };
        for (size_t i = 0; i < sizeof rows / sizeof *rows; i++) {
                char *v = eval_text(ad, rows[i].expr);
                /* The list's own spacing aside (none of these strings holds a space). */
                char norm[256], want[256];
                squeeze(v, norm, sizeof norm);
                squeeze(rows[i].want, want, sizeof want);
                GLEAN_TEST_CHECK(strcmp(norm, want) == 0, "row %zu: %s is %s, want %s", i, rows[i].expr, v,
                                 rows[i].want);
                free(v);
        }
        /* Nothing known: the attributes go (NetworkInterfaces is then empty). */
        AgentNetState none = { 0 };
        CU_ASSERT_FATAL(agent_net_ad(&none, ad) == 0);
        CU_ASSERT_FALSE(classad_has(ad, "MyAddress"));
        CU_ASSERT_FALSE(classad_has(ad, "ManagerInterface"));
        char *v = eval_text(ad, "size(NetworkInterfaces)");
        GLEAN_TEST_CHECK(strcmp(v, "0") == 0, "no interface: size %s", v);
        free(v);
        /* A name with a quote stays one string literal. */
        AgentNetLink odd = link_of(7, "a\"b\\c", "U");
        AgentNetState st2 = { .links = &odd, .n_links = 1 };
        CU_ASSERT_FATAL(agent_net_ad(&st2, ad) == 0);
        v = eval_text(ad, "NetworkInterfaces[0].Name");
        GLEAN_TEST_CHECK(strcmp(v, "\"a\\\"b\\\\c\"") == 0, "an odd name: %s", v);
        free(v);
        /* Same network, other order: the same text. */
        AgentNetState again;
        laptop(&again);
        again.conn = st.conn;
        ClassAd *ad2 = NULL;
        CU_ASSERT_FATAL(classad_new(&ad2) >= 0);
        agent_net_ad(&st, ad);
        agent_net_ad(&again, ad2);
        static const char *const attrs[] = { "MyAddress", "ManagerInterface", "NetworkInterfaces" };
        for (size_t i = 0; i < 3; i++) {
                char *t1 = classad_unparse_attr(ad, attrs[i]), *t2 = classad_unparse_attr(ad2, attrs[i]);
                GLEAN_TEST_CHECK(t1 && t2 && strcmp(t1, t2) == 0, "the same network renders the same %s:\n%s\n%s",
                                 attrs[i], t1, t2);
                free(t1);
                free(t2);
        }
        classad_free(ad2);
        agent_net_state_clear(&again);
        /* Text that goes over the wire parses back. */
        char *text = classad_unparse(ad);
        ClassAd *back = NULL;
        CaError err;
        CU_ASSERT_FATAL(text && classad_parse(text, strlen(text), CA_MODE_OLD, &back, &err) >= 0);
        v = eval_text(back, "NetworkInterfaces[1].Addresses[0]");
        GLEAN_TEST_CHECK(strcmp(v, "\"192.0.2.10/24\"") == 0, "after a round trip: %s", v);
        free(v);
        classad_free(back);
        free(text);
        classad_free(ad);
        agent_net_state_clear(&st);
}

/* What the network does to the connection: eth0 (2) holds 192.0.2.10 and
 * the connection was made from it through eth0. */
static void test_concerns(void) {
        enum { NOTHING, ADD_ADDR, DEL_ADDR, DEL_ADDR_V6, ETH_DOWN, ETH_GONE, UNREACHABLE, ROUTE_WLAN, ROUTE_SAME,
               NEW_SRC_SAME_LINK, NO_CONN, CARRIER_LOST, DAD_FAILED };
        static const struct {
                int change;
                bool want;
                const char *why;
        } rows[] = {
                { NOTHING, false, NULL },
                { ADD_ADDR, false, NULL },
                { DEL_ADDR, true, "its address 192.0.2.10 is gone" },
                { DEL_ADDR_V6, false, NULL },
                { ETH_DOWN, true, "its interface eth0 is down" },
                { ETH_GONE, true, "its address 192.0.2.10 is gone" },
                { UNREACHABLE, true, "there is no route to the central manager any more" },
                { ROUTE_WLAN, true, "the route to the central manager now leaves through wlan0, not eth0" },
                { ROUTE_SAME, false, NULL },
                { NEW_SRC_SAME_LINK, false, NULL },
                { NO_CONN, false, NULL },
                { CARRIER_LOST, false, NULL },
                { DAD_FAILED, true, "its address 192.0.2.10 is gone" },
        };
        for (size_t i = 0; i < sizeof rows / sizeof *rows; i++) {
                AgentNetState st;
                laptop(&st);
                st.conn = path_of("192.0.2.10", 2);
                st.route = path_of("192.0.2.10", 2);
                AgentNetAddr *eth4 = NULL;
                for (size_t j = 0; j < st.n_addrs; j++)
                        if (st.addrs[j].family == AF_INET && st.addrs[j].ifindex == 2)
                                eth4 = &st.addrs[j];
                CU_ASSERT_FATAL(eth4 != NULL);
                switch (rows[i].change) {
                case ADD_ADDR:
                        st.addrs[st.n_addrs++] = addr_of(2, "198.51.100.7/24", 0);
                        break;
                case DEL_ADDR:
                        *eth4 = st.addrs[--st.n_addrs];
                        break;
                case DEL_ADDR_V6:
                        for (size_t j = 0; j < st.n_addrs; j++)
                                if (st.addrs[j].family == AF_INET6 && st.addrs[j].ifindex == 2)
                                        st.addrs[j] = st.addrs[--st.n_addrs], j--;
                        break;
                case ETH_DOWN:
                        st.links[1].up = st.links[1].lower_up = false;
                        break;
                case ETH_GONE:
                        st.links[1] = st.links[--st.n_links];
                        for (size_t j = 0; j < st.n_addrs; j++)
                                if (st.addrs[j].ifindex == 2)
                                        st.addrs[j] = st.addrs[--st.n_addrs], j--;
                        break;
                case UNREACHABLE:
                        st.route = (AgentNetPath){ 0 };
                        st.unreachable = true;
                        break;
                case ROUTE_WLAN:
                        st.links[2].up = st.links[2].lower_up = true;
                        st.route = path_of("10.1.2.3", 3);
                        break;
                case ROUTE_SAME:
                        st.route = path_of(NULL, 2);
                        break;
                case NEW_SRC_SAME_LINK:
                        st.addrs[st.n_addrs++] = addr_of(2, "192.0.2.11/24", 0);
                        st.route = path_of("192.0.2.11", 2);
                        break;
                case NO_CONN:
                        st.conn = (AgentNetPath){ 0 };
                        st.unreachable = true;
                        break;
                case CARRIER_LOST:
                        st.links[1].lower_up = false;
                        break;
                case DAD_FAILED:
                        eth4->dad_failed = true;
                        break;
                }
                CU_ASSERT_FATAL(strcmp(st.links[1].name, "eth0") == 0 || rows[i].change == ETH_GONE);
                char why[256] = "";
                bool got = agent_net_concerns(&st, why, sizeof why);
                GLEAN_TEST_CHECK(got == rows[i].want && (!got || strcmp(why, rows[i].why) == 0),
                                 "row %zu: concerns %d (%s), want %d (%s)", i, got, got ? why : "-", rows[i].want,
                                 rows[i].why ? rows[i].why : "-");
                agent_net_state_clear(&st);
        }
}

/* A connection made through the loopback to a manager on this machine. */
static void test_concerns_loopback(void) {
        AgentNetState st;
        laptop(&st);
        st.conn = path_of("127.0.0.1", 1);
        st.route = path_of("127.0.0.1", 1);
        char why[256];
        /* The laptop leaves its network: nothing to do with the loopback. */
        st.links[1].up = false;
        st.n_addrs = 0;
        st.addrs[st.n_addrs++] = addr_of(1, "127.0.0.1/8", 254);
        CU_ASSERT_FALSE(agent_net_concerns(&st, why, sizeof why));
        /* Without a kernel's interface index (netlink was not there): only the address counts. */
        st.conn.ifindex = 0;
        st.route = (AgentNetPath){ 0 };
        CU_ASSERT_FALSE(agent_net_concerns(&st, why, sizeof why));
        st.n_addrs = 0;
        CU_ASSERT_TRUE(agent_net_concerns(&st, why, sizeof why));
        agent_net_state_clear(&st);
}

static CU_TestInfo tests[] = {
        { "sinful", test_sinful },
        { "my-address", test_my_address },
        { "ad", test_ad },
        { "concerns", test_concerns },
        { "concerns-loopback", test_concerns_loopback },
        CU_TEST_INFO_NULL,
};

static CU_SuiteInfo suites[] = {
        { "netinfo", NULL, NULL, NULL, NULL, tests },
        CU_SUITE_INFO_NULL,
};

int main(int argc, char **argv) {
        return glean_test_main(argc, argv, suites);
}
