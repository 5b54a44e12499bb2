"""`aoti FILE.py:FACTORY`: build, check and debug an AOTInductor package.

export -> torch._inductor.aoti_compile_and_package -> aoti_load_package -> run -> compare with
eager (allclose, then the fp64 RMSE rule of torch._dynamo.utils.same). Reports compile time,
package path and size, the outputs' error, and the failing phase with its class. The run phase
sets AOTI_RUNTIME_CHECK_INPUTS=1 (the package then checks input shapes/dtypes/strides).

--debug-crash rebuilds with the kernel-name printer (AOT_INDUCTOR_DEBUG_INTERMEDIATE_VALUE_PRINTER=3)
and runs with CUDA_LAUNCH_BLOCKING=1 PYTORCH_NO_CUDA_MEMORY_CACHING=1 AOTI_RUNTIME_CHECK_INPUTS=1
to name the first failing kernel. --minify drives the AOTI minifier (DUMP_AOTI_MINIFIER=1) on a
compile (or run) failure and re-runs the minimal repro.py to verify it still fails."""
import glob
import os
import re
import sys

from ..show import output
from .. import cmdline
from ..run import proc, rundir
from ..errors import CliError
from .export import _short, class_info, check_model_spec, load_error, read_result, worker_problem

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

PHASE_CLASSES = {
    "cpp_compile_error": ("C++ compile error in generated code",
                          "An Inductor codegen bug (or a bad inductor config). Run with --minify for a minimal repro.py "
                          "to report; work around by changing the failing op or `--config` options."),
    "triton_compile_error": ("Triton compile error in a generated kernel",
                             "An Inductor/Triton codegen bug. Run --minify; check the triton version matches torch."),
    "lowering_error": ("Inductor lowering error",
                       "An op Inductor cannot lower: check the op in the message; run --minify."),
    "no_cxx_compiler": ("no working C++ compiler",
                        "AOTInductor needs g++/clang++, Python headers and OpenMP: install them (or set CXX)."),
    "compile_error": ("AOTInductor compile error", "Read the message; run --minify for a minimal repro."),
    "load_error": ("package does not load",
                   "Load on the same torch version/device kind it was built with; rebuild the package."),
    "input_check": ("inputs rejected by the package's input check",
                    "The call's shapes/dtypes/strides differ from what the package was built for. Export with "
                    "dynamic_shapes covering them (`export --dynamic`), or call with the built shapes. Without "
                    "AOTI_RUNTIME_CHECK_INPUTS=1 this silently gives wrong results or crashes."),
    "illegal_memory_access": ("CUDA illegal memory access",
                              "Re-run with --debug-crash to name the first failing kernel; check input shapes "
                              "(AOTI_RUNTIME_CHECK_INPUTS=1) and dynamic dims first."),
    "device_assert": ("device-side assert in a kernel",
                      "Usually an out-of-range index (embedding/gather): check index inputs; --debug-crash names the kernel."),
    "out_of_memory": ("out of memory", "Smaller inputs, or check for a leak; PYTORCH_NO_CUDA_MEMORY_CACHING=1 shows real usage."),
    "runtime_error": ("error while running the package", "Read the message; --debug-crash names the kernel that ran last."),
    "crash": ("the process crashed", "Re-run with --debug-crash (kernel names are printed line by line)."),
    "mismatch": ("output differs from eager beyond tolerance",
                 "Run the accuracy command on the same model to find the layer/kernel; try --config fallback_random=true "
                 "for RNG ops."),
    "eager_error": ("the model fails in eager", "Fix the model/inputs first: eager must run."),
    "compare_error": ("could not compare outputs", "Output structure differs from eager: check the output pytree."),
}

DEBUG_ENV = {
    "AOTI_RUNTIME_CHECK_INPUTS": "1",
    "CUDA_LAUNCH_BLOCKING": "1",
    "PYTORCH_NO_CUDA_MEMORY_CACHING": "1",
    "AOT_INDUCTOR_DEBUG_INTERMEDIATE_VALUE_PRINTER": "3",
}


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
                             "excerpt": "\n".join(ph.get("errors") or []) or _excerpt(ph.get("full_message"))}
    f = result["failure"]
    if f and f["phase"] in ("run", "load") and _GENERIC.search(f.get("message") or ""):
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


