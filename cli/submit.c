/* SPDX-License-Identifier: Apache-2.0 */
/*
 * submit.c — `glean submit FILE` (condor_submit): read an HTCondor submit
 * description and queue its jobs with the central manager, as one cluster
 * sent in Submit parts under the frame limit (jobs.h). With --dry-run,
 * print the job ads instead, one per job: one attribute per line with a
 * blank line after each ad (as condor_submit -dump and condor_q -l print
 * them), or with --bracketed one "[ ... ]" ad per line.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "common/proto.h"
#include "config/config.h"
#include "jobs.h"

#define USAGE "usage: glean submit [--socket PATH] FILE\n       glean submit --dry-run [--cluster N] [--bracketed] FILE"
#define SUBMIT_TIMEOUT_MS 300000 /* a queue 100000 is one transaction */

typedef struct SubmitArgs {
        bool dry_run;
        bool bracketed;
        int64_t cluster;
        const char *file; /* "-": standard input */
        const char *socket;
        int64_t retry_s; /* SUBMIT_RETRY_TIME */
} SubmitArgs;

static void submit_help(FILE *f) {
        fprintf(f,
                USAGE "\n"
                "\n"
                "Read the HTCondor submit description FILE ('-': standard input) and\n"
                "queue its jobs with the central manager, as one cluster; prints\n"
                "\"N job(s) submitted to cluster C.\" as condor_submit does.\n"
                "\n"
                "  --socket PATH  the central manager's (or an agent's) socket; default:\n"
                "                 NEGOTIATOR_SOCKET when it exists, else this machine's agent\n"
                "  --dry-run      print the job ads instead of queueing them\n"
                "  --cluster N    with --dry-run, the cluster id of the jobs, $(Cluster)\n"
                "                 (default 1); when queueing, the central manager gives it\n"
                "  --bracketed    one bracketed ad per line instead of one attribute\n"
                "                 per line with a blank line after each ad\n"
                "  -h, --help     show this help\n"
                "\n"
                "JOB_DEFAULT_REQUESTMEMORY and the other defaults come from the\n"
                "configuration ($GLEAN_CONFIG, else /etc/glean/glean.conf).\n"
                "\n"
                "Each submission has an id of its own (128 random bits, GleanSubmitId in\n"
                "the cluster's ad). When the answer is lost (the central manager went away\n"
                "after it got the jobs) the submission is sent again, with the same id, for\n"
                "up to SUBMIT_RETRY_TIME seconds (default 120): the central manager answers\n"
                "a repeat with the first answer, so the jobs are queued once. If it does not\n"
                "come back in time the outcome is unknown, and the message says how to\n"
                "look for it: glean q -constraint 'GleanSubmitId == \"ID\"'.\n"
                "\n"
                "Exit status: 0 when the jobs were queued (or the ads printed), 2 when\n"
                "FILE is wrong (the error names file and line; nothing is queued) or\n"
                "the command line is, 1 when the central manager refused the jobs or\n"
                "could not be reached (nothing was queued), when the outcome is unknown\n"
                "(said so), or on a system failure.\n");
}

#define usage_error(...) cli_usage_error("submit", USAGE, __VA_ARGS__)

static int parse_cluster(const char *text, int64_t *ret) {
        char *end;
        long long v;

        errno = 0;
        v = strtoll(text, &end, 10);
        if (errno != 0 || end == text || *end || v < 1 || v > INT32_MAX)
                return usage_error("--cluster: '%s' is not a cluster id (1 to %d)", text, INT32_MAX);
        *ret = v;
        return 0;
}

/* Returns 0 with *ret filled, 1 when --help was shown, -EINVAL on a usage
 * error (already reported). */
