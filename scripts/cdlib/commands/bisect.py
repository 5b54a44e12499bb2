"""`bisect -- <command...>`: which compiler layer breaks the program, down to the op.

Stage 1, the backend ladder (eager -> aot_eager -> aot_eager_decomp_partition -> crossref ->
inductor), and stage 2, the subsystem search inside the failing backend, are both PyTorch's own
compiler bisector (torch._inductor.compiler_bisector): its `run` CLI on torch >= 2.11, its Python
API (CompilerBisector.do_bisect) before. The bisector forces the backend of every torch.compile
call in the target through TORCH_BISECT_BACKEND, so the user's program runs unmodified, and the
ladder costs no extra runs: each step is one run of the target, judged by bisect_step."""
import json
import os
import re
import shutil
import sys
import time

from ..show import output, views_bisect
from ..run import bisect_run, proc, rundir
from ..decide import bisect_result, bisect_setup
from ..decide.bisect_result import LADDER, parse_result, read_steps
from ..errors import CliError

HELP = "find the failing compiler layer (backend ladder + PyTorch's compiler bisector) down to the op"
ORDER = 40
TAKES_TARGET = True
DESCRIPTION = """Find which torch.compile layer breaks your program, down to the subsystem, the
bisect number and the op. Runs your unmodified program repeatedly under PyTorch's compiler
bisector (torch._inductor.compiler_bisector): first the backend ladder eager -> aot_eager ->
aot_eager_decomp_partition -> aot_eager_decomp_partition_crossref -> inductor, then the
subsystems of the first failing backend (decompositions, pre/joint/post-grad passes, config
changes such as fallback_random / emulate_precision_casts, cudagraphs, lowerings).

A run is bad when it exits non-zero (or is killed / times out), or, for programs that exit 0
while failing, when its output matches --bad-if or it raises --bad-if-exception. Your Inductor
cache is never touched: the bisector gets a throwaway cache inside the run dir."""
EPILOG = """examples:
  compile_debug.py bisect -- python train.py
  compile_debug.py bisect --bad-if 'MISMATCH|nan' -- python check.py
  compile_debug.py bisect --bad-if-exception AssertionError --timeout 300 -- python test_model.py"""

def add_arguments(p):
    p.add_argument("--bad-if", metavar="REGEX",
                   help="a run is bad when its stdout+stderr matches REGEX (for programs that exit 0 while failing)")
    p.add_argument("--bad-if-exception", metavar="NAME",
                   help="a run is bad when it raises exception NAME (e.g. AssertionError, torch._dynamo.exc.BackendCompilerFailed)")
    p.add_argument("--timeout", type=float, default=900, metavar="SEC",
                   help="per-run limit; a run that hits it counts as bad (default 900)")
    p.add_argument("--from", dest="from_dir", metavar="RUN_DIR",
                   help="a previous triage run dir: take the command and how its failure looks from its "
                        "report.json instead of giving them again")
    p.add_argument("--jobs", type=int, default=None, metavar="N",
                   help="target runs at a time (default: from the cores, memory and GPUs); 1 = the sequential "
                        "bisector's exact order of runs, without the shortcuts")
    p.add_argument("--engine", choices=["auto", "own", "cli", "api"], default="auto",
                   help="own: our driver of the bisector's protocol (parallel; default when the installed "
                        "torch supports it); cli: PyTorch's `run` CLI (sequential, torch >= 2.11); api: its "
                        "Python API (sequential, older torch)")


