/* SPDX-License-Identifier: Apache-2.0 */
/*
 * slots.h — the machine's resources and how they become slots (seed 002,
 * 3.5.10): detection and the NUM_CPUS / MEMORY / DISK / MACHINE_RESOURCE_*
 * overrides, the slot layout of NUM_SLOTS and SLOT_TYPE_<N>, the carving of
 * dynamic slots out of partitionable ones (3.5.10.6-7, seed 003), the
 * resource attributes of a slot's ad, and the per-slot load average and
 * keyboard/console idle times (3.5.10.2-4), and the sets of CPUs slots
 * are pinned to (ASSIGN_CPU_AFFINITY).
 *
 * Everything but agent_machine_detect() and agent_cpus_allowed() is pure: values in, values out.
 * Conventions: >= 0 on success, -errno on failure; outputs last, named
 * ret_*, set only on success.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "carve/carve.h"
#include "classad.h"
#include "config.h"
#include "state.h"

#define AGENT_MAX_CUSTOM CARVE_MAX_CUSTOM
#define AGENT_MAX_SLOTS 4096 /* slots one layout may make */
#define AGENT_MAX_NAME 230   /* characters of the agent's name (STARTD_NAME) */

/* A vector of resources. */
typedef struct AgentRes {
        int64_t cpus;   /* CPUs (whole) */
        int64_t memory; /* MB */
        int64_t disk;   /* KB */
        int64_t swap;   /* KB */
        double custom[AGENT_MAX_CUSTOM]; /* indexed like AgentMachine.custom_name */
} AgentRes;

typedef struct AgentMachine {
        AgentRes detected;     /* what the machine has (DetectedCpus, DetectedMemory, ...); detected.cpus is
                                * DETECTED_CPUS: the cores or the hyperthreads, as COUNT_HYPERTHREAD_CPUS says */
        AgentRes total;        /* after NUM_CPUS, MEMORY, RESERVED_MEMORY, DISK, RESERVED_DISK, RESERVED_SWAP,
                                * MACHINE_RESOURCE_<name> (TotalCpus, ...) */
        int64_t detected_cores;         /* DETECTED_CORES: the CPUs the kernel schedules, hyperthreads counted */
        int64_t detected_physical_cpus; /* DETECTED_PHYSICAL_CPUS: of those, one per core */
        size_t n_custom;
        char custom_name[AGENT_MAX_CUSTOM][64]; /* as configured, first letter upper-cased: "gpu" -> "Gpu" */
        char arch[32];         /* "X86_64", "INTEL", "aarch64"... as HTCondor spells Arch */
        char opsys[16];        /* "LINUX" */
        char hostname[256];    /* the Machine attribute */
        char name[256];        /* the agent's name: slot names are "slot1@" + name (STARTD_NAME; else hostname) */
        char uid_domain[256];        /* UidDomain: UID_DOMAIN */
        char filesystem_domain[256]; /* FileSystemDomain: FILESYSTEM_DOMAIN */
} AgentMachine;

/* Arch as HTCondor spells it for a uname(2) machine name: x86_64 -> "X86_64",
 * i386..i686 -> "INTEL", ia64 -> "IA64", ppc -> "PPC", ppc64 -> "PPC64",
 * anything else (aarch64, ppc64le, ...) as it is. Never NULL. */
const char *agent_arch_name(const char *uname_machine);

/* The pure part: the machine from detected values and the configuration.
 * detected->cpus: the CPUs the agent may use, hyperthreads counted
 * (DETECTED_CORES); physical_cpus: the cores they are on
 * (DETECTED_PHYSICAL_CPUS; <= 0: unknown, taken as detected->cpus).
 * Knobs: COUNT_HYPERTHREAD_CPUS (default True; False: DETECTED_CPUS is
 * physical_cpus), NUM_CPUS (default DETECTED_CPUS), MEMORY (MB),
 * RESERVED_MEMORY (MB, taken off MEMORY: what the slots divide; negative, or
 * all the memory: -EINVAL), DISK (KB, replaces the detected free disk),
 * RESERVED_DISK (MB, taken off the detected disk), RESERVED_SWAP (MB, taken
 * off the swap), MACHINE_RESOURCE_NAMES and every MACHINE_RESOURCE_<name> (a
 * quantity, or a list of device ids whose length is the quantity);
 * STARTD_NAME (HTCondor's daemon name: "name" becomes "name@hostname", one
 * with '@' is taken as it is, the hostname itself is the hostname; in a
 * pool (COLLECTOR_HOST set) the part after its last '@' must be this
 * machine), UID_DOMAIN and FILESYSTEM_DOMAIN (default hostname).
 * $(DETECTED_CPUS), $(DETECTED_CORES), $(DETECTED_PHYSICAL_CPUS) and
 * $(DETECTED_MEMORY) in these knobs expand to the detected values.
 * detected->custom is ignored (Detected<name> equals Total<name>, as in
 * HTCondor). arch goes through agent_arch_name(). Bad knob values: -EINVAL
 * with err naming the knob, its file and line. */
