/*
 * The engine file format: engine_write and engine_read.
 *
 * Every integer is little-endian and written through base_buf_* / read
 * through the bounds-checked base_rd_*. A string is a u32 byte count and the
 * bytes, no NUL inside and none at the end ("str" below), at most 65536
 * bytes. A "dims" value is i32 nb_dims (0..8) and nb_dims i64.
 *
 *   header
 *     u8[8]   magic "PLUGRTEN" (ENG_MAGIC)
 *     u32     format version (ENG_FORMAT_VERSION)
 *     u32     plugin ABI version of the writer (PRT_PLUGIN_ABI_VERSION);
 *             informational: each layer stores its creator's own ABI version
 *     str     plugrt version of the writer (prt_version_string(), <= 64 bytes)
 *     i32     target device (prt_device). It lives in the header, not in the
 *             meta section, so a tool learns the target without parsing on.
 *     u32     section count
 *   sections, each
 *     u32     tag (four ASCII characters, e.g. "TENS" reads as such in a dump)
 *     u32     flags: bit 0 ENG_SECTION_OPTIONAL; the other bits are reserved
 *             and must be 0 in a section this reader knows
 *     u64     payload length in bytes
 *     u8[]    payload
 *   u32       CRC-32 (base_crc32) of every byte before it. It catches every
 *             error burst of up to 32 bits, so any one damaged byte is
 *             caught for certain; it is an integrity check against damage,
 *             not a defence against tampering (parsing and engine_validate
 *             are that).
 *
 * Sections this version writes, each exactly once, in this order (a reader
 * accepts any order, rejects duplicates and requires all seven):
 *   META  i64 arena_size, i64 workspace_size, i32 nb_sizes
 *   TENS  u32 count; per tensor: str name, i32 dtype, i32 format,
 *         i32 nb_dims, i32 dim_expr[nb_dims], i32 input_index,
 *         i32 output_index, i32 size_id, i32 producer, i64 offset,
 *         i64 max_bytes, i64 const_offset
 *   LAYR  u32 count; per layer: str name, str namespace, str plugin name,
 *         str plugin version, str library path, u64 library content hash,
 *         u32 plugin ABI version, i32 device, i32 tactic, i64 workspace,
 *         u32 nb_inputs, i32 inputs[nb_inputs],
 *         u32 nb_outputs, per output {i32 tensor, i32 alias_input,
 *         u8 alias_copy},
 *         u32 nb_fields, per field {str name, i32 type, i64 length,
 *         u64 byte count (must equal length * the type's file element size),
 *         the elements}
 *   IOLS  u32 nb_inputs, i32 input tensor ids; u32 nb_outputs, i32 ids
 *   PROF  u32 nb_profiles, u32 nb_inputs (must equal IOLS's), then for each
 *         profile, for each input: dims min, dims opt, dims max, then the
 *         bounds of its values as a shape input: dims vmin, vopt, vmax
 *         (rank 0 when it is not one)
 *   EXPR  u32 nb_nodes; per node: i32 kind, i32 op, i64 imm, i32 a, i32 b
 *   WGHT  u64 byte count, then the constants' bytes (each constant at its
 *         tensor's const_offset)
 * and after them these, marked OPTIONAL (older plugrts skip them; a missing
 * one reads as its default; HDIM must follow LAYR):
 *   DEVI  the device the engine was built and tuned on: str name (<= 95
 *         bytes), i32 compute capability major, i32 minor; written for
 *         devices other than the CPU. Default: unknown (no warning on
 *         load).
 *   HDIM  u32 count, then i32 layer indices, ascending: layers whose plugin
 *         needs true dims on the host (eng_layer.host_dims). Default: none.
 *   NCAP  the same layout: layers whose plugin says its enqueue cannot be
 *         captured into a graph (eng_layer.no_capture). Must follow LAYR.
 *         Default: none.
 *   PREC  u32 the builder's precision flags (PRT_PRECISION_*, issue 24);
 *         written when not 0. Default: 0. Built-in ops read TF32 from it
 *         (op_set_precision); an older plugrt skips it and runs float32
 *         products strictly, which is correct, only slower.
 *   QNTZ  u32 count, then per quantized tensor, by ascending tensor id: i32
 *         tensor, i32 kind (prt_quant_kind, PER_TENSOR or PER_CHANNEL), i32
 *         axis (-1 for PER_TENSOR), i64 count (1 for PER_TENSOR), u32
 *         scales[count] (IEEE binary32 bits), i32 zero_points[count]. The
 *         tensors' quantization (eng_tensor.quant); must follow TENS.
 *         Checked as prt_network_set_tensor_quant checks (base/quant.h),
 *         against the tensor's dtype and rank here and its axis dim in
 *         engine_validate. Default: none. An older plugrt skips it, and its
 *         plugins then see no scale: one that needs it refuses the engine
 *         when loading asks it (check plugin), never runs without it.
 * A required section written only when there is something in it (so that
 * every other engine reads in plugrt versions before it), after LAYR:
 *   KERN  kernel layers (src/kernel/kernel.h): u32 count, then per kernel
 *         i32 layer, u64 content hash, u32 code count, per code i32 kind
 *         (PTX 0, cubin 1), i32 capability (90 for sm_90), u64 size and
 *         its bytes; u32 node count and nodes as EXPR's (leaves are the
 *         layer's I/O dims); u32 launch count, per launch str entry, i32
 *         grid[3], block[3], shared-memory node (-1 none), u32 argument
 *         count, per argument i32 kind, i32 index, i32 node (-1 none), u64
 *         a double's bits. A reader without it refuses the engine.
 * And one written only when the engine carries plugin libraries
 * (prt_builder_config_set_embed_plugins), and then NOT optional:
 *   LIBS  u32 count; per library: str name (a plain file name, <= 255
 *         bytes), u64 content hash (base_fnv1a64 of the bytes), u64 byte
 *         count, the library file's bytes. Default: none.
 *         Required, because skipping it changes what the engine runs: a
 *         reader that ignored it would look the plugins up in whatever
 *         libraries its caller loaded, perhaps other code under the same
 *         keys, and would never ask the caller's permission to run code
 *         from the file. An older plugrt refuses the engine naming the tag;
 *         one that knows LIBS loads it only when allowed (embedded.c).
 *
 * Field elements on file: INT8/CHAR/BYTES 1 byte, INT16/FLOAT16/BFLOAT16 2,
 * INT32/FLOAT32 4, INT64/FLOAT64 8 (IEEE bit patterns, little-endian), DIMS
 * 68 (i32 nb_dims in 0..8, then all eight i64 d[], unused ones written 0).
 *
 * Extension. A section whose tag this reader does not know is skipped when
 * its OPTIONAL flag is set (room for kernel blobs carried by the engine) and
 * is an error naming the tag otherwise. A change that old readers must not
 * misread bumps ENG_FORMAT_VERSION.
 *
 * Reading treats the bytes as hostile. Order of checks: magic, format
 * version (PRT_ERR_VERSION), checksum, then every section through a reader
 * bounded to that section; every count is checked against the bytes left
 * before anything is allocated, strings are capped, field byte counts must
 * match their types, a section must be consumed exactly, and nothing may
 * follow the last section. The parsed engine then goes through
 * engine_validate (validate.c), which checks every cross-reference, the
 * alignment of every offset, and the memory plan against what the shapes
 * can need (a file may not make each context reserve more).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "engine/engine_impl.h"
#include "kernel/kernel.h"

#define ENG_TAG(a, b, c, d)                                                              \
    ((uint32_t)(a) | (uint32_t)(b) << 8 | (uint32_t)(c) << 16 | (uint32_t)(d) << 24)
#define TAG_META ENG_TAG('M', 'E', 'T', 'A')
#define TAG_TENS ENG_TAG('T', 'E', 'N', 'S')
#define TAG_LAYR ENG_TAG('L', 'A', 'Y', 'R')
#define TAG_IOLS ENG_TAG('I', 'O', 'L', 'S')
#define TAG_PROF ENG_TAG('P', 'R', 'O', 'F')
#define TAG_EXPR ENG_TAG('E', 'X', 'P', 'R')
#define TAG_WGHT ENG_TAG('W', 'G', 'H', 'T')
#define TAG_DEVI ENG_TAG('D', 'E', 'V', 'I')
#define TAG_HDIM ENG_TAG('H', 'D', 'I', 'M')
#define TAG_NCAP ENG_TAG('N', 'C', 'A', 'P')
#define TAG_KERN ENG_TAG('K', 'E', 'R', 'N')
#define TAG_QNTZ ENG_TAG('Q', 'N', 'T', 'Z')
#define TAG_LIBS ENG_TAG('L', 'I', 'B', 'S')
#define TAG_PREC ENG_TAG('P', 'R', 'E', 'C')

#define ENG_SECTION_OPTIONAL 1u

/* Caps on strings in a file: names and paths, and the writer's version
 * string. Lengths are also bounded by the bytes present; the cap is a sanity
 * limit that engine_write enforces too, so every engine written reads. */
