/*
 * The ABI checks: the library's entry point and description, each
 * creator's key and field schema, and the tables of the plugins it makes
 * for either phase, with the identity they report. What "sane" means is
 * what plugin.h and the registry require, with lengths bounded
 * (CHK_NAME_MAX, CHK_DOC_MAX) so that an unterminated string is noticed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "check_case.h"
#include "describe.h"

#define LIBRARY_MIN_SIZE CHK_END_OF(prt_plugin_library, creators)
#define CREATOR_MIN_SIZE CHK_END_OF(prt_plugin_creator, create)
#define CHK_MAX_LIB_CREATORS 4096 /* a sane number of creators in a library */

/* abi_version of a table: 1 .. the ABI this header speaks. */
static int version_ok(uint32_t v)
{
    return v >= 1 && v <= PRT_PLUGIN_ABI_VERSION;
}

/* ---- plugins ----------------------------------------------------------------- */

prt_plugin *chk_create(chk_ctx *c, int32_t phase, const prt_field_collection *fc,
                       prt_status *out_st)
{
    const prt_plugin_creator *cr = c->creator;
    prt_plugin *p = NULL;
    prt_status st;
    char what[32], why[CHK_MSG];
    chk_guards g = {0};
    snprintf(what, sizeof what, "phase %d", (int)phase);
    chk_call_begin(c, "create(%s, %d fields)",
                   phase == PRT_PHASE_BUILD     ? "build phase"
                   : phase == PRT_PHASE_RUNTIME ? "runtime phase"
                                                : what,
                   fc ? (int)fc->nb_fields : 0);
    st = chk_call_end(c, cr->create(cr, "check", chk_guard_fields(&g, fc), phase, &p));
    if (chk_guards_end(&g, c->call, why, sizeof why)) {
        /* The fields were written: a fault of the check's plugin, not a
         * refusal of them. */
        chk_fail(c, "%s", why);
        p = NULL; /* its tables are not checked yet: left to the child's exit */
        st = PRT_ERR_PLUGIN;
        snprintf(c->error, sizeof c->error, "%s", why);
        c->nb_errors = 1;
    }
    c->null_plugin = st == PRT_OK && !p;
    if (c->null_plugin) {
        st = PRT_ERR_PLUGIN;
        snprintf(c->error, sizeof c->error,
                 "create returned PRT_OK but no plugin (plugin.h: on PRT_OK *out is the "
                 "new plugin)");
        c->nb_errors = 1;
    }
    if (out_st)
        *out_st = st;
    return st == PRT_OK ? p : NULL;
}

void chk_destroy(chk_ctx *c, prt_plugin *p)
{
    if (!p)
        return;
    chk_call_begin(c, "destroy");
    p->vt->runtime->destroy(p);
    chk_call_end(c, PRT_OK);
}

