/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test-token.c — common/token.h: a token issued reads back as issued and
 * verifies against its signer's key; one of another pool, forged, altered
 * (another machine's name, more rights, a later expiry: each byte the
 * signature covers), expired or issued in the future is refused, each
 * with its own error; text that is not a token is refused with a reason;
 * names, ids, public keys and fingerprints.
 */
#define _GNU_SOURCE

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include <CUnit/CUnit.h>

#include "common/token.h"
#include "test-util.h"

#define T0 1800000000LL
#define B64 sodium_base64_VARIANT_URLSAFE_NO_PADDING
#define PREFIX_LEN (sizeof(GLEAN_TOKEN_PREFIX) - 1)

static GleanSigningKey pool, other;
static uint8_t holder[32];

static int suite_init(void) {
        uint8_t seed[32];
        memset(seed, 7, sizeof seed);
        if (glean_signing_key_from_seed(seed, &pool) < 0 || glean_signing_key_generate(&other) < 0)
                return 1;
        GleanSigningKey h;
        if (glean_signing_key_generate(&h) < 0)
                return 1;
        memcpy(holder, h.pk, 32);
        return 0;
}

static char *issue(const char *name, unsigned rights, int64_t issued, int64_t expires) {
        char *text = NULL, why[256] = "";
        int r = glean_token_issue(&pool, name, rights, issued, expires, holder, &text, NULL, why, sizeof why);
        GLEAN_TEST_CHECK(r == 0, "issue %s: %d (%s)", name, r, why);
        return text;
}

/* The token's bytes, and back to text. */
static size_t decode(const char *text, uint8_t *buf, size_t cap) {
        size_t n = 0;
        CU_ASSERT_EQUAL_FATAL(sodium_base642bin(buf, cap, text + PREFIX_LEN, strlen(text) - PREFIX_LEN, NULL, &n, NULL,
                                                B64),
                              0);
        return n;
}

static char *encode(const uint8_t *buf, size_t n) {
        size_t len = PREFIX_LEN + sodium_base64_encoded_len(n, B64);
        char *text = malloc(len);
        memcpy(text, GLEAN_TOKEN_PREFIX, PREFIX_LEN);
        sodium_bin2base64(text + PREFIX_LEN, len - PREFIX_LEN, buf, n, B64);
        return text;
}

static int verify_text(const char *text, const uint8_t *pinned, int64_t now, char *why, size_t whylen) {
        GleanToken t;
        int r = glean_token_parse(text, strlen(text), &t, why, whylen);
        return r < 0 ? r : glean_token_verify(&t, pinned, now, why, whylen);
}

static void test_round_trip(void) {
        char *text = issue("agent@node1.example.org", GLEAN_RIGHTS_AGENT, T0, T0 + 86400);
        CU_ASSERT_PTR_NOT_NULL_FATAL(text);
        CU_ASSERT(strncmp(text, GLEAN_TOKEN_PREFIX, PREFIX_LEN) == 0);
        CU_ASSERT(strlen(text) <= GLEAN_TOKEN_TEXT_MAX);
        GleanToken t;
        char why[256] = "";
        CU_ASSERT_EQUAL(glean_token_parse(text, strlen(text), &t, why, sizeof why), 0);
        CU_ASSERT_STRING_EQUAL(t.name, "agent@node1.example.org");
        CU_ASSERT_EQUAL(t.rights, GLEAN_RIGHTS_AGENT);
        CU_ASSERT_EQUAL(t.issued, T0);
        CU_ASSERT_EQUAL(t.expires, T0 + 86400);
        CU_ASSERT(memcmp(t.holder, holder, 32) == 0);
        CU_ASSERT_EQUAL(glean_token_verify(&t, pool.pk, T0 + 10, why, sizeof why), 0);
        /* a newline at the end (a file) reads the same */
        char *line = NULL;
        CU_ASSERT(asprintf(&line, "%s\n", text) > 0);
        CU_ASSERT_EQUAL(verify_text(line, pool.pk, T0, why, sizeof why), 0);
        free(line);
        /* two tokens of the same machine have ids of their own */
        char *again = issue("agent@node1.example.org", GLEAN_RIGHTS_AGENT, T0, T0 + 86400);
        GleanToken u;
        CU_ASSERT_EQUAL(glean_token_parse(again, strlen(again), &u, why, sizeof why), 0);
        CU_ASSERT(memcmp(t.id, u.id, sizeof t.id) != 0);
        char rights[64];
        glean_token_rights_format(GLEAN_RIGHTS_ALL, rights, sizeof rights);
        CU_ASSERT_STRING_EQUAL(rights, "advertise,run,relay,relay-admins");
        free(again);
        free(text);
}

