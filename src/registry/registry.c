/*
 * The plugin registry: creators keyed by (namespace, name, version) and the
 * plugin libraries that supplied them (the "Registry" section of plugrt.h).
 *
 * A registry is a plain object with two arrays: entries, in registration
 * order, each a borrowed creator plus the library it came from (NULL when
 * added directly); and the libraries, in load order. Lookups are linear: a
 * registry holds tens of creators, and lookups happen when networks are
 * built and engines loaded, never on the enqueue path.
 *
 * Everything a library hands us (its description, its creators, their field
 * schemas) is checked before the registry keeps any of it, so the rest of
 * plugrt may trust a creator it finds here: non-NULL strings, a create
 * function, and a well-formed field schema. The file itself is checked
 * before dlopen sees it (library_file.c), and the object dlopen returns must
 * come from that file (check_same_file).
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "library_file.h"
#include "registry.h"

/* Room for one key in a message; longer keys are truncated (for people). */
#define KEY_CAP 320
/* Room for the list of loaded libraries in a message. */
#define LIBS_CAP 1024
/* At most this many same-name creators are suggested in a "not found". */
#define NEAR_MAX 4

/* Bytes up to and including `member`: the least struct_size that lets us
 * read it. */
#define END_OF(type, member) (offsetof(type, member) + sizeof(((type *)0)->member))

/* The last creator entry plugrt reads is `create`; `user` is the author's. */
#define CREATOR_MIN_SIZE END_OF(prt_plugin_creator, create)
#define LIBRARY_MIN_SIZE END_OF(prt_plugin_library, creators)

/* One library loaded into one registry. Allocated alone so that entries can
 * point at it while the array of libraries grows. */
typedef struct reg_library {
    char *path; /* exactly as given to load_library */
    /* The name the dynamic loader knows the object by: `path`, or for a
     * library loaded from bytes the (unlinked) temporary file's path. With
     * RTLD_NOLOAD it gives another reference to the same object. */
    char *open_name;
    registry_file_id file;         /* what was checked; file.hash 0 if unknown */
    void *handle;                  /* from dlopen, closed on unload */
    struct reg_library *next_open; /* in open_libs */
} reg_library;

typedef struct reg_entry {
    const prt_plugin_creator *creator; /* borrowed */
    reg_library *lib;                  /* NULL when added directly */
} reg_entry;

/* Every library that any registry of the process holds. dlopen's table of
 * objects belongs to the process: asked for a path it has loaded before,
 * the loader returns that object, however the file at the path has changed
 * since. Only what was recorded when the object was first opened says which
 * file that was. */
static pthread_mutex_t open_libs_lock = PTHREAD_MUTEX_INITIALIZER;
static reg_library *open_libs;

struct prt_registry {
    reg_entry *entries; /* registration order */
    int32_t nb_entries;
    int32_t cap_entries;
    reg_library **libs; /* load order */
    int32_t nb_libs;
    int32_t cap_libs;
};

/* ------------------------------------------------------------------------ */
/* Messages                                                                  */
/* ------------------------------------------------------------------------ */

void registry_format_key(const char *plugin_namespace, const char *name,
                         const char *version, char *buf, size_t cap)
{
    if (!buf || cap == 0)
        return;
    snprintf(buf, cap, "%s::%s@%s", plugin_namespace ? plugin_namespace : "",
             name ? name : "(null)", version ? version : "1");
}

void registry_describe_libraries(const prt_registry *reg, char *buf, size_t cap)
{
    size_t pos;
    int truncated = 0;
    if (!buf || cap == 0)
        return;
    if (!reg) {
        snprintf(buf, cap, "no registry");
        return;
    }
    if (reg->nb_libs == 0) {
        snprintf(buf, cap, "no plugin libraries loaded");
        return;
    }
    pos = (size_t)snprintf(buf, cap, "plugin libraries loaded: ");
    for (int32_t i = 0; i < reg->nb_libs && !truncated; i++) {
        int n;
        if (pos >= cap) {
            truncated = 1;
            break;
        }
        n = snprintf(buf + pos, cap - pos, "%s%s", i ? ", " : "", reg->libs[i]->path);
        if (n < 0 || (size_t)n >= cap - pos)
            truncated = 1;
        else
            pos += (size_t)n;
    }
    if (truncated && cap >= 4)
        memcpy(buf + cap - 4, "...", 4);
}

