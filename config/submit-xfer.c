/* SPDX-License-Identifier: Apache-2.0 */
/*
 * submit-xfer.c — the submit commands of file transfer, with condor_submit's
 * meaning (SubmitHash::SetTransferFiles, SetStdin/SetStdout/SetStderr) and
 * HTCondor's attribute names (docs/transfer.md):
 *
 *   should_transfer_files     ShouldTransferFiles: "YES", "NO", "IF_NEEDED"
 *                             (the default, or SUBMIT_DEFAULT_SHOULD_TRANSFER_FILES;
 *                             a +ShouldTransferFiles of the job when not given)
 *   when_to_transfer_output   WhenToTransferOutput: "ON_EXIT" (the default),
 *                             "ON_EXIT_OR_EVICT"; none when NO
 *   transfer_executable       TransferExecutable = false when false
 *   transfer_input_files      TransferInput, the entries joined by ","; each
 *                             must exist now (relative to Iwd), a file:// URL
 *                             names a local path, other URLs are refused
 *   transfer_output_files     TransferOutput ("" sends nothing back)
 *   transfer_output_remaps    TransferOutputRemaps: "name = path; ..."
 *   preserve_relative_paths   PreserveRelativePaths
 *   max_transfer_input_mb     MaxTransferInputMB (an expression)
 *   max_transfer_output_mb    MaxTransferOutputMB (an expression)
 *   transfer_input, _output,  TransferIn, TransferOut, TransferErr = false
 *   _error                    when false, or when In/Out/Err is /dev/null
 *   stream_input, _output,    StreamIn, StreamOut, StreamErr = false (true is
 *   _error                    refused: glean does not stream)
 *   log_xml                   refused when true (glean writes the text log)
 *
 * and TransferInputSizeMB (executable, input files and In, rounded up to
 * whole MiB), DiskUsage (the same in KiB), and FileSystemDomain (this
 * machine's, config_filesystem_domain()) unless ShouldTransferFiles is YES.
 * The contradictions condor_submit refuses are errors naming the line.
 */
#define _GNU_SOURCE

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "submit-internal.h"

#define NAMES(...) ((const char *const[]) { __VA_ARGS__, NULL })

#define K_SHOULD NAMES("should_transfer_files", "ShouldTransferFiles")
#define K_WHEN NAMES("when_to_transfer_output", "WhenToTransferOutput")
#define K_TRANSFER_EXE NAMES("transfer_executable", "TransferExecutable")
#define K_INPUT_FILES NAMES("transfer_input_files", "TransferInputFiles")
#define K_OUTPUT_FILES NAMES("transfer_output_files", "TransferOutputFiles")
#define K_REMAPS NAMES("transfer_output_remaps", "TransferOutputRemaps")
#define K_PRESERVE NAMES("preserve_relative_paths", "PreserveRelativePaths")
#define K_MAX_INPUT NAMES("max_transfer_input_mb", "MaxTransferInputMB")
#define K_MAX_OUTPUT NAMES("max_transfer_output_mb", "MaxTransferOutputMB")
#define K_LOG_XML NAMES("log_xml", "UserLogUseXML")

#define DIR_MAX_DEPTH 64        /* of a directory whose size is summed */
#define DIR_MAX_ENTRIES 100000  /* entries looked at for one input entry; past it the size counts no more */

typedef enum Should {
        SHOULD_YES,
        SHOULD_NO,
        SHOULD_IF_NEEDED,
} Should;

typedef enum When {
        WHEN_NEVER, /* HTCondor's FTO_NONE: only with NO */
        WHEN_ON_EXIT,
        WHEN_ON_EXIT_OR_EVICT,
        WHEN_ON_SUCCESS,
} When;

static const char *const should_names[] = { "YES", "NO", "IF_NEEDED" };
static const char *const when_names[] = { "NEVER", "ON_EXIT", "ON_EXIT_OR_EVICT", "ON_SUCCESS" };

/* A command's expanded value and its line; v NULL when unset or empty. */
typedef struct Val {
        char *v;
        int line;
} Val;

static void val_done(Val *c) {
        free(c->v);
        c->v = NULL;
}

static int get(Submit *s, const char *const *names, Val *ret) {
        val_done(ret);
        return submit_lookup(s, names, &ret->v, &ret->line);
}

