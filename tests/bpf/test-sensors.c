/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test-sensors.c — the kernel sensors of bpf/ on the machine the tests run
 * on: the scheduler probes count a busy slot's runnable task and not an
 * idle slot's; the input methods this kernel refuses are refused with
 * their reasons and the next one taken; the pure helpers (interrupt
 * names, event classes). Needs root and BTF (tp_btf); skipped without
 * them, failed in the VM rig (GLEAN_VM=1), which has everything, and
 * where the fentry, kprobe and evdev methods are tested with uinput key
 * presses.
 */
#define _GNU_SOURCE
#include <linux/input.h>
#include <linux/uinput.h>

#include "bpf/sensors.h"
#include "tests/agent/cgroup-test.h"

static CgTestEnv env;
static bool in_vm;

/* ---- pure ---- */

static const char interrupts[] =
        "           CPU0       CPU1       \n"
        "  1:          9          0   IO-APIC    1-edge      i8042\n"
        "  8:          0          0   IO-APIC    8-edge      rtc0\n"
        " 12:        144          0   IO-APIC   12-edge      i8042\n"
        " 16:       1000         10   IO-APIC   16-fasteoi   ehci_hcd:usb1, i801_smbus\n"
        " 26:          0          8   IO-APIC    4-edge      ttyS0\n"
        "NMI:          0          0   Non-maskable interrupts\n"
        "LOC:      12345      12345   Local timer interrupts\n"
        "ERR:          0\n"
        " 99:  truncated";

static void test_parse_interrupts(void) {
        static const struct {
                const char *names[3];
                size_t n;
                uint32_t irqs[3];
        } rows[] = {
                { { "i8042" }, 2, { 1, 12 } },
                { { "i801_smbus" }, 1, { 16 } },      /* a shared line, second name */
                { { "ehci_hcd:usb1", "ttyS0" }, 2, { 16, 26 } },
                { { "i804" }, 0, { 0 } },             /* whole names only */
                { { "Local" }, 0, { 0 } },            /* not numbered interrupts */
                { { "IO-APIC" }, 5, { 1, 8, 12 } },   /* a word of the line: taken (max 3) */
                { { NULL }, 0, { 0 } },
        };
        for (size_t i = 0; i < sizeof rows / sizeof *rows; i++) {
                uint32_t irqs[8] = { 0 };
                size_t max = rows[i].n > 3 ? 3 : 8;
                size_t n = glean_sensors_parse_interrupts(interrupts, (char *const *) rows[i].names, irqs, max);
                size_t want = rows[i].n > 3 ? 3 : rows[i].n;
                GLEAN_TEST_CHECK(n == want, "row %zu: %zu interrupts, want %zu", i, n, want);
                for (size_t k = 0; k < n && k < 3; k++)
                        GLEAN_TEST_CHECK(irqs[k] == rows[i].irqs[k], "row %zu: irq %u, want %u", i, irqs[k],
                                         rows[i].irqs[k]);
        }
        char *names[] = { (char *) "x", NULL };
        CU_ASSERT_EQUAL(glean_sensors_parse_interrupts("", names, NULL, 4), 0);
        CU_ASSERT_EQUAL(glean_sensors_parse_interrupts("7:", names, NULL, 4), 0);
        CU_ASSERT_EQUAL(glean_sensors_parse_interrupts(":x\n\n  :\n", names, NULL, 4), 0);
}

