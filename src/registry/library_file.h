/*
 * A plugin library's file, checked before the dynamic loader maps it
 * (library_file.c; used by registry.c).
 */
#ifndef PLUGRT_LIBRARY_FILE_H
#define PLUGRT_LIBRARY_FILE_H

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

#endif /* PLUGRT_LIBRARY_FILE_H */
