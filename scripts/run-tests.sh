#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# run-tests.sh TEST... — run each test binary from the repository root and
# print one summary line: "N passed, N failed[, N skipped]" (suites, i.e.
# binaries). A binary that exits 77 is skipped; any other non-zero exit is
# a failure. Exits 1 if any suite failed.

set -u

cd "$(dirname "$0")/.." || exit 1

passed=0
failed=0
skipped=0
failed_names=""
skipped_names=""

for t in "$@"; do
        echo "=== RUN   $t"
        "./$t"
        rc=$?
        case $rc in
                0)
                        passed=$((passed + 1))
                        echo "=== PASS  $t" ;;
                77)
                        skipped=$((skipped + 1))
                        skipped_names="$skipped_names $t"
                        echo "*** SKIPPED $t: exit 77, the environment lacks what it needs ***" ;;
                *)
                        failed=$((failed + 1))
                        failed_names="$failed_names $t"
                        echo "=== FAIL  $t (exit $rc)" ;;
        esac
        echo
done

[ -n "$skipped_names" ] && echo "SKIPPED:$skipped_names"
[ -n "$failed_names" ] && echo "FAILED:$failed_names"

summary="$passed passed, $failed failed"
[ "$skipped" -gt 0 ] && summary="$summary, $skipped skipped"
echo "$summary"

[ "$failed" -eq 0 ]
