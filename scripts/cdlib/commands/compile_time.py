"""compile-time: where torch.compile's time goes (per frame, per phase), what the caches did, and what
would help, measured by re-running the program with private cache dirs."""
import json
import os
import sys

from .. import EXAMPLES_DIR
from ..decide import analyze, knowledge
from ..decide import compile_time as ct
from ..run import proc, rundir
from ..errors import CliError
from ..cmdline import cli_command
from ..show.output import emit
from ..show.views_compile_time import markdown, write_chart

NAME = "compile-time"
HELP = "where compile time goes (phases, frames), cold vs warm caches, bypass reasons, what would help"
ORDER = 25
TAKES_TARGET = True
DESCRIPTION = """Run the program once with TORCH_TRACE and a private, fresh Inductor/Triton cache dir inside
the run dir (your own cache dirs are never used or changed) and report compile time per compiled frame
and per phase (Dynamo, AOTAutograd, Inductor passes/lowering/scheduling/codegen, C++/Triton compile,
autotuning), recompiles' share, and what the FX graph / AOTAutograd caches did, with PyTorch's reason
for each bypass and its fix. Measurements (each one more run of the program):
  --cold-warm  run again with the same cache dir: warm-start time and per-cache hits
  --portable   save torch.compiler cache artifacts at the end of the cold run, load them into a fresh
               process with an empty cache dir: the saving a new machine/container would get
  --regional   when the model has repeated layers: re-run with torch.compile(model) turned into
               per-layer compiles (layer.compile()), compile time compared with the whole-model compile
  --all        all three"""
EPILOG = """examples:
  compile_debug.py compile-time -- python train.py --steps 2
  compile_debug.py compile-time --all -- python train.py
  compile_debug.py compile-time --trace /path/to/TORCH_TRACE_dir"""
DEFAULT_EXAMPLE = os.path.join(EXAMPLES_DIR, "toy_train.py")


def add_arguments(p):
    p.add_argument("--timeout", type=float, default=1800, metavar="SEC",
                   help="kill each run of the program (and its process group) after SEC seconds (default 1800)")
    p.add_argument("--trace", metavar="DIR_OR_FILE", help="analyze an existing TORCH_TRACE dir/file; no run")
    p.add_argument("--cold-warm", action="store_true", help="run twice (fresh cache, then warm): compare")
    p.add_argument("--portable", action="store_true",
                   help="verify save_cache_artifacts/load_cache_artifacts across processes and measure the saving")
    p.add_argument("--regional", action="store_true", help="measure per-layer (regional) compilation when "
                   "the compiled model has repeated layers")
    p.add_argument("--all", action="store_true", help="--cold-warm --portable --regional")
    p.add_argument("--no-tlparse", action="store_true", help="skip tlparse's HTML report")