#define ENG_MAX_STR 65536u
#define ENG_MAX_VERSION_STR 64u

/* Smallest file sizes of records, for checking counts before allocating. */
#define TENSOR_MIN_BYTES (4 + 3 * 4 + 4 * 4 + 3 * 8)
#define LAYER_MIN_BYTES (5 * 4 + 8 + 4 + 3 * 4 + 8 + 3 * 4)
#define OUTPUT_BYTES (4 + 4 + 1)
#define FIELD_MIN_BYTES (4 + 4 + 8 + 8)
#define DIMS_MIN_BYTES 4
#define NODE_BYTES (4 + 4 + 8 + 4 + 4)
#define SECTION_HEADER_BYTES (4 + 4 + 8)
#define FIELD_DIMS_FILE_BYTES (4 + 8 * PRT_MAX_DIMS)
#define LIBRARY_MIN_BYTES (4 + 8 + 8)
#define ENG_MAX_LIBRARY_NAME 255u

/* ------------------------------------------------------------------------ */
/* Field element sizes                                                       */
/* ------------------------------------------------------------------------ */

/* Bytes of one element on file (0 for an unknown type). */
static size_t field_file_elem(int32_t type)
{
    switch (type) {
    case PRT_FIELD_INT8:
    case PRT_FIELD_CHAR:
    case PRT_FIELD_BYTES:
        return 1;
    case PRT_FIELD_INT16:
    case PRT_FIELD_FLOAT16:
    case PRT_FIELD_BFLOAT16:
        return 2;
    case PRT_FIELD_INT32:
    case PRT_FIELD_FLOAT32:
        return 4;
    case PRT_FIELD_INT64:
    case PRT_FIELD_FLOAT64:
        return 8;
    case PRT_FIELD_DIMS:
        return FIELD_DIMS_FILE_BYTES;
    default:
        return 0;
    }
}

static size_t align8(size_t n)
{
    return (n + 7) & ~(size_t)7;
}

/* ------------------------------------------------------------------------ */
/* Writing                                                                   */
/* ------------------------------------------------------------------------ */

static size_t sec_begin_flags(base_buf *b, uint32_t tag, uint32_t flags)
{
    size_t at;
    base_buf_u32(b, tag);
    base_buf_u32(b, flags);
    at = b->size;
    base_buf_u64(b, 0); /* patched by sec_end */
    return at;
}

static size_t sec_begin(base_buf *b, uint32_t tag)
{
    return sec_begin_flags(b, tag, 0);
}

static void sec_end(base_buf *b, size_t at)
{
    uint64_t n;
    if (b->failed)
        return;
    n = (uint64_t)(b->size - at - 8);
    for (int i = 0; i < 8; i++)
        b->data[at + (size_t)i] = (uint8_t)(n >> (8 * i));
}

static void put_dims(base_buf *b, const prt_dims *d)
{
    base_buf_i32(b, d->nb_dims);
    for (int32_t i = 0; i < d->nb_dims; i++)
        base_buf_i64(b, d->d[i]);
}

/* Elements in host order in memory, little-endian on file. */
static void put_field_data(base_buf *b, const prt_field *f)
{
    const uint8_t *p = f->data;
    size_t n = (size_t)f->length;
    size_t es = field_file_elem(f->type);
    if (f->type == PRT_FIELD_DIMS) {
        for (size_t i = 0; i < n; i++) {
            prt_dims d;
            memcpy(&d, p + i * sizeof d, sizeof d);
            base_buf_i32(b, d.nb_dims);
            for (int32_t j = 0; j < PRT_MAX_DIMS; j++)
                base_buf_i64(b, j < d.nb_dims ? d.d[j] : 0);
        }
        return;
    }
    if (es == 1) {
        base_buf_put(b, p, n);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        if (es == 2) {
            uint16_t v;
            uint8_t x[2];
            memcpy(&v, p + 2 * i, 2);
            x[0] = (uint8_t)v;
            x[1] = (uint8_t)(v >> 8);
            base_buf_put(b, x, 2);
        } else if (es == 4) {
            uint32_t v;
            memcpy(&v, p + 4 * i, 4);
            base_buf_u32(b, v);
        } else {
            uint64_t v;
            memcpy(&v, p + 8 * i, 8);
            base_buf_u64(b, v);
        }
    }
}

static void put_layer(base_buf *b, const eng_layer *l)
{
    base_buf_str(b, l->name);
    base_buf_str(b, l->plugin_namespace);
    base_buf_str(b, l->plugin_name);
    base_buf_str(b, l->plugin_version);
    base_buf_str(b, l->library);
    base_buf_u64(b, l->library_hash);
    base_buf_u32(b, l->plugin_abi);
    base_buf_i32(b, l->device);
    base_buf_i32(b, l->tactic);
    base_buf_i64(b, l->workspace);
    base_buf_u32(b, (uint32_t)l->nb_inputs);
    for (int32_t i = 0; i < l->nb_inputs; i++)
        base_buf_i32(b, l->inputs[i]);
    base_buf_u32(b, (uint32_t)l->nb_outputs);
    for (int32_t i = 0; i < l->nb_outputs; i++) {
        uint8_t copy = l->alias_copy[i];
        base_buf_i32(b, l->outputs[i]);
        base_buf_i32(b, l->alias_input[i]);
        base_buf_put(b, &copy, 1);
    }
    base_buf_u32(b, (uint32_t)l->nb_fields);
    for (int32_t i = 0; i < l->nb_fields; i++) {
        const prt_field *f = &l->fields[i];
        base_buf_str(b, f->name);
        base_buf_i32(b, f->type);
        base_buf_i64(b, f->length);
        base_buf_u64(b, (uint64_t)f->length * field_file_elem(f->type));
        put_field_data(b, f);
    }
}

/* KERN: per kernel, its layer and hash, its codes, its program and its
 * launches (kernel.h). */
static void put_kernels(base_buf *b, const prt_engine *e)
{
    base_buf_u32(b, (uint32_t)e->nb_kernels);
    for (int32_t i = 0; i < e->nb_kernels; i++) {
        const eng_kernel *k = &e->kernels[i];
        base_buf_i32(b, k->layer);
        base_buf_u64(b, k->hash);
        base_buf_u32(b, (uint32_t)k->nb_code);
        for (int32_t c = 0; c < k->nb_code; c++) {
            base_buf_i32(b, k->code[c].kind);
            base_buf_i32(b, k->code[c].arch);
            base_buf_u64(b, (uint64_t)k->code[c].size);
            base_buf_put(b, k->code[c].data, (size_t)k->code[c].size);
        }
        base_buf_u32(b, (uint32_t)k->exprs.nb_nodes);
        for (int32_t n = 0; n < k->exprs.nb_nodes; n++) {
            const expr_node *x = &k->exprs.nodes[n];
            base_buf_i32(b, x->kind);
            base_buf_i32(b, x->op);
            base_buf_i64(b, x->imm);
            base_buf_i32(b, x->a);
            base_buf_i32(b, x->b);
        }
        base_buf_u32(b, (uint32_t)k->nb_launches);
        for (int32_t li = 0; li < k->nb_launches; li++) {
            const eng_kernel_launch *l = &k->launches[li];
            base_buf_str(b, l->entry);
            for (int d = 0; d < 3; d++)
                base_buf_i32(b, l->grid[d]);
            for (int d = 0; d < 3; d++)
                base_buf_i32(b, l->block[d]);
            base_buf_i32(b, l->shared_bytes);
            base_buf_u32(b, (uint32_t)l->nb_args);
            for (int32_t a = 0; a < l->nb_args; a++) {
                uint64_t bits;
                memcpy(&bits, &l->args[a].fvalue, sizeof bits);
                base_buf_i32(b, l->args[a].kind);
                base_buf_i32(b, l->args[a].index);
                base_buf_i32(b, l->args[a].node);
                base_buf_u64(b, bits);
            }
        }
    }
}

