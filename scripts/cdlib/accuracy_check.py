"""Miscompile or rounding? One run of a program under the minifier's accuracy check.

TORCHDYNAMO_REPRO_AFTER=aot + TORCHDYNAMO_REPRO_LEVEL=4 make every compiled AOT graph compare its
result on its first inputs with eager's and with an fp64 reference (torch._dynamo.utils.same: the
compiled result may not be further from fp64 than eager's, times a multiplier); the first graph that
fails is written out as a checkpoint. Used by `accuracy -- prog` and by triage when the program's own
output check fails only compiled. No torch import here (the program does it)."""
import os
import re

from . import proc


def precision_meaning():
    """What "no graph less accurate than eager, yet the program's check failed" means (triage table row)."""
    from . import knowledge
    return " ".join(knowledge.triage_row("accuracy_tolerance")["advice"].split())


_FAILED_RE = re.compile(r"Accuracy failed for the AOT Autograd graph (\S+)")
_RMSE_RE = re.compile(r"RMSE \(res-fp64\): ([\d.e+-]+|nan|inf), \(ref-fp64\): ([\d.e+-]+|nan|inf) and shape=(.+?)\. "
                      r"res\.dtype: (\S+), multiplier: ([\d.]+), tol: ([\d.e-]+)")
_CHECKPOINT_RE = re.compile(r"Writing checkpoint with (\d+) nodes to (\S+\.py)")


def run(argv, run_dir, *, timeout, env_add=None):
    """Run argv once under the accuracy check, in run_dir (level 4 writes repro.py into the working
    directory; file arguments are made absolute). Returns a dict: res (ProcResult), failing_graph,
    graph_nodes, checkpoint, rmse [..], failed (the program exited non-zero or timed out),
    error_type / error (its last exception), precision (it failed on its own output check although
    no graph failed: rounding, not a miscompile)."""
    from .workers import bisect_step
    debug = os.path.join(run_dir, "debug")
    os.makedirs(debug, exist_ok=True)
    abs_argv = [os.path.abspath(a) if i > 0 and os.path.isfile(a) else a for i, a in enumerate(argv)]
    env = dict(env_add or {})
    trace_dir = os.path.join(run_dir, "trace")
    env.update({"TORCHDYNAMO_REPRO_AFTER": "aot", "TORCHDYNAMO_REPRO_LEVEL": "4", "TORCH_COMPILE_DEBUG_DIR": debug,
                "TORCH_TRACE": trace_dir, "PYTHONUNBUFFERED": "1"})
    res = proc.run(abs_argv, env_add=env, cwd=run_dir, timeout=timeout,
                   stdout_path=os.path.join(run_dir, "target.stdout"), stderr_path=os.path.join(run_dir, "target.stderr"))
    err = res.read_stderr(limit=4_000_000)
    graph = _FAILED_RE.findall(err)
    ck = _CHECKPOINT_RE.findall(err)
    failed = res.returncode not in (0, None) or res.timed_out
    et, em = bisect_step.signature(err)
    out = {"res": res, "failing_graph": graph[0] if graph else None,
           "graph_nodes": int(ck[0][0]) if ck else None, "checkpoint": ck[0][1] if ck else None,
           "rmse": [{"rmse_compiled_vs_fp64": float(a), "rmse_eager_vs_fp64": float(b),
                     "shape": re.sub(r"^torch\.Size\((.*)\)$", r"\1", c), "dtype": d,
                     "multiplier": float(m), "tol": float(t)} for a, b, c, d, m, t in _RMSE_RE.findall(err)],
           "failed": failed, "error_type": bisect_step.short_type(et) if et else None,
           "error": f"{bisect_step.short_type(et)}: {em}" if failed and et else None}
    # torch's check passes a graph within 1e-3 of eager (or no further from fp64 than a few times
    # eager's error) and sees only Inductor graphs: "rounding" only for Inductor graphs of bf16/fp16
    out["passed_check"] = bool(not graph and failed and et and _is_output_check(et, em))
    out["dtypes"], out["inductor"] = graph_dtypes(trace_dir), _inductor_ran(trace_dir)
    out["precision"] = out["passed_check"] and out["inductor"] and bool(out["dtypes"] & set(LOW_PRECISION))
    return out