def run(args):
    if args.timeout <= 0:
        raise CliError("--timeout must be positive")
    if args.all:
        args.cold_warm = args.portable = args.regional = True
    if args.trace:
        if args.target:
            raise CliError("--trace analyzes an existing trace; do not also give a target command")
        if args.cold_warm or args.portable or args.regional:
            raise CliError("--cold-warm/--portable/--regional re-run a program; they do not combine with --trace")
        if not os.path.exists(args.trace):
            raise CliError(f"{args.trace}: no such file or directory")
        if not ct.tracemod.trace_files(args.trace):
            raise CliError(f"{args.trace}: no TORCH_TRACE *.log files there")
        run_dir = rundir.make(args.out, "compile-time")
        summary = ct.summarize(args.trace)
        res = {"command": "compile-time", "run_dir": run_dir, "status": _status(summary), "target": None,
               "torch_version": summary["torch_version"], "summary": summary, "runs": {},
               "artifacts": {"trace_dir": os.path.abspath(args.trace)}, "notes": []}
        res["suggestions"] = suggestions(summary, {}, None, None)
        _finish(args, res, [("recorded trace", summary)], args.trace, None)
        return 0
    argv = proc.resolve_target(args.target or [sys.executable, DEFAULT_EXAMPLE])
    tstr = analyze.target_string(argv)
    run_dir = rundir.make(args.out, "compile-time")
    runs, summaries, notes = {}, {}, []
    art = os.path.join(run_dir, "portable", "cache_artifacts.bin")
    steps = []
    if args.portable:
        os.makedirs(os.path.dirname(art), exist_ok=True)
        from ..run.workers import compile_time_hooks as hooks
        steps = [{"code": hooks.code("save_artifacts", art)}]
    proc.progress(f"cold run: {tstr} (fresh cache dir, timeout {args.timeout:.0f} s); artifacts in {run_dir}")
    runs["cold"], summaries["cold"] = _run(argv, run_dir, "cold", args.timeout, steps)
    cold = runs["cold"]
    if cold["exit_code"] != 0:
        notes.append(f"the program exited with {cold['exit_code']}{' (timed out)' if cold['timed_out'] else ''}; "
                     f"numbers cover what compiled before that (stderr: {cold['stderr']})")
    ok = cold["exit_code"] == 0
    if not summaries["cold"]["compiled_frames"]:
        ok = False
        notes.append("nothing was compiled (torch.compile never ran, or TORCH_COMPILE_DISABLE is set); "
                     "no further runs; `triage` tells why")
    if args.cold_warm and ok:
        proc.progress("warm run: same program, same cache dir")
        runs["warm"], summaries["warm"] = _run(argv, run_dir, "warm", args.timeout, [],
                                               cache_dir=os.path.join(run_dir, "cold", "cache"))
    if args.portable and ok:
        if os.path.exists(art):
            from ..run.workers import compile_time_hooks as hooks
            proc.progress("portable run: empty cache dir + torch.compiler.load_cache_artifacts")
            rep = os.path.join(run_dir, "portable", "loaded.json")
            runs["portable"], summaries["portable"] = _run(argv, run_dir, "portable", args.timeout,
                                                           [{"code": hooks.code("load_artifacts", art, rep)}])
            runs["portable"]["artifacts_loaded"] = _json(rep)
        runs["cold"]["artifacts_saved"] = _json(art + ".json")
        if not os.path.exists(art):
            notes.append(_nothing_saved(summaries["cold"], runs["cold"]["artifacts_saved"]))
        if "portable" in summaries:
            notes += _portable_notes(summaries)
    blocks = summaries["cold"]["repeated_blocks"]
    if args.regional and ok:
        if blocks:
            from ..run.workers import compile_time_hooks as hooks
            proc.progress(f"regional run: torch.compile(model) -> layer.compile() per repeated layer "
                          f"({blocks[0]['container']}, {blocks[0]['count']} layers)")
            rep = os.path.join(run_dir, "regional", "regional.json")
            os.makedirs(os.path.dirname(rep), exist_ok=True)
            runs["regional"], summaries["regional"] = _run(argv, run_dir, "regional", args.timeout,
                                                           [{"code": hooks.code("regional", rep)}])
            runs["regional"]["applied"] = _json(rep) or []
            if not runs["regional"]["applied"]:
                notes.append("regional run: the program never called torch.compile(module) on the model "
                             "(e.g. it uses model.compile() or compiles a function), so nothing was changed; "
                             "regional saving not measured")
        else:
            notes.append("no repeated layers seen in the compiled graphs' inputs; regional compilation not measured")
    for tag, r in runs.items():
        if r.get("hook_errors"):
            notes.append(f"{tag} run: our startup hook failed, so that measurement is not valid: {r['hook_errors'][0]}")
    summary = summaries["cold"]
    res = {"command": "compile-time", "run_dir": run_dir, "status": _status(summary), "target": tstr,
           "target_status": "ok" if ok else f"exit {cold['exit_code']}", "torch_version": summary["torch_version"],
           "summary": summary, "runs": runs, "artifacts": {"trace_dir": os.path.join(run_dir, "cold", "trace")},
           "notes": notes}
    if "warm" in summaries:
        res["cold_vs_warm"] = ct.compare(summaries["cold"], summaries["warm"])
    res["suggestions"] = suggestions(summary, summaries, runs, argv)
    from ..show.views_compile_time import RUN_LABEL
    chart_runs = [(RUN_LABEL.get(tag, tag), summaries[tag]) for tag in runs]
    _finish(args, res, chart_runs, res["artifacts"]["trace_dir"], argv)
    return 0


