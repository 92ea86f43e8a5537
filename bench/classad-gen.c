/* SPDX-License-Identifier: Apache-2.0 */
/*
 * classad-gen — deterministic ClassAd workload for bench/classad-match.
 *
 * Usage:
 *   classad-gen machines N    N machine (slot) ads on stdout
 *   classad-gen job           one job ad on stdout
 *
 * Output format: every ad is written in the bracketed ("new") ClassAd
 * syntax on a single line, terminated by '\n':
 *
 *   [ Name = "slot1@host-0001.example.org"; Machine = "host-0001.example.org"; ... ]
 *
 * No other lines are written (no comments, no blank lines), so line K of the
 * machine file is machine ad K.
 *
 * Machine ads look like the static-slot ads an HTCondor startd advertises:
 * about 30 attributes, of which the ones the job's Requirements and the
 * machines' START/Rank look at are drawn so that about 46% of the slots
 * satisfy the job's Requirements and about 27% match symmetrically (the
 * slot's Requirements accept the job too); figures for "machines 100000".
 * Slots are grouped by host: every host has TotalSlots slots that share the
 * host's hardware, policy and idle times.
 * The START expression comes in several variants (desktop idle policies,
 * department-owned nodes, allow-lists with stringListMember(), plain
 * cluster nodes); Requirements is always the attribute reference START;
 * Rank comes in a few variants (boolean, scaled boolean, arithmetic).
 *
 * The job ad's Requirements holds 17 attribute references and its Rank
 * prefers fast machines.
 *
 * Everything comes from one splitmix64 stream with a fixed seed: the same
 * arguments always produce byte-identical output, on any platform.
 * No time functions are used, so evaluation results do not depend on the
 * clock either.
 */

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ELEMENTSOF(x) (sizeof(x) / sizeof((x)[0]))

#define GEN_SEED UINT64_C(0x676c65616e2d6164) /* "glean-ad" */
#define GEN_MAX_MACHINES 100000000ULL
#define GEN_EPOCH INT64_C(1700000000)           /* fixed "now" for time stamps */

/* ---- PRNG: splitmix64 ---- */

typedef struct Rng {
        uint64_t state;
} Rng;

static uint64_t rng_next(Rng *r) {
        uint64_t z = (r->state += UINT64_C(0x9e3779b97f4a7c15));

        z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
        z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
        return z ^ (z >> 31);
}

/* Uniform in [0, n); n > 0. */
static uint64_t rng_below(Rng *r, uint64_t n) {
        return (uint64_t) (((unsigned __int128) rng_next(r) * n) >> 64);
}

/* Uniform in [lo, hi]. */
static int64_t rng_range(Rng *r, int64_t lo, int64_t hi) {
        return lo + (int64_t) rng_below(r, (uint64_t) (hi - lo) + 1);
}

/* Uniform in [0, 1). */
static double rng_unit(Rng *r) {
        return (double) (rng_next(r) >> 11) * 0x1.0p-53;
}

/* True with probability percent/100. */
static bool rng_chance(Rng *r, unsigned percent) {
        return rng_below(r, 100) < percent;
}

/* Index into a table of weights (which need not add up to 100). */
static size_t rng_weighted(Rng *r, const unsigned *weights, size_t n) {
        uint64_t total = 0, x;

        for (size_t i = 0; i < n; i++)
                total += weights[i];
        x = rng_below(r, total);
        for (size_t i = 0; i < n; i++) {
                if (x < weights[i])
                        return i;
                x -= weights[i];
        }
        return n - 1;
}

/* ---- the pool's vocabulary ---- */

static const char *const departments[] = { "physics", "chemistry", "cs", "biology", "math" };
static const unsigned department_weights[] = { 30, 20, 25, 15, 10 };

typedef struct OsVersion {
        const char *and_ver;
        int major;
} OsVersion;

static const OsVersion os_versions[] = {
        { "AlmaLinux9", 9 },
        { "Rocky8", 8 },
        { "CentOS7", 7 },
        { "Ubuntu22", 22 },
};
static const unsigned os_weights[] = { 45, 25, 15, 15 };

