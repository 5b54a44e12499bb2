"""Markdown of minify's graph-stage result (commands/_minify_graph.py builds it): no failure, no graph
dumped, no repro from the minifier, or the repro with its check, then the source stage not run; and
the pytest regression test written next to a verified repro.py."""
import os
import re

from . import output
from .. import cmdline
from ..run.minify_run import read


def markdown(r):
    """The report for every way the graph stage ends (r: its result)."""
    fail = r["original_failure"]
    if r["status"] == "no-failure":
        md = ["# minify: no failure reproduced", "",
              f"The program exited 0 in {fail.get('duration_s') or 0:.0f}s: nothing to minify.",
              "- Wrong results the program does not check? Measure them: `accuracy`; or make the program "
              "raise/exit non-zero on a mismatch, or pass --kind accuracy (Inductor's accuracy check on every graph).",
              "", "Next:", "", "    " + r["next_command"]]
        return "\n".join(md)
    if "minifier" not in r:     # no launcher: nothing was dumped
        md = ["# minify: no repro", "", f"- failure: {fail_text(fail)}", f"- {r['reason']}."]
    elif "repro_check" not in r:
        md = ["# minify: the minifier produced no repro", "", f"- failure: {fail_text(fail)}",
              f"- launcher (unminified, {'?' if r['nodes_before'] is None else r['nodes_before']} nodes): "
              f"{r['launcher']}",
              f"- minifier log: {r['minifier']['stderr']}"]
    else:
        verified, repro, test_path = r["verified"], r["repro"], r["regression_test"]
        md = [f"# minify: {'verified repro' if verified else 'UNVERIFIED repro (do not trust it as is)'}", ""]
        rows = [["failure", fail_text(fail)],
                ["kind", f"{r['repro_kind']} (REPRO_AFTER={r['repro_after']}, LEVEL={r['repro_level']})"],
                ["FX nodes", f"{r['nodes_before']} -> {r['nodes_after']}"],
                ["ops left", ", ".join(r["ops_after"] or []) or "none"],
                ["check", r["repro_check"]["why"]], ["repro", repro]]
        if test_path:
            rows.append(["regression test", test_path])
        md += [output.table(["", ""], rows), ""]
        md += [f"- note: {n}" for n in r["notes"]]
        if verified:
            python = r["python"]
            md += [f"Run the repro: `{cmdline.command_line([python, repro])}`; the test (fails until the bug is fixed): "
                   f"`{cmdline.command_line([python, '-m', 'pytest', '-q', test_path])}`.", "",
                   "Next: find which pass/lowering breaks it (or follow the bug-basher skill):", "",
                   "    " + r["next_command"]]
        else:
            md += ["The repro does not fail like the original: it may have minified to a different bug."]
    if "source_stage" in r:
        md += [f"- source stage not run: {r['source_stage']}", "", "Next: find the failing layer instead:", "",
               "    " + r["next_command"]]
    return "\n".join(md)


def fail_text(fail):
    if fail.get("signal"):
        return f"killed by {fail['signal']}"
    t = fail.get("type") or f"exit {fail.get('rc')}"
    lines = [ln for ln in (fail.get("message") or "").splitlines()
             if ln.strip() and not re.match(r"^[VIWEC]\d{4} ", ln)]
    m = cmdline.clip(lines[-1] if t.startswith("exit") and lines else (lines[0] if lines else ""), 140)
    s = f"{t}: {m}" if m else t
    if fail.get("category"):
        s += f" [{fail['category']}]"
    if fail.get("accuracy_check"):
        s += f"; level-4 check: {fail['accuracy_check']}"
    return s


def write_test(run_dir, repro, kind, fail, before, after, argv, timeout):
    import jinja2
    tdir = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "show", "templates")
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(tdir), keep_trailing_newline=True,
                             undefined=jinja2.StrictUndefined)
    ops = (after or {}).get("ops") or []
    summary = {"error": "compiling/running the graph raises", "accuracy": "the compiled graph gives wrong results",
               "crash": "the compiled graph crashes the process"}[kind]
    func = re.sub(r"\W+", "_", f"{kind}_{ops[0] if ops else 'graph'}").strip("_").lower()
    name = "test_regression.py"
    text = env.get_template("regression_test.py.j2").render(
        summary=summary + (f" ({', '.join(ops)})" if ops else ""), signature=fail_text(fail),
        repro_name=os.path.basename(repro), nodes_before=(before or {}).get("nodes"),
        nodes_after=(after or {}).get("nodes"), ops=ops, original_command=cmdline.command_line(argv),
        torch_version=_torch_version(run_dir), test_name=name, kind=kind, func_name=func,
        timeout=int(min(timeout, 3600)))
    path = os.path.join(run_dir, name)
    with open(path, "w") as f:
        f.write(text)
    return path


def _torch_version(run_dir):
    m = re.search(r"torch version: (\S+)", read(os.path.join(run_dir, "repro.py"), 20000))
    return m.group(1) if m else "unknown"