def _finish(args, res, chart_runs, trace_dir, argv):
    res["artifacts"]["chart"] = write_chart(res["run_dir"], chart_runs)
    if not args.no_tlparse:
        html = analyze.run_tlparse(trace_dir, os.path.join(res["run_dir"], "tlparse"))
        if html:
            res["artifacts"]["tlparse"] = html
    if argv is not None and len(res["runs"]) < 2:
        res["next"] = cli_command("compile-time", "--all", "--", *argv)
    elif argv is not None and any(g["id"] == "recompiles" for g in res["suggestions"]):
        res["next"] = cli_command("triage", "--", *argv)
    emit(args, res, markdown(res))



def _status(summary):
    if not summary["compiled_frames"]:
        return "no-compile"
    if any(r["state"] != "miss" for c in summary["caches"].values() for r in c["reasons"]):
        return "issues"
    return "ok"


def _phase_s(summary, phase):
    return next((p["seconds"] for p in summary["phases"] if p["phase"] == phase), 0.0)


def _portable_notes(summaries):
    """Say when loaded artifacts skipped Inductor but the kernels were compiled again (C++ kernels on CPU
    are not in the artifacts; Triton kernels are bundled)."""
    cold, port = summaries["cold"], summaries["portable"]
    k_cold, k_port = _phase_s(cold, "kernel_compile"), _phase_s(port, "kernel_compile")
    warm_k = _phase_s(summaries["warm"], "kernel_compile") if "warm" in summaries else None
    if k_cold and k_port > 0.5 * k_cold and (warm_k is None or k_port > 2 * warm_k):
        return [f"portable artifacts: Inductor did not lower/codegen again (cache hits), but kernel compile still "
                f"took {k_port} s (cold {k_cold} s" + (f", warm {warm_k} s" if warm_k is not None else "") +
                "): the artifacts carry the generated code, not the compiled C++ kernels (.so), so a new "
                "machine compiles those again; on GPU the Triton kernels are bundled in the artifacts"]
    return []


def _nothing_saved(summary, saved):
    """Why save_cache_artifacts left no file: the exit hook never ran, or it ran and PyTorch had nothing
    recorded (caches bypassed for every graph, or no Inductor compile)."""
    end = "; portable artifacts not measured"
    if saved is None:
        return ("save_cache_artifacts did not run at exit (the program ended through os._exit, a signal or a "
                "crash before Python's exit handlers)" + end)
    cs = summary["caches"]
    fx = cs.get("fx_graph_cache") or {}
    inductor = fx or any(p["phase"] in ("lowering", "codegen") for p in summary["phases"])
    if not inductor:
        return "save_cache_artifacts had nothing to save: nothing was compiled with Inductor" + end
    byp = [r for c in cs.values() for r in c["reasons"] if r["state"] == "bypass"]
    if byp and not fx.get("miss") and not fx.get("hit"):
        return (f"save_cache_artifacts had nothing to save: Inductor compiled {fx.get('bypass', 0)} graph(s), but "
                f"the caches were bypassed for all of them (\"{byp[0]['reason'][:120]}\"), so nothing was stored; "
                "fix the bypass (above) first" + end)
    if fx.get("disabled"):
        return ("save_cache_artifacts had nothing to save: Inductor compiled, but the FX graph cache was disabled "
                "(torch._inductor.config.fx_graph_cache / force_disable_caches)" + end)
    return "save_cache_artifacts had nothing to save although Inductor compiled; not sure why" + end


def _json(path):
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def _cache_files(cache_dir):
    """{subdir: file count} of a private cache dir (fxgraph, aotautograd, triton, ...)."""
    out = {}
    if not os.path.isdir(cache_dir):
        return out
    for sub in sorted(os.listdir(cache_dir)):
        p = os.path.join(cache_dir, sub)
        if os.path.isdir(p) and sub != "locks":
            n = sum(len(fs) for _, _, fs in os.walk(p))
            name = "kernels" if len(sub) == 2 else sub   # 2-letter hash dirs: generated code, .so files
            if n:
                out[name] = out.get(name, 0) + n
    return out


