#!/usr/bin/env bash
# The Attention fusion's rank-3 form (src/onnx/onnx_fuse.c, fc_attention):
# each model of make_attnfuse_models.py (PyTorch's head split and merge
# around self-attention) matches NumPy's result, checked against ONNX
# Runtime's; where the Reshapes and Transposes all match, one Attention
# layer reads x's projections in place with q_num_heads and kv_num_heads
# and none of them is left; where one is read elsewhere or splits other
# dims, the heads stay split (rank 4) and the result is the same.
. "$(dirname "$0")/common.sh"

have_onnx || skip "plugrt was built without the ONNX importer"
expect_rc 0 make_models "$PYTHON" "$SRC/make_attnfuse_models.py" m || finish

# check NAME SHAPES: output matches, plan built and inspected.
check() {
  local name=$1 shapes=$2
  expect_rc 0 "run_$name" "$PLUGRT" run "m/$name/model.onnx" --compare "m/$name" \
    --shapes "$shapes" --rtol 1e-4 --atol 1e-5 &&
    expect_grep "^PASSED" "run_$name.out"
  expect_rc 0 "build_$name" "$PLUGRT" build "m/$name/model.onnx" --shapes "$shapes" -v \
    -o "$name.plan" &&
    expect_rc 0 "inspect_$name" "$PLUGRT" inspect "$name.plan"
}
# split NAME HQ HKV: the rank-3 form, named after the first MatMul.
split_gone() {
  local f=inspect_$1.out
  expect_grep '^  \[[0-9]+\] scores  plugrt::Attention@1' "$f"
  expect_grep "q_num_heads int32\[1\] = $2\$" "$f"
  expect_grep "kv_num_heads int32\[1\] = $3\$" "$f"
  ! grep -Eq 'plugrt::(Transpose|Reshape)@1' "$f" ||
    fail "$1: a Transpose or Reshape of the heads is left"
}
kept() {
  local f=inspect_$1.out
  expect_grep "q_num_heads int32\[1\] = 0\$" "$f"
  [ "$(grep -Ec 'plugrt::Transpose@1' "$f")" = 4 ] ||
    fail "$1: expected the 4 Transposes of the heads to stay"
}

check attn3_mha x:2x5x32,mask:2x1x1x5 && split_gone attn3_mha 4 4
check attn3_mqa x:2x5x32,mask:2x1x1x5 && split_gone attn3_mqa 4 1
check attn3_where x:2x5x32,keep:2x1x1x5 && split_gone attn3_where 4 4
# The Where(keep, 0, -inf) joined the layer: keep is its mask.
expect_grep "^ +keep  bool linear" inspect_attn3_where.out
! grep -q "mask_fill" inspect_attn3_where.out || fail "attn3_where: the Where is left"
check attn3_shared x:2x5x32,mask:2x1x1x5 && kept attn3_shared
expect_grep "head split .* does not match" build_attn3_shared.err
check attn3_badsplit x:2x5x32,mask:1x1x1x2 && kept attn3_badsplit
# GPT-2's merge: Shape nodes read the merge Transpose for the Reshape's
# sizes. They read a view of the layer's output instead, which runs skip.
check attn3_shapes x:2x5x32,mask:2x1x1x5 && {
  expect_grep '^  \[[0-9]+\] scores  plugrt::Attention@1' inspect_attn3_shapes.out
  expect_grep "q_num_heads int32\[1\] = 4\$" inspect_attn3_shapes.out
  ! grep -q 'plugrt::Transpose@1' inspect_attn3_shapes.out ||
    fail "attn3_shapes: a Transpose of the heads is left"
  expect_grep '^  \[[0-9]+\] merge_heads  plugrt::Reshape@1' inspect_attn3_shapes.out
  grep -A1 -E '^  \[[0-9]+\] merge_heads  plugrt::Reshape@1' inspect_attn3_shapes.out |
    grep -q "not run" || fail "attn3_shapes: the view of the merged heads runs"
}
# A merge to rank 2 ([-1, H Dv]) stays, reading the layer's output: the
# one Reshape left; the dynamo export's split (Shape with start and end,
# allowzero 1, sizes of a rank-2 input) is proved too.
rank2() {
  local f=inspect_$1.out
  expect_grep '^  \[[0-9]+\] scores  plugrt::Attention@1' "$f"
  expect_grep "q_num_heads int32\[1\] = 4\$" "$f"
  ! grep -q 'plugrt::Transpose@1' "$f" || fail "$1: a Transpose of the heads is left"
  [ "$(grep -Ec '\] (merge|[qkv]_split)  plugrt::Reshape@1' "$f")" = 1 ] &&
    expect_grep '^  \[[0-9]+\] merge  plugrt::Reshape@1' "$f" ||
    fail "$1: expected the merge Reshape alone to stay"
}
check attn3_rank2 x:2x5x32,mask:2x1x1x5 && rank2 attn3_rank2
check attn3_dynamo x:2x5x32,mask:2x1x1x5,am:2x5 && rank2 attn3_dynamo
# Another reader of the merge Transpose than Shape nodes: rank 4 stays.
check attn3_mergeread x:2x5x32,mask:2x1x1x5 && kept attn3_mergeread
expect_grep "merge after the second MatMul .* does not match" build_attn3_mergeread.err