static char *strip_quotes(char *v);

/* The command, else the job's own `+Attr = "value"` (condor_submit reads
 * the ad's ShouldTransferFiles and WhenToTransferOutput when the command is
 * not given), without its quotes. */
static int get_or_attr(Submit *s, const char *const *names, const char *attr, Val *ret) {
        const ConfigEntry *e;
        char *p;
        int r;

        r = get(s, names, ret);
        if (r < 0 || ret->v)
                return r;
        e = config_find(s->attrs, attr);
        if (!e)
                return 0;
        r = submit_expand(s, e->value, e->line, &ret->v);
        if (r < 0)
                return r;
        ret->line = e->line;
        p = strip_quotes(ret->v);
        memmove(ret->v, p, strlen(p) + 1);
        if (!*ret->v)
                val_done(ret);
        return 0;
}

/* condor_submit's trim_and_strip_quotes_in_place: one pair of enclosing
 * double quotes removed, and the blanks around and inside them. */
static char *strip_quotes(char *v) {
        size_t n;

        v = config_strip(v);
        n = strlen(v);
        if (n >= 2 && v[0] == '"' && v[n - 1] == '"') {
                v[n - 1] = '\0';
                v = config_strip(v + 1);
        }
        return v;
}

/* The value of should_transfer_files (HTCondor's names and synonyms). */
static int parse_should(const char *v, Should *ret) {
        static const struct {
                const char *name;
                Should value;
        } table[] = {
                { "YES", SHOULD_YES }, { "TRUE", SHOULD_YES },         { "ALWAYS", SHOULD_YES },
                { "NO", SHOULD_NO },   { "FALSE", SHOULD_NO },         { "NEVER", SHOULD_NO },
                { "IF_NEEDED", SHOULD_IF_NEEDED }, { "AUTO", SHOULD_IF_NEEDED },
        };

        for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++)
                if (strcasecmp(v, table[i].name) == 0) {
                        *ret = table[i].value;
                        return 0;
                }
        return -EINVAL;
}

static int parse_when(const char *v, When *ret) {
        static const struct {
                const char *name;
                When value;
        } table[] = {
                { "ON_EXIT_OR_EVICT", WHEN_ON_EXIT_OR_EVICT }, { "ALWAYS", WHEN_ON_EXIT_OR_EVICT },
                { "ON_EXIT", WHEN_ON_EXIT },                   { "ONEXIT", WHEN_ON_EXIT },
                { "NONE", WHEN_NEVER },                        { "NULL", WHEN_NEVER },
                { "ON_SUCCESS", WHEN_ON_SUCCESS },             { "ONSUCCESS", WHEN_ON_SUCCESS },
        };

        for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++)
                if (strcasecmp(v, table[i].name) == 0) {
                        *ret = table[i].value;
                        return 0;
                }
        return -EINVAL;
}

/* ---- URLs and paths ---- */

/* HTCondor's IsUrl: scheme "://" and something after it; the scheme's
 * length, 0 when text is no URL. */
static size_t url_scheme_len(const char *text) {
        const char *p = text;

        if (!isalpha((unsigned char) *p))
                return 0;
        for (p++; isalnum((unsigned char) *p) || *p == '+' || *p == '-' || *p == '.'; p++)
                ;
        return p[0] == ':' && p[1] == '/' && p[2] == '/' && p[3] ? (size_t) (p - text) : 0;
}

/* An URL glean transfers itself (file://) is fine, any other is refused:
 * the error names the command, the entry and the scheme. *ret_path is the
 * local path of a file:// URL, NULL for no URL. */
static int check_url(Submit *s, const char *what, const char *entry, int line, const char **ret_path) {
        size_t n = url_scheme_len(entry);

        *ret_path = NULL;
        if (n == 0)
                return 0;
        if (n == 4 && strncasecmp(entry, "file", 4) == 0) {
                const char *path = entry + 7;

                if (path[0] != '/')
                        return config_error(s->err, s->file, line, -EINVAL,
                                            "%s: '%s': a file:// URL names an absolute path (file:///path)", what,
                                            entry);
                *ret_path = path;
                return 0;
        }
        return config_error(s->err, s->file, line, -EOPNOTSUPP,
                            "%s: '%s': URL scheme '%.*s' needs a transfer plugin (FILETRANSFER_PLUGINS), which glean "
                            "does not have yet", what, entry, (int) n, entry);
}

