/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test-submit-transfer.c — the submit commands of file transfer
 * (config/submit-xfer.c): every command to its attribute, the defaults,
 * the Requirements clause condor_submit adds for each
 * should_transfer_files, FileSystemDomain from the configuration, the
 * input's size (TransferInputSizeMB, DiskUsage) over files of known sizes,
 * and every refusal with the line it names; no "not supported" warning is
 * left for the commands glean now reads.
 *
 * The descriptions run with Iwd a fresh directory holding:
 *   job.sh   2048 bytes (2 KiB)      a.txt  3000 bytes (3 KiB)
 *   d/x      1000 bytes, d/y 1500 bytes, d/sub/z 600 bytes (3100: 4 KiB)
 *   in.txt   5000 bytes (5 KiB)      big    3 MiB + 1 byte (3073 KiB)
 *   fifo     a named pipe
 * (@T@ in a description stands for that directory).
 */
#define _GNU_SOURCE

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "submit-internal.h"
#include "submit-test.h"

#define MAX_EXPECT 16

static char tdir[256];

/* A file of size bytes (a hole: the size is what counts). */
static int write_file(const char *name, size_t size, mode_t mode) {
        char path[512];
        int fd, r;

        snprintf(path, sizeof(path), "%s/%s", tdir, name);
        fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
        if (fd < 0)
                return -1;
        r = ftruncate(fd, (off_t) size);
        close(fd);
        return r;
}

static int setup(void) {
        char path[512];

        snprintf(tdir, sizeof(tdir), "/tmp/glean-test-xfer-XXXXXX");
        if (!mkdtemp(tdir))
                return -1;
        snprintf(path, sizeof(path), "%s/d", tdir);
        if (mkdir(path, 0755) < 0)
                return -1;
        snprintf(path, sizeof(path), "%s/d/sub", tdir);
        if (mkdir(path, 0755) < 0)
                return -1;
        if (write_file("job.sh", 2048, 0755) < 0 || write_file("a.txt", 3000, 0644) < 0 ||
            write_file("d/x", 1000, 0644) < 0 || write_file("d/y", 1500, 0644) < 0 ||
            write_file("d/sub/z", 600, 0644) < 0 || write_file("in.txt", 5000, 0644) < 0 ||
            write_file("big", (3u << 20) + 1, 0644) < 0)
                return -1;
        snprintf(path, sizeof(path), "%s/fifo", tdir);
        if (mkfifo(path, 0644) < 0)
                return -1;
        return 0;
}

static int teardown(void) {
        char cmd[512];

        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tdir);
        return system(cmd) == 0 ? 0 : -1;
}

/* text with @T@ replaced by the directory, then submit-test.h's @...@. */
static char *subst(const char *text) {
        char buf[8192];
        size_t n = 0;

        while (*text && n + 1 < sizeof(buf)) {
                if (strncmp(text, "@T@", 3) == 0) {
                        n += (size_t) snprintf(buf + n, sizeof(buf) - n, "%s", tdir);
                        text += 3;
                } else
                        buf[n++] = *text++;
        }
        buf[n < sizeof(buf) ? n : sizeof(buf) - 1] = '\0';
        return submit_test_subst(buf);
}

static int parse(const char *raw, const Config *cfg, ClassAd ***ret_ads, size_t *ret_n, ConfigError *err) {
        ConfigSubmitOptions opts = {
                .cluster_id = SUBMIT_TEST_CLUSTER,
                .qdate = SUBMIT_TEST_QDATE,
                .owner = SUBMIT_TEST_OWNER,
                .iwd = tdir,
        };
        char *text = subst(raw);
        int r = config_submit_parse_string(text, "test.sub", cfg, &opts, ret_ads, ret_n, err);

        free(text);
        return r;
}

typedef struct AdCase {
        const char *config; /* configuration text, NULL: built-in */
        const char *text;
        const char *expect[MAX_EXPECT];
} AdCase;

static Config *load_config(const char *text) {
        ConfigError err = {};
        Config *cfg = NULL;

        if (!text)
                return NULL;
        CU_ASSERT_FATAL(config_new(&cfg) >= 0);
        GLEAN_TEST_CHECK_FATAL(config_load_string(cfg, text, "test.conf", &err) >= 0, "config: %s", err.msg);
        return cfg;
}

