#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
#
# systemd-test.sh — what `make check-systemd` runs in the VM (through
# tests/vm/check-systemd.sh and rig.sh systemd): glean installed by `make
# install` (copied over the guest's root with a pool key, unused: the pool
# runs on tokens made here, and
# tests/vm/glean-vm.conf in config.d), under the host's systemd as PID 1, as
# root in glean-vm-test.service. One line per check ("ok N - ..." or "not
# ok N - ..."), then "check-systemd: N passed, N failed"; exit 1 when one
# failed. Outside the VM it skips (exit 77): it adds a user and starts the
# units.
#
# Checks: the install activated as make install does on a running systemd
# (sysusers, tmpfiles, catalog, daemon-reload); both units active (Type=
# notify: READY=1 came), the negotiator as the user glean with its signing
# key through LoadCredential=, the agent with its token (glean token); the jobs' scope glean-agent-jobs.scope (its
# placeholder alone in init, the agent alone in its service's cgroup); a
# job of a user the test adds runs in a cgroup under the scope, in a slot
# with limits, ends with its exit code (glean wait), is in glean history
# and in the journal of both daemons with the catalog's MESSAGE_IDs
# (journalctl -x explains them); systemctl reload keeps the agent; both
# daemons outlive their WatchdogSec; the agent killed (its job runs on,
# KillMode=process) is restarted and re-adopts the job, which completes
# once (the same scope); systemctl restart vacates a running job, which
# runs again and completes (one scope, one placeholder); systemctl stop
# leaves no job and no scope; the exposure scores of systemd-analyze
# security; scripts/demo.sh under systemd (its scope with Delegate=yes); no
# sanitizer report, no failed unit.
#
# GLEAN_SAN=1: the installed programs are the sanitizer build's (the
# units get ASAN_OPTIONS through a drop-in, see below). GLEAN_VM_DEMO=0
# leaves the demo out, GLEAN_VM_DEMO=1 runs it with GLEAN_SAN=1 too (by
# default it does not: it takes over 3 minutes in the guest even
# without the sanitizers).

cd "$(dirname "$0")/../.." || exit 1

if [ "${GLEAN_VM:-}" != 1 ] || [ ! -d /run/systemd/system ]; then
        echo "SKIPPED: systemd-test.sh runs in the VM under systemd: make check-systemd"
        exit 77
fi

PREFIX=/usr/local
U=glean-vm-alice
home=/home/$U
failed=0
known=0
n=0
t0=$(cut -d' ' -f1 /proc/uptime)

ok() { n=$((n + 1)); echo "ok $n - $*"; }
no() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $*"; }
check() { # DESCRIPTION COMMAND...
        local d=$1
        shift
        if "$@"; then ok "$d"; else no "$d"; return 1; fi
}
todo() { n=$((n + 1)); known=$((known + 1)); echo "not ok $n - $* # TODO known failure"; }
note() { echo "# $*"; }
uptime_s() { cut -d' ' -f1 /proc/uptime; }

# until_true SECONDS COMMAND...: polls COMMAND every 0.5 s.
until_true() {
        local i=0 max=$(($1 * 2))
        shift
        until "$@"; do
                i=$((i + 1))
                [ $i -ge $max ] && return 1
                sleep 0.5
        done
}

main_pid() { systemctl show -p MainPID --value "$1"; }
prop() { systemctl show -p "$2" --value "$1"; }
both_active() { [ "$(systemctl is-active glean-negotiator glean-agent | sort -u)" = active ]; }

# What went wrong, for a check that failed.
show_units() {
        systemctl status --no-pager -n 0 glean-negotiator glean-agent 2>&1 | sed 's/^/#   /'
        journalctl --no-pager -n 25 -o short-monotonic -u glean-negotiator -u glean-agent 2>&1 | sed 's/^/#   /'
}

# as_user COMMAND...: COMMAND as the test's user, in its home.
as_user() {
        (cd "$home" && setpriv --reuid="$U" --regid="$U" --init-groups -- \
                env -i PATH=/usr/local/bin:/usr/bin:/bin HOME="$home" USER="$U" LOGNAME="$U" LANG=C.UTF-8 "$@")
}

