/* SPDX-License-Identifier: Apache-2.0 */
/*
 * command.c — configuration produced by a program, as HTCondor allows it:
 *
 *   include : COMMAND |
 *   include [ifexist] command [into FILE] : COMMAND
 *   LOCAL_CONFIG_FILE = COMMAND |          (load.c)
 *
 * COMMAND is split into arguments as HTCondor splits it (white space; a
 * line in double quotes is read in the new argument syntax) and run
 * without a shell, its standard input /dev/null, its standard error the
 * caller's, no other descriptor inherited, in a process group of its own.
 * Its output is read as configuration once it has exited with status 0.
 * It may run at most GLEAN_CONFIG_COMMAND_TIMEOUT seconds (default 30)
 * and print at most CONFIG_MAX_FILE_SIZE bytes, no NUL byte; past either
 * limit its process group is killed and the load fails.
 *
 * A command runs only from a file owned by root or by the user running
 * and writable by no one else (fstat of the descriptor the file was read
 * from), from the output of such a command, or from text the program
 * loads with CONFIG_LOAD_COMMANDS; never under CONFIG_LOAD_NO_INCLUDE.
 *
 * With into FILE: when FILE exists it is read and COMMAND does not run
 * (HTCondor's cache); otherwise COMMAND runs and FILE is created (0644,
 * never over an existing file or through a symbolic link) with its output
 * only when it succeeded, then read. ifexist: a command that cannot run or
 * fails includes nothing, with a warning (config_warnings).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "argsyntax.h"
#include "config-internal.h"

extern char **environ;

/* ---- trust ---- */

int config_file_untrusted(int fd, const char *path, char *why, size_t why_size) {
        struct stat st;
        uid_t me = geteuid();

        if (fstat(fd, &st) < 0) {
                snprintf(why, why_size, "cannot stat '%s': %s", path, strerror(errno));
                return -errno;
        }
        if (st.st_uid != 0 && st.st_uid != me) {
                snprintf(why, why_size,
                         "'%s' is owned by uid %u, neither root nor the user running (uid %u): commands run only "
                         "from files of root or of that user",
                         path, (unsigned) st.st_uid, (unsigned) me);
                return -EPERM;
        }
        if (st.st_mode & (S_IWGRP | S_IWOTH)) {
                snprintf(why, why_size,
                         "'%s' is writable by %s: commands run only from files that only their owner can write",
                         path, (st.st_mode & S_IWOTH) ? "others" : "its group");
                return -EPERM;
        }
        return 0;
}

/* ---- running ---- */

/* The arguments of cmdline, as HTCondor's AppendArgsV1RawOrV2Quoted
 * reads them. */
static int split_command(const char *cmdline, ConfigStrv *args, char *why, size_t why_size) {
        size_t n = strlen(cmdline);
        int r;

        if (n >= 2 && cmdline[0] == '"' && cmdline[n - 1] == '"') {
                _cleanup_config_free_ char *inner = malloc(n);
                size_t k = 0;

                if (!inner)
                        return -ENOMEM;
                for (size_t i = 1; i + 1 < n; i++) {
                        inner[k++] = cmdline[i];
                        if (cmdline[i] == '"' && cmdline[i + 1] == '"' && i + 2 < n)
                                i++; /* "" is a literal " */
                }
                inner[k] = '\0';
                r = config_args_split_v2(inner, args, why, why_size);
        } else
                r = config_args_split_v1(cmdline, args);
        if (r >= 0 && args->n == 0) {
                snprintf(why, why_size, "no command");
                return -EINVAL;
        }
        return r;
}

static long long now_ms(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (long long) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int spawn(char **argv, int out_fd, pid_t *ret_pid) {
        posix_spawn_file_actions_t fa;
        posix_spawnattr_t attr;
        sigset_t none, all;
        int r;

        r = posix_spawn_file_actions_init(&fa);
        if (r)
                return -r;
        r = posix_spawnattr_init(&attr);
        if (r) {
                posix_spawn_file_actions_destroy(&fa);
                return -r;
        }
        sigemptyset(&none);
        sigfillset(&all);
        if (!(r = posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0)) &&
            !(r = posix_spawn_file_actions_adddup2(&fa, out_fd, 1)) &&
            !(r = posix_spawn_file_actions_addclosefrom_np(&fa, 3)) &&
            !(r = posix_spawnattr_setpgroup(&attr, 0)) && !(r = posix_spawnattr_setsigmask(&attr, &none)) &&
            !(r = posix_spawnattr_setsigdefault(&attr, &all)) &&
            !(r = posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK |
                                                          POSIX_SPAWN_SETSIGDEF)))
                r = posix_spawnp(ret_pid, argv[0], &fa, &attr, argv, environ);
        posix_spawnattr_destroy(&attr);
        posix_spawn_file_actions_destroy(&fa);
        return -r;
}