static void check_ad_cases(const AdCase *cases, size_t n_cases, const char *table) {
        for (size_t i = 0; i < n_cases; i++) {
                const AdCase *c = &cases[i];
                Config *cfg = load_config(c->config);
                ConfigError err = {};
                ClassAd **ads = NULL;
                size_t n = 0;
                char what[64];
                int r;

                snprintf(what, sizeof(what), "%s row %zu", table, i);
                r = parse(c->text, cfg, &ads, &n, &err);
                config_free(cfg);
                GLEAN_TEST_CHECK(r == 0 && n == 1, "%s: parse failed: %d %s:%d: %s", what, r, err.file, err.line,
                                 err.msg);
                if (r < 0)
                        continue;
                for (size_t k = 0; k < MAX_EXPECT && c->expect[k]; k++) {
                        char *e = subst(c->expect[k]);

                        submit_test_expect(ads, n, e, what);
                        free(e);
                }
                config_submit_free(ads, n);
        }
}

#define CHECK_ADS(cases) check_ad_cases(cases, sizeof(cases) / sizeof((cases)[0]), #cases)

#define EXE "executable = job.sh\n"

/* No transfer command at all: condor_submit's defaults in every ad. */
static void test_defaults(void) {
        static const AdCase cases[] = {
                { NULL, EXE "queue",
                  { "0:ShouldTransferFiles = \"IF_NEEDED\"", "0:WhenToTransferOutput = \"ON_EXIT\"",
                    "0:FileSystemDomain = \"@FSDOMAIN@\"", "0:TransferIn = false", "0:TransferOut = false",
                    "0:TransferErr = false", "0:!StreamIn", "0:!StreamOut", "0:!StreamErr", "0:!TransferInput",
                    "0:!TransferOutput", "0:!TransferOutputRemaps", "0:!TransferExecutable",
                    "0:!PreserveRelativePaths", "0:!MaxTransferInputMB", "0:!UserLogUseXML" } },
                { NULL, EXE "queue",
                  { "0:Cmd = \"@T@/job.sh\"", "0:DiskUsage = 2", "0:TransferInputSizeMB = 1",
                    "0:Requirements = (TARGET.Arch == \"@ARCH@\") && (TARGET.OpSys == \"LINUX\") && "
                    "(TARGET.Disk >= RequestDisk) && (TARGET.Memory >= RequestMemory) && @XFER@" } },
                /* output and error that go with the job: streamed? no */
                { NULL, EXE "input = in.txt\noutput = o\nerror = e\nqueue",
                  { "0:StreamIn = false", "0:StreamOut = false", "0:StreamErr = false", "0:!TransferIn",
                    "0:!TransferOut", "0:!TransferErr" } },
                { NULL, EXE "output = /dev/null\nqueue", { "0:TransferOut = false", "0:!StreamOut" } },
        };
        CHECK_ADS(cases);
}