# submit N CODE: the job N (job.sh N CODE) of the test's user; its cluster.
submit() {
        cat >"$home/job$1.sub" <<EOF
executable     = job.sh
arguments      = $1 $2
output         = job$1.out
error          = job$1.err
request_cpus   = 1
request_memory = 64M
queue
EOF
        chown "$U:" "$home/job$1.sub"
        as_user glean submit "job$1.sub" | sed -n 's/.* submitted to cluster \([0-9]*\)\.$/\1/p'
}

# The pid job.sh N wrote, once it is running.
job_pid() { cat "$home/pid.$1" 2>/dev/null; }
job_alive() { local p; p=$(job_pid "$1") && [ -n "$p" ] && kill -0 "$p" 2>/dev/null; }
gone_from_queue() { [ -z "$(glean q -allusers -af ClusterId -constraint "ClusterId == $1" 2>/dev/null)" ]; }
history_attr() { glean history "$1.0" -af "$2" 2>/dev/null | head -n 1; }

echo "# systemd $(systemctl --version | head -n 1 | cut -d' ' -f2), kernel $(uname -r);" \
     "the test starts at ${t0} s of uptime"

# ---- the install, activated as make install does on a running systemd ----

check "the installed programs are there" test -x $PREFIX/bin/glean -a -x $PREFIX/sbin/glean-agent \
        -a -x $PREFIX/sbin/glean-negotiator
check "systemd-sysusers makes the user glean (sysusers.d)" systemd-sysusers $PREFIX/lib/sysusers.d/glean.conf
check "the user glean exists" getent passwd glean
check "systemd-tmpfiles --create (tmpfiles.d)" systemd-tmpfiles --create $PREFIX/lib/tmpfiles.d/glean.conf
check "/run/glean and /var/lib/glean are root:glean 1775" \
        test "$(stat -c '%a %U %G' /run/glean /var/lib/glean | sort -u)" = "1775 root glean"
check "journalctl --update-catalog" journalctl --update-catalog
check "the catalog knows glean's message ids" sh -c 'journalctl --list-catalog | grep -q "glean-negotiator\|Job .* exited"'

# The test's drop-ins: a short watchdog, to see both daemons outlive it;
# with the sanitizer build, the sanitizers' options: the negotiator's
# SystemCallFilter= refuses ptrace, so LeakSanitizer cannot run at its exit
# ("LeakSanitizer has encountered a fatal error", exit status 1, the unit
# failed): no leak checks there (the host suites have them); the agent,
# unfiltered, keeps them.
for u in glean-negotiator glean-agent; do
        mkdir -p "/etc/systemd/system/$u.service.d"
        printf '[Service]\nWatchdogSec=10s\n' >"/etc/systemd/system/$u.service.d/50-vm-test.conf"
        if [ "${GLEAN_SAN:-0}" = 1 ]; then
                leaks=$([ $u = glean-negotiator ] && echo 0 || echo 1)
                printf '[Service]\nEnvironment=ASAN_OPTIONS=detect_leaks=%s:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1\n' \
                        "$leaks" >"/etc/systemd/system/$u.service.d/60-sanitizers.conf"
        fi
done
check "systemctl daemon-reload" systemctl daemon-reload

# ---- machine identities: the pool on tokens (docs/operations.md) --------

check "glean token --init: the central manager's signing key" sh -c 'glean token --init >/dev/null'
check "glean token create --machine glean-vm" \
        sh -c 'glean token create --machine glean-vm --output /root/glean-vm.cred 2>/dev/null'
check "glean token install: the machine's credential, the manager's key pinned" \
        sh -c 'glean token install /root/glean-vm.cred >/dev/null && rm -f /root/glean-vm.cred'
check "the signing key and the credential are root's, mode 0600" \
        test "$(stat -c '%a %U' /etc/glean/signing.key /etc/glean/tokens.d/machine | sort -u)" = "600 root"
# Tokens only: the pool key the rig wrote is not used.
printf 'SEC_DEFAULT_AUTHENTICATION_METHODS = TOKEN\n' >/etc/glean/config.d/40-tokens.conf

