#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
#
# demo.sh [GLEAN] — a whole pool on this machine, for about a minute: a
# central manager (glean-negotiator) and an agent (glean-agent) with one
# partitionable slot, on a private configuration (examples/demo/glean.conf:
# socket, port, database and keys in a temporary directory; an
# installed pool is not disturbed). Two users created for the demo submit
# real jobs with different priority factors; the demo shows them matched
# and running (in their own cgroups where the agent has cgroups), the
# owner arriving at the keyboard (their jobs frozen, then thawed), the jobs
# completing, `glean q`, `glean status`, `glean userprio` and a fair-share
# plot of the accounts. Everything it made — processes, users, cgroups,
# files — is gone when it exits, on errors and Ctrl-C too.
#
# Run by `make demo` (which installs what is missing and builds first), as
# root: it creates the users glean-demo-ann and glean-demo-bob. The
# programs: GLEAN (default build/bin/glean), $GLEAN_AGENT and
# $GLEAN_NEGOTIATOR (default: next to GLEAN). DEMO_PLOT=FILE.svg keeps the
# plot as an SVG file.

set -euo pipefail

cd "$(dirname "$0")/.."
GLEAN=${1:-build/bin/glean}
bindir=$(dirname "$GLEAN")
AGENT=${GLEAN_AGENT:-$bindir/glean-agent}
NEGOTIATOR=${GLEAN_NEGOTIATOR:-$bindir/glean-negotiator}
USERS=(glean-demo-ann glean-demo-bob)
FACTORS=(1 4)
COMMENT="glean make demo"

for p in "$GLEAN" "$AGENT" "$NEGOTIATOR"; do
        if [ ! -x "$p" ]; then
                echo "demo.sh: $p is not built; run 'make demo' (or 'make' first)" >&2
                exit 1
        fi
done
if [ "$(id -u)" -ne 0 ]; then
        echo "demo.sh: run it as root (sudo make demo): it creates two users for the demo and runs their jobs as them" >&2
        exit 1
fi

# One demo at a time on a machine: its users have fixed names, and a demo
# clears what an earlier one left of them. A second demo waits its turn.
lock=/run/lock
[ -d "$lock" ] || lock=/tmp
exec 9>"$lock/glean-demo.lock"
if ! flock -n 9; then
        echo "demo.sh: another demo runs on this machine; waiting for it (up to 100 s)" >&2
        flock -w 100 9 || {
                echo "demo.sh: the other demo did not end within 100 s" >&2
                exit 1
        }
fi

start=$(date +%s)
section() {
        printf '\n=== [%2ds] %s\n' "$(($(date +%s) - start))" "$*"
}

# ---- the temporary directory, and leaving nothing behind ------------------

dir=$(mktemp -d /tmp/glean-demo.XXXXXX)
chmod 0755 "$dir"
nego_pid='' agent_pid='' sampler_pid='' typist_pid='' scope=''
created_users=()

# stop PID: SIGTERM, up to 10 s, then SIGKILL.
stop() {
        local pid=$1 i
        [ -n "$pid" ] || return 0
        kill -TERM "$pid" 2>/dev/null || return 0
        for i in $(seq 100); do
                kill -0 "$pid" 2>/dev/null || break
                sleep 0.1
        done
        kill -KILL "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
}

# pids_of USER: the processes of a user the demo created (from /proc: a
# fresh Debian may lack ps).
pids_of() {
        local uid p
        uid=$(id -u "$1" 2>/dev/null) || return 0
        for p in /proc/[0-9]*; do
                [ "$(stat -c %u "$p" 2>/dev/null)" = "$uid" ] && echo "${p#/proc/}"
        done
        return 0
}

# Jobs that outlived the agent.
kill_user() {
        local pids
        pids=$(pids_of "$1")
        # shellcheck disable=SC2086 # one pid a word
        [ -z "$pids" ] || kill -KILL $pids 2>/dev/null || true
}