int chk_plugin_tables(const prt_plugin *p, int need_build, char *why, size_t cap)
{
    const prt_plugin_vtable *vt = p->vt;
    const prt_plugin_core *core;
    const prt_plugin_runtime *rt;
    const prt_plugin_build *b;
    if (!vt)
        return chk_say(why, cap, "the plugin has no vtable");
    if (!version_ok(vt->abi_version))
        return chk_say(why, cap, "the vtable has abi_version %u (1..%u)",
                       (unsigned)vt->abi_version, (unsigned)PRT_PLUGIN_ABI_VERSION);
    if (vt->struct_size < CHK_END_OF(prt_plugin_vtable, runtime))
        return chk_say(why, cap, "the vtable has struct_size %u (at least %zu)",
                       (unsigned)vt->struct_size, CHK_END_OF(prt_plugin_vtable, runtime));
    core = vt->core;
    rt = vt->runtime;
    b = vt->build;
    if (!core || core->struct_size < CHK_END_OF(prt_plugin_core, devices) ||
        !version_ok(core->abi_version))
        return chk_say(why, cap, "the core table is %s",
                       core ? "too small or of an unknown abi_version" : "NULL");
    if (!core->name || !core->version || !core->plugin_namespace || !core->devices)
        return chk_say(why, cap, "the core table lacks a required entry");
    if (!rt || rt->struct_size < CHK_END_OF(prt_plugin_runtime, destroy) ||
        !version_ok(rt->abi_version))
        return chk_say(why, cap, "the runtime table is %s",
                       rt ? "too small or of an unknown abi_version" : "NULL");
    if (!rt->enqueue || !rt->attach_to_context || !rt->get_fields_to_serialize ||
        !rt->clone || !rt->destroy)
        return chk_say(why, cap,
                       "the runtime table lacks a required entry (enqueue, "
                       "attach_to_context, get_fields_to_serialize, clone, destroy)");
    if (b &&
        (b->struct_size < CHK_END_OF(prt_plugin_build, supports_format_combination) ||
         !version_ok(b->abi_version)))
        return chk_say(why, cap,
                       "the build table is too small or of an unknown abi_version");
    if (need_build && !b)
        return chk_say(why, cap, "a build-phase plugin has no build table");
    if (b && (!b->nb_outputs || !b->get_output_dtypes || !b->get_output_shapes ||
              !b->supports_format_combination))
        return chk_say(why, cap,
                       "the build table lacks a required entry (nb_outputs, "
                       "get_output_dtypes, get_output_shapes, "
                       "supports_format_combination)");
    return 0;
}

static int same_string(chk_ctx *c, prt_plugin *p, const char *what,
                       const char *(*get)(const prt_plugin *), const char *want,
                       char *why, size_t cap)
{
    const char *got, *bad;
    chk_call_begin(c, "core.%s", what);
    got = get(p);
    chk_call_end(c, PRT_OK);
    bad = chk_string_problem(got, CHK_NAME_MAX);
    if (bad)
        return chk_say(why, cap, "the plugin's %s %s", what, bad);
    if (strcmp(got, want) != 0)
        return chk_say(why, cap, "the plugin reports %s \"%s\", its creator \"%s\"", what,
                       got, want);
    return 0;
}

int chk_plugin_identity(chk_ctx *c, prt_plugin *p, char *why, size_t cap)
{
    const prt_plugin_core *core = p->vt->core;
    const prt_plugin_creator *cr = c->creator;
    if (same_string(c, p, "name", core->name, cr->name, why, cap) ||
        same_string(c, p, "version", core->version, cr->version, why, cap) ||
        same_string(c, p, "namespace", core->plugin_namespace, cr->plugin_namespace, why,
                    cap))
        return -1;
    return 0;
}

/* ---- fields ------------------------------------------------------------------ */

size_t chk_field_type_size(int32_t type)
{
    static const size_t sizes[PRT_FIELD_TYPE_COUNT] = {
        1, 2, 4, 8, 2, 4, 8, 2, 1, sizeof(prt_dims), 1};
    return type >= 0 && type < PRT_FIELD_TYPE_COUNT ? sizes[type] : 0;
}

int chk_fields_problem(const prt_field_collection *fc, char *why, size_t cap)
{
    if (!fc)
        return chk_say(why, cap, "get_fields_to_serialize returned NULL");
    if (fc->nb_fields < 0 || fc->nb_fields > CHK_MAX_SCHEMA ||
        (fc->nb_fields > 0 && !fc->fields))
        return chk_say(why, cap, "the serialized collection has %d fields%s",
                       (int)fc->nb_fields, fc->fields ? "" : " and a NULL array");
    for (int32_t i = 0; i < fc->nb_fields; i++) {
        const prt_field *f = &fc->fields[i];
        const char *bad = chk_string_problem(f->name, CHK_NAME_MAX);
        if (bad)
            return chk_say(why, cap, "serialized field %d: its name %s", (int)i, bad);
        if (chk_field_type_size(f->type) == 0)
            return chk_say(why, cap, "serialized field '%s' has type %d", f->name,
                           (int)f->type);
        if (f->length < 0 || f->length > (1 << 28) || (f->length > 0 && !f->data))
            return chk_say(why, cap, "serialized field '%s' has length %lld%s", f->name,
                           (long long)f->length, f->data ? "" : " and no data");
        for (int32_t j = 0; j < i; j++)
            if (strcmp(fc->fields[j].name, f->name) == 0)
                return chk_say(why, cap, "field '%s' is serialized twice", f->name);
    }
    return 0;
}

