/* SPDX-License-Identifier: Apache-2.0 */
/*
 * load.c — configuration from files: reading a file, include of a file, a
 * directory or a glob, the files read (config_files_read), the standard
 * files (GLEAN_CONFIG, CONDOR_CONFIG or /etc/glean/glean.conf, then
 * LOCAL_CONFIG_DIR, LOCAL_CONFIG_FILE and LOCAL_CONFIG_DIR again, in
 * HTCondor's order), and all-or-nothing loading: every load works on a
 * copy that replaces the Config only when the whole text was read without
 * error. Include commands: command.c.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <regex.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config-internal.h"

#define CONFIG_DEFAULT_FILE "/etc/glean/glean.conf"

/* ---- files ---- */

/* The whole regular file at path, NUL-terminated. -EINVAL with
 * *ret_nul_line set when it holds a NUL byte. untrusted (untrusted_size
 * bytes) is left "" when the file may run include commands, else says
 * why not (config_file_untrusted). */
static int read_text(const char *path, char **ret, int *ret_nul_line, char *untrusted, size_t untrusted_size) {
        _cleanup_config_free_ char *buf = NULL;
        struct stat st;
        size_t len = 0;
        const char *nul;
        int fd, r = 0;

        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
        if (fd < 0)
                return -errno;
        if (fstat(fd, &st) < 0)
                r = -errno;
        else if (S_ISDIR(st.st_mode))
                r = -EISDIR;
        else if (!S_ISREG(st.st_mode))
                r = -EINVAL;
        else if ((uint64_t) st.st_size > CONFIG_MAX_FILE_SIZE)
                r = -EFBIG;
        else if (!(buf = malloc((size_t) st.st_size + 1)))
                r = -ENOMEM;
        untrusted[0] = '\0';
        if (r >= 0 && config_file_untrusted(fd, path, untrusted, untrusted_size) == 0)
                untrusted[0] = '\0';
        while (r >= 0) {
                ssize_t n = read(fd, buf + len, (size_t) st.st_size - len);

                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        r = -errno;
                if (n <= 0)
                        break;
                len += (size_t) n;
                if (len == (size_t) st.st_size)
                        break;
        }
        close(fd);
        if (r < 0)
                return r;
        buf[len] = '\0';
        nul = memchr(buf, '\0', len);
        if (nul) {
                int line = 1;

                for (const char *p = buf; p < nul; p++)
                        line += *p == '\n';
                *ret_nul_line = line;
                return -EINVAL;
        }
        *ret = buf;
        buf = NULL;
        return 0;
}

static const char *read_error(int r) {
        return r == -EINVAL ? "not a regular file" : r == -EFBIG ? "file larger than 16 MiB" : strerror(-r);
}

/* Parse the file at path; from_file:from_line is the include line asking
 * for it (NULL: none). */
static int parse_file_at(Config *cfg, const char *path, unsigned depth, unsigned flags, ConfigError *err,
                         const char *from_file, int from_line) {
        _cleanup_config_free_ char *text = NULL, *dir = NULL;
        char untrusted[512];
        const char *slash;
        ConfigLoad ld;
        int nul_line = 0, r;

        r = read_text(path, &text, &nul_line, untrusted, sizeof(untrusted));
        if (r < 0 && nul_line > 0)
                return config_error(err, path, nul_line, r, "the file contains a NUL byte");
        if (r < 0 && from_file)
                return config_error(err, from_file, from_line, r, "include: cannot read '%s': %s", path,
                                    read_error(r));
        if (r < 0)
                return config_error(err, path, 0, r, "cannot read: %s", read_error(r));

        slash = strrchr(path, '/');
        if (slash) {
                dir = strndup(path, slash == path ? 1 : (size_t) (slash - path));
                if (!dir)
                        return config_error(err, path, 0, -ENOMEM, "out of memory");
        }
        r = config_note_file(cfg, path);
        if (r < 0)
                return config_error(err, path, 0, r, "out of memory");
        ld = (ConfigLoad){ .cfg = cfg, .file = path, .dir = dir, .depth = depth, .flags = flags, .err = err,
                           .untrusted = untrusted[0] ? untrusted : NULL };
        return config_parse_text(&ld, text);
}