static void test_event_class(void) {
        CU_ASSERT_EQUAL(glean_sensors_event_class(EV_KEY, KEY_A), GLEAN_INPUT_CLASS_KEYBOARD);
        CU_ASSERT_EQUAL(glean_sensors_event_class(EV_KEY, KEY_ESC), GLEAN_INPUT_CLASS_KEYBOARD);
        CU_ASSERT_EQUAL(glean_sensors_event_class(EV_KEY, KEY_OK), GLEAN_INPUT_CLASS_KEYBOARD);
        CU_ASSERT_EQUAL(glean_sensors_event_class(EV_KEY, KEY_POWER), GLEAN_INPUT_CLASS_KEYBOARD);
        CU_ASSERT_EQUAL(glean_sensors_event_class(EV_KEY, BTN_LEFT), GLEAN_INPUT_CLASS_POINTER);
        CU_ASSERT_EQUAL(glean_sensors_event_class(EV_KEY, BTN_TOUCH), GLEAN_INPUT_CLASS_POINTER);
        CU_ASSERT_EQUAL(glean_sensors_event_class(EV_KEY, BTN_DPAD_UP), GLEAN_INPUT_CLASS_POINTER);
        CU_ASSERT_EQUAL(glean_sensors_event_class(EV_KEY, BTN_TRIGGER_HAPPY1), GLEAN_INPUT_CLASS_POINTER);
        CU_ASSERT_EQUAL(glean_sensors_event_class(EV_REL, REL_X), GLEAN_INPUT_CLASS_POINTER);
        CU_ASSERT_EQUAL(glean_sensors_event_class(EV_ABS, ABS_X), GLEAN_INPUT_CLASS_POINTER);
        CU_ASSERT_EQUAL(glean_sensors_event_class(EV_SYN, SYN_REPORT), -1);
        CU_ASSERT_EQUAL(glean_sensors_event_class(EV_MSC, MSC_SCAN), -1);
        CU_ASSERT_EQUAL(glean_sensors_event_class(EV_LED, LED_CAPSL), -1);
        CU_ASSERT_EQUAL(glean_sensors_event_class(EV_SW, SW_LID), -1);
}

/* ---- methods ---- */

static GleanSensors *open_with(const char *input, const char *tty, bool load) {
        char *in[5] = { NULL }, *tt[5] = { NULL };
        char bi[64], bt[64];
        size_t n = 0;
        snprintf(bi, sizeof bi, "%s", input);
        for (char *save = NULL, *w = strtok_r(bi, " ", &save); w && n < 4; w = strtok_r(NULL, " ", &save))
                in[n++] = w;
        n = 0;
        snprintf(bt, sizeof bt, "%s", tty);
        for (char *save = NULL, *w = strtok_r(bt, " ", &save); w && n < 4; w = strtok_r(NULL, " ", &save))
                tt[n++] = w;
        GleanSensorConfig cfg = { .input_methods = in, .tty_methods = tt, .load = load };
        GleanSensors *s = NULL;
        int r = glean_sensors_open(&cfg, &s);
        GLEAN_TEST_CHECK_FATAL(r == 0 && s, "glean_sensors_open: %s", strerror(-r));
        return s;
}

/* Unknown methods, and methods of the wrong sensor, are refused by name. */
static void test_bad_methods(void) {
        GleanSensors *s = open_with("bogus tp_btf", "irq evdev", false);
        CU_ASSERT_STRING_EQUAL(glean_sensors_method(s, GLEAN_SENSOR_INPUT), "none");
        CU_ASSERT_STRING_EQUAL(glean_sensors_method(s, GLEAN_SENSOR_TTY), "none");
        CU_ASSERT_STRING_EQUAL(glean_sensors_method(s, GLEAN_SENSOR_LOAD), "none");
        const char *r = glean_sensors_refused(s, GLEAN_SENSOR_INPUT);
        GLEAN_TEST_CHECK(strstr(r, "bogus: not a method of the input sensor") &&
                                 strstr(r, "tp_btf: not a method of the input sensor"),
                         "refused: %s", r);
        r = glean_sensors_refused(s, GLEAN_SENSOR_TTY);
        GLEAN_TEST_CHECK(strstr(r, "irq: not a method") && strstr(r, "evdev: not a method"), "refused: %s", r);
        uint64_t last = 1, count = 1;
        CU_ASSERT_EQUAL(glean_sensors_input(s, GLEAN_INPUT_CLASS_KEYBOARD, &last, &count), 0);
        CU_ASSERT_EQUAL(last, 0);
        CU_ASSERT_EQUAL(count, 0);
        unsigned idx;
        CU_ASSERT_EQUAL(glean_sensors_slot_add(s, AT_FDCWD, &idx), -EOPNOTSUPP);
        CU_ASSERT_EQUAL(glean_sensors_fd(s), -1);
        glean_sensors_free(s);
}

