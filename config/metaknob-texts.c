/* SPDX-License-Identifier: Apache-2.0 */
/*
 * metaknob-texts.c — the table of metaknobs, `use CATEGORY : NAME[(ARGS)]`:
 * every one of HTCondor's (src/condor_utils/param_info.in, its [$ROLE.*],
 * [$POLICY.*], [$FEATURE.*], [$SECURITY.*] and [$EXPERIMENTAL.*] sections,
 * htcondor/htcondor 7491a145f6) and glean's own three policies, each with
 * what it means for glean (config.h: ConfigMetaknob) and the text read in
 * place of the use line.
 *
 * A text sets HTCondor's knobs with HTCondor's expressions, so that a
 * configuration written for HTCondor means the same here. $(0), $(N),
 * $(N?), $(N+), $(N#) and $(N:default) are the use line's arguments
 * (metaknobs.c substitutes them before the text is read). Where a text
 * differs from HTCondor's, on purpose, the comment above it says why; the
 * list is also in glean.conf(5) and tests/config/test-config-metaknobs.c.
 *
 * Refused metaknobs (status REFUSED, text NULL) set nothing and leave a
 * warning naming the use line (config_warnings()), so that every file
 * HTCondor ships still loads.
 */
#include <stddef.h>

#include "config-internal.h"

#define IMPL CONFIG_METAKNOB_IMPLEMENTED
#define PART CONFIG_METAKNOB_PARTIAL
#define REFU CONFIG_METAKNOB_REFUSED

/* The desktop policies' CpuBusyTimer, on purpose not HTCondor's. HTCondor
 * latches CpuBusy (STARTD_LATCH_EXPRS) into CpuBusyValue and a time stamp
 * CpuBusyTime, and computes the seconds it has been busy from them; glean's
 * agent publishes those seconds as CpuBusyTime itself (seed 002, 3.5.9.1)
 * and has no latches. STARTD_LATCH_EXPRS is still set, as HTCondor's. */
#define GLEAN_CPU_BUSY_TIMER "CpuBusyTimer = CpuBusyTime\n"

/* The runtime policies' trigger, on purpose not HTCondor's
 * (JobState == "Running") && ((time() - JobCurrentStartDate) > ...):
 * HTCondor's starter puts JobState in the job's ad, which glean's agent
 * does not; the slot's Activity "Busy" or "Retiring" (running, not
 * suspended) and JobStart (when the job started in it) say the same. */
#define GLEAN_RUNTIME(name) name " = (Activity == \"Busy\" || Activity == \"Retiring\") && ((time() - JobStart) > $(MAX_JOB_RUNTIME))\n"

/* ALLOW_DAEMON of the recommended security, on purpose not only HTCondor's
 * daemons (its service account, its pool password): glean's agents
 * authenticate as agent@<machine> with a token and as
 * condor_pool@UID_DOMAIN with the pool key (docs/operations.md), and would
 * all be refused. Recommended_v9_0 names condor_pool@* already and adds
 * agent@*; Recommended_v24_0 adds both. */
#define GLEAN_DAEMONS "condor_pool@* agent@*"

