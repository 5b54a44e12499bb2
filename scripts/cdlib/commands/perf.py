"""`perf <file.py:factory>` and `perf -- <command...>`: why is my compiled model slow.

Model target: eager vs torch.compile modes, each in its own worker process (warm-up, sync, medians,
compile time apart, peak memory), then attribution from the default mode's trace: graph breaks,
frames skipped to eager, recompiles, cudagraph skips, fallback kernels -> top fixes ranked by
expected gain. Script target: one traced run; compile time, recompiles and breaks as a share of
wall time (optionally against an eager run: torch.compiler.set_stance("force_eager") injected at start-up)."""
import json
import os
import shlex

from ..read import inductor_info as II
from ..show import output
from .. import cmdline
from ..run import proc, rundir, target
from ..read import trace as tracemod
from ..errors import CliError

HELP = "why is my compiled model slow: eager vs compile modes, compile time, breaks/recompiles cost"
ORDER = 42
TAKES_TARGET = True
DESCRIPTION = """Model target (file.py:factory returning (model, args[, kwargs])): time eager and
torch.compile modes, each in a fresh worker process: first call (compile) apart, warm-up, then
median over --repeat rounds, synchronizing CUDA when the model is on a GPU; peak memory per mode.
Then attribute: graph breaks (and the share of step time spent outside compiled regions), frames
skipped to eager, recompiles, cudagraph skips and fallback kernels, with fixes ranked by expected gain.

Script target (after --): run once traced; compile time, recompiles and graph breaks as a share of
wall time; --eager also runs it eagerly (force_eager stance injected at start-up) to compare wall time."""
EPILOG = """examples:
  compile_debug.py perf model.py:make_model
  compile_debug.py perf model.py:make_model --train --modes eager,default
  compile_debug.py perf -- python train.py --steps 50
  compile_debug.py perf --eager -- python infer.py"""

MODES = ["eager", "default", "reduce-overhead", "max-autotune-no-cudagraphs", "max-autotune"]
CPU_DEFAULT = ["eager", "default"]
GPU_DEFAULT = ["eager", "default", "reduce-overhead", "max-autotune-no-cudagraphs"]


def add_arguments(p):
    p.add_argument("model", nargs="?", metavar="FILE.py:FACTORY", help="model target (or a command after --)")
    p.add_argument("--modes", metavar="M,M", help="comma list from " + ",".join(MODES) +
                   f" (default: {','.join(CPU_DEFAULT)} on CPU, {','.join(GPU_DEFAULT)} on CUDA; eager is always run)")
    p.add_argument("--train", action="store_true", help="time forward+backward (loss = sum of float outputs)")
    p.add_argument("--repeat", type=int, default=7, metavar="N", help="timed rounds per mode; medians reported (default 7)")
    p.add_argument("--warmup", type=int, default=3, metavar="N", help="warm-up calls after the first (default 3)")
    p.add_argument("--round-ms", type=float, default=100.0, metavar="MS", help="target duration of one timed round (default 100)")
    p.add_argument("--threads", type=int, default=0, metavar="N",
                   help="torch.set_num_threads(N) in every worker (default: torch's own choice)")
    p.add_argument("--eager", action="store_true", help="script target: also run it eagerly (force_eager stance; works with fullgraph=True)")
    p.add_argument("--timeout", type=float, default=900, metavar="SEC", help="limit per worker / target run (default 900)")


def run(args):
    if args.timeout <= 0:
        raise CliError("--timeout must be > 0")
    if args.threads < 0:
        raise CliError("--threads must be >= 0")
    if args.repeat < 1 or args.warmup < 0 or args.round_ms <= 0:
        raise CliError("--repeat must be >= 1, --warmup >= 0, --round-ms > 0")
    model = args.model
    if model and not target.is_model_spec(model) and not args.target:
        # `perf train.py --x` without --: treat as a script command
        args.target = [model]
        model = None
    if model and args.target:
        raise CliError("give either a model target FILE.py:FACTORY or a command after `--`, not both")
    if not model and not args.target:
        raise CliError("no target: give FILE.py:FACTORY or a command after `--`, e.g. `-- python train.py`")
    modes = None
    if args.modes:
        modes = [m.strip() for m in args.modes.split(",") if m.strip()]
        bad = [m for m in modes if m not in MODES]
        if bad:
            raise CliError(f"--modes: unknown mode {bad[0]!r} (choose from {', '.join(MODES)})")
    if model:
        target.parse_spec(model)
        return _run_model(args, model, modes)
    if args.modes or args.train:
        raise CliError("--modes/--train apply to a model target FILE.py:FACTORY, not to a script command")
    return _run_script(args)


