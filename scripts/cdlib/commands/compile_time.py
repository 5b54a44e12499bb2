"""compile-time: where torch.compile's time goes (per frame, per phase), what the caches did, and what
would help, measured by re-running the program with private cache dirs."""
import json
import os
import sys

from .. import EXAMPLES_DIR
from ..decide.runs import run_tlparse
from ..decide import compile_time as ct
from ..decide import compile_time_advice as advice
from ..run import measure, proc, rundir
from ..errors import CliError
from ..cmdline import cli_command, command_line
from ..decide.program_code import command_files
from ..read import never_ran
from ..show.output import emit
from ..show.views_compile_time import markdown, write_chart

NAME = "compile-time"
HELP = "where compile time goes (phases, frames), cold vs warm caches, bypass reasons, what would help"
ORDER = 25
TAKES_TARGET = True
DESCRIPTION = """Run the program once with TORCH_TRACE and a private, fresh Inductor/Triton cache dir inside
the run dir (your own cache dirs are never used or changed) and report compile time per compiled frame
and per phase (Dynamo, AOTAutograd, Inductor passes/lowering/scheduling/codegen, C++/Triton compile,
autotuning), recompiles' share, and what the FX graph / AOTAutograd caches did, with PyTorch's reason
for each bypass and its fix. Measurements (each one more run of the program):
  --cold-warm  run again with the same cache dir: warm-start time and per-cache hits
  --portable   save torch.compiler cache artifacts at the end of the cold run, load them into a fresh
               process with an empty cache dir: the saving a new machine/container would get
  --regional   when the model has repeated layers: re-run with torch.compile(model) turned into
               per-layer compiles (layer.compile()), compile time compared with the whole-model compile
  --all        all three"""
EPILOG = """examples:
  compile_debug.py compile-time -- python train.py --steps 2
  compile_debug.py compile-time --all -- python train.py
  compile_debug.py compile-time --trace /path/to/TORCH_TRACE_dir"""
DEFAULT_EXAMPLE = os.path.join(EXAMPLES_DIR, "toy_train.py")


def add_arguments(p):
    p.add_argument("--timeout", type=float, default=1800, metavar="SEC",
                   help="kill each run of the program (and its process group) after SEC seconds (default 1800)")
    p.add_argument("--trace", metavar="DIR_OR_FILE", help="analyze an existing TORCH_TRACE dir/file; no run")
    p.add_argument("--cold-warm", action="store_true", help="run twice (fresh cache, then warm): compare")
    p.add_argument("--portable", action="store_true",
                   help="verify save_cache_artifacts/load_cache_artifacts across processes and measure the saving")
    p.add_argument("--regional", action="store_true", help="measure per-layer (regional) compilation when "
                   "the compiled model has repeated layers")
    p.add_argument("--all", action="store_true", help="--cold-warm --portable --regional")
    p.add_argument("--no-tlparse", action="store_true", help="skip tlparse's HTML report")