/* path made absolute against dir. */
static int join_path(const char *dir, const char *path, char **ret) {
        if (path[0] == '/')
                *ret = strdup(path);
        else if (asprintf(ret, "%s/%s", strcmp(dir, "/") == 0 ? "" : dir, path) < 0)
                *ret = NULL;
        return *ret ? 0 : -ENOMEM;
}

/* The bytes of the regular files under the directory fd (consumed), not
 * following symbolic links, at most DIR_MAX_DEPTH levels down and
 * *budget entries in all (a hostile "transfer_input_files = /" costs a
 * bounded walk; the size is an estimate either way). What cannot be read
 * counts nothing, as in condor_submit. */
static uint64_t dir_bytes(int fd, int depth, size_t *budget) {
        struct dirent *de;
        uint64_t sum = 0;
        DIR *d;

        d = fdopendir(fd);
        if (!d) {
                close(fd);
                return 0;
        }
        while (*budget > 0 && (de = readdir(d))) {
                struct stat st;

                if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
                        continue;
                (*budget)--;
                if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                        continue;
                if (S_ISREG(st.st_mode))
                        sum += (uint64_t) st.st_size;
                else if (S_ISDIR(st.st_mode) && depth < DIR_MAX_DEPTH) {
                        int sub = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

                        if (sub >= 0)
                                sum += dir_bytes(sub, depth + 1, budget);
                }
        }
        closedir(d);
        return sum;
}

/* condor_submit's calc_image_size_kb of an open file or directory. */
static int64_t size_kb(int fd, const struct stat *st) {
        uint64_t bytes = (uint64_t) st->st_size;

        if (S_ISDIR(st->st_mode)) {
                int d = fcntl(fd, F_DUPFD_CLOEXEC, 0);
                size_t budget = DIR_MAX_ENTRIES;

                bytes = d >= 0 ? dir_bytes(d, 0, &budget) : 0;
        }
        return (int64_t) ((bytes + 1023) / 1024);
}

/* One entry of transfer_input_files: there and readable now (as
 * condor_submit opens it), its size added to *kb. */
static int check_input(Submit *s, const char *iwd, const char *entry, int line, int64_t *kb) {
        _cleanup_config_free_ char *path = NULL;
        const char *local;
        struct stat st;
        int fd, r;

        if (strstr(entry, "$$(") || strcmp(entry, "/dev/null") == 0)
                return 0; /* filled in at match time, or nothing: nothing to look at */
        r = check_url(s, "transfer_input_files", entry, line, &local);
        if (r < 0)
                return r;
        r = join_path(iwd, local ? local : entry, &path);
        if (r < 0)
                return r;
        /* Opened (readable, as condor_submit checks) only when a file or a
         * directory: opening a device or a FIFO may do something. */
        if (stat(path, &st) < 0)
                return config_error(s->err, s->file, line, -errno, "transfer_input_files: '%s' (%s): %s", entry, path,
                                    strerror(errno));
        if (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode))
                return config_error(s->err, s->file, line, -EINVAL,
                                    "transfer_input_files: '%s' (%s) is neither a file nor a directory", entry, path);
        fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
        if (fd < 0)
                return config_error(s->err, s->file, line, -errno, "transfer_input_files: '%s' (%s): %s", entry, path,
                                    strerror(errno));
        if (fstat(fd, &st) < 0) {
                r = -errno;
                close(fd);
                return config_error(s->err, s->file, line, r, "transfer_input_files: '%s' (%s): %s", entry, path,
                                    strerror(-r));
        }
        *kb += size_kb(fd, &st);
        close(fd);
        return 0;
}

/* The size of In, when it goes with the job (0 when it is not there). */
static int64_t stdin_kb(const char *iwd, const char *in) {
        _cleanup_config_free_ char *path = NULL;
        struct stat st;
        int64_t kb = 0;
        int fd;

        if (url_scheme_len(in) || join_path(iwd, in, &path) < 0)
                return 0;
        if (stat(path, &st) < 0 || (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)))
                return 0;
        fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
        if (fd < 0)
                return 0;
        if (fstat(fd, &st) == 0)
                kb = size_kb(fd, &st);
        close(fd);
        return kb;
}

