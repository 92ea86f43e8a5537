/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test-transfer.c — jobs that carry their files, on two machines for
 * real (docs/transfer.md): the central manager in a network namespace of
 * its own, a submit-only agent (its one slot never starts a job) and an
 * execute agent with another FileSystemDomain, each in a namespace of its
 * own joined to the central manager's by a veth pair (pool-test.h's
 * NetPool); the central manager's namespace forwards between them and
 * each agent has a route to the other (made in the rig, gone with its
 * namespaces). The user nobody submits through the submit agent.
 *
 *   - a file and a directory go across, the job reads them in its sandbox
 *     (not its Iwd), its outputs come back into Iwd, nobody's;
 *   - an input gone before the run holds the job with HoldReasonCode 13;
 *   - an output over max_transfer_output_mb holds it with 12;
 *   - a kill -9 of the execute agent while the output travels leaves no
 *     file under its real name in Iwd;
 *   - whoever knows a live grant's TransferId but not its key gets
 *     nothing;
 *   - an eviction (a Vacate) with ON_EXIT_OR_EVICT brings the sandbox's
 *     files back, and the job goes back to the queue.
 *
 * Needs root (namespaces, the user nobody, ip(8)): skipped otherwise.
 */
#define _GNU_SOURCE

#include "pool-test.h"
#include "xfer/xfer.h"

static const char manager_config[] = "NEGOTIATOR_ADDRESS =\n"
                                     "NEGOTIATOR_INTERVAL = 1\n"
                                     "UPDATE_INTERVAL = 1\n"
                                     "ALIVE_INTERVAL = 1\n";

typedef struct Rig {
        NetPool np;
        Manager m;
        Pool sub, exe;
        bool sub_up, exe_up;
} Rig;

/* Runs argv (ip route ...) in namespace ns: its exit status. */
static int run_in(int ns, const char *const *argv) {
        pid_t pid = fork();
        if (pid == 0) {
                if (netns_enter(ns) < 0)
                        _exit(126);
                int fd = open("/dev/null", O_WRONLY);
                if (fd >= 0)
                        dup2(fd, 1);
                execv(argv[0], (char *const *) argv);
                _exit(127);
        }
        int status = -1;
        if (pid < 0 || waitpid(pid, &status, 0) < 0)
                return -1;
        return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* The agents reach each other through the central manager's namespace. */
static bool rig_routes(Rig *r) {
        pid_t pid = fork();
        if (pid == 0) {
                if (netns_enter(r->np.cm) < 0)
                        _exit(1);
                int fd = open("/proc/sys/net/ipv4/ip_forward", O_WRONLY | O_CLOEXEC);
                _exit(fd >= 0 && write(fd, "1\n", 2) == 2 ? 0 : 2);
        }
        int status = -1;
        waitpid(pid, &status, 0);
        if (!GLEAN_TEST_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "forwarding in the manager's namespace"))
                return false;
        for (size_t k = 0; k < 2; k++) {
                const char *argv[] = { "/usr/sbin/ip", "route", "add", "10.231.0.0/16", "via", r->np.node[k].cm_addr,
                                       NULL };
                int st = run_in(r->np.node[k].ns, argv);
                if (!GLEAN_TEST_CHECK(st == 0, "ip route add in node %zu: %d", k, st))
                        return false;
        }
        return true;
}

