/* SPDX-License-Identifier: Apache-2.0 */
/*
 * classad-match — matchmaking throughput of glean's ClassAd library.
 *
 * Usage: classad-match [--repeat K] JOB_AD_FILE MACHINE_ADS_FILE
 *
 * JOB_AD_FILE holds one bracketed job ad; MACHINE_ADS_FILE holds one
 * bracketed machine ad per line (blank lines are skipped).  Both come from
 * bench/classad-gen.  Single-threaded, three timed phases:
 *
 *   parse   every machine line parsed with classad_parse()          (once)
 *   pass a  the job's Requirements against every machine,
 *           classad_requirements_met(job, machine)                 (K times)
 *   pass b  classad_match(job, machine) for every machine, and for
 *           each symmetric match classad_rank(job, machine) +
 *           classad_rank(machine, job) added to rank_sum           (K times)
 *
 * All evaluation is in CA_MODE_OLD, as HTCondor's daemons do it.  Progress
 * lines go to stdout; the last line is always
 *
 *   requirements_true=N symmetric=N rank_sum=X req_per_s=R match_per_s=M parse_per_s=P
 *
 * where the counts and the sum are those of one repetition (every
 * repetition must agree) and the rates are machine ads per second over
 * all repetitions.  Exit status: 0 on success, 1 on usage or I/O errors
 * (and if repetitions disagree), 2 if an ad does not parse (file:line and
 * the parser's message on stderr).
 */

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "classad.h"
#include "common/cleanup.h"

#define BENCH_MODE CA_MODE_OLD
#define BENCH_MAX_REPEAT 100000u
#define EXIT_PARSE 2

#define _cleanup_classad_ _cleanup_(classad_freep)

static inline void classad_freep(ClassAd **ad) {
        classad_free(*ad);
}

/* ---- small utilities ---- */

static double now_seconds(void) {
        struct timespec ts;

        (void) clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double) ts.tv_sec + (double) ts.tv_nsec * 1e-9;
}

static uint64_t per_second(uint64_t n, double seconds) {
        if (seconds <= 0.0)
                return 0;
        return (uint64_t) llround((double) n / seconds);
}

static double percent(uint64_t part, uint64_t whole) {
        return whole == 0 ? 0.0 : 100.0 * (double) part / (double) whole;
}

/* Whole file into a NUL-terminated buffer. */
static int read_file(const char *path, char **ret, size_t *ret_size) {
        _cleanup_close_ int fd = -EBADF;
        _cleanup_free_ char *buf = NULL;
        struct stat st;
        size_t size = 0, cap;

        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        if (fstat(fd, &st) < 0)
                return -errno;
        if (S_ISDIR(st.st_mode))
                return -EISDIR;

        /* Room for the NUL and for the read() that sees EOF, so that a
         * regular file is read without growing the buffer. */
        cap = (st.st_size > 0 ? (size_t) st.st_size : 0) + 4096;
        buf = malloc(cap);
        if (!buf)
                return -ENOMEM;

        for (;;) {
                ssize_t k;

                if (size + 1 >= cap) {
                        char *p = realloc(buf, cap * 2);

                        if (!p)
                                return -ENOMEM;
                        buf = p;
                        cap *= 2;
                }
                k = read(fd, buf + size, cap - 1 - size);
                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                if (k == 0)
                        break;
                size += (size_t) k;
        }
        buf[size] = '\0';

        *ret = TAKE_PTR(buf);
        *ret_size = size;
        return 0;
}

static bool is_blank(const char *s, size_t len) {
        for (size_t i = 0; i < len; i++)
                if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r' && s[i] != '\n')
                        return false;
        return true;
}

/* ---- the machine set ---- */

typedef struct MachineSet {
        ClassAd **ads;
        size_t n, cap;
        size_t bytes; /* of ad text parsed */
} MachineSet;

static void machine_set_done(MachineSet *m) {
        for (size_t i = 0; i < m->n; i++)
                classad_free(m->ads[i]);
        free(m->ads);
        *m = (MachineSet) {};
}

static int machine_set_push(MachineSet *m, ClassAd *ad) {
        if (m->n == m->cap) {
                size_t cap = m->cap ? m->cap * 2 : 1024;
                ClassAd **p = realloc(m->ads, cap * sizeof *p);

                if (!p)
                        return -ENOMEM;
                m->ads = p;
                m->cap = cap;
        }
        m->ads[m->n++] = ad;
        return 0;
}

/* Parse one ad per line of text into m. On a parse error reports
 * path:line:column and returns -EBADMSG. */
static int parse_machines(const char *path, const char *text, size_t size, MachineSet *m) {
        const char *p = text, *end = text + size;
        size_t line = 0;
        int r;

        while (p < end) {
                const char *nl = memchr(p, '\n', (size_t) (end - p));
                size_t len = nl ? (size_t) (nl - p) : (size_t) (end - p);
                ClassAd *ad = NULL;
                CaError err = {};

                line++;
                if (!is_blank(p, len)) {
                        r = classad_parse(p, len, BENCH_MODE, &ad, &err);
                        if (r == -ENOMEM)
                                return r;
                        if (r < 0) {
                                fprintf(stderr, "%s:%zu:%d: %s\n", path, line, err.column,
                                        err.msg[0] ? err.msg : strerror(-r));
                                return -EBADMSG;
                        }
                        r = machine_set_push(m, ad);
                        if (r < 0) {
                                classad_free(ad);
                                return r;
                        }
                        m->bytes += len;
                }
                p += len + 1;
        }
        return 0;
}

