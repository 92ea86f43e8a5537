/* SPDX-License-Identifier: Apache-2.0 */
/*
 * parse.c — lexer and precedence-climbing parser for ClassAd expressions
 * and records, with HTCondor's operators and precedence:
 *
 *   ?: (ternary, right-assoc; two-operand ?:)     lowest
 *   ||   &&   |   ^   &
 *   == != =?= =!= is isnt
 *   < <= > >=
 *   << >> >>>
 *   + -
 *   * / %
 *   unary - + ! ~
 *   postfix: a[i]  a.b  f(x)                      highest
 *
 * Nesting and tree height are bounded; errors carry line, column, reason.
 */
#include "classad-internal.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <strings.h>

typedef enum Tok {
        T_EOF,
        T_INT,
        T_REAL,
        T_STRING,
        T_IDENT,
        T_QNAME,   /* 'quoted name' */
        T_TRUE, T_FALSE, T_UNDEF, T_ERROR,
        T_OP,      /* binary operator: tok.op */
        T_NOT, T_BNOT,
        T_QUEST, T_COLON, T_ELVIS /* ?: written as one token */,
        T_LPAREN, T_RPAREN, T_LBRACK, T_RBRACK, T_LBRACE, T_RBRACE,
        T_COMMA, T_SEMI, T_DOT, T_ASSIGN,
        T_BAD,
} Tok;

typedef struct Parser {
        const char *text, *end, *p;
        CaArena *arena;
        CaMode mode;
        bool old_syntax;    /* one-attribute-per-line format: "\" escapes only a quote */
        CaError *err;
        int depth;
        bool failed;
        /* current token */
        Tok tok;
        CaOp op;
        const char *tstart; /* where the token starts */
        int64_t ival;
        double rval;
        uint32_t hash;      /* T_IDENT: ca_atom's hash of the name */
        const char *sptr;   /* T_STRING, T_QNAME: contents, in the text when */
        size_t slen;        /* written without escapes, else in sbuf */
        CaBuf sbuf;         /* contents with escapes processed */
} Parser;

static void fail_at(Parser *ps, const char *where, const char *fmt, ...) _printf_(3, 4);
static void fail_at(Parser *ps, const char *where, const char *fmt, ...) {
        if (ps->failed)
                return;
        ps->failed = true;
        if (!ps->err)
                return;
        int line = 1, col = 1;
        for (const char *q = ps->text; q < where && q < ps->end; q++) {
                if (*q == '\n')
                        line++, col = 1;
                else
                        col++;
        }
        ps->err->line = line;
        ps->err->column = col;
        ps->err->offset = (size_t) (where - ps->text);
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(ps->err->msg, sizeof ps->err->msg, fmt, ap);
        va_end(ap);
}

/* ---- lexer ---- */

/* Character classes, without the locale lookups of <ctype.h>. */
enum { C_SPACE = 1, C_DIGIT = 2, C_ALPHA = 4 };
static const uint8_t cclass[256] = {
        [' '] = C_SPACE, ['\t'] = C_SPACE, ['\n'] = C_SPACE, ['\r'] = C_SPACE, ['\v'] = C_SPACE, ['\f'] = C_SPACE,
        ['0' ... '9'] = C_DIGIT,
        ['a' ... 'z'] = C_ALPHA, ['A' ... 'Z'] = C_ALPHA, ['_'] = C_ALPHA,
};
#define IS_SPACE(c) (cclass[(unsigned char) (c)] & C_SPACE)
#define IS_DIGIT(c) (cclass[(unsigned char) (c)] & C_DIGIT)
#define IS_IDENT_START(c) (cclass[(unsigned char) (c)] & C_ALPHA)
#define IS_IDENT_CHAR(c) (cclass[(unsigned char) (c)] & (C_ALPHA | C_DIGIT))

static void skip_space(Parser *ps) {
        for (;;) {
                while (ps->p < ps->end && IS_SPACE(*ps->p))
                        ps->p++;
                if (ps->p >= ps->end || *ps->p != '/')
                        return;
                if (ps->end - ps->p >= 2 && ps->p[0] == '/' && ps->p[1] == '/') {
                        while (ps->p < ps->end && *ps->p != '\n')
                                ps->p++;
                        continue;
                }
                if (ps->end - ps->p >= 2 && ps->p[0] == '/' && ps->p[1] == '*') {
                        const char *start = ps->p;
                        ps->p += 2;
                        while (ps->end - ps->p >= 2 && !(ps->p[0] == '*' && ps->p[1] == '/'))
                                ps->p++;
                        if (ps->end - ps->p < 2) {
                                fail_at(ps, start, "unterminated comment");
                                ps->p = ps->end;
                                return;
                        }
                        ps->p += 2;
                        continue;
                }
                return;
        }
}