/* The creator's key for a message, reading only what struct_size covers. */
static void creator_label(const prt_plugin_creator *c, char *buf, size_t cap)
{
    if (c->struct_size < END_OF(prt_plugin_creator, plugin_namespace)) {
        snprintf(buf, cap, "(a creator with struct_size %u)", (unsigned)c->struct_size);
        return;
    }
    registry_format_key(c->plugin_namespace, c->name, c->version, buf, cap);
}

/* ------------------------------------------------------------------------ */
/* Lookups and checks                                                        */
/* ------------------------------------------------------------------------ */

static int key_equal(const prt_plugin_creator *c, const char *ns, const char *name,
                     const char *version)
{
    return strcmp(c->name, name) == 0 && strcmp(c->version, version) == 0 &&
           strcmp(c->plugin_namespace, ns) == 0;
}

/* Index of the entry with this key (no NULLs), or -1. */
static int32_t find_index(const prt_registry *reg, const char *ns, const char *name,
                          const char *version)
{
    for (int32_t i = 0; i < reg->nb_entries; i++) {
        if (key_equal(reg->entries[i].creator, ns, name, version))
            return i;
    }
    return -1;
}

/* The opening every struct a plugin hands plugrt shares (plugin.h:
 * struct_size and abi_version first), for one kind of struct: what plugrt
 * reads of it, and how a fault reads. A creator is an argument (a caller's,
 * or a library's, which check_library rewords as the library's fault); a
 * library's description is the library's word about itself. */
typedef struct abi_kind {
    const char *kind; /* names the struct in messages, before its name */
    size_t min_size;  /* the bytes plugrt reads */
    prt_status bad;   /* the status of a zero version or a short struct */
    const char *zero; /* what follows the name for abi_version 0 */
    const char *has;  /* what comes between the name and "struct_size N" */
} abi_kind;

static const abi_kind creator_abi = {
    "plugin creator", CREATOR_MIN_SIZE, PRT_ERR_INVALID_ARGUMENT,
    " has abi_version 0 (set it to PRT_PLUGIN_ABI_VERSION)", " has"};
static const abi_kind library_abi = {"the library", LIBRARY_MIN_SIZE, PRT_ERR_MALFORMED,
                                     " describes itself with abi_version 0",
                                     "'s description has"};

/* A version this plugrt speaks (a newer one is PRT_ERR_VERSION), not 0, and a
 * struct_size that covers what plugrt reads; `name` names the struct ("":
 * the kind says it all). */
static prt_status check_abi_header(const abi_kind *k, const char *name,
                                   uint32_t abi_version, uint32_t struct_size)
{
    const char *sep = name[0] ? " " : "";
    if (abi_version > PRT_PLUGIN_ABI_VERSION)
        return base_error(PRT_ERR_VERSION, "%s%s%s speaks ABI %u, this plugrt speaks %u",
                          k->kind, sep, name, (unsigned)abi_version,
                          (unsigned)PRT_PLUGIN_ABI_VERSION);
    if (abi_version == 0)
        return base_error(k->bad, "%s%s%s%s", k->kind, sep, name, k->zero);
    if (struct_size < k->min_size)
        return base_error(k->bad,
                          "%s%s%s%s struct_size %u, smaller than the %zu bytes plugrt "
                          "reads",
                          k->kind, sep, name, k->has, (unsigned)struct_size, k->min_size);
    return PRT_OK;
}

/* Checks everything plugrt reads from a creator. INVALID_ARGUMENT, or
 * VERSION for a newer ABI, with a message naming the creator. */