int agent_machine_configure_cpus(const Config *cfg, const AgentRes *detected, int64_t physical_cpus,
                                 const char *arch, const char *hostname, AgentMachine *ret, ConfigError *err);
/* The same without a known topology (physical_cpus unknown). */
int agent_machine_configure(const Config *cfg, const AgentRes *detected, const char *arch,
                            const char *hostname, AgentMachine *ret, ConfigError *err);
/* The shell: detects CPUs (sched_getaffinity: the CPUs the agent may use, and
 * the cores they are on by agent_cpus_physical() of /sys), memory
 * (/proc/meminfo MemTotal, or the agent's cgroup memory.max when lower, MB), the
 * EXECUTE directory's free disk (default /var/lib/glean/execute; statvfs of it or of its
 * nearest existing parent, KB),
 * swap (SwapTotal, KB), uname machine -> Arch, FULL_HOSTNAME (else gethostname),
 * then agent_machine_configure_cpus. */
int agent_machine_detect(const Config *cfg, AgentMachine *ret, ConfigError *err);
/* Redefines DETECTED_CPUS, DETECTED_CORES, DETECTED_PHYSICAL_CPUS and
 * DETECTED_MEMORY in cfg as m detected them (COUNT_HYPERTHREAD_CPUS applied,
 * the agent's own CPUs), as HTCondor redefines DETECTED_CPUS once its
 * configuration is read: every knob the agent reads later sees them. */
int agent_machine_define_detected(Config *cfg, const AgentMachine *m);

typedef struct AgentSlotDef {
        unsigned id;          /* N of slotN, 1-based, in order */
        unsigned type;        /* SLOT_TYPE_<type>; 0 for the default one-per-core layout */
        bool partitionable;   /* SLOT_TYPE_<type>_PARTITIONABLE */
        AgentRes res;         /* what this slot owns */
        double disk_fraction; /* share of the machine's disk (res.disk = floor(share x total.disk)) */
        double swap_fraction; /* share of the machine's swap, likewise */
} AgentSlotDef;

/* The slots of the machine: NUM_SLOTS (default: one slot per CPU, resources split
 * evenly), or NUM_SLOTS_TYPE_<N> x SLOT_TYPE_<N> in every form of 3.5.10.1:
 * "cpus=2, memory=1024", fractions "1/4", percentages "25%", "auto", names of
 * resources by any prefix of cpus / ram / memory / swap / virtualmemory / disk
 * (c, m, r, s, v, d, mem, virt, ...) or by custom resource name, a bare share for
 * everything not listed ("1/4", "25%", "c=1, 50%"), units on memory (MB if none;
 * K, M, G, T with an optional B) and, a glean extension, absolute disk and swap
 * (KB if none). Items are separated by commas and/or white space.
 * Unlisted resources default to "auto": an even split of what the explicit shares
 * leave. An impossible configuration (over-committed resources, a slot with less
 * than one CPU or one MB, a bad value, an unknown resource asked for) returns
 * -EINVAL with err saying precisely what does not add up, e.g.
 * "SLOT_TYPE_1 x NUM_SLOTS_TYPE_1=4 asks for 8 CPUs, the machine has 4".
 * *ret is malloc'd (free()). */
int agent_slots_layout(const Config *cfg, const AgentMachine *m, AgentSlotDef **ret, size_t *ret_n, ConfigError *err);

/* Disk and swap change over time: recompute res.disk and res.swap of each
 * definition from its fractions and the machine's current totals. */
void agent_slots_rescale(AgentSlotDef *defs, size_t n, int64_t total_disk, int64_t total_swap);

