"""Markdown view of a triage Report: compact facts for an agent, paths to the full artifacts."""
import os

from ..decide import knowledge, semantics
from .output import clip, table
from .views_dynamo import graph_breaks_md, recompiles_md



def _where(loc, base=None):
    if loc is None:
        return ""
    path = loc.file
    if base and path.startswith(base + os.sep):
        path = os.path.relpath(path, base)
    s = f"{path}:{loc.line}" if loc.line else path
    if loc.code:
        s += f" `{clip(loc.code, 90)}`"
    return s


def headline(rep):
    st = rep.stats
    parts = []
    if rep.errors:
        parts.append(f"{len(rep.errors)} error{'s' * (len(rep.errors) != 1)}")
    if st.get("graph_break_sites"):
        parts.append(f"{st['graph_break_sites']} graph-break site{'s' * (st['graph_break_sites'] != 1)}")
    if st.get("functions_recompiling") or st.get("recompile_limit_hit"):
        n = st.get("recompiles", 0)
        parts.append(f"{n} recompile{'s' * (n != 1)}" + (" (LIMIT HIT)" if st.get("recompile_limit_hit") else ""))
    if (rep.vs_eager or {}).get("differ"):
        if not rep.vs_eager.get("compiled_stopped"):   # (the compiled run's error is the difference: named above)
            parts.append("the run without torch.compile failed earlier" if rep.vs_eager.get("stopped_early")
                         else "output differs from eager")
    if rep.compiled_again:
        parts.append(f"{rep.compiled_again['function']} compiled from scratch {rep.compiled_again['times']}×")
    silent = [f for f in rep.semantics if not f.get("explains_error")]
    if silent:   # a by-design difference seen on a run that did not fail on it: never "clean"
        parts.append(f"likely differs from eager by design ({', '.join(f['id'] for f in silent[:2])})")
    if not parts:
        parts.append("nothing found so far" if rep.interrupted else
                     "nothing compiled: Dynamo captured no graph" if rep.used_compile and rep.stats.get("empty_frames")
                     and not rep.graphs else "clean" if rep.used_compile else "torch.compile never ran")
    v = (rep.verdict or {}).get("kind")
    aoti = bool((rep.verdict or {}).get("aoti_inputs"))
    tag = {"fails_eager_too": "a bug in your program (fails without torch.compile too)",
           "before_compile": "an AOTInductor package ran (no torch.compile)" if aoti else
                             "a bug in your program (before torch.compile ran)",
           "compile_only": "only fails compiled", "export_failure": "torch.export failed",
           "saved_program": "an exported or saved program (.pt2) failed to load or run",
           "different_failure_eager": "fails differently without torch.compile",
           "not_sure": "not sure whose bug", "needs_input": "the program needs standard input (--stdin FILE)",
           "no_torch": "its Python has no torch"}.get(v)
    return ", ".join(parts) + (f": {tag}" if tag else "")


