#!/usr/bin/env bash
# Out of memory in `plugrt run`: with the failmalloc shim preloaded, the N-th
# allocation of the process fails, for every N the run makes. Each run must
# exit 0 with its full report, or 1 with an error that says memory ran out;
# never a signal (a crash, or glibc aborting on a heap it finds corrupted),
# never another status, never a silent failure.
. "$(dirname "$0")/common.sh"

[ -n "${FAILMALLOC:-}" ] && [ -f "$FAILMALLOC" ] ||
  skip "no failmalloc shim (not built under PRT_SANITIZE: it cannot sit in front of a sanitizer's allocator)"
if ldd "$PLUGRT" 2>/dev/null | grep -Eq 'lib(a|t|l|ub)san'; then
  skip "plugrt is built with a sanitizer, whose allocator the shim cannot wrap"
fi
have_onnx || skip "plugrt was built without the ONNX importer"

# NonZero: two outputs (the counting of outputs had an off-by-one on
# failure), one of them data-dependent (an output allocator), a plugin
# library to load.
expect_rc 0 make_model "$PYTHON" "$SRC/make_nonzero_model.py" model 5 4 || finish
expect_rc 0 build "$PLUGRT" build model/model.onnx -o nz.plan \
  --min-shapes X:1x1 --opt-shapes X:5x4 --max-shapes X:8x8 || finish
# References for the random input of seed 1, so --compare passes.
rm -rf ref out
expect_rc 0 reference "$PLUGRT" run nz.plan --random-inputs --shapes X:5x4 -o ref -n 1 \
  --warmup 0 || finish

# What an allocation failure may leave as the reason of exit 1: plugrt's and
# the program's "out of memory" (or its status name, when the output
# allocator's memory ran out during a run), libc's ENOMEM text, a thread
# that could not start, or the standard plugin library that dlopen could not
# load (glibc's dlerror does not always say why; the plan then lacks its
# plugin).
OOM_WORDS='out of memory|OUT_OF_MEMORY|Cannot allocate memory|EAGAIN|standard plugin library was not loaded'

# sweep NAME ARGS...: runs `plugrt run ARGS` once per allocation it makes.
sweep() {
  local name=$1 total n bad=0
  shift
  FAILMALLOC_COUNT=1 LD_PRELOAD="$FAILMALLOC" "$PLUGRT" run "$@" >"$name.count.out" \
    2>"$name.count.err"
  total=$(sed -n 's/^failmalloc: \([0-9]*\) allocations$/\1/p' "$name.count.err")
  if [ -z "$total" ] || [ "$total" -lt 20 ]; then
    fail "$name: the shim counted '${total}' allocations; is it preloaded?"
    return
  fi
  # A few past the count: threads can make one run allocate more than another.
  for n in $(seq 1 $((total + 8))); do
    FAILMALLOC_AT=$n LD_PRELOAD="$FAILMALLOC" "$PLUGRT" run "$@" >"$name.out" 2>"$name.err"
    rc=$?
    if [ "$rc" = 0 ]; then
      grep -q '^throughput:' "$name.out" && continue
      fail "$name: allocation $n failed: exit 0 without the full report"
    elif [ "$rc" = 1 ]; then
      grep -q 'error: ' "$name.err" && grep -Eq "$OOM_WORDS" "$name.err" && continue
      fail "$name: allocation $n failed: exit 1 without a message saying out of memory"
    else
      fail "$name: allocation $n failed: exit status $rc (over 128: killed by a signal)"
    fi
    sed 's/^/    stderr: /' "$name.err" | head -5 >&2
    bad=$((bad + 1))
    [ "$bad" -ge 5 ] && return
  done
  echo "$name: $total allocations, each failed once"
}

# Between them: --input files, writing outputs; random data, references,
# several threads.
sweep files nz.plan --input X=model/x.npy -o out -n 1 --warmup 0
sweep random nz.plan --random-inputs --shapes X:5x4 --compare ref --threads 2 -n 2 --warmup 1

finish