/* Body of a "string" or 'name' with C escapes; ps->p is after the quote. */
static bool lex_quoted(Parser *ps, char quote) {
        const char *start = ps->p - 1;
        /* the usual case: no escape, no NUL; the contents stay in the text */
        const char *q = ps->p;
        while (q < ps->end && *q != quote && *q != '\\' && *q != 0)
                q++;
        if (q < ps->end && *q == quote) {
                ps->sptr = ps->p;
                ps->slen = (size_t) (q - ps->p);
                ps->p = q + 1;
                return true;
        }
        ps->sbuf.len = 0;
        ca_buf_putn(&ps->sbuf, "", 0);
        while (ps->p < ps->end && *ps->p != quote) {
                const char *run = ps->p;
                while (ps->p < ps->end && *ps->p != quote && *ps->p != 0 &&
                       (*ps->p != '\\' || (ps->old_syntax && quote == '"' && (ps->p + 1 >= ps->end || ps->p[1] != '"'))))
                        ps->p++;
                if (ps->p < ps->end && *ps->p == 0) {
                        /* no NUL inside ClassAd strings, written or escaped */
                        fail_at(ps, ps->p, "NUL byte in string");
                        return false;
                }
                if (ps->p > run) {
                        ca_buf_putn(&ps->sbuf, run, (size_t) (ps->p - run));
                        continue;
                }
                ps->p++;
                char c;
                if (ps->p >= ps->end)
                        break;
                c = *ps->p++;
                switch (c) {
                case 0:
                        fail_at(ps, ps->p - 1, "NUL byte in string");
                        return false;
                case 'a': c = '\a'; break;
                case 'b': c = '\b'; break;
                case 'f': c = '\f'; break;
                case 'n': c = '\n'; break;
                case 'r': c = '\r'; break;
                case 't': c = '\t'; break;
                case 'v': c = '\v'; break;
                default:
                        if (c >= '0' && c <= '7') {
                                int v = c - '0', digits = 1;
                                while (digits < 3 && ps->p < ps->end && *ps->p >= '0' && *ps->p <= '7' &&
                                       (digits < 2 || v < 0x20)) {
                                        v = v * 8 + (*ps->p++ - '0');
                                        digits++;
                                }
                                if (v == 0 || v > 255) {
                                        fail_at(ps, ps->p - digits - 1, "invalid octal escape in string");
                                        return false;
                                }
                                c = (char) v;
                        }
                        /* \\ \" \' \? and any other character stand for themselves */
                        break;
                }
                ca_buf_putc(&ps->sbuf, c);
        }
        if (ps->p >= ps->end) {
                fail_at(ps, start, quote == '"' ? "unterminated string" : "unterminated quoted attribute name");
                return false;
        }
        ps->p++;
        if (ps->sbuf.oom) {
                fail_at(ps, start, "out of memory");
                return false;
        }
        ps->sptr = ps->sbuf.p;
        ps->slen = ps->sbuf.len;
        return true;
}

_noinline_ static bool lex_number(Parser *ps) {
        const char *s = ps->p;
        bool real = false;
        const char *q = s;
        if (q[0] == '0' && ps->end - q > 1 && (q[1] == 'x' || q[1] == 'X')) {
                if (ps->mode == CA_MODE_OLD) {
                        fail_at(ps, s, "integer literal with a leading zero");
                        return false;
                }
                q += 2;
                uint64_t v = 0;
                const char *digits = q;
                while (q < ps->end && isxdigit((unsigned char) *q)) {
                        int d = isdigit((unsigned char) *q) ? *q - '0' : (tolower((unsigned char) *q) - 'a' + 10);
                        v = v * 16 + (uint64_t) d; /* wraps, as the value is 64 bits */
                        q++;
                }
                if (q == digits) {
                        fail_at(ps, s, "malformed hexadecimal literal");
                        return false;
                }
                ps->p = q;
                ps->tok = T_INT;
                ps->ival = (int64_t) v;
                goto check_suffix;
        }
        while (q < ps->end && isdigit((unsigned char) *q))
                q++;
        if (q < ps->end && *q == '.') {
                /* HTCondor wants a digit after the point: 1. and 1.e3 are errors */
                if (q + 1 >= ps->end || !IS_DIGIT(q[1])) {
                        fail_at(ps, s, "malformed number: a digit must follow the decimal point");
                        return false;
                }
                real = true;
                q++;
                while (q < ps->end && isdigit((unsigned char) *q))
                        q++;
        }
        if (q < ps->end && (*q == 'e' || *q == 'E')) {
                const char *e = q + 1;
                if (e < ps->end && (*e == '+' || *e == '-'))
                        e++;
                if (e < ps->end && isdigit((unsigned char) *e)) {
                        real = true;
                        q = e;
                        while (q < ps->end && isdigit((unsigned char) *q))
                                q++;
                }
        }
        char tmp[64];
        size_t n = (size_t) (q - s);
        if (n >= sizeof tmp) {
                /* Only absurdly long numbers get here: parse with a heap copy. */
                char *heap = strndup(s, n);
                if (!heap) {
                        fail_at(ps, s, "out of memory");
                        return false;
                }
                if (real)
                        ps->rval = strtod(heap, NULL);
                else
                        ps->ival = INT64_MAX;
                free(heap);
        } else {
                memcpy(tmp, s, n);
                tmp[n] = 0;
                if (real)
                        ps->rval = strtod(tmp, NULL);
                else if (n > 1 && tmp[0] == '0') {
                        if (ps->mode == CA_MODE_OLD) {
                                fail_at(ps, s, "integer literal with a leading zero");
                                return false;
                        }
                        uint64_t v = 0;
                        for (size_t i = 1; i < n; i++) {
                                if (tmp[i] > '7') {
                                        fail_at(ps, s, "malformed octal literal");
                                        return false;
                                }
                                v = v * 8 + (uint64_t) (tmp[i] - '0');
                        }
                        ps->ival = (int64_t) v;
                } else {
                        /* 2^63 stays representable so that -9223372036854775808 works */
                        uint64_t v = 0;
                        bool over = false;
                        for (size_t i = 0; i < n; i++) {
                                uint64_t d = (uint64_t) (tmp[i] - '0');
                                if (v > (UINT64_MAX - d) / 10)
                                        over = true;
                                v = v * 10 + d;
                        }
                        ps->ival = (over || v > (1ull << 63)) ? INT64_MAX : (int64_t) v;
                }
        }
        ps->p = q;
        ps->tok = real ? T_REAL : T_INT;
check_suffix:
        if (ps->p < ps->end && IS_IDENT_CHAR(*ps->p)) {
                fail_at(ps, s, "malformed number");
                return false;
        }
        return true;
}

