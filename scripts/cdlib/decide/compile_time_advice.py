"""compile-time's advice, from the summaries of its runs (decide/compile_time.py makes them): the run's
status, notes on portable caches and on artifacts that saved nothing, and the suggestions ranked (what cuts
the compile itself before what reuses one). No torch import."""
import os
import re

from . import knowledge
from .compile_time import CACHE_NAMES, PHASE_LABEL
from ..cmdline import cli_command


def status(summary):
    if not summary["compiled_frames"]:
        return "no-compile"
    if any(r["state"] != "miss" for c in summary["caches"].values() for r in c["reasons"]):
        return "issues"
    return "ok"


def _phase_s(summary, phase):
    return next((p["seconds"] for p in summary.get("phases") or [] if p["phase"] == phase), 0.0)


def portable_notes(summaries):
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


def nothing_saved(summary, saved):
    """Why save_cache_artifacts left no file: the exit hook never ran, or it ran and PyTorch had nothing
    recorded (caches bypassed for every graph, or no Inductor compile)."""
    end = "; portable artifacts not measured"
    if saved is None:
        return ("save_cache_artifacts did not run at exit (the program ended through os._exit, a signal or a "
                "crash before Python's exit handlers)" + end)
    cs = summary["caches"]
    fx = cs.get("fx_graph_cache") or {}
    inductor = fx or any(p["phase"] in ("lowering", "codegen") for p in summary.get("phases") or [])
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
    """One suggestion per bypass fix (its reasons in both caches). Its expected saving counts only the phases a
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
            # one suggestion per fix (a reason of each cache with the same fix: freezing's two), else per reason
            # (a row whose fix names the op, higher_order_op: one suggestion per op, review of 0.33.108)
            key = (r["fix"]["id"], r["fix"]["fix"]) if r["fix"]["id"] == "higher_order_op" else r["fix"]["id"] or r["reason"]
            g = out.get(key)
            if g is None:
                g = out[key] = {"caches": [], "states": [], "fix": r["fix"], "cids": [], "reasons": []}
            g["caches"].append(cache)
            g["states"].append(r["state"])
            g["reasons"] += [r["reason"]] if r["reason"] not in g["reasons"] else []
            g["cids"] += [c for c in r["compile_ids"] if c not in g["cids"]]
    res = []
    for g in out.values():
        phases = {}
        for cid in g["cids"]:
            mine = {c for c, rr in byp.get(cid, {}).items() if rr in g["reasons"]}
            other = set(byp.get(cid, {})) - mine
            before, after = _skipped(frames.get(cid), other | mine), _skipped(frames.get(cid), other)
            for ph, v in after.items():
                phases[ph] = phases.get(ph, 0.0) + v - before.get(ph, 0.0)
        phases = {ph: round(v, 2) for ph, v in sorted(phases.items(), key=lambda kv: -kv[1]) if v >= 0.005}
        secs = round(sum(phases.values()), 2)
        named = ", ".join(f"{PHASE_LABEL[ph].split(' (')[0]} {v} s" for ph, v in phases.items()) or "nothing"
        where = ("per warm start: what the warm run redid for those graphs because of the bypass" if src is warm
                 else "per start with a kept cache dir: what those graphs took in this run")
        caches = " + ".join(dict.fromkeys(CACHE_NAMES.get(c, c) for c in g["caches"]))
        said = "; ".join(f'"{" ".join(x.split())[:120]}"' for x in g["reasons"][:2])   # (PyTorch's spans lines)
        res.append({"id": f"bypass:{g['fix']['id'] or 'unknown'}", "title": f"{caches} {'/'.join(dict.fromkeys(g['states']))}: "
                    f"{said}", "fix": g["fix"]["fix"], "saving_kind": "expected", "saving_s": secs,
                    "saving_phases": phases, "saving_run": "warm" if src is warm else "cold",
                    "saving": f"expected: up to {secs} s {where} ({named}). Not counted: Dynamo tracing and "
                              "guards (no cache skips them), the C++/Triton kernel compile (kernels have their own "
                              "cache, keyed by source). Not subtracted: what a hit costs (its cache key hashes torch "
                              "and triton once per process, then the entry loads)"})
    return sorted(res, key=lambda r: -r["saving_s"])   # the largest expected saving first


_SET_CACHE_RE = re.compile(r"""(?:environ\s*\[\s*|environ\.setdefault\(\s*|putenv\(\s*)["']TORCHINDUCTOR_CACHE_DIR["']""")
_TMP_DIR_RE = re.compile(r"\bmkdtemp\(|\bTemporaryDirectory\(")


# a value that differs in every process: a new directory on each start
_PER_PROCESS_RE = re.compile(r"\bmkdtemp\(|\bTemporaryDirectory\(|\buuid\d?\(|\btime\(\)|\bgetpid\(|\brandom\b|\bnow\(")


def _own_cache_dir(argv):
    """Where the program's source makes a throwaway Inductor cache dir, new on each start: (file, line, code). A
    fixed path set with os.environ (setdefault or not) is kept between starts: not one (blind A/B batch 34:
    `os.environ.setdefault("TORCHINDUCTOR_CACHE_DIR", <a folder beside the script>)` was called "a new, empty
    one" while the misses came from graphs that differed between starts)."""
    from ..cmdline import script_of, script_source
    lines = script_source(argv).splitlines()
    code = [(i, ln.strip()) for i, ln in enumerate(lines, 1) if not ln.strip().startswith("#")]
    # names assigned a per-process value (`cache_dir = tempfile.mkdtemp(...)`), then the line that sets the env var
    fresh = {m.group(1) for _, ln in code for m in [re.match(r"^(\w+)\s*=", ln)] if m and _PER_PROCESS_RE.search(ln)}
    h = next((x for x in code if _SET_CACHE_RE.search(x[1]) and (_PER_PROCESS_RE.search(x[1]) or any(
        re.search(rf"\b{n}\b", x[1]) for n in fresh))), None) or \
        next((x for x in code if _TMP_DIR_RE.search(x[1]) and "=" in x[1]), None)
    return (os.path.basename(script_of(argv)), h[0], h[1]) if h else None


_GRAPH_SRC = re.compile(r"# File: (\S+?):(\d+) in (\w+), code: (.*)")


def _graph_changed(runs):
    """The first line of a compiled graph that differs between the cold and the warm run (two starts of the same
    program): a value baked into the graph as a constant that each process computes anew. -> {compile_id, cold,
    warm, where} or None."""
    from ..read import trace as tracemod

    def graphs(run):
        d = (run or {}).get("trace_dir")
        if not d or not os.path.isdir(d):
            return {}
        return {e.compile_id: e.payload for e in tracemod.parse(d).of("dynamo_output_graph") if e.payload}
    cold, warm = graphs(runs.get("cold")), graphs(runs.get("warm"))
    for cid, a in cold.items():
        b = warm.get(cid)
        if not b or a == b:
            continue
        src = None
        for x, y in zip(a.splitlines(), b.splitlines()):
            m = _GRAPH_SRC.search(x)
            src = m or src
            if x != y:
                where = f"{os.path.basename(src.group(1))}:{src.group(2)} `{src.group(4).strip()[:100]}`" if src else None
                return {"compile_id": cid, "cold": x.strip()[:160], "warm": y.strip()[:160], "where": where}
        return {"compile_id": cid, "cold": None, "warm": None, "where": None}
    return None


def _not_reused(summaries, argv, runs=None):
    """The warm run (same cache dir, second process) hit nothing and no bypass says why (blind A/B batch 15:
    a worker pointed TORCHINDUCTOR_CACHE_DIR at a new mkdtemp() on each start; the report still offered
    "keep the cache" with a saving that was noise). Where the two starts compiled different graphs, the first
    line that differs says what changed."""
    w = summaries.get("warm")
    if not w:
        return None
    hit = sum((w["caches"].get(c) or {}).get("hit", 0) for c in CACHE_NAMES)
    miss = sum((w["caches"].get(c) or {}).get("miss", 0) for c in CACHE_NAMES)
    bypass = sum((w["caches"].get(c) or {}).get("bypass", 0) for c in CACHE_NAMES)
    if hit or not miss or bypass:
        return None
    own = _own_cache_dir(argv)
    changed = None if own else _graph_changed(runs or {})
    if own:
        where = (f"the program makes its own cache dir at {own[0]}:{own[1]} (`{own[2][:100]}`), a new, empty one "
                 "on each start: point it at a directory that outlives the process (and do not delete it at exit)")
    elif changed and changed["cold"]:
        where = (f"the two starts compiled different graphs ({changed['compile_id']}): `{changed['cold']}` vs "
                 f"`{changed['warm']}`" + (f", from {changed['where']}" if changed["where"] else "") + ". "
                 + knowledge.advice("graph_differs_per_start"))
    elif changed:
        where = (f"the two starts compiled different graphs ({changed['compile_id']}). "
                 + knowledge.advice("graph_differs_per_start"))
    else:
        where = ("nothing in the program's source makes a new cache dir and both starts compiled the same graphs: "
                 "check that the dir is not deleted between starts and that the torch version and config are the same")
    return {"id": "cache_not_reused", "title": "the second start reused nothing from the cache dir",
            "fix": f"The warm run (a second process, the same TORCHINDUCTOR_CACHE_DIR) had 0 cache hits and {miss} "
                   f"misses, with no bypass: {where}.", "saving_kind": "expected", "saving_s": None,
            "saving": "the warm start compiled as much as the cold one; a kept cache helps only once it is reused"}


def _optimizer_step(f):
    """A frame of an optimizer's step in torch/optim (or the rest of it after a graph break); not an EMA's
    forward (swa_utils) or a scheduler (review: `AveragedModel(model).compile()` was called an optimizer step)."""
    code = f.get("torch_code") or ""
    return code.startswith("torch/optim/") and not code.startswith(("torch/optim/swa_utils", "torch/optim/lr_scheduler")) \
        and (f.get("function") or "").split(" ")[0] in ("step", "_use_grad", "wrapper")


def _compiled_optimizer(summary, k, least_ops=100):
    """A compiled frame of torch.optim's own code (opt.step() inside a compiled function, or the step
    compiled directly) with a sizeable graph: its compile grows with the parameter tensors (blind A/B batch
    22: a compiled AdamW step was most of a GPT's startup and grew with depth; the report offered only
    regional compilation of the blocks)."""
    frames = [f for f in summary["frames"] if _optimizer_step(f) and (f.get("ops") or 0) >= least_ops]
    if not frames:
        return None
    secs = round(sum(f["total_s"] or 0 for f in frames), 2)
    ops = sum(f["ops"] or 0 for f in frames)
    f = max(frames, key=lambda f: f["total_s"] or 0)
    share = secs / summary["compile_time_s"] if summary["compile_time_s"] else 0
    where = f"`{f['function']}`" + (f" and {len(frames) - 1} more" if len(frames) > 1 else "")
    return {"id": "compiled_optimizer", "title": f"{k['title']}: the compiled optimizer step {where} is "
                                                 f"{ops} ops, {secs} s of the {summary['compile_time_s']} s compile "
                                                 f"({round(100 * share)}%)",
            "fix": " ".join(k["fix"].split()), "saving_kind": "expected", "saving_s": secs, "share": share,
            "saving": f"expected: up to {secs} s per cold start (that frame's compile in this run; it grows with "
                      "the number of parameter tensors); the steady step may change: measure it with `perf`",
            "compile_ids": [x["compile_id"] for x in frames]}


def suggestions(summary, summaries, runs, argv):
    """What would help, each with its measured or expected saving (and which)."""
    k = knowledge.load("compile_time")["suggestions"]
    out = _bypass_suggestions(summary, summaries.get("warm"))
    runs = runs or {}
    stale = _not_reused(summaries, argv, runs) if "warm" in runs else None
    if stale:
        out.append(stale)
    if "warm" in runs and not stale:   # a warm run that reused nothing measures no cache saving
        out.append({"id": "warm_cache", "title": k["warm_cache"]["title"], "fix": " ".join(k["warm_cache"]["fix"].split()),
                    "saving": _saving(runs["cold"]["compile_s"], runs["warm"]["compile_s"], "compile"),
                    "saving_kind": "measured", "saving_s": round(runs["cold"]["compile_s"] - runs["warm"]["compile_s"], 3)})
    aot = ((runs.get("warm") or {}).get("caches") or {}).get("aotautograd_cache") or {}
    fx = ((runs.get("warm") or {}).get("caches") or {}).get("fx_graph_cache") or {}
    if aot.get("miss") and not aot.get("hit") and not aot.get("bypass") and fx.get("hit") and not stale:
        out.append({"id": "aot_entry_never_saved", "title": k["aot_entry_never_saved"]["title"],
                    "fix": " ".join(k["aot_entry_never_saved"]["fix"].split()), "saving_kind": "expected",
                    "saving_s": None, "saving": "expected: the AOTAutograd and Inductor graph passes of each warm start "
                                                "(the compile-time breakdown above)"})
    if "portable" in runs:
        loaded = runs["portable"].get("artifacts_loaded") or {}
        out.append({"id": "portable", "title": k["portable"]["title"], "fix": " ".join(k["portable"]["fix"].split()),
                    "saving": _saving(runs["cold"]["compile_s"], runs["portable"]["compile_s"], "compile in a fresh "
                                      "cache dir") + f" (loaded {loaded.get('bytes', '?')} bytes: "
                              f"{', '.join(f'{a} {n}' for a, n in (loaded.get('artifacts') or {}).items()) or 'nothing'})",
                    "saving_kind": "measured",
                    "saving_s": round(runs["cold"]["compile_s"] - runs["portable"]["compile_s"], 3)})
    if "empty_cache" in runs:   # nothing compiled, an AOTInductor package loaded: the load's g++ check, timed
        e, c = runs["empty_cache"], runs["cold"]
        helps = e["isa_probes_built"] > 0 and e["wall_s"] - c["wall_s"] >= max(1.0, 0.2 * c["wall_s"])
        out.append({"helps": helps, "id": "aoti_load_check", "title": f"{k['aoti_load_check']['title']} "
                    f"({e['isa_probes_built']} CPU-feature test programs built; load at {c.get('aoti_load')})",
                    "fix": " ".join(k["aoti_load_check"]["fix"].split()), "saving_kind": "measured",
                    "saving": f"measured: the whole run took {e['wall_s']} s with an empty cache dir (a fresh "
                              f"machine), {c['wall_s']} s with the test programs already built",
                    "saving_s": round(e["wall_s"] - c["wall_s"], 3)})
    codegen, total = _phase_s(summary, "codegen") + _phase_s(summary, "scheduling"), summary.get("compile_time_s") or 0
    ops = sum(f.get("ops") or 0 for f in summary.get("frames") or [])
    # per graph op, not only in total: a large model's many kernels take seconds of codegen too, at ~10 ms an op
    if codegen >= 5 and total and codegen >= 0.4 * total and ops and codegen / ops >= 0.05:
        # Inductor's Python-side code generation dominates: inlined pointwise chains re-expanded (blind A/B batch 59:
        # an 8-substep integrator, 145 s of codegen for a 56 KB kernel; the report named only the unrolled loop)
        out.append({"id": "inductor_reexpansion", "title": f"{k['inductor_reexpansion']['title']} ({codegen:.0f} s of "
                    f"{total:.0f} s compile in Inductor's scheduling and code generation)",
                    "fix": " ".join(k["inductor_reexpansion"]["fix"].split()), "saving_kind": "not measured",
                    "saving": "not measured (compile-time on the edited program measures it)", "saving_s": None})
    opt = _compiled_optimizer(summary, k["compiled_optimizer"])
    if opt and opt.pop("share") >= 0.25:   # the larger part: before what cuts the model's own compile
        out.append(opt)
        opt = None
    blocks = summary["repeated_blocks"]
    code = summary.get("repeated_code") or []
    if code and not blocks:   # one cell or function traced once per loop step: the loop was unrolled
        c = code[0]
        where = f"{os.path.basename(c['file'])}:{c['lines'][0]}-{c['lines'][1]}"
        out.append({"id": "regional", "title": f"a Python loop unrolled into one graph: `{c['function']}` ({where}) is "
                                                f"traced {c['times']} times in graph {c['compile_id']}",
                    "fix": "Dynamo unrolls a Python loop over steps (time steps, layers, iterations): the graph and its "
                           "compile time grow with the loop's length, and another length (a longer validation "
                           "window) compiles another, bigger graph. Compile the loop's body instead: the module "
                           f"whose `{c['function']}` repeats (`model.<cell>.compile()`, or torch.compile on that "
                           "function) and keep the loop in Python; each step then runs one small cached graph, "
                           "whatever the length.",
                    "saving_kind": "not measured", "saving": "not measured (the graph shrinks to one step's code)",
                    "saving_s": None})
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
    if opt:
        out.append(opt)
    dyn = summary.get("costly_dynamic") or []
    if dyn:
        d = dyn[0]
        out.append({"id": "static_sizes", "title": f"{k['static_sizes']['title']}: `{d['function']}` "
                    f"({d['location'] or d['compile_id']}) traced and lowered in {d['trace_s']} s as a dynamic graph, "
                    f"{d['first_trace_s']} s static",
                    "fix": " ".join(k["static_sizes"]["fix"].split()), "saving_kind": "expected",
                    "saving": "expected: up to " + str(round(sum(x["trace_s"] - x["first_trace_s"] for x in dyn), 2)) +
                              " s per cold start (each dynamic compile's tracing and lowering less a static one's)",
                    "saving_s": round(sum(x["trace_s"] - x["first_trace_s"] for x in dyn), 2),
                    "compile_ids": [x["compile_id"] for x in dyn], "command": None})
    to_fix = [f for f in summary["frames"] if f["recompile"] and not f.get("recompile_expected")]
    per_size = [f for f in to_fix if f.get("recompile_static")]
    if per_size:   # dynamic=False: a graph per size is that setting's design, not a recompile to stop
        to_fix = [f for f in to_fix if not f.get("recompile_static")]
        out.append({"id": "per_size_graphs", "title": f"{k['per_size_graphs']['title']}: {len(per_size)} more "
                    f"size(s) of `{per_size[0]['function']}`", "fix": " ".join(k["per_size_graphs"]["fix"].split()),
                    "saving_kind": "not measured", "saving": "nothing to save if the sizes are fixed buckets; "
                    f"{round(sum(f['total_s'] or 0 for f in per_size), 2)} s of compile in this run otherwise",
                    "saving_s": None, "compile_ids": [f["compile_id"] for f in per_size], "command": None})
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
        if noisy and g["id"] == "static_sizes":
            # two compiles' times compared within one run: load that comes and goes can make either look dear (the
            # suite beside other work: HF GPT-2's dynamic forward 18.5 s vs 3.7 s, under 2x when idle)
            g["saving"] += (f"; the machine was busy (load {noisy[0]} on {noisy[1]} cores): two compiles' times are "
                            "not comparable then, repeat on an idle machine before deciding")
            g["inconclusive"] = True
    for g in out:   # a kept cache dir or shipped artifacts reuse an earlier compile: no help where every start is
        g["reuses_a_compile"] = g["id"] in ("warm_cache", "portable")      # cold (fresh pods, CI containers)
    # what cuts the compile itself helps every start: it comes before what reuses one (batch 3 of the blind
    # A/B: the agent of a user whose pods start empty was first offered "keep the cache")
    return sorted(out, key=lambda g: (not g["helps"], bool(g.get("inconclusive")), g["reuses_a_compile"]))
