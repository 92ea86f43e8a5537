/* SPDX-License-Identifier: Apache-2.0 */
/*
 * msg.c — messages: the table of commands and their attributes, parsing
 * and validation against it, building messages and replies, nested ads,
 * and sending/receiving a message as one frame.
 */
#define _GNU_SOURCE

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <string.h>
#include <strings.h>

#include "common-internal.h"
#include "proto.h"

/* ---- the table ---- */

typedef enum AttrType {
        T_STRING,
        T_INT,
        T_REAL, /* an integer is accepted */
        T_BOOL,
        T_AD,
        T_AD_LIST,
} AttrType;

enum {
        A_REQUIRED = 1 << 0, /* (when if_bool is set: only when that attribute is if_value) */
        A_NONEMPTY = 1 << 1, /* a string that must not be "" */
        A_RANGE = 1 << 2,    /* an integer within [min, max], a real >= min */
};

typedef struct AttrSpec {
        const char *name;
        AttrType type;
        unsigned flags;
        const char *if_bool;
        bool if_value;
        int64_t min, max;
        const char *const *allowed; /* NULL-terminated list of the values a string may take */
} AttrSpec;

typedef struct CommandSpec {
        const char *name;
        const AttrSpec *attrs; /* ends with a NULL name */
} CommandSpec;

#define REQ_STRING(n) { .name = (n), .type = T_STRING, .flags = A_REQUIRED | A_NONEMPTY }
#define OPT_STRING(n) { .name = (n), .type = T_STRING }
#define OPT_NAME(n) { .name = (n), .type = T_STRING, .flags = A_NONEMPTY }
#define REQ_BOOL(n) { .name = (n), .type = T_BOOL, .flags = A_REQUIRED }
#define OPT_BOOL(n) { .name = (n), .type = T_BOOL }
#define OPT_INT(n) { .name = (n), .type = T_INT }
#define OPT_REAL(n) { .name = (n), .type = T_REAL }
#define OPT_COUNT(n) { .name = (n), .type = T_INT, .flags = A_RANGE, .min = 0, .max = INT64_MAX }
#define OPT_SECONDS(n) { .name = (n), .type = T_REAL, .flags = A_RANGE, .min = 0 }
#define REQ_AD(n) { .name = (n), .type = T_AD, .flags = A_REQUIRED }
#define END { .name = NULL }

static const char *const peers[] = { "glean", "glean-agent", "glean-negotiator", NULL };
static const char *const drain_hows[] = { "graceful", "quick", "fast", NULL };
static const char *const job_actions[] = { "Remove", "Hold", "Release", "SetPrio", "Vacate", NULL };
static const char *const userprio_actions[] = { "list", "setprio", "setfactor", "resetusage", "delete", NULL };

