#!/usr/bin/env python3
"""Merges the benchmark programs' output into the table of bench/RESULTS.md.

    report.py [--git REV] [--date DATE] [--full FILE] LOG...

Each LOG is the output of bench_nonzero, bench_hardmax, bench_circpad or
torch_peers.py; only its "@device {json}" and "@result {json}" lines are
read. Prints to stdout the run's header, the table

    case | plugrt µs | TB/s | % of copy | PyTorch µs | CUB µs (NonZero) |
    plugrt vs PyTorch | plugrt vs CUB

and the targets of PERF.md, each met or not. --full FILE also writes that
and a detail table of every implementation's record (the copy, both CUB
variants, runs from an idle stream, PyTorch's own copy) and every problem.

Definitions: TB/s = (bytes read once + bytes written once) / time;
% of copy = time of cudaMemcpyAsync D2D of the same bytes (same run, same
rotation) / plugrt's time; "vs" = the peer's time / plugrt's (above 1:
plugrt is faster). The CUB figure is the faster of DeviceSelect::If and
DeviceSelect::FlaggedIf.
"""
import argparse
import json
import sys

LARGE_BYTES = 64 << 20  # bench.h BENCH_LARGE_BYTES
LATENCY_CASES = ("nonzero 128x128",)


def load(paths):
    devices, results, order = [], {}, []
    for path in paths:
        try:
            with open(path, encoding="utf-8", errors="replace") as f:
                lines = f.readlines()
        except OSError as e:
            print(f"report: cannot read {path}: {e}", file=sys.stderr)
            continue
        for line in lines:
            line = line.strip()
            for tag in ("@device ", "@result "):
                if not line.startswith(tag):
                    continue
                try:
                    rec = json.loads(line[len(tag):])
                except json.JSONDecodeError:
                    print(f"report: {path}: unreadable line: {line[:120]}", file=sys.stderr)
                    continue
                if tag == "@device ":
                    devices.append(rec)
                else:
                    case = rec.get("case", "?")
                    if case not in results:
                        results[case] = {}
                        order.append(case)
                    results[case][rec.get("impl", "?")] = rec
    # The C programs' cases first, in their order; cases only PyTorch ran after.
    order.sort(key=lambda c: 0 if any(not i.startswith("torch") for i in results[c]) else 1)
    return devices, results, order


def us_of(rec):
    if rec and rec.get("status") == "ok" and rec.get("us", 0) > 0:
        return rec["us"]
    return None


def fmt_us(v):
    if v is None:
        return "—"
    if v < 10:
        return f"{v:.2f}"
    if v < 100:
        return f"{v:.1f}"
    return f"{v:.0f}"


def fmt_ratio(peer, ours):
    if peer is None or ours is None:
        return "—"
    return f"{peer / ours:.2f}×"


def cell_status(rec, v):
    if v is not None:
        return fmt_us(v)
    if rec is None:
        return "not run"
    return f"**{rec.get('status', '?')}**"


def best_cub(impls):
    best = None
    for name in ("cub_if", "cub_flagged"):
        v = us_of(impls.get(name))
        if v is not None and (best is None or v < best[0]):
            best = (v, name[4:])
    return best


def row_values(impls):
    p, c, t = impls.get("plugrt"), impls.get("copy"), impls.get("torch")
    pv, cv, tv = us_of(p), us_of(c), us_of(t)
    cub = best_cub(impls)
    return {
        "plugrt": pv, "copy": cv, "torch": tv, "cub": cub[0] if cub else None,
        "cub_name": cub[1] if cub else None,
        "tbps": p.get("tbps") if pv is not None else None,
        "pct": 100.0 * cv / pv if pv and cv else None,
        "bytes": (p or c or t or {}).get("bytes", 0),
    }


def header(devices, git, date):
    dev = next((d for d in devices if d.get("program", "").startswith("bench_")), {})
    tor = next((d for d in devices if d.get("program") == "torch_peers"), {})
    parts = [date or "date not given"]
    if dev:
        parts.append(f"{dev.get('name', '?')} (cc {dev.get('cc', '?')}, {dev.get('sms', '?')} SMs, "
                     f"L2 {dev.get('l2_bytes', 0) / (1 << 20):.0f} MiB), driver {dev.get('driver', '?')}, "
                     f"runtime {dev.get('runtime', '?')}")
        parts.append(f"plugrt {dev.get('plugrt', '?')}" + (f" ({git})" if git else "")
                     + f", autotune {dev.get('autotune', '?')}")
    elif git:
        parts.append(f"plugrt ({git})")
    if tor:
        parts.append(f"torch {tor.get('torch', '?')} (CUDA {tor.get('cuda', '?')})")
    else:
        parts.append("no PyTorch figures")
    return "Run: " + "; ".join(parts)


