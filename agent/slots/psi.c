/* SPDX-License-Identifier: Apache-2.0 */
/*
 * psi.c — Linux pressure stall information (PSI): the parser of a pressure
 * file, reading the machine's and a cgroup's, and the ClassAd attributes
 * (see psi.h).
 *
 * The parser never looks past text + len and needs no NUL terminator: the
 * reader hands it a bounded buffer as read, the fuzzer arbitrary bytes.
 * Numbers are parsed by hand, not with strtod(), so that the locale,
 * exponents, hex floats, "inf" and "nan" play no part.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cleanup.h"
#include "psi.h"

enum { KEY_AVG10, KEY_AVG60, KEY_AVG300, KEY_TOTAL, KEY__MAX };
static const char *const key_names[KEY__MAX] = { "avg10", "avg60", "avg300", "total" };
static const char *const kind_names[2] = { "some", "full" };

#define SHOW 32 /* bytes of a bad token quoted in a reason */

static int show_len(size_t n) {
        return n > SHOW ? SHOW : (int) n;
}

static bool is_digit(char c) {
        return c >= '0' && c <= '9';
}

/* A percentage: digits, optionally '.' and digits. NULL, or what is wrong. */
static const char *parse_percent(const char *s, size_t n, double *ret) {
        double ip = 0, frac = 0, scale = 1;
        size_t i = 0, start;

        if (n > 0 && s[0] == '-')
                return "negative";
        for (start = i; i < n && is_digit(s[i]); i++)
                if (ip <= 1000) /* enough to know it is above 100 */
                        ip = ip * 10 + (s[i] - '0');
        if (i == start)
                return "not a decimal number";
        if (i < n && s[i] == '.') {
                for (start = ++i; i < n && is_digit(s[i]); i++)
                        if (scale < 1e15) {
                                frac = frac * 10 + (s[i] - '0');
                                scale *= 10;
                        }
                if (i == start)
                        return "not a decimal number";
        }
        if (i != n)
                return "not a decimal number";
        if (ip + frac / scale > 100)
                return "above 100";
        *ret = ip + frac / scale;
        return NULL;
}

/* A count of microseconds: digits only, up to 2^64-1. */
static const char *parse_total(const char *s, size_t n, uint64_t *ret) {
        uint64_t v = 0;

        if (n > 0 && s[0] == '-')
                return "negative";
        if (n == 0)
                return "not a decimal number";
        for (size_t i = 0; i < n; i++) {
                unsigned d;

                if (!is_digit(s[i]))
                        return "not a decimal number";
                d = (unsigned) (s[i] - '0');
                if (v > (UINT64_MAX - d) / 10)
                        return "beyond 2^64-1";
                v = v * 10 + d;
        }
        *ret = v;
        return NULL;
}

/* The next token of s[0..n) from *pos on, separated by spaces. */
static bool next_token(const char *s, size_t n, size_t *pos, const char **ret, size_t *ret_len) {
        size_t i = *pos, start;

        while (i < n && s[i] == ' ')
                i++;
        if (i == n)
                return false;
        for (start = i; i < n && s[i] != ' '; i++)
                ;
        *ret = s + start;
        *ret_len = i - start;
        *pos = i;
        return true;
}

/* One line, s[0..n) without its newline, into psi (a 'some' or 'full'
 * line; seen[] says which came before). */
