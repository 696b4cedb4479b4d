#!/usr/bin/env bash
# The built-in Attention (src/ops/attention.c) through the plugrt program:
# each model of make_attention_models.py (one Attention node: ranks 3 and 4,
# grouped-query heads, masks, is_causal, scale, softcap, float16, K given
# transposed, fully masked rows) matches ONNX's reference, and with 1 and 3
# op threads gives the same bits; past_key is refused by name.
. "$(dirname "$0")/common.sh"

have_onnx || skip "plugrt was built without the ONNX importer"
expect_rc 0 make_models "$PYTHON" "$SRC/make_attention_models.py" m || finish

for d in m/*/; do
  name=$(basename "$d")
  tol=1e-4
  case $name in *fp16*) tol=2e-3 ;; esac
  expect_rc 0 "run_$name" "$PLUGRT" run "$d/model.onnx" --compare "$d" --rtol $tol \
    --atol $tol && expect_grep "^PASSED" "run_$name.out"
done
# The tiles of 64 queries split over threads: the same bits.
for t in 1 3; do
  expect_rc 0 "threads$t" "$PLUGRT" run m/4d_causal/model.onnx --compare m/4d_causal \
    --rtol 1e-4 --atol 1e-4 -n 1 --warmup 0 --op-threads $t -o "out$t"
done
cmp -s out1/output_y.npy out3/output_y.npy || fail "4d_causal: 1 and 3 op threads differ"

"$PYTHON" - <<'PY' || fail "could not write the past_key model"
from onnx import TensorProto, helper
vi = [helper.make_tensor_value_info(n, TensorProto.FLOAT, [1, 2, 3, 4]) for n in "qkvp"]
node = helper.make_node("Attention", ["q", "k", "v", "", "p"], ["y"])
g = helper.make_graph([node], "g", vi, [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 20)])
m.ir_version = 8
open("past.onnx", "wb").write(m.SerializeToString())
PY
expect_rc 1 past "$PLUGRT" build past.onnx -o past.plan &&
  expect_grep "past_key input is not supported" past.err

# The importer's fusion (onnx_fuse.c, fc_attention): every self-attention
# block of the exported transformers becomes one Attention layer named
# after its first MatMul (their outputs are checked against ONNX Runtime's
# by the model_* tests).
fused() { # MODEL SHAPES COUNT
  local name
  name=$(basename "$1" .onnx)
  [ -f "$1" ] || return 0
  expect_rc 0 "build_$name" "$PLUGRT" build "$1" --shapes "$2" -o "$name.plan" &&
    expect_rc 0 "inspect_$name" "$PLUGRT" inspect "$name.plan" || return
  [ "$(grep -c 'plugrt::Attention@1' "inspect_$name.out")" = "$3" ] ||
    fail "$name: expected $3 Attention layers"
}
ZOO=$SRC/../models
fused "$ZOO/gpt2_tiny.onnx" input_ids:1x16,attention_mask:1x16 2
fused "$ZOO/gpt2_tiny_dynamo.onnx" input_ids:1x16,attention_mask:1x16 2
fused "$ZOO/vit_tiny.onnx" image:1x3x128x128 4
fused "$MODELS/bert_small.onnx" input_ids:1x16,attention_mask:1x16 2
expect_grep "\[[0-9]+\] /lm/transformer/h.0/attn/MatMul  plugrt::Attention@1" \
  inspect_gpt2_tiny.out
# BERT's heads are split and merged inside the layer (rank-3 Q, K, V and
# Y), and its per-layer Where(mask, 0, -inf) became the boolean mask.
if [ -f inspect_bert_small.out ]; then
  expect_grep "q_num_heads int32\[1\] = 2$" inspect_bert_small.out
  ! grep -Eq "^  \[[0-9]+\] [^ ]*attention/self/(Transpose|Reshape|Where)" inspect_bert_small.out ||
    fail "bert_small: a head split/merge or mask Where is left beside the Attention"
fi
# ViT's too (issue 24): its one QKV projection is cut by a Split into the
# thirds the rank-3 layer reads, in place of the Reshape, the Transpose of
# 5 and the three Gathers.
if [ -f inspect_vit_tiny.out ]; then
  expect_grep "q_num_heads int32\[1\] = 4$" inspect_vit_tiny.out
  [ "$(grep -c 'plugrt::Split@1' inspect_vit_tiny.out)" = 4 ] ||
    fail "vit_tiny: expected a Split of QKV per block"
  ! grep -A4 'plugrt::Gather@1' inspect_vit_tiny.out | grep -Eq "^ +in: +transpose_" ||
    fail "vit_tiny: a Gather of the QKV Transpose is left"
fi
# GPT-2's too, both exports (issue 24): the merge Transpose that Shape
# nodes read, and the dynamo export's merge to rank 2. The one Transpose
# left in the dynamo plan is lm_head's weight, a constant.
for name in gpt2_tiny gpt2_tiny_dynamo; do
  f=inspect_$name.out
  [ -f "$f" ] || continue
  expect_grep "q_num_heads int32\[1\] = 4$" "$f"
  ! grep -A3 'plugrt::Transpose@1' "$f" | grep -Eq '^ +in: .* activation' ||
    fail "$name: a Transpose of activations (the heads) is left beside the Attention"
done
finish