_GENERIC = re.compile(r"API call failed|^run_func_\(")
_STDERR_ERR = re.compile(r"^(Error: .+|Unknown exception occurred\.?|.*CUDA error: .+|terminate called .+|"
                         r".*device-side assert.*|.*illegal memory access.*)$")


def stderr_error(pr):
    """The AOTI runtime's own error line on the worker's stderr (the last one), or None."""
    last = None
    for line in pr.read_stderr(400000).splitlines():
        line = line.strip()
        if _STDERR_ERR.match(line) and not line.startswith("[worker]"):
            last = line
    if last and last.startswith("Error: "):
        last = last[len("Error: "):]
    return last


def _excerpt(text, n=12):
    """The informative tail of a long compile error (the C++/Triton error lines), short."""
    if not text:
        return None
    lines = [l for l in str(text).splitlines() if l.strip()]
    keep = [l for l in lines if re.search(r"error|Error|assert|illegal", l)]
    return "\n".join((keep or lines)[-n:])[-1500:]


_LAUNCH = re.compile(r"\[ (before_launch|after_launch): (\S+) \]")


def kernel_trace(pr, run_dir, result):
    """Parse the kernel-name printer's lines: the last kernel launched but not finished failed."""
    text = pr.read_stdout()
    launched, finished = [], []
    for m in _LAUNCH.finditer(text):
        (launched if m.group(1) == "before_launch" else finished).append(m.group(2))
    out = {"env": DEBUG_ENV, "kernels_launched": len(launched), "kernels_finished": len(finished),
           "order": launched[:50], "first_failing_kernel": None, "verdict": None,
           "log": os.path.join(run_dir, "aoti_worker.stdout")}
    failed = result.get("failed_phase")
    pending = list(finished)
    unfinished = []
    for k in launched:
        if k in pending:
            pending.remove(k)
        else:
            unfinished.append(k)
    if not launched:
        cls = (result.get("phases", {}).get(failed) or {}).get("cls") if failed else None
        if failed == "compile" and cls in ("device_assert", "illegal_memory_access"):
            out["verdict"] = (f"a kernel failed ({cls}) while AOTInductor ran the kernels during compilation "
                              "(autotuning/benchmarking), before the package existed: the kernel printer cannot "
                              "name it; minify the compile (--minify) or debug the graph with torch.compile "
                              "(TORCH_LOGS=output_code, CUDA_LAUNCH_BLOCKING=1)")
        else:
            out["verdict"] = ("no kernel names printed: the run did not reach the kernels" if failed in ("run", None)
                              else f"the {failed} phase failed before any kernel ran")
    elif unfinished and failed == "run" or unfinished and result.get("worker_problem"):
        out["first_failing_kernel"] = unfinished[0]
        out["verdict"] = f"{unfinished[0]} started and never finished: it is the first failing kernel"
        out["kernel_code_hint"] = "the kernel's source is in the package (unzip -l the .pt2; grep the kernel name)"
    elif failed == "run":
        out["verdict"] = "every kernel finished: the failure is outside the kernels (input check, extern op, output)"
    elif failed == "compare":
        out["verdict"] = ("all kernels ran but the output is wrong: use AOT_INDUCTOR_DEBUG_INTERMEDIATE_VALUE_PRINTER=2 "
                          "(values) or the accuracy command to find the kernel")
    else:
        out["verdict"] = "the instrumented run passed (a crash may depend on inputs or timing)"
    return out


def _find(pattern, root):
    hits = sorted(glob.glob(os.path.join(root, "**", pattern), recursive=True), key=os.path.getmtime)
    return hits[-1] if hits else None


_MARKERS = {"cpp_compile_error": ("CppCompileError", "C++ compile error"),
            "triton_compile_error": ("CompilationError", "triton"),
            "lowering_error": ("LoweringException",)}