cleanup() {
        local status=$? u
        trap - EXIT INT TERM
        [ -z "$sampler_pid" ] || stop "$sampler_pid"
        [ -z "$typist_pid" ] || stop "$typist_pid"
        stop "$agent_pid"
        # The agent's scope (and its delegated cgroups) ends with it; make sure.
        [ -z "$scope" ] || systemctl stop "$scope.scope" 2>/dev/null || true
        stop "$nego_pid"
        for u in "${created_users[@]}"; do
                kill_user "$u"
                userdel "$u" 2>/dev/null || true
                if getent group "$u" >/dev/null; then
                        groupdel "$u" 2>/dev/null || true
                fi
        done
        rm -rf -- "$dir"
        if [ "$status" -ne 0 ]; then
                echo "demo.sh: failed (exit $status); everything it made is removed" >&2
        fi
        exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# fail MESSAGE [LOG...]: say why, show the end of the logs, exit 1.
fail() {
        local log
        echo "demo.sh: $1" >&2
        shift
        for log in "$@"; do
                [ -s "$log" ] || continue
                echo "--- the end of $(basename "$log")" >&2
                tail -n 20 "$log" >&2
        done
        exit 1
}

# show COMMAND...: print "$ glean ARGS" and run glean against the pool.
show() {
        local a shown=
        for a in "$@"; do
                case $a in
                        *[[:space:]\"\|\&]*) shown="$shown '$a'" ;;
                        *) shown="$shown $a" ;;
                esac
        done
        printf '\n$ glean%s\n' "$shown"
        "$dir/bin/glean" "$@" || printf '(exit status %d)\n' "$?"
}

# as USER COMMAND...: run COMMAND as USER (a demo user) in its directory.
as() {
        local u=$1
        shift
        (cd "$dir/jobs/$u" && runuser -u "$u" -- "$@")
}

# until SECONDS WHAT COMMAND...: poll COMMAND every 0.2 s until it succeeds.
until_true() {
        local seconds=$1 what=$2 i
        shift 2
        for i in $(seq $((seconds * 5))); do
                "$@" && return 0
                sleep 0.2
        done
        "$dir/bin/glean" status -af Name State Activity >&2 || true
        fail "$what did not happen within $seconds s" "$dir/negotiator.log" "$dir/agent.log"
}

# ---- the pool ---------------------------------------------------------------

section "A private pool in $dir"
mkdir -m 0755 "$dir/bin" "$dir/jobs"
# Where the demo users can run it from (a checkout in /root is not theirs to read).
install -m 0755 "$GLEAN" "$dir/bin/glean"
export GLEAN_NEGOTIATOR_SOCKET=$dir/negotiator.sock GLEAN_CONFIG=$dir/glean.conf
: >"$dir/console"
touch -a -d '-1 hour' "$dir/console" # the owner has been away for an hour
# A copy of the demo's configuration beside it: the users' glean reads it
# too, and a checkout in /root is not theirs to read.
install -m 0644 examples/demo/glean.conf "$dir/demo.conf"
# The agent serves its jobs' files on a TCP port of its own (TRANSFER_PORT):
# a free one, so that an installed pool's agent is not disturbed.
for xport in $(seq 19620 19720); do
        ss -Hltn "sport = :$xport" 2>/dev/null | grep -q . || break
done
printf 'DEMO_DIR = %s\ninclude : %s/demo.conf\nTRANSFER_PORT = %s\n' "$dir" "$dir" "$xport" >"$dir/glean.conf"
printf '$ cat glean.conf    # (examples/demo/glean.conf, DEMO_DIR = %s)\n' "$dir"
grep -v '^#' examples/demo/glean.conf | sed -e '/^$/d' -e 's/^/    /'
# The central manager's signing key, and this machine's token, as an
# administrator would make and install them (docs/operations.md).
host=$("$dir/bin/glean" config FULL_HOSTNAME)
"$dir/bin/glean" token --init >/dev/null
"$dir/bin/glean" token create --machine "$host" --output "$dir/machine.cred" 2>/dev/null
"$dir/bin/glean" token install "$dir/machine.cred" >/dev/null
rm -f "$dir/machine.cred"
echo "\$ glean token --init; glean token create --machine $host; glean token install ..."
"$dir/bin/glean" token list | sed 's/^/    /'

GLEAN_LOG=stderr "$NEGOTIATOR" --config "$dir/glean.conf" >"$dir/negotiator.log" 2>&1 9>&- &
nego_pid=$!
until_true 10 "the central manager's start" test -s "$dir/port"
echo "glean-negotiator (pid $nego_pid): users at $dir/negotiator.sock, agents at 127.0.0.1:$(cat "$dir/port")"

# The agent: under systemd, in a scope of its own with the cgroup subtree
# delegated (as glean-agent.service's Delegate=yes), which systemd removes
# when the agent exits; elsewhere in this shell's cgroup, where it finds
# what it can.
agent_cmd=("$AGENT" --config "$dir/glean.conf" --set "COLLECTOR_HOST=127.0.0.1:$(cat "$dir/port")")
if [ -d /run/systemd/system ] && command -v systemd-run >/dev/null 2>&1; then
        scope=glean-demo-agent-$$
        agent_cmd=(systemd-run --quiet --scope --collect --unit="$scope" -p Delegate=yes -- "${agent_cmd[@]}")
fi
GLEAN_LOG=stderr "${agent_cmd[@]}" >"$dir/agent.log" 2>&1 9>&- &
agent_pid=$!
slot_up() {
        "$dir/bin/glean" status -af Name 2>/dev/null | grep -q '^slot1@'
}
until_true 15 "the agent's slot in the central manager" slot_up
echo "glean-agent (pid $agent_pid) dials the central manager with its token; its slot:"
show status

section "Cgroups"
if ! grep -q 'jobs run without cgroups' "$dir/agent.log"; then
        cgroups=1
        grep -o 'slots in cgroup v2 at .*\|cgroup v2 at .* offers .*' "$dir/agent.log" | head -n 1 | sed 's/ GLEAN_.*//'
        echo "Each slot and each job gets a cgroup of its own under it: the agent freezes, thaws"
        echo "and kills a job as a whole, and reads its usage there."
else
        cgroups=0
        grep -o 'jobs run without cgroups: .*' "$dir/agent.log" | head -n 1 | sed 's/ GLEAN_.*//'
        echo "So this agent runs each job in a process group of its own, frozen with SIGSTOP"
        echo "and thawed with SIGCONT (a job that leaves its process group escapes that)."
        if [ -z "$scope" ]; then
                echo "(No systemd here to delegate a cgroup subtree to the agent: under systemd the demo"
                echo "starts it in a scope with Delegate=yes, as glean-agent.service does.)"
        fi
fi

# ---- two users and their jobs ------------------------------------------------

# The owner at the keyboard: a key press through /dev/uinput where the
# kernel has it and the agent's input sensor sees it; otherwise the access
# time of CONSOLE_DEVICES (examples/demo/glean.conf), which counts as the
# keyboard's input.
owner_how="simulated: the access time of CONSOLE_DEVICES ($dir/console) counts as input"
owner_cmd="touch -a $dir/console"
owner_key() {
        touch -a "$dir/console"
}
input_sensor=$(sed -n 's/.*input sensor: \([a-z]*\) (kernel).*/\1/p' "$dir/agent.log" | head -n 1)
if [ ! -c /dev/uinput ]; then
        owner_how="$owner_how (this kernel has no /dev/uinput to press a real key with)"
elif [ -z "$input_sensor" ]; then
        owner_how="$owner_how (the agent's input sensor is not in the kernel here: see 'glean sensors')"
elif ! command -v cc >/dev/null 2>&1 || ! cc -O2 -o "$dir/bin/press-key" examples/demo/press-key.c 2>"$dir/cc.log"; then
        owner_how="$owner_how (examples/demo/press-key.c does not build here: $(head -n 1 "$dir/cc.log"))"
else
        owner_how="a virtual keyboard through /dev/uinput presses Shift (examples/demo/press-key.c), the agent's input sensor ($input_sensor) sees it"
        owner_cmd="press-key"
        owner_key() {
                "$dir/bin/press-key" || fail "the key press did not work"
        }
fi

section "Two users, created for the demo"
for u in "${USERS[@]}"; do
        if id "$u" >/dev/null 2>&1; then
                if [ "$(getent passwd "$u" | cut -d: -f5)" != "$COMMENT" ]; then
                        fail "a user $u exists and is not the demo's: remove it or run the demo elsewhere"
                fi
                kill_user "$u" # left by an earlier demo that was killed
                userdel "$u" 2>/dev/null || true
        fi
        useradd --system --user-group --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin \
                --comment "$COMMENT" "$u"
        created_users+=("$u")
        mkdir -m 0755 "$dir/jobs/$u"
        chown "$u:" "$dir/jobs/$u"
        echo "useradd $u (uid $(id -u "$u"))"
done

# jobs USER...: the users' jobs in the queue, "ID OWNER STATUS" a line.
queue_empty() {
        [ -z "$("$dir/bin/glean" q -allusers -af ClusterId 2>/dev/null)" ]
}
# running N: at least N jobs are Running in the queue.
running() {
        [ "$("$dir/bin/glean" q -allusers -af JobStatus 2>/dev/null | grep -c '^2$')" -ge "$1" ]
}
# suspended N: N slots are Suspended (N: a number, or + for one or more).
suspended() {
        local n
        n=$("$dir/bin/glean" status -af Activity 2>/dev/null | grep -c '^Suspended$')
        if [ "$1" = + ]; then [ "$n" -ge 1 ]; else [ "$n" -eq "$1" ]; fi
}
# The processes of the demo users' jobs: pid, user, state (T: stopped),
# whether their cgroup is frozen, command line and cgroup v2, from /proc and
# the cgroup's cgroup.events.
show_processes() {
        local u pid state args cg frozen cg2
        cg2=$(findmnt -n -t cgroup2 -o TARGET 2>/dev/null | head -n 1)
        printf '\n$ # the users'"'"' processes: /proc/PID/stat, cmdline, cgroup (frozen: its cgroup.events)\n'
        printf '%7s %-15s %-5s %-6s %-24s %s\n' PID USER STATE FROZEN COMMAND CGROUP
        for u in "${USERS[@]}"; do
                for pid in $(pids_of "$u"); do
                        state=$(sed 's/.*) \(.\).*/\1/' "/proc/$pid/stat" 2>/dev/null) || continue
                        args=$(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | sed "s|$dir/jobs/$u/||g")
                        cg=$(sed -n 's/^0:://p' "/proc/$pid/cgroup" 2>/dev/null)
                        frozen=-
                        case $(sed -n 's/^frozen //p' "$cg2$cg/cgroup.events" 2>/dev/null) in
                        1) frozen=yes ;;
                        0) frozen=no ;;
                        esac
                        printf '%7s %-15s %-5s %-6s %-24.24s %s\n' "$pid" "$u" "$state" "$frozen" "$args" "$cg"
                done
        done
}

