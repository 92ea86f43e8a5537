/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sum.c — the SHA-256 of a file's bytes (xfer-internal.h, XferSum):
 * with the CPU's SHA extensions when it has them (x86-64 SHA-NI: about
 * five times libsodium's portable code, which is what bounded a big
 * file's transfer), else libsodium's crypto_hash_sha256. Both give the
 * same digest; the tests check them against each other.
 */
#define _GNU_SOURCE

#include <string.h>

#include <sodium.h>

#include "xfer-internal.h"

#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>

static const uint32_t K[64] = {
        0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
        0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
        0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
        0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
        0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
        0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
        0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
        0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

/* n 64-byte blocks into state (a..h). The message schedule: for words t
 * of group i (4 words), W = sigma1 + W[t-7] + sigma0 + W[t-16], which
 * sha256msg1 (W[t-16] + sigma0), the 4-byte alignr (W[t-7..t-4]) and
 * sha256msg2 (sigma1 of the two before) build. */
__attribute__((target("sha,sse4.1,ssse3"))) static void blocks_ni(uint32_t state[8], const uint8_t *p, size_t n) {
        const __m128i mask = _mm_set_epi64x(0x0c0d0e0f08090a0bll, 0x0405060700010203ll);
        __m128i tmp = _mm_shuffle_epi32(_mm_loadu_si128((const __m128i *) &state[0]), 0xB1); /* CDAB */
        __m128i s1 = _mm_shuffle_epi32(_mm_loadu_si128((const __m128i *) &state[4]), 0x1B);  /* EFGH */
        __m128i s0 = _mm_alignr_epi8(tmp, s1, 8);                                              /* ABEF */
        s1 = _mm_blend_epi16(s1, tmp, 0xF0);                                                   /* CDGH */

        for (; n > 0; n--, p += 64) {
                __m128i save0 = s0, save1 = s1, m[16];
                for (int i = 0; i < 16; i++) {
                        if (i < 4)
                                m[i] = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *) (p + 16 * i)), mask);
                        else
                                m[i] = _mm_sha256msg2_epu32(
                                        _mm_add_epi32(_mm_sha256msg1_epu32(m[i - 4], m[i - 3]),
                                                      _mm_alignr_epi8(m[i - 1], m[i - 2], 4)),
                                        m[i - 1]);
                        __m128i w = _mm_add_epi32(m[i], _mm_loadu_si128((const __m128i *) &K[4 * i]));
                        s1 = _mm_sha256rnds2_epu32(s1, s0, w);
                        s0 = _mm_sha256rnds2_epu32(s0, s1, _mm_shuffle_epi32(w, 0x0E));
                }
                s0 = _mm_add_epi32(s0, save0);
                s1 = _mm_add_epi32(s1, save1);
        }
        tmp = _mm_shuffle_epi32(s0, 0x1B);            /* FEBA */
        s1 = _mm_shuffle_epi32(s1, 0xB1);             /* DCHG */
        s0 = _mm_blend_epi16(tmp, s1, 0xF0);          /* DCBA */
        s1 = _mm_alignr_epi8(s1, tmp, 8);             /* HGFE */
        _mm_storeu_si128((__m128i *) &state[0], s0);
        _mm_storeu_si128((__m128i *) &state[4], s1);
}

static bool have_ni(void) {
        static int known = -1;
        if (known < 0) {
                unsigned a, b, c, d;
                known = __get_cpuid_count(7, 0, &a, &b, &c, &d) && (b & (1u << 29)) && __get_cpuid(1, &a, &b, &c, &d) &&
                        (c & (1u << 19)) && (c & (1u << 9));
        }
        return known;
}
#else
static bool have_ni(void) {
        return false;
}
static void blocks_ni(uint32_t state[8], const uint8_t *p, size_t n) {
        (void) state, (void) p, (void) n;
}
#endif

void xfer_sum_init(XferSum *s, bool portable) {
        static const uint32_t iv[8] = { 0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                        0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19 };
        memset(s, 0, sizeof *s);
        s->ni = !portable && have_ni();
        if (s->ni)
                memcpy(s->state, iv, sizeof iv);
        else
                crypto_hash_sha256_init(&s->sodium);
}

void xfer_sum_update(XferSum *s, const void *data, size_t n) {
        const uint8_t *p = data;

        if (!s->ni) {
                crypto_hash_sha256_update(&s->sodium, p, n);
                return;
        }
        s->total += n;
        if (s->buffered) {
                size_t k = 64 - s->buffered < n ? 64 - s->buffered : n;
                memcpy(s->buf + s->buffered, p, k);
                s->buffered += k;
                p += k;
                n -= k;
                if (s->buffered < 64)
                        return;
                blocks_ni(s->state, s->buf, 1);
                s->buffered = 0;
        }
        if (n >= 64) {
                blocks_ni(s->state, p, n / 64);
                p += n - n % 64;
                n %= 64;
        }
        memcpy(s->buf, p, n);
        s->buffered = n;
}

void xfer_sum_final(XferSum *s, uint8_t out[32]) {
        if (!s->ni) {
                crypto_hash_sha256_final(&s->sodium, out);
                return;
        }
        uint64_t bits = s->total * 8;
        uint8_t pad[72] = { 0x80 };
        size_t padlen = s->buffered < 56 ? 56 - s->buffered : 120 - s->buffered;
        for (int i = 0; i < 8; i++)
                pad[padlen + i] = (uint8_t) (bits >> (56 - 8 * i));
        uint64_t total = s->total;
        xfer_sum_update(s, pad, padlen + 8);
        s->total = total;
        for (int i = 0; i < 8; i++) {
                out[4 * i] = (uint8_t) (s->state[i] >> 24);
                out[4 * i + 1] = (uint8_t) (s->state[i] >> 16);
                out[4 * i + 2] = (uint8_t) (s->state[i] >> 8);
                out[4 * i + 3] = (uint8_t) s->state[i];
        }
}