/* Every command to its attribute, and their synonyms. */
static void test_commands(void) {
        static const AdCase cases[] = {
                { NULL, EXE "should_transfer_files = YES\nqueue",
                  { "0:ShouldTransferFiles = \"YES\"", "0:WhenToTransferOutput = \"ON_EXIT\"", "0:!FileSystemDomain" } },
                { NULL, EXE "should_transfer_files = no\nqueue",
                  { "0:ShouldTransferFiles = \"NO\"", "0:!WhenToTransferOutput",
                    "0:FileSystemDomain = \"@FSDOMAIN@\"" } },
                { NULL, EXE "should_transfer_files = if_needed\nqueue", { "0:ShouldTransferFiles = \"IF_NEEDED\"" } },
                { NULL, EXE "should_transfer_files = ALWAYS\nqueue", { "0:ShouldTransferFiles = \"YES\"" } },
                { NULL, EXE "should_transfer_files = true\nqueue", { "0:ShouldTransferFiles = \"YES\"" } },
                { NULL, EXE "should_transfer_files = NEVER\nqueue", { "0:ShouldTransferFiles = \"NO\"" } },
                { NULL, EXE "should_transfer_files = Auto\nqueue", { "0:ShouldTransferFiles = \"IF_NEEDED\"" } },
                { NULL, EXE "ShouldTransferFiles = YES\nWhenToTransferOutput = ON_EXIT_OR_EVICT\nqueue",
                  { "0:ShouldTransferFiles = \"YES\"", "0:WhenToTransferOutput = \"ON_EXIT_OR_EVICT\"" } },
                { NULL, EXE "should_transfer_files = YES\nwhen_to_transfer_output = always\nqueue",
                  { "0:WhenToTransferOutput = \"ON_EXIT_OR_EVICT\"" } },
                /* only ON_EXIT_OR_EVICT: condor_submit makes it YES */
                { NULL, EXE "when_to_transfer_output = ON_EXIT_OR_EVICT\nqueue",
                  { "0:ShouldTransferFiles = \"YES\"", "0:WhenToTransferOutput = \"ON_EXIT_OR_EVICT\"" } },
                /* an input list with no entry names nothing */
                { NULL, EXE "should_transfer_files = NO\ntransfer_input_files = , ,\nqueue",
                  { "0:ShouldTransferFiles = \"NO\"", "0:!TransferInput" } },
                { NULL, EXE "should_transfer_files = NO\nwhen_to_transfer_output = NONE\nqueue",
                  { "0:ShouldTransferFiles = \"NO\"", "0:!WhenToTransferOutput" } },
                { NULL, EXE "transfer_executable = false\nqueue", { "0:TransferExecutable = false" } },
                { NULL, "executable = /no/such/tool\ntransfer_executable = false\nqueue",
                  { "0:Cmd = \"/no/such/tool\"", "0:TransferExecutable = false" } },
                { NULL, EXE "transfer_executable = true\nqueue", { "0:!TransferExecutable" } },
                { NULL, EXE "transfer_input_files = a.txt , d/,d ,  @T@/in.txt,,\nqueue",
                  { "0:TransferInput = \"a.txt,d/,d,@T@/in.txt\"" } },
                { NULL, EXE "transfer_input_files = \"a.txt, file://@T@/big\"\nqueue",
                  { "0:TransferInput = \"a.txt,file://@T@/big\"" } },
                { NULL, EXE "TransferInputFiles = a.txt\nqueue", { "0:TransferInput = \"a.txt\"" } },
                { NULL, EXE "transfer_input_files = $$(Name).dat\nqueue", { "0:TransferInput = \"$$(Name).dat\"" } },
                { NULL, EXE "transfer_output_files = out.dat, res/\nqueue",
                  { "0:TransferOutput = \"out.dat,res/\"" } },
                { NULL, EXE "transfer_output_files = \"\"\nqueue", { "0:TransferOutput = \"\"" } },
                { NULL, EXE "transfer_output_remaps = \"out.dat = results/out.$(Process).dat; a\\=b = c\"\nqueue",
                  { "0:TransferOutputRemaps = \"out.dat = results/out.0.dat; a\\\\=b = c\"" } },
                { NULL, EXE "transfer_output_remaps = o = file://@T@/o\nqueue",
                  { "0:TransferOutputRemaps = \"o = file://@T@/o\"" } },
                { NULL, EXE "preserve_relative_paths = true\nqueue", { "0:PreserveRelativePaths = true" } },
                { NULL, EXE "preserve_relative_paths = false\nqueue", { "0:PreserveRelativePaths = false" } },
                { NULL, EXE "max_transfer_input_mb = 100\nmax_transfer_output_mb = RequestDisk / 1024\nqueue",
                  { "0:MaxTransferInputMB = 100", "0:MaxTransferOutputMB = RequestDisk / 1024" } },
                { NULL, EXE "max_transfer_input_mb = -1\nqueue", { "0:MaxTransferInputMB = -1" } },
                { NULL, EXE "input = in.txt\ntransfer_input = false\nqueue", { "0:TransferIn = false", "0:!StreamIn" } },
                { NULL, EXE "output = o\ntransfer_output = false\nqueue", { "0:TransferOut = false", "0:!StreamOut" } },
                { NULL, EXE "error = e\ntransfer_error = false\nqueue", { "0:TransferErr = false", "0:!StreamErr" } },
                { NULL, EXE "output = o\ntransfer_output = true\nqueue", { "0:!TransferOut", "0:StreamOut = false" } },
                { NULL, EXE "output = o\nerror = e\nstream_output = false\nstream_error = False\nqueue",
                  { "0:StreamOut = false", "0:StreamErr = false" } },
                { NULL, EXE "log = run.log\nlog_xml = false\nqueue", { "0:UserLogUseXML = false" } },
                /* the job's own attributes stand for the commands, as in condor_submit */
                { NULL, EXE "+ShouldTransferFiles = \"NO\"\nqueue",
                  { "0:ShouldTransferFiles = \"NO\"", "0:!WhenToTransferOutput",
                    "0:Requirements ~ && (TARGET.FileSystemDomain == MY.FileSystemDomain)" } },
                { NULL, EXE "+WhenToTransferOutput = \"ON_EXIT_OR_EVICT\"\nqueue",
                  { "0:ShouldTransferFiles = \"YES\"", "0:WhenToTransferOutput = \"ON_EXIT_OR_EVICT\"" } },
                { NULL, EXE "should_transfer_files = YES\n+ShouldTransferFiles = \"YES\"\nqueue",
                  { "0:ShouldTransferFiles = \"YES\"" } },
                /* /dev/null is nothing to look at (condor_submit's NULL_FILE) */
                { NULL, EXE "transfer_input_files = a.txt, /dev/null\nqueue",
                  { "0:TransferInput = \"a.txt,/dev/null\"", "0:DiskUsage = 5" } },
                /* a command per job: $(Process) expands in each */
                { NULL, EXE "transfer_output_files = out.$(Process)\nqueue", { "0:TransferOutput = \"out.0\"" } },
        };
        CHECK_ADS(cases);
}

