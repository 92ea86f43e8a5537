#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
#
# bench/run-classad.sh — build the ClassAd benchmark, generate its workload
# in a temporary directory, run it and print its figures (the last line of
# classad-match's output).
#
# Usage: bench/run-classad.sh [N_MACHINES] [classad-match options, e.g. --repeat 5]
#
# Environment: BUILD_DIR (default build), NO_MAKE=1 to use the binaries
# already there instead of running `make bench`.

set -euo pipefail

cd "$(dirname "$0")/.."

n=${1:-100000}
shift || true
build=${BUILD_DIR:-build}

if [[ ${NO_MAKE:-0} != 1 ]]; then
        make -s bench >&2
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/glean-bench.XXXXXX")
trap 'rm -rf -- "$tmp"' EXIT

"$build/bench/classad-gen" machines "$n" >"$tmp/machines.ads"
"$build/bench/classad-gen" job >"$tmp/job.ad"
rc=0
"$build/bench/classad-match" "$@" "$tmp/job.ad" "$tmp/machines.ads" >"$tmp/out" || rc=$?

cat "$tmp/out" >&2
if [[ $rc -ne 0 ]]; then
        echo "classad-match failed with exit status $rc" >&2
        exit "$rc"
fi
tail -n 1 "$tmp/out"
