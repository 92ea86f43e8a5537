/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
/*
 * authz.h — who may do what: HTCondor's authorization lists (ALLOW_<level>
 * and DENY_<level>), read with HTCondor's syntax and decided with its
 * rules, against a peer given as its authenticated name, its host name and
 * its address. Pure: text in, decisions out; no DNS, no socket, no clock,
 * nothing logged (the reasons go to the caller, who logs them).
 *
 * Where the rules come from. HTCondor's manual, docs/admin-manual/
 * security.rst: "Access Level Descriptions", "Authorization", "Host-Based
 * Security in HTCondor"; where the manual is silent or says two things,
 * its code decides (htcondor/htcondor at 7491a145f6):
 * src/condor_io/condor_ipverify.cpp (IpVerify::Init, Verify, split_entry),
 * src/condor_utils/condor_perms.cpp (the two hierarchies),
 * src/condor_io/condor_secman.cpp (SecMan::getSecSetting: which knob
 * applies), src/condor_utils/condor_netaddr.cpp (from_net_string),
 * src/condor_utils/internet.cpp (is_ipv4_addr_implementation),
 * src/condor_utils/stl_string_utils.cpp (matches_withwildcard_impl) and
 * src/condor_utils/param_info.in (the built-in defaults).
 *
 * ---- entries ----
 *
 * A list is entries separated by commas and/or white space. An entry is
 *
 *   user@domain/host    that user from that host
 *   user@domain         that user from anywhere (the host part "*")
 *   host                anyone from that host (the user part "*")
 *   *                   anyone from anywhere
 *
 * and the user part is a pattern: "*", "*@cs.wisc.edu", "condor@*",
 * "alice@example.org". The host part is one of
 *
 *   *                       any host, any address, no address
 *   bird.cs.wisc.edu        a host name; '*' wildcards: *.cs.wisc.edu, sol*.cs.wisc.edu
 *   192.0.2.7, 2001:db8::1  an address
 *   192.168.*, 192.168      an IPv4 network of its first 1 to 3 numbers (HTCondor reads
 *                           "192.168.1*" as 192.168.1.*, and a number list without '*' alike)
 *   2001:db8:*              an IPv6 network of the groups before the '*' (16 bits each)
 *   10.0.0.0/8, 2001:db8::/32, 128.105.0.0/255.255.0.0
 *                           a network: CIDR, or an IPv4 dotted netmask
 *   {:local_ips:}           an address of this machine (the caller says which peers are)
 *
 * One slash splits user from host, except that "10.0.0.0/8" (an address
 * before the slash and no '@') is a network; with two slashes the first
 * splits ("alice@example.org/10.0.0.0/8"). Names and users compare without
 * regard to ASCII case (HTCondor's "anycase"). A host name entry matches
 * the peer's host NAME, an address or network entry its ADDRESS; an
 * IPv4-mapped IPv6 address (::ffff:a.b.c.d), peer's or entry's, is its
 * IPv4 address. An unauthenticated peer is "unauthenticated@unmapped", as
 * in HTCondor: "*" and "*@*" match it, "*@cs.wisc.edu" does not.
 * Macros ($(FULL_HOSTNAME), ...) are the configuration's; the text here
 * is expanded already.
 *
 * Bounds: at most GLEAN_AUTHZ_MAX_ENTRIES entries a list and
 * GLEAN_AUTHZ_MAX_ENTRY bytes an entry, else -E2BIG. A '*' match is
 * linear: the pieces between the '*'s are found left to right, each at its
 * first place (memmem), never retried; a check costs O(entries × (entry +
 * name)) at worst. A peer name longer than GLEAN_AUTHZ_MAX_NAME bytes is
 * refused outright (it could otherwise slip past a DENY entry unmatched).
 *
 * ---- levels, and which list applies ----
 *
 * READ, WRITE, NEGOTIATOR, ADMINISTRATOR, CONFIG, DAEMON, CLIENT,
 * ADVERTISE_STARTD, ADVERTISE_SCHEDD, ADVERTISE_MASTER, and ALLOW (open to
 * everyone, never checked). For a level L the ALLOW list is the first set
 * of ALLOW_L_<SUBSYS> (the subsystem given to glean_authz_new), ALLOW_L,
 * then the same for the level L falls back to: ADVERTISE_* to DAEMON, every
 * other level (DAEMON too) to DEFAULT (ALLOW_DEFAULT); with
 * glean_authz_set_legacy() (HTCondor's LEGACY_ALLOW_SEMANTICS, which
 * "use SECURITY:HOST_BASED" sets) DAEMON falls back to WRITE, then DEFAULT.
 * The DENY list is found the same way, on its own. ALLOW_CLIENT unset is
 * "*" (param_info.in's default; ALLOW_DEFAULT never reaches it).
 *
 * ---- the decision for level L ----
 *
 * 1. No ALLOW list applies and L is neither READ nor WRITE: nobody (the
 *    manual: "If macros are omitted, the default behavior is to deny
 *    authorization for all users", and of CONFIG "no ALLOW means allow
 *    no one").
 * 2. An entry of the DENY list matches: denied. DENY wins over ALLOW, and
 *    over every level that implies L.
 * 3. An entry of the ALLOW list matches: allowed.
 * 4. Else L is allowed when a level that directly implies it is (each
 *    decided by these same rules, its own DENY list included):
 *      WRITE by ADMINISTRATOR and DAEMON;
 *      READ by WRITE, NEGOTIATOR, CONFIG and the three ADVERTISE_* levels.
 *    (So ALLOW_ADMINISTRATOR's users may WRITE and READ, ALLOW_DAEMON's
 *    too, with ALLOW_WRITE and ALLOW_READ unset or not listing them.)
 * 5. Else denied.
 *
 * An EMPTY list (text "" or only separators) is a list that matches
 * nobody: ALLOW_WRITE = "" lets nobody write but those a higher level
 * lets, and ALLOW_ADVERTISE_STARTD = "" does not fall back to ALLOW_DAEMON.
 *
 * ---- where glean differs from HTCondor ----
 *
 * - An empty value. HTCondor's param() reads "ALLOW_X =" as undefined
 *   (condor_config.cpp, param_ctx), so it falls back as an unset list
 *   does; here it is a list of no one. A caller that wants HTCondor's
 *   reading passes NULL (unset) for an empty value. Always the stricter.
 * - Host names are not resolved. HTCondor looks every host name entry up
 *   in DNS when it reads the list and also admits the addresses found;
 *   here a name matches the peer's name only (the caller's: from its
 *   machine token, or reverse DNS it trusts), an address only an address.
 * - More than one '*' in a pattern is a wildcard each ("*a*b"); HTCondor
 *   takes the first '*' and a last one and reads any other as a literal
 *   '*' (which no name holds). Every pattern HTCondor documents
 *   ("*.cs.wisc.edu", "sol*.cs.wisc.edu", "*@cs.wisc.edu") means the same.
 * - Refused with a reason where HTCondor warns, or accepts an entry that
 *   can match nothing or more than written: a netmask longer than the
 *   address (HTCondor reads /33 as /32), nothing after the '/' (HTCondor:
 *   /0, every address), a '*' inside an IPv4 address (HTCondor: a host
 *   name pattern), a user part without '@' or '*' ("condor/host":
 *   HTCondor's "strange entry", which no user matches), a Sinful string
 *   ("<10.0.0.1:9618>": HTCondor warns and keeps it), netgroups ("+group":
 *   not supported), any character that cannot be in a host name.
 * - The manual's host-based section also says that no ALLOW list means
 *   everyone, and that a specific entry beats a wildcard one across ALLOW
 *   and DENY; HTCondor's code does neither (rule 1, rule 2), nor does glean.
 * - Not here: HTCondor's condor@ / condor_pool@ equivalence
 *   (USE_POOL_USERNAME_EQUIVALENT), holes punched for a claim's duration,
 *   the "SUBSYS.ALLOW_X" spelling (the configuration's business), and the
 *   hard rule that *@unmapped may not manage jobs (the caller's).
 *
 * Subsystem knobs. "ALLOW_WRITE_COLLECTOR" applies when this GleanAuthz
 * was made for the subsystem "COLLECTOR" and then comes first; made for
 * another, glean_authz_set() ignores it and says so (a daemon that plays
 * several HTCondor subsystems makes one GleanAuthz for each, all given the
 * same knobs, and warns about a knob that none took). The OWNER level,
 * which HTCondor no longer has, is ignored the same way.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#define GLEAN_AUTHZ_MAX_ENTRIES 1024 /* entries in one list */
