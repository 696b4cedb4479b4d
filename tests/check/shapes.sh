#!/usr/bin/env bash
# `plugrt check` on a plugin with a shape input, check::Tile (tile.c): the
# checker finds that it takes one (of as many values as the input has
# dims), passes it values as symbols bounded in the profile, as a network
# input's values are, and runs it with values drawn per case, so the
# plugin without a defect passes every check and the one that tiles by the
# profile's smallest repeats fails coverage at a case whose values are
# larger.
. "$COMMON"

expect_rc 0 tile "$PLUGRT" check "$LIBS/tile_none.so" && {
  expect_grep "^  pass  outputs +1 output \(float32\); testing 1 input: in0 float32, rank 1\|2\|4; 1 shape input of 1\|2\|4 values$" \
    tile.out "the shape input is found, its values going with the rank"
  expect_grep "^  pass  shapes +output dims valid at [1-9][0-9]* random shapes; at [1-9][0-9]* the same as from constant input dims$" \
    tile.out "symbolic values agree with the same values as constants"
  expect_grep "^  pass  coverage +every output element written in [1-9][0-9]* cases" tile.out
  expect_grep "^  pass  threads " tile.out
  expect_grep "^summary: 1 plugin, 22 checks: 16 passed, 0 failed, 6 skipped$" tile.out
}

expect_rc 1 stale "$PLUGRT" check "$LIBS/tile_stale_repeats.so" && {
  expect_grep "^  FAIL  coverage +out0 element [0-9]+ of [0-9]+ was not written .*\[in0 float32 [0-9x]+, shape0 \([0-9, ]+\); tactic 0; out0 element [0-9]+\]$" \
    stale.out "stale repeats: coverage names the shape input's values"
  expect_grep "^  pass  shapes " stale.out "stale repeats: its shapes are right"
  expect_grep "^  pass  bounds " stale.out "stale repeats: it writes nothing past its output"
}

# JSON names the shape input's values in the failing case's shape.
expect_rc 1 stale_json "$PLUGRT" check "$LIBS/tile_stale_repeats.so" --json &&
  expect_rc 0 stale_json_parse "$PYTHON" - stale_json.out <<'PY'
import json, re, sys
doc = json.load(open(sys.argv[1]))
[p] = doc["plugins"]
c = {c["check"]: c for c in p["checks"]}
cov = c["coverage"]
assert cov["status"] == "fail" and cov["tensor"] == "out0", cov
assert re.fullmatch(r"in0 float32 [0-9x]+, shape0 \([0-9, ]+\)", cov["shape"]), cov
PY
finish