# One QKV projection (make_qkvfuse_models.py: PyTorch's exports of
# timm/ViT-style blocks, Gather or Split of a [B, S, 3, H, D] or
# [3, B, H, S, D] value; fc_qkv_split): one Split of the projection into
# thirds feeds one rank-3 Attention and no Transpose, Gather or Squeeze of
# the heads is left; where the QKV value is read elsewhere or the
# Reshape's sizes are not the projection's dims, the heads stay split
# (rank 4) and the log says why.
expect_rc 0 make_qkv_models "$PYTHON" "$SRC/make_qkvfuse_models.py" m || finish
SHAPES=x:2x5x32
qkv_fused() {
  local f=inspect_$1.out
  expect_grep '^  \[[0-9]+\] scores  plugrt::Attention@1' "$f"
  expect_grep "q_num_heads int32\[1\] = 4\$" "$f"
  expect_grep "kv_num_heads int32\[1\] = 4\$" "$f"
  expect_grep '^  \[[0-9]+\] qkv_split  plugrt::Split@1' "$f"
  ! grep -Eq 'plugrt::(Transpose|Squeeze|Reshape)@1' "$f" ||
    fail "$1: a Transpose, Squeeze or Reshape of the heads is left"
  # The Gathers of x.size() stay (not run: their values fold into shapes).
  ! grep -A4 'plugrt::Gather@1' "$f" | grep -Eq '^ +in: .* float32 ' ||
    fail "$1: a Gather of the QKV value is left"
}
qkv_kept() {
  local f=inspect_$1.out
  expect_grep "q_num_heads int32\[1\] = 0\$" "$f"
  ! grep -q 'plugrt::Split@1' "$f" || fail "$1: a Split of the QKV value was made"
}

check qkv_gather0 $SHAPES,mask:2x1x1x5 && qkv_fused qkv_gather0
check qkv_split0 $SHAPES && qkv_fused qkv_split0
check qkv_gather2 $SHAPES && qkv_fused qkv_gather2
check qkv_split2 $SHAPES,mask:2x1x1x5 && qkv_fused qkv_split2
check qkv_order $SHAPES && qkv_fused qkv_order
check qkv_shared $SHAPES && qkv_kept qkv_shared
expect_grep "one QKV projection's value .*, but the QKV value is read by more than" \
  build_qkv_shared.err
check qkv_swapped $SHAPES && qkv_kept qkv_swapped
expect_grep "one QKV projection's value .*, but the QKV Reshape's B and S are not proved" \
  build_qkv_swapped.err
finish
