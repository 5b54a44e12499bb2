"""accuracy's analysis: the verdict of a model target's worker (eager vs compiled vs fp64 per output, and
which config makes it pass), and of a script target's run under torch's accuracy check (with the failing
graph re-measured alone); the result the views render, next command included."""
import sys

from . import accuracy_apply, accuracy_judge
from .. import cmdline


def summary(data):
    """verdict, fix (config name or None)"""
    cfgs = data.get("configs", [])
    default = cfgs[0] if cfgs else {}
    if default.get("verdict") == "ERROR":
        return "error", None
    verdict = default.get("verdict")
    fix = None
    for c in cfgs[1:]:
        if c["verdict"] == "pass" and fix is None:
            fix = c["config"]
    return verdict, fix


def meaning(verdict, fix):
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


def model_result(args, run_dir, spec, data):
    """The result of a model target (spec: the absolute FILE.py:FACTORY) from its worker's data."""
    result = {"command": "accuracy", "run_dir": run_dir, "target": args.model}
    if not data.get("ok"):
        result.update(status="error", error=data.get("error"))
        result["next_command"] = cmdline.cli_command("accuracy", "--timeout", "3600", spec)
        return result
    verdict, fix = summary(data)
    result.update(status={"pass": "pass", "FAIL": "fail"}.get(verdict, "error"), verdict=verdict, fixed_by=fix,
                  tol=args.tol, configs=data["configs"], meaning=meaning(verdict, fix), note=data.get("note"))
    if verdict == "FAIL" and not fix:
        result["next_command"] = cmdline.cli_command("bisect", "--bad-if-exception", "AssertionError", "--",
                                                     sys.executable, "your_check.py")
    else:
        result["next_command"] = cmdline.cli_command("triage", "--", sys.executable, "your_script.py")
    return result


def _shown(argv):
    import shlex
    return " ".join(shlex.quote(a) for a in argv)


def script_result(args, run_dir, argv, chk, measure_graph):
    """The result of a script target from its accuracy-check run chk (accuracy_check.run). On a measured
    miscompile with a checkpoint, measure_graph(checkpoint) runs the failing graph alone (the worker's data)."""
    res = chk["res"]
    result = {"command": "accuracy", "run_dir": run_dir, "target": argv, "exit_code": res.returncode,
              "signal": res.signal, "stderr": res.stderr_path}
    nxt_bisect = cmdline.cli_command("bisect", "--", *args.target)
    j = accuracy_judge.judge(chk)
    result["measured"] = {k: j[k] for k in ("verdict", "summary", "why", "graph", "worst", "graphs_checked",
                                             "outputs_checked", "dtypes", "gate", "tolerance")}
    if j.get("check_raised"):
        result["measured"]["check_raised"] = True
    result.update(graphs=chk["graphs"], duration_s=res.duration_s)
    if j["verdict"] != "miscompile":
        failed = chk["failed"]
        result.update(status="pass" if not failed else "error", failing_graph=None, error=chk["error"] or chk["last_words"])
        if not failed and j["graphs_checked"] and not chk["failing_graph"]:
            worst = max((o for g in chk["graphs"] for o in g["outputs"] if o.get("rmse_eager_vs_fp64") is not None),
                        key=lambda o: o["rmse_compiled_vs_fp64"] / (o["rmse_eager_vs_fp64"] or 1e-300), default=None)
            result["worst_output"] = worst
            result["next_command"] = cmdline.cli_command("triage", "--vs-eager", "--", *args.target)
        elif not failed:
            result.update(status="not_sure", meaning="no compiled graph was checked", inductor_ran=chk["inductor"])
            result["next_command"] = cmdline.cli_command("triage", "--", *args.target)
        elif j["verdict"] == "rounding":
            # the program's own comparison failed although every graph is as close to fp64 as eager
            result.update(status="precision", meaning=accuracy_judge.precision_meaning(), ulp_band=bool(j.get("ulp_band")))
            result["next_command"] = "Next: fix the program's output check (no compiler bisect)."
        else:
            why, cmd = accuracy_apply.next_command(j["next"], cmdline.cli_command(), _shown(args.target),
                                                   timeout=args.timeout)
            result.update(status="noise" if j["verdict"] == "noise" else "not_sure", meaning=j["why"], next_why=why)
            result["next_command"] = cmd or ""
        return result
    checkpoint, rmse = chk["checkpoint"], chk["rmse"]
    result.update(status="fail", failing_graph=chk["failing_graph"], graph_nodes=chk["graph_nodes"],
                  checkpoint=checkpoint, rmse=rmse)
    if checkpoint:
        data = measure_graph(checkpoint)
        if data.get("ok"):
            verdict, fix = summary(data)
            result.update(graph_verdict=verdict, fixed_by=fix, configs=data["configs"], meaning=meaning("FAIL", fix),
                          tol=args.tol)
        else:
            result["graph_error"] = data.get("error")
            result["meaning"] = meaning("FAIL", None)
    result["bisect_command"] = (nxt_bisect if res.returncode else
                                cmdline.cli_command("bisect", "--bad-if", "AccuracyError", "--", *args.target))
    result["next_command"] = cmdline.cli_command("minify", "--kind", "accuracy", "--", *args.target)
    return result
