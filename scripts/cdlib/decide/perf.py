"""perf's analysis: what each mode's worker and trace left -> the result: per-mode timings against eager,
the default mode's attribution (graph breaks, frames skipped, recompiles, cudagraph skips, fallback kernels)
and the fixes ranked by expected gain; for a script target, compile time and breaks as a share of wall time."""
import dataclasses
import os
import re

from .error_rows import _first_lines
from ..read import inductor_info as II
from ..read import trace as tracemod


# Inductor's C++ code draws each random number (dropout masks, rand, randn, randint) with its own
# per-element generator (codegen/cpp.py); eager calls one bernoulli_/rand kernel per op
CPU_RNG_RE = re.compile(r"\b(?:normalized_rand_cpu|randn_cpu|randint64_cpu)\(")
CPU_FIX_CONFIG = "torch._inductor.config.fallback_random"
CPU_RNG_FIX = ("draw the random numbers with eager's kernels: torch._inductor.config.fallback_random = True "
               "(Inductor's CPU code draws every dropout/rand value with its own per-element generator, "
               "normalized_rand_cpu, which can cost more than the whole rest of a step; fallback_random also "
               "gives eager's exact random numbers)")


def break_site(b):
    """The program's line of a graph break, and for a break inside a library the library's line too (blind A/B batch
    43: a Longformer's 25 breaks in transformers all read "break at train_doccls.py:65", the user's call)."""
    return (b.location.short() if b.location else b.site) + b.inside_library()


def fallback_notes(fallbacks):
    """Notes for fallback ops whose compiled backward is known to cost more than eager's (only where the op is a
    fallback of a backward graph; blind A/B batch 25: cumprod)."""
    from . import knowledge
    notes = []
    if any(f["op"] == "aten.cumprod.default" and (f.get("graph") or "").endswith("backward") for f in fallbacks or []):
        notes.append(knowledge.advice("perf_cumprod_backward"))
    return notes


# ops Inductor replaces with its own generated code that can run slower than eager's ATen kernel on CPU, by the name
# the generated kernel carries (blind A/B batch 44: grid_sample, 57 vs 19 ms alone)
CPU_DECOMPOSED_NOTES = ("grid_sampler_2d",)


def decomposed_notes(ops):
    """Notes for ops found in generated CPU kernels whose decomposition is known to cost more than eager's kernel."""
    from . import knowledge
    return [knowledge.advice("perf_grid_sample_cpu")] if "grid_sampler_2d" in (ops or ()) else []


def recompile_causes(rep):
    """Per function that recompiles for a reason to fix, or hit the recompile limit: its main cause, the line
    and the fix, from the triage analysis of the same trace (compact). perf names why compiled is no faster
    without another run (blind A/B batch 28: a router's list append hit the limit; perf said "8 recompiles" and
    listed fallback kernels, and triage was one more call to learn the cause)."""
    out = []
    for f in rep.recompiles:
        bad = [c for c in f.causes if not c["expected"]]
        if not bad and not f.limit_hit:
            continue
        c = max(bad, key=lambda c: c["primary"]) if bad else None
        loc, sp = (_as_dict(c.get("location")), _as_dict(c.get("specialized_at"))) if c else (None, None)
        limit_fix = next((x["fix"] for x in f.fixes if x["kind"] == "limit"), None)
        out.append({"function": f.function, "compiles": f.compiles, "limit_hit": f.limit_hit, "limit": f.limit,
                    "cause": c["cause"] if c else None, "kind": c["kind"] if c else None,
                    "guard": c["guard"] if c else None,
                    "at": (f"{os.path.basename(loc['file'])}:{loc['line']}" + (f" `{loc['code'].strip()}`" if loc.get("code")
                                                                            else "")) if loc and loc.get("line") else None,
                    "made_static_at": (f"{os.path.basename(sp['file'])}:{sp['line']} `{(sp.get('code') or '').strip()}`"
                                       + (f" ({c['specialized_reason']})" if c.get("specialized_reason") else ""))
                    if sp and sp.get("line") else None,
                    "fix": " ".join((c["fix"] if c else limit_fix or "").split())})
    return out


