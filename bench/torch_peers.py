#!/usr/bin/env python3
"""PyTorch's figures for the plugrt GPU benchmarks, in the same batch.

The same cases, sizes, data rules and timing rules as bench/bench_*.cu
(bench.h): CUDA events, warm-up, median of >= 30 runs queued back to back
(for the 128x128 latency case, the average over many runs, and the median of
runs from an idle stream), buffer sets rotated so that one pass over them
moves at least 4 x L2, data never all zero, and every result checked against
PyTorch on the CPU before timing. The work timed:

    NonZero   torch.nonzero(x)                  row order, K x 2 (int64)
              torch.nonzero(x).t().contiguous() column order, 2 x K
    Hardmax   torch.zeros_like(x).scatter_(axis, x.argmax(axis, keepdim=True), 1.0)
    CircPad   F.pad(x, (p, p, p, p), mode="circular")

Prints one human line and one "@result {json}" line per case and
implementation ("torch", and "torch_copy": the device-to-device copy of the
same bytes as PyTorch does it); bench/report.py merges them with the C
programs' lines. Arguments choose the groups (nonzero, hardmax, circpad;
default all). Exit status 77 when there is no torch or no GPU.
"""
import json
import math
import statistics
import sys
import time

L2_FACTOR = 4
MAX_SETS = 32
MIN_ITERS = 30
MAX_ITERS = 2000
TARGET_MS = 60.0
WARMUP = 5
ISOLATED_MAX = 200

try:
    import torch
    import torch.nn.functional as F
except ImportError as e:  # the lead's machine has it; say so elsewhere
    print(f"torch_peers: skipped: no torch ({e})")
    sys.exit(77)

if not torch.cuda.is_available():
    print("torch_peers: skipped: torch sees no GPU")
    sys.exit(77)

DEV = torch.device("cuda", 0)
PROPS = torch.cuda.get_device_properties(0)
L2 = int(getattr(PROPS, "L2_cache_size", 0) or (60 << 20))
FAILURES = 0


