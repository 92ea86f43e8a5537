#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# smoke.sh — proves the VM rig gives the tests what they come for. Run
# inside the VM (GLEAN_VM=1) by `make check-vm` before the real tests, as
# one suite; outside the VM it skips (exit 77).
#
# Asserts: /sys/fs/cgroup is a pure cgroup2 with cpu, cpuset, io, memory,
# pids, enabled for the root's children as systemd does, and a child cgroup
# gets them and takes limits; /dev/uinput appears
# after `modprobe uinput`; kprobe_events, BTF and bpffs are there; the
# repository's build directory is visible.

cd "$(dirname "$0")/../.." || exit 1

if [ "${GLEAN_VM:-}" != 1 ]; then
        echo "SKIPPED: smoke.sh checks the VM rig: run it with tests/vm/rig.sh run $0"
        exit 77
fi

failed=0
n=0
ok() { n=$((n + 1)); echo "ok $n - $*"; }
no() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $*"; }
check() { # DESCRIPTION COMMAND...
        d=$1; shift
        if "$@"; then ok "$d"; else no "$d"; fi
}

cg=/sys/fs/cgroup
echo "# kernel $(uname -r), $(nproc) CPUs"

check "/sys/fs/cgroup is cgroup2" test "$(stat -f -c %T $cg)" = cgroup2fs
check "no cgroup v1 hierarchy is mounted" sh -c '! grep -q " cgroup " /proc/mounts'
check "cgroup2 is mounted with nsdelegate" grep -q "^cgroup2 $cg cgroup2 .*nsdelegate" /proc/mounts
controllers=$(cat $cg/cgroup.controllers)
echo "# cgroup.controllers: $controllers"
for c in cpu cpuset io memory pids; do
        check "controller $c is in cgroup.controllers" sh -c "echo ' $controllers ' | grep -q ' $c '"
done

# As on a systemd host: the root's children get these controllers.
check "the root's cgroup.subtree_control has cpuset cpu io memory pids" \
        test "$(cat $cg/cgroup.subtree_control)" = "cpuset cpu io memory pids"
# A child: every controller, limits written, a process moved in.
child=$cg/glean-vm-smoke
mkdir $child
check "a child cgroup gets cpu cpuset io memory pids" \
        test "$(cat $child/cgroup.controllers)" = "cpuset cpu io memory pids"
check "memory.max takes 64M" sh -c "echo 64M >$child/memory.max && test \$(cat $child/memory.max) = 67108864"
check "cpu.max takes 20000 100000" sh -c "echo '20000 100000' >$child/cpu.max && test \"\$(cat $child/cpu.max)\" = '20000 100000'"
check "pids.max takes 20" sh -c "echo 20 >$child/pids.max && test \$(cat $child/pids.max) = 20"
check "a process moves into the child" \
        sh -c "echo \$\$ >$child/cgroup.procs && grep -qx '0::/glean-vm-smoke' /proc/self/cgroup"
rmdir $child

check "/dev/uinput is absent before modprobe" test ! -e /dev/uinput
check "modprobe uinput succeeds" modprobe uinput
i=0
while [ ! -c /dev/uinput ] && [ $i -lt 20 ]; do sleep 0.1; i=$((i + 1)); done
check "/dev/uinput is a character device after modprobe uinput" test -c /dev/uinput
check "modprobe evdev succeeds" modprobe evdev

check "kprobe_events exists" test -f /sys/kernel/tracing/kprobe_events
check "input_event can take a kprobe" grep -qx input_event /sys/kernel/tracing/available_filter_functions
check "a kprobe on input_event registers and goes away" sh -c '
        echo "p:glean_vm_smoke input_event" >>/sys/kernel/tracing/kprobe_events &&
        test -d /sys/kernel/tracing/events/kprobes/glean_vm_smoke &&
        echo "-:glean_vm_smoke" >>/sys/kernel/tracing/kprobe_events'
check "kernel BTF exists (fentry)" test -f /sys/kernel/btf/vmlinux
check "bpffs is mounted on /sys/fs/bpf" test "$(stat -f -c %T /sys/fs/bpf)" = bpf_fs
check "debugfs is mounted" grep -q " /sys/kernel/debug debugfs " /proc/mounts

bin=$(dirname "${GLEAN:-build/bin/glean}")
check "the build directory $bin is visible" test -d "$bin"
[ -n "${GLEAN:-}" ] && check "GLEAN=$GLEAN runs" "$GLEAN" --version
check "the repository is writable (tmpfs overlay over the read-only share)" \
        sh -c 'touch build/.glean-vm-smoke && rm build/.glean-vm-smoke'

echo "1..$n"
if [ $failed -gt 0 ]; then
        echo "smoke.sh: $failed of $n checks failed"
        exit 1
fi
echo "smoke.sh: all $n checks passed"
