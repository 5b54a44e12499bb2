"""`accuracy`: how wrong are the compiled results, and which graph / output.

- model target `file.py:factory`: eager vs compiled vs an fp64 reference per output, judged like
  torch._dynamo.utils.same, and whether fallback_random / emulate_precision_casts fix it;
- script target `-- python prog.py`: the program runs under the minifier's accuracy check
  (TORCHDYNAMO_REPRO_AFTER=aot, TORCHDYNAMO_REPRO_LEVEL=4), which compares every compiled graph
  against eager and fp64 and stops at the first failing one; that graph is then measured the
  same way as a model target."""
import json
import os
import sys

from ..decide import accuracy_check
from ..show import output
from .. import cmdline
from ..run import proc, rundir, target
from ..errors import CliError

HELP = "measure compiled-vs-eager error against an fp64 reference; find the failing graph"
ORDER = 47
TAKES_TARGET = True
DESCRIPTION = """Measure how wrong torch.compile's results are. For a model target
(file.py:factory returning (model, args[, kwargs])): eager vs compiled vs an fp64 reference per
output (max abs/rel error, RMSE ratio, verdict as torch._dynamo.utils.same judges it), and
whether torch._inductor.config.fallback_random / emulate_precision_casts make it pass. For a
script (-- python prog.py): runs it under the minifier's accuracy check (TORCHDYNAMO_REPRO_LEVEL=4)
and reports the first graph that fails and by how much."""
EPILOG = """examples:
  compile_debug.py accuracy model.py:make_model
  compile_debug.py accuracy -- python train.py"""


def add_arguments(p):
    p.add_argument("model", nargs="?", metavar="FILE.py:FACTORY", help="model target (else a command after --)")
    p.add_argument("--tol", type=float, default=1e-4, help="tolerance as in torch._dynamo.utils.same (default 1e-4)")
    p.add_argument("--backend", default="inductor", help="backend for the model target (default inductor)")
    p.add_argument("--mode", help="torch.compile mode for the model target")
    p.add_argument("--timeout", type=float, default=1800, metavar="SEC", help="limit for each step (default 1800)")


def _fmt(x):
    if x is None:
        return ""
    if isinstance(x, float):
        if x == 0:
            return "0"
        if x != x or x in (float("inf"), float("-inf")):
            return str(x)
        return f"{x:.3g}"
    return str(x)


def _worker(run_dir, wargs, timeout, tag, env=None, cwd=None):
    rpath = os.path.join(run_dir, f"{tag}.json")
    res = proc.run_worker("accuracy", ["--result", rpath] + wargs, run_dir=run_dir, timeout=timeout, tag=tag,
                          env_add=env, cwd=cwd)
    try:
        with open(rpath) as f:
            return json.load(f)
    except (OSError, ValueError):
        why = "timed out" if res.timed_out else f"exit {res.returncode}" + (f" ({res.signal})" if res.signal else "")
        tail = [l for l in res.read_stderr(limit=3000).splitlines() if l.strip()][-1:]
        return {"ok": False, "error": f"accuracy worker failed: {why}" + (f": {tail[0]}" if tail else "")}


def _table(entry):
    rows = []
    for r in entry.get("outputs", []):
        rows.append([r["output"], f"{r.get('dtype', '')}{r.get('shape', '')}", _fmt(r.get("max_abs_err")),
                     _fmt(r.get("max_rel_err")), ("allclose" if r.get("allclose") else _fmt(r.get("rmse_ratio")) + (f" (limit {_fmt(r.get('multiplier'))})" if r.get("multiplier") else "")),
                     ("NaN! " if r.get("nan_compiled") and not r.get("nan_eager") else "") + r["verdict"]])
    return output.table(["output", "dtype/shape", "max abs err", "max rel err", "RMSE ratio vs fp64", "verdict"], rows)


def _summary(data):
    """verdict, fix (config name or None), markdown lines"""
    cfgs = data.get("configs", [])
    default = cfgs[0] if cfgs else {}
    lines = []
    if default.get("verdict") == "ERROR":
        return "error", None, [f"Compiling/running failed: {default.get('error')}"]
    lines.append(_table(default))
    verdict = default.get("verdict")
    fix = None
    for c in cfgs[1:]:
        lines.append(f"- with {c['config']}: {c['verdict']}" + (f" ({c.get('error')})" if c.get("error") else ""))
        if c["verdict"] == "pass" and fix is None:
            fix = c["config"]
    return verdict, fix, lines