static const char *const cuda_devices[] = { "NVIDIA A100-SXM4-40GB", "Tesla V100-PCIE-16GB", "NVIDIA T4" };
static const double cuda_capabilities[] = { 8.0, 7.0, 7.5 };

/* Machine START policies: %s placeholders are filled by write_start(). */
typedef enum StartPolicy {
        START_CLUSTER,     /* accepts anything that fits */
        START_DESKTOP,     /* classic idle-desktop policy */
        START_DESKTOP_ALT, /* idle desktop, or the department's own jobs */
        START_DEPARTMENT,  /* department-owned node, lends spare capacity */
        START_ALLOWLIST,   /* a few users only */
        _START_MAX,
} StartPolicy;

typedef enum RankPolicy {
        RANK_DEPARTMENT,   /* TARGET.Department == Department */
        RANK_OWNER,        /* (TARGET.Owner == "alice") * 10 */
        RANK_ARITH,        /* prefers big jobs */
        RANK_MIXED,        /* department and admins */
        _RANK_MAX,
} RankPolicy;

/* ---- one host ---- */

typedef struct Host {
        uint64_t index;
        char name[64];
        bool aarch64;
        const OsVersion *os;
        const char *department;
        const char *fs_domain;
        bool desktop;
        bool has_docker;
        bool has_file_transfer;
        int cuda;                /* index into cuda_devices, -1: no GPU */
        int total_cpus;
        int64_t total_memory;    /* MB */
        int64_t total_disk;      /* KB */
        int total_slots;
        int64_t keyboard_idle;   /* s */
        int64_t console_idle;    /* s */
        int64_t mips;
        int64_t kflops;
        double owner_load;       /* load not caused by jobs */
        StartPolicy start;
        RankPolicy rank;
        unsigned allowlist;      /* START_ALLOWLIST: which list */
} Host;

static void host_draw(Host *h, Rng *r, uint64_t index) {
        static const int cluster_cpus[] = { 8, 16, 24, 32, 48, 64 };
        static const int desktop_cpus[] = { 4, 8 };
        static const int slot_counts[] = { 1, 2, 4, 8 };
        static const unsigned slot_weights[] = { 25, 30, 30, 15 };
        static const int64_t mem_per_core[] = { 1024, 2048, 3072, 4096, 8192 };
        static const unsigned mem_weights[] = { 20, 35, 15, 20, 10 };

        *h = (Host) { .index = index, .cuda = -1 };
        snprintf(h->name, sizeof h->name, "host-%04" PRIu64 ".example.org", index);

        h->desktop = rng_chance(r, 30);
        h->aarch64 = !h->desktop && rng_chance(r, 12);
        h->os = &os_versions[rng_weighted(r, os_weights, ELEMENTSOF(os_weights))];
        h->department = departments[rng_weighted(r, department_weights, ELEMENTSOF(department_weights))];
        h->fs_domain = rng_chance(r, 80) ? "example.org" : "cs.example.org";
        h->has_docker = rng_chance(r, h->desktop ? 10 : 60);
        h->has_file_transfer = rng_chance(r, 92);
        if (!h->desktop && rng_chance(r, 10))
                h->cuda = (int) rng_below(r, ELEMENTSOF(cuda_devices));

        if (h->desktop) {
                h->total_cpus = desktop_cpus[rng_below(r, ELEMENTSOF(desktop_cpus))];
                h->total_slots = rng_chance(r, 70) ? 1 : 2;
        } else {
                h->total_cpus = cluster_cpus[rng_below(r, ELEMENTSOF(cluster_cpus))];
                h->total_slots = slot_counts[rng_weighted(r, slot_weights, ELEMENTSOF(slot_weights))];
        }
        h->total_memory = h->total_cpus * mem_per_core[rng_weighted(r, mem_weights, ELEMENTSOF(mem_weights))];
        h->total_disk = rng_range(r, 40, 2000) * INT64_C(1024) * 1024; /* 40 GB .. 2 TB in KB */

        /* Desktops: a third are in use right now; the rest idle for a while. */
        if (h->desktop && rng_chance(r, 35))
                h->keyboard_idle = rng_range(r, 0, 900);
        else
                h->keyboard_idle = rng_range(r, 600, 7 * 24 * 3600);
        h->console_idle = h->keyboard_idle + (rng_chance(r, 50) ? rng_range(r, 0, 3600) : 0);
        h->owner_load = h->desktop ? rng_unit(r) * (rng_chance(r, 30) ? 1.5 : 0.25) : rng_unit(r) * 0.05;

        h->mips = rng_range(r, 4000, 45000);
        h->kflops = rng_chance(r, 8) ? rng_range(r, 40000, 99999) : rng_range(r, 100000, 3500000);

        if (h->desktop)
                h->start = rng_chance(r, 60) ? START_DESKTOP : START_DESKTOP_ALT;
        else {
                static const unsigned w[] = { [START_CLUSTER] = 25, [START_DEPARTMENT] = 40, [START_ALLOWLIST] = 35 };
                h->start = (StartPolicy) rng_weighted(r, w, ELEMENTSOF(w));
        }
        h->rank = (RankPolicy) rng_below(r, _RANK_MAX);
        h->allowlist = (unsigned) rng_below(r, 3);
}

