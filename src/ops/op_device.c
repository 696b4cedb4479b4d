/* The devices' kernel tables (op_device.h). */
#include "ops/op_device.h"

#include <string.h>

const op_device_table *op_device_table_get(int32_t device)
{
    /* One line per device with a folder of kernels (src/ops/<device>/). */
    switch (device) {
    case PRT_DEVICE_CUDA:
        return op_cuda_table();
    default:
        return NULL;
    }
}

const op_device_kernel *op_device_kernel_find(const op_device_table *t, const char *op)
{
    for (int32_t i = 0; t && i < t->count; i++)
        if (strcmp(t->kernels[i].op, op) == 0)
            return &t->kernels[i];
    return NULL;
}

const op_device_tuning *op_device_tuning_find(const op_device_table *t, const char *op)
{
    for (int32_t i = 0; t && i < t->nb_tuning; i++)
        if (strcmp(t->tuning[i].op, op) == 0)
            return &t->tuning[i];
    return NULL;
}