static int parse_line(const char *s, size_t n, unsigned lineno, AgentPsi *psi, bool seen[2], char *why,
                      size_t whylen) {
        bool have[KEY__MAX] = {};
        double avg[3] = {};
        uint64_t total = 0;
        const char *tok;
        size_t pos = 0, tlen;
        int kind;

        for (size_t i = 0; i < n; i++) {
                unsigned char c = (unsigned char) s[i];

                if ((c < 0x21 && c != ' ') || c > 0x7e)
                        return glean_why(-EINVAL, why, whylen, "line %u: unexpected byte 0x%02x at column %zu",
                                         lineno, c, i + 1);
        }
        if (!next_token(s, n, &pos, &tok, &tlen))
                return glean_why(-EINVAL, why, whylen, "line %u: empty", lineno);
        if (tlen == 4 && memcmp(tok, "some", 4) == 0)
                kind = 0;
        else if (tlen == 4 && memcmp(tok, "full", 4) == 0)
                kind = 1;
        else
                return glean_why(-EINVAL, why, whylen, "line %u: starts with '%.*s', not 'some' or 'full'", lineno,
                                 show_len(tlen), tok);
        if (seen[kind])
                return glean_why(-EINVAL, why, whylen, "line %u: a second '%s' line", lineno, kind_names[kind]);

        while (next_token(s, n, &pos, &tok, &tlen)) {
                const char *eq = memchr(tok, '=', tlen), *val, *bad = NULL;
                size_t klen, vlen;
                int k;

                if (!eq || eq == tok || eq == tok + tlen - 1)
                        return glean_why(-EINVAL, why, whylen, "line %u (%s): '%.*s' is not key=value", lineno,
                                         kind_names[kind], show_len(tlen), tok);
                klen = (size_t) (eq - tok);
                val = eq + 1;
                vlen = tlen - klen - 1;
                for (k = 0; k < KEY__MAX; k++)
                        if (strlen(key_names[k]) == klen && memcmp(tok, key_names[k], klen) == 0)
                                break;
                if (k == KEY__MAX)
                        continue; /* a key of a newer kernel */
                if (have[k])
                        return glean_why(-EINVAL, why, whylen, "line %u (%s): %s given twice", lineno,
                                         kind_names[kind], key_names[k]);
                have[k] = true;
                if (k == KEY_TOTAL)
                        bad = parse_total(val, vlen, &total);
                else
                        bad = parse_percent(val, vlen, &avg[k]);
                if (bad)
                        return glean_why(-EINVAL, why, whylen, "line %u (%s): %s=%.*s%s is %s", lineno,
                                         kind_names[kind], key_names[k], show_len(vlen), val,
                                         vlen > SHOW ? "..." : "", bad);
        }
        for (int k = 0; k < KEY__MAX; k++)
                if (!have[k])
                        return glean_why(-EINVAL, why, whylen, "line %u (%s): %s missing", lineno, kind_names[kind],
                                         key_names[k]);

        seen[kind] = true;
        *(kind == 0 ? &psi->some : &psi->full) =
                (AgentPsiLine){ .avg10 = avg[0], .avg60 = avg[1], .avg300 = avg[2], .total = total };
        return 0;
}

int agent_psi_parse(const char *text, size_t len, AgentPsi *ret, char *why, size_t whylen) {
        AgentPsi psi = {};
        bool seen[2] = {};
        const char *nul;
        unsigned lineno = 0;
        size_t pos = 0;
        int r;

        if (!ret)
                return -EINVAL;
        if (!text && len > 0)
                return glean_why(-EINVAL, why, whylen, "no text");
        if (len == 0)
                return glean_why(-EINVAL, why, whylen, "empty text");
        if (len > AGENT_PSI_MAX_TEXT)
                return glean_why(-EINVAL, why, whylen, "%zu bytes, more than %d", len, AGENT_PSI_MAX_TEXT);
        nul = memchr(text, '\0', len);
        if (nul) {
                unsigned at = 1;

                for (const char *p = text; p < nul; p++)
                        at += *p == '\n';
                return glean_why(-EINVAL, why, whylen, "line %u: NUL byte", at);
        }

        while (pos < len) {
                const char *line = text + pos, *nl = memchr(line, '\n', len - pos);
                size_t n;

                lineno++;
                n = nl ? (size_t) (nl - line) : len - pos;
                if (n > AGENT_PSI_MAX_LINE)
                        return glean_why(-EINVAL, why, whylen, "line %u: longer than %d bytes", lineno,
                                         AGENT_PSI_MAX_LINE);
                if (!nl)
                        return glean_why(-EINVAL, why, whylen, "line %u: no newline at the end", lineno);
                r = parse_line(line, n, lineno, &psi, seen, why, whylen);
                if (r < 0)
                        return r;
                pos += n + 1;
        }
        if (!seen[0])
                return glean_why(-EINVAL, why, whylen, "no 'some' line");
        psi.has_full = seen[1];
        *ret = psi;
        return 0;
}

/* ---- reading ---- */

/* Up to size bytes of dirfd/file into buf: size - 1 or fewer when the file
 * fits, size when it is too long. */
