"""compare: before/after of two triage runs (did my change work?)."""
import os

from ..decide import compare, compare_compile_time, compare_release
from ..decide.runs import run_and_analyze
from ..run import proc, rundir, torch_versions
from ..errors import CliError
from ..cmdline import cli_command, command_line
from ..show import views_compare
from ..show.output import emit

HELP = "before/after of two triage runs: breaks fixed/still/new, recompiles, times, output"
ORDER = 12
TAKES_TARGET = True
DESCRIPTION = """Compare two triage runs of the same program (e.g. before and after you edited it):
graph breaks fixed / still there / new (matched by registry id, the source line's text and the
function, so line shifts from the edit do not matter), recompiles and their causes, graphs, ops,
compile and wall time, exit status, first error, and whether the printed output changed (lines
with clock stamps and timings masked). With `-- <command>` it first runs triage on the command (your edited
program) and compares that run with BEFORE. With `--torch VERSION -- <command>` it runs the same
unmodified command under your torch and under torch VERSION (installed once into a cached throwaway
venv that sees your other packages) and says what changed between the releases: "it broke after I
upgraded torch". Two compile-time run dirs (or one and a command) compare compile time, phases and
compiled frames of their cold runs, and whether the printed output changed. A multi-rank run dir (triage --nproc N) is compared rank by rank; with
`-- <command>` the command is launched again the same way (same --nproc and --torchrun-args)."""
EPILOG = """examples:
  compile_debug.py compare /tmp/compile-debug/triage-A /tmp/compile-debug/triage-B
  compile_debug.py compare /tmp/compile-debug/triage-A -- python train_edited.py
  compile_debug.py compare --torch 2.14.1 -- python train.py          # your torch vs 2.14.1
  compile_debug.py compare --torch 2.13.0 --torch 2.14.1 -- python train.py"""


def add_arguments(p):
    p.add_argument("runs", nargs="*", metavar="RUN_DIR", help="BEFORE [AFTER]: triage (or compile-time) run dirs")
    p.add_argument("--timeout", type=float, default=1800, metavar="SEC",
                   help="with `-- <command>`: kill the program after SEC seconds (default 1800)")
    p.add_argument("--torch", action="append", default=[], metavar="VERSION|PYTHON",
                   help="run the command under this torch release too (repeatable); a python path that has it "
                        "also works. Versions are installed once into COMPILE_DEBUG_TORCH_CACHE "
                        "(default ~/.cache/compile-debug/torch)")


def run(args):
    runs, target = list(args.runs), list(args.target or [])
    if args.timeout <= 0:
        raise CliError("--timeout must be positive")
    if args.torch:
        return run_versions(args, runs, target)
    if runs and _ranks_of(runs[0]) is not None:
        return run_multirank(args, runs, target)
    ct_before = compare_compile_time.load(runs[0]) if runs else None
    if ct_before is not None:
        return run_compile_time(args, ct_before, runs, target)
    if target and len(runs) == 1:
        before = compare.load_run(runs[0])
        argv = proc.resolve_target(target)
        run_dir = rundir.make(args.out, "compare")
        after_dir = os.path.join(run_dir, "after")
        os.makedirs(after_dir)
        tstr = command_line(argv)
        proc.progress(f"running triage on {tstr} (timeout {args.timeout:.0f} s); artifacts in {after_dir}")
        rep = run_and_analyze(argv, after_dir, timeout=args.timeout, tlparse=False)
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
    nxt = cli_command("fix", "--from", after["run_dir"]) if compare.fix_left(res, after) else None
    emit(args, result, views_compare.markdown(res, nxt))
    return 0


def run_compile_time(args, before, runs, target):
    """compare on compile-time runs: compile time, phases and frames of the cold runs, and whether the
    printed output changed. With `-- <command>`, one cold compile-time run of the command first."""
    if target and len(runs) == 1:
        from . import compile_time
        from ..decide import compile_time_advice
        argv = proc.resolve_target(target)
        run_dir = rundir.make(args.out, "compare")
        after_dir = os.path.join(run_dir, "after")
        proc.progress(f"compile-time cold run: {command_line(argv)} (fresh cache dir, timeout {args.timeout:.0f} s); "
                      f"artifacts in {after_dir}")
        cold, summary = compile_time._run(argv, after_dir, "cold", args.timeout, [])
        d = {"command": "compile-time", "run_dir": after_dir, "target": command_line(argv),
             "target_status": "ok" if cold["exit_code"] == 0 else f"exit {cold['exit_code']}",
             "torch_version": summary["torch_version"], "summary": summary, "runs": {"cold": cold}}
        d["suggestions"] = compile_time_advice.suggestions(summary, {"cold": summary}, {"cold": cold}, argv)
        emit_quiet(after_dir, d)
        after = compare_compile_time.load(after_dir)
    elif len(runs) == 2 and not target:
        after, run_dir = compare_compile_time.load(runs[1]), None
        if after is None:
            raise CliError(f"{runs[0]} is a compile-time run: compare it with another compile-time run dir, or "
                           "with a command (compare RUN -- python train.py)")
    else:
        raise CliError("give two compile-time run dirs (compare BEFORE AFTER) or one and a command "
                       "(compare BEFORE -- python prog.py)")
    try:
        res = compare_compile_time.compare(before, after)
        md = views_compare.compile_time_markdown(res)
    except (KeyError, TypeError, AttributeError, ValueError) as e:
        raise CliError(f"a compile-time report.json that this version cannot read ({type(e).__name__}: {e}): run "
                       "compile-time again on the command")
    result = {"command": "compare", "run_dir": run_dir, "status": res["verdict"].split(":")[0], **res}
    emit(args, result, md)
    return 0


