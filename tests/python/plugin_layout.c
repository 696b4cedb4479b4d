/*
 * Prints the size and alignment of every struct the Python package's ctypes
 * binding declares (python/src/plugrt/_capi.py, STRUCTS), and the offset of
 * each of its fields, as the C compiler lays them out: "S name size align"
 * and "F name.field offset". test_ctypes_plugin.py compares this with
 * ctypes' layout, so a binding that drifts from plugin.h / plugrt.h fails in
 * every ctest run instead of corrupting memory (a struct the binding adds
 * and this list lacks fails it too).
 */
#include <stddef.h>
#include <stdio.h>

#include "plugrt/plugrt.h"

#define S(T) printf("S %s %zu %zu\n", #T, sizeof(T), _Alignof(T))
#define F(T, f) printf("F %s.%s %zu\n", #T, #f, offsetof(T, f))

int main(void)
{
    S(prt_dims);
    F(prt_dims, nb_dims);
    F(prt_dims, d);
    S(prt_quant_desc);
    F(prt_quant_desc, struct_size);
    F(prt_quant_desc, abi_version);
    F(prt_quant_desc, kind);
    F(prt_quant_desc, axis);
    F(prt_quant_desc, count);
    F(prt_quant_desc, scales);
    F(prt_quant_desc, zero_points);
    F(prt_quant_desc, scale);
    F(prt_quant_desc, zero_point);
    S(prt_tensor_desc);
    F(prt_tensor_desc, dtype);
    F(prt_tensor_desc, format);
    F(prt_tensor_desc, dims);
    F(prt_tensor_desc, dims_device);
    F(prt_tensor_desc, reserved);
    S(prt_dynamic_tensor_desc);
    F(prt_dynamic_tensor_desc, desc);
    F(prt_dynamic_tensor_desc, min);
    F(prt_dynamic_tensor_desc, opt);
    F(prt_dynamic_tensor_desc, max);
    S(prt_field);
    F(prt_field, name);
    F(prt_field, data);
    F(prt_field, type);
    F(prt_field, length);
    S(prt_field_collection);
    F(prt_field_collection, nb_fields);
    F(prt_field_collection, fields);
    S(prt_field_schema);
    F(prt_field_schema, name);
    F(prt_field_schema, type);
    F(prt_field_schema, length);
    F(prt_field_schema, doc);
    S(prt_host_services);
    F(prt_host_services, struct_size);
    F(prt_host_services, abi_version);
    F(prt_host_services, host);
    F(prt_host_services, log);
    F(prt_host_services, set_error);
    F(prt_host_services, parallel_for);
    F(prt_host_services, nb_threads);
    F(prt_host_services, thread_index);
    S(prt_dim_exprs);
    F(prt_dim_exprs, nb_dims);
    F(prt_dim_exprs, d);
    S(prt_expr_builder);
    F(prt_expr_builder, struct_size);
    F(prt_expr_builder, abi_version);
    F(prt_expr_builder, constant);
    F(prt_expr_builder, operation);
    F(prt_expr_builder, declare_size_tensor);
    F(prt_expr_builder, is_constant);
    F(prt_expr_builder, host);
    S(prt_plugin_core);
    F(prt_plugin_core, struct_size);
    F(prt_plugin_core, abi_version);
    F(prt_plugin_core, name);
    F(prt_plugin_core, version);
    F(prt_plugin_core, plugin_namespace);
    F(prt_plugin_core, devices);
    S(prt_plugin_build);
    F(prt_plugin_build, struct_size);
    F(prt_plugin_build, abi_version);
    F(prt_plugin_build, nb_outputs);
    F(prt_plugin_build, get_output_dtypes);
    F(prt_plugin_build, get_output_shapes);
    F(prt_plugin_build, supports_format_combination);
    F(prt_plugin_build, configure);
    F(prt_plugin_build, get_workspace_size);
    F(prt_plugin_build, get_valid_tactics);
    F(prt_plugin_build, get_aliased_input);
    F(prt_plugin_build, get_output_values);
    F(prt_plugin_build, requires_host_dims);
    F(prt_plugin_build, set_target_device);
    F(prt_plugin_build, capture_safe);
    F(prt_plugin_build, get_kernel);
    S(prt_plugin_runtime);
    F(prt_plugin_runtime, struct_size);
    F(prt_plugin_runtime, abi_version);
    F(prt_plugin_runtime, set_tactic);
    F(prt_plugin_runtime, on_shape_change);
    F(prt_plugin_runtime, enqueue);
    F(prt_plugin_runtime, attach_to_context);
    F(prt_plugin_runtime, get_fields_to_serialize);
    F(prt_plugin_runtime, clone);
    F(prt_plugin_runtime, destroy);
    S(prt_plugin_vtable);
    F(prt_plugin_vtable, struct_size);
    F(prt_plugin_vtable, abi_version);
    F(prt_plugin_vtable, core);
    F(prt_plugin_vtable, build);
    F(prt_plugin_vtable, runtime);
    S(prt_plugin);
    F(prt_plugin, vt);
    S(prt_plugin_resources);
    F(prt_plugin_resources, struct_size);
    F(prt_plugin_resources, abi_version);
    F(prt_plugin_resources, device);
    F(prt_plugin_resources, context);
    F(prt_plugin_resources, alloc);
    F(prt_plugin_resources, free);
    F(prt_plugin_resources, report_error);
    F(prt_plugin_resources, acquire);
    S(prt_plugin_creator);
    F(prt_plugin_creator, struct_size);
    F(prt_plugin_creator, abi_version);
    F(prt_plugin_creator, name);
    F(prt_plugin_creator, version);
    F(prt_plugin_creator, plugin_namespace);
    F(prt_plugin_creator, nb_fields);
    F(prt_plugin_creator, fields);
    F(prt_plugin_creator, create);
    F(prt_plugin_creator, user);
    S(prt_plugin_library);
    F(prt_plugin_library, struct_size);
    F(prt_plugin_library, abi_version);
    F(prt_plugin_library, name);
    F(prt_plugin_library, version);
    F(prt_plugin_library, nb_creators);
    F(prt_plugin_library, creators);
    S(prt_device_info);
    F(prt_device_info, struct_size);
    F(prt_device_info, device);
    F(prt_device_info, name);
    F(prt_device_info, cc_major);
    F(prt_device_info, cc_minor);
    F(prt_device_info, multiprocessors);
    F(prt_device_info, memory_bytes);
    S(prt_io_info);
    F(prt_io_info, struct_size);
    F(prt_io_info, location);
    F(prt_io_info, name);
    F(prt_io_info, is_input);
    F(prt_io_info, dtype);
    F(prt_io_info, format);
    F(prt_io_info, dims);
    F(prt_io_info, data_dependent_mask);
    F(prt_io_info, is_size_tensor);
    F(prt_io_info, is_shape_input);
    S(prt_layer_info);
    F(prt_layer_info, struct_size);
    F(prt_layer_info, name);
    F(prt_layer_info, plugin_namespace);
    F(prt_layer_info, plugin_name);
    F(prt_layer_info, plugin_version);
    F(prt_layer_info, library);
    F(prt_layer_info, library_hash);
    F(prt_layer_info, tactic);
    F(prt_layer_info, workspace);
    F(prt_layer_info, nb_inputs);
    F(prt_layer_info, inputs);
    F(prt_layer_info, nb_outputs);
    F(prt_layer_info, outputs);
    F(prt_layer_info, alias_input);
    F(prt_layer_info, nb_fields);
    F(prt_layer_info, fields);
    F(prt_layer_info, skipped);
    F(prt_layer_info, capture_safe);
    F(prt_layer_info, kernel);
    S(prt_context_options);
    F(prt_context_options, struct_size);
    F(prt_context_options, reserved);
    F(prt_context_options, memory_limit);
    F(prt_context_options, external_memory);
    F(prt_context_options, threads);
    F(prt_context_options, switch_device);
    F(prt_context_options, allow_embedded_kernels);
    S(prt_output_allocator);
    F(prt_output_allocator, struct_size);
    F(prt_output_allocator, abi_version);
    F(prt_output_allocator, user);
    F(prt_output_allocator, reallocate);
    F(prt_output_allocator, notify_shape);
    return 0;
}
