/* Builder configuration: device, workspace limit, autotuning, profiles. */
#include <string.h>

#include "base/parallel.h"
#include "builder/builder.h"

prt_status prt_builder_config_create(prt_builder_config **out)
{
    prt_builder_config *c;
    if (!out)
        return base_error(PRT_ERR_INVALID_ARGUMENT,
                          "prt_builder_config_create: out is NULL");
    c = base_calloc(1, sizeof *c);
    if (!c)
        return base_error(PRT_ERR_OUT_OF_MEMORY,
                          "prt_builder_config_create: out of memory");
    c->device = PRT_DEVICE_CPU;
    c->workspace_limit = (int64_t)1 << 30;
    c->blocked_formats = 1;
    *out = c;
    return PRT_OK;
}

void prt_builder_config_destroy(prt_builder_config *cfg)
{
    if (!cfg)
        return;
    for (int32_t p = 0; p < cfg->nb_profiles; p++) {
        for (int32_t i = 0; i < cfg->profiles[p].nb_entries; i++)
            base_free(cfg->profiles[p].entries[i].input);
        base_free(cfg->profiles[p].entries);
    }
    base_free(cfg->profiles);
    base_free(cfg->timing_cache);
    base_free(cfg);
}

prt_status prt_builder_config_set_timing_cache_file(prt_builder_config *cfg,
                                                    const char *path)
{
    char *copy = NULL;
    if (!cfg)
        return base_error(PRT_ERR_INVALID_ARGUMENT,
                          "prt_builder_config_set_timing_cache_file: cfg is NULL");
    if (path && !(copy = base_strdup(path)))
        return base_error(PRT_ERR_OUT_OF_MEMORY,
                          "prt_builder_config_set_timing_cache_file: out of memory");
    base_free(cfg->timing_cache);
    cfg->timing_cache = copy;
    return PRT_OK;
}

prt_status prt_builder_config_set_device(prt_builder_config *cfg, int32_t device)
{
    if (!cfg)
        return base_error(PRT_ERR_INVALID_ARGUMENT,
                          "prt_builder_config_set_device: cfg is NULL");
    const dev_ops *d;
    prt_status st;
    if (device < 0 || device >= PRT_DEVICE_COUNT)
        return base_error(PRT_ERR_INVALID_ARGUMENT, "unknown device %d", (int)device);
    /* Building means timing and checking on the device, so it must be here. */
    st = dev_get(device, &d);
    if (st)
        return st;
    cfg->device = device;
    return PRT_OK;
}

prt_status prt_builder_config_set_workspace_limit(prt_builder_config *cfg, int64_t bytes)
{
    if (!cfg || bytes < 0)
        return base_error(PRT_ERR_INVALID_ARGUMENT,
                          "prt_builder_config_set_workspace_limit: bad argument");
    cfg->workspace_limit = bytes;
    return PRT_OK;
}

prt_status prt_builder_config_set_blocked_formats(prt_builder_config *cfg, int32_t on)
{
    if (!cfg || (on != 0 && on != 1))
        return base_error(PRT_ERR_INVALID_ARGUMENT,
                          "prt_builder_config_set_blocked_formats: bad argument");
    cfg->blocked_formats = on;
    return PRT_OK;
}

prt_status prt_builder_config_set_embed_plugins(prt_builder_config *cfg, int32_t on)
{
    if (!cfg || (on != 0 && on != 1))
        return base_error(PRT_ERR_INVALID_ARGUMENT,
                          "prt_builder_config_set_embed_plugins: %s",
                          cfg ? "on must be 0 or 1" : "cfg is NULL");
    cfg->embed_plugins = on;
    return PRT_OK;
}

prt_status prt_builder_config_set_precision_flags(prt_builder_config *cfg, uint32_t flags)
{
    const uint32_t known = PRT_PRECISION_FP16 | PRT_PRECISION_BF16 | PRT_PRECISION_TF32;
    if (!cfg || (flags & ~known))
        return base_error(
            PRT_ERR_INVALID_ARGUMENT, "prt_builder_config_set_precision_flags: %s",
            cfg ? "unknown flag bits (PRT_PRECISION_FP16, _BF16, _TF32)" : "cfg is NULL");
    cfg->precision = flags;
    return PRT_OK;
}

uint32_t prt_builder_config_get_precision_flags(const prt_builder_config *cfg)
{
    return cfg ? cfg->precision : 0;
}

prt_status prt_builder_config_set_cpu_fallback(prt_builder_config *cfg, int32_t on)
{
    if (!cfg || (on != 0 && on != 1))
        return base_error(PRT_ERR_INVALID_ARGUMENT,
                          "prt_builder_config_set_cpu_fallback: %s",
                          cfg ? "on must be 0 or 1" : "cfg is NULL");
    cfg->cpu_fallback = on;
    return PRT_OK;
}

prt_status prt_builder_config_set_autotune(prt_builder_config *cfg, int32_t on)
{
    if (!cfg)
        return base_error(PRT_ERR_INVALID_ARGUMENT,
                          "prt_builder_config_set_autotune: cfg is NULL");
    cfg->autotune = on ? 1 : 0;
    return PRT_OK;
}

prt_status prt_builder_config_set_threads(prt_builder_config *cfg, int32_t threads)
{
    if (!cfg)
        return base_error(PRT_ERR_INVALID_ARGUMENT,
                          "prt_builder_config_set_threads: cfg is NULL");
    if (threads < 0 || threads > BASE_MAX_THREADS)
        return base_error(PRT_ERR_INVALID_ARGUMENT,
                          "prt_builder_config_set_threads: %d is not in 0..%d",
                          (int)threads, BASE_MAX_THREADS);
    cfg->threads = threads;
    return PRT_OK;
}

