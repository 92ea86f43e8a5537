/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sensors.c — loads the kernel programs of input.bpf.c and load.bpf.c
 * (their generated skeletons), one method at a time until the kernel
 * accepts one, and reads what they record; the "evdev" method in user
 * space. See sensors.h.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/input.h>
#include <linux/types.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "sensors-shared.h"
#include "sensors.h"

#include "input.skel.h"
#include "load.skel.h"

#define MAX_EVDEV 64

typedef enum Method {
        METHOD_NONE,
        METHOD_FENTRY,
        METHOD_KPROBE,
        METHOD_IRQ,
        METHOD_EVDEV,
        METHOD_TP_BTF,
} Method;

static const char *const method_names[] = {
        [METHOD_NONE] = "none",     [METHOD_FENTRY] = "fentry", [METHOD_KPROBE] = "kprobe",
        [METHOD_IRQ] = "irq",       [METHOD_EVDEV] = "evdev",   [METHOD_TP_BTF] = "tp_btf",
};

typedef struct Evdev {
        int fd;
        dev_t rdev;
} Evdev;

struct GleanSensors {
        Method method[_GLEAN_SENSOR_MAX];
        char refused[_GLEAN_SENSOR_MAX][512];
        struct glean_load *load;
        struct glean_input *input; /* the input sensor's instance */
        struct glean_input *tty;   /* the tty sensor's instance */
        /* evdev */
        int epfd;
        Evdev evdev[MAX_EVDEV];
        size_t n_evdev;
        uint64_t ev_last[GLEAN_INPUT_NCLASS], ev_count[GLEAN_INPUT_NCLASS];
        /* slots */
        int ncpus;
        uint64_t slot_cgid[GLEAN_LOAD_MAX_SLOTS]; /* 0: free */
        uint32_t slot_level[GLEAN_LOAD_MAX_SLOTS];
};

const char *glean_sensor_kind_name(GleanSensorKind kind) {
        static const char *const names[] = { "input", "tty", "load" };
        return kind < _GLEAN_SENSOR_MAX ? names[kind] : "?";
}

const char *glean_sensors_method(const GleanSensors *s, GleanSensorKind kind) {
        return s && kind < _GLEAN_SENSOR_MAX ? method_names[s->method[kind]] : "none";
}

const char *glean_sensors_refused(const GleanSensors *s, GleanSensorKind kind) {
        return s && kind < _GLEAN_SENSOR_MAX ? s->refused[kind] : "";
}

int glean_sensors_event_class(unsigned type, unsigned code) {
        return glean_input_event_class(type, code);
}

/* ---- libbpf's messages: kept, the last warning gives a refusal its reason ---- */

/* The first warning since the last refusal ("" when none). */
static char libbpf_last[256];

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
        __attribute__((format(printf, 2, 0)));

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap) {
        if (getenv("GLEAN_BPF_DEBUG"))
                return vfprintf(stderr, fmt, ap);
        if (level == LIBBPF_DEBUG)
                return 0;
        if (libbpf_last[0])
                return 0; /* the first warning says why; the rest is consequences */
        char line[sizeof libbpf_last];
        vsnprintf(line, sizeof line, fmt, ap);
        line[strcspn(line, "\n")] = 0;
        const char *p = strncmp(line, "libbpf: ", 8) == 0 ? line + 8 : line;
        snprintf(libbpf_last, sizeof libbpf_last, "%s", p);
        return 0;
}

static void refuse(GleanSensors *s, GleanSensorKind kind, const char *method, int err, const char *fmt, ...)
        __attribute__((format(printf, 5, 6)));

static void refuse(GleanSensors *s, GleanSensorKind kind, const char *method, int err, const char *fmt, ...) {
        char why[256];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(why, sizeof why, fmt, ap);
        va_end(ap);
        char *r = s->refused[kind];
        size_t len = strlen(r);
        snprintf(r + len, sizeof s->refused[kind] - len, "%s%s: %s%s%s%s", len ? "; " : "", method, why,
                 err ? " (" : "", err ? strerror(abs(err)) : "", err ? ")" : "");
        libbpf_last[0] = 0;
}

