/*
 * Resize's CUDA kernel (ops.h): resize.c's plan for the run (its checks,
 * each axis's scale, from scales in host memory when they are a shape
 * input; keep_aspect_ratio_policy's scale left to the device when sizes lie
 * in its memory), placed in the op's workspace, then
 * resize.cu's launches.
 */
#include "ops/cuda/launch.h"
#include "ops/cuda/ops.h"
#include "ops/ops_nn.h"
#include "ops/resize_taps.h"

OPC_KERNEL(opc_resize)
{
    rs_plan pl;
    float *xf;
    int planes;
    /* Input 1 in host memory (a shape input: sizes, or scales given at run
     * time) is read here; sizes in device memory only by the device. */
    const void *host = nb_in > 1 && prt_tensor_desc_on_host(&in[1]) ? x[1] : NULL;
    prt_status st = rs_plan_make(o, in, nb_in, &out->dims, host, &pl);
    (void)nb_out;
    if (st)
        return st;
    planes = rs_planes_ok(&pl);
    xf = rs_plan_place(&pl, ws);
    return opc_status(o, opk_resize(&pl, nb_in > 1 && !host ? x[1] : NULL,
                                    nb_in > 1 ? in[1].dtype : PRT_INT64, dtype,
                                    (int32_t)prt_dtype_size(dtype), x[0], xf,
                                    base_volume(&in[0].dims), y[0],
                                    base_volume(&out->dims), planes, stream));
}