/* ---- lists ---- */

/* Split a comma-separated list as condor_submit does: each entry trimmed,
 * empty ones dropped. Entries point into text (modified). */
static int split_list(char *text, ConfigStrv *ret) {
        ConfigStrv l = {};
        char *p = text;

        while (p) {
                char *comma = strchr(p, ',');
                char *e;

                if (comma)
                        *comma = '\0';
                e = config_strip(p);
                if (*e && config_strv_push(&l, strdup(e)) < 0) {
                        config_strv_done(&l);
                        return -ENOMEM;
                }
                p = comma ? comma + 1 : NULL;
        }
        *ret = l;
        return 0;
}

static int join_list(const ConfigStrv *l, char **ret) {
        ConfigBuf b = {};
        int r = 0;

        for (size_t i = 0; i < l->n && r >= 0; i++) {
                if (i > 0)
                        r = config_buf_addc(&b, ',');
                for (const char *p = l->v[i]; *p && r >= 0; p++)
                        r = config_buf_addc(&b, *p);
        }
        if (r < 0) {
                config_buf_done(&b);
                return r;
        }
        *ret = config_buf_steal(&b); /* an empty list is "" */
        return *ret ? 0 : -ENOMEM;
}

/* ---- remaps ---- */

/* The end of the part of p up to an unescaped stop character (or the end);
 * a backslash escapes the character after it. */
static const char *unescaped(const char *p, char stop) {
        for (; *p && *p != stop; p++)
                if (*p == '\\' && p[1])
                        p++;
        return p;
}

/* text[0..n) trimmed is not empty. */
static bool has_text(const char *text, size_t n) {
        for (size_t i = 0; i < n; i++)
                if (!isspace((unsigned char) text[i]))
                        return true;
        return false;
}

/* "name = path; name2 = path2": each entry has a name and a path; a path
 * that is an URL must be one glean transfers. */
static int check_remaps(Submit *s, const char *remaps, int line) {
        for (const char *p = remaps; *p;) {
                const char *end = unescaped(p, ';'), *eq = unescaped(p, '=');
                size_t n = (size_t) (end - p);

                if (has_text(p, n)) {
                        _cleanup_config_free_ char *entry = strndup(p, n), *target = NULL;
                        const char *local;
                        int r;

                        if (!entry)
                                return -ENOMEM;
                        if (eq >= end || !has_text(p, (size_t) (eq - p)) || !has_text(eq + 1, (size_t) (end - eq - 1)))
                                return config_error(s->err, s->file, line, -EINVAL,
                                                    "transfer_output_remaps: '%s' is not 'name = path' (entries are "
                                                    "separated by ';'; write a '=' or ';' of a name as \\= or \\;)",
                                                    config_strip(entry));
                        target = strndup(eq + 1, (size_t) (end - eq - 1));
                        if (!target)
                                return -ENOMEM;
                        r = check_url(s, "transfer_output_remaps", config_strip(target), line, &local);
                        if (r < 0)
                                return r;
                }
                p = *end ? end + 1 : end;
        }
        return 0;
}

/* ---- commands of one value ---- */

static int get_bool(Submit *s, const char *const *names, bool *ret_set, bool *ret, int *ret_line) {
        _cleanup_(val_done) Val c = {};
        int r;

        r = get(s, names, &c);
        if (r < 0)
                return r;
        *ret_set = c.v != NULL;
        *ret_line = c.line;
        if (c.v && submit_parse_bool(c.v, ret) < 0)
                return config_error(s->err, s->file, c.line, -EINVAL, "%s: '%s' is not a boolean", names[0], c.v);
        return 0;
}

/* In/Out/Err: TransferIn/Out/Err false when it stays (or is /dev/null),
 * else StreamIn/Out/Err (false: true is refused). */