def _meaning(verdict, fix):
    if verdict == "pass":
        return "Compiled results match (within the fp64-relative tolerance torch._dynamo.utils.same uses)."
    if fix == "fallback_random=True":
        return ("The difference comes from random numbers (Inductor's RNG differs from eager's): expected. "
                "Compare with torch._inductor.config.fallback_random=True, not a bug by itself.")
    if fix == "emulate_precision_casts=True":
        return ("The difference is low-precision rounding: Inductor keeps fp16/bf16 intermediates in fp32. "
                "torch._inductor.config.emulate_precision_casts=True matches eager's rounding.")
    return ("Compiled results are further from the fp64 reference than eager's: a real accuracy bug. "
            "Bisect it to the pass/lowering, then minify it.")


def run(args):
    if args.tol <= 0 or args.timeout <= 0:
        raise CliError("--tol and --timeout must be positive")
    if args.model and args.target:
        raise CliError("give either a model target FILE.py:FACTORY or a command after --, not both")
    if not args.model and not args.target:
        raise CliError("no target: give FILE.py:FACTORY or a command after `--`, e.g. `-- python train.py`")
    if args.model:
        return _run_model(args)
    return _run_script(args)


def _run_model(args):
    path, name = target.parse_spec(args.model)
    run_dir = rundir.make(args.out, "accuracy")
    proc.progress(f"accuracy: {args.model}: eager vs compiled ({args.backend}) vs fp64")
    wargs = ["--model", f"{path}:{name}", "--tol", str(args.tol), "--backend", args.backend]
    if args.mode:
        wargs += ["--mode", args.mode]
    data = _worker(run_dir, wargs, args.timeout, "accuracy_model")
    result = {"command": "accuracy", "run_dir": run_dir, "target": args.model}
    if not data.get("ok"):
        result.update(status="error", error=data.get("error"))
        output.emit(args, result, f"# accuracy: could not evaluate\n\n- {data.get('error')}\n\nNext:\n\n    "
                    + cmdline.cli_command("accuracy", "--timeout", "3600", f"{path}:{name}"))
        return 0
    verdict, fix, lines = _summary(data)
    result.update(status={"pass": "pass", "FAIL": "fail"}.get(verdict, "error"), verdict=verdict, fixed_by=fix,
                  tol=args.tol, configs=data["configs"], meaning=_meaning(verdict, fix), note=data.get("note"))
    md = [f"# accuracy: {args.model}: {'PASS' if verdict == 'pass' else verdict}", ""] + lines
    md += ["", f"**Meaning:** {result['meaning']}"]
    if data.get("note"):
        md.append(f"- note: {data['note']}")
    if verdict == "FAIL" and not fix:
        md += ["", "Next: find the failing layer with a script that checks the result, e.g.", "",
               "    " + cmdline.cli_command("bisect", "--bad-if-exception", "AssertionError", "--", sys.executable, "your_check.py")]
    else:
        md += ["", "Next: see the whole compile (graphs, breaks) with", "", "    " + cmdline.cli_command("triage", "--", sys.executable, "your_script.py")]
    result["next_command"] = md[-1].strip()
    output.emit(args, result, "\n".join(md))
    return 0


def _shown(argv):
    import shlex
    return " ".join(shlex.quote(a) for a in argv)