static bool rig_start(Rig *r) {
        memset(r, 0, sizeof *r);
        if (!netpool_new(&r->np, 2))
                return false;
        if (!manager_start_ns(&r->m, manager_config, r->np.cm)) {
                netpool_free(&r->np);
                return false;
        }
        if (!rig_routes(r))
                return false;
        /* The submit agent: its slot never starts a job; it serves files. */
        r->sub_up = GLEAN_TEST_CHECK(netpool_agent(&r->np, 0, &r->m, &r->sub, "submit.test",
                                                   "NUM_CPUS = 1\nSTART = False\nFILESYSTEM_DOMAIN = submit.test\nTRANSFER_PORT = 9620\n"
                                                   "UPDATE_INTERVAL = 1\n"),
                                     "submit agent");
        r->exe_up = r->sub_up && GLEAN_TEST_CHECK(netpool_agent(&r->np, 1, &r->m, &r->exe, "exec.test",
                                                                "NUM_CPUS = 1\nFILESYSTEM_DOMAIN = exec.test\n"
                                                                "TRANSFER_PORT = 0\nUPDATE_INTERVAL = 1\n"),
                                                  "execute agent");
        return r->exe_up && wait_slot_listed("slot1@exec.test", 20) && wait_slot_listed("slot1@submit.test", 20);
}

static void rig_stop(Rig *r) {
        if (r->exe_up)
                pool_stop(&r->exe);
        if (r->sub_up)
                pool_stop(&r->sub);
        manager_stop(&r->m);
        netpool_free(&r->np);
}

/* A directory of nobody's under the manager's jobs directory. */
static void user_dir(const Rig *r, const char *name, char *buf, size_t len) {
        snprintf(buf, len, "%s/%s", r->m.jobs, name);
        mkdir(buf, 0755);
        struct passwd *pw = getpwnam("nobody");
        CU_ASSERT_FATAL(pw && chown(buf, pw->pw_uid, pw->pw_gid) == 0);
}

static void user_file(const char *dir, const char *name, const char *text, mode_t mode) {
        char path[512];
        snprintf(path, sizeof path, "%s/%s", dir, name);
        write_file(path, text);
        chmod(path, mode);
        struct passwd *pw = getpwnam("nobody");
        CU_ASSERT(chown(path, pw->pw_uid, pw->pw_gid) == 0);
}

/* Submits body as nobody through the submit agent (so that the queue
 * takes the submit agent for the job's SubmitMachine): the cluster. */
static int64_t submit_via_agent(Rig *r, const char *name, const char *body) {
        char *cm = strdup(getenv("GLEAN_NEGOTIATOR_SOCKET"));
        setenv("GLEAN_NEGOTIATOR_SOCKET", "/nonexistent/negotiator.sock", 1);
        setenv("GLEAN_AGENT_SOCKET", r->sub.sock, 1);
        char why[2048] = "";
        int64_t c = submit_as(&r->m, "nobody", name, body, why, sizeof why);
        setenv("GLEAN_NEGOTIATOR_SOCKET", cm, 1);
        free(cm);
        GLEAN_TEST_CHECK(c > 0, "submit %s through the submit agent: %s", name, why);
        return c;
}

static char *slurp(const char *dir, const char *name) {
        char path[512];
        snprintf(path, sizeof path, "%s/%s", dir, name);
        FILE *f = fopen(path, "r");
        if (!f)
                return NULL;
        char *buf = calloc(1, 1 << 16);
        size_t n = buf ? fread(buf, 1, (1 << 16) - 1, f) : 0;
        (void) n;
        fclose(f);
        return buf;
}

static bool owned_by_nobody(const char *dir, const char *name) {
        char path[512];
        struct stat st;
        snprintf(path, sizeof path, "%s/%s", dir, name);
        struct passwd *pw = getpwnam("nobody");
        return stat(path, &st) == 0 && st.st_uid == pw->pw_uid;
}

/* Names in dir beginning with prefix. */
static size_t names_with(const char *dir, const char *prefix) {
        DIR *d = opendir(dir);
        size_t n = 0;
        struct dirent *e;
        while (d && (e = readdir(d)))
                n += strncmp(e->d_name, prefix, strlen(prefix)) == 0;
        if (d)
                closedir(d);
        return n;
}

static const char job_script[] = "#!/bin/sh\n"
                                 "pwd > where.txt\n"
                                 "cat in.txt data/b.txt > result.txt\n"
                                 "ls data > listing.txt\n"
                                 "test -e \"$IWD_MARK\" && echo iwd-visible > leak.txt\n"
                                 "echo hello from the sandbox\n"
                                 "exit 0\n";

