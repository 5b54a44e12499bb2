"""`aoti FILE.py:FACTORY`: build, check and debug an AOTInductor package.

export -> torch._inductor.aoti_compile_and_package -> aoti_load_package -> run -> compare with
eager (allclose, then the fp64 RMSE rule of torch._dynamo.utils.same). Reports compile time,
package path and size, the outputs' error, and the failing phase with its class. The run phase
sets AOTI_RUNTIME_CHECK_INPUTS=1 (the package then checks input shapes/dtypes/strides).

--debug-crash rebuilds with the kernel-name printer (AOT_INDUCTOR_DEBUG_INTERMEDIATE_VALUE_PRINTER=3)
and runs with CUDA_LAUNCH_BLOCKING=1 PYTORCH_NO_CUDA_MEMORY_CACHING=1 AOTI_RUNTIME_CHECK_INPUTS=1
to name the first failing kernel. --minify drives the AOTI minifier (DUMP_AOTI_MINIFIER=1) on a
compile (or run) failure and re-runs the minimal repro.py to verify it still fails."""
import os
import re

from ..show import output
from ..show.views_aoti import render
from ..decide.aoti import GENERIC, PHASE_CLASSES, excerpt, kernel_trace, next_command, stderr_error
from ..decide.export import class_info, load_error, worker_problem
from .. import cmdline
from ..run import proc, rundir
from ..run.aoti_run import DEBUG_ENV, minify
from ..run.export_run import check_model_spec, read_result
from ..errors import CliError

from ..run.workers.aoti import classify_run_text  # noqa: E402  (shared rules; no torch import)

HELP = "build, run and check an AOTInductor .pt2 package against eager; debug crashes (IMA), minify"
ORDER = 41
TAKES_TARGET = False
DESCRIPTION = __doc__
EPILOG = """examples:
  compile_debug.py aoti model.py:make                       # export, compile, load, run, compare (cpu)
  compile_debug.py aoti model.py:make --device cuda
  compile_debug.py aoti model.py:make --package m.pt2 --inputs model.py:real_inputs   # check a built package
  compile_debug.py aoti model.py:make --device cuda --debug-crash   # which kernel crashes (IMA, device assert)
  compile_debug.py aoti model.py:make --minify                      # minimal repro of a compile failure
"""


def add_arguments(p):
    p.add_argument("model", metavar="FILE.py:FACTORY",
                   help="model target; FACTORY() returns (model, args[, kwargs[, dynamic_shapes]])")
    p.add_argument("--device", choices=["cpu", "cuda"], default="cpu", help="device to build and run for (default cpu)")
    p.add_argument("--package", metavar="PT2", help="check this existing .pt2 instead of building one")
    p.add_argument("--inputs", metavar="FILE.py:FACTORY",
                   help="run with this factory's inputs (its model is the eager reference), e.g. other shapes")
    p.add_argument("--config", action="append", default=[], metavar="KEY=VALUE",
                   help="inductor config for the compile, e.g. max_autotune=true (repeatable; VALUE is JSON or a string)")
    p.add_argument("--tol", type=float, default=1e-4, help="tolerance (allclose rtol=atol, and same()'s tol)")
    p.add_argument("--no-check-inputs", action="store_true",
                   help="run without AOTI_RUNTIME_CHECK_INPUTS=1 (as production calls do)")
    p.add_argument("--debug-crash", action="store_true",
                   help="rebuild with kernel-name printing; run with CUDA_LAUNCH_BLOCKING=1 etc.; name the failing kernel")
    p.add_argument("--minify", action="store_true",
                   help="on a compile/run failure, run the AOTI minifier and verify its repro.py")
    p.add_argument("--timeout", type=float, default=900, metavar="SEC",
                   help="limit for each subprocess (default 900; AOTI compiles take 1-2 min on small CPUs)")


def _check_config(items):
    for it in items:
        k, eq, _ = it.partition("=")
        if not eq or not re.fullmatch(r"[A-Za-z_][\w.]*", k):
            raise CliError(f"--config {it!r}: expected KEY=VALUE with an inductor config name, e.g. max_autotune=true")


