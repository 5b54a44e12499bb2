"""Markdown of a perf result (decide/perf.py builds it): the per-mode table, the default mode's
attribution and the top fixes; a script target's compile share; a model that fails in eager."""
import os
import shlex

from .. import cmdline
from ..decide import knowledge
from . import output
from ..decide import perf as DP


def eager_failed_md(res):
    """The model fails eagerly: nothing to compare."""
    eager = res["modes"]["eager"]
    return (f"# perf: the model fails in eager\n{cmdline.clip(eager.get('error'), 400)}\n"
            f"worker stderr: {eager.get('stderr')}\n\nNext: fix the factory or the model "
            f"(it must run eagerly: `{res['target']}` returning (model, args[, kwargs])), then rerun "
            f"`{cmdline.cli_command('perf', res['target'])}`")


def _fmt_ms(x):
    if x is None:
        return "-"
    return f"{x:.3f}" if x < 10 else f"{x:.1f}"


def model_md(res):
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
        facts.extend(_recompile_lines(a.get("recompile_causes")))
    if a.get("cudagraph_skips"):
        facts.append("cudagraph skips: " + "; ".join(f"{s['compile_id'] or 'runtime'}: {cmdline.clip(s['reason'], 120)}" for s in a["cudagraph_skips"][:4]))
    if a.get("fallbacks"):
        facts.append("fallback kernels: " + _fallback_ops(a["fallbacks"]) + "".join(f"; {n}" for n in a.get("fallback_notes") or []))
    facts += a.get("decomposed_notes") or []
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


