#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
#
# demo.sh [GLEAN] — show what glean can do today: evaluate HTCondor policy
# expressions with `glean eval`, read configuration with `glean config` and
# submit files with `glean submit --dry-run`. Run by `make demo`, which
# builds first.
#
# What it does not show yet: a pool. glean-agent (slots in cgroups, the
# owner-activity sensors, running jobs) and glean-negotiator are not written
# yet; when they are, this demo will run a one-machine pool.

set -euo pipefail

cd "$(dirname "$0")/.."
GLEAN=${1:-build/bin/glean}

if [ ! -x "$GLEAN" ]; then
        echo "demo.sh: $GLEAN is not built; run 'make demo' (or 'make' first)" >&2
        exit 1
fi

machine=$(cat examples/machine.ad)
job=$(cat examples/job.ad)

section() {
        printf '\n=== %s\n' "$*"
}

# show DISPLAY ARGS... — print "$ DISPLAY", then run glean with ARGS.
show() {
        local shown=$1
        shift
        printf '\n$ %s\n' "$shown"
        "$GLEAN" "$@" || printf '(exit status %d)\n' "$?"
}

section "The ClassAd language: three-valued logic, UNDEFINED and ERROR are values"
show "glean eval '1 + 2 * 3'"                  eval '1 + 2 * 3'
show "glean eval 'NoSuchAttr'"                 eval 'NoSuchAttr'
show "glean eval 'NoSuchAttr || true'"         eval 'NoSuchAttr || true'
show "glean eval 'NoSuchAttr && true'"         eval 'NoSuchAttr && true'
show "glean eval 'NoSuchAttr is undefined'"    eval 'NoSuchAttr is undefined'
show "glean eval '\"a\" + 1'"                  eval '"a" + 1'

section "A desktop's policy (examples/machine.ad: owner away for 30 minutes)"
cat examples/machine.ad
show "glean eval --my \"\$(cat examples/machine.ad)\" 'START'"    eval --my "$machine" 'START'
show "glean eval --my \"\$(cat examples/machine.ad)\" 'SUSPEND'"  eval --my "$machine" 'SUSPEND'
show "glean eval --my '[ KeyboardIdle = 20; LoadAvg = 0.1; CondorLoadAvg = 0; START = KeyboardIdle > 15 * 60 && (LoadAvg - CondorLoadAvg) <= 0.3 ]' 'START'   # the owner is back" \
        eval --my '[ KeyboardIdle = 20; LoadAvg = 0.1; CondorLoadAvg = 0; START = KeyboardIdle > 15 * 60 && (LoadAvg - CondorLoadAvg) <= 0.3 ]' 'START'

section "Matchmaking: a job (examples/job.ad) against the machine"
cat examples/job.ad
show "glean eval --my \"\$(cat examples/job.ad)\" --target \"\$(cat examples/machine.ad)\" 'Requirements'   # the job accepts the machine" \
        eval --my "$job" --target "$machine" 'Requirements'
show "glean eval --my \"\$(cat examples/machine.ad)\" --target \"\$(cat examples/job.ad)\" 'Requirements'   # the machine accepts the job" \
        eval --my "$machine" --target "$job" 'Requirements'
show "glean eval --my \"\$(cat examples/job.ad)\" --target \"\$(cat examples/machine.ad)\" 'Rank'   # how much the job likes it" \
        eval --my "$job" --target "$machine" 'Rank'
show "glean eval --my \"\$(cat examples/machine.ad)\" --target \"\$(cat examples/job.ad)\" 'Rank'   # how much the machine likes it" \
        eval --my "$machine" --target "$job" 'Rank'
show "glean eval --my \"\$(cat examples/job.ad)\" --target '[ Arch = \"X86_64\"; OpSys = \"LINUX\"; Memory = 1024; Cpus = 8 ]' 'Requirements'   # too little memory" \
        eval --my "$job" --target '[ Arch = "X86_64"; OpSys = "LINUX"; Memory = 1024; Cpus = 8 ]' 'Requirements'

section "Old-ClassAd semantics (the default, as HTCondor's daemons) and --strict"
echo "An unqualified name that MY lacks is looked up in TARGET only in old semantics:"
show "glean eval --my '[ a = 1 ]' --target '[ b = 2 ]' 'a + b'"            eval --my '[ a = 1 ]' --target '[ b = 2 ]' 'a + b'
show "glean eval --strict --my '[ a = 1 ]' --target '[ b = 2 ]' 'a + b'"   eval --strict --my '[ a = 1 ]' --target '[ b = 2 ]' 'a + b'

section "The configuration: HTCondor's default desktop policy, and an administrator's addition"
conf=$(mktemp)
sub=$(mktemp)
trap 'rm -f -- "$conf" "$sub"' EXIT
printf '%s\n' 'use POLICY : DESKTOP' 'START = ($(START)) || Owner == "coltrane"' >"$conf"
show "glean config START   # as shipped" config START
printf '\n$ cat glean.conf\n'; cat "$conf"
show "glean config --file glean.conf --verbose START" config --file "$conf" --verbose START

section "A submit description file, and the job ads it would queue"
printf '%s\n' 'executable     = /bin/echo' 'arguments      = "hello $(Item)"' 'request_memory = 1G' \
        'queue Item in (world, pool)' >"$sub"
printf '\n$ cat job.sub\n'; cat "$sub"
show "glean submit --dry-run --bracketed job.sub" submit --dry-run --bracketed "$sub"

section "Errors in the input are reported with line and column (exit status 2)"
show "glean eval 'KeyboardIdle > 15 *'"        eval 'KeyboardIdle > 15 *'

cat <<'EOF'

=== Not shown yet
This demo stops at the policy language. glean-agent (cgroup slots, owner
sensing with eBPF, running jobs) and glean-negotiator (fair-share matching)
are not written yet; when they are, `make demo` will run a one-machine pool.
EOF