# ---- start --------------------------------------------------------------

start=$(uptime_s)
if ! check "systemctl start glean-negotiator glean-agent (Type=notify: returns at READY=1)" \
        systemctl start glean-negotiator glean-agent; then
        show_units
fi
note "started in $(awk -v a="$start" -v b="$(uptime_s)" 'BEGIN { printf "%.1f", b - a }') s"
check "systemctl is-active glean-negotiator glean-agent: both active" both_active
nego_pid=$(main_pid glean-negotiator)
agent_pid=$(main_pid glean-agent)
started=$(uptime_s)
check "glean-negotiator runs as the user glean" test "$(stat -c %U "/proc/$nego_pid" 2>/dev/null)" = glean
check "glean-agent runs as root" test "$(stat -c %U "/proc/$agent_pid" 2>/dev/null)" = root
for u in glean-negotiator glean-agent; do
        w=$(tr '\0' '\n' <"/proc/$(main_pid $u)/environ" | sed -n 's/^WATCHDOG_USEC=//p')
        check "$u has WATCHDOG_USEC=10000000 (WatchdogSec=10s, the test's drop-in): ${w:-none}" test "$w" = 10000000
done
cred=/run/credentials/glean-negotiator.service/signing.key
note "the credential: $(stat -c '%A %U:%G' $cred 2>&1); the key: $(stat -c '%A %U:%G' /etc/glean/signing.key)"
check "the negotiator's signing key is a credential (LoadCredential=)" test -s $cred
check "the negotiator read it: agents authenticate by token (its journal)" \
        sh -c 'journalctl -u glean-negotiator -o cat | grep -q "agents authenticate by token; the signing key"'
slots_up() { [ "$(glean status -af Name 2>/dev/null | grep -c '^slot[12]@')" = 2 ]; }
if ! check "the agent's two slots reach the central manager (its token, the manager's key pinned)" \
        until_true 60 slots_up; then
        show_units
fi
agent_cg=$(prop glean-agent ControlGroup)
note "glean-agent's cgroup: $agent_cg; controllers: $(cat "/sys/fs/cgroup$agent_cg/cgroup.controllers" 2>&1)"

# The jobs' scope (agent/daemon/scope.c): the slots live in
# glean-agent-jobs.scope beside the service, its placeholder alone in
# <scope>/init; the agent alone in its service's cgroup, which has no
# controllers enabled and no children, so that systemd can always start a
# new agent there.
SCOPE=glean-agent-jobs.scope
scope_cg=$(prop $SCOPE ControlGroup)
n_scopes() { systemctl list-units --all --no-legend --plain 'glean-agent-jobs*.scope' | grep -c .; }
placeholder() { cat "/sys/fs/cgroup$scope_cg/init/cgroup.procs" 2>/dev/null; }
# Counted by the name the placeholder gives itself (prctl), never signalled so.
n_placeholders() { pgrep -x glean-scope | wc -l; }
one_scope_one_placeholder() {
        [ "$(systemctl is-active $SCOPE)" = active ] && [ "$(n_scopes)" = 1 ] &&
                [ "$(placeholder | wc -l)" = 1 ] && [ "$(n_placeholders)" = 1 ] &&
                [ "$(cat "/proc/$(placeholder)/comm" 2>/dev/null)" = glean-scope ]
}
service_cg_bare() { # the service's cgroup: the agent alone, no child, no controller enabled
        [ -z "$(find "/sys/fs/cgroup$agent_cg" -mindepth 1 -type d)" ] &&
                [ -z "$(cat "/sys/fs/cgroup$agent_cg/cgroup.subtree_control")" ] &&
                [ "$(cat "/sys/fs/cgroup$agent_cg/cgroup.procs")" = "$(main_pid glean-agent)" ]
}
note "$SCOPE: $(prop $SCOPE ActiveState), cgroup $scope_cg, Delegate=$(prop $SCOPE Delegate), slice $(prop $SCOPE Slice);" \
     "init: $(placeholder | tr '\n' ' '); subtree_control: $(cat "/sys/fs/cgroup$scope_cg/cgroup.subtree_control" 2>&1)"