#define GLEAN_AUTHZ_MAX_ENTRY 1024   /* bytes in one entry */
#define GLEAN_AUTHZ_MAX_NAME 1024    /* bytes in a peer's user or host name */

/* HTCondor's order (condor_perms.h), which glean_authz_check()'s reasons
 * follow when several levels imply one. */
typedef enum GleanAuthzLevel {
        GLEAN_AUTHZ_ALLOW, /* open to everyone */
        GLEAN_AUTHZ_READ,
        GLEAN_AUTHZ_WRITE,
        GLEAN_AUTHZ_NEGOTIATOR,
        GLEAN_AUTHZ_ADMINISTRATOR,
        GLEAN_AUTHZ_CONFIG,
        GLEAN_AUTHZ_DAEMON,
        GLEAN_AUTHZ_CLIENT,
        GLEAN_AUTHZ_ADVERTISE_STARTD,
        GLEAN_AUTHZ_ADVERTISE_SCHEDD,
        GLEAN_AUTHZ_ADVERTISE_MASTER,
        GLEAN_AUTHZ_LEVELS
} GleanAuthzLevel;

/* "WRITE" (any case) -> GLEAN_AUTHZ_WRITE; -EINVAL for any other name. */
int glean_authz_level_from_name(const char *name);
/* "WRITE"; NULL when level is not one. */
const char *glean_authz_level_name(GleanAuthzLevel level);

