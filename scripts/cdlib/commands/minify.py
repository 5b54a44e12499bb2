"""`minify -- <command...>`: shrink a torch.compile failure to a verified standalone repro.

1. reproduce once with TORCH_TRACE (the triage analysis) and the minifier's dump switched on
   (TORCHDYNAMO_REPRO_AFTER=aot, LEVEL=2: a compile/runtime error dumps minifier_launcher.py in
   the same run, so the common case costs no extra run);
2. if that did not dump a launcher, rerun once with the level the failure kind needs: 4 for
   accuracy (AccuracyError), 3 when the process dies (segfault / illegal memory access), or
   repro_after=dynamo when the failure happens before AOTAutograd;
3. `minifier_launcher.py minify` with the run dir as working directory -> repro.py;
4. run repro.py and check it fails the same way; write a pytest regression test next to it."""
from ..run import proc, rundir
from ..errors import CliError
from . import _minify_graph, _minify_source
from ..decide import source_stage

HELP = "shrink a failure to a verified standalone repro.py (+ a pytest regression test)"
ORDER = 45
TAKES_TARGET = True
DESCRIPTION = """Shrink a torch.compile failure (compile error, runtime error in compiled code,
wrong results, crash) to a minimal standalone repro with PyTorch's minifier, verify that the
repro fails the same way, and write a pytest regression test next to it (fails now, passes once
the bug is fixed). When no graph-level repro can be verified (the bug is in what feeds the graph,
in Dynamo's handling of Python state, or it is a graph break), the source stage reduces the .py
program itself, keeping only candidates that still fail compiled the same way and pass eager.
Everything goes into the run dir; your program is not modified."""
EPILOG = """examples:
  compile_debug.py minify -- python train.py
  compile_debug.py minify --kind accuracy -- python check.py     # wrong results
  compile_debug.py minify --kind crash -- python train.py        # segfault / illegal memory access
  compile_debug.py minify --source -- python train.py            # reduce the program file itself
  compile_debug.py minify --from RUN_DIR --good-backend aot_eager # after bisect named the layer
  compile_debug.py minify --source --break GB0109 -- python train.py   # keep one graph break
  compile_debug.py minify --source --recompile -- python train.py      # keep one recompile"""

def add_arguments(p):
    p.add_argument("--kind", choices=["auto", "error", "accuracy", "crash"], default="auto",
                   help="failure kind (default: learned from a triage run): error = compile/runtime "
                        "exception, accuracy = wrong results, crash = the process dies")
    p.add_argument("--after", choices=["auto", "aot", "dynamo"], default="auto",
                   help="where to capture the graph: after AOTAutograd (aot, default) or after Dynamo")
    p.add_argument("--timeout", type=float, default=1800, metavar="SEC",
                   help="limit for each step: the target run, the minifier, the repro check (default 1800)")
    p.add_argument("--from", dest="from_dir", metavar="RUN_DIR",
                   help="a previous triage run dir: reuse its command and failure classification (no triage run)")
    p.add_argument("--jobs", type=int, default=None, metavar="N",
                   help="target runs at a time (default: from the cores and memory); with 2 or more and --kind "
                        "auto, the accuracy dump run (LEVEL=4) runs next to the triage run; 1 = one after the other")
    p.add_argument("--isolate", action="store_true",
                   help="run every minifier query in a fresh process (slower; automatic for crashes)")
    s = p.add_argument_group("source stage (shrink the program file itself; runs on its own with --source, and "
                             "after the graph stage when that gives no verified repro)")
    s.add_argument("--source", action="store_true",
                   help="go straight to the source stage: for failures outside any graph (Dynamo errors, guards, "
                        "what feeds the graph) and, on a program that does not fail, for one graph break or recompile")
    s.add_argument("--source-limit", type=float, default=1800, metavar="SEC",
                   help="time for the source reduction; the smallest program found by then is kept (default 1800)")
    s.add_argument("--good-backend", metavar="NAME",
                   help="a backend the program passes with (bisect's last good one, e.g. aot_eager): every kept "
                        "candidate must pass with it too")
    s.add_argument("--torch-python", metavar="PYTHON",
                   help="a second Python with another torch: every kept candidate keeps the original's outcome there")
    s.add_argument("--cold", action="store_true",
                   help="run every query in a fresh interpreter (default: forks of one that has imported torch and "
                        "the program's imports, once the original keeps its verdict there; verification is cold)")
    s.add_argument("--break", dest="break_id", metavar="GB_ID",
                   help="the graph break to keep (registry id, e.g. GB0291; default: the first in the program file)")
    s.add_argument("--recompile", action="store_true",
                   help="keep a recompile (a function of the program file recompiled on one guard), even where the "
                        "program also breaks a graph (default on a program that neither fails nor breaks a graph)")


def run(args):
    if args.timeout <= 0:
        raise CliError("--timeout must be positive")
    if args.jobs is not None and args.jobs < 1:
        raise CliError("--jobs must be at least 1")
    if args.source_limit <= 0:
        raise CliError("--source-limit must be positive")
    if args.break_id and not args.source:
        raise CliError("--break picks the graph break to keep in the source stage: add --source")
    if args.recompile and not args.source:
        raise CliError("--recompile keeps a recompile in the source stage: add --source")
    if args.recompile and args.break_id:
        raise CliError("--break and --recompile each pick the one event to keep: give one of them")
    tri = None
    if args.from_dir:
        tri = rundir.from_triage_run(args)
    argv = proc.resolve_target(args.target)
    if args.source:
        why = source_stage.applies(argv)
        if why:
            raise CliError(why)
        return _minify_source.run(args, argv, rundir.make(args.out, "minify"), from_dir=args.from_dir)
    return _minify_graph.run(args, argv, tri)
