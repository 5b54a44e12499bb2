"""Benchmark: `compile_debug.py bisect` vs PyTorch's `python -m torch._inductor.compiler_bisector run`
by hand, on the same programs, interleaved (ours, by hand, by hand, ours, ...). Reports: same result?,
target runs, wall time (median), median of the per-repetition (paired) ratios.
Usage: python3 benchmarks/bisect_bench.py [--reps 3] [--ours-args '--jobs 1'] [prog ...]
GPU (H100): python3 benchmarks/bisect_bench.py --reps 3 bug_gpu_relu_accuracy.py"""
import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CLI = os.path.join(ROOT, "scripts", "compile_debug.py")
PROGS = {"bug_relu_accuracy.py": [], "bug_post_grad_pass.py": []}
OURS_ARGS = []


def ours(prog, extra, tmp):
    out = tempfile.mkdtemp(dir=tmp)
    os.rmdir(out)
    t0 = time.monotonic()
    p = subprocess.run([sys.executable, CLI, "bisect", "--json", "--out", out, *extra, "--", sys.executable, prog],
                       capture_output=True, text=True)
    wall = time.monotonic() - t0
    d = json.loads(p.stdout)
    r = d.get("result") or {}
    print(f"  ours: {d.get('target_runs')} runs started, {d.get('runs_on_path')} on the path, "
          f"jobs {d.get('jobs')}, {wall:.1f}s", file=sys.stderr, flush=True)
    return wall, d["target_runs"], (r.get("backend"), r.get("subsystem"), r.get("bisect_number"), r.get("debug_info"))


def by_hand(prog, tmp):
    cache = tempfile.mkdtemp(dir=tmp)
    env = dict(os.environ, TORCHINDUCTOR_CACHE_DIR=cache)
    t0 = time.monotonic()
    p = subprocess.run([sys.executable, "-m", "torch._inductor.compiler_bisector", "run", sys.executable, prog],
                       capture_output=True, text=True, env=env)
    wall = time.monotonic() - t0
    runs = len(re.findall(r"^(ok|MISMATCH)\b", p.stdout + "\n" + p.stderr, re.M))
    m = re.search(r"BisectionResult\(backend='([^']*)', subsystem=([^,]*), bisect_number=([^,]*), debug_info=(.*)\)",
                  p.stdout)
    res = None
    if m:
        res = (m.group(1), eval(m.group(2)), eval(m.group(3)), eval(m.group(4)))
    shutil.rmtree(cache, ignore_errors=True)
    return wall, runs, res


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--ours-args", default="", help="extra bisect options, e.g. '--jobs 1'")
    ap.add_argument("progs", nargs="*", default=list(PROGS))
    a = ap.parse_args()
    OURS_ARGS[:] = a.ours_args.split()
    tmp = tempfile.mkdtemp(prefix="bisect-bench-")
    rows = []
    for name in a.progs:
        prog = os.path.join(ROOT, "tests", "programs", name)
        o, h = [], []
        for i in range(a.reps):
            if i % 2 == 0:   # alternate the order (ours, by hand | by hand, ours): load on a shared machine drifts
                o.append(ours(prog, PROGS.get(name, []) + OURS_ARGS, tmp))
                h.append(by_hand(prog, tmp))
            else:
                h.append(by_hand(prog, tmp))
                o.append(ours(prog, PROGS.get(name, []) + OURS_ARGS, tmp))
            print(f"{name} rep {i}: ours {o[-1][0]:.1f}s {o[-1][1]} runs {o[-1][2]} | by hand {h[-1][0]:.1f}s "
                  f"{h[-1][1]} runs {h[-1][2]}", file=sys.stderr, flush=True)
        mo, mh = statistics.median(x[0] for x in o), statistics.median(x[0] for x in h)
        paired = sorted(x[0] / y[0] for x, y in zip(o, h))
        rows.append({"program": name, "same_result": all(x[2] == y[2] for x, y in zip(o, h)),
                     "paired_ratios": [round(x, 3) for x in paired],
                     "median_paired_ratio": round(statistics.median(paired), 3),
                     "result": o[0][2], "runs_ours": o[0][1], "runs_by_hand": h[0][1],
                     "median_s_ours": round(mo, 1), "median_s_by_hand": round(mh, 1), "ratio": round(mo / mh, 3),
                     "all_s_ours": [round(x[0], 1) for x in o], "all_s_by_hand": [round(x[0], 1) for x in h]})
    shutil.rmtree(tmp, ignore_errors=True)
    print(json.dumps(rows, indent=1))
    print("| program | result | same | runs ours / by hand | median s ours / by hand | ratio of medians | median paired ratio |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['program']} | {r['result']} | {r['same_result']} | {r['runs_ours']} / {r['runs_by_hand']} | "
              f"{r['median_s_ours']} / {r['median_s_by_hand']} | {r['ratio']} | {r['median_paired_ratio']} |")


if __name__ == "__main__":
    main()