def minify(args, run_dir, result):
    """Run minifier_launcher.py minify; then re-run the repro.py it wrote and check it still fails."""
    out = {"ran": False}
    if result["failed_phase"] not in ("compile", "run"):
        out["note"] = (f"nothing to minify: the {result['failed_phase']} phase failed" if result["failed_phase"]
                       else "nothing to minify: the package compiled, ran and matched eager")
        return out
    launcher = _find("minifier_launcher.py", os.path.join(run_dir, "debug"))
    if not launcher:
        out["note"] = "torch wrote no minifier_launcher.py (DUMP_AOTI_MINIFIER=1 was set)"
        return out
    out["launcher"] = launcher
    mdir = os.path.join(run_dir, "minify")
    os.makedirs(mdir, exist_ok=True)
    proc.progress("minifying (AOTI minifier: one compile per step, several minutes)")
    # --skip-sanity: the worker just saw this exact compile (same configs) fail
    pr = proc.run([sys.executable, launcher, "minify", "--skip-sanity"], cwd=mdir, timeout=args.timeout,
                  stdout_path=os.path.join(run_dir, "minify.stdout"), stderr_path=os.path.join(run_dir, "minify.stderr"))
    out.update(ran=True, seconds=pr.duration_s, timed_out=pr.timed_out, exit=pr.returncode,
               log=os.path.join(run_dir, "minify.stderr"))
    log = pr.read_stderr() + pr.read_stdout()
    m = re.findall(r"\((\d+) nodes, (\d+) inputs\)", log)
    if m:
        out["nodes_before"] = int(m[0][0])
    m = re.findall(r"Writing checkpoint with (\d+) nodes", log)
    if m:
        out["nodes_after"] = int(m[-1])
    m = re.search(r"Made (\d+) queries", log)
    if m:
        out["queries"] = int(m.group(1))
    repro = os.path.join(mdir, "repro.py")
    if not os.path.exists(repro):
        out["note"] = "the minifier wrote no repro.py" + (" (timed out; raise --timeout)" if pr.timed_out else "")
        return out
    out["repro"] = repro
    proc.progress("verifying the minimal repro (python repro.py)")
    cdir = os.path.join(run_dir, "repro_check")
    os.makedirs(cdir, exist_ok=True)
    vr = proc.run([sys.executable, repro], cwd=cdir, timeout=args.timeout,
                  stdout_path=os.path.join(run_dir, "repro_check.stdout"),
                  stderr_path=os.path.join(run_dir, "repro_check.stderr"))
    vtext = vr.read_stderr() + vr.read_stdout()
    cls = (result.get("failure") or {}).get("cls")
    markers = _MARKERS.get(cls, ())
    same = (not vr.ok) and (not markers or any(k in vtext for k in markers))
    out["verified"] = bool(same)
    out["repro_exit"] = vr.returncode
    out["repro_error"] = cmdline.clip(next((l for l in reversed(vtext.splitlines()) if "Error" in l), ""), 200)
    return out


def next_command(args, r):
    f = r.get("failure") or {}
    mn = r.get("minify") or {}
    if mn.get("repro") and mn.get("verified"):
        return cmdline.command_line([sys.executable, mn['repro']])
    if r["status"] == "ok":
        if args.device == "cpu":
            return cmdline.cli_command("aoti", args.model, "--device", "cuda")
        return cmdline.cli_command("export", args.model, "--dynamic")
    if f.get("phase") == "export":
        return cmdline.cli_command("export", args.model)
    if f.get("phase") == "compile" and not args.minify:
        return cmdline.cli_command("aoti", args.model, "--minify", *(_cfg(args)))
    if f.get("phase") == "compare":
        return cmdline.cli_command("accuracy", args.model)
    if f.get("cls") == "input_check":
        return cmdline.cli_command("export", args.model, "--dynamic")
    if f.get("phase") == "run" and args.debug_crash and f.get("cls") != "input_check":
        return cmdline.cli_command("aoti", args.model, "--device", args.device, "--minify", *(_cfg(args)))
    if f.get("phase") in ("run", "load") and not args.debug_crash:
        return cmdline.cli_command("aoti", args.model, "--device", args.device, "--debug-crash", *(_cfg(args)))
    return cmdline.cli_command("aoti", args.model, "--device", args.device)


def _cfg(args):
    out = []
    for c in args.config:
        out += ["--config", c]
    return out


def _size(n):
    if n is None:
        return "?"
    return f"{n / 1e6:.1f} MB" if n >= 1e6 else f"{n / 1e3:.0f} kB"


