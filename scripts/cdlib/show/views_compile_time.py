"""Views of a compile-time result: compact Markdown for the agent, and a self-contained SVG bar chart
(one stacked bar of phases per run) for a person. No dependencies."""
import html
import os

from ..decide.compile_time import CACHE_NAMES, PHASES, PHASE_LABEL
from .output import clip, table, target_header

COLORS = {"dynamo": "#4e79a7", "guards": "#a0cbe8", "aot": "#f28e2b", "passes": "#ffbe7d", "lowering": "#59a14f",
          "scheduling": "#8cd17d", "codegen": "#b6992d", "kernel_compile": "#e15759", "autotune": "#ff9d9a",
          "cache": "#79706e", "other": "#bab0ac"}
RUN_LABEL = {"cold": "cold cache", "warm": "warm cache (same dir)", "portable": "fresh dir + loaded artifacts",
             "regional": "regional (cold cache)", "trace": "recorded trace",
             "empty_cache": "empty cache dir (fresh machine)"}


def svg_chart(runs):
    """runs: [(label, summary)] -> an SVG document: one horizontal stacked bar per run, seconds on x."""
    w, left, bar_h, gap = 760, 210, 26, 14
    top = 34
    maxs = max([s["compile_time_s"] for _, s in runs] + [0.001])
    scale = (w - left - 70) / maxs
    h = top + len(runs) * (bar_h + gap) + 24 + 18 * ((len(PHASES) + 3) // 4)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif" font-size="12">',
           '<text x="8" y="20" font-size="14" font-weight="bold">torch.compile time per phase (seconds)</text>']
    y = top
    for label, s in runs:
        out.append(f'<text x="8" y="{y + 17}">{html.escape(label)}</text>')
        x = left
        for p in s["phases"]:
            pw = p["seconds"] * scale
            if pw <= 0:
                continue
            out.append(f'<rect x="{x:.1f}" y="{y}" width="{pw:.1f}" height="{bar_h}" fill="{COLORS[p["phase"]]}">'
                       f'<title>{html.escape(p["label"])}: {p["seconds"]} s ({round(100 * (p["share"] or 0))}%)</title></rect>')
            x += pw
        out.append(f'<text x="{x + 6:.1f}" y="{y + 17}">{s["compile_time_s"]} s</text>')
        y += bar_h + gap
    y += 6
    for i, (k, lab) in enumerate(PHASES):
        cx, cy = 8 + (i % 4) * 188, y + (i // 4) * 18
        out.append(f'<rect x="{cx}" y="{cy}" width="12" height="12" fill="{COLORS[k]}"/>'
                   f'<text x="{cx + 16}" y="{cy + 11}">{html.escape(lab)}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def _pct(x):
    return f"{round(100 * x)}%" if isinstance(x, (int, float)) else "?"


def markdown(res):
    s = res["summary"]
    lines = [f"# Compile time: {s['compile_time_s']} s in {s['compiled_frames']} compiled frame(s)"]
    lines += target_header(res)
    runs = res.get("runs", {})
    if "cold" in runs:
        c = runs["cold"]
        lines.append(f"cold run (fresh private cache): wall {c['wall_s']} s, compile {c['compile_s']} s"
                     + (f" = {_pct(c['compile_s'] / c['wall_s'])} of wall" if c.get("wall_s") else ""))
    if s["recompiles"]:
        exp = s.get("expected_recompiles") or 0
        whys = list(dict.fromkeys(f["recompile_expected"] for f in s["frames"] if f.get("recompile_expected")))
        verdict = ", nothing to fix"
        if s.get("costly_dynamic"):   # expected by torch, yet the dynamic graph is the cost
            verdict = " by torch, but a dynamic graph cost more than a static one: " + "; ".join(
                f"`{d['function']}` traced and lowered in {d['trace_s']} s dynamic vs {d['first_trace_s']} s first"
                for d in s["costly_dynamic"][:2]) + " (see What would help)"
        lines.append(f"recompiles: {s['recompiles']} compile(s), {s['recompile_time_s']} s = "
                     f"{_pct(s['recompile_share'])} of compile time"
                     + (f"; {'all' if exp == s['recompiles'] else exp} expected{verdict} "
                        f"({s['expected_recompile_time_s']} s; {'; '.join(whys[:2])})" if exp else ""))
    if s.get("restart_time_s"):
        lines.append(f"graph-break restarts: {s['restart_time_s']} s of Dynamo tracing redone")
    lines.append("")
    if not s["compiled_frames"]:
        e = runs.get("empty_cache")
        if e:
            lines.append(f"empty-cache run (no CPU-feature test programs built yet, as on a fresh machine): wall "
                         f"{e['wall_s']} s")
        lines += _suggestions_md(res.get("suggestions"))
        lines += [f"Note: {n}" for n in res.get("notes", [])]
        return "\n".join(lines)
    lines.append("## Phases")
    lines.append(table(["phase", "s", "share"], [[p["label"], p["seconds"], _pct(p["share"])]
                                                for p in sorted(s["phases"], key=lambda p: -p["seconds"])]))
    lines.append("(timed regions of the trace; while a C++/Triton compile runs, Inductor time counts as kernel compile)")
    lines.append("")
    lines.append("## Costliest frames")
    rows = []
    for r in s["frames"][:5]:
        top = ", ".join(f"{PHASE_LABEL[k].split(' (')[0]} {v}" for k, v in list(r["phases"].items())[:2])
        rows.append([r["compile_id"] + (" (recompile)" if r["recompile"] else ""), f"`{r['function']}`",
                     r["location"] or "", r["ops"], r["total_s"], top, " ".join(r["caches"])])
    lines.append(table(["compile", "function", "where", "ops", "s", "top phases", "caches"], rows))
    if len(s["frames"]) > 5:
        lines.append(f"(+{len(s['frames']) - 5} more frames in report.json)")
    lines.append("")
    lines += _caches_md(res)
    lines += _suggestions_md(res.get("suggestions"))
    lines.append("")
    arts = res.get("artifacts", {})
    shown = [f"{k}: {v}" for k, v in arts.items() if k in ("chart", "tlparse")]
    if shown:
        lines.append("Files: " + " · ".join(shown))
    for n in res.get("notes", []):
        lines.append(f"Note: {n}")
    if res.get("next"):
        lines.append(f"Next: `{res['next']}`")
    return "\n".join(lines)


def _suggestions_md(sug):
    lines = []
    if sug:
        lines.append("")
        lines.append("## What would help")
        for i, g in enumerate(sug, 1):
            saving = g.get("saving") or "not measured"
            if g.get("inconclusive"):
                lines.append(f"{i}. (not conclusive on this busy machine) {g['title']} — {saving}. {g['fix']}")
                continue
            if not g.get("helps", True):
                lines.append(f"{i}. (measured, did not help here) {g['title']} — {saving}.")
                continue
            lines.append(f"{i}. **{g['title']}** — {saving}. {g['fix']}"
                         + (" (Reuses an earlier compile: no help where every start is cold.)"
                            if g.get("reuses_a_compile") else ""))
            if g.get("command"):
                lines.append(f"   `{g['command']}`")
    return lines


def _caches_md(res):
    s, runs = res["summary"], res.get("runs", {})
    lines = ["## Caches"]
    if len(runs) > 1:
        hdr = ["run", "wall s", "compile s"] + [CACHE_NAMES[c].split(" (")[0] + " hit/miss/bypass" for c in CACHE_NAMES] \
              + ["cache dir files"]
        rows = []
        for tag, r in runs.items():
            cs = r["caches"]
            rows.append([RUN_LABEL.get(tag, tag), r["wall_s"], r["compile_s"]]
                        + [f"{(cs.get(c) or {}).get('hit', 0)}/{(cs.get(c) or {}).get('miss', 0)}/"
                           f"{(cs.get(c) or {}).get('bypass', 0)}" for c in CACHE_NAMES]
                        + [_files(r.get("cache_files"))])
        lines.append(table(hdr, rows))
    else:
        for c, name in CACHE_NAMES.items():
            x = s["caches"].get(c)
            if x:
                lines.append(f"- {name}: {x['hit']} hit, {x['miss']} miss, {x['bypass']} bypass"
                             + (f" (hits saved {x['time_saved_s']} s, PyTorch's estimate)" if x.get("time_saved_s") else ""))
        if not s["caches"]:
            lines.append("- no FX graph / AOTAutograd cache events (not Inductor, or caches disabled)")
    for c, x in s["caches"].items():
        for r in x["reasons"]:
            if r["state"] == "miss":
                continue
            lines.append(f"- {CACHE_NAMES.get(c, c)} {r['state']} ×{r['count']} ({', '.join(r['compile_ids'][:4])}): "
                         f"PyTorch says \"{clip(r['reason'], 240)}\"")
    a = s["autotune"]
    if a["max_autotune"] or a["compile_time_autotune_s"] or a["runtime_triton_autotune_s"]:
        lines.append(f"- autotuning: max_autotune={a['max_autotune']}, {a['compile_time_autotune_s']} s while "
                     f"compiling, {a['runtime_triton_autotune_s']} s at first run (Triton configs)")
    return lines


def _files(d):
    if not d:
        return ""
    return ", ".join(f"{k} {v}" for k, v in d.items())


def write_chart(run_dir, runs):
    path = os.path.join(run_dir, "compile_time.svg")
    with open(path, "w", encoding="utf-8") as f:
        f.write(svg_chart(runs))
    return path
