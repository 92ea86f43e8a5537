#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
#
# bench/run-bpf-sensors.sh — build the scheduler-probe benchmark and print
# its figures (one "name = value" line each): ns per event of each program
# of the load sensor, and a pipe ping-pong without the probes, with them
# and its tasks outside any slot, and inside a slot. See bench/README.md.
#
# Usage: bench/run-bpf-sensors.sh [bpf-sensors options: -n ROUNDS, -r REPEATS]
#
# Needs root, BPF with kernel BTF and a writable cgroup v2; without them it
# says so and exits 0 (a benchmark that cannot run here is not a failure).
#
# Environment: BUILD_DIR (default build), NO_MAKE=1 to use the binary
# already there instead of running `make bench`.

set -euo pipefail

cd "$(dirname "$0")/.."

build=${BUILD_DIR:-build}

if [[ ${NO_MAKE:-0} != 1 ]]; then
        make -s bench >&2
fi

rc=0
"$build/bench/bpf-sensors" "$@" || rc=$?
if [[ $rc -eq 77 ]]; then
        echo "bpf-sensors: skipped (needs root, BPF with BTF and a writable cgroup v2)" >&2
        exit 0
fi
if [[ $rc -ne 0 ]]; then
        echo "bpf-sensors failed with exit status $rc" >&2
        exit "$rc"
fi