static int parse_args(int argc, char **argv, SubmitArgs *ret) {
        enum { OPT_DRY_RUN = 0x100, OPT_CLUSTER, OPT_BRACKETED, OPT_SOCKET };
        static const struct option options[] = {
                { "help",      no_argument,       NULL, 'h' },
                { "dry-run",   no_argument,       NULL, OPT_DRY_RUN },
                { "cluster",   required_argument, NULL, OPT_CLUSTER },
                { "bracketed", no_argument,       NULL, OPT_BRACKETED },
                { "socket",    required_argument, NULL, OPT_SOCKET },
                {}
        };
        SubmitArgs args = { .cluster = 1 };
        int c, r;

        opterr = 0;
        optind = 0; /* full reset: argv is the verb's, not the program's */
        while ((c = getopt_long(argc, argv, "+:h", options, NULL)) >= 0) {
                switch (c) {
                case 'h':
                        submit_help(stdout);
                        return 1;
                case OPT_DRY_RUN:
                        args.dry_run = true;
                        break;
                case OPT_CLUSTER:
                        r = parse_cluster(optarg, &args.cluster);
                        if (r < 0)
                                return r;
                        break;
                case OPT_BRACKETED:
                        args.bracketed = true;
                        break;
                case OPT_SOCKET:
                        args.socket = optarg;
                        break;
                case ':':
                        return usage_error("option '%s' needs an argument", argv[optind - 1]);
                default:
                        if (optopt == 0)
                                return usage_error("unknown option '%s'", argv[optind - 1]);
                        if (optopt == 'h' || optopt == OPT_DRY_RUN || optopt == OPT_BRACKETED)
                                return usage_error("option '%s' takes no argument", argv[optind - 1]);
                        return usage_error("unknown option '-%c'", optopt);
                }
        }
        if (optind >= argc)
                return usage_error("missing FILE");
        if (optind + 1 < argc)
                return usage_error("one FILE only, got also '%s'", argv[optind + 1]);
        args.file = argv[optind];
        *ret = args;
        return 0;
}

/* Reports err; returns the exit code for r. */
static int report(int r, const ConfigError *err) {
        _cleanup_free_ char *msg = NULL;

        if (r == -ENOMEM) {
                fprintf(stderr, "glean submit: out of memory\n");
                return CLI_EXIT_FAILURE;
        }
        msg = config_error_format(err);
        fprintf(stderr, "glean submit: %s\n", msg && *msg ? msg : strerror(-r));
        return CLI_EXIT_USAGE;
}

/* All of standard input, NUL-terminated. */
static int read_stdin(char **ret) {
        _cleanup_free_ char *data = NULL;
        size_t len = 0, cap = 0;

        for (;;) {
                size_t k;

                if (cap - len < 4096) {
                        char *p;

                        cap = cap ? cap * 2 : 16384;
                        if (cap > 64u * 1024u * 1024u)
                                return -EFBIG;
                        p = realloc(data, cap);
                        if (!p)
                                return -ENOMEM;
                        data = p;
                }
                k = fread(data + len, 1, cap - len - 1, stdin);
                len += k;
                if (k == 0)
                        break;
        }
        if (ferror(stdin))
                return -EIO;
        data[len] = '\0';
        if (strlen(data) != len)
                return -EINVAL;
        *ret = data;
        data = NULL;
        return 0;
}

static int print_ads(ClassAd **ads, size_t n, bool bracketed) {
        for (size_t i = 0; i < n; i++) {
                _cleanup_free_ char *text = bracketed ? classad_unparse(ads[i]) : classad_unparse_old(ads[i]);

                if (!text) {
                        fprintf(stderr, "glean submit: out of memory\n");
                        return CLI_EXIT_FAILURE;
                }
                fputs(text, stdout);
                fputs("\n", stdout); /* ends the line, or leaves a blank one after an old ad */
        }
        if (fflush(stdout) != 0 || ferror(stdout)) {
                fprintf(stderr, "glean submit: cannot write the ads: %s\n", strerror(errno));
                return CLI_EXIT_FAILURE;
        }
        return CLI_EXIT_OK;
}

/* How one attempt at the submission ended. */
typedef enum SubmitOutcome {
        SUBMIT_QUEUED,    /* answered: the cluster made (or made by the first attempt) */
        SUBMIT_REFUSED,   /* answered Ok = false: nothing queued */
        SUBMIT_UNREACHED, /* no connection: nothing sent by this attempt */
        SUBMIT_LOST,      /* sent (some of it), no answer: the outcome unknown */
} SubmitOutcome;