static int parse_job(const char *path, ClassAd **ret) {
        _cleanup_free_ char *text = NULL;
        ClassAd *ad = NULL;
        CaError err = {};
        size_t size;
        int r;

        r = read_file(path, &text, &size);
        if (r < 0) {
                fprintf(stderr, "classad-match: failed to read '%s': %s\n", path, strerror(-r));
                return r;
        }
        r = classad_parse(text, size, BENCH_MODE, &ad, &err);
        if (r == -ENOMEM)
                return r;
        if (r < 0) {
                fprintf(stderr, "%s:%d:%d: %s\n", path, err.line, err.column,
                        err.msg[0] ? err.msg : strerror(-r));
                return -EBADMSG;
        }
        *ret = ad;
        return 0;
}

/* ---- the passes ---- */

typedef struct PassResult {
        uint64_t requirements_true;
        uint64_t symmetric;
        double rank_sum;
        double seconds;
} PassResult;

/* How many machines ahead the passes ask for the next ads to be loaded,
 * as a matchmaker walking the slots would: the ad itself twice as far
 * ahead, so that classad_prefetch() finds it when it asks for the ad's
 * attribute table. */
#define PREFETCH_AHEAD 4

static void prefetch_ahead(const MachineSet *m, size_t i) {
        if (i + 2 * PREFETCH_AHEAD < m->n)
                __builtin_prefetch(m->ads[i + 2 * PREFETCH_AHEAD]);
        if (i + PREFETCH_AHEAD < m->n)
                classad_prefetch(m->ads[i + PREFETCH_AHEAD]);
}

static uint64_t pass_requirements_once(const ClassAd *job, const MachineSet *m) {
        uint64_t n = 0;

        for (size_t i = 0; i < m->n; i++) {
                prefetch_ahead(m, i);
                if (classad_requirements_met(job, m->ads[i], BENCH_MODE))
                        n++;
        }
        return n;
}

static void pass_match_once(const ClassAd *job, const MachineSet *m, uint64_t *ret_symmetric, double *ret_rank_sum) {
        uint64_t n = 0;
        double sum = 0.0;

        for (size_t i = 0; i < m->n; i++) {
                const ClassAd *machine = m->ads[i];

                prefetch_ahead(m, i);
                if (!classad_match(job, machine, BENCH_MODE))
                        continue;
                n++;
                sum += classad_rank(job, machine, BENCH_MODE) + classad_rank(machine, job, BENCH_MODE);
        }
        *ret_symmetric = n;
        *ret_rank_sum = sum;
}

static int run_pass_a(const ClassAd *job, const MachineSet *m, unsigned repeat, PassResult *res) {
        double t0 = now_seconds();

        for (unsigned k = 0; k < repeat; k++) {
                uint64_t n = pass_requirements_once(job, m);

                if (k == 0)
                        res->requirements_true = n;
                else if (n != res->requirements_true) {
                        fprintf(stderr, "classad-match: pass a, repetition %u: %" PRIu64 " true, first repetition %" PRIu64 "\n",
                                k + 1, n, res->requirements_true);
                        return -EIO;
                }
        }
        res->seconds = now_seconds() - t0;
        return 0;
}

static int run_pass_b(const ClassAd *job, const MachineSet *m, unsigned repeat, PassResult *res) {
        double t0 = now_seconds();

        for (unsigned k = 0; k < repeat; k++) {
                uint64_t n;
                double sum;

                pass_match_once(job, m, &n, &sum);
                if (k == 0) {
                        res->symmetric = n;
                        res->rank_sum = sum;
                } else if (n != res->symmetric || sum != res->rank_sum) {
                        fprintf(stderr, "classad-match: pass b, repetition %u: %" PRIu64 " matches, rank_sum %.17g; "
                                "first repetition %" PRIu64 ", %.17g\n",
                                k + 1, n, sum, res->symmetric, res->rank_sum);
                        return -EIO;
                }
        }
        res->seconds = now_seconds() - t0;
        return 0;
}

/* ---- command line ---- */

typedef struct Options {
        unsigned repeat;
        const char *job_path;
        const char *machines_path;
} Options;

static void usage(FILE *f) {
        fputs("Usage: classad-match [--repeat K] JOB_AD_FILE MACHINE_ADS_FILE\n"
              "\n"
              "  -r, --repeat K   run the evaluation passes K times (default 1)\n"
              "  -h, --help       show this help\n", f);
}