/* The clause condor_submit ends Requirements with. */
static void test_requirements(void) {
        static const AdCase cases[] = {
                { NULL, EXE "should_transfer_files = YES\nqueue",
                  { "0:Requirements = (TARGET.Arch == \"@ARCH@\") && (TARGET.OpSys == \"LINUX\") && "
                    "(TARGET.Disk >= RequestDisk) && (TARGET.Memory >= RequestMemory) && (TARGET.HasFileTransfer)" } },
                { NULL, EXE "should_transfer_files = NO\nqueue",
                  { "0:Requirements = (TARGET.Arch == \"@ARCH@\") && (TARGET.OpSys == \"LINUX\") && "
                    "(TARGET.Disk >= RequestDisk) && (TARGET.Memory >= RequestMemory) && "
                    "(TARGET.FileSystemDomain == MY.FileSystemDomain)" } },
                { NULL, EXE "should_transfer_files = IF_NEEDED\nqueue",
                  { "0:Requirements = (TARGET.Arch == \"@ARCH@\") && (TARGET.OpSys == \"LINUX\") && "
                    "(TARGET.Disk >= RequestDisk) && (TARGET.Memory >= RequestMemory) && "
                    "((TARGET.FileSystemDomain == MY.FileSystemDomain) || (TARGET.HasFileTransfer))" } },
                /* what the user's requirements look at already is left out */
                { NULL, EXE "requirements = TARGET.HasFileTransfer\nqueue",
                  { "0:Requirements = (TARGET.HasFileTransfer) && (TARGET.Arch == \"@ARCH@\") && "
                    "(TARGET.OpSys == \"LINUX\") && (TARGET.Disk >= RequestDisk) && "
                    "(TARGET.Memory >= RequestMemory)" } },
                { NULL, EXE "requirements = HasJobTransferPlugins\nshould_transfer_files = YES\nqueue",
                  { "0:Requirements = (HasJobTransferPlugins) && (TARGET.Arch == \"@ARCH@\") && "
                    "(TARGET.OpSys == \"LINUX\") && (TARGET.Disk >= RequestDisk) && "
                    "(TARGET.Memory >= RequestMemory)" } },
                { NULL, EXE "requirements = FileSystemDomain == \"x\"\nqueue",
                  { "0:Requirements = (FileSystemDomain == \"x\") && (TARGET.Arch == \"@ARCH@\") && "
                    "(TARGET.OpSys == \"LINUX\") && (TARGET.Disk >= RequestDisk) && "
                    "(TARGET.Memory >= RequestMemory) && (TARGET.HasFileTransfer)" } },
                { NULL, EXE "requirements = TARGET.FileSystemDomain == \"x\"\nshould_transfer_files = NO\nqueue",
                  { "0:Requirements = (TARGET.FileSystemDomain == \"x\") && (TARGET.Arch == \"@ARCH@\") && "
                    "(TARGET.OpSys == \"LINUX\") && (TARGET.Disk >= RequestDisk) && "
                    "(TARGET.Memory >= RequestMemory)" } },
                /* MY.FileSystemDomain and a string are not the slot's */
                { NULL, EXE "requirements = MY.FileSystemDomain =!= \"HasFileTransfer\"\nqueue",
                  { "0:Requirements ~ && @XFER@" } },
        };
        CHECK_ADS(cases);
}