/* Who is asking. The strings are borrowed for the call. */
typedef struct GleanAuthzPeer {
        const char *user;  /* "alice@example.org"; NULL, "" or "unauthenticated": not authenticated */
        const char *host;  /* its host name, NULL when none is known */
        int family;        /* AF_INET, AF_INET6, or AF_UNSPEC (0): no address */
        uint8_t addr[16];  /* network byte order; AF_INET uses the first 4 */
        bool local;        /* its address is this machine's: {:local_ips:} matches */
} GleanAuthzPeer;

/* The address of sa into peer: AF_INET, AF_INET6 (an IPv4-mapped one as
 * AF_INET); AF_UNIX is no address and local. -EAFNOSUPPORT for other
 * families, -EINVAL when len is too short. peer's other fields stay. */
int glean_authz_peer_sockaddr(GleanAuthzPeer *peer, const struct sockaddr *sa, socklen_t len);
/* The same from "192.0.2.7", "2001:db8::1", "[2001:db8::1]",
 * "::ffff:192.0.2.7"; -EINVAL for anything else. */
int glean_authz_peer_address(GleanAuthzPeer *peer, const char *text);

typedef struct GleanAuthz GleanAuthz;

/* A policy with no list set (every level refused to everyone, but ALLOW,
 * and CLIENT whose default is "*"), for the HTCondor subsystem subsystem
 * ("COLLECTOR", "NEGOTIATOR", any case; NULL: none, and every
 * ALLOW_X_<SUBSYS> knob is ignored). -ENOMEM; -EINVAL for a subsystem name
 * that is not 1 to 48 letters, digits and '_'. */
int glean_authz_new(const char *subsystem, GleanAuthz **ret);
void glean_authz_free(GleanAuthz *a); /* accepts NULL */

/* HTCondor's LEGACY_ALLOW_SEMANTICS: DAEMON falls back to WRITE's lists
 * (HTCondor 8.8 and "use SECURITY:HOST_BASED"). Off by default. */
void glean_authz_set_legacy(GleanAuthz *a, bool legacy);

/* What an authorization knob's name says, the one reading of it for the
 * central manager and the agent: ALLOW_ or DENY_ (any case), a level (the
 * longest that fits: ADVERTISE_STARTD before a subsystem), DEFAULT or
 * OWNER, and an optional _SUBSYSTEM ([A-Za-z0-9_], at most 48). 0 with
 * *ret_level a GleanAuthzLevel, GLEAN_AUTHZ_KNOB_DEFAULT or
 * GLEAN_AUTHZ_KNOB_OWNER, *ret_deny, *ret_subsystem (into name; NULL:
 * none); -EINVAL for any other name (ALLOW_SCRIPTS_TO_RUN_AS_EXECUTABLES). */
#define GLEAN_AUTHZ_KNOB_DEFAULT GLEAN_AUTHZ_LEVELS
#define GLEAN_AUTHZ_KNOB_OWNER (-2) /* a level HTCondor no longer reads */
int glean_authz_knob(const char *name, int *ret_level, bool *ret_deny, const char **ret_subsystem);

/* Sets the knob ("ALLOW_WRITE", "DENY_ADVERTISE_STARTD", "allow_write",
 * "ALLOW_WRITE_COLLECTOR") to the list text, replacing what it was; text
 * NULL unsets it. source ("/etc/glean/glean.conf:12", may be NULL) is kept
 * for the reasons and starts every error's why:
 *   /etc/glean/glean.conf:12: ALLOW_WRITE: "10.0.0.0/33": the netmask is longer than 32 bits
 * Returns 0 set; GLEAN_AUTHZ_IGNORED (> 0) a knob for another subsystem, or
 * of the OWNER level, why saying so (nothing changed); -EINVAL not an
 * authorization knob; -EBADMSG an entry that is not one (its text and the
 * reason in why); -E2BIG over the bounds; -ENOMEM. On any error nothing
 * changed. */
#define GLEAN_AUTHZ_IGNORED 1
int glean_authz_set(GleanAuthz *a, const char *knob, const char *text, const char *source, char *why,
                    size_t whylen);

/* Whether peer has level: 0 allowed, -EACCES denied, each with the rule
 * that decided it in why (when whylen > 0), e.g.
 *   denied by DENY_WRITE entry "badhost.example.org" of /etc/glean/glean.conf:14
 *   not in ALLOW_WRITE (3 entries) of /etc/glean/glean.conf:12, and neither ADMINISTRATOR nor ...
 *   allowed by ALLOW_ADMINISTRATOR entry "condor@*" of ... (ADMINISTRATOR implies WRITE)
 * -EINVAL for a level that is not one (or a NULL peer). Thread-safe: a and
 * peer are only read. */
int glean_authz_check(const GleanAuthz *a, GleanAuthzLevel level, const GleanAuthzPeer *peer, char *why,
                      size_t whylen);
