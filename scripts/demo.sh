#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
#
# demo.sh [GLEAN] — show what glean can do today: evaluate HTCondor policy
# expressions with `glean eval`, read configuration with `glean config` and
# submit files with `glean submit --dry-run`. Run by `make demo`, which
# builds first.
#
# Then a one-machine pool: glean-agent with a partitionable slot runs real
# jobs through `glean agent run`, and `glean policy-replay` runs the desktop
# policy over a timeline.

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

section "A one-machine pool: glean-agent runs real jobs"
AGENT=${GLEAN_AGENT:-$(dirname "$GLEAN")/glean-agent}
pool=$(mktemp -d /tmp/glean-demo-XXXXXX)
chmod 0755 "$pool"
mkdir -m 0777 "$pool/jobs"
agent_pid=
cleanup() {
        if [ -n "$agent_pid" ]; then
                kill "$agent_pid" 2>/dev/null || true
                wait "$agent_pid" 2>/dev/null || true
        fi
        rm -rf -- "$pool" "$conf" "$sub"
}
trap cleanup EXIT
cat >"$pool/glean.conf" <<CONF
EXECUTE = $pool/execute
AGENT_SOCKET = $pool/agent.sock
# A dedicated node: always willing (the desktop policy waits for 15 idle minutes).
use POLICY : ALWAYS_RUN_JOBS
POLLING_INTERVAL = 1
# One partitionable slot with the whole machine; each claim gets a dynamic slot.
NUM_SLOTS = 1
NUM_SLOTS_TYPE_1 = 1
SLOT_TYPE_1 = 100%
SLOT_TYPE_1_PARTITIONABLE = True
CONF
printf '\n$ cat glean.conf\n'; cat "$pool/glean.conf"
printf '\n$ glean-agent --config glean.conf &\n'
GLEAN_LOG=stderr "$AGENT" --config "$pool/glean.conf" 2>"$pool/agent.log" &
agent_pid=$!
for _ in $(seq 50); do [ -S "$pool/agent.sock" ] && break; sleep 0.1; done
export GLEAN_AGENT_SOCKET=$pool/agent.sock
show "glean agent status" agent status
cat >"$pool/jobs/job.sub" <<SUB
executable     = /bin/sh
arguments      = "-c 'echo job \$(Process) says hello from; id -un; sleep 1'"
output         = out.\$(Process).txt
initialdir     = $pool/jobs
request_memory = 256M
queue 2
SUB
printf '\n$ cat job.sub\n'; cat "$pool/jobs/job.sub"
show "glean agent run job.sub   # claim a slot, run both jobs on the claim, keep it alive" agent run "$pool/jobs/job.sub"
printf '\n$ cat out.0.txt out.1.txt\n'; cat "$pool/jobs/out.0.txt" "$pool/jobs/out.1.txt"
show "glean agent status   # the dynamic slot is gone, its resources are back" agent status
show "glean sensors   # the owner's keyboard and terminals, the load and pressure, as the agent senses them" sensors
printf '\n$ journalctl -u glean-agent GLEAN_SLOT=slot1_1   # here the agent logs to stderr:\n'
grep 'GLEAN_SLOT=slot1_1 ' "$pool/agent.log" | sed -e 's/ GLEAN_.*//' | cut -c 26-
show "glean agent shutdown" agent shutdown
wait "$agent_pid" 2>/dev/null || true
agent_pid=

section "The policy state machine without a kernel: glean policy-replay"
cat >"$pool/desktop.tl" <<'TL'
use POLICY : DESKTOP
---
0      expect Unclaimed/Idle      # nobody at the keyboard for a day
10     claim c1
20     activate c1
200    key                        # the owner types: the job is suspended
205    expect Claimed/Suspended
500    key                        # still typing...
700    key                        # ... so the job stays suspended
815    expect Preempting/Vacating # suspended for over 10 minutes: vacated
1010   job-exit
1010   expect Owner
TL
printf '\n$ cat desktop.tl\n'; cat "$pool/desktop.tl"
show "glean policy-replay desktop.tl" policy-replay "$pool/desktop.tl"

cat <<'EOF'

=== Not shown yet
Started by hand in the root cgroup, the agent runs jobs in process groups
(under systemd with Delegate=yes, or with BASE_CGROUP, each slot and job
gets a cgroup v2, whose runnable tasks the load sensor counts); there is
no central manager yet: `glean agent run` claims a slot of this machine.
EOF
