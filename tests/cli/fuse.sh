#!/usr/bin/env bash
# The importer's fusions (src/onnx/onnx_fuse.c), through the plugrt program:
# Conv followed by each activation becomes one Conv layer with the fields
# activation and activation_params, GELU's five nodes one Gelu layer, and
# MatMul with the Add of a bias vector one MatMul with three inputs;
# MatMul (+ bias) -> Relu | Gelu one MatMul with the field activation, and
# Add -> LayerNormalization one SkipLayerNormalization, a run of
# elementwise nodes one ElementwiseChain;
# each model's output matches NumPy's. A Conv whose output is also read
# elsewhere, a GELU pattern with another constant, and --compare-layers
# (one layer per node) keep the nodes apart.
. "$(dirname "$0")/common.sh"

have_onnx || skip "plugrt was built without the ONNX importer"
expect_rc 0 make_models "$PYTHON" "$SRC/make_fuse_models.py" m || finish

# run_model NAME LAYERS: output matches, and the plan has LAYERS layers.
run_model() {
  local name=$1 layers=$2
  expect_rc 0 "run_$name" "$PLUGRT" run "m/$name/model.onnx" --compare "m/$name" \
    --rtol 1e-5 --atol 1e-5 &&
    expect_grep "^PASSED" "run_$name.out"
  expect_rc 0 "build_$name" "$PLUGRT" build "m/$name/model.onnx" -o "$name.plan" &&
    expect_rc 0 "inspect_$name" "$PLUGRT" inspect "$name.plan" &&
    expect_grep "[0-9]+ bytes\), device cpu, 1 profile\(s\), $layers layers" "inspect_$name.out"
}

for act in relu leaky hardsigmoid hardswish clip clip10 clip_const; do
  run_model "conv_$act" 1
done
expect_grep 'activation char\[4\] = "Relu"' inspect_conv_relu.out
expect_grep 'activation char\[9\] = "LeakyRelu"' inspect_conv_leaky.out
expect_grep 'activation_params float32\[1\] = 0.3' inspect_conv_leaky.out
expect_grep 'activation_params float32\[2\] = \[0.3.*, 0.4' inspect_conv_hardsigmoid.out
expect_grep 'activation char\[9\] = "HardSwish"' inspect_conv_hardswish.out
expect_grep 'activation_params float32\[2\] = \[-0.5, 0.75\]' inspect_conv_clip.out
expect_grep 'activation_params float32\[2\] = \[-0.25, 0.5\]' inspect_conv_clip10.out
expect_grep 'activation_params float32\[2\] = \[0.1.*, 3.40282' inspect_conv_clip_const.out
# The fused layer is named after the Conv and makes the activation's output.
expect_grep '^  \[0\] conv  plugrt::Conv@1' inspect_conv_relu.out
expect_grep 'out: y  float32' inspect_conv_relu.out

# Sigmoid, and SiLU as Conv -> Sigmoid -> Mul (either order): one Conv.
run_model conv_sigmoid 1
expect_grep 'activation char\[7\] = "Sigmoid"' inspect_conv_sigmoid.out
for m in conv_silu conv_silu_swapped; do
  run_model $m 1
  expect_grep 'activation char\[4\] = "Silu"' "inspect_$m.out"
  expect_grep '^  \[0\] conv  plugrt::Conv@1' "inspect_$m.out"
  expect_grep 'out: y  float32' "inspect_$m.out"
done
# A value inside the pattern read elsewhere keeps the three nodes apart;
# a Mul of the Sigmoid with itself leaves Conv -> Sigmoid to fuse.
run_model conv_silu_sshared 3
run_model conv_silu_cshared 3
if grep -q 'activation char' inspect_conv_silu_sshared.out inspect_conv_silu_cshared.out; then
  fail "conv_silu_*shared: the Conv took an activation although a value is read elsewhere"
fi
run_model conv_silu_other 2
expect_grep 'activation char\[7\] = "Sigmoid"' inspect_conv_silu_other.out

run_model pointwise_relu 1
run_model conv_shared 2
if ! grep -q 'activation' inspect_conv_shared.out; then :; else
  fail "conv_shared: the Conv took an activation although its output is read twice"
fi

# GELU alone is one Gelu layer, named after its Erf; after MatMul + Add
# (the bias) all seven nodes are one MatMul with activation Gelu, named
# after every node it replaces.
run_model gelu_alone 1
expect_grep '^  \[0\] erf  plugrt::Gelu@1' inspect_gelu_alone.out
run_model gelu_a 1
run_model gelu_b 1
expect_grep 'activation char\[4\] = "Gelu"' inspect_gelu_a.out
expect_grep '^  \[0\] mm\+bias\+div\+erf\+add1\+mul\+half  plugrt::MatMul@1' inspect_gelu_a.out
expect_grep '^  \[0\] mm\+bias\+div\+erf\+add1\+mul\+mulhalf  plugrt::MatMul@1' inspect_gelu_b.out
if grep -q 'plugrt::Erf@1' inspect_gelu_a.out; then fail "gelu_a: an Erf layer is left"; fi
# Not GELU: MatMul + Add stays without an activation, and the five
# elementwise nodes make one ElementwiseChain.
run_model gelu_wrong 2
if grep -q 'plugrt::Gelu@1\|activation char' inspect_gelu_wrong.out; then
  fail "gelu_wrong: fused as GELU"
