"""Markdown of minify's source-stage result (commands/_minify_source.py builds it): nothing reduced, or
the reduced program with its checks and next steps; and the files written next to a verified repro:
the pytest regression test and bug_report.md, a block ready for a PyTorch issue."""
import os
import re

from . import output
from .. import cmdline
from ..run import proc
from ..decide import source_events, source_stage
from ..decide.source_reduce import lines_of


def not_reduced(r):
    """The original did not keep its verdict (r: the result, status not-reduced)."""
    why = r["reason"]
    md = ["# minify --source: nothing reduced", "", f"- program: {r['program']} ({r['lines_before']} lines)",
          f"- {why}."]
    if r.get("graph_stage"):
        prior = r["graph_stage"]
        md.insert(2, f"- graph stage: {prior.get('status')} ({cmdline.clip(prior.get('reason') or '', 160)}; "
                     f"its report: {os.path.join(r['run_dir'], 'report_graph_stage.md')})")
    if "without torch.compile too" in why:
        md += ["", "Fix the program first: `triage` shows where it fails."]
    return "\n".join(md)


def markdown(r):
    ok, stopped, argv, index = r["verified"], r["stopped"], r["target"], r["program_index"]
    title = ("verified repro" if ok else
             "stopped (Ctrl-C): best so far, NOT verified" if stopped == "interrupted" else
             "UNVERIFIED reduction (do not trust it as is)")
    md = [f"# minify --source: {title} ({r['lines_before']} → {r['lines_after']} lines)", ""]
    rows = [["program", r["program"]], ["keeps", r["keeps"]],
            ["queries", f"{r['queries']} run ({r['kept']} kept), {r['reduce_s']:.0f} s; timeout per query "
                        f"{r['query_timeout']:.0f} s; {r['not_run']} more candidates refused without a run "
                        "(source/queries.log says why)"],
            ["check", "; ".join(dict.fromkeys(r["verify"])) or "not run"],
            ["repro", r["repro"]]]
    if r.get("regression_test"):
        rows.append(["regression test", r["regression_test"]])
    if r.get("bug_report"):
        rows.append(["bug report", r["bug_report"]])
    if r.get("graph_stage"):
        g = r["graph_stage"]
        rows.insert(0, ["graph stage", f"{g.get('status')}: {cmdline.clip(g.get('reason') or (g.get('repro_check') or {}).get('why') or '', 140)}"])
    if r["other_python"]:
        rows.append(["other torch", f"{r['other_python']}: the original {r['original_other']}"])
    md += [output.table(["", ""], rows), ""]
    md += [f"- note: {n}" for n in r.get("notes") or []]
    if stopped == "time":
        md += [f"- stopped at the time limit ({r['source_limit']:.0f} s) with the smallest program found so far; "
               f"more time may shrink it further: `{r['more_time_command']}`"]
    if ok:
        md += ["", f"Run it: `{cmdline.command_line([argv[0], r['repro'], *argv[index + 1:]])}`; the test fails until "
                   f"it is fixed: `{cmdline.command_line([argv[0], '-m', 'pytest', '-q', r['regression_test']])}`."]
        triage = cmdline.cli_command("triage", "--", argv[0], r["repro"], *argv[index + 1:])
        if r["mode"] == "graph_break":
            md += ["", f"PyTorch's hint and our recipe for this break: `{triage}`; most breaks are documented "
                       "behaviour with a fix in your code. Attach repro.py to a PyTorch issue only when the hint "
                       "does not fit."]
        elif r["mode"] == "recompile":
            md += ["", f"The guard, PyTorch's hint and our fix for this recompile: `{triage}`; most recompiles are "
                       "documented behaviour (a Python value or a shape that changes) with a fix in your code. "
                       "Attach repro.py to a PyTorch issue only when the fix does not fit."]
        else:
            md += ["", "Failing only compiled is not yet a compiler bug: a difference torch documents (hooks changed "
                       f"after compiling, CUDA-graph outputs reused, rounding) fits this too; `{triage}` names those "
                       "on the small program in one run."]
        if r["mode"] == "failure" and r["good_backend"]:
            md += ["", "Next: file it with bug_report.md (bisect already named the layer)."]
        elif r["mode"] == "failure":
            md += ["", "Next: find the compiler layer on the small program (fast), then file it with bug_report.md:",
                   "", "    " + r["next_command"]]
    elif stopped != "interrupted":
        what = "failure" if r["mode"] == "failure" else r["mode"].replace("_", " ")
        md += ["", f"The reduced program did not keep the {what} 3 of 3 times ({source_stage.verify_how(r['mode'])}): "
                   "it may depend on a warm cache, timing or randomness. repro_source.py is the last kept candidate; "
                   "source/queries.log lists every query."]
    return "\n".join(md)