static prt_status check_creator(const prt_plugin_creator *c)
{
    char key[KEY_CAP];
    prt_status st;
    if (!c)
        return base_error(PRT_ERR_INVALID_ARGUMENT, "plugin creator is NULL");
    creator_label(c, key, sizeof key);
    st = check_abi_header(&creator_abi, key, c->abi_version, c->struct_size);
    if (st)
        return st;
    if (!c->name || !c->version || !c->plugin_namespace)
        return base_error(PRT_ERR_INVALID_ARGUMENT,
                          "plugin creator %s: name, version and "
                          "plugin_namespace must not be NULL (\"\" is no "
                          "namespace)",
                          key);
    if (!c->name[0] || !c->version[0])
        return base_error(PRT_ERR_INVALID_ARGUMENT,
                          "plugin creator %s: name and version must not be "
                          "empty",
                          key);
    if (!c->create)
        return base_error(PRT_ERR_INVALID_ARGUMENT,
                          "plugin creator %s has no create function", key);
    if (c->nb_fields < 0 || (c->nb_fields > 0 && !c->fields))
        return base_error(PRT_ERR_INVALID_ARGUMENT,
                          "plugin creator %s lists %d fields %s", key, (int)c->nb_fields,
                          c->nb_fields < 0 ? "(negative)"
                                           : "but its schema array is NULL");
    for (int32_t i = 0; i < c->nb_fields; i++) {
        const prt_field_schema *f = &c->fields[i];
        if (!f->name)
            return base_error(PRT_ERR_INVALID_ARGUMENT,
                              "plugin creator %s: field %d has a NULL name", key, (int)i);
        if (f->type < 0 || f->type >= PRT_FIELD_TYPE_COUNT)
            return base_error(PRT_ERR_INVALID_ARGUMENT,
                              "plugin creator %s: field \"%s\" has unknown "
                              "type %d",
                              key, f->name, (int)f->type);
        if (f->length < -1)
            return base_error(PRT_ERR_INVALID_ARGUMENT,
                              "plugin creator %s: field \"%s\" has length "
                              "%lld (want >= 0, or -1 for any)",
                              key, f->name, (long long)f->length);
    }
    return PRT_OK;
}

/* The error for a key already taken by entry `idx`. */
static prt_status clash_error(const prt_registry *reg, int32_t idx)
{
    const prt_plugin_creator *old = reg->entries[idx].creator;
    const reg_library *lib = reg->entries[idx].lib;
    char key[KEY_CAP];
    registry_format_key(old->plugin_namespace, old->name, old->version, key, sizeof key);
    if (lib)
        return base_error(PRT_ERR_ALREADY_EXISTS,
                          "plugin creator %s is already registered, provided "
                          "by library %s",
                          key, lib->path);
    return base_error(PRT_ERR_ALREADY_EXISTS,
                      "plugin creator %s is already registered (added "
                      "directly, not from a library)",
                      key);
}

/* Room for `extra` more entries. 0 on out of memory or overflow. */
static int reserve_entries(prt_registry *reg, int32_t extra)
{
    int64_t need = (int64_t)reg->nb_entries + extra;
    int64_t cap = reg->cap_entries ? reg->cap_entries : 8;
    reg_entry *p;
    if (need <= reg->cap_entries)
        return 1;
    if (need > INT32_MAX)
        return 0;
    while (cap < need)
        cap *= 2;
    if (cap > INT32_MAX)
        cap = INT32_MAX;
    p = base_realloc(reg->entries, (size_t)cap * sizeof *p);
    if (!p)
        return 0;
    reg->entries = p;
    reg->cap_entries = (int32_t)cap;
    return 1;
}

static int reserve_libs(prt_registry *reg)
{
    int32_t cap;
    reg_library **p;
    if (reg->nb_libs < reg->cap_libs)
        return 1;
    if (reg->cap_libs > INT32_MAX / 2)
        return 0;
    cap = reg->cap_libs ? reg->cap_libs * 2 : 4;
    p = base_realloc(reg->libs, (size_t)cap * sizeof *p);
    if (!p)
        return 0;
    reg->libs = p;
    reg->cap_libs = cap;
    return 1;
}

/* ------------------------------------------------------------------------ */
/* Creators                                                                  */
/* ------------------------------------------------------------------------ */