/* Returns 1 to go on, 0 to exit successfully (--help), -EINVAL on bad usage. */
static int parse_argv(int argc, char **argv, Options *ret) {
        static const struct option options[] = {
                { "repeat", required_argument, NULL, 'r' },
                { "help",   no_argument,       NULL, 'h' },
                {}
        };
        Options o = { .repeat = 1 };
        int c;

        while ((c = getopt_long(argc, argv, "r:h", options, NULL)) >= 0)
                switch (c) {
                case 'r': {
                        unsigned long v;
                        char *end;

                        errno = 0;
                        v = strtoul(optarg, &end, 10);
                        if (errno != 0 || *optarg < '1' || *optarg > '9' || *end != '\0' || v > BENCH_MAX_REPEAT) {
                                fprintf(stderr, "classad-match: invalid --repeat '%s' (1..%u)\n", optarg, BENCH_MAX_REPEAT);
                                return -EINVAL;
                        }
                        o.repeat = (unsigned) v;
                        break;
                }
                case 'h':
                        usage(stdout);
                        return 0;
                default:
                        usage(stderr);
                        return -EINVAL;
                }

        if (argc - optind != 2) {
                usage(stderr);
                return -EINVAL;
        }
        o.job_path = argv[optind];
        o.machines_path = argv[optind + 1];
        *ret = o;
        return 1;
}

/* ---- main ---- */

static int exit_status(int r) {
        return r == -EBADMSG ? EXIT_PARSE : EXIT_FAILURE;
}

static int run(const Options *o) {
        _cleanup_classad_ ClassAd *job = NULL;
        _cleanup_free_ char *text = NULL;
        MachineSet m = {};
        PassResult a = {}, b = {};
        double t0, t_read, t_parse, t_free;
        uint64_t machines, evals;
        size_t size;
        int r;

        r = parse_job(o->job_path, &job);
        if (r < 0)
                return r;
        printf("job: %s, %zu attributes\n", o->job_path, classad_size(job));

        t0 = now_seconds();
        r = read_file(o->machines_path, &text, &size);
        if (r < 0) {
                fprintf(stderr, "classad-match: failed to read '%s': %s\n", o->machines_path, strerror(-r));
                return r;
        }
        t_read = now_seconds() - t0;
        printf("read: %s, %zu bytes in %.3f s\n", o->machines_path, size, t_read);

        t0 = now_seconds();
        r = parse_machines(o->machines_path, text, size, &m);
        t_parse = now_seconds() - t0;
        if (r < 0) {
                if (r != -EBADMSG)
                        fprintf(stderr, "classad-match: failed to parse '%s': %s\n", o->machines_path, strerror(-r));
                machine_set_done(&m);
                return r;
        }
        free(TAKE_PTR(text));
        printf("parse: %zu machine ads, %zu bytes in %.3f s: %" PRIu64 " ads/s, %.1f MB/s\n",
               m.n, m.bytes, t_parse, per_second(m.n, t_parse),
               t_parse > 0 ? (double) m.bytes / t_parse / 1e6 : 0.0);
        fflush(stdout);

        machines = m.n;
        evals = machines * o->repeat;

        r = run_pass_a(job, &m, o->repeat, &a);
        if (r < 0)
                goto finish;
        printf("pass a (job Requirements vs machine): %zu machines x %u in %.3f s: %" PRIu64 " evals/s, "
               "%" PRIu64 " true (%.1f%%)\n",
               m.n, o->repeat, a.seconds, per_second(evals, a.seconds),
               a.requirements_true, percent(a.requirements_true, m.n));
        fflush(stdout);

        r = run_pass_b(job, &m, o->repeat, &b);
        if (r < 0)
                goto finish;
        printf("pass b (symmetric match + both Ranks): %zu machines x %u in %.3f s: %" PRIu64 " pairs/s, "
               "%" PRIu64 " symmetric (%.1f%%), rank_sum %.17g\n",
               m.n, o->repeat, b.seconds, per_second(evals, b.seconds),
               b.symmetric, percent(b.symmetric, m.n), b.rank_sum);
        fflush(stdout);

finish:
        t0 = now_seconds();
        machine_set_done(&m);
        t_free = now_seconds() - t0;
        if (r < 0)
                return r;
        printf("free: %.3f s\n", t_free);

        printf("requirements_true=%" PRIu64 " symmetric=%" PRIu64 " rank_sum=%.6f "
               "req_per_s=%" PRIu64 " match_per_s=%" PRIu64 " parse_per_s=%" PRIu64 "\n",
               a.requirements_true, b.symmetric, b.rank_sum,
               per_second(evals, a.seconds), per_second(evals, b.seconds), per_second(machines, t_parse));
        return 0;
}

int main(int argc, char **argv) {
        Options o;
        int r;

        r = parse_argv(argc, argv, &o);
        if (r <= 0)
                return r < 0 ? EXIT_FAILURE : EXIT_SUCCESS;

        r = run(&o);
        if (fflush(stdout) != 0 && r >= 0) {
                fprintf(stderr, "classad-match: failed to write output: %s\n", strerror(errno));
                return EXIT_FAILURE;
        }
        return r < 0 ? exit_status(r) : EXIT_SUCCESS;
}
