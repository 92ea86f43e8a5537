/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz-cron — libFuzzer target for what a startd cron run writes
 * (agent/cron.h): agent_cron_parser_feed() in pieces of the input's own
 * choosing, agent_cron_parser_finish(), the store and the merge of every
 * ad into two slot ads, then the merge after the job's ads are dropped.
 *
 * Input: the first byte chooses the piece size (1 + byte % 64) and whether
 * the job has a prefix; the rest is the output.
 *
 * Checks, each an abort() when broken:
 *
 *   - at most AGENT_CRON_MAX_ATTRS attributes are taken, and no more
 *     output than AGENT_CRON_MAX_OUTPUT is read (truncated past it);
 *   - no ad carries a protected attribute, and the slot ads' Name, SlotID,
 *     Cpus and State are what they were after every merge;
 *   - once the job's ads are dropped, a merge leaves the slot ads as they
 *     were before any (the same number of attributes).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "agent/cron.h"

typedef struct Ctx {
        AgentCronStore *st;
        size_t ads;
} Ctx;

static void on_ad(void *userdata, AgentCronAd *ad) {
        Ctx *c = userdata;
        ClassAdIter it = classad_iter(ad->attrs);
        const char *name;
        while (classad_iter_next(&it, &name, NULL))
                if (agent_cron_protected(name))
                        abort();
        c->ads++;
        if (agent_cron_store_put(c->st, 0, ad, NULL) < 0)
                abort();
}

static ClassAd *slot(int id) {
        ClassAd *ad = NULL;
        if (classad_new(&ad) < 0)
                abort();
        classad_set_string(ad, "Name", id == 1 ? "slot1@h" : "slot2@h");
        classad_set_int(ad, "SlotID", id);
        classad_set_int(ad, "SlotTypeID", 1);
        classad_set_int(ad, "Cpus", 2);
        classad_set_string(ad, "State", "Unclaimed");
        classad_set_string(ad, "Overridable", "default");
        return ad;
}

static void check_slot(const ClassAd *ad, int id) {
        int64_t v = 0;
        char *s = NULL;
        if (classad_eval_int(ad, "SlotID", CA_MODE_OLD, &v) < 0 || v != id)
                abort();
        if (classad_eval_int(ad, "Cpus", CA_MODE_OLD, &v) < 0 || v != 2)
                abort();
        if (classad_eval_string(ad, "State", CA_MODE_OLD, &s) < 0 || strcmp(s, "Unclaimed"))
                abort();
        free(s);
        s = NULL;
        if (classad_eval_string(ad, "Name", CA_MODE_OLD, &s) < 0 || strncmp(s, "slot", 4))
                abort();
        free(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        if (size < 1)
                return 0;
        size_t piece = 1 + data[0] % 64;
        const char *prefix = data[0] & 0x80 ? "p_" : "";
        const char *out = (const char *) data + 1;
        size_t n = size - 1;

        Ctx c = { 0 };
        if (agent_cron_store_new(&c.st) < 0)
                abort();
        AgentCronParser *p = NULL;
        if (agent_cron_parser_new(prefix, 1, on_ad, &c, &p) < 0)
                abort();
        for (size_t off = 0; off < n; off += piece) {
                size_t k = n - off < piece ? n - off : piece;
                int r = agent_cron_parser_feed(p, out + off, k);
                if (r < 0 && r != -E2BIG)
                        abort();
        }
        if (agent_cron_parser_finish(p) < 0)
                abort();
        const AgentCronParseStats *st = agent_cron_parser_stats(p);
        if (st->attrs > AGENT_CRON_MAX_ATTRS || (n > AGENT_CRON_MAX_OUTPUT) != st->truncated)
                abort();
        agent_cron_parser_free(p);

        ClassAd *s1 = slot(1), *s2 = slot(2);
        size_t n1 = classad_size(s1), n2 = classad_size(s2);
        AgentCronMerged *m1 = NULL, *m2 = NULL;
        static const char *const over[] = { "Overridable", NULL };
        if (agent_cron_merge(c.st, NULL, s1, over, &m1) < 0 || agent_cron_merge(c.st, NULL, s2, over, &m2) < 0)
                abort();
        check_slot(s1, 1);
        check_slot(s2, 2);
        agent_cron_store_drop(c.st, 0);
        if (agent_cron_merge(c.st, NULL, s1, over, &m1) < 0 || agent_cron_merge(c.st, NULL, s2, over, &m2) < 0)
                abort();
        if (classad_size(s1) != n1 || classad_size(s2) != n2)
                abort();
        char *v = NULL;
        if (classad_eval_string(s1, "Overridable", CA_MODE_OLD, &v) < 0 || strcmp(v, "default"))
                abort();
        free(v);
        agent_cron_merged_free(m1);
        agent_cron_merged_free(m2);
        classad_free(s1);
        classad_free(s2);
        agent_cron_store_free(c.st);
        return 0;
}
