/* SPDX-License-Identifier: Apache-2.0 */
/*
 * file.h — reading a whole (small) file.
 */
#pragma once

#include <stddef.h>

/* Reads the whole file at path into *ret (malloc'd, NUL-terminated;
 * ret_len may be NULL). -EFBIG when it holds more than max bytes, -errno
 * when it cannot be opened or read, -ENOMEM. */
int glean_read_file(const char *path, size_t max, char **ret, size_t *ret_len);