static void test_refused(void) {
        char why[256] = "";
        char *text = issue("agent@node1.example.org", GLEAN_RIGHTS_AGENT, T0, T0 + 3600);
        CU_ASSERT_PTR_NOT_NULL_FATAL(text);

        /* another pool's key */
        int r = verify_text(text, other.pk, T0, why, sizeof why);
        GLEAN_TEST_CHECK(r == -EXDEV && strstr(why, "another pool"), "another pool: %d (%s)", r, why);
        /* expired; issued in the future; within the clock skew */
        r = verify_text(text, pool.pk, T0 + 3600, why, sizeof why);
        GLEAN_TEST_CHECK(r == -EKEYEXPIRED && strstr(why, "expired"), "expired: %d (%s)", r, why);
        r = verify_text(text, pool.pk, T0 - GLEAN_TOKEN_CLOCK_SKEW - 1, why, sizeof why);
        GLEAN_TEST_CHECK(r == -ENOTCONN && strstr(why, "future"), "future: %d (%s)", r, why);
        CU_ASSERT_EQUAL(verify_text(text, pool.pk, T0 - GLEAN_TOKEN_CLOCK_SKEW, why, sizeof why), 0);

        /* every byte the signature covers, and the signature: altered */
        uint8_t body[600];
        size_t n = decode(text, body, sizeof body);
        size_t name_at = 75, sig_at = n - 64;
        for (size_t i = 0; i < n; i++) {
                uint8_t copy[600];
                memcpy(copy, body, n);
                if (i == 0 || i == name_at - 1 || body[i] == '@')
                        continue; /* the version, the name's length, its '@': not a token at all (below) */
                if (i == 1)
                        copy[i] = GLEAN_RIGHTS_ALL; /* more rights */
                else if (i >= name_at && i < sig_at)
                        copy[i] = copy[i] == 'a' ? 'b' : 'a'; /* another machine's name */
                else
                        copy[i] ^= 0x01;
                char *forged = encode(copy, n);
                r = verify_text(forged, pool.pk, T0, why, sizeof why);
                bool signer = i >= 34 && i < 42; /* the signer id: another pool's */
                GLEAN_TEST_CHECK(r == (signer ? -EXDEV : -EKEYREJECTED), "byte %zu altered: %d (%s)", i, r, why);
                free(forged);
        }
        /* a token of another machine's name, whole and good: the caller
         * compares the name (the signature is over it) */
        char *b = issue("agent@node2.example.org", GLEAN_RIGHTS_AGENT, T0, T0 + 3600);
        GleanToken t;
        CU_ASSERT_EQUAL(glean_token_parse(b, strlen(b), &t, why, sizeof why), 0);
        CU_ASSERT_STRING_NOT_EQUAL(t.name, "agent@node1.example.org");
        free(b);
        free(text);
}

