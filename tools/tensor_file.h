/*
 * Tensor files `plugrt run` reads: NumPy .npy files, and serialized ONNX
 * TensorProtos (.pb, the layout of ONNX's own test data:
 * test_data_set_N/input_K.pb and output_K.pb, each holding the tensor's
 * name), so a model's ONNX test data runs as it is:
 * `plugrt run model.onnx --compare test_data_set_0`.
 */
#ifndef PLUGRT_TOOLS_TENSOR_FILE_H
#define PLUGRT_TOOLS_TENSOR_FILE_H

#include <stddef.h>

#include "npy.h"

/* 1 if `path` ends in ".pb". */
int cli_is_pb_path(const char *path);

/* Reads a .npy file, or a .pb TensorProto (a program without the ONNX
 * importer says it cannot). *out is filled as npy_read fills it (free with
 * npy_array_free); *out_name (may be NULL) gets the TensorProto's name,
 * malloc'd and the caller's ("" for a .npy or a proto without one).
 * Returns 0, or -1 with a message naming the file in err. */
int cli_tensor_read(const char *path, npy_array *out, char **out_name, char *err,
                    size_t errlen);

/* The reference for output `name` (the engine's `index`-th output) among
 * DIR/output_*.pb: the file whose TensorProto has that name, else
 * output_<index>.pb if its tensor has no name. 1 found (*out filled, path
 * in path_out), 0 none, -1 a file that cannot be read (message in err). */
int cli_find_pb_output(const char *dir, const char *name, int index, npy_array *out,
                       char *path_out, size_t path_cap, char *err, size_t errlen);

#endif /* PLUGRT_TOOLS_TENSOR_FILE_H */
