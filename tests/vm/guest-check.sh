#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
#
# guest-check.sh TEST... — what `make check-vm` runs inside the VM (through
# tests/vm/check-vm.sh and rig.sh): scripts/run-tests.sh on
# tests/vm/smoke.sh and the given test binaries. Inside the VM nothing may
# skip: a suite that exits 77 there is counted as failed, and a corrected
# summary line follows run-tests.sh's.

cd "$(dirname "$0")/../.." || exit 1

out=$(mktemp)
sh scripts/run-tests.sh tests/vm/smoke.sh "$@" | tee "$out"
st=${PIPESTATUS[0]}

skipped=$(sed -n 's/^SKIPPED://p' "$out" | tail -1)
if [ -n "$skipped" ]; then
        summary=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$out" | tail -1)
        p=$(echo "$summary" | sed -E 's/^([0-9]+) passed, ([0-9]+) failed, ([0-9]+) skipped.*/\1/')
        f=$(echo "$summary" | sed -E 's/^([0-9]+) passed, ([0-9]+) failed, ([0-9]+) skipped.*/\2/')
        s=$(echo "$summary" | sed -E 's/^([0-9]+) passed, ([0-9]+) failed, ([0-9]+) skipped.*/\3/')
        echo
        echo "*** FAILED:$skipped skipped inside the VM (GLEAN_VM=1), where the kernel has"
        echo "*** everything: a test must fail there, not skip. Counted as failed:"
        echo "check-vm: $p passed, $((f + s)) failed"
        st=1
fi
rm -f "$out"
exit "$st"
