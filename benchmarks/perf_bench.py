#!/usr/bin/env python3
"""Benchmark the `perf` command on the bundled example models (tests/programs/perf_models.py).

Runs `compile_debug.py perf MODEL --json` --runs times per configuration and prints a Markdown
table: median over runs of each mode's per-call median, the spread (min-max of the run medians),
speedups (wall and CPU time), compile seconds, graphs, and the top attribution fact. Used to fill
docs/perf.md.

    python3 benchmarks/perf_bench.py [--runs 3] [--threads 1] [--configs chain,mlp,...] [--gpu]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CLI = os.path.join(ROOT, "scripts", "compile_debug.py")
MODELS = os.path.join(ROOT, "tests", "programs", "perf_models.py")

CPU_CONFIGS = {
    "chain": ["chain"],
    "mlp": ["mlp"],
    "mlp-train": ["mlp", "--train"],
    "gb_loop": ["gb_loop"],
    "gb_loop_fixed": ["gb_loop_fixed"],
    "gb_split": ["gb_split"],
}
GPU_CONFIGS = {
    "cuda_chain": ["cuda_chain"],
    "cuda_mutates_input": ["cuda_mutates_input"],
}


def run_once(cfg, extra, timeout):
    with tempfile.TemporaryDirectory(prefix="perf-bench-") as d:
        out = os.path.join(d, "run")
        cmd = [sys.executable, CLI, "perf", "--json", f"{MODELS}:{cfg[0]}", *cfg[1:], *extra, "--out", out]
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        if p.returncode != 0:
            raise SystemExit(f"failed: {' '.join(cmd)}\n{p.stderr[-2000:]}")
        return json.loads(p.stdout)


def summarize(name, runs):
    modes = [r["mode"] for r in runs[0]["modes"]]
    rows = []
    for m in modes:
        per = [next(x for x in r["modes"] if x["mode"] == m) for r in runs]
        ok = [x for x in per if x.get("ok")]
        if not ok:
            rows.append([name, m, "failed", "", "", "", "", ""])
            continue
        med = [x["median_ms"] for x in ok]
        cpu = [x.get("cpu_median_ms") for x in ok if x.get("cpu_median_ms") is not None]
        sp = [x.get("speedup") for x in ok if x.get("speedup")]
        spc = [x.get("speedup_cpu") for x in ok if x.get("speedup_cpu")]
        comp = [x.get("compile_s") for x in ok if x.get("compile_s") is not None]
        rows.append([name, m, f"{statistics.median(med):.3f} ({min(med):.3f}-{max(med):.3f})",
                     f"{statistics.median(cpu):.3f}" if cpu else "",
                     f"{statistics.median(sp):.2f}x" if m != "eager" and sp else "",
                     f"{statistics.median(spc):.2f}x" if m != "eager" and spc else "",
                     f"{statistics.median(comp):.2f}" if comp else "",
                     str(ok[0].get("graphs", "")) if m != "eager" else ""])
    a = runs[0]["attribution"]
    fact = []
    if a.get("frames_skipped_in_loop"):
        fact.append("frame skipped to eager (graph break in loop)")
    if a.get("graph_breaks"):
        fact.append(f"{len(a['graph_breaks'])} break site(s)")
    if a.get("outside_compiled_share") is not None:
        fact.append(f"{a['outside_compiled_share']:.0%} outside compiled regions")
    if a.get("cudagraph_skips"):
        fact.append("cudagraph skip: " + a["cudagraph_skips"][0]["reason"][:80])
    top = runs[0]["fixes"][0]["fix"][:90] if runs[0]["fixes"] else ""
    return rows, "; ".join(fact), top


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--threads", type=int, default=1, help="--threads for perf (0 = torch default)")
    ap.add_argument("--configs", help="comma list (default: all CPU configs, or GPU ones with --gpu)")
    ap.add_argument("--gpu", action="store_true")
    ap.add_argument("--modes", help="passed to perf --modes")
    ap.add_argument("--timeout", type=int, default=1800)
    a = ap.parse_args()
    configs = GPU_CONFIGS if a.gpu else CPU_CONFIGS
    names = a.configs.split(",") if a.configs else list(configs)
    extra = []
    if a.threads:
        extra += ["--threads", str(a.threads)]
    if a.modes:
        extra += ["--modes", a.modes]
    table = []
    notes = []
    env = None
    for n in names:
        runs = []
        for i in range(a.runs):
            sys.stderr.write(f"[perf-bench] {n} run {i + 1}/{a.runs}\n")
            runs.append(run_once(configs[n], extra, a.timeout))
            env = env or runs[-1]
        rows, fact, top = summarize(n, runs)
        table += rows
        notes.append(f"- **{n}**: {fact or 'clean'}" + (f"; top fix: {top}" if top else ""))
    print(f"torch {env['torch_version']}, device {env['device']}" + (f" ({env['gpu']})" if env.get("gpu") else "")
          + f", {env['threads']} thread(s), {a.runs} runs per config\n")
    print("| model | mode | median ms (range over runs) | cpu ms | speedup | speedup (cpu) | compile s | graphs |")
    print("|---|---|---|---|---|---|---|---|")
    for r in table:
        print("| " + " | ".join(r) + " |")
    print()
    print("\n".join(notes))


if __name__ == "__main__":
    main()
