"""Markdown of a compare result (decide/compare.py builds it): the before/after table, graph breaks
fixed / still / new, recompiles; and the table of one command under several torch releases."""
import os

from ..cmdline import clip
from ..decide.compare import _exit
from ..decide.compare_release import release_changes
from ..decide.compile_time import PHASE_LABEL
from .output import table
from .views import printed_md


def _num(v, fmt="{}"):
    return "-" if v is None else fmt.format(v)


def facts_rows(fb, fa):
    """Table rows (name, before, after) for the numbers of two runs."""
    t = "{:.2f}"
    return [["exit", _exit(fb), _exit(fa)],
            ["graph-break sites (hits)", f"{fb['graph_break_sites']} ({fb['graph_break_hits']})",
             f"{fa['graph_break_sites']} ({fa['graph_break_hits']})"],
            ["recompiles", _num(fb["recompiles"]) + (" LIMIT HIT" if fb["recompile_limit_hit"] else ""),
             _num(fa["recompiles"]) + (" LIMIT HIT" if fa["recompile_limit_hit"] else "")],
            ["graphs / ops", f"{_num(fb['graphs'])} / {_num(fb['ops'])}", f"{_num(fa['graphs'])} / {_num(fa['ops'])}"],
            ["compile s", _num(fb["compile_time_s"], t), _num(fa["compile_time_s"], t)],
            ["wall s", _num(fb["wall_time_s"], t), _num(fa["wall_time_s"], t)]]


def markdown(res, next_cmd=None):
    b, a, g = res["before"], res["after"], res["graph_breaks"]
    out = [f"# compare: {res['verdict']}",
           f"before {b['run_dir']} · after {a['run_dir']}", "",
           table(["", "before", "after"], facts_rows(b, a))]
    if res.get("note"):
        out.append(f"⚠ {res['note']}")
    cs, ws = a["compile_time_s"], a["wall_time_s"]
    if cs and ws and b["wall_time_s"] and ws >= b["wall_time_s"] and cs > 0.3 * ws:
        out.append(f"wall s of this run is mostly compiling ({cs:.1f} of {ws:.1f} s): it does not show the speed of "
                   "the compiled steps; time steps after warm-up for that (trace-inductor skill: perf)")
    for name, f in (("before", b), ("after", a)):
        if f["first_error"]:
            e = f["first_error"]
            out.append(f"first error {name}: **{e['type']}** `{clip(e['message'], 200)}`")
    out.append(f"output: {res['output']}" + (f" (line {res['output_diff']['line']}: `{res['output_diff']['before']}` → "
                                             f"`{res['output_diff']['after']}`)" if res.get("output_diff") else "")
               + (" — clock stamps and timings masked" if res["output"] != "unknown (no captured output)" else ""))
    if res["output"] == "changed" and b["exit_code"] == 0 and a["exit_code"] == 0:   # not after a crash
        out.append("  (expected when your change was meant to change the results; otherwise: a program that draws "
                   "random inputs without a seed prints different numbers on any two runs: "
                   "seed it (torch.manual_seed) or compare eager vs compiled inside one run; and random ops inside "
                   "compiled code (randn_like, dropout) draw other numbers than eager, so a function that now runs "
                   "compiled where it ran eagerly prints others: torch._inductor.config.fallback_random = True makes "
                   "them match)")
    ap = res.get("after_printed") or {}
    out += printed_md(ap.get("tail"), ap.get("lines", 0), "The after run printed")
    out.append(f"\n## Graph breaks: {len(g['fixed'])} fixed, {len(g['still'])} still there, {len(g['new'])} new"
               + (f", {len(g['reached'])} first reached" if g.get("reached") else ""))
    out += [f"- fixed: {x}" for x in g["fixed"][:10]]
    out += [f"- still: {x['after']}" + (f" (the same break, its line edited: was {x['before']})" if x.get("edited") else "")
            for x in g["still"][:10]]
    out += [f"- NEW: {x}" for x in g["new"][:10]]
    if g.get("reached"):
        out.append(f"First seen in the after run ({len(g['reached'])}): in functions the before run never compiled (it "
                   "stopped at its error first); not counted as new")
        out += [f"- reached: {x}" for x in g["reached"][:10]]
    if res["recompiles"]:
        out.append("\n## Recompiles")
        for r in res["recompiles"][:8]:
            lim = " (limit hit → eager)" if r["limit_hit"][1] else (" (limit no longer hit)" if r["limit_hit"][0] else "")
            out.append(f"- **{r['function']}**: {r['before']} → {r['after']}{lim}")
            for tag, cs in (("before", r["causes_before"]), ("after", r["causes_after"])):
                if cs:
                    out.append(f"  - {tag}: " + "; ".join(f"{c['kind']} ×{c['count']} `{clip(c['guard'], 70)}`"
                                                         for c in cs[:3]))
    if next_cmd:
        out.append(f"\nNext: `{next_cmd}`")
    return "\n".join(out)


