/* SPDX-License-Identifier: Apache-2.0 */
/*
 * file.h — reading and replacing a whole (small) file.
 */
#pragma once

#include <stddef.h>
#include <sys/types.h>

/* Reads the whole file at path into *ret (malloc'd, NUL-terminated;
 * ret_len may be NULL). -EFBIG when it holds more than max bytes, -errno
 * when it cannot be opened or read, -ENOMEM. */
int glean_read_file(const char *path, size_t max, char **ret, size_t *ret_len);

/* Replaces the file at path with the len bytes of data, whole: written to
 * "<path>.new" (mode, less the umask; never through a symbolic link), then
 * renamed over path, so that a reader sees the old file or the new one.
 * Not fsync'd. 0, or -errno (the temporary file removed). */
int glean_write_file_replace(const char *path, const void *data, size_t len, mode_t mode);
