/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test-xfer-job.c — xfer/xfer.h without a connection: a job's transfer
 * read from its ad (every attribute, defaults, file:// URLs, other URL
 * schemes refused, remaps, malformed ones refused), whether a run
 * transfers (ShouldTransferFiles and FileSystemDomain), the result's
 * one-line text both ways, the preamble written and parsed (hostile ones
 * refused), a dial to a listener and to nothing; SHA-256 with the CPU's
 * extensions against libsodium's.
 */
#define _GNU_SOURCE

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <sodium.h>

#include <CUnit/CUnit.h>

#include "common/proto.h"
#include "test-util.h"
#include "xfer/xfer-internal.h"

static ClassAd *ad_of(const char *text) {
        ClassAd *ad = NULL;
        CaError err;
        int r = classad_parse(text, strlen(text), CA_MODE_OLD, &ad, &err);
        GLEAN_TEST_CHECK_FATAL(r == 0, "ad '%s' does not parse: %s", text, err.msg);
        return ad;
}

static int job_of(const char *text, XferJob **ret, char *why, size_t whylen) {
        ClassAd *ad = ad_of(text);
        int r = xfer_job_from_ad(ad, 7, 9, ret, why, whylen);
        classad_free(ad);
        return r;
}

static void test_every_attribute(void) {
        XferJob *j = NULL;
        char why[256] = "";
        int r = job_of("[ Iwd = \"/home/u/run\"; Cmd = \"bin/prog\"; In = \"in.dat\"; Out = \"out.txt\"; "
                       "Err = \"/home/u/run/err.txt\"; TransferInput = \"a.txt, d/ ,file:///abs/x.dat e\"; "
                       "TransferOutput = \"o1,o2 d1\"; TransferOutputRemaps = \"o1 = res/o1.txt ; o2=/home/u/run/o2\"; "
                       "PreserveRelativePaths = true; WhenToTransferOutput = \"ON_EXIT_OR_EVICT\"; "
                       "MaxTransferInputMB = 3; MaxTransferOutputMB = 0 ]",
                       &j, why, sizeof why);
        GLEAN_TEST_CHECK_FATAL(r == 0, "gave %d: %s", r, why);
        CU_ASSERT_STRING_EQUAL(j->iwd, "/home/u/run");
        CU_ASSERT(j->transfer_executable);
        CU_ASSERT_STRING_EQUAL(j->cmd, "/home/u/run/bin/prog");
        CU_ASSERT_STRING_EQUAL(j->in, "in.dat");
        CU_ASSERT_STRING_EQUAL(j->out, "out.txt");
        CU_ASSERT_STRING_EQUAL(j->err, "/home/u/run/err.txt");
        CU_ASSERT_FATAL(j->n_input == 4);
        CU_ASSERT_STRING_EQUAL(j->input[0], "a.txt");
        CU_ASSERT_STRING_EQUAL(j->input[1], "d/");
        CU_ASSERT_STRING_EQUAL(j->input[2], "/abs/x.dat");
        CU_ASSERT_STRING_EQUAL(j->input[3], "e");
        CU_ASSERT(j->output_given);
        CU_ASSERT_FATAL(j->n_output == 3);
        CU_ASSERT_STRING_EQUAL(j->output[2], "d1");
        CU_ASSERT_FATAL(j->n_remaps == 2);
        CU_ASSERT_STRING_EQUAL(j->remaps[0].name, "o1");
        CU_ASSERT_STRING_EQUAL(j->remaps[0].path, "res/o1.txt");
        CU_ASSERT_STRING_EQUAL(j->remaps[1].name, "o2");
        CU_ASSERT_STRING_EQUAL(j->remaps[1].path, "/home/u/run/o2");
        CU_ASSERT(j->preserve_relative_paths);
        CU_ASSERT(j->on_exit_or_evict);
        CU_ASSERT_EQUAL(j->max_input_bytes, 3u << 20);
        CU_ASSERT_EQUAL(j->max_output_bytes, 0);
        xfer_job_free(j);
}

