"""`inductor -- <command...>`: per compiled graph, the kernels Inductor generated (Triton / C++ /
extern / fallback), the ATen ops fused into each, the user lines behind them (provenance), the
output code path and cache hits. One run; `--from RUN_DIR` re-reads a previous run."""
import os
import re

from ..decide import inductor as DI
from ..run import inductor_run as IR
from ..show import output, views_inductor
from ..errors import CliError

HELP = "kernels Inductor generated per graph: fusion, fallbacks, output code, user lines"
ORDER = 40
TAKES_TARGET = True
DESCRIPTION = """Run the target once with TORCH_TRACE, Inductor provenance tracking and
TORCH_COMPILE_DEBUG into the run dir, and list per compiled graph the generated kernels (Triton / C++
/ extern such as mm / fallback to an eager ATen op), the ATen ops fused into each kernel, the user
source lines behind it, the output code file, and FX graph cache hits."""
EPILOG = """examples:
  compile_debug.py inductor -- python train.py --steps 2
  compile_debug.py inductor --perf-hints -- python train.py
  compile_debug.py inductor --from /tmp/compile-debug/inductor-... --code cpp_fused_add_relu_0"""


def add_arguments(p):
    IR.add_common(p)
    p.add_argument("--perf-hints", action="store_true",
                   help="also capture Inductor's perf hints and cudagraph skips (TORCH_LOGS=perf_hints,cudagraphs)")
    p.add_argument("--code", metavar="KERNEL", help="print only this kernel's source (a name from the kernel table)")
    p.add_argument("--graph", metavar="ID", help="only this graph, e.g. 0/0 or 1/0-backward")
    p.add_argument("--max-kernels", type=int, default=25, metavar="N", help="kernels listed per graph (default 25)")


def run(args):
    if args.code is not None and not re.match(r"^[\w.]+$", args.code):
        raise CliError(f"--code {args.code!r}: expected a kernel name such as cpp_fused_add_relu_0")
    if args.max_kernels < 1:
        raise CliError("--max-kernels must be >= 1")
    extra = {}
    if args.perf_hints and not args.from_dir:
        user = os.environ.get("TORCH_LOGS")
        extra["TORCH_LOGS"] = (user + "," if user else "") + "perf_hints,cudagraphs"
        extra["TORCH_LOGS_OUT"] = "__RUN_DIR__/torch_logs.txt"
    r = _run(args, extra)
    results = DI.per_graph(r)
    hints = DI.perf_hints(os.path.join(r["run_dir"], "torch_logs.txt"))

    if args.code is not None:
        result = DI.code_result(args, r, results)
        output.emit(args, result, views_inductor.code_md(result))
        return 0

    result = DI.inductor_result(args, r, results, hints)
    output.emit(args, result, views_inductor.markdown(result))
    return 0


def _run(args, extra):
    if "TORCH_LOGS_OUT" in extra:
        # make the run dir first so the log file lands inside it
        from ..run import rundir
        if not args.from_dir:
            args.out = rundir.make(args.out, "inductor")
            extra["TORCH_LOGS_OUT"] = os.path.join(args.out, "torch_logs.txt")
    return IR.run(args, "inductor", extra)