/* ---- output helpers ---- */

typedef struct Out {
        FILE *f;
        bool first;
} Out;

static void out_begin(Out *o) {
        fputs("[ ", o->f);
        o->first = true;
}

static void out_end(Out *o) {
        fputs(" ]\n", o->f);
}

static void out_name(Out *o, const char *name) {
        if (!o->first)
                fputs("; ", o->f);
        o->first = false;
        fprintf(o->f, "%s = ", name);
}

static void out_str(Out *o, const char *name, const char *v) {
        out_name(o, name);
        fprintf(o->f, "\"%s\"", v); /* values here never need escapes */
}

static void out_int(Out *o, const char *name, int64_t v) {
        out_name(o, name);
        fprintf(o->f, "%" PRId64, v);
}

static void out_real(Out *o, const char *name, double v) {
        out_name(o, name);
        fprintf(o->f, "%.6f", v);
}

static void out_bool(Out *o, const char *name, bool v) {
        out_name(o, name);
        fputs(v ? "true" : "false", o->f);
}

static void out_expr(Out *o, const char *name, const char *expr) {
        out_name(o, name);
        fputs(expr, o->f);
}

/* ---- machine ads ---- */

static void write_start(Out *o, const Host *h) {
        static const char *const allowlists[] = { "alice,bob,carol", "dave,erin,frank", "bob,carol" };

        out_name(o, "START");
        switch (h->start) {
        case START_CLUSTER:
                fputs("TARGET.RequestMemory <= Memory && TARGET.RequestCpus <= Cpus && TARGET.Owner =!= \"mallory\"", o->f);
                break;
        case START_DESKTOP:
                fputs("KeyboardIdle > 15 * 60 && (LoadAvg - CondorLoadAvg) <= 0.3 || TARGET.Owner == \"admin\"", o->f);
                break;
        case START_DESKTOP_ALT:
                fputs("(KeyboardIdle > 30 * 60 || ConsoleIdle > 60 * 60) && LoadAvg <= 0.5 || TARGET.Department == Department", o->f);
                break;
        case START_DEPARTMENT:
                fputs("TARGET.Department == Department || (State == \"Unclaimed\" && TARGET.NiceUser =!= true && TARGET.RequestMemory <= Memory / 4)", o->f);
                break;
        case START_ALLOWLIST:
                fprintf(o->f, "stringListMember(TARGET.Owner, \"%s\") && TARGET.JobUniverse == 5 || TARGET.Owner == \"admin\"",
                        allowlists[h->allowlist]);
                break;
        default:
                abort();
        }
}

