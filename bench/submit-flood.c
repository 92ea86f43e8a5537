/* SPDX-License-Identifier: Apache-2.0 */
/*
 * submit-flood.c — what one user's huge Submit costs the central manager:
 * a raw Submit of N procs ("[ ]" each, in parts under the frame limit,
 * More = true but on the last, TotalProcs declared) straight on the unix
 * socket of a real glean-negotiator, while another client sends a small
 * Query after each answer. Prints the submit's wall time, the longest the
 * other client waited for an answer meanwhile (the event loop blocked),
 * and the daemon's peak RSS (VmHWM); then a submission over
 * MAX_JOBS_PER_SUBMISSION (TOO_MANY procs) and the answer it gets.
 *
 *   build/bench/submit-flood [--procs N] [--too-many M] [--limit L] [--keep x]
 *
 * N defaults to 1,000,000, M to 10,000,000, L (MAX_JOBS_PER_SUBMISSION) to
 * 1,000,000; MAX_JOBS_PER_OWNER and MAX_JOBS_SUBMITTED are off. The daemon
 * is $GLEAN_NEGOTIATOR (default build/bin/glean-negotiator): an older
 * build gives the "before" figures.
 */
#define _GNU_SOURCE
#define BENCH_NAME "submit-flood"
#define TIMEOUT_MS 600000

#include <inttypes.h>
#include <signal.h>

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function" /* pool-common.h's helpers this bench does not use */
#include "pool-common.h"
#pragma GCC diagnostic pop

static void on_die(void) {
        if (nego_pid > 0)
                kill(nego_pid, SIGKILL);
        fprintf(stderr, " (logs in %s)\n", dir);
}

typedef struct Opts {
        long procs, too_many, limit;
} Opts;

static bool option(void *userdata, const char *name, const char *value) {
        Opts *o = userdata;
        long *p = strcmp(name, "--procs") == 0      ? &o->procs
                  : strcmp(name, "--too-many") == 0 ? &o->too_many
                  : strcmp(name, "--limit") == 0    ? &o->limit
                                                    : NULL;
        if (!p)
                return false;
        *p = strtol(value, NULL, 10);
        return *p > 0;
}

static long vm_hwm_kib(pid_t pid) {
        char path[64], line[256];
        long kib = -1;
        snprintf(path, sizeof path, "/proc/%d/status", (int) pid);
        FILE *f = fopen(path, "re");
        while (f && fgets(line, sizeof line, f))
                if (strncmp(line, "VmHWM:", 6) == 0)
                        kib = strtol(line + 6, NULL, 10);
        if (f)
                fclose(f);
        return kib;
}

/* The other client: a Query, its answer, again, until stop_fd is
 * readable; the longest wait, in seconds, written to out_fd. */
static _Noreturn void prober(int stop_fd, int out_fd) {
        int fd = connect_user();
        double worst = 0;
        static const char q[] = "[ Command = \"Query\"; RequestId = 1; Ids = \"1.0\"; Attrs = \"JobStatus\" ]";
        for (;;) {
                struct timeval tv = { 0, 0 };
                fd_set set;
                FD_ZERO(&set);
                FD_SET(stop_fd, &set);
                if (select(stop_fd + 1, &set, NULL, NULL, &tv) > 0)
                        break;
                double t = wall();
                ClassAd *m = NULL;
                GleanCommand cmd;
                char why[256];
                if (glean_frame_write(fd, q, sizeof q - 1, TIMEOUT_MS) < 0 ||
                    glean_msg_recv(fd, TIMEOUT_MS, &m, &cmd, why, sizeof why) < 0)
                        _exit(3);
                classad_free(m);
                if (wall() - t > worst)
                        worst = wall() - t;
                usleep(2000);
        }
        if (write(out_fd, &worst, sizeof worst) != (ssize_t) sizeof worst)
                _exit(4);
        _exit(0);
}

/* A raw Submit of n procs in parts of per_part; the reply (NULL when the
 * connection closed). */