static prt_status check_str(const char *s, const char *what, const char *name)
{
    if (strlen(s) > ENG_MAX_STR)
        return base_error(PRT_ERR_UNSUPPORTED,
                          "cannot serialize the engine: "
                          "%s '%.64s...' is longer than %u bytes",
                          what, name, ENG_MAX_STR);
    return PRT_OK;
}

/* Strings the reader would refuse for length (engine_validate has checked
 * they are not NULL). */
static prt_status check_strings(const prt_engine *e)
{
    prt_status st = PRT_OK;
    for (int32_t i = 0; i < e->nb_tensors && !st; i++)
        st = check_str(e->tensors[i].name, "tensor name", e->tensors[i].name);
    for (int32_t i = 0; i < e->nb_layers && !st; i++) {
        const eng_layer *l = &e->layers[i];
        if ((st = check_str(l->name, "layer name", l->name)) ||
            (st = check_str(l->plugin_namespace, "plugin namespace of layer", l->name)) ||
            (st = check_str(l->plugin_name, "plugin name of layer", l->name)) ||
            (st = check_str(l->plugin_version, "plugin version of layer", l->name)) ||
            (st = check_str(l->library, "library path of layer", l->name)))
            break;
        for (int32_t f = 0; f < l->nb_fields && !st; f++)
            st = check_str(l->fields[f].name, "a field name of layer", l->name);
    }
    return st;
}

/* Sections listing layers (HDIM, NCAP): those whose int32_t flag at
 * offset `flag` of eng_layer is set. */
static int32_t *layer_flag(eng_layer *l, size_t flag)
{
    return (int32_t *)(void *)((char *)l + flag);
}

static int32_t count_flagged(const prt_engine *e, size_t flag)
{
    int32_t n = 0;
    for (int32_t i = 0; i < e->nb_layers; i++)
        n += *layer_flag(&e->layers[i], flag) != 0;
    return n;
}

static void put_flagged(base_buf *out, uint32_t tag, const prt_engine *e, size_t flag,
                        int32_t count)
{
    size_t at = sec_begin_flags(out, tag, ENG_SECTION_OPTIONAL);
    base_buf_u32(out, (uint32_t)count);
    for (int32_t i = 0; i < e->nb_layers; i++)
        if (*layer_flag(&e->layers[i], flag))
            base_buf_i32(out, i);
    sec_end(out, at);
}

prt_status engine_write(const prt_engine *e, base_buf *out)
{
    size_t start, at;
    prt_status st;
    uint32_t crc;
    int32_t nb_hdim, nb_ncap, nb_quant;
    if (!e || !out)
        return base_error(PRT_ERR_INVALID_ARGUMENT, "engine_write: NULL argument");
    /* Never write what a reader would refuse: an invalid engine here is a
     * bug in whoever built it. */
    st = engine_validate(e);
    if (st == PRT_ERR_OUT_OF_MEMORY)
        return st;
    if (st)
        return base_error_prefix(PRT_ERR_INTERNAL,
                                 "refusing to serialize an invalid engine");
    st = check_strings(e);
    if (st)
        return st;
    start = out->size;

    base_buf_put(out, ENG_MAGIC, 8);
    base_buf_u32(out, ENG_FORMAT_VERSION);
    base_buf_u32(out, PRT_PLUGIN_ABI_VERSION);
    base_buf_str(out, prt_version_string());
    base_buf_i32(out, e->device);
    nb_hdim = count_flagged(e, offsetof(eng_layer, host_dims));
    nb_ncap = count_flagged(e, offsetof(eng_layer, no_capture));
    nb_quant = 0;
    for (int32_t i = 0; i < e->nb_tensors; i++)
        nb_quant += e->tensors[i].quant.d.kind != PRT_QUANT_NONE;
    /* A CPU engine says nothing of its device: the CPU's files stay as they
     * were before DEVI existed. */
    base_buf_u32(out, 7 + (e->device != PRT_DEVICE_CPU) + (nb_hdim > 0) + (nb_ncap > 0) +
                          (nb_quant > 0) + (e->nb_kernels > 0) + (e->nb_libraries > 0) +
                          (e->precision != 0));

    at = sec_begin(out, TAG_META);
    base_buf_i64(out, e->arena_size);
    base_buf_i64(out, e->workspace_size);
    base_buf_i32(out, e->nb_sizes);
    sec_end(out, at);

    at = sec_begin(out, TAG_TENS);
    base_buf_u32(out, (uint32_t)e->nb_tensors);
    for (int32_t i = 0; i < e->nb_tensors; i++) {
        const eng_tensor *t = &e->tensors[i];
        base_buf_str(out, t->name);
        base_buf_i32(out, t->dtype);
        base_buf_i32(out, t->format);
        base_buf_i32(out, t->nb_dims);
        for (int32_t j = 0; j < t->nb_dims; j++)
            base_buf_i32(out, t->dim_expr[j]);
        base_buf_i32(out, t->input_index);
        base_buf_i32(out, t->output_index);
        base_buf_i32(out, t->size_id);
        base_buf_i32(out, t->producer);
        base_buf_i64(out, t->offset);
        base_buf_i64(out, t->max_bytes);
        base_buf_i64(out, t->const_offset);
    }
    sec_end(out, at);

    at = sec_begin(out, TAG_WGHT);
    base_buf_u64(out, (uint64_t)e->weights_size);
    base_buf_put(out, e->weights, (size_t)e->weights_size);
    sec_end(out, at);

    at = sec_begin(out, TAG_LAYR);
    base_buf_u32(out, (uint32_t)e->nb_layers);
    for (int32_t i = 0; i < e->nb_layers; i++)
        put_layer(out, &e->layers[i]);
    sec_end(out, at);

    at = sec_begin(out, TAG_IOLS);
    base_buf_u32(out, (uint32_t)e->nb_inputs);
    for (int32_t i = 0; i < e->nb_inputs; i++)
        base_buf_i32(out, e->input_tensors[i]);
    base_buf_u32(out, (uint32_t)e->nb_outputs);
    for (int32_t i = 0; i < e->nb_outputs; i++)
        base_buf_i32(out, e->output_tensors[i]);
    sec_end(out, at);

    at = sec_begin(out, TAG_PROF);
    base_buf_u32(out, (uint32_t)e->nb_profiles);
    base_buf_u32(out, (uint32_t)e->nb_inputs);
    for (int32_t p = 0; p < e->nb_profiles; p++)
        for (int32_t i = 0; i < e->nb_inputs; i++) {
            size_t k = (size_t)p * (size_t)e->nb_inputs + (size_t)i;
            put_dims(out, &e->prof_min[k]);
            put_dims(out, &e->prof_opt[k]);
            put_dims(out, &e->prof_max[k]);
            put_dims(out, &e->prof_vmin[k]);
            put_dims(out, &e->prof_vopt[k]);
            put_dims(out, &e->prof_vmax[k]);
        }
    sec_end(out, at);

    at = sec_begin(out, TAG_EXPR);
    base_buf_u32(out, (uint32_t)e->exprs.nb_nodes);
    for (int32_t i = 0; i < e->exprs.nb_nodes; i++) {
        const expr_node *n = &e->exprs.nodes[i];
        base_buf_i32(out, n->kind);
        base_buf_i32(out, n->op);
        base_buf_i64(out, n->imm);
        base_buf_i32(out, n->a);
        base_buf_i32(out, n->b);
    }
    sec_end(out, at);

    /* Last: optional, and HDIM names layers of LAYR. */
    if (e->device != PRT_DEVICE_CPU) {
        at = sec_begin_flags(out, TAG_DEVI, ENG_SECTION_OPTIONAL);
        base_buf_str(out, e->built_on.name);
        base_buf_i32(out, e->built_on.cc_major);
        base_buf_i32(out, e->built_on.cc_minor);
        sec_end(out, at);
    }

    if (nb_hdim)
        put_flagged(out, TAG_HDIM, e, offsetof(eng_layer, host_dims), nb_hdim);
    if (nb_ncap)
        put_flagged(out, TAG_NCAP, e, offsetof(eng_layer, no_capture), nb_ncap);

    /* Required: a reader that does not know kernels must not run the
     * layers without them. Written only when there are some, so other
     * engines read in plugrt versions before it. */
    if (e->nb_kernels > 0) {
        at = sec_begin(out, TAG_KERN);
        put_kernels(out, e);
        sec_end(out, at);
    }

    if (e->precision) {
        at = sec_begin_flags(out, TAG_PREC, ENG_SECTION_OPTIONAL);
        base_buf_u32(out, e->precision);
        sec_end(out, at);
    }

    if (nb_quant) {
        at = sec_begin_flags(out, TAG_QNTZ, ENG_SECTION_OPTIONAL);
        base_buf_u32(out, (uint32_t)nb_quant);
        for (int32_t i = 0; i < e->nb_tensors; i++) {
            const prt_quant_desc *q = base_quant_desc(&e->tensors[i].quant);
            if (!q)
                continue;
            base_buf_i32(out, i);
            base_buf_i32(out, q->kind);
            base_buf_i32(out, q->axis);
            base_buf_i64(out, q->count);
            for (int64_t k = 0; k < q->count; k++) {
                uint32_t bits;
                memcpy(&bits, &q->scales[k], sizeof bits);
                base_buf_u32(out, bits);
            }
            for (int64_t k = 0; k < q->count; k++)
                base_buf_i32(out, q->zero_points[k]);
        }
        sec_end(out, at);
    }

    if (e->nb_libraries > 0) {
        at = sec_begin(out, TAG_LIBS);
        base_buf_u32(out, (uint32_t)e->nb_libraries);
        for (int32_t i = 0; i < e->nb_libraries; i++) {
            const eng_library *lib = &e->libraries[i];
            base_buf_str(out, lib->name);
            base_buf_u64(out, lib->hash);
            base_buf_u64(out, (uint64_t)lib->size);
            base_buf_put(out, lib->bytes, (size_t)lib->size);
        }
        sec_end(out, at);
    }

    if (out->failed)
        return base_error(PRT_ERR_OUT_OF_MEMORY, "out of memory serializing the engine");
    crc = base_crc32(out->data + start, out->size - start);
    base_buf_u32(out, crc);
    if (out->failed)
        return base_error(PRT_ERR_OUT_OF_MEMORY, "out of memory serializing the engine");
    return PRT_OK;
}