static void write_rank(Out *o, const Host *h) {
        out_name(o, "Rank");
        switch (h->rank) {
        case RANK_DEPARTMENT:
                fputs("TARGET.Department == Department", o->f);
                break;
        case RANK_OWNER:
                fputs("(TARGET.Owner == \"alice\") * 10", o->f);
                break;
        case RANK_ARITH:
                fputs("TARGET.RequestCpus * 100 - TARGET.ImageSize / 100000.0", o->f);
                break;
        case RANK_MIXED:
                fputs("(TARGET.Department == Department) * 100 + (TARGET.Owner == \"admin\") * 1000", o->f);
                break;
        default:
                abort();
        }
}

static void write_slot(FILE *f, Rng *r, const Host *h, int slot) {
        static const char *const states[] = { "Unclaimed", "Claimed", "Owner" };
        static const unsigned cluster_state_weights[] = { 50, 45, 5 };
        static const unsigned desktop_state_weights[] = { 45, 20, 35 };
        char buf[128];
        Out o = { .f = f };
        const char *state;
        double load, condor_load;
        int cpus = h->total_cpus / h->total_slots;

        state = states[rng_weighted(r, h->desktop ? desktop_state_weights : cluster_state_weights, 3)];
        if (strcmp(state, "Claimed") == 0) {
                condor_load = 0.6 + 0.4 * rng_unit(r);
                load = condor_load + h->owner_load / h->total_slots;
        } else {
                condor_load = 0.0;
                load = h->owner_load / h->total_slots;
        }

        out_begin(&o);
        snprintf(buf, sizeof buf, "slot%d@%s", slot, h->name);
        out_str(&o, "Name", buf);
        out_str(&o, "Machine", h->name);
        out_str(&o, "MyType", "Machine");
        out_str(&o, "Arch", h->aarch64 ? "aarch64" : "X86_64");
        out_str(&o, "OpSys", "LINUX");
        out_str(&o, "OpSysAndVer", h->os->and_ver);
        out_int(&o, "OpSysMajorVer", h->os->major);
        out_str(&o, "FileSystemDomain", h->fs_domain);
        out_int(&o, "SlotID", slot);
        out_int(&o, "Cpus", cpus);
        out_int(&o, "Memory", h->total_memory / h->total_slots);
        out_int(&o, "Disk", h->total_disk / h->total_slots);
        out_int(&o, "TotalCpus", h->total_cpus);
        out_int(&o, "TotalMemory", h->total_memory);
        out_int(&o, "TotalSlots", h->total_slots);
        out_real(&o, "LoadAvg", load);
        out_real(&o, "CondorLoadAvg", condor_load);
        out_int(&o, "KeyboardIdle", h->keyboard_idle);
        out_int(&o, "ConsoleIdle", h->console_idle);
        out_str(&o, "State", state);
        out_str(&o, "Activity", strcmp(state, "Claimed") == 0 ? "Busy" : "Idle");
        out_bool(&o, "HasFileTransfer", h->has_file_transfer);
        out_bool(&o, "HasDocker", h->has_docker);
        if (h->cuda >= 0) {
                out_real(&o, "CUDACapability", cuda_capabilities[h->cuda]);
                out_str(&o, "CUDADeviceName", cuda_devices[h->cuda]);
                out_int(&o, "CUDADeviceCount", 1 + (int64_t) rng_below(r, 4));
        }
        out_int(&o, "Mips", h->mips);
        out_int(&o, "KFlops", h->kflops);
        out_bool(&o, "IsDesktop", h->desktop);
        out_str(&o, "Department", h->department);
        write_start(&o, h);
        out_expr(&o, "Requirements", "START");
        write_rank(&o, h);
        out_end(&o);
}

static int write_machines(FILE *f, uint64_t n) {
        Rng r = { GEN_SEED };
        Host h;
        uint64_t written = 0;

        for (uint64_t host = 1; written < n; host++) {
                host_draw(&h, &r, host);
                for (int slot = 1; slot <= h.total_slots && written < n; slot++, written++)
                        write_slot(f, &r, &h, slot);
        }
        return 0;
}

/* ---- the job ad ---- */

