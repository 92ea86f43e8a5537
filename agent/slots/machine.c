/* SPDX-License-Identifier: Apache-2.0 */
/*
 * machine.c — what the machine has: the configuration overrides of the
 * detected values (COUNT_HYPERTHREAD_CPUS, NUM_CPUS, MEMORY, RESERVED_MEMORY,
 * DISK, RESERVED_DISK, RESERVED_SWAP, custom resources of
 * MACHINE_RESOURCE_NAMES / MACHINE_RESOURCE_<name>, seed 002 3.5.10.1),
 * resource arithmetic, and the shell that detects CPUs, memory, disk, swap,
 * the architecture and the host name.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/statvfs.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "cgroup.h"
#include "slots-internal.h"

/* ---- shared helpers ---- */

int agent_slots_error(ConfigError *err, const Config *cfg, const char *knob, int r, const char *fmt, ...) {
        const char *file = NULL;
        int line = 0;
        va_list ap;

        if (!err)
                return r;
        *err = (ConfigError){};
        if (cfg && knob && config_where(cfg, knob, &file, &line) >= 0 && file && file[0] != '<') {
                snprintf(err->file, sizeof(err->file), "%s", file);
                err->line = line;
        }
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
        va_end(ap);
        return r;
}

typedef struct Lookup {
        const Config *cfg;
        char cpus[32];
        char cores[32];
        char physical[32];
        char memory[32];
} Lookup;

static const char *lookup_raw(void *userdata, const char *name) {
        const Lookup *l = userdata;

        if (l->cpus[0] && strcasecmp(name, "DETECTED_CPUS") == 0)
                return l->cpus;
        if (l->cores[0] && strcasecmp(name, "DETECTED_CORES") == 0)
                return l->cores;
        if (l->physical[0] && strcasecmp(name, "DETECTED_PHYSICAL_CPUS") == 0)
                return l->physical;
        if (l->memory[0] && strcasecmp(name, "DETECTED_MEMORY") == 0)
                return l->memory;
        return config_raw(l->cfg, name);
}

static char *strip(char *s) {
        char *end;

        while (isspace((unsigned char) *s))
                s++;
        end = s + strlen(s);
        while (end > s && isspace((unsigned char) end[-1]))
                *--end = '\0';
        return s;
}

int agent_knob_text(const Config *cfg, const char *knob, const AgentMachine *m, char **ret, ConfigError *err) {
        Lookup l = { .cfg = cfg };
        const char *raw = config_raw(cfg, knob);
        char *v = NULL, *s;
        int r;

        if (!raw)
                return -ENOENT;
        if (m) {
                snprintf(l.cpus, sizeof(l.cpus), "%lld", (long long) m->detected.cpus);
                snprintf(l.cores, sizeof(l.cores), "%lld", (long long) m->detected_cores);
                snprintf(l.physical, sizeof(l.physical), "%lld", (long long) m->detected_physical_cpus);
                snprintf(l.memory, sizeof(l.memory), "%lld", (long long) m->detected.memory);
        }
        r = config_expand_with(raw, lookup_raw, &l, &v, err);
        if (r < 0)
                return r;
        s = strip(v);
        if (!s[0]) {
                free(v);
                return -ENOENT;
        }
        memmove(v, s, strlen(s) + 1);
        *ret = v;
        return 0;
}

int agent_knob_number(const Config *cfg, const char *knob, const AgentMachine *m, double *ret, ConfigError *err) {
        _cleanup_free_ char *text = NULL;
        ClassAdExpr *e = NULL;
        CaValue v = ca_undefined();
        CaError cerr = {};
        double d;
        char *end;
        int r;

        r = agent_knob_text(cfg, knob, m, &text, err);
        if (r < 0)
                return r;
        errno = 0;
        d = strtod(text, &end);
        if (end != text && !*end && errno == 0 && isfinite(d)) {
                *ret = d;
                return 0;
        }
        if (classad_expr_parse(text, strlen(text), CA_MODE_OLD, &e, &cerr) >= 0 &&
            classad_expr_eval(e, NULL, NULL, CA_MODE_OLD, &v) >= 0) {
                bool ok = (v.type == CA_INT) || (v.type == CA_REAL && isfinite(v.u.r));

                d = v.type == CA_INT ? (double) v.u.i : v.u.r;
                ca_value_clear(&v);
                classad_expr_free(e);
                if (ok) {
                        *ret = d;
                        return 0;
                }
        } else
                classad_expr_free(e);
        return agent_slots_error(err, cfg, knob, -EINVAL, "%s = '%.200s' is not a number", knob, text);
}