/* Kill the process group pid leads (the command and what it started and
 * kept there) and reap pid. */
static void kill_and_reap(pid_t pid) {
        (void) kill(-pid, SIGKILL);
        (void) kill(pid, SIGKILL);
        while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
                ;
}

/* Read fd until EOF, the deadline or the size limit. */
static int read_output(int fd, long long deadline, ConfigBuf *out, char *why, size_t why_size,
                       unsigned timeout_s) {
        for (;;) {
                struct pollfd p = { .fd = fd, .events = POLLIN };
                long long left = deadline - now_ms();
                char chunk[65536];
                ssize_t n;
                int k;

                if (left <= 0) {
                        snprintf(why, why_size, "did not finish within %u s (%s); killed", timeout_s,
                                 CONFIG_COMMAND_TIMEOUT_KNOB);
                        return -ETIME;
                }
                k = poll(&p, 1, left > 1000 ? 1000 : (int) left);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0) {
                        snprintf(why, why_size, "poll: %s", strerror(errno));
                        return -errno;
                }
                if (k == 0)
                        continue;
                n = read(fd, chunk, sizeof(chunk));
                if (n < 0 && (errno == EINTR || errno == EAGAIN))
                        continue;
                if (n < 0) {
                        snprintf(why, why_size, "reading its output: %s", strerror(errno));
                        return -errno;
                }
                if (n == 0)
                        return 0;
                if (out->len + (size_t) n > CONFIG_MAX_FILE_SIZE) {
                        snprintf(why, why_size, "printed more than %u MiB; killed", CONFIG_MAX_FILE_SIZE >> 20);
                        return -EFBIG;
                }
                if (out->len + (size_t) n + 1 > out->cap) {
                        size_t cap = out->cap ? out->cap : 65536;
                        char *s;

                        while (cap < out->len + (size_t) n + 1)
                                cap *= 2;
                        s = realloc(out->s, cap);
                        if (!s) {
                                snprintf(why, why_size, "out of memory");
                                return -ENOMEM;
                        }
                        out->s = s;
                        out->cap = cap;
                }
                memcpy(out->s + out->len, chunk, (size_t) n);
                out->len += (size_t) n;
                out->s[out->len] = '\0';
        }
}

/* Wait for pid until the deadline. */
static int wait_exit(pid_t pid, long long deadline, int *ret_status, char *why, size_t why_size, unsigned timeout_s) {
        for (;;) {
                struct timespec tick = { 0, 10 * 1000 * 1000 };
                pid_t w = waitpid(pid, ret_status, WNOHANG);

                if (w == pid)
                        return 0;
                if (w < 0 && errno != EINTR) {
                        snprintf(why, why_size, "cannot learn its exit status: %s", strerror(errno));
                        return -errno;
                }
                if (now_ms() >= deadline) {
                        snprintf(why, why_size, "did not exit within %u s (%s); killed", timeout_s,
                                 CONFIG_COMMAND_TIMEOUT_KNOB);
                        return -ETIME;
                }
                nanosleep(&tick, NULL);
        }
}

int config_run_command(const char *cmdline, unsigned timeout_s, char **ret, char *why, size_t why_size) {
        ConfigStrv args = {};
        ConfigBuf out = {};
        long long deadline;
        int fds[2] = { -1, -1 }, status = 0, r;
        pid_t pid = 0;
        const char *nul;

        r = split_command(cmdline, &args, why, why_size);
        if (r < 0) {
                if (r == -ENOMEM)
                        snprintf(why, why_size, "out of memory");
                goto done;
        }
        if (pipe2(fds, O_CLOEXEC) < 0) {
                r = -errno;
                snprintf(why, why_size, "pipe: %s", strerror(-r));
                goto done;
        }
        r = spawn(args.v, fds[1], &pid);
        close(fds[1]);
        fds[1] = -1;
        if (r < 0) {
                snprintf(why, why_size, "cannot run '%s': %s", args.v[0], strerror(-r));
                pid = 0;
                goto done;
        }
        deadline = now_ms() + (long long) timeout_s * 1000;
        r = read_output(fds[0], deadline, &out, why, why_size, timeout_s);
        close(fds[0]);
        fds[0] = -1;
        if (r >= 0)
                r = wait_exit(pid, deadline, &status, why, why_size, timeout_s);
        if (r < 0) {
                if (r != -ECHILD)
                        kill_and_reap(pid);
                goto done;
        }
        if (WIFEXITED(status) && WEXITSTATUS(status) != 0) {
                snprintf(why, why_size, "exited with status %d", WEXITSTATUS(status));
                r = -EIO;
        } else if (WIFSIGNALED(status)) {
                snprintf(why, why_size, "killed by signal %d (%s)", WTERMSIG(status), strsignal(WTERMSIG(status)));
                r = -EIO;
        } else if (out.s && (nul = memchr(out.s, '\0', out.len))) {
                int line = 1;

                for (const char *p = out.s; p < nul; p++)
                        line += *p == '\n';
                snprintf(why, why_size, "its output holds a NUL byte (line %d)", line);
                r = -EINVAL;
        } else {
                *ret = out.s ? out.s : strdup("");
                out.s = NULL;
                r = *ret ? 0 : -ENOMEM;
                if (r < 0)
                        snprintf(why, why_size, "out of memory");
        }
done:
        if (fds[0] >= 0)
                close(fds[0]);
        if (fds[1] >= 0)
                close(fds[1]);
        free(out.s);
        config_strv_done(&args);
        return r;
}