# ---- model target ---------------------------------------------------------------------------

def _worker(args, run_dir, spec, mode, profile=False):
    tag = f"perf_{mode}"
    res_path = os.path.join(run_dir, f"{tag}.json")
    tdir = os.path.join(run_dir, f"trace_{mode}")
    wargs = ["--spec", spec, "--mode", mode, "--warmup", str(args.warmup), "--repeat", str(args.repeat),
             "--round-ms", str(args.round_ms), "--result", res_path]
    if args.train:
        wargs.append("--train")
    if args.threads:
        wargs += ["--threads", str(args.threads)]
    if profile:
        wargs.append("--profile")
    env = {"PYTHONUNBUFFERED": "1"}
    if mode != "eager":
        env.update({"TORCH_TRACE": tdir, "INDUCTOR_PROVENANCE": "1"})
    proc.progress(f"timing {mode} ...")
    pr = proc.run_worker("perf", wargs, run_dir=run_dir, timeout=args.timeout, env_add=env, tag=tag)
    r = None
    if os.path.exists(res_path):
        with open(res_path) as f:
            r = json.load(f)
    if r is None:
        why = "timed out" if pr.timed_out else (f"killed by {pr.signal}" if pr.signal else f"exit {pr.returncode}")
        tail = [l for l in pr.read_stderr(limit=4000).splitlines() if l.strip()]
        r = {"mode": mode, "ok": False, "error": f"worker {why}" + (f": {tail[-1][:300]}" if tail else "")}
    r["trace_dir"] = tdir if mode != "eager" and os.path.isdir(tdir) else None
    r["stderr"] = pr.stderr_path
    if r.get("ok"):
        proc.progress(f"{mode}: median {r['median_ms']:.3f} ms, first call {r['first_call_s']:.2f} s")
    else:
        proc.progress(f"{mode}: failed ({r.get('error')})")
    return r


def _trace_facts(tdir):
    """Compile time, graphs, breaks, recompiles, cudagraph skips and fallbacks from a mode's trace."""
    facts = {"compile_s": None, "graphs": 0, "recompiles": 0, "recompile_s": 0.0, "graph_breaks": [],
             "cudagraph_skips": [], "fallbacks": [], "kernels": 0, "frames": []}
    if not tdir or not tracemod.trace_files(tdir):
        return facts
    tr = tracemod.parse(tdir)
    total = 0.0
    for e in tr.of("compilation_metrics"):
        d = e.data if isinstance(e.data, dict) else {}
        t = d.get("entire_frame_compile_time_s") or 0.0
        total += t
        cid = e.compile_id or d.get("compile_id") or ""
        if d.get("graph_op_count"):
            facts["graphs"] += 1
        if cid and not cid.endswith("/0"):
            facts["recompiles"] += 1
            facts["recompile_s"] += t
        if d.get("cudagraph_skip_reason"):
            facts["cudagraph_skips"].append({"compile_id": cid, "reason": d["cudagraph_skip_reason"]})
        facts["frames"].append({"compile_id": cid, "function": d.get("co_name"), "compile_s": round(t, 3),
                                "recompile_reason": d.get("recompile_reason"), "fail_type": d.get("fail_type")})
    for e in tr.of("bwd_compilation_metrics"):
        d = e.data if isinstance(e.data, dict) else {}
        if d.get("cudagraph_skip_reason"):
            facts["cudagraph_skips"].append({"compile_id": e.compile_id, "reason": d["cudagraph_skip_reason"]})
    facts["compile_s"] = round(total, 3)
    facts["recompile_s"] = round(facts["recompile_s"], 3)
    try:
        from ..decide import analyze
        rep = analyze.analyze(tdir)
        for b in rep.graph_breaks:
            fx = b.fix if isinstance(b.fix, dict) else {}
            facts["graph_breaks"].append({"site": b.location.short() if b.location else b.site, "gb_id": b.gb_id,
                                          "type": b.gb_type, "count": b.count, "category": b.category,
                                          "fix": fx.get("fix"), "frame_skipped": bool(fx.get("frame_skipped"))})
        facts["recompile_kinds"] = {}
        for f in rep.recompiles:
            for k, v in (f.kinds or {}).items():
                facts["recompile_kinds"][k] = facts["recompile_kinds"].get(k, 0) + v
    except Exception as ex:  # the triage analyzer is optional here
        facts["analyze_error"] = f"{type(ex).__name__}: {ex}"[:200]
    for g in II.compiled_graphs(tr):
        ks = II.analyze_graph(g)
        facts["kernels"] += len(ks)
        for k in ks:
            if k["kind"] == "fallback":
                facts["fallbacks"].append({"op": k["name"], "graph": f"{g['compile_id']}-{g.get('kind')}",
                                           "user_lines": [f"{os.path.basename(l['file'])}:{l['line']}" for l in k["user_lines"][:3]]})
    return facts


