/*
 * Plugin libraries carried inside an engine (TensorRT's
 * setPluginsToSerialize): collecting them when the engine is built,
 * validating them when it is read, and loading them, only when the caller
 * allows it, when it is deserialized.
 *
 * Identity is the content hash. A layer records the hash of the library
 * its creator came from (eng_layer.library_hash); the engine stores each
 * such library once under that hash. Loading takes, per library, the
 * caller's registry when it already holds a library of that hash (the
 * caller's copy takes precedence: no second copy, and no permission
 * needed, since nothing from the file runs); otherwise the engine's bytes,
 * loaded into a registry of the engine's own (e->embedded_reg), which serves
 * exactly the layers whose hash names them. The caller's registry is never
 * changed, and a creator the caller registered under the same key from
 * another library does not stand in for the one the engine was built with.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "engine/engine_impl.h"
#include "registry/registry.h"

/* A stored name is a file name the loader will see: at most NAME_MAX
 * bytes of a portable set. */
#define LIB_NAME_MAX 255

static int builtin_layer(const eng_layer *l)
{
    return strcmp(l->plugin_namespace, PRT_BUILTIN_NAMESPACE) == 0;
}

static const eng_library *find_library(const prt_engine *e, uint64_t hash)
{
    for (int32_t i = 0; hash && i < e->nb_libraries; i++)
        if (e->libraries[i].hash == hash)
            return &e->libraries[i];
    return NULL;
}

/* The characters a stored name may hold. */
static int name_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '.' || c == '_' || c == '-' || c == '+';
}

/* Why `name` is not a name to store, or NULL when it is one. */
static const char *bad_name(const char *name)
{
    size_t n = strlen(name);
    if (n == 0)
        return "it is empty";
    if (n > LIB_NAME_MAX)
        return "it is longer than 255 bytes";
    if (name[0] == '.')
        return "it starts with '.'";
    for (size_t i = 0; i < n; i++) {
        if (!name_char(name[i]))
            return "it holds a character other than letters, digits and ._+- "
                   "(a path separator, a space or a control character)";
    }
    return NULL;
}

/* ------------------------------------------------------------------------ */
/* Building                                                                  */
/* ------------------------------------------------------------------------ */

/* The stored name of the library at `path`: its base name, each character
 * outside the portable set made '_', a leading '.' too. */
static char *library_name(const char *path)
{
    const char *base = strrchr(path, '/');
    char *name;
    size_t n;
    base = base ? base + 1 : path;
    n = strlen(base);
    if (n > LIB_NAME_MAX) { /* keep the end: the suffix says what it is */
        base += n - LIB_NAME_MAX;
        n = LIB_NAME_MAX;
    }
    name = base_malloc(n ? n + 1 : sizeof "library");
    if (!name)
        return NULL;
    if (!n) {
        memcpy(name, "library", sizeof "library");
        return name;
    }
    for (size_t i = 0; i < n; i++)
        name[i] = name_char(base[i]) && !(i == 0 && base[i] == '.') ? base[i] : '_';
    name[n] = '\0';
    return name;
}

/* Reads the library file of layer l into lib, checking it is the file the
 * layer's creator was loaded from. */
static prt_status read_library(const eng_layer *l, eng_library *lib)
{
    uint64_t size, hash;
    const char *why;
    int64_t got;
    int fd, err = base_open_regular(l->library, &fd, &size, &why);
    if (err)
        return base_error(PRT_ERR_IO,
                          "layer '%s': cannot read plugin library %s to embed it: %s",
                          l->name, l->library, why);
    if (size > (uint64_t)INT64_MAX / 2 || !(lib->bytes = base_malloc((size_t)size + 1))) {
        close(fd);
        return base_error(PRT_ERR_OUT_OF_MEMORY,
                          "out of memory for the %llu bytes of plugin library %s",
                          (unsigned long long)size, l->library);
    }
    got = base_read_at(fd, lib->bytes, (size_t)size, 0);
    err = errno;
    close(fd);
    if (got < 0 || (uint64_t)got != size)
        return base_error(PRT_ERR_IO, "layer '%s': reading plugin library %s failed: %s",
                          l->name, l->library, got < 0 ? strerror(err) : "it shrank");
    lib->size = (int64_t)size;
    hash = base_fnv1a64(lib->bytes, (size_t)size, BASE_FNV_SEED);
    /* The engine must carry the code it was built and tuned with. */
    if (hash != l->library_hash)
        return base_error(PRT_ERR_IO,
                          "layer '%s': plugin library %s has changed since it was loaded "
                          "(content hash %016llx then, %016llx now); load it again and "
                          "rebuild",
                          l->name, l->library, (unsigned long long)l->library_hash,
                          (unsigned long long)hash);
    lib->hash = hash;
    lib->name = library_name(l->library);
    if (!lib->name)
        return base_error(PRT_ERR_OUT_OF_MEMORY, "out of memory");
    return PRT_OK;
}

