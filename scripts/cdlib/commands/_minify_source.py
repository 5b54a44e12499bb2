"""minify's source stage (`minify --source`, and the second stage when no graph-level repro could be
verified): orchestrates source_reduce (oracle, literal pass, pysource-minimize), verifies the result 3
times from a cold cache, writes repro.py, a pytest regression test and a bug-report block, renders."""
import os
import re
import shutil
import time

from ..show import output
from .. import cmdline
from ..run import proc, torch_versions
from ..decide import source_reduce
from ..errors import CliError
from ..decide.source_reduce import SourceError, lines_of


def applies(argv):
    """None when the source stage can run on this command, else the one-line reason it can't."""
    import importlib.util
    try:
        i, path = source_reduce.program_of(argv)
        source_reduce.parse_program(path)
    except SourceError as e:
        return str(e)
    if importlib.util.find_spec("pysource_minimize") is None:
        return ("source reduction needs pysource-minimize: `python3 -m pip install pysource-minimize` (in the Python "
                "that runs compile_debug.py)")
    return None


def run(args, argv, run_dir, *, prior=None, from_dir=None):
    """Reduce the program; emit the report. prior: the graph stage's result (second stage)."""
    t0 = time.monotonic()
    try:
        index, path = source_reduce.program_of(argv)
        text = source_reduce.parse_program(path)
    except SourceError as e:
        raise CliError(str(e))
    limit = args.source_limit
    jobs = args.jobs or 1
    versions = {argv[0]: torch_versions.probe(argv[0])}   # CliError naming the interpreter when it has no torch
    if args.torch_python:
        versions[args.torch_python] = torch_versions.probe(args.torch_python)
    oracle = source_reduce.Oracle(argv, index, run_dir, timeout=args.timeout, good_backend=args.good_backend,
                                  other_python=args.torch_python, jobs=jobs,
                                  mode="graph_break" if args.break_id else "auto", break_id=args.break_id,
                                  warm=not getattr(args, "cold", False))
    result = {"command": "minify", "stage": "source", "run_dir": run_dir, "target": argv, "program": path,
              "lines_before": lines_of(text), "good_backend": args.good_backend, "other_python": args.torch_python}
    if prior:
        result["graph_stage"] = {k: prior.get(k) for k in ("status", "reason", "repro", "nodes_after", "repro_check")}
    if from_dir:
        result["from_run"] = from_dir
    try:
        ok, why = oracle.baseline(text)
    except KeyboardInterrupt:
        oracle.close()
        raise
    result["mode"] = oracle.mode
    result["original"] = oracle.orig
    if oracle.graph_break:
        result["graph_break"] = oracle.graph_break
    if not ok:
        oracle.close()
        result.update(status="not-reduced", verified=False, reason=why, queries=oracle.queries, next_command=None)
        md = ["# minify --source: nothing reduced", "", f"- program: {path} ({result['lines_before']} lines)",
              f"- {why}."]
        if prior:
            md.insert(2, f"- graph stage: {prior.get('status')} ({cmdline.clip(prior.get('reason') or '', 160)}; "
                         f"its report: {os.path.join(run_dir, 'report_graph_stage.md')})")
        if "without torch.compile too" in why:
            md += ["", "Fix the program first: `triage` shows where it fails."]
        output.emit(args, result, "\n".join(md))
        return 0
    n0 = lines_of(text)
    if oracle.warm_wanted:
        proc.progress("source 1/3: the original in a warm interpreter (queries then skip the imports)")
        try:
            oracle.try_warm(text)
        except KeyboardInterrupt:
            oracle.close()
            raise
    result["warm"] = oracle.warm
    proc.progress(f"source 2/3: reducing {path} ({n0} lines; {oracle.mode.replace('_', ' ')}: "
                  f"{_what(oracle)}); queries time out after {oracle.query_timeout:.0f} s; "
                  f"stops after {limit:.0f} s (--source-limit)")
    best_path = os.path.join(run_dir, "repro_source.py")
    state = {"lines": n0, "chars": len(text), "t": time.monotonic()}

    def on_keep(t):
        with open(best_path, "w", encoding="utf-8") as f:
            f.write(t)
        n, c = lines_of(t), len(t)
        step = f"{state['lines']} → {n} lines" if n != state["lines"] else f"{n} lines, {state['chars']} → {c} chars"
        proc.progress(f"query {oracle.queries}: {step}, {time.monotonic() - state['t']:.1f} s")
        state.update(lines=n, chars=c, t=time.monotonic())
    best, stopped = source_reduce.reduce(text, oracle, limit_s=limit, jobs=jobs, on_keep=on_keep)
    reduce_s = time.monotonic() - t0
    result.update(queries=oracle.queries, kept=sum(1 for ok, _ in oracle.memo.values() if ok), not_run=oracle.skipped,
                  lines_after=lines_of(best), chars_before=len(text), chars_after=len(best), stopped=stopped)
    with open(best_path, "w", encoding="utf-8") as f:
        f.write(best)
    verified, checks = False, []
    if stopped != "interrupted":
        proc.progress("source 3/3: verify the reduced program: 3 runs of the full test, each from a cold cache")
        try:
            verified, checks = _verify(oracle, best)
        except KeyboardInterrupt:   # the best so far is written; it stays unverified
            stopped = result["stopped"] = "interrupted"
    oracle.close()
    result.update(verified=verified, verify=checks, wall_s=round(time.monotonic() - t0, 1),
                  reduce_s=round(reduce_s, 1), notes=oracle.notes)
    repro = os.path.join(run_dir, "repro.py")
    test_path = report_path = None
    if verified:
        if os.path.exists(repro):   # the graph stage's unverified repro keeps its own name
            os.replace(repro, os.path.join(run_dir, "repro_graph_unverified.py"))
        shutil.copyfile(best_path, repro)
        test_path = _write_test(run_dir, oracle, argv, index, n0, lines_of(best), args.timeout, versions)
        report_path = _bug_report(run_dir, oracle, argv, index, best, checks, versions)
    result.update(status="verified" if verified else ("interrupted" if stopped == "interrupted" else "unverified"),
                  repro=repro if verified else best_path, regression_test=test_path, bug_report=report_path)
    output.emit(args, result, _markdown(result, oracle, argv, index, stopped, limit, args, from_dir))
    return 130 if stopped == "interrupted" else 0