static bool word_is(const char *s, size_t n, const char *kw) {
        return strlen(kw) == n && strncasecmp(s, kw, n) == 0;
}

/* Operators and punctuation, strings, and numbers starting with '.'. */
_noinline_ static void lex_punct(Parser *ps) {
        const char *s = ps->p;
        char c = *s;
        char c1 = ps->end - s > 1 ? s[1] : 0;
        char c2 = ps->end - s > 2 ? s[2] : 0;
#define OP(len, o) do { ps->p += (len); ps->tok = T_OP; ps->op = (o); return; } while (0)
#define TK(len, t) do { ps->p += (len); ps->tok = (t); return; } while (0)
        if (c == '.' && IS_DIGIT(c1)) {
                if (!lex_number(ps))
                        ps->tok = T_BAD;
                return;
        }
        switch (c) {
        case '"':
                ps->p++;
                ps->tok = lex_quoted(ps, '"') ? T_STRING : T_BAD;
                return;
        case '\'':
                ps->p++;
                ps->tok = lex_quoted(ps, '\'') ? T_QNAME : T_BAD;
                return;
        case '+': OP(1, CA_OP_ADD);
        case '-': OP(1, CA_OP_SUB);
        case '*': OP(1, CA_OP_MUL);
        case '/': OP(1, CA_OP_DIV);
        case '%': OP(1, CA_OP_MOD);
        case '^': OP(1, CA_OP_BXOR);
        case '~': TK(1, T_BNOT);
        case '?':
                if (c1 == ':') TK(2, T_ELVIS);
                TK(1, T_QUEST);
        case ':': TK(1, T_COLON);
        case '(': TK(1, T_LPAREN);
        case ')': TK(1, T_RPAREN);
        case '[': TK(1, T_LBRACK);
        case ']': TK(1, T_RBRACK);
        case '{': TK(1, T_LBRACE);
        case '}': TK(1, T_RBRACE);
        case ',': TK(1, T_COMMA);
        case ';': TK(1, T_SEMI);
        case '.': TK(1, T_DOT);
        case '&':
                if (c1 == '&') OP(2, CA_OP_AND);
                OP(1, CA_OP_BAND);
        case '|':
                if (c1 == '|') OP(2, CA_OP_OR);
                OP(1, CA_OP_BOR);
        case '<':
                if (c1 == '<') OP(2, CA_OP_SHL);
                if (c1 == '=') OP(2, CA_OP_LE);
                OP(1, CA_OP_LT);
        case '>':
                if (c1 == '>' && c2 == '>') OP(3, CA_OP_USHR);
                if (c1 == '>') OP(2, CA_OP_SHR);
                if (c1 == '=') OP(2, CA_OP_GE);
                OP(1, CA_OP_GT);
        case '=':
                if (c1 == '=') OP(2, CA_OP_EQ);
                if (c1 == '?' && c2 == '=') OP(3, CA_OP_IS);
                if (c1 == '!' && c2 == '=') OP(3, CA_OP_ISNT);
                TK(1, T_ASSIGN);
        case '!':
                if (c1 == '=') OP(2, CA_OP_NE);
                TK(1, T_NOT);
        default:
                break;
        }
#undef OP
#undef TK
        if (isprint((unsigned char) c))
                fail_at(ps, s, "unexpected character '%c'", c);
        else
                fail_at(ps, s, "unexpected byte 0x%02x", (unsigned char) c);
        ps->tok = T_BAD;
}

static void next(Parser *ps) {
        skip_space(ps);
        ps->tstart = ps->p;
        if (_unlikely_(ps->failed)) {
                ps->tok = T_BAD;
                return;
        }
        if (ps->p >= ps->end) {
                ps->tok = T_EOF;
                return;
        }
        const char *s = ps->p;
        char c = *s;
        if (IS_IDENT_START(c)) {
                uint32_t h = CA_HASH_INIT;
                while (ps->p < ps->end && IS_IDENT_CHAR(*ps->p))
                        h = ca_hash_step(h, (unsigned char) *ps->p++);
                size_t n = (size_t) (ps->p - s);
                ps->tok = T_IDENT;
                ps->hash = h;
                unsigned char l = ca_lower[(unsigned char) c];
                if (n > 9 || (l != 't' && l != 'f' && l != 'u' && l != 'e' && l != 'i'))
                        return;
                if (word_is(s, n, "true"))
                        ps->tok = T_TRUE;
                else if (word_is(s, n, "false"))
                        ps->tok = T_FALSE;
                else if (word_is(s, n, "undefined"))
                        ps->tok = T_UNDEF;
                else if (word_is(s, n, "error"))
                        ps->tok = T_ERROR;
                else if (word_is(s, n, "is"))
                        ps->tok = T_OP, ps->op = CA_OP_IS;
                else if (word_is(s, n, "isnt"))
                        ps->tok = T_OP, ps->op = CA_OP_ISNT;
                return;
        }
        if (IS_DIGIT(c)) {
                if (!lex_number(ps))
                        ps->tok = T_BAD;
                return;
        }
        lex_punct(ps);
}