int config_include_check(ConfigLoad *ld, int at) {
        if (ld->flags & CONFIG_LOAD_NO_INCLUDE)
                return config_error(ld->err, ld->file, at, -EPERM, "include is not allowed here");
        if (ld->depth + 1 > CONFIG_MAX_INCLUDE_DEPTH)
                return config_error(ld->err, ld->file, at, -ELOOP, "include and use nested more than %d levels deep",
                                    CONFIG_MAX_INCLUDE_DEPTH);
        return 0;
}

int config_include_file(ConfigLoad *ld, const char *path, int at) {
        int r = config_include_check(ld, at);

        if (r < 0)
                return r;
        return parse_file_at(ld->cfg, path, ld->depth + 1, ld->flags, ld->err, ld->file, at);
}

int config_parse_output(ConfigLoad *ld, const char *name, const char *text, int at) {
        ConfigLoad sub = *ld;
        int r;

        r = config_note_file(ld->cfg, name);
        if (r < 0)
                return config_error(ld->err, ld->file, at, r, "out of memory");
        sub.file = name;
        sub.depth = ld->depth + 1;
        sub.line_offset = 0;
        return config_parse_text(&sub, text);
}

/* ---- the files read ---- */

int config_note_file(Config *cfg, const char *path) {
        char **p, *copy;

        for (size_t i = 0; i < cfg->n_files; i++)
                if (strcmp(cfg->files[i], path) == 0)
                        return 0;
        copy = strdup(path);
        if (!copy)
                return -ENOMEM;
        p = realloc(cfg->files, (cfg->n_files + 2) * sizeof(char *));
        if (!p) {
                free(copy);
                return -ENOMEM;
        }
        p[cfg->n_files++] = copy;
        p[cfg->n_files] = NULL;
        cfg->files = p;
        return 0;
}

int config_files_read(const Config *cfg, char ***ret) {
        char **v;

        if (!cfg || !ret)
                return -EINVAL;
        if (cfg->n_files == 0) {
                *ret = NULL;
                return 0;
        }
        v = calloc(cfg->n_files + 1, sizeof(char *));
        if (!v)
                return -ENOMEM;
        for (size_t i = 0; i < cfg->n_files; i++)
                if (!(v[i] = strdup(cfg->files[i]))) {
                        config_strv_free(v);
                        return -ENOMEM;
                }
        *ret = v;
        return (int) cfg->n_files;
}

int config_parse_file(Config *cfg, const char *path, unsigned depth, unsigned flags, ConfigError *err) {
        return parse_file_at(cfg, path, depth, flags, err, NULL, 0);
}

static int compare_strings(const void *a, const void *b) {
        return strcmp(*(const char *const *) a, *(const char *const *) b);
}

static int strv_append(char ***strv, size_t *n, char *item) {
        char **p = realloc(*strv, (*n + 2) * sizeof(char *));

        if (!p) {
                free(item);
                return -ENOMEM;
        }
        p[(*n)++] = item;
        p[*n] = NULL;
        *strv = p;
        return 0;
}

static char *join_path(const char *dir, const char *name) {
        char *s = NULL;

        if (!dir || name[0] == '/')
                return strdup(name);
        if (asprintf(&s, "%s%s%s", dir, dir[strlen(dir) - 1] == '/' ? "" : "/", name) < 0)
                return NULL;
        return s;
}

static void regfreep(regex_t **re) {
        if (*re)
                regfree(*re);
}

