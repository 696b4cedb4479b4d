/*
 * Resize's CUDA kernel (ops.h): resize.c's plan for the run (its checks,
 * each axis's scale; keep_aspect_ratio_policy's scale left to the device,
 * which reads sizes from its memory), placed in the op's workspace, then
 * resize.cu's launches.
 */
#include "ops/cuda/launch.h"
#include "ops/cuda/ops.h"
#include "ops/ops_nn.h"
#include "ops/resize_taps.h"

/* Whether every axis before the last two maps each index to itself
 * (resize.c's rs_planes_ok), from those axes' taps computed here with the
 * same code as the device's (their scales are the host's; an axis whose
 * scale the device computes, keep_aspect_ratio_policy's, does not qualify).
 * 0 where the host's scratch cannot be had: the generic kernel. */
static int rsc_planes(const rs_plan *pl)
{
    int ok = pl->rank >= 2 && pl->p.mode != RS_NEAREST;
    for (int32_t i = 0; ok && i < pl->rank - 2; i++) {
        rs_axis a = pl->ax[i];
        if (a.in != a.out || (pl->keep_on_device && pl->axis_of[i] >= 0) || a.taps < 1) {
            ok = 0;
            break;
        }
        a.lo = base_malloc(sizeof(int64_t) * (size_t)a.out);
        a.cnt = base_malloc(sizeof(int64_t) * (size_t)a.out);
        a.w = base_malloc(sizeof(double) * (size_t)(a.out * a.taps));
        ok = a.lo && a.cnt && a.w;
        for (int64_t x = 0; ok && x < a.out; x++) {
            int64_t live = 0;
            rs_axis_row(&pl->p, &a, x);
            for (int64_t k = 0; k < a.cnt[x]; k++)
                if (a.w[x * a.taps + k] != 0.0) {
                    ok = ok && a.w[x * a.taps + k] == 1.0 && a.lo[x] + k == x;
                    live++;
                }
            ok = ok && live == 1;
        }
        base_free(a.lo);
        base_free(a.cnt);
        base_free(a.w);
    }
    return ok;
}

OPC_KERNEL(opc_resize)
{
    rs_plan pl;
    float *xf;
    int planes;
    prt_status st = rs_plan_make(o, in, nb_in, &out->dims, NULL, &pl);
    (void)nb_out;
    if (st)
        return st;
    planes = rsc_planes(&pl);
    xf = rs_plan_place(&pl, ws);
    return opc_status(o, opk_resize(&pl, nb_in > 1 ? x[1] : NULL,
                                    nb_in > 1 ? in[1].dtype : PRT_INT64, dtype,
                                    (int32_t)prt_dtype_size(dtype), x[0], xf,
                                    base_volume(&in[0].dims), y[0],
                                    base_volume(&out->dims), planes, stream));
}