/* ---- tree building ---- */

static CaNode *new_node(Parser *ps, CaNodeKind kind) {
        CaNode *n = ca_arena_alloc(ps->arena, sizeof(CaNode));
        if (!n)
                fail_at(ps, ps->tstart, "out of memory");
        else {
                n->kind = (uint8_t) kind;
                n->depth = 1;
        }
        return n;
}

static bool set_depth(Parser *ps, CaNode *n, const CaNode *child) {
        if (child && child->depth + 1 > n->depth)
                n->depth = (uint16_t) (child->depth + 1);
        if (n->depth > CA_MAX_TREE_DEPTH) {
                fail_at(ps, ps->tstart, "expression nested too deeply (more than %d levels)", CA_MAX_TREE_DEPTH);
                return false;
        }
        return true;
}

static CaNode *new_op(Parser *ps, CaOp op, CaNode *a, CaNode *b, CaNode *c) {
        CaNode *n = new_node(ps, CA_N_OP);
        if (!n)
                return NULL;
        n->op = (uint8_t) op;
        n->u.op.a = a;
        n->u.op.b = b;
        n->u.op.c = c;
        if (!set_depth(ps, n, a) || !set_depth(ps, n, b) || !set_depth(ps, n, c))
                return NULL;
        /* An operator of constants costs time linear in their size at
         * most (comparing two strings): folded now. */
        if ((a->flags & CA_NF_CONST) && (!b || (b->flags & CA_NF_CONST)) && (!c || (c->flags & CA_NF_CONST)))
                return ca_fold(ps->arena, n, ps->mode);
        return n;
}

static CaNode *new_literal(Parser *ps, CaValue v) {
        CaNode *n = new_node(ps, CA_N_LITERAL);
        if (!n)
                return NULL;
        n->u.lit = v;
        n->flags = CA_NF_CONST;
        return n;
}

/* ---- grammar ---- */

static CaNode *parse_expr(Parser *ps);
static CaNode *parse_ad_body(Parser *ps, ClassAd *ad);

static bool enter(Parser *ps) {
        if (++ps->depth > CA_MAX_PARSE_DEPTH) {
                fail_at(ps, ps->tstart, "expression nested too deeply (more than %d levels)", CA_MAX_PARSE_DEPTH);
                return false;
        }
        return true;
}

static bool expect(Parser *ps, Tok t, const char *what) {
        if (ps->tok != t) {
                if (!ps->failed)
                        fail_at(ps, ps->tstart, ps->tok == T_EOF ? "unexpected end of input, expected %s"
                                                                  : "expected %s",
                                what);
                return false;
        }
        next(ps);
        return true;
}

static CaNode *parse_list(Parser *ps) {
        /* '{' already consumed */
        CaNode **items = NULL;
        size_t n = 0, cap = 0;
        CaNode *node = new_node(ps, CA_N_LIST);
        if (!node)
                return NULL;
        if (ps->tok != T_RBRACE) {
                for (;;) {
                        CaNode *e = parse_expr(ps);
                        if (!e)
                                goto fail;
                        if (!set_depth(ps, node, e))
                                goto fail;
                        if (n == cap) {
                                cap = cap ? cap * 2 : 8;
                                CaNode **grown = realloc(items, cap * sizeof *items);
                                if (!grown) {
                                        fail_at(ps, ps->tstart, "out of memory");
                                        goto fail;
                                }
                                items = grown;
                        }
                        items[n++] = e;
                        if (ps->tok != T_COMMA)
                                break;
                        next(ps);
                }
        }
        if (!expect(ps, T_RBRACE, "',' or '}' in list"))
                goto fail;
        CaList *l = ca_arena_alloc(ps->arena, sizeof(CaList));
        CaNode **stored = ca_arena_alloc(ps->arena, (n ? n : 1) * sizeof *stored);
        if (!l || !stored || n > UINT32_MAX) {
                fail_at(ps, ps->tstart, "out of memory");
                goto fail;
        }
        if (n)
                memcpy(stored, items, n * sizeof *stored);
        free(items);
        l->refs = -1;
        l->n = (uint32_t) n;
        l->lazy = true;
        l->u.items = stored;
        node->u.list = l;
        return node;
fail:
        free(items);
        return NULL;
}

