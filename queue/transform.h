/* SPDX-License-Identifier: Apache-2.0 */
/*
 * transform.h — the schedd's job transforms as HTCondor's administrators
 * write them: JOB_TRANSFORM_NAMES lists transforms, each
 * JOB_TRANSFORM_<Name> a text in HTCondor's transform language
 * (docs/classads/transforms.rst), applied in order to every job at submit,
 * before the identity checks and SUBMIT_REQUIREMENT_<Name>
 * (jobcmd-policy.c), as condor_schedd applies them before its submit
 * requirements.
 *
 * The language, one statement a line ('#' comments and blank lines
 * skipped; keywords case-insensitive):
 *
 *   NAME = value              a macro of the transform ($(NAME) later)
 *   REQUIREMENTS expr         the transform applies only to jobs for which
 *                             expr is true (the job as it is before this
 *                             transform); read as written, not expanded
 *   SET attr expr             attr = expr (expr after macro expansion)
 *   DEFAULT attr expr         the same when the job has no attr (or it is
 *                             the literal undefined)
 *   EVALSET attr expr         attr = the value of expr, evaluated now
 *   EVALMACRO name expr       the macro name = the value of expr
 *   COPY attr newattr         newattr = attr's expression
 *   COPY /regex/ pattern      the same for every attribute whose name the
 *                             regex matches (caseless, anywhere in the
 *                             name); pattern's \0..\9 are the match's groups
 *   RENAME attr newattr       COPY then DELETE; RENAME /regex/ pattern too
 *   DELETE attr, DELETE /regex/
 *   if / elif / else / endif  [!] defined NAME (a macro, a configuration
 *                             knob, MY.attr), true, false, yes, no, a number
 *   NAME name, UNIVERSE u     accepted; no effect in the schedd (HTCondor's
 *                             job router reads them)
 *   TRANSFORM [1]             the end of the statements (later lines are
 *                             not read); TRANSFORM N>1 and TRANSFORM FROM /
 *                             IN / MATCHING (condor_transform_ads's
 *                             iteration) are refused
 *
 * "SET attr = expr" and "SET attr, expr" read as "SET attr expr".
 * Macros: $(name) is the transform's macro as last defined before the
 * statement (its value expanded when used), else the configuration's
 * knob (expanded when the transform is loaded), else empty; $(name:default);
 * $(MY.attr) the job's attribute: a string's text without its quotes,
 * another expression's text, not evaluated; $INT(x), $REAL(x), $STRING(x)
 * evaluate x (MY.attr, or a macro holding an expression) against the job;
 * $(DOLLAR) is '$'. Other $FUNC() and $ENV() are refused at load.
 *
 * The old ClassAd form, "[ Name = ...; Requirements = ...; set_A = expr;
 * eval_set_A = expr; copy_A = "B"; delete_A = true; other = value ]", is
 * converted as condor_job_router converts it: other attributes become
 * macros, then the copy_, delete_, set_, eval_set_ rules in that order,
 * each group by name; Requirements is evaluated with the job as MY and as
 * TARGET. (HTCondor's schedd of today ignores that form, with an error in
 * its log; its manual still says it is converted.)
 *
 * The job is user input. What follows from that:
 * - A transform never changes Owner or User: a statement whose target (or
 *   RENAME's or DELETE's source) is one of them is refused at load; a
 *   target that only the job's data names ($(MY.x) in COPY's new name, a
 *   regex's groups) fails the transform on that job; regex RENAME and
 *   DELETE pass over them. The transforms see Owner and User as the queue
 *   will set them (the caller's), and ProcId as the queue numbers the job.
 * - Text from the job ($(MY.attr), $STRING, EVALMACRO's value) does not
 *   become expression code where the transform did not put code: inside a
 *   string literal of SET, DEFAULT, EVALSET or EVALMACRO it is escaped;
 *   outside one it must be a whole expression alone and goes in
 *   parentheses ("TARGET.HasDocker && $(MY.Requirements)" keeps the
 *   job's Requirements one operand). HTCondor inserts the text as it is.
 * - AccountingGroup, AcctGroup, AcctGroupUser and NiceUser that a
 *   transform gives are checked afterwards as a user's are (literals, the
 *   accounting user the caller's, the group ACCOUNTING_GROUPS_ALLOWED's):
 *   a transform that assigns groups works for the groups those allow.
 *
 * Failures on a job (an expression that does not parse after expansion,
 * an evaluation out of the ClassAd budget, a COPY target that is not a
 * name, the limits below) fail the submit with the transform's name, line
 * and reason; HTCondor logs most of them and goes on, but a transform
 * half applied is not what the administrator wrote. Nothing is queued.
 *
 * Limits: QUEUE_XFORM_MAX_TRANSFORMS transforms, QUEUE_XFORM_MAX_STATEMENTS
 * statements each, if nesting QUEUE_XFORM_MAX_IF_DEPTH; a regex at most
 * QUEUE_XFORM_MAX_REGEX bytes, compiled once at load, without a repeat of
 * something that repeats without bound ("(a+)+", a regex bomb), matched
 * within PCRE2 match and depth limits; macro expansion nested at most
 * QUEUE_XFORM_MAX_DEPTH deep, one expansion at most QUEUE_XFORM_MAX_TEXT
 * bytes; every transform of one job writes at most QUEUE_XFORM_MAX_WRITE
 * bytes of names and expressions into it; each evaluation within the
 * ClassAd evaluation budget.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "classad.h"
#include "config.h"

#define QUEUE_XFORM_MAX_TRANSFORMS 64
#define QUEUE_XFORM_MAX_STATEMENTS 4096
#define QUEUE_XFORM_MAX_IF_DEPTH 32
#define QUEUE_XFORM_MAX_REGEX 1024
#define QUEUE_XFORM_MAX_DEPTH 32
#define QUEUE_XFORM_MAX_TEXT (256u * 1024u)
#define QUEUE_XFORM_MAX_WRITE (1024u * 1024u)

typedef struct QueueXforms QueueXforms;

/* JOB_TRANSFORM_NAMES and each JOB_TRANSFORM_<Name> of cfg, compiled.
 * *ret is an empty set when the list is unset or empty. A name listed
 * twice, a JOB_TRANSFORM_<Name> not defined, a statement that does not
 * compile: -EINVAL with err naming the knob's file and line, the line
 * inside its value (counted as the configuration keeps the value: a
 * NAME @=end value without its comment and blank lines) with its text,
 * and the reason. The configuration keeps JOB_TRANSFORM_<Name> as
 * written (config/expand.c): its macros are the transform's. */
