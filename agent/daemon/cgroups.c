/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cgroups.c — glean-agent's slots in cgroup v2: which executor runs the
 * jobs, one cgroup per slot with the limits that follow from its
 * resources, and what the slot ads say about it.
 *
 * Knobs:
 *   AGENT_EXECUTOR                auto (default: cgroup when the agent has a
 *                                 cgroup v2 subtree of its own), cgroup, fork
 *   BASE_CGROUP                   the subtree, relative to the cgroup2 mount;
 *                                 default: the jobs' scope under systemd
 *                                 (scope.c), else the agent's own cgroup
 *                                 (Delegate=yes). The root cgroup is never used.
 *   AGENT_JOBS_SCOPE              auto (the service's name with -jobs.scope),
 *                                 a scope's name, or empty: none (scope.c)
 *   CGROUP_MEMORY_LIMIT_POLICY    hard (memory.max = Memory, and memory.high
 *                                 at CGROUP_MEMORY_HIGH_PERCENT of it when
 *                                 below 100), soft (memory.high = Memory), none
 *   CGROUP_MEMORY_HIGH_PERCENT    100 (no memory.high under memory.max)
 *   CGROUP_SWAP_MAX               memory.swap.max in MB (unset: left alone)
 *   CGROUP_CPU_HARD_LIMIT         False; True: cpu.max = Cpus CPUs' worth
 *   CGROUP_PIDS_MAX               0 (no limit) or pids.max
 *   ASSIGN_CPU_AFFINITY           False; True: each slot gets as many CPUs of
 *                                 the agent's own as its Cpus, in cpuset.cpus
 *                                 (no two slots share one; a d-slot's come
 *                                 from its p-slot and go back when it ends),
 *                                 advertised as AssignedCpus = "0,1"
 * cpu.weight and io.weight are 100 per CPU of the slot.
 *
 * At start, the jobs an agent that died left running are re-adopted or
 * killed (adopt.c).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <syslog.h>
#include <unistd.h>

#include "cgroup.h"
#include "daemon.h"

/* A string knob for the cgroup set-up: a broken definition is logged and
 * its default used. */
static char *knob(const Config *cfg, const char *name, const char *def) {
        char *v = NULL;
        if (agent_knob_string(cfg, name, def, &v) < 0)
                return def ? strdup(def) : NULL;
        return v;
}

/* Another process than us in <base>/agent (another agent on the same
 * base): its pid, else 0. */
pid_t agent_cgroup_other_agent(const Agent *a) {
        pid_t *pids = NULL, other = 0;
        size_t n = 0;
        if (cg_root_agent_pids(a->cgroot, &pids, &n) < 0)
                return 0;
        for (size_t i = 0; i < n && !other; i++)
                if (pids[i] != getpid())
                        other = pids[i];
        free(pids);
        return other;
}

/* ASSIGN_CPU_AFFINITY: on when the slots' cgroups have the cpuset
 * controller (ctl: the controllers; NULL without cgroups); otherwise said
 * once, and the jobs run on every CPU of the agent. */
static void cpu_affinity_setup(Agent *a, const char *ctl) {
        ConfigError err;
        bool want = false;
        a->assign_cpus = false;
        if (config_get_bool(a->cfg, "ASSIGN_CPU_AFFINITY", &want, &err) < 0 || !want)
                return;
        const char *why = NULL;
        int r = 0;
        if (!a->cgroot)
                why = "the jobs run without cgroups";
        else if (!(cg_root_controllers(a->cgroot) & CG_CPUSET))
                why = "the cpuset controller is not available in the slots' cgroups";
        else if ((r = agent_cpus_allowed(&a->cpus_free)) < 0)
                why = "the agent cannot read its own CPU affinity";
        if (why) {
                char detail[192] = "";
                if (r < 0)
                        snprintf(detail, sizeof detail, ": %s", strerror(-r));
                else if (ctl)
                        snprintf(detail, sizeof detail, " (the controllers are '%s')", ctl);
                GleanLogField f[] = { { "GLEAN_CGROUP_CONTROLLERS", ctl ? ctl : "" } };
                glean_log(LOG_WARNING, NULL, f, ctl ? 1 : 0,
                          "ASSIGN_CPU_AFFINITY = True, but %s%s: jobs run on every CPU of the agent", why, detail);
                return;
        }
        a->assign_cpus = true;
        char list[256];
        agent_cpus_format(&a->cpus_free, true, list, sizeof list);
        glean_log(LOG_NOTICE, NULL, NULL, 0, "ASSIGN_CPU_AFFINITY: each slot gets CPUs of its own out of %s", list);
}

/* FORK_EXECUTOR_CGROUP: where the fork executor puts each job's cgroup v2
 * leaf. auto: the agent's own cgroup v2, unless that is the root of the
 * hierarchy (the agent makes nothing there unasked); a path: that cgroup
 * (relative to the cgroup2 mount, made if absent); none (or empty): no
 * leaves, the jobs' process groups only. Never in a v1 hierarchy
 * (cg_root_open finds the cgroup2 mount). Whatever fails is logged, and
 * the jobs have their process groups. */
static void fork_leaves_setup(Agent *a) {
        char *spec = knob(a->cfg, "FORK_EXECUTOR_CGROUP", "auto");
        char own[1024] = "", why[512] = "";
        const char *base = NULL;
        int r;

        if (!spec)
                return;
        if (!*spec || strcasecmp(spec, "none") == 0) {
                glean_log(LOG_NOTICE, NULL, NULL, 0,
                          "FORK_EXECUTOR_CGROUP = none: jobs run in their process groups (a process that calls "
                          "setsid escapes their end)");
                free(spec);
                return;
        }
        if (strcasecmp(spec, "auto") == 0) {
                if (cg_own(0, own, sizeof own) < 0 || strcmp(own, "/") == 0 || !own[0]) {
                        glean_log(LOG_NOTICE, NULL, NULL, 0,
                                  "the agent is in the root cgroup v2 (or has none): jobs run in their process groups "
                                  "(a process that calls setsid escapes their end); FORK_EXECUTOR_CGROUP can name a "
                                  "cgroup for them");
                        free(spec);
                        return;
                }
                base = own;
        } else
                base = spec;
        r = cg_root_open(NULL, base, false, &a->fork_leaves, why, sizeof why);
        if (r < 0) {
                a->fork_leaves = NULL;
                glean_log(LOG_WARNING, NULL, NULL, 0,
                          "FORK_EXECUTOR_CGROUP = %s: %s: jobs run in their process groups (a process that calls "
                          "setsid escapes their end)",
                          spec, why[0] ? why : strerror(-r));
        } else {
                /* The empty leaves of an earlier run (a leaf with processes
                 * is a job to re-adopt, and rmdir leaves it alone). */
                (void) cg_root_prune(a->fork_leaves, "job-");
                GleanLogField f[] = { { "GLEAN_CGROUP", cg_root_path(a->fork_leaves) } };
                glean_log(LOG_NOTICE, NULL, f, 1, "fork executor: each job in a cgroup v2 leaf of %s/slots",
                          cg_root_path(a->fork_leaves));
        }
        free(spec);
}

int agent_cgroups_setup(Agent *a) {
        char *mode = knob(a->cfg, "AGENT_EXECUTOR", "auto");
        if (!mode)
                return -ENOMEM;
        bool want = strcasecmp(mode, "fork") != 0;
        bool must = strcasecmp(mode, "cgroup") == 0;
        if (want && !must && strcasecmp(mode, "auto") != 0) {
                glean_log(LOG_ERR, NULL, NULL, 0, "AGENT_EXECUTOR = %s: auto, cgroup or fork", mode);
                free(mode);
                return -EINVAL;
        }
        free(mode);
        char why[512] = "";
        int r = -ENOENT;
        if (want) {
                char *base = knob(a->cfg, "BASE_CGROUP", NULL);
                char own[1024] = "";
                bool in_scope = false;
                if (!base && agent_scope_setup(a, &base) > 0)
                        in_scope = true; /* the agent stays in its service's cgroup */
                if (!base && cg_own(0, own, sizeof own) >= 0)
                        base = strdup(own);
                if (!base || strcmp(base, "/") == 0 || !*base) {
                        snprintf(why, sizeof why,
                                 "the agent runs in the root cgroup: set BASE_CGROUP, or run it under systemd "
                                 "(Delegate=yes)");
                        r = -EPERM;
                } else
                        r = cg_root_open(NULL, base, !in_scope, &a->cgroot, why, sizeof why);
                free(base);
        }
        if (r >= 0) {
                r = agent_executor_cgroup_new(a->event, a->cgroot, &a->exec);
                if (r < 0)
                        snprintf(why, sizeof why, "cannot set up the cgroup executor: %s", strerror(-r));
        }
        if (r < 0) {
                cg_root_free(a->cgroot);
                a->cgroot = NULL;
                if (must) {
                        glean_log(LOG_ERR, NULL, NULL, 0, "AGENT_EXECUTOR = cgroup: %s", why);
                        return r;
                }
                if (want)
                        glean_log(LOG_WARNING, NULL, NULL, 0, "jobs run without cgroups: %s", why);
                cpu_affinity_setup(a, NULL);
                fork_leaves_setup(a);
                return agent_executor_fork_new_leaves(a->event, a->fork_leaves, &a->exec);
        }
        char ctl[128];
        cg_controllers_string(cg_root_controllers(a->cgroot), ctl, sizeof ctl);
        GleanLogField f[] = { { "GLEAN_CGROUP", cg_root_path(a->cgroot) }, { "GLEAN_CGROUP_CONTROLLERS", ctl } };
        cpu_affinity_setup(a, ctl);
        if (!(cg_root_controllers(a->cgroot) & CG_MEMORY))
                glean_log(LOG_WARNING, NULL, f, 2,
                          "cgroup v2 at %s offers the controllers '%s': no memory, CPU or pids limits here; freezing, "
                          "killing and CPU usage work",
                          cg_root_path(a->cgroot), ctl);
        else
                glean_log(LOG_NOTICE, NULL, f, 2, "slots in cgroup v2 at %s, controllers '%s'", cg_root_path(a->cgroot),
                          ctl);
        return 0;
}

/* The path of a slot's cgroup under <base>/slots: "slot1", "slot1/slot1_2". */
void agent_slot_cgroup_path(const Slot *s, char *buf, size_t len) {
        (void) cg_subpath(buf, len, s->parent ? s->parent->name : NULL, s->name);
}

char *agent_slot_cgroup_leaf(const Slot *s, const char *leaf) {
        char slot[160], path[192];
        agent_slot_cgroup_path(s, slot, sizeof slot);
        return cg_subpath(path, sizeof path, slot, leaf) < 0 ? NULL : strdup(path);
}

static void limits_for(const Agent *a, const Slot *s, CgLimits *l) {
        *l = (CgLimits){ 0 };
        int64_t cpus = s->res.cpus > 0 ? s->res.cpus : 1;
        l->cpu_weight = (uint64_t) (cpus * 100 > 10000 ? 10000 : cpus * 100);
        l->io_weight = l->cpu_weight;
        ConfigError err;
        bool hard_cpu = false;
        if (config_get_bool(a->cfg, "CGROUP_CPU_HARD_LIMIT", &hard_cpu, &err) >= 0 && hard_cpu) {
                l->cpu_max_period = 100000;
                l->cpu_max_quota = cpus * 100000;
        }
        char *policy = knob(a->cfg, "CGROUP_MEMORY_LIMIT_POLICY", "hard");
        int64_t mb = s->res.memory, pct = 100;
        config_get_int(a->cfg, "CGROUP_MEMORY_HIGH_PERCENT", &pct, &err);
        if (pct <= 0 || pct > 100)
                pct = 100;
        if (policy && mb > 0) {
                if (strcasecmp(policy, "hard") == 0) {
                        /* memory.high below memory.max throttles a job that
                         * outgrows it for minutes before the OOM killer ends
                         * it (seen: 33 s to over 270 s in the VM rig, once
                         * with the kernel's soft-lockup warnings): only when
                         * asked for. */
                        l->memory_max = mb * 1024 * 1024;
                        l->memory_high = pct < 100 ? mb * 1024 * 1024 / 100 * pct : CG_MAX;
                } else if (strcasecmp(policy, "soft") == 0) {
                        l->memory_high = mb * 1024 * 1024;
                        l->memory_max = CG_MAX;
                }
        }
        free(policy);
        int64_t v;
        if (config_get_int(a->cfg, "CGROUP_SWAP_MAX", &v, &err) >= 0 && v >= 0)
                l->memory_swap_max = v * 1024 * 1024;
        if (config_get_int(a->cfg, "CGROUP_PIDS_MAX", &v, &err) >= 0 && v > 0)
                l->pids_max = v;
}

/* The slot's CPUs out of its pool (its p-slot's, or the agent's): true
 * when it has them. A slot the pool cannot serve (NUM_CPUS above the
 * CPUs the agent may use) runs on every CPU of the agent, and says so. */
static bool slot_take_cpus(Slot *s) {
        Agent *a = s->agent;
        if (!a->assign_cpus || s->has_cpus)
                return s->has_cpus;
        AgentCpus *pool = s->parent ? &s->parent->cpus_free : &a->cpus_free;
        if (s->parent && !s->parent->has_cpus)
                return false; /* its p-slot got none: said there */
        unsigned want = s->res.cpus > 0 ? (unsigned) s->res.cpus : 0;
        if (want == 0)
                return false; /* no CPU of its own: its parent's */
        if (agent_cpus_take(pool, want, &s->cpus) < 0) {
                GleanLogField f[] = { { "GLEAN_SLOT", s->name } };
                glean_log(LOG_WARNING, NULL, f, 1,
                          "%s: ASSIGN_CPU_AFFINITY: it has %u CPUs, only %u of %s are left: its jobs run on every "
                          "CPU of the agent",
                          s->name, want, agent_cpus_count(pool), s->parent ? s->parent->name : "the agent's");
                return false;
        }
        s->has_cpus = true;
        s->cpus_free = s->cpus;
        agent_slot_cpus_ad(s);
        if (s->parent)
                agent_slot_cpus_ad(s->parent);
        return true;
}

void agent_slot_cpus_ad(Slot *s) {
        if (!s->has_cpus) {
                classad_delete(s->ad, "AssignedCpus");
                return;
        }
        char list[4096];
        agent_cpus_format(s->partitionable ? &s->cpus_free : &s->cpus, false, list, sizeof list);
        classad_set_string(s->ad, "AssignedCpus", list);
}

void agent_slot_cpus_release(Slot *s) {
        if (!s->has_cpus || !s->parent)
                return;
        agent_cpus_give(&s->parent->cpus_free, &s->cpus);
        s->has_cpus = false;
        agent_slot_cpus_ad(s->parent);
}

int agent_slot_cgroup_open(Slot *s) {
        Agent *a = s->agent;
        if (!a->cgroot)
                return 0;
        char path[128], why[512] = "";
        agent_slot_cgroup_path(s, path, sizeof path);
        int r = cg_open(a->cgroot, path, &s->cg, why, sizeof why);
        if (r < 0) {
                GleanLogField f[] = { { "GLEAN_SLOT", s->name } };
                glean_log(LOG_ERR, NULL, f, 1, "%s: no cgroup: %s", s->name, why);
                return r;
        }
        CgLimits l;
        limits_for(a, s, &l);
        char cpuset[1024];
        if (slot_take_cpus(s) && agent_cpus_format(&s->cpus, true, cpuset, sizeof cpuset) >= 0)
                l.cpuset_cpus = cpuset;
        unsigned applied = 0;
        r = cg_set_limits(s->cg, &l, &applied, why, sizeof why);
        if (r < 0) {
                GleanLogField f[] = { { "GLEAN_SLOT", s->name } };
                glean_log(LOG_WARNING, NULL, f, 1, "%s: limits not all set: %s", s->name, why);
        }
        char ctl[128];
        cg_controllers_string(applied, ctl, sizeof ctl);
        classad_set_string(s->ad, "CgroupLimits", ctl);
        return 0;
}

void agent_slot_cgroup_close(Slot *s) {
        if (!s->cg)
                return;
        cg_remove(s->cg);
        cg_free(s->cg);
        s->cg = NULL;
}

void agent_cgroups_ad(const Agent *a, ClassAd *ad) {
        char ctl[128] = "";
        if (a->cgroot)
                cg_controllers_string(cg_root_controllers(a->cgroot), ctl, sizeof ctl);
        classad_set_string(ad, "CgroupControllers", ctl);
        classad_set_bool(ad, "HasCgroups", a->cgroot != NULL);
}