static int set_std_stream(Submit *s, ClassAd *ad, const char *attr, const char *const *transfer_names,
                          const char *const *stream_names, const char *transfer_attr, const char *stream_attr,
                          bool *ret_transfer) {
        _cleanup_config_free_ char *file = NULL;
        bool transfer = true, stream = false, set;
        int line, r;

        r = get_bool(s, transfer_names, &set, &transfer, &line);
        if (r < 0)
                return r;
        r = get_bool(s, stream_names, &set, &stream, &line);
        if (r < 0)
                return r;
        if (stream)
                return config_error(s->err, s->file, line, -EOPNOTSUPP,
                                    "%s = true is not supported: glean moves the file when the job ends (%s = false)",
                                    stream_names[0], stream_names[0]);
        r = classad_eval_string(ad, attr, CA_MODE_OLD, &file);
        if (r == -ENOMEM)
                return r;
        if (r < 0 || strcmp(file, "/dev/null") == 0)
                transfer = false;
        *ret_transfer = transfer;
        return transfer ? classad_set_bool(ad, stream_attr, false) : classad_set_bool(ad, transfer_attr, false);
}

static int set_streams(Submit *s, ClassAd *ad, bool *ret_transfer_in) {
        bool out, err;
        int r;

        r = set_std_stream(s, ad, "In", NAMES("transfer_input", "TransferIn"), NAMES("stream_input", "StreamIn"),
                           "TransferIn", "StreamIn", ret_transfer_in);
        if (r >= 0)
                r = set_std_stream(s, ad, "Out", NAMES("transfer_output", "TransferOut"),
                                   NAMES("stream_output", "StreamOut"), "TransferOut", "StreamOut", &out);
        if (r >= 0)
                r = set_std_stream(s, ad, "Err", NAMES("transfer_error", "TransferErr"),
                                   NAMES("stream_error", "StreamErr"), "TransferErr", "StreamErr", &err);
        return r;
}

static int set_log_xml(Submit *s, ClassAd *ad) {
        bool set, xml = false;
        int line, r;

        r = get_bool(s, K_LOG_XML, &set, &xml, &line);
        if (r < 0 || !set)
                return r;
        if (xml)
                return config_error(s->err, s->file, line, -EOPNOTSUPP,
                                    "log_xml is not supported: glean writes the text event log");
        return classad_set_bool(ad, "UserLogUseXML", false);
}

/* ---- whether and when ---- */

typedef struct Transfer {
        Should should;
        When when;
        bool default_should, default_when;
        int should_line, when_line;
        char when_text[64]; /* as written, for errors */
} Transfer;

/* should_transfer_files, else SUBMIT_DEFAULT_SHOULD_TRANSFER_FILES (an
 * invalid one ignored, as users cannot fix it), else IF_NEEDED. */
static int read_should(Submit *s, Transfer *t) {
        _cleanup_(val_done) Val c = {};
        _cleanup_config_free_ char *knob = NULL;
        ConfigError cerr = {};
        int r;

        r = get_or_attr(s, K_SHOULD, "ShouldTransferFiles", &c);
        if (r < 0)
                return r;
        t->should_line = c.line;
        if (c.v) {
                if (parse_should(c.v, &t->should) < 0)
                        return config_error(s->err, s->file, c.line, -EINVAL,
                                            "should_transfer_files: invalid value '%s': YES, NO or IF_NEEDED", c.v);
                t->default_should = false;
                return 0;
        }
        t->should = SHOULD_IF_NEEDED;
        t->default_should = true;
        r = config_get(s->cfg, "SUBMIT_DEFAULT_SHOULD_TRANSFER_FILES", &knob, &cerr);
        if (r == -ENOMEM)
                return r;
        if (r >= 0)
                (void) parse_should(config_strip(knob), &t->should);
        return 0;
}

static int read_when(Submit *s, Transfer *t) {
        _cleanup_(val_done) Val c = {};
        int r;

        r = get_or_attr(s, K_WHEN, "WhenToTransferOutput", &c);
        if (r < 0)
                return r;
        t->when_line = c.line;
        if (!c.v) {
                t->when = WHEN_ON_EXIT;
                t->default_when = true;
                return 0;
        }
        t->default_when = false;
        snprintf(t->when_text, sizeof(t->when_text), "%s", c.v);
        if (parse_when(c.v, &t->when) < 0)
                return config_error(s->err, s->file, c.line, -EINVAL,
                                    "when_to_transfer_output: invalid value '%s': ON_EXIT or ON_EXIT_OR_EVICT", c.v);
        if (t->when == WHEN_ON_SUCCESS)
                return config_error(s->err, s->file, c.line, -EOPNOTSUPP,
                                    "when_to_transfer_output = %s is not supported by glean: ON_EXIT or "
                                    "ON_EXIT_OR_EVICT", c.v);
        return 0;
}