/* FileSystemDomain from FILESYSTEM_DOMAIN (else the host's full name) and
 * the admin's default for should_transfer_files. */
static void test_config(void) {
        static const AdCase cases[] = {
                { "FILESYSTEM_DOMAIN = nfs.example.org\n", EXE "queue",
                  { "0:FileSystemDomain = \"nfs.example.org\"" } },
                { "UID_DOMAIN = example.org\nFILESYSTEM_DOMAIN = nfs.$(UID_DOMAIN)\n", EXE "queue",
                  { "0:FileSystemDomain = \"nfs.example.org\"" } },
                { "FULL_HOSTNAME = submit.example.org\nFILESYSTEM_DOMAIN =\n", EXE "queue",
                  { "0:FileSystemDomain = \"submit.example.org\"" } },
                { "FULL_HOSTNAME = submit.example.org\n", EXE "queue",
                  { "0:FileSystemDomain = \"submit.example.org\"" } },
                /* a job's own FileSystemDomain stays */
                { NULL, EXE "+FileSystemDomain = \"mine\"\nqueue", { "0:FileSystemDomain = \"mine\"" } },
                { "SUBMIT_DEFAULT_SHOULD_TRANSFER_FILES = YES\n", EXE "queue",
                  { "0:ShouldTransferFiles = \"YES\"", "0:!FileSystemDomain", "0:Requirements ~ (TARGET.HasFileTransfer)" } },
                { "SUBMIT_DEFAULT_SHOULD_TRANSFER_FILES = NO\n", EXE "queue",
                  { "0:ShouldTransferFiles = \"NO\"", "0:!WhenToTransferOutput" } },
                /* invalid: ignored, users cannot fix it */
                { "SUBMIT_DEFAULT_SHOULD_TRANSFER_FILES = sometimes\n", EXE "queue",
                  { "0:ShouldTransferFiles = \"IF_NEEDED\"" } },
                /* the user's command wins */
                { "SUBMIT_DEFAULT_SHOULD_TRANSFER_FILES = NO\n", EXE "should_transfer_files = YES\nqueue",
                  { "0:ShouldTransferFiles = \"YES\"" } },
                /* an admin default of IF_NEEDED yields to ON_EXIT_OR_EVICT as the built-in one does */
                { "SUBMIT_DEFAULT_SHOULD_TRANSFER_FILES = IF_NEEDED\n", EXE "when_to_transfer_output = ON_EXIT_OR_EVICT\nqueue",
                  { "0:ShouldTransferFiles = \"YES\"" } },
        };
        CHECK_ADS(cases);
}

/* TransferInputSizeMB and DiskUsage: the executable, the input files
 * (directories summed through their subdirectories) and In, in KiB
 * rounded up per file, the sum in MiB rounded up. */