/* ---- a file and a directory across, outputs back ---- */

static void test_round_trip(void) {
        Rig r;
        CU_ASSERT_TRUE_FATAL(rig_start(&r));
        char iwd[256], body[2048], cl[32];
        user_dir(&r, "trip", iwd, sizeof iwd);
        user_file(iwd, "job.sh", job_script, 0755);
        user_file(iwd, "in.txt", "AAA\n", 0644);
        char data[300];
        snprintf(data, sizeof data, "%s/data", iwd);
        mkdir(data, 0755);
        CU_ASSERT(chown(data, getpwnam("nobody")->pw_uid, getpwnam("nobody")->pw_gid) == 0);
        user_file(data, "b.txt", "BBB\n", 0644);
        user_file(iwd, "mark", "in Iwd only\n", 0644);
        snprintf(body, sizeof body,
                 "initialdir = %s\nexecutable = %s/job.sh\nenvironment = \"IWD_MARK=%s/mark\"\n"
                 "should_transfer_files = YES\nwhen_to_transfer_output = ON_EXIT\n"
                 "transfer_input_files = in.txt, data\noutput = out.txt\nerror = err.txt\nqueue\n",
                 iwd, iwd, iwd);
        int64_t c = submit_via_agent(&r, "trip.sub", body);
        if (c <= 0)
                goto out;
        snprintf(cl, sizeof cl, "%lld.0", (long long) c);
        if (!GLEAN_TEST_CHECK(wait_attr("history", cl, "JobStatus", "4", 60), "job %s completes", cl))
                goto out;
        char *res = slurp(iwd, "result.txt"), *where = slurp(iwd, "where.txt"), *list = slurp(iwd, "listing.txt"),
             *outp = slurp(iwd, "out.txt");
        GLEAN_TEST_CHECK(res && strcmp(res, "AAA\nBBB\n") == 0, "result.txt: %s", res ? res : "(none)");
        GLEAN_TEST_CHECK(list && strcmp(list, "b.txt\n") == 0, "the directory went across: %s", list ? list : "(none)");
        GLEAN_TEST_CHECK(outp && strstr(outp, "hello from the sandbox"), "out.txt: %s", outp ? outp : "(none)");
        /* It ran in its sandbox on the execute machine, not in its Iwd. */
        char sandbox[256];
        snprintf(sandbox, sizeof sandbox, "%s/execute/dir_", r.exe.dir);
        GLEAN_TEST_CHECK(where && strncmp(where, sandbox, strlen(sandbox)) == 0, "the job ran in %s (want %s...)",
                         where ? where : "(nothing)", sandbox);
        GLEAN_TEST_CHECK(owned_by_nobody(iwd, "result.txt") && owned_by_nobody(iwd, "out.txt") &&
                                 owned_by_nobody(iwd, "where.txt"),
                         "the outputs are nobody's");
        /* Nothing half-written left, the sandbox gone. */
        GLEAN_TEST_CHECK(names_with(iwd, ".glean-xfer.") == 0, "temporary files left in Iwd");
        char exe_execute[256];
        snprintf(exe_execute, sizeof exe_execute, "%s/execute", r.exe.dir);
        GLEAN_TEST_CHECK(names_with(exe_execute, "dir_") == 0, "the sandbox is still there");
        char *bytes = gl_out("history", cl, "-af", "BytesSent", "BytesRecvd", NULL);
        printf("\n    job %s: BytesSent BytesRecvd = %s", cl, bytes ? bytes : "?\n");
        GLEAN_TEST_CHECK(bytes && atoll(bytes) > 0, "BytesSent: %s", bytes ? bytes : "");
        free(bytes);
        free(res);
        free(where);
        free(list);
        free(outp);
out:
        rig_stop(&r);
}

/* ---- holds ---- */