/* The irq method with no interrupt of that name is refused, saying so. */
static void test_irq_refused(void) {
        char *in[] = { (char *) "irq", NULL }, *none[] = { NULL };
        char *irqs[] = { (char *) "no-such-interrupt-here", NULL };
        GleanSensorConfig cfg = { .input_methods = in, .tty_methods = none, .irq_names = irqs };
        GleanSensors *s = NULL;
        CU_ASSERT_EQUAL_FATAL(glean_sensors_open(&cfg, &s), 0);
        CU_ASSERT_STRING_EQUAL(glean_sensors_method(s, GLEAN_SENSOR_INPUT), "none");
        const char *r = glean_sensors_refused(s, GLEAN_SENSOR_INPUT);
        GLEAN_TEST_CHECK(strstr(r, "irq: no interrupt of /proc/interrupts has one of the names"), "refused: %s", r);
        glean_sensors_free(s);
}

/* The interrupt of /proc/interrupts that fired most between two readings,
 * with the activity of stir() in between: its name, or "" if none did. */
static void stir(void) {
        char path[] = "/tmp/glean-test-irq-XXXXXX";
        int fd = mkstemp(path);
        if (fd >= 0) {
                char buf[4096] = { 0 };
                for (int i = 0; i < 16; i++)
                        if (write(fd, buf, sizeof buf) < 0)
                                break;
                fsync(fd);
                close(fd);
                unlink(path);
        }
        printf(" \b"); /* a console on a serial line interrupts for its output */
        fflush(stdout);
        cgtest_sleep_ms(100);
}

typedef struct IrqCount {
        char name[64];
        unsigned long long n;
} IrqCount;

static size_t read_irqs(IrqCount *out, size_t max) {
        FILE *f = fopen("/proc/interrupts", "re");
        char line[1024];
        size_t n = 0;
        if (!f)
                return 0;
        while (n < max && fgets(line, sizeof line, f)) {
                char *p = line, *end;
                strtoul(p, &end, 10);
                if (end == p || *end != ':')
                        continue;
                IrqCount c = { .n = 0 };
                char *save = NULL, *last = NULL;
                for (char *w = strtok_r(end + 1, " \t\n", &save); w; w = strtok_r(NULL, " \t\n", &save)) {
                        char *e;
                        unsigned long long v = strtoull(w, &e, 10);
                        if (!*e && !last)
                                c.n += v;
                        else
                                last = w;
                }
                if (last) {
                        snprintf(c.name, sizeof c.name, "%s", last);
                        out[n++] = c;
                }
        }
        fclose(f);
        return n;
}

static void busiest_irq(char *name, size_t len) {
        IrqCount a[256], b[256];
        size_t na = read_irqs(a, 256);
        stir();
        stir();
        size_t nb = read_irqs(b, 256);
        unsigned long long best = 0;
        name[0] = 0;
        for (size_t i = 0; i < na && i < nb; i++)
                if (strcmp(a[i].name, b[i].name) == 0 && b[i].n - a[i].n > best) {
                        best = b[i].n - a[i].n;
                        snprintf(name, len, "%.63s", b[i].name);
                }
}

/* The irq method counts the interrupts it is given (here one that fires
 * on its own, as a keyboard's would on a key press). */
static void test_irq_method(void) {
        char name[64];
        busiest_irq(name, sizeof name);
        if (!name[0]) {
                printf("(no interrupt fired here: nothing to count) ");
                return;
        }
        char *in[] = { (char *) "irq", NULL }, *none[] = { NULL }, *irqs[] = { name, NULL };
        GleanSensorConfig cfg = { .input_methods = in, .tty_methods = none, .irq_names = irqs };
        GleanSensors *s = NULL;
        CU_ASSERT_EQUAL_FATAL(glean_sensors_open(&cfg, &s), 0);
        GLEAN_TEST_CHECK(strcmp(glean_sensors_method(s, GLEAN_SENSOR_INPUT), "irq") == 0, "irq %s: %s", name,
                         glean_sensors_refused(s, GLEAN_SENSOR_INPUT));
        uint64_t last = 0, count = 0;
        for (int i = 0; i < 30 && count == 0; i++) {
                stir();
                glean_sensors_input(s, GLEAN_INPUT_CLASS_KEYBOARD, &last, &count);
        }
        printf("(%s: %llu interrupts) ", name, (unsigned long long) count);
        GLEAN_TEST_CHECK(count > 0 && last > 0, "no interrupt of %s counted", name);
        glean_sensors_free(s);
}