def write_test(run_dir, oracle, argv, index, n0, n1, timeout, versions):
    import jinja2
    tdir = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "show", "templates")
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(tdir), keep_trailing_newline=True,
                             undefined=jinja2.StrictUndefined)
    gb, rc = oracle.graph_break or {}, oracle.recompile or {}
    name = "test_regression_source.py"
    if oracle.mode == "graph_break":
        what = f"Graph break {gb.get('gb_id') or gb.get('gb_type')} ({gb.get('gb_type')}) in {gb.get('function')}."
        sig, func = what, re.sub(r"\W+", "_", f"no_{gb.get('gb_id') or 'graph_break'}").lower()
    elif oracle.mode == "recompile":
        what = f"Recompile of {rc['function']} on {rc['cause']} (guard: {cmdline.clip(rc['guard'], 120)})."
        sig, func = what, re.sub(r"\W+", "_", f"no_recompile_of_{rc['function']}").strip("_").lower()
    else:
        sig = _end_text(oracle.orig)
        what = f"Failure:  {sig}"
        func = re.sub(r"\W+", "_", f"compiled_{oracle.orig.get('type') or 'exit'}").strip("_").lower()
    text = env.get_template("source_regression_test.py.j2").render(
        mode=oracle.mode, what=what, repro_name="repro.py", lines_before=n0, lines_after=n1,
        good_backend=oracle.good_backend, original_command=cmdline.command_line(argv),
        torch_version=versions[argv[0]], test_name=name, args=list(argv[index + 1:]), signature=sig,
        func_name=func, timeout=int(min(max(oracle.query_timeout * 2, 60), 3600)),
        gb_id=gb.get("gb_id") or gb.get("gb_type") or "",
        guarded=(source_events.guarded_source(rc.get("guard")) or "") if rc else "")
    path = os.path.join(run_dir, name)
    with open(path, "w") as f:
        f.write(text)
    return path


def _end_text(s):
    if s["traceback"]:
        return f"{s['type']}: {cmdline.clip(s['message'], 200)}"
    return (s["signal"] or f"exit {s['rc']}") + (f", after printing: {cmdline.clip(s['last_line'], 200)}"
                                                 if s["last_line"] else "")


def _title(oracle):
    if oracle.mode == "graph_break":
        return "graph break " + (oracle.graph_break or {}).get("gb_id", "")
    if oracle.mode == "recompile":
        return f"recompile of {oracle.recompile['function']} on {oracle.recompile['cause']}"
    return _end_text(oracle.orig)


def bug_report(run_dir, oracle, argv, index, best, checks, versions):
    """A block ready for a PyTorch issue: versions, the repro, compiled vs eager output, the oracle."""
    q = os.path.join(oracle.root, "queries")
    last = sorted(d for d in os.listdir(q) if d.startswith("q"))[-1] if os.path.isdir(q) else None

    def tail(how, n=15):
        if not last:
            return ""
        out = "".join(proc._read(os.path.join(q, last, f"{how}.{ext}"), 20000) for ext in ("stdout", "stderr"))
        lines = [ln for ln in out.splitlines() if ln.strip() and not re.match(r"^[VIWEC]\d{4} ", ln)]
        return "\n".join(lines[-n:])
    tv = versions[argv[0]]
    cmd = cmdline.command_line(["python", "repro.py", *argv[index + 1:]])   # for the issue: no local paths
    md = [f"### torch.compile: {_title(oracle)}",
          "", f"torch {tv}; reduced by compile-debug `minify --source` from {cmdline.command_line(argv)} "
          f"({lines_of(open(oracle.prog, encoding='utf-8').read())} → {lines_of(best)} lines).", "",
          f"Run: `{cmd}`", "", "```python", best.rstrip(), "```", ""]
    if oracle.mode == "graph_break":
        g = oracle.graph_break
        md += [f"Dynamo breaks the graph: {g['gb_id']} ({g['gb_type']}) in `{g['function']}`."]
    elif oracle.mode == "recompile":
        rc = oracle.recompile
        md += [f"Dynamo recompiles `{rc['function']}`: its guard `{rc['guard']}` fails ({rc['kind']}: {rc['cause']})."]
    else:
        md += ["Compiled (fails):", "```", tail("compiled"), "```", "",
               "With compilation off (passes):", "```", tail("eager") or "(nothing printed)", "```"]
        if oracle.good_backend:
            md += ["", f"It passes with `backend=\"{oracle.good_backend}\"` (the last good backend of `bisect`): "
                       "the failure is in the layer after it."]
    if oracle.other_python:   # every kept candidate did what the original did there: the repro too
        md += ["", f"With torch {versions[oracle.other_python]} this repro {oracle.orig_other}, as the original "
                   f"program does (the torch above: {tv})."]
    md += ["", f"Checked 3 times, {source_stage.verify_how(oracle.mode)}: " + "; ".join(dict.fromkeys(checks)) + "."]
    path = os.path.join(run_dir, "bug_report.md")
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(md) + "\n")
    return path