prt_status prt_registry_create(prt_registry **out)
{
    prt_registry *reg;
    if (!out)
        return base_error(PRT_ERR_INVALID_ARGUMENT, "prt_registry_create: out is NULL");
    reg = base_calloc(1, sizeof *reg);
    if (!reg)
        return base_error(PRT_ERR_OUT_OF_MEMORY,
                          "out of memory creating a plugin registry");
    *out = reg;
    return PRT_OK;
}

static void library_free(reg_library *lib)
{
    reg_library **p;
    if (!lib)
        return;
    pthread_mutex_lock(&open_libs_lock);
    for (p = &open_libs; *p; p = &(*p)->next_open)
        if (*p == lib) {
            *p = lib->next_open;
            break;
        }
    pthread_mutex_unlock(&open_libs_lock);
    if (lib->handle && dlclose(lib->handle) != 0) {
        const char *why = dlerror();
        base_log(PRT_SEV_WARNING, "closing plugin library %s failed: %s", lib->path,
                 why ? why : "unknown error");
    }
    base_free(lib->path);
    base_free(lib->open_name);
    base_free(lib);
}

void prt_registry_destroy(prt_registry *reg)
{
    if (!reg)
        return;
    /* Reverse load order, like unloading one by one. */
    for (int32_t i = reg->nb_libs - 1; i >= 0; i--)
        library_free(reg->libs[i]);
    base_free(reg->libs);
    base_free(reg->entries);
    base_free(reg);
}

prt_status prt_registry_add_creator(prt_registry *reg, const prt_plugin_creator *c)
{
    prt_status st;
    int32_t idx;
    if (!reg)
        return base_error(PRT_ERR_INVALID_ARGUMENT,
                          "prt_registry_add_creator: registry is NULL");
    st = check_creator(c);
    if (st != PRT_OK)
        return st;
    idx = find_index(reg, c->plugin_namespace, c->name, c->version);
    if (idx >= 0)
        return clash_error(reg, idx);
    if (!reserve_entries(reg, 1))
        return base_error(PRT_ERR_OUT_OF_MEMORY, "out of memory adding a plugin creator");
    reg->entries[reg->nb_entries].creator = c;
    reg->entries[reg->nb_entries].lib = NULL;
    reg->nb_entries++;
    return PRT_OK;
}

/* The "not found" error: the key, creators of the same name under other
 * keys (the usual mistake is a namespace or version), and the libraries. */
static prt_status not_found_error(const prt_registry *reg, const char *ns,
                                  const char *name, const char *version)
{
    char key[KEY_CAP];
    char near[KEY_CAP * NEAR_MAX];
    char libs[LIBS_CAP];
    size_t pos = 0;
    int nb_near = 0;
    registry_format_key(ns, name, version, key, sizeof key);
    near[0] = '\0';
    for (int32_t i = 0; i < reg->nb_entries && nb_near < NEAR_MAX; i++) {
        const prt_plugin_creator *c = reg->entries[i].creator;
        char other[KEY_CAP];
        int n;
        if (strcmp(c->name, name) != 0)
            continue;
        registry_format_key(c->plugin_namespace, c->name, c->version, other,
                            sizeof other);
        n = snprintf(near + pos, sizeof near - pos, "%s%s",
                     nb_near ? ", " : "; registered under that name: ", other);
        if (n < 0 || (size_t)n >= sizeof near - pos)
            break;
        pos += (size_t)n;
        nb_near++;
    }
    if (!nb_near) {
        /* Nothing under that name: name the nearest spelling, if one is close. */
        const prt_plugin_creator *best = NULL;
        int best_d = 3 + (int)(strlen(name) > 12);
        for (int32_t i = 0; i < reg->nb_entries; i++) {
            int d = base_name_distance(name, reg->entries[i].creator->name);
            if (d < best_d) {
                best_d = d;
                best = reg->entries[i].creator;
            }
        }
        if (best) {
            char other[KEY_CAP];
            registry_format_key(best->plugin_namespace, best->name, best->version, other,
                                sizeof other);
            snprintf(near, sizeof near, "; did you mean %s?", other);
        }
    }
    registry_describe_libraries(reg, libs, sizeof libs);
    return base_error(PRT_ERR_NOT_FOUND, "no plugin creator %s in this registry%s; %s",
                      key, near, libs);
}