/* ---- the "irq" method's interrupts ---- */

static bool name_in(const char *tok, size_t len, char *const *names) {
        for (size_t i = 0; names && names[i]; i++)
                if (strlen(names[i]) == len && strncmp(tok, names[i], len) == 0)
                        return true;
        return false;
}

size_t glean_sensors_parse_interrupts(const char *text, char *const *names, uint32_t *irqs, size_t max) {
        size_t n = 0;
        for (const char *line = text; line && *line && n < max;) {
                const char *end = strchr(line, '\n');
                size_t llen = end ? (size_t) (end - line) : strlen(line);
                const char *p = line;
                while (p < line + llen && *p == ' ')
                        p++;
                char *num_end;
                unsigned long irq = strtoul(p, &num_end, 10);
                if (num_end > p && num_end < line + llen && *num_end == ':' && irq <= UINT32_MAX) {
                        /* The device names are among the words after the counts. */
                        const char *w = num_end + 1;
                        bool found = false;
                        while (w < line + llen && !found) {
                                while (w < line + llen && (*w == ' ' || *w == '\t' || *w == ','))
                                        w++;
                                const char *we = w;
                                while (we < line + llen && *we != ' ' && *we != '\t' && *we != ',')
                                        we++;
                                if (we > w && name_in(w, (size_t) (we - w), names))
                                        found = true;
                                w = we;
                        }
                        if (found)
                                irqs[n++] = (uint32_t) irq;
                }
                line = end ? end + 1 : NULL;
        }
        return n;
}

static int irqs_configure(struct glean_input *o, char *const *names, char *why, size_t whylen) {
        static char *const i8042[] = { (char *) "i8042", NULL }; /* PS/2: most laptops' own keyboard */
        if (!names)
                names = i8042;
        if (!names[0]) {
                snprintf(why, whylen, "no interrupt is named (INPUT_SENSOR_IRQS is empty)");
                return -ENOENT;
        }
        FILE *f = fopen("/proc/interrupts", "re");
        if (!f) {
                snprintf(why, whylen, "cannot read /proc/interrupts");
                return -errno;
        }
        char *text = NULL;
        size_t cap = 0;
        ssize_t got = getdelim(&text, &cap, 0, f);
        fclose(f);
        if (got < 0) {
                free(text);
                snprintf(why, whylen, "cannot read /proc/interrupts");
                return -EIO;
        }
        uint32_t irqs[64];
        size_t n = glean_sensors_parse_interrupts(text, names, irqs, 64);
        free(text);
        if (n == 0) {
                snprintf(why, whylen, "no interrupt of /proc/interrupts has one of the names configured");
                return -ENOENT;
        }
        for (size_t i = 0; i < n; i++) {
                uint32_t cls = GLEAN_INPUT_KEYBOARD;
                int r = bpf_map__update_elem(o->maps.input_irqs, &irqs[i], sizeof irqs[i], &cls, sizeof cls, BPF_ANY);
                if (r < 0) {
                        snprintf(why, whylen, "cannot fill the interrupt map");
                        return r;
                }
        }
        return 0;
}

/* ---- kernel instances ---- */

static struct bpf_program *input_prog(struct glean_input *o, GleanSensorKind kind, Method m) {
        if (kind == GLEAN_SENSOR_INPUT)
                return m == METHOD_FENTRY ? o->progs.input_fentry
                       : m == METHOD_KPROBE ? o->progs.input_kprobe
                       : m == METHOD_IRQ    ? o->progs.input_irq
                                            : NULL;
        return m == METHOD_FENTRY ? o->progs.tty_fentry : m == METHOD_KPROBE ? o->progs.tty_kprobe : NULL;
}