/* 17 attribute references:
 *   TARGET.Arch, TARGET.OpSys, TARGET.OpSysMajorVer, TARGET.Memory,
 *   RequestMemory, TARGET.Cpus, RequestCpus, TARGET.Disk, RequestDisk,
 *   TARGET.HasFileTransfer, TARGET.FileSystemDomain, MY.FileSystemDomain,
 *   TARGET.KFlops, TARGET.Mips, TARGET.IsDesktop, TARGET.Department,
 *   MY.Department */
#define JOB_REQUIREMENTS                                                                          \
        "TARGET.Arch == \"X86_64\" && TARGET.OpSys == \"LINUX\" && TARGET.OpSysMajorVer >= 8 && " \
        "TARGET.Memory >= RequestMemory && TARGET.Cpus >= RequestCpus && "                        \
        "TARGET.Disk >= RequestDisk && "                                                          \
        "(TARGET.HasFileTransfer || TARGET.FileSystemDomain == MY.FileSystemDomain) && "          \
        "TARGET.KFlops > 100000 && TARGET.Mips >= 10000 && "                                      \
        "(TARGET.IsDesktop == false || TARGET.Department == MY.Department)"

static int write_job(FILE *f) {
        Out o = { .f = f };

        out_begin(&o);
        out_str(&o, "MyType", "Job");
        out_str(&o, "TargetType", "Machine");
        out_str(&o, "Owner", "alice");
        out_str(&o, "User", "alice@example.org");
        out_int(&o, "ClusterId", 4711);
        out_int(&o, "ProcId", 0);
        out_str(&o, "Cmd", "/home/alice/sim/run.sh");
        out_str(&o, "Args", "--steps 1000 --seed 42");
        out_str(&o, "Iwd", "/home/alice/sim");
        out_int(&o, "JobUniverse", 5);
        out_int(&o, "JobStatus", 1);
        out_int(&o, "JobPrio", 0);
        out_int(&o, "QDate", GEN_EPOCH - 3600);
        out_int(&o, "RequestCpus", 2);
        out_int(&o, "RequestMemory", 4096);
        out_int(&o, "RequestDisk", 20 * 1024 * 1024);
        out_int(&o, "ImageSize", 350000);
        out_int(&o, "DiskUsage", 2500000);
        out_str(&o, "Department", "physics");
        out_bool(&o, "NiceUser", false);
        out_str(&o, "FileSystemDomain", "example.org");
        out_str(&o, "ShouldTransferFiles", "YES");
        out_bool(&o, "WantDocker", false);
        out_expr(&o, "Requirements", JOB_REQUIREMENTS);
        out_expr(&o, "Rank", "TARGET.Mips + TARGET.KFlops / 1000.0");
        out_end(&o);
        return 0;
}

/* ---- main ---- */

static int parse_count(const char *s, uint64_t *ret) {
        unsigned long long v;
        char *end;

        if (!s || *s < '0' || *s > '9')
                return -EINVAL;
        errno = 0;
        v = strtoull(s, &end, 10);
        if (errno != 0)
                return -errno;
        if (*end != '\0' || v > GEN_MAX_MACHINES)
                return -ERANGE;
        *ret = v;
        return 0;
}

static void usage(FILE *f) {
        fputs("Usage: classad-gen machines N   (N machine ads, one per line)\n"
              "       classad-gen job          (one job ad)\n", f);
}

int main(int argc, char **argv) {
        uint64_t n = 0;
        int r;

        if (argc == 3 && strcmp(argv[1], "machines") == 0) {
                r = parse_count(argv[2], &n);
                if (r < 0) {
                        fprintf(stderr, "classad-gen: invalid machine count '%s': %s\n", argv[2], strerror(-r));
                        return 1;
                }
                r = write_machines(stdout, n);
        } else if (argc == 2 && strcmp(argv[1], "job") == 0)
                r = write_job(stdout);
        else if (argc == 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
                usage(stdout);
                return 0;
        } else {
                usage(stderr);
                return 1;
        }
        if (r < 0)
                return 1;

        if (fflush(stdout) != 0 || ferror(stdout)) {
                fprintf(stderr, "classad-gen: failed to write output: %s\n", strerror(errno));
                return 1;
        }
        return 0;
}
