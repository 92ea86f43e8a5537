/* SPDX-License-Identifier: Apache-2.0 */
/*
 * unparse.c — canonical text of values, expressions and ads, as HTCondor's
 * ClassAdUnParser prints them: binary operators with one space each side,
 * unary ones with a space before (" -a"), parentheses as written, f(a,b),
 * { a,b }, [ a = 1; b = 2 ], reals as %.15E (zero as 0.0), strings with C
 * escapes and octal for the rest, =?= and =!= as "is" and "isnt".
 *
 * The old one-attribute-per-line style (classad_unparse_old) differs as
 * HTCondor's does: =?= and =!= as such, reals as %.16G, strings with only
 * the quote escaped.
 */
#include "classad-internal.h"

#include <ctype.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <strings.h>

static const char *const op_text[_CA_OP_MAX] = {
        [CA_OP_NEG] = " -",     [CA_OP_POS] = " +",     [CA_OP_NOT] = " !",    [CA_OP_BNOT] = " ~",
        [CA_OP_MUL] = " * ",    [CA_OP_DIV] = " / ",    [CA_OP_MOD] = " % ",   [CA_OP_ADD] = " + ",
        [CA_OP_SUB] = " - ",    [CA_OP_SHL] = " << ",   [CA_OP_SHR] = " >> ",  [CA_OP_USHR] = " >>> ",
        [CA_OP_LT] = " < ",     [CA_OP_LE] = " <= ",    [CA_OP_GT] = " > ",    [CA_OP_GE] = " >= ",
        [CA_OP_EQ] = " == ",    [CA_OP_NE] = " != ",    [CA_OP_IS] = " is ",   [CA_OP_ISNT] = " isnt ",
        [CA_OP_BAND] = " & ",   [CA_OP_BXOR] = " ^ ",   [CA_OP_BOR] = " | ",   [CA_OP_AND] = " && ",
        [CA_OP_OR] = " || ",    [CA_OP_ELVIS] = " ?: ",
};

static _Thread_local bool old_style;

void ca_unparse_set_old_style(bool old) {
        old_style = old;
}

static void quoted(CaBuf *b, const char *s, size_t len, char delim) {
        ca_buf_putc(b, delim);
        for (size_t i = 0; i < len; i++) {
                unsigned char c = (unsigned char) s[i];
                if (c == (unsigned char) delim) {
                        ca_buf_putc(b, '\\');
                        ca_buf_putc(b, (char) c);
                        continue;
                }
                if (old_style && delim == '"') { /* old strings: only the quote is escaped */
                        ca_buf_putc(b, (char) c);
                        continue;
                }
                switch (c) {
                case '\a': ca_buf_puts(b, "\\a"); continue;
                case '\b': ca_buf_puts(b, "\\b"); continue;
                case '\f': ca_buf_puts(b, "\\f"); continue;
                case '\n': ca_buf_puts(b, "\\n"); continue;
                case '\r': ca_buf_puts(b, "\\r"); continue;
                case '\t': ca_buf_puts(b, "\\t"); continue;
                case '\v': ca_buf_puts(b, "\\v"); continue;
                case '\\': ca_buf_puts(b, "\\\\"); continue;
                default:
                        if (c < 0x20 || c >= 0x7f)
                                ca_buf_printf(b, "\\%03o", c);
                        else
                                ca_buf_putc(b, (char) c);
                }
        }
        ca_buf_putc(b, delim);
}

void ca_unparse_string(CaBuf *b, const char *s, size_t len) {
        quoted(b, s, len, '"');
}

static bool is_reserved(const char *name) {
        static const char *const words[] = { "true", "false", "undefined", "error", "is", "isnt" };
        for (size_t i = 0; i < ELEMENTSOF(words); i++)
                if (strcasecmp(name, words[i]) == 0)
                        return true;
        return false;
}

bool ca_name_needs_quotes(const char *name) {
        if (!isalpha((unsigned char) name[0]) && name[0] != '_')
                return true;
        for (const char *p = name + 1; *p; p++)
                if (!isalnum((unsigned char) *p) && *p != '_')
                        return true;
        return is_reserved(name);
}

bool classad_is_plain_name(const char *name) {
        return name && !ca_name_needs_quotes(name);
}

void ca_unparse_name(CaBuf *b, const char *name) {
        if (ca_name_needs_quotes(name))
                quoted(b, name, strlen(name), '\'');
        else
                ca_buf_puts(b, name);
}

void ca_unparse_real(CaBuf *b, double r) {
        if (r == 0.0)
                ca_buf_printf(b, "%.1f", r);
        else if (isnan(r))
                ca_buf_puts(b, "real(\"NaN\")");
        else if (isinf(r))
                ca_buf_puts(b, r < 0 ? "real(\"-INF\")" : "real(\"INF\")");
        else if (old_style) {
                char tmp[64];
                snprintf(tmp, sizeof tmp, "%.16G", r);
                ca_buf_puts(b, tmp);
                if (!tmp[strcspn(tmp, ".Ee")])
                        ca_buf_puts(b, ".0"); /* keep it a real */
        } else
                ca_buf_printf(b, "%.15E", r);
}

static void unparse_list_nodes(CaBuf *b, CaNode *const *items, uint32_t n) {
        ca_buf_puts(b, "{ ");
        for (uint32_t i = 0; i < n; i++) {
                if (i)
                        ca_buf_putc(b, ',');
                ca_unparse_node(b, items[i]);
        }
        ca_buf_puts(b, " }");
}

