"""Benchmark: minify's source stage (issue 28) on real programs: lines before -> after, queries, wall
time, verified. Goal: a ~60-line training program whose run takes ~100 s reduced to <= 30 lines in
<= 30 min on 2 cores.
Usage: python3 benchmarks/source_minify.py [--limit SEC] [--queries warm,cold] [--jobs 2] [--out DIR] [prog ...]
(default programs: tests/programs/src_train_gate.py, src_hook_stats.py, src_hf_train.py). Each program
runs once per query mode (warm: forks of an interpreter that imported torch once, the default; cold:
`--cold`, a fresh interpreter per query), the modes of one program side by side in the table; --jobs
runs that many reductions at a time."""
import argparse
import json
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CLI = os.path.join(ROOT, "scripts", "compile_debug.py")
PROGS = ["src_train_gate.py", "src_hook_stats.py", "src_hf_train.py"]


def one(prog, limit, out, queries="warm"):
    t0 = time.monotonic()
    p = subprocess.run([sys.executable, CLI, "minify", "--json", "--source", "--source-limit", str(limit),
                        *(["--cold"] if queries == "cold" else []),
                        "--out", out, "--", sys.executable, prog], capture_output=True, text=True,
                       timeout=limit * 3 + 3600)
    wall = time.monotonic() - t0
    try:
        doc = json.loads(p.stdout)
    except ValueError:
        return {"program": os.path.basename(prog), "queries_in": queries, "error": p.stderr[-500:],
                "wall_s": round(wall)}
    orig = doc.get("original") or {}
    return {"program": os.path.basename(prog), "queries_in": "warm" if doc.get("warm") else "cold",
            "mode": doc.get("mode"), "lines_before": doc.get("lines_before"),
            "lines_after": doc.get("lines_after"), "queries": doc.get("queries"), "kept": doc.get("kept"),
            "original_run_s": round(orig.get("duration_s") or 0, 1), "reduce_s": doc.get("reduce_s"),
            "wall_s": round(wall), "verified": doc.get("verified"), "stopped": doc.get("stopped"),
            "run_dir": out}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--limit", type=float, default=1800)
    ap.add_argument("--out", default="/tmp/source_minify_bench")
    ap.add_argument("--queries", default="warm,cold", help="query modes to compare (warm, cold)")
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("progs", nargs="*")
    a = ap.parse_args()
    progs = a.progs or [os.path.join(ROOT, "tests", "programs", p) for p in PROGS]
    os.makedirs(a.out, exist_ok=True)
    load = open("/proc/loadavg").read().split()[0] if os.path.exists("/proc/loadavg") else "?"
    print(f"cores {os.cpu_count()}, load average {load} before", flush=True)
    todo = [(os.path.abspath(prog), q, os.path.join(a.out, f"{i}-{os.path.basename(prog)[:-3]}-{q}"))
            for i, prog in enumerate(progs) for q in a.queries.split(",")]

    def go(t):
        r = one(t[0], a.limit, t[2], t[1])
        print(json.dumps(r), flush=True)
        return r
    with ThreadPoolExecutor(max(1, a.jobs)) as ex:
        rows = list(ex.map(go, todo))
    print(f"\nlimit {a.limit:.0f} s, {a.jobs} at a time, load average {open('/proc/loadavg').read().split()[0]} after")
    print("\n| program | queries | mode | lines | queries run (kept) | one run of the original | wall | verified |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        if "error" in r:
            print(f"| {r['program']} | {r['queries_in']} | error | | | | {r['wall_s']} s | {r['error'][:80]} |")
            continue
        print(f"| {r['program']} | {r['queries_in']} | {r['mode']} | {r['lines_before']} → {r['lines_after']} "
              f"| {r['queries']} ({r['kept']}) | {r['original_run_s']} s | {r['wall_s']} s | {r['verified']} |")

if __name__ == "__main__":
    main()
