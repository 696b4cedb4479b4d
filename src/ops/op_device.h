/*
 * Where the built-in ops' kernels for each device come from (internal to
 * libplugrt).
 *
 * An op's class (op_common.h) holds its definition and its CPU kernel, the
 * reference every other device is tested against. Every other device has
 * one table in its own folder, src/ops/<device>/, listing the ops it has a
 * kernel for, by the op's name. When an op object is created the scaffold
 * looks its name up in each device's table (op_create); an op with no entry
 * does not run on that device, so a build for it fails naming the layer.
 * No op definition names a device.
 *
 * Adding a device is a folder with its kernels, one table, and one line in
 * op_device_table_get. Adding one op's kernel on a device: write the
 * kernel (an op_kernel_fn) in that device's folder and add a line to the
 * device's table (src/ops/cuda/table.c for CUDA); test_op_coverage then
 * requires a case for the op, and runs it against the CPU's kernel.
 */
#ifndef PLUGRT_OPS_OP_DEVICE_H
#define PLUGRT_OPS_OP_DEVICE_H

#include <stdint.h>

#include "ops/op_common.h"

/* One op's kernel on one device. */
typedef struct op_device_kernel {
    const char *op; /* the built-in op's name, as its creator's ("Relu") */
    op_kernel_fn run;
    /* The dtypes (OP_DT mask) of the op's key input (op_class.dtype_input)
     * this kernel takes, when fewer than the class accepts; 0: all of
     * them but the wide ones (OP_DT_WIDE: float64, int16, uint16/32/64),
     * which no input or output of the layer may then have. An object configured with a
     * dtype outside the mask no longer lists the device (plugin.h, devices), so a build
     * for the device fails there naming the layer, the op and the dtype. */
    uint32_t dtypes;
    /* 1: the kernel uses the device's per-object resources (o->res[device],
     * made by the table's attach; a cuBLAS handle); 2: the same without a
     * workspace of its own (CUDA: a handle that runs products needing
     * none); 3: the op's own (CUDA's Conv: a cuBLAS handle without a
     * workspace, and a cuDNN handle when its tactic is cuDNN's); 4: CUDA's
     * integer products' cuBLASLt handle (qgemm_cuda.c). */
    int32_t resources;
} op_device_kernel;

/* The key input's dtypes kd takes (op_device_kernel.dtypes, 0 read). */
static inline uint32_t op_device_kernel_dtypes(const op_device_kernel *kd)
{
    return kd->dtypes ? kd->dtypes : ~(uint32_t)OP_DT_WIDE;
}

/* Tactics of one op's kernel on one device (optional): implementations
 * the builder's tuner times against each other, as it does a plugin's
 * (plugin.h, get_valid_tactics). The tactic chosen is the layer's, stored
 * in the engine; the kernel reads it from o->tactic. Tactic 0 is always the
 * kernel's default (what an engine without a choice runs), listed first. */
typedef struct op_device_tuning {
    const char *op; /* the op's name, as op_device_kernel's */
    /* Writes up to cap tactics for o at input dims opt[0..nb_in) (the
     * profile's opt shape, which the tuner times; max[] the maxima, which
     * a tactic's workspace must cover) and `dtype` into list, the default
     * first, and returns their count. Called while building for this
     * device, after configure. */
    int32_t (*tactics)(const op_object *o, int32_t dtype, const prt_dims *opt,
                       const prt_dims *max, int32_t nb_in, int32_t *list, int32_t cap);
    /* What `tactic` is, for logs and `plugrt inspect` (static storage), or
     * NULL when the kernel has no such tactic: set_tactic refuses it. */
    const char *(*name)(int32_t tactic);
    /* The bytes of workspace the tactic adds to the op's own need at any
     * shape (fixed when the tactic is chosen, so that a machine that lacks
     * the library behind it still computes the layer's claim); NULL: 0. */
    int64_t (*workspace)(int32_t tactic);
} op_device_tuning;

/* One device's kernels. */
typedef struct op_device_table {
    int32_t device;   /* prt_device */
    const char *name; /* "CUDA": for messages */
    const op_device_kernel *kernels;
    int32_t count;
    /* Makes o->res[device] for an object whose kernel has `resources` set:
     * called when a context of this device attaches the object (stream
     * NULL), or at the first run of an object no context attached (the
     * builder's timing runs) with that run's stream. Allocates through
     * src/device/. Fails naming why (the library missing; during a graph
     * capture, where nothing may be allocated). */
    prt_status (*attach)(op_object *o, void *stream);
    /* Frees o->res[device] (set) when the object is destroyed. */
    void (*detach)(op_object *o);
    /* The ops whose kernels have tactics (may be NULL: none). */
    const op_device_tuning *tuning;
    int32_t nb_tuning;
} op_device_table;

/* The kernel table of `device` (prt_device) in this build; NULL for the
 * CPU (whose kernel is each class's `run`) and for a device this build has
 * no kernels for. Static storage. */
const op_device_table *op_device_table_get(int32_t device);

/* `op`'s kernel in t (may be NULL), or NULL. */
const op_device_kernel *op_device_kernel_find(const op_device_table *t, const char *op);

/* `op`'s tactics in t (may be NULL), or NULL. */
const op_device_tuning *op_device_tuning_find(const op_device_table *t, const char *op);

/* The CUDA table (src/ops/cuda/table.c), NULL in a build without CUDA. */
const op_device_table *op_cuda_table(void);

#endif /* PLUGRT_OPS_OP_DEVICE_H */
