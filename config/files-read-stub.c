/* SPDX-License-Identifier: Apache-2.0 */
/*
 * files-read-stub.c — TEMPORARY: config_files_read() (config.h) until the
 * branch that records every file load.c reads is merged; the merge drops
 * this file. It names the files that define something, in the order they
 * first did, which misses a file that defines nothing (an empty include).
 */
#include <errno.h>
#include <string.h>

#include "config-internal.h"

int config_files_read(const Config *cfg, char ***ret) {
        char **out;
        size_t n = 0;

        if (!cfg || !ret)
                return -EINVAL;
        out = calloc(cfg->n_sources + 1, sizeof *out);
        if (!out)
                return -ENOMEM;
        for (size_t i = 0; i < cfg->n_sources; i++) {
                if (!cfg->sources[i][0] || cfg->sources[i][0] == '<')
                        continue;
                if (!(out[n++] = strdup(cfg->sources[i]))) {
                        config_strv_free(out);
                        return -ENOMEM;
                }
        }
        *ret = out;
        return (int) n;
}