void chk_fields_free(prt_field_collection *fc)
{
    if (!fc)
        return;
    for (int32_t i = 0; i < fc->nb_fields; i++) {
        free((void *)fc->fields[i].name);
        free((void *)fc->fields[i].data);
    }
    free((void *)fc->fields);
    free(fc);
}

prt_field_collection *chk_fields_copy(const prt_field_collection *fc)
{
    prt_field_collection *out = calloc(1, sizeof *out);
    prt_field *f = calloc((size_t)fc->nb_fields + 1, sizeof *f);
    if (!out || !f) {
        free(out);
        free(f);
        return NULL;
    }
    out->fields = f;
    for (int32_t i = 0; i < fc->nb_fields; i++) {
        const prt_field *s = &fc->fields[i];
        size_t bytes = (size_t)s->length * chk_field_type_size(s->type);
        char *name = cli_strdup(s->name);
        void *data = malloc(bytes ? bytes : 1);
        if (!name || !data) {
            free(name);
            free(data);
            chk_fields_free(out);
            return NULL;
        }
        if (bytes)
            memcpy(data, s->data, bytes);
        f[i] = (prt_field){name, data, s->type, s->length};
        out->nb_fields = i + 1;
    }
    return out;
}

int chk_fields_equal(const prt_field_collection *a, const prt_field_collection *b)
{
    if (a->nb_fields != b->nb_fields)
        return 0;
    for (int32_t i = 0; i < a->nb_fields; i++) {
        const prt_field *x = &a->fields[i], *y = &b->fields[i];
        if (strcmp(x->name, y->name) != 0 || x->type != y->type || x->length != y->length)
            return 0;
        if (x->length &&
            memcmp(x->data, y->data, (size_t)x->length * chk_field_type_size(x->type)))
            return 0;
    }
    return 1;
}

/* ---- the library --------------------------------------------------------------- */

static void record_creator(const prt_plugin_creator *cr, int32_t index,
                           chk_creator_info *info)
{
    memset(info, 0, sizeof *info);
    snprintf(info->name, sizeof info->name, "(creator %d)", (int)index);
    if (cr->struct_size < CHK_END_OF(prt_plugin_creator, fields))
        return;
    if (!chk_string_problem(cr->name, CHK_NAME_MAX))
        snprintf(info->name, sizeof info->name, "%s", cr->name);
    if (!chk_string_problem(cr->version, CHK_NAME_MAX))
        snprintf(info->version, sizeof info->version, "%s", cr->version);
    if (!chk_string_problem(cr->plugin_namespace, CHK_NAME_MAX))
        snprintf(info->ns, sizeof info->ns, "%s", cr->plugin_namespace);
    for (int32_t i = 0; cr->fields && i < cr->nb_fields && i < CHK_INFO_FIELDS; i++) {
        const prt_field_schema *f = &cr->fields[i];
        if (chk_string_problem(f->name, sizeof info->fields[0].name))
            continue;
        snprintf(info->fields[info->nb_fields].name, sizeof info->fields[0].name, "%s",
                 f->name);
        info->fields[info->nb_fields].type = f->type;
        info->fields[info->nb_fields].length = f->length;
        info->nb_fields++;
    }
}

/* The creators of a second answer have the keys of the first. */
static int same_keys(const prt_plugin_library *lib, const chk_library_info *info)
{
    for (int32_t i = 0; i < info->nb_creators; i++) {
        chk_creator_info again;
        if (!lib->creators || !lib->creators[i])
            return 0;
        record_creator(lib->creators[i], i, &again);
        if (strcmp(again.ns, info->creators[i].ns) ||
            strcmp(again.name, info->creators[i].name) ||
            strcmp(again.version, info->creators[i].version))
            return 0;
    }
    return 1;
}