/* The agent's reasons (agent/daemon/relay.c) for a relayed request whose
 * answer it lost (the outcome unknown, not a refusal), and for one it
 * could not send up (nothing of this attempt reached the manager). */
static bool relay_lost(const char *reason) {
        return reason && strncmp(reason, "the connection to the central manager was lost", 46) == 0;
}

static bool relay_unsent(const char *reason) {
        return reason && strcmp(reason, "central manager not connected") == 0;
}

/* One attempt on connection c: every part (each with the submission's id),
 * then the replies. The central manager answers the last part with
 * ClusterId and NumProcs (and may answer the others with a plain Ok); an
 * Ok = false ends it. why gets what went wrong. */
static SubmitOutcome submit_once(CliConn *c, const CliSubmitPlan *plan, const char *submit_id, int64_t *ret_cluster,
                                 int64_t *ret_procs, char *why, size_t whylen) {
        int64_t last_id = 0;
        int r;

        for (size_t k = 0; k < plan->n_parts; k++) {
                ClassAd *msg = NULL;

                r = cli_submit_message(plan, k, &msg);
                if (r >= 0) {
                        last_id = c->next_id++;
                        r = classad_set_int(msg, "RequestId", last_id);
                }
                if (r >= 0)
                        r = classad_set_string(msg, "SubmitId", submit_id);
                if (r >= 0)
                        r = classad_set_int(msg, "TotalProcs", (int64_t) plan->n);
                if (r == -ENOMEM) {
                        classad_free(msg);
                        snprintf(why, whylen, "out of memory");
                        return k == 0 ? SUBMIT_UNREACHED : SUBMIT_LOST;
                }
                if (r >= 0)
                        r = glean_msg_send(c->fd, msg, SUBMIT_TIMEOUT_MS);
                classad_free(msg);
                if (r < 0) {
                        /* A refusal may have closed the connection: its
                         * reason is read below. */
                        snprintf(why, whylen, "cannot send part %zu of %zu to %s: %s", k + 1, plan->n_parts, c->path,
                                 strerror(-r));
                        break;
                }
        }
        for (;;) {
                _cleanup_free_ char *reason = NULL;
                ClassAd *msg = NULL;
                GleanCommand cmd;
                char rwhy[512] = "";
                int64_t rid = -1;
                bool ok = false;

                r = glean_msg_recv(c->fd, SUBMIT_TIMEOUT_MS, &msg, &cmd, rwhy, sizeof rwhy);
                if (r < 0) {
                        if (!why[0])
                                snprintf(why, whylen, "%s %s: %s", r == -EBADMSG ? "malformed reply from" : "no answer from",
                                         c->path, rwhy);
                        return SUBMIT_LOST;
                }
                if (cmd != GLEAN_CMD_REPLY) {
                        classad_free(msg);
                        continue;
                }
                classad_eval_int(msg, "RequestId", GLEAN_CA_MODE, &rid);
                classad_eval_bool(msg, "Ok", GLEAN_CA_MODE, &ok);
                if (!ok) {
                        classad_eval_string(msg, "Reason", GLEAN_CA_MODE, &reason);
                        classad_free(msg);
                        snprintf(why, whylen, "%s", reason ? reason : "no reason given");
                        return relay_lost(reason) ? SUBMIT_LOST : relay_unsent(reason) ? SUBMIT_UNREACHED : SUBMIT_REFUSED;
                }
                if (rid == last_id || classad_has(msg, "ClusterId")) {
                        _cleanup_free_ char *warning = NULL;
                        /* A submit warning (SUBMIT_REQUIREMENT_<Name>_IS_WARNING): queued all the same. */
                        if (classad_eval_string(msg, "Warning", GLEAN_CA_MODE, &warning) >= 0 && *warning)
                                fprintf(stderr, "glean submit: WARNING: committed the submission with this warning: %s\n",
                                        warning);
                        r = classad_eval_int(msg, "ClusterId", GLEAN_CA_MODE, ret_cluster);
                        if (r >= 0 && classad_eval_int(msg, "NumProcs", GLEAN_CA_MODE, ret_procs) < 0)
                                *ret_procs = (int64_t) plan->n;
                        classad_free(msg);
                        if (r < 0) {
                                snprintf(why, whylen, "malformed reply from %s: no ClusterId", c->path);
                                return SUBMIT_LOST;
                        }
                        return SUBMIT_QUEUED;
                }
                classad_free(msg);
        }
}