def _run_model(args, spec, modes):
    run_dir = rundir.make(args.out, "perf")
    spec_abs = "{}:{}".format(*target.parse_spec(spec))
    results = {}
    results["eager"] = _worker(args, run_dir, spec_abs, "eager")
    if not results["eager"].get("ok"):
        result = {"command": "perf", "run_dir": run_dir, "status": "error", "target": spec,
                  "error": results["eager"].get("error"), "modes": results}
        output.emit(args, result, f"# perf: the model fails in eager\n{cmdline.clip(results['eager'].get('error'), 400)}\n"
                    f"worker stderr: {results['eager'].get('stderr')}\n\nNext: fix the factory or the model "
                    f"(it must run eagerly: `{spec}` returning (model, args[, kwargs])), then rerun "
                    f"`{cmdline.cli_command('perf', spec)}`")
        return 0
    device = results["eager"].get("device", "cpu")
    cuda = device.startswith("cuda")
    if modes is None:
        modes = GPU_DEFAULT if cuda else CPU_DEFAULT
    for m in modes:
        if m == "eager":
            continue
        results[m] = _worker(args, run_dir, spec_abs, m, profile=(m == "default"))
    facts = {m: _trace_facts(r.get("trace_dir")) for m, r in results.items() if m != "eager"}
    for m, r in results.items():
        if m == "eager":
            continue
        known = {s["reason"] for s in facts[m]["cudagraph_skips"]}
        for msg in r.get("cudagraph_skip_messages") or []:
            if msg not in known:
                facts[m]["cudagraph_skips"].append({"compile_id": None, "reason": msg, "mode": m})
                known.add(msg)
    eager_ms = results["eager"]["median_ms"]
    table = []
    for m, r in results.items():
        row = {"mode": m, "ok": r.get("ok", False)}
        if r.get("ok"):
            ecpu = results["eager"].get("cpu_median_ms")
            row.update({"median_ms": r["median_ms"], "min_ms": r["min_ms"], "rounds_ms": r.get("rounds_ms"),
                        "cpu_median_ms": r.get("cpu_median_ms"),
                        "speedup": round(eager_ms / r["median_ms"], 3) if r["median_ms"] else None,
                        "speedup_min": round(results["eager"]["min_ms"] / r["min_ms"], 3) if r["min_ms"] else None,
                        "speedup_cpu": round(ecpu / r["cpu_median_ms"], 3) if ecpu and r.get("cpu_median_ms") else None,
                        "first_call_s": r["first_call_s"], "peak_rss_mb": r.get("peak_rss_mb"),
                        "peak_cuda_mb": r.get("peak_cuda_mb"),
                        "compiled_during_timing": r.get("compiled_during_timing", 0)})
            if m != "eager":
                f = facts[m]
                row["compile_s"] = f["compile_s"]
                row["graphs"] = f["graphs"]
                saved = eager_ms - r["median_ms"]
                row["break_even_calls"] = (int(round((f["compile_s"] or 0) / (saved / 1000.0))) if saved > 0 else None)
        else:
            row["error"] = r.get("error")
        table.append(row)
    fixes = _fixes(results, facts, eager_ms, cuda, args)
    d = facts.get("default") or {}
    prof = (results.get("default") or {}).get("profile")
    attribution = {
        "graphs": d.get("graphs"), "graph_breaks": d.get("graph_breaks"),
        "frames_skipped_in_loop": ((results.get("default") or {}).get("counters") or {}).get("frames_skipped_in_loop")
        or sum(1 for b in d.get("graph_breaks") or [] if b.get("frame_skipped")),
        "recompiles": d.get("recompiles"), "recompile_s": d.get("recompile_s"),
        "recompile_kinds": d.get("recompile_kinds"),
        "outside_compiled_share": prof.get("outside_share") if prof else None,
        "cudagraph_skips": [s for m in facts for s in facts[m]["cudagraph_skips"]],
        "fallbacks": d.get("fallbacks"), "kernels": d.get("kernels"),
    }
    ok_modes = [r for r in table if r["ok"] and r["mode"] != "eager"]
    best = min(ok_modes, key=lambda r: r["median_ms"]) if ok_modes else None
    result = {"command": "perf", "run_dir": run_dir, "status": "ok", "target": spec, "kind": "model",
              "train": args.train, "device": device, "gpu": results["eager"].get("gpu"),
              "torch_version": results["eager"].get("torch_version"), "threads": results["eager"].get("threads"),
              "modes": table, "best": best["mode"] if best else None, "attribution": attribution, "fixes": fixes,
              "artifacts": {m: {"result": os.path.join(run_dir, f"perf_{m}.json"), "trace_dir": r.get("trace_dir")}
                            for m, r in results.items()}}
    output.emit(args, result, _model_md(result))
    return 0