check "the jobs' scope $SCOPE is active, Delegate=yes, in glean-agent's slice" \
        sh -c "[ \"\$(systemctl is-active $SCOPE)\" = active ] && [ \"$(prop $SCOPE Delegate)\" = yes ] &&
               [ \"$(prop $SCOPE Slice)\" = \"$(prop glean-agent Slice)\" ]"
check "one scope, its placeholder the only process in $scope_cg/init" one_scope_one_placeholder
check "the placeholder is no job and no agent: pid $(placeholder), $(ps -o user=,comm= -p "$(placeholder)" 2>&1)" \
        test "$(ps -o user= -p "$(placeholder)" 2>/dev/null)" = root
check "the scope's cgroup enables controllers for the slots (cpu memory pids)" \
        sh -c "grep -q memory /sys/fs/cgroup$scope_cg/cgroup.subtree_control && grep -q cpu /sys/fs/cgroup$scope_cg/cgroup.subtree_control"
check "glean-agent's own cgroup holds the agent alone: no child cgroup, no controller enabled" service_cg_bare

# ---- a user's job ---------------------------------------------------------

useradd --create-home --shell /bin/sh --comment "make check-systemd" "$U"
check "a user for the jobs: $U" id "$U"
# job.sh N CODE: writes its pid, waits for release.N (at most 10 minutes),
# exits with CODE.
cat >"$home/job.sh" <<'EOF'
#!/bin/sh
echo $$ >pid.$1
i=0
while [ ! -e release.$1 ] && [ $i -lt 3000 ]; do sleep 0.2; i=$((i + 1)); done
exit $2
EOF
chmod 755 "$home/job.sh"
chown "$U:" "$home/job.sh"

c1=$(submit 1 3)
check "$U submits job 1 (glean submit): cluster ${c1:-none}" test "$c1" = 1
check "job 1.0 runs" until_true 60 job_alive 1
pid=$(job_pid 1)
cg=$(sed -n 's/^0:://p' "/proc/$pid/cgroup" 2>/dev/null)
note "job 1.0: pid $pid, user $(stat -c %U "/proc/$pid" 2>&1), cgroup $cg"
check "job 1.0 runs as $U" test "$(stat -c %U "/proc/$pid" 2>/dev/null)" = "$U"
check "job 1.0 runs in a cgroup under the jobs' scope ($scope_cg/slots/...), not in glean-agent.service" \
        sh -c "case '$cg' in '$scope_cg'/slots/?*) true ;; *) false ;; esac"
check "job 1.0's cgroup is not the agent's own" test "$cg" != "$(sed -n 's/^0:://p' "/proc/$agent_pid/cgroup")"
slot=${cg%/*}
note "its slot's cgroup: $slot: memory.max $(cat "/sys/fs/cgroup$slot/memory.max" 2>&1)," \
     "cpu.weight $(cat "/sys/fs/cgroup$slot/cpu.weight" 2>&1), cpu.max $(cat "/sys/fs/cgroup$slot/cpu.max" 2>&1)"
for f in memory.max memory.high cpu.max cpu.weight pids.max; do
        check "the slot's cgroup has $f" test -f "/sys/fs/cgroup$slot/$f"
done
check "the slot's memory.max is its 512 MB" test "$(cat "/sys/fs/cgroup$slot/memory.max" 2>/dev/null)" = 536870912
check "the slot's cpu.weight is 100 (one CPU)" test "$(cat "/sys/fs/cgroup$slot/cpu.weight" 2>/dev/null)" = 100
touch "$home/release.1"
wait_out=$(as_user glean wait --timeout 120 1.0)
st=$?
note "glean wait 1.0: $wait_out"
check "glean wait 1.0 exits with the job's exit code 3" test "$st" = 3
check "glean history shows 1.0 with ExitCode 3" test "$(history_attr 1 ExitCode)" = 3
as_user glean history | sed 's/^/#   /'

# ---- the journal ----------------------------------------------------------

# glean.catalog's ids: a slot's transition (agent), a job's start and exit
# (central manager).
ID_TRANSITION=5e3c0b7a4d2f4e61a8c9f0d1b2e3a4c5
ID_START=4ba82fda19a3446b976d4222ebff735f
ID_EXIT=79708057343948b6a9085fae941088f5
journalctl --sync 2>/dev/null
jobj() { journalctl --no-pager -o cat -u "$1" GLEAN_JOB=1.0 "${@:2}"; }
jobj glean-agent | sed 's/^/#   agent: /'
jobj glean-negotiator | sed 's/^/#   negotiator: /'
check "journalctl -u glean-agent GLEAN_JOB=1.0: the job's start (Claimed/Busy)" \
        sh -c "journalctl -o cat -u glean-agent GLEAN_JOB=1.0 MESSAGE_ID=$ID_TRANSITION | grep -q -- '-> Claimed/Busy'"
check "journalctl -u glean-agent GLEAN_JOB=1.0: the job's end (Claimed/Busy -> ...)" \
        sh -c "journalctl -o cat -u glean-agent GLEAN_JOB=1.0 MESSAGE_ID=$ID_TRANSITION | grep -q 'Claimed/Busy ->'"
check "journalctl -u glean-negotiator GLEAN_JOB=1.0: its start (MESSAGE_ID=$ID_START)" \
        test -n "$(jobj glean-negotiator MESSAGE_ID=$ID_START)"
check "journalctl -u glean-negotiator GLEAN_JOB=1.0: its exit (MESSAGE_ID=$ID_EXIT)" \
        test -n "$(jobj glean-negotiator MESSAGE_ID=$ID_EXIT)"
explained=$(journalctl --no-pager -x -u glean-negotiator GLEAN_JOB=1.0 MESSAGE_ID=$ID_EXIT 2>&1)
echo "$explained" | sed 's/^/#   /'
check "journalctl -x explains the exit record (the catalog's Subject)" \
        sh -c "echo \"\$1\" | grep -q 'Subject: Job 1.0 exited on'" sh "$explained"

# ---- reload, watchdog ----------------------------------------------------

check "systemctl reload glean-agent" systemctl reload glean-agent
check "glean-agent is active after the reload, the same process" \
        sh -c "[ \"\$(systemctl is-active glean-agent)\" = active ] && [ \"\$(systemctl show -p MainPID --value glean-agent)\" = $agent_pid ]"
check "glean-agent logged the SIGHUP" until_true 10 sh -c 'journalctl -o cat -u glean-agent | grep -q "^SIGHUP"'
check "systemctl reload glean-negotiator" systemctl reload glean-negotiator
check "glean-negotiator is active after the reload, the same process" \
        sh -c "[ \"\$(systemctl is-active glean-negotiator)\" = active ] && [ \"\$(systemctl show -p MainPID --value glean-negotiator)\" = $nego_pid ]"

# Past WatchdogSec (10 s) since the start, and a little more.
left=$(awk -v a="$started" -v b="$(uptime_s)" 'BEGIN { d = 13 - (b - a); print (d > 0 ? int(d + 1) : 0) }')
[ "$left" -gt 0 ] && sleep "$left"
note "$(awk -v a="$started" -v b="$(uptime_s)" 'BEGIN { printf "%.0f", b - a }') s since the start"
for u in glean-negotiator glean-agent; do
        want=$([ $u = glean-agent ] && echo "$agent_pid" || echo "$nego_pid")
        check "$u outlives WatchdogSec=10s: active, the same process, NRestarts=0" \
                sh -c "[ \"\$(systemctl is-active $u)\" = active ] && [ \"\$(systemctl show -p MainPID --value $u)\" = $want ] &&
                       [ \"\$(systemctl show -p NRestarts --value $u)\" = 0 ]"
        check "$u's last WATCHDOG=1 is recent" test -n "$(prop $u WatchdogTimestamp)"
done
check "no watchdog timeout in the journal" sh -c '! journalctl -o cat -u glean-agent -u glean-negotiator | grep -qi "watchdog timeout"'

# ---- the agent killed: its job runs on, the restarted agent re-adopts it ----

c2=$(submit 2 0)
check "job 2.0 runs" until_true 60 job_alive 2
pid2=$(job_pid 2)
placeholder1=$(placeholder)
check "systemctl kill --kill-who=main --signal=KILL glean-agent" \
        systemctl kill --kill-who=main --signal=KILL glean-agent
new_agent() {
        local p
        p=$(main_pid glean-agent)
        [ "$p" != 0 ] && [ "$p" != "$agent_pid" ] && [ "$(systemctl is-active glean-agent)" = active ]
}
# systemd before 254 (no DelegateSubgroup=) starts a service's main process
# in the unit's own cgroup: it works because the slots are in the jobs'
# scope, not there (before, 219/CGROUP at each RestartSec while jobs ran).
readopted=0
if until_true 60 new_agent; then
        ok "Restart=on-failure starts glean-agent again while its job runs (active, a new process)"
        readopted=1
else
        no "Restart=on-failure starts glean-agent again while its job runs (active, a new process)"
        show_units
fi
check "the restarted agent took the same scope and placeholder (pid ${placeholder1:-none})" \
        sh -c "[ \"\$(cat /sys/fs/cgroup$scope_cg/init/cgroup.procs)\" = '$placeholder1' ] && [ \"\$(pgrep -x glean-scope | wc -l)\" = 1 ] &&
               [ \"\$(systemctl list-units --all --no-legend --plain 'glean-agent-jobs*.scope' | grep -c .)\" = 1 ]"
check "glean-agent's own cgroup holds the new agent alone" service_cg_bare
check "job 2.0 ran on without its agent (KillMode=process), the same process" \
        sh -c "kill -0 $pid2 && [ \"\$(cat $home/pid.2)\" = $pid2 ]"
running2() { [ "$(glean q "${c2:-0}.0" -af JobStatus 2>/dev/null)" = 2 ]; }
if [ $readopted = 1 ]; then
        check "glean-agent's NRestarts is 1" test "$(prop glean-agent NRestarts)" = 1
        agent_pid=$(main_pid glean-agent)
        check "job 2.0 is still Running in the queue after the agent's restart" running2
        touch "$home/release.2"
        check "job 2.0 completes" until_true 60 gone_from_queue "${c2:-0}"
        check "job 2.0 started once (NumJobStarts 1): re-adopted, not run again" \
                test "$(history_attr "${c2:-0}" NumJobStarts)" = 1
else
        touch "$home/release.2"
        check "once job 2.0 has ended, systemd starts glean-agent again" until_true 90 new_agent
        agent_pid=$(main_pid glean-agent)
        check "job 2.0 leaves the queue" until_true 60 gone_from_queue "${c2:-0}"
        note "job 2.0: $(glean history "${c2:-0}.0" -af JobStatus NumJobStarts ExitCode 2>&1)" \
             "(JobStatus NumJobStarts ExitCode)"
fi

# ---- systemctl restart: the running job is vacated and runs again ---------

c3=$(submit 3 0)
check "job 3.0 runs" until_true 60 job_alive 3
pid3=$(job_pid 3)
check "systemctl restart glean-agent" systemctl restart glean-agent
check "glean-agent is active after the restart" both_active
check "the restart's stop vacated job 3.0 (its process is gone)" until_true 30 sh -c "! kill -0 $pid3 2>/dev/null"
rerun3() { local p; p=$(job_pid 3) && [ "$p" != "$pid3" ] && job_alive 3; }
check "job 3.0 runs again" until_true 60 rerun3
touch "$home/release.3"
check "job 3.0 completes" until_true 60 gone_from_queue "${c3:-0}"
check "job 3.0 started twice (NumJobStarts 2)" test "$(history_attr "${c3:-0}" NumJobStarts)" = 2
scope_cg=$(prop $SCOPE ControlGroup)
note "after the restart: $(n_scopes) scope(s), init: $(placeholder | tr '\n' ' '), placeholders: $(pgrep -x glean-scope | tr '\n' ' ')"
check "after systemctl restart: one scope, one placeholder" one_scope_one_placeholder
check "after systemctl restart: glean-agent's own cgroup holds the agent alone" service_cg_bare

# ---- systemctl stop: no job left, the scope gone ---------------------------

c4=$(submit 4 0)
check "job 4.0 runs" until_true 60 job_alive 4
pid4=$(job_pid 4)
check "systemctl stop glean-agent" systemctl stop glean-agent
check "the stop vacated job 4.0 (its process is gone)" sh -c "! kill -0 $pid4 2>/dev/null"
check "nothing of $U runs after the stop" sh -c "! pgrep -u $U >/dev/null"
check "the jobs' scope is gone after the stop, and its placeholder" \
        until_true 15 sh -c "[ \"\$(systemctl list-units --all --no-legend --plain 'glean-agent-jobs*.scope' | grep -c .)\" = 0 ] &&
                             ! pgrep -x glean-scope >/dev/null"
journalctl --no-pager -o cat -u glean-agent -n 3 | sed 's/^/#   /'
check "systemctl start glean-agent" systemctl start glean-agent
scope_cg=$(prop $SCOPE ControlGroup)
check "after the start: a new scope, one placeholder" until_true 15 one_scope_one_placeholder
check "job 4.0 runs again after the start" until_true 60 sh -c "p=\$(cat $home/pid.4) && [ \"\$p\" != $pid4 ] && kill -0 \$p"
touch "$home/release.4"
check "job 4.0 completes" until_true 60 gone_from_queue "${c4:-0}"

# ---- systemd-analyze security ---------------------------------------------

for u in glean-negotiator glean-agent; do
        line=$(systemd-analyze security --no-pager "$u.service" 2>&1 | tail -n 1)
        note "systemd-analyze security $u.service: $line"
        check "systemd-analyze security $u.service gives a score" \
                sh -c "echo \"\$1\" | grep -q 'Overall exposure level'" sh "$line"
done
check "glean-negotiator's exposure is at most 2.0" \
        sh -c 'systemd-analyze security glean-negotiator.service | tail -n 1 |
               sed "s/.*service: \([0-9.]*\).*/\1/" | awk "{ exit !(\$1 <= 2.0) }"'

# ---- make demo's script under systemd ---------------------------------------

if [ "${GLEAN_VM_DEMO:-$((1 - ${GLEAN_SAN:-0}))}" = 1 ]; then
        demo_out=$(mktemp)
        GLEAN_AGENT=$PREFIX/sbin/glean-agent GLEAN_NEGOTIATOR=$PREFIX/sbin/glean-negotiator \
                timeout 400 bash scripts/demo.sh $PREFIX/bin/glean >"$demo_out" 2>&1
        st=$?
        sed 's/^/#   demo: /' "$demo_out"
        check "scripts/demo.sh runs to its end under systemd (exit 0)" test "$st" = 0
        check "the demo's agent ran in a scope with Delegate=yes: slots in cgroup v2" \
                grep -q 'slots in cgroup v2 at /sys/fs/cgroup/system.slice/glean-demo-agent-[0-9]*\.scope' "$demo_out"
        check "the demo's jobs ran each in a cgroup of its own" \
                grep -q 'Each job in a cgroup of its own' "$demo_out"
        check "the demo's scope is gone" sh -c '! systemctl list-units --all --no-legend "glean-demo-agent-*" | grep -q .'
        rm -f "$demo_out"
fi

# ---- the end ---------------------------------------------------------------

if [ "${GLEAN_SAN:-0}" = 1 ]; then
        check "no sanitizer report in the journal" \
                sh -c '! journalctl -o cat | grep -E "ERROR: AddressSanitizer|runtime error:|ERROR: LeakSanitizer"'
fi
check "both units still active" both_active
failed_units=$(systemctl --failed --no-legend --plain | awk '{ print $1 }' | tr '\n' ' ')
check "no failed unit${failed_units:+ (}${failed_units% }${failed_units:+)}" test -z "$failed_units"
[ $failed -gt 0 ] && show_units

note "the test took $(awk -v a="$t0" -v b="$(uptime_s)" 'BEGIN { printf "%.0f", b - a }') s"
echo "1..$n"
k=""
[ $known -gt 0 ] && k=", $known known failures (TODO)"
echo "check-systemd: $((n - failed - known)) passed, $failed failed$k"
[ $failed = 0 ]