/* ------------------------------------------------------------------------ */
/* Reading                                                                   */
/* ------------------------------------------------------------------------ */

/* A reader bounded to one section, and that section's name for messages. */
typedef struct rctx {
    base_reader r;
    const char *sec;
} rctx;

static prt_status malformed(const rctx *c, const char *fmt, ...) BASE_PRINTF(2, 3);
static prt_status malformed(const rctx *c, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return base_error(PRT_ERR_MALFORMED, "malformed engine: %s section: %s", c->sec, msg);
}

static prt_status oom(void)
{
    return base_error(PRT_ERR_OUT_OF_MEMORY, "out of memory reading an engine");
}

static size_t left(const base_reader *r)
{
    return r->size - r->pos;
}

/* Reads a u32 count of records that take at least min_bytes each and checks
 * that so many fit in what is left, before the caller allocates for them. */
static prt_status rd_count(rctx *c, size_t min_bytes, const char *what, int32_t *out)
{
    uint32_t n = base_rd_u32(&c->r);
    if (c->r.failed)
        return malformed(c, "truncated before the %s", what);
    if (n > INT32_MAX || (min_bytes && n > left(&c->r) / min_bytes))
        return malformed(c, "%s %u does not fit in the %zu bytes left", what, n,
                         left(&c->r));
    *out = (int32_t)n;
    return PRT_OK;
}

/* Reads a string into *out (owned). `item` names it for messages. */
static prt_status rd_str(rctx *c, char **out, const char *item, int32_t index,
                         const char *what)
{
    *out = base_rd_str(&c->r, ENG_MAX_STR);
    if (*out)
        return PRT_OK;
    if (!c->r.failed)
        return oom();
    return malformed(c, "%s %d: %s is truncated, longer than %u bytes or holds a NUL",
                     item, (int)index, what, ENG_MAX_STR);
}

static uint8_t rd_u8(base_reader *r)
{
    uint8_t v;
    base_rd_get(r, &v, 1);
    return v;
}

/* dims as put_dims wrote them; the unused d[] are 0. */
static int rd_dims(base_reader *r, prt_dims *d)
{
    memset(d, 0, sizeof *d);
    d->nb_dims = base_rd_i32(r);
    if (r->failed || d->nb_dims < 0 || d->nb_dims > PRT_MAX_DIMS)
        return 0;
    for (int32_t i = 0; i < d->nb_dims; i++)
        d->d[i] = base_rd_i64(r);
    return !r->failed;
}

static prt_status read_meta(rctx *c, prt_engine *e)
{
    e->arena_size = base_rd_i64(&c->r);
    e->workspace_size = base_rd_i64(&c->r);
    e->nb_sizes = base_rd_i32(&c->r);
    if (c->r.failed)
        return malformed(c, "truncated");
    return PRT_OK;
}

static prt_status read_weights(rctx *c, prt_engine *e)
{
    uint64_t n = base_rd_u64(&c->r);
    const uint8_t *p;
    if (c->r.failed || n > left(&c->r))
        return malformed(c, "weights size %llu exceeds the %zu bytes present",
                         (unsigned long long)n, left(&c->r));
    p = base_rd_span(&c->r, (size_t)n);
    /* Aligned as the arena, so constants read in place take vector loads. */
    e->weights = base_aligned_alloc(ENG_ARENA_ALIGN, (size_t)n + 1);
    if (!e->weights)
        return oom();
    if (n)
        memcpy(e->weights, p, (size_t)n);
    e->weights_size = (int64_t)n;
    return PRT_OK;
}

static prt_status read_tensors(rctx *c, prt_engine *e)
{
    int32_t n = 0;
    prt_status st = rd_count(c, TENSOR_MIN_BYTES, "tensor count", &n);
    if (st)
        return st;
    e->tensors = base_calloc((size_t)n, sizeof *e->tensors);
    if (!e->tensors)
        return oom();
    e->nb_tensors = n;
    for (int32_t i = 0; i < n; i++) {
        eng_tensor *t = &e->tensors[i];
        st = rd_str(c, &t->name, "tensor", i, "the name");
        if (st)
            return st;
        t->dtype = base_rd_i32(&c->r);
        t->format = base_rd_i32(&c->r);
        t->nb_dims = base_rd_i32(&c->r);
        if (c->r.failed)
            return malformed(c, "tensor %d ('%s') is truncated", (int)i, t->name);
        if (t->nb_dims < 0 || t->nb_dims > PRT_MAX_DIMS)
            return malformed(c, "tensor %d ('%s') has rank %d, outside 0..%d", (int)i,
                             t->name, (int)t->nb_dims, PRT_MAX_DIMS);
        for (int32_t j = 0; j < PRT_MAX_DIMS; j++)
            t->dim_expr[j] = j < t->nb_dims ? base_rd_i32(&c->r) : -1;
        t->input_index = base_rd_i32(&c->r);
        t->output_index = base_rd_i32(&c->r);
        t->size_id = base_rd_i32(&c->r);
        t->producer = base_rd_i32(&c->r);
        t->offset = base_rd_i64(&c->r);
        t->max_bytes = base_rd_i64(&c->r);
        t->const_offset = base_rd_i64(&c->r);
        if (c->r.failed)
            return malformed(c, "tensor %d ('%s') is truncated", (int)i, t->name);
    }
    return PRT_OK;
}

/* Decodes `n` file elements of `type` at `src` into host order at `dst`. */
static void decode_field(uint8_t *dst, const uint8_t *src, int32_t type, size_t n)
{
    size_t es = field_file_elem(type);
    if (type == PRT_FIELD_DIMS) {
        for (size_t i = 0; i < n; i++) {
            base_reader r = {src + i * es, es, 0, 0};
            prt_dims d;
            memset(&d, 0, sizeof d);
            d.nb_dims = base_rd_i32(&r);
            for (int32_t j = 0; j < PRT_MAX_DIMS; j++)
                d.d[j] = base_rd_i64(&r);
            memcpy(dst + i * sizeof d, &d, sizeof d);
        }
        return;
    }
    if (es == 1) {
        if (n)
            memcpy(dst, src, n);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        const uint8_t *s = src + i * es;
        uint64_t v = 0;
        for (size_t k = 0; k < es; k++)
            v |= (uint64_t)s[k] << (8 * k);
        if (es == 2) {
            uint16_t x = (uint16_t)v;
            memcpy(dst + 2 * i, &x, 2);
        } else if (es == 4) {
            uint32_t x = (uint32_t)v;
            memcpy(dst + 4 * i, &x, 4);
        } else {
            memcpy(dst + 8 * i, &v, 8);
        }
    }
}