def _fixes(results, facts, eager_ms, cuda, args):
    """Concrete fixes, ranked by expected gain in ms per call (a rough estimate, said so)."""
    out = []
    d = facts.get("default") or {}
    rd = results.get("default") or {}
    cnt = dict(rd.get("counters") or {})
    if not cnt.get("frames_skipped_in_loop") and any(b.get("frame_skipped") for b in d.get("graph_breaks") or []):
        cnt["frames_skipped_in_loop"] = sum(1 for b in d["graph_breaks"] if b.get("frame_skipped"))
    default_ms = rd.get("median_ms") if rd.get("ok") else None
    prof = rd.get("profile") or {}
    def _sites(bs):
        return ", ".join(f"{b['site']}" + (f" ({b['gb_id']})" if b.get("gb_id") else "") for b in bs[:3])

    def _recipe(bs):
        r = next((b.get("fix") for b in bs if b.get("fix")), None)
        return f" — {' '.join(r.split())}" if r else ""

    if cnt.get("frames_skipped_in_loop"):
        out.append({"fix": f"remove the graph break at {_sites(d.get('graph_breaks') or [])}: Dynamo skipped the whole "
                           "function (a break inside a loop does that), so it runs eager"
                           + _recipe(d.get("graph_breaks") or []),
                    "gain_ms": None, "rank": 0,
                    "why": "frame skipped ('graph break in loop'): torch.compile gives no speedup at all here",
                    "estimate": "the whole compile speedup (compare a fusible model: several x on pointwise chains)"})
    elif d.get("graph_breaks") and default_ms:
        share = prof.get("outside_share")
        gain = default_ms * share if share is not None else None
        out.append({"fix": f"remove the graph break(s) at {_sites(d['graph_breaks'])}{_recipe(d['graph_breaks'])}",
                    "gain_ms": None if gain is None else round(gain, 3),
                    "why": f"{len(d['graph_breaks'])} break site(s), {d.get('graphs')} graphs; "
                           + (f"{share:.0%} of the step runs outside compiled regions (eager glue, guards, Python)"
                              if share is not None else "time outside compiled regions not measured"),
                    "estimate": "upper bound: the time outside compiled regions"})
    if d.get("recompiles"):
        out.append({"fix": "stop the recompiles (mark the changing dim dynamic with torch._dynamo.mark_dynamic, "
                           "or keep the guarded value constant); see the triage recompile kinds",
                    "gain_ms": None, "why": f"{d['recompiles']} recompile(s), {d.get('recompile_s', 0):.2f} s compiling "
                                            f"({', '.join(f'{k}×{v}' for k, v in (d.get('recompile_kinds') or {}).items()) or 'kinds n/a'})",
                    "estimate": f"saves {d.get('recompile_s', 0):.2f} s of compile time per process"})
    skips = [s for m in facts for s in facts[m]["cudagraph_skips"]]
    if cuda and skips:
        out.append({"fix": "make the graph cudagraph-safe: " + "; ".join(sorted({s["reason"] for s in skips}))[:300],
                    "gain_ms": None, "why": f"{len(skips)} cudagraph skip(s); reduce-overhead ran without CUDA graphs",
                    "estimate": "launch overhead per kernel (~5-10 us each) x kernels per step"
                                + (f" ({d.get('kernels')} kernels)" if d.get("kernels") else "")})
    if d.get("fallbacks") and default_ms:
        ops = sorted({f["op"] for f in d["fallbacks"]})
        out.append({"fix": "replace or accept the eager fallback kernel(s): " + ", ".join(ops[:5]),
                    "gain_ms": None, "why": f"{len(d['fallbacks'])} fallback launch(es) break fusion",
                    "estimate": "measure with `inductor --perf-hints`"})
    for m, r in results.items():
        if m != "eager" and not r.get("ok"):
            out.append({"fix": f"torch.compile mode {m} fails: {r.get('error')} - fix that first (worker log: "
                               f"{r.get('stderr')}; as a script, `triage` classifies the error)",
                        "gain_ms": None, "rank": 0, "why": "compile/run failure", "estimate": "n/a"})
    ok = {m: r for m, r in results.items() if r.get("ok")}
    if default_ms and len(ok) > 2:
        best_m = min((m for m in ok if m != "eager"), key=lambda m: ok[m]["median_ms"])
        if best_m != "default" and ok[best_m]["median_ms"] < default_ms * 0.95:
            out.append({"fix": f"use torch.compile(mode=\"{best_m}\")",
                        "gain_ms": round(default_ms - ok[best_m]["median_ms"], 3),
                        "why": f"{best_m} measured {ok[best_m]['median_ms']:.3f} ms vs default {default_ms:.3f} ms",
                        "estimate": "measured"})
    if default_ms and default_ms > eager_ms * 1.05 and not d.get("graph_breaks") and not cnt.get("frames_skipped_in_loop"):
        out.append({"fix": "compiled is slower than eager with one graph: look at the kernels "
                           "(fallbacks, unfused reductions, layout copies) with `inductor --perf-hints`",
                    "gain_ms": round(default_ms - eager_ms, 3), "why": f"default {default_ms:.3f} ms vs eager {eager_ms:.3f} ms",
                    "estimate": "at least back to eager"})
    if not cuda and "reduce-overhead" in results and results["reduce-overhead"].get("ok"):
        out.append({"fix": "reduce-overhead does nothing extra on CPU (CUDA graphs are CUDA-only)", "gain_ms": 0.0,
                    "why": "CPU model", "estimate": "none"})
    out.sort(key=lambda f: (f.get("rank", 1), -(f["gain_ms"] if f["gain_ms"] is not None else -1)))
    for f in out:
        f.pop("rank", None)
    return out


