"""fix: try every fix that needs no code edit, measure it, rank; then the best set together."""
import os
import time

from ..decide import compare, fix_candidates, fixes
from ..cmdline import command_line
from ..run import proc, rundir
from ..errors import CliError
from ..show.output import emit
from ..show.views_fix import markdown

HELP = "try each config/env fix on the unmodified program, measure it, rank, combine"
ORDER = 11
TAKES_TARGET = True
DESCRIPTION = """For every finding of a triage run (graph break, recompile, recompile limit) that has a
candidate fix needing no edit of your code (knowledge/fixes.yaml: config switches, dynamic sources,
logging functions, torch.compiler.disable on a library function), re-run your unmodified program
with that one change injected at startup and report the measured effect: breaks, recompiles,
graphs, compile and wall time, exit status, whether the output stayed the same. Ranked by measured
gain; then the best compatible set is run together and given as one line of code to add.
Each trial is a subdir of the run dir with its own report.json (compare it with `compare`)."""
EPILOG = """examples:
  compile_debug.py fix -- python train.py
  compile_debug.py fix --from /tmp/compile-debug/triage-20260101-120000-abc123
  compile_debug.py fix --max-fixes 3 --jobs 2 -- python train.py"""


def add_arguments(p):
    p.add_argument("--from", dest="from_dir", metavar="RUN_DIR", help="reuse this triage run as the baseline")
    p.add_argument("--max-fixes", type=int, default=8, metavar="N", help="try at most N candidates (default 8)")
    p.add_argument("--jobs", type=int, metavar="N", help="trials at once (default: CPU cores, at most 4)")
    p.add_argument("--timeout", type=float, default=1800, metavar="SEC",
                   help="one overall limit for all runs together (default 1800)")
    p.add_argument("--no-combine", action="store_true", help="do not run the best fixes together")


def _baseline(args, run_dir, jobs, deadline):
    """The baseline report (from --from or a fresh run) and the control run (a second plain run:
    output determinism and the timing reference under the same load as the trials)."""
    if args.from_dir:
        if args.target:
            raise CliError("--from reuses a triage run; do not also give a target command")
        base = compare.load_run(args.from_dir, "fix --from")
        argv = base.get("command")
        if not isinstance(argv, list) or not argv:
            raise CliError(f"{args.from_dir}: the report has no target command to re-run")
        for a in argv[1:2]:
            if a.endswith(".py") and not os.path.isfile(a):
                raise CliError(f"{a}: not found from here; run fix in the directory the triage ran in")
        tstr = command_line(argv)
        if not fix_candidates.candidates(fix_candidates.findings(base)):   # nothing to try: no control run (blind A/B batch 20: 111 s)
            proc.progress(f"baseline from {base['run_dir']}; no candidate fix to try, so no run")
            return argv, tstr, base, None
        tasks = [("control", lambda t: fixes.run_trial(argv, os.path.join(run_dir, "control"), [], t, tstr))]
        proc.progress(f"baseline from {base['run_dir']}; control run of {tstr}")
        res = fixes.run_parallel(jobs, tasks, deadline, lambda n, r: None)
        return argv, tstr, base, res.get("control")
    argv = proc.resolve_target(args.target)
    tstr = command_line(argv)
    proc.progress(f"baseline and control runs of {tstr}; artifacts in {run_dir}")
    tasks = [(n, (lambda n: lambda t: fixes.run_trial(argv, os.path.join(run_dir, n), [], t, tstr))(n))
             for n in ("baseline", "control")]
    res = fixes.run_parallel(jobs, tasks, deadline, lambda n, r: None)
    if res.get("baseline") is None:
        raise CliError("the overall --timeout ran out before the baseline run")
    return argv, tstr, res["baseline"], res.get("control")


