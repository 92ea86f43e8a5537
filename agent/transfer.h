/* SPDX-License-Identifier: Apache-2.0 */
/*
 * transfer.h — the agent's side of file transfer (docs/transfer.md) that
 * can be tested without sockets: the grants a submit agent keeps (what
 * the central manager's TransferGrant says, until its TransferRevoke),
 * the reading of a dialler's cleartext preamble a byte count at a time,
 * and the turning of a job spec into one that runs in its sandbox.
 *
 * Conventions: >= 0 on success, -errno on failure; outputs last, named
 * ret_*, set only on success.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "classad.h"
#include "common/secure.h"
#include "exec.h"

#define AGENT_GRANTS_MAX 100000u       /* grants one agent keeps at once */
#define AGENT_GRANT_CONNS_MAX 2u       /* connections one grant may have at once */
#define AGENT_PREAMBLE_MAX 64u         /* bytes of a preamble frame's payload */

/* ---- the grants ---- */

typedef struct AgentGrant {
        char id[33];            /* TransferId: 32 hex digits */
        GleanPoolKey key;       /* TransferKey */
        ClassAd *job;           /* the job's ad */
        unsigned conns;         /* sessions running on it now */
} AgentGrant;

typedef struct AgentGrants AgentGrants;

int agent_grants_new(size_t max, AgentGrants **ret); /* max 0: AGENT_GRANTS_MAX */
void agent_grants_free(AgentGrants *g);              /* accepts NULL; keys wiped */
size_t agent_grants_count(const AgentGrants *g);

/* The grant of a TransferGrant message (TransferId, TransferKey, JobAd):
 * a grant of the same id replaces the earlier one (the manager re-sends
 * its grants to an agent that comes back; sessions running keep their
 * count). -EINVAL with why for an id that is not 32 hex digits or a key
 * that is not 64 (glean_pool_key_parse), -ENOSPC at the bound, -ENOMEM. */
int agent_grants_add(AgentGrants *g, const ClassAd *msg, char *why, size_t whylen);
/* TransferRevoke: 0, or -ENOENT when there was none. */
int agent_grants_revoke(AgentGrants *g, const char *id);
/* The grant of id, or NULL (unknown, revoked). Valid until the next add
 * or revoke. */
AgentGrant *agent_grants_find(AgentGrants *g, const char *id);

/* A session may start on id: its count goes up, -ENOENT unknown,
 * -EBUSY when it has AGENT_GRANT_CONNS_MAX already. */
int agent_grants_hold(AgentGrants *g, const char *id);
/* The session is over (the grant may be gone meanwhile: nothing then). */
void agent_grants_unhold(AgentGrants *g, const char *id);

/* ---- the preamble (a frame: 4-byte big-endian length, payload) ---- */

typedef struct AgentPreamble {
        unsigned char buf[4 + AGENT_PREAMBLE_MAX];
        size_t have;            /* bytes in buf */
        size_t need;            /* the whole frame's length once its header is in, else 4 */
} AgentPreamble;

void agent_preamble_init(AgentPreamble *p);
/* How many bytes to read next: exactly these, so that nothing of the
 * handshake that follows is taken (0 once complete). */
size_t agent_preamble_want(const AgentPreamble *p);
/* n bytes read (n <= want): 1 the frame is complete, 0 more needed,
 * -EMSGSIZE for a frame longer than AGENT_PREAMBLE_MAX or empty. */
int agent_preamble_feed(AgentPreamble *p, const void *data, size_t n);
/* The complete frame's payload. */
const char *agent_preamble_payload(const AgentPreamble *p, size_t *ret_len);

/* ---- the sandbox ---- */

/* The spec of a run that transfers: it runs in sandbox (spec->scratch,
 * which the agent makes before the input arrives and removes after the
 * output went: spec->scratch_kept), Iwd = the sandbox; the program is
 * the sandbox's copy (its Cmd's last component) when TransferExecutable
 * (default true), else Cmd as it was; In is its last component inside
 * the sandbox (when TransferIn, default true), Out and Err are the
 * sandbox's _condor_stdout and _condor_stderr, HTCondor's names (when
 * TransferOut/TransferErr, default true); otherwise they stay as they
 * were. -EINVAL with why for a name that has no last component. */
int agent_jobspec_sandbox(AgentJobSpec *spec, const ClassAd *job, char *why, size_t whylen);
