"""Benchmark: `compile_debug.py minify` vs driving PyTorch's minifier by hand (env vars
TORCHDYNAMO_REPRO_AFTER=aot TORCHDYNAMO_REPRO_LEVEL=2|4 + `minifier_launcher.py minify --no-isolate`,
then `python repro.py` to check it), interleaved. Reports final node count and median wall time.
With --from-triage, a triage run of the program is made first (not timed: the agent already has it)
and ours is `minify --from RUN_DIR`.
Usage: python3 benchmarks/minify_bench.py [--reps 3] [--from-triage] [--ours-args '--jobs 1'] [prog ...]"""
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
sys.path.insert(0, os.path.join(ROOT, "scripts"))
from cdlib.decide.minify_graph import graph_stats  # noqa: E402

PROGS = {"bug_relu_compile_error.py": 2, "bug_relu_accuracy.py": 4}


OURS_ARGS = []
FROM_TRIAGE = []


def ours(prog, tmp):
    out = tempfile.mkdtemp(dir=tmp)
    os.rmdir(out)
    target = ["--", sys.executable, prog]
    if FROM_TRIAGE:
        tri = out + "-triage"
        subprocess.run([sys.executable, CLI, "triage", "--no-tlparse", "--out", tri, *target], capture_output=True)
        target = ["--from", tri]
    t0 = time.monotonic()
    p = subprocess.run([sys.executable, CLI, "minify", "--json", "--out", out, *OURS_ARGS, *target],
                       capture_output=True, text=True)
    wall = time.monotonic() - t0
    d = json.loads(p.stdout)
    return wall, d.get("nodes_after"), d.get("verified")


def by_hand(prog, level, tmp):
    d = tempfile.mkdtemp(dir=tmp)
    env = dict(os.environ, TORCHDYNAMO_REPRO_AFTER="aot", TORCHDYNAMO_REPRO_LEVEL=str(level), TORCH_COMPILE_DEBUG_DIR=d,
               # as ours: a graph from the FX graph / AOTAutograd cache is never checked nor dumped
               TORCHINDUCTOR_FX_GRAPH_CACHE="0", TORCHINDUCTOR_AUTOGRAD_CACHE="0")
    t0 = time.monotonic()
    p = subprocess.run([sys.executable, prog], capture_output=True, text=True, env=env, cwd=d)
    m = re.search(r"Writing minified repro to:\s*\n(?:\S+ \S+ \d+ \S+\] (?:\[[^\]]*\] )?)?(\S+minifier_launcher\.py)", p.stderr)
    launcher = m.group(1)
    subprocess.run([sys.executable, launcher, "minify", "--no-isolate"], capture_output=True, text=True, cwd=d)
    t_minify = time.monotonic() - t0
    r = subprocess.run([sys.executable, os.path.join(d, "repro.py")], capture_output=True, text=True, cwd=d)
    wall = time.monotonic() - t0
    st = graph_stats(os.path.join(d, "repro.py"))
    return wall, st and st["nodes"], r.returncode != 0, t_minify


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--ours-args", default="", help="extra minify options, e.g. '--kind accuracy'")
    ap.add_argument("--from-triage", action="store_true", help="ours = minify --from a triage run made first")
    ap.add_argument("progs", nargs="*", default=list(PROGS))
    a = ap.parse_args()
    OURS_ARGS[:] = a.ours_args.split()
    FROM_TRIAGE[:] = [True] if a.from_triage else []
    tmp = tempfile.mkdtemp(prefix="minify-bench-")
    rows = []
    for name in a.progs:
        prog = os.path.join(ROOT, "tests", "programs", name)
        o, h = [], []
        for i in range(a.reps):
            if i % 2 == 0:   # alternate the order: load on a shared machine drifts
                o.append(ours(prog, tmp))
                h.append(by_hand(prog, PROGS[name], tmp))
            else:
                h.append(by_hand(prog, PROGS[name], tmp))
                o.append(ours(prog, tmp))
            print(f"{name} rep {i}: ours {o[-1][0]:.1f}s nodes {o[-1][1]} verified {o[-1][2]} | by hand "
                  f"{h[-1][0]:.1f}s ({h[-1][3]:.1f}s without the repro check) nodes {h[-1][1]}", file=sys.stderr, flush=True)
        mo, mh, mh0 = (statistics.median(x[0] for x in o), statistics.median(x[0] for x in h),
                       statistics.median(x[3] for x in h))
        paired = sorted(x[0] / y[0] for x, y in zip(o, h))
        rows.append({"program": name, "nodes_ours": o[0][1], "nodes_by_hand": h[0][1],
                     "paired_ratios": [round(x, 3) for x in paired], "median_paired_ratio": round(statistics.median(paired), 3),
                     "verified_ours": all(x[2] for x in o), "median_s_ours": round(mo, 1),
                     "median_s_by_hand": round(mh, 1), "median_s_by_hand_no_check": round(mh0, 1),
                     "ratio": round(mo / mh, 3), "ratio_vs_no_check": round(mo / mh0, 3),
                     "all_s_ours": [round(x[0], 1) for x in o], "all_s_by_hand": [round(x[0], 1) for x in h]})
    shutil.rmtree(tmp, ignore_errors=True)
    print(json.dumps(rows, indent=1))
    print("| program | nodes ours / by hand | median s ours / by hand (+check) / by hand (no check) | ratio | median paired ratio | ratio vs no check |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['program']} | {r['nodes_ours']} / {r['nodes_by_hand']} | {r['median_s_ours']} / "
              f"{r['median_s_by_hand']} / {r['median_s_by_hand_no_check']} | {r['ratio']} | {r['median_paired_ratio']} | "
              f"{r['ratio_vs_no_check']} |")


if __name__ == "__main__":
    main()