def _inductor_ran(trace_dir):
    """Did Inductor compile (or load from its cache) a graph? Its output code is in the trace either way
    (compilation_metrics' inductor time is missing for cold compiles under TORCHDYNAMO_REPRO_AFTER=aot)."""
    from . import trace as tracemod
    tr = tracemod.parse(trace_dir)
    return bool(tr.of("inductor_output_code")) or any(
        isinstance(e.data, dict) and e.data.get("inductor_compile_time_s") for e in tr.of("compilation_metrics"))


def _is_output_check(etype, message):
    from . import knowledge
    return etype.endswith("AssertionError") or \
        knowledge.classify_error(f"{etype}: {message}").get("id") == "accuracy_mismatch"


def rmse_line(rmse):
    a, b = rmse["rmse_compiled_vs_fp64"], rmse["rmse_eager_vs_fp64"]
    return (f"RMSE vs fp64: compiled {a:.3g}, eager {b:.3g}"
            + (f" ({a / b:.3g}x; limit {rmse['multiplier']:g}x)" if b else "") + f", output shape {rmse['shape']}")


LOW_PRECISION = ("bf16", "f16")


def graph_dtypes(trace_dir):
    """Dtype tags of the compiled graphs' tensors in a TORCH_TRACE dir ("bf16[16, 64]" -> bf16)."""
    from . import trace as tracemod
    found = set()
    for path in tracemod.trace_files(trace_dir):
        try:
            with open(path, encoding="utf-8", errors="replace") as f:
                found.update(re.findall(r"\b(bf16|f16|f32|f64)\[", f.read(20_000_000)))
        except OSError:
            pass
    return found


def apply(rep, chk, run_dir, where):
    """Put the accuracy check's answer on a triage report whose first error is an output check that
    failed only compiled: a measured miscompile (-> bisect), rounding (-> the program's tolerance), or
    not sure (-> bisect). torch's check passes a graph within 1e-3 of eager or no further from fp64
    than a few times eager's error, and it sees only Inductor graphs on their first call: "rounding"
    is said only for Inductor graphs of bf16/fp16 tensors, where 1e-3 is below the dtype's precision."""
    from . import knowledge
    err = rep.errors[0]
    rmse = chk["rmse"][0] if chk["rmse"] else None
    rep.verdict["accuracy"] = {"run_dir": run_dir, "failing_graph": chk["failing_graph"], "rmse": rmse,
                               "precision": chk["precision"], "error": chk["error"], "dtypes": sorted(chk["dtypes"]),
                               "duration_s": chk["res"].duration_s}
    bisect = knowledge.render_command({"command": "{cli} bisect -- {target}"}, *where)
    if chk["failing_graph"]:
        err.title = "Miscompile: a compiled graph is further from fp64 than eager (measured)"
        err.advice = (f"Measured by one run under torch's accuracy check: graph `{chk['failing_graph']}`"
                      + (f" ({chk['graph_nodes']} FX nodes)" if chk["graph_nodes"] else "") + " fails it"
                      + (f": {rmse_line(rmse)}" if rmse else "") + ". Most likely a miscompile: bisect names the "
                      "layer, pass and op; minify --kind accuracy shrinks the graph. (A graph that draws random "
                      "numbers, e.g. dropout in training, also differs: `accuracy` re-checks with fallback_random.)")
        err.next_command = bisect
    elif chk["precision"]:
        row = knowledge.triage_row("accuracy_tolerance")
        err.category, err.title, err.skill, err.side = row["id"], row["title"], row.get("skill"), row["side"]
        err.advice, err.next_command = precision_meaning(), None
    else:
        err.advice = (f"Torch's accuracy check (one more run) flagged no compiled graph, but {unsure_reason(chk)}: "
                      "not sure whether this is rounding. Bisect runs the program the way it fails and finds the "
                      "layer and pass if the compiler changes the result.")
        err.next_command = bisect


def unsure_reason(chk):
    """Why a run in which torch's check flagged no graph still does not show rounding."""
    if not chk["failed"]:
        return "the program passed in the accuracy-check run (a flaky check?)"
    if chk["res"].timed_out:
        return "the accuracy-check run timed out"
    if chk["passed_check"] and not chk["inductor"]:
        return "no graph was compiled by Inductor, and torch's check only looks at Inductor graphs"
    if chk["passed_check"]:
        return ("torch's check passes anything within 1e-3 of eager, which for float32 values is not rounding: a "
                "small miscompile can pass it")
    return (f"the program's failure ({chk['error'] or 'exit ' + str(chk['res'].returncode)}) is not an exception "
            "the check can pair with a graph")