static CaNode *parse_call(Parser *ps, const char *name, size_t len) {
        /* '(' already consumed */
        CaNode *node = new_node(ps, CA_N_CALL);
        CaNode **args = NULL;
        size_t n = 0, cap = 0;
        if (!node)
                return NULL;
        node->u.call.name = ca_arena_strndup(ps->arena, name, len);
        node->u.call.fn = ca_func_lookup(name, len);
        if (ps->tok != T_RPAREN) {
                for (;;) {
                        CaNode *e = parse_expr(ps);
                        if (!e || !set_depth(ps, node, e))
                                goto fail;
                        if (n == cap) {
                                cap = cap ? cap * 2 : 4;
                                CaNode **grown = realloc(args, cap * sizeof *args);
                                if (!grown) {
                                        fail_at(ps, ps->tstart, "out of memory");
                                        goto fail;
                                }
                                args = grown;
                        }
                        args[n++] = e;
                        if (ps->tok != T_COMMA)
                                break;
                        next(ps);
                }
        }
        if (!expect(ps, T_RPAREN, "',' or ')' in function call"))
                goto fail;
        if (n > CA_MAX_ARGS) {
                fail_at(ps, ps->tstart, "more than %d arguments", CA_MAX_ARGS);
                goto fail;
        }
        node->u.call.args = ca_arena_alloc(ps->arena, (n ? n : 1) * sizeof(CaNode *));
        if (!node->u.call.args || !node->u.call.name) {
                fail_at(ps, ps->tstart, "out of memory");
                goto fail;
        }
        if (n)
                memcpy(node->u.call.args, args, n * sizeof(CaNode *));
        free(args);
        node->nargs = (uint16_t) n;
        /* absTime("...") and relTime("...") with a literal are time literals
         * in HTCondor's parser: a malformed one is a parse error. The call is
         * kept as written (so the text round-trips) and folded below. */
        bool is_abs = len == 7 && strncasecmp(name, "absTime", 7) == 0;
        bool is_rel = len == 7 && strncasecmp(name, "relTime", 7) == 0;
        if ((is_abs || is_rel) && n == 1 && node->u.call.args[0]->kind == CA_N_LITERAL &&
            node->u.call.args[0]->u.lit.type == CA_STRING) {
                const char *text = node->u.call.args[0]->u.lit.u.s->s;
                int64_t secs;
                int32_t offset;
                double rt;
                if (is_abs ? !ca_parse_abstime(text, &secs, &offset) : !ca_parse_reltime(text, &rt)) {
                        fail_at(ps, name, "malformed %s literal \"%s\"", is_abs ? "absTime" : "relTime", text);
                        return NULL;
                }
        }
        /* Only those time literals are folded of all calls: parsing text
         * from outside must cost time linear in its size, and a call of
         * another function, even of constants, may cost any time
         * (regexp() with a pattern that backtracks, split() of a long
         * string); it runs when evaluated, within the evaluation's
         * budget. What ca_parse_abstime / ca_parse_reltime accepted
         * converts in time linear in the literal. */
        if ((is_abs || is_rel) && n == 1 && node->u.call.fn && node->u.call.args[0]->kind == CA_N_LITERAL &&
            node->u.call.args[0]->u.lit.type == CA_STRING)
                return ca_fold(ps->arena, node, ps->mode);
        return node;
fail:
        free(args);
        return NULL;
}

/* hash: ca_atom's hash of name when the lexer computed it, else NULL. */
static CaNode *new_attr(Parser *ps, CaNode *base, const char *name, size_t len, const uint32_t *hash) {
        CaNode *n = new_node(ps, CA_N_ATTR);
        if (!n)
                return NULL;
        /* an identifier just lexed comes with its hash */
        const CaAtom *atom = hash ? ca_atom_hashed(name, len, *hash) : ca_atom(name, len);
        n->u.attr.atom = atom;
        n->u.attr.base = base;
        if (!atom) {
                fail_at(ps, ps->tstart, "out of memory");
                return NULL;
        }
        n->u.attr.spelling = ca_atom_spelled(atom, name, len);
        if (!n->u.attr.spelling && !(n->u.attr.spelling = ca_arena_strndup(ps->arena, name, len))) {
                fail_at(ps, ps->tstart, "out of memory");
                return NULL;
        }
        if (!set_depth(ps, n, base))
                return NULL;
        if (base && base->kind == CA_N_ATTR && !base->u.attr.base && !(base->flags & CA_NF_ABSOLUTE))
                n->op = base->u.attr.atom->scope;
        return n;
}

/* An attribute name after '.': identifier or 'quoted'. Keywords are names here. */
static bool take_name(Parser *ps, const char **ret, size_t *ret_len) {
        if (ps->tok == T_QNAME) {
                *ret = ps->sptr;
                *ret_len = ps->slen;
                return true;
        }
        if (ps->tok == T_IDENT || ps->tok == T_TRUE || ps->tok == T_FALSE || ps->tok == T_UNDEF ||
            ps->tok == T_ERROR || (ps->tok == T_OP && (ps->op == CA_OP_IS || ps->op == CA_OP_ISNT))) {
                if (ps->tok != T_IDENT) {
                        fail_at(ps, ps->tstart, "reserved word used as attribute name (quote it: 'name')");
                        return false;
                }
                *ret = ps->tstart;
                *ret_len = (size_t) (ps->p - ps->tstart);
                return true;
        }
        fail_at(ps, ps->tstart, "expected an attribute name");
        return false;
}

