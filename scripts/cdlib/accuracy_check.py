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
    env.update({"TORCHDYNAMO_REPRO_AFTER": "aot", "TORCHDYNAMO_REPRO_LEVEL": "4", "TORCH_COMPILE_DEBUG_DIR": debug,
                "PYTHONUNBUFFERED": "1"})
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
    out["precision"] = bool(not graph and failed and et and _is_output_check(et, em))
    return out


def _is_output_check(etype, message):
    from . import knowledge
    return etype.endswith("AssertionError") or \
        knowledge.classify_error(f"{etype}: {message}").get("id") == "accuracy_mismatch"


def rmse_line(rmse):
    a, b = rmse["rmse_compiled_vs_fp64"], rmse["rmse_eager_vs_fp64"]
    return (f"RMSE vs fp64: compiled {a:.3g}, eager {b:.3g}"
            + (f" ({a / b:.3g}x; limit {rmse['multiplier']:g}x)" if b else "") + f", output shape {rmse['shape']}")


def apply(rep, chk, run_dir, where):
    """Put the accuracy check's answer on a triage report whose first error is an output check that
    failed only compiled: a measured miscompile (-> bisect) or rounding (-> the program's tolerance)."""
    from . import knowledge
    err = rep.errors[0]
    rmse = chk["rmse"][0] if chk["rmse"] else None
    rep.verdict["accuracy"] = {"run_dir": run_dir, "failing_graph": chk["failing_graph"], "rmse": rmse,
                               "precision": chk["precision"], "error": chk["error"],
                               "duration_s": chk["res"].duration_s}
    if chk["failing_graph"]:
        err.title = "Miscompile: a compiled graph is further from fp64 than eager (measured)"
        err.advice = (f"Measured by one run under torch's accuracy check: graph `{chk['failing_graph']}`"
                      + (f" ({chk['graph_nodes']} FX nodes)" if chk["graph_nodes"] else "") + " fails it"
                      + (f": {rmse_line(rmse)}" if rmse else "") + ". A real miscompile: bisect names the layer, "
                      "pass and op; minify --kind accuracy shrinks the graph.")
        err.next_command = knowledge.render_command({"command": "{cli} bisect -- {target}"}, *where)
    elif chk["precision"]:
        row = knowledge.triage_row("accuracy_tolerance")
        err.category, err.title, err.skill, err.side = row["id"], row["title"], row.get("skill"), row["side"]
        err.advice, err.next_command = precision_meaning(), None
    else:
        # no graph flagged, but the failure is not an exception the check could pair with it (an exit
        # code, a message; seen with the Triton relu injection on an H100): not sure, so bisect decides
        err.advice = ("Torch's accuracy check (one more run) flagged no compiled graph, but the program's failure "
                      f"({chk['error'] or 'exit ' + str(chk['res'].returncode)}) is not an exception it can compare: "
                      "not sure whether this is rounding. Bisect runs the program the way it fails and finds the "
                      "layer and pass if the compiler changes the result.")
        err.next_command = knowledge.render_command({"command": "{cli} bisect -- {target}"}, *where)
