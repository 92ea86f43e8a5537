/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test-submit.c — submit descriptions that parse: every command and syntax
 * form, the ads they give (HTCondor's attribute names and values), macros
 * and every form of the queue statement. One table per topic; each row is
 * a description, the number of jobs it queues and expectations about
 * their ads (see submit-test.h).
 */
#include <stdlib.h>
#include <string.h>

#include "submit-internal.h"
#include "submit-test.h"

#define MAX_EXPECT 24

typedef struct AdCase {
        const char *text;
        size_t n_jobs;
        const char *expect[MAX_EXPECT];
} AdCase;

static void check_ad_cases(const AdCase *cases, size_t n_cases, const char *table) {
        for (size_t i = 0; i < n_cases; i++) {
                const AdCase *c = &cases[i];
                ConfigError err = {};
                ClassAd **ads = NULL;
                size_t n = 0;
                char what[64], *text = submit_test_subst(c->text);
                int r;

                snprintf(what, sizeof(what), "%s row %zu", table, i);
                r = submit_test_parse(text, NULL, true, &ads, &n, &err);
                free(text);
                GLEAN_TEST_CHECK(r == 0, "%s: parse failed: %d %s:%d: %s", what, r, err.file, err.line, err.msg);
                if (r < 0)
                        continue;
                GLEAN_TEST_CHECK(n == c->n_jobs, "%s: %zu jobs, want %zu", what, n, c->n_jobs);
                for (size_t k = 0; k < MAX_EXPECT && c->expect[k]; k++)
                        submit_test_expect(ads, n, c->expect[k], what);
                config_submit_free(ads, n);
        }
}

#define CHECK_ADS(cases) check_ad_cases(cases, sizeof(cases) / sizeof((cases)[0]), #cases)

/* What every job gets when the description says only the executable. */
static void test_defaults(void) {
        static const AdCase cases[] = {
                { "executable = /bin/sh\nqueue\n", 1, {
                        "0:MyType = \"Job\"", "0:TargetType = \"Machine\"", "0:ClusterId = 42", "0:ProcId = 0",
                        "0:Owner = \"alice\"", "0:QDate = 1700000000", "0:EnteredCurrentStatus = 1700000000",
                        "0:JobStatus = 1", "0:JobUniverse = 5", "0:Cmd = \"/bin/sh\"", "0:Iwd = \"@DIR@\"",
                        "0:Arguments = \"\"", "0:!Args", "0:Environment = \"\"", "0:In = \"/dev/null\"",
                        "0:Out = \"/dev/null\"", "0:Err = \"/dev/null\"", "0:!UserLog", "0:JobPrio = 0",
                        "0:NiceUser = false", "0:Rank = 0.0", "0:JobLeaseDuration = 1200", "0:!KillSig",
                        "0:!MaxJobRetirementTime" } },
                /* JOB_DEFAULT_REQUEST* of the built-in configuration */
                { "executable = /bin/sh\nqueue\n", 1, {
                        "0:RequestCpus = 1",
                        "0:RequestMemory = ifThenElse(MemoryUsage isnt undefined,MemoryUsage,1)",
                        "0:RequestDisk = DiskUsage", "0:DiskUsage ~ ", "0:ImageSize ~ ",
                        "0:Requirements = (TARGET.Arch == \"@ARCH@\") && (TARGET.OpSys == \"LINUX\") && "
                        "(TARGET.Disk >= RequestDisk) && (TARGET.Memory >= RequestMemory) && @XFER@",
                        "0:!AcctGroup", "0:!AccountingGroup" } },
        };
        CHECK_ADS(cases);
}

/* Lines: comments, blank lines, continuations, case, white space, CRLF. */
static void test_lines(void) {
        static const AdCase cases[] = {
                { "# a comment\n\n   # indented comment\nExecutable=/bin/sh\n  QUEUE  \n", 1, { "0:Cmd = \"/bin/sh\"" } },
                { "executable = /bin/\\\nsh\narguments = a \\\n  b\nqueue", 1,
                  { "0:Cmd = \"/bin/sh\"", "0:Args = \"a b\"" } },
                { "executable = /bin/sh\r\noutput = o.txt\r\nqueue\r\n", 1, { "0:Out = \"o.txt\"" } },
                /* as in the configuration: comments inside a continuation are
                 * skipped, a comment ending in \ continues nothing, a blank
                 * line ends a continuation */
                { "executable = /bin/sh\narguments = a \\\n# skipped \\\n   b\nqueue", 1, { "0:Args = \"a b\"" } },
                { "# comment \\\nexecutable = /bin/sh\nqueue", 1, { "0:Cmd = \"/bin/sh\"" } },
                { "executable = /bin/sh\narguments = a \\\n\nqueue", 1, { "0:Args = \"a\"" } },
                { "executable = /bin/sh\nqueue 2 \\", 2, { "1:ProcId = 1" } },
                { "EXECUTABLE\t=\t/bin/sh\nOutPut =   spaced.txt   \nqueue 1", 1, { "0:Out = \"spaced.txt\"" } },
                /* # is a comment only at the start of a line */
                { "executable = /bin/sh\narguments = a # b\nqueue", 1, { "0:Args = \"a # b\"" } },
                /* a later definition replaces an earlier one */
                { "executable = /bin/false\nexecutable = /bin/sh\nqueue", 1, { "0:Cmd = \"/bin/sh\"" } },
                /* an empty value is no value */
                { "executable = /bin/sh\noutput =\nqueue", 1, { "0:Out = \"/dev/null\"" } },
                /* a variable named queue is not a queue statement */
                { "executable = /bin/sh\nqueue = 3\nargs = $(queue)\nqueue", 1, { "0:Args = \"3\"" } },
        };
        CHECK_ADS(cases);
}

/* executable, initialdir, transfer_executable, universe, files. */
static void test_paths(void) {
        static const AdCase cases[] = {
                { "executable = job.sh\nqueue", 1, { "0:Cmd = \"@DIR@/job.sh\"", "0:DiskUsage = 1", "0:ImageSize = 1" } },
                { "executable = ./job.sh\nqueue", 1, { "0:Cmd = \"@DIR@/job.sh\"" } },
                /* not transferred: left as written, found on the execute machine */
                { "executable = bin/prog\ntransfer_executable = false\nqueue", 1,
                  { "0:Cmd = \"bin/prog\"", "0:DiskUsage = 1" } },
                { "initialdir = /data/run1\nexecutable = prog\ntransfer_executable = False\nlog = job.log\nqueue", 1,
                  { "0:Iwd = \"/data/run1\"", "0:Cmd = \"prog\"", "0:UserLog = \"/data/run1/job.log\"" } },
                /* transferred: relative to the current directory, not to initialdir */
                { "initialdir = /data/run1\nexecutable = job.sh\nqueue", 1,
                  { "0:Iwd = \"/data/run1\"", "0:Cmd = \"@DIR@/job.sh\"" } },
                { "initial_dir = sub\nexecutable = /bin/sh\nlog = /var/log/j.log\nqueue", 1,
                  { "0:Iwd = \"@DIR@/sub\"", "0:UserLog = \"/var/log/j.log\"" } },
                { "universe = vanilla\nexecutable = /bin/sh\nqueue", 1, { "0:JobUniverse = 5" } },
                { "Universe = VANILLA\nexecutable = /bin/sh\nqueue", 1, { "0:JobUniverse = 5" } },
                { "executable = /bin/sh\ninput = in.txt\noutput = out.txt\nerror = err.txt\nlog = job.log\nqueue", 1,
                  { "0:In = \"in.txt\"", "0:Out = \"out.txt\"", "0:Err = \"err.txt\"", "0:UserLog = \"@DIR@/job.log\"" } },
                { "executable = /bin/sh\nstdin = i\nstdout = o\nstderr = e\nqueue", 1,
                  { "0:In = \"i\"", "0:Out = \"o\"", "0:Err = \"e\"" } },
        };
        CHECK_ADS(cases);
}

/* arguments in the old and the new syntax. */
static void test_arguments(void) {
        static const AdCase cases[] = {
                { "executable = /bin/sh\narguments = one two   three\nqueue", 1,
                  { "0:Args = \"one two three\"", "0:!Arguments" } },
                { "executable = /bin/sh\narguments = say \\\"hi\\\"\nqueue", 1, { "0:Args = \"say \\\"hi\\\"\"" } },
                { "executable = /bin/sh\narguments = it's\nqueue", 1, { "0:Args = \"it's\"" } },
                { "executable = /bin/sh\narguments = \"one two\"\nqueue", 1, { "0:Arguments = \"one two\"", "0:!Args" } },
                { "executable = /bin/sh\narguments = \"one 'two three' four\"\nqueue", 1,
                  { "0:Arguments = \"one two' 'three four\"" } },
                { "executable = /bin/sh\narguments = \"say \"\"hi\"\"\"\nqueue", 1,
                  { "0:Arguments = \"say \\\"hi\\\"\"" } },
                { "executable = /bin/sh\narguments = \"'it''s' ''\"\nqueue", 1, { "0:Arguments = \"it''''s ''\"" } },
                { "executable = /bin/sh\narguments = \"a''b 'c d'e\"\nqueue", 1, { "0:Arguments = \"ab c' 'de\"" } },
                { "executable = /bin/sh\narguments = \"  \"\nqueue", 1, { "0:Arguments = \"\"" } },
                { "executable = /bin/sh\nargs = -v\nqueue", 1, { "0:Args = \"-v\"" } },
        };
        CHECK_ADS(cases);
}

/* environment in the old and the new syntax, getenv. */
static void test_environment(void) {
        static const AdCase cases[] = {
                { "executable = /bin/sh\nenvironment = A=1;B=2\nqueue", 1, { "0:Environment = \"A=1 B=2\"" } },
                { "executable = /bin/sh\nenvironment = A=1; B=x=y ;\nqueue", 1, { "0:Environment = \"A=1 B=x=y' '\"" } },
                { "executable = /bin/sh\nenvironment = A=1;A=2;C=\nqueue", 1, { "0:Environment = \"A=2 C=\"" } },
                { "executable = /bin/sh\nenvironment = \"A=1 B='x y' C=''\"\nqueue", 1,
                  { "0:Environment = \"A=1 B=x' 'y C=\"" } },
                { "executable = /bin/sh\nenvironment = \"Q=\"\"quoted\"\" S='it''s'\"\nqueue", 1,
                  { "0:Environment = \"Q=\\\"quoted\\\" S=it''''s\"" } },
                { "executable = /bin/sh\nenvironment = A=1\ngetenv = true\nqueue", 1,
                  { "0:Environment ~ GLEAN_SUBMIT_TEST=from-the-environment", "0:Environment ~ A=1" } },
                { "executable = /bin/sh\nenvironment = GLEAN_SUBMIT_TEST=mine\ngetenv = true\nqueue", 1,
                  { "0:Environment ~ GLEAN_SUBMIT_TEST=mine" } },
                { "executable = /bin/sh\ngetenv = false\nqueue", 1, { "0:Environment = \"\"" } },
        };

        setenv("GLEAN_SUBMIT_TEST", "from-the-environment", 1);
        CHECK_ADS(cases);
}

/* request_cpus, request_memory (MB), request_disk (KB), units, request_<name>. */
static void test_requests(void) {
        static const AdCase cases[] = {
                { "executable = /bin/sh\nrequest_memory = 1024\nrequest_disk = 1024\nrequest_cpus = 4\nqueue", 1,
                  { "0:RequestMemory = 1024", "0:RequestDisk = 1024", "0:RequestCpus = 4",
                    "0:Requirements ~ (TARGET.Cpus >= RequestCpus)" } },
                { "executable = /bin/sh\nrequest_memory = 2G\nrequest_disk = 1G\nqueue", 1,
                  { "0:RequestMemory = 2048", "0:RequestDisk = 1048576" } },
                { "executable = /bin/sh\nrequest_memory = 1.5 GB\nrequest_disk = 0.5M\nqueue", 1,
                  { "0:RequestMemory = 1536", "0:RequestDisk = 512" } },
                { "executable = /bin/sh\nrequest_memory = 512K\nrequest_disk = 10kb\nqueue", 1,
                  { "0:RequestMemory = 1", "0:RequestDisk = 10" } },
                { "executable = /bin/sh\nrequest_memory = 3t\nrequest_disk = 100mb\nqueue", 1,
                  { "0:RequestMemory = 3145728", "0:RequestDisk = 102400" } },
                { "executable = /bin/sh\nRequestMemory = 100\nRequestDisk = 7\nRequestCpus = 2\nqueue", 1,
                  { "0:RequestMemory = 100", "0:RequestDisk = 7", "0:RequestCpus = 2" } },
                { "executable = /bin/sh\nrequest_memory = 2 * 1024\nrequest_cpus = TARGET.TotalCpus\nqueue", 1,
                  { "0:RequestMemory = 2 * 1024", "0:RequestCpus = TARGET.TotalCpus",
                    "0:Requirements ~ (TARGET.Memory >= RequestMemory) && (TARGET.Cpus >= RequestCpus)" } },
                /* undefined: no request, no clause */
                { "executable = /bin/sh\nrequest_memory = undefined\nrequest_cpus = UNDEFINED\nqueue", 1,
                  { "0:!RequestMemory", "0:!RequestCpus",
                    "0:Requirements = (TARGET.Arch == \"@ARCH@\") && (TARGET.OpSys == \"LINUX\") && "
                    "(TARGET.Disk >= RequestDisk) && @XFER@" } },
                /* literal requests of 1 (memory, cpus) or 0 (disk) need no clause */
                { "executable = /bin/sh\nrequest_memory = 1\nrequest_cpus = 1\nrequest_disk = 0\nqueue", 1,
                  { "0:Requirements = (TARGET.Arch == \"@ARCH@\") && (TARGET.OpSys == \"LINUX\") && @XFER@" } },
                { "executable = /bin/sh\nrequest_gpu = 2\nrequest_actuator = 1\nqueue", 1,
                  { "0:RequestGpu = 2", "0:RequestActuator = 1",
                    "0:Requirements ~ (TARGET.Gpu >= RequestGpu) && (TARGET.Actuator >= RequestActuator)" } },
                { "executable = /bin/sh\nrequest_GPUs = 0\nqueue", 1,
                  { "0:RequestGPUs = 0", "0:Requirements = (TARGET.Arch == \"@ARCH@\") && (TARGET.OpSys == "
                    "\"LINUX\") && (TARGET.Disk >= RequestDisk) && (TARGET.Memory >= RequestMemory) && @XFER@" } },
                { "executable = /bin/sh\nrequest_gpu_type = \"A100|H100\"\nqueue", 1,
                  { "0:RequestGpu_type = \"A100|H100\"", "0:Requirements ~ regexp(RequestGpu_type,TARGET.Gpu_type)" } },
                { "executable = /bin/sh\nn = 3\nrequest_scratch = $(n) * 2\nqueue", 1,
                  { "0:RequestScratch = 3 * 2", "0:Requirements ~ (TARGET.Scratch >= RequestScratch)" } },
        };
        CHECK_ADS(cases);
}

/* requirements, rank, and what the user's requirements already say. */
static void test_requirements(void) {
        static const AdCase cases[] = {
                { "executable = /bin/sh\nrequirements = Memory > 100 || Machine == \"a\"\nqueue", 1,
                  { "0:Requirements = (Memory > 100 || Machine == \"a\") && (TARGET.Arch == \"@ARCH@\") && "
                    "(TARGET.OpSys == \"LINUX\") && (TARGET.Disk >= RequestDisk) && "
                    "(TARGET.Memory >= RequestMemory) && @XFER@" } },
                { "executable = /bin/sh\nrequirements = Arch == \"aarch64\" && TARGET.OpSysAndVer == \"X\"\nqueue", 1,
                  { "0:Requirements = (Arch == \"aarch64\" && TARGET.OpSysAndVer == \"X\") && "
                    "(TARGET.Disk >= RequestDisk) && (TARGET.Memory >= RequestMemory) && @XFER@" } },
                /* MY.Arch, strings and function names are not the slot's Arch */
                { "executable = /bin/sh\nrequirements = MY.Arch =!= \"Arch\" && isUndefined(OpSys2)\nqueue", 1,
                  { "0:Requirements ~ (TARGET.Arch == \"@ARCH@\") && (TARGET.OpSys == \"LINUX\")" } },
                { "executable = /bin/sh\nrequest_cpus = 8\nrequirements = TARGET.Cpus >= 8\nqueue", 1,
                  { "0:Requirements = (TARGET.Cpus >= 8) && (TARGET.Arch == \"@ARCH@\") && (TARGET.OpSys == "
                    "\"LINUX\") && (TARGET.Disk >= RequestDisk) && (TARGET.Memory >= RequestMemory) && @XFER@" } },
                { "executable = /bin/sh\nrequest_disk = undefined\nrequirements = Disk > 5\nqueue", 1,
                  { "0:!RequestDisk", "0:Requirements = (Disk > 5) && (TARGET.Arch == \"@ARCH@\") && "
                    "(TARGET.OpSys == \"LINUX\") && (TARGET.Memory >= RequestMemory) && @XFER@" } },
                { "executable = /bin/sh\nrequest_disk = undefined\nqueue", 1,
                  { "0:Requirements ~ (TARGET.Disk >= DiskUsage)" } },
                { "executable = /bin/sh\nrank = Memory * 2 + KFlops\nqueue", 1, { "0:Rank = Memory * 2 + KFlops" } },
                { "executable = /bin/sh\npreferences = Mips\nqueue", 1, { "0:Rank = Mips" } },
        };
        CHECK_ADS(cases);
}

/* priority, nice_user, accounting groups, kill_sig, retirement, lease. */
static void test_policy(void) {
        static const AdCase cases[] = {
                { "executable = /bin/sh\npriority = 10\nqueue", 1, { "0:JobPrio = 10" } },
                { "executable = /bin/sh\npriority = -5\nqueue", 1, { "0:JobPrio = -5" } },
                { "executable = /bin/sh\nprio = 2 * 3\nqueue", 1, { "0:JobPrio = 6" } },
                { "executable = /bin/sh\nnice_user = true\nqueue", 1,
                  { "0:NiceUser = true", "0:MaxJobRetirementTime = 0" } },
                { "executable = /bin/sh\nnice_user = True\nmax_job_retirement_time = 60\nqueue", 1,
                  { "0:NiceUser = true", "0:MaxJobRetirementTime = 60" } },
                { "executable = /bin/sh\nnice_user = no\nqueue", 1, { "0:NiceUser = false", "0:!MaxJobRetirementTime" } },
                { "executable = /bin/sh\nmax_job_retirement_time = 3600 * 2\nqueue", 1,
                  { "0:MaxJobRetirementTime = 3600 * 2" } },
                { "executable = /bin/sh\naccounting_group = group_physics\nqueue", 1,
                  { "0:AcctGroup = \"group_physics\"", "0:AcctGroupUser = \"alice\"",
                    "0:AccountingGroup = \"group_physics.alice\"" } },
                { "executable = /bin/sh\naccounting_group = group_physics.hep\naccounting_group_user = bob\nqueue", 1,
                  { "0:AcctGroup = \"group_physics.hep\"", "0:AcctGroupUser = \"bob\"",
                    "0:AccountingGroup = \"group_physics.hep.bob\"" } },
                { "executable = /bin/sh\naccounting_group_user = carol\nqueue", 1,
                  { "0:!AcctGroup", "0:AcctGroupUser = \"carol\"", "0:AccountingGroup = \"carol\"" } },
                { "executable = /bin/sh\n+AccountingGroup = \"group_chem.dave\"\nqueue", 1,
                  { "0:AccountingGroup = \"group_chem.dave\"", "0:!AcctGroup" } },
                { "executable = /bin/sh\naccounting_group = a\n+AccountingGroup = \"b.c\"\nqueue", 1,
                  { "0:AccountingGroup = \"b.c\"", "0:AcctGroup = \"a\"" } },
                { "executable = /bin/sh\nkill_sig = SIGINT\nqueue", 1, { "0:KillSig = \"SIGINT\"" } },
                { "executable = /bin/sh\nkill_sig = term\nqueue", 1, { "0:KillSig = \"SIGTERM\"" } },
                { "executable = /bin/sh\nkill_sig = 10\nqueue", 1, { "0:KillSig = \"SIGUSR1\"" } },
                { "executable = /bin/sh\njob_lease_duration = 600\nqueue", 1, { "0:JobLeaseDuration = 600" } },
                { "executable = /bin/sh\njob_lease_duration = 0\nqueue", 1, { "0:!JobLeaseDuration" } },
                { "executable = /bin/sh\njob_lease_duration = 5\nqueue", 1, { "0:JobLeaseDuration = 20" } },
                { "executable = /bin/sh\njob_lease_duration = 10 * 60\nqueue", 1, { "0:JobLeaseDuration = 600" } },
                { "executable = /bin/sh\njob_lease_duration = LeaseBase + 5\nqueue", 1,
                  { "0:JobLeaseDuration = LeaseBase + 5" } },
                { "executable = /bin/sh\njob_max_vacate_time = 30\nqueue", 1, { "0:JobMaxVacateTime = 30" } },
                /* the job's own policy, as the queue evaluates it */
                { "executable = /bin/sh\nperiodic_hold = (time() - JobStartDate) > 60\n"
                  "periodic_hold_reason = \"too long\"\nperiodic_hold_subcode = 4\nqueue", 1,
                  { "0:PeriodicHold = (time() - JobStartDate) > 60", "0:PeriodicHoldReason = \"too long\"",
                    "0:PeriodicHoldSubCode = 4" } },
                { "executable = /bin/sh\nperiodic_release = NumJobStarts < 3\nperiodic_remove = JobStatus == 5\nqueue",
                  1, { "0:PeriodicRelease = NumJobStarts < 3", "0:PeriodicRemove = JobStatus == 5" } },
                { "executable = /bin/sh\non_exit_hold = ExitCode != 0\non_exit_hold_reason = \"failed\"\n"
                  "on_exit_hold_subcode = ExitCode\non_exit_remove = ExitBySignal == false\nqueue", 1,
                  { "0:OnExitHold = ExitCode != 0", "0:OnExitHoldReason = \"failed\"", "0:OnExitHoldSubCode = ExitCode",
                    "0:OnExitRemove = ExitBySignal == false" } },
                { "executable = /bin/sh\nqueue", 1, { "0:!PeriodicHold", "0:!OnExitRemove", "0:JobStatus = 1" } },
                { "executable = /bin/sh\nhold = true\nqueue 2", 2, { "0:JobStatus = 5", "1:JobStatus = 5" } },
                { "executable = /bin/sh\nhold = false\nqueue", 1, { "0:JobStatus = 1" } },
                { "executable = /bin/sh\nhold = $(Process) == 1\nqueue 2", 2, { "0:JobStatus = 1", "1:JobStatus = 5" } },
                { "executable = /bin/sh\nbatch_name = nightly-$(Cluster)\nqueue", 1,
                  { "0:JobBatchName = \"nightly-42\"" } },
                { "executable = /bin/sh\nbatch_name = \"quoted name\"\nqueue", 1,
                  { "0:JobBatchName = \"quoted name\"" } },
        };
        CHECK_ADS(cases);
}

/* +Attr and MY.Attr. */
static void test_forced_attrs(void) {
        static const AdCase cases[] = {
                { "executable = /bin/sh\n+Department = \"physics\"\nMY.Weight = 2.5\n+Flag = true\nqueue", 1,
                  { "0:Department = \"physics\"", "0:Weight = 2.500000000000000E+00", "0:Flag = true" } },
                { "executable = /bin/sh\n+Expr = Memory / 1024 + MY.Weight\nqueue", 1,
                  { "0:Expr = Memory / 1024 + MY.Weight" } },
                { "executable = /bin/sh\n+JobPrio = 7\n+Tag = \"j$(Process)\"\nqueue 2", 2,
                  { "0:JobPrio = 7", "0:Tag = \"j0\"", "1:Tag = \"j1\"" } },
                { "executable = /bin/sh\n+A = 1\n+a = 2\nqueue", 1, { "0:A = 2" } },
                { "executable = /bin/sh\n+Nothing = undefined\nqueue", 1, { "0:Nothing = undefined" } },
        };
        CHECK_ADS(cases);
}

/* Macros: built-in, the user's, defaults, self-references, $ENV, $$. */
static void test_macros(void) {
        static const AdCase cases[] = {
                { "executable = /bin/sh\noutput = o.$(Cluster).$(Process)\nerror = e.$(ClusterId).$(ProcId)\nqueue 2", 2,
                  { "0:Out = \"o.42.0\"", "0:Err = \"e.42.0\"", "1:Out = \"o.42.1\"", "1:Err = \"e.42.1\"" } },
                { "base = run\ndir = $(base)/out\nexecutable = /bin/sh\noutput = $(dir)/$(Process).txt\nqueue", 1,
                  { "0:Out = \"run/out/0.txt\"" } },
                /* defined after use: values expand when the job is built */
                { "executable = /bin/sh\noutput = $(name).out\nname = late\nqueue", 1, { "0:Out = \"late.out\"" } },
                { "executable = /bin/sh\narguments = [$(nothing)]\nqueue", 1, { "0:Args = \"[]\"" } },
                { "executable = /bin/sh\narguments = $(opt:fallback) $(empty:x)\nempty =\nqueue", 1,
                  { "0:Args = \"fallback x\"" } },
                { "opts = -a\nopts = $(opts) -b\nexecutable = /bin/sh\narguments = $(opts)\nqueue", 1,
                  { "0:Args = \"-a -b\"" } },
                { "executable = /bin/sh\narguments = $ENV(GLEAN_SUBMIT_MACRO) $ENV(GLEAN_NO_SUCH:none)\nqueue", 1,
                  { "0:Args = \"m1 none\"" } },
                { "executable = /bin/sh\narguments = cost $(DOLLAR)5\n+Match = \"$$(Name)\"\nqueue", 1,
                  { "0:Args = \"cost $5\"", "0:Match = \"$$(Name)\"" } },
                { "executable = /bin/sh\narguments = $(OPSYS) $(IsLinux) $(ARCH)\nqueue", 1,
                  { "0:Args = \"LINUX 1 @ARCH@\"" } },
                { "executable = /bin/sh\narguments = $(Step) $(Row) $(ItemIndex)\nqueue 2", 2,
                  { "0:Args = \"0 0 0\"", "1:Args = \"1 0 0\"" } },
                { "executable = /bin/sh\narguments = $(SUBMIT_FILE)\nqueue", 1, { "0:Args = \"test.sub\"" } },
                /* a description's own Process wins over the built-in one, as in condor_submit */
                { "executable = /bin/sh\nProcess = mine\narguments = $(Process)\nqueue", 1, { "0:Args = \"mine\"" } },
        };

        setenv("GLEAN_SUBMIT_MACRO", "m1", 1);
        CHECK_ADS(cases);
}

/* queue, queue N, several queue statements, counts as expressions. */
static void test_queue_counts(void) {
        static const AdCase cases[] = {
                { "executable = /bin/sh\nqueue 3", 3, { "0:ProcId = 0", "2:ProcId = 2", "2:ClusterId = 42" } },
                { "executable = /bin/sh\nqueue 0", 0, { NULL } },
                { "executable = /bin/sh\nqueue 2*2", 4, { "3:ProcId = 3" } },
                { "n = 2\nexecutable = /bin/sh\nqueue $(n)", 2, { "1:ProcId = 1" } },
                { "executable = /bin/sh\narguments = first\nqueue\narguments = second\nqueue 2", 3,
                  { "0:Args = \"first\"", "1:Args = \"second\"", "2:Args = \"second\"", "2:ProcId = 2" } },
                { "executable = /bin/sh\nqueue 0\nqueue 1", 1, { "0:ProcId = 0" } },
        };
        CHECK_ADS(cases);
}

/* queue ... in, from, slices, several variables. */
static void test_queue_items(void) {
        static const AdCase cases[] = {
                { "executable = /bin/sh\narguments = $(Item)\nqueue in (a, b, c)", 3,
                  { "0:Args = \"a\"", "1:Args = \"b\"", "2:Args = \"c\"", "2:ProcId = 2" } },
                { "executable = /bin/sh\narguments = $(x)\nqueue x in (a b,c)", 3, { "1:Args = \"b\"" } },
                { "executable = /bin/sh\narguments = $(x)\nQueue X IN a, b", 2, { "0:Args = \"a\"", "1:Args = \"b\"" } },
                { "executable = /bin/sh\narguments = $(x) $(Step) $(Row) $(Process)\nqueue 2 x in (a, b)", 4,
                  { "0:Args = \"a 0 0 0\"", "1:Args = \"a 1 0 1\"", "2:Args = \"b 0 1 2\"", "3:Args = \"b 1 1 3\"" } },
                { "executable = /bin/sh\narguments = $(f)\nqueue f in (\n  a.txt, b.txt\n  # a comment\n\n  c.txt\n)\n",
                  3, { "0:Args = \"a.txt\"", "2:Args = \"c.txt\"" } },
                { "executable = /bin/sh\narguments = $(f)\nqueue f in ( first\n second\n)", 2,
                  { "0:Args = \"first\"", "1:Args = \"second\"" } },
                { "executable = /bin/sh\narguments = $(Item)\nqueue in [1:] (a, b, c)", 2,
                  { "0:Args = \"b\"", "1:Args = \"c\"" } },
                { "executable = /bin/sh\narguments = $(Item) $(Row)\nqueue in [::2] (a, b, c, d, e)", 3,
                  { "0:Args = \"a 0\"", "1:Args = \"c 2\"", "2:Args = \"e 4\"" } },
                { "executable = /bin/sh\narguments = $(Item)\nqueue in [-2:] (a, b, c)", 2, { "0:Args = \"b\"" } },
                { "executable = /bin/sh\narguments = $(Item)\nqueue in [:1] (a, b, c)", 1, { "0:Args = \"a\"" } },
                { "executable = /bin/sh\narguments = $(Item)\nqueue in [1:-1:1] (a, b, c)", 1, { "0:Args = \"b\"" } },
                { "executable = /bin/sh\narguments = \"$(a) '$(b)'\"\nqueue a,b from (\n  x, y z\n  p q\n)", 2,
                  { "0:Arguments = \"x y' 'z\"", "1:Arguments = \"p q\"" } },
                { "executable = /bin/sh\narguments = \"'$(line)'\"\nqueue line from (one two three)", 1,
                  { "0:Arguments = \"one' 'two' 'three\"" } },
                { "executable = /bin/sh\narguments = $(a)-$(b)-$(c)\nqueue a b c from (\n1,2\n)", 1,
                  { "0:Args = \"1-2-\"" } },
                { "executable = /bin/sh\narguments = $(name) $(size)\nqueue name, size from items.txt", 3,
                  { "0:Args = \"alpha 10\"", "1:Args = \"beta 20\"", "2:Args = \"gamma 30\"" } },
                { "executable = /bin/sh\narguments = $(Item)\nqueue from [1:2] items.txt", 1,
                  { "0:Args = \"beta 20\"" } },
                { "executable = /bin/sh\nitems = items.txt\narguments = $(Item)\nqueue from $(items)", 3,
                  { "2:Args = \"gamma 30\"" } },
                { "executable = /bin/sh\narguments = $(Item)\nqueue 2 from @DIR@/items.txt", 6, { "5:ProcId = 5" } },
                /* loop variables win over the description's variables */
                { "Item = mine\nexecutable = /bin/sh\narguments = $(Item)\nqueue in (x)\narguments = $(Item)\nqueue", 2,
                  { "0:Args = \"x\"", "1:Args = \"mine\"" } },
                { "executable = /bin/sh\nqueue in ()", 0, { NULL } },
        };
        CHECK_ADS(cases);
}

static CU_TestInfo ad_tests[] = {
        { "defaults", test_defaults },
        { "lines", test_lines },
        { "paths", test_paths },
        { "arguments", test_arguments },
        { "environment", test_environment },
        { "requests", test_requests },
        { "requirements", test_requirements },
        { "policy", test_policy },
        { "forced-attrs", test_forced_attrs },
        { "macros", test_macros },
        CU_TEST_INFO_NULL,
};

static CU_TestInfo queue_tests[] = {
        { "counts", test_queue_counts },
        { "items", test_queue_items },
        CU_TEST_INFO_NULL,
};

static CU_SuiteInfo suites[] = {
        { "ads", NULL, NULL, NULL, NULL, ad_tests },
        { "queue", NULL, NULL, NULL, NULL, queue_tests },
        CU_SUITE_INFO_NULL,
};

int main(int argc, char **argv) {
        /* Warnings (unused lines and the like) have their own tests. */
        submit_warning_stream = tmpfile();
        return glean_test_main(argc, argv, suites);
}