static int library_description(chk_ctx *c)
{
    const prt_plugin_library *lib = c->lib;
    const char *bad;
    if (!version_ok(lib->abi_version))
        return chk_fail(c, "the library description has abi_version %u (1..%u)",
                        (unsigned)lib->abi_version, (unsigned)PRT_PLUGIN_ABI_VERSION),
               -1;
    if (lib->struct_size < LIBRARY_MIN_SIZE)
        return chk_fail(c, "the library description has struct_size %u (at least %zu)",
                        (unsigned)lib->struct_size, (size_t)LIBRARY_MIN_SIZE),
               -1;
    if ((bad = chk_string_problem(lib->name, CHK_NAME_MAX)) ||
        (bad = chk_string_problem(lib->version, CHK_NAME_MAX)))
        return chk_fail(c, "the library's %s %s",
                        chk_string_problem(lib->name, CHK_NAME_MAX) ? "name" : "version",
                        bad),
               -1;
    if (lib->nb_creators < 0 || lib->nb_creators > CHK_MAX_LIB_CREATORS ||
        (lib->nb_creators > 0 && !lib->creators))
        return chk_fail(c, "the library lists %d creators%s", (int)lib->nb_creators,
                        lib->creators ? "" : " and a NULL array"),
               -1;
    for (int32_t i = 0; i < lib->nb_creators; i++)
        if (!lib->creators[i])
            return chk_fail(c, "creator %d of %d is NULL", (int)i, (int)lib->nb_creators),
                   -1;
    return 0;
}

void chk_check_library(chk_ctx *c)
{
    chk_library_info *info = &c->sh->lib;
    const prt_plugin_library *again;
    prt_registry *reg = NULL;
    char msg[CHK_MSG];
    prt_status st;
    if (chk_library_open(c, msg, sizeof msg) != 0) {
        chk_fail(c, "%s", msg);
        return;
    }
    if (library_description(c) != 0)
        return;
    info->total = c->lib->nb_creators;
    info->nb_creators = info->total < CHK_MAX_CREATORS ? info->total : CHK_MAX_CREATORS;
    for (int32_t i = 0; i < info->nb_creators; i++)
        record_creator(c->lib->creators[i], i, &info->creators[i]);
    for (int32_t i = 0; i < info->nb_creators; i++)
        for (int32_t j = 0; j < i; j++) {
            const chk_creator_info *a = &info->creators[i], *b = &info->creators[j];
            char key[3 * CHK_NAME_MAX];
            if (strcmp(a->ns, b->ns) || strcmp(a->name, b->name) ||
                strcmp(a->version, b->version))
                continue;
            chk_fail(c, "the library lists %s twice (creators %d and %d)",
                     cli_plugin_key(a->ns, a->name, a->version, key, sizeof key), (int)j,
                     (int)i);
            return;
        }
    /* A library loaded into several registries is asked each time. */
    chk_call_begin(c, "%s, a second time", PRT_PLUGIN_ENTRY_SYMBOL);
    again = c->entry(PRT_PLUGIN_ABI_VERSION, chk_host_services(c));
    chk_call_end(c, PRT_OK);
    if (!again || again->struct_size < LIBRARY_MIN_SIZE ||
        again->nb_creators != c->lib->nb_creators || !same_keys(again, info)) {
        chk_fail(c, "asked a second time, the entry point answers %s",
                 again ? "with other creators" : "NULL");
        return;
    }
    /* What libplugrt itself makes of the file: its ELF checks and keys.
     * A library given by its entry point has no file: its creators, as
     * the Python package adds them. */
    st = prt_registry_create(&reg);
    if (st == PRT_OK && !chk_library_is_given())
        st = prt_registry_load_library(reg, c->lib_path);
    for (int32_t i = 0; st == PRT_OK && chk_library_is_given() && i < info->total; i++)
        st = prt_registry_add_creator(reg, c->lib->creators[i]);
    if (st != PRT_OK) {
        chk_fail(c, "libplugrt's registry refuses it: %s [%s]", prt_last_error(),
                 prt_status_name(st));
        prt_registry_destroy(reg);
        return;
    }
    prt_registry_destroy(reg);
    chk_pass(
        c, "the entry point answers ABI %u with %d creator%s; libplugrt's registry %s",
        (unsigned)PRT_PLUGIN_ABI_VERSION, (int)info->total, info->total == 1 ? "" : "s",
        chk_library_is_given() ? "takes its creators" : "loads it");
}