static const CommandSpec commands[GLEAN_CMD__MAX] = {
        [GLEAN_CMD_HELLO] = { "Hello", (const AttrSpec[]){
                { .name = "ProtocolVersion", .type = T_INT, .flags = A_REQUIRED },
                { .name = "Peer", .type = T_STRING, .flags = A_REQUIRED | A_NONEMPTY, .allowed = peers },
                /* an agent's: where it serves its jobs' files (docs/transfer.md) */
                { .name = "TransferPort", .type = T_INT, .flags = A_RANGE, .min = 1, .max = 65535 },
                END } },
        [GLEAN_CMD_REPLY] = { "Reply", (const AttrSpec[]){
                REQ_BOOL("Ok"),
                { .name = "Reason", .type = T_STRING, .flags = A_REQUIRED | A_NONEMPTY,
                  .if_bool = "Ok", .if_value = false },
                { .name = "Slots", .type = T_AD_LIST },
                OPT_NAME("Slot"),
                OPT_NAME("ClaimId"),
                OPT_COUNT("LeaseDuration"),
                OPT_NAME("Errno"),
                { .name = "Ads", .type = T_AD_LIST },
                { .name = "Ad", .type = T_AD },
                { .name = "Results", .type = T_AD_LIST },
                OPT_COUNT("Count"),
                OPT_BOOL("More"),
                OPT_INT("ClusterId"),
                OPT_COUNT("NumProcs"),
                END } },
        [GLEAN_CMD_STATUS] = { "Status", (const AttrSpec[]){ OPT_NAME("Slot"), END } },
        [GLEAN_CMD_SLOT_UPDATE] = { "SlotUpdate", (const AttrSpec[]){
                REQ_AD("SlotAd"), OPT_NAME("ClaimId"), END } },
        [GLEAN_CMD_MATCH] = { "Match", (const AttrSpec[]){ REQ_STRING("Slot"), REQ_STRING("ClaimId"), END } },
        [GLEAN_CMD_REQUEST_CLAIM] = { "RequestClaim", (const AttrSpec[]){
                REQ_STRING("Slot"), REQ_STRING("ClaimId"), REQ_AD("JobAd"), OPT_REAL("Rank"),
                OPT_BOOL("ByPriority"), END } },
        [GLEAN_CMD_ACTIVATE_CLAIM] = { "ActivateClaim", (const AttrSpec[]){
                REQ_STRING("ClaimId"), REQ_AD("JobAd"),
                /* [ TransferId; TransferKey; Address ]: where the job's files are */
                { .name = "Transfer", .type = T_AD }, END } },
        [GLEAN_CMD_KEEP_ALIVE] = { "KeepAlive", (const AttrSpec[]){ REQ_STRING("ClaimId"), END } },
        [GLEAN_CMD_DEACTIVATE] = { "Deactivate", (const AttrSpec[]){
                REQ_STRING("ClaimId"), OPT_BOOL("Graceful"), END } },
        [GLEAN_CMD_RELEASE] = { "Release", (const AttrSpec[]){ REQ_STRING("ClaimId"), END } },
        [GLEAN_CMD_VACATE] = { "Vacate", (const AttrSpec[]){
                OPT_NAME("Slot"), OPT_BOOL("Fast"), OPT_NAME("Machine"), END } },
        [GLEAN_CMD_DRAIN] = { "Drain", (const AttrSpec[]){
                { .name = "How", .type = T_STRING, .allowed = drain_hows },
                OPT_STRING("Reason"),
                OPT_NAME("Machine"),
                END } },
        [GLEAN_CMD_CANCEL_DRAIN] = { "CancelDrain", (const AttrSpec[]){ OPT_NAME("Machine"), END } },
        [GLEAN_CMD_SHUTDOWN] = { "Shutdown", (const AttrSpec[]){ OPT_BOOL("Fast"), OPT_BOOL("Peaceful"), END } },
        [GLEAN_CMD_JOB_EXIT] = { "JobExit", (const AttrSpec[]){
                REQ_STRING("ClaimId"),
                REQ_BOOL("ExitBySignal"),
                { .name = "ExitCode", .type = T_INT, .flags = A_REQUIRED | A_RANGE, .min = 0, .max = 255,
                  .if_bool = "ExitBySignal", .if_value = false },
                { .name = "ExitSignal", .type = T_INT, .flags = A_REQUIRED | A_RANGE, .min = 1, .max = 64,
                  .if_bool = "ExitBySignal", .if_value = true },
                OPT_BOOL("CoreDumped"),
                OPT_SECONDS("RemoteUserCpu"),
                OPT_SECONDS("RemoteSysCpu"),
                OPT_SECONDS("RemoteWallClockTime"),
                OPT_COUNT("ResidentSetSize"),
                OPT_COUNT("ImageSize"),
                OPT_STRING("Reason"),
                OPT_COUNT("ClusterId"),
                OPT_COUNT("ProcId"),
                OPT_COUNT("NumJobStarts"),
                /* a run whose files could not travel: held (12 output, 13 input) */
                { .name = "HoldReasonCode", .type = T_INT, .flags = A_RANGE, .min = 1, .max = 64 },
                OPT_INT("HoldReasonSubCode"),
                OPT_COUNT("BytesSent"),
                OPT_COUNT("BytesRecvd"),
                END } },
        [GLEAN_CMD_EVENT] = { "Event", (const AttrSpec[]){
                REQ_STRING("Slot"), REQ_STRING("State"), REQ_STRING("Activity"), OPT_INT("Transition"), END } },
        [GLEAN_CMD_SUBMIT] = { "Submit", (const AttrSpec[]){
                REQ_AD("Cluster"),
                { .name = "Procs", .type = T_AD_LIST, .flags = A_REQUIRED },
                OPT_BOOL("More"),
                END } },
        [GLEAN_CMD_QUERY] = { "Query", (const AttrSpec[]){
                OPT_STRING("Ids"), OPT_STRING("Constraint"), OPT_STRING("Attrs"), OPT_COUNT("Limit"), END } },
        [GLEAN_CMD_HISTORY] = { "History", (const AttrSpec[]){
                OPT_STRING("Ids"), OPT_STRING("Constraint"), OPT_STRING("Attrs"), OPT_COUNT("Limit"), END } },
        [GLEAN_CMD_QUERY_SLOTS] = { "QuerySlots", (const AttrSpec[]){
                OPT_STRING("Constraint"), OPT_STRING("Attrs"), OPT_COUNT("Limit"), END } },
        [GLEAN_CMD_JOB_ACTION] = { "JobAction", (const AttrSpec[]){
                { .name = "Action", .type = T_STRING, .flags = A_REQUIRED | A_NONEMPTY, .allowed = job_actions },
                OPT_STRING("Ids"), OPT_STRING("Constraint"), OPT_STRING("Reason"), OPT_INT("Prio"),
                OPT_BOOL("Fast"), END } },
        [GLEAN_CMD_USER_PRIO] = { "UserPrio", (const AttrSpec[]){
                { .name = "Action", .type = T_STRING, .allowed = userprio_actions },
                OPT_NAME("Submitter"), OPT_REAL("Value"), END } },
        [GLEAN_CMD_WAIT] = { "Wait", (const AttrSpec[]){ REQ_STRING("Id"), OPT_SECONDS("Timeout"), END } },
        [GLEAN_CMD_TRANSFER_GRANT] = { "TransferGrant", (const AttrSpec[]){
                REQ_STRING("TransferId"), REQ_STRING("TransferKey"), REQ_AD("JobAd"), OPT_NAME("ExecuteMachine"),
                END } },
        [GLEAN_CMD_TRANSFER_REVOKE] = { "TransferRevoke", (const AttrSpec[]){ REQ_STRING("TransferId"), END } },
        [GLEAN_CMD_USER_LOG_EVENT] = { "UserLogEvent", (const AttrSpec[]){
                { .name = "ClusterId", .type = T_INT, .flags = A_REQUIRED | A_RANGE, .min = 1, .max = INT64_MAX },
                { .name = "ProcId", .type = T_INT, .flags = A_REQUIRED | A_RANGE, .min = 0, .max = INT64_MAX },
                { .name = "Seq", .type = T_INT, .flags = A_REQUIRED | A_RANGE, .min = 0, .max = INT64_MAX },
                REQ_STRING("Owner"), REQ_STRING("Path"), REQ_STRING("Text"), END } },
};

