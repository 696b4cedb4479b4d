/* .npy and ONNX TensorProto (.pb) tensor files for `plugrt run`. */
#include "tensor_file.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "text.h"

#if PRT_HAVE_ONNX
#include "plugrt/onnx.h"
#endif

int cli_is_pb_path(const char *path)
{
    size_t n = strlen(path);
    return n > 3 && strcmp(path + n - 3, ".pb") == 0;
}

static int read_pb(const char *path, npy_array *out, char **out_name, char *err,
                   size_t errlen)
{
#if PRT_HAVE_ONNX
    char *name = NULL;
    void *data = NULL;
    int32_t dtype;
    prt_dims dims;
    int64_t vol;
    size_t bytes;
    void *copy;
    prt_status st = prt_onnx_read_tensor_file(path, &name, &dtype, &dims, &data);
    if (st) {
        /* The importer's message names the file. */
        snprintf(err, errlen, "%s [%s]", prt_last_error(), prt_status_name(st));
        return -1;
    }
    vol = npy_volume(&dims);
    bytes = vol > 0 ? (size_t)vol * prt_dtype_size(dtype) : 0;
    /* npy_array's data is malloc'd (npy_array_free); the importer's is
     * prt_malloc'd. Test data is small: one copy. */
    copy = malloc(bytes ? bytes : 1);
    if (copy && out_name && !(*out_name = cli_strdup(name ? name : ""))) {
        free(copy);
        copy = NULL;
    }
    if (!copy) {
        prt_free(name);
        prt_free(data);
        char ep[CLI_ESC_CAP];
        snprintf(err, errlen, "%s: out of memory for %zu bytes",
                 cli_escape(path, ep, sizeof ep), bytes);
        return -1;
    }
    if (bytes)
        memcpy(copy, data, bytes);
    prt_free(name);
    prt_free(data);
    out->dtype = dtype;
    out->dims = dims;
    out->data = copy;
    out->nbytes = bytes;
    return 0;
#else
    char ep[CLI_ESC_CAP];
    (void)out;
    (void)out_name;
    snprintf(err, errlen,
             "%s: this plugrt was built without the ONNX importer, which reads "
             "TensorProto (.pb) files; convert it to .npy (onnx.numpy_helper.to_array)",
             cli_escape(path, ep, sizeof ep));
    return -1;
#endif
}

int cli_tensor_read(const char *path, npy_array *out, char **out_name, char *err,
                    size_t errlen)
{
    if (cli_is_pb_path(path))
        return read_pb(path, out, out_name, err, errlen);
    if (npy_read(path, out, err, errlen) != 0)
        return -1;
    if (out_name && !(*out_name = cli_strdup(""))) {
        char ep[CLI_ESC_CAP];
        npy_array_free(out);
        snprintf(err, errlen, "%s: out of memory", cli_escape(path, ep, sizeof ep));
        return -1;
    }
    return 0;
}

int cli_find_pb_output(const char *dir, const char *name, int index, npy_array *out,
                       char *path_out, size_t path_cap, char *err, size_t errlen)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    char by_index[32];
    int found = 0, unread = 0;
    if (!d)
        return 0;
    snprintf(by_index, sizeof by_index, "output_%d.pb", index);
    while (!found && (e = readdir(d)) != NULL) {
        size_t n = strlen(e->d_name);
        char *tname = NULL, scratch[256];
        npy_array a;
        if (n <= 10 || strncmp(e->d_name, "output_", 7) != 0 ||
            strcmp(e->d_name + n - 3, ".pb") != 0)
            continue;
        snprintf(path_out, path_cap, "%s/%s", dir, e->d_name);
        /* A file that cannot be read may hold another output: go on, and
         * say why only if none is this one's. */
        if (cli_tensor_read(path_out, &a, &tname, unread ? scratch : err,
                            unread ? sizeof scratch : errlen) != 0) {
            unread = 1;
            continue;
        }
        if (strcmp(tname, name) == 0 ||
            (tname[0] == '\0' && strcmp(e->d_name, by_index) == 0)) {
            *out = a;
            found = 1;
        } else {
            npy_array_free(&a);
        }
        free(tname);
    }
    closedir(d);
    return found ? 1 : unread ? -1 : 0;
}