def _run(argv, run_dir, tag, timeout, steps, cache_dir=None):
    """One run of the program with TORCH_TRACE and a private cache dir. Returns (run dict, summary)."""
    d = os.path.join(run_dir, tag)
    os.makedirs(d, exist_ok=True)
    cache = cache_dir or os.path.join(d, "cache")
    trace_dir = os.path.join(d, "trace")
    env = {"TORCH_TRACE": trace_dir, "TORCHINDUCTOR_CACHE_DIR": cache, "TRITON_CACHE_DIR": os.path.join(cache, "triton"),
           "PYTHONUNBUFFERED": "1"}
    if steps:
        env.update(proc.startup_env(d, steps, name="startup"))
    before = _cache_files(cache)
    load = _load()      # before the run: the program's own compile load is not "busy"
    res = proc.run(argv, env_add=env, timeout=timeout, stdout_path=os.path.join(d, "stdout"),
                   stderr_path=os.path.join(d, "stderr"))
    summary = ct.summarize(trace_dir, wall_s=res.duration_s)
    after = _cache_files(cache)
    new = {k: v - before.get(k, 0) for k, v in after.items() if v - before.get(k, 0)}
    err = res.read_stderr(limit=4000)
    hook_err = [ln for ln in err.splitlines() if ln.startswith("[compile-debug startup]")]
    run = {"wall_s": res.duration_s, "exit_code": res.returncode, "timed_out": res.timed_out,
           "compile_s": summary["compile_time_s"], "frames": summary["compiled_frames"], "cache_dir": cache,
           "cache_files": new, "caches": {c: {k: v for k, v in x.items() if k in ("hit", "miss", "bypass")}
                                          for c, x in summary["caches"].items()},
           "stderr": res.stderr_path, "trace_dir": trace_dir, "load": load}
    if hook_err:
        run["hook_errors"] = hook_err[:3]
    proc.progress(f"{tag}: wall {res.duration_s} s, compile {summary['compile_time_s']} s")
    return run, summary


def _load():
    """1-minute load average (0 where the OS has none): a busy machine makes single-run timings noisy."""
    try:
        return round(os.getloadavg()[0], 1)
    except (AttributeError, OSError):
        return 0.0


def busy(runs):
    """(load, cores) when other work kept the machine busier than its cores before the cold run, else None."""
    cores = os.cpu_count() or 1
    load = ((runs or {}).get("cold") or {}).get("load") or 0
    return (load, cores) if load > 1.5 * cores else None


def _saving(a, b, what):
    if a is None or b is None:
        return None
    d = round(a - b, 2)
    pct = f" ({round(100 * d / a)}%)" if a else ""
    return f"measured: {what} {a} s -> {b} s, saves {d} s{pct}" if d > 0 else \
        f"measured: {what} {a} s -> {b} s, no saving here ({-d} s slower)"


def _skipped(frame, bypassed):
    """{phase: s} of a frame's compile that the caches skip on a warm start when `bypassed` (a set of
    cache names) are bypassed: an AOTAutograd hit skips its whole region, an FX graph cache hit only
    Inductor's; the AOTAutograd cache cannot hit while the FX graph cache is bypassed."""
    sk = (frame or {}).get("cache_skippable") or {}
    if "fx_graph_cache" in bypassed:
        return {}
    return dict(sk.get("fx" if "aotautograd_cache" in bypassed else "aot") or {})