def _run_script(args):
    argv = proc.resolve_target(args.target)
    run_dir = rundir.make(args.out, "accuracy")
    debug = os.path.join(run_dir, "debug")
    proc.progress("accuracy 1/2: run under the minifier's accuracy check (TORCHDYNAMO_REPRO_LEVEL=4: every "
                  f"compiled graph vs eager and fp64); cwd {run_dir}")
    chk = accuracy_check.run(argv, run_dir, timeout=args.timeout)
    res = chk["res"]
    result = {"command": "accuracy", "run_dir": run_dir, "target": argv, "exit_code": res.returncode,
              "signal": res.signal, "stderr": res.stderr_path}
    nxt_bisect = cmdline.cli_command("bisect", "--", *args.target)
    j = accuracy_check.judge(chk)
    result["measured"] = {k: j[k] for k in ("verdict", "summary", "why", "graph", "worst", "graphs_checked",
                                             "outputs_checked", "dtypes", "gate", "tolerance")}
    result.update(graphs=chk["graphs"], duration_s=res.duration_s)
    checked = (f"{j['graphs_checked']} compiled graph(s), {j['outputs_checked']} output(s) checked on their first call "
               f"against eager and fp64 (repro_tolerance {accuracy_check.TOLERANCE:g}: torch's RMSE rule decides)")
    if j["verdict"] != "miscompile":
        failed = chk["failed"]
        result.update(status="pass" if not failed else "error", failing_graph=None, error=chk["error"] or chk["last_words"])
        if not failed and j["graphs_checked"] and not chk["failing_graph"]:
            worst = max((o for g in chk["graphs"] for o in g["outputs"] if o.get("rmse_eager_vs_fp64") is not None),
                        key=lambda o: o["rmse_compiled_vs_fp64"] / (o["rmse_eager_vs_fp64"] or 1e-300), default=None)
            md = ["# accuracy: every compiled graph passed Inductor's accuracy check", "",
                  f"- {checked}: no compiled graph is further from fp64 than eager"
                  + (f" (largest ratio: {accuracy_check.numbers(worst)}, {worst['dtype']})" if worst else ""), "",
                  "If results still look wrong, the difference comes from outside the compiled graphs "
                  "(graph breaks, random numbers, data order, Python side effects) or only shows on later calls or "
                  "after many steps.", "", "Next: compare the whole run's printed output compiled and eager:", "",
                  "    " + cmdline.cli_command("triage", "--vs-eager", "--", *args.target)]
        elif not failed:
            result.update(status="not_sure", meaning="no compiled graph was checked")
            md = ["# accuracy: the program passed, but no compiled graph was checked", "",
                  "- " + ("no graph was compiled by Inductor (torch's check only measures Inductor graphs)"
                          if not chk["inductor"] else "no Inductor graph ran with real inputs under the check"), "",
                  "Next: look at the whole run:", "", "    " + cmdline.cli_command("triage", "--", *args.target)]
        elif j["verdict"] == "rounding":
            # the program's own comparison failed although every graph is as close to fp64 as eager
            result.update(status="precision", meaning=accuracy_check.precision_meaning())
            md = [f"# accuracy: {j['summary']}", "",
                  ("- compiled is within rounding of eager: " if j.get("ulp_band") else
                   "- no compiled graph is less accurate than eager: ") + j["why"],
                  f"- then the program failed: {result['error']}",
                  f"- gate that fits: {j['gate']}", "",
                  f"**Meaning:** {accuracy_check.precision_meaning()}", "",
                  "Next: fix the program's output check (no compiler bisect)."]
        else:
            why, cmd = accuracy_check.next_command(j["next"], cmdline.cli_command(), _shown(args.target),
                                                   timeout=args.timeout)
            result.update(status="not_sure", meaning=j["why"])
            md = [f"# accuracy: {j['summary']}", ""]
            if failed:
                md.append(f"- the program failed: {result['error'] or 'exit ' + str(res.returncode)}")
            md += [f"- {checked}" if j["graphs_checked"] else "- no graph was compared", "",
                   f"Next: {why}" + (":" if cmd else "."), ""] + (["    " + cmd] if cmd else [])
        result["next_command"] = md[-1].strip()
        output.emit(args, result, "\n".join(md))
        return 0
    checkpoint, rmse = chk["checkpoint"], chk["rmse"]
    result.update(status="fail", failing_graph=chk["failing_graph"], graph_nodes=chk["graph_nodes"],
                  checkpoint=checkpoint, rmse=rmse)
    md = [f"# accuracy: {j['summary']}", "", f"- {j['why']}"]
    if checkpoint:
        proc.progress("accuracy 2/2: measure the failing graph per output (+ fallback_random / emulate_precision_casts)")
        data = _worker(run_dir, ["--graph", checkpoint, "--tol", str(args.tol)], args.timeout, "accuracy_graph",
                       env={"TORCH_COMPILE_DEBUG_DIR": debug}, cwd=run_dir)
        if data.get("ok"):
            verdict, fix, lines = _summary(data)
            result.update(graph_verdict=verdict, fixed_by=fix, configs=data["configs"], meaning=_meaning("FAIL", fix))
            md += ["", f"The failing graph ({result['graph_nodes']} FX nodes) alone, tol {args.tol:g}:", ""] + lines
        else:
            result["graph_error"] = data.get("error")
            result["meaning"] = _meaning("FAIL", None)
            md.append(f"- could not re-measure the graph alone: {data.get('error')}")
        md += ["", f"**Meaning:** {result['meaning']}", f"- graph: {checkpoint}"]
    md += ["", "Next: find the pass/lowering (bisect), or shrink the graph (minify --kind accuracy):", "",
           "    " + nxt_bisect if res.returncode else "    " + cmdline.cli_command("bisect", "--bad-if", "AccuracyError", "--", *args.target),
           "    " + cmdline.cli_command("minify", "--kind", "accuracy", "--", *args.target)]
    result["next_command"] = md[-1].strip()
    output.emit(args, result, "\n".join(md))
    return 0