def script_md(r):
    L = [f"# perf: `{r['target']}` (script, exit {r['exit_code']})"]
    L.append((f"torch {r['torch_version']} · " if r.get("torch_version") else "") + f"run dir {r['run_dir']}")
    wall = r["wall_s"] or 0
    L.append(f"- wall time {wall:.2f} s; compiling {r['compile_s']:.2f} s = {(r['compile_share'] or 0):.0%} of it"
             + (f" (recompiles {r['recompile_s']:.2f} s = {(r['recompile_share'] or 0):.0%})" if r["recompile_s"] else ""))
    empty = r["graphs"] and r.get("ops") == 0   # frames traced, no op captured (blind A/B batch 58: "1 graph(s)"
    # read as compiled; a break inside checkpoint's body left nothing in the graph, and every block ran eagerly)
    L.append(f"- {r['graphs']} graph(s)" + (f" with {r['ops']} ops" if r.get("ops") is not None else "")
             + f", {r['graph_breaks']} graph break(s), {r['recompiles']} recompile(s); "
             f"FX graph cache {r['fx_graph_cache']['hits']} hit / {r['fx_graph_cache']['misses']} miss")
    if empty:
        L.append("  - no op was captured in any graph: nothing of the model ran compiled"
                 + (" (the break below left the graph empty)" if r["graph_breaks"] else ""))
    for b in r["graph_break_sites"][:5]:
        L.append(f"  - break at {b['site']} {b.get('gb_id') or ''}: {cmdline.clip(b['type'], 80)} (×{b['count']})"
                 + (": Dynamo skipped the frame it is in, which runs eagerly" if b.get("frame_skipped") else ""))
        if b.get("explanation"):   # torch's words for the break (blind A/B batch 46: "Read torch's explanation above"
            L.append(f"    torch: {cmdline.clip(b['explanation'], 240)}")   # with none above cost four calls)
        if b.get("fix"):   # the recipe, as triage shows it (blind A/B batch 40: only PyTorch's flag was in view)
            L.append(f"    Fix: {cmdline.clip(b['fix'], 360)}")
    L.extend(f"  - {x}" for x in _recompile_lines(r.get("recompile_causes")))
    exp, share = r.get("expected_recompiles") or [], (r["recompile_s"] or 0) / (r["compile_s"] or 1)
    # of compile time and of wall time; only where every recompile is such a size change (recompile_s is all of them)
    costly = exp and not r.get("recompile_causes") and share >= 0.25 and (r.get("recompile_share") or 0) >= 0.1
    for x in exp[:3]:
        L.append(f"  - **{x['function']}**: {x['compiles']} compiles, each recompile one torch expects "
                 f"({', '.join(x['kinds'])}: `{cmdline.clip(x['guards'][0], 90)}`), yet each is a compile")
    if costly:
        L.append(f"  - those recompiles are {share:.0%} of compile time: to compile once, make the changing sizes "
                 "dynamic from the first call (torch._dynamo.mark_dynamic(x, dim) on the input, or "
                 "torch.compile(..., dynamic=True)); a last partial batch is a size change too (pad it to the batch "
                 "size)")
    if r["cudagraph_skips"]:
        L.append("- cudagraph skips: " + "; ".join(cmdline.clip(s["reason"], 100) for s in r["cudagraph_skips"][:3]))
    if r["fallbacks"]:
        L.append("- fallback kernels: " + _fallback_ops(r["fallbacks"]))
        L.extend(f"  - {n}" for n in r.get("fallback_notes") or [])
    L.extend(f"- {n}" for n in r.get("decomposed_notes") or [])
    lib = r.get("library_calls") or {}
    if lib and r.get("generated_kernels") is not None:
        # (blind A/B batch 40: a one-thread CPU step ~70% matmul and attention; compiling gained ~5-10% at most,
        # which two agents measured with their own profiler runs)
        L.append(f"- kernels: {r['generated_kernels']} generated by Inductor (fused), {sum(lib.values())} library "
                 "call(s) eager makes too (" + ", ".join(f"{k} ×{v}" for k, v in sorted(lib.items(), key=lambda kv: -kv[1])[:5])
                 + "): compiling speeds up only the generated part; if one eager step under torch.profiler shows the "
                 "library calls (matmuls, convolutions, attention) taking most of it, expect little from torch.compile "
                 "there")
    if r.get("cpu_random_graphs") and not r.get("graph_breaks"):
        L.append(f"- random numbers drawn by Inductor's CPU kernels in {len(r['cpu_random_graphs'])} graph(s) "
                 f"({', '.join(r['cpu_random_graphs'][:3])}): if compiled is not faster, {DP.CPU_RNG_FIX}")
    if r["eager"]:
        e = r["eager"]
        L.append(f"- eager run (force_eager): {e['wall_s']:.2f} s (exit {e['exit']}) vs compiled {wall:.2f} s")
    if r["errors"]:
        L.append("- errors: " + "; ".join(r["errors"][:3]))
    if not r["graphs"] and not r["compile_s"] and r.get("exported"):
        # no torch.compile: the time is the exported program's (blind A/B batch 62: a .pt2 16x slower than eager,
        # an orthogonal parametrization recomputed at each of 96 steps; "Next: the kernels" did not apply)
        L.append(f"\nNothing was compiled with torch.compile, and the program {r['exported']} and runs it: where "
                 "its timings are the exported program's (ep.module() or a loaded .pt2 runs its graph op by op; an "
                 "AOTInductor package, its compiled kernels): " + knowledge.advice("exported_program_slow"))
        return "\n".join(L)
    if not r["graphs"] and not r["compile_s"] and r.get("dispatch_mode"):
        L.append("\nNothing was compiled: every timing above is eager's. " +
                 knowledge.advice("dispatch_mode_skips", at=r["dispatch_mode"]))
        return "\n".join(L)
    if not r["graphs"] and not r["compile_s"] and not r["errors"]:
        # nothing compiled: no kernel to look at (blind A/B batch 36: a torch.compile that raised inside the program's
        # own try/except; "Next: the kernels" cost a call) -- triage names why, with one run that catches a raise
        L.append("\nNothing was compiled: torch.compile never ran, or its call raised and the program went on eagerly, "
                 "so every timing above is eager's.")
        L.append(f"Next: {r['compile_raised']}" if r.get("compile_raised") else
                 f"Next: why nothing compiled: `{cmdline.cli_command('triage', '--', *shlex.split(r['target']))}`")
        return "\n".join(L)
    L.append("\nWall time includes process start and imports. For per-call timings and mode comparison, wrap the "
             "model in a factory and run `perf FILE.py:factory`.")
    causes = r.get("recompile_causes") or []
    if causes and not r["graph_breaks"] and all(c["fix"] for c in causes):
        L.append("Next: the recompile cause and its fix are above; after the edit, run this perf again to measure it "
                 f"(the full recompile report: `{cmdline.cli_command('triage', '--', *shlex.split(r['target']))}`)")
    elif costly and not r["graph_breaks"] and not causes:
        L.append("Next: the recompiles above are ones torch expects (triage calls them expected, nothing to fix there); "
                 "to cut their compile time mark the sizes dynamic, then run this perf again to measure it")
    elif r["graph_breaks"] and not causes and all(b.get("fix") for b in r["graph_break_sites"]):
        L.append("Next: each break's fix is above, at its line; after the edit, run this perf again to measure it "
                 f"(the full report: `{cmdline.cli_command('triage', '--', *shlex.split(r['target']))}`)")
    elif r["graph_breaks"] or r["recompiles"]:
        L.append(f"Next: fix the breaks/recompiles: `{cmdline.cli_command('triage', '--', *shlex.split(r['target']))}`")
    else:
        L.append(f"Next: the kernels: `{cmdline.cli_command('inductor', '--', *shlex.split(r['target']))}`")
    return "\n".join(L)


def _recompile_lines(causes):
    """Each function that recompiles for a reason to fix: the limit (it then runs eagerly: compiled is no faster
    there), the main cause with its line, and the fix (decide/perf.recompile_causes)."""
    out = []
    for c in (causes or [])[:3]:
        lim = (f"; recompile limit ({c['limit'] or '?'}) HIT → it runs eagerly from then on, so compiled is no faster "
               "there" if c["limit_hit"] else "")
        why = (f": {c['cause']} [{c['kind']}] `{cmdline.clip(c['guard'], 90)}`" + (f" at {c['at']}" if c["at"] else "")
               + (f", made static at {c['made_static_at']}" if c.get("made_static_at") else "") if c["cause"] else "")
        out.append(f"**{c['function']}** recompiles ({c['compiles']} compiles{lim}){why}"
                   + (f". Fix: {cmdline.clip(c['fix'], 420)}" if c["fix"] else ""))
    return out


def _fallback_ops(fallbacks):
    """"aten.cumsum.default (0/0-backward), ...": each fallback op with the graphs it is in."""
    where = {}
    for f in fallbacks:
        where.setdefault(f["op"], set()).add(f.get("graph") or "?")
    return cmdline.clip(", ".join(f"{op} ({', '.join(sorted(g)[:2])})" for op, g in sorted(where.items())), 300)