static void expect_hold(const char *cl, const char *code) {
        GLEAN_TEST_CHECK(wait_attr("q", cl, "JobStatus", "5", 60), "job %s held", cl);
        char *out = gl_out("q", cl, "-af", "HoldReasonCode", "HoldReason", NULL);
        printf("\n    job %s held: %s", cl, out ? out : "?\n");
        GLEAN_TEST_CHECK(out && strncmp(out, code, strlen(code)) == 0 && out[strlen(code)] == ' ',
                         "HoldReasonCode of %s: %s (want %s)", cl, out ? out : "", code);
        free(out);
}

static void test_missing_input_holds(void) {
        Rig r;
        CU_ASSERT_TRUE_FATAL(rig_start(&r));
        char iwd[256], body[2048], cl[32], path[512];
        user_dir(&r, "missing", iwd, sizeof iwd);
        user_file(iwd, "job.sh", job_script, 0755);
        user_file(iwd, "in.txt", "AAA\n", 0644);
        snprintf(body, sizeof body,
                 "initialdir = %s\nexecutable = %s/job.sh\nshould_transfer_files = YES\n"
                 "transfer_input_files = in.txt\nhold = true\nqueue\n",
                 iwd, iwd);
        int64_t c = submit_via_agent(&r, "missing.sub", body);
        if (c <= 0)
                goto out;
        snprintf(cl, sizeof cl, "%lld.0", (long long) c);
        /* There at submit time, gone when the job runs. */
        snprintf(path, sizeof path, "%s/in.txt", iwd);
        unlink(path);
        char *rel = gl_out("release", cl, NULL);
        free(rel);
        expect_hold(cl, "13");
        char *why = gl_out("q", cl, "-af", "HoldReason", NULL);
        GLEAN_TEST_CHECK(why && strstr(why, "in.txt"), "the reason names the file: %s", why ? why : "");
        free(why);
out:
        rig_stop(&r);
}

static void test_output_too_big_holds(void) {
        Rig r;
        CU_ASSERT_TRUE_FATAL(rig_start(&r));
        char iwd[256], body[2048], cl[32];
        user_dir(&r, "big", iwd, sizeof iwd);
        user_file(iwd, "job.sh", "#!/bin/sh\nhead -c 3000000 /dev/zero > big.bin\nexit 0\n", 0755);
        snprintf(body, sizeof body,
                 "initialdir = %s\nexecutable = %s/job.sh\nshould_transfer_files = YES\n"
                 "when_to_transfer_output = ON_EXIT\nmax_transfer_output_mb = 1\nqueue\n",
                 iwd, iwd);
        int64_t c = submit_via_agent(&r, "big.sub", body);
        if (c <= 0)
                goto out;
        snprintf(cl, sizeof cl, "%lld.0", (long long) c);
        expect_hold(cl, "12");
        char path[512];
        snprintf(path, sizeof path, "%s/big.bin", iwd);
        GLEAN_TEST_CHECK(access(path, F_OK) < 0, "big.bin came back although it is over the limit");
out:
        rig_stop(&r);
}

/* ---- kill -9 of the execute agent while the output travels ---- */