static ClassAd *raw_submit(size_t n, double *ret_seconds) {
        const size_t per_part = 200000; /* 4 bytes each: under the 1 MiB frame */
        static const char cluster[] = "Cluster = [ Cmd = \"/bin/true\"; Iwd = \"/\"; Requirements = false; "
                                      "RequestCpus = 1; RequestMemory = 16 ]";
        int fd = connect_user();
        char *buf = malloc(per_part * 4 + 1024);
        int64_t rid = 1;
        double t = wall();
        if (!buf)
                die("out of memory");
        for (size_t from = 0; from < n; from += per_part, rid++) {
                size_t to = from + per_part < n ? from + per_part : n, len;
                len = (size_t) sprintf(buf, "[ Command = \"Submit\"; RequestId = %" PRId64 "; TotalProcs = %zu; %s; Procs = {",
                                       rid, n, cluster);
                for (size_t i = from; i < to; i++) {
                        memcpy(buf + len, i > from ? ", []" : " []", i > from ? 4 : 3);
                        len += i > from ? 4 : 3;
                }
                len += (size_t) sprintf(buf + len, " }; More = %s ]", to < n ? "true" : "false");
                if (glean_frame_write(fd, buf, len, TIMEOUT_MS) < 0)
                        break; /* refused and closed: the reply says why */
        }
        free(buf);
        ClassAd *reply = NULL;
        for (;;) {
                GleanCommand cmd;
                char why[256];
                classad_free(reply);
                reply = NULL;
                if (glean_msg_recv(fd, TIMEOUT_MS, &reply, &cmd, why, sizeof why) < 0)
                        break;
                bool ok = false;
                classad_eval_bool(reply, "Ok", GLEAN_CA_MODE, &ok);
                if (!ok || classad_has(reply, "ClusterId"))
                        break;
        }
        *ret_seconds = wall() - t;
        close(fd);
        return reply;
}

static void report(const char *what, size_t n, ClassAd *reply, double seconds) {
        char *text = reply ? classad_unparse(reply) : NULL;
        printf("%s: %zu procs: %.2f s; answer %s\n", what, n, seconds, text ? text : "(none: connection closed)");
        free(text);
        classad_free(reply);
}

int main(int argc, char **argv) {
        Opts o = { 1000000, 10000000, 1000000 };
        bool keep = false;
        int r = bench_args(argc, argv, option, &o, &keep);
        if (r)
                return r;
        signal(SIGPIPE, SIG_IGN);
        pool_dir("submit-flood");
        FILE *f = nego_conf_open();
        fprintf(f,
                "MAX_JOBS_PER_SUBMISSION = %ld\nMAX_JOBS_PER_OWNER = 0\nMAX_JOBS_SUBMITTED = 0\n"
                "NEGOTIATOR_INTERVAL = 300\n",
                o.limit);
        conf_close(f, nego_conf);
        const char *prog = getenv("GLEAN_NEGOTIATOR");
        nego_pid = spawn(prog && *prog ? prog : "build/bin/glean-negotiator", nego_conf, nego_log);
        for (int i = 0;; i++) {
                int fd = -1;
                char why[256] = "";
                if (glean_client_connect(sock_path, "glean", 1000, &fd, why, sizeof why) == 0) {
                        close(fd);
                        break;
                }
                if (i > 400)
                        die("glean-negotiator does not answer on %s: %s", sock_path, why);
                usleep(25000);
        }
        printf("daemon %s, MAX_JOBS_PER_SUBMISSION = %ld; RSS at start %.0f MB\n", prog && *prog ? prog : "build/bin/glean-negotiator",
               o.limit, vm_hwm_kib(nego_pid) / 1024.0);

        int stop[2], out[2];
        if (pipe(stop) < 0 || pipe(out) < 0)
                die("pipe: %m");
        pid_t p = fork();
        if (p == 0) {
                close(stop[1]);
                prober(stop[0], out[1]);
        }
        usleep(200000);
        double secs;
        ClassAd *reply = raw_submit((size_t) o.procs, &secs);
        usleep(200000);
        close(stop[1]);
        double worst = -1;
        if (read(out[0], &worst, sizeof worst) != (ssize_t) sizeof worst)
                worst = -1;
        waitpid(p, NULL, 0);
        report("raw Submit", (size_t) o.procs, reply, secs);
        printf("  another client's Query waited at most %.3f s meanwhile (the loop blocked); peak RSS %.0f MB\n", worst,
               vm_hwm_kib(nego_pid) / 1024.0);

        reply = raw_submit((size_t) o.too_many, &secs);
        report("raw Submit over the limit", (size_t) o.too_many, reply, secs);
        printf("  peak RSS %.0f MB\n", vm_hwm_kib(nego_pid) / 1024.0);

        kill(nego_pid, SIGTERM);
        waitpid(nego_pid, NULL, 0);
        nego_pid = 0;
        pool_dir_remove(keep);
        return 0;
}