static void test_defaults(void) {
        XferJob *j = NULL;
        char why[256] = "";
        /* no limits in the ad: the knobs (7 and 9 MB); TransferOutput undefined: automatic;
         * In /dev/null, Out and Err not transferred */
        int r = job_of("[ Iwd = \"/w\"; Cmd = \"/bin/true\"; In = \"/dev/null\"; Out = \"o\"; Err = \"e\"; "
                       "TransferOut = false; TransferErr = false; WhenToTransferOutput = \"ON_EXIT\" ]",
                       &j, why, sizeof why);
        GLEAN_TEST_CHECK_FATAL(r == 0, "gave %d: %s", r, why);
        CU_ASSERT_STRING_EQUAL(j->cmd, "/bin/true");
        CU_ASSERT_PTR_NULL(j->in);
        CU_ASSERT_PTR_NULL(j->out);
        CU_ASSERT_PTR_NULL(j->err);
        CU_ASSERT(!j->output_given && j->n_output == 0 && j->n_input == 0 && j->n_remaps == 0);
        CU_ASSERT(!j->preserve_relative_paths && !j->on_exit_or_evict);
        CU_ASSERT_EQUAL(j->max_input_bytes, 7u << 20);
        CU_ASSERT_EQUAL(j->max_output_bytes, 9u << 20);
        xfer_job_free(j);

        /* TransferExecutable false: no Cmd needed; TransferOutput "" is given and empty; TransferIn false */
        r = job_of("[ Iwd = \"/w\"; TransferExecutable = false; TransferOutput = \"\"; In = \"x\"; TransferIn = false ]",
                   &j, why, sizeof why);
        GLEAN_TEST_CHECK_FATAL(r == 0, "gave %d: %s", r, why);
        CU_ASSERT(!j->transfer_executable && !j->cmd && !j->in);
        CU_ASSERT(j->output_given && j->n_output == 0);
        xfer_job_free(j);
}

static void test_refused(void) {
        static const struct {
                const char *ad, *why;
        } rows[] = {
                { "[ Cmd = \"/bin/true\" ]", "no absolute Iwd" },
                { "[ Iwd = \"rel\"; Cmd = \"/bin/true\" ]", "no absolute Iwd" },
                { "[ Iwd = \"/w\" ]", "no Cmd" },
                { "[ Iwd = \"/w\"; Cmd = \"x\"; TransferInput = \"a, http://example.org/x\" ]",
                  "'http://example.org/x' uses the URL scheme 'http'" },
                { "[ Iwd = \"/w\"; Cmd = \"x\"; TransferInput = \"osdf:///ospool/x\" ]", "scheme 'osdf'" },
                { "[ Iwd = \"/w\"; Cmd = \"x\"; TransferOutput = \"s3://b/k\" ]", "TransferOutput entry" },
                { "[ Iwd = \"/w\"; Cmd = \"x\"; TransferInput = \"file://\" ]", "names no file" },
                { "[ Iwd = \"/w\"; Cmd = \"x\"; TransferOutputRemaps = \"o1 res/o1\" ]", "'o1 res/o1' is not" },
                { "[ Iwd = \"/w\"; Cmd = \"x\"; TransferOutputRemaps = \"o1 = ; o2 = x\" ]", "is not 'name = path'" },
                { "[ Iwd = \"/w\"; Cmd = \"x\"; TransferOutputRemaps = \" = x\" ]", "is not 'name = path'" },
        };
        for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
                XferJob *j = NULL;
                char why[256] = "";
                int r = job_of(rows[i].ad, &j, why, sizeof why);
                GLEAN_TEST_CHECK(r == -EINVAL && strstr(why, rows[i].why), "row %zu: %s gave %d '%s', want '%s'", i,
                                 rows[i].ad, r, why, rows[i].why);
                if (r == 0)
                        xfer_job_free(j);
        }
}