static void unparse_list(CaBuf *b, const CaList *l) {
        if (l->lazy) {
                unparse_list_nodes(b, l->u.items, l->n);
                return;
        }
        ca_buf_puts(b, "{ ");
        for (uint32_t i = 0; i < l->n; i++) {
                if (i)
                        ca_buf_putc(b, ',');
                ca_unparse_value(b, &l->u.vals[i]);
        }
        ca_buf_puts(b, " }");
}

/* The name of a definition: as ca_unparse_name, and an attribute called
 * "parent" quoted too, as HTCondor writes it, to tell it from the scope. */
void ca_unparse_def_name(CaBuf *b, const char *name) {
        if (strcasecmp(name, "parent") == 0)
                quoted(b, name, strlen(name), '\'');
        else
                ca_unparse_name(b, name);
}

void ca_unparse_ad(CaBuf *b, const ClassAd *ad, bool own) {
        ca_buf_puts(b, "[ ");
        bool first = true;
        size_t pos = 0;
        for (const CaAttr *a; (a = ca_ad_next(ad, &pos, own));) {
                if (!first)
                        ca_buf_puts(b, "; ");
                first = false;
                ca_unparse_def_name(b, a->name);
                ca_buf_puts(b, " = ");
                ca_unparse_node(b, a->expr);
        }
        ca_buf_puts(b, " ]");
}

void ca_unparse_value(CaBuf *b, const CaValue *v) {
        switch (v->type) {
        case CA_UNDEFINED: ca_buf_puts(b, "undefined"); return;
        case CA_ERROR: ca_buf_puts(b, "error"); return;
        case CA_BOOL: ca_buf_puts(b, v->u.b ? "true" : "false"); return;
        case CA_INT: ca_buf_printf(b, "%" PRId64, v->u.i); return;
        case CA_REAL: ca_unparse_real(b, v->u.r); return;
        case CA_STRING: ca_unparse_string(b, v->u.s->s, v->u.s->len); return;
        case CA_LIST: unparse_list(b, v->u.l.list); return;
        case CA_AD: ca_unparse_ad(b, v->u.ad, false); return;
        case CA_ABSTIME: ca_unparse_abstime(b, v->u.at.secs, v->u.at.offset); return;
        case CA_RELTIME: ca_unparse_reltime(b, v->u.rt); return;
        }
}

void ca_unparse_node(CaBuf *b, const CaNode *n) {
        switch (n->kind) {
        case CA_N_LITERAL:
                ca_unparse_value(b, &n->u.lit);
                return;
        case CA_N_ATTR:
                if (n->u.attr.base) {
                        ca_unparse_node(b, n->u.attr.base);
                        ca_buf_putc(b, '.');
                } else if (n->flags & CA_NF_ABSOLUTE)
                        ca_buf_putc(b, '.');
                ca_unparse_name(b, n->u.attr.spelling);
                return;
        case CA_N_OP:
                switch (n->op) {
                case CA_OP_PAREN:
                        ca_buf_putc(b, '(');
                        ca_unparse_node(b, n->u.op.a);
                        ca_buf_putc(b, ')');
                        return;
                case CA_OP_NEG: case CA_OP_POS: case CA_OP_NOT: case CA_OP_BNOT:
                        ca_buf_puts(b, op_text[n->op]);
                        ca_unparse_node(b, n->u.op.a);
                        return;
                case CA_OP_COND:
                        ca_unparse_node(b, n->u.op.a);
                        ca_buf_puts(b, " ? ");
                        ca_unparse_node(b, n->u.op.b);
                        ca_buf_puts(b, " : ");
                        ca_unparse_node(b, n->u.op.c);
                        return;
                case CA_OP_IS:
                case CA_OP_ISNT:
                        ca_unparse_node(b, n->u.op.a);
                        if (old_style)
                                ca_buf_puts(b, n->op == CA_OP_IS ? " =?= " : " =!= ");
                        else
                                ca_buf_puts(b, op_text[n->op]);
                        ca_unparse_node(b, n->u.op.b);
                        return;
                case CA_OP_ELVIS:
                        ca_unparse_node(b, n->u.op.a);
                        ca_buf_puts(b, (n->flags & CA_NF_SPACED) ? " ? : " : " ?: ");
                        ca_unparse_node(b, n->u.op.b);
                        return;
                case CA_OP_SUBSCRIPT:
                        ca_unparse_node(b, n->u.op.a);
                        ca_buf_putc(b, '[');
                        ca_unparse_node(b, n->u.op.b);
                        ca_buf_putc(b, ']');
                        return;
                default:
                        ca_unparse_node(b, n->u.op.a);
                        ca_buf_puts(b, op_text[n->op]);
                        ca_unparse_node(b, n->u.op.b);
                        return;
                }
        case CA_N_CALL:
                ca_buf_puts(b, n->u.call.name);
                ca_buf_putc(b, '(');
                for (uint32_t i = 0; i < n->nargs; i++) {
                        if (i)
                                ca_buf_putc(b, ',');
                        ca_unparse_node(b, n->u.call.args[i]);
                }
                ca_buf_putc(b, ')');
                return;
        case CA_N_LIST:
                unparse_list_nodes(b, n->u.list->u.items, n->u.list->n);
                return;
        case CA_N_AD:
                ca_unparse_ad(b, n->u.ad, false);
                return;
        case CA_N_FOLDED:
                ca_unparse_node(b, n->u.folded.orig);
                return;
        }
}