static void test_kill9_mid_output(void) {
        Rig r;
        CU_ASSERT_TRUE_FATAL(rig_start(&r));
        char iwd[256], body[2048], cl[32];
        user_dir(&r, "kill9", iwd, sizeof iwd);
        user_file(iwd, "job.sh", "#!/bin/sh\nhead -c 400000000 /dev/urandom > huge.bin\nexit 0\n", 0755);
        snprintf(body, sizeof body,
                 "initialdir = %s\nexecutable = %s/job.sh\nshould_transfer_files = YES\n"
                 "when_to_transfer_output = ON_EXIT\nqueue\n",
                 iwd, iwd);
        int64_t c = submit_via_agent(&r, "kill9.sub", body);
        if (c <= 0)
                goto out;
        snprintf(cl, sizeof cl, "%lld.0", (long long) c);
        /* The output on its way: its file written aside in Iwd. */
        bool seen = false;
        for (int i = 0; i < 120 * 200 && !seen; i++) {
                seen = names_with(iwd, ".glean-xfer.") > 0;
                if (!seen)
                        usleep(5000);
        }
        if (!GLEAN_TEST_CHECK(seen, "no output on its way after 120 s"))
                goto out;
        kill(r.exe.pid, SIGKILL);
        pool_wait_exit(&r.exe, 5);
        r.exe_up = false;
        /* The receiver drops what it had; never a half file under its name. */
        bool clean = false;
        for (int i = 0; i < 300 && !clean; i++) {
                clean = names_with(iwd, ".glean-xfer.") == 0;
                GLEAN_TEST_CHECK(names_with(iwd, "huge.bin") == 0, "huge.bin appeared in Iwd");
                if (!clean)
                        usleep(100000);
        }
        GLEAN_TEST_CHECK(clean, "a .glean-xfer. file is still in Iwd 30 s after the kill");
        GLEAN_TEST_CHECK(names_with(iwd, "huge.bin") == 0, "huge.bin in Iwd after the kill");
out:
        rig_stop(&r);
}



/* Whoever knows a live grant's TransferId but not its key (another user,
 * another job) gets nothing: the handshake fails, nothing is written. */
static void wrong_key_gets_nothing(Rig *r, const char *iwd) {
        char *log = read_log(&r->sub);
        const char *g = log ? strstr(log, "transfer grant ") : NULL;
        char id[XFER_ID_LEN + 1] = "";
        if (g)
                snprintf(id, sizeof id, "%.32s", g + strlen("transfer grant "));
        free(log);
        if (!GLEAN_TEST_CHECK(strlen(id) == XFER_ID_LEN, "no grant in the submit agent's log"))
                return;
        char dir[] = "/tmp/glean-xfer-thief-XXXXXX", manifest[300], why[256] = "";
        CU_ASSERT_FATAL(mkdtemp(dir) != NULL);
        struct passwd *pw = getpwnam("nobody");
        CU_ASSERT(chown(dir, pw->pw_uid, pw->pw_gid) == 0);
        snprintf(manifest, sizeof manifest, "%s.manifest", dir);
        GleanPoolKey wrong;
        CU_ASSERT_FATAL(glean_pool_key_generate(&wrong) == 0);
        ClassAd *ad = NULL;
        CaError err;
        char text[600];
        snprintf(text, sizeof text, "[ Iwd = \"%s\"; Cmd = \"%s/job.sh\"; ShouldTransferFiles = \"YES\" ]", iwd, iwd);
        CU_ASSERT_FATAL(classad_parse(text, strlen(text), CA_MODE_OLD, &ad, &err) >= 0);
        XferJob *xj = NULL;
        CU_ASSERT_FATAL(xfer_job_from_ad(ad, 0, 0, &xj, why, sizeof why) >= 0);
        GleanUserCred cred;
        CU_ASSERT_FATAL(glean_user_cred("nobody", &cred) == 0);
        int fd = -1, rr = -1;
        char addr[32];
        snprintf(addr, sizeof addr, "%s:9620", r->np.node[0].addr);
        /* from the execute machine's namespace, as a user there would */
        CU_ASSERT_FATAL(netns_enter(r->np.node[1].ns) == 0);
        int d = xfer_dial(addr, id, 5000, &fd, why, sizeof why);
        CU_ASSERT_FATAL(netns_enter(r->np.home) == 0);
        if (GLEAN_TEST_CHECK(d >= 0, "dial %s: %s", addr, why)) {
                XferResult res;
                rr = xfer_fetch_input(fd, &wrong, xj, &cred, dir, manifest, 5000, &res);
                close(fd);
                printf("\n    a wrong key for grant %s: %s", id, res.reason);
        }
        GLEAN_TEST_CHECK(rr < 0, "a session with a wrong key succeeded");
        DIR *dd = opendir(dir);
        size_t n = 0;
        struct dirent *e;
        while (dd && (e = readdir(dd)))
                n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
        if (dd)
                closedir(dd);
        GLEAN_TEST_CHECK(n == 0, "%zu files arrived with a wrong key", n);
        unlink(manifest);
        rmdir(dir);
        xfer_job_free(xj);
        classad_free(ad);
}

