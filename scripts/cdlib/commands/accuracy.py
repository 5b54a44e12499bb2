"""`accuracy`: how wrong are the compiled results, and which graph / output.

- model target `file.py:factory`: eager vs compiled vs an fp64 reference per output, judged like
  torch._dynamo.utils.same, and whether fallback_random / emulate_precision_casts fix it;
- script target `-- python prog.py`: the program runs under the minifier's accuracy check
  (TORCHDYNAMO_REPRO_AFTER=aot, TORCHDYNAMO_REPRO_LEVEL=4), which compares every compiled graph
  against eager and fp64 and stops at the first failing one; that graph is then measured the
  same way as a model target."""
import json
import os

from ..decide import accuracy as DA
from ..decide import accuracy_check
from ..show import output, views_accuracy
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
    result = DA.model_result(args, run_dir, f"{path}:{name}", data)
    output.emit(args, result, views_accuracy.model_md(result))
    return 0


def _run_script(args):
    argv = proc.resolve_target(args.target)
    run_dir = rundir.make(args.out, "accuracy")
    debug = os.path.join(run_dir, "debug")
    proc.progress("accuracy 1/2: run under the minifier's accuracy check (TORCHDYNAMO_REPRO_LEVEL=4: every "
                  f"compiled graph vs eager and fp64); cwd {run_dir}")
    chk = accuracy_check.run(argv, run_dir, timeout=args.timeout)

    def measure_graph(checkpoint):
        proc.progress("accuracy 2/2: measure the failing graph per output (+ fallback_random / emulate_precision_casts)")
        return _worker(run_dir, ["--graph", checkpoint, "--tol", str(args.tol)], args.timeout, "accuracy_graph",
                       env={"TORCH_COMPILE_DEBUG_DIR": debug}, cwd=run_dir)

    result = DA.script_result(args, run_dir, argv, chk, measure_graph)
    output.emit(args, result, views_accuracy.script_md(result))
    return 0
