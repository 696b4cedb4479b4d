/*
 * Plugin objects as the runtime holds them (chk_obj), and the ones it makes
 * from a plugin, made the way it makes them and checked as they are made:
 * a clone, the plugin an engine holds (created for the runtime phase from
 * the serialized fields) and a context's plugin (attach_to_context). A
 * check that finds one unusable fails, naming what went wrong.
 */
#ifndef PLUGRT_TOOLS_CHECK_OBJECTS_H
#define PLUGRT_TOOLS_CHECK_OBJECTS_H

#include "check.h"

/* A plugin object and what it was last told (on_shape_change), as the
 * runtime keeps it per context. */
typedef struct chk_obj {
    prt_plugin *p;
    int told;
    prt_tensor_desc in[CHK_MAX_IN], out[CHK_MAX_OUT];
    int32_t tactic;
} chk_obj;

/* set_tactic on an object (the entry may be NULL: only tactic 0). */
prt_status chk_set_tactic(chk_ctx *c, chk_obj *o, int32_t tactic);

/* p's clone, with tables and identity checked. NULL, with the check failed
 * naming `what`, when that does not work. */
prt_plugin *chk_clone(chk_ctx *c, prt_plugin *p, const char *what);
/* The plugin an engine holds: created for the runtime phase from p's
 * serialized fields, then set to `tactic` (as prt_engine_deserialize).
 * NULL, with the check failed, when that does not work. */
prt_plugin *chk_engine_plugin(chk_ctx *c, prt_plugin *p, int32_t tactic);
/* A context's plugin into o: attach_to_context on an engine plugin, with
 * resources for `device`, then its tactic set. NULL with the check
 * failed when that does not work. */
prt_plugin *chk_attach(chk_ctx *c, prt_plugin *e, int32_t device, int32_t tactic,
                       chk_obj *o);

#endif /* PLUGRT_TOOLS_CHECK_OBJECTS_H */