/* One field record: its parts as spans into the file. */
typedef struct field_rec {
    const uint8_t *name;
    uint32_t name_len;
    int32_t type;
    int64_t length;
    const uint8_t *data;
    size_t mem_bytes;
} field_rec;

static prt_status rd_field(rctx *c, const eng_layer *l, int32_t li, int32_t fi,
                           field_rec *f)
{
    uint64_t nbytes;
    size_t fes;
    f->name_len = base_rd_u32(&c->r);
    if (c->r.failed || f->name_len > ENG_MAX_STR)
        return malformed(c,
                         "layer %d ('%s') field %d: name is truncated or "
                         "longer than %u bytes",
                         (int)li, l->name, (int)fi, ENG_MAX_STR);
    f->name = base_rd_span(&c->r, f->name_len);
    if (!f->name || memchr(f->name, 0, f->name_len))
        return malformed(c,
                         "layer %d ('%s') field %d: name is truncated or "
                         "holds a NUL",
                         (int)li, l->name, (int)fi);
    f->type = base_rd_i32(&c->r);
    f->length = base_rd_i64(&c->r);
    nbytes = base_rd_u64(&c->r);
    if (c->r.failed)
        return malformed(c, "layer %d ('%s') field '%.*s' is truncated", (int)li, l->name,
                         (int)f->name_len, f->name);
    fes = field_file_elem(f->type);
    if (fes == 0)
        return malformed(c, "layer %d ('%s') field '%.*s' has unknown type %d", (int)li,
                         l->name, (int)f->name_len, f->name, (int)f->type);
    /* length * fes must be exactly the byte count (and not wrap). */
    if (f->length < 0 || (uint64_t)f->length > UINT64_MAX / fes ||
        (uint64_t)f->length * fes != nbytes)
        return malformed(c,
                         "layer %d ('%s') field '%.*s': %lld %s elements "
                         "do not make %llu bytes",
                         (int)li, l->name, (int)f->name_len, f->name,
                         (long long)f->length, base_field_type_name(f->type),
                         (unsigned long long)nbytes);
    if (nbytes > left(&c->r))
        return malformed(c, "layer %d ('%s') field '%.*s' is truncated", (int)li, l->name,
                         (int)f->name_len, f->name);
    f->data = base_rd_span(&c->r, (size_t)nbytes);
    /* In memory a DIMS element is a prt_dims; others are as on file. Both
     * fit in size_t: the bytes are in memory already, and sizeof(prt_dims)
     * is less than twice the file element. */
    f->mem_bytes = (size_t)f->length * base_field_type_size(f->type);
    if (f->type == PRT_FIELD_DIMS) {
        for (int64_t k = 0; k < f->length; k++) {
            base_reader r = {f->data + (size_t)k * fes, fes, 0, 0};
            int32_t nb = base_rd_i32(&r);
            if (nb < 0 || nb > PRT_MAX_DIMS)
                return malformed(c,
                                 "layer %d ('%s') field '%.*s' element %lld "
                                 "has rank %d, outside 0..%d",
                                 (int)li, l->name, (int)f->name_len, f->name,
                                 (long long)k, (int)nb, PRT_MAX_DIMS);
        }
    }
    return PRT_OK;
}

/* Fields go into one owned blob: each field's data 8-aligned, then its name
 * with a NUL. A first pass checks every record and sizes the blob, so one
 * allocation holds all and nothing is allocated for a lying record. */
static prt_status read_fields(rctx *c, eng_layer *l, int32_t li)
{
    int32_t n = 0;
    size_t size = 0, off = 0;
    base_reader start;
    field_rec f;
    prt_status st = rd_count(c, FIELD_MIN_BYTES, "field count", &n);
    if (st)
        return st;
    start = c->r;
    for (int32_t i = 0; i < n; i++) {
        st = rd_field(c, l, li, i, &f);
        if (st)
            return st;
        size = align8(size) + f.mem_bytes + f.name_len + 1;
    }
    l->field_blob = base_malloc(size);
    l->fields = base_calloc((size_t)n, sizeof *l->fields);
    if (!l->field_blob || !l->fields)
        return oom();
    l->field_blob_size = (int64_t)size;
    l->nb_fields = n;
    c->r = start;
    for (int32_t i = 0; i < n; i++) {
        prt_field *pf = &l->fields[i];
        st = rd_field(c, l, li, i, &f);
        if (st) /* cannot happen: the same bytes passed above */
            return st;
        off = align8(off);
        decode_field(l->field_blob + off, f.data, f.type, (size_t)f.length);
        pf->data = l->field_blob + off;
        off += f.mem_bytes;
        memcpy(l->field_blob + off, f.name, f.name_len);
        l->field_blob[off + f.name_len] = '\0';
        pf->name = (const char *)(l->field_blob + off);
        off += f.name_len + 1;
        pf->type = f.type;
        pf->length = f.length;
    }
    return PRT_OK;
}

static prt_status read_layer(rctx *c, eng_layer *l, int32_t i)
{
    int32_t n = 0;
    prt_status st;
    if ((st = rd_str(c, &l->name, "layer", i, "the name")) ||
        (st = rd_str(c, &l->plugin_namespace, "layer", i, "the plugin namespace")) ||
        (st = rd_str(c, &l->plugin_name, "layer", i, "the plugin name")) ||
        (st = rd_str(c, &l->plugin_version, "layer", i, "the plugin version")) ||
        (st = rd_str(c, &l->library, "layer", i, "the library path")))
        return st;
    l->library_hash = base_rd_u64(&c->r);
    l->plugin_abi = base_rd_u32(&c->r);
    l->device = base_rd_i32(&c->r);
    l->tactic = base_rd_i32(&c->r);
    l->workspace = base_rd_i64(&c->r);
    if (c->r.failed)
        return malformed(c, "layer %d ('%s') is truncated", (int)i, l->name);

    if ((st = rd_count(c, 4, "input count", &n)))
        return st;
    if (!(l->inputs = base_calloc((size_t)n, sizeof *l->inputs)))
        return oom();
    l->nb_inputs = n;
    for (int32_t k = 0; k < n; k++)
        l->inputs[k] = base_rd_i32(&c->r);

    if ((st = rd_count(c, OUTPUT_BYTES, "output count", &n)))
        return st;
    l->outputs = base_calloc((size_t)n, sizeof *l->outputs);
    l->alias_input = base_calloc((size_t)n, sizeof *l->alias_input);
    l->alias_copy = base_calloc((size_t)n, sizeof *l->alias_copy);
    if (!l->outputs || !l->alias_input || !l->alias_copy)
        return oom();
    l->nb_outputs = n;
    for (int32_t k = 0; k < n; k++) {
        l->outputs[k] = base_rd_i32(&c->r);
        l->alias_input[k] = base_rd_i32(&c->r);
        l->alias_copy[k] = rd_u8(&c->r);
    }
    if (c->r.failed)
        return malformed(c, "layer %d ('%s') is truncated", (int)i, l->name);
    return read_fields(c, l, i);
}

static prt_status read_layers(rctx *c, prt_engine *e)
{
    int32_t n = 0;
    prt_status st = rd_count(c, LAYER_MIN_BYTES, "layer count", &n);
    if (st)
        return st;
    e->layers = base_calloc((size_t)n, sizeof *e->layers);
    if (!e->layers)
        return oom();
    e->nb_layers = n;
    for (int32_t i = 0; i < n; i++)
        if ((st = read_layer(c, &e->layers[i], i)))
            return st;
    return PRT_OK;
}

