/* SPDX-License-Identifier: Apache-2.0 */
/*
 * transform-internal.h — a compiled job transform (transform.c compiles,
 * transform-run.c applies): statements with their macro templates cut
 * into pieces, expressions parsed and regexes compiled once.
 */
#pragma once

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "common/proto.h"
#include "transform.h"

#define XF_MODE GLEAN_CA_MODE

/* A text with macro references: pieces in order. */
typedef enum XfSegKind {
        XF_LIT,    /* text as written */
        XF_MACRO,  /* $(name): the transform's macro, else the knob */
        XF_MY,     /* $(MY.attr) */
        XF_INT,    /* $INT(x) */
        XF_REAL,   /* $REAL(x) */
        XF_STRING, /* $STRING(x) */
} XfSegKind;

typedef struct XfTmpl XfTmpl;
typedef struct XfSeg {
        XfSegKind kind;
        char *text;   /* XF_LIT: the text; else the name (attr for XF_MY; for $INT(MY.a): "MY.a") */
        XfTmpl *def;  /* $(name:default): the default (NULL: none) */
} XfSeg;
struct XfTmpl {
        XfSeg *segs;
        size_t n;
        bool refs; /* any piece not XF_LIT */
};

typedef enum XfKind {
        XF_ASSIGN,
        XF_IF,
        XF_ELIF,
        XF_ELSE,
        XF_ENDIF,
        XF_SET,
        XF_DEFAULT,
        XF_EVALSET,
        XF_EVALMACRO,
        XF_COPY,
        XF_RENAME,
        XF_DELETE,
} XfKind;

typedef struct XfStmt {
        XfKind kind;
        int line;          /* in the transform's text, 1-based */
        char *text;        /* the line, for reasons (cut short) */
        char *name;        /* the attribute (or the macro) it names; NULL for a regex */
        XfTmpl rhs;        /* expression, new name, value, condition */
        ClassAdExpr *expr; /* rhs parsed at load when it has no macro */
        pcre2_code *re;    /* COPY, RENAME, DELETE /regex/ */
        bool negate;       /* if [!] defined NAME */
        char *defined;     /* if defined NAME: NAME (NULL: a condition to expand) */
        size_t jump;       /* IF, ELIF: the next branch (ELIF, ELSE, ENDIF); ELSE: its ENDIF */
} XfStmt;

typedef struct XfKnob {
        char *name, *value; /* a knob a $(name) may read, expanded at load */
} XfKnob;

typedef struct QueueXform {
        char *name;        /* <Name> of JOB_TRANSFORM_<Name> */
        char *where;       /* "file:line" of its definition */
        ClassAdExpr *req;  /* REQUIREMENTS (NULL: every job) */
        bool req_target;   /* the old ClassAd form: the job is TARGET too */
        XfStmt *st;
        size_t n;
        XfKnob *knobs;
        size_t n_knobs;
} QueueXform;

struct QueueXforms {
        QueueXform **x;
        size_t n;
};

/* Owner and User: what a transform never changes. */
bool queue_xform_protected(const char *name);
/* A ClassAd attribute name: [A-Za-z_][A-Za-z0-9_]*, not a keyword, at
 * most 256 bytes. */
bool queue_xform_valid_attr(const char *name, size_t len);
const char *queue_xform_knob(const QueueXform *x, const char *name); /* NULL: not a knob */