prt_status prt_registry_remove_creator(prt_registry *reg, const char *plugin_namespace,
                                       const char *name, const char *version)
{
    int32_t idx;
    if (!reg || !name)
        return base_error(PRT_ERR_INVALID_ARGUMENT,
                          "prt_registry_remove_creator: %s is NULL",
                          reg ? "name" : "registry");
    if (!plugin_namespace)
        plugin_namespace = "";
    if (!version)
        version = "1";
    idx = find_index(reg, plugin_namespace, name, version);
    if (idx < 0)
        return not_found_error(reg, plugin_namespace, name, version);
    memmove(&reg->entries[idx], &reg->entries[idx + 1],
            (size_t)(reg->nb_entries - idx - 1) * sizeof *reg->entries);
    reg->nb_entries--;
    return PRT_OK;
}

prt_status prt_registry_find_creator(const prt_registry *reg,
                                     const char *plugin_namespace, const char *name,
                                     const char *version, const prt_plugin_creator **out)
{
    int32_t idx;
    if (!reg || !name || !out)
        return base_error(PRT_ERR_INVALID_ARGUMENT,
                          "prt_registry_find_creator: %s is NULL",
                          !reg    ? "registry"
                          : !name ? "name"
                                  : "out");
    if (!plugin_namespace)
        plugin_namespace = "";
    if (!version)
        version = "1";
    idx = find_index(reg, plugin_namespace, name, version);
    if (idx < 0)
        return not_found_error(reg, plugin_namespace, name, version);
    *out = reg->entries[idx].creator;
    return PRT_OK;
}

int32_t prt_registry_creator_count(const prt_registry *reg)
{
    return reg ? reg->nb_entries : 0;
}

const prt_plugin_creator *prt_registry_get_creator(const prt_registry *reg, int32_t index)
{
    if (!reg || index < 0 || index >= reg->nb_entries)
        return NULL;
    return reg->entries[index].creator;
}

const char *prt_registry_get_creator_library(const prt_registry *reg,
                                             const prt_plugin_creator *c,
                                             uint64_t *out_content_hash)
{
    if (out_content_hash)
        *out_content_hash = 0;
    if (!reg || !c)
        return NULL;
    for (int32_t i = 0; i < reg->nb_entries; i++) {
        const reg_library *lib = reg->entries[i].lib;
        if (reg->entries[i].creator != c)
            continue;
        if (!lib)
            return NULL;
        if (out_content_hash)
            *out_content_hash = lib->file.hash;
        return lib->path;
    }
    return NULL;
}

/* ------------------------------------------------------------------------ */
/* Libraries                                                                 */
/* ------------------------------------------------------------------------ */

/* Checks a library's description and every creator in it. Messages say
 * what is wrong; prt_registry_load_library names the library. */
static prt_status check_library(const prt_plugin_library *desc)
{
    prt_status st =
        check_abi_header(&library_abi, "", desc->abi_version, desc->struct_size);
    if (st)
        return st;
    if (desc->nb_creators < 0 || (desc->nb_creators > 0 && !desc->creators))
        return base_error(
            PRT_ERR_MALFORMED, "it lists %d creators %s", (int)desc->nb_creators,
            desc->nb_creators < 0 ? "(negative)" : "but its creators array is NULL");
    for (int32_t i = 0; i < desc->nb_creators; i++) {
        if (!desc->creators[i])
            return base_error(PRT_ERR_MALFORMED, "creator %d of %d is NULL", (int)i,
                              (int)desc->nb_creators);
        st = check_creator(desc->creators[i]);
        /* A bad creator from a library is a broken library, not a bad
         * argument of the caller's; a newer ABI stays a version error. */
        if (st == PRT_ERR_INVALID_ARGUMENT)
            st = PRT_ERR_MALFORMED;
        if (st != PRT_OK)
            return st;
    }
    return PRT_OK;
}

