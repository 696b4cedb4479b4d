#!/usr/bin/env bash
# The GPU benchmark batch in one command, on the H200 (bench/RESULTS.md):
#
#     bash bench/run_cuda.sh
#
# Builds the programs: in build-cuda when the lead's build is there and has
# CUDA, else in build-bench (configured here in Release if absent). Runs
# bench_nonzero, bench_hardmax, bench_circpad and bench/torch_peers.py one
# after another, every step under a time limit, and prints the combined
# table (bench/report.py) last on stdout; the programs' own lines go to
# stderr as they run. With $OUT set it also writes two files there:
#     $OUT/bench-results.md  the table, the targets and every record
#     $OUT/bench-log.txt     the build's output and every program's output
#
# Environment (all optional):
#     PRT_BENCH_BUILD     a build folder to use (configured here if absent)
#     PRT_BENCH_NO_BUILD=1  use PRT_BENCH_BUILD's programs as they are (a
#                         build made on another machine and copied here)
#     PRT_BENCH_GROUPS    which groups, default "nonzero hardmax circpad"
#     PRT_BENCH_TORCH=0   skip the PyTorch figures
#     PRT_BENCH_AUTOTUNE=0  build the engines without autotuning
#     PRT_BENCH_ONLY      run only the cases whose id contains this text
#     PRT_BENCH_REV       the version to print (default: git's HEAD)
#     PRT_BENCH_VERBOSE=1 the library log (the tuner times every tactic) in the log
#     PYTHON              the Python with torch (default python3)
# Exit status: 0 when every program ran and every check passed, else 1.
set -u -o pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root" || exit 1
groups=${PRT_BENCH_GROUPS:-"nonzero hardmax circpad"}
py=${PYTHON:-python3}
jobs=$(nproc 2>/dev/null || echo 4)
started=$(date +%s)
work=$(mktemp -d "${TMPDIR:-/tmp}/plugrt-bench.XXXXXX")
log=$work/log.txt
status=0

say() { echo "run_cuda: $*" | tee -a "$log" >&2; }

fail_build() {
  say "building the benchmarks in $1 failed; the end of the build log:"
  tail -40 "$log" >&2
  [ -n "${OUT:-}" ] && cp "$log" "$OUT/bench-log.txt"
  exit 1
}

configure() { # $1: folder
  local gen=
  command -v ninja >/dev/null 2>&1 && gen="-G Ninja"
  say "configuring $1 (Release)"
  # shellcheck disable=SC2086
  cmake -S . -B "$1" $gen -DCMAKE_BUILD_TYPE=Release >>"$log" 2>&1
}

build() { # $1: folder
  cmake --build "$1" --target bench_all -j "$jobs" >>"$log" 2>&1
}

# ---- build ------------------------------------------------------------------
bdir=${PRT_BENCH_BUILD:-}
if [ -n "$bdir" ] && [ "${PRT_BENCH_NO_BUILD:-0}" = 1 ]; then
  say "using the programs already built in $bdir"
elif [ -n "$bdir" ]; then
  [ -f "$bdir/CMakeCache.txt" ] || configure "$bdir" || fail_build "$bdir"
  build "$bdir" || fail_build "$bdir"
elif [ -f build-cuda/CMakeCache.txt ] && build build-cuda; then
  bdir=build-cuda
else
  [ -f build-cuda/CMakeCache.txt ] &&
    say "build-cuda has no benchmark targets (built without CUDA?); using build-bench"
  bdir=build-bench
  [ -f "$bdir/CMakeCache.txt" ] || configure "$bdir" || fail_build "$bdir"
  build "$bdir" || fail_build "$bdir"
fi
say "programs from $bdir/bench ($(($(date +%s) - started)) s so far)"
if command -v nvidia-smi >/dev/null 2>&1; then
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw \
    --format=csv >>"$log" 2>&1
fi

# ---- run --------------------------------------------------------------------
logs=()
for g in $groups; do
  prog=$bdir/bench/bench_$g
  if [ ! -x "$prog" ]; then
    say "no program $prog"
    status=1
    continue
  fi
  say "bench_$g"
  # Limits well above a normal run (NonZero about a minute, the others
  # seconds), so that only a hung kernel meets them.
  limit=90
  [ "$g" = nonzero ] && limit=150
  timeout -k 10 "$limit" "$prog" 2>&1 | tee "$work/$g.txt" | tee -a "$log" | grep -v '^@' >&2
  rc=${PIPESTATUS[0]}
  logs+=("$work/$g.txt")
  if [ "$rc" -ne 0 ]; then
    say "bench_$g exited with status $rc$([ "$rc" -eq 124 ] && echo ' (time limit)')"
    status=1
  fi
done

if [ "${PRT_BENCH_TORCH:-1}" != 0 ]; then
  say "torch_peers.py"
  # shellcheck disable=SC2086
  PYTHONUNBUFFERED=1 timeout -k 10 150 "$py" bench/torch_peers.py $groups 2>&1 |
    tee "$work/torch.txt" | tee -a "$log" | grep -v '^@' >&2
  rc=${PIPESTATUS[0]}
  logs+=("$work/torch.txt")
  if [ "$rc" -ne 0 ]; then
    say "torch_peers.py exited with status $rc"
    [ "$rc" -ne 77 ] && status=1
  fi
fi
say "all programs done in $(($(date +%s) - started)) s"

# ---- the table -----------------------------------------------------------------
if [ -n "${PRT_BENCH_REV:-}" ]; then
  rev=$PRT_BENCH_REV # a copy of the tree without its .git
else
  rev=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
  git diff --quiet HEAD 2>/dev/null || rev="$rev+changes"
fi
echo >&2
if ! "$py" bench/report.py --git "$rev" --date "$(date -u +%Y-%m-%d)" \
    --full "$work/results.md" "${logs[@]}"; then
  say "bench/report.py failed; the raw records:"
  grep -h '^@' "${logs[@]}"
  status=1
fi

if [ -n "${OUT:-}" ]; then
  mkdir -p "$OUT"
  [ -f "$work/results.md" ] && cp "$work/results.md" "$OUT/bench-results.md"
  cp "$log" "$OUT/bench-log.txt"
fi
exit "$status"
