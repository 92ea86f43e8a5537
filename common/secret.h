/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
/*
 * secret.h — small files that hold a secret (the pool key, the central
 * manager's signing key, a machine's token and key): read only when they
 * are safe, written whole or not at all.
 */
#include <stdbool.h>
#include <stddef.h>

/* Reads the secret file at path (what names it in reasons: "pool key")
 * into buf (at most cap - 1 bytes, NUL-terminated; *ret_len its length).
 * Errors, each with a why naming path: -ENOENT "no <what> there" (and
 * "(<hint>)" when hint), -EACCES (cannot open), -EINVAL not a regular
 * file, -EPERM group or others have access, or the owner is neither root
 * nor us, -EFBIG more than cap - 1 bytes, -errno. */
int glean_secret_file_read(const char *path, const char *what, const char *hint, char *buf, size_t cap,
                           size_t *ret_len, char *why, size_t whylen);

/* Writes text to path, mode 0600, owned by the caller: through a temporary
 * file in the same directory (made with O_EXCL, written and fsync()ed),
 * then renamed into place, so that path holds either nothing, the old file
 * or the whole new one. The directory is made (0755) when only its last
 * component is missing. Without force an existing path is -EEXIST
 * ("<path> already exists; not replacing it") and is never replaced, even
 * by a race (RENAME_NOREPLACE). -errno with why. */
int glean_secret_file_save(const char *path, const char *what, const char *text, size_t len, bool force, char *why,
                           size_t whylen);