static void test_sizes(void) {
        static const AdCase cases[] = {
                { NULL, EXE "transfer_input_files = a.txt\nqueue",
                  { "0:DiskUsage = 5", "0:TransferInputSizeMB = 1", "0:ImageSize = 2" } },
                { NULL, EXE "transfer_input_files = a.txt, d\nqueue", { "0:DiskUsage = 9" } },
                { NULL, EXE "transfer_input_files = d/\nqueue", { "0:DiskUsage = 6" } },
                { NULL, EXE "input = in.txt\ntransfer_input_files = a.txt\nqueue", { "0:DiskUsage = 10" } },
                { NULL, EXE "input = in.txt\ntransfer_input = false\nqueue", { "0:DiskUsage = 2" } },
                { NULL, EXE "transfer_input_files = big\nqueue",
                  { "0:DiskUsage = 3075", "0:TransferInputSizeMB = 4" } },
                { NULL, EXE "transfer_input_files = file://@T@/big, a.txt\nqueue",
                  { "0:DiskUsage = 3078", "0:TransferInputSizeMB = 4" } },
                /* not transferred: the executable counts 1 KiB, as before */
                { NULL, "executable = /no/such/tool\ntransfer_executable = false\ntransfer_input_files = a.txt\nqueue",
                  { "0:DiskUsage = 4", "0:TransferInputSizeMB = 1" } },
                { NULL, EXE "transfer_input_files = $$(Name)\nqueue", { "0:DiskUsage = 2" } },
                /* RequestDisk defaults to DiskUsage, which now holds the input */
                { NULL, EXE "transfer_input_files = big\nqueue", { "0:RequestDisk = DiskUsage" } },
        };
        CHECK_ADS(cases);
}

typedef struct ErrorCase {
        const char *config;
        const char *text;
        int line;        /* the line the error names */
        const char *msg; /* a part of the reason */
} ErrorCase;

static void check_error_cases(const ErrorCase *cases, size_t n_cases, const char *table) {
        for (size_t i = 0; i < n_cases; i++) {
                const ErrorCase *c = &cases[i];
                Config *cfg = load_config(c->config);
                ConfigError err = {};
                ClassAd **ads = (ClassAd **) &err; /* must stay untouched */
                size_t n = 12345;
                char *msg = subst(c->msg);
                int r;

                r = parse(c->text, cfg, &ads, &n, &err);
                config_free(cfg);
                GLEAN_TEST_CHECK(r < 0, "%s row %zu: parsed, want an error about '%s'", table, i, msg);
                if (r >= 0) {
                        config_submit_free(ads, n);
                        free(msg);
                        continue;
                }
                GLEAN_TEST_CHECK(ads == (ClassAd **) &err && n == 12345, "%s row %zu: outputs set on error", table, i);
                GLEAN_TEST_CHECK(strcmp(err.file, c->line >= 0 ? "test.sub" : "test.conf") == 0 &&
                                         err.line == (c->line >= 0 ? c->line : -c->line),
                                 "%s row %zu: error at %s:%d, want line %d (%s)", table, i, err.file, err.line, c->line,
                                 err.msg);
                GLEAN_TEST_CHECK(strstr(err.msg, msg) != NULL, "%s row %zu: error '%s', want it to contain '%s'",
                                 table, i, err.msg, msg);
                free(msg);
        }
}

#define CHECK_ERRORS(cases) check_error_cases(cases, sizeof(cases) / sizeof((cases)[0]), #cases)