/* Every key of the library must be new, to the registry and within the
 * library. */
static prt_status check_clashes(const prt_registry *reg, const prt_plugin_library *desc)
{
    for (int32_t i = 0; i < desc->nb_creators; i++) {
        const prt_plugin_creator *c = desc->creators[i];
        int32_t idx;
        for (int32_t j = 0; j < i; j++) {
            char key[KEY_CAP];
            if (!key_equal(desc->creators[j], c->plugin_namespace, c->name, c->version))
                continue;
            registry_format_key(c->plugin_namespace, c->name, c->version, key,
                                sizeof key);
            return base_error(PRT_ERR_ALREADY_EXISTS,
                              "it provides plugin creator %s twice (creators %d and %d)",
                              key, (int)j, (int)i);
        }
        idx = find_index(reg, c->plugin_namespace, c->name, c->version);
        if (idx >= 0)
            return clash_error(reg, idx);
    }
    return PRT_OK;
}

/* The object dlopen returned must be the file that was checked. When some
 * registry holds that object already, it was opened from a file recorded
 * then, which must be the one now at `path`, unchanged; otherwise the
 * loader hands back old code that neither the check nor the hash saw. */
static prt_status check_same_file(void *handle, const registry_file_id *id)
{
    prt_status st = PRT_OK;
    pthread_mutex_lock(&open_libs_lock);
    for (const reg_library *l = open_libs; l && !st; l = l->next_open) {
        int moved;
        if (l->handle != handle || !l->file.known || !id->known)
            continue;
        moved = l->file.dev != id->dev || l->file.ino != id->ino;
        if (moved || l->file.hash != id->hash)
            st = base_error(PRT_ERR_ALREADY_EXISTS,
                            "this process already holds the library opened as %s "
                            "from a file that has since been %s, and the dynamic "
                            "loader would return that old code; unload it "
                            "from every registry first",
                            l->path, moved ? "replaced" : "changed");
    }
    pthread_mutex_unlock(&open_libs_lock);
    return st;
}

/* Everything after dlopen; `id` is the checked file's. On failure the
 * caller closes the handle. */
static prt_status load_opened(prt_registry *reg, const char *path, const char *open_name,
                              void *handle, const registry_file_id *id)
{
    const prt_plugin_library *desc;
    prt_plugin_entry_fn entry;
    reg_library *lib;
    prt_status st;
    void *sym;

    dlerror();
    sym = dlsym(handle, PRT_PLUGIN_ENTRY_SYMBOL);
    if (!sym)
        return base_error(PRT_ERR_NOT_FOUND, "it does not export the entry point %s",
                          PRT_PLUGIN_ENTRY_SYMBOL);
    /* POSIX guarantees a data pointer from dlsym converts to a function
     * pointer. */
    entry = (prt_plugin_entry_fn)sym;

    /* A refusing library may explain itself through set_error; keep its
     * words. */
    base_clear_error();
    desc = entry(PRT_PLUGIN_ABI_VERSION, prt_host_services_get());
    if (!desc) {
        char why[512];
        snprintf(why, sizeof why, "%s", prt_last_error());
        return base_error(PRT_ERR_VERSION, "it cannot serve plugin ABI %u%s%s",
                          (unsigned)PRT_PLUGIN_ABI_VERSION, why[0] ? ": " : "", why);
    }
    st = check_library(desc);
    if (st != PRT_OK)
        return st;
    st = check_clashes(reg, desc);
    if (st != PRT_OK)
        return st;

    /* Reserve everything, then commit: nothing below can fail. */
    lib = base_calloc(1, sizeof *lib);
    if (lib) {
        lib->path = base_strdup(path);
        lib->open_name = base_strdup(open_name);
    }
    if (!lib || !lib->path || !lib->open_name ||
        !reserve_entries(reg, desc->nb_creators) || !reserve_libs(reg)) {
        if (lib) {
            base_free(lib->path);
            base_free(lib->open_name);
        }
        base_free(lib);
        return base_error(PRT_ERR_OUT_OF_MEMORY, "out of memory");
    }
    lib->file = *id;
    lib->handle = handle;
    for (int32_t i = 0; i < desc->nb_creators; i++) {
        reg->entries[reg->nb_entries].creator = desc->creators[i];
        reg->entries[reg->nb_entries].lib = lib;
        reg->nb_entries++;
    }
    reg->libs[reg->nb_libs++] = lib;
    pthread_mutex_lock(&open_libs_lock);
    lib->next_open = open_libs;
    open_libs = lib;
    pthread_mutex_unlock(&open_libs_lock);
    return PRT_OK;
}

