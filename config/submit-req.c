/* SPDX-License-Identifier: Apache-2.0 */
/*
 * submit-req.c — what a job requests of a slot: RequestCpus,
 * RequestMemory (MB), RequestDisk (KB), Request<Name> for the machine
 * resources of request_<name>, their defaults JOB_DEFAULT_REQUEST* from
 * the configuration (seed 002, 3.5.10.7), and the Requirements
 * condor_submit builds from them (SubmitHash::SetRequirements):
 *
 *   (user requirements) && (TARGET.Arch == "X86_64") && (TARGET.OpSys == "LINUX")
 *     && (TARGET.Disk >= RequestDisk) && (TARGET.Memory >= RequestMemory)
 *     && (TARGET.Cpus >= RequestCpus) && (TARGET.Gpu >= RequestGpu)
 *
 * Arch, OpSys, Disk and Cpus are left out when the user's requirements
 * already look at them; the memory clause is left out when RequestMemory
 * is a literal number of at most 1, the cpus clause likewise, the disk
 * clause when RequestDisk is a literal number of at most 0, a resource's
 * clause when its request is a number of at most 0. A request written as a
 * string matches with regexp(Request<Name>, TARGET.<Name>).
 *
 * Last, where the job's files can be, by ShouldTransferFiles:
 *
 *   YES        && (TARGET.HasFileTransfer)
 *   NO         && (TARGET.FileSystemDomain == MY.FileSystemDomain)
 *   IF_NEEDED  && ((TARGET.FileSystemDomain == MY.FileSystemDomain) || (TARGET.HasFileTransfer))
 *
 * the HasFileTransfer part left out when the user's requirements look at
 * HasFileTransfer (or HasJobTransferPlugins), the FileSystemDomain part
 * when they look at FileSystemDomain. (condor_submit adds, for
 * preserve_relative_paths, a test of the slot's CondorVersion, which glean's
 * slot ads do not carry: left out.)
 */
#define _GNU_SOURCE

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "submit-internal.h"

static const char *const K_CPUS[] = { "request_cpus", "RequestCpus", NULL };
static const char *const K_MEMORY[] = { "request_memory", "RequestMemory", NULL };
static const char *const K_DISK[] = { "request_disk", "RequestDisk", NULL };

/* ---- custom resources ---- */

bool submit_custom_resource(const char *var_name, char *ret_name, size_t size) {
        static const char *const builtin[] = { "cpus", "memory", "disk", "cpu" };
        const char *rname;
        size_t n;

        if (strncasecmp(var_name, "request_", 8) != 0)
                return false;
        rname = var_name + 8;
        n = strlen(rname);
        if (n == 0 || n + 1 > size)
                return false;
        for (size_t i = 0; i < sizeof(builtin) / sizeof(builtin[0]); i++)
                if (strcasecmp(rname, builtin[i]) == 0)
                        return false;
        memcpy(ret_name, rname, n + 1);
        ret_name[0] = (char) toupper((unsigned char) ret_name[0]);
        return true;
}


/* ---- requests ---- */

/* A default from the configuration as an expression ("undefined": none). */
static int set_default(Submit *s, ClassAd *ad, const char *attr, const char *knob) {
        _cleanup_config_free_ char *v = NULL;
        ConfigError cerr = {};
        CaError caerr = {};
        int r;

        r = config_get(s->cfg, knob, &v, &cerr);
        if (r == -ENOENT)
                return 0;
        if (r < 0) {
                if (s->err)
                        *s->err = cerr;
                return r;
        }
        if (strcasecmp(v, "undefined") == 0)
                return 0;
        r = classad_set_expr_text(ad, attr, v, CA_MODE_OLD, &caerr);
        if (r == -ENOMEM)
                return r;
        if (r < 0) {
                const char *file = "";
                int line = 0;

                (void) config_where(s->cfg, knob, &file, &line);
                return config_error(s->err, file, line, -EINVAL, "%s: cannot parse '%s': %s", knob, v, caerr.msg);
        }
        return 0;
}

/* request_memory / request_disk: a size (unit `base` bytes when none is
 * written), "undefined", or an expression. */
static int set_size_request(Submit *s, ClassAd *ad, const char *const *names, const char *attr, int64_t base,
                            const char *knob) {
        _cleanup_config_free_ char *v = NULL;
        int64_t size;
        int line, r;

        r = submit_lookup(s, names, &v, &line);
        if (r < 0)
                return r;
        if (!v)
                return set_default(s, ad, attr, knob);
        if (strcasecmp(v, "undefined") == 0)
                return 0;
        r = submit_parse_size(v, base, &size);
        if (r == -EINVAL)
                return config_error(s->err, s->file, line, r, "%s: negative size '%s'", names[0], v);
        if (r == -ERANGE)
                return config_error(s->err, s->file, line, r, "%s: size '%s' is too large", names[0], v);
        if (r > 0)
                return classad_set_int(ad, attr, size);
        return submit_set_expr(s, ad, attr, v, line, names[0]);
}

