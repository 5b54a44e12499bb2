"""Markdown of an `export` result (commands/export.py builds it): the attempts table, each problem
with its fix, the dynamic_shapes proposal, artifacts and the next command."""
import re

from . import output
from .. import cmdline
from ..decide.export import divisible_advice, short, unproven_guard_advice


def render(r):
    st = r["status"]
    out = [f"# export {short({'file': r['target']})}: {st.upper()} (torch {r.get('torch_version') or '?'})", ""]
    if r.get("worker_problem"):
        out += [f"Worker: {r['worker_problem']}", ""]
    rows = []
    for name, label in (("non_strict", "non-strict (default)"), ("strict", "strict")):
        a = r["attempts"].get(name)
        if a:
            f = a.get("failure")
            rows.append([label, "ok" if a["ok"] else f"FAIL {f['cls']}", f"{a['seconds']} s",
                         short(f.get("location")) if f else ""])
    d = r.get("draft_export")
    if d:
        if d.get("ok"):
            n = len(d.get("failures") or [])
            rows.append(["draft_export", "no issues" if not n else f"{n} issue(s)", "", ""])
        else:
            rows.append(["draft_export", f"FAIL {cmdline.clip(d.get('error'), 80)}", "", ""])
    if rows:
        out += [output.table(["mode", "result", "time", "where"], rows), ""]
    for i, p in enumerate(r["problems"], 1):
        loc = p.get("location")
        where = f" at {short(loc)}" if loc else ""
        only = " (strict only)" if p["found_by"] == ["strict"] else ""
        out.append(f"## {i}. {p['title']} [{p['cls']}]{where}{only}")
        if loc and loc.get("code"):
            out.append(f"    {loc['code']}")
        elif not loc and p["cls"] in ("constraint_violation", "specialized_dim") and "draft_export" not in p["found_by"]:
            out.append("    (the error names no line; draft_export records it: run without --no-draft)")
        if p.get("message"):
            out.append(f"Error: {cmdline.clip(p['message'], 240)}")
        det = p.get("details") or {}
        if det.get("expr"):
            out.append(f"Expression: `{det['expr']}`")
        if det.get("op"):
            out.append(f"Op: `{det['op']}`")
        if det.get("reason"):
            out.append(f"Reason: {cmdline.clip(det['reason'], 200)}")
        if det.get("gb_id"):
            out.append(f"Graph break: {det['gb_id']} {det.get('gb_type') or ''}")
        for v in (det.get("violations") or [])[:3]:
            out.append(f"- {cmdline.clip(v, 240)}")
        out.append(f"Found by: {', '.join(p['found_by'])}")
        sf = p.get("suggested_fix")
        if sf and sf.get("code"):
            ok = {True: "verified: export succeeds with it", False: "NOT verified: export still fails"}.get(
                sf.get("verified"), "not checked")
            static = [c for c in sf["code"] if re.match(r"^\s*\w+ = \d+\s*$", c)]
            if static and sf.get("verified"):   # `chars = 38`: it exports because the dim is then one size (blind
                # A/B batch 61: "verified" read as the fix for a length the model must serve at every size)
                ok = ("exports, but only because it makes " + ", ".join(c.split("=")[0].strip() for c in static)
                      + " a single size: the exported program then rejects every other size")
            out.append(f"PyTorch's suggested fix ({ok}): `{'; '.join(sf['code'])}`")
            if sf.get("new_dynamic_shapes"):
                out.append(f"  dynamic_shapes = {sf['new_dynamic_shapes']}")
            if sf.get("error"):
                out.append(f"  {cmdline.clip(sf['error'], 200)}")
        divisible = divisible_advice(sf.get("code")) if sf else None   # same text as triage's Next
        eg = (sf or {}).get("eager_off_multiple")
        if divisible and eg:   # measured: the check the advice asks for
            at = ", ".join(f"{k} {v}" for k, v in eg["sizes"].items())
            out.append(f"Measured: the model run eagerly at {at} (not a multiple): " + (
                f"fails ({cmdline.clip(eg.get('error') or '', 160)}): the model itself needs the multiple; "
                "edit it (below) to serve any size" if not eg["ok"] else
                "runs: only the export needs the multiple; apply the suggested fix only if those sizes are all "
                "you serve"))
        # a guard export cannot prove and PyTorch suggests nothing for: the same words as triage's Next
        unproven = None if divisible or p["cls"] != "constraint_violation" else unproven_guard_advice(
            "\n".join(det.get("violations") or []), (sf or {}).get("code"))
        so = r.get("size_oblivious_check") if p["cls"] == "constraint_violation" else None
        if so and not (so.get("verified") and (so.get("at_low_end") or {}).get("ok")):
            unproven = None   # measured: the patch does not export, or the result at the low ends is wrong (review)
        if so:   # measured: the export again under backed_size_oblivious, and the exported program at the low ends
            out.append("Measured: " + _size_oblivious_words(so))
        out.append(f"Fix: {divisible or unproven or p['fix']}")
        out.append("")
    if st == "exported" and r["problems"]:
        if all(p["found_by"] == ["strict"] for p in r["problems"]):
            out += ["Non-strict export (the default) succeeds; the problems above only affect strict=True: "
                    "ignore them unless strict mode is required.", ""]
        else:
            out += ["Export succeeds, but draft_export found problems that make the graph wrong for other "
                    "inputs (or unsound): fix them.", ""]
    if st == "exported" and not r["problems"]:
        out += ["Export succeeds in every mode tried; draft_export found no issues.", ""]
    dyn = r.get("dynamic")
    if dyn:
        out.append("## dynamic_shapes proposal (Dim.AUTO, ranges read back)")
        if dyn.get("code"):
            out += ["```python", dyn["code"].rstrip(), "```"]
            dims = [d for d in dyn.get("dims") or []]
            if dims:
                out.append(output.table(["input", "dim", "example", "dynamic", "range"],
                                        [[d["input"], d["dim"], d["example"], "yes" if d["dynamic"] else "static",
                                          f"[{d['min']}, {d['max'] if d['max'] is not None else 'inf'}]"
                                          if d["dynamic"] else ""] for d in dims]))
            out.append("Verified: export with this spec " + ("succeeds." if dyn.get("verified") else
                       f"FAILS: {cmdline.clip((dyn.get('verify_failure') or {}).get('message') or dyn.get('error'), 200)}"))
            oth = dyn.get("other_sizes") or {}
            if oth.get("checked"):
                out.append(f"Other sizes {oth.get('shapes')}: the exported program "
                           + ("runs and matches eager." if oth.get("ok") else
                              f"does NOT match eager: {cmdline.clip(oth.get('error') or 'different outputs', 200)}"))
            elif oth.get("why"):
                out.append(f"Other sizes not checked: {cmdline.clip(oth['why'], 160)}")
        else:
            f = dyn.get("failure") or {}
            out.append(f"Dim.AUTO export failed ({f.get('cls', '?')} at {short(f.get('location'))}): fix the problems "
                       f"above first." if f else f"No proposal: {dyn.get('error')}")
        out.append("")
    a = r["artifacts"]
    arts = [f"report {a['report_json']}"]
    if a.get("tlparse_html"):
        arts.append(f"tlparse {a['tlparse_html']}")
    out.append("Artifacts: " + "; ".join(arts))
    for n in r.get("notes") or []:
        out.append(f"Note: {n}")
    out += ["", f"Next: `{r['next_command']}`"]
    return "\n".join(out)


def _size_oblivious_words(so):
    """One line: the export under backed_size_oblivious=True, its ranges and the run at the ranges' low ends."""
    if not so.get("verified"):
        f = so.get("failure") or {}
        return (f"exporting under backed_size_oblivious=True fails too ({f.get('cls', '?')}: "
                f"{cmdline.clip(f.get('message') or '', 160)}): not the fix here")
    rc = ", ".join(f"{k} [{lo}, {'inf' if hi is None else hi}]" for k, (lo, hi) in (so.get("range_constraints") or {}).items())
    low = so.get("at_low_end") or {}
    if low.get("checked") and low.get("ok"):
        ran = f"the exported program matches eager at the ranges' low ends (input shapes {low.get('shapes')})"
    elif low.get("checked"):
        ran = (f"but the exported program at the ranges' low ends (input shapes {low.get('shapes')}) "
               + (f"fails: {cmdline.clip(low['error'], 160)}" if low.get("error") else "differs from eager"))
    else:
        ran = f"not run at the low ends ({low.get('why') or '?'})"
    return (f"`with torch.fx.experimental._config.patch(backed_size_oblivious=True):` around the export call exports "
            f"({so.get('seconds')} s; ranges {rc}); {ran}")

