/* SPDX-License-Identifier: Apache-2.0 */
/*
 * slotad-res.c — the identity and resource attributes of a slot's ad, with
 * HTCondor's names (seed 002, 3.5.10.1 and 3.5.10.6): Name, SlotID,
 * SlotType, Machine, UidDomain, FileSystemDomain, Cpus, Memory, Disk,
 * Total*, TotalSlot*, Detected*, one set per custom resource,
 * PartitionableSlot / DynamicSlot, MachineResources.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "slots-internal.h"

/* A custom quantity: an integer when it is one. */
static int set_quantity(ClassAd *ad, const char *prefix, const char *name, double v) {
        char attr[128];

        snprintf(attr, sizeof(attr), "%s%s", prefix, name);
        if (v == floor(v) && fabs(v) < 9.0e15)
                return classad_set_int(ad, attr, (int64_t) v);
        return classad_set_real(ad, attr, v);
}

static int set_ints(ClassAd *ad, const char *prefix, const AgentRes *r) {
        static const char *const names[] = { "Cpus", "Memory", "Disk" };
        const int64_t v[] = { r->cpus, r->memory, r->disk };
        char attr[64];
        int ret;

        for (size_t i = 0; i < 3; i++) {
                snprintf(attr, sizeof(attr), "%s%s", prefix, names[i]);
                ret = classad_set_int(ad, attr, v[i]);
                if (ret < 0)
                        return ret;
        }
        return 0;
}

/* "slot1_2" -> 2; 0 when there is no "_<n>". */
static int64_t dslot_number(const char *name) {
        const char *u = strrchr(name, '_');
        char *end;
        long long n;

        if (!u || !u[1])
                return 0;
        n = strtoll(u + 1, &end, 10);
        return *end || n < 0 ? 0 : n;
}

int agent_slot_ad_resources(ClassAd *ad, const AgentMachine *m, const AgentSlotDef *def, const char *name,
                            bool dynamic, const AgentRes *res) {
        const AgentRes *slot_total = dynamic ? res : &def->res;
        const char *kind = dynamic ? "Dynamic" : def->partitionable ? "Partitionable" : "Static";
        char full[512], resources[64 + AGENT_MAX_CUSTOM * 66];
        const char *agent_name;
        size_t len, nlen, hlen;
        int r = 0;

        if (!ad || !m || !def || !name || !res || m->n_custom > AGENT_MAX_CUSTOM)
                return -EINVAL;
        agent_name = m->name[0] ? m->name : m->hostname; /* a machine made by hand may have no name */
        nlen = strlen(name);
        hlen = strnlen(agent_name, sizeof(m->name));
        if (!name[0] || strchr(name, '@') || nlen + hlen + 2 > sizeof(full))
                return -EINVAL;
        /* "slot1@" + the agent's name, as HTCondor's Resource names a slot. */
        memcpy(full, name, nlen);
        full[nlen] = '@';
        memcpy(full + nlen + 1, agent_name, hlen);
        full[nlen + 1 + hlen] = '\0';

        r = classad_set_string(ad, "Name", full);
        if (r >= 0)
                r = classad_set_int(ad, "SlotID", def->id);
        if (r >= 0)
                r = classad_set_int(ad, "SlotTypeID", dynamic ? -(int64_t) def->type : (int64_t) def->type);
        if (r >= 0)
                r = classad_set_string(ad, "SlotType", kind);
        if (r < 0)
                return r;
        /* Only the kind that is: a START expression tests PartitionableSlot =?= True. */
        (void) classad_delete(ad, "PartitionableSlot");
        (void) classad_delete(ad, "DynamicSlot");
        (void) classad_delete(ad, "DSlotId");
        if (dynamic) {
                r = classad_set_bool(ad, "DynamicSlot", true);
                if (r >= 0 && dslot_number(name) > 0)
                        r = classad_set_int(ad, "DSlotId", dslot_number(name));
        } else if (def->partitionable)
                r = classad_set_bool(ad, "PartitionableSlot", true);
        if (r >= 0)
                r = classad_set_string(ad, "Machine", m->hostname);
        if (r >= 0)
                r = classad_set_string(ad, "Arch", m->arch);
        if (r >= 0)
                r = classad_set_string(ad, "OpSys", m->opsys);
        if (r >= 0)
                r = classad_set_string(ad, "UidDomain", m->uid_domain[0] ? m->uid_domain : m->hostname);
        if (r >= 0)
                r = classad_set_string(ad, "FileSystemDomain",
                                       m->filesystem_domain[0] ? m->filesystem_domain : m->hostname);
        if (r >= 0)
                r = classad_set_bool(ad, "HasFileTransfer", true); /* the agent serves and fetches files */
        if (r < 0)
                return r;

        r = set_ints(ad, "", res);
        if (r >= 0)
                r = set_ints(ad, "Total", &m->total);
        if (r >= 0)
                r = set_ints(ad, "TotalSlot", slot_total);
        if (r >= 0)
                r = classad_set_int(ad, "Swap", res->swap);
        if (r >= 0)
                r = classad_set_int(ad, "VirtualMemory", res->swap);
        if (r >= 0)
                r = classad_set_int(ad, "TotalVirtualMemory", m->total.swap);
        if (r >= 0)
                r = classad_set_int(ad, "DetectedCpus", m->detected.cpus);
        if (r >= 0)
                r = classad_set_int(ad, "DetectedMemory", m->detected.memory);
        if (r < 0)
                return r;

        len = (size_t) snprintf(resources, sizeof(resources), "Cpus Memory Disk Swap");
        for (size_t i = 0; i < m->n_custom; i++) {
                const char *n = m->custom_name[i];

                r = set_quantity(ad, "", n, res->custom[i]);
                if (r >= 0)
                        r = set_quantity(ad, "Total", n, m->total.custom[i]);
                if (r >= 0)
                        r = set_quantity(ad, "Detected", n, m->detected.custom[i]);
                if (r >= 0)
                        r = set_quantity(ad, "TotalSlot", n, slot_total->custom[i]);
                if (r < 0)
                        return r;
                if (len < sizeof(resources))
                        len += (size_t) snprintf(resources + len, sizeof(resources) - len, " %s", n);
        }
        return classad_set_string(ad, "MachineResources", resources);
}
