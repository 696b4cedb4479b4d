/* Plugin objects as the runtime holds and makes them (check_objects.h). */
#include "check_objects.h"

#include "check_case.h"

#include <stddef.h>
#include <string.h>

prt_status chk_set_tactic(chk_ctx *c, chk_obj *o, int32_t tactic)
{
    prt_status (*set)(prt_plugin *, int32_t) = CHK_RUNTIME(o->p, set_tactic);
    prt_status st = PRT_OK;
    if (set) {
        chk_call_begin(c, "set_tactic(%d)", (int)tactic);
        st = chk_call_end(c, set(o->p, tactic));
    } else if (tactic != 0) {
        st = PRT_ERR_UNSUPPORTED;
    }
    if (st == PRT_OK)
        o->tactic = tactic;
    return st;
}

prt_plugin *chk_clone(chk_ctx *c, prt_plugin *p, const char *what)
{
    char why[CHK_MSG];
    prt_plugin *q;
    chk_call_begin(c, "clone");
    q = p->vt->runtime->clone(p);
    chk_call_end(c, PRT_OK);
    if (!q) {
        chk_fail(c, "%s: clone returned NULL", what);
        return NULL;
    }
    if (chk_plugin_tables(q, p->vt->build != NULL, why, sizeof why) ||
        chk_plugin_identity(c, q, why, sizeof why)) {
        chk_fail(c, "%s: the clone: %s", what, why);
        return NULL;
    }
    return q;
}

prt_plugin *chk_engine_plugin(chk_ctx *c, prt_plugin *p, int32_t tactic)
{
    const prt_field_collection *ser;
    prt_field_collection *copy;
    prt_plugin *e;
    chk_obj tmp;
    char why[CHK_MSG];
    chk_call_begin(c, "get_fields_to_serialize");
    ser = p->vt->runtime->get_fields_to_serialize(p);
    chk_call_end(c, PRT_OK);
    if (chk_fields_problem(ser, why, sizeof why)) {
        chk_fail(c, "%s", why);
        return NULL;
    }
    copy = chk_fields_copy(ser);
    if (!copy) {
        chk_fail(c, "out of memory");
        return NULL;
    }
    e = chk_create(c, PRT_PHASE_RUNTIME, copy, NULL);
    chk_fields_free(copy);
    if (!e) {
        chk_fail(c, "create(runtime phase) refuses the serialized fields: %s",
                 chk_call_error(c));
        return NULL;
    }
    if (chk_plugin_tables(e, 0, why, sizeof why)) {
        chk_fail(c, "the runtime-phase plugin: %s", why);
        return NULL;
    }
    memset(&tmp, 0, sizeof tmp);
    tmp.p = e;
    if (chk_set_tactic(c, &tmp, tactic) != PRT_OK) {
        chk_fail(c, "the runtime-phase plugin refuses tactic %d: %s", (int)tactic,
                 chk_call_error(c));
        chk_destroy(c, e);
        return NULL;
    }
    return e;
}

prt_plugin *chk_attach(chk_ctx *c, prt_plugin *e, int32_t device, int32_t tactic,
                       chk_obj *o)
{
    /* The device only, as an older host gives it: the check has no
     * context whose memory, errors and shared objects a plugin could use,
     * and plugin.h asks every plugin to do without them. */
    prt_plugin_resources res = {
        .struct_size =
            (uint32_t)(offsetof(prt_plugin_resources, device) + sizeof(int32_t)),
        .abi_version = PRT_PLUGIN_ABI_VERSION,
        .device = device};
    char why[CHK_MSG];
    chk_guards g = {0};
    prt_plugin *x;
    chk_call_begin(c, "attach_to_context");
    x = e->vt->runtime->attach_to_context(
        e, chk_guard_out(&g, "resources", &res, 1, sizeof res));
    chk_call_end(c, PRT_OK);
    if (chk_guards_end(&g, c->call, why, sizeof why)) {
        chk_fail(c, "%s", why);
        chk_destroy(c, x == e ? NULL : x);
        return NULL;
    }
    if (!x) {
        chk_fail(c, "attach_to_context returned NULL");
        return NULL;
    }
    if (x == e || chk_plugin_tables(x, 0, why, sizeof why) ||
        chk_plugin_identity(c, x, why, sizeof why)) {
        chk_fail(c, "attach_to_context: %s",
                 x == e ? "it returned the engine's own plugin" : why);
        return NULL;
    }
    memset(o, 0, sizeof *o);
    o->p = x;
    if (chk_set_tactic(c, o, tactic) != PRT_OK) {
        chk_fail(c, "a context's plugin refuses tactic %d: %s", (int)tactic,
                 chk_call_error(c));
        chk_destroy(c, x);
        return NULL;
    }
    return x;
}
