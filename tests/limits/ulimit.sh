#!/usr/bin/env bash
# A memory limit ends a run of the plugrt program in an error or in success,
# never in a hang or a signal.
#
# Runs `plugrt run MODEL.onnx --compare DIR` on models whose layers compute
# matrix products (MatMul, Gemm, Conv: the BLAS's work), and `plugrt --help`,
# under `ulimit -v` values from where the program barely loads to where
# everything fits, each with a timeout. When OpenBLAS 0.3.21 was linked into
# libplugrt, runs in the upper half of this range hung: its threads retry a
# refused 128 MiB buffer forever, and exit() waits for them; one that
# cannot start its threads raises SIGINT (src/ops/blas.c).
#
# Each run must exit 0 with every output matching its reference, or 1 with
# plugrt's error message (not a mismatch), or 127 with the dynamic loader's
# (a limit too low to load the program at all). A limit a little above that
# can leave the static CUDA runtime in libplugrt, whose initializers run as
# the library loads, without memory: it dies of SIGSEGV before main. That
# is a limit too low to load the program too, told apart from a crash of
# plugrt's own by PLUGRT_MARK_MAIN (tools/main.c prints a line on entering
# main): a signal without that line counts as the loader's refusal. Each model must fail cleanly at
# some limit and pass at another, or the sweep has missed the range where
# allocations start failing.
#
# Environment (tests/limits/CMakeLists.txt): PLUGRT, MODELS, SANITIZED.
set -u

if [ "${SANITIZED:-OFF}" = ON ]; then
  echo "SKIP: a sanitizer build: ASan reserves terabytes of address space" \
       "for its shadow memory, so no ulimit -v leaves it room to start"
  exit 77
fi

# MiB. The program needs about 4 to start; every model fits in 64.
limits=(4 6 8 10 12 14 16 20 24 32 40 48 64 96 128 192 256 320 384 512)
# Seconds: a run takes well under one.
timeout_s=30
failures=0 ran=0
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# run_limited MIB CMD...: CMD under ulimit -v MIB MiB and the timeout (the
# timeout itself outside the limit); output in $work/out, exit status in $rc.
run_limited() {
  local mib=$1
  shift
  PLUGRT_MARK_MAIN=1 timeout -k 5 "$timeout_s" \
    bash -c 'ulimit -v "$1" || exit 99; shift; exec "$@"' \
    limited $((mib * 1024)) "$@" >"$work/out" 2>&1
  rc=$?
}

fail() {
  echo "FAIL: $*"
  sed 's/^/    /' "$work/out" | tail -5
  failures=$((failures + 1))
}

# check WHAT: judges $rc and $work/out; sets $result to ok, error or bad.
check() {
  result=bad
  case $rc in
    0) result=ok ;;
    1) if grep -q "differ from the references" "$work/out"; then
         fail "$1: wrong results"
       elif grep -q "error" "$work/out"; then
         result=error
       else
         fail "$1: exit 1 without an error message"
       fi ;;
    127) if grep -q "error while loading shared libraries" "$work/out"; then
           result=error # the dynamic loader's clean refusal
         else
           fail "$1: exit status 127"
         fi ;;
    124 | 137) fail "$1: hung (killed after ${timeout_s} s)" ;;
    99) fail "$1: ulimit -v refused" ;;
    *) if [ "$rc" -gt 128 ] && ! grep -q "plugrt: main reached" "$work/out"; then
         result=error # died loading, before main: too low to load at all
       elif [ "$rc" -gt 128 ]; then
         fail "$1: died of signal $((rc - 128))"
       else
         fail "$1: exit status $rc"
       fi ;;
  esac
}

for mib in "${limits[@]}"; do
  run_limited "$mib" "$PLUGRT" --help
  ran=$((ran + 1))
  check "plugrt --help under $mib MiB"
done

models=0
for name in bert_small mobilenet_v3_small circ_pad_conv; do
  model="$MODELS/$name.onnx" data="$MODELS/$name.data"
  if [ ! -f "$model" ] || [ ! -d "$data" ]; then
    echo "note: $model or $data not found; skipped"
    continue
  fi
  models=$((models + 1))
  passed=0 errors=0
  for mib in "${limits[@]}"; do
    run_limited "$mib" "$PLUGRT" run "$model" --compare "$data" \
      --atol 1e-4 --rtol 1e-3 --warmup 1 --iterations 2
    ran=$((ran + 1))
    check "$name under $mib MiB"
    case $result in
      ok) passed=$((passed + 1)) ;;
      error) errors=$((errors + 1)) ;;
    esac
    echo "$name under $mib MiB: exit $rc ($result)"
  done
  [ "$passed" -gt 0 ] || fail "$name: no limit let it run, so none tested success"
  [ "$errors" -gt 0 ] || fail "$name: no limit made it fail, so none tested the errors"
done
[ "$models" -gt 0 ] || { echo "SKIP: no shared model found in $MODELS"; exit 77; }

echo "$ran runs, $failures failures"
[ "$failures" = 0 ]