/* Every message may carry it. */
static const AttrSpec request_id_spec = OPT_INT("RequestId");

const char *glean_command_name(GleanCommand c) {
        return (unsigned) c < GLEAN_CMD__MAX ? commands[c].name : NULL;
}

int glean_command_from_name(const char *s, GleanCommand *ret) {
        for (unsigned c = 0; c < GLEAN_CMD__MAX; c++)
                if (strcasecmp(s, commands[c].name) == 0) {
                        *ret = (GleanCommand) c;
                        return 0;
                }
        return -EINVAL;
}

/* ---- validation ---- */

static const char *type_name(AttrType t) {
        switch (t) {
        case T_STRING:
                return "string";
        case T_INT:
                return "integer";
        case T_REAL:
                return "real";
        case T_BOOL:
                return "boolean";
        case T_AD:
                return "classad";
        case T_AD_LIST:
                return "list of classads";
        }
        return "?";
}

static bool type_ok(AttrType t, const CaValue *v) {
        switch (t) {
        case T_STRING:
                return v->type == CA_STRING;
        case T_INT:
                return v->type == CA_INT;
        case T_REAL:
                return v->type == CA_REAL || v->type == CA_INT;
        case T_BOOL:
                return v->type == CA_BOOL;
        case T_AD:
                return v->type == CA_AD;
        case T_AD_LIST:
                return v->type == CA_LIST;
        }
        return false;
}

/* Whether a conditionally required attribute is required in msg. */
static bool condition_holds(const ClassAd *msg, const AttrSpec *s) {
        bool b;

        if (!s->if_bool)
                return true;
        /* validated before (it comes first in the table) */
        return classad_eval_bool(msg, s->if_bool, GLEAN_CA_MODE, &b) >= 0 && b == s->if_value;
}