def sets_for(bytes_per_set):
    want = L2_FACTOR * L2
    sets = -(-want // max(1, bytes_per_set))
    return max(1, min(MAX_SETS, sets))


def time_fn(fn, sets, method="median"):
    """fn(i) queues one run on set i. Returns a dict like bench_timing."""
    probe = max(sets, WARMUP)
    nxt = 0
    for _ in range(probe):
        fn(nxt)
        nxt = (nxt + 1) % sets
    torch.cuda.synchronize()
    e0 = torch.cuda.Event(enable_timing=True)
    e1 = torch.cuda.Event(enable_timing=True)
    e0.record()
    for _ in range(probe):
        fn(nxt)
        nxt = (nxt + 1) % sets
    e1.record()
    e1.synchronize()
    est_us = 1e3 * e0.elapsed_time(e1) / probe
    iters = MAX_ITERS if est_us <= 0 else math.ceil(TARGET_MS * 1e3 / est_us)
    iters = max(MIN_ITERS, min(MAX_ITERS, iters))
    if method == "isolated":
        iters = min(iters, ISOLATED_MAX)
    out = {"iters": iters, "sets": sets, "method": method, "host_us": 0.0}
    if method == "loop":
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        e0.record()
        for _ in range(iters):
            fn(nxt)
            nxt = (nxt + 1) % sets
        e1.record()
        t1 = time.perf_counter()
        e1.synchronize()
        out["us"] = out["min_us"] = 1e3 * e0.elapsed_time(e1) / iters
        out["host_us"] = 1e6 * (t1 - t0) / iters
        return out
    v = []
    if method == "isolated":
        for _ in range(iters):
            torch.cuda.synchronize()
            e0.record()
            fn(nxt)
            nxt = (nxt + 1) % sets
            e1.record()
            e1.synchronize()
            v.append(1e3 * e0.elapsed_time(e1))
    else:
        ev = [torch.cuda.Event(enable_timing=True) for _ in range(iters + 1)]
        torch.cuda.synchronize()
        for i in range(iters):
            ev[i].record()
            fn(nxt)
            nxt = (nxt + 1) % sets
        ev[iters].record()
        ev[iters].synchronize()
        v = [1e3 * ev[i].elapsed_time(ev[i + 1]) for i in range(iters)]
    out["us"] = statistics.median(v)
    out["min_us"] = min(v)
    return out


def result(case, impl, status, t, nbytes, note=""):
    global FAILURES
    ok = status == "ok" and t is not None
    if status in ("wrong", "error"):
        FAILURES += 1
    rec = {"case": case, "impl": impl, "status": status, "bytes": int(nbytes), "note": note}
    if ok:
        rec.update(t)
        rec["tbps"] = nbytes / (t["us"] * 1e-6) / 1e12 if t["us"] > 0 else 0.0
        print(f"  {case:<38} {impl:<14} {t['us']:10.2f} us {rec['tbps']:7.3f} TB/s  "
              f"({t['method']} of {t['iters']}, min {t['min_us']:.2f}, {t['sets']} set"
              f"{'s' if t['sets'] > 1 else ''})"
              + (f"  {note}" if note else ""))
    else:
        print(f"  {case:<38} {impl:<14} {status}" + (f": {note}" if note else ""))
    print("@result " + json.dumps(rec), flush=True)


def time_copy(nbytes, sets, method="median"):
    """torch's device-to-device copy of nbytes / 2 per run, like bench_time_copy."""
    half = max(1, nbytes // 2)
    src = [torch.full((half,), 0x3C, dtype=torch.uint8, device=DEV) for _ in range(sets)]
    dst = [torch.empty((half,), dtype=torch.uint8, device=DEV) for _ in range(sets)]
    t = time_fn(lambda i: dst[i].copy_(src[i]), sets, method)
    del src, dst
    return t


def gen(seed):
    g = torch.Generator(device=DEV)
    g.manual_seed(seed)
    return g


def sparse(shape, density, seed):
    """Each element non-zero with probability density: +-[1e-3, 100); zeros
    are +0 or -0 (bench_fill_sparse's rule)."""
    g = gen(seed)
    nz = torch.rand(shape, generator=g, device=DEV) < density
    mag = 1e-3 + 99.999 * torch.rand(shape, generator=g, device=DEV)
    neg = torch.rand(shape, generator=g, device=DEV) < 0.5
    val = torch.where(neg, -mag, mag)
    zero = torch.where(neg, torch.tensor(-0.0, device=DEV), torch.tensor(0.0, device=DEV))
    return torch.where(nz, val, zero).contiguous()


def uniform(shape, seed):
    g = gen(seed)
    return (torch.rand(shape, generator=g, device=DEV) * 2.0 - 1.0).contiguous()


# ---- NonZero ------------------------------------------------------------------

def nz_op(row):
    if row:
        return lambda x: torch.nonzero(x)
    return lambda x: torch.nonzero(x).t().contiguous()


def nz_check(x, y, row, full):
    xc = x.cpu()
    k = int((xc != 0).sum())
    kk = y.shape[0] if row else y.shape[1]
    if kk != k:
        return f"count {kk}, expected {k}"
    if full:
        ref = torch.nonzero(xc)
        if not row:
            ref = ref.t()
        if not torch.equal(y.cpu(), ref):
            return "index pairs differ from torch.nonzero on the CPU"
    return None


def bench_nonzero():
    print("NonZero")
    # 128x128: latency (the data stays in L2).
    x = sparse((128, 128), 0.5, 128)
    k = int((x != 0).sum())
    nbytes = 4 * x.numel() + 8 * k + 8
    eager, graph = "nonzero 128x128 d=0.5 row eager", "nonzero 128x128 d=0.5 row graph"
    op = nz_op(True)
    why = nz_check(x, op(x), True, True)
    tc = time_copy(nbytes, 1, "loop")
    result(eager, "torch_copy", "ok", tc, nbytes)
    if why:
        result(eager, "torch", "wrong", None, nbytes, why)
    else:
        result(eager, "torch", "ok", time_fn(lambda i: op(x), 1, "loop"), nbytes, f"K = {k}")
        result(eager, "torch_idle", "ok", time_fn(lambda i: op(x), 1, "isolated"), nbytes,
               "one run from an idle stream")
    result(graph, "torch", "n/a", None, nbytes,
           "torch.nonzero synchronizes to size its output, so it cannot be captured")

    for side in (4096, 16384):
        n = side * side
        sets = sets_for(4 * n)
        print(f"NonZero {side}x{side}: {sets} buffer set{'s' if sets > 1 else ''}")
        for di, d in enumerate((0.5, 0.1, 0.01)):
            xs = [sparse((side, side), d, side * 10 + di)]
            xs += [xs[0].clone() for _ in range(sets - 1)]
            k = int((xs[0] != 0).sum())
            nbytes = 4 * n + 8 * k + 8
            tc = time_copy(nbytes, sets)
            for row in (True, False):
                case = f"nonzero {side}x{side} d={d:g} {'row' if row else 'col'}"
                result(case, "torch_copy", "ok", tc, nbytes)
                op = nz_op(row)
                why = nz_check(xs[0], op(xs[0]), row, n <= (1 << 24))
                if why:
                    result(case, "torch", "wrong", None, nbytes, why)
                    continue
                t = time_fn(lambda i: op(xs[i]), sets)
                result(case, "torch", "ok", t, nbytes, f"K = {k}, int64 indices")
            del xs
            torch.cuda.empty_cache()


# ---- Hardmax ------------------------------------------------------------------

def hardmax(x, axis):
    return torch.zeros_like(x).scatter_(axis, x.argmax(axis, keepdim=True), 1.0)


def bench_hardmax():
    print("Hardmax")
    cases = [((65536, 1024), 1), ((4096, 4096), 0), ((64, 64, 2048), 2), ((1, 512, 3), 1)]
    for ci, (shape, axis) in enumerate(cases):
        case = f"hardmax {'x'.join(map(str, shape))} axis={axis}"
        n = math.prod(shape)
        nbytes = 8 * n
        sets = sets_for(nbytes)
        xs = [uniform(shape, 1000 + ci)]
        xs += [xs[0].clone() for _ in range(sets - 1)]
        result(case, "torch_copy", "ok", time_copy(nbytes, sets), nbytes)
        ref = hardmax(xs[0].cpu(), axis)
        if not torch.equal(hardmax(xs[0], axis).cpu(), ref):
            result(case, "torch", "wrong", None, nbytes, "differs from the CPU")
            continue
        t = time_fn(lambda i: hardmax(xs[i], axis), sets)
        result(case, "torch", "ok", t, nbytes, "argmax + scatter_")
        del xs
        torch.cuda.empty_cache()


# ---- CircPad ------------------------------------------------------------------

def bench_circpad():
    print("CircPad")
    cases = [((8, 64, 256, 256), 1), ((8, 64, 256, 256), 3), ((1, 3, 1024, 1024), 16)]
    for ci, (shape, p) in enumerate(cases):
        case = f"circpad {'x'.join(map(str, shape))} pads={p}"
        n = math.prod(shape)
        nout = shape[0] * shape[1] * (shape[2] + 2 * p) * (shape[3] + 2 * p)
        nbytes = 4 * (n + nout)
        sets = sets_for(nbytes)
        xs = [uniform(shape, 2000 + ci)]
        xs += [xs[0].clone() for _ in range(sets - 1)]
        result(case, "torch_copy", "ok", time_copy(nbytes, sets), nbytes)
        pad = (p, p, p, p)
        ref = F.pad(xs[0].cpu(), pad, mode="circular")
        if not torch.equal(F.pad(xs[0], pad, mode="circular").cpu(), ref):
            result(case, "torch", "wrong", None, nbytes, "differs from the CPU")
            continue
        t = time_fn(lambda i: F.pad(xs[i], pad, mode="circular"), sets)
        result(case, "torch", "ok", t, nbytes, 'F.pad(mode="circular")')
        del xs
        torch.cuda.empty_cache()


def main(argv):
    groups = argv or ["nonzero", "hardmax", "circpad"]
    torch.cuda.set_device(0)
    print(f"torch_peers: torch {torch.__version__}, {PROPS.name}, "
          f"{PROPS.multi_processor_count} SMs, L2 {L2 / (1 << 20):.1f} MiB")
    print("@device " + json.dumps({"program": "torch_peers", "name": PROPS.name,
                                   "torch": torch.__version__,
                                   "cuda": torch.version.cuda, "l2_bytes": L2}))
    peers = {"nonzero": bench_nonzero, "hardmax": bench_hardmax, "circpad": bench_circpad}
    for g in groups:
        if g in peers:  # "kernels" (bench_kernels: plugrt against itself) has none
            peers[g]()
    print(f"torch_peers: {'FAILED' if FAILURES else 'done'} ({FAILURES} failures)")
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