fi
expect_grep 'ops char\[[0-9]+\] = "Div,Erf,Add,Mul,Mul"' inspect_gelu_wrong.out

run_model mm_bias 1
expect_grep '^  \[0\] mm  plugrt::MatMul@1' inspect_mm_bias.out
expect_grep 'out: y  float32' inspect_mm_bias.out
run_model mm_bias_first 1
if grep -q 'plugrt::Identity@1' inspect_mm_bias_first.out; then
  fail "mm_bias_first: the Identity of a constant is a layer"
fi
run_model mm_bias_shared 2
run_model mm_bias_matrix 2

# MatMul (+ bias) -> Relu | Gelu: one MatMul with the activation; not when
# the value before the activation is read elsewhere.
run_model mm_relu 1
expect_grep '^  \[0\] mm\+bias\+relu  plugrt::MatMul@1' inspect_mm_relu.out
expect_grep 'activation char\[4\] = "Relu"' inspect_mm_relu.out
run_model mm_gelu 1
expect_grep 'activation char\[4\] = "Gelu"' inspect_mm_gelu.out
run_model mm_relu_shared 2
if grep -q 'activation char' inspect_mm_relu_shared.out; then
  fail "mm_relu_shared: the MatMul took the Relu although the sum is read elsewhere"
fi

# Add -> LayerNormalization over the last axis: one SkipLayerNormalization,
# writing the sum too where it is read elsewhere (a later node, a graph
# output); not where the sum is read before LayerNormalization's inputs
# are all there, nor over more than the last axis.
for m in skipln skipln_rowbcast skipln_sumout; do
  run_model $m 1
  expect_grep '^  \[0\] add\+ln  plugrt::SkipLayerNormalization@1' "inspect_$m.out"
done
expect_grep 'nb_outputs int32\[1\] = 4' inspect_skipln_sumout.out
run_model skipln_ms 1
expect_grep '^  \[0\] sln  plugrt::SkipLayerNormalization@1' inspect_skipln_ms.out
run_model skipln_pre 2
expect_grep 'plugrt::SkipLayerNormalization@1' inspect_skipln_pre.out
run_model skipln_late 5
run_model skipln_axis 2
if grep -q 'SkipLayerNormalization' inspect_skipln_late.out inspect_skipln_axis.out; then
  fail "skipln_late/skipln_axis: fused although they must not"
fi

# Runs of elementwise nodes, each value read by the next alone: one
# ElementwiseChain each (named after its nodes, ops in order); a value read
# elsewhere ends a chain; without a float constant the dtype is unknown and
# the nodes stay apart.
# GPT-2's tanh GELU is one Gelu (approximate "tanh", fc_gelu_tanh), named
# after its Pow, before any chain could take its nodes.
run_model chain_gelu_tanh 1
expect_grep '^  \[0\] pow  plugrt::Gelu@1' inspect_chain_gelu_tanh.out
expect_grep 'approximate char\[4\] = "tanh"' inspect_chain_gelu_tanh.out
run_model chain_mask 1
expect_grep 'ops char\[[0-9]+\] = "Sub,Mul,Add"' inspect_chain_mask.out
run_model chain_shared 2
expect_grep '^  \[0\] sub  plugrt::Sub@1' inspect_chain_shared.out
expect_grep 'ops char\[[0-9]+\] = "Mul,Add"' inspect_chain_shared.out
run_model chain_nofloat 3

# --compare-layers sees every node, and agrees node by node.
expect_rc 0 layers "$PLUGRT" run m/conv_relu/model.onnx --compare m/conv_relu --compare-layers &&
  expect_grep "2 layers built for cpu" layers.out &&
  expect_grep '\] (ok|----) +conv \(Conv\)' layers.out
# SiLU's three nodes apart agree with ONNX Runtime's, as the fused Conv
# agrees with NumPy above.
expect_rc 0 layers_silu env PLUGRT_PYTHON="$PYTHON" "$PLUGRT" run m/conv_silu/model.onnx \
  --compare m/conv_silu --compare-layers --reference onnxruntime &&
  expect_grep "3 layers built for cpu" layers_silu.out &&
  expect_grep '^PASSED: all 3 compared layers agree' layers_silu.out
finish