prt_status engine_embed_libraries(prt_engine *e)
{
    for (int32_t i = 0; i < e->nb_layers; i++) {
        const eng_layer *l = &e->layers[i];
        eng_library *libs;
        prt_status st;
        if (builtin_layer(l) || find_library(e, l->library_hash))
            continue;
        if (!l->library[0])
            return base_error(PRT_ERR_UNSUPPORTED,
                              "layer '%s': plugin %s::%s was registered directly, not "
                              "loaded from a library, so there is no library to embed "
                              "(load its library with prt_registry_load_library, or "
                              "build without embedding plugins)",
                              l->name, l->plugin_namespace, l->plugin_name);
        if (!l->library_hash)
            return base_error(PRT_ERR_UNSUPPORTED,
                              "layer '%s': plugin library %s was found by the dynamic "
                              "loader's search, so which file it is is unknown and it "
                              "cannot be embedded; load it by a path (./%s)",
                              l->name, l->library, l->library);
        libs = base_realloc(e->libraries, sizeof *libs * (size_t)(e->nb_libraries + 1));
        if (!libs)
            return base_error(PRT_ERR_OUT_OF_MEMORY, "out of memory");
        e->libraries = libs;
        memset(&libs[e->nb_libraries], 0, sizeof *libs);
        /* Counted before it is filled: engine_free frees what is there. */
        st = read_library(l, &libs[e->nb_libraries++]);
        if (st)
            return st;
        base_log(PRT_SEV_VERBOSE,
                 "embedding plugin library %s (%lld bytes, hash %016llx)", l->library,
                 (long long)libs[e->nb_libraries - 1].size,
                 (unsigned long long)l->library_hash);
    }
    return PRT_OK;
}

/* ------------------------------------------------------------------------ */
/* Validation                                                                */
/* ------------------------------------------------------------------------ */

#define BAD(...) base_error(PRT_ERR_MALFORMED, "malformed engine: " __VA_ARGS__)

prt_status engine_validate_libraries(const prt_engine *e)
{
    if (e->nb_libraries < 0 || (e->nb_libraries && !e->libraries))
        return BAD("%d plugin libraries", (int)e->nb_libraries);
    /* An engine that carries libraries carries all of them. */
    for (int32_t k = 0; e->nb_libraries && k < e->nb_layers; k++) {
        const eng_layer *l = &e->layers[k];
        if (!builtin_layer(l) && l->library_hash && !find_library(e, l->library_hash))
            return BAD("layer %d ('%s') comes from plugin library %s (content hash "
                       "%016llx), which the engine does not carry beside its others",
                       (int)k, l->name, l->library, (unsigned long long)l->library_hash);
    }
    for (int32_t i = 0; i < e->nb_libraries; i++) {
        const eng_library *lib = &e->libraries[i];
        const char *why;
        int used = 0;
        if (!lib->name || !lib->bytes || lib->size <= 0)
            return BAD("embedded plugin library %d is empty", (int)i);
        if ((why = bad_name(lib->name)))
            return BAD("embedded plugin library %d's name '%.64s' is not a plain file "
                       "name: %s",
                       (int)i, lib->name, why);
        if (!lib->hash)
            return BAD("embedded plugin library %d (%s) has content hash 0", (int)i,
                       lib->name);
        for (int32_t j = 0; j < i; j++)
            if (e->libraries[j].hash == lib->hash)
                return BAD("embedded plugin libraries %d and %d have the same content "
                           "hash %016llx",
                           (int)j, (int)i, (unsigned long long)lib->hash);
        /* The CRC catches damage; this ties the bytes to what the layers
         * name, so an edit that fixes the CRC still cannot swap the code
         * under a layer. */
        if (base_fnv1a64(lib->bytes, (size_t)lib->size, BASE_FNV_SEED) != lib->hash)
            return BAD("embedded plugin library %d (%s, %lld bytes): its bytes do not "
                       "hash to its content hash %016llx",
                       (int)i, lib->name, (long long)lib->size,
                       (unsigned long long)lib->hash);
        for (int32_t k = 0; k < e->nb_layers && !used; k++)
            used =
                !builtin_layer(&e->layers[k]) && e->layers[k].library_hash == lib->hash;
        if (!used)
            return BAD("embedded plugin library %d (%s, content hash %016llx) serves no "
                       "layer",
                       (int)i, lib->name, (unsigned long long)lib->hash);
    }
    return PRT_OK;
}