int agent_parse_amount(const char *text, size_t len, bool allow_units, double base, double *ret) {
        static const struct { const char *name; double bytes; } units[] = {
                { "K", 1024.0 }, { "KB", 1024.0 }, { "M", 1048576.0 }, { "MB", 1048576.0 },
                { "G", 1073741824.0 }, { "GB", 1073741824.0 }, { "T", 1099511627776.0 }, { "TB", 1099511627776.0 },
        };
        char buf[64], *end;
        size_t digits = 0, i = 0;
        double d;

        while (len > 0 && isspace((unsigned char) text[len - 1]))
                len--;
        while (len > 0 && isspace((unsigned char) *text)) {
                text++;
                len--;
        }
        if (len == 0 || len >= sizeof(buf))
                return -EINVAL;
        memcpy(buf, text, len);
        buf[len] = '\0';
        /* [+]digits[.digits] — no signs, exponents, hex or inf */
        if (buf[i] == '+')
                i++;
        for (; isdigit((unsigned char) buf[i]); i++)
                digits++;
        if (buf[i] == '.')
                for (i++; isdigit((unsigned char) buf[i]); i++)
                        digits++;
        if (digits == 0)
                return -EINVAL;
        d = strtod(buf, &end);
        if (end != buf + i || !isfinite(d))
                return -EINVAL;
        while (isspace((unsigned char) buf[i]))
                i++;
        if (buf[i]) {
                bool found = false;

                if (!allow_units)
                        return -EINVAL;
                for (size_t u = 0; u < sizeof(units) / sizeof(units[0]); u++)
                        if (strcasecmp(buf + i, units[u].name) == 0) {
                                d = d * units[u].bytes / base;
                                found = true;
                                break;
                        }
                if (!found)
                        return -EINVAL;
        }
        *ret = d;
        return 0;
}

/* ---- resource arithmetic ---- */

void agent_res_add(AgentRes *a, const AgentRes *b, size_t n_custom) {
        a->cpus += b->cpus;
        a->memory += b->memory;
        a->disk += b->disk;
        a->swap += b->swap;
        for (size_t i = 0; i < n_custom && i < AGENT_MAX_CUSTOM; i++)
                a->custom[i] += b->custom[i];
}

void agent_res_sub(AgentRes *a, const AgentRes *b, size_t n_custom) {
        a->cpus -= b->cpus;
        a->memory -= b->memory;
        a->disk -= b->disk;
        a->swap -= b->swap;
        for (size_t i = 0; i < n_custom && i < AGENT_MAX_CUSTOM; i++)
                a->custom[i] -= b->custom[i];
}

bool agent_res_fits(const AgentRes *want, const AgentRes *avail, size_t n_custom) {
        if (want->cpus > avail->cpus || want->memory > avail->memory || want->disk > avail->disk ||
            want->swap > avail->swap)
                return false;
        for (size_t i = 0; i < n_custom && i < AGENT_MAX_CUSTOM; i++)
                if (want->custom[i] > avail->custom[i] + 1e-9)
                        return false;
        return true;
}

/* ---- the machine from detected values and the configuration ---- */

const char *agent_arch_name(const char *m) {
        if (!m || !m[0])
                return "Unknown";
        if (strcasecmp(m, "x86_64") == 0 || strcasecmp(m, "amd64") == 0)
                return "X86_64";
        if (strlen(m) == 4 && m[0] == 'i' && m[1] >= '3' && m[1] <= '6' && strcmp(m + 2, "86") == 0)
                return "INTEL";
        if (strcasecmp(m, "INTEL") == 0)
                return "INTEL";
        if (strcasecmp(m, "ia64") == 0)
                return "IA64";
        if (strcasecmp(m, "ppc") == 0)
                return "PPC";
        if (strcasecmp(m, "ppc64") == 0)
                return "PPC64";
        return m;
}

static bool is_reserved_resource(const char *name) {
        static const char *const reserved[] = { "cpus", "cpu", "cores", "memory", "mem", "ram", "disk", "swap",
                                                "virtualmemory", "names" };

        for (size_t i = 0; i < sizeof(reserved) / sizeof(reserved[0]); i++)
                if (strcasecmp(name, reserved[i]) == 0)
                        return true;
        return false;
}

static bool valid_resource_name(const char *name) {
        if (!name[0] || strlen(name) >= 64 || !isalpha((unsigned char) name[0]))
                return false;
        for (const char *p = name; *p; p++)
                if (!isalnum((unsigned char) *p) && *p != '_')
                        return false;
        return true;
}