def _what(o):
    if o.mode == "graph_break":
        g = o.graph_break
        return f"keep graph break {g['gb_id'] or g['gb_type']} in {g['function']}"
    s = o.orig
    end = f"{s['type']}: {cmdline.clip(s['message'], 80)}" if s["traceback"] else \
        (s["signal"] or f"exit {s['rc']}") + (f" after printing `{cmdline.clip(s['last_line'], 80)}`" if s["last_line"] else "")
    checks = ["fails compiled with " + end, "passes with compilation off"]
    if o.good_backend:
        checks.append(f"passes with backend {o.good_backend}")
    return "; ".join(checks)


def _verify(oracle, best):
    """3 runs of the whole test from cold caches (a candidate kept on a warm cache must not depend on it)."""
    checks = []
    oracle.warm = False   # fresh interpreters, as the user will run the repro
    for i in range(3):
        oracle.cache = os.path.join(oracle.root, f"verify_cache{i}")
        oracle.memo.clear()
        ok = oracle.interesting(best)
        checks.append(oracle.memo[next(reversed(oracle.memo))][1])
        if not ok:
            return False, checks
    return True, checks


def _write_test(run_dir, oracle, argv, index, n0, n1, timeout, versions):
    import jinja2
    tdir = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "show", "templates")
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(tdir), keep_trailing_newline=True,
                             undefined=jinja2.StrictUndefined)
    gb = oracle.graph_break or {}
    name = "test_regression_source.py"
    if oracle.mode == "graph_break":
        what = f"Graph break {gb.get('gb_id') or gb.get('gb_type')} ({gb.get('gb_type')}) in {gb.get('function')}."
        sig, func = what, re.sub(r"\W+", "_", f"no_{gb.get('gb_id') or 'graph_break'}").lower()
    else:
        sig = _end_text(oracle.orig)
        what = f"Failure:  {sig}"
        func = re.sub(r"\W+", "_", f"compiled_{oracle.orig.get('type') or 'exit'}").strip("_").lower()
    text = env.get_template("source_regression_test.py.j2").render(
        mode=oracle.mode, what=what, repro_name="repro.py", lines_before=n0, lines_after=n1,
        good_backend=oracle.good_backend, original_command=cmdline.command_line(argv),
        torch_version=versions[argv[0]], test_name=name, args=list(argv[index + 1:]), signature=sig,
        func_name=func, timeout=int(min(max(oracle.query_timeout * 2, 60), 3600)),
        gb_id=gb.get("gb_id") or gb.get("gb_type") or "")
    path = os.path.join(run_dir, name)
    with open(path, "w") as f:
        f.write(text)
    return path


def _end_text(s):
    if s["traceback"]:
        return f"{s['type']}: {cmdline.clip(s['message'], 200)}"
    return (s["signal"] or f"exit {s['rc']}") + (f", after printing: {cmdline.clip(s['last_line'], 200)}"
                                                 if s["last_line"] else "")