/* ---- an eviction with ON_EXIT_OR_EVICT brings the files back ---- */

static void test_evict_brings_files(void) {
        Rig r;
        CU_ASSERT_TRUE_FATAL(rig_start(&r));
        char iwd[256], body[2048], cl[32], why[512];
        user_dir(&r, "evict", iwd, sizeof iwd);
        user_file(iwd, "job.sh", "#!/bin/sh\necho step one > partial.txt\nsleep 300\n", 0755);
        snprintf(body, sizeof body,
                 "initialdir = %s\nexecutable = %s/job.sh\nshould_transfer_files = YES\n"
                 "when_to_transfer_output = ON_EXIT_OR_EVICT\nqueue\n",
                 iwd, iwd);
        int64_t c = submit_via_agent(&r, "evict.sub", body);
        if (c <= 0)
                goto out;
        snprintf(cl, sizeof cl, "%lld.0", (long long) c);
        if (!GLEAN_TEST_CHECK(wait_attr("q", cl, "JobStatus", "2", 60), "job %s runs", cl))
                goto out;
        sleep(2); /* it wrote partial.txt */
        wrong_key_gets_nothing(&r, iwd);
        int fd = connect_agent(&r.exe);
        ClassAd *v = NULL;
        glean_msg_new(GLEAN_CMD_VACATE, &v);
        GLEAN_TEST_CHECK(ok_why(call(fd, v), why, sizeof why), "vacate: %s", why);
        classad_free(v);
        close(fd);
        char *part = NULL;
        for (int i = 0; i < 200 && !part; i++) {
                part = slurp(iwd, "partial.txt");
                if (!part)
                        usleep(100000);
        }
        GLEAN_TEST_CHECK(part && strcmp(part, "step one\n") == 0, "partial.txt after the eviction: %s",
                         part ? part : "(none)");
        GLEAN_TEST_CHECK(owned_by_nobody(iwd, "partial.txt"), "partial.txt is not nobody's");
        free(part);
        char *st = gl_out("q", cl, "-af", "JobStatus", "NumJobStarts", NULL);
        printf("\n    evicted job %s: JobStatus NumJobStarts = %s", cl, st ? st : "?\n");
        GLEAN_TEST_CHECK(st && (st[0] == '1' || st[0] == '2'), "the evicted job is back in the queue: %s",
                         st ? st : "");
        free(st);
out:
        rig_stop(&r);
}

int main(int argc, char **argv) {
        static CU_TestInfo tests[] = {
                { "a file and a directory across, the job in its sandbox, outputs back as nobody's",
                  test_round_trip },
                { "an input gone before the run: held with code 13", test_missing_input_holds },
                { "an output over max_transfer_output_mb: held with code 12", test_output_too_big_holds },
                { "kill -9 of the execute agent while the output travels: no half file in Iwd",
                  test_kill9_mid_output },
                { "a wrong key for a live grant gets nothing; an eviction with ON_EXIT_OR_EVICT brings the sandbox's "
                  "files back",
                  test_evict_brings_files },
                CU_TEST_INFO_NULL,
        };
        static CU_SuiteInfo suites[] = {
                { "transfer", NULL, pool_test_suite_cleanup, NULL, pool_test_teardown, tests },
                CU_SUITE_INFO_NULL,
        };
        char why[200];
        if (netpool_unavailable(why, sizeof why))
                return glean_test_skip("%s", why);
        if (!getpwnam("nobody"))
                return glean_test_skip("needs the user nobody");
        if (access("/usr/sbin/ip", X_OK) < 0)
                return glean_test_skip("needs ip(8) for the routes between the agents' namespaces");
        signal(SIGPIPE, SIG_IGN);
        return glean_test_main(argc, argv, suites);
}