def _fmt_ms(x):
    if x is None:
        return "-"
    return f"{x:.3f}" if x < 10 else f"{x:.1f}"


def _model_md(res):
    L = [f"# perf: {res['target']} on {res['device']}" + (f" ({res['gpu']})" if res.get("gpu") else "")
         + (" — training (fwd+bwd)" if res["train"] else " — inference (no_grad)")]
    L.append(f"torch {res['torch_version']} · {res['threads']} CPU threads · run dir {res['run_dir']}")
    rows = []
    for r in res["modes"]:
        if not r["ok"]:
            rows.append([r["mode"], "failed", "", "", "", "", "", cmdline.clip(r.get("error"), 80)])
            continue
        mem = f"{r['peak_cuda_mb']} MiB cuda" if r.get("peak_cuda_mb") is not None else f"{r['peak_rss_mb']} MiB rss"
        note = ""
        if r.get("compiled_during_timing"):
            note = f"compiled {r['compiled_during_timing']} graph(s) while timing"
        if r.get("break_even_calls") is not None:
            note = (note + "; " if note else "") + f"pays off after ~{r['break_even_calls']} calls"
        sp = f"{r['speedup']:.2f}x" if r.get("speedup") else ""
        if r.get("speedup_cpu") and r["mode"] != "eager":
            sp += f" (cpu {r['speedup_cpu']:.2f}x)"
        rows.append([r["mode"], _fmt_ms(r["median_ms"]), _fmt_ms(r.get("cpu_median_ms")), sp,
                     f"{r.get('compile_s', 0) or 0:.2f}" if r["mode"] != "eager" else "-",
                     str(r.get("graphs", "-")) if r["mode"] != "eager" else "-", mem, note])
    L.append(output.table(["mode", "median ms", "cpu ms", "vs eager", "compile s", "graphs", "peak mem", "note"], rows))
    a = res["attribution"]
    L.append("\n## attribution (default mode)")
    facts = []
    if a.get("frames_skipped_in_loop"):
        facts.append(f"**frame skipped to eager**: a graph break inside a loop made Dynamo run the whole function eagerly "
                     f"({a['frames_skipped_in_loop']}×)")
    gbs = a.get("graph_breaks") or []
    if gbs:
        facts.append(f"graph breaks: {len(gbs)} site(s) → {a.get('graphs')} graphs: " +
                     "; ".join(f"{b['site']} {b.get('gb_id') or ''} {cmdline.clip(b.get('type'), 60)}" for b in gbs[:4]))
    if a.get("outside_compiled_share") is not None:
        facts.append(f"time outside compiled regions: {a['outside_compiled_share']:.0%} of a step (profiled)")
    if a.get("recompiles"):
        facts.append(f"recompiles: {a['recompiles']} ({a.get('recompile_s', 0):.2f} s)")
    if a.get("cudagraph_skips"):
        facts.append("cudagraph skips: " + "; ".join(f"{s['compile_id'] or 'runtime'}: {cmdline.clip(s['reason'], 120)}" for s in a["cudagraph_skips"][:4]))
    if a.get("fallbacks"):
        facts.append("fallback kernels: " + ", ".join(sorted({f['op'] for f in a['fallbacks']}))[:200])
    if a.get("kernels"):
        facts.append(f"kernel launches per step (default): {a['kernels']}")
    L.extend(f"- {f}" for f in facts) if facts else L.append("- clean: one graph per call, no recompiles, no fallbacks")
    if res["fixes"]:
        L.append("\n## top fixes (ranked by expected gain)")
        for i, f in enumerate(res["fixes"][:6], 1):
            g = f"~{f['gain_ms']:.3f} ms/call" if f.get("gain_ms") else f.get("estimate", "")
            L.append(f"{i}. {f['fix']} — {g} ({f['why']})")
    L.append("\nmedian ms: wall time per call, median of rounds; cpu ms: process CPU time per call (all threads; "
             "robust to other load on a CPU box). Each mode ran in its own process.")
    tdir = res["artifacts"].get("default", {}).get("trace_dir")
    nxt = None
    if tdir:
        nxt = f"the kernels behind the default mode (no rerun): `{cmdline.cli_command('inductor', '--from', os.path.dirname(tdir))}`"
    if a.get("graph_breaks") or a.get("frames_skipped_in_loop") or a.get("recompiles"):
        L.append("Graph-break and recompile recipes: skill trace-dynamo; the default mode's trace is in " + str(tdir))
    if nxt:
        L.append(f"Next: {nxt}")
    return "\n".join(L)