def run(args):
    if args.bad_if is not None:
        try:
            re.compile(args.bad_if)
        except re.error as e:
            raise CliError(f"--bad-if {args.bad_if!r}: bad regular expression ({e})")
        if not args.bad_if:
            raise CliError("--bad-if: empty regular expression")
    if args.bad_if_exception is not None and not re.match(r"^[A-Za-z_][\w.]*$", args.bad_if_exception):
        raise CliError(f"--bad-if-exception {args.bad_if_exception!r}: expected an exception name like AssertionError")
    if args.timeout <= 0:
        raise CliError("--timeout must be positive")
    if args.jobs is not None and args.jobs < 1:
        raise CliError("--jobs must be at least 1")
    from_note = bisect_setup.apply_from(args) if args.from_dir else None
    argv = proc.resolve_target(args.target)
    run_dir = rundir.make(args.out, "bisect")
    python = proc.target_python(argv)   # its torch is the one to bisect
    info = bisect_run.probe_torch(python, run_dir)
    if not info.get("torch"):
        raise CliError(f"{python}: cannot find torch (is the target's Python the right one?)")
    if not info.get("bisector"):
        raise CliError(f"torch {info.get('version')}: has no torch._inductor.compiler_bisector")
    engine = bisect_setup.engine_for(args.engine, info)

    cache = os.path.join(run_dir, "inductor_cache")     # throwaway: the bisector deletes it
    log_dir = os.path.join(run_dir, "steps")
    tmp = os.path.join(run_dir, "tmp")
    for d in (log_dir, tmp):
        os.makedirs(d, exist_ok=True)
    orig_pp = os.environ.get("PYTHONPATH", "")
    env = {**proc.private_cache_env(cache),
           "PYTHONPATH": proc.SCRIPTS_DIR + (os.pathsep + orig_pp if orig_pp else ""),
           "CD_ORIG_PYTHONPATH": orig_pp, "TMPDIR": tmp, "PYTHONUNBUFFERED": "1",
           # never inherit a half-finished manual bisection from the user's shell
           "TORCH_BISECT_BACKEND": None, "TORCH_BISECT_SUBSYSTEM": None, "TORCH_BISECT_MAX": None}
    args.from_note = from_note
    if from_note:
        proc.progress(from_note)
    if engine == "own":
        return _run_own(args, run_dir, argv, info, env, tmp)
    step_opts = ["--log-dir", log_dir, "--timeout", str(args.timeout)]
    if args.bad_if:
        step_opts += ["--bad-if", args.bad_if]
    if args.bad_if_exception:
        step_opts += ["--bad-if-exception", args.bad_if_exception]
    total_timeout = args.timeout * 64 + 600
    proc.progress(f"bisect: torch {info.get('version')}, compiler bisector via its "
                  f"{'`run` CLI' if engine == 'cli' else 'Python API'}; run dir {run_dir}")
    proc.progress("stage 1/2: backend ladder " + " -> ".join(LADDER) + " (stops at the first failing backend)")
    tail = views_bisect.Tail(log_dir)
    tail.start()
    t0 = time.monotonic()
    try:
        if engine == "cli":
            cmd = [python, "-m", "torch._inductor.compiler_bisector", "run",
                   sys.executable, "-m", "cdlib.run.workers.bisect_step"] + step_opts + ["--"] + argv
            res = proc.run(cmd, env_add=env, cwd=None, timeout=total_timeout,
                           stdout_path=os.path.join(run_dir, "bisector.stdout"),
                           stderr_path=os.path.join(run_dir, "bisector.stderr"))
            text = res.read_stdout()
            parsed = parse_result(text)
            bisector_error = None
            if parsed == "missing":
                bisector_error = bisect_result.bisector_failure(res)
                parsed = None
        else:
            result_path = os.path.join(run_dir, "bisect_api.json")
            wargs = ["--result", result_path, "--cache-dir", cache] + step_opts + ["--"] + argv
            if python == sys.executable:
                res = proc.run_worker("bisect_api", wargs, run_dir=run_dir, timeout=total_timeout, env_add=env,
                                      tag="bisector")
            else:
                res = proc.run([python, "-m", "cdlib.run.workers.bisect_api"] + wargs, env_add=env,
                               timeout=total_timeout, stdout_path=os.path.join(run_dir, "bisector.stdout"),
                               stderr_path=os.path.join(run_dir, "bisector.stderr"))
            bisector_error, parsed = None, None
            try:
                with open(result_path) as f:
                    data = json.load(f)
                if data.get("ok"):
                    parsed = data.get("result")
                else:
                    bisector_error = data.get("error")
            except (OSError, ValueError):
                bisector_error = bisect_result.bisector_failure(res)
    finally:
        tail.stop.set()
        tail.join(timeout=2)
        tail.poll()
    wall = round(time.monotonic() - t0, 2)
    steps = read_steps(log_dir)
    shutil.rmtree(tmp, ignore_errors=True)
    return _report(args, run_dir, argv, info, engine, steps, parsed, bisector_error, wall, env)