def main_table(results, order):
    out = ["| case | plugrt µs | TB/s | % of copy | PyTorch µs | CUB µs (NonZero) "
           "| plugrt vs PyTorch | plugrt vs CUB |",
           "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for case in order:
        impls = results[case]
        v = row_values(impls)
        is_nz = case.startswith("nonzero")
        t = impls.get("torch")
        torch_cell = fmt_us(v["torch"]) if v["torch"] is not None else (
            "n/a" if t and t.get("status") == "n/a" else cell_status(t, None))
        cub_cell = "" if not is_nz else (
            f"{fmt_us(v['cub'])} ({v['cub_name']})" if v["cub"] is not None
            else cell_status(impls.get("cub_if"), None))
        out.append(" | ".join([
            f"| {case}",
            cell_status(impls.get("plugrt"), v["plugrt"]),
            f"{v['tbps']:.2f}" if v["tbps"] is not None else "—",
            f"{v['pct']:.0f}%" if v["pct"] is not None else "—",
            torch_cell,
            cub_cell,
            fmt_ratio(v["torch"], v["plugrt"]),
            fmt_ratio(v["cub"], v["plugrt"]) if is_nz else "",
        ]) + " |")
    return out


def check(name, items):
    """items: (case, ok or None when not measured, text)."""
    if not items:
        return f"- {name}: not measured (no such case ran)"
    bad = [f"{c} ({t})" for c, ok, t in items if ok is False]
    missing = [c for c, ok, _ in items if ok is None]
    met = sum(1 for _, ok, _ in items if ok)
    s = f"- {name}: "
    if not bad and not missing:
        return s + f"**met** ({met} of {len(items)})"
    parts = []
    if bad:
        parts.append("**NOT met** in " + "; ".join(bad))
    if missing:
        parts.append("not measured: " + ", ".join(missing))
    return s + f"{met} of {len(items)} met; " + "; ".join(parts)


GRAPH_CASE = "nonzero 128x128 d=0.5 row graph"


def judge(group, v):
    """(ok or None when not measured, text) of one case for one target."""
    pv, tv, cv = v["plugrt"], v["torch"], v["cub"]
    if group == "large":
        return (None, "") if v["pct"] is None else (v["pct"] >= 80.0, f"{v['pct']:.0f}%")
    if group == "nz":
        if pv is None or tv is None or cv is None:
            return None, ""
        return tv / pv >= 2.0 and cv / pv > 1.0, f"{tv / pv:.2f}× PyTorch, {cv / pv:.2f}× CUB"
    if group == "hm0":
        return (None, "") if pv is None or tv is None else (tv / pv >= 2.0, f"{tv / pv:.2f}×")
    return (None, "") if pv is None else (pv < 10.0, f"{fmt_us(pv)} µs")


def targets(results, order):
    groups = {"large": [], "nz": [], "hm0": [], "graph": []}
    for case in order:
        impls = results[case]
        v = row_values(impls)
        latency = case.startswith(LATENCY_CASES)
        member = []
        if not latency and v["bytes"] >= LARGE_BYTES:
            member.append("large")
        if case.startswith("nonzero") and not latency:
            member.append("nz")
        if case.startswith("hardmax") and case.endswith("axis=0"):
            member.append("hm0")
        if case == GRAPH_CASE:
            member.append("graph")
        p = impls.get("plugrt")
        for g in member:
            if p is not None and p.get("status") in ("wrong", "error"):
                # A wrong or failed result misses every target it is in.
                groups[g].append((case, False, f"plugrt: {p['status']}"))
            else:
                groups[g].append((case,) + judge(g, v))
    return [
        "Targets (PERF.md):",
        check("every large case (≥ 64 MiB moved per run) ≥ 80% of the copy", groups["large"]),
        check("NonZero ≥ 2× PyTorch and faster than CUB", groups["nz"]),
        check("Hardmax axis 0 ≥ 2× PyTorch", groups["hm0"]),
        check("NonZero 128² graph replay < 10 µs per enqueue", groups["graph"]),
    ]


def detail(results, order):
    out = ["| case | impl | status | µs | min µs | method | runs | sets | MB moved | TB/s "
           "| host µs/call | note |",
           "|---|---|---|---:|---:|---|---:|---:|---:|---:|---:|---|"]
    for case in order:
        for impl, r in results[case].items():
            ok = r.get("status") == "ok"
            out.append(" | ".join([
                f"| {case}", impl, r.get("status", "?"),
                fmt_us(r.get("us")) if ok else "—",
                fmt_us(r.get("min_us")) if ok else "—",
                r.get("method", "—") if ok else "—",
                str(r.get("iters", "—")) if ok else "—",
                str(r.get("sets", "—")) if ok else "—",
                f"{r.get('bytes', 0) / 1e6:.2f}",
                f"{r.get('tbps', 0):.3f}" if ok else "—",
                f"{r['host_us']:.2f}" if ok and r.get("host_us") else "—",
                (r.get("note") or "").replace("|", "/"),
            ]) + " |")
    return out


def problems(results, order):
    out = []
    for case in order:
        for impl, r in results[case].items():
            if r.get("status") in ("wrong", "error"):
                out.append(f"- {case}, {impl}: {r['status']}: {r.get('note', '')}")
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--git", default="")
    ap.add_argument("--date", default="")
    ap.add_argument("--full", default="")
    ap.add_argument("logs", nargs="+")
    a = ap.parse_args()
    devices, results, order = load(a.logs)
    probs = problems(results, order)
    short = [header(devices, a.git, a.date), ""] + main_table(results, order) + [""] \
        + targets(results, order)
    if probs:
        short += ["", "Problems (wrong results and failures; details in the logs):"] + probs
    print("\n".join(short))
    if a.full:
        full = short + ["", "Every record (method: median of per-run intervals; loop: average "
                        "over runs queued back to back; isolated: median of runs from an idle "
                        "stream):", ""] + detail(results, order)
        with open(a.full, "w", encoding="utf-8") as f:
            f.write("\n".join(full) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