/* What the loader says, without the path it puts first ("PATH: reason"):
 * the message names the library once. */
static const char *loader_reason(const char *path)
{
    const char *why = dlerror();
    size_t n = strlen(path);
    if (!why)
        return "unknown error";
    if (strncmp(why, path, n) == 0 && why[n] == ':' && why[n + 1] == ' ')
        return why + n + 2;
    return why;
}

/* prt_registry_load_library less the path before its messages. */
static prt_status load_library(prt_registry *reg, const char *path)
{
    registry_file_id id;
    prt_status st;
    void *handle;
    for (int32_t i = 0; i < reg->nb_libs; i++) {
        if (strcmp(reg->libs[i]->path, path) == 0)
            return base_error(PRT_ERR_ALREADY_EXISTS,
                              "it is already loaded into this registry");
    }
    /* Before the loader maps it: a damaged file must be an error, not a
     * SIGBUS inside dlopen. */
    st = registry_check_library_file(path, &id);
    if (st != PRT_OK)
        return st;
    dlerror();
    handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!handle)
        return base_error(PRT_ERR_IO, "%s", loader_reason(path));
    /* Another spelling of a path already loaded gives the same handle. */
    for (int32_t i = 0; i < reg->nb_libs; i++) {
        if (reg->libs[i]->handle == handle) {
            dlclose(handle);
            return base_error(PRT_ERR_ALREADY_EXISTS,
                              "it is already loaded into this registry as %s",
                              reg->libs[i]->path);
        }
    }
    st = check_same_file(handle, &id);
    if (st == PRT_OK)
        st = load_opened(reg, path, path, handle, &id);
    if (st != PRT_OK)
        dlclose(handle);
    return st;
}

prt_status prt_registry_load_library(prt_registry *reg, const char *path)
{
    prt_status st;
    if (!reg || !path || !path[0])
        return base_error(PRT_ERR_INVALID_ARGUMENT, "prt_registry_load_library: %s",
                          !reg ? "registry is NULL" : "path is NULL or empty");
    /* Every message below says what is wrong; the library is named here,
     * once (callers print it as it is). */
    st = load_library(reg, path);
    return st ? base_error_prefix(st, "cannot load plugin library %s", path) : PRT_OK;
}

/* Another reference to an object some registry of the process opened from
 * a file whose bytes hash to `hash`, and that file's record; NULL when none
 * is open. RTLD_NOLOAD finds the object by the name it was opened with
 * (a deleted temporary file's too) and never loads anything; under the
 * lock, the object cannot be closed between the search and the new
 * reference. */