def _ranks_of(path):
    """The rank numbers of a multi-rank triage run dir (triage --nproc N), else None."""
    import json
    p = os.path.abspath(os.path.expanduser(path))
    try:
        with open(os.path.join(p, "report.json"), encoding="utf-8") as f:
            d = json.load(f)
    except (OSError, ValueError):
        return None
    if not isinstance(d, dict) or not d.get("nproc") or "ranks" not in d:
        return None
    return d, sorted(int(n[5:]) for n in os.listdir(p) if n.startswith("rank_") and n[5:].isdigit()
                     and os.path.isfile(os.path.join(p, n, "report.json")))


def run_multirank(args, runs, target):
    """compare on multi-rank runs (triage --nproc N): rank by rank. With `-- <command>`, the command is
    launched again the same way (same --nproc and --torchrun-args) first."""
    from ._triage_nproc import run_triage
    (bd, branks) = _ranks_of(runs[0])
    if target:   # the user's own torchrun command: its script and arguments (relaunched like the before run)
        from ..run.multirank_launch import torchrun_target
        launch = torchrun_target(target)
        target = launch[2] if launch else target
    if target and len(runs) == 1:
        run_dir = rundir.make(args.out, "compare")
        after_dir = os.path.join(run_dir, "after")
        ns = type("Args", (), {"out": after_dir, "json": False})()
        proc.progress(f"running triage --nproc {bd['nproc']} on {command_line(proc.resolve_target(target))} "
                      f"(timeout {args.timeout:.0f} s); artifacts in {after_dir}")
        res_after, _ = run_triage(ns, nproc=int(bd["nproc"]), target=target, timeout=args.timeout,
                                  torchrun_args=" ".join(bd.get("torchrun_args") or []) or None, tlparse=False)
        emit_quiet(after_dir, res_after)
        after = after_dir
    elif len(runs) == 2 and not target and _ranks_of(runs[1]) is not None:
        run_dir, after = None, runs[1]
    else:
        raise CliError(f"{runs[0]} is a multi-rank run (triage --nproc {bd['nproc']}): compare it with another "
                       "multi-rank run dir, or with a command (compare RUN -- python train.py), launched the same way")
    aranks = _ranks_of(after)[1]
    pairs, md = {}, []
    for r in sorted(set(branks) | set(aranks)):
        if r not in branks or r not in aranks:
            md.append(f"## rank {r}: only in the {'after' if r in aranks else 'before'} run\n")
            continue
        res = compare.compare(compare.load_run(os.path.join(runs[0], f"rank_{r}")),
                              compare.load_run(os.path.join(after, f"rank_{r}")))
        pairs[str(r)] = res
        md.append(f"## rank {r}: " + views_compare.markdown(res, None).split("# compare: ", 1)[1])
    verdicts = {r: p["verdict"] for r, p in pairs.items()}
    result = {"command": "compare", "run_dir": run_dir, "nproc": bd["nproc"], "after": os.path.abspath(after),
              "status": "same" if len(set(verdicts.values())) == 1 else "ranks differ", "ranks": pairs}
    head = f"# compare, {bd['nproc']} ranks: " + "; ".join(f"rank {r}: {v}" for r, v in verdicts.items())
    emit(args, result, head + "\n\n" + "\n\n".join(md))
    return 0


def emit_quiet(run_dir, d):
    """Write report.json of a triage run made for compare/fix (no printing)."""
    import json
    with open(os.path.join(run_dir, "report.json"), "w", encoding="utf-8") as f:
        json.dump(d, f, indent=1, default=str)


def run_versions(args, runs, target):
    """The same command under several torch releases; what changed from each to the next."""
    import shutil
    if runs or not target:
        raise CliError("--torch compares one command under torch releases: `compare --torch 2.15.0 -- python prog.py`")
    argv = proc.resolve_target(target)
    if not torch_versions.is_python(argv[0]):
        raise CliError(f"--torch needs a command that starts with a Python interpreter (python prog.py); got {argv[0]}")
    base = shutil.which(argv[0]) or argv[0]
    found = {}
    for py, ver in [(base, torch_versions.probe(base))] + [torch_versions.python_for(s, base) for s in args.torch]:
        found.setdefault(ver, py)
    if len(found) < 2:
        raise CliError(f"only one torch release to compare ({', '.join(found)}): name another with --torch")
    order = sorted(found, key=torch_versions.ver_key)
    run_dir = rundir.make(args.out, "compare")
    reps = []
    for ver in order:
        d_run = os.path.join(run_dir, "torch-" + ver.split("+")[0])
        os.makedirs(d_run)
        cmd = [found[ver]] + argv[1:]
        proc.progress(f"torch {ver}: triage of {command_line(argv)} (timeout {args.timeout:.0f} s)")
        rep = run_and_analyze(cmd, d_run, timeout=args.timeout, tlparse=False, eager_check=True)
        d = rep.to_dict()
        d["status"], d["target"] = rep.status, command_line(argv)
        emit_quiet(d_run, d)
        reps.append((ver, compare.load_run(d_run)))
    pairs = []
    for (va, a), (vb, b) in zip(reps, reps[1:]):
        res = compare.compare(a, b)
        pairs.append({"from": va, "to": vb, **res, "verdict": compare_release.release_verdict(res, vb)})
    result = {"command": "compare", "run_dir": run_dir, "status": "changed" if any(
        p["verdict"] != "no change" for p in pairs) else "same", "torch": order, "pairs": pairs}
    emit(args, result, views_compare.releases_markdown(pairs, command_line(argv)))
    return 0
