#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
#
# bench/run-agent.sh — build the execute-node benchmark and print its
# figures (one "name = value" line each): the policy evaluation of a slot
# for 1, 64 and 1024 slots, d-slot carving, and the load hand-out of 1024
# slots. See bench/README.md.
#
# Usage: bench/run-agent.sh [agent-policy options, e.g. --repeat 9 or --only carve]
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
"$build/bench/agent-policy" "$@" || rc=$?
if [[ $rc -ne 0 ]]; then
        echo "agent-policy failed with exit status $rc" >&2
        exit "$rc"
fi