/* One instance of input.bpf.o with the one program of (kind, m). */
static int input_try(GleanSensors *s, GleanSensorKind kind, Method m, char *const *irq_names,
                     struct glean_input **ret) {
        const char *mn = method_names[m];
        libbpf_last[0] = 0;
        struct glean_input *o = glean_input__open();
        if (!o) {
                refuse(s, kind, mn, errno, "cannot open the program");
                return -errno;
        }
        struct bpf_program *p;
        bpf_object__for_each_program(p, o->obj) bpf_program__set_autoload(p, false);
        struct bpf_program *want = input_prog(o, kind, m);
        bpf_program__set_autoload(want, true);
        int r;
        if (s->load && (r = bpf_map__reuse_fd(o->maps.slot_ids, bpf_map__fd(s->load->maps.slot_ids))) < 0) {
                refuse(s, kind, mn, r, "cannot share the slot map");
                goto fail;
        }
        if ((r = glean_input__load(o)) < 0) {
                refuse(s, kind, mn, libbpf_last[0] ? 0 : r, "the kernel refused the program%s%s", libbpf_last[0] ? ": " : "",
                       libbpf_last);
                goto fail;
        }
        if (m == METHOD_IRQ) {
                char why[200];
                if ((r = irqs_configure(o, irq_names, why, sizeof why)) < 0) {
                        refuse(s, kind, mn, 0, "%s", why);
                        goto fail;
                }
        }
        if ((r = glean_input__attach(o)) < 0) {
                refuse(s, kind, mn, libbpf_last[0] ? 0 : r, "the kernel refused to attach it%s%s", libbpf_last[0] ? ": " : "",
                       libbpf_last);
                goto fail;
        }
        *ret = o;
        return 0;
fail:
        glean_input__destroy(o);
        return r < 0 ? r : -EINVAL;
}

static int load_open(GleanSensors *s) {
        libbpf_last[0] = 0;
        struct glean_load *o = glean_load__open();
        int r;
        if (!o) {
                refuse(s, GLEAN_SENSOR_LOAD, "tp_btf", errno, "cannot open the program");
                return -errno;
        }
        if ((r = glean_load__load(o)) < 0) {
                refuse(s, GLEAN_SENSOR_LOAD, "tp_btf", libbpf_last[0] ? 0 : r, "the kernel refused the programs%s%s",
                       libbpf_last[0] ? ": " : "", libbpf_last);
                glean_load__destroy(o);
                return r;
        }
        if ((r = glean_load__attach(o)) < 0) {
                refuse(s, GLEAN_SENSOR_LOAD, "tp_btf", libbpf_last[0] ? 0 : r, "the kernel refused to attach them%s%s",
                       libbpf_last[0] ? ": " : "", libbpf_last);
                glean_load__destroy(o);
                return r;
        }
        s->load = o;
        s->method[GLEAN_SENSOR_LOAD] = METHOD_TP_BTF;
        return 0;
}

/* ---- the "evdev" method ---- */