# The accounts every second, for the plot: "SECONDS USER IN_USE USAGE".
sample() {
        local t
        while :; do
                t=$(($(date +%s) - start))
                "$dir/bin/glean" userprio -allusers --json 2>/dev/null | awk -v t="$t" '
                        /"name":/ { n = $2; gsub(/[",]/, "", n); sub(/@.*/, "", n); sub(/^glean-demo-/, "", n) }
                        /"weighted_resources_in_use":/ { r = $2; sub(/,/, "", r) }
                        /"weighted_accumulated_usage_hours":/ { u = $2; sub(/,/, "", u); printf "%d %s %s %.1f\n", t, n, r, u * 3600 }'
                sleep 1
        done >>"$dir/usage.dat"
}

section "Their first jobs: matched, claimed, running"
for u in "${USERS[@]}"; do
        cp examples/demo/hello.sub examples/demo/job.sub examples/demo/work.sh "$dir/jobs/$u/"
        chown "$u:" "$dir/jobs/$u"/*
done
printf '\n$ cat hello.sub    # work.sh: examples/demo/work.sh\n'
grep -v '^#' examples/demo/hello.sub
for u in "${USERS[@]}"; do
        printf '\n%s$ glean submit hello.sub\n' "${u#glean-demo-}"
        as "$u" "$dir/bin/glean" submit hello.sub
done
sample 9>&- &
sampler_pid=$!
until_true 20 "the first jobs' start" running 2
show q -allusers -nobatch
show status
show_processes
if [ "$cgroups" = 1 ]; then
        echo "Each job in a cgroup of its own, under its slot's, frozen and killed as a whole."
else
        echo "(No cgroups here: each job's processes share the agent's cgroup, as said above.)"
fi
until_true 20 "the first jobs' end" queue_empty
for u in "${USERS[@]}"; do
        printf '\n%s$ cat hello.out\n' "${u#glean-demo-}"
        cat "$dir/jobs/$u/hello.out"
done

section "A job that carries its files"
u=${USERS[0]}
cp examples/demo/travel.sub examples/demo/count.sh examples/demo/words.txt "$dir/jobs/$u/"
chown "$u:" "$dir/jobs/$u"/*
printf '\n$ cat travel.sub\n'
grep -v '^#' examples/demo/travel.sub
printf '\n%s$ glean submit travel.sub && glean wait travel.log\n' "${u#glean-demo-}"
as "$u" "$dir/bin/glean" submit travel.sub
as "$u" "$dir/bin/glean" wait -wait 60 travel.log
printf '\n%s$ cat travel.out    # it ran in its sandbox under EXECUTE, with its input there\n' "${u#glean-demo-}"
cat "$dir/jobs/$u/travel.out"
printf '\n%s$ ls -l counts.txt; head -3 counts.txt    # its output came back, %s'"'"'s\n' "${u#glean-demo-}" "${u#glean-demo-}"
ls -l "$dir/jobs/$u/counts.txt" | sed "s|$dir/jobs/$u/||"
head -3 "$dir/jobs/$u/counts.txt"
printf '\n%s$ cat travel.log    # HTCondor'"'"'s user-log format: condor_wait and scripts read it\n' "${u#glean-demo-}"
cat "$dir/jobs/$u/travel.log"
until_true 20 "the travelling job's leaving" queue_empty

section "Different priority factors, more jobs than CPUs"
echo "Both are in the accounts now (a submitter appears with its first claim)."
i=0
for u in "${USERS[@]}"; do
        show userprio -setfactor "$u@demo.glean" "${FACTORS[$i]}"
        i=$((i + 1))
done
echo
echo "The policy (examples/demo/glean.conf): START = KeyboardIdle > 2, SUSPEND = KeyboardIdle < 2,"
echo "CONTINUE = KeyboardIdle > 3. The owner's keyboard: $owner_how"
printf '\n$ %s    # the owner presses a key: nothing starts while both users submit\n' "$owner_cmd"
owner_key
printf '\n$ cat job.sub\n'
grep -v '^#' examples/demo/job.sub
for u in "${USERS[@]}"; do
        printf '\n%s$ glean submit job.sub\n' "${u#glean-demo-}"
        as "$u" "$dir/bin/glean" submit job.sub
done
owner_key
show q -allusers
echo
echo "The owner leaves; 2 seconds later the slot is willing again, and the matchmaker shares"
echo "its 4 CPUs in inverse proportion to the users' effective priorities (real priority"
echo "x factor): ann (factor ${FACTORS[0]}) gets the larger share, bob (factor ${FACTORS[1]}) the rest."
until_true 20 "the jobs' start" running 4
show q -allusers -nobatch
show userprio

section "The owner comes back: the jobs are frozen, then thawed"
# The owner types, a key every half second, until the freeze is seen and
# for 3 seconds more: the slots stay Suspended for as long as the typing
# lasts, however late the agent's evaluations come on a busy machine (one
# key press suspends for about 2 s; in a loaded emulated machine the
# agent's evaluations can be further apart than that).
printf '\n$ while :; do %s; sleep 0.5; done &    # the owner types\n' "$owner_cmd"
(
        trap 'exit 0' TERM
        while :; do
                owner_key
                sleep 0.5
        done
) &
typist_pid=$!
until_true 60 "the suspension" suspended +
show status -af Name State Activity KeyboardIdle -constraint 'PartitionableSlot || State == "Claimed"'
show_processes
if [ "$cgroups" = 1 ]; then
        echo "(FROZEN yes: the job's cgroup is frozen, its processes wait in the kernel's freezer.)"
else
        echo "(STATE T: stopped by SIGSTOP.)"
fi
echo "The owner types for 3 more seconds..."
sleep 3
stop "$typist_pid"
typist_pid=
echo "... and leaves."
until_true 30 "the jobs' thaw" suspended 0
show status -af Name State Activity KeyboardIdle -constraint 'PartitionableSlot || State == "Claimed"'
show_processes

section "The jobs complete"
until_true 120 "the jobs' end" queue_empty
for u in "${USERS[@]}"; do
        printf '\n%s$ cat job.0.out\n' "${u#glean-demo-}"
        cat "$dir/jobs/$u/job.0.out"
done
sleep 2
stop "$sampler_pid"
sampler_pid=
show q -allusers
show history
show userprio -allusers

section "Fair share: the accounts over the demo"
if ! command -v gnuplot >/dev/null 2>&1; then
        echo "(gnuplot is not installed: make deps installs it.) The samples:"
        cat "$dir/usage.dat"
else
        for u in ann bob; do
                awk -v u="$u" '$2 == u { print $1, $3, $4 }' "$dir/usage.dat" >"$dir/$u.dat"
        done
        cat >"$dir/plot.gp" <<GP
set xlabel "seconds into the demo"
set key top left
set multiplot layout 2,1
set title "CPUs in use by each user"
set ylabel "CPUs"
set yrange [0:4.5]
plot "$dir/ann.dat" using 1:2 with steps title "ann (factor ${FACTORS[0]})", \
     "$dir/bob.dat" using 1:2 with steps title "bob (factor ${FACTORS[1]})"
set title "usage charged to each user"
set ylabel "CPU-seconds"
set yrange [0:*]
plot "$dir/ann.dat" using 1:3 with lines title "ann", "$dir/bob.dat" using 1:3 with lines title "bob"
unset multiplot
GP
        gnuplot -e "set terminal dumb size 80,40" "$dir/plot.gp"
        if [ -n "${DEMO_PLOT:-}" ]; then
                gnuplot -e "set terminal svg size 800,600; set output '$DEMO_PLOT'" "$dir/plot.gp"
                echo "The plot as SVG: $DEMO_PLOT"
        fi
fi

section "The pool at rest"
echo "The dynamic slots given back leave the central manager's collector once their agent"
echo "no longer advertises them; the partitionable slot has its 4 CPUs again."
one_slot() {
        [ "$("$dir/bin/glean" status -af Name 2>/dev/null | wc -l)" -eq 1 ]
}
until_true 20 "the dynamic slots' leaving" one_slot
show status

section "Stopping the pool, removing the users and $dir"
stop "$agent_pid"
agent_pid=
stop "$nego_pid"
nego_pid=
echo "done in $(($(date +%s) - start)) s"
