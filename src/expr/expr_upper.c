/* Evaluation where a size that is not known yet stands at its upper bound:
 * what memory must hold before a data-dependent layer has run. */
#include <string.h>

#include "expr/expr.h"

prt_status expr_program_eval_upper(const expr_program *p, const expr_env *env,
                                   int64_t *size_scratch, uint8_t *known_scratch,
                                   int64_t *values, uint8_t *known)
{
    expr_env e = *env;
    prt_status st;
    /* Each pass fixes at least the sizes whose upper bound became known;
     * chains of sizes bounded by sizes need at most nb_sizes + 1 passes. */
    if (e.nb_sizes > 0) {
        if (env->size_values)
            memcpy(size_scratch, env->size_values, sizeof(int64_t) * (size_t)e.nb_sizes);
        else
            memset(size_scratch, 0, sizeof(int64_t) * (size_t)e.nb_sizes);
        if (env->size_known)
            memcpy(known_scratch, env->size_known, (size_t)e.nb_sizes);
        else
            memset(known_scratch, 1, (size_t)e.nb_sizes);
    }
    e.size_values = size_scratch;
    e.size_known = known_scratch;
    for (int32_t pass = 0; pass <= e.nb_sizes; pass++) {
        int changed = 0;
        st = expr_program_eval(p, &e, values, known);
        if (st)
            return st;
        for (int32_t i = 0; i < p->nb_nodes; i++) {
            const expr_node *n = &p->nodes[i];
            if (n->kind != EXPR_SIZE || known_scratch[n->imm] || !known[n->b])
                continue;
            size_scratch[n->imm] = values[n->b];
            known_scratch[n->imm] = 1;
            changed = 1;
        }
        if (!changed)
            return PRT_OK;
    }
    return PRT_OK;
}
