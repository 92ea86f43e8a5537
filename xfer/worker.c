/* SPDX-License-Identifier: Apache-2.0 */
/*
 * worker.c — the three workers of a transfer over plain descriptors (the
 * session runs them as the user after the handshake; the tests and the
 * fuzzer call them directly): the execute side fetching its input, the
 * execute side offering its output, the submit side serving either.
 */
#define _GNU_SOURCE

#include <errno.h>
#include <string.h>

#include "xfer-internal.h"

int xfer_worker_fetch(int in_fd, int out_fd, const XferJob *job, const char *sandbox, int timeout_ms,
                      XferManifest *manifest, XferResult *res) {
        XferConn c;
        int r = xfer_conn_init(&c, in_fd, out_fd, timeout_ms);

        if (r < 0)
                return xfer_fail(res, r, 0, "out of memory");
        r = xfer_put_request(&c, XFER_REQ_INPUT);
        if (r >= 0)
                r = xfer_recv_files(&c, XFER_RECV_INPUT, job, sandbox, manifest, res);
        else
                xfer_fail(res, r, 0, "transfer connection lost: %s", strerror(-r));
        xfer_conn_done(&c);
        return r;
}

int xfer_worker_output(int in_fd, int out_fd, const XferJob *job, const char *sandbox, const XferManifest *manifest,
                       int timeout_ms, XferResult *res) {
        XferConn c;
        int r = xfer_conn_init(&c, in_fd, out_fd, timeout_ms);

        if (r < 0)
                return xfer_fail(res, r, 0, "out of memory");
        r = xfer_put_request(&c, XFER_REQ_OUTPUT);
        if (r >= 0)
                r = xfer_send_output_files(&c, job, sandbox, manifest, res);
        else
                xfer_fail(res, r, 0, "transfer connection lost: %s", strerror(-r));
        xfer_conn_done(&c);
        return r;
}

int xfer_worker_serve(int in_fd, int out_fd, const XferJob *job, int timeout_ms, XferResult *res) {
        XferConn c;
        int r = xfer_conn_init(&c, in_fd, out_fd, timeout_ms), type, what;
        const unsigned char *b;
        size_t n;

        *res = (XferResult){ 0 };
        if (r < 0)
                return xfer_fail(res, r, 0, "out of memory");
        r = xfer_conn_get(&c, &type, &b, &n);
        if (r < 0)
                xfer_fail(res, r, 0, "transfer connection lost before its request: %s", strerror(-r));
        else if (type != XFER_T_REQUEST || xfer_parse_request(b, n, &what) < 0)
                r = xfer_fail(res, -EBADMSG, 0, "malformed transfer request");
        else if (what == XFER_REQ_INPUT)
                r = xfer_send_input_files(&c, job, res);
        else
                r = xfer_recv_files(&c, XFER_RECV_OUTPUT, job, job->iwd, NULL, res);
        xfer_conn_done(&c);
        return r;
}