static int check_value(const char *cmd, const AttrSpec *s, const CaValue *v, char *why, size_t whylen) {
        switch (s->type) {
        case T_STRING:
                if ((s->flags & A_NONEMPTY) && v->u.s->len == 0)
                        return glean_why(-EBADMSG, why, whylen, "%s: attribute %s is an empty string", cmd,
                                         s->name);
                if (s->allowed) {
                        char list[128] = "";
                        for (const char *const *a = s->allowed; *a; a++) {
                                if (strcmp(*a, v->u.s->s) == 0)
                                        return 0;
                                size_t used = strlen(list);
                                snprintf(list + used, sizeof(list) - used, "%s%s", used ? ", " : "", *a);
                        }
                        return glean_why(-EBADMSG, why, whylen, "%s: attribute %s is \"%.64s\", expected one of %s",
                                         cmd, s->name, v->u.s->s, list);
                }
                return 0;
        case T_INT:
                if ((s->flags & A_RANGE) && (v->u.i < s->min || v->u.i > s->max)) {
                        if (s->max == INT64_MAX)
                                return glean_why(-EBADMSG, why, whylen, "%s: attribute %s is %" PRId64
                                                 ", expected at least %" PRId64, cmd, s->name, v->u.i, s->min);
                        return glean_why(-EBADMSG, why, whylen, "%s: attribute %s is %" PRId64
                                         ", expected %" PRId64 " to %" PRId64, cmd, s->name, v->u.i, s->min, s->max);
                }
                return 0;
        case T_REAL: {
                double d = v->type == CA_INT ? (double) v->u.i : v->u.r;
                if (!isfinite(d))
                        return glean_why(-EBADMSG, why, whylen, "%s: attribute %s is not a finite number", cmd,
                                         s->name);
                if ((s->flags & A_RANGE) && d < (double) s->min)
                        return glean_why(-EBADMSG, why, whylen, "%s: attribute %s is %g, expected at least %" PRId64,
                                         cmd, s->name, d, s->min);
                return 0;
        }
        case T_AD_LIST: {
                int64_t n = ca_list_size(v);
                for (int64_t i = 0; i < n; i++) {
                        CaValue item = ca_undefined();
                        int r = ca_list_get(v, i, GLEAN_CA_MODE, &item);
                        if (r < 0)
                                return r;
                        CaType t = item.type;
                        ca_value_clear(&item);
                        if (t != CA_AD)
                                return glean_why(-EBADMSG, why, whylen,
                                                 "%s: element %" PRId64 " of attribute %s has type %s, expected classad",
                                                 cmd, i, s->name, ca_type_name(t));
                }
                return 0;
        }
        case T_BOOL:
        case T_AD:
                return 0;
        }
        return 0;
}

static int check_attr(const ClassAd *msg, const char *cmd, const AttrSpec *s, char *why, size_t whylen) {
        CaValue v = ca_undefined();
        int r;

        r = classad_eval_attr(msg, s->name, GLEAN_CA_MODE, &v);
        if (r < 0)
                return glean_why(r, why, whylen, "%s: cannot evaluate attribute %s: %s", cmd, s->name, strerror(-r));

        if (v.type == CA_UNDEFINED) {
                if (!(s->flags & A_REQUIRED) || !condition_holds(msg, s))
                        return 0; /* absent or UNDEFINED optional attribute: as if not given */
                if (!classad_has(msg, s->name)) {
                        if (s->if_bool)
                                return glean_why(-EBADMSG, why, whylen,
                                                 "%s: missing required attribute %s (%s; required when %s is %s)",
                                                 cmd, s->name, type_name(s->type), s->if_bool,
                                                 s->if_value ? "true" : "false");
                        return glean_why(-EBADMSG, why, whylen, "%s: missing required attribute %s (%s)", cmd,
                                         s->name, type_name(s->type));
                }
                return glean_why(-EBADMSG, why, whylen, "%s: attribute %s is undefined, expected %s", cmd, s->name,
                                 type_name(s->type));
        }

        if (!type_ok(s->type, &v)) {
                r = glean_why(-EBADMSG, why, whylen, "%s: attribute %s has type %s, expected %s", cmd, s->name,
                              ca_type_name(v.type), type_name(s->type));
                ca_value_clear(&v);
                return r;
        }

        r = check_value(cmd, s, &v, why, whylen);
        ca_value_clear(&v);
        return r;
}