static prt_status read_id_list(rctx *c, const char *what, int32_t *count, int32_t **ids)
{
    int32_t n = 0;
    prt_status st = rd_count(c, 4, what, &n);
    if (st)
        return st;
    if (!(*ids = base_calloc((size_t)n, sizeof **ids)))
        return oom();
    *count = n;
    for (int32_t i = 0; i < n; i++)
        (*ids)[i] = base_rd_i32(&c->r);
    if (c->r.failed)
        return malformed(c, "truncated in the %s list", what);
    return PRT_OK;
}

static prt_status read_io(rctx *c, prt_engine *e)
{
    prt_status st = read_id_list(c, "input count", &e->nb_inputs, &e->input_tensors);
    if (st)
        return st;
    return read_id_list(c, "output count", &e->nb_outputs, &e->output_tensors);
}

static prt_status read_profiles(rctx *c, prt_engine *e, uint32_t *nb_inputs)
{
    uint32_t np = base_rd_u32(&c->r);
    uint64_t total;
    *nb_inputs = base_rd_u32(&c->r);
    if (c->r.failed)
        return malformed(c, "truncated");
    /* Both are < 2^32, so the product fits in 64 bits. */
    total = (uint64_t)np * *nb_inputs;
    if (np > INT32_MAX || total > INT32_MAX || total > left(&c->r) / (6 * DIMS_MIN_BYTES))
        return malformed(c,
                         "%u profiles of %u inputs do not fit in the %zu "
                         "bytes left",
                         np, *nb_inputs, left(&c->r));
    e->prof_min = base_calloc((size_t)total, sizeof(prt_dims));
    e->prof_opt = base_calloc((size_t)total, sizeof(prt_dims));
    e->prof_max = base_calloc((size_t)total, sizeof(prt_dims));
    e->prof_vmin = base_calloc((size_t)total, sizeof(prt_dims));
    e->prof_vopt = base_calloc((size_t)total, sizeof(prt_dims));
    e->prof_vmax = base_calloc((size_t)total, sizeof(prt_dims));
    if (!e->prof_min || !e->prof_opt || !e->prof_max || !e->prof_vmin || !e->prof_vopt ||
        !e->prof_vmax)
        return oom();
    e->nb_profiles = (int32_t)np;
    for (size_t k = 0; k < (size_t)total; k++) {
        if (!rd_dims(&c->r, &e->prof_min[k]) || !rd_dims(&c->r, &e->prof_opt[k]) ||
            !rd_dims(&c->r, &e->prof_max[k]) || !rd_dims(&c->r, &e->prof_vmin[k]) ||
            !rd_dims(&c->r, &e->prof_vopt[k]) || !rd_dims(&c->r, &e->prof_vmax[k]))
            return malformed(c,
                             "profile %u input %u: dims truncated or rank "
                             "outside 0..%d",
                             (unsigned)(k / *nb_inputs), (unsigned)(k % *nb_inputs),
                             PRT_MAX_DIMS);
    }
    return PRT_OK;
}

static prt_status read_exprs(rctx *c, prt_engine *e)
{
    int32_t n = 0;
    prt_status st = rd_count(c, NODE_BYTES, "node count", &n);
    if (st)
        return st;
    e->exprs.nodes = base_calloc((size_t)n, sizeof *e->exprs.nodes);
    if (!e->exprs.nodes)
        return oom();
    e->exprs.nb_nodes = n;
    for (int32_t i = 0; i < n; i++) {
        expr_node *x = &e->exprs.nodes[i];
        x->kind = base_rd_i32(&c->r);
        x->op = base_rd_i32(&c->r);
        x->imm = base_rd_i64(&c->r);
        x->a = base_rd_i32(&c->r);
        x->b = base_rd_i32(&c->r);
    }
    if (c->r.failed)
        return malformed(c, "truncated");
    return PRT_OK;
}

/* "'TENS' (0x534e4554)" or "0x00000007" when the tag is not printable. */
static void tag_str(uint32_t tag, char *buf, size_t cap)
{
    char s[5];
    int printable = 1;
    for (int i = 0; i < 4; i++) {
        s[i] = (char)(tag >> (8 * i));
        if (s[i] < 0x20 || s[i] > 0x7e)
            printable = 0;
    }
    s[4] = '\0';
    if (printable)
        snprintf(buf, cap, "'%s' (0x%08x)", s, (unsigned)tag);
    else
        snprintf(buf, cap, "0x%08x", (unsigned)tag);
}

/* The device an engine was built on (DEVI). */
static prt_status read_device(rctx *c, prt_engine *e)
{
    uint32_t n = base_rd_u32(&c->r);
    const uint8_t *p;
    if (c->r.failed || n >= sizeof e->built_on.name)
        return malformed(c, "truncated, or a device name over %zu bytes",
                         sizeof e->built_on.name - 1);
    p = base_rd_span(&c->r, n);
    if (!p || memchr(p, 0, n))
        return malformed(c, "device name truncated or holding a NUL");
    memcpy(e->built_on.name, p, n);
    e->built_on.name[n] = '\0';
    e->built_on.cc_major = base_rd_i32(&c->r);
    e->built_on.cc_minor = base_rd_i32(&c->r);
    if (c->r.failed || e->built_on.cc_major < 0 || e->built_on.cc_major > 1000 ||
        e->built_on.cc_minor < 0 || e->built_on.cc_minor > 1000)
        return malformed(c, "truncated, or compute capability %d.%d",
                         (int)e->built_on.cc_major, (int)e->built_on.cc_minor);
    return PRT_OK;
}

/* A list of layers (HDIM, NCAP) whose flag at offset `flag` it sets; read
 * after LAYR. */
static prt_status read_flagged(rctx *c, prt_engine *e, size_t flag)
{
    uint32_t n = base_rd_u32(&c->r);
    int32_t prev = -1;
    if (c->r.failed || n > (uint32_t)e->nb_layers)
        return malformed(c, "%u layers for %d", n, (int)e->nb_layers);
    for (uint32_t k = 0; k < n; k++) {
        int32_t li = base_rd_i32(&c->r);
        if (c->r.failed || li <= prev || li >= e->nb_layers)
            return malformed(c, "layer index %d out of order or range", (int)li);
        *layer_flag(&e->layers[li], flag) = 1;
        prev = li;
    }
    return PRT_OK;
}

#define KERNEL_MIN_BYTES (4 + 8 + 4 + 4 + 4)
#define KCODE_MIN_BYTES (4 + 4 + 8)
#define LAUNCH_MIN_BYTES (4 + 7 * 4 + 4)
#define KARG_BYTES (3 * 4 + 8)

