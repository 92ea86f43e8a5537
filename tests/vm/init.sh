#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# /init of the VM rig's initramfs (busybox sh, PID 1). tests/vm/rig.sh
# builds it into build/vm/<kernel>/initramfs.cpio.gz; README.md beside it
# tells the whole story.
#
# Mounts the host's root (9p tag "hostroot", read-only) under a tmpfs
# overlay, mounts proc, sys, dev, cgroup2 (pure v2, nsdelegate, with
# cpuset cpu io memory pids enabled in the root's cgroup.subtree_control as
# systemd does), bpffs, tracefs and debugfs inside it, chroots into it and runs the job script
# named by glean.job= on the kernel command line under a timeout of
# glean.timeout= seconds. The job's exit status leaves through qemu's
# isa-debug-exit device (qemu exits (status << 1) | 1); 0..127 pass
# exactly, a higher status (a signal) is printed and reported as 127.
#
# With glean.mode=systemd it boots the host's systemd instead (tests/vm/rig.sh
# systemd): the staged install tree named by glean.install= (a make install
# DESTDIR) is copied over the overlay, a pool key written, the host's
# enabled units left out, default.target set to glean-vm-test.target (whose
# service, run-job, runs the job and reports its status), and switch_root
# hands over to /lib/systemd/systemd.

export PATH=/sbin:/bin:/usr/sbin:/usr/bin

say() { echo "glean-vm: $*"; }

# Hands STATUS to qemu and powers off; never returns.
report() {
        st=$1
        [ "$st" -gt 127 ] && st=127
        # shellcheck disable=SC2059 # the format is the octal escape built here
        printf "$(printf '\\%03o' "$st")" | dd of=/dev/port bs=1 seek=244 count=1 2>/dev/null
        say "isa-debug-exit did not stop the VM"
        poweroff -f
        sleep 10
}

fail() {
        say "rig failure: $*"
        report 125
}

