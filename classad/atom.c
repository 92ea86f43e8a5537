/* SPDX-License-Identifier: Apache-2.0 */
/* atom.c — attribute names interned once, compared by pointer. */
#include "classad-internal.h"

#include <stdlib.h>

static struct {
        const CaAtom **slots;
        uint32_t mask, count;
        const CaAtom *wk[_CA_WK_MAX];
} table;

const unsigned char ca_lower[256] = {
#define R(x) [x] = (x)
#define L(x) [x] = (x) | 0x20
        R(0), R(1), R(2), R(3), R(4), R(5), R(6), R(7), R(8), R(9), R(10), R(11), R(12), R(13), R(14), R(15),
        R(16), R(17), R(18), R(19), R(20), R(21), R(22), R(23), R(24), R(25), R(26), R(27), R(28), R(29), R(30), R(31),
        R(32), R(33), R(34), R(35), R(36), R(37), R(38), R(39), R(40), R(41), R(42), R(43), R(44), R(45), R(46), R(47),
        R(48), R(49), R(50), R(51), R(52), R(53), R(54), R(55), R(56), R(57), R(58), R(59), R(60), R(61), R(62), R(63),
        R(64), L(65), L(66), L(67), L(68), L(69), L(70), L(71), L(72), L(73), L(74), L(75), L(76), L(77), L(78), L(79),
        L(80), L(81), L(82), L(83), L(84), L(85), L(86), L(87), L(88), L(89), L(90), R(91), R(92), R(93), R(94), R(95),
        R(96), R(97), R(98), R(99), R(100), R(101), R(102), R(103), R(104), R(105), R(106), R(107), R(108), R(109),
        R(110), R(111), R(112), R(113), R(114), R(115), R(116), R(117), R(118), R(119), R(120), R(121), R(122),
        R(123), R(124), R(125), R(126), R(127), R(128), R(129), R(130), R(131), R(132), R(133), R(134), R(135),
        R(136), R(137), R(138), R(139), R(140), R(141), R(142), R(143), R(144), R(145), R(146), R(147), R(148),
        R(149), R(150), R(151), R(152), R(153), R(154), R(155), R(156), R(157), R(158), R(159), R(160), R(161),
        R(162), R(163), R(164), R(165), R(166), R(167), R(168), R(169), R(170), R(171), R(172), R(173), R(174),
        R(175), R(176), R(177), R(178), R(179), R(180), R(181), R(182), R(183), R(184), R(185), R(186), R(187),
        R(188), R(189), R(190), R(191), R(192), R(193), R(194), R(195), R(196), R(197), R(198), R(199), R(200),
        R(201), R(202), R(203), R(204), R(205), R(206), R(207), R(208), R(209), R(210), R(211), R(212), R(213),
        R(214), R(215), R(216), R(217), R(218), R(219), R(220), R(221), R(222), R(223), R(224), R(225), R(226),
        R(227), R(228), R(229), R(230), R(231), R(232), R(233), R(234), R(235), R(236), R(237), R(238), R(239),
        R(240), R(241), R(242), R(243), R(244), R(245), R(246), R(247), R(248), R(249), R(250), R(251), R(252),
        R(253), R(254), R(255),
#undef R
#undef L
};

static uint32_t name_hash(const char *s, size_t n) {
        uint32_t h = CA_HASH_INIT;
        for (size_t i = 0; i < n; i++)
                h = ca_hash_step(h, (unsigned char) s[i]);
        return h;
}

static bool name_eq(const CaAtom *a, const char *s, size_t n) {
        if (a->len != n)
                return false;
        for (size_t i = 0; i < n; i++)
                if ((unsigned char) a->name[i] != ca_lower[(unsigned char) s[i]])
                        return false;
        return true;
}

static uint8_t scope_of(const char *lname, size_t n) {
        static const struct {
                const char *name;
                CaScope scope;
        } scopes[] = {
                { "self", CA_SCOPE_SELF },     { "my", CA_SCOPE_MY },         { "target", CA_SCOPE_TARGET },
                { "other", CA_SCOPE_TARGET },  { "left", CA_SCOPE_LEFT },     { "right", CA_SCOPE_RIGHT },
                { "parent", CA_SCOPE_PARENT }, { "root", CA_SCOPE_ROOT },     { "toplevel", CA_SCOPE_ROOT },
        };
        for (size_t i = 0; i < ELEMENTSOF(scopes); i++)
                if (strlen(scopes[i].name) == n && memcmp(scopes[i].name, lname, n) == 0)
                        return (uint8_t) scopes[i].scope;
        return CA_SCOPE_NONE;
}

static const CaAtom **find_slot(const char *s, size_t n, uint32_t h) {
        if (!table.slots)
                return NULL;
        for (uint32_t i = h & table.mask;; i = (i + 1) & table.mask) {
                const CaAtom **slot = &table.slots[i];
                if (!*slot || ((*slot)->hash == h && name_eq(*slot, s, n)))
                        return slot;
        }
}

static int grow(void) {
        uint32_t size = table.slots ? (table.mask + 1) * 2 : 1024;
        const CaAtom **slots = calloc(size, sizeof *slots);
        if (!slots)
                return -ENOMEM;
        for (uint32_t i = 0; table.slots && i <= table.mask; i++) {
                const CaAtom *a = table.slots[i];
                if (!a)
                        continue;
                uint32_t j = a->hash & (size - 1);
                while (slots[j])
                        j = (j + 1) & (size - 1);
                slots[j] = a;
        }
        free(table.slots);
        table.slots = slots;
        table.mask = size - 1;
        return 0;
}

const CaAtom *ca_atom_find(const char *name, size_t len) {
        const CaAtom **slot = find_slot(name, len, name_hash(name, len));
        return slot ? *slot : NULL;
}

const CaAtom *ca_atom(const char *name, size_t len) {
        return ca_atom_hashed(name, len, name_hash(name, len));
}

const CaAtom *ca_atom_hashed(const char *name, size_t len, uint32_t h) {
        const CaAtom **slot = find_slot(name, len, h);
        if (slot && *slot)
                return *slot;
        if (len > UINT32_MAX / 4)
                return NULL;
        if (!table.slots || (table.count + 1) * 2 > table.mask + 1) {
                if (grow() < 0)
                        return NULL;
        }
        slot = find_slot(name, len, h);
        CaAtom *a = malloc(sizeof(CaAtom) + 2 * len + 2);
        if (!a)
                return NULL;
        a->id = ++table.count;
        a->hash = h;
        a->len = (uint32_t) len;
        for (size_t i = 0; i < len; i++)
                a->name[i] = (char) ca_lower[(unsigned char) name[i]];
        a->name[len] = 0;
        char *spelling = a->name + len + 1;
        memcpy(spelling, name, len);
        spelling[len] = 0;
        a->spelling = spelling;
        a->scope = scope_of(a->name, len);
        *slot = a;
        return a;
}

const CaAtom *ca_atom_wk(CaWellKnown w) {
        static const char *const names[_CA_WK_MAX] = {
                [CA_WK_REQUIREMENTS] = "Requirements",
                [CA_WK_RANK] = "Rank",
                [CA_WK_CURRENTTIME] = "CurrentTime",
        };
        if (!table.wk[w])
                table.wk[w] = ca_atom(names[w], strlen(names[w]));
        return table.wk[w];
}
