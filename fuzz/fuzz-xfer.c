/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz-xfer — libFuzzer target for the receiving worker of a transfer
 * (xfer/recv.c): arbitrary frames from a hostile sender, received into a
 * fresh temporary directory. It must never write outside that directory
 * (a sibling directory, reachable through a symbolic link planted in the
 * receiving one, and the parent are checked after every run), never leave
 * an aside file (.glean-xfer.*) behind, and never crash.
 *
 * Input: the first byte chooses the receiver: bit 0 clear, a sandbox
 * receiving input; set, an Iwd receiving output with remaps ("r =
 * sub/r; esc = ../esc; abs = /tmp/fuzz-xfer-abs") and Out ("out.txt").
 * Bit 1 sets a limit of 4096 bytes. The rest is records, each
 * [type 1][length 2, big-endian][payload], each sent as one frame of that
 * type and payload; a record of type 's' is a SUM frame carrying the
 * right SHA-256 of the data frames since the last header, so that whole
 * files can arrive.
 */
#define _GNU_SOURCE

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sodium.h>

#include "xfer-internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static _Noreturn void fail(const char *what, const char *detail) {
        fprintf(stderr, "FUZZ-XFER FAILURE: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
        abort();
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
        (void) st;
        (void) flag;
        (void) ftw;
        return remove(path);
}

static int entries(const char *dir, const char *only) {
        DIR *d = opendir(dir);
        struct dirent *de;
        int n = 0;
        if (!d)
                return -1;
        while ((de = readdir(d)))
                if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..")) {
                        if (only && strcmp(de->d_name, only) != 0 &&
                            !(strcmp(only, "root|outside") == 0 &&
                              (strcmp(de->d_name, "root") == 0 || strcmp(de->d_name, "outside") == 0)))
                                n += 1000;
                        n++;
                }
        closedir(d);
        return n;
}

static char leftover[4096];
static int find_leftover(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
        (void) st;
        (void) flag;
        if (strncmp(path + ftw->base, XFER_TMP_PREFIX, sizeof XFER_TMP_PREFIX - 1) == 0) {
                snprintf(leftover, sizeof leftover, "%s", path);
                return 1;
        }
        return 0;
}

static void put_frame(int fd, int type, const void *p, size_t n) {
        unsigned char h[5] = { (unsigned char) ((n + 1) >> 24), (unsigned char) ((n + 1) >> 16),
                               (unsigned char) ((n + 1) >> 8), (unsigned char) (n + 1), (unsigned char) type };
        if (write(fd, h, 5) != 5 || (n && write(fd, p, n) != (ssize_t) n))
                fail("write", strerror(errno));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        static bool init;
        if (!init) {
                if (sodium_init() < 0)
                        fail("sodium_init", NULL);
                init = true;
        }
        if (size < 1)
                return 0;
        bool output = data[0] & 1;

        char top[] = "/tmp/fuzz-xfer-XXXXXX", root[64], outside[64], p[128];
        if (!mkdtemp(top))
                fail("mkdtemp", strerror(errno));
        snprintf(root, sizeof root, "%s/root", top);
        snprintf(outside, sizeof outside, "%s/outside", top);
        if (mkdir(root, 0700) < 0 || mkdir(outside, 0700) < 0)
                fail("mkdir", strerror(errno));
        snprintf(p, sizeof p, "%s/marker", outside);
        int m = open(p, O_WRONLY | O_CREAT, 0600);
        if (m < 0 || write(m, "m", 1) != 1)
                fail("marker", strerror(errno));
        close(m);
        snprintf(p, sizeof p, "%s/link", root);
        if (symlink(outside, p) < 0)
                fail("symlink", strerror(errno));
        snprintf(p, sizeof p, "%s/sub", root);
        if (mkdir(p, 0700) < 0)
                fail("mkdir", strerror(errno));

        /* the frames */
        int in = memfd_create("fuzz-xfer", MFD_CLOEXEC);
        if (in < 0)
                fail("memfd_create", strerror(errno));
        crypto_hash_sha256_state sha;
        crypto_hash_sha256_init(&sha);
        for (size_t i = 1; i + 3 <= size;) {
                int type = data[i];
                size_t n = (size_t) data[i + 1] << 8 | data[i + 2];
                i += 3;
                if (n > size - i)
                        n = size - i;
                if (type == 's') {
                        uint8_t sum[32];
                        crypto_hash_sha256_final(&sha, sum);
                        put_frame(in, XFER_T_SUM, sum, sizeof sum);
                        crypto_hash_sha256_init(&sha);
                } else {
                        if (type == XFER_T_HEADER)
                                crypto_hash_sha256_init(&sha);
                        if (type == XFER_T_DATA)
                                crypto_hash_sha256_update(&sha, data + i, n);
                        put_frame(in, type, data + i, n);
                }
                i += n;
        }
        lseek(in, 0, SEEK_SET);
        int out = open("/dev/null", O_WRONLY | O_CLOEXEC);

        XferRemap remaps[] = { { "r", "sub/r" }, { "esc", "../esc" }, { "abs", "/tmp/fuzz-xfer-abs" } };
        XferJob job = { .iwd = root, .max_input_bytes = data[0] & 2 ? 4096 : 0, .max_output_bytes = data[0] & 2 ? 4096 : 0 };
        if (output) {
                job.remaps = remaps;
                job.n_remaps = 3;
                job.out = "out.txt";
        }
        XferConn c;
        XferResult res;
        XferManifest man = { 0 };
        if (xfer_conn_init(&c, in, out, 1000) < 0)
                fail("conn", NULL);
        int r = xfer_recv_files(&c, output ? XFER_RECV_OUTPUT : XFER_RECV_INPUT, &job, root, output ? NULL : &man, &res);
        xfer_conn_done(&c);
        close(in);
        close(out);
        if (r < 0 && (res.error != r || !res.reason[0]))
                fail("a failure without its reason", res.reason);
        if (r == 0 && res.error != 0)
                fail("success with an error", res.reason);
        xfer_manifest_clear(&man);

        /* nothing outside, nothing aside */
        if (entries(outside, "marker") != 1)
                fail("wrote into the directory outside", NULL);
        if (entries(top, "root|outside") != 2)
                fail("wrote beside the receiving directory", NULL);
        if (access("/tmp/fuzz-xfer-abs", F_OK) == 0 || access("/tmp/esc", F_OK) == 0)
                fail("wrote to an absolute path", NULL);
        if (nftw(root, find_leftover, 16, FTW_PHYS) == 1)
                fail("left an aside file", leftover);
        nftw(top, rm_one, 16, FTW_DEPTH | FTW_PHYS);
        return 0;
}