def _run_own(args, run_dir, argv, info, env, tmp):
    from ..run.workers import bisect_search
    jobs = args.jobs or bisect_search.default_jobs()
    proc.runs_at_a_time(jobs)
    search = bisect_search.Search([(b, subs) for b, subs in info["backends"]], exact=jobs == 1)
    base = {k: v for k, v in env.items() if k not in ("PYTHONPATH", "CD_ORIG_PYTHONPATH")}
    ladder = [b for b, _ in info["backends"]]
    proc.progress(f"bisect: torch {info.get('version')}, compiler bisector protocol driven by us, "
                  f"{jobs} run(s) at a time{' (exact sequential order)' if jobs == 1 else ''}; run dir {run_dir}")
    proc.progress("stage 1/2: backend ladder " + " -> ".join(ladder) + " (stops at the first failing backend)")
    t0 = time.monotonic()
    parsed, error, known, records = bisect_search.run_search(
        search, argv, run_dir=run_dir, jobs=jobs, timeout=args.timeout, bad_if=args.bad_if,
        bad_if_exception=args.bad_if_exception, base_env=base)
    wall = round(time.monotonic() - t0, 2)
    shutil.rmtree(tmp, ignore_errors=True)
    shutil.rmtree(os.path.join(run_dir, "inductor_cache"), ignore_errors=True)
    path = search.path(known)
    by_key = {tuple(r["probe"]): r for r in records if not r.get("cancelled")}
    steps = [by_key[k] for k in path if k in by_key]     # the sequential bisector's runs, in its order
    extra = {"jobs": jobs, "runs_started": len(records),
             "runs_cancelled": sum(1 for r in records if r.get("cancelled")),
             "runs_on_path": len(steps),
             "runs_saved": bisect_result.implied(search, known, parsed),
             # failing runs the sequential path did not need: with no result, the failure is intermittent
             "bad_off_path": [bisect_result.step_line(r) for r in records
                              if r.get("bad") and tuple(r["probe"]) not in set(path)]}
    return _report(args, run_dir, argv, info, "own", steps, parsed, error, wall, env, extra=extra,
                   target_runs=len(records))


def _report(args, run_dir, argv, info, engine, steps, parsed, bisector_error, wall, env, extra=None,
            target_runs=None):
    res, nxt = bisect_result.result_of(args, run_dir, argv, info, engine, steps, parsed, bisector_error, wall,
                                       extra=extra, target_runs=target_runs)
    if res["status"] == "found" and parsed["backend"] == "eager":
        nxt = bisect_result.without_compile(res, bisect_run.no_compile_check(argv, run_dir, args, env), args, nxt)
    if bisect_result.needs_vector_check(res, proc.machine_has_gpu()):
        bisect_result.with_vector_check(res, bisect_run.config_check(argv, run_dir, args, env,
                                                                     bisect_result.SCALAR_CPU_CODE, name="scalar_cpu"))
    if bisect_result.needs_pass_check(res):
        bisect_result.with_pass_check(res, bisect_run.config_check(argv, run_dir, args, env,
                                                                   bisect_result.PATTERN_MATCHER_OFF))
    res["next_command"] = nxt
    output.emit(args, res, views_bisect.markdown(res))
    return 0
