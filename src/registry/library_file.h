/*
 * A plugin library's file, checked before the dynamic loader maps it
 * (library_file.c; used by registry.c).
 */
#ifndef PLUGRT_LIBRARY_FILE_H
#define PLUGRT_LIBRARY_FILE_H

#include <stddef.h>
#include <stdint.h>

#include "base/base.h"

/* Which file, with which bytes, a library comes from. */
typedef struct registry_file_id {
    int known;    /* 0: a path the dynamic loader searches for */
    uint64_t dev; /* st_dev and st_ino of the file */
    uint64_t ino;
    uint64_t hash; /* FNV-1a (base_fnv1a64, seed BASE_FNV_SEED); 0 unknown */
} registry_file_id;

/* Checks that the file at `path` is a shared library for this host that the
 * dynamic loader can map without touching bytes past the end of the file,
 * and fills *out with its identity and the hash of the bytes it checked. A
 * path without '/' is one the loader searches for, so which file it will
 * open is unknown here: nothing is checked and *out is all zero.
 *
 * PRT_ERR_IO when the file cannot be opened or read or is not a regular
 * file; PRT_ERR_MALFORMED when its contents are not such a library. The
 * message says what is wrong, not the path (prt_registry_load_library puts
 * "cannot load plugin library PATH: " before it). Allocates nothing. */
prt_status registry_check_library_file(const char *path, registry_file_id *out);

/* Writes `size` bytes of a library held in memory (a plugin library an
 * engine carries) to a new private file for the dynamic loader:
 * DIR/file_name, where DIR is a new directory made by mkdtemp under $TMPDIR
 * (/tmp when unset), mode 0700, and the file is created with O_EXCL and
 * O_NOFOLLOW, so nothing another user made or links to is ever opened.
 * `file_name` must be a plain name (no '/'). On success path (cap bytes)
 * holds the file and dir (cap bytes) the directory; the caller removes both
 * (registry_remove_temp_library) once the loader has mapped the file. On
 * failure nothing is left behind. PRT_ERR_IO naming what failed;
 * PRT_ERR_INVALID_ARGUMENT for a file_name that is not a plain name. */
prt_status registry_write_temp_library(const char *file_name, const void *bytes,
                                       size_t size, char *path, char *dir, size_t cap);
/* Unlinks what registry_write_temp_library made. */
void registry_remove_temp_library(const char *path, const char *dir);

#endif /* PLUGRT_LIBRARY_FILE_H */