static void *reuse_open_library(uint64_t hash, registry_file_id *id, char **open_name)
{
    void *handle = NULL;
    pthread_mutex_lock(&open_libs_lock);
    for (const reg_library *l = open_libs; l && !handle; l = l->next_open) {
        if (!l->file.known || l->file.hash != hash)
            continue;
        handle = dlopen(l->open_name, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
        if (handle && handle != l->handle) { /* another object by that name */
            dlclose(handle);
            handle = NULL;
        }
        if (handle) {
            *id = l->file;
            *open_name = base_strdup(l->open_name);
            if (!*open_name) {
                dlclose(handle);
                handle = NULL;
                break;
            }
        }
    }
    pthread_mutex_unlock(&open_libs_lock);
    return handle;
}

/* registry_load_library_bytes less the label before its messages. */
static prt_status load_library_bytes(prt_registry *reg, const char *label,
                                     const char *file_name, const void *bytes,
                                     size_t size, uint64_t hash)
{
    char path[4096], dir[4096];
    char *open_name = NULL;
    registry_file_id id;
    prt_status st;
    void *handle = reuse_open_library(hash, &id, &open_name);
    if (!handle) {
        st = registry_write_temp_library(file_name, bytes, size, path, dir, sizeof path);
        if (st)
            return st;
        /* The copy is checked as any library file; its hash says the bytes
         * the loader will map are the ones the caller vouched for. */
        st = registry_check_library_file(path, &id);
        if (!st && id.hash != hash)
            st = base_error(PRT_ERR_IO,
                            "its temporary copy %s reads back with content hash "
                            "%016llx, not %016llx: something changed the file",
                            path, (unsigned long long)id.hash, (unsigned long long)hash);
        if (!st) {
            dlerror();
            handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
            if (!handle)
                st = base_error(PRT_ERR_IO,
                                "%s (its temporary copy was %s; a directory on a file "
                                "system mounted noexec cannot hold libraries to load: "
                                "set TMPDIR to another)",
                                loader_reason(path), path);
        }
        /* Mapped or refused, the file has served its purpose: the mapping
         * keeps the bytes, and nothing else should ever open them. */
        registry_remove_temp_library(path, dir);
        if (st)
            return st;
        open_name = base_strdup(path);
        if (!open_name) {
            dlclose(handle);
            return base_error(PRT_ERR_OUT_OF_MEMORY, "out of memory");
        }
    }
    st = PRT_OK;
    for (int32_t i = 0; i < reg->nb_libs && !st; i++)
        if (reg->libs[i]->handle == handle)
            st = base_error(PRT_ERR_ALREADY_EXISTS,
                            "it is already loaded into this registry as %s",
                            reg->libs[i]->path);
    if (!st)
        st = load_opened(reg, label, open_name, handle, &id);
    if (st)
        dlclose(handle);
    base_free(open_name);
    return st;
}

prt_status registry_load_library_bytes(prt_registry *reg, const char *label,
                                       const char *file_name, const void *bytes,
                                       size_t size, uint64_t hash)
{
    prt_status st;
    if (!reg || !label || !file_name || (!bytes && size))
        return base_error(PRT_ERR_INVALID_ARGUMENT,
                          "registry_load_library_bytes: NULL argument");
    st = load_library_bytes(reg, label, file_name, bytes, size, hash);
    return st ? base_error_prefix(st, "cannot load plugin library %s", label) : PRT_OK;
}

int registry_has_library_hash(const prt_registry *reg, uint64_t hash)
{
    for (int32_t i = 0; reg && hash && i < reg->nb_libs; i++)
        if (reg->libs[i]->file.known && reg->libs[i]->file.hash == hash)
            return 1;
    return 0;
}

prt_status prt_registry_unload_library(prt_registry *reg, const char *path)
{
    reg_library *lib = NULL;
    int32_t at = -1;
    int32_t kept = 0;
    if (!reg || !path)
        return base_error(PRT_ERR_INVALID_ARGUMENT,
                          "prt_registry_unload_library: %s is NULL",
                          reg ? "path" : "registry");
    for (int32_t i = 0; i < reg->nb_libs; i++) {
        if (strcmp(reg->libs[i]->path, path) == 0) {
            lib = reg->libs[i];
            at = i;
            break;
        }
    }
    if (!lib) {
        char libs[LIBS_CAP];
        registry_describe_libraries(reg, libs, sizeof libs);
        return base_error(PRT_ERR_NOT_FOUND,
                          "plugin library %s is not loaded into this "
                          "registry; %s",
                          path, libs);
    }
    /* Its creators go first: nothing may point into the library once it is
     * closed. Order of the others is kept. */
    for (int32_t i = 0; i < reg->nb_entries; i++) {
        if (reg->entries[i].lib != lib)
            reg->entries[kept++] = reg->entries[i];
    }
    reg->nb_entries = kept;
    memmove(&reg->libs[at], &reg->libs[at + 1],
            (size_t)(reg->nb_libs - at - 1) * sizeof *reg->libs);
    reg->nb_libs--;
    library_free(lib);
    return PRT_OK;
}
