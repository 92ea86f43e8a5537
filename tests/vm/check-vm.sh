#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
#
# check-vm.sh BUILD — what `make check-vm` runs once the tests are built:
# boots the VM once (tests/vm/rig.sh) and runs in it tests/vm/smoke.sh and
# every binary of tests/vm/tests.txt (build/ read as BUILD/) that exists;
# a listed binary that does not exist yet is reported and left out. Ends
# with the summary line "N passed, N failed[, N skipped]".
#
# When the rig cannot be had here (no qemu and no root to install it, apt
# or the kernel download fails) it says "SKIPPED: the VM rig cannot run
# here: REASON", ends with "0 passed, 0 failed, N skipped" and exits 0.

set -uo pipefail

cd "$(dirname "$0")/../.." || exit 1
build=${1:-build}
log=build/vm/check-vm.log

present=()
missing=()
for t in $(sed -e 's/#.*//' tests/vm/tests.txt); do
        t=$build/${t#build/}
        if [ -x "$t" ]; then present+=("$t"); else missing+=("$t"); fi
done
for t in "${missing[@]}"; do
        echo "check-vm: MISSING $t: not built (no tests/${t#"$build"/tests/}.c yet), left out"
done

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
        echo "Nothing ran in the VM; nothing is claimed to pass."
        echo "**********************************************************************"
        echo "SKIPPED: tests/vm/smoke.sh ${present[*]}"
        echo "0 passed, 0 failed, $((1 + ${#present[@]})) skipped"
        exit 0
elif [ "$st" != 0 ]; then
        echo "check-vm: FAILED: tests/vm/rig.sh prepare failed (exit $st)"
        exit 1
fi

run_vm() {
        RIG_PREPARED=1 bash tests/vm/rig.sh run bash tests/vm/guest-check.sh "${present[@]}" 2>&1 | tee "$log"
        st=${PIPESTATUS[0]}
}
run_vm
# The guest can freeze under software emulation (a soft lockup, an RCU
# stall on a vCPU whose timer TCG starved, or output that simply stops)
# until the VM is killed at VM_TIMEOUT: the VM then runs once more, loudly.
# A test that fails is never retried; one that hangs fails the second run.
if [ "$st" = 124 ]; then
        mv "$log" "$log.stalled"
        if grep -qE 'soft lockup|self-detected stall' "$log.stalled"; then
                why="the guest kernel stalled"
        else
                why="the guest stopped answering"
        fi
        echo "check-vm: $why under emulation and the VM was killed at VM_TIMEOUT (its log: $log.stalled); running the VM once more"
        run_vm
fi

echo "check-vm: VM run took $(($(date +%s) - t0)) s in all (log: $log)"
summary=$(grep -E '^([a-z-]+: )?[0-9]+ passed, [0-9]+ failed' "$log" | tail -1)
if [ -z "$summary" ]; then
        echo "check-vm: FAILED: the VM ended (exit $st) before the tests' summary"
        exit 1
fi
# The summary, last, for whoever reads the closing line.
echo "$summary"
[ "$st" = 0 ] || exit 1
