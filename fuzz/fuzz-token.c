/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz-token — libFuzzer target for the machine tokens' reader
 * (common/token.h), what a central manager reads from every machine that
 * connects.
 *
 * Input: the text of a token. glean_token_parse() must accept it or say
 * why; an accepted one must hold a valid machine name, signed bytes of
 * the size its name gives, and verify against a fixed key (which it never
 * does unless the input is a token that key signed: none of the corpus)
 * without crashing; the same text with its signature's last byte changed
 * must not verify either. glean_public_key_parse() and
 * glean_token_id_parse() read the same bytes too, and so does the reader
 * of the token registry: what it accepts must format and read back to
 * the same records.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "token.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static _Noreturn void fail(const char *what, const char *detail) {
        fprintf(stderr, "FUZZ-TOKEN FAILURE: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        static GleanSigningKey key;
        static int ready;
        GleanToken t;
        char why[256] = "";
        uint8_t pk[32], id[GLEAN_TOKEN_ID_SIZE];

        if (!ready) {
                uint8_t seed[32];
                memset(seed, 42, sizeof seed);
                if (glean_signing_key_from_seed(seed, &key) < 0)
                        fail("no signing key", NULL);
                ready = 1;
        }
        if (size > 4096)
                return 0;
        const char *text = (const char *) data;
        int r = glean_token_parse(text, size, &t, why, sizeof why);
        if (r < 0) {
                if (r != -EBADMSG || !why[0])
                        fail("a refusal without -EBADMSG and a reason", why);
        } else {
                if (!glean_token_name_valid(t.name))
                        fail("an accepted token with a bad name", t.name);
                if (t.signed_len != 75 + strlen(t.name))
                        fail("signed bytes of the wrong size", t.name);
                if (t.rights == 0 || (t.rights & ~(unsigned) GLEAN_RIGHTS_ALL))
                        fail("an accepted token with unknown rights", t.name);
                r = glean_token_verify(&t, key.pk, t.issued, why, sizeof why);
                if (r == 0 && t.expires > t.issued) {
                        t.sig[63] ^= 1;
                        if (glean_token_verify(&t, key.pk, t.issued, why, sizeof why) == 0)
                                fail("an altered signature verifies", t.name);
                } else if (r == 0)
                        fail("a token that expires when issued verifies", t.name);
                else if (!why[0])
                        fail("a refusal without a reason", NULL);
        }
        why[0] = 0;
        if (glean_public_key_parse(text, size, pk, why, sizeof why) < 0 && !why[0])
                fail("a public key refused without a reason", NULL);
        /* the same bytes as a token registry: what it reads, it writes and reads again alike */
        GleanTokenRegistry reg = {}, again = {};
        if (glean_token_registry_parse(text, size, "tokens", &reg, why, sizeof why) == 0) {
                char *out = glean_token_registry_format(&reg);
                if (!out)
                        fail("the registry does not format", NULL);
                if (glean_token_registry_parse(out, strlen(out), "tokens", &again, why, sizeof why) < 0)
                        fail("a formatted registry does not read again", why);
                if (again.n != reg.n)
                        fail("a registry's records changed in a round trip", NULL);
                for (size_t i = 0; i < reg.n; i++)
                        if (memcmp(&reg.rec[i], &again.rec[i], sizeof reg.rec[i]) != 0)
                                fail("a registry record changed in a round trip", reg.rec[i].name);
                free(out);
        } else if (!why[0])
                fail("a registry refused without a reason", NULL);
        glean_token_registry_clear(&reg);
        glean_token_registry_clear(&again);
        char *z = malloc(size + 1);
        if (!z)
                return 0;
        memcpy(z, data, size);
        z[size] = 0;
        (void) glean_token_id_parse(z, id);
        free(z);
        return 0;
}