/* 128 random bits in hex: the submission's id (a repeat of it is answered
 * with the first answer, never queued twice). */
static int make_submit_id(char ret[static 33]) {
        uint8_t b[16];
        size_t got = 0;

        while (got < sizeof b) {
                ssize_t k = getrandom(b + got, sizeof b - got, 0);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k <= 0)
                        return -errno;
                got += (size_t) k;
        }
        for (size_t i = 0; i < sizeof b; i++)
                snprintf(ret + 2 * i, 3, "%02x", b[i]);
        return 0;
}

static double mono_now(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

/* Sends the submission, and again (the same id, on a new connection)
 * while its answer is lost, for up to retry_s seconds: the central
 * manager restarting after a crash answers a repeat with what it had
 * committed. */
void cli_submit_record_umask(ClassAd **ads, size_t n) {
        /* The submitter's umask: the job's output files honour it (agent/exec/jobspec.c). */
        mode_t mask = umask(022);
        umask(mask);
        for (size_t i = 0; i < n; i++)
                if (!classad_has(ads[i], "Umask"))
                        classad_set_int(ads[i], "Umask", (int64_t) mask);
}

/* Whether the jobs' files or event log live on this machine: then this
 * machine's agent relays the submit, and so becomes their SubmitMachine,
 * which serves their files and writes their log (docs/transfer.md). */
static bool wants_submit_agent(ClassAd *const *ads, size_t n) {
        static const char *const attrs[] = { "UserLog", "TransferInput", "TransferOutput" };
        for (size_t i = 0; i < n; i++) {
                char *v = NULL;
                for (size_t k = 0; k < sizeof attrs / sizeof *attrs; k++)
                        if (classad_has(ads[i], attrs[k]))
                                return true;
                bool yes = classad_eval_string(ads[i], "ShouldTransferFiles", GLEAN_CA_MODE, &v) >= 0 && v &&
                           strcasecmp(v, "YES") == 0;
                free(v);
                if (yes)
                        return true;
        }
        return false;
}

static int queue_jobs(const SubmitArgs *args, ClassAd **ads, size_t n) {
        CliSubmitPlan plan = {};
        char why[512] = "", submit_id[33], *path = NULL;
        int64_t cluster = -1, procs = -1;
        SubmitOutcome out;
        bool via_agent, lost;
        double deadline, pause = 0.2;
        int r, status = CLI_EXIT_FAILURE;
        CliConn c;

        cli_submit_record_umask(ads, n);
        r = cli_submit_cluster_refs(ads, n, CLI_CLUSTER_PLACEHOLDER);
        if (r >= 0)
                r = cli_submit_plan(ads, n, GLEAN_FRAME_MAX, &plan, why, sizeof why);
        if (r < 0) {
                fprintf(stderr, "glean submit: %s: %s\n", args->file, why[0] ? why : strerror(-r));
                return r == -ENOMEM ? CLI_EXIT_FAILURE : CLI_EXIT_USAGE;
        }
        r = make_submit_id(submit_id);
        if (r < 0) {
                fprintf(stderr, "glean submit: cannot make the submission's id (getrandom): %s\n", strerror(-r));
                cli_submit_plan_clear(&plan);
                return CLI_EXIT_FAILURE;
        }
        if (cli_cm_connect_via("submit", args->socket, wants_submit_agent(ads, n), &c) < 0) {
                cli_submit_plan_clear(&plan);
                fprintf(stderr, "glean submit: nothing was sent; nothing was queued\n");
                return CLI_EXIT_FAILURE;
        }
        path = strdup(c.path);
        via_agent = c.via_agent;
        deadline = mono_now() + (double) args->retry_s;
        out = submit_once(&c, &plan, submit_id, &cluster, &procs, why, sizeof why);
        cli_cm_close(&c);
        lost = out == SUBMIT_LOST;
        if (out == SUBMIT_LOST && path && args->retry_s > 0)
                fprintf(stderr,
                        "glean submit: %s; sending the submission again (it is queued once, whatever the number of "
                        "tries) for up to %" PRId64 " s\n",
                        why, args->retry_s);
        while (path && lost && (out == SUBMIT_LOST || out == SUBMIT_UNREACHED) && mono_now() < deadline) {
                char cwhy[512] = "";

                usleep((useconds_t) (pause * 1e6));
                pause = pause * 2 > 2 ? 2 : pause * 2;
                if (cli_cm_connect_quiet(path, via_agent, &c, cwhy, sizeof cwhy) < 0) {
                        out = SUBMIT_UNREACHED;
                        continue;
                }
                why[0] = 0;
                out = submit_once(&c, &plan, submit_id, &cluster, &procs, why, sizeof why);
                cli_cm_close(&c);
        }
        if (out == SUBMIT_UNREACHED && !lost)
                out = SUBMIT_REFUSED; /* never sent anywhere: nothing was queued */
        switch (out) {
        case SUBMIT_QUEUED:
                printf("%" PRId64 " job(s) submitted to cluster %" PRId64 ".\n", procs, cluster);
                status = fflush(stdout) == 0 ? CLI_EXIT_OK : CLI_EXIT_FAILURE;
                break;
        case SUBMIT_REFUSED:
                fprintf(stderr, "glean submit: the central manager refused the jobs: %s; nothing was queued\n", why);
                break;
        default:
                fprintf(stderr,
                        "glean submit: the submission's outcome is unknown: the central manager went away before "
                        "answering (%s); `glean q -constraint 'GleanSubmitId == \"%s\"'` shows whether it was queued\n",
                        why[0] ? why : "no answer", submit_id);
        }
        free(path);
        cli_submit_plan_clear(&plan);
        return status;
}

int cli_verb_submit(int argc, char **argv) {
        ConfigSubmitOptions opts = {};
        ConfigError err = {};
        ClassAd **ads = NULL;
        Config *cfg = NULL;
        SubmitArgs args = {};
        size_t n = 0;
        int r, status;

        r = parse_args(argc, argv, &args);
        if (r != 0)
                return r > 0 ? CLI_EXIT_OK : CLI_EXIT_USAGE;

        r = config_load_default(&cfg, &err);
        if (r < 0)
                return report(r, &err);
        r = config_get_int(cfg, "SUBMIT_RETRY_TIME", &args.retry_s, &err);
        if (r == -ENOENT)
                args.retry_s = 120;
        else if (r < 0 || args.retry_s < 0) {
                config_free(cfg);
                if (r >= 0)
                        snprintf(err.msg, sizeof err.msg, "SUBMIT_RETRY_TIME = %" PRId64 ": must be 0 or more",
                                 args.retry_s);
                return report(r < 0 ? r : -EINVAL, &err);
        }
        /* Queueing, the central manager gives the cluster id: expand
         * $(Cluster) as a placeholder and turn it back into ClusterId. */
        opts.cluster_id = args.dry_run ? args.cluster : CLI_CLUSTER_PLACEHOLDER;

        if (strcmp(args.file, "-") == 0) {
                _cleanup_free_ char *text = NULL;

                r = read_stdin(&text);
                if (r < 0) {
                        config_free(cfg);
                        fprintf(stderr, "glean submit: standard input: %s\n",
                                r == -EINVAL ? "holds a NUL byte" : strerror(-r));
                        return r == -ENOMEM ? CLI_EXIT_FAILURE : CLI_EXIT_USAGE;
                }
                r = config_submit_parse_string(text, "<stdin>", cfg, &opts, &ads, &n, &err);
        } else
                r = config_submit_parse_file(args.file, cfg, &opts, &ads, &n, &err);
        config_free(cfg);
        if (r < 0)
                return report(r, &err);
        if (n == 0 && !args.dry_run) {
                fprintf(stderr, "glean submit: %s queues no job\n", args.file);
                config_submit_free(ads, n);
                return CLI_EXIT_USAGE;
        }

        status = args.dry_run ? print_ads(ads, n, args.bracketed) : queue_jobs(&args, ads, n);
        config_submit_free(ads, n);
        return status;
}