int config_dir_files(const Config *cfg, const char *dir, char ***ret, char *why, size_t why_size) {
        regex_t re_storage;
        _cleanup_config_free_ char *exclude = NULL;
        _cleanup_(config_strv_freep) char **files = NULL;
        _cleanup_(regfreep) regex_t *re = NULL;
        struct dirent *de;
        size_t n = 0;
        DIR *d;
        int r = 0;

        if (config_get(cfg, "LOCAL_CONFIG_DIR_EXCLUDE_REGEXP", &exclude, NULL) >= 0 && config_strip(exclude)[0]) {
                if (regcomp(&re_storage, config_strip(exclude), REG_EXTENDED | REG_NOSUB) != 0) {
                        snprintf(why, why_size, "LOCAL_CONFIG_DIR_EXCLUDE_REGEXP is not a valid regular expression");
                        return -EINVAL;
                }
                re = &re_storage;
        }

        d = opendir(dir);
        if (!d) {
                r = -errno;
                snprintf(why, why_size, "cannot read directory '%s': %s", dir, strerror(-r));
                return r;
        }
        files = calloc(1, sizeof(char *));
        if (!files)
                r = -ENOMEM;
        while (r >= 0 && (errno = 0, de = readdir(d))) {
                struct stat st;
                char *path;

                if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
                        continue;
                if (re && regexec(re, de->d_name, 0, NULL, 0) == 0)
                        continue;
                if (fstatat(dirfd(d), de->d_name, &st, 0) < 0 || !S_ISREG(st.st_mode))
                        continue;
                path = join_path(dir, de->d_name);
                r = path ? strv_append(&files, &n, path) : -ENOMEM;
        }
        if (r >= 0 && errno != 0)
                r = -errno;
        closedir(d);
        if (r < 0) {
                snprintf(why, why_size, "cannot read directory '%s': %s", dir, strerror(-r));
                return r;
        }
        qsort(files, n, sizeof(char *), compare_strings);
        *ret = files;
        files = NULL;
        return 0;
}

/* ---- include ---- */

static int include_glob(ConfigLoad *ld, const char *pattern, int at) {
        glob_t g = {};
        char **paths;
        int r;

        r = glob(pattern, GLOB_NOSORT, NULL, &g);
        if (r == GLOB_NOMATCH)
                return 0;
        if (r != 0) {
                globfree(&g);
                return config_error(ld->err, ld->file, at, r == GLOB_NOSPACE ? -ENOMEM : -EIO,
                                    "include: cannot read '%s'", pattern);
        }
        paths = g.gl_pathv;
        qsort(paths, g.gl_pathc, sizeof(char *), compare_strings);
        r = 0;
        for (size_t i = 0; i < g.gl_pathc && r >= 0; i++) {
                struct stat st;

                if (stat(paths[i], &st) < 0 || !S_ISREG(st.st_mode))
                        continue;
                r = parse_file_at(ld->cfg, paths[i], ld->depth + 1, ld->flags, ld->err, ld->file, at);
        }
        globfree(&g);
        return r;
}