static CaNode *parse_primary(Parser *ps) {
        CaNode *n = NULL;
        switch (ps->tok) {
        case T_INT:
                n = new_literal(ps, ca_int(ps->ival));
                next(ps);
                return n;
        case T_REAL:
                n = new_literal(ps, ca_real(ps->rval));
                next(ps);
                return n;
        case T_TRUE:
        case T_FALSE:
                n = new_literal(ps, ca_bool(ps->tok == T_TRUE));
                next(ps);
                return n;
        case T_UNDEF:
                n = new_literal(ps, ca_undefined());
                next(ps);
                return n;
        case T_ERROR:
                n = new_literal(ps, ca_error());
                next(ps);
                return n;
        case T_STRING: {
                const char *start = ps->tstart;
                CaStr *s;
                if (ps->sptr != ps->sbuf.p) {
                        /* written without escapes: straight from the text, unless
                         * another literal follows */
                        const char *text = ps->sptr;
                        size_t len = ps->slen;
                        next(ps);
                        if (ps->tok != T_STRING) {
                                s = ca_arena_str(ps->arena, text, len);
                                if (!s) {
                                        fail_at(ps, start, "out of memory");
                                        return NULL;
                                }
                                return new_literal(ps, ca_string_take(s));
                        }
                        ps->p = ps->tstart = start; /* concatenation: read them again */
                        next(ps);
                }
                /* adjacent string literals are one string */
                CaBuf all = {};
                while (ps->tok == T_STRING) {
                        ca_buf_putn(&all, ps->sptr ? ps->sptr : "", ps->slen);
                        next(ps);
                }
                s = all.oom ? NULL : ca_arena_str(ps->arena, all.p ? all.p : "", all.len);
                ca_buf_free(&all);
                if (!s) {
                        fail_at(ps, start, "out of memory");
                        return NULL;
                }
                return new_literal(ps, ca_string_take(s));
        }
        case T_IDENT: {
                const char *name = ps->tstart;
                size_t len = (size_t) (ps->p - ps->tstart);
                uint32_t hash = ps->hash;
                next(ps);
                if (ps->tok == T_LPAREN) {
                        next(ps);
                        return parse_call(ps, name, len);
                }
                return new_attr(ps, NULL, name, len, &hash);
        }
        case T_QNAME: {
                n = new_attr(ps, NULL, ps->sptr, ps->slen, NULL);
                next(ps);
                return n;
        }
        case T_DOT: {
                next(ps);
                const char *name;
                size_t len;
                if (!take_name(ps, &name, &len))
                        return NULL;
                n = new_attr(ps, NULL, name, len, ps->tok == T_IDENT ? &ps->hash : NULL);
                if (n)
                        n->flags |= CA_NF_ABSOLUTE;
                next(ps);
                return n;
        }
        case T_LPAREN: {
                next(ps);
                CaNode *e = parse_expr(ps);
                if (!e || !expect(ps, T_RPAREN, "')'"))
                        return NULL;
                return new_op(ps, CA_OP_PAREN, e, NULL, NULL);
        }
        case T_LBRACE:
                next(ps);
                return parse_list(ps);
        case T_LBRACK: {
                next(ps);
                ClassAd *ad = ca_ad_new_embedded(ps->arena);
                n = new_node(ps, CA_N_AD);
                if (!ad || !n) {
                        fail_at(ps, ps->tstart, "out of memory");
                        return NULL;
                }
                n->u.ad = ad;
                if (!parse_ad_body(ps, ad))
                        return NULL;
                /* nested records inside this one see it as their parent */
                for (ClassAd *c = ps->arena->nested; c && c != ad; c = c->next_nested)
                        if (!c->parent)
                                c->parent = ad;
                if (!expect(ps, T_RBRACK, "';' or ']' in record"))
                        return NULL;
                return n;
        }
        case T_EOF:
                fail_at(ps, ps->tstart, "unexpected end of input");
                return NULL;
        case T_BAD:
                return NULL;
        default:
                fail_at(ps, ps->tstart, "unexpected '%.*s'", (int) (ps->p - ps->tstart), ps->tstart);
                return NULL;
        }
}

static CaNode *parse_unary(Parser *ps);

static CaNode *parse_postfix_of(Parser *ps, CaNode *n) {
        while (n) {
                if (ps->tok == T_ELVIS) {
                        /* "a ?: b" written as one token binds like a postfix
                         * operator, as in HTCondor's parser: 1 ?: 2 + 3 is 4 */
                        next(ps);
                        if (!enter(ps))
                                return NULL;
                        CaNode *alt = parse_unary(ps);
                        ps->depth--;
                        if (!alt)
                                return NULL;
                        n = new_op(ps, CA_OP_ELVIS, n, alt, NULL);
                        continue;
                }
                if (ps->tok == T_LBRACK) {
                        next(ps);
                        if (!enter(ps))
                                return NULL;
                        CaNode *idx = parse_expr(ps);
                        ps->depth--;
                        if (!idx || !expect(ps, T_RBRACK, "']'"))
                                return NULL;
                        n = new_op(ps, CA_OP_SUBSCRIPT, n, idx, NULL);
                } else if (ps->tok == T_DOT) {
                        if (n->kind == CA_N_LITERAL && (n->u.lit.type == CA_INT || n->u.lit.type == CA_REAL)) {
                                /* 1.a would read back as the real 1. and a name */
                                fail_at(ps, ps->tstart, "attribute selection on a number");
                                return NULL;
                        }
                        next(ps);
                        const char *name;
                        size_t len;
                        if (!take_name(ps, &name, &len))
                                return NULL;
                        n = new_attr(ps, n, name, len, ps->tok == T_IDENT ? &ps->hash : NULL);
                        next(ps);
                } else
                        break;
        }
        return n;
}