/* The defaults on this kernel: the first input method it accepts, and
 * every refusal before it with a reason. On the development hosts fentry
 * is refused and kprobes are absent; in the VM fentry works. */
static void test_defaults(void) {
        GleanSensorConfig cfg = { .load = true };
        GleanSensors *s = NULL;
        CU_ASSERT_EQUAL_FATAL(glean_sensors_open(&cfg, &s), 0);
        const char *in = glean_sensors_method(s, GLEAN_SENSOR_INPUT);
        printf("\n    input: %s (refused: %s)\n    tty: %s (refused: %s)\n    load: %s\n", in,
               glean_sensors_refused(s, GLEAN_SENSOR_INPUT), glean_sensors_method(s, GLEAN_SENSOR_TTY),
               glean_sensors_refused(s, GLEAN_SENSOR_TTY), glean_sensors_method(s, GLEAN_SENSOR_LOAD));
        CU_ASSERT_STRING_EQUAL(glean_sensors_method(s, GLEAN_SENSOR_LOAD), "tp_btf");
        if (in_vm) {
                CU_ASSERT_STRING_EQUAL(in, "fentry");
                CU_ASSERT_STRING_EQUAL(glean_sensors_method(s, GLEAN_SENSOR_TTY), "fentry");
                CU_ASSERT_STRING_EQUAL(glean_sensors_refused(s, GLEAN_SENSOR_INPUT), "");
        } else if (strcmp(in, "fentry") != 0) {
                /* Everything before the method in use was refused with a reason. */
                const char *r = glean_sensors_refused(s, GLEAN_SENSOR_INPUT);
                GLEAN_TEST_CHECK(strncmp(r, "fentry: ", 8) == 0, "refused: %s", r);
                if (strcmp(in, "none") == 0)
                        GLEAN_TEST_CHECK(strstr(r, "kprobe: ") && strstr(r, "irq: ") && strstr(r, "evdev: "),
                                         "refused: %s", r);
        }
        glean_sensors_free(s);
}

/* ---- load ---- */

static int mkcg(const char *rel, int *ret_fd) {
        char path[PATH_MAX];
        snprintf(path, sizeof path, "%s/%s", env.abs, rel);
        if (mkdir(path, 0755) < 0 && errno != EEXIST)
                return -errno;
        int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        *ret_fd = fd;
        return 0;
}

static double mean_runnable(GleanSensors *s, unsigned idx, uint64_t *integral, uint64_t *t) {
        uint64_t i2, t2;
        CU_ASSERT_EQUAL_FATAL(glean_sensors_slot_runnable(s, idx, &i2, &t2), 0);
        double m = t2 > *t ? (double) (int64_t) (i2 - *integral) / (double) (t2 - *t) : 0;
        *integral = i2;
        *t = t2;
        return m;
}

/* A busy task in slot1's job cgroup, a sleeping one in slot2's and one in
 * no slot: slot1 counts ~1 runnable task, slot2 ~0. Then two busy tasks
 * in slot2 (2 CPUs): ~2; after they end, ~0 again. */