def render(r):
    out = [f"# aoti {_short({'file': r['target']})} on {r['device']}: {r['status'].upper()} "
           f"(torch {r.get('torch_version') or '?'})", ""]
    rows = []
    for name, ph in r["phases"].items():
        if ph.get("ok"):
            info = ""
            if name == "compile":
                info = f"{_size(ph.get('size_bytes'))} {ph.get('package')}"
            elif name == "compare":
                errs = [o.get("max_abs_err") for o in ph.get("outputs") or [] if o.get("max_abs_err") is not None]
                info = f"{ph.get('count')} output(s), max abs err {max(errs) if errs else 0:.3g} (tol {ph.get('tol')})"
            elif name == "export":
                info = f"{ph.get('nodes')} nodes"
            rows.append([name, "ok", f"{ph.get('seconds', '')} s", info])
        elif ph.get("ok") is None:
            rows.append([name, "not finished", "", ""])
        else:
            rows.append([name, f"FAIL {ph.get('cls')}", f"{ph.get('seconds', '')} s", cmdline.clip(ph.get("message"), 120)])
    if rows:
        out += [output.table(["phase", "result", "time", "detail"], rows), ""]
    if r.get("inputs"):
        out.append(f"Run inputs from {_short({'file': r['inputs']})}: shapes {r.get('run_inputs')}")
    out.append(f"Input check (AOTI_RUNTIME_CHECK_INPUTS=1): {'on' if r['check_inputs'] else 'off'}")
    if r.get("package"):
        out.append(f"Package: {r['package']} ({_size(r.get('package_size_bytes'))})"
                   + (f", compiled in {r['compile_seconds']} s" if r.get("compile_seconds") else ""))
    if r.get("worker_problem"):
        out.append(f"Worker: {r['worker_problem']}")
    f = r.get("failure")
    if f:
        loc = f.get("location")
        out += ["", f"## {f['phase']} failed: {f['title']} [{f['cls']}]" + (f" at {_short(loc)}" if loc else "")]
        if loc and loc.get("code"):
            out.append(f"    {loc['code']}")
        if f.get("message"):
            out.append(f"Error: {cmdline.clip(f['message'], 300)}")
        if f.get("excerpt") and f["phase"] == "compile":
            out += ["```", cmdline.clip(f["excerpt"], 1200), "```"]
        if f.get("error_file"):
            out.append(f"Full error: {f['error_file']}")
        if f["phase"] == "compare":
            bad = [o for o in r["phases"]["compare"].get("outputs") or [] if not o.get("ok")]
            for o in bad[:5]:
                out.append(f"- output {o['index']} {o.get('shape')}: " + (o.get("problem") or
                           f"max abs err {o.get('max_abs_err'):.3g}, max rel err {o.get('max_rel_err'):.3g}"))
        out.append(f"Fix: {f['fix']}")
    dc = r.get("debug_crash")
    if dc:
        out += ["", "## --debug-crash (kernel-name printer, CUDA_LAUNCH_BLOCKING=1, input check)",
                f"Kernels launched: {dc['kernels_launched']}, finished: {dc['kernels_finished']}"]
        if dc.get("first_failing_kernel"):
            out.append(f"First failing kernel: `{dc['first_failing_kernel']}`")
        out.append(f"Verdict: {dc['verdict']}")
        out.append(f"Kernel log: {dc['log']}")
    mn = r.get("minify")
    if mn:
        out += ["", "## --minify (AOTI minifier)"]
        if mn.get("repro"):
            nodes = f"{mn.get('nodes_before', '?')} -> {mn.get('nodes_after', '?')} nodes"
            out.append(f"Minimal repro: {mn['repro']} ({nodes}, {mn.get('queries', '?')} compiles, {mn.get('seconds')} s)")
            out.append(f"Verified: `{cmdline.command_line([sys.executable, mn['repro']])}` " + ("fails the same way." if mn.get("verified") else
                       f"does NOT reproduce (exit {mn.get('repro_exit')}: {mn.get('repro_error')})"))
        else:
            out.append(mn.get("note") or "no repro")
    out += ["", f"Artifacts: report {r['artifacts']['report_json']}; worker log {r['artifacts']['worker_stderr']}",
            "", f"Next: `{r['next_command']}`"]
    return "\n".join(out)