def _bug_report(run_dir, oracle, argv, index, best, checks, versions):
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
    md = [f"### torch.compile: {'graph break ' + (oracle.graph_break or {}).get('gb_id', '') if oracle.mode == 'graph_break' else _end_text(oracle.orig)}",
          "", f"torch {tv}; reduced by compile-debug `minify --source` from {cmdline.command_line(argv)} "
          f"({lines_of(open(oracle.prog, encoding='utf-8').read())} → {lines_of(best)} lines).", "",
          f"Run: `{cmd}`", "", "```python", best.rstrip(), "```", ""]
    if oracle.mode == "graph_break":
        g = oracle.graph_break
        md += [f"Dynamo breaks the graph: {g['gb_id']} ({g['gb_type']}) in `{g['function']}`."]
    else:
        md += ["Compiled (fails):", "```", tail("compiled"), "```", "",
               "With compilation off (passes):", "```", tail("eager") or "(nothing printed)", "```"]
        if oracle.good_backend:
            md += ["", f"It passes with `backend=\"{oracle.good_backend}\"` (the last good backend of `bisect`): "
                       "the failure is in the layer after it."]
    if oracle.other_python:   # every kept candidate did what the original did there: the repro too
        md += ["", f"With torch {versions[oracle.other_python]} this repro {oracle.orig_other}, as the original "
                   f"program does (the torch above: {tv})."]
    md += ["", "Checked 3 times from a cold cache: " + "; ".join(dict.fromkeys(checks)) + "."]
    path = os.path.join(run_dir, "bug_report.md")
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(md) + "\n")
    return path


def _markdown(r, oracle, argv, index, stopped, limit, args, from_dir):
    ok = r["verified"]
    title = ("verified repro" if ok else
             "stopped (Ctrl-C): best so far, NOT verified" if stopped == "interrupted" else
             "UNVERIFIED reduction (do not trust it as is)")
    md = [f"# minify --source: {title} ({r['lines_before']} → {r['lines_after']} lines)", ""]
    rows = [["program", r["program"]], ["keeps", _what(oracle)],
            ["queries", f"{r['queries']} run ({r['kept']} kept), {r['reduce_s']:.0f} s; timeout per query "
                        f"{oracle.query_timeout:.0f} s; {r['not_run']} more candidates refused without a run "
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
    if oracle.other_python:
        rows.append(["other torch", f"{oracle.other_python}: the original {oracle.orig_other}"])
    md += [output.table(["", ""], rows), ""]
    md += [f"- note: {n}" for n in r.get("notes") or []]
    if stopped == "time":
        again = [w for w in _argv_words(args, from_dir) if w]
        md += [f"- stopped at the time limit ({limit:.0f} s) with the smallest program found so far; more time may "
               f"shrink it further: `{cmdline.cli_command('minify', *again[:1], '--source-limit', str(int(2 * limit)), *again[1:])}`"]
    r["next_command"] = None
    if ok:
        md += ["", f"Run it: `{cmdline.command_line([argv[0], r['repro'], *argv[index + 1:]])}`; the test fails until "
                   f"it is fixed: `{cmdline.command_line([argv[0], '-m', 'pytest', '-q', r['regression_test']])}`."]
        triage = cmdline.cli_command("triage", "--", argv[0], r["repro"], *argv[index + 1:])
        if oracle.mode == "graph_break":
            md += ["", f"PyTorch's hint and our recipe for this break: `{triage}`; most breaks are documented "
                       "behaviour with a fix in your code. Attach repro.py to a PyTorch issue only when the hint "
                       "does not fit."]
        else:
            md += ["", "Failing only compiled is not yet a compiler bug: a difference torch documents (hooks changed "
                       f"after compiling, CUDA-graph outputs reused, rounding) fits this too; `{triage}` names those "
                       "on the small program in one run."]
        if oracle.mode != "graph_break" and oracle.good_backend:
            md += ["", "Next: file it with bug_report.md (bisect already named the layer)."]
        elif oracle.mode != "graph_break":
            nxt = cmdline.cli_command("bisect", "--", argv[0], r["repro"], *argv[index + 1:])
            md += ["", "Next: find the compiler layer on the small program (fast), then file it with bug_report.md:",
                   "", "    " + nxt]
            r["next_command"] = nxt
    elif stopped != "interrupted":
        md += ["", "The reduced program did not keep the failure 3 of 3 times from a cold cache: the failure may "
                   "depend on a warm cache, timing or randomness. repro_source.py is the last kept candidate; "
                   "source/queries.log lists every query."]
    return "\n".join(md)


def _argv_words(args, from_dir):
    words = ["--source"]
    if from_dir:
        words += ["--from", from_dir]
    if args.good_backend:
        words += ["--good-backend", args.good_backend]
    if args.torch_python:
        words += ["--torch-python", args.torch_python]
    if not from_dir:
        words += ["--", *args.target]
    return words