# ---- script target --------------------------------------------------------------------------

def _run_script(args):
    argv = proc.resolve_target(args.target)
    run_dir = rundir.make(args.out, "perf")
    from ..decide import analyze
    tstr = analyze.target_string(argv)
    proc.progress(f"running {tstr} traced")
    rep = analyze.run_and_analyze(argv, run_dir, timeout=args.timeout, tlparse=False)
    eager = None
    if args.eager:
        proc.progress("running it again eagerly (force_eager stance)")
        # not TORCH_COMPILE_DISABLE=1: on torch 2.14 it makes fullgraph=True functions raise
        er = proc.run(argv, env_add={**proc.startup_env(run_dir, [{"stance": "force_eager"}], name="eager_run"),
                                     "PYTHONUNBUFFERED": "1"}, timeout=args.timeout,
                      stdout_path=os.path.join(run_dir, "eager.stdout"), stderr_path=os.path.join(run_dir, "eager.stderr"))
        eager = {"wall_s": er.duration_s, "exit": er.returncode, "timed_out": er.timed_out}
    st = rep.stats or {}
    wall = rep.duration_s or st.get("wall_time_s")
    compile_s = st.get("compile_time_s") or 0.0
    tr = tracemod.parse(os.path.join(run_dir, "trace"))
    f = _trace_facts(os.path.join(run_dir, "trace"))
    recompile_s = f["recompile_s"]
    result = {
        "command": "perf", "run_dir": run_dir, "status": rep.status, "target": tstr, "kind": "script",
        "exit_code": rep.exit_code, "torch_version": rep.torch_version, "wall_s": wall,
        "compile_s": compile_s, "compile_share": round(compile_s / wall, 3) if wall else None,
        "recompile_s": recompile_s, "recompile_share": round(recompile_s / wall, 3) if wall else None,
        "graphs": st.get("graphs"), "graph_breaks": st.get("graph_breaks"),
        "graph_break_sites": [{"site": b.location.short() if b.location else b.site, "gb_id": b.gb_id,
                               "type": b.gb_type, "count": b.count} for b in rep.graph_breaks],
        "recompiles": st.get("recompiles"), "cudagraph_skips": f["cudagraph_skips"], "fallbacks": f["fallbacks"],
        "fx_graph_cache": {"hits": st.get("fx_graph_cache_hits"), "misses": st.get("fx_graph_cache_misses")},
        "eager": eager, "errors": [e.title for e in rep.errors],
        "artifacts": {"trace_dir": os.path.join(run_dir, "trace"), "stderr": os.path.join(run_dir, "target.stderr")},
    }
    del tr
    output.emit(args, result, _script_md(result))
    return 0