/* The quantity of MACHINE_RESOURCE_<name>: a number, or a list of ids. */
static int custom_quantity(const Config *cfg, const char *knob, double *ret, ConfigError *err) {
        _cleanup_free_ char *text = NULL;
        ConfigError ignored = {};
        double d;
        size_t n = 0;
        int r;

        r = agent_knob_number(cfg, knob, NULL, &d, &ignored);
        if (r >= 0) {
                if (d < 0)
                        return agent_slots_error(err, cfg, knob, -EINVAL, "%s = %g is negative", knob, d);
                *ret = d;
                return 0;
        }
        if (r != -EINVAL) {
                if (err && r != -ENOENT)
                        *err = ignored;
                return r;
        }
        r = agent_knob_text(cfg, knob, NULL, &text, err);
        if (r < 0)
                return r;
        for (char *p = text; *p;) {
                while (*p && (*p == ',' || isspace((unsigned char) *p)))
                        p++;
                if (!*p)
                        break;
                n++;
                while (*p && *p != ',' && !isspace((unsigned char) *p))
                        p++;
        }
        *ret = (double) n;
        return 0;
}

static int add_custom(const Config *cfg, AgentMachine *m, const char *name, bool listed, ConfigError *err) {
        char knob[128];
        double q = 0;
        int r;

        for (size_t i = 0; i < m->n_custom; i++)
                if (strcasecmp(m->custom_name[i], name) == 0)
                        return 0;
        if (!valid_resource_name(name) || is_reserved_resource(name))
                return agent_slots_error(err, cfg, listed ? "MACHINE_RESOURCE_NAMES" : NULL, -EINVAL,
                                         "'%.64s' cannot name a machine resource (letters, digits and '_'; "
                                         "not one of cpus, memory, disk, swap)", name);
        snprintf(knob, sizeof(knob), "MACHINE_RESOURCE_%s", name);
        r = custom_quantity(cfg, knob, &q, err);
        if (r == -ENOENT && listed)
                return agent_slots_error(err, cfg, "MACHINE_RESOURCE_NAMES", -EINVAL,
                                         "MACHINE_RESOURCE_NAMES lists %s, but %s is not defined", name, knob);
        if (r == -ENOENT)
                return 0;
        if (r < 0)
                return r;
        if (m->n_custom >= AGENT_MAX_CUSTOM)
                return agent_slots_error(err, cfg, knob, -EINVAL, "more than %d machine resources (at %s)",
                                         AGENT_MAX_CUSTOM, name);
        snprintf(m->custom_name[m->n_custom], sizeof(m->custom_name[0]), "%s", name);
        m->custom_name[m->n_custom][0] = (char) toupper((unsigned char) name[0]);
        m->total.custom[m->n_custom] = q;
        m->detected.custom[m->n_custom] = q;
        m->n_custom++;
        return 0;
}

