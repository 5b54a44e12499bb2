"""What an `aoti` run left -> the result: failure classes of the phases and their fixes, the AOTI
runtime's own error line, a compile error's excerpt, the --debug-crash verdict (which kernel failed)
and the next command. No torch import."""
import os
import re
import sys

from .. import cmdline
from ..run.aoti_run import DEBUG_ENV


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


GENERIC = re.compile(r"API call failed|^run_func_\(")
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


def excerpt(text, n=12):
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
