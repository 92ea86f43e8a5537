/* SPDX-License-Identifier: Apache-2.0 */
/*
 * names.c — what names the machine in its slot ads: the agent's name
 * (STARTD_NAME, composed as HTCondor composes a daemon's name), from which
 * the slots are slotN@name, and UID_DOMAIN and FILESYSTEM_DOMAIN
 * (UidDomain, FileSystemDomain).
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "slots-internal.h"

/* A name that goes into slot names and ads as it is: printable, no blanks,
 * quotes or backslashes (the central manager refuses those in a Machine). */
static bool printable_name(const char *s) {
        for (; *s; s++)
                if ((unsigned char) *s <= ' ' || *s == '"' || *s == '\\' || (unsigned char) *s == 0x7f)
                        return false;
        return true;
}

/* The expanded, trimmed knob into buf (def when undefined or empty). */
static int knob_string(const Config *cfg, const char *knob, const AgentMachine *m, const char *def, char *buf,
                       size_t len, ConfigError *err) {
        _cleanup_free_ char *v = NULL;
        int r;

        r = agent_knob_text(cfg, knob, m, &v, err);
        if (r == -ENOENT) {
                snprintf(buf, len, "%s", def);
                return 0;
        }
        if (r < 0)
                return r;
        if (strlen(v) >= len)
                return agent_slots_error(err, cfg, knob, -EINVAL, "%s = '%.64s...' is longer than %zu characters",
                                         knob, v, len - 1);
        snprintf(buf, len, "%s", v);
        return 0;
}

/* Whether name is host, or its first label (HTCondor resolves a name
 * without '@' and compares it with the machine's full name). */
static bool is_hostname(const char *name, const char *host) {
        size_t n = strlen(name);

        if (strcasecmp(name, host) == 0)
                return true;
        return !strchr(name, '.') && strncasecmp(name, host, n) == 0 && host[n] == '.';
}

/* HTCondor's daemon name (build_valid_daemon_name): STARTD_NAME with an
 * '@' as it is; the hostname itself (or its first label) as the hostname;
 * any other name "name@hostname". Undefined: the hostname. */
static int configure_name(const Config *cfg, AgentMachine *m, ConfigError *err) {
        _cleanup_free_ char *collector = NULL;
        char given[AGENT_MAX_NAME + 1];
        const char *at;
        int r;

        r = knob_string(cfg, "STARTD_NAME", m, "", given, sizeof(given), err);
        if (r < 0)
                return r;
        if (!given[0] || is_hostname(given, m->hostname)) {
                snprintf(m->name, sizeof(m->name), "%s", m->hostname);
                return 0;
        }
        if (!printable_name(given))
                return agent_slots_error(err, cfg, "STARTD_NAME", -EINVAL,
                                         "STARTD_NAME = '%s' has a blank, a quote or a backslash", given);
        at = strrchr(given, '@');
        if (!at) {
                /* A slot's Name ("slot4096_1000000@" + this) stays under the
                 * central manager's 255 characters. */
                if (strlen(given) + 1 + strlen(m->hostname) > AGENT_MAX_NAME)
                        return agent_slots_error(err, cfg, "STARTD_NAME", -EINVAL,
                                                 "STARTD_NAME = '%s' with '@%s' is longer than %d characters", given,
                                                 m->hostname, AGENT_MAX_NAME);
                size_t g = strlen(given), h = strlen(m->hostname);

                memcpy(m->name, given, g);
                m->name[g] = '@';
                memcpy(m->name + g + 1, m->hostname, h + 1);
                return 0;
        }
        if (at == given || !at[1])
                return agent_slots_error(err, cfg, "STARTD_NAME", -EINVAL,
                                         "STARTD_NAME = '%s' has nothing %s its '@'", given,
                                         at == given ? "before" : "after");
        /* The central manager takes an agent's slots by the machine after
         * their name's last '@' (an agent speaks for its own machine only). */
        r = config_get(cfg, "COLLECTOR_HOST", &collector, err);
        if (r < 0 && r != -ENOENT)
                return r;
        if (collector && collector[strspn(collector, " \t")] && strcasecmp(at + 1, m->hostname) != 0)
                return agent_slots_error(err, cfg, "STARTD_NAME", -EINVAL,
                                         "STARTD_NAME = '%s' names machine '%s', but this is %s: the central "
                                         "manager takes the slots of an agent's own machine only (without an '@', "
                                         "'@%s' is added)", given, at + 1, m->hostname, m->hostname);
        snprintf(m->name, sizeof(m->name), "%s", given);
        return 0;
}

static int configure_domains(const Config *cfg, AgentMachine *m, ConfigError *err) {
        static const struct { const char *knob; size_t offset; } domains[] = {
                { "UID_DOMAIN", offsetof(AgentMachine, uid_domain) },
                { "FILESYSTEM_DOMAIN", offsetof(AgentMachine, filesystem_domain) },
        };

        for (size_t i = 0; i < sizeof(domains) / sizeof(domains[0]); i++) {
                char *buf = (char *) m + domains[i].offset;
                int r = knob_string(cfg, domains[i].knob, m, m->hostname, buf, sizeof(m->uid_domain), err);

                if (r < 0)
                        return r;
                if (!printable_name(buf))
                        return agent_slots_error(err, cfg, domains[i].knob, -EINVAL,
                                                 "%s = '%s' has a blank, a quote or a backslash", domains[i].knob,
                                                 buf);
        }
        return 0;
}

int agent_machine_names(const Config *cfg, AgentMachine *m, ConfigError *err) {
        int r = configure_name(cfg, m, err);
        return r < 0 ? r : configure_domains(cfg, m, err);
}