int glean_msg_validate(const ClassAd *msg, GleanCommand *ret_cmd, char *why, size_t whylen) {
        CaValue v = ca_undefined();
        GleanCommand c;
        int r;

        r = classad_eval_attr(msg, "Command", GLEAN_CA_MODE, &v);
        if (r < 0)
                return glean_why(r, why, whylen, "cannot evaluate attribute Command: %s", strerror(-r));
        if (v.type == CA_UNDEFINED)
                return glean_why(-EBADMSG, why, whylen, "no Command attribute");
        if (v.type != CA_STRING) {
                r = glean_why(-EBADMSG, why, whylen, "attribute Command has type %s, expected string",
                              ca_type_name(v.type));
                ca_value_clear(&v);
                return r;
        }
        r = glean_command_from_name(v.u.s->s, &c);
        if (r < 0) {
                r = glean_why(-EBADMSG, why, whylen, "unknown Command \"%.64s\"", v.u.s->s);
                ca_value_clear(&v);
                return r;
        }
        ca_value_clear(&v);

        const char *name = commands[c].name;
        r = check_attr(msg, name, &request_id_spec, why, whylen);
        if (r < 0)
                return r;
        for (const AttrSpec *s = commands[c].attrs; s->name; s++) {
                r = check_attr(msg, name, s, why, whylen);
                if (r < 0)
                        return r;
        }
        if (ret_cmd)
                *ret_cmd = c;
        return 0;
}

int glean_msg_parse(const char *payload, size_t len, ClassAd **ret_ad, GleanCommand *ret_cmd, char *why,
                    size_t whylen) {
        _cleanup_classad_ ClassAd *ad = NULL;
        CaError err = {};
        GleanCommand c;
        int r;

        r = classad_parse(payload, len, GLEAN_CA_MODE, &ad, &err);
        if (r == -ENOMEM)
                return glean_why(r, why, whylen, "out of memory parsing the message");
        if (r < 0)
                return glean_why(-EBADMSG, why, whylen, "not a ClassAd: line %d, column %d: %s", err.line,
                                 err.column, err.msg);
        r = glean_msg_validate(ad, &c, why, whylen);
        if (r < 0)
                return r;
        if (ret_ad)
                *ret_ad = TAKE_PTR(ad);
        if (ret_cmd)
                *ret_cmd = c;
        return 0;
}

/* ---- building ---- */

int glean_msg_new(GleanCommand c, ClassAd **ret) {
        _cleanup_classad_ ClassAd *ad = NULL;
        int r;

        if ((unsigned) c >= GLEAN_CMD__MAX)
                return -EINVAL;
        r = classad_new(&ad);
        if (r < 0)
                return r;
        r = classad_set_string(ad, "Command", commands[c].name);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(ad);
        return 0;
}

static int set_text(ClassAd *msg, const char *name, const char *text) {
        CaError err = {};
        int r = classad_set_expr_text(msg, name, text, GLEAN_CA_MODE, &err);

        /* Our own unparser's output: parse errors would be a library bug. */
        return r == -ENOMEM ? r : r < 0 ? -EINVAL : 0;
}

int glean_msg_set_ad(ClassAd *msg, const char *name, const ClassAd *nested) {
        _cleanup_free_ char *text = NULL;

        if (!msg || !name || !nested)
                return -EINVAL;
        text = classad_unparse(nested);
        if (!text)
                return -ENOMEM;
        return set_text(msg, name, text);
}

int glean_msg_set_ad_list(ClassAd *msg, const char *name, ClassAd *const *ads, size_t n) {
        _cleanup_free_ char *text = NULL;
        size_t len = 0, cap = 64;

        if (!msg || !name || (n > 0 && !ads))
                return -EINVAL;
        text = malloc(cap);
        if (!text)
                return -ENOMEM;
        text[len++] = '{';
        for (size_t i = 0; i < n; i++) {
                _cleanup_free_ char *one = classad_unparse(ads[i]);
                if (!one)
                        return -ENOMEM;
                size_t k = strlen(one);
                if (k + 4 > cap - len) {
                        while (k + 4 > cap - len)
                                cap *= 2;
                        char *t = realloc(text, cap);
                        if (!t)
                                return -ENOMEM;
                        text = t;
                }
                text[len++] = i ? ',' : ' ';
                if (i)
                        text[len++] = ' ';
                memcpy(text + len, one, k);
                len += k;
        }
        text[len++] = ' ';
        text[len++] = '}';
        text[len] = '\0';
        return set_text(msg, name, text);
}