def verdict_lines(rep, base=None):
    """The verdict, first thing after the title: whose bug it is and what decided it."""
    v = rep.verdict
    if not v:
        return []
    out = [f"**Verdict: {v['summary']}**"]
    e = v.get("eager") or {}
    if e and v["kind"] != "compile_only":
        if e.get("timed_out"):
            out.append(f"Eager re-run (compilation off): timed out after {e.get('duration_s', 0):.0f} s")
        elif e.get("type"):
            where = f" at {e['location']}" if e.get("location") else ""
            msg = clip((e.get("message") or "").splitlines()[0], 200) if e.get("message") else ""
            out.append(f"Eager re-run (compilation off){where}: {e['type']}" + (f": {msg}" if msg else " as well"))
    ai = v.get("aoti_inputs")
    if ai and ai.get("size1_stride"):
        out.append(f"AOTI input check re-run (AOTI_RUNTIME_CHECK_INPUTS=1): it stopped at `{clip(ai['size1_stride'], 160)}`: "
                   "a stride on a size-1 dim, which reads the same memory whatever its value, so not the cause; torch's "
                   "check compares every stride exactly and checked nothing after it (to check the rest, call the "
                   "package with that input made contiguous like its build, e.g. `x.contiguous()`)")
    elif ai and ai.get("structure"):
        out.append("AOTI input check re-run (AOTI_RUNTIME_CHECK_INPUTS=1, and each call's input structure compared with "
                   "the export's): the structure differs (above)")
    elif ai and not ai.get("mismatch"):
        out.append("AOTI input check re-run (AOTI_RUNTIME_CHECK_INPUTS=1): " + (
            "timed out" if ai.get("timed_out") else f"no input error (exit {ai.get('exit_code')}): where the package "
            "was called, its inputs' strides, dtype, device, static sizes and structure match its build"))
    acc = v.get("accuracy")
    if acc:
        out.append(accuracy_line(acc))
    route = {"fails_eager_too": "Route: fix the program" + (" at that line" if v.get("location") else "")
                                + "; torch.compile is not the cause (no bisect).",
             # no compiled code ran; yet the object torch.compile returned may be what fails (blind A/B batch 32:
             # an LR scheduler read __func__ of `opt.step = torch.compile(opt.step)`, a plain function)
             "before_compile": "Route: no torch.compile ran; the AOTInductor package did, on weights it never "
                               "loaded: fix how it is built or loaded (Next); no bisect." if ai and ai.get("weights") else
                               "Route: no torch.compile ran; the AOTInductor package did (an eager re-run runs it too): "
                               "its inputs decide (checked above); no bisect." if ai else
                               "Route: fix the program" + (" at that line" if v.get("location") else "")
                               + "; no compiled code ran, so not a compiler bug (no bisect). If the line uses what "
                                 "torch.compile returned, that is a wrapper (a plain function for a method, an "
                                 "OptimizedModule for a module), not the original.",
             "compile_only": "Route: the error class below decides (graph break under fullgraph → trace-dynamo; "
                             "custom op → its registration; backend/inductor → bisect/minify).",
             "different_failure_eager": "Route: the compiled failure first (below); the run without torch.compile "
                                        "fails later in the program, a second problem." if v.get("eager_further") else
                                        "Route: compare both failures; fix the eager one first if it is in your code.",
             "not_sure": "Route: the graph breaks below, which the program's explain check counts; no bisect."
                         if v.get("explain_call") else
                         "Route: the class below; confirm by running the program without torch.compile.",
             "export_failure": "Route: PyTorch's suggested fixes below, or the export command on a factory.",
             "saved_program": "Route: the error below comes from a saved program (.pt2) loaded or called at that "
                              "line, not from tracing: how it was exported, built, loaded or called (below).",
             "not_checked": "Route: the class below (unconfirmed: eager check skipped).",
             "needs_input": "Route: put the input in a file and run again with --stdin FILE (below); "
                            "torch.compile is not involved.",
             "no_torch": "Route: name the Python that has torch in the command (-- /path/to/venv/bin/python "
                         "prog.py); torch.compile is not involved."}.get(v["kind"])
    if acc:
        route = {"rounding": "Route: fix the program's output check (the gate below); not a compiler bug, no bisect.",
                 "miscompile": "Route: a measured miscompile: bisect the layer and pass (command below), then minify.",
                 "noise": "Route: the output is rounding noise without torch.compile too: fix the program's math "
                          "first (below), then run again; bisect only if it still fails.",
                 }.get(acc.get("verdict"), "Route: the cheapest step that can decide (below); bisect only if "
                                           "nothing cheaper can.")
        if acc.get("next") == "fix_math_at":
            route = ("Route: at the values that differ, eager is as far from fp64 as compiled: fix the program's float "
                     "math there first (below), then run again; bisect only if it still fails.")
        elif acc.get("emulate_precision_casts") == "passes":   # extra_runs._check_precision_casts
            route = ("Route: Inductor keeps low-precision steps in float32 where eager rounds each (measured: passes "
                     "with emulate_precision_casts): the program's low-precision step (below); no bisect.")
        elif acc.get("next") == "fix_math_eager":
            route = ("Route: compiled is the accurate side (measured against fp64): the program's low-precision step "
                     "(below), not a compiler bug; no bisect.")
    if v.get("compile_counts"):   # runs.run_and_analyze: the failing check counts graphs or recompiles
        route = ("Route: a check of what torch.compile did (graphs, recompiles, breaks), not numbers: the breaks and "
                 "recompiles it counts (Next); no accuracy run or bisect.")
    elif v.get("timing"):   # runs.run_and_analyze: the failing check measures time
        route = "Route: a check of time, not numbers: the compiles inside the timed part (Next); no accuracy run or bisect."
    elif rep.errors and knowledge.triage_row_of(rep.errors[0].category).get("fix_at_export"):
        route = "Route: the export's inputs (Next 1); not the calling line, not a compiler bug (no bisect)."
    elif rep.errors and rep.errors[0].category == "fails_in_dynamo":   # measured: fallback_random and Dynamo alone
        route = ("Route: Dynamo (it fails with backend=\"eager\" too, measured): the Python state it traced, not the "
                 "graphs' code; no accuracy run or bisect.")
    elif rep.errors and rep.errors[0].category == "warm_cache_only":   # measured after the accuracy check
        route = "Route: the warm compile cache (an empty one passes, measured): not the graphs' code, no bisect."
    elif rep.errors and rep.errors[0].category == "vectorized_cpu_code":   # measured after the accuracy check
        route = ("Route: Inductor's vectorized CPU code (cpp.simdlen=1 passes, measured): that workaround, then "
                 "minify for the upstream report; no bisect.")
    elif rep.errors and rep.errors[0].category == "dynamic_number_graph":   # measured after the accuracy check
        route = ("Route: the graph where a number passed in is symbolic (automatic_dynamic_shapes=False passes, "
                 "measured): keep that number out of the graph (below), report it upstream; no bisect.")
    elif v["kind"] == "compile_only" and rep.errors and rep.errors[0].side == "semantics":
        route = "Route: torch.compile behaves differently here by design (the section above): its fix, no bisect."
    elif v["kind"] == "compile_only" and not acc and any(s.get("decides") for s in rep.next_steps):
        # a Next step names the failure's cause and its fix (a row of ours, a compiled generator): not the
        # generic "backend → bisect" route (batch 22's review: the Route line contradicted that Next)
        n = next(i for i, s in enumerate(rep.next_steps, 1) if s.get("decides"))
        route = f"Route: Next {n} below names the cause and its fix; no bisect."
    elif v["kind"] in ("export_failure", "saved_program") and any(s.get("decides") for s in rep.next_steps):
        n = next(i for i, s in enumerate(rep.next_steps, 1) if s.get("decides"))
        what = "export error" if v["kind"] == "export_failure" else "saved program's error"
        route = f"Route: Next {n} below names the cause of the {what} and its fix."
    if route:
        out.append(route)
    return out