static int configure_custom(const Config *cfg, AgentMachine *m, ConfigError *err) {
        _agent_cleanup_strv_ char **listed = NULL;
        _agent_cleanup_strv_ char **names = NULL;
        static const char prefix[] = "MACHINE_RESOURCE_";
        int r;

        r = config_get_list(cfg, "MACHINE_RESOURCE_NAMES", &listed, err);
        if (r < 0 && r != -ENOENT)
                return r;
        for (char **n = listed; n && *n; n++) {
                r = add_custom(cfg, m, *n, true, err);
                if (r < 0)
                        return r;
        }
        /* As HTCondor: a MACHINE_RESOURCE_<name> defines a resource without
         * being listed. */
        r = config_names(cfg, &names);
        if (r < 0)
                return agent_slots_error(err, NULL, NULL, r, "out of memory");
        for (char **n = names; *n; n++) {
                const char *rest = *n + sizeof(prefix) - 1;

                if (strncasecmp(*n, prefix, sizeof(prefix) - 1) != 0 || strcasecmp(rest, "NAMES") == 0 ||
                    strncasecmp(rest, "INVENTORY_", 10) == 0)
                        continue;
                r = add_custom(cfg, m, rest, false, err);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* An integer knob >= min, or def when undefined. */
static int knob_int(const Config *cfg, const char *knob, const AgentMachine *m, int64_t def, int64_t min,
                    const char *unit, int64_t *ret, ConfigError *err) {
        double d;
        int r;

        r = agent_knob_number(cfg, knob, m, &d, err);
        if (r == -ENOENT) {
                *ret = def;
                return 0;
        }
        if (r < 0)
                return r;
        if (d < (double) min || d > 9.0e15)
                return agent_slots_error(err, cfg, knob, -EINVAL, "%s = %g is out of range (at least %lld %s)",
                                         knob, d, (long long) min, unit);
        *ret = (int64_t) d;
        return 0;
}

/* ---- the machine ---- */

/* DETECTED_CPUS as COUNT_HYPERTHREAD_CPUS says. */
static int configure_cpus(const Config *cfg, AgentMachine *m, int64_t logical, int64_t physical, ConfigError *err) {
        bool hyper = true;
        int r;

        m->detected_cores = logical;
        m->detected_physical_cpus = physical > 0 && physical <= logical ? physical : logical;
        r = config_get_bool(cfg, "COUNT_HYPERTHREAD_CPUS", &hyper, err);
        if (r < 0 && r != -ENOENT)
                return r;
        m->detected.cpus = r == -ENOENT || hyper ? m->detected_cores : m->detected_physical_cpus;
        r = knob_int(cfg, "NUM_CPUS", m, m->detected.cpus, 1, "CPU", &m->total.cpus, err);
        if (r < 0)
                return r;
        if (m->total.cpus < 1)
                return agent_slots_error(err, cfg, "NUM_CPUS", -EINVAL, "the machine has no CPU (detected %lld)",
                                         (long long) m->detected.cpus);
        return 0;
}

/* MEMORY (default DETECTED_MEMORY) less RESERVED_MEMORY, as HTCondor's
 * sysapi_phys_memory(): what the slots divide. */
static int configure_memory(const Config *cfg, AgentMachine *m, ConfigError *err) {
        int64_t memory, reserved = 0;
        int r;

        r = knob_int(cfg, "MEMORY", m, m->detected.memory, 1, "MB", &memory, err);
        if (r < 0)
                return r;
        if (memory < 1)
                return agent_slots_error(err, cfg, "MEMORY", -EINVAL, "the machine has no memory (detected %lld MB)",
                                         (long long) m->detected.memory);
        r = knob_int(cfg, "RESERVED_MEMORY", m, 0, 0, "MB", &reserved, err);
        if (r < 0)
                return r;
        if (reserved >= memory)
                return agent_slots_error(err, cfg, "RESERVED_MEMORY", -EINVAL,
                                         "RESERVED_MEMORY = %lld leaves no memory: the machine has %lld MB",
                                         (long long) reserved, (long long) memory);
        m->total.memory = memory - reserved;
        return 0;
}

int agent_machine_configure_cpus(const Config *cfg, const AgentRes *detected, int64_t physical_cpus,
                                 const char *arch, const char *hostname, AgentMachine *ret, ConfigError *err) {
        AgentMachine m = {};
        int64_t reserved = 0;
        int r;

        if (!cfg || !detected || !ret)
                return -EINVAL;
        m.detected = *detected;
        memset(m.detected.custom, 0, sizeof(m.detected.custom));
        snprintf(m.arch, sizeof(m.arch), "%s", agent_arch_name(arch));
        snprintf(m.opsys, sizeof(m.opsys), "LINUX");
        snprintf(m.hostname, sizeof(m.hostname), "%s", hostname && hostname[0] ? hostname : "localhost");

        r = configure_cpus(cfg, &m, detected->cpus, physical_cpus, err);
        if (r < 0)
                return r;
        r = configure_memory(cfg, &m, err);
        if (r < 0)
                return r;

        /* DISK (KB) replaces the detected free disk; RESERVED_DISK (MB) is
         * kept free for the file system, RESERVED_SWAP (MB) likewise. */
        r = knob_int(cfg, "DISK", &m, -1, 0, "KB", &m.total.disk, err);
        if (r < 0)
                return r;
        if (m.total.disk < 0) {
                r = knob_int(cfg, "RESERVED_DISK", &m, 0, 0, "MB", &reserved, err);
                if (r < 0)
                        return r;
                m.total.disk = detected->disk - reserved * 1024;
                if (m.total.disk < 0)
                        m.total.disk = 0;
        }
        r = knob_int(cfg, "RESERVED_SWAP", &m, 0, 0, "MB", &reserved, err);
        if (r < 0)
                return r;
        m.total.swap = detected->swap - reserved * 1024;
        if (m.total.swap < 0)
                m.total.swap = 0;

        r = configure_custom(cfg, &m, err);
        if (r >= 0)
                r = agent_machine_names(cfg, &m, err);
        if (r < 0)
                return r;
        *ret = m;
        return 0;
}

int agent_machine_configure(const Config *cfg, const AgentRes *detected, const char *arch, const char *hostname,
                            AgentMachine *ret, ConfigError *err) {
        return agent_machine_configure_cpus(cfg, detected, 0, arch, hostname, ret, err);
}

int agent_machine_define_detected(Config *cfg, const AgentMachine *m) {
        const struct { const char *name; int64_t value; } detected[] = {
                { "DETECTED_CPUS", m->detected.cpus },
                { "DETECTED_CORES", m->detected_cores },
                { "DETECTED_PHYSICAL_CPUS", m->detected_physical_cpus },
                { "DETECTED_MEMORY", m->detected.memory },
        };

        for (size_t i = 0; i < sizeof(detected) / sizeof(detected[0]); i++) {
                char buf[32];
                int r;

                snprintf(buf, sizeof(buf), "%lld", (long long) detected[i].value);
                r = config_set(cfg, detected[i].name, buf);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* ---- the shell: detection ---- */

static int64_t detect_cpus(void) {
        for (size_t ncpu = 1024; ncpu <= 1024 * 1024; ncpu *= 2) {
                cpu_set_t *set = CPU_ALLOC(ncpu);
                size_t size = CPU_ALLOC_SIZE(ncpu);
                int n;

                if (!set)
                        break;
                CPU_ZERO_S(size, set);
                if (sched_getaffinity(0, size, set) == 0) {
                        n = CPU_COUNT_S(size, set);
                        CPU_FREE(set);
                        if (n > 0)
                                return n;
                        break;
                }
                CPU_FREE(set);
                if (errno != EINVAL)
                        break;
        }
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        return n > 0 ? n : 1;
}

/* "Name: N kB" of /proc/meminfo, in KB; -1 when absent. */
static int64_t meminfo_kb(const char *name) {
        FILE *f = fopen("/proc/meminfo", "re");
        char line[256];
        size_t len = strlen(name);
        int64_t kb = -1;

        if (!f)
                return -1;
        while (fgets(line, sizeof(line), f))
                if (strncmp(line, name, len) == 0 && line[len] == ':') {
                        kb = strtoll(line + len + 1, NULL, 10);
                        break;
                }
        fclose(f);
        return kb;
}

/* Free KB for unprivileged users on the file system of dir or its nearest
 * existing parent. */
static int64_t detect_disk(const char *dir) {
        char path[4096];
        struct statvfs st;

        snprintf(path, sizeof(path), "%s", dir && dir[0] == '/' ? dir : "/");
        for (;;) {
                if (statvfs(path, &st) == 0)
                        return (int64_t) ((unsigned long long) st.f_bavail * st.f_frsize / 1024);
                char *slash = strrchr(path, '/');
                if (!slash)
                        return 0;
                if (slash == path) {
                        if (path[1] == '\0')
                                return 0;
                        path[1] = '\0';
                } else
                        *slash = '\0';
        }
}

int agent_machine_detect(const Config *cfg, AgentMachine *ret, ConfigError *err) {
        _cleanup_free_ char *execute = NULL;
        _cleanup_free_ char *host = NULL;
        char hostbuf[256] = "";
        AgentRes d = {};
        AgentCpus allowed;
        struct utsname u;
        int64_t kb, cg, physical = 0;
        int r;

        d.cpus = detect_cpus();
        if (agent_cpus_allowed(&allowed) < 0 || agent_cpus_count(&allowed) != (unsigned) d.cpus ||
            agent_cpus_physical("/sys", &allowed, &physical) < 0)
                physical = 0; /* unknown: as many as d.cpus */
        kb = meminfo_kb("MemTotal");
        d.memory = kb > 0 ? kb / 1024 : 0;
        /* A cgroup's memory.max (the agent's or above it) below MemTotal. */
        if (cg_own_memory_max(&cg) >= 0 && (d.memory <= 0 || cg / (1024 * 1024) < d.memory))
                d.memory = cg / (1024 * 1024);
        kb = meminfo_kb("SwapTotal");
        d.swap = kb > 0 ? kb : 0;
        r = config_get(cfg, "EXECUTE", &execute, err);
        if (r < 0 && r != -ENOENT)
                return r;
        d.disk = detect_disk(execute && execute[0] ? strip(execute) : "/var/lib/glean/execute");

        if (uname(&u) < 0)
                snprintf(u.machine, sizeof(u.machine), "unknown");
        r = config_get(cfg, "FULL_HOSTNAME", &host, err);
        if (r < 0 && r != -ENOENT)
                return r;
        if (!host || !host[0]) {
                if (gethostname(hostbuf, sizeof(hostbuf) - 1) < 0)
                        snprintf(hostbuf, sizeof(hostbuf), "localhost");
                hostbuf[sizeof(hostbuf) - 1] = '\0';
        }
        return agent_machine_configure_cpus(cfg, &d, physical, u.machine, host && host[0] ? strip(host) : hostbuf,
                                            ret, err);
}