/* ------------------------------------------------------------------------ */
/* Loading                                                                   */
/* ------------------------------------------------------------------------ */

/* The refusal: every library that would load from the file, and the
 * option. */
static prt_status refuse(const prt_engine *e)
{
    char list[1024];
    size_t pos = 0;
    int n = 0;
    list[0] = '\0';
    for (int32_t i = 0; i < e->nb_libraries; i++) {
        const eng_library *lib = &e->libraries[i];
        int w;
        if (lib->source == PRT_EMBEDDED_LIBRARY_FROM_REGISTRY)
            continue;
        w = snprintf(list + pos, sizeof list - pos,
                     "%s%s (%lld bytes, content hash %016llx)", n++ ? ", " : "",
                     lib->name, (long long)lib->size, (unsigned long long)lib->hash);
        if (w < 0 || (size_t)w >= sizeof list - pos)
            break;
        pos += (size_t)w;
    }
    return base_error(
        PRT_ERR_UNSUPPORTED,
        "the engine carries %d plugin librar%s of its own to load: %s; "
        "loading runs that code, so the caller must allow it "
        "(prt_deserialize_options.allow_embedded = "
        "PRT_EMBEDDED_PLUGIN_LIBRARIES; plugrt run --allow-embedded-plugins "
        "or --allow-embedded-code), or load those libraries itself",
        n, n == 1 ? "y" : "ies", list);
}

prt_status engine_load_libraries(prt_engine *e, const prt_registry *reg, uint32_t allow)
{
    int need = 0;
    prt_status st;
    for (int32_t i = 0; i < e->nb_libraries; i++) {
        eng_library *lib = &e->libraries[i];
        lib->source = registry_has_library_hash(reg, lib->hash)
                          ? PRT_EMBEDDED_LIBRARY_FROM_REGISTRY
                          : PRT_EMBEDDED_LIBRARY_NOT_LOADED;
        need += lib->source == PRT_EMBEDDED_LIBRARY_NOT_LOADED;
    }
    if (!need)
        return PRT_OK;
    if (!(allow & PRT_EMBEDDED_PLUGIN_LIBRARIES))
        return refuse(e);
    st = prt_registry_create(&e->embedded_reg);
    for (int32_t i = 0; !st && i < e->nb_libraries; i++) {
        eng_library *lib = &e->libraries[i];
        char label[LIB_NAME_MAX + 64];
        if (lib->source != PRT_EMBEDDED_LIBRARY_NOT_LOADED)
            continue;
        snprintf(label, sizeof label, "%s (embedded in the engine)", lib->name);
        st = registry_load_library_bytes(e->embedded_reg, label, lib->name, lib->bytes,
                                         (size_t)lib->size, lib->hash);
        if (!st)
            lib->source = PRT_EMBEDDED_LIBRARY_FROM_ENGINE;
    }
    return st;
}

const prt_registry *engine_layer_registry(const prt_engine *e, const prt_registry *reg,
                                          const eng_layer *l)
{
    const eng_library *lib = find_library(e, l->library_hash);
    if (lib && lib->source == PRT_EMBEDDED_LIBRARY_FROM_ENGINE && !builtin_layer(l))
        return e->embedded_reg;
    return reg;
}

/* ------------------------------------------------------------------------ */
/* Queries                                                                   */
/* ------------------------------------------------------------------------ */

int32_t prt_engine_embedded_library_count(const prt_engine *engine)
{
    return engine ? engine->nb_libraries : 0;
}

prt_status prt_engine_get_embedded_library(const prt_engine *engine, int32_t index,
                                           prt_embedded_library_info *out)
{
    const eng_library *lib;
    prt_embedded_library_info info;
    prt_status st =
        base_query_check(out ? out->struct_size : 0, sizeof info, out,
                         "prt_engine_get_embedded_library", "prt_embedded_library_info");
    if (st)
        return st;
    if (!engine)
        return base_error(PRT_ERR_INVALID_ARGUMENT,
                          "prt_engine_get_embedded_library: NULL engine");
    if (index < 0 || index >= engine->nb_libraries)
        return base_error(PRT_ERR_INVALID_ARGUMENT,
                          "prt_engine_get_embedded_library: index %d outside 0..%d "
                          "(the engine carries %d plugin libraries)",
                          (int)index, (int)engine->nb_libraries - 1,
                          (int)engine->nb_libraries);
    lib = &engine->libraries[index];
    memset(&info, 0, sizeof info);
    info.struct_size = out->struct_size;
    info.name = lib->name;
    info.hash = lib->hash;
    info.size = lib->size;
    info.source = lib->source;
    *out = info;
    return PRT_OK;
}
