#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
#
# check-systemd.sh BUILD STAGE — what `make check-systemd` runs once BUILD
# is installed into STAGE (make install DESTDIR=STAGE): adds the test's
# configuration (tests/vm/glean-vm.conf as /etc/glean/config.d/
# 50-vm-test.conf), boots the VM once under systemd (tests/vm/rig.sh
# systemd, the staged tree copied over the guest's root) and runs
# tests/vm/systemd-test.sh there. Ends with the summary line
# "check-systemd: N passed, N failed" (checks, not binaries).
#
# When the rig cannot be had here it says "SKIPPED: the VM rig cannot run
# here: REASON", ends with "0 passed, 0 failed, 1 skipped" and exits 0. A
# VM killed at VM_TIMEOUT (a guest that froze under emulation) runs once
# more, as in check-vm.sh.

set -uo pipefail

cd "$(dirname "$0")/../.." || exit 1
build=${1:-build}
stage=${2:-build/vm/install-$build}
log=build/vm/check-systemd-$build.log

t0=$(date +%s)
mkdir -p build/vm
prep_log=build/vm/prepare.log
bash tests/vm/rig.sh prepare 2>&1 | tee "$prep_log"
st=${PIPESTATUS[0]}
if [ "$st" = 3 ]; then
        reason=$(sed -n 's/^rig.sh: cannot run here: //p' "$prep_log" | tail -1)
        echo
        echo "**********************************************************************"
        echo "SKIPPED: the VM rig cannot run here: $reason"
        echo "Nothing ran under systemd in the VM; nothing is claimed to pass."
        echo "**********************************************************************"
        echo "SKIPPED: tests/vm/systemd-test.sh"
        echo "0 passed, 0 failed, 1 skipped"
        exit 0
elif [ "$st" != 0 ]; then
        echo "check-systemd: FAILED: tests/vm/rig.sh prepare failed (exit $st)"
        exit 1
fi

if [ ! -x "$stage/usr/local/sbin/glean-agent" ]; then
        echo "check-systemd: FAILED: $stage holds no installed glean (make install DESTDIR=$stage)"
        exit 1
fi
install -D -m 0644 tests/vm/glean-vm.conf "$stage/etc/glean/config.d/50-vm-test.conf"

san=0
[ "$build" = build-san ] && san=1
run_vm() {
        GLEAN_SAN=$san RIG_PREPARED=1 VM_INSTALL=$stage \
                bash tests/vm/rig.sh systemd bash tests/vm/systemd-test.sh 2>&1 | tee "$log"
        st=${PIPESTATUS[0]}
}
run_vm
# As in check-vm.sh: a guest that froze under emulation until the VM was
# killed at VM_TIMEOUT gets one more run, loudly; a failing check never.
if [ "$st" = 124 ]; then
        mv "$log" "$log.stalled"
        if grep -qE 'soft lockup|self-detected stall' "$log.stalled"; then
                why="the guest kernel stalled"
        else
                why="the guest stopped answering"
        fi
        echo "check-systemd: $why under emulation and the VM was killed at VM_TIMEOUT (its log: $log.stalled); running the VM once more"
        run_vm
fi

boot=$(sed -n 's/^glean-vm: systemd [a-z-]* after \([0-9.]*\) s of uptime.*/\1/p' "$log" | tail -1)
echo "check-systemd: VM run took $(($(date +%s) - t0)) s in all, systemd up after ${boot:-?} s of guest uptime (log: $log)"
summary=$(grep -E '^check-systemd: [0-9]+ passed, [0-9]+ failed' "$log" | tail -1)
if [ -z "$summary" ]; then
        echo "check-systemd: FAILED: the VM ended (exit $st) before the test's summary"
        exit 1
fi
# The summary, last, for whoever reads the closing line.
echo "$summary"
[ "$st" = 0 ] || exit 1