static void test_not_tokens(void) {
        char *good = issue("agent@h.example", GLEAN_RIGHTS_AGENT, T0, T0 + 60);
        CU_ASSERT_PTR_NOT_NULL_FATAL(good);
        uint8_t body[600];
        size_t n = decode(good, body, sizeof body);
        uint8_t v2[600], rights[600], longer[601];
        memcpy(v2, body, n);
        v2[0] = 2;
        memcpy(rights, body, n);
        rights[1] = 0x80;
        memcpy(longer, body, n);
        longer[n] = 0;
        char *t_v2 = encode(v2, n), *t_rights = encode(rights, n), *t_long = encode(longer, n + 1),
             *t_short = encode(body, n - 1), *t_len = NULL;
        uint8_t badlen[600];
        memcpy(badlen, body, n);
        badlen[74] = 200;
        t_len = encode(badlen, n);
        char huge[GLEAN_TOKEN_TEXT_MAX + 40];
        memset(huge, 'A', sizeof huge - 1);
        memcpy(huge, GLEAN_TOKEN_PREFIX, PREFIX_LEN);
        huge[sizeof huge - 1] = 0;
        char plus[700];
        snprintf(plus, sizeof plus, "%s+", good);
        const struct {
                const char *text, *why;
        } cases[] = {
                { "", "does not begin with" },
                { "glean-token-2.AAAA", "does not begin with" },
                { "hello", "does not begin with" },
                { plus, "not URL-safe base64" },
                { GLEAN_TOKEN_PREFIX "####", "not URL-safe base64" },
                { GLEAN_TOKEN_PREFIX "AAAA", "too short" },
                { t_v2, "version 2; this glean reads version 1" },
                { t_rights, "unknown rights" },
                { t_long, "bytes for a name of" },
                { t_short, "bytes for a name of" },
                { t_len, "bytes for a name of" },
                { huge, "more than" },
        };
        for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
                GleanToken t;
                char why[256] = "";
                int r = glean_token_parse(cases[i].text, strlen(cases[i].text), &t, why, sizeof why);
                GLEAN_TEST_CHECK(r == -EBADMSG && strstr(why, cases[i].why), "case %zu: %d (%s), want '%s'", i, r,
                                 why, cases[i].why);
        }
        free(t_v2);
        free(t_rights);
        free(t_long);
        free(t_short);
        free(t_len);
        free(good);
}

static void test_names(void) {
        const char *good[] = { "agent@node1.example.org", "a@b", "agent@10.0.0.1", "x-y@z-w.example" };
        const char *bad[] = { "", "ab", "agent", "@host", "agent@", "a@b@c", "Agent@host", "agent@host_1",
                              "agent@ho st", "agent@h\xc3\xa9" };
        for (size_t i = 0; i < sizeof good / sizeof *good; i++)
                GLEAN_TEST_CHECK(glean_token_name_valid(good[i]), "'%s' refused", good[i]);
        for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
                GLEAN_TEST_CHECK(!glean_token_name_valid(bad[i]), "'%s' taken", bad[i]);
        char long_name[300];
        memset(long_name, 'a', sizeof long_name);
        long_name[0] = 'x';
        long_name[1] = '@';
        long_name[GLEAN_TOKEN_NAME_MAX] = 0;
        CU_ASSERT_TRUE(glean_token_name_valid(long_name));
        long_name[GLEAN_TOKEN_NAME_MAX] = 'a';
        long_name[GLEAN_TOKEN_NAME_MAX + 1] = 0;
        CU_ASSERT_FALSE(glean_token_name_valid(long_name));
        /* issue refuses them, and bad rights and times */
        char *text = NULL, why[256];
        CU_ASSERT_EQUAL(glean_token_issue(&pool, "Agent@x", GLEAN_RIGHTS_AGENT, T0, T0 + 1, holder, &text, NULL, why,
                                          sizeof why),
                        -EINVAL);
        CU_ASSERT_EQUAL(glean_token_issue(&pool, "agent@x", 0, T0, T0 + 1, holder, &text, NULL, why, sizeof why),
                        -EINVAL);
        CU_ASSERT_EQUAL(glean_token_issue(&pool, "agent@x", 0x100, T0, T0 + 1, holder, &text, NULL, why, sizeof why),
                        -EINVAL);
        CU_ASSERT_EQUAL(glean_token_issue(&pool, "agent@x", GLEAN_RIGHT_RUN, T0, T0, holder, &text, NULL, why,
                                          sizeof why),
                        -EINVAL);
        /* the longest name fits the text limit */
        long_name[GLEAN_TOKEN_NAME_MAX] = 0;
        text = issue(long_name, GLEAN_RIGHTS_ALL, T0, T0 + 1);
        CU_ASSERT(text && strlen(text) <= GLEAN_TOKEN_TEXT_MAX);
        GleanToken t;
        CU_ASSERT(text && glean_token_parse(text, strlen(text), &t, why, sizeof why) == 0);
        free(text);
}