static int evdev_scan(GleanSensors *s) {
        DIR *d = opendir("/dev/input");
        if (!d)
                return -errno;
        struct dirent *de;
        int added = 0;
        while ((de = readdir(d)) && s->n_evdev < MAX_EVDEV) {
                if (strncmp(de->d_name, "event", 5) != 0)
                        continue;
                struct stat st;
                if (fstatat(dirfd(d), de->d_name, &st, 0) < 0 || !S_ISCHR(st.st_mode))
                        continue;
                bool known = false;
                for (size_t i = 0; i < s->n_evdev; i++)
                        known |= s->evdev[i].rdev == st.st_rdev;
                if (known)
                        continue;
                int fd = openat(dirfd(d), de->d_name, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
                if (fd < 0)
                        continue;
                struct epoll_event ev = { .events = EPOLLIN, .data.u32 = (uint32_t) s->n_evdev };
                if (epoll_ctl(s->epfd, EPOLL_CTL_ADD, fd, &ev) < 0) {
                        close(fd);
                        continue;
                }
                s->evdev[s->n_evdev++] = (Evdev) { .fd = fd, .rdev = st.st_rdev };
                added++;
        }
        closedir(d);
        return added;
}

static void evdev_drop(GleanSensors *s, size_t i) {
        epoll_ctl(s->epfd, EPOLL_CTL_DEL, s->evdev[i].fd, NULL);
        close(s->evdev[i].fd);
        s->evdev[i] = s->evdev[--s->n_evdev];
        if (i < s->n_evdev) { /* the moved one's epoll data names its old index */
                struct epoll_event ev = { .events = EPOLLIN, .data.u32 = (uint32_t) i };
                epoll_ctl(s->epfd, EPOLL_CTL_MOD, s->evdev[i].fd, &ev);
        }
}

uint64_t glean_sensors_boot_ns(void) {
        struct timespec ts;
        clock_gettime(CLOCK_BOOTTIME, &ts);
        return (uint64_t) ts.tv_sec * 1000000000ULL + (uint64_t) ts.tv_nsec;
}

int glean_sensors_dispatch(GleanSensors *s) {
        if (s->epfd < 0)
                return 0;
        struct epoll_event evs[16];
        int n = epoll_wait(s->epfd, evs, 16, 0);
        if (n < 0)
                return errno == EINTR ? 0 : -errno;
        for (int k = 0; k < n; k++) {
                size_t i = evs[k].data.u32;
                if (i >= s->n_evdev)
                        continue;
                struct input_event buf[64];
                ssize_t got;
                while ((got = read(s->evdev[i].fd, buf, sizeof buf)) > 0)
                        for (size_t e = 0; e < (size_t) got / sizeof *buf; e++) {
                                int cls = glean_input_event_class(buf[e].type, buf[e].code);
                                if (cls < 0)
                                        continue;
                                s->ev_last[cls] = glean_sensors_boot_ns();
                                s->ev_count[cls]++;
                        }
                if (got < 0 && errno != EAGAIN && errno != EINTR) /* unplugged: ENODEV */
                        evdev_drop(s, i);
        }
        return 0;
}

int glean_sensors_rescan(GleanSensors *s) {
        return s && s->method[GLEAN_SENSOR_INPUT] == METHOD_EVDEV ? evdev_scan(s) : 0;
}

int glean_sensors_fd(const GleanSensors *s) {
        return s ? s->epfd : -1;
}

static int evdev_try(GleanSensors *s) {
        s->epfd = epoll_create1(EPOLL_CLOEXEC);
        if (s->epfd < 0) {
                refuse(s, GLEAN_SENSOR_INPUT, "evdev", errno, "epoll");
                return -errno;
        }
        int r = evdev_scan(s);
        if (r <= 0) {
                refuse(s, GLEAN_SENSOR_INPUT, "evdev", r, "no readable event device in /dev/input");
                close(s->epfd);
                s->epfd = -1;
                return r < 0 ? r : -ENODEV;
        }
        return 0;
}

/* ---- opening ---- */

static Method method_parse(const char *name) {
        for (size_t m = 1; m < sizeof method_names / sizeof *method_names; m++)
                if (strcasecmp(name, method_names[m]) == 0)
                        return (Method) m;
        return METHOD_NONE;
}

static void sense(GleanSensors *s, GleanSensorKind kind, char *const *methods, const char *const *defaults,
                  char *const *irq_names) {
        size_t n = 0;
        for (; methods ? methods[n] != NULL : defaults[n] != NULL; n++) {
                const char *name = methods ? methods[n] : defaults[n];
                Method m = method_parse(name);
                int r;
                if (m == METHOD_EVDEV && kind == GLEAN_SENSOR_INPUT)
                        r = evdev_try(s);
                else if (m == METHOD_FENTRY || m == METHOD_KPROBE || (m == METHOD_IRQ && kind == GLEAN_SENSOR_INPUT))
                        r = input_try(s, kind, m, irq_names, kind == GLEAN_SENSOR_INPUT ? &s->input : &s->tty);
                else {
                        refuse(s, kind, name, 0, "not a method of the %s sensor", glean_sensor_kind_name(kind));
                        continue;
                }
                if (r == 0) {
                        s->method[kind] = m;
                        return;
                }
        }
}

int glean_sensors_open(const GleanSensorConfig *cfg, GleanSensors **ret) {
        static const char *const input_defaults[] = { "fentry", "kprobe", "irq", "evdev", NULL };
        static const char *const tty_defaults[] = { "fentry", "kprobe", NULL };
        GleanSensors *s = calloc(1, sizeof *s);
        if (!s)
                return -ENOMEM;
        s->epfd = -1;
        s->ncpus = libbpf_num_possible_cpus();
        if (s->ncpus <= 0) {
                free(s);
                return -EIO;
        }
        libbpf_set_print(libbpf_print);
        if (cfg->load)
                load_open(s);
        sense(s, GLEAN_SENSOR_INPUT, cfg->input_methods, input_defaults, cfg->irq_names);
        sense(s, GLEAN_SENSOR_TTY, cfg->tty_methods, tty_defaults, NULL);
        *ret = s;
        return 0;
}

void glean_sensors_free(GleanSensors *s) {
        if (!s)
                return;
        glean_input__destroy(s->input);
        glean_input__destroy(s->tty);
        glean_load__destroy(s->load);
        for (size_t i = 0; i < s->n_evdev; i++)
                close(s->evdev[i].fd);
        if (s->epfd >= 0)
                close(s->epfd);
        free(s);
}

/* ---- reading ---- */

int glean_sensors_input(GleanSensors *s, GleanInputClass c, uint64_t *ret_last_ns, uint64_t *ret_count) {
        if (!s || c >= _GLEAN_INPUT_CLASS_MAX)
                return -EINVAL;
        uint64_t last = 0, count = 0;
        struct glean_input *inst[] = { s->input, s->tty };
        for (size_t i = 0; i < 2; i++) {
                if (!inst[i])
                        continue;
                uint32_t key = (uint32_t) c;
                struct glean_input_rec rec;
                if (bpf_map__lookup_elem(inst[i]->maps.input_last, &key, sizeof key, &rec, sizeof rec, 0) < 0)
                        continue;
                if (rec.last_ns > last)
                        last = rec.last_ns;
                count += rec.count;
        }
        if (s->ev_last[c] > last)
                last = s->ev_last[c];
        count += s->ev_count[c];
        *ret_last_ns = last;
        if (ret_count)
                *ret_count = count;
        return 0;
}

/* ---- slots ---- */

/* The level of the cgroup at fd: its distance from the hierarchy's root
 * (the mount's root; in a cgroup namespace that is less than the kernel's
 * level, which only makes the programs' shortcut take fewer shortcuts). */
static int cgroup_level(int fd, uint32_t *ret) {
        struct stat st;
        if (fstat(fd, &st) < 0)
                return -errno;
        dev_t dev = st.st_dev;
        int cur = dup(fd);
        uint32_t level = 0;
        while (cur >= 0 && level < 256) {
                int up = openat(cur, "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                close(cur);
                cur = up;
                if (up < 0 || fstat(up, &st) < 0 || st.st_dev != dev)
                        break;
                level++;
        }
        if (cur >= 0)
                close(cur);
        *ret = level;
        return 0;
}

static void slot_level_publish(GleanSensors *s) {
        uint32_t min = 0;
        for (size_t i = 0; i < GLEAN_LOAD_MAX_SLOTS; i++)
                if (s->slot_cgid[i] && (min == 0 || s->slot_level[i] < min))
                        min = s->slot_level[i];
        /* A slot at level 0 (the root cgroup) is refused by slot_add. */
        /* The programs' caches of which cgroup is in which slot are stale now. */
        if (s->load) {
                s->load->bss->slot_min_level = min;
                __atomic_add_fetch(&s->load->bss->slot_gen, 1, __ATOMIC_SEQ_CST);
        }
        if (s->tty) {
                s->tty->bss->slot_min_level = min;
                __atomic_add_fetch(&s->tty->bss->slot_gen, 1, __ATOMIC_SEQ_CST);
        }
        if (s->input) {
                s->input->bss->slot_min_level = min;
                __atomic_add_fetch(&s->input->bss->slot_gen, 1, __ATOMIC_SEQ_CST);
        }
}

int glean_sensors_slot_add(GleanSensors *s, int cgroup_fd, unsigned *ret_idx) {
        if (!s || !s->load)
                return -EOPNOTSUPP;
        struct stat st;
        if (fstat(cgroup_fd, &st) < 0)
                return -errno;
        uint64_t cgid = (uint64_t) st.st_ino;
        uint32_t level = 0;
        int r = cgroup_level(cgroup_fd, &level);
        if (r < 0)
                return r;
        if (level == 0)
                return -EINVAL;
        unsigned idx = 0;
        while (idx < GLEAN_LOAD_MAX_SLOTS && s->slot_cgid[idx])
                idx++;
        if (idx == GLEAN_LOAD_MAX_SLOTS)
                return -ENOSPC;
        size_t sz = (size_t) s->ncpus * sizeof(struct glean_load_cpu);
        struct glean_load_cpu *zero = calloc((size_t) s->ncpus, sizeof *zero);
        if (!zero)
                return -ENOMEM;
        uint32_t key = idx;
        r = bpf_map__update_elem(s->load->maps.load_cpu, &key, sizeof key, zero, sz, BPF_ANY);
        free(zero);
        if (r < 0)
                return r;
        if ((r = bpf_map__update_elem(s->load->maps.slot_cgids, &key, sizeof key, &cgid, sizeof cgid, BPF_ANY)) < 0)
                return r;
        if ((r = bpf_map__update_elem(s->load->maps.slot_ids, &cgid, sizeof cgid, &key, sizeof key, BPF_ANY)) < 0)
                return r;
        s->slot_cgid[idx] = cgid;
        s->slot_level[idx] = level;
        slot_level_publish(s);
        *ret_idx = idx;
        return 0;
}

int glean_sensors_slot_remove(GleanSensors *s, unsigned idx) {
        if (!s || !s->load || idx >= GLEAN_LOAD_MAX_SLOTS || !s->slot_cgid[idx])
                return -EINVAL;
        bpf_map__delete_elem(s->load->maps.slot_ids, &s->slot_cgid[idx], sizeof s->slot_cgid[idx], 0);
        uint32_t key = idx;
        uint64_t none = 0;
        bpf_map__update_elem(s->load->maps.slot_cgids, &key, sizeof key, &none, sizeof none, BPF_ANY);
        s->slot_cgid[idx] = 0;
        slot_level_publish(s);
        return 0;
}

int glean_sensors_slot_runnable(GleanSensors *s, unsigned idx, uint64_t *ret_integral, uint64_t *ret_now_ns) {
        if (!s || !s->load || idx >= GLEAN_LOAD_MAX_SLOTS || !s->slot_cgid[idx])
                return -EINVAL;
        struct glean_load_cpu *v = calloc((size_t) s->ncpus, sizeof *v);
        if (!v)
                return -ENOMEM;
        uint32_t key = idx;
        int r = bpf_map__lookup_elem(s->load->maps.load_cpu, &key, sizeof key, v,
                                     (size_t) s->ncpus * sizeof *v, 0);
        if (r < 0) {
                free(v);
                return r;
        }
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        uint64_t now = (uint64_t) ts.tv_sec * 1000000000ULL + (uint64_t) ts.tv_nsec;
        uint64_t sum = 0;
        for (int c = 0; c < s->ncpus; c++) {
                uint64_t dt = v[c].last_ns && now > v[c].last_ns ? now - v[c].last_ns : 0;
                sum += v[c].integral + v[c].nr * dt; /* modulo 2^64, see sensors-shared.h */
        }
        free(v);
        *ret_integral = sum;
        *ret_now_ns = now;
        return 0;
}

int glean_sensors_prog_fds(const GleanSensors *s, GleanSensorKind kind, int *fds, size_t max) {
        if (!s || kind >= _GLEAN_SENSOR_MAX)
                return -EINVAL;
        size_t n = 0;
        struct bpf_program *p;
        struct bpf_object *obj = kind == GLEAN_SENSOR_LOAD    ? (s->load ? s->load->obj : NULL)
                                 : kind == GLEAN_SENSOR_INPUT ? (s->input ? s->input->obj : NULL)
                                                              : (s->tty ? s->tty->obj : NULL);
        if (!obj)
                return 0;
        bpf_object__for_each_program(p, obj) {
                int fd = bpf_program__fd(p);
                if (fd >= 0 && n < max)
                        fds[n++] = fd;
        }
        return (int) n;
}