static void test_wanted(void) {
        static const struct {
                const char *ad, *slot;
                bool want;
        } rows[] = {
                { "[ ShouldTransferFiles = \"YES\" ]", "a.org", true },
                { "[ ShouldTransferFiles = \"yes\"; FileSystemDomain = \"a.org\" ]", "a.org", true },
                { "[ ShouldTransferFiles = \"NO\" ]", "b.org", false },
                { "[ FileSystemDomain = \"a.org\" ]", "b.org", false },
                { "[ ShouldTransferFiles = \"IF_NEEDED\"; FileSystemDomain = \"a.org\" ]", "a.org", false },
                { "[ ShouldTransferFiles = \"IF_NEEDED\"; FileSystemDomain = \"a.org\" ]", "A.ORG", false },
                { "[ ShouldTransferFiles = \"IF_NEEDED\"; FileSystemDomain = \"a.org\" ]", "b.org", true },
                { "[ ShouldTransferFiles = \"IF_NEEDED\" ]", "b.org", true },
        };
        for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
                ClassAd *ad = ad_of(rows[i].ad);
                bool got = xfer_job_wanted(ad, rows[i].slot);
                GLEAN_TEST_CHECK(got == rows[i].want, "row %zu: %s in %s gave %d", i, rows[i].ad, rows[i].slot, got);
                classad_free(ad);
        }
}

static void test_result_text(void) {
        XferResult r = { .error = -ENOENT, .hold_code = XFER_HOLD_INPUT, .hold_subcode = ENOENT,
                         .bytes_sent = 5000000000ull, .bytes_received = 7, .files = 3 };
        snprintf(r.reason, sizeof r.reason, "cannot read input file 'data/a \"b\".txt': No such file or directory");
        char *text = xfer_result_to_text(&r);
        CU_ASSERT_FATAL(text != NULL);
        CU_ASSERT(strchr(text, '\n') == NULL);
        XferResult back;
        CU_ASSERT_EQUAL(xfer_result_from_text(text, strlen(text), &back), 0);
        CU_ASSERT(back.error == r.error && back.hold_code == r.hold_code && back.hold_subcode == r.hold_subcode);
        CU_ASSERT(back.bytes_sent == r.bytes_sent && back.bytes_received == r.bytes_received && back.files == 3);
        CU_ASSERT_STRING_EQUAL(back.reason, r.reason);
        free(text);
        CU_ASSERT_EQUAL(xfer_result_from_text("[ Error = 1 ]", 13, &back), -EBADMSG);
        CU_ASSERT_EQUAL(xfer_result_from_text("nonsense", 8, &back), -EBADMSG);
        CU_ASSERT_EQUAL(xfer_result_from_text("[ Reason = \"x\" ]", 16, &back), -EBADMSG);
}