/* ---- one creator ----------------------------------------------------------------- */

static int creator_problem(chk_ctx *c)
{
    const prt_plugin_creator *cr = c->creator;
    const char *bad;
    if (!version_ok(cr->abi_version))
        return chk_fail(c, "the creator has abi_version %u (1..%u)",
                        (unsigned)cr->abi_version, (unsigned)PRT_PLUGIN_ABI_VERSION),
               -1;
    if (cr->struct_size < CREATOR_MIN_SIZE)
        return chk_fail(c, "the creator has struct_size %u (at least %zu)",
                        (unsigned)cr->struct_size, (size_t)CREATOR_MIN_SIZE),
               -1;
    if ((bad = chk_string_problem(cr->name, CHK_NAME_MAX)))
        return chk_fail(c, "the creator's name %s", bad), -1;
    if ((bad = chk_string_problem(cr->version, CHK_NAME_MAX)))
        return chk_fail(c, "the creator's version %s", bad), -1;
    if ((bad = chk_string_problem(cr->plugin_namespace, CHK_NAME_MAX)))
        return chk_fail(c, "the creator's namespace %s", bad), -1;
    if (!cr->name[0] || !cr->version[0])
        return chk_fail(c, "the creator's %s is empty", cr->name[0] ? "version" : "name"),
               -1;
    if (!cr->create)
        return chk_fail(c, "the creator has no create entry"), -1;
    if (cr->nb_fields < 0 || cr->nb_fields > CHK_MAX_SCHEMA ||
        (cr->nb_fields > 0 && !cr->fields))
        return chk_fail(c, "the creator lists %d fields%s", (int)cr->nb_fields,
                        cr->fields ? "" : " and a NULL schema"),
               -1;
    for (int32_t i = 0; i < cr->nb_fields; i++) {
        const prt_field_schema *f = &cr->fields[i];
        if ((bad = chk_string_problem(f->name, CHK_NAME_MAX)) || !f->name[0])
            return chk_fail(c, "schema field %d: its name %s", (int)i,
                            bad ? bad : "is empty"),
                   -1;
        if (f->type < 0 || f->type >= PRT_FIELD_TYPE_COUNT)
            return chk_fail(c, "schema field '%s' has type %d", f->name, (int)f->type),
                   -1;
        if (f->length < -1)
            return chk_fail(c, "schema field '%s' has length %lld (-1 is any)", f->name,
                            (long long)f->length),
                   -1;
        if (f->doc && (bad = chk_string_problem(f->doc, CHK_DOC_MAX)))
            return chk_fail(c, "the doc of schema field '%s' %s", f->name, bad), -1;
        for (int32_t j = 0; j < i; j++)
            if (strcmp(cr->fields[j].name, f->name) == 0)
                return chk_fail(c, "schema field '%s' is listed twice", f->name), -1;
    }
    return 0;
}

