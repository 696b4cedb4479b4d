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
     * them. An object configured with a dtype outside the mask no longer
     * lists the device (plugin.h, devices), so a build for the device fails
     * there naming the layer, the op and the dtype. */
    uint32_t dtypes;
    /* 1: the kernel uses the device's per-object resources (o->res[device],
     * made by the table's attach; a cuBLAS handle); 2: the same without a
     * workspace of its own (CUDA: a handle that runs products needing
     * none). */
    int32_t resources;
} op_device_kernel;

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
} op_device_table;

/* The kernel table of `device` (prt_device) in this build; NULL for the
 * CPU (whose kernel is each class's `run`) and for a device this build has
 * no kernels for. Static storage. */
const op_device_table *op_device_table_get(int32_t device);

/* `op`'s kernel in t (may be NULL), or NULL. */
const op_device_kernel *op_device_kernel_find(const op_device_table *t, const char *op);

/* The CUDA table (src/ops/cuda/table.c), NULL in a build without CUDA. */
const op_device_table *op_cuda_table(void);

#endif /* PLUGRT_OPS_OP_DEVICE_H */
