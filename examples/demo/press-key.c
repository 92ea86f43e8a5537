/* SPDX-License-Identifier: Apache-2.0 */
/*
 * press-key.c — the owner of `make demo` pressing a key: a virtual
 * keyboard through /dev/uinput that presses and releases Shift once (a key
 * no program acts on by itself), then goes away. scripts/demo.sh builds it
 * with cc where the kernel has uinput and the agent's input sensor is in
 * the kernel. Exit status 0, or 1 with the reason on stderr.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/uinput.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

static void pause_ms(long ms) {
        struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L };
        nanosleep(&ts, NULL);
}

int main(void) {
        int fd = open("/dev/uinput", O_WRONLY | O_NONBLOCK | O_CLOEXEC);
        if (fd < 0) {
                fprintf(stderr, "press-key: /dev/uinput: %s\n", strerror(errno));
                return 1;
        }
        struct uinput_setup us = { .id = { .bustype = BUS_VIRTUAL, .vendor = 0x676c, .product = 3 } };
        snprintf(us.name, sizeof us.name, "glean demo owner");
        if (ioctl(fd, UI_SET_EVBIT, EV_KEY) < 0 || ioctl(fd, UI_SET_KEYBIT, KEY_LEFTSHIFT) < 0 ||
            ioctl(fd, UI_DEV_SETUP, &us) < 0 || ioctl(fd, UI_DEV_CREATE) < 0) {
                fprintf(stderr, "press-key: cannot make a virtual keyboard: %s\n", strerror(errno));
                close(fd);
                return 1;
        }
        pause_ms(200); /* let the input core and its readers see the device */
        struct input_event ev[] = {
                { .type = EV_KEY, .code = KEY_LEFTSHIFT, .value = 1 },
                { .type = EV_SYN, .code = SYN_REPORT },
                { .type = EV_KEY, .code = KEY_LEFTSHIFT, .value = 0 },
                { .type = EV_SYN, .code = SYN_REPORT },
        };
        int status = 0;
        if (write(fd, ev, sizeof ev) != (ssize_t) sizeof ev) {
                fprintf(stderr, "press-key: cannot write the key press: %s\n", strerror(errno));
                status = 1;
        }
        pause_ms(100);
        ioctl(fd, UI_DEV_DESTROY);
        close(fd);
        return status;
}