def expected_recompiles(rep):
    """Per function whose recompiles are all ones torch expects because a size changed (it then becomes dynamic):
    its compiles and their guards. Each still costs a compile (blind A/B batch 30: dynamic=None after
    dynamic=False left 3 graphs, the length and then a last partial batch, most of its compile time; perf's Next
    sent to triage, which calls them expected)."""
    out = []
    for f in rep.recompiles:
        # only sizes that automatic dynamic then made dynamic (analyze_recompiles._expected's reason): marking them
        # dynamic avoids those compiles; not 0/1 specialization, a grad-mode switch or an older cache entry (review)
        if f.causes and all(c["expected"] and c["kind"] == "shape" and (c.get("why") or "").startswith("automatic dynamic")
                            for c in f.causes) and not f.limit_hit:
            out.append({"function": f.function, "compiles": f.compiles, "kinds": ["shape"],
                        "guards": [c["guard"] for c in f.causes[:3]]})
    return out


def _as_dict(loc):
    return loc if loc is None or isinstance(loc, dict) else dataclasses.asdict(loc)


def _trace_facts(tdir):
    """Compile time, graphs, breaks, recompiles, cudagraph skips and fallbacks from a mode's trace."""
    facts = {"compile_s": None, "graphs": 0, "recompiles": 0, "recompile_s": 0.0, "graph_breaks": [],
             "cudagraph_skips": [], "fallbacks": [], "kernels": 0, "frames": [], "cpu_random_graphs": [],
             "library_calls": {}, "generated_kernels": 0, "cpu_decomposed": []}
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
        from . import analyze
        rep = analyze.analyze(tdir)
        for b in rep.graph_breaks:
            fx = b.fix if isinstance(b.fix, dict) else {}
            facts["graph_breaks"].append({"site": break_site(b), "gb_id": b.gb_id,
                                          "type": b.gb_type, "count": b.count, "category": b.category,
                                          "fix": fx.get("fix"), "frame_skipped": bool(fx.get("frame_skipped"))})
        facts["recompile_causes"] = recompile_causes(rep)
        facts["recompile_kinds"] = {}
        for f in rep.recompiles:
            for k, v in (f.kinds or {}).items():
                facts["recompile_kinds"][k] = facts["recompile_kinds"].get(k, 0) + v
    except Exception as ex:  # the triage analyzer is optional here
        facts["analyze_error"] = f"{type(ex).__name__}: {ex}"[:200]
    for g in II.compiled_graphs(tr):
        if CPU_RNG_RE.search(g["code"] or ""):
            facts["cpu_random_graphs"].append(f"{g['compile_id']}-{g.get('kind')}")
        ks = II.analyze_graph(g)
        facts["kernels"] += len(ks)
        for k in ks:
            if k["kind"] in ("extern", "fallback"):   # a library kernel, the same one eager calls
                name = k["name"].replace("extern_kernels.", "").split(".")[-2 if k["kind"] == "fallback" else -1]
                facts["library_calls"][name] = facts["library_calls"].get(name, 0) + 1
            else:
                facts["generated_kernels"] += 1
                if k["name"].startswith("cpp_"):
                    text = " ".join([k["name"], *k.get("ops", []), *(k.get("source_nodes") or [])])
                    facts["cpu_decomposed"] += [o for o in CPU_DECOMPOSED_NOTES if o in text and o not in facts["cpu_decomposed"]]
            if k["kind"] == "fallback":
                facts["fallbacks"].append({"op": k["name"], "graph": f"{g['compile_id']}-{g.get('kind')}",
                                           "user_lines": [f"{os.path.basename(l['file'])}:{l['line']}" for l in k["user_lines"][:3]]})
    return facts