def run(args):
    if args.timeout <= 0 or args.max_fixes < 1 or (args.jobs is not None and args.jobs < 1):
        raise CliError("--timeout, --max-fixes and --jobs must be positive")
    if not args.from_dir and not args.target:
        raise CliError("give the program after `--` (fix -- python train.py) or a triage run (--from RUN_DIR)")
    t0 = time.monotonic()
    deadline = t0 + args.timeout
    jobs = args.jobs or max(1, min(os.cpu_count() or 1, 4))
    proc.runs_at_a_time(jobs)
    run_dir = rundir.make(args.out, "fix")
    argv, tstr, base, ctrl = _baseline(args, run_dir, jobs, deadline)
    deterministic = True
    if ctrl is not None:
        nb, nc = compare.normalize_output(base.get("_stdout")), compare.normalize_output(ctrl.get("_stdout"))
        deterministic = nb == nc
        if not deterministic:
            proc.progress("the program's output differs between two plain runs: output comparison skipped")
    found = fix_candidates.findings(base)
    cands = fix_candidates.candidates(found)
    tried, skipped = cands[: args.max_fixes], cands[args.max_fixes:]
    for c in skipped:
        c["label"] = f"not tried (--max-fixes {args.max_fixes})"
    n = len(tried)
    proc.progress(f"{len(found)} finding(s), {len(cands)} candidate fix(es); trying {n}, {jobs} at a time")
    done = [0]

    def on_done(name, rep):
        done[0] += 1
        c = tried[int(name)]
        if rep is not None and rep.get("timed_out") and rep.get("_timeout_given", args.timeout) < args.timeout:
            c["label"], c["trial_dir"] = "not finished (overall --timeout reached)", rep["run_dir"]
            proc.progress(f"[{done[0]}/{n}] {c['id']}: cut by the overall --timeout")
            return
        if rep is None:
            c["label"] = "not tried (overall --timeout reached)"
            proc.progress(f"[{done[0]}/{n}] {c['id']}: not run (time budget)")
            return
        c["trial_dir"] = rep["run_dir"]
        c["not_applied"] = rep.get("_not_applied")
        if rep.get("_deferred"):
            c["note"] = ("it names something a library adds when the program imports it: put the line after "
                         "your imports, not right after `import torch` (the trial applied it at the first compile)")
        c["effect"] = fixes.effect(base, rep, ctrl, deterministic)
        e = c["effect"]
        e["gone"] = fixes.gone(found, e, rep)
        if e["gain"] <= 0:
            c["note"] = fixes.overridden(argv, c["steps"]) or c.get("note")
        proc.progress(f"[{done[0]}/{n}] {c['id']}: breaks {e['graph_break_sites'][0]}→{e['graph_break_sites'][1]}, "
                      f"recompiles {e['recompiles'][0]}→{e['recompiles'][1]}, {fixes.label(c)}")

    tasks = [(str(i), (lambda i, c: lambda t: fixes.run_trial(argv, os.path.join(run_dir, "trials", f"{i + 1:02d}-{c['id']}"),
                                                                c["steps"], t, tstr))(i, c)) for i, c in enumerate(tried)]
    fixes.run_parallel(jobs, tasks, deadline, on_done)
    _recheck_random(argv, tstr, run_dir, base, tried, jobs, deadline)
    fixes.credit_limit_hits(tried, found)
    combo = _combine(args, argv, tstr, run_dir, base, ctrl, deterministic, tried, deadline)
    result = fixes.result(run_dir, tstr, base, ctrl, deterministic, found, cands, combo, time.monotonic() - t0, jobs)
    result["target_argv"] = list(argv)
    emit(args, result, markdown(result))
    return 0


def _recheck_random(argv, tstr, run_dir, base, tried, jobs, deadline):
    """A fix whose output changed while its compiled graphs draw random numbers: a function that now runs
    compiled where it ran eagerly draws other numbers (blind A/B: a VAE's randn_like; the fix looked like it
    changed the results). Both runs again with torch._inductor.config.fallback_random = True (compiled RNG
    as eager's): the same output then is the fix's verdict."""
    suspects = [c for c in tried if (c.get("effect") or {}).get("output") == "changed" and c.get("trial_dir")
                and not c["effect"]["fails"] and fixes.draws_random({"run_dir": c["trial_dir"]})]
    if not suspects:
        return
    proc.progress(f"{len(suspects)} fix(es) changed the output and their graphs draw random numbers: both runs "
                  "again with fallback_random=True (compiled RNG as eager's)")
    rdir = os.path.join(run_dir, "fallback_random")
    tasks = [("base", lambda t: fixes.run_trial(argv, os.path.join(rdir, "baseline"), [fixes.FALLBACK_RANDOM], t, tstr))]
    tasks += [(str(i), (lambda c: lambda t: fixes.run_trial(argv, os.path.join(rdir, c["id"]),
                                                            [fixes.FALLBACK_RANDOM, *c["steps"]], t, tstr))(c))
              for i, c in enumerate(suspects)]
    res = fixes.run_parallel(jobs, tasks, deadline, lambda n, r: None)
    b = res.get("base")
    nb = compare.normalize_output((b or {}).get("_stdout"))
    for i, c in enumerate(suspects):
        r = res.get(str(i))
        nt = compare.normalize_output((r or {}).get("_stdout"))
        if b is None or r is None or nb is None or nt is None:
            continue
        if nb == nt:
            c["effect"]["output"] = ("same with fallback_random=True in both runs: the change came from compiled "
                                     "random numbers (more of the program runs compiled), not from the fix")
            c["effect"].pop("output_diff", None)
        else:
            c["effect"]["output"] = "changed (also with fallback_random=True in both runs)"
        proc.progress(f"{c['id']}: output {'same' if nb == nt else 'still changed'} with fallback_random=True")




def _combine(args, argv, tstr, run_dir, base, ctrl, deterministic, tried, deadline):
    members, steps, code = fixes.combine(tried)
    if not members:
        return None
    combo = {"members": [c["id"] for c in members], "steps": steps, "code": code, "effect": members[0]["effect"],
             "note": next((c["note"] for c in members if c.get("note")), None),
             "trial_dir": members[0].get("trial_dir"), "measured_together": len(members) == 1}
    if len(members) > 1 and not args.no_combine:
        proc.progress(f"trying the {len(members)} best compatible fixes together")
        res = fixes.run_parallel(1, [("combo", lambda t: fixes.run_trial(argv, os.path.join(run_dir, "combined"),
                                                                           steps, t, tstr))], deadline, lambda n, r: None)
        rep = res.get("combo")
        if rep is not None:
            combo.update(effect=fixes.effect(base, rep, ctrl, deterministic), trial_dir=rep["run_dir"],
                         measured_together=True, not_applied=rep.get("_not_applied"))
    return combo