/* condor_submit's checks (A) to (F), and its two conveniences. */
static int resolve_transfer(Submit *s, Transfer *t, const Val *in_files, const Val *out_files) {
        int r;

        r = read_should(s, t);
        if (r >= 0)
                r = read_when(s, t);
        if (r < 0)
                return r;

        /* Input files count when there is one; output files when the
         * command is there at all ("" asks for none, which is asking). */
        bool has_input = in_files->line > 0 && in_files->v[strspn(in_files->v, ", \t")];
        if (t->should == SHOULD_NO && (has_input || out_files->line > 0)) {
                const Val *v = has_input ? in_files : out_files;

                return config_error(s->err, s->file, v->line, -EINVAL,
                                    "%s names files to transfer, but should_transfer_files is NO%s",
                                    has_input ? "transfer_input_files" : "transfer_output_files",
                                    t->default_should ? " (SUBMIT_DEFAULT_SHOULD_TRANSFER_FILES)" : "");
        }
        /* NO with no when_to_transfer_output: nothing is ever sent back. */
        if (t->default_when && t->should == SHOULD_NO)
                t->when = WHEN_NEVER;
        if ((t->should == SHOULD_NO) != (t->when == WHEN_NEVER))
                return config_error(s->err, s->file, t->when_line, -EINVAL,
                                    "when_to_transfer_output = %s, yet should_transfer_files = %s: remove this "
                                    "contradiction", t->when_text[0] ? t->when_text : when_names[t->when],
                                    should_names[t->should]);
        /* Only ON_EXIT_OR_EVICT given: it needs the files sent, so YES. */
        if (t->default_should && t->when == WHEN_ON_EXIT_OR_EVICT && t->should == SHOULD_IF_NEEDED)
                t->should = SHOULD_YES;
        if (t->when == WHEN_ON_EXIT_OR_EVICT && t->should == SHOULD_IF_NEEDED)
                return config_error(s->err, s->file, t->when_line, -EINVAL,
                                    "when_to_transfer_output = ON_EXIT_OR_EVICT and should_transfer_files = "
                                    "IF_NEEDED are incompatible: on a machine of the same file system domain the "
                                    "evicted job's files would not be saved; set should_transfer_files = YES, or "
                                    "when_to_transfer_output = ON_EXIT");
        return 0;
}

/* A value looked up for whether it was given: line > 0 when it was (even
 * empty), v its text without enclosing quotes. */
static int get_given(Submit *s, const char *const *names, Val *ret) {
        int r = get(s, names, ret);

        if (r < 0)
                return r;
        if (!ret->v) {
                ret->line = 0;
                return 0;
        }
        char *p = strip_quotes(ret->v);

        memmove(ret->v, p, strlen(p) + 1);
        return 0;
}

/* A list of files (transfer_input_files, transfer_output_files), its
 * entries trimmed and joined by ",", as attr. With kb (the input), each
 * entry must exist here and its size counts; an empty list sets nothing.
 * Without (the output), even an empty list is said: no output at all. */
static int set_file_list(Submit *s, ClassAd *ad, const char *attr, const char *iwd, const Val *c, int64_t *kb) {
        _cleanup_config_free_ char *joined = NULL, *copy = NULL;
        ConfigStrv l = {};
        int r;

        if (c->line == 0)
                return 0;
        copy = strdup(c->v);
        if (!copy)
                return -ENOMEM;
        r = split_list(copy, &l);
        for (size_t i = 0; kb && i < l.n && r >= 0; i++)
                r = check_input(s, iwd, l.v[i], c->line, kb);
        if (r >= 0 && (!kb || l.n > 0))
                r = join_list(&l, &joined);
        if (r >= 0 && joined)
                r = classad_set_string(ad, attr, joined);
        config_strv_done(&l);
        return r;
}