def model_result(args, run_dir, spec, results, device, cuda):
    """The result of a model target: results maps each mode to its worker's output (eager first)."""
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
        "recompile_kinds": d.get("recompile_kinds"), "recompile_causes": d.get("recompile_causes"),
        "outside_compiled_share": prof.get("outside_share") if prof else None,
        "cudagraph_skips": [s for m in facts for s in facts[m]["cudagraph_skips"]],
        "fallbacks": d.get("fallbacks"), "fallback_notes": fallback_notes(d.get("fallbacks")),
        "decomposed_notes": decomposed_notes(d.get("cpu_decomposed")),
        "kernels": d.get("kernels"),
        "cpu_random_graphs": d.get("cpu_random_graphs"),
    }
    ok_modes = [r for r in table if r["ok"] and r["mode"] != "eager"]
    best = min(ok_modes, key=lambda r: r["median_ms"]) if ok_modes else None
    result = {"command": "perf", "run_dir": run_dir, "status": "ok", "target": spec, "kind": "model",
              "train": args.train, "device": device, "gpu": results["eager"].get("gpu"),
              "torch_version": results["eager"].get("torch_version"), "threads": results["eager"].get("threads"),
              "modes": table, "best": best["mode"] if best else None, "attribution": attribution, "fixes": fixes,
              "artifacts": {m: {"result": os.path.join(run_dir, f"perf_{m}.json"), "trace_dir": r.get("trace_dir")}
                            for m, r in results.items()}}
    return result


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
    causes = [c for c in d.get("recompile_causes") or [] if c["fix"]]
    if d.get("recompiles"):
        out.append({"fix": f"stop the recompiles of {causes[0]['function']} ({causes[0]['cause'] or 'the limit'}): "
                           + causes[0]["fix"] if causes else
                           "stop the recompiles (mark the changing dim dynamic with torch._dynamo.mark_dynamic, "
                           "or keep the guarded value constant); see the triage recompile kinds",
                    "rank": 0 if any(c["limit_hit"] for c in causes) else 1,
                    "gain_ms": None, "why": f"{d['recompiles']} recompile(s), {d.get('recompile_s', 0):.2f} s compiling "
                                            f"({', '.join(f'{k}×{v}' for k, v in (d.get('recompile_kinds') or {}).items()) or 'kinds n/a'})",
                    "estimate": f"saves {d.get('recompile_s', 0):.2f} s of compile time per process"})
    skips = [s for m in facts for s in facts[m]["cudagraph_skips"]]
    if cuda and skips:
        out.append({"fix": "make the graph cudagraph-safe: " + "; ".join(sorted({s["reason"] for s in skips}))[:300],
                    "gain_ms": None, "why": f"{len(skips)} cudagraph skip(s); reduce-overhead ran without CUDA graphs",
                    "estimate": "launch overhead per kernel (~5-10 us each) x kernels per step"
                                + (f" ({d.get('kernels')} kernels)" if d.get("kernels") else "")})
    # the one randint per call that seeds Inductor's random kernels is not a fusion problem
    fallbacks = [f for f in d.get("fallbacks") or []
                 if not (d.get("cpu_random_graphs") and f["op"].startswith("aten.randint"))]
    if fallbacks and default_ms:
        ops = sorted({f["op"] for f in fallbacks})
        out.append({"fix": "replace or accept the eager fallback kernel(s): " + ", ".join(ops[:5]),
                    "gain_ms": None, "why": f"{len(fallbacks)} fallback launch(es) break fusion",
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
    # (not beside graph breaks: they are the slowdown to fix first, and fallback_random then made a step 2x slower;
    # blind A/B batch 53, a packed MLM whose attention Function broke the graph)
    if not cuda and d.get("cpu_random_graphs") and not d.get("graph_breaks"):
        out.append({"fix": CPU_RNG_FIX, "gain_ms": None,
                    "why": f"random-number kernels in {len(d['cpu_random_graphs'])} compiled graph(s) "
                           f"({', '.join(d['cpu_random_graphs'][:3])}); model.eval() or p=0 removes them when no "
                           "randomness is wanted",
                    "estimate": "measure: time a step with and without it (eval mode shows the cost without RNG)"})
    if not cuda and "reduce-overhead" in results and results["reduce-overhead"].get("ok"):
        out.append({"fix": "reduce-overhead does nothing extra on CPU (CUDA graphs are CUDA-only)", "gain_ms": 0.0,
                    "why": "CPU model", "estimate": "none"})
    out.sort(key=lambda f: (f.get("rank", 1), -(f["gain_ms"] if f["gain_ms"] is not None else -1)))
    for f in out:
        f.pop("rank", None)
    return out


_DISPATCH_MODE = re.compile(r"\b(FlopCounterMode|TorchDispatchMode|LoggingTensorMode|CrossRefMode)\b")


def _dispatch_mode_at(rep):
    """'prog.py:105 `with FlopCounterMode(...)`' where the program's own code uses a torch dispatch mode and nothing
    was compiled: Dynamo skips every frame while such a mode is active (blind A/B batch 63: a step meter counting
    FLOPs around each compiled step; the gate timed eager); None otherwise."""
    import ast
    from .program_code import program_files, read_text
    for path in program_files(rep):
        text = read_text(path)
        try:
            tree = ast.parse(text)
        except (SyntaxError, ValueError):
            continue
        calls = sorted(n.lineno for n in ast.walk(tree) if isinstance(n, ast.Call)
                       and _DISPATCH_MODE.fullmatch(ast.unparse(n.func).split(".")[-1]))
        if calls:
            return f"{os.path.basename(path)}:{calls[0]} `{text.splitlines()[calls[0] - 1].strip()[:80]}`"
    return None


def _exported_only(rep):
    """'exports (prog.py:95)' or 'loads an exported program (prog.py:12)' when nothing was compiled with
    torch.compile, no torch.compile call raised, and the program runs what it exported (ep.module(), a loaded .pt2
    or package): its time may be the exported program's (blind A/B batch 62's slow .pt2 of a parametrized RNN
    cell); None otherwise (review of 0.33.174: an export behind an unset flag, or one only saved)."""
    from ..read import never_ran
    from .program_code import program_files, runs_exported
    files = program_files(rep)
    found = never_ran.exports(files)
    if not found or rep.artifacts.get("compile_raised") or not runs_exported(files):
        return None
    path, line, call = next((x for x in found if not x[2].endswith("load")), found[0])
    where = f"{os.path.basename(path)}:{line}"
    return f"loads an exported program ({where})" if call.endswith("load") else f"exports ({where})"


def script_result(run_dir, tstr, rep, eager):
    """The result of a script target: rep is its traced run's report, eager its force_eager run (or None)."""
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
        "graphs": st.get("graphs"), "ops": st.get("ops"), "graph_breaks": st.get("graph_breaks"),
        "graph_break_sites": [{"site": break_site(b), "gb_id": b.gb_id,
                               "type": b.gb_type, "count": b.count, "fix": " ".join((b.fix.get("fix") or "").split()),
                               "explanation": " ".join((b.explanation or "").split()),
                               "frame_skipped": bool(b.fix.get("frame_skipped"))} for b in rep.graph_breaks],
        "recompiles": st.get("recompiles"), "recompile_causes": recompile_causes(rep),
        "expected_recompiles": expected_recompiles(rep),
        # nothing compiled and one more run caught a torch.compile call raising (runs._check_compile_raised)
        "compile_raised": rep.next_steps[0]["why"] if rep.artifacts.get("compile_raised") and rep.next_steps else None,
        "cudagraph_skips": f["cudagraph_skips"], "fallbacks": f["fallbacks"],
        "fallback_notes": fallback_notes(f["fallbacks"]), "cpu_random_graphs": f["cpu_random_graphs"],
        "decomposed_notes": decomposed_notes(f["cpu_decomposed"]),
        "library_calls": f["library_calls"], "generated_kernels": f["generated_kernels"],
        "fx_graph_cache": {"hits": st.get("fx_graph_cache_hits"), "misses": st.get("fx_graph_cache_misses")},
        "eager": eager, "errors": [_error_words(e) for e in rep.errors],
        "exported": _exported_only(rep) if not st.get("graphs") else None,
        "dispatch_mode": _dispatch_mode_at(rep) if not st.get("graphs") else None,
        "artifacts": {"trace_dir": os.path.join(run_dir, "trace"), "stderr": os.path.join(run_dir, "target.stderr")},
    }
    del tr
    return result


def _error_words(e):
    """One error of a perf run: its row's title, or for an exit the program made itself (no exception, the
    catch-all row) what it printed: perf runs no eager check, so "not from torch.compile" is not known (blind A/B
    batch 67: a speed gate's exit 1 read "Error in the program itself (not from torch.compile)")."""
    if e.category != "user_error":
        return e.title
    said = _first_lines(e.message, 1, 120).strip()
    return (f"{e.type}" + (f" ({said})" if said else "") + ": the program's own failure or check; perf does not "
            "run it without torch.compile (triage does)")