static prt_status read_kernel(rctx *c, prt_engine *e, int32_t i, eng_kernel *k)
{
    int32_t n = 0;
    prt_status st;
    k->layer = base_rd_i32(&c->r);
    k->hash = base_rd_u64(&c->r);
    if (c->r.failed)
        return malformed(c, "kernel %d is truncated", (int)i);
    if (k->layer < 0 || k->layer >= e->nb_layers)
        return malformed(c, "kernel %d names layer %d, of %d", (int)i, (int)k->layer,
                         (int)e->nb_layers);
    if (e->layers[k->layer].kernel)
        return malformed(c, "kernel %d: layer %d already has a kernel", (int)i,
                         (int)k->layer);
    st = rd_count(c, KCODE_MIN_BYTES, "code count", &n);
    if (st)
        return st;
    if (n > KERNEL_MAX_CODE)
        return malformed(c, "kernel %d has %d codes (at most %d)", (int)i, (int)n,
                         KERNEL_MAX_CODE);
    k->code = base_calloc((size_t)n + 1, sizeof *k->code);
    if (!k->code)
        return oom();
    for (int32_t j = 0; j < n; j++) {
        eng_kernel_code *code = &k->code[j];
        uint64_t size;
        const uint8_t *p;
        code->kind = base_rd_i32(&c->r);
        code->arch = base_rd_i32(&c->r);
        size = base_rd_u64(&c->r);
        if (c->r.failed || size > (uint64_t)KERNEL_MAX_CODE_BYTES || size > left(&c->r))
            return malformed(c, "kernel %d, code %d: truncated, or %llu bytes", (int)i,
                             (int)j, (unsigned long long)size);
        p = base_rd_span(&c->r, (size_t)size);
        code->data = base_malloc((size_t)size + 1);
        if (!code->data)
            return oom();
        memcpy(code->data, p, (size_t)size);
        code->data[size] = 0; /* PTX loads as a C string */
        code->size = (int64_t)size;
        k->nb_code = j + 1;
    }
    st = rd_count(c, NODE_BYTES, "kernel node count", &n);
    if (st)
        return st;
    k->exprs.nodes = base_calloc((size_t)n + 1, sizeof *k->exprs.nodes);
    if (!k->exprs.nodes)
        return oom();
    k->exprs.nb_nodes = n;
    for (int32_t j = 0; j < n; j++) {
        expr_node *x = &k->exprs.nodes[j];
        x->kind = base_rd_i32(&c->r);
        x->op = base_rd_i32(&c->r);
        x->imm = base_rd_i64(&c->r);
        x->a = base_rd_i32(&c->r);
        x->b = base_rd_i32(&c->r);
    }
    st = rd_count(c, LAUNCH_MIN_BYTES, "launch count", &n);
    if (st)
        return st;
    if (n > KERNEL_MAX_LAUNCHES)
        return malformed(c, "kernel %d has %d launches (at most %d)", (int)i, (int)n,
                         KERNEL_MAX_LAUNCHES);
    k->launches = base_calloc((size_t)n + 1, sizeof *k->launches);
    if (!k->launches)
        return oom();
    for (int32_t j = 0; j < n; j++) {
        eng_kernel_launch *l = &k->launches[j];
        int32_t na = 0;
        k->nb_launches = j + 1;
        st = rd_str(c, &l->entry, "kernel launch", j, "entry name");
        if (st)
            return st;
        for (int d = 0; d < 3; d++)
            l->grid[d] = base_rd_i32(&c->r);
        for (int d = 0; d < 3; d++)
            l->block[d] = base_rd_i32(&c->r);
        l->shared_bytes = base_rd_i32(&c->r);
        st = rd_count(c, KARG_BYTES, "argument count", &na);
        if (st)
            return st;
        if (na > KERNEL_MAX_ARGS)
            return malformed(c, "kernel %d, launch %d has %d arguments (at most %d)",
                             (int)i, (int)j, (int)na, KERNEL_MAX_ARGS);
        l->args = base_calloc((size_t)na + 1, sizeof *l->args);
        if (!l->args)
            return oom();
        l->nb_args = na;
        for (int32_t a = 0; a < na; a++) {
            uint64_t bits;
            l->args[a].kind = base_rd_i32(&c->r);
            l->args[a].index = base_rd_i32(&c->r);
            l->args[a].node = base_rd_i32(&c->r);
            bits = base_rd_u64(&c->r);
            memcpy(&l->args[a].fvalue, &bits, sizeof bits);
        }
    }
    if (c->r.failed)
        return malformed(c, "kernel %d is truncated", (int)i);
    e->layers[k->layer].kernel = k;
    return PRT_OK;
}

/* Kernel layers (KERN); read after LAYR. What the kernels say is checked by
 * engine_validate (kernel_validate), like every other section's cross
 * references. */
static prt_status read_kernels(rctx *c, prt_engine *e)
{
    int32_t n = 0;
    prt_status st = rd_count(c, KERNEL_MIN_BYTES, "kernel count", &n);
    if (st)
        return st;
    if (n < 1 || n > e->nb_layers)
        return malformed(c, "%d kernels for %d layers", (int)n, (int)e->nb_layers);
    e->kernels = base_calloc((size_t)n, sizeof *e->kernels);
    if (!e->kernels)
        return oom();
    e->nb_kernels = n;
    for (int32_t i = 0; i < n; i++) {
        st = read_kernel(c, e, i, &e->kernels[i]);
        if (st)
            return st;
    }
    return PRT_OK;
}

/* Plugin libraries the engine carries (LIBS); engine_validate checks the
 * names, the hashes and the layers they serve (embedded.c). */
static prt_status read_libraries(rctx *c, prt_engine *e)
{
    int32_t n = 0;
    prt_status st = rd_count(c, LIBRARY_MIN_BYTES, "library count", &n);
    if (st)
        return st;
    if (n == 0)
        return malformed(c, "holds no library (a writer leaves the section out)");
    e->libraries = base_calloc((size_t)n, sizeof *e->libraries);
    if (!e->libraries)
        return oom();
    e->nb_libraries = n;
    for (int32_t i = 0; i < n; i++) {
        eng_library *lib = &e->libraries[i];
        uint64_t size;
        const uint8_t *p;
        lib->name = base_rd_str(&c->r, ENG_MAX_LIBRARY_NAME);
        if (!lib->name)
            return c->r.failed ? malformed(c,
                                           "library %d: the name is truncated, longer "
                                           "than %u bytes or holds a NUL",
                                           (int)i, ENG_MAX_LIBRARY_NAME)
                               : oom();
        lib->hash = base_rd_u64(&c->r);
        size = base_rd_u64(&c->r);
        if (c->r.failed || size > left(&c->r))
            return malformed(c, "library %d ('%s'): %llu bytes, but %zu are left", (int)i,
                             lib->name, (unsigned long long)size, left(&c->r));
        p = base_rd_span(&c->r, (size_t)size);
        lib->bytes = base_malloc((size_t)size + 1);
        if (!lib->bytes)
            return oom();
        memcpy(lib->bytes, p, (size_t)size);
        lib->size = (int64_t)size;
    }
    return PRT_OK;
}

/* Tensors' quantization (QNTZ); read after TENS. */
static prt_status read_quant(rctx *c, prt_engine *e)
{
    uint32_t n = base_rd_u32(&c->r);
    int32_t prev = -1;
    float *scales = NULL;
    int32_t *zps = NULL;
    prt_status st = PRT_OK;
    if (c->r.failed || n > (uint32_t)e->nb_tensors)
        return malformed(c, "%u quantized tensors for %d", n, (int)e->nb_tensors);
    for (uint32_t k = 0; !st && k < n; k++) {
        prt_quant_desc q;
        eng_tensor *t;
        char what[128];
        int32_t ti = base_rd_i32(&c->r);
        memset(&q, 0, sizeof q);
        q.struct_size = sizeof q;
        q.kind = base_rd_i32(&c->r);
        q.axis = base_rd_i32(&c->r);
        q.count = base_rd_i64(&c->r);
        if (c->r.failed || ti <= prev || ti >= e->nb_tensors)
            return malformed(c, "tensor index %d out of order or range", (int)ti);
        /* Before allocating: the arrays must be in the section. */
        if (q.count < 1 || (uint64_t)q.count > left(&c->r) / 8)
            return malformed(c, "tensor %d: %lld scales do not fit in the %zu bytes left",
                             (int)ti, (long long)q.count, left(&c->r));
        if (q.kind == PRT_QUANT_NONE || (q.kind == PRT_QUANT_PER_TENSOR && q.axis != -1))
            return malformed(c, "tensor %d: kind %d with axis %d", (int)ti, (int)q.kind,
                             (int)q.axis);
        scales = base_malloc(sizeof(float) * (size_t)q.count);
        zps = base_malloc(sizeof(int32_t) * (size_t)q.count);
        if (!scales || !zps) {
            st = oom();
            break;
        }
        for (int64_t j = 0; j < q.count; j++) {
            uint32_t bits = base_rd_u32(&c->r);
            memcpy(&scales[j], &bits, sizeof bits);
        }
        for (int64_t j = 0; j < q.count; j++)
            zps[j] = base_rd_i32(&c->r);
        q.scales = scales;
        q.zero_points = zps;
        t = &e->tensors[ti];
        snprintf(what, sizeof what, "tensor %d", (int)ti);
        if (c->r.failed) {
            st = malformed(c, "%s: truncated", what);
            break;
        }
        /* The same checks as prt_network_set_tensor_quant, then the
         * tensor's dtype and rank; a failure is the file's. */
        st = base_quant_set(&t->quant, &q, what);
        if (!st)
            st = base_quant_check_tensor(&t->quant, t->dtype, t->nb_dims, -1, what);
        if (st == PRT_ERR_OUT_OF_MEMORY)
            break;
        if (st)
            st = malformed(c, "%s", prt_last_error());
        base_free(scales);
        base_free(zps);
        scales = NULL;
        zps = NULL;
        prev = ti;
    }
    base_free(scales);
    base_free(zps);
    return st;
}

enum {
    SEC_META,
    SEC_TENS,
    SEC_LAYR,
    SEC_IOLS,
    SEC_PROF,
    SEC_EXPR,
    SEC_WGHT,
    SEC_DEVI,
    SEC_HDIM,
    SEC_NCAP,
    SEC_KERN,
    SEC_QNTZ,
    SEC_LIBS,
    SEC_PREC,
    SEC_COUNT
};