static CaNode *parse_postfix(Parser *ps) {
        return parse_postfix_of(ps, parse_primary(ps));
}

static CaNode *parse_unary(Parser *ps) {
        CaOp op;
        if (ps->tok == T_OP && (ps->op == CA_OP_SUB || ps->op == CA_OP_ADD))
                op = ps->op == CA_OP_SUB ? CA_OP_NEG : CA_OP_POS;
        else if (ps->tok == T_NOT)
                op = CA_OP_NOT;
        else if (ps->tok == T_BNOT)
                op = CA_OP_BNOT;
        else
                return parse_postfix(ps);
        next(ps);
        if (!enter(ps))
                return NULL;
        CaNode *a = parse_unary(ps);
        ps->depth--;
        if (a && op == CA_OP_NEG && a->kind == CA_N_LITERAL && (a->u.lit.type == CA_INT || a->u.lit.type == CA_REAL)) {
                /* -5 is one literal, as HTCondor's parser makes it */
                a->u.lit = a->u.lit.type == CA_INT ? ca_int((int64_t) (0 - (uint64_t) a->u.lit.u.i))
                                                   : ca_real(-a->u.lit.u.r);
                return a;
        }
        return a ? new_op(ps, op, a, NULL, NULL) : NULL;
}

static int binary_prec(CaOp op) {
        switch (op) {
        case CA_OP_OR: return 1;
        case CA_OP_AND: return 2;
        case CA_OP_BOR: return 3;
        case CA_OP_BXOR: return 4;
        case CA_OP_BAND: return 5;
        case CA_OP_EQ: case CA_OP_NE: case CA_OP_IS: case CA_OP_ISNT: return 6;
        case CA_OP_LT: case CA_OP_LE: case CA_OP_GT: case CA_OP_GE: return 7;
        case CA_OP_SHL: case CA_OP_SHR: case CA_OP_USHR: return 8;
        case CA_OP_ADD: case CA_OP_SUB: return 9;
        case CA_OP_MUL: case CA_OP_DIV: case CA_OP_MOD: return 10;
        default: return 0;
        }
}

/* Left-associative binary operators of precedence >= min_prec. */
/* lhs: an operand already read, or NULL to read one. */
static CaNode *parse_binary_from(Parser *ps, int min_prec, CaNode *lhs) {
        if (!lhs)
                lhs = parse_unary(ps);
        while (lhs && ps->tok == T_OP) {
                int prec = binary_prec(ps->op);
                if (prec < min_prec)
                        break;
                CaOp op = ps->op;
                next(ps);
                if (!enter(ps))
                        return NULL;
                CaNode *rhs = parse_binary_from(ps, prec + 1, NULL);
                ps->depth--;
                if (!rhs)
                        return NULL;
                lhs = new_op(ps, op, lhs, rhs, NULL);
        }
        return lhs;
}

static bool ends_expression(Tok t) {
        return t == T_SEMI || t == T_RBRACK || t == T_COMMA || t == T_RPAREN || t == T_RBRACE || t == T_EOF;
}

static CaNode *parse_expr(Parser *ps) {
        if (!enter(ps))
                return NULL;
        CaNode *lhs = NULL;
        if (ps->tok != T_OP && ps->tok != T_NOT && ps->tok != T_BNOT) {
                /* most values are one operand (Cpus = 4; Name = "x"): read
                 * it, and climb the precedences only if an operator follows */
                lhs = parse_postfix(ps);
                if (!lhs || ends_expression(ps->tok)) {
                        ps->depth--;
                        return lhs;
                }
        }
        CaNode *cond = parse_binary_from(ps, 1, lhs);
        if (cond && ps->tok == T_QUEST) {
                next(ps);
                if (ps->tok == T_COLON) {
                        next(ps);
                        CaNode *alt = parse_expr(ps);
                        cond = alt ? new_op(ps, CA_OP_ELVIS, cond, alt, NULL) : NULL;
                        if (cond)
                                cond->flags |= CA_NF_SPACED; /* unparsed as "a ? : b" */
                } else {
                        CaNode *yes = parse_expr(ps);
                        if (!yes || !expect(ps, T_COLON, "':' in conditional expression"))
                                cond = NULL;
                        else {
                                CaNode *no = parse_expr(ps);
                                cond = no ? new_op(ps, CA_OP_COND, cond, yes, no) : NULL;
                        }
                }
        }
        ps->depth--;
        return cond;
}

