#!/usr/bin/env python3
"""Benchmark triage (issue: foundation §5).

1. Overhead: wall time of `compile_debug.py triage -- python P` vs `python P`, same (warm) Inductor
   cache, alternating runs, median of N each. Target <= 1.10x.
2. Report size: triage's Markdown vs raw `TORCH_LOGS=graph_breaks,recompiles` output of the same
   program (characters), and whether every break site and guard failure is in both. Target <= 20%.

    python3 benchmarks/triage_overhead.py [--runs 5] [--tlparse] [programs...]
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CLI = os.path.join(ROOT, "scripts", "compile_debug.py")
DEFAULT = ["examples/toy_train.py", "tests/programs/rc_limit.py", "tests/programs/gb_item.py",
           "tests/programs/err_inductor_runtime.py"]


def timed(cmd, env=None):
    t0 = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=1200)
    return time.perf_counter() - t0, p


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--tlparse", action="store_true", help="include tlparse's HTML (off: --no-tlparse)")
    ap.add_argument("--json", metavar="FILE")
    ap.add_argument("programs", nargs="*", default=DEFAULT)
    a = ap.parse_args()
    rows = []
    for prog in a.programs:
        path = os.path.join(ROOT, prog)
        plain = [sys.executable, path]
        subprocess.run(plain, capture_output=True, timeout=1200)          # warm the cache
        t_plain, t_tri = [], []
        for _ in range(a.runs):
            t_plain.append(timed(plain)[0])
            with tempfile.TemporaryDirectory() as td:
                cmd = [sys.executable, CLI, "triage", "--out", os.path.join(td, "r")]
                cmd += [] if a.tlparse else ["--no-tlparse"]
                t, p = timed(cmd + ["--", sys.executable, path])
                t_tri.append(t)
                report = p.stdout
                rep_json = json.load(open(os.path.join(td, "r", "report.json")))
        env = dict(os.environ, TORCH_LOGS="graph_breaks,recompiles")
        raw = timed(plain, env)[1].stderr
        sites = {f"{os.path.basename(b['location']['file'])}:{b['location']['line']}" for b in rep_json["graph_breaks"]}
        raw_sites = {f"{os.path.basename(f)}:{ln}" for f, ln in re.findall(r"Graph break in user code at (\S+):(\d+)", raw)}
        guards = {g["guard"] for f in rep_json["recompiles"] for r in f["recompiles"] for g in r["failures"][:1]}
        row = {
            "program": prog, "plain_s": round(statistics.median(t_plain), 2), "triage_s": round(statistics.median(t_tri), 2),
            "ratio": round(statistics.median(t_tri) / statistics.median(t_plain), 3),
            "report_chars": len(report), "raw_log_chars": len(raw),
            "size_ratio": round(len(report) / len(raw), 3) if raw else None,
            "breaks_in_report": len(sites), "breaks_in_raw_log": len(raw_sites),
            "raw_breaks_missing_from_report": sorted(raw_sites - sites),
            "guards_missing_from_raw_log": sorted(g for g in guards if g.split(" ")[0] not in raw),
        }
        rows.append(row)
        print(json.dumps(row), flush=True)
    if a.json:
        json.dump(rows, open(a.json, "w"), indent=1)


if __name__ == "__main__":
    main()