const ConfigMetaknob config_metaknob_table[] = {
        /* ---------------- ROLE ---------------- */
        { "ROLE", "Personal", IMPL,
          "the whole pool on one machine: run glean-negotiator and glean-agent on it. COLLECTOR_HOST is "
          "$(CONDOR_HOST) without HTCondor's ':0' (glean's agent does not look for a port the central manager "
          "chose at random: COLLECTOR_PORT, 9628). Also sets HTCondor's default policy (START = True, "
          "SUSPEND, PREEMPT and KILL False) where glean's built-in desktop policy would apply",
          "CONDOR_HOST = 127.0.0.1\n"
          "COLLECTOR_HOST = $(CONDOR_HOST)\n"
          "DAEMON_LIST = MASTER COLLECTOR NEGOTIATOR STARTD SCHEDD\n"
          "RunBenchmarks = 0\n",
          false, NULL },
        { "ROLE", "Execute", IMPL,
          "an execute machine: run glean-agent (HTCondor's startd). Also sets HTCondor's default policy "
          "(START = True, SUSPEND, PREEMPT and KILL False) where glean's built-in desktop policy would apply",
          "DAEMON_LIST = $(DAEMON_LIST) STARTD\n", false, NULL },
        { "ROLE", "Submit", IMPL,
          "a machine users submit from: glean's queue is glean-negotiator's (HTCondor's schedd), and users "
          "submit through it or through any machine's glean-agent; DAEMON_LIST is informational",
          "DAEMON_LIST = $(DAEMON_LIST) SCHEDD\n", false, NULL },
        { "ROLE", "CentralManager", IMPL,
          "the central manager: run glean-negotiator (HTCondor's collector, negotiator and schedd in one); "
          "DAEMON_LIST is informational",
          "DAEMON_LIST = $(DAEMON_LIST) COLLECTOR NEGOTIATOR\n", false, NULL },
        { "ROLE", "get_htcondor_central_manager", IMPL, "SECURITY : get_htcondor_idtokens and ROLE : CentralManager",
          "use SECURITY : get_htcondor_idtokens\n"
          "use ROLE : CentralManager\n", false, NULL },
        { "ROLE", "get_htcondor_submit", IMPL, "SECURITY : get_htcondor_idtokens and ROLE : Submit",
          "use SECURITY : get_htcondor_idtokens\n"
          "use ROLE : Submit\n", false, NULL },
        { "ROLE", "get_htcondor_execute", IMPL, "SECURITY : get_htcondor_idtokens and ROLE : Execute",
          "use SECURITY : get_htcondor_idtokens\n"
          "use ROLE : Execute\n", false, NULL },

        /* ---------------- POLICY ---------------- */
        { "POLICY", "Always_Run_Jobs", IMPL, "always start, never suspend or preempt: a dedicated machine",
          "WANT_SUSPEND = False\n"
          "WANT_VACATE = True\n"
          "SUSPEND = False\n"
          "CONTINUE = True\n"
          "PREEMPT = False\n"
          "START = True\n"
          "KILL = False\n"
          "PREEMPTION_REQUIREMENTS = False\n"
          "NEGOTIATOR_CONSIDER_PREEMPTION = False\n"
          "MaxJobRetirementTime = 2147483647\n"
          "CLAIM_WORKLIFE = 1200\n",
          false, NULL },
        { "POLICY", "Desktop", IMPL,
          "run jobs while the owner is away; suspend, then vacate when they come back. CpuBusyTimer is glean's "
          "CpuBusyTime (glean has no STARTD_LATCH_EXPRS)",
          "if ! defined PolicyExprFragments\n"
          "  use FEATURE : POLICY_EXPR_FRAGMENTS\n"
          "endif\n"
          "STARTD_LATCH_EXPRS = $(STARTD_LATCH_EXPRS) CpuBusy\n"
          GLEAN_CPU_BUSY_TIMER
          "WANT_SUSPEND = ($(SmallJob) || $(KeyboardNotBusy) || $(IsVanilla) ) && ( $(SUSPEND))\n"
          "WANT_VACATE = $(ActivationTimer) > 600 || $(IsVanilla)\n"
          "SUSPEND = ($(KeyboardBusy) || ( ($(CpuBusyTimer) > 120) && $(ActivationTimer) > 90))\n"
          "CONTINUE = ($(CPUIdle) && ($(ActivityTimer) > 10) && (KeyboardIdle > $(ContinueIdleTime)))\n"
          "PREEMPT = (((Activity == \"Suspended\") && ($(ActivityTimer) > $(MaxSuspendTime))) || "
          "(SUSPEND && (WANT_SUSPEND == False)))\n"
          "START = ((KeyboardIdle > $(StartIdleTime)) && ( $(CPUIdle) || "
          "(State != \"Unclaimed\" && State != \"Owner\")) )\n"
          "KILL = False\n"
          "MaxJobRetirementTime = 0\n"
          "CLAIM_WORKLIFE =\n"
          "SLOTS_CONNECTED_TO_KEYBOARD = 1000000\n"
          "SLOTS_CONNECTED_TO_CONSOLE = 1000000\n"
          "IS_OWNER = (START =?= False)\n",
          false, NULL },
        { "POLICY", "Desktop_Idle", IMPL,
          "run jobs on idle desktops, vacate (never suspend) when the owner or a load comes back; optional work "
          "hours (start_hour, end_hour [, first_day, last_day]) as DESKTOP_HOURS. CpuBusyTimer is glean's "
          "CpuBusyTime",
          "if $(1?)\n"
          "  use FEATURE : POLICY_HOURS_TO_START($(1+))\n"
          "endif\n"
          "NonCondorLoadAvg = (LoadAvg - CondorLoadAvg)\n"
          "CpuBusy = ($(NonCondorLoadAvg) >= $(HighLoad))\n"
          "CpuIdle = ($(NonCondorLoadAvg) <= $(BackgroundLoad))\n"
          "STARTD_LATCH_EXPRS = $(STARTD_LATCH_EXPRS) CpuBusy\n"
          GLEAN_CPU_BUSY_TIMER
          "PreemptKeyboardIdleTime = 60\n"
          "PreemptCpuBusyTime = 120\n"
          "PREEMPT = (KeyboardIdle < $(PreemptKeyboardIdleTime)) || ($(CpuBusyTimer) > $(PreemptCpuBusyTime))\n"
          "if defined NoJobsHours\n"
          "  PREEMPT = ($(PREEMPT)) && ($(NoJobsHours))\n"
          "endif\n"
          "START = (KeyboardIdle > $(StartIdleTime)) && $(CPUIdle)\n"
          "if defined RunJobsHours\n"
          "  START = ($(START)) || ($(RunJobsHours))\n"
          "endif\n"
          "WANT_SUSPEND = False\n"
          "WANT_VACATE = True\n"
          "SUSPEND = False\n"
          "CONTINUE = True\n"
          "KILL = False\n"
          "MaxJobRetirementTime = 0\n"
          "CLAIM_WORKLIFE =\n"
          "SLOTS_CONNECTED_TO_KEYBOARD = 1000000\n"
          "SLOTS_CONNECTED_TO_CONSOLE = 1000000\n"
          "IS_OWNER = (START =?= False)\n",
          false, "([start_hour, end_hour [, first_day, last_day]])" },
        { "POLICY", "Desktop_Hours", IMPL,
          "run jobs outside work hours only (start_hour, end_hour [, first_day, last_day]; 8, 12+5 by default), "
          "vacate when they begin.",
          "use FEATURE : POLICY_HOURS_TO_START($(1+))\n"
          "NonCondorLoadAvg = (LoadAvg - CondorLoadAvg)\n"
          "CpuBusy = ($(NonCondorLoadAvg) >= $(HighLoad))\n"
          "STARTD_LATCH_EXPRS = $(STARTD_LATCH_EXPRS) CpuBusy\n"
          GLEAN_CPU_BUSY_TIMER
          "PREEMPT = $(NoJobsHours)\n"
          "START = $(RunJobsHours)\n"
          "WANT_SUSPEND = False\n"
          "WANT_VACATE = True\n"
          "SUSPEND = False\n"
          "CONTINUE = True\n"
          "KILL = False\n"
          "MaxJobRetirementTime = 0\n"
          "CLAIM_WORKLIFE =\n"
          "SLOTS_CONNECTED_TO_KEYBOARD = 1000000\n"
          "SLOTS_CONNECTED_TO_CONSOLE = 1000000\n"
          "IS_OWNER = (START =?= False)\n",
          false, "([start_hour, end_hour [, first_day, last_day]])" },
        { "POLICY", "UWCS_Desktop", IMPL,
          "HTCondor's desktop policy before 8.1.6, through FEATURE : UWCS_Desktop_Policy_Values",
          "use FEATURE : UWCS_DESKTOP_POLICY_VALUES\n"
          "WANT_SUSPEND = $(UWCS_WANT_SUSPEND)\n"
          "WANT_VACATE = $(UWCS_WANT_VACATE)\n"
          "SUSPEND = $(UWCS_SUSPEND)\n"
          "CONTINUE = $(UWCS_CONTINUE)\n"
          "PREEMPT = $(UWCS_PREEMPT)\n"
          "START = $(UWCS_START)\n"
          "KILL = $(UWCS_KILL)\n"
          "PERIODIC_CHECKPOINT = $(UWCS_PERIODIC_CHECKPOINT)\n"
          "PREEMPTION_REQUIREMENTS = $(UWCS_PREEMPTION_REQUIREMENTS)\n"
          "PREEMPTION_RANK = $(UWCS_PREEMPTION_RANK)\n"
          "NEGOTIATOR_PRE_JOB_RANK = $(UWCS_NEGOTIATOR_PRE_JOB_RANK)\n"
          "NEGOTIATOR_POST_JOB_RANK = $(UWCS_NEGOTIATOR_POST_JOB_RANK)\n"
          "MaxJobRetirementTime = $(UWCS_MaxJobRetirementTime)\n"
          "CLAIM_WORKLIFE = $(UWCS_CLAIM_WORKLIFE)\n"
          "SLOTS_CONNECTED_TO_KEYBOARD = 1024*1024\n"
          "IS_OWNER = (START =?= False)\n",
          false, NULL },
        { "POLICY", "Limit_Job_Runtimes", IMPL, "preempt a job busy longer than the limit (seconds; 24 hours)",
          "MAX_JOB_RUNTIME = $(1:24*3600)\n"
          "MaxJobRetirementTime = $(MAX_JOB_RUNTIME)+120\n"
          "PREEMPT = (Activity == \"Busy\") && ((time() - EnteredCurrentActivity) > $(MAX_JOB_RUNTIME))\n",
          false, "([seconds])" },
        { "POLICY", "Preempt_If_Runtime_Exceeds", IMPL,
          "preempt a job running longer than the limit (seconds; 24 hours), ignoring its retirement time. "
          "The trigger reads the slot's Activity and JobStart (glean has no JobState)",
          "MAX_JOB_RUNTIME = $(1:24*3600)\n"
          GLEAN_RUNTIME("PREEMPT_RUNTIME_EXCEEDS")
          "use POLICY : PREEMPT_IF(PREEMPT_RUNTIME_EXCEEDS)\n",
          false, "([seconds])" },
        { "POLICY", "Hold_If_Runtime_Exceeds", PART,
          "as Preempt_If_Runtime_Exceeds, and WANT_HOLD (subcode 103): glean's agent does not read WANT_HOLD, "
          "so the job is preempted and goes back to idle instead of on hold",
          "MAX_JOB_RUNTIME = $(1:24*3600)\n"
          "HOLD_REASON_RUNTIME_EXCEEDS = runtime exceeded maximum ($(MAX_JOB_RUNTIME) seconds)\n"
          GLEAN_RUNTIME("HOLD_RUNTIME_EXCEEDS")
          "use POLICY : WANT_HOLD_IF(HOLD_RUNTIME_EXCEEDS, $(HOLD_SUBCODE_RUNTIME_EXCEEDS:103), "
          "$(HOLD_REASON_RUNTIME_EXCEEDS))\n",
          false, "([seconds])" },
        { "POLICY", "Startd_Publish_CpusUsage", IMPL,
          "CpusUsage in the slot ad, as HTCondor computes it from the load averages (glean's agent measures "
          "the job's CpusUsage from its cgroup besides)",
          "CpusUsage = ifthenelse(TotalLoadAvg > 0.0 && Activity!=\"Idle\", "
          "CondorLoadAvg/TotalLoadAvg*MIN({TotalLoadAvg, $(DETECTED_CORES)}), 0)\n"
          "STARTD_ATTRS = $(STARTD_ATTRS) CpusUsage\n",
          false, NULL },
        { "POLICY", "Preempt_If_Cpus_Exceeded", IMPL,
          "preempt a job using 0.8 cores more than its slot has, ignoring its retirement time",
          "use POLICY : STARTD_PUBLISH_CpusUsage\n"
          "CPU_EXCEEDED = (CpusUsage > Cpus + 0.8)\n"
          "use POLICY : PREEMPT_IF(CPU_EXCEEDED)\n",
          false, NULL },
        { "POLICY", "Hold_If_Cpus_Exceeded", PART,
          "as Preempt_If_Cpus_Exceeded, and WANT_HOLD (subcode 101): glean's agent does not read WANT_HOLD, so "
          "the job is preempted and goes back to idle instead of on hold",
          "use POLICY : STARTD_PUBLISH_CpusUsage\n"
          "CPU_EXCEEDED = (CpusUsage > Cpus + 0.8)\n"
          "HOLD_REASON_CPU_EXCEEDED = CPU usage exceeded request_cpus\n"
          "use POLICY : WANT_HOLD_IF(CPU_EXCEEDED, $(HOLD_SUBCODE_CPU_EXCEEDED:101), "
          "$(HOLD_REASON_CPU_EXCEEDED))\n",
          false, NULL },
        { "POLICY", "Preempt_If_Disk_Exceeded", IMPL,
          "preempt a job using more disk than its slot has, ignoring its retirement time",
          "DISK_EXCEEDED = (JobUniverse != 13 && DiskUsage =!= UNDEFINED && DiskUsage > Disk)\n"
          "use POLICY : PREEMPT_IF(DISK_EXCEEDED)\n",
          false, NULL },
        { "POLICY", "Hold_If_Disk_Exceeded", PART,
          "as Preempt_If_Disk_Exceeded, and WANT_HOLD (subcode 104): glean's agent does not read WANT_HOLD, so "
          "the job is preempted and goes back to idle instead of on hold",
          "DISK_EXCEEDED = (JobUniverse != 13 && DiskUsage =!= UNDEFINED && DiskUsage > Disk)\n"
          "HOLD_REASON_DISK_EXCEEDED = disk usage exceeded allocated disk\n"
          "use POLICY : WANT_HOLD_IF(DISK_EXCEEDED, $(HOLD_SUBCODE_DISK_EXCEEDED:104), "
          "$(HOLD_REASON_DISK_EXCEEDED))\n",
          false, NULL },
        { "POLICY", "Preempt_If_Memory_Exceeded", IMPL,
          "preempt a job using more memory than its slot has, ignoring its retirement time",
          "MEMORY_EXCEEDED = (JobUniverse != 13 && MemoryUsage =!= UNDEFINED && MemoryUsage > Memory)\n"
          "use POLICY : PREEMPT_IF(MEMORY_EXCEEDED)\n",
          false, NULL },
        { "POLICY", "Hold_If_Memory_Exceeded", PART,
          "as Preempt_If_Memory_Exceeded, and WANT_HOLD (subcode 102): glean's agent does not read WANT_HOLD, "
          "so the job is preempted and goes back to idle instead of on hold",
          "MEMORY_EXCEEDED = (JobUniverse != 13 && MemoryUsage =!= UNDEFINED && MemoryUsage > Memory)\n"
          "HOLD_REASON_MEMORY_EXCEEDED = memory usage exceeded request_memory\n"
          "use POLICY : WANT_HOLD_IF(MEMORY_EXCEEDED, $(HOLD_SUBCODE_MEMORY_EXCEEDED:102), "
          "$(HOLD_REASON_MEMORY_EXCEEDED))\n",
          false, NULL },
        { "POLICY", "Preempt_If", IMPL,
          "preempt when the expression the macro holds is true, ignoring retirement time",
          "if !$(1?)\n"
          "  error : use POLICY : PREEMPT_IF requires an argument. It should be the name of a config variable "
          "that has the trigger expression.\n"
          "endif\n"
          "if defined PREEMPT\n"
          "  PREEMPT = $($(1)) || $(PREEMPT)\n"
          "else\n"
          "  PREEMPT = $($(1))\n"
          "endif\n"
          "MAXJOBRETIREMENTTIME = ifthenelse($($(1)),-1,$(MAXJOBRETIREMENTTIME:0))\n"
          "if defined WANT_SUSPEND\n"
          "  WANT_SUSPEND = $($(1)) =!= true && $(WANT_SUSPEND)\n"
          "else\n"
          "  WANT_SUSPEND = $($(1)) =!= true\n"
          "endif\n",
          false, "(policy_variable)" },
        { "POLICY", "Want_Hold_If", PART,
          "as Preempt_If, and WANT_HOLD, WANT_HOLD_SUBCODE, "
          "WANT_HOLD_REASON: glean's agent does not read WANT_HOLD, so the job is preempted and goes back to "
          "idle instead of on hold",
          "use POLICY : PREEMPT_IF($(1))\n"
          "if ! $(3?)\n"
          "  error : use POLICY : WANT_HOLD_IF requires 3 arguments: policy_variable, subcode, reason_text\n"
          "endif\n"
          "if defined WANT_HOLD\n"
          "  WANT_HOLD = (JobUniverse != 1 && $($(1))) || $(WANT_HOLD)\n"
          "else\n"
          "  WANT_HOLD = (JobUniverse != 1 && $($(1)))\n"
          "endif\n"
          "WANT_HOLD_SUBCODE = ifThenElse($($(1)), $(2) , $(WANT_HOLD_SUBCODE:UNDEFINED))\n"
          "WANT_HOLD_REASON = ifThenElse($($(1)), \"$(3+)\", $(WANT_HOLD_REASON:UNDEFINED))\n",
          false, "(policy_variable, subcode, reason_text)" },
        { "POLICY", "OnlyRegisteredCheckpointDestinations", REFU,
          "glean has no checkpoint destinations (checkpoint_destination) or user maps (userMap())", NULL,
          false, NULL },
        /* glean's own */
        { "POLICY", "Desktop_Toggle", IMPL,
          "glean's (seed 002, 3.5.9.4): one policy for desktops and dedicated machines; IsDesktop = True makes "
          "a machine a desktop",
          "STARTD_ATTRS = $(STARTD_ATTRS) IsDesktop\n"
          "START = ( ($(CPUIdle) || (State != \"Unclaimed\" && State != \"Owner\")) \\\n"
          "        && (IsDesktop =!= True || (KeyboardIdle > $(StartIdleTime))) )\n"
          "WANT_SUSPEND = ( $(SmallJob) || $(JustCpu) || $(IsVanilla) )\n"
          "WANT_VACATE = ( $(ActivationTimer) > 10 * $(MINUTE) || $(IsVanilla) )\n"
          "SUSPEND = ( ((CpuBusyTime > 2 * $(MINUTE)) && ($(ActivationTimer) > 90)) \\\n"
          "        || ( IsDesktop =?= True && $(KeyboardBusy) ) )\n"
          "CONTINUE = ( $(CPUIdle) && ($(ActivityTimer) > 300) \\\n"
          "        && (IsDesktop =!= True || (KeyboardIdle > $(ContinueIdleTime))) )\n"
          "PREEMPT = ( ((Activity == \"Suspended\") && ($(ActivityTimer) > $(MaxSuspendTime))) \\\n"
          "        || (SUSPEND && (WANT_SUSPEND == False)) )\n"
          "MAXJOBRETIREMENTTIME = (IsDesktop =!= True) * 0\n"
          "MachineMaxVacateTime = 10 * $(MINUTE)\n"
          "KILL = False\n"
          "IS_OWNER = (START =?= FALSE)\n",
          true, NULL },
        { "POLICY", "Preempt_By_Priority", IMPL,
          "glean's (seed 002, 3.4.6; HTCondor's UWCS preemption): a job that has run an hour may be preempted "
          "for one of the same group whose submitter's priority is 20% better, a nice user's by anyone's",
          "PREEMPTION_REQUIREMENTS = ( (SubmitterGroup =?= RemoteGroup) && ($(StateTimer) > 1 * $(HOUR)) \\\n"
          "        && (RemoteUserPrio > TARGET.SubmitterUserPrio * 1.2) ) \\\n"
          "        || regexp(\"^nice-user[.]\", MY.RemoteUser ?: \"\")\n"
          "PREEMPTION_RANK = (RemoteUserPrio * 1000000) - ifThenElse(isUndefined(TotalJobRuntime), 0, "
          "TotalJobRuntime)\n",
          true, NULL },
        { "POLICY", "Time_Of_Day", IMPL,
          "glean's (seed 002, 3.5.9.3): start only after hours (WorkHours and AfterHours may be redefined "
          "after the use line); a job still running when work hours begin is suspended, then preempted",
          "WorkHours = ( (ClockMin >= 480 && ClockMin < 1020) && (ClockDay > 0 && ClockDay < 6) )\n"
          "AfterHours = ( (ClockMin < 480 || ClockMin >= 1020) || (ClockDay == 0 || ClockDay == 6) )\n"
          "START = $(AfterHours) && $(CPUIdle) && KeyboardIdle > $(StartIdleTime)\n"
          "MachineBusy = ( $(WorkHours) || $(CPUBusy) || $(KeyboardBusy) )\n"
          "SUSPEND = ( $(SUSPEND) ) || $(WorkHours)\n"
          "WANT_SUSPEND = $(AfterHours)\n",
          true, NULL },

        /* ---------------- FEATURE ---------------- */
        { "FEATURE", "POLICY_EXPR_FRAGMENTS", IMPL, "the macros of the desktop policies (KeyboardBusy, CpuIdle, ...)",
          "PolicyExprFragments = 1\n"
          "KeyboardBusy = (KeyboardIdle < $(MINUTE))\n"
          "ConsoleBusy = (ConsoleIdle  < $(MINUTE))\n"
          "KeyboardNotBusy = ($(KeyboardBusy) == False)\n"
          "JustCPU = ($(CPUBusy) && ($(KeyboardBusy) == False))\n"
          "MachineBusy = ($(CPUBusy) || $(KeyboardBusy))\n"
          "NonCondorLoadAvg = (LoadAvg - CondorLoadAvg)\n"
          "CpuIdle = ($(NonCondorLoadAvg) <= $(BackgroundLoad))\n"
          "CpuBusy = ($(NonCondorLoadAvg) >= $(HighLoad))\n"
          "ActivationTimer = ifThenElse(JobStart =!= UNDEFINED, (time() - JobStart), 0)\n"
          "LastCkpt = (time() - LastPeriodicCheckpoint)\n",
          false, NULL },
        { "FEATURE", "POLICY_HOURS_TO_START", IMPL,
          "RunJobsHours and NoJobsHours for the desktop "
          "policies.",
          "WorkdayBeginHour = $(1:8)\n"
          "WorkdayEndHour = $(2:12+5)\n"
          "WorkdayBeginMinuteStartJobs = ($(WorkdayBeginHour))*60 - 29.5\n"
          "WorkdayBeginMinuteStopJobs = ($(WorkdayBeginHour))*60 - 9.5\n"
          "WorkdayEndMinute = ($(WorkdayEndHour))*60 + 0.5\n"
          "RunJobsHours = ClockMin < $INT(WorkdayBeginMinuteStartJobs) || ClockMin > $INT(WorkdayEndMinute)\n"
          "NoJobsHours = ClockMin > $INT(WorkdayBeginMinuteStopJobs) && ClockMin < $INT(WorkdayEndMinute)\n"
          "if $(3?)\n"
          "  WorkweekFirstDay = $(3:1)\n"
          "  WorkweekLastDay = $(4:5)\n"
          "  IsWeekend = ClockDay < $INT(WorkweekFirstDay) || ClockDay > $INT(WorkWeekLastDay)\n"
          "  IsWorkday = ClockDay >= $INT(WorkweekFirstDay) && ClockDay <= $INT(WorkWeekLastDay)\n"
          "  RunJobsHours = $(IsWeekend) || $(RunJobsHours)\n"
          "  NoJobsHours = $(IsWorkday) && $(NoJobsHours)\n"
          "endif\n"
          "RunJobsHours = ($(RunJobsHours))\n"
          "NoJobsHours = ($(NoJobsHours))\n",
          false, "(start_hour, end_hour [, first_day, last_day])" },
        { "FEATURE", "TESTINGMODE_POLICY_VALUES", IMPL, "the TESTINGMODE_* values of HTCondor 7 (set, used by nothing)",
          "TESTINGMODE_WANT_SUSPEND = False\n"
          "TESTINGMODE_WANT_VACATE = True\n"
          "TESTINGMODE_START = True\n"
          "TESTINGMODE_SUSPEND = False\n"
          "TESTINGMODE_CONTINUE = True\n"
          "TESTINGMODE_PREEMPT = False\n"
          "TESTINGMODE_KILL = False\n"
          "TESTINGMODE_PERIODIC_CHECKPOINT = False\n"
          "TESTINGMODE_PREEMPTION_REQUIREMENTS = False\n"
          "TESTINGMODE_PREEMPTION_RANK = 0\n"
          "TESTINGMODE_CLAIM_WORKLIFE = 1200\n",
          false, NULL },
        { "FEATURE", "UWCS_DESKTOP_POLICY_VALUES", IMPL,
          "the UWCS_* values of POLICY : UWCS_Desktop. CpuBusyTimer is glean's CpuBusyTime; "
          "UWCS_PERIODIC_CHECKPOINT's $RANDOM_INTEGER() is drawn once, when the line is read",
          "if ! defined PolicyExprFragments\n"
          "  use FEATURE : POLICY_EXPR_FRAGMENTS\n"
          "endif\n"
          "STARTD_LATCH_EXPRS = $(STARTD_LATCH_EXPRS) CpuBusy\n"
          GLEAN_CPU_BUSY_TIMER
          "UWCS_WANT_SUSPEND = ( $(SmallJob) || $(KeyboardNotBusy) || $(IsVanilla) ) && ( $(SUSPEND) )\n"
          "UWCS_WANT_VACATE = ( $(ActivationTimer) > 10 * $(MINUTE) || $(IsVanilla) )\n"
          "UWCS_START = ( (KeyboardIdle > $(StartIdleTime)) && ( $(CPUIdle) || "
          "(State != \"Unclaimed\" && State != \"Owner\")) )\n"
          "UWCS_SUSPEND = ( $(KeyboardBusy) || ( ($(CpuBusyTimer) > 2 * $(MINUTE)) && $(ActivationTimer) > 90 ) )\n"
          "UWCS_CONTINUE = ( $(CPUIdle) && ($(ActivityTimer) > 10) && (KeyboardIdle > $(ContinueIdleTime)) )\n"
          "UWCS_PREEMPT = ( ((Activity == \"Suspended\") && ($(ActivityTimer) > $(MaxSuspendTime))) || "
          "(SUSPEND && (WANT_SUSPEND == False)) )\n"
          "UWCS_MaxJobRetirementTime = 0\n"
          "UWCS_KILL = false\n"
          "UWCS_PERIODIC_CHECKPOINT = $(LastCkpt) > (3 * $(HOUR) + $RANDOM_INTEGER(-30,30,1) * $(MINUTE) )\n"
          "UWCS_NEGOTIATOR_PRE_JOB_RANK = (10000000 * My.Rank) + (1000000 * (RemoteOwner =?= UNDEFINED)) - "
          "(100000 * Cpus) - Memory\n"
          "UWCS_NEGOTIATOR_POST_JOB_RANK = (RemoteOwner =?= UNDEFINED) * (ifthenElse(isUndefined(KFlops), 1000, "
          "Kflops) - SlotID - 1.0e10*(Offline=?=True))\n"
          "UWCS_PREEMPTION_REQUIREMENTS = ((SubmitterGroup =?= RemoteGroup) && ($(StateTimer) > (1 * $(HOUR))) && "
          "(RemoteUserPrio > TARGET.SubmitterUserPrio * 1.2)) || (MY.NiceUser == True)\n"
          "UWCS_PREEMPTION_RANK = (RemoteUserPrio * 1000000) - ifThenElse(isUndefined(TotalJobRuntime), 0, "
          "TotalJobRuntime)\n",
          false, NULL },
        { "FEATURE", "AssignAccountingGroup", REFU,
          "glean has no user map files (CLASSAD_USER_MAPFILE_*) to assign accounting groups from: a job's "
          "group is the one it names, checked against ACCOUNTING_GROUPS_ALLOWED",
          NULL, false, NULL },
        { "FEATURE", "AssignProjectName", REFU, "glean has no user map files (CLASSAD_USER_MAPFILE_*)", NULL, false, NULL },
        { "FEATURE", "SetJobAttrFromUsermap", REFU, "glean has no user map files (CLASSAD_USER_MAPFILE_*)", NULL,
          false, NULL },
        { "FEATURE", "ScheddUsermapFile", REFU, "glean has no user map files (CLASSAD_USER_MAPFILE_*)", NULL, false, NULL },
        { "FEATURE", "REMOTE_RUNTIME_CONFIG", REFU,
          "glean's configuration cannot be changed over the network (condor_config_val -rset): it is the files",
          NULL, false, NULL },
        { "FEATURE", "REMOTE_CONFIG", REFU,
          "glean's configuration cannot be changed over the network (condor_config_val -set): it is the files",
          NULL, false, NULL },
        { "FEATURE", "GPUs", PART,
          "the knobs are HTCondor's, but glean runs no GPU discovery "
          "(MACHINE_RESOURCE_INVENTORY_GPUs is not run) and puts no CUDA_VISIBLE_DEVICES in a job's "
          "environment: declare the GPUs with MACHINE_RESOURCE_GPUs (a count or a list of ids)",
          "MACHINE_RESOURCE_INVENTORY_GPUs = $(LIBEXEC)/condor_gpu_discovery $(1) -properties $(GPU_DISCOVERY_EXTRA)\n"
          "ENVIRONMENT_FOR_AssignedGPUs = GPU_DEVICE_ORDINAL=/(CUDA|OCL)//  CUDA_VISIBLE_DEVICES=/CUDA//\n"
          "ENVIRONMENT_VALUE_FOR_UnAssignedGPUs = 10000\n"
          "use FEATURE : GPUsMonitor\n",
          false, "([discovery_args])" },
        { "FEATURE", "Monitor", IMPL,
          "a startd cron job (STARTD_CRON_*) "
          "measuring a custom resource",
          "if ! $(5?)\n"
          "  error : use feature : monitor requires five or more arguments\n"
          "endif\n"
          "STARTD_CRON_JOBLIST = $(STARTD_CRON_JOBLIST) $(1)_MONITOR\n"
          "STARTD_CRON_$(1)_MONITOR_MODE = $(2)\n"
          "STARTD_CRON_$(1)_MONITOR_PERIOD = $(3)\n"
          "STARTD_CRON_$(1)_MONITOR_EXECUTABLE = $(4)\n"
          "STARTD_CRON_$(1)_MONITOR_METRICS = $(5+)\n",
          false, "(resource, mode, period, executable, metric[, metric...])" },
        { "FEATURE", "GPUsMonitor", PART,
          "glean ships no GPU monitor (HTCondor's condor_gpu_utilization): set only when GPU_MONITOR names one",
          "use FEATURE : Monitor(GPUs, WaitForExit, 300, $(GPU_MONITOR), SUM:GPUs, PEAK:GPUsMemory)\n"
          "STARTD_CRON_GPUs_MONITOR_CONDITION = TotalGPUs > 0 && OpSys =!= \"WINDOWS\"\n"
          "STARTD_JOB_ATTRS = $(STARTD_JOB_ATTRS) GPUsUsage GPUsMemoryUsage\n",
          false, NULL },
        { "FEATURE", "PelicanCache", REFU, "glean has no Pelican cache daemon", NULL, false, NULL },
        { "FEATURE", "PartitionableSlot", IMPL, "one partitionable slot (1, 100%)",
          "NUM_SLOTS_TYPE_$(1:1) = 1\n"
          "SLOT_TYPE_$(1:1)_PARTITIONABLE = true\n"
          "SLOT_TYPE_$(1:1) = $(2+:100%)\n",
          false, "([type [, allocation]])" },
        { "FEATURE", "StaticSlots", IMPL,
          "static slots (1, $(NUM_CPUS), an even share each)",
          "NUM_SLOTS_TYPE_$(1:1) = $(2:$(NUM_CPUS))\n"
          "SLOT_TYPE_$(1:1)_PARTITIONABLE = false\n"
          "SLOT_TYPE_$(1:1) = $(3+:1/$(NUM_SLOTS_TYPE_$(1:1)))\n"
          "SLOT_TYPE_$(1:1) = $(3+)\n",
          false, "([type [, count [, allocation]]])" },
        { "FEATURE", "OneShotCronHook", PART,
          "a cron job run once; glean has no schedd cron "
          "(SCHEDD_CRON_* is set but nothing runs it)",
          "if ! $(3?)\n"
          "  error : use FEATURE : OneShotCronHook requires at least 3 arguments: STARTD_CRON | SCHEDD_CRON, tag, "
          "hook_exe [,hook_args]\n"
          "endif\n"
          "$(1)_JOBLIST = $($(1)_JOBLIST) $(2)\n"
          "$(1)_$(2)_MODE = OneShot\n"
          "$(1)_$(2)_KILL = true\n"
          "$(1)_$(2)_RECONFIG_RERUN = true\n"
          "$(1)_$(2)_EXECUTABLE = $(3)\n"
          "if $(4?)\n"
          "  $(1)_$(2)_ARGS = $(4)\n"
          "endif\n",
          false, "(STARTD_CRON | SCHEDD_CRON, tag, exe [, args])" },
        { "FEATURE", "PeriodicCronHook", PART,
          "a cron job run every period; glean has no "
          "schedd cron (SCHEDD_CRON_* is set but nothing runs it)",
          "if ! $(4?)\n"
          "  error : use FEATURE : PeriodicCronHook requires at least 4 arguments: STARTD_CRON | SCHEDD_CRON, "
          "tag, period, hook_exe [,hook_args]\n"
          "endif\n"
          "$(1)_JOBLIST = $($(1)_JOBLIST) $(2)\n"
          "$(1)_$(2)_MODE = Periodic\n"
          "$(1)_$(2)_PERIOD = $(3)\n"
          "$(1)_$(2)_EXECUTABLE = $(4)\n"
          "if $(5?)\n"
          "  $(1)_$(2)_ARGS = $(5)\n"
          "endif\n",
          false, "(STARTD_CRON | SCHEDD_CRON, tag, period, exe [, args])" },
        { "FEATURE", "ContinuousCronHook", PART,
          "a cron job run again as it exits; glean has no "
          "schedd cron (SCHEDD_CRON_* is set but nothing runs it)",
          "if ! $(3?)\n"
          "  error : use FEATURE : ContinuousCronHook requires at least 3 arguments: STARTD_CRON | SCHEDD_CRON, "
          "tag, hook_exe [,hook_args]\n"
          "endif\n"
          "$(1)_JOBLIST = $($(1)_JOBLIST) $(2)\n"
          "$(1)_$(2)_MODE = WaitForExit\n"
          "$(1)_$(2)_PERIOD = 0\n"
          "$(1)_$(2)_EXECUTABLE = $(3)\n"
          "if $(4?)\n"
          "  $(1)_$(2)_ARGS = $(4)\n"
          "endif\n",
          false, "(STARTD_CRON | SCHEDD_CRON, tag, exe [, args])" },
        { "FEATURE", "StartdCronPeriodic", IMPL, "a startd cron job run every period",
          "use FEATURE : PeriodicCronHook(STARTD_CRON, $(0))\n", false, "(tag, period, exe [, args])" },
        { "FEATURE", "ScheddCronPeriodic", REFU, "glean has no schedd cron (the queue is glean-negotiator's)", NULL,
          false, NULL },
        { "FEATURE", "StartdCronOneShot", IMPL, "a startd cron job run once",
          "use FEATURE : OneShotCronHook(STARTD_CRON, $(0))\n", false, "(tag, exe [, args])" },
        { "FEATURE", "ScheddCronOneShot", REFU, "glean has no schedd cron (the queue is glean-negotiator's)", NULL,
          false, NULL },
        { "FEATURE", "StartdCronContinuous", IMPL, "a startd cron job run again as it exits",
          "use FEATURE : ContinuousCronHook(STARTD_CRON, $(0))\n", false, "(tag, exe [, args])" },
        { "FEATURE", "ScheddCronContinuous", REFU, "glean has no schedd cron (the queue is glean-negotiator's)",
          NULL, false, NULL },
        { "FEATURE", "ChildCollector", REFU, "glean has one collector, glean-negotiator: no collector trees", NULL,
          false, NULL },
        { "FEATURE", "LIBRARIAN", REFU,
          "glean has no history archive librarian (glean history reads the central manager's database)", NULL,
          false, NULL },
        { "FEATURE", "KRB", REFU, "glean has no credential monitor for Kerberos tickets or AFS tokens", NULL, false, NULL },
        { "FEATURE", "OAUTH", REFU, "glean has no credential monitor for OAuth tokens", NULL, false, NULL },
        { "FEATURE", "ADSTASH", REFU, "glean has no condor_adstash (job history to Elasticsearch)", NULL, false, NULL },
        { "FEATURE", "CommonCloudAttributesGoogle", REFU,
          "glean ships no common-cloud-attributes script to run as a startd cron job", NULL, false, NULL },
        { "FEATURE", "JobsHaveInstanceIDs", REFU,
          "glean has no SYSTEM_JOB_MACHINE_ATTRS and no cloud instance ids in its slot ads", NULL, false, NULL },
        { "FEATURE", "CommonCloudAttributesAWS", REFU,
          "glean ships no common-cloud-attributes script to run as a startd cron job", NULL, false, NULL },
        { "FEATURE", "HPC_ANNEX", REFU, "glean has no HPC annexes (htcondor annex)", NULL, false, NULL },
        { "FEATURE", "PelicanRetryPolicy", REFU, "glean has no Pelican file transfers or cool-downs",
          NULL, false, NULL },
        { "FEATURE", "GANGLIA", REFU, "glean has no condor_gangliad", NULL, false, NULL },
        { "FEATURE", "DefaultCheckpointDestination", REFU,
          "glean has no checkpoint destinations (checkpoint_destination)", NULL, false, NULL },

        /* ---------------- SECURITY ---------------- */
        { "SECURITY", "Host_Based", IMPL,
          "the ALLOW_* lists by host, as HTCondor's; glean's central manager enforces ALLOW_READ, WRITE, "
          "ADMINISTRATOR, DAEMON (agents' ads) and their _COLLECTOR forms. $(IPV4_ADDRESS) and "
          "$(IPV6_ADDRESS) are not defined in glean (the lists name FULL_HOSTNAME); LEGACY_ALLOW_SEMANTICS "
          "changes nothing with ALLOW_DAEMON set",
          "ALLOW_ADMINISTRATOR = $(CONDOR_HOST)\n"
          "ALLOW_READ = *\n"
          "ALLOW_WRITE = $(FULL_HOSTNAME) $(IPV4_ADDRESS) $(IPV6_ADDRESS)\n"
          "ALLOW_DAEMON = $(FULL_HOSTNAME) $(IPV4_ADDRESS) $(IPV6_ADDRESS)\n"
          "ALLOW_NEGOTIATOR = $(CONDOR_HOST)\n"
          "ALLOW_NEGOTIATOR_SCHEDD = $(ALLOW_NEGOTIATOR) $(FLOCK_NEGOTIATOR_HOSTS)\n"
          "ALLOW_WRITE_COLLECTOR = $(ALLOW_WRITE) $(FLOCK_FROM)\n"
          "ALLOW_WRITE_STARTD = $(ALLOW_WRITE) $(FLOCK_FROM)\n"
          "ALLOW_READ_COLLECTOR = $(ALLOW_READ) $(FLOCK_FROM)\n"
          "ALLOW_READ_STARTD = $(ALLOW_READ) $(FLOCK_FROM)\n"
          "LEGACY_ALLOW_SEMANTICS = TRUE\n",
          false, NULL },
        { "SECURITY", "With_Authentication", IMPL,
          "SEC_DEFAULT_AUTHENTICATION and _INTEGRITY required, as glean always does: every connection between "
          "machines is authenticated (token or pool key) and sealed (docs/protocol.md); local users are known "
          "by their socket's credentials. glean reads neither knob",
          "SEC_DEFAULT_AUTHENTICATION = required\n"
          "SEC_DEFAULT_INTEGRITY = required\n",
          false, NULL },
        { "SECURITY", "Strong", IMPL,
          "SEC_DEFAULT_ENCRYPTION, _INTEGRITY and _AUTHENTICATION required, as glean always does (every "
          "connection between machines authenticated and encrypted: docs/protocol.md); glean reads none of them",
          "SEC_DEFAULT_ENCRYPTION = required\n"
          "SEC_DEFAULT_INTEGRITY = required\n"
          "SEC_DEFAULT_AUTHENTICATION = required\n",
          false, NULL },
        /* $(CondorIsAdmin:True): HTCondor detects whether the daemon runs
         * as root or condor; glean's daemons are system services, always
         * (glean defines no CondorIsAdmin). */
        { "SECURITY", "User_Based", IMPL,
          "SECURITY : Recommended for the daemons' account; glean's daemons are system services, so "
          "CondorIsAdmin is True unless defined",
          "if $(CondorIsAdmin:True)\n"
          "  authuser = condor\n"
          "else\n"
          "  authuser = $(USERNAME)\n"
          "endif\n"
          "use SECURITY : recommended($(authuser))\n"
          "if ! $(CondorIsAdmin:True)\n"
          "  ALLOW_WRITE = $(authuser)@$(UID_DOMAIN)\n"
          "endif\n",
          false, NULL },
        { "SECURITY", "get_htcondor_idtokens", IMPL,
          "SECURITY : Recommended; the _AUTHENTICATION_METHODS and TRUST_DOMAIN knobs are set and read by "
          "nothing (glean's methods are SEC_DEFAULT_AUTHENTICATION_METHODS: TOKEN, PASSWORD)",
          "use SECURITY : recommended\n"
          "SEC_READ_AUTHENTICATION_METHODS = $(SEC_DEFAULT_AUTHENTICATION_METHODS),ANONYMOUS\n"
          "SEC_CLIENT_AUTHENTICATION_METHODS = $(SEC_DEFAULT_AUTHENTICATION_METHODS),ANONYMOUS\n"
          "TRUST_DOMAIN = $(CONDOR_HOST)\n",
          false, NULL },
        { "SECURITY", "Recommended_v9_0", IMPL,
          "Strong, anyone may read and write, the service account and root "
          "administer; ALLOW_DAEMON also names glean's token agents (agent@*)",
          "SECURITY_MODEL = 9.0\n"
          "use SECURITY : strong\n"
          "SEC_READ_AUTHENTICATION = OPTIONAL\n"
          "SEC_READ_ENCRYPTION = OPTIONAL\n"
          "SEC_READ_INTEGRITY = OPTIONAL\n"
          "ALLOW_ADMINISTRATOR = $(1:condor)@* condor_pool@* $(2:root@*) $(3+)\n"
          "ALLOW_DAEMON = $(1:condor)@* condor_pool@* agent@*\n"
          "ALLOW_NEGOTIATOR = $(1:condor)@* condor_pool@*\n"
          "ALLOW_WRITE = *\n"
          "ALLOW_READ = *\n",
          false, "([service [, admins]])" },
        { "SECURITY", "Recommended_v24_0", IMPL,
          "Strong, anyone may read and write, the service account and root "
          "administer; ALLOW_DAEMON also names glean's agents (agent@*, condor_pool@*)",
          "SECURITY_MODEL = 24.0\n"
          "use SECURITY : strong\n"
          "SEC_READ_AUTHENTICATION = OPTIONAL\n"
          "SEC_CLIENT_AUTHENTICATION = OPTIONAL\n"
          "ALLOW_ADMINISTRATOR = $(1:condor)@* condor@password $(2:root@*) $(3+)\n"
          "ALLOW_DAEMON = $(1:condor)@* condor@password " GLEAN_DAEMONS "\n"
          "ALLOW_NEGOTIATOR = $(1:condor)@* condor@password\n"
          "ALLOW_WRITE = *\n"
          "ALLOW_READ = *\n",
          false, "([service [, admins]])" },
        { "SECURITY", "Recommended", IMPL, "Recommended_v24_0",
          "use SECURITY : recommended_v24_0($(1+))\n", false, "([service [, admins]])" },
        { "SECURITY", "FIPS", REFU,
          "glean's cryptography (libsodium: X25519, Ed25519, XChaCha20-Poly1305) has no FIPS 140 mode", NULL,
          false, NULL },

        /* ---------------- EXPERIMENTAL ---------------- */
        { "EXPERIMENTAL", "CollectorNode", REFU, "glean has one collector, glean-negotiator: no collector trees",
          NULL, false, NULL },
        { "EXPERIMENTAL", "HAD", REFU, "glean has no high availability daemons (one central manager)", NULL, false, NULL },
        { "EXPERIMENTAL", "HADSharedPort", REFU, "glean has no high availability daemons (one central manager)",
          NULL, false, NULL },
        { "EXPERIMENTAL", "HADFixedPort", REFU, "glean has no high availability daemons (one central manager)", NULL,
          false, NULL },
        { "EXPERIMENTAL", "HADReplication", REFU, "glean has no high availability daemons (one central manager)",
          NULL, false, NULL },
};

const size_t config_metaknob_count = sizeof(config_metaknob_table) / sizeof(config_metaknob_table[0]);