/* name = expr; the name is the current token. */
static bool parse_definition(Parser *ps, ClassAd *ad) {
        const char *name;
        size_t len;
        const CaAtom *atom;
        if (ps->tok == T_QNAME) {
                name = ps->sptr;
                len = ps->slen;
                atom = len ? ca_atom(name, len) : NULL;
        } else if (ps->tok == T_IDENT) {
                name = ps->tstart;
                len = (size_t) (ps->p - ps->tstart);
                atom = ca_atom_hashed(name, len, ps->hash);
        } else {
                fail_at(ps, ps->tstart, ps->tok == T_EOF ? "unexpected end of input, expected an attribute name"
                                                        : "expected an attribute name");
                return false;
        }
        if (len == 0) {
                fail_at(ps, ps->tstart, "empty attribute name");
                return false;
        }
        if (!atom) {
                fail_at(ps, ps->tstart, "out of memory");
                return false;
        }
        /* The spelling is in the text, except for a quoted name with
         * escapes, which is in the lexer's buffer: keep the atom's if it
         * matches, else a copy in the arena, before the buffer is reused. */
        const char *spelling = ca_atom_spelled(atom, name, len);
        size_t spelling_bytes = 0;
        if (!spelling && name == ps->sbuf.p) {
                spelling = ca_arena_strndup(ps->arena, name, len);
                spelling_bytes = len + 1;
                if (!spelling) {
                        fail_at(ps, ps->tstart, "out of memory");
                        return false;
                }
        } else if (!spelling)
                spelling = name;
        const char *name_at = ps->tstart;
        next(ps);
        if (!expect(ps, T_ASSIGN, "'=' after attribute name"))
                return false;
        size_t before = ps->arena->bytes, hint = ps->arena->hint;
        /* a chunk this overflows into holds what the rest may take (the
         * old syntax's caller, which parses line by line, sets it) */
        if (!ps->old_syntax)
                ps->arena->hint = (size_t) (ps->end - ps->p) * CA_TREE_PER_TEXT + 64;
        CaNode *e = parse_expr(ps);
        ps->arena->hint = hint;
        if (!e)
                return false;
        if (ca_ad_insert(ad, atom, spelling, len, e, ps->arena->bytes - before + spelling_bytes) < 0) {
                fail_at(ps, name_at, "out of memory");
                return false;
        }
        return true;
}

static CaNode *parse_ad_body(Parser *ps, ClassAd *ad) {
        if (!enter(ps))
                return NULL;
        while (ps->tok != T_RBRACK && !ps->failed) {
                if (ps->tok == T_SEMI) { /* empty definitions are allowed */
                        next(ps);
                        continue;
                }
                if (!parse_definition(ps, ad))
                        return NULL;
                if (ps->tok == T_SEMI)
                        next(ps);
                else if (ps->tok != T_RBRACK) {
                        fail_at(ps, ps->tstart, ps->tok == T_EOF ? "unexpected end of input, expected ']'"
                                                                : "expected ';' or ']' in record");
                        return NULL;
                }
        }
        ps->depth--;
        return ps->failed ? NULL : (CaNode *) ad; /* non-NULL marks success */
}

static bool begin(Parser *ps, CaArena *arena, const char *text, size_t len, CaMode mode, bool old_syntax,
                  CaError *err) {
        *ps = (Parser){ .text = text, .end = text + len, .p = text, .arena = arena, .mode = mode,
                        .old_syntax = old_syntax, .err = err };
        if (err)
                *err = (CaError){};
        if (len > CA_MAX_INPUT_SIZE) {
                fail_at(ps, text, "input too large (%zu bytes, at most %u)", len, CA_MAX_INPUT_SIZE);
                return false;
        }
        next(ps);
        return !ps->failed;
}

static int finish(Parser *ps, bool ok) {
        if (ok && ps->tok != T_EOF)
                fail_at(ps, ps->tstart, "unexpected '%.*s' after the end", (int) (ps->p - ps->tstart), ps->tstart);
        ca_buf_free(&ps->sbuf);
        return ps->failed ? -EINVAL : 0;
}

int ca_parse_expr(CaArena *arena, const char *text, size_t len, CaMode mode, CaNode **ret, CaError *err) {
        Parser ps;
        CaNode *n = NULL;
        if (begin(&ps, arena, text, len, mode, false, err))
                n = parse_expr(&ps);
        int r = finish(&ps, n != NULL);
        if (r < 0)
                return r;
        *ret = n;
        return 0;
}

int ca_parse_ad_into(ClassAd *ad, const char *text, size_t len, CaMode mode, CaError *err) {
        Parser ps;
        bool ok = false;
        if (begin(&ps, ad->arena, text, len, mode, false, err)) {
                if (expect(&ps, T_LBRACK, "'[' to begin a ClassAd") && parse_ad_body(&ps, ad))
                        ok = expect(&ps, T_RBRACK, "']'");
        }
        for (ClassAd *c = ad->arena->nested; c; c = c->next_nested)
                if (!c->parent)
                        c->parent = ad;
        return finish(&ps, ok);
}

int ca_parse_attr_def(ClassAd *ad, const char *text, size_t len, CaMode mode, CaError *err) {
        Parser ps;
        bool ok = false;
        if (begin(&ps, ad->arena, text, len, mode, true, err))
                ok = parse_definition(&ps, ad);
        for (ClassAd *c = ad->arena->nested; c; c = c->next_nested)
                if (!c->parent && c != ad)
                        c->parent = ad;
        return finish(&ps, ok);
}
