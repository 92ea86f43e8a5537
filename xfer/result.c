/* SPDX-License-Identifier: Apache-2.0 */
/*
 * result.c — a session's result as a one-line ClassAd and back (the
 * session child's report to its agent), and xfer_fail().
 */
#define _GNU_SOURCE

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/proto.h"
#include "xfer-internal.h"

int xfer_fail(XferResult *res, int error, int hold, const char *fmt, ...) {
        va_list ap;

        res->error = error;
        res->hold_code = hold;
        res->hold_subcode = error < 0 ? -error : 0;
        va_start(ap, fmt);
        vsnprintf(res->reason, sizeof res->reason, fmt, ap);
        va_end(ap);
        return error;
}

char *xfer_result_to_text(const XferResult *res) {
        ClassAd *ad = NULL;
        char *text = NULL;

        if (!res || classad_new(&ad) < 0)
                return NULL;
        if (classad_set_int(ad, "Error", res->error) >= 0 && classad_set_int(ad, "HoldReasonCode", res->hold_code) >= 0 &&
            classad_set_int(ad, "HoldReasonSubCode", res->hold_subcode) >= 0 &&
            classad_set_string(ad, "Reason", res->reason) >= 0 &&
            classad_set_int(ad, "BytesSent", (int64_t) res->bytes_sent) >= 0 &&
            classad_set_int(ad, "BytesRecvd", (int64_t) res->bytes_received) >= 0 &&
            classad_set_int(ad, "Files", (int64_t) res->files) >= 0)
                text = classad_unparse(ad);
        classad_free(ad);
        return text;
}

static int64_t get_int(const ClassAd *ad, const char *name) {
        int64_t v = 0;

        (void) classad_eval_int(ad, name, GLEAN_CA_MODE, &v);
        return v;
}

int xfer_result_from_text(const char *text, size_t len, XferResult *ret) {
        ClassAd *ad = NULL;
        CaError err;
        char *reason = NULL;
        int64_t e;

        if (!text || !ret)
                return -EINVAL;
        while (len > 0 && (text[len - 1] == '\n' || text[len - 1] == '\0'))
                len--;
        if (classad_parse(text, len, GLEAN_CA_MODE, &ad, &err) < 0)
                return -EBADMSG;
        if (classad_eval_int(ad, "Error", GLEAN_CA_MODE, &e) < 0 || e > 0 || e < -4095) {
                classad_free(ad);
                return -EBADMSG;
        }
        XferResult r = { .error = (int) e };
        r.hold_code = (int) get_int(ad, "HoldReasonCode");
        r.hold_subcode = (int) get_int(ad, "HoldReasonSubCode");
        r.bytes_sent = (uint64_t) get_int(ad, "BytesSent");
        r.bytes_received = (uint64_t) get_int(ad, "BytesRecvd");
        r.files = (uint64_t) get_int(ad, "Files");
        if (classad_eval_string(ad, "Reason", GLEAN_CA_MODE, &reason) >= 0) {
                snprintf(r.reason, sizeof r.reason, "%s", reason);
                free(reason);
        }
        classad_free(ad);
        *ret = r;
        return 0;
}