/* The tables, the identity and the build-phase answers of one plugin. */
static int plugin_problem(chk_ctx *c, prt_plugin *p, int build, char *why, size_t cap)
{
    uint32_t dev;
    if (chk_plugin_tables(p, build, why, cap) || chk_plugin_identity(c, p, why, cap))
        return -1;
    chk_call_begin(c, "core.devices");
    dev = p->vt->core->devices(p);
    chk_call_end(c, PRT_OK);
    if (dev == 0 || dev >> PRT_DEVICE_COUNT)
        return chk_say(why, cap, "devices() answers 0x%x", (unsigned)dev);
    if (build) {
        const prt_plugin_build *b = p->vt->build;
        int32_t n1, n2;
        chk_call_begin(c, "build.nb_outputs");
        n1 = b->nb_outputs(p);
        n2 = b->nb_outputs(p);
        chk_call_end(c, PRT_OK);
        if (n1 < 1 || n1 > CHK_MAX_OUT || n1 != n2)
            return chk_say(why, cap, "nb_outputs answers %d, then %d (1..%d)", (int)n1,
                           (int)n2, CHK_MAX_OUT);
        if (b->struct_size >= CHK_END_OF(prt_plugin_build, requires_host_dims) &&
            b->requires_host_dims)
            for (int32_t d = 0; d < PRT_DEVICE_COUNT; d++) {
                int32_t r;
                chk_call_begin(c, "build.requires_host_dims(%s)", cli_device_name(d));
                r = b->requires_host_dims(p, d);
                chk_call_end(c, PRT_OK);
                if (r != 0 && r != 1)
                    return chk_say(why, cap, "requires_host_dims(%s) answers %d",
                                   cli_device_name(d), (int)r);
            }
    }
    return 0;
}

void chk_check_abi(chk_ctx *c)
{
    const prt_plugin_creator *cr = c->creator;
    const prt_field_collection *ser;
    prt_field_collection *copy = NULL;
    prt_plugin *p, *r;
    char why[CHK_MSG];
    if (creator_problem(c) != 0)
        return;
    c->sh->creator_ok = 1;
    p = chk_create(c, PRT_PHASE_BUILD, c->fields, NULL);
    if (!p && c->null_plugin) {
        /* Not a refusal: the host would go on with no plugin. */
        chk_fail(c, "create(build phase, %d fields): %s", (int)c->fields->nb_fields,
                 chk_call_error(c));
        return;
    }
    if (!p) {
        if (c->fields->nb_fields > 0)
            chk_fail(c, "the creator refuses the example fields: %s", chk_call_error(c));
        else
            chk_pass(c,
                     "creator and schema (%d fields) sane; it refuses its default "
                     "fields, so nothing of it can be tested (untested: give the fields "
                     "with --fields): %s",
                     (int)cr->nb_fields, chk_call_error(c));
        return;
    }
    if (chk_plugin_tables(p, 1, why, sizeof why) != 0) {
        chk_fail(c, "build-phase plugin: %s", why);
        return; /* its tables cannot be trusted to destroy it */
    }
    c->sh->tables_ok = 1;
    if (plugin_problem(c, p, 1, why, sizeof why) != 0)
        chk_fail(c, "build-phase plugin: %s", why);
    chk_call_begin(c, "get_fields_to_serialize");
    ser = p->vt->runtime->get_fields_to_serialize(p);
    chk_call_end(c, PRT_OK);
    if (chk_fields_problem(ser, why, sizeof why) != 0) {
        chk_fail(c, "%s", why);
        return;
    }
    copy = chk_fields_copy(ser);
    chk_destroy(c, p);
    if (!copy) {
        chk_fail(c, "out of memory");
        return;
    }
    r = chk_create(c, PRT_PHASE_RUNTIME, copy, NULL);
    if (!r) {
        chk_fail(c,
                 "create(runtime phase) refuses the plugin's own serialized fields: %s",
                 chk_call_error(c));
    } else if (chk_plugin_tables(r, 0, why, sizeof why) != 0) {
        chk_fail(c, "runtime-phase plugin: %s", why);
        c->sh->tables_ok = 0;
        r = NULL;
    } else if (plugin_problem(c, r, 0, why, sizeof why) != 0) {
        chk_fail(c, "runtime-phase plugin: %s", why);
    }
    chk_destroy(c, r);
    chk_pass(c,
             "creator, schema (%d fields) and plugin tables sane; both phases report the "
             "creator's key; %d serialized fields recreate it",
             (int)cr->nb_fields, (int)copy->nb_fields);
    chk_fields_free(copy);
}