def accuracy_line(acc):
    """The measurement of a failure that happens only compiled: its verdict, numbers and cost."""
    cost = (f"; one more run: {acc['duration_s']:.0f} s" + (f", {acc['cost_ratio']:g}× the compiled run"
                                                              if acc.get("cost_ratio") else "")) if acc.get("duration_s") else ""
    checked = (f"{acc['graphs_checked']} graph(s), {acc['outputs_checked']} output(s) vs eager and fp64"
               if acc.get("graphs_checked") else "no graph compared")
    casts = ("; but the program passes with TORCHINDUCTOR_EMULATE_PRECISION_CASTS=1 (one more run): Inductor's "
             "float32 math on low-precision values, by design, not a miscompile"
             if acc.get("emulate_precision_casts") == "passes" else "")
    return f"Measured (torch's accuracy check, RMSE rule, repro_tolerance {acc.get('tolerance', 0):g}: {checked}{cost}): " \
           + acc["summary"] + casts


def vs_eager_md(cmp):
    """triage --vs-eager: what the program printed compiled vs eager."""
    if not cmp:
        return []
    out = ["\n## Compiled vs eager output (--vs-eager)", f"**{cmp['verdict']}**"]
    if cmp.get("eager_timed_out"):
        out.append("The eager run timed out: its output is incomplete.")
    elif cmp.get("eager_exit_code") not in (0, None):
        out.append(f"The eager run exited {cmp['eager_exit_code']}.")
    for d in cmp.get("first") or []:
        c = f"line {d['compiled_line']} `{clip(d['compiled'], 120)}`" if d["compiled"] is not None else "—"
        e = f"line {d['eager_line']} `{clip(d['eager'], 120)}`" if d["eager"] is not None else "—"
        out.append(f"- compiled {c} · eager {e}: {d['why']}")
    if cmp.get("differ", 0) > len(cmp.get("first") or []):
        out.append(f"- … {cmp['differ'] - len(cmp['first'])} more (target.stdout vs eager_check.stdout in the run dir)")
    alone = cmp.get("dynamo_alone")
    if alone:
        side = {"like_compiled": " → the difference is in Dynamo (how it ran the Python), not in Inductor",
                "like_eager": " → the difference is in AOTAutograd or Inductor"}.get(alone["result"], " → decides nothing")
        out.append(f"Measured with backend=\"eager\" (Dynamo alone, one more run): {alone['why']}{side}.")
    off = cmp.get("caches_off")
    if off:
        out.append(f"Measured with the compile caches off (TORCHINDUCTOR_FORCE_DISABLE_CACHES=1, one more run; this run "
                   f"had {off['hits']} cache hit(s)): " + ("it prints what eager prints → a cached graph was served "
                                                          "where another was needed." if off["like_eager"] else
                                                          "it still differs → not the caches."))
    return out