static const struct {
    uint32_t tag;
    const char *name;
    int required;
} known_sections[SEC_COUNT] = {
    {TAG_META, "meta", 1},
    {TAG_TENS, "tensors", 1},
    {TAG_LAYR, "layers", 1},
    {TAG_IOLS, "io", 1},
    {TAG_PROF, "profiles", 1},
    {TAG_EXPR, "expressions", 1},
    {TAG_WGHT, "weights", 1},
    {TAG_DEVI, "device", 0},
    {TAG_HDIM, "host dims", 0},
    {TAG_NCAP, "no capture", 0},
    {TAG_KERN, "kernels", 0},
    {TAG_QNTZ, "quantization", 0},
    {TAG_LIBS, "plugin libraries", 0},
    {TAG_PREC, "precision", 0},
};

/* Parses everything after the version check and the checksum. */
static prt_status read_body(const uint8_t *p, size_t size, prt_engine *e)
{
    rctx c = {{p, size, 12, 0}, "header"};
    char version[ENG_MAX_VERSION_STR + 1];
    uint32_t vlen, nb_sections, prof_inputs = 0;
    const uint8_t *v;
    int seen[SEC_COUNT] = {0};
    prt_status st;

    (void)base_rd_u32(&c.r); /* writer's plugin ABI: informational */
    vlen = base_rd_u32(&c.r);
    if (c.r.failed || vlen > ENG_MAX_VERSION_STR)
        return malformed(&c, "truncated, or a version string over %u bytes",
                         ENG_MAX_VERSION_STR);
    v = base_rd_span(&c.r, vlen);
    if (!v || memchr(v, 0, vlen))
        return malformed(&c, "version string truncated or holding a NUL");
    memcpy(version, v, vlen);
    version[vlen] = '\0';
    e->device = base_rd_i32(&c.r);
    nb_sections = base_rd_u32(&c.r);
    if (c.r.failed)
        return malformed(&c, "truncated");
    if (nb_sections > left(&c.r) / SECTION_HEADER_BYTES)
        return malformed(&c, "%u sections do not fit in the %zu bytes left", nb_sections,
                         left(&c.r));

    for (uint32_t s = 0; s < nb_sections; s++) {
        uint32_t tag = base_rd_u32(&c.r);
        uint32_t flags = base_rd_u32(&c.r);
        uint64_t len = base_rd_u64(&c.r);
        char tname[48];
        int k;
        rctx sc;
        c.sec = "header";
        if (c.r.failed)
            return malformed(&c, "section %u header is truncated", s);
        tag_str(tag, tname, sizeof tname);
        if (len > left(&c.r))
            return malformed(&c,
                             "section %u %s claims %llu bytes, but %zu are "
                             "left",
                             s, tname, (unsigned long long)len, left(&c.r));
        sc.r.data = base_rd_span(&c.r, (size_t)len);
        sc.r.size = (size_t)len;
        sc.r.pos = 0;
        sc.r.failed = 0;
        for (k = 0; k < SEC_COUNT; k++)
            if (known_sections[k].tag == tag)
                break;
        if (k == SEC_COUNT) {
            if (flags & ENG_SECTION_OPTIONAL)
                continue; /* a later plugrt's optional data */
            return base_error(PRT_ERR_MALFORMED,
                              "malformed engine: section %u has tag %s, which "
                              "this plugrt (%s) does not know and the file "
                              "marks as required (written by plugrt %s)",
                              s, tname, prt_version_string(), version);
        }
        sc.sec = known_sections[k].name;
        if (flags & ~ENG_SECTION_OPTIONAL)
            return malformed(&sc, "unknown flags 0x%08x", (unsigned)flags);
        if (seen[k])
            return malformed(&sc, "appears twice");
        seen[k] = 1;
        switch (k) {
        case SEC_META:
            st = read_meta(&sc, e);
            break;
        case SEC_TENS:
            st = read_tensors(&sc, e);
            break;
        case SEC_LAYR:
            st = read_layers(&sc, e);
            break;
        case SEC_IOLS:
            st = read_io(&sc, e);
            break;
        case SEC_PROF:
            st = read_profiles(&sc, e, &prof_inputs);
            break;
        case SEC_WGHT:
            st = read_weights(&sc, e);
            break;
        case SEC_DEVI:
            st = read_device(&sc, e);
            break;
        case SEC_LIBS:
            st = read_libraries(&sc, e);
            break;
        case SEC_HDIM:
        case SEC_NCAP:
            st = !seen[SEC_LAYR]
                     ? malformed(&sc, "comes before the layers section")
                     : read_flagged(&sc, e,
                                    k == SEC_HDIM ? offsetof(eng_layer, host_dims)
                                                  : offsetof(eng_layer, no_capture));
            break;
        case SEC_KERN:
            st = seen[SEC_LAYR] ? read_kernels(&sc, e)
                                : malformed(&sc, "comes before the layers section");
            break;
        case SEC_PREC:
            e->precision = base_rd_u32(&sc.r);
            st = sc.r.failed ? malformed(&sc, "truncated")
                 : (e->precision & ~(uint32_t)(PRT_PRECISION_FP16 | PRT_PRECISION_BF16 |
                                               PRT_PRECISION_TF32))
                     ? malformed(&sc, "unknown precision flags 0x%x",
                                 (unsigned)e->precision)
                     : PRT_OK;
            break;
        case SEC_QNTZ:
            st = seen[SEC_TENS] ? read_quant(&sc, e)
                                : malformed(&sc, "comes before the tensors section");
            break;
        default:
            st = read_exprs(&sc, e);
            break;
        }
        if (st)
            return st;
        if (sc.r.pos != sc.r.size)
            return malformed(&sc, "%zu bytes left over after its records", left(&sc.r));
    }
    c.sec = "header";
    if (left(&c.r))
        return malformed(&c, "%zu bytes after the last section", left(&c.r));
    for (int k = 0; k < SEC_COUNT; k++)
        if (!seen[k] && known_sections[k].required)
            return base_error(PRT_ERR_MALFORMED,
                              "malformed engine: the %s section is missing",
                              known_sections[k].name);
    /* The profile arrays are indexed with the io section's input count. */
    if (prof_inputs != (uint32_t)e->nb_inputs)
        return base_error(PRT_ERR_MALFORMED,
                          "malformed engine: profiles section describes %u "
                          "inputs, the io section %d",
                          prof_inputs, (int)e->nb_inputs);
    return PRT_OK;
}

static uint32_t le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
           (uint32_t)p[3] << 24;
}

prt_status engine_read(const void *bytes, size_t size, prt_engine **out)
{
    const uint8_t *p = bytes;
    prt_engine *e;
    uint32_t version;
    prt_status st;
    /* magic, version, plugin ABI, empty version string, device, section
     * count, checksum */
    const size_t min_size = 8 + 4 + 4 + 4 + 4 + 4 + 4;

    if (!out || (!bytes && size))
        return base_error(PRT_ERR_INVALID_ARGUMENT, "engine_read: NULL argument");
    if (size < 8 || memcmp(p, ENG_MAGIC, 8) != 0)
        return base_error(PRT_ERR_MALFORMED, "not a plugrt engine (bad magic)");
    if (size < 12)
        return base_error(PRT_ERR_MALFORMED,
                          "malformed engine: truncated in the header (%zu bytes)", size);
    version = le32(p + 8);
    if (version != ENG_FORMAT_VERSION)
        return base_error(PRT_ERR_VERSION,
                          "engine format version %u, this plugrt reads %u",
                          (unsigned)version, (unsigned)ENG_FORMAT_VERSION);
    if (size < min_size)
        return base_error(PRT_ERR_MALFORMED,
                          "malformed engine: truncated in the header (%zu bytes)", size);
    if (base_crc32(p, size - 4) != le32(p + size - 4))
        return base_error(PRT_ERR_MALFORMED,
                          "checksum mismatch: the engine file is corrupted "
                          "or truncated");

    e = engine_alloc();
    if (!e)
        return oom();
    st = read_body(p, size - 4, e);
    if (!st)
        st = engine_validate(e);
    if (st) {
        engine_free(e);
        return st;
    }
    *out = e;
    return PRT_OK;
}
