"""compare: before/after of two triage runs (did my change work?)."""
import os

from .. import analyze, compare, proc, rundir
from ..errors import CliError
from ..output import cli_command, emit

HELP = "before/after of two triage runs: breaks fixed/still/new, recompiles, times, output"
ORDER = 12
TAKES_TARGET = True
DESCRIPTION = """Compare two triage runs of the same program (e.g. before and after you edited it):
graph breaks fixed / still there / new (matched by registry id, the source line's text and the
function, so line shifts from the edit do not matter), recompiles and their causes, graphs, ops,
compile and wall time, exit status, first error, and whether the printed output changed (lines
with timings ignored). With `-- <command>` it first runs triage on the command (your edited
program) and compares that run with BEFORE."""
EPILOG = """examples:
  compile_debug.py compare /tmp/compile-debug/triage-A /tmp/compile-debug/triage-B
  compile_debug.py compare /tmp/compile-debug/triage-A -- python train_edited.py"""


def add_arguments(p):
    p.add_argument("runs", nargs="*", metavar="RUN_DIR", help="BEFORE [AFTER]: triage run dirs")
    p.add_argument("--timeout", type=float, default=1800, metavar="SEC",
                   help="with `-- <command>`: kill the program after SEC seconds (default 1800)")


def run(args):
    runs, target = list(args.runs), list(args.target or [])
    if args.timeout <= 0:
        raise CliError("--timeout must be positive")
    if target and len(runs) == 1:
        before = compare.load_run(runs[0])
        argv = proc.resolve_target(target)
        run_dir = rundir.make(args.out, "compare")
        after_dir = os.path.join(run_dir, "after")
        os.makedirs(after_dir)
        tstr = analyze.target_string(argv)
        proc.progress(f"running triage on {tstr} (timeout {args.timeout:.0f} s); artifacts in {after_dir}")
        rep = analyze.run_and_analyze(argv, after_dir, timeout=args.timeout, tlparse=False)
        d = rep.to_dict()
        d["status"], d["target"] = rep.status, tstr
        emit_quiet(after_dir, d)
        after = compare.load_run(after_dir)
    elif len(runs) == 2 and not target:
        before, after = compare.load_run(runs[0]), compare.load_run(runs[1])
        run_dir = None
    else:
        raise CliError("give two triage run dirs (compare BEFORE AFTER) or one and a command "
                       "(compare BEFORE -- python prog.py)")
    res = compare.compare(before, after)
    result = {"command": "compare", "run_dir": run_dir, "status": res["verdict"].split(":")[0], **res}
    left = compare.unexpected_recompiles(after)
    nxt = cli_command("fix", "--from", after["run_dir"]) if (res["graph_breaks"]["still"] or res["graph_breaks"]["new"]
                                                             or (left if left is not None
                                                                 else res["after"]["recompiles"])) else None
    emit(args, result, compare.markdown(res, nxt))
    return 0


def emit_quiet(run_dir, d):
    """Write report.json of a triage run made for compare/fix (no printing)."""
    import json
    with open(os.path.join(run_dir, "report.json"), "w", encoding="utf-8") as f:
        json.dump(d, f, indent=1, default=str)
