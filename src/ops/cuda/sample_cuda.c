/*
 * GridSample's and RoiAlign's CUDA kernels (ops.h): the parameters sample.c
 * makes for the CPU's run, then sample.cu's launch over every output
 * element. RoiAlign's batch indices and sampling grids live in device
 * memory, unchecked here: sample.h says what the kernel gives for those
 * the CPU refuses.
 */
#include "ops/cuda/launch.h"
#include "ops/cuda/ops.h"
#include "ops/ops_nn.h"
#include "ops/sample.h"

OPC_KERNEL(opc_grid_sample)
{
    opk_gs_params p;
    (void)nb_in, (void)nb_out, (void)ws;
    gs_params_of(o, in, &out->dims, &p);
    return opc_status(
        o, opk_grid_sample(&p, x[0], x[1], y[0], dtype, base_volume(&out->dims), stream));
}

OPC_KERNEL(opc_roi_align)
{
    opk_roi_params p;
    (void)dtype, (void)nb_in, (void)nb_out, (void)ws;
    roi_params_of(o, in, &p);
    return opc_status(
        o, opk_roi_align(&p, x[0], x[1], x[2], y[0], base_volume(&out->dims), stream));
}
