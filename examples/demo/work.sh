#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# work.sh [TICKS] — a job of `make demo`: says who and where it runs (its
# account and its cgroup), does a little work (a checksum of 2 MB of random
# data), then ticks TICKS times (default 5), a second each, each tick its
# own `sleep 1`: a frozen job stops ticking.
ticks=${1:-5}
echo "$(id -un) on $(hostname), cgroup $(sed -n 's/^0:://p' /proc/self/cgroup)"
echo "sha256 of 2 MB: $(head -c 2M /dev/urandom | sha256sum | cut -c1-16)"
i=0
while [ "$i" -lt "$ticks" ]; do
        sleep 1
        i=$((i + 1))
        echo "tick $i at $(date +%T)"
done
