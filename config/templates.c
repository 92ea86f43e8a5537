/* SPDX-License-Identifier: Apache-2.0 */
/*
 * templates.c — policies an administrator picks with one line, as
 * HTCondor's metaknobs: `use POLICY : NAME`. A template is configuration
 * text read in place of the `use` line (its definitions are reported at
 * that line), so self-references build on what came before and later
 * lines can still change any of it.
 *
 *   DESKTOP          seed 002, 3.5.9.1: run jobs while the owner is away;
 *                    suspend, then vacate, then kill when they come back
 *                    (the built-in default; the template restores it)
 *   ALWAYS_RUN_JOBS  a dedicated node: always start, never suspend or
 *                    preempt (HTCondor's metaknob of that name)
 *   TIME_OF_DAY      3.5.9.3: start only after hours (WorkHours and
 *                    AfterHours may be redefined after the use line); a
 *                    job still running when work hours begin is preempted
 *   DESKTOP_TOGGLE   3.5.9.4: one policy for desktops and dedicated
 *                    machines; `IsDesktop = True` makes a machine a
 *                    desktop, otherwise keyboard activity is ignored
 *   PREEMPT_BY_PRIORITY  3.4.6's "a user must have a 20% better priority"
 *                    (glean's name; HTCondor's UWCS policy): a job that has
 *                    run an hour in the slot may be preempted for a job of
 *                    the same group whose submitter's EUP is 20% better;
 *                    a nice user's job by anyone's
 */
#include <stddef.h>
#include <strings.h>

#include "config-internal.h"

typedef struct Template {
        const char *category;
        const char *name;
        const char *text;
} Template;

static const Template templates[] = {
        { "POLICY", "ALWAYS_RUN_JOBS",
          "WANT_SUSPEND = False\n"
          "WANT_VACATE = True\n"
          "START = True\n"
          "SUSPEND = False\n"
          "CONTINUE = True\n"
          "PREEMPT = False\n"
          "KILL = False\n"
          "IS_OWNER = False\n"
          "PREEMPTION_REQUIREMENTS = False\n"
          "NEGOTIATOR_CONSIDER_PREEMPTION = False\n"
          "MAXJOBRETIREMENTTIME = 2147483647\n"
          "CLAIM_WORKLIFE = 1200\n" },
        { "POLICY", "DESKTOP",
          "WANT_SUSPEND = ( $(SmallJob) || $(KeyboardNotBusy) || $(IsVanilla) )\n"
          "WANT_VACATE = ( $(ActivationTimer) > 10 * $(MINUTE) || $(IsVanilla) )\n"
          "START = ( (KeyboardIdle > $(StartIdleTime)) && ( $(CPUIdle) || \\\n"
          "        (State != \"Unclaimed\" && State != \"Owner\")) )\n"
          "SUSPEND = ( $(KeyboardBusy) || ( (CpuBusyTime > 2 * $(MINUTE)) && $(ActivationTimer) > 90 ) )\n"
          "CONTINUE = ( $(CPUIdle) && ($(ActivityTimer) > 10) && (KeyboardIdle > $(ContinueIdleTime)) )\n"
          "PREEMPT = ( ((Activity == \"Suspended\") && ($(ActivityTimer) > $(MaxSuspendTime))) || \\\n"
          "        (SUSPEND && (WANT_SUSPEND == False)) )\n"
          "MAXJOBRETIREMENTTIME = 0\n"
          "MachineMaxVacateTime = 10 * $(MINUTE)\n"
          "KILL = False\n"
          "IS_OWNER = (START =?= FALSE)\n" },
        { "POLICY", "DESKTOP_TOGGLE",
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
          "IS_OWNER = (START =?= FALSE)\n" },
        { "POLICY", "PREEMPT_BY_PRIORITY",
          "PREEMPTION_REQUIREMENTS = ( (SubmitterGroup =?= RemoteGroup) && ($(StateTimer) > 1 * $(HOUR)) \\\n"
          "        && (RemoteUserPrio > TARGET.SubmitterUserPrio * 1.2) ) \\\n"
          "        || regexp(\"^nice-user[.]\", MY.RemoteUser ?: \"\")\n"
          "PREEMPTION_RANK = (RemoteUserPrio * 1000000) - ifThenElse(isUndefined(TotalJobRuntime), 0, TotalJobRuntime)\n" },
        { "POLICY", "TIME_OF_DAY",
          "WorkHours = ( (ClockMin >= 480 && ClockMin < 1020) && (ClockDay > 0 && ClockDay < 6) )\n"
          "AfterHours = ( (ClockMin < 480 || ClockMin >= 1020) || (ClockDay == 0 || ClockDay == 6) )\n"
          "START = $(AfterHours) && $(CPUIdle) && KeyboardIdle > $(StartIdleTime)\n"
          "MachineBusy = ( $(WorkHours) || $(CPUBusy) || $(KeyboardBusy) )\n"
          "SUSPEND = ( $(SUSPEND) ) || $(WorkHours)\n"
          "WANT_SUSPEND = $(AfterHours)\n" },
};

const char *config_template(const char *category, const char *name) {
        for (size_t i = 0; i < sizeof(templates) / sizeof(templates[0]); i++)
                if (strcasecmp(templates[i].category, category) == 0 && strcasecmp(templates[i].name, name) == 0)
                        return templates[i].text;
        return NULL;
}

const char *config_template_names(const char *category) {
        if (!category)
                return "POLICY";
        if (strcasecmp(category, "POLICY") == 0)
                return "ALWAYS_RUN_JOBS, DESKTOP, DESKTOP_TOGGLE, PREEMPT_BY_PRIORITY, TIME_OF_DAY";
        return NULL;
}