static void test_load_busy_slot(void) {
        GleanSensors *s = open_with("", "", true);
        CU_ASSERT_STRING_EQUAL_FATAL(glean_sensors_method(s, GLEAN_SENSOR_LOAD), "tp_btf");
        int slots_fd, s1, s2, j1, j2, other;
        CU_ASSERT_EQUAL_FATAL(mkcg("slots", &slots_fd), 0);
        CU_ASSERT_EQUAL_FATAL(mkcg("slots/slot1", &s1), 0);
        CU_ASSERT_EQUAL_FATAL(mkcg("slots/slot2", &s2), 0);
        CU_ASSERT_EQUAL_FATAL(mkcg("slots/slot1/job", &j1), 0);
        CU_ASSERT_EQUAL_FATAL(mkcg("slots/slot2/job", &j2), 0);
        CU_ASSERT_EQUAL_FATAL(mkcg("other", &other), 0);
        unsigned i1, i2;
        CU_ASSERT_EQUAL_FATAL(glean_sensors_slot_add(s, s1, &i1), 0);
        CU_ASSERT_EQUAL_FATAL(glean_sensors_slot_add(s, s2, &i2), 0);
        CU_ASSERT_NOT_EQUAL(i1, i2);

        pid_t pids[4] = { -1, -1, -1, -1 };
        if ((pids[0] = cgtest_clone_into(j1)) == 0)
                cgtest_child_burn(60000);
        if ((pids[1] = cgtest_clone_into(j2)) == 0)
                cgtest_child_sleep(1000);
        if ((pids[2] = cgtest_clone_into(other)) == 0)
                cgtest_child_burn(60000);
        CU_ASSERT_FATAL(pids[0] > 0 && pids[1] > 0 && pids[2] > 0);

        uint64_t a1, t1, a2, t2;
        CU_ASSERT_EQUAL(glean_sensors_slot_runnable(s, i1, &a1, &t1), 0);
        CU_ASSERT_EQUAL(glean_sensors_slot_runnable(s, i2, &a2, &t2), 0);
        cgtest_sleep_ms(1500);
        double m1 = mean_runnable(s, i1, &a1, &t1), m2 = mean_runnable(s, i2, &a2, &t2);
        printf("\n    one busy task in slot1: slot1 %.3f, slot2 %.3f runnable\n", m1, m2);
        GLEAN_TEST_CHECK(m1 > 0.9 && m1 < 1.1, "slot1: %.3f runnable tasks, want ~1", m1);
        GLEAN_TEST_CHECK(m2 >= 0 && m2 < 0.05, "slot2: %.3f runnable tasks, want ~0", m2);
        cgtest_reap(pids, 3);

        /* Two busy tasks in slot2 on this 2-CPU machine (or more). */
        if ((pids[0] = cgtest_clone_into(j2)) == 0)
                cgtest_child_burn(60000);
        if ((pids[1] = cgtest_clone_into(j2)) == 0)
                cgtest_child_burn(60000);
        CU_ASSERT_FATAL(pids[0] > 0 && pids[1] > 0);
        cgtest_sleep_ms(200);
        mean_runnable(s, i1, &a1, &t1);
        mean_runnable(s, i2, &a2, &t2);
        cgtest_sleep_ms(1500);
        m1 = mean_runnable(s, i1, &a1, &t1);
        m2 = mean_runnable(s, i2, &a2, &t2);
        printf("    two busy tasks in slot2: slot1 %.3f, slot2 %.3f runnable\n", m1, m2);
        GLEAN_TEST_CHECK(m1 >= 0 && m1 < 0.05, "slot1: %.3f runnable tasks, want ~0", m1);
        GLEAN_TEST_CHECK(m2 > 1.8 && m2 < 2.2, "slot2: %.3f runnable tasks, want ~2", m2);
        cgtest_reap(pids, 2);
        cgtest_sleep_ms(100);
        mean_runnable(s, i2, &a2, &t2);
        cgtest_sleep_ms(500);
        m2 = mean_runnable(s, i2, &a2, &t2);
        GLEAN_TEST_CHECK(m2 >= 0 && m2 < 0.05, "slot2 after its tasks ended: %.3f, want 0", m2);

        /* A removed slot is no longer counted; its number can be reused. */
        CU_ASSERT_EQUAL(glean_sensors_slot_remove(s, i1), 0);
        CU_ASSERT_EQUAL(glean_sensors_slot_runnable(s, i1, &a1, &t1), -EINVAL);
        CU_ASSERT_EQUAL(glean_sensors_slot_remove(s, i1), -EINVAL);
        unsigned i3;
        CU_ASSERT_EQUAL(glean_sensors_slot_add(s, s1, &i3), 0);
        CU_ASSERT_EQUAL(i3, i1);
        CU_ASSERT_EQUAL(glean_sensors_slot_runnable(s, i3, &a1, &t1), 0);
        CU_ASSERT_EQUAL(a1, 0);

        glean_sensors_free(s);
        close(j1);
        close(j2);
        close(s1);
        close(s2);
        close(other);
        close(slots_fd);
        cgtest_destroy(env.abs); /* the subtree's contents; the base is removed at the end */
        mkdir(env.abs, 0755);
}