/* transfer_executable = true said outright, with nothing transferred. */
static int check_executable(Submit *s, const Transfer *t) {
        bool set, transfer = false;
        int line, r;

        r = get_bool(s, K_TRANSFER_EXE, &set, &transfer, &line);
        if (r < 0)
                return r;
        if (t->should == SHOULD_NO && set && transfer)
                return config_error(s->err, s->file, line, -EINVAL,
                                    "transfer_executable = true, but should_transfer_files = NO transfers nothing: "
                                    "set should_transfer_files = YES or IF_NEEDED");
        return 0;
}

static int set_options(Submit *s, ClassAd *ad) {
        _cleanup_(val_done) Val c = {};
        bool set, preserve = false;
        int line, r;

        r = get_given(s, K_REMAPS, &c);
        if (r < 0)
                return r;
        if (c.line > 0 && *c.v) {
                r = check_remaps(s, c.v, c.line);
                if (r >= 0)
                        r = classad_set_string(ad, "TransferOutputRemaps", c.v);
                if (r < 0)
                        return r;
        }
        r = get_bool(s, K_PRESERVE, &set, &preserve, &line);
        if (r >= 0 && set)
                r = classad_set_bool(ad, "PreserveRelativePaths", preserve);
        if (r >= 0)
                r = get(s, K_MAX_INPUT, &c);
        if (r >= 0 && c.v)
                r = submit_set_expr(s, ad, "MaxTransferInputMB", c.v, c.line, K_MAX_INPUT[0]);
        if (r >= 0)
                r = get(s, K_MAX_OUTPUT, &c);
        if (r >= 0 && c.v)
                r = submit_set_expr(s, ad, "MaxTransferOutputMB", c.v, c.line, K_MAX_OUTPUT[0]);
        return r;
}

/* FileSystemDomain, which matchmaking and an IF_NEEDED run compare. */
static int set_filesystem_domain(Submit *s, ClassAd *ad) {
        _cleanup_config_free_ char *domain = NULL;
        int r;

        if (classad_has(ad, "FileSystemDomain"))
                return 0;
        r = config_filesystem_domain(s->cfg, &domain, s->err);
        if (r < 0)
                return r;
        return classad_set_string(ad, "FileSystemDomain", domain);
}

int submit_set_transfer(Submit *s, ClassAd *ad, const char *iwd) {
        _cleanup_(val_done) Val in_files = {}, out_files = {};
        _cleanup_config_free_ char *in = NULL;
        Transfer t = {};
        int64_t input_kb = 0, exe_kb = 0;
        bool transfer_in = false;
        int r;

        r = set_log_xml(s, ad);
        if (r >= 0)
                r = set_streams(s, ad, &transfer_in);
        if (r >= 0)
                r = get_given(s, K_INPUT_FILES, &in_files);
        if (r >= 0)
                r = get_given(s, K_OUTPUT_FILES, &out_files);
        if (r >= 0)
                r = resolve_transfer(s, &t, &in_files, &out_files);
        if (r >= 0)
                r = check_executable(s, &t);
        if (r >= 0)
                r = set_file_list(s, ad, "TransferInput", iwd, &in_files, &input_kb);
        if (r >= 0)
                r = set_file_list(s, ad, "TransferOutput", iwd, &out_files, NULL);
        if (r >= 0)
                r = set_options(s, ad);
        if (r < 0)
                return r;

        r = classad_set_string(ad, "ShouldTransferFiles", should_names[t.should]);
        if (r >= 0 && t.should != SHOULD_NO)
                r = classad_set_string(ad, "WhenToTransferOutput", when_names[t.when]);
        if (r >= 0 && t.should != SHOULD_YES)
                r = set_filesystem_domain(s, ad);
        if (r < 0)
                return r;

        /* The input's size: the executable (DiskUsage so far), the files, In. */
        if (transfer_in && classad_eval_string(ad, "In", CA_MODE_OLD, &in) >= 0)
                input_kb += stdin_kb(iwd, in);
        (void) classad_eval_int(ad, "DiskUsage", CA_MODE_OLD, &exe_kb);
        r = classad_set_int(ad, "TransferInputSizeMB", (exe_kb + input_kb + 1023) / 1024);
        if (r >= 0)
                r = classad_set_int(ad, "DiskUsage", exe_kb + input_kb);
        return r;
}