# The systemd mode: the host's systemd as PID 1 on the overlay, the test
# job as glean-vm-test.service. Never returns.
boot_systemd() {
        # A systemd that sees the host's /.dockerenv believes it runs in a
        # container and ignores the kernel command line and default.target
        # (the removal is an overlay whiteout; the host keeps its file).
        rm -f $R/.dockerenv
        if [ -n "$install" ]; then
                [ -d "/lower$install" ] || fail "glean.install=$install: no such directory in the host's root"
                cp -a "/lower$install/." $R/ || fail "cannot copy $install over the guest's root"
        fi
        # The pool key of the installed glean (root's, 0600), made here so
        # that no key of the test is ever on the host's disk.
        if [ -d $R/etc/glean ] && [ ! -e $R/etc/glean/pool.key ]; then
                key=$(head -c 32 /dev/urandom | od -An -tx1 -v | tr -d ' \n')
                [ ${#key} = 64 ] || fail "cannot make a pool key"
                (umask 077 && echo "$key" >$R/etc/glean/pool.key) || fail "cannot write the pool key"
        fi
        # Lean: none of the services, timers and gettys the host enabled
        # (the whiteouts hide them), a few static units masked, and a
        # default target of the rig's own that wants only the test job.
        sd=$R/etc/systemd/system
        rm -rf $sd/*.wants
        mkdir -p $sd $R/usr/lib/glean-vm
        for u in systemd-binfmt.service proc-sys-fs-binfmt_misc.automount systemd-update-utmp.service \
                 systemd-tmpfiles-clean.timer systemd-pstore.service systemd-timesyncd.service; do
                ln -sf /dev/null $sd/$u
        done
        cp /glean-vm/glean-vm-test.target /glean-vm/glean-vm-test.service $sd/ || fail "cannot add the test units"
        ln -sf glean-vm-test.target $sd/default.target
        cp /glean-vm/run-job $R/usr/lib/glean-vm/run-job || fail "cannot add run-job"
        echo glean-vm >$R/etc/hostname
        # This kernel's modules (copied: switch_root empties the initramfs)
        # and busybox's module tools where the host has no kmod.
        mkdir -p "$R/lib/modules/$kver"
        cp -a "/lib/modules/$kver/." "$R/lib/modules/$kver/"
        cp /bin/busybox $R/usr/lib/glean-vm/busybox
        for t in modprobe insmod rmmod lsmod modinfo depmod; do
                if [ ! -e "$R/sbin/$t" ] && [ ! -e "$R/usr/sbin/$t" ]; then
                        ln -s /usr/lib/glean-vm/busybox "$R/usr/sbin/$t"
                fi
        done
        [ -x $R/lib/systemd/systemd ] || fail "no /lib/systemd/systemd in the host's root"
        up=$(cut -d' ' -f1 /proc/uptime)
        say "kernel $kver up in ${up} s; booting systemd for $job (timeout ${timeout} s)"
        mount --move /dev $R/dev
        mount --move /sys $R/sys
        mount --move /proc $R/proc
        exec switch_root $R /lib/systemd/systemd
}

mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev

job=
timeout=540
mode=chroot
install=
for arg in $(cat /proc/cmdline); do
        case $arg in
                glean.job=*) job=${arg#glean.job=} ;;
                glean.timeout=*) timeout=${arg#glean.timeout=} ;;
                glean.mode=*) mode=${arg#glean.mode=} ;;
                glean.install=*) install=${arg#glean.install=} ;;
        esac
done
[ -n "$job" ] || fail "no glean.job= on the kernel command line"

kver=$(uname -r)
for m in virtio_pci 9pnet_virtio 9p overlay; do
        modprobe "$m" || fail "modprobe $m"
done

# The virtio device is probed asynchronously: wait for its channel.
i=0
until grep -qs hostroot /sys/bus/virtio/drivers/9pnet_virtio/virtio*/mount_tag; do
        i=$((i + 1))
        [ $i -gt 100 ] && fail "no 9p channel 'hostroot' after 10 s"
        sleep 0.1
done

mkdir -p /lower /rw /newroot
mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000,ro,cache=loose hostroot /lower ||
        fail "cannot mount the host root over 9p"
mount -t tmpfs -o mode=0755 tmpfs /rw
mkdir -p /rw/upper /rw/work
mount -t overlay overlay -o lowerdir=/lower,upperdir=/rw/upper,workdir=/rw/work /newroot ||
        fail "cannot mount the overlay"

R=/newroot
[ "$mode" = systemd ] && boot_systemd
mount -t proc proc $R/proc
mount -t sysfs sysfs $R/sys
mount -t devtmpfs devtmpfs $R/dev
mkdir -p $R/dev/pts $R/dev/shm
mount -t devpts -o newinstance,ptmxmode=0666,mode=0620 devpts $R/dev/pts
mount -t tmpfs -o mode=1777 tmpfs $R/dev/shm
# /tmp stays the overlay's: the host's /tmp shows through (a clone of the
# repository there, e.g. /tmp/cc, runs its VM half too) and what the
# guest writes goes to the tmpfs upper layer, as everywhere else.
mount -t tmpfs -o mode=0755 tmpfs $R/run
mount -t cgroup2 -o nsdelegate,memory_recursiveprot cgroup2 $R/sys/fs/cgroup ||
        fail "cannot mount cgroup2 on /sys/fs/cgroup"
# As systemd leaves it on a host: these controllers enabled for the root's
# children (the tests make their subtree right under the root).
for c in cpuset cpu io memory pids; do
        echo "+$c" >$R/sys/fs/cgroup/cgroup.subtree_control || fail "cannot enable the $c controller"
done
mount -t bpf bpf $R/sys/fs/bpf || fail "cannot mount bpffs"
mount -t tracefs tracefs $R/sys/kernel/tracing || fail "cannot mount tracefs"
mount -t debugfs debugfs $R/sys/kernel/debug || fail "cannot mount debugfs"

# The host's /.dockerenv would make a systemd started in here believe it
# runs in a container; nothing here starts systemd, but keep the guest
# honest. (The removal is an overlay whiteout; the host keeps its file.)
rm -f $R/.dockerenv

# This kernel's modules, and busybox's module tools where the host root
# has none (a Debian container has no kmod), so that `modprobe uinput`
# works inside the chroot. The kernel's own request_module() runs
# /sbin/modprobe of the initramfs.
mkdir -p "$R/lib/modules/$kver" "$R/run/glean-vm"
mount --bind "/lib/modules/$kver" "$R/lib/modules/$kver"
cp /bin/busybox $R/run/glean-vm/busybox
for t in modprobe insmod rmmod lsmod modinfo depmod; do
        if [ ! -e "$R/sbin/$t" ] && [ ! -e "$R/usr/sbin/$t" ]; then
                ln -s /run/glean-vm/busybox "$R/usr/sbin/$t"
        fi
done

hostname glean-vm
ip link set lo up

up=$(cut -d' ' -f1 /proc/uptime)
say "kernel $kver up in ${up} s; running $job (timeout ${timeout} s)"

chroot $R /usr/bin/env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
        HOME=/root TERM=dumb LANG=C.UTF-8 GLEAN_VM=1 \
        /usr/bin/timeout -k 10 "$timeout" /bin/bash "$job" </dev/null
st=$?
[ $st -eq 124 ] && say "the command timed out after ${timeout} s"
up=$(cut -d' ' -f1 /proc/uptime)
say "exit status $st (guest uptime ${up} s)"
[ $st -gt 127 ] && say "isa-debug-exit passes 0..127 only: reported as 127"
sync
report $st
