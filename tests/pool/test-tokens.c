/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test-tokens.c — machine identities on a real pool (pool-test.h): the
 * central manager's signing key made by `glean token --init`, tokens made
 * by `glean token create` and copied to an agent's SEC_TOKEN_DIRECTORY,
 * the agents dialing over TCP with handshake version 2.
 *
 *   - an agent with its token joins a manager that takes tokens only and
 *     runs a job; the manager logs the method;
 *   - refused, each with the reason in both logs and no slot listed: an
 *     agent with the pool key only; a token of another pool; an expired
 *     token; a token of another machine (its Hello names a.test); a
 *     forged one (its rights altered, the signature kept);
 *   - a revocation (`glean token revoke`) drops the connected agent at
 *     once and keeps it out when it dials again, also after a restart of
 *     the manager;
 *   - a token that expires while its agent is connected drops the agent
 *     when it does;
 *   - an impostor central manager holding the pool key but not the signing
 *     key gets nothing from an agent with a token;
 *   - a manager taking both methods refuses a pool-key agent that claims
 *     the name of a machine with a token.
 *
 * Every test runs twice: on loopback (suite "tokens"), and with the
 * central manager and each agent in a network namespace of its own,
 * joined by veth pairs (suite "tokens in network namespaces",
 * pool-test.h's NetPool), where each machine has an address of its own
 * and ALLOW_WRITE names a host by its address.
 */
#define _GNU_SOURCE
#include "pool-test.h"

#include "common/token.h"

/* The network namespaces of the second suite (NULL in the first): the
 * manager in net->cm, the k-th agent a test starts in node k. */
static NetPool netpool;
static NetPool *net;
static size_t net_next;

static int net_suite_init(void) {
        if (!netpool_new(&netpool, NETPOOL_MAX))
                return 1;
        net = &netpool;
        return 0;
}

static int net_suite_cleanup(void) {
        pool_test_teardown();
        netpool_free(&netpool);
        net = NULL;
        return 0;
}

static void net_test_setup(void) {
        net_next = 0;
}

/* The address the central manager sees the k-th agent of a test at. */
static const char *agent_addr(size_t k) {
        return net ? net->node[k].addr : "127.0.0.1";
}

/* The next agent of the test, named name: on loopback, or in the next
 * node's namespace dialing the manager over its veth pair. */
static bool join(Manager *m, Pool *p, const char *name, const char *extra) {
        if (!net)
                return manager_agent(m, p, name, extra);
        if (!GLEAN_TEST_CHECK(net_next < net->n, "more than %zu agents in one test", net->n))
                return false;
        return netpool_agent(net, net_next++, m, p, name, extra);
}

/* The manager's configuration for tokens: its keys and registry in its
 * directory (the registry under SPOOL, as by default). */
static const char *token_knobs(const Manager *m, const char *methods) {
        static char text[1024];
        snprintf(text, sizeof text,
                 "SEC_TOKEN_POOL_SIGNING_KEY_FILE = %s/signing.key\n"
                 "SEC_TOKEN_MANAGER_KEY_FILE = %s/manager.pub\n"
                 "SEC_DEFAULT_AUTHENTICATION_METHODS = %s\n",
                 m->dir, m->dir, methods);
        return text;
}

/* A manager with a signing key, started. */
static bool token_manager(Manager *m, const char *methods, const char *extra) {
        char conf[2048];
        if (!manager_prepare(m, NULL))
                return false;
        /* manager_prepare wrote the configuration; the knobs that need its directory go after it */
        char *text = NULL;
        if (glean_test_read_file(m->conf, &text, NULL) < 0)
                return false;
        /* in a namespace: listening on every address of it */
        snprintf(conf, sizeof conf, "%s%s%s%s", text, net ? "NEGOTIATOR_ADDRESS =\n" : "", token_knobs(m, methods),
                 extra ? extra : "");
        free(text);
        write_file(m->conf, conf);
        if (net)
                m->ns = net->cm;
        GleanTestRun r;
        if (gl(&r, "token", "--init", NULL) < 0)
                return false;
        bool ok = GLEAN_TEST_CHECK(r.status == 0, "glean token --init: %d %s%s", r.status, r.out, r.err);
        glean_test_run_done(&r);
        return ok && manager_launch(m);
}

/* `glean token create --machine host` into dir/machine: the token's id in
 * id (32 hex digits). */
static bool make_token_rights(const Manager *m, const char *host, const char *lifetime, const char *rights,
                              const char *dir, char id[33]) {
        char out[192];
        snprintf(out, sizeof out, "%s/machine", dir);
        mkdir(dir, 0700);
        unlink(out);
        GleanTestRun r;
        int rc = lifetime ? gl(&r, "token", "create", "--machine", host, "--lifetime", lifetime, "--output", out, NULL)
                 : !rights ? gl(&r, "token", "create", "--machine", host, "--output", out, NULL)
                 : strcmp(rights, "+relay-admins") == 0
                         ? gl(&r, "token", "create", "--machine", host, "--relay-admins", "--output", out, NULL)
                         : gl(&r, "token", "create", "--machine", host, "--rights", rights, "--output", out, NULL);
        if (rc < 0)
                return false;
        bool ok = GLEAN_TEST_CHECK(r.status == 0, "glean token create: %d %s%s", r.status, r.out, r.err);
        const char *p = strstr(r.err, "token ");
        if (ok && p && strlen(p) > 6 + 32) {
                memcpy(id, p + 6, 32);
                id[32] = 0;
        } else
                ok = false;
        glean_test_run_done(&r);
        (void) m;
        return ok;
}

static bool make_token(const Manager *m, const char *host, const char *lifetime, const char *dir, char id[33]) {
        return make_token_rights(m, host, lifetime, NULL, dir, id);
}

/* The credential in dir altered as a machine's root could: its token's
 * rights byte given relay-admins, the signature left as it was. The
 * rights are the token's second byte, whose low 4 bits are the top of the
 * base64 text's third character: set bit 3 = add 32 to that character's
 * value (an agent's rights, 7, are below 8). */
static bool forge_relay_admins(const char *dir) {
        static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
        char path[160], *text = NULL;
        snprintf(path, sizeof path, "%s/machine", dir);
        if (glean_test_read_file(path, &text, NULL) < 0)
                return false;
        char *t = strstr(text, GLEAN_TOKEN_PREFIX);
        const char *c = t ? strchr(b64, t[strlen(GLEAN_TOKEN_PREFIX) + 2]) : NULL;
        bool ok = c && *c && (c - b64) < 32;
        if (ok) {
                t[strlen(GLEAN_TOKEN_PREFIX) + 2] = b64[(c - b64) + 32];
                write_file(path, text);
        }
        free(text);
        return GLEAN_TEST_CHECK(ok, "no token to alter in %s", path);
}

/* An agent named host, with the credential of dir and m's public key. */
static bool token_agent(Manager *m, Pool *p, const char *host, const char *dir, const char *manager_pub,
                        const char *extra) {
        char text[1024];
        snprintf(text, sizeof text,
                 "SEC_TOKEN_DIRECTORY = %s\n"
                 "SEC_TOKEN_MANAGER_KEY_FILE = %s\n"
                 "%s",
                 dir, manager_pub, extra ? extra : "");
        return join(m, p, host, text);
}

static bool manager_log_has(const Manager *m, const char *a, const char *b) {
        Pool fake = { 0 };
        snprintf(fake.log, sizeof fake.log, "%s", m->log);
        return log_line(&fake, a, b, NULL);
}

static bool wait_manager_log(const Manager *m, int seconds, const char *a, const char *b) {
        for (int i = 0; i < seconds * 10; i++) {
                if (manager_log_has(m, a, b))
                        return true;
                usleep(100000);
        }
        return false;
}

/* Whether `glean status` lists a slot whose name holds slot. */
static bool listed(const char *slot) {
        char *out = gl_out("status", "-af", "Name", NULL);
        bool there = out && strstr(out, slot);
        free(out);
        return there;
}

/* No such slot now, nor during the next seconds (0: now only). */
static bool never_listed(const char *slot, int seconds) {
        for (int i = 0;; i++) {
                if (listed(slot))
                        return false;
                if (i >= seconds * 5)
                        return true;
                usleep(200000);
        }
}

/* The slot leaves `glean status` within seconds. */
static bool slot_gone(const char *slot, int seconds) {
        for (int i = 0; i < seconds * 10; i++) {
                if (!listed(slot))
                        return true;
                usleep(100000);
        }
        return false;
}

/* A manager that takes tokens only and agent a.test with its token
 * (lifetime: NULL the default), started: the token's id in id; made, when
 * not NULL, gets the moment the token was made. */
static void token_pool_a(Manager *m, Pool *a, const char *lifetime, char id[33], struct timespec *made) {
        char dir[128], pub[128];

        CU_ASSERT_TRUE_FATAL(token_manager(m, "TOKEN", NULL));
        snprintf(dir, sizeof dir, "%s/tokens-a", m->dir);
        snprintf(pub, sizeof pub, "%s/manager.pub", m->dir);
        CU_ASSERT_TRUE_FATAL(make_token(m, "a.test", lifetime, dir, id));
        if (made)
                clock_gettime(CLOCK_REALTIME, made);
        CU_ASSERT_TRUE_FATAL(token_agent(m, a, "a.test", dir, pub, NULL));
}

static void test_token_joins_and_runs(void) {
        Manager m;
        Pool a;
        char id[33];

        token_pool_a(&m, &a, NULL, id, NULL);
        CU_ASSERT_TRUE(wait_slot_listed("slot1@a.test", 20));
        CU_ASSERT_TRUE(manager_log_has(&m, "agents authenticate by token", "fingerprint"));
        char why[2048] = "";
        int64_t c = submit_as(&m, NULL, "tok", "executable = /bin/sh\narguments = \"-c 'exit 5'\"\nqueue\n", why,
                              sizeof why);
        GLEAN_TEST_CHECK(c > 0, "submit: %s", why);
        if (c > 0) {
                char job[32];
                snprintf(job, sizeof job, "%lld.0", (long long) c);
                CU_ASSERT_TRUE(wait_attr("history", job, "ExitCode", "5", 30));
        }
        char *list = gl_out("token", "list", NULL);
        GLEAN_TEST_CHECK(list && strstr(list, "agent@a.test") && strstr(list, id), "list: %s", list ? list : "");
        free(list);
        pool_stop(&a);
        manager_stop(&m);
}

static void test_refused(void) {
        Manager m, other;
        Pool a, b, c, d, e;
        char dir[128], pub[128], id[33], why[256];

        /* another pool's signing key, for a token of another pool */
        CU_ASSERT_TRUE_FATAL(token_manager(&other, "TOKEN", NULL));
        snprintf(dir, sizeof dir, "%s/tokens-x", other.dir);
        CU_ASSERT_TRUE_FATAL(make_token(&other, "b.test", NULL, dir, id));
        char foreign[128];
        snprintf(foreign, sizeof foreign, "%s", dir);
        manager_kill9(&other); /* its directory stays for the token */

        CU_ASSERT_TRUE_FATAL(token_manager(&m, "TOKEN", NULL));
        snprintf(pub, sizeof pub, "%s/manager.pub", m.dir);

        /* the pool key only */
        CU_ASSERT_TRUE_FATAL(join(&m, &a, "a.test", "SEC_DEFAULT_AUTHENTICATION_METHODS = PASSWORD\n"));
        CU_ASSERT_TRUE(wait_log(&a, 20, "no authentication method in common: the negotiator offers token",
                                "this agent accepts pool key"));
        CU_ASSERT_TRUE(wait_manager_log(&m, 10, "the agent offers pool key, this negotiator accepts token", NULL));

        /* a token of another pool */
        CU_ASSERT_TRUE_FATAL(token_agent(&m, &b, "b.test", foreign, pub, NULL));
        CU_ASSERT_TRUE(wait_log(&b, 20, "the negotiator refused this agent: the token of agent@b.test", NULL));

        /* expired: a lifetime of 1 s, used 2 s later */
        snprintf(dir, sizeof dir, "%s/tokens-c", m.dir);
        CU_ASSERT_TRUE_FATAL(make_token(&m, "c.test", "1s", dir, id));
        sleep(2);
        CU_ASSERT_TRUE_FATAL(token_agent(&m, &c, "c.test", dir, pub, NULL));
        CU_ASSERT_TRUE(wait_log(&c, 20, "the negotiator refused this agent: the token of agent@c.test", NULL));
        CU_ASSERT_TRUE(wait_manager_log(&m, 10, "agent@c.test", "expired"));

        /* another machine's token: d.test's, on an agent that says it is a.test */
        snprintf(dir, sizeof dir, "%s/tokens-d", m.dir);
        CU_ASSERT_TRUE_FATAL(make_token(&m, "d.test", NULL, dir, id));
        CU_ASSERT_TRUE_FATAL(token_agent(&m, &d, "a.test", dir, pub, NULL));
        snprintf(why, sizeof why, "the agent's token names d.test, its Hello the machine a.test");
        CU_ASSERT_TRUE(wait_manager_log(&m, 20, why, NULL));
        if (!GLEAN_TEST_CHECK(wait_log(&d, 10, why, NULL), "d.test never logged: %s", why)) {
                char *log = read_log(&d);
                fprintf(stderr, "d.test's log:\n%s\n", log ? log : "");
                free(log);
        }

        /* forged: e.test's token given relay-admins by its machine's root */
        snprintf(dir, sizeof dir, "%s/tokens-e", m.dir);
        CU_ASSERT_TRUE_FATAL(make_token(&m, "e.test", NULL, dir, id));
        CU_ASSERT_TRUE_FATAL(forge_relay_admins(dir));
        CU_ASSERT_TRUE_FATAL(token_agent(&m, &e, "e.test", dir, pub, NULL));
        CU_ASSERT_TRUE(wait_manager_log(&m, 20, "of agent@e.test: its signature does not verify", NULL));
        CU_ASSERT_TRUE(wait_log(&e, 10, "the negotiator refused this agent: the token of agent@e.test", NULL));

        CU_ASSERT_TRUE(never_listed("@a.test", 2));
        CU_ASSERT_TRUE(never_listed("@b.test", 0));
        CU_ASSERT_TRUE(never_listed("@c.test", 0));
        CU_ASSERT_TRUE(never_listed("@d.test", 0));
        CU_ASSERT_TRUE(never_listed("@e.test", 0));
        pool_stop(&a);
        pool_stop(&b);
        pool_stop(&c);
        pool_stop(&d);
        pool_stop(&e);
        manager_stop(&m);
        remove_dir(other.dir);
}

static void test_revocation(void) {
        Manager m;
        Pool a;
        char id[33];

        token_pool_a(&m, &a, NULL, id, NULL);
        CU_ASSERT_TRUE_FATAL(wait_slot_listed("slot1@a.test", 20));

        char *out = gl_out("token", "revoke", id, NULL);
        free(out);
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        CU_ASSERT_TRUE(wait_manager_log(&m, 10, "closing the connection of", "was revoked"));
        clock_gettime(CLOCK_MONOTONIC, &t1);
        double took = (double) (t1.tv_sec - t0.tv_sec) + (double) (t1.tv_nsec - t0.tv_nsec) / 1e9;
        CU_ASSERT_TRUE(slot_gone("slot1@a.test", 10));
        clock_gettime(CLOCK_MONOTONIC, &t0);
        double gone = (double) (t0.tv_sec - t1.tv_sec) + (double) (t0.tv_nsec - t1.tv_nsec) / 1e9;
        fprintf(stderr, "\n    revoked agent dropped %.2f s after glean token revoke, its slot unlisted %.2f s later\n",
                took, gone);
        /* it dials again and is refused, and learns why */
        CU_ASSERT_TRUE(wait_log(&a, 20, "the negotiator refused this agent: token", "was revoked"));
        /* a restarted manager still refuses it */
        manager_kill9(&m);
        CU_ASSERT_TRUE_FATAL(manager_launch(&m));
        CU_ASSERT_TRUE(never_listed("@a.test", 4));
        char *list = gl_out("token", "list", NULL);
        GLEAN_TEST_CHECK(list && strstr(list, "revoked"), "list: %s", list ? list : "");
        free(list);
        pool_stop(&a);
        manager_stop(&m);
}

/* A token that expires while its agent is connected: the agent is dropped
 * when it does, its slot leaves, and it is refused when it dials again. */
static void test_expiry_while_connected(void) {
        Manager m;
        Pool a;
        char id[33];
        struct timespec made;

        token_pool_a(&m, &a, "8s", id, &made);
        CU_ASSERT_TRUE_FATAL(wait_slot_listed("slot1@a.test", 6));
        CU_ASSERT_TRUE(wait_manager_log(&m, 15, "closing the connection of", "expired on"));
        struct timespec dropped;
        clock_gettime(CLOCK_REALTIME, &dropped);
        CU_ASSERT_TRUE(slot_gone("slot1@a.test", 10));
        /* the token's expiry is its issue second + 8 */
        fprintf(stderr, "\n    agent dropped %.2f s after its token was made (lifetime 8 s)\n",
                (double) (dropped.tv_sec - made.tv_sec) + (double) (dropped.tv_nsec - made.tv_nsec) / 1e9);
        CU_ASSERT_TRUE(dropped.tv_sec >= made.tv_sec + 7);
        CU_ASSERT_TRUE(wait_log(&a, 20, "the negotiator refused this agent: the token of agent@a.test", "expired"));
        CU_ASSERT_TRUE(never_listed("@a.test", 1));
        pool_stop(&a);
        manager_stop(&m);
}

/* A central manager that holds the pool key (every machine does) but not
 * the signing key: an agent with a token does not use the pool key, and
 * one told to use only its token refuses the impostor's. */
static void test_impostor_manager(void) {
        Manager real, fake;
        Pool a;
        char dir[128], pub[128], id[33];

        CU_ASSERT_TRUE_FATAL(token_manager(&real, "TOKEN", NULL));
        snprintf(dir, sizeof dir, "%s/tokens-a", real.dir);
        snprintf(pub, sizeof pub, "%s/manager.pub", real.dir);
        CU_ASSERT_TRUE_FATAL(make_token(&real, "a.test", NULL, dir, id));
        manager_kill9(&real);
        /* the impostor: its own signing key, and the pool key (PASSWORD too) */
        CU_ASSERT_TRUE_FATAL(token_manager(&fake, "TOKEN, PASSWORD", NULL));
        char extra[512];
        snprintf(extra, sizeof extra, "POOL_KEY_FILE = %s\n", fake.key);
        CU_ASSERT_TRUE_FATAL(token_agent(&fake, &a, "a.test", dir, pub, extra));
        /* unset methods: the agent offers its token only; the impostor
         * cannot verify it (another signer) and refuses it */
        CU_ASSERT_TRUE(wait_log(&a, 20, "the negotiator refused this agent", NULL));
        CU_ASSERT_TRUE(never_listed("@a.test", 1));
        pool_stop(&a);
        manager_stop(&fake);
        remove_dir(real.dir);
}

/* Both methods taken (a pool moving to tokens): a machine that has a
 * token cannot be claimed by a pool-key agent. */
static void test_pool_key_cannot_take_a_tokened_name(void) {
        Manager m;
        Pool a, b;
        char dir[128], pub[128], id[33];

        CU_ASSERT_TRUE_FATAL(token_manager(&m, "TOKEN, PASSWORD", NULL));
        snprintf(dir, sizeof dir, "%s/tokens-a", m.dir);
        snprintf(pub, sizeof pub, "%s/manager.pub", m.dir);
        CU_ASSERT_TRUE_FATAL(make_token(&m, "a.test", NULL, dir, id));
        /* a pool-key agent that is not a.test: welcome */
        CU_ASSERT_TRUE_FATAL(join(&m, &b, "b.test", NULL));
        CU_ASSERT_TRUE(wait_slot_listed("slot1@b.test", 20));
        pool_stop(&b);
        /* a pool-key agent that says it is a.test: refused */
        CU_ASSERT_TRUE_FATAL(join(&m, &a, "a.test", NULL));
        CU_ASSERT_TRUE(wait_manager_log(&m, 20, "a.test has a token: it connects with it, not with the pool key",
                                        NULL));
        CU_ASSERT_TRUE(never_listed("@a.test", 1));
        pool_stop(&a);
        /* a.test with its token: in */
        CU_ASSERT_TRUE_FATAL(token_agent(&m, &a, "a.test", dir, pub, NULL));
        CU_ASSERT_TRUE(wait_slot_listed("slot1@a.test", 20));
        pool_stop(&a);
        manager_stop(&m);
}

/* `glean ARGS` run by user on agent a's machine: relayed by a (the
 * central manager's socket out of reach). */
static int via_agent(const Manager *m, const Pool *a, const char *user, char *out, size_t len,
                     const char *const *args) {
        char nosock[160];
        snprintf(nosock, sizeof nosock, "%s/not-here.sock", m->dir);
        setenv("GLEAN_NEGOTIATOR_SOCKET", nosock, 1);
        setenv("GLEAN_AGENT_SOCKET", a->sock, 1);
        int st = glean_as(user, out, len, args);
        unsetenv("GLEAN_AGENT_SOCKET");
        setenv("GLEAN_NEGOTIATOR_SOCKET", m->sock, 1);
        return st;
}

/* What a token lets its machine do: relay (administrators only with
 * relay-admins), advertise, run. */
static void test_rights(void) {
        Manager m;
        Pool a;
        char dir[128], pub[128], id[33], out[2048];
        const char *setfactor[] = { "userprio", "-setfactor", "someone@test.pool", "3", NULL };
        const char *query[] = { "q", NULL };

        if (!getpwnam("nobody")) {
                CU_PASS("no user nobody here");
                return;
        }
        CU_ASSERT_TRUE_FATAL(token_manager(&m, "TOKEN", "ADMINISTRATORS = nobody\n"));
        snprintf(pub, sizeof pub, "%s/manager.pub", m.dir);
        for (int k = 0; k < 2; k++) {
                snprintf(dir, sizeof dir, "%s/tokens-a%d", m.dir, k);
                CU_ASSERT_TRUE_FATAL(make_token_rights(&m, "a.test", NULL, k ? "+relay-admins" : NULL, dir, id));
                CU_ASSERT_TRUE_FATAL(token_agent(&m, &a, "a.test", dir, pub, "NUM_CPUS = 1\n"));
                CU_ASSERT_TRUE(wait_slot_listed("slot1@a.test", 20));
                int st = via_agent(&m, &a, "nobody", out, sizeof out, setfactor);
                if (k)
                        GLEAN_TEST_CHECK(st == 0, "an administrator relayed by a token with relay-admins: exit %d: %s",
                                         st, out);
                else
                        GLEAN_TEST_CHECK(st != 0 && strstr(out, "only root and ADMINISTRATORS"),
                                         "an administrator relayed by a token without relay-admins: exit %d: %s", st,
                                         out);
                st = via_agent(&m, &a, "nobody", out, sizeof out, query);
                GLEAN_TEST_CHECK(st == 0, "a user's query relayed: exit %d: %s", st, out);
                pool_stop(&a);
        }
        /* no relay: the machine's users are not heard */
        snprintf(dir, sizeof dir, "%s/tokens-b", m.dir);
        CU_ASSERT_TRUE_FATAL(make_token_rights(&m, "b.test", NULL, "advertise,run", dir, id));
        CU_ASSERT_TRUE_FATAL(token_agent(&m, &a, "b.test", dir, pub, "NUM_CPUS = 1\n"));
        CU_ASSERT_TRUE(wait_slot_listed("slot1@b.test", 20));
        int st = via_agent(&m, &a, "nobody", out, sizeof out, query);
        GLEAN_TEST_CHECK(st != 0 && strstr(out, "the token of agent@b.test does not let it relay"),
                         "a query relayed by a token without relay: exit %d: %s", st, out);
        CU_ASSERT_TRUE(wait_manager_log(&m, 5, "refused Query relayed by b.test for nobody", "does not let it relay"));
        pool_stop(&a);
        /* no advertise: its slots are not taken */
        snprintf(dir, sizeof dir, "%s/tokens-c", m.dir);
        CU_ASSERT_TRUE_FATAL(make_token_rights(&m, "c.test", NULL, "run,relay", dir, id));
        CU_ASSERT_TRUE_FATAL(token_agent(&m, &a, "c.test", dir, pub, "NUM_CPUS = 1\n"));
        CU_ASSERT_TRUE(wait_manager_log(&m, 20, "agent c.test: SlotUpdate refused: the token of agent@c.test does not let "
                                                 "it advertise slots", NULL));
        CU_ASSERT_TRUE(never_listed("@c.test", 1));
        pool_stop(&a);
        /* no run: listed, never matched */
        snprintf(dir, sizeof dir, "%s/tokens-d", m.dir);
        CU_ASSERT_TRUE_FATAL(make_token_rights(&m, "d.test", NULL, "advertise,relay", dir, id));
        CU_ASSERT_TRUE_FATAL(token_agent(&m, &a, "d.test", dir, pub, "NUM_CPUS = 1\n"));
        CU_ASSERT_TRUE(wait_slot_listed("slot1@d.test", 20));
        char why[2048] = "";
        int64_t c = submit_as(&m, NULL, "norun", "executable = /bin/true\nqueue\n", why, sizeof why);
        GLEAN_TEST_CHECK(c > 0, "submit: %s", why);
        if (c > 0) {
                char job[32];
                snprintf(job, sizeof job, "%lld.0", (long long) c);
                sleep(5); /* two negotiation cycles and more */
                char *q = gl_out("q", job, "-af", "JobStatus", NULL);
                GLEAN_TEST_CHECK(q && atoi(q) == 1, "the job on a pool of a machine without run: JobStatus %s",
                                 q ? q : "?");
                free(q);
        }
        pool_stop(&a);
        manager_stop(&m);
}

/* ALLOW_ and DENY_ lists at the central manager: ALLOW_WRITE leaves out
 * the users of b.test (their submits refused, their reads allowed);
 * ALLOW_ADVERTISE_STARTD lets a.test and b.test advertise, not c.test; an
 * entry that is not one stops the start, naming its line. */
static void test_allow_deny(void) {
        Manager m;
        Pool a, b, c;
        char dir[128], pub[128], id[33], out[2048], why[2048];
        const char *query[] = { "q", NULL };

        if (!getpwnam("nobody")) {
                CU_PASS("no user nobody here");
                return;
        }
        /* a.test by its name on loopback (every agent is 127.0.0.1 there),
         * by its address in the namespaces; a.test is the first agent */
        char knobs[256];
        snprintf(knobs, sizeof knobs,
                 "ALLOW_WRITE = *@test.pool/%s, root@test.pool\n"
                 "ALLOW_ADVERTISE_STARTD = agent@a.test, agent@b.test\n",
                 net ? agent_addr(0) : "a.test");
        CU_ASSERT_TRUE_FATAL(token_manager(&m, "TOKEN", knobs));
        snprintf(pub, sizeof pub, "%s/manager.pub", m.dir);
        const char *hosts[] = { "a.test", "b.test", "c.test" };
        Pool *pools[] = { &a, &b, &c };
        for (int i = 0; i < 3; i++) {
                snprintf(dir, sizeof dir, "%s/tokens-%d", m.dir, i);
                CU_ASSERT_TRUE_FATAL(make_token(&m, hosts[i], NULL, dir, id));
                CU_ASSERT_TRUE_FATAL(token_agent(&m, pools[i], hosts[i], dir, pub, "NUM_CPUS = 1\n"));
        }
        CU_ASSERT_TRUE(wait_slot_listed("slot1@a.test", 20));
        CU_ASSERT_TRUE(wait_slot_listed("slot1@b.test", 20));
        CU_ASSERT_TRUE(wait_manager_log(&m, 20, "agent@c.test may not advertise slots: not in ALLOW_ADVERTISE_STARTD",
                                        NULL));
        CU_ASSERT_TRUE(never_listed("@c.test", 1));
        for (int i = 0; i < 2; i++) {
                char nosock[160];
                snprintf(nosock, sizeof nosock, "%s/not-here.sock", m.dir);
                setenv("GLEAN_NEGOTIATOR_SOCKET", nosock, 1);
                setenv("GLEAN_AGENT_SOCKET", pools[i]->sock, 1);
                int64_t cl = submit_as(&m, "nobody", i ? "b.sub" : "a.sub", "executable = /bin/true\nqueue\n", why,
                                       sizeof why);
                unsetenv("GLEAN_AGENT_SOCKET");
                setenv("GLEAN_NEGOTIATOR_SOCKET", m.sock, 1);
                if (i == 0)
                        GLEAN_TEST_CHECK(cl > 0, "nobody on a.test may submit: %s", why);
                else
                        GLEAN_TEST_CHECK(cl <= 0 && strstr(why, "nobody@test.pool may not write here: not in "
                                                                "ALLOW_WRITE"),
                                         "nobody on b.test may not submit: %lld %s", (long long) cl, why);
                int st = via_agent(&m, pools[i], "nobody", out, sizeof out, query);
                GLEAN_TEST_CHECK(st == 0, "nobody on %s may read: exit %d: %s", hosts[i], st, out);
        }
        char refused[128];
        snprintf(refused, sizeof refused, "refused WRITE to nobody@test.pool from %s", agent_addr(1));
        CU_ASSERT_TRUE(manager_log_has(&m, refused, "ALLOW_WRITE"));
        /* local users: root is listed, nobody is not */
        int64_t cl = submit_as(&m, NULL, "root.sub", "executable = /bin/true\nqueue\n", why, sizeof why);
        GLEAN_TEST_CHECK(cl > 0, "root here may submit: %s", why);
        cl = submit_as(&m, "nobody", "nobody.sub", "executable = /bin/true\nqueue\n", why, sizeof why);
        GLEAN_TEST_CHECK(cl <= 0 && strstr(why, "may not write here"), "nobody here may not: %s", why);
        for (int i = 0; i < 3; i++)
                pool_stop(pools[i]);
        manager_stop(&m);

        /* an entry that is not one */
        CU_ASSERT_TRUE_FATAL(manager_prepare(&m, "ALLOW_WRITE = 10.0.0.0/33\n"));
        CU_ASSERT_FALSE(manager_launch(&m));
        CU_ASSERT_TRUE(manager_log_has(&m, "ALLOW_WRITE: \"10.0.0.0/33\": the netmask is longer than 32 bits", NULL));
        manager_stop(&m);
}

static CU_TestInfo tests[] = {
        { "an agent with its token joins and runs a job", test_token_joins_and_runs },
        { "refused: pool key only, another pool, expired, another machine, forged", test_refused },
        { "a revocation drops the agent at once and keeps it out", test_revocation },
        { "a token that expires while its agent is connected", test_expiry_while_connected },
        { "an impostor central manager with the pool key", test_impostor_manager },
        { "the pool key cannot take the name of a machine with a token", test_pool_key_cannot_take_a_tokened_name },
        { "what a token lets its machine do", test_rights },
        { "ALLOW_WRITE, ALLOW_ADVERTISE_STARTD and a bad entry", test_allow_deny },
        CU_TEST_INFO_NULL,
};

static CU_SuiteInfo suites[] = {
        { "tokens", NULL, pool_test_suite_cleanup, NULL, NULL, tests },
        { "tokens in network namespaces", net_suite_init, net_suite_cleanup, net_test_setup, NULL, tests },
        CU_SUITE_INFO_NULL,
};

int main(int argc, char **argv) {
        char why[200];
        if (netpool_unavailable(why, sizeof why)) {
                printf("the suite \"%s\" is left out: %s\n", suites[1].pName, why);
                suites[1] = (CU_SuiteInfo) CU_SUITE_INFO_NULL;
        }
        signal(SIGPIPE, SIG_IGN);
        return glean_test_main(argc, argv, suites);
}