def releases_markdown(pairs, target):
    vers = [pairs[0]["from"]] + [p["to"] for p in pairs]
    out = [f"# compare across torch releases: {' → '.join(vers)}", f"`{target}` run unmodified under each"]
    for p in pairs:
        ch = release_changes(p, p["to"])
        out.append(f"\n## {p['from']} → {p['to']}: " + ("no change in errors, breaks, recompiles or output"
                                                       if not ch else f"{len(ch)} change(s)"))
        out += [f"- {c}" for c in ch]
        out.append(table(["", p["from"], p["to"]], facts_rows(p["before"], p["after"])))
        out.append(f"runs: {p['before']['run_dir']} · {p['after']['run_dir']}")
    return "\n".join(out)


def compile_time_markdown(res):
    """Markdown of a compile-time compare (decide/compare_compile_time.py)."""
    b, a, fr = res["before"], res["after"], res["frames"]
    t = "{:.2f}"
    rows = [["exit", _num(b["exit_code"]), _num(a["exit_code"])],
            ["compile s (cold)", _num(b["compile_s"], t), _num(a["compile_s"], t)],
            ["wall s", _num(b["wall_s"], t), _num(a["wall_s"], t)],
            ["compiled frames / ops", f"{_num(b['frames'])} / {b['ops']}", f"{_num(a['frames'])} / {a['ops']}"],
            ["recompiles", _num(b["recompiles"]), _num(a["recompiles"])]]
    rows += [[PHASE_LABEL.get(p["phase"], p["phase"]), t.format(p["s"][0]), t.format(p["s"][1])] for p in res["phases"]]
    out = [f"# compare (compile time): {res['verdict']}", f"before {b['run_dir']} · after {a['run_dir']}", "",
           table(["", "before", "after"], rows)]
    if res.get("note"):
        out.append(f"⚠ {res['note']}")
    busy = [n for n, f in (("before", b), ("after", a)) if (f.get("load") or 0) > 1.5 * (os.cpu_count() or 1)]
    if busy:
        out.append(f"⚠ the machine was busy before the {' and '.join(busy)} run (load above its cores): one cold run "
                   "each, so a difference of a few seconds may be noise; repeat on an idle machine")
    out.append(f"output: {res['output']}" + (f" (line {res['output_diff']['line']}: `{res['output_diff']['before']}` → "
                                             f"`{res['output_diff']['after']}`)" if res.get("output_diff") else "")
               + (" — clock stamps and timings masked" if not res["output"].startswith("unknown") else ""))
    out.append(f"\n## Compiled frames: {len(fr['gone'])} gone, {len(fr['new'])} new, {len(fr['changed'])} changed")
    out += [f"- gone: {x}" for x in fr["gone"][:8]] + [f"- NEW: {x}" for x in fr["new"][:8]]
    out += [f"- changed: `{c['function']}` {c['ops'][0]} → {c['ops'][1]} ops, {c['s'][0]} → {c['s'][1]} s"
            for c in fr["changed"]]
    sb, sa = res.get("same_graphs_s") or [0, 0]
    if sb or sa:
        out.append(f"- the frames whose graphs did not change (same ops): {sb} → {sa} s of compile (what the machine did)")
    if res["suggestions_gone"]:
        out.append("\nNo longer suggested: " + "; ".join(clip(x, 120) for x in res["suggestions_gone"]))
    return "\n".join(out)