def _bypass_suggestions(summary, warm):
    """One suggestion per bypass reason (over both caches). Its expected saving counts only the phases a
    cache hit would skip once the reason is gone (_skipped: AOTAutograd, Inductor passes/lowering/
    scheduling/codegen), taken from the warm run when there is one (it redid exactly that work, with
    the kernels from their own cache), else from this cold run."""
    byp = {}   # compile id -> {cache: reason}
    for cache, x in summary["caches"].items():
        for r in x["reasons"]:
            if r["state"] != "miss":
                for cid in r["compile_ids"]:
                    byp.setdefault(cid, {})[cache] = r["reason"]
    src = warm if warm and warm.get("compiled_frames") else summary
    frames = {f["compile_id"]: f for f in src["frames"]}
    out = {}
    for cache, x in summary["caches"].items():
        for r in x["reasons"]:
            if r["state"] == "miss":
                continue
            g = out.get(r["reason"])
            if g is None:
                g = out[r["reason"]] = {"caches": [], "states": [], "fix": r["fix"], "cids": []}
            g["caches"].append(cache)
            g["states"].append(r["state"])
            g["cids"] += [c for c in r["compile_ids"] if c not in g["cids"]]
    res = []
    for reason, g in out.items():
        phases = {}
        for cid in g["cids"]:
            mine = {c for c, rr in byp.get(cid, {}).items() if rr == reason}
            other = set(byp.get(cid, {})) - mine
            before, after = _skipped(frames.get(cid), other | mine), _skipped(frames.get(cid), other)
            for ph, v in after.items():
                phases[ph] = phases.get(ph, 0.0) + v - before.get(ph, 0.0)
        phases = {ph: round(v, 2) for ph, v in sorted(phases.items(), key=lambda kv: -kv[1]) if v >= 0.005}
        secs = round(sum(phases.values()), 2)
        named = ", ".join(f"{ct.PHASE_LABEL[ph].split(' (')[0]} {v} s" for ph, v in phases.items()) or "nothing"
        where = ("per warm start: what the warm run redid for those graphs because of the bypass" if src is warm
                 else "per start with a kept cache dir: what those graphs took in this run")
        caches = " + ".join(ct.CACHE_NAMES.get(c, c) for c in g["caches"])
        res.append({"id": f"bypass:{g['fix']['id'] or 'unknown'}", "title": f"{caches} {'/'.join(dict.fromkeys(g['states']))}: "
                    f"\"{reason[:120]}\"", "fix": g["fix"]["fix"], "saving_kind": "expected", "saving_s": secs,
                    "saving_phases": phases, "saving_run": "warm" if src is warm else "cold",
                    "saving": f"expected: up to {secs} s {where} ({named}). Not counted: Dynamo tracing and "
                              "guards (no cache skips them), the C++/Triton kernel compile (kernels have their own "
                              "cache, keyed by source). Not subtracted: what a hit costs (its cache key hashes torch "
                              "and triton once per process, then the entry loads)"})
    return res