/* ---- include command ---- */

static int command_timeout(ConfigLoad *ld, int at, unsigned *ret) {
        ConfigError e = {};
        int64_t v;
        int r;

        r = config_get_int(ld->cfg, CONFIG_COMMAND_TIMEOUT_KNOB, &v, &e);
        if (r == -ENOENT) {
                *ret = CONFIG_COMMAND_TIMEOUT;
                return 0;
        }
        if (r < 0)
                return config_error(ld->err, ld->file, at, r, "include command: %s", e.msg);
        if (v < 1 || v > 3600)
                return config_error(ld->err, ld->file, at, -ERANGE,
                                    "include command: %s is %lld; it must be from 1 to 3600 seconds",
                                    CONFIG_COMMAND_TIMEOUT_KNOB, (long long) v);
        *ret = (unsigned) v;
        return 0;
}

/* Create path (not there before) holding text. */
static int write_cache(const char *path, const char *text, char *why, size_t why_size) {
        size_t len = strlen(text), done = 0;
        int fd, r = 0;

        fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY, 0644);
        if (fd < 0) {
                r = -errno;
                snprintf(why, why_size, "cannot create '%s': %s", path, strerror(-r));
                return r;
        }
        while (done < len) {
                ssize_t n = write(fd, text + done, len - done);

                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0) {
                        r = -errno;
                        break;
                }
                done += (size_t) n;
        }
        if (close(fd) < 0 && r == 0)
                r = -errno;
        if (r < 0) {
                snprintf(why, why_size, "cannot write '%s': %s", path, strerror(-r));
                (void) unlink(path);
        }
        return r;
}

int config_include_command(ConfigLoad *ld, const char *command, const char *into, bool if_exists, int at) {
        _cleanup_config_free_ char *output = NULL, *name = NULL, *cache = NULL;
        char why[512];
        unsigned timeout_s = CONFIG_COMMAND_TIMEOUT;
        int r;

        if ((r = config_include_check(ld, at)) < 0)
                return r;
        if (into && into[0] != '/' && ld->dir) {
                if (asprintf(&cache, "%s/%s", ld->dir, into) < 0) {
                        cache = NULL;
                        return config_error(ld->err, ld->file, at, -ENOMEM, "out of memory");
                }
                into = cache;
        }
        if (into && access(into, F_OK) == 0)
                return config_include_file(ld, into, at);
        if (ld->untrusted)
                return config_error(ld->err, ld->file, at, -EPERM, "include command: not run: %s", ld->untrusted);
        r = command_timeout(ld, at, &timeout_s);
        if (r < 0)
                return r;

        r = config_run_command(command, timeout_s, &output, why, sizeof(why));
        if (r < 0 && if_exists && r != -ENOMEM) {
                r = config_warn(ld->cfg, ld->file, at, "include ifexist command '%.200s': %s; nothing included",
                                command, why);
                if (r < 0)
                        return config_error(ld->err, ld->file, at, r, "%s",
                                            r == -E2BIG ? "more than 4096 warnings" : "out of memory");
                return 0;
        }
        if (r < 0)
                return config_error(ld->err, ld->file, at, r, "include command '%.200s': %s", command, why);
        if (into) {
                r = write_cache(into, output, why, sizeof(why));
                if (r < 0)
                        return config_error(ld->err, ld->file, at, r, "include command into: %s", why);
                return config_include_file(ld, into, at);
        }
        if (asprintf(&name, "%s |", command) < 0) {
                name = NULL;
                return config_error(ld->err, ld->file, at, -ENOMEM, "out of memory");
        }
        return config_parse_output(ld, name, output, at);
}