static void test_keys_and_ids(void) {
        char pk[GLEAN_PUBLIC_KEY_TEXT_LEN + 1], why[256];
        uint8_t back[32];
        glean_public_key_format(pool.pk, pk);
        CU_ASSERT(strncmp(pk, "ed25519:", 8) == 0 && strlen(pk) == GLEAN_PUBLIC_KEY_TEXT_LEN);
        CU_ASSERT_EQUAL(glean_public_key_parse(pk, strlen(pk), back, why, sizeof why), 0);
        CU_ASSERT(memcmp(back, pool.pk, 32) == 0);
        CU_ASSERT_EQUAL(glean_public_key_parse("ed25519:00", 10, back, why, sizeof why), -EBADMSG);
        char zeros[GLEAN_PUBLIC_KEY_TEXT_LEN + 1] = "ed25519:";
        memset(zeros + 8, '0', 64);
        zeros[GLEAN_PUBLIC_KEY_TEXT_LEN] = 0;
        CU_ASSERT_EQUAL(glean_public_key_parse(zeros, strlen(zeros), back, why, sizeof why), -EBADMSG);
        pk[20] = 'x';
        CU_ASSERT_EQUAL(glean_public_key_parse(pk, strlen(pk), back, why, sizeof why), -EBADMSG);

        /* the same seed, the same key; fingerprints differ between keys */
        uint8_t seed[32];
        memset(seed, 7, sizeof seed);
        GleanSigningKey again;
        CU_ASSERT_EQUAL(glean_signing_key_from_seed(seed, &again), 0);
        CU_ASSERT(memcmp(again.pk, pool.pk, 32) == 0);
        char f1[GLEAN_SIGNING_FINGERPRINT_LEN + 8], f2[GLEAN_SIGNING_FINGERPRINT_LEN + 8];
        glean_signing_key_fingerprint(pool.pk, f1);
        glean_signing_key_fingerprint(other.pk, f2);
        CU_ASSERT_EQUAL(strlen(f1), 39);
        CU_ASSERT(f1[4] == ':' && f1[34] == ':');
        CU_ASSERT_STRING_NOT_EQUAL(f1, f2);
        glean_signing_key_clear(&again);
        CU_ASSERT(sodium_is_zero(again.sk, sizeof again.sk));

        uint8_t id[GLEAN_TOKEN_ID_SIZE], id2[GLEAN_TOKEN_ID_SIZE];
        char hex[2 * GLEAN_TOKEN_ID_SIZE + 1];
        randombytes_buf(id, sizeof id);
        glean_token_id_format(id, hex);
        CU_ASSERT_EQUAL(glean_token_id_parse(hex, id2), 0);
        CU_ASSERT(memcmp(id, id2, sizeof id) == 0);
        CU_ASSERT_EQUAL(glean_token_id_parse("1234", id2), -EBADMSG);
        hex[3] = 'g';
        CU_ASSERT_EQUAL(glean_token_id_parse(hex, id2), -EBADMSG);
}