def suggestions(summary, summaries, runs, argv):
    """What would help, each with its measured or expected saving (and which)."""
    k = knowledge.load("compile_time")["suggestions"]
    out = _bypass_suggestions(summary, summaries.get("warm"))
    runs = runs or {}
    if "warm" in runs:
        out.append({"id": "warm_cache", "title": k["warm_cache"]["title"], "fix": " ".join(k["warm_cache"]["fix"].split()),
                    "saving": _saving(runs["cold"]["compile_s"], runs["warm"]["compile_s"], "compile"),
                    "saving_kind": "measured", "saving_s": round(runs["cold"]["compile_s"] - runs["warm"]["compile_s"], 3)})
    if "portable" in runs:
        loaded = runs["portable"].get("artifacts_loaded") or {}
        out.append({"id": "portable", "title": k["portable"]["title"], "fix": " ".join(k["portable"]["fix"].split()),
                    "saving": _saving(runs["cold"]["compile_s"], runs["portable"]["compile_s"], "compile in a fresh "
                                      "cache dir") + f" (loaded {loaded.get('bytes', '?')} bytes: "
                              f"{', '.join(f'{a} {n}' for a, n in (loaded.get('artifacts') or {}).items()) or 'nothing'})",
                    "saving_kind": "measured",
                    "saving_s": round(runs["cold"]["compile_s"] - runs["portable"]["compile_s"], 3)})
    blocks = summary["repeated_blocks"]
    if blocks:
        b = blocks[0]
        whole = b["container"].startswith("(")          # numbered children of the model itself (a Sequential)
        fix = " ".join(k["regional"]["fix"].split()).replace(
            "model.<container>", "model" if whole else f"model.{b['container']}")
        title = f"{k['regional']['title']}: `{'the model' if whole else b['container']}` has {b['count']} " \
                f"numbered layers in one graph"
        measured = "regional" in runs and runs["regional"].get("applied")
        if not measured:  # the trace names numbered children, not their classes: only --regional checks them
            fix = "If these layers are the same block (the trace cannot tell their classes; --regional checks): " + fix
        if measured:
            out.append({"id": "regional", "title": title, "fix": fix, "saving_kind": "measured",
                        "saving": _saving(runs["cold"]["compile_s"], runs["regional"]["compile_s"], "cold compile"),
                        "saving_s": round(runs["cold"]["compile_s"] - runs["regional"]["compile_s"], 3)})
        else:
            out.append({"id": "regional", "title": title, "fix": fix, "saving_kind": "not measured",
                        "saving": "not measured (add --regional)", "saving_s": None,
                        "command": cli_command("compile-time", "--regional", "--", *argv) if argv else None})
    to_fix = [f for f in summary["frames"] if f["recompile"] and not f.get("recompile_expected")]
    if to_fix:
        secs = round(sum(f["total_s"] or 0 for f in to_fix), 2)
        exp = summary.get("expected_recompiles") or 0
        out.append({"id": "recompiles", "title": f"{k['recompiles']['title']}: {len(to_fix)} recompile(s)",
                    "fix": " ".join(k["recompiles"]["fix"].split()), "saving_kind": "expected",
                    "saving": f"expected: up to {secs} s per cold start (all phases of those recompiles in this run, "
                              "Dynamo tracing to kernel compile" + (f"; the {exp} recompile(s) torch expects "
                                                                    "are not counted" if exp else "") + ")",
                    "saving_s": secs, "compile_ids": [f["compile_id"] for f in to_fix],
                    "command": cli_command("triage", "--", *argv) if argv else None})
    if summary.get("restart_time_s"):
        out.append({"id": "restarts", "title": k["restarts"]["title"], "fix": " ".join(k["restarts"]["fix"].split()),
                    "saving_kind": "expected", "saving": f"expected: up to {summary['restart_time_s']} s per cold start "
                                                         "(the Dynamo tracing redone after graph breaks in this run)",
                    "saving_s": summary["restart_time_s"]})
    a = summary["autotune"]
    t = (a["max_autotune"] or a["max_autotune_gemm"]) and (a["compile_time_autotune_s"] or _phase_s(summary, "autotune"))
    if t:
        out.append({"id": "max_autotune", "title": k["max_autotune"]["title"],
                    "fix": " ".join(k["max_autotune"]["fix"].split()), "saving_kind": "expected",
                    "saving": f"expected: up to {t} s per cold compile (the autotuning while compiling in this run; "
                              f"the {a['runtime_triton_autotune_s'] or 0} s of Triton config autotuning at the first "
                              "run are not counted: how much of it max-autotune causes is not measured)",
                    "saving_s": t})
    noisy = busy(runs)
    for g in out:
        g["helps"] = g["saving_kind"] != "measured" or (g["saving_s"] or 0) > 0
        if noisy and g["id"] in ("warm_cache", "portable", "regional") and g["saving_kind"] == "measured" \
                and g.get("saving"):
            # one run each on an overloaded machine: a difference of this size may be noise
            g["saving"] += (f"; one run each while the machine was busy (load {noisy[0]} on {noisy[1]} cores): "
                            "not conclusive, repeat on an idle machine before deciding")
            if not g["helps"]:
                g["helps"], g["inconclusive"] = True, True
    for g in out:   # a kept cache dir or shipped artifacts reuse an earlier compile: no help where every start is
        g["reuses_a_compile"] = g["id"] in ("warm_cache", "portable")      # cold (fresh pods, CI containers)
    # what cuts the compile itself helps every start: it comes before what reuses one (batch 3 of the blind
    # A/B: the agent of a user whose pods start empty was first offered "keep the cache")
    return sorted(out, key=lambda g: (not g["helps"], bool(g.get("inconclusive")), g["reuses_a_compile"]))