/* Resource arithmetic over m->n_custom custom resources. */
void agent_res_add(AgentRes *a, const AgentRes *b, size_t n_custom);
void agent_res_sub(AgentRes *a, const AgentRes *b, size_t n_custom);
bool agent_res_fits(const AgentRes *want, const AgentRes *avail, size_t n_custom);

/* The carving policy of machine m (carve/carve.h): cfg's MODIFY_REQUEST_EXPR_* and
 * MUST_MODIFY_REQUEST_EXPRS, parsed once, and m's custom resources. -EINVAL with err
 * naming a malformed knob. */
int agent_carve_policy(const Config *cfg, const AgentMachine *m, CarvePolicy **ret, ConfigError *err);
/* What a dynamic slot carved from a partitionable slot gets for a job (3.5.10.6-7, seed 003),
 * by carve_amounts(): a consumption policy when pslot_ad has Consumption<Res> for Cpus,
 * Memory, Disk and every custom resource, else the job's requests (_condor_Request<Res>, or
 * Request<Res> rewritten by MODIFY_REQUEST_EXPR_*, the job's own when the rewritten one does
 * not fit and MUST_MODIFY_REQUEST_EXPRS is false); RequestMemory and RequestDisk missing:
 * refused (-EINVAL), as HTCondor does. Swap is not carved (0). policy: agent_carve_policy()
 * of m. -ENOSPC with why (a sentence) when it does not fit in avail; -EINVAL with why when
 * a request is missing, not a number, negative, or all zero. */
int agent_pslot_carve(const CarvePolicy *policy, const AgentMachine *m, const ClassAd *pslot_ad, const ClassAd *job,
                      const AgentRes *avail, AgentRes *ret, char *why, size_t whylen);

/* Sets the identity and resource attributes of a slot's ad (CA_MODE_OLD ads):
 * Name ("slot1@" + m->name, "slot1_2@" + m->name: name is "slot1" / "slot1_2"), SlotID, DSlotId
 * (d-slots: the number after '_'), SlotTypeID (negative for a d-slot, as HTCondor),
 * SlotType ("Static", "Partitionable", "Dynamic"), PartitionableSlot = True (p-slots
 * only) or DynamicSlot = True (d-slots only), Machine, Arch, OpSys, UidDomain,
 * FileSystemDomain, Cpus, Memory, Disk,
 * Swap and VirtualMemory (the slot's current res), TotalCpus, TotalMemory, TotalDisk,
 * TotalVirtualMemory (machine totals), TotalSlotCpus, TotalSlotMemory, TotalSlotDisk (the
 * slot's def; a d-slot's own res), DetectedCpus, DetectedMemory, per custom resource
 * <name>, Total<name>, Detected<name>, TotalSlot<name>, and MachineResources
 * ("Cpus Memory Disk Swap <custom...>"). dynamic: true for a d-slot (def is its parent's
 * def). -EINVAL for a name that does not fit, -ENOMEM. */
int agent_slot_ad_resources(ClassAd *ad, const AgentMachine *m, const AgentSlotDef *def, const char *name,
                            bool dynamic, const AgentRes *res);

/* Load per slot (3.5.10.3): slots[i].condor_load is glean's own load of slot i (in);
 * the machine's total load is total_load; fills slots[i].load (LoadAvg = owner share +
 * condor load). Owner load = max(0, total_load - sum of condor loads), handed out to the
 * slots that are not dynamic, each taking at most its cpus (1.0 for a one-CPU slot; a
 * partitionable slot counts its own cpus plus those of its d-slots), first to slots in
 * Owner state, then Unclaimed, then the rest in slot order; what is left after every slot
 * has had its share goes round again in the same order (so a slot can exceed 1.0).
 * A partitionable slot's cpus are its idle (not carved) CPUs; of its owner share it keeps
 * up to those, and the excess goes to its d-slots (parent >= 0) in slot order, each taking
 * at most its cpus, none less than 0.05 (HTCondor, jira 2901); what they cannot take stays
 * with the p-slot. The manual's log examples come out exactly. */
