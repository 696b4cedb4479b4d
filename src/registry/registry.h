/*
 * Plugin registry internals shared with other modules (the engine loader and
 * the builder). The registry itself is the public prt_registry_* API in
 * plugrt.h; this header adds the helpers that let other modules word their
 * errors the same way the registry does.
 *
 * Keys. A creator is keyed by (namespace, name, version), compared bytewise.
 * In lookups (prt_registry_find_creator, prt_registry_remove_creator) a NULL
 * namespace means "" and a NULL version means "1". Keys are written for
 * people as "namespace::name@version"; the empty namespace gives
 * "::name@version", like C++'s global scope.
 *
 * Libraries. Each loaded library is recorded with its path exactly as given
 * to prt_registry_load_library and a 64-bit FNV-1a hash of the file's bytes
 * (base_fnv1a64, seed BASE_FNV_SEED), read just before dlopen while the file
 * is checked (library_file.h). A path with no '/' is searched for by the
 * dynamic loader, so plugrt cannot know which file it opens: such a library
 * is neither checked nor hashed, and is recorded with content hash 0
 * ("unknown"), the same value a creator added directly reports.
 */
#ifndef PLUGRT_REGISTRY_H
#define PLUGRT_REGISTRY_H

#include <stddef.h>
#include <stdint.h>

#include "base/base.h"

/* Writes "ns::name@version" into buf (always NUL-terminated when cap > 0,
 * truncated if needed). NULL namespace is written as "", NULL version as "1",
 * NULL name as "(null)", as the lookups default them. */
void registry_format_key(const char *plugin_namespace, const char *name,
                         const char *version, char *buf, size_t cap);

/* Writes the libraries loaded into `reg`, for error messages:
 * "plugin libraries loaded: /a/x.so, /b/y.so" or "no plugin libraries loaded"
 * (and "no registry" for NULL). Always NUL-terminated when cap > 0; a list
 * that does not fit ends in "...". */
void registry_describe_libraries(const prt_registry *reg, char *buf, size_t cap);

/* Loads a plugin library held in memory (one an engine carries) into
 * `reg`, recorded under `label` (what messages and
 * prt_registry_get_creator_library say). When some registry of the process
 * holds a library whose file hashed to `hash`, that object is reused (one
 * process never maps two copies of the same bytes). Otherwise the bytes go
 * to a private temporary file named `file_name` (a plain name;
 * registry_write_temp_library), which is checked as every library file is,
 * must hash to `hash`, is opened, and is unlinked at once, loaded or not.
 * Errors as prt_registry_load_library's, naming `label`. */
prt_status registry_load_library_bytes(prt_registry *reg, const char *label,
                                       const char *file_name, const void *bytes,
                                       size_t size, uint64_t hash);

/* 1 if `reg` holds a library loaded from a file whose content hash is
 * `hash` (never for hash 0, "unknown"). */
int registry_has_library_hash(const prt_registry *reg, uint64_t hash);

#endif /* PLUGRT_REGISTRY_H */
