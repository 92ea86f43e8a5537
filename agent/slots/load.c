/* SPDX-License-Identifier: Apache-2.0 */
/*
 * load.c — the per-slot load average and keyboard/console idle times of a
 * multi-core machine (seed 002, 3.5.10.2 to 3.5.10.4).
 *
 * The operating system knows only the machine's load. glean knows the load
 * of its own jobs per slot (CondorLoadAvg); the rest is the owner's, and
 * is handed out to the slots the owner is most likely using first: those
 * in Owner state, then Unclaimed ones, then the others in slot order, each
 * taking at most its CPUs' worth; anything left goes round again.
 */
#include <errno.h>
#include <math.h>
#include <sys/types.h>

#include "slots-internal.h"

/* Is slots[i] a d-slot whose parent is a partitionable slot of the array? */
static bool is_child(const AgentLoadSlot *slots, size_t n, size_t i) {
        int p = slots[i].parent;

        return p >= 0 && (size_t) p < n && (size_t) p != i && slots[p].partitionable && slots[p].parent < 0;
}

static double cpus_of(const AgentLoadSlot *s) {
        return s->cpus > 0 && isfinite(s->cpus) ? s->cpus : 0;
}

/* The owner load a slot that is not a child takes per round: its CPUs,
 * and for a p-slot those of its d-slots too. Computed once for all slots,
 * in one pass, into .load (an output set only at the very end), so that a
 * machine of many p-slots costs O(n), not O(n^2). */
static void capacities(AgentLoadSlot *slots, size_t n) {
        for (size_t i = 0; i < n; i++)
                slots[i].load = cpus_of(&slots[i]);
        for (size_t j = 0; j < n; j++)
                if (is_child(slots, n, j))
                        slots[slots[j].parent].load += cpus_of(&slots[j]);
}

static double capacity(const AgentLoadSlot *slots, size_t i) {
        return slots[i].load;
}

/* The rank of a slot's state in the hand-out order. */
static int order_of(AgentState s) {
        return s == AGENT_STATE_OWNER ? 0 : s == AGENT_STATE_UNCLAIMED ? 1 : 2;
}

/* A p-slot keeps what fits its idle CPUs; the excess goes to its d-slots
 * in slot order. One pass over all families at once (the excess of each
 * p-slot kept in its .load meanwhile), O(n) however many p-slots. */
static void split_families(AgentLoadSlot *slots, size_t n) {
        for (size_t p = 0; p < n; p++)
                if (slots[p].partitionable && !is_child(slots, n, p)) {
                        double share = slots[p].owner_load, keep = fmin(share, cpus_of(&slots[p]));

                        slots[p].owner_load = keep;
                        slots[p].load = share - keep;
                } else
                        slots[p].load = 0;
        for (size_t j = 0; j < n; j++) {
                double *excess, give;

                if (!is_child(slots, n, j))
                        continue;
                excess = &slots[slots[j].parent].load;
                if (*excess <= 0)
                        continue;
                give = fmin(*excess, cpus_of(&slots[j]));
                if (give < 0.05) /* HTCondor, jira 2901: no crumbs */
                        continue;
                slots[j].owner_load = give;
                *excess -= give;
        }
        for (size_t p = 0; p < n; p++)
                slots[p].owner_load += slots[p].load; /* what the d-slots could not take */
}

double agent_load_distribute(double total_load, AgentLoadSlot *slots, size_t n) {
        double condor = 0, owner, left, total_cap = 0, rounds;
        ssize_t first = -1;

        for (size_t i = 0; i < n; i++) {
                slots[i].owner_load = 0;
                if (isfinite(slots[i].condor_load))
                        condor += slots[i].condor_load;
        }
        owner = isfinite(total_load) ? total_load - condor : 0;
        if (owner < 0)
                owner = 0;
        if (n == 0)
                return 0;

        capacities(slots, n);
        for (size_t i = 0; i < n; i++)
                if (!is_child(slots, n, i)) {
                        total_cap += capacity(slots, i);
                        if (first < 0 || order_of(slots[i].state) < order_of(slots[first].state))
                                first = (ssize_t) i;
                }
        if (first < 0) /* every slot a child of another: cannot happen with valid parents */
                first = 0;

        /* Whole rounds at once, then one partial round in hand-out order. */
        rounds = total_cap > 0 ? floor(owner / total_cap) : 0;
        left = owner;
        if (rounds > 0)
                for (size_t i = 0; i < n; i++)
                        if (!is_child(slots, n, i)) {
                                slots[i].owner_load = rounds * capacity(slots, i);
                                left -= slots[i].owner_load;
                        }
        for (int rank = 0; rank < 3 && left > 0; rank++)
                for (size_t i = 0; i < n && left > 0; i++) {
                        double give;

                        if (is_child(slots, n, i) || order_of(slots[i].state) != rank)
                                continue;
                        give = fmin(left, capacity(slots, i));
                        slots[i].owner_load += give;
                        left -= give;
                }
        if (left > 1e-12 || total_cap <= 0) /* rounding, or no slot with a CPU */
                slots[first].owner_load += left;

        split_families(slots, n);
        for (size_t i = 0; i < n; i++)
                slots[i].load = slots[i].owner_load + (isfinite(slots[i].condor_load) ? slots[i].condor_load : 0);
        return owner;
}

/* ---- keyboard and console ---- */

int agent_idle_knobs(const Config *cfg, AgentIdleKnobs *ret, ConfigError *err) {
        static const struct { const char *knob; int64_t def; } knobs[] = {
                { "SLOTS_CONNECTED_TO_KEYBOARD", 0 },
                { "SLOTS_CONNECTED_TO_CONSOLE", 0 },
                { "DISCONNECTED_KEYBOARD_IDLE_BOOST", 1200 },
        };
        int64_t v[3];
        int r;

        if (!cfg || !ret)
                return -EINVAL;
        for (size_t i = 0; i < 3; i++) {
                r = config_get_int(cfg, knobs[i].knob, &v[i], err);
                if (r == -ENOENT)
                        v[i] = knobs[i].def;
                else if (r < 0)
                        return r;
                if (v[i] < 0)
                        return agent_slots_error(err, cfg, knobs[i].knob, -EINVAL, "%s = %lld is negative",
                                                 knobs[i].knob, (long long) v[i]);
        }
        *ret = (AgentIdleKnobs){ .connected_keyboard = v[0], .connected_console = v[1], .boost = v[2] };
        return 0;
}

void agent_slot_idle(const AgentIdleKnobs *k, unsigned id, int64_t machine_kbd_idle, int64_t machine_console_idle,
                     int64_t since_agent_start, int64_t *ret_kbd_idle, int64_t *ret_console_idle) {
        int64_t max = since_agent_start + k->boost, console, kbd;

        console = id >= 1 && (int64_t) id <= k->connected_console ? machine_console_idle : max;
        if (id >= 1 && (int64_t) id <= k->connected_keyboard)
                kbd = machine_kbd_idle;
        else
                kbd = console >= 0 ? console : max;
        *ret_kbd_idle = kbd;
        *ret_console_idle = console;
}

double agent_load_decay(double avg, double mean, double dt, double tau) {
        if (dt <= 0)
                return avg;
        if (tau <= 0)
                return mean;
        double e = exp(-dt / tau);
        return avg * e + mean * (1 - e);
}