def _script_md(r):
    L = [f"# perf: `{r['target']}` (script, exit {r['exit_code']})"]
    L.append(f"torch {r['torch_version']} · run dir {r['run_dir']}")
    wall = r["wall_s"] or 0
    L.append(f"- wall time {wall:.2f} s; compiling {r['compile_s']:.2f} s = {(r['compile_share'] or 0):.0%} of it"
             + (f" (recompiles {r['recompile_s']:.2f} s = {(r['recompile_share'] or 0):.0%})" if r["recompile_s"] else ""))
    L.append(f"- {r['graphs']} graph(s), {r['graph_breaks']} graph break(s), {r['recompiles']} recompile(s); "
             f"FX graph cache {r['fx_graph_cache']['hits']} hit / {r['fx_graph_cache']['misses']} miss")
    for b in r["graph_break_sites"][:5]:
        L.append(f"  - break at {b['site']} {b.get('gb_id') or ''}: {cmdline.clip(b['type'], 80)} (×{b['count']})")
    if r["cudagraph_skips"]:
        L.append("- cudagraph skips: " + "; ".join(cmdline.clip(s["reason"], 100) for s in r["cudagraph_skips"][:3]))
    if r["fallbacks"]:
        L.append("- fallback kernels: " + ", ".join(sorted({f['op'] for f in r['fallbacks']}))[:200])
    if r["eager"]:
        e = r["eager"]
        L.append(f"- eager run (force_eager): {e['wall_s']:.2f} s (exit {e['exit']}) vs compiled {wall:.2f} s")
    if r["errors"]:
        L.append("- errors: " + "; ".join(r["errors"][:3]))
    L.append("\nWall time includes process start and imports. For per-call timings and mode comparison, wrap the "
             "model in a factory and run `perf FILE.py:factory`.")
    if r["graph_breaks"] or r["recompiles"]:
        L.append(f"Next: fix the breaks/recompiles: `{cmdline.cli_command('triage', '--', *shlex.split(r['target']))}`")
    else:
        L.append(f"Next: the kernels: `{cmdline.cli_command('inductor', '--', *shlex.split(r['target']))}`")
    return "\n".join(L)