def run(args):
    if args.timeout <= 0:
        raise CliError("--timeout must be positive")
    if args.all:
        args.cold_warm = args.portable = args.regional = True
    if args.trace:
        if args.target:
            raise CliError("--trace analyzes an existing trace; do not also give a target command")
        if args.cold_warm or args.portable or args.regional:
            raise CliError("--cold-warm/--portable/--regional re-run a program; they do not combine with --trace")
        if not os.path.exists(args.trace):
            raise CliError(f"{args.trace}: no such file or directory")
        if not ct.tracemod.trace_files(args.trace):
            raise CliError(f"{args.trace}: no TORCH_TRACE *.log files there")
        run_dir = rundir.make(args.out, "compile-time")
        summary = ct.summarize(args.trace)
        res = {"command": "compile-time", "run_dir": run_dir, "status": advice.status(summary), "target": None,
               "torch_version": summary["torch_version"], "summary": summary, "runs": {},
               "artifacts": {"trace_dir": os.path.abspath(args.trace)}, "notes": []}
        res["suggestions"] = advice.suggestions(summary, {}, None, None)
        _finish(args, res, [("recorded trace", summary)], args.trace, None)
        return 0
    argv = proc.resolve_target(args.target or [sys.executable, DEFAULT_EXAMPLE])
    tstr = command_line(argv)
    run_dir = rundir.make(args.out, "compile-time")
    runs, summaries, notes = {}, {}, []
    art = os.path.join(run_dir, "portable", "cache_artifacts.bin")
    steps = []
    if args.portable:
        os.makedirs(os.path.dirname(art), exist_ok=True)
        from ..run.workers import compile_time_hooks as hooks
        steps = [{"code": hooks.code("save_artifacts", art)}]
    proc.progress(f"cold run: {tstr} (fresh cache dir, timeout {args.timeout:.0f} s); artifacts in {run_dir}")
    runs["cold"], summaries["cold"] = _run(argv, run_dir, "cold", args.timeout, steps)
    cold = runs["cold"]
    if cold["exit_code"] != 0:
        notes.append(f"the program exited with {cold['exit_code']}{' (timed out)' if cold['timed_out'] else ''}; "
                     f"numbers cover what compiled before that (stderr: {cold['stderr']})")
    ok = cold["exit_code"] == 0
    if not summaries["cold"]["compiled_frames"]:
        ok = False
        loads = never_ran.aoti_loads(command_files(argv, launched=True))
        if loads and cold["exit_code"] == 0:
            path, line, call = loads[0]
            runs["cold"]["aoti_load"] = f"{os.path.basename(path)}:{line}"
            proc.progress(f"nothing compiled; the program loads an AOTInductor package ({call} at "
                          f"{os.path.basename(path)}:{line}): one more run with an empty cache dir, as on a fresh machine")
            runs["empty_cache"], summaries["empty_cache"] = _run(argv, run_dir, "empty_cache", args.timeout, [],
                                                                 seed=False)
            runs["empty_cache"]["isa_probes_built"] = proc.isa_probes(runs["empty_cache"]["cache_dir"])
        else:
            notes.append("nothing was compiled (torch.compile never ran, or TORCH_COMPILE_DISABLE is set); "
                         "no further runs; `triage` tells why")
    if args.cold_warm and ok:
        proc.progress("warm run: same program, same cache dir")
        runs["warm"], summaries["warm"] = _run(argv, run_dir, "warm", args.timeout, [],
                                               cache_dir=os.path.join(run_dir, "cold", "cache"))
    if args.portable and ok:
        if os.path.exists(art):
            from ..run.workers import compile_time_hooks as hooks
            proc.progress("portable run: empty cache dir + torch.compiler.load_cache_artifacts")
            rep = os.path.join(run_dir, "portable", "loaded.json")
            runs["portable"], summaries["portable"] = _run(argv, run_dir, "portable", args.timeout,
                                                           [{"code": hooks.code("load_artifacts", art, rep)}])
            runs["portable"]["artifacts_loaded"] = _json(rep)
        runs["cold"]["artifacts_saved"] = _json(art + ".json")
        if not os.path.exists(art):
            notes.append(advice.nothing_saved(summaries["cold"], runs["cold"]["artifacts_saved"]))
        if "portable" in summaries:
            notes += advice.portable_notes(summaries)
    blocks = summaries["cold"]["repeated_blocks"]
    if args.regional and ok:
        if blocks:
            from ..run.workers import compile_time_hooks as hooks
            proc.progress(f"regional run: torch.compile(model) -> layer.compile() per repeated layer "
                          f"({blocks[0]['container']}, {blocks[0]['count']} layers)")
            rep = os.path.join(run_dir, "regional", "regional.json")
            os.makedirs(os.path.dirname(rep), exist_ok=True)
            runs["regional"], summaries["regional"] = _run(argv, run_dir, "regional", args.timeout,
                                                           [{"code": hooks.code("regional", rep)}])
            runs["regional"]["applied"] = _json(rep) or []
            if not runs["regional"]["applied"]:
                notes.append("regional run: the program never called torch.compile(module) on the model "
                             "(e.g. it uses model.compile() or compiles a function), so nothing was changed; "
                             "regional saving not measured")
        elif not summaries["cold"].get("repeated_code"):
            notes.append("no repeated layers seen in the compiled graphs' inputs; regional compilation not measured")
    for tag, r in runs.items():
        if r.get("hook_errors"):
            notes.append(f"{tag} run: our startup hook failed, so that measurement is not valid: {r['hook_errors'][0]}")
    summary = summaries["cold"]
    res = {"command": "compile-time", "run_dir": run_dir, "status": advice.status(summary), "target": tstr,
           "target_status": "ok" if ok else f"exit {cold['exit_code']}", "torch_version": summary["torch_version"],
           "summary": summary, "runs": runs, "artifacts": {"trace_dir": os.path.join(run_dir, "cold", "trace")},
           "notes": notes}
    if "warm" in summaries:
        res["cold_vs_warm"] = ct.compare(summaries["cold"], summaries["warm"])
    res["suggestions"] = advice.suggestions(summary, summaries, runs, argv)
    if any(g["id"] == "aoti_load_check" and not g["helps"] for g in res["suggestions"]):
        notes.append("nothing was compiled, and an empty cache dir did not make the run slower: the package load's "
                     "g++ check is not where the time goes; `triage` and the program's own timings tell more")
    from ..show.views_compile_time import RUN_LABEL
    chart_runs = [(RUN_LABEL.get(tag, tag), summaries[tag]) for tag in runs]
    _finish(args, res, chart_runs, res["artifacts"]["trace_dir"], argv)
    return 0