static void test_registry(void) {
        GleanTokenRegistry reg = {}, back = {};
        char why[256] = "";
        GleanToken a, b;
        char *ta = NULL, *tb = NULL;
        CU_ASSERT_EQUAL_FATAL(glean_token_issue(&pool, "agent@a.example", GLEAN_RIGHTS_AGENT, T0, T0 + 60, holder, &ta,
                                                &a, why, sizeof why),
                              0);
        CU_ASSERT_EQUAL_FATAL(glean_token_issue(&pool, "agent@b.example", GLEAN_RIGHTS_ALL, T0, T0 + 60, holder, &tb, &b,
                                                why, sizeof why),
                              0);
        CU_ASSERT_EQUAL(glean_token_registry_add(&reg, &a), 0);
        CU_ASSERT_EQUAL(glean_token_registry_add(&reg, &b), 0);
        CU_ASSERT_EQUAL(glean_token_registry_add(&reg, &a), -EEXIST);
        glean_token_registry_find(&reg, b.id)->revoked = T0 + 5;
        char *text = glean_token_registry_format(&reg);
        CU_ASSERT_PTR_NOT_NULL_FATAL(text);
        CU_ASSERT_EQUAL(glean_token_registry_parse(text, strlen(text), "tokens", &back, why, sizeof why), 0);
        CU_ASSERT_EQUAL(back.n, 2);
        GleanTokenRecord *rb = glean_token_registry_find(&back, b.id);
        CU_ASSERT(rb && rb->revoked == T0 + 5 && rb->rights == GLEAN_RIGHTS_ALL && strcmp(rb->name, b.name) == 0);
        GleanTokenRecord *ra = glean_token_registry_find(&back, a.id);
        CU_ASSERT(ra && ra->revoked == 0 && ra->issued == T0 && ra->expires == T0 + 60);
        free(text);
        glean_token_registry_clear(&back);

        static const char id[] = "00112233445566778899aabbccddeeff";
        const struct {
                const char *line, *why;
        } bad[] = {
                { "0011 agent@a.b run 1 2 -", "the id is not 32 hexadecimal digits" },
                { "00112233445566778899aabbccddeeff Agent@a.b run 1 2 -", "not a token's name" },
                { "00112233445566778899aabbccddeeff agent@a.b fly 1 2 -", "the rights are not" },
                { "00112233445566778899aabbccddeeff agent@a.b run,run 1 2 -", "the rights are not" },
                { "00112233445566778899aabbccddeeff agent@a.b run, 1 2 -", "the rights are not" },
                { "00112233445566778899aabbccddeeff agent@a.b run 2 1 -", "expires after issued" },
                { "00112233445566778899aabbccddeeff agent@a.b run x 1 -", "expires after issued" },
                { "00112233445566778899aabbccddeeff agent@a.b run 1 2 yes", "revoked is neither" },
                { "00112233445566778899aabbccddeeff agent@a.b run 1 2", "want 6 fields" },
                { "00112233445566778899aabbccddeeff agent@a.b run 1 2 - x", "more than 6 fields" },
        };
        for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
                char file[512];
                snprintf(file, sizeof file, "# comment\n%s agent@ok.x run 1 2 -\n%s\n", id, bad[i].line);
                GleanTokenRegistry r = {};
                int k = glean_token_registry_parse(file, strlen(file), "/var/lib/glean/tokens", &r, why, sizeof why);
                GLEAN_TEST_CHECK(k == -EBADMSG && strstr(why, "/var/lib/glean/tokens:3: ") && strstr(why, bad[i].why),
                                 "line '%s': %d (%s)", bad[i].line, k, why);
                glean_token_registry_clear(&r);
        }
        char twice[256];
        snprintf(twice, sizeof twice, "%s agent@a.b run 1 2 -\n%s agent@c.d run 1 2 -\n", id, id);
        CU_ASSERT_EQUAL(glean_token_registry_parse(twice, strlen(twice), "t", &back, why, sizeof why), -EBADMSG);
        CU_ASSERT_PTR_NOT_NULL(strstr(why, "t:2: a token id twice"));
        unsigned rights = 0;
        CU_ASSERT(glean_token_rights_parse("relay-admins,run", &rights) == 0 &&
                  rights == (GLEAN_RIGHT_RELAY_ADMINS | GLEAN_RIGHT_RUN));
        CU_ASSERT_EQUAL(glean_token_rights_parse("", &rights), -EBADMSG);
        glean_token_registry_clear(&reg);
        free(ta);
        free(tb);
}

static CU_TestInfo tests[] = {
        { "the registry of tokens issued: written, read back, lines refused with file:line", test_registry },
        { "issued, read back and verified", test_round_trip },
        { "another pool's, forged, altered, expired, from the future: refused", test_refused },
        { "what is not a token is refused with a reason", test_not_tokens },
        { "machine names", test_names },
        { "public keys, fingerprints, ids", test_keys_and_ids },
        CU_TEST_INFO_NULL,
};

static CU_SuiteInfo suites[] = {
        { "token", suite_init, NULL, NULL, NULL, tests },
        CU_SUITE_INFO_NULL,
};

int main(int argc, char **argv) {
        return glean_test_main(argc, argv, suites);
}