int queue_xforms_from_config(const Config *cfg, QueueXforms **ret, ConfigError *err);
int queue_xforms_new(QueueXforms **ret);
void queue_xforms_free(QueueXforms *xs); /* accepts NULL */
size_t queue_xforms_count(const QueueXforms *xs); /* accepts NULL: 0 */
/* Compiles text as transform name (from file:line, for messages) and
 * appends it; cfg (may be NULL) gives the knobs its $(NAME)s read. */
int queue_xforms_add(QueueXforms *xs, const char *name, const char *text, const char *file, int line,
                     const Config *cfg, ConfigError *err);

/* Every transform in order, on ad in place (its own attributes; for an
 * ad chained to a parent, deleting a parent's attribute sets the child's
 * to undefined). *ret_applied (may be NULL): how many applied. -EINVAL
 * (or -E2BIG past a limit) with why "JOB_TRANSFORM_<Name> line N (...):
 * reason" when one failed (ad is then half transformed: throw it away);
 * -ENOMEM. */
int queue_xforms_apply(const QueueXforms *xs, ClassAd *ad, size_t *ret_applied, char *why, size_t whylen);

/* A submission's transforms, part by part (jobcmd-submit.c). The first
 * call (*state NULL) transforms the cluster ad as the job of a proc
 * without attributes of its own and replaces *cluster with the result
 * (the old one freed); every call replaces each procs[i] that is not NULL
 * with the attributes that make it, chained to the new cluster, the job
 * the transforms make of it over the old one (NULL when that is the
 * cluster's). The jobs are seen with Owner = owner, User = user and
 * ProcId = first + i (what the queue gives them; a transform's value of
 * those is not kept). When no transform reads ProcId (through what it
 * evaluates, too), the procs without attributes of their own share one
 * run (they stay NULL); else each is transformed on its own. On
 * failure the arrays hold ads already replaced and ads not yet; the
 * submission is to be refused. Free the state with
 * queue_xform_submit_free when the submission is done. */
typedef struct QueueXformSubmit QueueXformSubmit;
int queue_xform_part(const QueueXforms *xs, QueueXformSubmit **state, ClassAd **cluster, ClassAd **procs, size_t n,
                     size_t first, const char *owner, const char *user, char *why, size_t whylen);
void queue_xform_submit_free(QueueXformSubmit *s); /* accepts NULL */