int config_include(ConfigLoad *ld, const char *path, bool if_exists, int at) {
        _cleanup_config_free_ char *full = NULL;
        _cleanup_(config_strv_freep) char **files = NULL;
        char why[512];
        struct stat st;
        int r;

        if ((r = config_include_check(ld, at)) < 0)
                return r;
        full = join_path(ld->dir, path);
        if (!full)
                return config_error(ld->err, ld->file, at, -ENOMEM, "out of memory");

        if (strpbrk(full, "*?["))
                return include_glob(ld, full, at);

        if (stat(full, &st) < 0) {
                if (errno == ENOENT && if_exists)
                        return 0;
                return config_error(ld->err, ld->file, at, -errno, "include: cannot read '%s': %s", full,
                                    strerror(errno));
        }
        if (!S_ISDIR(st.st_mode))
                return parse_file_at(ld->cfg, full, ld->depth + 1, ld->flags, ld->err, ld->file, at);

        r = config_dir_files(ld->cfg, full, &files, why, sizeof(why));
        if (r < 0)
                return config_error(ld->err, ld->file, at, r, "include: %s", why);
        for (char **f = files; *f; f++) {
                r = parse_file_at(ld->cfg, *f, ld->depth + 1, ld->flags, ld->err, ld->file, at);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* ---- all-or-nothing loading ---- */

int config_load_file(Config *cfg, const char *path, ConfigError *err) {
        _cleanup_(config_freep_config) Config *tmp = NULL;
        int r;

        if (!cfg || !path)
                return -EINVAL;
        r = config_copy(cfg, &tmp);
        if (r < 0)
                return config_error(err, path, 0, r, "out of memory");
        r = config_parse_file(tmp, path, 0, 0, err);
        if (r < 0)
                return r;
        config_swap(cfg, tmp);
        return 0;
}

int config_load_string_flags(Config *cfg, const char *text, const char *source_name, unsigned flags,
                             ConfigError *err) {
        _cleanup_(config_freep_config) Config *tmp = NULL;
        const char *name = source_name ? source_name : CONFIG_SOURCE_STRING;
        ConfigLoad ld;
        int r;

        if (!cfg || !text)
                return -EINVAL;
        if (strlen(text) > CONFIG_MAX_FILE_SIZE)
                return config_error(err, name, 0, -EFBIG, "text larger than 16 MiB");
        r = config_copy(cfg, &tmp);
        if (r < 0)
                return config_error(err, name, 0, r, "out of memory");
        ld = (ConfigLoad){ .cfg = tmp, .file = name, .flags = flags, .err = err,
                           .untrusted = (flags & CONFIG_LOAD_COMMANDS)
                                                ? NULL
                                                : "commands do not run from text loaded as a string (only from a "
                                                  "file whose owner can be checked)" };
        r = config_parse_text(&ld, text);
        if (r < 0)
                return r;
        config_swap(cfg, tmp);
        return 0;
}

int config_load_string(Config *cfg, const char *text, const char *source_name, ConfigError *err) {
        return config_load_string_flags(cfg, text, source_name, 0, err);
}

/* ---- the standard files ---- */

/* The expanded value of name, NULL when undefined or empty; *ret_file and
 * *ret_line: where it is defined. */
static int local_value(Config *cfg, const char *name, char **ret, const char **ret_file, int *ret_line,
                       ConfigError *err) {
        const ConfigEntry *e = config_find(cfg, name);
        char *v = NULL;
        int r;

        *ret = NULL;
        if (!e)
                return 0;
        *ret_file = config_entry_file(cfg, e);
        *ret_line = e->line;
        r = config_get(cfg, name, &v, err);
        if (r < 0)
                return r;
        if (!config_strip(v)[0]) {
                free(v);
                return 0;
        }
        *ret = v;
        return 0;
}

/* The files of every directory of the list dirs, in order. A directory
 * that does not exist holds nothing to read (as in HTCondor). */
static int load_local_dirs(Config *cfg, const char *dirs, const char *file, int line, ConfigError *err) {
        _cleanup_(config_strv_freep) char **list = NULL;
        int r;

        r = config_split_list(dirs, &list);
        if (r < 0)
                return config_error(err, file, line, r, "out of memory");
        for (char **d = list; *d; d++) {
                _cleanup_(config_strv_freep) char **files = NULL;
                char why[512];

                r = config_dir_files(cfg, *d, &files, why, sizeof(why));
                if (r == -ENOENT || r == -ENOTDIR)
                        continue;
                if (r < 0)
                        return config_error(err, file, line, r, "LOCAL_CONFIG_DIR: %s", why);
                for (char **f = files; *f; f++) {
                        r = config_parse_file(cfg, *f, 0, 0, err);
                        if (r < 0)
                                return r;
                }
        }
        return 0;
}

/* COMMAND | named by the environment (file "$CONDOR_CONFIG") or by a
 * LOCAL_CONFIG_FILE defined at file:line. */
static int load_command(Config *cfg, const char *value, const char *file, int line, ConfigError *err) {
        _cleanup_config_free_ char *cmd = strdup(value);
        char why[512] = "";
        ConfigLoad ld;
        size_t n;

        if (!cmd)
                return config_error(err, file, line, -ENOMEM, "out of memory");
        n = strlen(config_strip(cmd));
        memmove(cmd, config_strip(cmd), n + 1);
        while (n > 0 && (cmd[n - 1] == '|' || cmd[n - 1] == ' ' || cmd[n - 1] == '\t'))
                cmd[--n] = '\0';
        /* Trust the file that asked for it (the environment and pseudo
         * sources are the program's or its user's own). */
        if (file[0] != '<' && file[0] != '$' && !(strlen(file) > 2 && strcmp(file + strlen(file) - 2, " |") == 0)) {
                int fd = open(file, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);

                if (fd < 0)
                        snprintf(why, sizeof(why), "cannot open '%s' to check its owner: %s", file, strerror(errno));
                else {
                        (void) config_file_untrusted(fd, file, why, sizeof(why));
                        close(fd);
                }
        }
        ld = (ConfigLoad){ .cfg = cfg, .file = file, .err = err, .untrusted = why[0] ? why : NULL };
        return config_include_command(&ld, cmd, NULL, false, line);
}

static bool is_piped(const char *value) {
        size_t n = strlen(value);

        while (n > 0 && (value[n - 1] == ' ' || value[n - 1] == '\t'))
                n--;
        return n > 0 && value[n - 1] == '|';
}

/* The sources a LOCAL_CONFIG_FILE value names, without those of done. */
static int local_sources(const char *value, char **done, char ***ret) {
        _cleanup_(config_strv_freep) char **list = NULL;
        size_t k = 0;
        int r;

        if (is_piped(value)) {
                list = calloc(2, sizeof(char *));
                if (!list || !(list[0] = strdup(value)))
                        return -ENOMEM;
        } else {
                r = config_split_list(value, &list);
                if (r < 0)
                        return r;
        }
        for (size_t i = 0; list[i]; i++) {
                bool seen = false;

                for (char **d = done; d && *d && !seen; d++)
                        seen = strcmp(*d, list[i]) == 0;
                if (seen)
                        free(list[i]);
                else
                        list[k++] = list[i];
        }
        list[k] = NULL;
        *ret = list;
        list = NULL;
        return 0;
}

static int load_local_file(Config *cfg, const char *source, const char *file, int line, ConfigError *err) {
        ConfigError e = {};
        bool required = true;
        int r;

        if (is_piped(source))
                return load_command(cfg, source, file, line, err);
        if (access(source, R_OK) == 0)
                return config_parse_file(cfg, source, 0, 0, err);
        r = -errno;
        if (config_get_bool(cfg, "REQUIRE_LOCAL_CONFIG_FILE", &required, &e) == -EINVAL)
                return config_error(err, e.file, e.line, -EINVAL, "%s", e.msg);
        if (required)
                return config_error(err, file, line, r,
                                    "LOCAL_CONFIG_FILE: cannot read '%s': %s (REQUIRE_LOCAL_CONFIG_FILE = false "
                                    "skips it)",
                                    source, strerror(-r));
        r = config_warn(cfg, file, line, "LOCAL_CONFIG_FILE: '%s' skipped: %s", source, strerror(-r));
        return r < 0 ? config_error(err, file, line, r, "out of memory") : 0;
}

/* The files LOCAL_CONFIG_FILE names, in order; when one of them changes
 * LOCAL_CONFIG_FILE, the new list less the files done already is read
 * on (HTCondor's process_locals). */
static int load_local_files(Config *cfg, ConfigError *err) {
        _cleanup_(config_strv_freep) char **todo = NULL, **done = NULL;
        _cleanup_config_free_ char *value = NULL;
        const char *file = "";
        size_t n_done = 0, i = 0;
        int line = 0, r;

        r = local_value(cfg, "LOCAL_CONFIG_FILE", &value, &file, &line, err);
        if (r < 0 || !value)
                return r;
        r = local_sources(value, NULL, &todo);
        if (r < 0)
                return config_error(err, file, line, r, "out of memory");
        while (todo[i]) {
                _cleanup_config_free_ char *now = NULL;
                const char *now_file = file;
                int now_line = line;
                char *copy;

                r = load_local_file(cfg, todo[i], file, line, err);
                if (r < 0)
                        return r;
                copy = strdup(todo[i]);
                if (!copy || strv_append(&done, &n_done, copy) < 0)
                        return config_error(err, file, line, -ENOMEM, "out of memory");
                r = local_value(cfg, "LOCAL_CONFIG_FILE", &now, &now_file, &now_line, err);
                if (r < 0)
                        return r;
                if (now && strcmp(now, value) != 0) {
                        config_strv_free(todo);
                        todo = NULL;
                        r = local_sources(now, done, &todo);
                        if (r < 0)
                                return config_error(err, now_file, now_line, r, "out of memory");
                        free(value);
                        value = now;
                        now = NULL;
                        file = now_file;
                        line = now_line;
                        i = 0;
                        continue;
                }
                i++;
        }
        return 0;
}

/* HTCondor's order: the directories of LOCAL_CONFIG_DIR, the files of
 * LOCAL_CONFIG_FILE, then LOCAL_CONFIG_DIR once more if those changed it. */
static int load_locals(Config *cfg, ConfigError *err) {
        _cleanup_config_free_ char *dirs = NULL, *dirs2 = NULL;
        const char *file = "", *file2 = "";
        int line = 0, line2 = 0, r;

        r = local_value(cfg, "LOCAL_CONFIG_DIR", &dirs, &file, &line, err);
        if (r >= 0 && dirs)
                r = load_local_dirs(cfg, dirs, file, line, err);
        if (r >= 0)
                r = load_local_files(cfg, err);
        if (r >= 0)
                r = local_value(cfg, "LOCAL_CONFIG_DIR", &dirs2, &file2, &line2, err);
        if (r >= 0 && dirs2 && (!dirs || strcmp(dirs, dirs2) != 0))
                r = load_local_dirs(cfg, dirs2, file2, line2, err);
        return r;
}

/* The main file: path, else $GLEAN_CONFIG, else $CONDOR_CONFIG, else
 * CONFIG_DEFAULT_FILE (absent is fine). "/dev/null" and "ONLY_ENV": no
 * file at all, LOCAL_CONFIG_DIR and LOCAL_CONFIG_FILE neither (built-in
 * defaults only); "COMMAND |" in the environment: its output. */
int config_load_path(const char *path, Config **ret, ConfigError *err) {
        _cleanup_(config_freep_config) Config *cfg = NULL;
        const char *env = getenv("GLEAN_CONFIG"), *env_name = "$GLEAN_CONFIG";
        bool must_exist = true;
        int r;

        if (!ret)
                return -EINVAL;
        r = config_new(&cfg);
        if (r < 0)
                return config_error(err, NULL, 0, r, "out of memory");
        if (!env || !env[0]) {
                env = getenv("CONDOR_CONFIG");
                env_name = "$CONDOR_CONFIG";
        }
        if (!path && env && env[0]) {
                path = env;
                if (is_piped(path)) {
                        r = load_command(cfg, path, env_name, 0, err);
                        if (r < 0)
                                return r;
                        path = NULL;
                        goto locals;
                }
        }
        if (!path) {
                path = CONFIG_DEFAULT_FILE;
                must_exist = false;
        }
        if (strcmp(path, "/dev/null") == 0 || strcasecmp(path, "ONLY_ENV") == 0)
                goto done;
        if (must_exist || access(path, F_OK) == 0 || errno != ENOENT) {
                r = config_parse_file(cfg, path, 0, 0, err);
                if (r < 0)
                        return r;
        }
locals:
        r = load_locals(cfg, err);
        if (r < 0)
                return r;
done:
        *ret = cfg;
        cfg = NULL;
        return 0;
}

int config_load_default(Config **ret, ConfigError *err) {
        return config_load_path(NULL, ret, err);
}