/* ---- input through /dev/uinput (the VM rig) ---- */

static int uinput_open(void) {
        int fd = open("/dev/uinput", O_WRONLY | O_NONBLOCK | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        ioctl(fd, UI_SET_EVBIT, EV_KEY);
        ioctl(fd, UI_SET_KEYBIT, KEY_A);
        ioctl(fd, UI_SET_KEYBIT, BTN_LEFT);
        ioctl(fd, UI_SET_EVBIT, EV_REL);
        ioctl(fd, UI_SET_RELBIT, REL_X);
        struct uinput_setup us = { .id = { .bustype = BUS_VIRTUAL, .vendor = 0x676c, .product = 1 } };
        snprintf(us.name, sizeof us.name, "glean test keyboard");
        if (ioctl(fd, UI_DEV_SETUP, &us) < 0 || ioctl(fd, UI_DEV_CREATE) < 0) {
                int r = -errno;
                close(fd);
                return r;
        }
        cgtest_sleep_ms(200); /* the event device appears */
        return fd;
}

static void uinput_emit(int fd, unsigned type, unsigned code, int value) {
        struct input_event ev = { .type = (__u16) type, .code = (__u16) code, .value = value };
        CU_ASSERT_EQUAL(write(fd, &ev, sizeof ev), (ssize_t) sizeof ev);
        struct input_event syn = { .type = EV_SYN, .code = SYN_REPORT };
        CU_ASSERT_EQUAL(write(fd, &syn, sizeof syn), (ssize_t) sizeof syn);
}

static uint64_t now_boot_ns(void) {
        struct timespec ts;
        clock_gettime(CLOCK_BOOTTIME, &ts);
        return (uint64_t) ts.tv_sec * 1000000000ULL + (uint64_t) ts.tv_nsec;
}

/* Each input method in turn counts a key press and a mouse move. */
static void test_uinput_methods(void) {
        if (in_vm && access("/dev/uinput", W_OK) < 0 && system("modprobe uinput && modprobe evdev") == 0)
                cgtest_sleep_ms(200);
        if (!in_vm && access("/dev/uinput", W_OK) < 0) {
                printf("(no /dev/uinput here: the VM rig runs this one) ");
                return;
        }
        int ufd = uinput_open();
        GLEAN_TEST_CHECK_FATAL(ufd >= 0, "/dev/uinput: %s", strerror(-ufd));
        static const char *const methods[] = { "fentry", "kprobe", "evdev" };
        for (size_t m = 0; m < 3; m++) {
                GleanSensors *s = open_with(methods[m], "", false);
                const char *got = glean_sensors_method(s, GLEAN_SENSOR_INPUT);
                GLEAN_TEST_CHECK(strcmp(got, methods[m]) == 0, "%s: method %s, refused: %s", methods[m], got,
                                 glean_sensors_refused(s, GLEAN_SENSOR_INPUT));
                uint64_t before = now_boot_ns(), last = 0, count = 0, plast = 0, pcount = 0;
                uinput_emit(ufd, EV_KEY, KEY_A, 1);
                uinput_emit(ufd, EV_KEY, KEY_A, 0);
                uinput_emit(ufd, EV_REL, REL_X, 5);
                cgtest_sleep_ms(50);
                glean_sensors_dispatch(s);
                CU_ASSERT_EQUAL(glean_sensors_input(s, GLEAN_INPUT_CLASS_KEYBOARD, &last, &count), 0);
                CU_ASSERT_EQUAL(glean_sensors_input(s, GLEAN_INPUT_CLASS_POINTER, &plast, &pcount), 0);
                GLEAN_TEST_CHECK(count == 2 && last >= before && last <= now_boot_ns(),
                                 "%s: %llu key events, last %llu ns after the press", methods[m],
                                 (unsigned long long) count, (unsigned long long) (last - before));
                GLEAN_TEST_CHECK(pcount == 1 && plast >= before, "%s: %llu pointer events", methods[m],
                                 (unsigned long long) pcount);
                glean_sensors_free(s);
        }
        ioctl(ufd, UI_DEV_DESTROY);
        close(ufd);
}

/* A refused method gives way to the next one: an interrupt that does not
 * exist, then the event devices (which the VM has). */
static void test_fallback(void) {
        if (!in_vm) {
                printf("(/dev/input: the VM rig runs this one) ");
                return;
        }
        char *in[] = { (char *) "irq", (char *) "evdev", NULL }, *none[] = { NULL };
        char *irqs[] = { (char *) "no-such-interrupt", NULL };
        GleanSensorConfig cfg = { .input_methods = in, .tty_methods = none, .irq_names = irqs };
        GleanSensors *s = NULL;
        CU_ASSERT_EQUAL_FATAL(glean_sensors_open(&cfg, &s), 0);
        CU_ASSERT_STRING_EQUAL(glean_sensors_method(s, GLEAN_SENSOR_INPUT), "evdev");
        const char *r = glean_sensors_refused(s, GLEAN_SENSOR_INPUT);
        GLEAN_TEST_CHECK(strncmp(r, "irq: no interrupt", 17) == 0 && !strstr(r, "evdev"), "refused: %s", r);
        CU_ASSERT(glean_sensors_fd(s) >= 0);
        glean_sensors_free(s);
}

/* Input written to a pseudo-terminal's master counts; its output does not. */
static void test_pty(void) {
        if (!in_vm) {
                printf("(fentry/kprobe: the VM rig runs this one) ");
                return;
        }
        static const char *const methods[] = { "fentry", "kprobe" };
        for (size_t m = 0; m < 2; m++) {
                GleanSensors *s = open_with("", methods[m], false);
                CU_ASSERT_STRING_EQUAL(glean_sensors_method(s, GLEAN_SENSOR_TTY), methods[m]);
                int master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
                CU_ASSERT_FATAL(master >= 0 && grantpt(master) == 0 && unlockpt(master) == 0);
                int slave = open(ptsname(master), O_RDWR | O_NOCTTY | O_CLOEXEC);
                CU_ASSERT_FATAL(slave >= 0);
                uint64_t last = 0, count = 0;
                CU_ASSERT_EQUAL(write(slave, "output\n", 7), 7); /* a program's output */
                CU_ASSERT_EQUAL(glean_sensors_input(s, GLEAN_INPUT_CLASS_TTY, &last, &count), 0);
                GLEAN_TEST_CHECK(count == 0, "%s: output counted (%llu)", methods[m], (unsigned long long) count);
                uint64_t before = now_boot_ns();
                CU_ASSERT_EQUAL(write(master, "ls\n", 3), 3); /* the user typing */
                CU_ASSERT_EQUAL(glean_sensors_input(s, GLEAN_INPUT_CLASS_TTY, &last, &count), 0);
                GLEAN_TEST_CHECK(count == 1 && last >= before, "%s: %llu tty events", methods[m],
                                 (unsigned long long) count);
                close(slave);
                close(master);
                glean_sensors_free(s);
        }
}

static CU_TestInfo pure_tests[] = {
        { "parse_interrupts", test_parse_interrupts },
        { "event_class", test_event_class },
        CU_TEST_INFO_NULL,
};

static CU_TestInfo kernel_tests[] = {
        { "bad_methods", test_bad_methods },
        { "irq_refused", test_irq_refused },
        { "irq_method", test_irq_method },
        { "defaults", test_defaults },
        { "load_busy_slot", test_load_busy_slot },
        { "uinput_methods", test_uinput_methods },
        { "fallback", test_fallback },
        { "pty", test_pty },
        CU_TEST_INFO_NULL,
};

static CU_SuiteInfo suites[] = {
        { "sensors-pure", NULL, NULL, NULL, NULL, pure_tests },
        { "sensors-kernel", NULL, NULL, NULL, NULL, kernel_tests },
        CU_SUITE_INFO_NULL,
};

int main(int argc, char **argv) {
        in_vm = cgtest_in_vm();
        return cgtest_main(argc, argv, suites, &env, true);
}