static void test_preamble(void) {
        const char *id = "0123456789abcdef0123456789ABCDEF";
        int sv[2];
        CU_ASSERT_FATAL(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
        CU_ASSERT_EQUAL(xfer_preamble_write(sv[0], id, 1000), 0);
        char *p = NULL;
        size_t len = 0;
        CU_ASSERT_FATAL(glean_frame_recv(sv[1], 128, 1000, &p, &len) == 0);
        char got[XFER_ID_LEN + 1];
        CU_ASSERT_EQUAL(xfer_preamble_parse(p, len, got), 0);
        CU_ASSERT_STRING_EQUAL(got, id);
        free(p);
        CU_ASSERT_EQUAL(xfer_preamble_write(sv[0], "0123", 1000), -EINVAL);
        CU_ASSERT_EQUAL(xfer_preamble_write(sv[0], "0123456789abcdef0123456789abcdeg", 1000), -EINVAL);
        static const char *bad[] = {
                "GLEANXFR 0123456789abcdef0123456789abcdef",       /* no newline */
                "GLEANXFR 0123456789abcdef0123456789abcdef\n\n",   /* more */
                "GLEANXFX 0123456789abcdef0123456789abcdef\n",     /* magic */
                "GLEANXFR 0123456789abcdef0123456789abcdez\n",     /* not hex */
                "GLEANXFR 0123456789abcdef0123456789abcde\n",      /* short */
                "",
        };
        for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
                GLEAN_TEST_CHECK(xfer_preamble_parse(bad[i], strlen(bad[i]), got) == -EBADMSG, "bad preamble %zu accepted",
                                 i);
        close(sv[0]);
        close(sv[1]);
}

static void test_dial(void) {
        const char *id = "0123456789abcdef0123456789abcdef";
        int l = socket(AF_INET, SOCK_STREAM, 0), fd = -1;
        struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
        socklen_t al = sizeof a;
        CU_ASSERT_FATAL(l >= 0 && bind(l, (struct sockaddr *) &a, sizeof a) == 0 && listen(l, 4) == 0);
        CU_ASSERT_FATAL(getsockname(l, (struct sockaddr *) &a, &al) == 0);
        char addr[64], why[256] = "";
        snprintf(addr, sizeof addr, "127.0.0.1:%u", ntohs(a.sin_port));
        int r = xfer_dial(addr, id, 2000, &fd, why, sizeof why);
        GLEAN_TEST_CHECK_FATAL(r == 0, "dial %s: %d %s", addr, r, why);
        int c = accept(l, NULL, NULL);
        char *p = NULL, got[XFER_ID_LEN + 1];
        size_t len;
        CU_ASSERT_FATAL(c >= 0 && glean_frame_recv(c, 128, 1000, &p, &len) == 0);
        CU_ASSERT(xfer_preamble_parse(p, len, got) == 0 && strcmp(got, id) == 0);
        free(p);
        close(c);
        close(fd);
        close(l);
        /* nothing listens there any more */
        r = xfer_dial(addr, id, 2000, &fd, why, sizeof why);
        CU_ASSERT(r == -ECONNREFUSED && strstr(why, addr));
        CU_ASSERT_EQUAL(xfer_dial("no-port", id, 100, &fd, why, sizeof why), -EINVAL);
        CU_ASSERT_EQUAL(xfer_dial("[::1]:x", id, 100, &fd, why, sizeof why), -EINVAL);
        CU_ASSERT_EQUAL(xfer_dial("host.example:80", id, 100, &fd, why, sizeof why), -EINVAL);
}

/* The SHA extensions' digest is libsodium's: every length around the
 * block and padding boundaries, fed whole and in odd pieces, and 3 MiB. */
static void test_sum(void) {
        size_t big = 3u << 20;
        uint8_t *data = malloc(big), a[32], b[32], c[32];
        CU_ASSERT_FATAL(data && sodium_init() >= 0);
        randombytes_buf(data, big);
        size_t lens[300], n = 0;
        for (size_t l = 0; l < 260; l++)
                lens[n++] = l;
        lens[n++] = 1000;
        lens[n++] = 65536 + 7;
        lens[n++] = big;
        for (size_t i = 0; i < n; i++) {
                XferSum s, p, q;
                crypto_hash_sha256(a, data, lens[i]);
                xfer_sum_init(&s, false);
                xfer_sum_update(&s, data, lens[i]);
                xfer_sum_final(&s, b);
                xfer_sum_init(&p, true);
                xfer_sum_init(&q, false);
                for (size_t off = 0, k = 1; off < lens[i]; off += k, k = k * 3 % 97 + 1) {
                        size_t m = k < lens[i] - off ? k : lens[i] - off;
                        xfer_sum_update(&p, data + off, m);
                        xfer_sum_update(&q, data + off, m);
                }
                xfer_sum_final(&q, c);
                GLEAN_TEST_CHECK(memcmp(a, b, 32) == 0 && memcmp(a, c, 32) == 0, "length %zu: digests differ", lens[i]);
                xfer_sum_final(&p, c);
                GLEAN_TEST_CHECK(memcmp(a, c, 32) == 0, "length %zu: portable digest differs", lens[i]);
        }
        free(data);
}

static CU_TestInfo tests[] = {
        { "sha-256", test_sum },
        { "every attribute", test_every_attribute },
        { "defaults", test_defaults },
        { "refused", test_refused },
        { "wanted", test_wanted },
        { "result text", test_result_text },
        { "preamble", test_preamble },
        { "dial", test_dial },
        CU_TEST_INFO_NULL,
};

static CU_SuiteInfo suites[] = {
        { "xfer-job", NULL, NULL, NULL, NULL, tests },
        CU_SUITE_INFO_NULL,
};

int main(int argc, char **argv) {
        return glean_test_main(argc, argv, suites);
}
