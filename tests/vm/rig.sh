#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
#
# rig.sh — run commands under a stock Debian kernel in qemu (TCG), for the
# tests that need a full cgroup v2 hierarchy, kprobes, fentry or
# /dev/uinput. tests/vm/README.md explains it.
#
#   tests/vm/rig.sh prepare      install qemu & co (tests/vm/packages.txt,
#                                as root), fetch and unpack the kernel
#                                package, build the initramfs; all cached
#                                in build/vm/. Exit 3 (and a line
#                                "rig.sh: cannot run here: REASON") when the
#                                rig cannot be had on this machine.
#   tests/vm/rig.sh run CMD...   prepare, then boot and run CMD in the
#                                current directory with the host's root
#                                (read-only, tmpfs overlay) and GLEAN_VM=1;
#                                exits with CMD's status (125: the rig
#                                failed, 124: timeout).
#   tests/vm/rig.sh systemd CMD...
#                                the same, but the guest boots the host's
#                                systemd (PID 1) and CMD runs as root in
#                                glean-vm-test.service (tests/vm/systemd/),
#                                the host's own units left out; VM_INSTALL=
#                                DIR (a make install DESTDIR) is copied over
#                                the guest's root first, with a pool key.
#   tests/vm/rig.sh clean        remove build/vm/
#
# Environment: VM_TIMEOUT (seconds qemu may live, default 600; CMD gets 30
# less), VM_KERNEL (a linux-image-* package instead of what
# linux-image-amd64 depends on), VM_APPEND (more kernel parameters, e.g.
# "loglevel=7"), VM_ACCEL (qemu's -accel, default tcg,thread=single: both
# vCPUs emulated by one host thread in turn; tcg,thread=multi gives each its
# own). GLEAN*, ASAN_/UBSAN_/LSAN_OPTIONS and CI pass into the guest.

set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
cache=$repo/build/vm

UNAVAILABLE=3
RIG_FAILED=125

# Modules the initramfs carries (their dependencies are added).
MODULES="uinput evdev virtio virtio_ring virtio_pci virtio_pci_modern_dev
virtio_pci_legacy_dev 9pnet 9pnet_virtio 9p netfs fscache overlay fuse"

log() { echo "rig.sh: $*" >&2; }
die() { log "$*"; exit $RIG_FAILED; }
unavailable() {
        echo "rig.sh: cannot run here: $*" >&2
        exit $UNAVAILABLE
}

now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

packages() {
        sed -e 's/#.*//' -e 's/[[:space:]]*$//' -e '/^$/d' "$here/packages.txt"
}

installed() {
        [ "$(dpkg-query -W -f='${db:Status-Status}' "$1" 2>/dev/null)" = installed ]
}

apt_updated=0
apt_update() {
        [ $apt_updated = 1 ] && return 0
        apt_updated=1
        log "apt-get update"
        apt-get update -q >"$cache/apt-update.log" 2>&1 ||
                { log "apt-get update failed (see build/vm/apt-update.log)"; return 1; }
}

ensure_packages() {
        command -v dpkg-query >/dev/null 2>&1 || unavailable "no dpkg: the rig needs Debian 12"
        local missing="" p
        for p in $(packages); do
                installed "$p" || missing="$missing $p"
        done
        [ -z "$missing" ] && return 0
        [ "$(id -u)" = 0 ] || unavailable "missing packages:$missing (install them as root)"
        log "installing:$missing"
        export DEBIAN_FRONTEND=noninteractive
        # shellcheck disable=SC2086 # the list is meant to split
        if ! apt-get install -y -q --no-install-recommends $missing >"$cache/apt-install.log" 2>&1; then
                apt_update || unavailable "apt-get update failed"
                # shellcheck disable=SC2086
                apt-get install -y -q --no-install-recommends $missing >"$cache/apt-install.log" 2>&1 ||
                        unavailable "apt-get install$missing failed (see build/vm/apt-install.log)"
        fi
        for p in $missing; do
                installed "$p" || unavailable "package $p still missing after apt-get install"
        done
}