/* A fresh, standalone ad with the attributes of *nested (expressions kept,
 * no lexical parent: a name it lacks is undefined, not the message's). */
static int standalone_copy(const ClassAd *nested, ClassAd **ret) {
        int r = classad_copy(nested, ret);
        return r == -ENOMEM ? r : r < 0 ? -EINVAL : 0;
}

/* The value of attribute name of msg; -ENOENT when it is undefined. */
static int eval_defined(const ClassAd *msg, const char *name, CaValue *ret) {
        int r;

        r = classad_eval_attr(msg, name, GLEAN_CA_MODE, ret);
        if (r < 0)
                return r;
        return ret->type == CA_UNDEFINED ? -ENOENT : 0;
}

int glean_msg_get_ad(const ClassAd *msg, const char *name, ClassAd **ret) {
        CaValue v = ca_undefined();
        int r;

        r = eval_defined(msg, name, &v);
        if (r < 0)
                return r;
        if (v.type != CA_AD) {
                ca_value_clear(&v);
                return -EINVAL;
        }
        r = standalone_copy(v.u.ad, ret);
        ca_value_clear(&v);
        return r;
}

void glean_ad_list_free(ClassAd **ads, size_t n) {
        if (!ads)
                return;
        for (size_t i = 0; i < n; i++)
                classad_free(ads[i]);
        free(ads);
}

int glean_msg_get_ad_list(const ClassAd *msg, const char *name, ClassAd ***ret, size_t *ret_n) {
        return classad_eval_ad_list(msg, name, GLEAN_CA_MODE, ret, ret_n);
}

int glean_msg_reply(const ClassAd *request, bool ok, const char *reason, ClassAd **ret) {
        _cleanup_classad_ ClassAd *ad = NULL;
        int64_t id;
        int r;

        r = glean_msg_new(GLEAN_CMD_REPLY, &ad);
        if (r < 0)
                return r;
        if (request && classad_eval_int(request, "RequestId", GLEAN_CA_MODE, &id) >= 0) {
                r = classad_set_int(ad, "RequestId", id);
                if (r < 0)
                        return r;
        }
        r = classad_set_bool(ad, "Ok", ok);
        if (r < 0)
                return r;
        if (!ok && (!reason || !*reason))
                reason = "unspecified error";
        if (reason) {
                r = classad_set_string(ad, "Reason", reason);
                if (r < 0)
                        return r;
        }
        *ret = TAKE_PTR(ad);
        return 0;
}

int glean_msg_reply_invalid(const char *payload, size_t len, const char *reason, ClassAd **ret) {
        _cleanup_classad_ ClassAd *request = NULL;
        CaError err = {};

        if (payload && classad_parse(payload, len, GLEAN_CA_MODE, &request, &err) < 0)
                request = NULL;
        return glean_msg_reply(request, false, reason, ret);
}

/* ---- over a connection ---- */

int glean_msg_send(int fd, const ClassAd *msg, int timeout_ms) {
        _cleanup_free_ char *text = classad_unparse(msg);

        if (!text)
                return -ENOMEM;
        return glean_frame_write(fd, text, strlen(text), timeout_ms);
}

int glean_msg_recv(int fd, int timeout_ms, ClassAd **ret_ad, GleanCommand *ret_cmd, char *why, size_t whylen) {
        _cleanup_free_ char *payload = NULL;
        size_t len;
        int r;

        r = glean_frame_recv(fd, GLEAN_FRAME_MAX, timeout_ms, &payload, &len);
        switch (r) {
        case 0:
                break;
        case -ETIMEDOUT:
                return glean_why(r, why, whylen, "timed out waiting for a message");
        case -EPIPE:
                return glean_why(r, why, whylen, "connection closed");
        case -EMSGSIZE:
                return glean_why(r, why, whylen, "frame longer than %u bytes", GLEAN_FRAME_MAX);
        case -EBADMSG:
                return glean_why(r, why, whylen, "frame of length 0");
        default:
                return glean_why(r, why, whylen, "cannot receive: %s", strerror(-r));
        }
        return glean_msg_parse(payload, len, ret_ad, ret_cmd, why, whylen);
}