def run(args):
    path, factory = check_model_spec(args.model, "aoti")
    spec = f"{path}:{factory}"
    inputs_spec = None
    if args.inputs:
        ip, ifac = check_model_spec(args.inputs, "aoti --inputs")
        inputs_spec = f"{ip}:{ifac}"
    if args.package:
        if not os.path.isfile(args.package):
            raise CliError(f"--package {args.package}: no such file")
        if args.minify:
            raise CliError("--minify needs a build: drop --package")
    _check_config(args.config)
    if args.debug_crash and args.minify:
        raise CliError("use --debug-crash or --minify, not both")
    run_dir = rundir.make(args.out, "aoti")
    existing = bool(args.package) and not args.debug_crash
    pkg = os.path.abspath(args.package) if existing else os.path.join(run_dir,
                                                                      "debug.pt2" if args.debug_crash else "model.pt2")
    result_path = os.path.join(run_dir, "aoti_result.json")
    wargs = ["--spec", spec, "--result", result_path, "--package", pkg, "--device", args.device,
             "--tol", str(args.tol)]
    if existing:
        wargs.append("--existing")
    if inputs_spec:
        wargs += ["--inputs", inputs_spec]
    for c in args.config:
        wargs += ["--config", c]
    env = {"TORCH_COMPILE_DEBUG_DIR": os.path.join(run_dir, "debug")}
    if not args.no_check_inputs:
        env["AOTI_RUNTIME_CHECK_INPUTS"] = "1"
    if args.debug_crash:
        env.update(DEBUG_ENV)
        wargs.append("--kernel-names")
    if args.minify:
        env["DUMP_AOTI_MINIFIER"] = "1"
    what = "load+run+compare" if existing else "export+compile+load+run+compare"
    proc.progress(f"aoti {os.path.basename(path)}:{factory} on {args.device}: {what}"
                  f"{' with crash instrumentation' if args.debug_crash else ''}"
                  f"{'' if existing else ' (the AOTInductor compile takes 1-2 min on a small CPU)'}; run dir {run_dir}")
    pr = proc.run_worker("aoti", wargs, run_dir=run_dir, timeout=args.timeout, tag="aoti_worker", env_add=env,
                         cwd=run_dir)
    res = read_result(result_path) or {}
    if res.get("load_error"):
        raise load_error(res["load_error"], res["load_error"].get("target") or args.model)
    if res.get("setup_error"):
        raise CliError(res["setup_error"])
    problem = worker_problem(pr, res, run_dir, "aoti_worker")
    phases = res.get("phases") or {}
    failed = res.get("failed_phase")
    if problem and not failed:
        # died inside a phase (signal, abort, timeout): that phase failed
        failed = res.get("phase") if res.get("phase") in phases else None
        if failed:
            ph = phases[failed]
            ph.update(ok=False, cls="timeout" if pr.timed_out else "crash", message=problem)
    status = "ok" if not failed and not problem else ("timeout" if pr.timed_out else "failed")
    result = {
        "command": "aoti", "run_dir": run_dir, "status": status, "target": spec, "device": args.device,
        "torch_version": res.get("torch_version"), "inputs": inputs_spec, "run_inputs": res.get("run_inputs"),
        "failed_phase": failed,
        "failure": None,
        "phases": {k: {kk: vv for kk, vv in v.items() if kk != "full_message"} for k, v in phases.items()},
        "package": None, "package_size_bytes": None, "compile_seconds": None,
        "check_inputs": not args.no_check_inputs,
        "worker_problem": problem,
        "artifacts": {"report_json": os.path.join(run_dir, "report.json"), "aoti_result": result_path,
                      "worker_stderr": os.path.join(run_dir, "aoti_worker.stderr"),
                      "worker_stdout": os.path.join(run_dir, "aoti_worker.stdout")},
    }
    comp = phases.get("compile") or {}
    if comp.get("ok"):
        result.update(package=comp.get("package"), package_size_bytes=comp.get("size_bytes"),
                      compile_seconds=comp.get("seconds"))
    elif existing:
        result.update(package=pkg, package_size_bytes=os.path.getsize(pkg))
    if failed:
        ph = phases.get(failed) or {}
        cls = ph.get("cls") or "crash"
        if failed == "export":
            title, fix = class_info(cls)
            fix += "  Details: " + cmdline.cli_command("export", args.model)
        else:
            title, fix = PHASE_CLASSES.get(cls) or class_info(cls, default=None)
        result["failure"] = {"phase": failed, "cls": cls, "title": title, "type": ph.get("type"),
                             "message": ph.get("message"), "location": ph.get("location"), "fix": fix,
                             "errors": ph.get("errors") or [], "error_file": ph.get("error_file"),
                             "excerpt": "\n".join(ph.get("errors") or []) or excerpt(ph.get("full_message"))}
    f = result["failure"]
    if f and f["phase"] in ("run", "load") and GENERIC.search(f.get("message") or ""):
        # older torch (seen on 2.9.1): the exception only says "run_func_(...) API call failed"; the AOTI runtime
        # printed the real error ("Error: ...") on stderr
        real = stderr_error(pr)
        if real:
            f["api_message"] = f["message"]
            f["message"] = real
            if f["phase"] == "run":
                f["cls"] = classify_run_text(real)
                f["title"], f["fix"] = PHASE_CLASSES.get(f["cls"]) or class_info(f["cls"], default=None)
                phases["run"]["cls"] = result["phases"]["run"]["cls"] = f["cls"]
            result["phases"][f["phase"]]["message"] = real
    if args.debug_crash:
        result["debug_crash"] = kernel_trace(pr, run_dir, result)
    if args.minify:
        result["minify"] = minify(args, run_dir, result)
    result["next_command"] = next_command(args, result)
    output.emit(args, result, render(result))
    return 0