static int read_at(int dirfd, const char *file, char *buf, size_t size, size_t *ret_len) {
        _cleanup_close_ int fd = -1;
        size_t len = 0;

        fd = openat(dirfd, file, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return -errno;
        while (len < size) {
                ssize_t n = read(fd, buf + len, size - len);

                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return -errno;
                if (n == 0)
                        break;
                len += (size_t) n;
        }
        *ret_len = len;
        return 0;
}

static int read_set(int dirfd, const char *where, const char *const files[AGENT_PSI__MAX], AgentPsiSet *ret,
                    char *why, size_t whylen) {
        AgentPsiSet set = {};
        unsigned found = 0;
        int first = 0;

        for (int i = 0; i < AGENT_PSI__MAX; i++) {
                char buf[AGENT_PSI_MAX_TEXT + 1], reason[256];
                size_t len = 0;
                int r;

                r = read_at(dirfd, files[i], buf, sizeof(buf), &len);
                if (r == -ENOENT || r == -EOPNOTSUPP)
                        continue;
                if (r < 0)
                        snprintf(reason, sizeof(reason), "%s", strerror(-r));
                else if (len == sizeof(buf))
                        r = glean_why(-EINVAL, reason, sizeof(reason), "longer than %d bytes", AGENT_PSI_MAX_TEXT);
                else
                        r = agent_psi_parse(buf, len, &set.psi[i], reason, sizeof(reason));
                if (r < 0) {
                        if (first == 0)
                                first = glean_why(r, why, whylen, "%s%s: %s", where, files[i], reason);
                        continue;
                }
                set.available[i] = true;
                found++;
        }
        *ret = set;
        if (first < 0)
                return first;
        if (found == 0)
                return glean_why(-ENOENT, why, whylen, "no %s%s, %s%s or %s%s", where, files[0], where, files[1],
                                 where, files[2]);
        return 0;
}

int agent_psi_read_dir(int dirfd, AgentPsiSet *ret, char *why, size_t whylen) {
        static const char *const files[AGENT_PSI__MAX] = { "cpu.pressure", "memory.pressure", "io.pressure" };

        if (!ret)
                return -EINVAL;
        return read_set(dirfd, "", files, ret, why, whylen);
}

int agent_psi_read_machine(AgentPsiSet *ret, char *why, size_t whylen) {
        static const char *const files[AGENT_PSI__MAX] = { "cpu", "memory", "io" };
        _cleanup_close_ int dirfd = -1;

        if (!ret)
                return -EINVAL;
        dirfd = open("/proc/pressure", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dirfd < 0) {
                int r = -errno;

                *ret = (AgentPsiSet){};
                if (r == -ENOENT)
                        return glean_why(r, why, whylen, "no /proc/pressure");
                return glean_why(r, why, whylen, "cannot open /proc/pressure: %s", strerror(-r));
        }
        return read_set(dirfd, "/proc/pressure/", files, ret, why, whylen);
}

/* ---- the ad ---- */

int agent_psi_to_ad(const AgentPsiSet *p, const char *prefix, ClassAd *ad) {
        static const char *const res_names[AGENT_PSI__MAX] = { "Cpu", "Memory", "Io" };
        static const char *const kinds[2] = { "Some", "Full" };
        static const char *const windows[3] = { "10", "60", "300" };

        if (!p || !ad)
                return -EINVAL;
        if (!prefix)
                prefix = "";
        if (strlen(prefix) > 64)
                return -EINVAL;
        for (int i = 0; i < AGENT_PSI__MAX; i++)
                for (int k = 0; k < 2; k++) {
                        const AgentPsiLine *l = k == 0 ? &p->psi[i].some : &p->psi[i].full;
                        bool set = p->available[i] && (k == 0 || p->psi[i].has_full);
                        double v[3] = { l->avg10, l->avg60, l->avg300 };

                        for (int w = 0; w < 3; w++) {
                                char name[128];
                                int r;

                                snprintf(name, sizeof(name), "%s%sPressure%s%s", prefix, res_names[i], kinds[k],
                                         windows[w]);
                                if (set) {
                                        r = classad_set_real(ad, name, v[w]);
                                        if (r < 0)
                                                return r;
                                } else
                                        (void) classad_delete(ad, name);
                        }
                }
        return 0;
}
