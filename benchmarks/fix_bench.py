#!/usr/bin/env python3
"""Benchmark `fix` (issue 10 §Done means).

1. Time: wall time of `compile_debug.py fix -- python P` vs the sum of the plain triage runs it
   needs (baseline + one per candidate tried + the combined run, each timed as a plain
   `triage --no-tlparse` of P = median of --runs). Target: under 1.5x, by running trials in
   parallel (--jobs, default the CPU cores). The control run (second plain run, for output
   determinism and as the timing reference) is fix's own overhead and counts against it.
2. Coverage: across the programs, the share of findings (graph-break sites, recompiling guard
   kinds, recompile-limit hits) that got a verified fix (verified (measured): fewer breaks or
   recompiles, exit 0 and the same output).

    python3 benchmarks/fix_bench.py [--runs 1] [--jobs N] [--json FILE] [programs...]
"""
import argparse
import glob
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CLI = os.path.join(ROOT, "scripts", "compile_debug.py")
SKIP = ("gpu_", "mr_", "bug_", "ind_", "perf_", "export_", "aot_", "err_", "no_compile", "clean", "fx_fragile")


def default_programs():
    progs = sorted(glob.glob(os.path.join(ROOT, "tests", "programs", "*.py")))
    return [os.path.relpath(p, ROOT) for p in progs if not os.path.basename(p).startswith(SKIP)]


def timed(cmd):
    t0 = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=3600, cwd=ROOT)
    return time.perf_counter() - t0, p


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=1, help="plain triage runs per program (median)")
    ap.add_argument("--jobs", type=int, help="passed to fix --jobs")
    ap.add_argument("--json", metavar="FILE")
    ap.add_argument("programs", nargs="*")
    a = ap.parse_args()
    rows = []
    for prog in a.programs or default_programs():
        with tempfile.TemporaryDirectory() as td:
            t_tri = []
            for i in range(a.runs):
                t, p = timed([sys.executable, CLI, "triage", "--no-tlparse", "--out", os.path.join(td, f"t{i}"),
                              "--", sys.executable, prog])
                t_tri.append(t)
            cmd = [sys.executable, CLI, "fix", "--json", "--out", os.path.join(td, "fix")]
            cmd += ["--jobs", str(a.jobs)] if a.jobs else []
            t_fix, p = timed(cmd + ["--", sys.executable, prog])
            res = json.loads(p.stdout)
        tried = [x for x in res["fixes"] if x["effect"]]
        combined = bool(res["recommended"] and res["recommended"]["measured_together"]
                        and len(res["recommended"]["members"]) > 1)
        needed = 1 + len(tried) + combined
        tri = statistics.median(t_tri)
        row = {"program": prog, "findings": res["findings"], "verified": res["findings_with_verified_fix"],
               "candidates": len(res["fixes"]), "tried": len(tried),
               "verified_fixes": [x["id"] for x in res["fixes"] if x["label"] == "verified (measured)"],
               "other_results": {x["id"]: x["label"] for x in tried if x["label"] != "verified (measured)"},
               "triage_s": round(tri, 1), "runs_needed": needed, "fix_s": round(t_fix, 1),
               "ratio": round(t_fix / (needed * tri), 2), "jobs": res["jobs"]}
        rows.append(row)
        print(json.dumps(row), flush=True)
    n_f = sum(r["findings"] for r in rows)
    n_v = sum(r["verified"] for r in rows)
    multi = [r["ratio"] for r in rows if r["runs_needed"] > 2]
    summary = {"programs": len(rows), "findings": n_f, "verified": n_v,
               "share_verified": round(n_v / n_f, 3) if n_f else None,
               "median_ratio_all": statistics.median([r["ratio"] for r in rows]) if rows else None,
               "median_ratio_3plus_runs": statistics.median(multi) if multi else None,
               "cpu_count": os.cpu_count()}
    print(json.dumps(summary))
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"rows": rows, "summary": summary}, f, indent=1)


if __name__ == "__main__":
    main()