typedef struct AgentLoadSlot {
        AgentState state;
        double cpus;
        double condor_load; /* in */
        int parent;         /* index of the partitionable slot this d-slot came from, or -1 */
        bool partitionable;
        double load;        /* out: LoadAvg */
        double owner_load;  /* out: the owner share (LoadAvg - CondorLoadAvg) */
} AgentLoadSlot;
/* Returns the total owner load handed out. */
double agent_load_distribute(double total_load, AgentLoadSlot *slots, size_t n);

/* One step of an exponentially decayed average, as the kernel's load
 * average: avg after dt seconds during which the mean was `mean`, with the
 * time constant tau (60 s for a one-minute average): avg * e + mean * (1 - e),
 * e = exp(-dt / tau). dt <= 0 leaves avg; tau <= 0 gives mean. */
double agent_load_decay(double avg, double mean, double dt, double tau);

/* KeyboardIdle and ConsoleIdle of slot `id` (SLOTS_CONNECTED_TO_KEYBOARD,
 * SLOTS_CONNECTED_TO_CONSOLE, DISCONNECTED_KEYBOARD_IDLE_BOOST, as HTCondor): slots
 * 1..connected_console get the machine's console idle, the others
 * since_agent_start + boost; slots 1..connected_keyboard get the machine's keyboard
 * idle, the others their console value (so ConsoleIdle >= KeyboardIdle holds). A
 * machine console idle < 0 (unknown) is passed on as it is for connected slots. */
typedef struct AgentIdleKnobs { int64_t connected_keyboard, connected_console, boost; } AgentIdleKnobs;
int agent_idle_knobs(const Config *cfg, AgentIdleKnobs *ret, ConfigError *err);
void agent_slot_idle(const AgentIdleKnobs *k, unsigned id, int64_t machine_kbd_idle, int64_t machine_console_idle,
                     int64_t since_agent_start, int64_t *ret_kbd_idle, int64_t *ret_console_idle);

/* ---- CPU affinity (ASSIGN_CPU_AFFINITY) ----
 *
 * A set of CPU numbers: the CPUs the agent may use (its affinity mask), a
 * pool slots take their CPUs from, the CPUs of one slot. Each slot takes
 * as many whole CPUs as its Cpus from its pool (the agent's for a static
 * or partitionable slot, its partitionable slot's for a dynamic one) and
 * gives them back when it goes, so no two slots share a CPU. */
#define AGENT_MAX_CPUS 4096
typedef struct AgentCpus {
        uint64_t bits[AGENT_MAX_CPUS / 64];
} AgentCpus;

void agent_cpus_add(AgentCpus *set, unsigned cpu); /* cpu >= AGENT_MAX_CPUS: ignored */
bool agent_cpus_has(const AgentCpus *set, unsigned cpu);
unsigned agent_cpus_count(const AgentCpus *set);
/* The kernel's list format ("0-3,8,10-11", white space around items
 * allowed, "" the empty set) -> *ret; -EINVAL for anything else, a
 * reversed range or a CPU >= AGENT_MAX_CPUS. */
int agent_cpus_parse(const char *text, AgentCpus *ret);
/* The set as text: ranges ("0-3,8", the kernel's cpuset.cpus format) or
 * every CPU ("0,1,2,3,8": what a ClassAd's stringListMember() reads);
 * "" for the empty set. -ENOBUFS when it does not fit (buf holds a
 * truncated but terminated list then). */
int agent_cpus_format(const AgentCpus *set, bool ranges, char *buf, size_t len);
/* Takes n CPUs out of *pool into *ret: the lowest-numbered run of n
 * consecutive CPUs when there is one (neighbours share caches), else the n
 * lowest. -ENOSPC, and nothing taken, when the pool has fewer than n. */
int agent_cpus_take(AgentCpus *pool, unsigned n, AgentCpus *ret);
/* Puts the CPUs of set back into *pool. */
void agent_cpus_give(AgentCpus *pool, const AgentCpus *set);
/* The shell: the CPUs the calling process may run on (sched_getaffinity). */
int agent_cpus_allowed(AgentCpus *ret);
/* The cores the CPUs of set are on: CPUs of one core (a line
 * <sysfs_root>/devices/system/cpu/cpu<N>/topology/thread_siblings_list
 * lists them, "0,4" or "0-1") count once. A CPU whose topology cannot be
 * read counts as a core of its own. sysfs_root: "/sys", or a fake tree. */
int agent_cpus_physical(const char *sysfs_root, const AgentCpus *set, int64_t *ret);