# The kernel package: linux-image-X-amd64, what linux-image-amd64 depends on.
resolve_kernel() {
        if [ -n "${VM_KERNEL:-}" ]; then
                echo "$VM_KERNEL"
                return 0
        fi
        # apt-cache takes over a second: its answer holds until the next
        # apt-get update (which touches /var/lib/apt/lists).
        local k
        if [ -s "$cache/resolved" ] && [ "$cache/resolved" -nt /var/lib/apt/lists ]; then
                cat "$cache/resolved"
                return 0
        fi
        k=$(apt-cache depends linux-image-amd64 2>/dev/null |
            awk '$1 == "Depends:" && $2 ~ /^linux-image-/ { print $2; exit }')
        if [ -z "$k" ] && [ "$(id -u)" = 0 ] && apt_update; then
                k=$(apt-cache depends linux-image-amd64 2>/dev/null |
                    awk '$1 == "Depends:" && $2 ~ /^linux-image-/ { print $2; exit }')
        fi
        [ -n "$k" ] && echo "$k" >"$cache/resolved"
        echo "$k"
}

# A kernel already prepared, for when apt cannot tell or fetch one.
cached_kernel() {
        local k
        k=$(cat "$cache/current" 2>/dev/null) || return 1
        [ -f "$cache/$k/vmlinux" ] || return 1
        echo "$k"
}

fetch_deb() { # PKG -> path of the .deb in build/vm/deb
        local pkg=$1 deb
        mkdir -p "$cache/deb"
        deb=$(find "$cache/deb" -name "${pkg}_*.deb" | head -1)
        if [ -z "$deb" ]; then
                log "apt-get download $pkg"
                if ! (cd "$cache/deb" && apt-get download -q -o APT::Sandbox::User=root "$pkg") \
                        >"$cache/apt-download.log" 2>&1; then
                        { [ "$(id -u)" = 0 ] && apt_update &&
                          (cd "$cache/deb" && apt-get download -q -o APT::Sandbox::User=root "$pkg") \
                                >"$cache/apt-download.log" 2>&1; } || return 1
                fi
                deb=$(find "$cache/deb" -name "${pkg}_*.deb" | head -1)
                [ -n "$deb" ] || return 1
        fi
        echo "$deb"
}