prt_status prt_builder_config_add_profile(prt_builder_config *cfg, int32_t *out_profile)
{
    cfg_profile *p;
    if (!cfg || !out_profile)
        return base_error(PRT_ERR_INVALID_ARGUMENT,
                          "prt_builder_config_add_profile: NULL argument");
    p = base_realloc(cfg->profiles, sizeof *p * (size_t)(cfg->nb_profiles + 1));
    if (!p)
        return base_error(PRT_ERR_OUT_OF_MEMORY,
                          "prt_builder_config_add_profile: out of memory");
    cfg->profiles = p;
    memset(&p[cfg->nb_profiles], 0, sizeof *p);
    *out_profile = cfg->nb_profiles++;
    return PRT_OK;
}

/* The entry of an input in a profile, created empty if absent; NULL on out
 * of memory. */
static cfg_entry *config_entry(prt_builder_config *cfg, int32_t profile,
                               const char *input_name)
{
    cfg_profile *p = &cfg->profiles[profile];
    cfg_entry *arr;
    char *name;
    for (int32_t i = 0; i < p->nb_entries; i++)
        if (strcmp(p->entries[i].input, input_name) == 0)
            return &p->entries[i];
    arr = base_realloc(p->entries, sizeof *arr * (size_t)(p->nb_entries + 1));
    if (!arr)
        return NULL;
    p->entries = arr;
    name = base_strdup(input_name);
    if (!name)
        return NULL;
    memset(&arr[p->nb_entries], 0, sizeof *arr);
    arr[p->nb_entries].input = name;
    return &arr[p->nb_entries++];
}

prt_status prt_builder_config_set_profile_dims(prt_builder_config *cfg, int32_t profile,
                                               const char *input_name,
                                               const prt_dims *min, const prt_dims *opt,
                                               const prt_dims *max)
{
    cfg_entry *e;
    if (!cfg || !input_name || !min || !opt || !max)
        return base_error(PRT_ERR_INVALID_ARGUMENT,
                          "prt_builder_config_set_profile_dims: NULL argument");
    if (profile < 0 || profile >= cfg->nb_profiles)
        return base_error(PRT_ERR_INVALID_ARGUMENT,
                          "profile %d does not exist (%d added)", (int)profile,
                          (int)cfg->nb_profiles);
    if (min->nb_dims != opt->nb_dims || min->nb_dims != max->nb_dims ||
        min->nb_dims < 0 || min->nb_dims > PRT_MAX_DIMS)
        return base_error(PRT_ERR_SHAPE,
                          "profile %d, input '%s': min, opt and max must have "
                          "one rank in 0..%d",
                          (int)profile, input_name, PRT_MAX_DIMS);
    for (int32_t i = 0; i < min->nb_dims; i++) {
        if (min->d[i] < 0 || min->d[i] > opt->d[i] || opt->d[i] > max->d[i])
            return base_error(PRT_ERR_SHAPE,
                              "profile %d, input '%s', dim %d: need 0 <= min <= "
                              "opt <= max, got %lld, %lld, %lld",
                              (int)profile, input_name, (int)i, (long long)min->d[i],
                              (long long)opt->d[i], (long long)max->d[i]);
    }
    e = config_entry(cfg, profile, input_name);
    if (!e)
        return base_error(PRT_ERR_OUT_OF_MEMORY, "out of memory");
    e->has_dims = 1;
    e->min = *min;
    e->opt = *opt;
    e->max = *max;
    return PRT_OK;
}

prt_status prt_builder_config_set_profile_shape_values(
    prt_builder_config *cfg, int32_t profile, const char *input_name, const int64_t *min,
    const int64_t *opt, const int64_t *max, int32_t count)
{
    cfg_entry *e;
    if (!cfg || !input_name || !min || !opt || !max)
        return base_error(PRT_ERR_INVALID_ARGUMENT,
                          "prt_builder_config_set_profile_shape_values: NULL argument");
    if (profile < 0 || profile >= cfg->nb_profiles)
        return base_error(PRT_ERR_INVALID_ARGUMENT,
                          "profile %d does not exist (%d added)", (int)profile,
                          (int)cfg->nb_profiles);
    if (count < 1 || count > PRT_MAX_DIMS)
        return base_error(PRT_ERR_SHAPE,
                          "profile %d, shape input '%s': %d values "
                          "(1..%d allowed)",
                          (int)profile, input_name, (int)count, PRT_MAX_DIMS);
    for (int32_t i = 0; i < count; i++)
        if (min[i] > opt[i] || opt[i] > max[i])
            return base_error(PRT_ERR_SHAPE,
                              "profile %d, shape input '%s', value %d: need min <= "
                              "opt <= max, got %lld, %lld, %lld",
                              (int)profile, input_name, (int)i, (long long)min[i],
                              (long long)opt[i], (long long)max[i]);
    e = config_entry(cfg, profile, input_name);
    if (!e)
        return base_error(PRT_ERR_OUT_OF_MEMORY, "out of memory");
    e->has_values = 1;
    memset(&e->vmin, 0, sizeof e->vmin);
    memset(&e->vopt, 0, sizeof e->vopt);
    memset(&e->vmax, 0, sizeof e->vmax);
    e->vmin.nb_dims = e->vopt.nb_dims = e->vmax.nb_dims = count;
    memcpy(e->vmin.d, min, sizeof(int64_t) * (size_t)count);
    memcpy(e->vopt.d, opt, sizeof(int64_t) * (size_t)count);
    memcpy(e->vmax.d, max, sizeof(int64_t) * (size_t)count);
    return PRT_OK;
}

int64_t prt_float_shape_value(float v)
{
    return base_f32_key(v);
}