/* Refusals, each with the line it names (a negative line: of test.conf). */
static void test_errors(void) {
        static const ErrorCase cases[] = {
                /* input that is not there now */
                { NULL, EXE "transfer_input_files = a.txt, nope.dat\nqueue", 2,
                  "transfer_input_files: 'nope.dat' (@T@/nope.dat): No such file or directory" },
                { NULL, EXE "\ntransfer_input_files = @T@/gone/\nqueue", 3, "'@T@/gone/'" },
                { NULL, EXE "transfer_input_files = a.txt/\nqueue", 2, "Not a directory" },
                { NULL, EXE "transfer_input_files = file://@T@/nope\nqueue", 2, "No such file or directory" },
                { NULL, EXE "n = 3\ntransfer_input_files = in.$(n)\nqueue", 3, "'in.3'" },
                { NULL, EXE "transfer_input_files = fifo\nqueue", 2,
                  "transfer_input_files: 'fifo' (@T@/fifo) is neither a file nor a directory" },
                { NULL, EXE "+ShouldTransferFiles = \"sometimes\"\nqueue", 2,
                  "should_transfer_files: invalid value 'sometimes'" },
                /* URLs glean cannot fetch */
                { NULL, EXE "transfer_input_files = https://example.org/data.tgz\nqueue", 2,
                  "transfer_input_files: 'https://example.org/data.tgz': URL scheme 'https' needs a transfer "
                  "plugin (FILETRANSFER_PLUGINS), which glean does not have yet" },
                { NULL, EXE "transfer_input_files = a.txt,osdf:///ospool/x\nqueue", 2, "URL scheme 'osdf'" },
                { NULL, EXE "transfer_input_files = chtc+s3://b/k\nqueue", 2, "URL scheme 'chtc+s3'" },
                { NULL, EXE "transfer_input_files = file://relative/x\nqueue", 2,
                  "a file:// URL names an absolute path" },
                { NULL, EXE "transfer_output_remaps = \"o = https://example.org/o\"\nqueue", 2,
                  "transfer_output_remaps: 'https://example.org/o': URL scheme 'https'" },
                /* remaps that are not name = path */
                { NULL, EXE "transfer_output_remaps = \"a = b; c\"\nqueue", 2,
                  "transfer_output_remaps: 'c' is not 'name = path'" },
                { NULL, EXE "transfer_output_remaps = \" = b\"\nqueue", 2, "'= b' is not 'name = path'" },
                { NULL, EXE "transfer_output_remaps = \"a = \"\nqueue", 2, "'a =' is not 'name = path'" },
                { NULL, EXE "transfer_output_remaps = a\\= b\nqueue", 2, "'a\\= b' is not 'name = path'" },
                /* contradictions */
                { NULL, EXE "should_transfer_files = NO\nwhen_to_transfer_output = ON_EXIT\nqueue", 3,
                  "when_to_transfer_output = ON_EXIT, yet should_transfer_files = NO" },
                { "SUBMIT_DEFAULT_SHOULD_TRANSFER_FILES = NO\n", EXE "when_to_transfer_output = on_exit\nqueue", 2,
                  "when_to_transfer_output = on_exit, yet should_transfer_files = NO" },
                { NULL, EXE "when_to_transfer_output = ON_EXIT_OR_EVICT\nshould_transfer_files = NO\nqueue", 2,
                  "when_to_transfer_output = ON_EXIT_OR_EVICT, yet should_transfer_files = NO" },
                { NULL, EXE "should_transfer_files = YES\nwhen_to_transfer_output = NONE\nqueue", 3,
                  "when_to_transfer_output = NONE, yet should_transfer_files = YES" },
                { NULL, EXE "should_transfer_files = NO\ntransfer_input_files = a.txt\nqueue", 3,
                  "transfer_input_files names files to transfer, but should_transfer_files is NO" },
                { NULL, EXE "transfer_output_files = o\nshould_transfer_files = NO\nqueue", 2,
                  "transfer_output_files names files to transfer, but should_transfer_files is NO" },
                { NULL, EXE "transfer_output_files = \"\"\nshould_transfer_files = NO\nqueue", 2,
                  "transfer_output_files names files to transfer, but should_transfer_files is NO" },
                { "SUBMIT_DEFAULT_SHOULD_TRANSFER_FILES = NO\n", EXE "transfer_input_files = a.txt\nqueue", 2,
                  "but should_transfer_files is NO (SUBMIT_DEFAULT_SHOULD_TRANSFER_FILES)" },
                { NULL, EXE "should_transfer_files = IF_NEEDED\nwhen_to_transfer_output = ON_EXIT_OR_EVICT\nqueue", 3,
                  "ON_EXIT_OR_EVICT and should_transfer_files = IF_NEEDED are incompatible" },
                { NULL, EXE "should_transfer_files = NO\ntransfer_executable = true\nqueue", 3,
                  "transfer_executable = true, but should_transfer_files = NO transfers nothing" },
                /* values */
                { NULL, EXE "should_transfer_files = maybe\nqueue", 2,
                  "should_transfer_files: invalid value 'maybe': YES, NO or IF_NEEDED" },
                { NULL, EXE "when_to_transfer_output = later\nqueue", 2,
                  "when_to_transfer_output: invalid value 'later'" },
                { NULL, EXE "when_to_transfer_output = ON_SUCCESS\nqueue", 2,
                  "when_to_transfer_output = ON_SUCCESS is not supported by glean" },
                { NULL, EXE "preserve_relative_paths = sometimes\nqueue", 2,
                  "preserve_relative_paths: 'sometimes' is not a boolean" },
                { NULL, EXE "transfer_input = maybe\nqueue", 2, "transfer_input: 'maybe' is not a boolean" },
                { NULL, EXE "max_transfer_input_mb = (1 +\nqueue", 2,
                  "max_transfer_input_mb: cannot parse '(1 +' as an expression" },
                { NULL, EXE "max_transfer_output_mb = 5 5\nqueue", 2, "max_transfer_output_mb: cannot parse" },
                /* what glean does not do */
                { NULL, EXE "log = run.log\nlog_xml = true\nqueue", 3,
                  "log_xml is not supported: glean writes the text event log" },
                { NULL, EXE "output = o\nstream_output = true\nqueue", 3, "stream_output = true is not supported" },
                { NULL, EXE "stream_error = TRUE\nqueue", 2, "stream_error = true is not supported" },
                { NULL, EXE "input = in.txt\nstream_input = yes\nqueue", 3, "stream_input = true is not supported" },
                /* the configuration's domain */
                { "\nFILESYSTEM_DOMAIN = my domain\n", EXE "queue", -2,
                  "FILESYSTEM_DOMAIN = 'my domain' has a blank, a quote or a backslash" },
        };
        CHECK_ERRORS(cases);
}