# build/vm/PKG/{vmlinux,modules/lib/modules/V} from the .deb.
unpack_kernel() {
        local pkg=$1 deb=$2 v=${1#linux-image-} dir=$cache/$1 tmp t0
        t0=$(now)
        tmp=$cache/unpack.tmp
        rm -rf "$tmp" "$dir/modules"
        mkdir -p "$tmp" "$dir"
        log "dpkg -x $(basename "$deb")"
        dpkg -x "$deb" "$tmp" || die "dpkg -x $deb failed"
        local vmlinuz=$tmp/boot/vmlinuz-$v
        [ -f "$vmlinuz" ] || die "$deb has no boot/vmlinuz-$v"
        # The bzImage holds an xz stream: the uncompressed ELF vmlinux boots
        # through PVH, about 5 s faster under TCG than the bzImage.
        if [ ! -f "$dir/vmlinux" ]; then
                local off
                off=$(LC_ALL=C grep -abo "$(printf '\3757zXZ')" "$vmlinuz" | head -1 | cut -d: -f1)
                [ -n "$off" ] || die "no xz stream in $vmlinuz"
                # (xz stops at the stream's end; tail then dies of SIGPIPE.)
                { tail -c +$((off + 1)) "$vmlinuz" || true; } | xz -dc --single-stream >"$dir/vmlinux.tmp" ||
                        die "cannot decompress the vmlinux of $vmlinuz"
                [ "$(head -c 4 "$dir/vmlinux.tmp" | od -An -c | tr -d ' ')" = '177ELF' ] ||
                        die "what $vmlinuz holds is not an ELF vmlinux"
                mv "$dir/vmlinux.tmp" "$dir/vmlinux"
        fi
        cp "$tmp/boot/config-$v" "$dir/config" 2>/dev/null || true

        # The modules of MODULES and, transitively, what they depend on.
        local src=$tmp/lib/modules/$v dst=$dir/modules/lib/modules/$v
        local todo done_=" " m f rel deps
        # shellcheck disable=SC2206 # module names: no blanks, no globs
        todo=($MODULES)
        mkdir -p "$dst"
        while [ ${#todo[@]} -gt 0 ]; do
                m=${todo[0]}
                todo=("${todo[@]:1}")
                case "$done_" in *" $m "*) continue ;; esac
                done_="$done_$m "
                f=$(find "$src/kernel" \( -name "$m.ko" -o -name "$m.ko.xz" \
                        -o -name "${m//_/-}.ko" -o -name "${m//_/-}.ko.xz" \) | head -1)
                if [ -z "$f" ]; then
                        grep -qs "/$m.ko" "$src/modules.builtin" && continue
                        die "module $m is neither in $pkg nor built in"
                fi
                rel=${f#"$src/"}
                mkdir -p "$dst/$(dirname "$rel")"
                case $rel in
                        *.xz) rel=${rel%.xz}; xz -dc "$f" >"$dst/$rel" ;; # busybox modprobe reads plain .ko
                        *) cp "$f" "$dst/$rel" ;;
                esac
                deps=$(tr '\0' '\n' <"$dst/$rel" | sed -n 's/^depends=//p' | head -1 | tr ',' ' ')
                # shellcheck disable=SC2206 # module names: no blanks, no globs
                todo+=($deps)
        done
        cp "$src"/modules.builtin* "$src"/modules.order "$dst/" 2>/dev/null || true
        echo "$MODULES" >"$dir/modules.list"
        rm -rf "$tmp"
        log "kernel $v unpacked in $(elapsed "$t0") s"
}

build_initramfs() {
        local pkg=$1 v=${1#linux-image-} dir=$cache/$1 stage id bb
        bb=$(command -v busybox || echo /bin/busybox)
        [ -x "$bb" ] || die "no busybox"
        id=$( (cat "$here/init.sh" "$here"/systemd/* "$dir/modules.list"; "$bb" 2>&1 | head -1; echo "$v") |
              sha256sum | cut -c1-16)
        if [ -f "$dir/initramfs.cpio.gz" ] && [ "$(cat "$dir/initramfs.id" 2>/dev/null)" = "$id" ]; then
                return 0
        fi
        log "building the initramfs"
        stage=$dir/stage.tmp
        rm -rf "$stage"
        mkdir -p "$stage"/{bin,sbin,usr/bin,usr/sbin,proc,sys,dev,tmp,lib/modules}
        cp "$bb" "$stage/bin/busybox"
        local a
        for a in $("$bb" --list); do
                [ "$a" = busybox ] || ln -sf busybox "$stage/bin/$a"
        done
        for a in modprobe insmod rmmod lsmod modinfo depmod poweroff; do
                ln -sf ../bin/busybox "$stage/sbin/$a"
        done
        cp -a "$dir/modules/lib/modules/$v" "$stage/lib/modules/"
        "$bb" depmod -b "$stage" "$v" || die "busybox depmod failed"
        cp "$here/init.sh" "$stage/init"
        chmod 755 "$stage/init"
        # The systemd mode's default target, test service and run-job.
        mkdir -p "$stage/glean-vm"
        cp "$here"/systemd/* "$stage/glean-vm/"
        (cd "$stage" && find . | cpio -o -H newc --quiet | gzip -1) >"$dir/initramfs.tmp" ||
                die "cannot pack the initramfs"
        mv "$dir/initramfs.tmp" "$dir/initramfs.cpio.gz"
        echo "$id" >"$dir/initramfs.id"
        rm -rf "$stage"
}

prepare() {
        local t0 pkg deb
        t0=$(now)
        mkdir -p "$cache"
        exec 9>"$cache/.lock"
        flock 9
        ensure_packages
        command -v qemu-system-x86_64 >/dev/null || unavailable "no qemu-system-x86_64"

        pkg=$(resolve_kernel)
        if [ -z "$pkg" ]; then
                pkg=$(cached_kernel) ||
                        unavailable "apt cannot tell which kernel linux-image-amd64 depends on"
                log "apt cannot resolve linux-image-amd64; using the cached $pkg"
        fi
        if [ ! -f "$cache/$pkg/vmlinux" ] ||
           [ "$(cat "$cache/$pkg/modules.list" 2>/dev/null)" != "$MODULES" ]; then
                if deb=$(fetch_deb "$pkg"); then
                        unpack_kernel "$pkg" "$deb"
                else
                        local old
                        old=$(cached_kernel) ||
                                unavailable "apt-get download $pkg failed (see build/vm/apt-download.log)"
                        log "apt-get download $pkg failed; using the cached $old"
                        pkg=$old
                fi
        fi
        build_initramfs "$pkg"
        echo "$pkg" >"$cache/current"

        # Only the current kernel is kept.
        local d
        for d in "$cache"/linux-image-* "$cache"/deb/linux-image-*.deb; do
                [ -e "$d" ] || continue
                case $(basename "$d") in "$pkg" | "${pkg}_"*) ;; *) rm -rf "$d" ;; esac
        done
        exec 9>&-
        log "prepared $pkg in $(elapsed "$t0") s"
}

# run MODE CMD...: MODE chroot (rig.sh run) or systemd (rig.sh systemd).
run() {
        local mode=$1
        shift
        [ $# -gt 0 ] || die "usage: rig.sh run|systemd CMD [ARG...]"
        if [ "${RIG_PREPARED:-0}" != 1 ]; then
                local st=0
                (prepare) || st=$?
                [ $st = 0 ] || exit $st
        fi
        local pkg dir vm_timeout cmd_timeout cwd job fifo
        pkg=$(cat "$cache/current")
        dir=$cache/$pkg
        vm_timeout=${VM_TIMEOUT:-600}
        cmd_timeout=$((vm_timeout > 60 ? vm_timeout - 30 : vm_timeout / 2))
        cwd=$(pwd -P)

        # The job script: read by the guest through the root share.
        mkdir -p "$cache/jobs"
        job=$(mktemp "$cache/jobs/job.XXXXXX")
        fifo=$job.out
        case "$job$cwd" in *[[:space:]]*) die "paths with blanks cannot pass to the guest: $job, $cwd" ;; esac
        {
                echo "# generated by tests/vm/rig.sh"
                printf 'cd %q || exit 125\n' "$cwd"
                local name
                for name in $(compgen -e); do
                        case $name in
                                GLEAN*|ASAN_OPTIONS|UBSAN_OPTIONS|LSAN_OPTIONS|CI)
                                        printf 'export %s=%q\n' "$name" "${!name}" ;;
                        esac
                done
                echo "export GLEAN_VM=1"
                printf 'exec'
                printf ' %q' "$@"
                printf '\n'
        } >"$job"
        chmod 644 "$job"
        mkfifo "$fifo"

        local append="console=ttyS0 quiet panic=-1 glean.job=$job glean.timeout=$cmd_timeout"
        if [ "$mode" = systemd ]; then
                append="$append glean.mode=systemd systemd.unified_cgroup_hierarchy=1"
                if [ -n "${VM_INSTALL:-}" ]; then
                        local inst
                        inst=$(cd "$VM_INSTALL" && pwd -P) || die "VM_INSTALL=$VM_INSTALL: no such directory"
                        case $inst in *[[:space:]]*) die "paths with blanks cannot pass to the guest: $inst" ;; esac
                        append="$append glean.install=$inst"
                fi
        fi

        local qpid="" tpid st t0
        # shellcheck disable=SC2317 # called through trap
        cleanup() {
                [ -n "$qpid" ] && kill -TERM "$qpid" 2>/dev/null
                rm -f "$job" "$fifo"
        }
        trap cleanup EXIT
        trap 'exit 130' INT TERM

        # The serial console ends lines with CRLF: strip the CRs.
        tr -d '\r' <"$fifo" &
        tpid=$!
        t0=$(now)
        # timeout(1) is the hard limit: it kills its child qemu and nothing else.
        timeout -k 10 "$vm_timeout" \
                qemu-system-x86_64 -accel "${VM_ACCEL:-tcg,thread=single}" -cpu max -smp 2 -m 2G \
                -nodefaults -no-user-config -display none -no-reboot -nic none \
                -chardev stdio,id=con,signal=off -serial chardev:con -monitor none \
                -device isa-debug-exit,iobase=0xf4,iosize=0x04 \
                -virtfs local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap,id=hostroot \
                -kernel "$dir/vmlinux" -initrd "$dir/initramfs.cpio.gz" \
                -append "$append ${VM_APPEND:-}" \
                </dev/null >"$fifo" 2>&1 &
        qpid=$!
        st=0
        wait $qpid || st=$?
        qpid=""
        wait $tpid || true
        log "qemu ran $(elapsed "$t0") s"
        case $st in
                124) log "the VM was killed after $vm_timeout s (VM_TIMEOUT)"; exit 124 ;;
                0) log "the guest stopped without reporting a status (kernel panic?)"; exit $RIG_FAILED ;;
        esac
        if [ $((st & 1)) = 1 ]; then
                exit $((st >> 1))
        fi
        log "qemu failed (exit $st)"
        exit $RIG_FAILED
}

case "${1:-}" in
        prepare) prepare ;;
        run) shift; run chroot "$@" ;;
        systemd) shift; run systemd "$@" ;;
        clean) rm -rf "$cache" ;;
        -h|--help|help) sed -n '4,34p' "$0" | sed 's/^# \{0,1\}//' ;;
        *) sed -n '4,34p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
esac
