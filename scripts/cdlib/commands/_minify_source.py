"""minify's source stage (`minify --source`, and the second stage when no graph-level repro could be
verified): orchestrates source_oracle and source_reduce (literal pass, pysource-minimize), verifies the result 3
times in fresh interpreters (decide/source_stage.py), writes repro.py, a pytest regression test and a
bug-report block, renders (show/views_minify_source.py)."""
import os
import shutil
import time

from ..show import output, views_minify_source
from ..run import proc, torch_versions
from ..run.workers import bisect_search
from ..decide import source_oracle, source_reduce, source_stage
from ..errors import CliError
from ..decide.source_reduce import SourceError, lines_of


def run(args, argv, run_dir, *, prior=None, from_dir=None):
    """Reduce the program; emit the report. prior: the graph stage's result (second stage)."""
    t0 = time.monotonic()
    try:
        index, path = source_reduce.program_of(argv)
        text = source_reduce.parse_program(path)
    except SourceError as e:
        raise CliError(str(e))
    limit = args.source_limit
    # the baseline's runs and the literal pass use them; pysource-minimize asks one query at a time
    jobs = args.jobs or min(4, bisect_search.default_jobs())
    proc.runs_at_a_time(jobs)
    versions = {argv[0]: torch_versions.probe(argv[0])}   # CliError naming the interpreter when it has no torch
    if args.torch_python:
        versions[args.torch_python] = torch_versions.probe(args.torch_python)
    oracle = source_oracle.Oracle(argv, index, run_dir, timeout=args.timeout, good_backend=args.good_backend,
                                  other_python=args.torch_python, jobs=jobs,
                                  mode="graph_break" if args.break_id else
                                  "recompile" if getattr(args, "recompile", False) else "auto", break_id=args.break_id,
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
    if oracle.recompile:
        result["recompile"] = oracle.recompile
    if not ok:
        oracle.close()
        result.update(status="not-reduced", verified=False, reason=why, queries=oracle.queries, next_command=None)
        output.emit(args, result, views_minify_source.not_reduced(result))
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
                  f"{source_stage.what(oracle)}); queries time out after {oracle.query_timeout:.0f} s; "
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
        proc.progress(f"source 3/3: verify the reduced program: 3 runs of the full test, {source_stage.verify_how(oracle.mode)}")
        try:
            verified, checks = source_stage.verify(oracle, best)
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
        test_path = views_minify_source.write_test(run_dir, oracle, argv, index, n0, lines_of(best), args.timeout,
                                                   versions)
        report_path = views_minify_source.bug_report(run_dir, oracle, argv, index, best, checks, versions)
    result.update(status="verified" if verified else ("interrupted" if stopped == "interrupted" else "unverified"),
                  repro=repro if verified else best_path, regression_test=test_path, bug_report=report_path,
                  keeps=source_stage.what(oracle), query_timeout=oracle.query_timeout, original_other=oracle.orig_other,
                  program_index=index, source_limit=limit, more_time_command=(
                      source_stage.more_time_command(args, from_dir, limit) if stopped == "time" else None))
    result["next_command"] = source_stage.next_command(result)
    output.emit(args, result, views_minify_source.markdown(result))
    return 130 if stopped == "interrupted" else 0