def printed_md(lines, total, label):
    """The last lines a run of the program printed, so that a reader needs no second run to see them."""
    if not lines:
        return []
    what = f"last {len(lines)} of {total} lines" if total > len(lines) else f"{total} line{'s' * (total != 1)}"
    return [f"{label} ({what}; torch's warnings and tracebacks left out):", "```", *lines, "```"]


def triage_markdown(rep, target_str=None, cwd=None):
    base = cwd or os.getcwd()
    st = rep.stats
    ended = ("interrupted" if rep.interrupted else "timed out" if rep.timed_out else None)
    out = [f"# torch.compile triage{f' ({ended} after {rep.duration_s or 0:.0f} s)' if ended else ''}: {headline(rep)}"]
    if ended:
        out.append(f"The run {'was interrupted' if rep.interrupted else 'timed out'} after {rep.duration_s or 0:.0f} s: "
                   "this report is what it did until then.")
    out += verdict_lines(rep, base)
    run = f"`{clip(target_str, 120)}`" if target_str else "trace"
    if rep.timed_out:
        status = "TIMED OUT"
    elif rep.interrupted:
        status = "INTERRUPTED (Ctrl-C)"
    elif rep.signal:
        status = f"killed by {rep.signal}"
    elif rep.exit_code is not None:
        status = f"exit {rep.exit_code}"
    else:
        status = "recorded trace"
    facts = [f"{run} → {status}" + (f" in {rep.duration_s:.1f} s" if rep.duration_s else "")]
    if rep.torch_version:
        facts.append(f"torch {rep.torch_version}")
    if rep.used_compile:
        facts.append(f"{st.get('graphs', 0)} graph{'s' * (st.get('graphs', 0) != 1)}, {st.get('ops', 0)} ops")
        ct = f"compile {st.get('compile_time_s', 0):.1f} s"
        if st.get("compile_share") is not None:
            ct += f" ({st['compile_share'] * 100:.0f}% of wall)"
        facts.append(ct)
        hits, misses = st.get("fx_graph_cache_hits", 0), st.get("fx_graph_cache_misses", 0)
        if hits or misses:
            facts.append(f"FX cache {hits} hit / {misses} miss")
    out.append(" · ".join(facts))
    out.append(f"Run dir: {rep.run_dir}")
    said = {(e.message or "").strip().splitlines()[0] for e in rep.errors if (e.message or "").strip()}
    if not {ln.removeprefix("[stderr] ") for ln in rep.printed_tail} <= said:   # not only the error line below
        out += printed_md(rep.printed_tail, rep.printed_lines, "It printed")
    # PyTorch's own warnings, left out of "It printed" (blind A/B batch 12: a custom op's aliasing warning, an
    # error in CI, was only in stderr): those a triage row explains in full, the others counted
    known = [w for w in rep.torch_warnings if w.get("row")]
    other = [w for w in rep.torch_warnings if not w.get("row")]
    for w in known:
        who = "The program warns (quoting torch's error)" if w.get("by") == "program" else "PyTorch warns"
        out.append(f"{who}: {w['warning']}\n  → [{w['row']}] {w['advice']}")
    if other:
        out.append(f"PyTorch's other warnings ({len(other)}, in target.stderr): {clip(other[0]['warning'], 160)}"
                   + (" …" if len(other) > 1 else ""))
    out += semantics.markdown(rep)

    if rep.errors:
        out.append("\n## Errors")
        for i, e in enumerate(rep.errors, 1):
            # the fallback row's id reads "user error" beside a failure that happens only compiled (blind A/B batch 12)
            tag = ("no error class; only fails compiled" if e.category == "user_error" and
                   (rep.verdict or {}).get("kind") == "compile_only" else e.category)
            out.append(f"{i}. **{e.type}** — {e.title} `[{tag}]`" + (f" (compile {e.compile_id})" if e.compile_id else ""))
            if e.location:
                out.append(f"   at {_where(e.location, base)}")
            inner = e.inner or {}
            if inner.get("op"):
                ins = ", ".join(inner.get("inputs") or [])
                out.append(f"   op `{inner['op']}`" + (f" on ({ins})" if ins else "") + f" raised {inner.get('type')}:")
                out.append("   > " + clip((inner.get("message") or "").splitlines()[0] if inner.get("message") else "", 300))
            elif inner.get("message"):
                out.append(f"   > {inner.get('type')}: " + clip(inner["message"].splitlines()[0], 300)
                           + (f" (inside backend '{inner['backend']}')" if inner.get("backend") else ""))
            elif e.message:
                out.append("   > " + clip(e.message.splitlines()[0], 240))
                # a constraint violation's own lines: which dim, its range and the guard (PyTorch's words)
                out += ["   > " + clip(ln.strip(), 300) for ln in e.message.splitlines()[1:4]
                        if ln.strip().startswith("- Not all values of ")]
                out += ["   " + ln for ln in e.message.splitlines()[1:] if ln.startswith("(the program caught and printed")]
            for d in inner.get("compiler_errors") or []:
                out.append(f"   C++ compiler: {os.path.basename(d['file'])}:{d['line']}: error: {clip(d['message'], 200)}")
                if d.get("code"):
                    out.append(f"     `{clip(d['code'].strip(), 200)}`")
                if d.get("note"):
                    out.append(f"     note at :{d['note_line']}: {clip(d['note'], 160)}"
                               + (f" `{clip(d['note_code'].strip(), 160)}`" if d.get("note_code") else ""))
            if inner.get("lowered"):
                lw = inner["lowered"]
                out.append(f"   Inductor was lowering {lw.get('target') or 'an op'} traced from {lw['file']}:{lw['line']}"
                           + (f" `{clip(lw['code'], 120)}`" if lw.get("code") else ""))
            if inner.get("compiler_errors"):
                out.append(f"   Generated kernel: {inner['compiler_errors'][0]['file']}")
            if e.suggested_fixes:
                out.append("   PyTorch's suggested fixes:")
                out += [f"   - `{clip(f, 200)}`" for f in e.suggested_fixes[:6]]
            if e.advice:
                out.append(f"   Why/what: {clip(e.advice, 1000 if e.category == 'accuracy_tolerance' else 400)}")
            if e.next_command and not (i == 1 and (rep.verdict or {}).get("kind") in ("fails_eager_too", "before_compile")):
                out.append(f"   Next ({e.skill} skill): `{e.next_command}`")

    out += vs_eager_md(rep.vs_eager)
    out += graph_breaks_md(rep, base)
    out += recompiles_md(rep, base)

    if len({g.function.split(" (")[0] for g in rep.graphs}) > 1 or any(g.failed for g in rep.graphs):
        rows = []
        for g in sorted(rep.graphs, key=lambda g: -(g.compile_time_s or 0))[:8]:
            rows.append([g.compile_id, clip(g.function, 50), _where(g.location, base).split(" `")[0] if g.location else "",
                         g.ops if g.ops is not None else "-", f"{g.compile_time_s:.2f}" if g.compile_time_s is not None else "-",
                         g.failed or ""])
        out.append(f"\n## Graphs (top {len(rows)} by compile time)")
        out.append(table(["id", "function", "defined at", "ops", "compile s", "failed"], rows))

    out.append("\n## Next")
    for i, s in enumerate(rep.next_steps, 1):
        cmd = f": `{s['command']}`" if s.get("command") else ""
        skill = f" → {s['skill']} skill" if s.get("skill") else ""
        out.append(f"{i}. {s['why']}{skill}{cmd}")
    for n in rep.notes:
        out.append(f"Note: {n}")
    arts = []
    for k, v in rep.artifacts.items():
        if v:
            rel = os.path.relpath(v, rep.run_dir) if rep.run_dir and v.startswith(rep.run_dir + os.sep) else v
            arts.append(rel + ("/" if os.path.isdir(v) else ""))
    out.append("\nArtifacts in the run dir: " + ", ".join(["report.json", "report.md"] + arts))
    return "\n".join(out)
