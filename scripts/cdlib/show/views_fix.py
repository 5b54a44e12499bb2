"""Markdown of a fix result (commands/fix.py, decide/fixes.py result): the recommended line, the fixes
tried ranked by measured gain, the findings that need a code change, the next command."""
import os

from ..cmdline import cli_command, clip
from ..decide import compare
from .output import table


def _fmt_pair(p, fmt="{}"):
    a, b = p
    f = lambda v: "-" if v is None else fmt.format(v)  # noqa: E731
    return f"{f(a)}→{f(b)}"


def markdown(r):
    b = r["baseline"]
    good = [x for x in r["fixes"] if x["label"] == "verified (measured)"]
    out = [f"# fix: {len(good)} verified fix(es) for {r['findings_with_verified_fix']}/{r['findings']} finding(s)",
           f"`{clip(r['target'], 120)}` · baseline: {b['graph_break_sites']} break site(s), {b['recompiles']} recompile(s), "
           f"{b['graphs']} graph(s), {compare._exit(b)} · {len(r['fixes'])} candidate(s) in {r['elapsed_s']} s "
           f"({r['jobs']} at a time)", f"Run dir: {r['run_dir']}"]
    if not r["deterministic"]:
        out.append("⚠ the program prints different output on two plain runs: output comparison skipped")
    rc = r.get("recommended")
    if rc:
        e = rc["effect"]
        how = "measured together" if rc["measured_together"] else "not run together (see --no-combine / timeout)"
        out.append(f"\n## Recommended ({', '.join(rc['members'])}; {how})")
        where = "Add after your imports (see the note)" if rc.get("note") else "Add after `import torch`"
        out.append(f"{where}:\n```python\n{rc['code']}\n```" + (f"\nNote: {rc['note']}" if rc.get("note") else ""))
        left = e["recompiles"][1] or 0
        expected_left = " (all expected one-time recompiles)" if left and (e.get("unexpected_recompiles") or
                                                                          [None, None])[1] == 0 else ""
        out.append(f"Effect: breaks {_fmt_pair(e['graph_break_sites'])}, recompiles {_fmt_pair(e['recompiles'])}"
                   f"{expected_left}, "
                   f"graphs {_fmt_pair(e['graphs'])}, compile s {_fmt_pair(e['compile_time_s'], '{:.2f}')}, "
                   f"{e['exit'][1]}, output {e['output']}" + (" ⚠ FAILS" if e["fails"] else ""))
        if rc.get("trial_dir"):
            out.append(f"Check it yourself: `{cli_command('compare', b['run_dir'], rc['trial_dir'])}`")
    if r["fixes"]:
        out.append("\n## Fixes tried (ranked by measured gain)")
        rows = []
        for i, x in enumerate(r["fixes"], 1):
            e = x["effect"]
            if not e:
                rows.append([i, x["id"], x["label"], "", "", "", "", "", "", ""])
                continue
            rows.append([i, x["id"], x["label"], _fmt_pair(e["graph_break_sites"]), _fmt_pair(e["recompiles"]),
                         _fmt_pair(e["graphs"]), _fmt_pair(e["compile_time_s"], "{:.2f}"),
                         _fmt_pair(e["wall_time_s"], "{:.1f}"), e["exit"][1],
                         e["output"].split(" (")[0]])
        out.append(table(["#", "fix", "result", "breaks", "recompiles", "graphs", "compile s", "wall s", "exit", "output"], rows))
        for x in r["fixes"]:
            e = x["effect"] or {}
            extra = []
            if e.get("error"):
                extra.append(f"error: **{e['error']['type']}** `{clip(e['error']['message'], 160)}`")
            if x.get("not_applied"):
                extra.append(f"not applied: `{clip(x['not_applied'], 160)}`")
            if x.get("note"):
                extra.append(x["note"])
            if e.get("breaks_moved"):
                m = e["breaks_moved"]
                extra.append(f"removes {clip('; '.join(m['fixed']), 120)} but breaks at {clip('; '.join(m['new']), 160)}")
            if e.get("output_diff"):
                d = e["output_diff"]
                extra.append(f"output line {d['line']}: `{d['before']}` → `{d['after']}`")
            out.append(f"- **{x['id']}**: {x['title']} — for {clip('; '.join(x['findings']), 160)}; "
                       f"code: `{x['code']}`" + ("; " + "; ".join(extra) if extra else ""))
    if r["code_changes"]:
        out.append(f"\n## Not tried (needs a code change): {len(r['code_changes'])}")
        for c in r["code_changes"][:8]:
            out.append(f"- {c['finding']}" if c["finding"].startswith(os.path.basename(c["at"].split(":")[0]) + ":")
                       else f"- {c['at']}" + (f" `{clip(c['line'], 80)}`" if c["line"] else "") + f": {c['finding']}")
            if c["config_fixes_tried"]:
                out.append(f"  Config fixes tried, none verified: {'; '.join(c['config_fixes_tried'])}")
            if c["pytorch_hints"]:
                out.append(f"  PyTorch: {clip(c['pytorch_hints'][0], 240)}")
            if c["edit"]:
                out.append(f"  Edit: {c['edit']}")
    cmp_cmd = cli_command('compare', b['run_dir'], '--', *_target_words(r))
    out.append(f"\nNote: {r['notes'][0]}" if r.get("notes") else "")
    if rc:
        out.append(f"\nNext: apply the recommended line, then `{cmp_cmd}`")
    elif r["code_changes"]:
        out.append(f"\nNext: no config fix was verified; make the code edit above, then `{cmp_cmd}`")
    else:
        out.append("\nNext: nothing to fix here (no graph break or recompile that needs one)")
    return "\n".join(out)


def _target_words(r):
    import shlex
    return r.get("target_argv") or shlex.split(r["target"])
