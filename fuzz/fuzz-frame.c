/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz-frame — libFuzzer target for the wire protocol's reader side
 * (common/proto.h): the frame reader and glean_msg_parse() on every frame.
 *
 * Input: the first byte selects how the rest, a byte stream as it would
 * arrive on a connection, is fed to the reader:
 *
 *   0          all at once
 *   1..255     in chunks of (byte % 64) + 1 bytes, frames taken out after
 *              every feed
 *
 * The stream is also always fed all at once to a second reader; both must
 * give the same frames and end the same way (0: waiting for more, or the
 * same error), or the target aborts. The reader limit is 64 KiB so that
 * declared lengths above it (-EMSGSIZE) are reachable.
 *
 * Every frame goes to glean_msg_parse(). A refused one must come with a
 * reason and leave the outputs untouched, and glean_msg_reply_invalid()
 * must build a valid Reply for it. An accepted one must survive a round
 * trip: unparsed, parsed again, the same command; its Reply must validate;
 * its nested ads (JobAd, SlotAd) and lists of ads (Slots) must extract.
 */

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto.h"

#define FUZZ_MAX_FRAME (64u * 1024u)
#define FUZZ_MAX_FRAMES 64

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static _Noreturn void fail(const char *what, const char *detail) {
        fprintf(stderr, "FUZZ-FRAME FAILURE: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
        abort();
}

static void check_valid(const ClassAd *ad, GleanCommand cmd) {
        ClassAd *again = NULL, *reply = NULL, *nested = NULL, **list = NULL;
        GleanCommand cmd2 = GLEAN_CMD__MAX;
        char why[256] = "";
        size_t n = 0;
        char *text;

        if (!glean_command_name(cmd))
                fail("accepted message with a command out of range", NULL);

        text = classad_unparse(ad);
        if (!text)
                fail("classad_unparse() returned NULL", NULL);
        if (glean_msg_parse(text, strlen(text), &again, &cmd2, why, sizeof(why)) < 0)
                fail("an accepted message does not parse again", why);
        if (cmd2 != cmd)
                fail("the command changed in a round trip", text);
        free(text);
        classad_free(again);

        if (glean_msg_reply(ad, cmd != GLEAN_CMD_STATUS, "fuzz", &reply) < 0)
                fail("glean_msg_reply() failed", NULL);
        if (glean_msg_validate(reply, &cmd2, why, sizeof(why)) < 0 || cmd2 != GLEAN_CMD_REPLY)
                fail("a reply does not validate", why);
        classad_free(reply);

        static const char *const ads[] = { "JobAd", "SlotAd" };
        for (size_t i = 0; i < sizeof(ads) / sizeof(ads[0]); i++) {
                int r = glean_msg_get_ad(ad, ads[i], &nested);
                if (r == 0) {
                        classad_free(nested);
                        nested = NULL;
                } else if (r != -ENOENT && r != -EINVAL)
                        fail("glean_msg_get_ad() failed", ads[i]);
                /* required ads of accepted messages are there */
                if (r != 0 && ((cmd == GLEAN_CMD_SLOT_UPDATE && i == 1) ||
                               ((cmd == GLEAN_CMD_REQUEST_CLAIM || cmd == GLEAN_CMD_ACTIVATE_CLAIM) && i == 0)))
                        fail("a validated message's nested ad does not extract", ads[i]);
        }
        int r = glean_msg_get_ad_list(ad, "Slots", &list, &n);
        if (r == 0)
                glean_ad_list_free(list, n);
        else if (cmd == GLEAN_CMD_REPLY && r == -EINVAL)
                fail("a validated Reply's Slots do not extract", NULL);
}

static void check_frame(const char *payload, size_t len) {
        ClassAd *ad = NULL, *reply = NULL;
        GleanCommand cmd = GLEAN_CMD__MAX;
        char why[256] = "";
        int r;

        r = glean_msg_parse(payload, len, &ad, &cmd, why, sizeof(why));
        if (r == -ENOMEM)
                return;
        if (r < 0) {
                if (r != -EBADMSG)
                        fail("glean_msg_parse() returned neither 0 nor -EBADMSG", why);
                if (!why[0])
                        fail("refused without a reason", NULL);
                if (ad || cmd != GLEAN_CMD__MAX)
                        fail("outputs set on failure", why);
                if (glean_msg_reply_invalid(payload, len, why, &reply) < 0)
                        fail("glean_msg_reply_invalid() failed", why);
                if (glean_msg_validate(reply, NULL, why, sizeof(why)) < 0)
                        fail("a reply to an invalid message does not validate", why);
                classad_free(reply);
                return;
        }
        if (!ad)
                fail("accepted without an ad", NULL);
        check_valid(ad, cmd);
        classad_free(ad);
}

typedef struct Frame {
        char *payload;
        size_t len;
} Frame;

/* Drains r into frames[]; returns the reader's final status. */
static int drain(GleanFrameReader *r, Frame *frames, size_t *n) {
        for (;;) {
                char *p = NULL;
                size_t len = 0;
                int k = glean_frame_reader_next(r, &p, &len);
                if (k <= 0)
                        return k;
                if (!p || len == 0 || len > FUZZ_MAX_FRAME || p[len] != '\0')
                        fail("a frame out of bounds", NULL);
                if (*n < FUZZ_MAX_FRAMES)
                        frames[(*n)++] = (Frame){ p, len };
                else
                        free(p);
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        static Frame whole[FUZZ_MAX_FRAMES], chunked[FUZZ_MAX_FRAMES];
        GleanFrameReader *a = NULL, *b = NULL;
        size_t na = 0, nb = 0, chunk;
        int ra, rb = 0;

        if (size < 1)
                return 0;
        chunk = data[0] ? (size_t) (data[0] % 64) + 1 : size;
        data++;
        size--;

        if (glean_frame_reader_new(FUZZ_MAX_FRAME, &a) < 0 || glean_frame_reader_new(FUZZ_MAX_FRAME, &b) < 0)
                fail("glean_frame_reader_new() failed", NULL);

        if (glean_frame_reader_feed(a, data, size) < 0)
                fail("feed failed", NULL);
        ra = drain(a, whole, &na);

        for (size_t off = 0; off < size && rb == 0; off += chunk) {
                size_t k = size - off < chunk ? size - off : chunk;
                if (glean_frame_reader_feed(b, data + off, k) < 0)
                        fail("feed failed", NULL);
                rb = drain(b, chunked, &nb);
        }
        if (size == 0)
                rb = drain(b, chunked, &nb);

        if (ra != rb || na != nb)
                fail("feeding in chunks changed the outcome", NULL);
        for (size_t i = 0; i < na; i++)
                if (whole[i].len != chunked[i].len || memcmp(whole[i].payload, chunked[i].payload, whole[i].len) != 0)
                        fail("feeding in chunks changed a frame", NULL);
        if (ra == 0 && glean_frame_reader_buffered(a) >= 4 + FUZZ_MAX_FRAME)
                fail("a whole frame stayed buffered", NULL);

        for (size_t i = 0; i < na; i++)
                check_frame(whole[i].payload, whole[i].len);

        for (size_t i = 0; i < na; i++)
                free(whole[i].payload);
        for (size_t i = 0; i < nb; i++)
                free(chunked[i].payload);
        glean_frame_reader_free(a);
        glean_frame_reader_free(b);
        return 0;
}