/* A description with every transfer command warns of nothing: glean reads
 * them all now (none left "not supported"). */
static void test_no_warnings(void) {
        static const char text[] =
                EXE
                "should_transfer_files = YES\n"
                "when_to_transfer_output = ON_EXIT_OR_EVICT\n"
                "transfer_executable = true\n"
                "transfer_input_files = a.txt, d/\n"
                "transfer_output_files = out.dat\n"
                "transfer_output_remaps = \"out.dat = res/out.dat\"\n"
                "preserve_relative_paths = false\n"
                "max_transfer_input_mb = 10\n"
                "max_transfer_output_mb = 10\n"
                "input = in.txt\noutput = o\nerror = e\n"
                "transfer_input = true\ntransfer_output = true\ntransfer_error = true\n"
                "stream_input = false\nstream_output = false\nstream_error = false\n"
                "log = run.log\nlog_xml = false\n"
                "queue 2\n";
        FILE *saved = submit_warning_stream, *f = tmpfile();
        ConfigError err = {};
        ClassAd **ads = NULL;
        char buf[4096];
        size_t n = 0, len;
        int r;

        CU_ASSERT_FATAL(f != NULL);
        submit_warning_stream = f;
        r = parse(text, NULL, &ads, &n, &err);
        submit_warning_stream = saved;
        GLEAN_TEST_CHECK(r == 0 && n == 2, "parse: %d %s:%d: %s", r, err.file, err.line, err.msg);
        rewind(f);
        len = fread(buf, 1, sizeof(buf) - 1, f);
        buf[len] = '\0';
        fclose(f);
        GLEAN_TEST_CHECK(len == 0, "warnings: '%s'", buf);
        if (r == 0) {
                submit_test_expect(ads, n, "1:ShouldTransferFiles = \"YES\"", "no-warnings");
                submit_test_expect(ads, n, "1:WhenToTransferOutput = \"ON_EXIT_OR_EVICT\"", "no-warnings");
                submit_test_expect(ads, n, "1:DiskUsage = 14", "no-warnings");
                config_submit_free(ads, n);
        }
}

static CU_TestInfo tests[] = {
        { "defaults", test_defaults },
        { "commands", test_commands },
        { "requirements", test_requirements },
        { "config", test_config },
        { "sizes", test_sizes },
        { "errors", test_errors },
        { "no-warnings", test_no_warnings },
        CU_TEST_INFO_NULL,
};

static CU_SuiteInfo suites[] = {
        { "transfer", setup, teardown, NULL, NULL, tests },
        CU_SUITE_INFO_NULL,
};

int main(int argc, char **argv) {
        submit_warning_stream = tmpfile();
        return glean_test_main(argc, argv, suites);
}