int submit_set_requests(Submit *s, ClassAd *ad) {
        _cleanup_config_free_ char *cpus = NULL;
        int line, r;

        r = submit_lookup(s, K_CPUS, &cpus, &line);
        if (r < 0)
                return r;
        if (!cpus)
                r = set_default(s, ad, "RequestCpus", "JOB_DEFAULT_REQUESTCPUS");
        else if (strcasecmp(cpus, "undefined") != 0)
                r = submit_set_expr(s, ad, "RequestCpus", cpus, line, K_CPUS[0]);
        if (r < 0)
                return r;
        r = set_size_request(s, ad, K_MEMORY, "RequestMemory", INT64_C(1) << 20, "JOB_DEFAULT_REQUESTMEMORY");
        if (r < 0)
                return r;
        r = set_size_request(s, ad, K_DISK, "RequestDisk", INT64_C(1) << 10, "JOB_DEFAULT_REQUESTDISK");
        if (r < 0)
                return r;

        for (size_t i = 0; i < s->vars->n_entries; i++) {
                const ConfigEntry *e = &s->vars->entries[i];
                const char *names[] = { e->name, NULL };
                _cleanup_config_free_ char *v = NULL;
                char rname[CONFIG_MAX_NAME + 1], attr[CONFIG_MAX_NAME + 16];

                if (!submit_custom_resource(e->name, rname, sizeof(rname)))
                        continue;
                if (!submit_is_attr_name(rname))
                        return config_error(s->err, s->file, e->line, -EINVAL,
                                            "%s: '%s' is not a resource name (letters, digits and _)", e->name, rname);
                r = submit_lookup(s, names, &v, &line);
                if (r < 0)
                        return r;
                if (!v)
                        continue;
                snprintf(attr, sizeof(attr), "Request%s", rname);
                r = submit_set_expr(s, ad, attr, v, line, e->name);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* ---- what the user's requirements refer to ---- */

typedef struct Refs {
        bool arch, opsys, disk, cpus, fsdomain, file_transfer;
} Refs;

static void note_machine_ref(Refs *refs, const char *name, size_t n) {
        static const char *const opsys[] = {
                "OpSys", "OpSysAndVer", "OpSysLongName", "OpSysShortName", "OpSysName", "OpSysLegacy",
        };

#define IS(word) (n == strlen(word) && strncasecmp(name, word, n) == 0)
        if (IS("Arch"))
                refs->arch = true;
        else if (IS("Disk"))
                refs->disk = true;
        else if (IS("Cpus"))
                refs->cpus = true;
        else if (IS("FileSystemDomain"))
                refs->fsdomain = true;
        else if (IS("HasFileTransfer") || IS("HasJobTransferPlugins"))
                refs->file_transfer = true;
        for (size_t i = 0; i < sizeof(opsys) / sizeof(opsys[0]); i++)
                if (IS(opsys[i]))
                        refs->opsys = true;
#undef IS
}

static bool is_ident_start(char c) {
        return isalpha((unsigned char) c) || c == '_';
}

static bool is_ident_char(char c) {
        return isalnum((unsigned char) c) || c == '_';
}

/* The slot attributes the expression refers to: TARGET.Name, or a bare
 * Name that is not one of the job's (condor_submit counts those as the
 * slot's too). Strings, function names and MY. references do not count. */
static Refs scan_refs(const char *p) {
        static const char *const not_refs[] = {
                "true", "false", "undefined", "error", "is", "isnt", "RequestMemory", "CkptArch",
        };
        const char *scope = NULL; /* identifier before the '.' just seen */
        size_t scope_len = 0;
        bool after_dot = false;
        Refs refs = {};

        while (*p) {
                if (*p == '"') {
                        for (p++; *p && *p != '"'; p++)
                                if (*p == '\\' && p[1])
                                        p++;
                        if (*p)
                                p++;
                        after_dot = false;
                } else if (isdigit((unsigned char) *p)) {
                        while (is_ident_char(*p) || *p == '.')
                                p++;
                        after_dot = false;
                } else if (*p == '.') {
                        p++;
                        after_dot = true;
                } else if (is_ident_start(*p) || *p == '\'') {
                        const char *name, *q;
                        size_t n;
                        bool scoped = after_dot, machine;

                        if (*p == '\'') {
                                name = ++p;
                                while (*p && *p != '\'')
                                        p += (*p == '\\' && p[1]) ? 2 : 1;
                                n = (size_t) (p - name);
                                if (*p)
                                        p++;
                        } else {
                                name = p;
                                while (is_ident_char(*p))
                                        p++;
                                n = (size_t) (p - name);
                        }
                        for (q = p; isspace((unsigned char) *q); q++)
                                ;
                        if (*q == '(' || *q == '.') {
                                /* a function name, or the scope of what follows */
                                scope = name;
                                scope_len = n;
                                after_dot = false;
                                continue;
                        }
                        if (scoped)
                                machine = scope && scope_len == 6 && strncasecmp(scope, "TARGET", 6) == 0;
                        else {
                                machine = true;
                                for (size_t i = 0; i < sizeof(not_refs) / sizeof(not_refs[0]); i++)
                                        if (strlen(not_refs[i]) == n && strncasecmp(name, not_refs[i], n) == 0)
                                                machine = false;
                        }
                        if (machine)
                                note_machine_ref(&refs, name, n);
                        scope = NULL;
                        after_dot = false;
                } else {
                        if (!isspace((unsigned char) *p)) {
                                scope = NULL;
                                after_dot = false;
                        }
                        p++;
                }
        }
        return refs;
}

/* ---- Requirements ---- */

/* The attribute's expression is a literal number; its value. */
static bool literal_number(const ClassAd *job, const char *attr, double *ret) {
        _cleanup_config_free_ char *text = classad_unparse_attr(job, attr);
        char *end;

        if (!text || !*text || isspace((unsigned char) *text))
                return false;
        *ret = strtod(text, &end);
        return end != text && *end == '\0';
}

static int build(Submit *s, const ClassAd *job, const char *user_req, FILE *f) {
        Refs refs = user_req ? scan_refs(user_req) : (Refs) {};
        double v;
        bool first = true;

#define CLAUSE(...) do { fputs(first ? "" : " && ", f); fprintf(f, __VA_ARGS__); first = false; } while (0)
        if (user_req)
                CLAUSE("(%s)", user_req);
        if (!refs.arch)
                CLAUSE("(TARGET.Arch == \"%s\")", submit_host_arch());
        if (!refs.opsys)
                CLAUSE("(TARGET.OpSys == \"LINUX\")");
        if (classad_has(job, "RequestDisk")) {
                if (refs.disk || !literal_number(job, "RequestDisk", &v) || v > 0)
                        CLAUSE("(TARGET.Disk >= RequestDisk)");
        } else if (!refs.disk)
                CLAUSE("(TARGET.Disk >= DiskUsage)");
        if (classad_has(job, "RequestMemory") && (!literal_number(job, "RequestMemory", &v) || v > 1))
                CLAUSE("(TARGET.Memory >= RequestMemory)");
        if (!refs.cpus && classad_has(job, "RequestCpus") && (!literal_number(job, "RequestCpus", &v) || v > 1))
                CLAUSE("(TARGET.Cpus >= RequestCpus)");

        for (size_t i = 0; i < s->vars->n_entries; i++) {
                _cleanup_config_free_ char *text = NULL;
                char rname[CONFIG_MAX_NAME + 1], attr[CONFIG_MAX_NAME + 16];

                if (!submit_custom_resource(s->vars->entries[i].name, rname, sizeof(rname)))
                        continue;
                snprintf(attr, sizeof(attr), "Request%s", rname);
                text = classad_unparse_attr(job, attr);
                if (!text)
                        continue;
                if (text[0] == '"')
                        CLAUSE("regexp(%s, TARGET.%s)", attr, rname);
                else if (!literal_number(job, attr, &v) || v > 0)
                        CLAUSE("(TARGET.%s >= %s)", rname, attr);
        }

        /* Where the job's files can be: transferred, or on the same file
         * system (ShouldTransferFiles is always set: submit-xfer.c). */
        _cleanup_config_free_ char *should = NULL;
        if (classad_eval_string(job, "ShouldTransferFiles", CA_MODE_OLD, &should) >= 0) {
                static const char domain_check[] = "(TARGET.FileSystemDomain == MY.FileSystemDomain)";

                if (strcasecmp(should, "NO") == 0) {
                        if (!refs.fsdomain)
                                CLAUSE("%s", domain_check);
                } else if (!refs.file_transfer) {
                        if (strcasecmp(should, "IF_NEEDED") == 0 && !refs.fsdomain)
                                CLAUSE("(%s || (TARGET.HasFileTransfer))", domain_check);
                        else
                                CLAUSE("(TARGET.HasFileTransfer)");
                }
        }
#undef CLAUSE
        return 0;
}

int submit_requirements(Submit *s, const ClassAd *job, const char *user_req, char **ret) {
        char *text = NULL;
        size_t size = 0;
        FILE *f;
        int r;

        f = open_memstream(&text, &size);
        if (!f)
                return -ENOMEM;
        r = build(s, job, user_req, f);
        if (fclose(f) != 0 && r >= 0)
                r = -ENOMEM;
        if (r < 0) {
                free(text);
                return r;
        }
        *ret = text;
        return 0;
}