def _finish(args, res, chart_runs, trace_dir, argv):
    res["artifacts"]["chart"] = write_chart(res["run_dir"], chart_runs)
    if not args.no_tlparse:
        html = run_tlparse(trace_dir, os.path.join(res["run_dir"], "tlparse"))
        if html:
            res["artifacts"]["tlparse"] = html
    if argv is not None and len(res["runs"]) < 2:
        res["next"] = cli_command("compile-time", "--all", "--", *argv)
    elif argv is not None and any(g["id"] == "recompiles" for g in res["suggestions"]):
        res["next"] = cli_command("triage", "--", *argv)
    emit(args, res, markdown(res))


def _json(path):
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def _run(argv, run_dir, tag, timeout, steps, cache_dir=None, seed=True):
    """One run of the program with TORCH_TRACE and a private cache dir (seed=False: without the CPU ISA probes
    built in the user's cache, as on a fresh machine). Returns (run dict, summary)."""
    d = os.path.join(run_dir, tag)
    os.makedirs(d, exist_ok=True)
    cache = cache_dir or os.path.join(d, "cache")
    trace_dir = os.path.join(d, "trace")
    env = {"TORCH_TRACE": trace_dir, **proc.private_cache_env(cache, seed=seed), "PYTHONUNBUFFERED": "1"}
    if steps:
        env.update(proc.startup_env(d, steps, name="startup"))
    before = measure.cache_files(cache)
    load = measure.load()      # before the run: the program's own compile load is not "busy"
    res = proc.run(argv, env_add=env, timeout=timeout, stdout_path=os.path.join(d, "stdout"),
                   stderr_path=os.path.join(d, "stderr"))
    summary = ct.summarize(trace_dir, wall_s=res.duration_s)
    after = measure.cache_files(cache)
    new = {k: v - before.get(k, 0) for k, v in after.items() if v - before.get(k, 0)}
    err = res.read_stderr(limit=4000)
    hook_err = [ln for ln in err.splitlines() if ln.startswith("[compile-debug startup]")]
    run = {"wall_s": res.duration_s, "exit_code": res.returncode, "timed_out": res.timed_out,
           "compile_s": summary["compile_time_s"], "frames": summary["compiled_frames"], "cache_dir": cache,
           "cache_files": new, "caches": {c: {k: v for k, v in x.items() if k in ("hit", "miss", "bypass")}
                                          for c, x in summary["caches"].items()},
           "stderr": res.stderr_path, "trace_dir": trace_dir, "load": load}
    if hook_err:
        run["hook_errors"] = hook_err[:3]
    proc.progress(f"{tag}: wall {res.duration_s} s, compile {summary['compile_time_s']} s")
    return run, summary
