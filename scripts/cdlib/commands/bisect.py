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
import threading
import time

from ..show import output
from .. import cmdline
from ..run import proc, rundir
from ..decide.bisect_result import LADDER, LAYER, by_hand, meaning, parse_result, read_steps, step_line
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

_PROBE = r"""
import importlib.util, json, os, re
s = importlib.util.find_spec("torch")
d = {"torch": None}
if s and s.origin:
    root = os.path.dirname(s.origin)
    d["torch"] = root
    try:
        d["version"] = re.search(r"__version__\s*=\s*['\"]([^'\"]+)", open(os.path.join(root, "version.py")).read()).group(1)
    except Exception:
        d["version"] = None
    p = os.path.join(root, "_inductor", "compiler_bisector.py")
    src = open(p).read() if os.path.exists(p) else ""
    d["bisector"] = bool(src)
    d["has_run_cli"] = 'command == "run"' in src
    d["has_env_protocol"] = "TORCH_BISECT_MAX" in src and "in_process_cache" in src
    # BACKENDS (ladder order, subsystems) read from the source: no torch import
    import ast
    be = None
    try:
        for node in ast.walk(ast.parse(src)):
            tgt = getattr(node, "target", None) or (node.targets[0] if isinstance(node, ast.Assign) else None)
            if isinstance(tgt, ast.Name) and tgt.id == "BACKENDS" and isinstance(getattr(node, "value", None), ast.Dict):
                be = []
                for k, v in zip(node.value.keys, node.value.values):
                    subs = []
                    for c in v.elts:
                        kind = c.func.id
                        args = [ast.literal_eval(a) for a in c.args]
                        if kind == "ConfigChange":
                            subs.append({"name": f"{args[0]}_{args[1]}", "kind": "binary", "config": {args[1]: args[2]}})
                        elif kind == "BisectSubsystem":
                            subs.append({"name": args[0], "kind": "bisect", "config": None})
                        else:
                            subs.append({"name": args[0], "kind": "binary", "config": None})
                    be.append([ast.literal_eval(k), subs])
    except Exception:
        be = None
    d["backends"] = be
print(json.dumps(d))
"""


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


def probe_torch(python, run_dir, timeout=120):
    res = proc.run([python, "-c", _PROBE], timeout=timeout, stdout_path=os.path.join(run_dir, "probe.stdout"),
                   stderr_path=os.path.join(run_dir, "probe.stderr"))
    try:
        return json.loads(res.read_stdout().strip().splitlines()[-1])
    except (ValueError, IndexError):
        return {"torch": None}


class _Tail(threading.Thread):
    """Prints one progress line per finished step while the bisector runs."""

    def __init__(self, log_dir):
        super().__init__(daemon=True)
        self.log_dir, self.seen, self.stop = log_dir, 0, threading.Event()
        self.in_subsystems = False

    def poll(self):
        steps = read_steps(self.log_dir)
        for s in steps[self.seen:]:
            if s.get("subsystem") and not self.in_subsystems:
                self.in_subsystems = True
                proc.progress(f"stage 2/2: subsystems of backend {s['backend']}")
            proc.progress(step_line(s))
        self.seen = max(self.seen, len(steps))

    def run(self):
        while not self.stop.wait(0.5):
            self.poll()


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
    from_note = _apply_from(args) if args.from_dir else None
    argv = proc.resolve_target(args.target)
    run_dir = rundir.make(args.out, "bisect")
    python = proc.target_python(argv)   # its torch is the one to bisect
    info = probe_torch(python, run_dir)
    if not info.get("torch"):
        raise CliError(f"{python}: cannot find torch (is the target's Python the right one?)")
    if not info.get("bisector"):
        raise CliError(f"torch {info.get('version')}: has no torch._inductor.compiler_bisector")
    engine = args.engine
    if engine == "auto":
        engine = "own" if info.get("has_env_protocol") and info.get("backends") else \
            "cli" if info.get("has_run_cli") else "api"
    if engine == "cli" and not info.get("has_run_cli"):
        raise CliError(f"--engine cli: torch {info.get('version')} has no `compiler_bisector run` (use --engine api)")
    if engine == "own" and not (info.get("has_env_protocol") and info.get("backends")):
        raise CliError(f"--engine own: cannot read the bisector of torch {info.get('version')} (use --engine api)")

    cache = os.path.join(run_dir, "inductor_cache")     # throwaway: the bisector deletes it
    log_dir = os.path.join(run_dir, "steps")
    tmp = os.path.join(run_dir, "tmp")
    for d in (log_dir, tmp):
        os.makedirs(d, exist_ok=True)
    orig_pp = os.environ.get("PYTHONPATH", "")
    env = {"TORCHINDUCTOR_CACHE_DIR": cache, "TRITON_CACHE_DIR": os.path.join(cache, "triton"),
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
    tail = _Tail(log_dir)
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
                bisector_error = _bisector_failure(res)
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
                bisector_error = _bisector_failure(res)
    finally:
        tail.stop.set()
        tail.join(timeout=2)
        tail.poll()
    wall = round(time.monotonic() - t0, 2)
    steps = read_steps(log_dir)
    shutil.rmtree(tmp, ignore_errors=True)
    return _report(args, run_dir, argv, info, engine, steps, parsed, bisector_error, wall, env)


def _apply_from(args):
    """--from RUN_DIR: the target and the bad-run rule from a triage run. Returns a note."""
    from ..run.workers import bisect_step
    if args.target:
        raise CliError("--from takes the command from the triage run; do not also give one after --")
    try:
        t = bisect_step.load_triage_run(args.from_dir)
    except ValueError as e:
        raise CliError(f"--from: {e}")
    args.target = t["argv"]
    err = t["error"] or {}
    failed = t["rc"] not in (0, None) or t["signal"] or t["timed_out"]
    what = (f"killed by {t['signal']}" if t["signal"] else "timed out" if t["timed_out"] else
            f"exit status {t['rc']}") + (f", {err.get('type')} [{err.get('category')}]" if err else "")
    if failed or args.bad_if or args.bad_if_exception:
        return f"from {args.from_dir}: the triage run failed ({what}); a run is bad the same way"
    etype = err.get("type") or ""
    if re.match(r"^[A-Za-z_][\w.]*(Error|Exception|Failed|Failure)$", etype):
        args.bad_if_exception = etype
        return f"from {args.from_dir}: exit 0 but it raised {etype}: a run is bad when it raises {etype}"
    lines = [ln.strip() for ln in (err.get("message") or "").splitlines()
             if ln.strip() and not re.match(r"^[VIWEC]\d{4} ", ln)]
    if lines:
        args.bad_if = re.escape(lines[-1][:100])
        return f"from {args.from_dir}: exit 0 but it printed {lines[-1][:100]!r}: a run is bad when its output matches that"
    raise CliError(f"--from {args.from_dir}: the triage run passed (exit 0, no error): nothing to bisect; "
                   "say what a failure looks like with --bad-if REGEX")


def _run_own(args, run_dir, argv, info, env, tmp):
    from ..run.workers import bisect_search
    jobs = args.jobs or bisect_search.default_jobs()
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
             "runs_saved": _implied(search, known, parsed)}
    return _report(args, run_dir, argv, info, "own", steps, parsed, error, wall, env, extra=extra,
                   target_runs=len(records))


def _implied(search, known, parsed):
    """Runs the sequential bisector would make whose verdict was known without running them."""
    out = []
    b = (parsed or {}).get("backend")
    counts = (known.get(("ladder", b)) or {}).get("counts")
    if search.exact or not isinstance(counts, dict):
        return out
    for s in search.subs.get(b, []):
        if s["name"] == parsed.get("subsystem"):
            if s["kind"] == "bisect":
                out.append(f"find_max_bounds {b}/{s['name']}: counted in the ladder run")
            break
        if s["kind"] == "bisect" and not counts.get(s["name"]):
            out.append(f"disable {b}/{s['name']}: never applied")
    return out


def _bisector_failure(res):
    if res.timed_out:
        return "the bisector ran past its overall time limit"
    err = res.read_stderr(limit=4000).strip().splitlines()
    return f"the bisector stopped without a result (exit {res.returncode}): " + (err[-1] if err else "no output")


def _no_compile_check(argv, run_dir, args, env):
    """Only when even backend='eager' fails: does the program fail with torch.compile disabled?"""
    from ..run.workers import bisect_step
    e = dict(env)
    e["TORCH_COMPILE_DISABLE"] = "1"
    e["PYTHONPATH"] = e.pop("CD_ORIG_PYTHONPATH") or None
    r = proc.run(argv, env_add=e, timeout=args.timeout, stdout_path=os.path.join(run_dir, "no_compile.stdout"),
                 stderr_path=os.path.join(run_dir, "no_compile.stderr"))
    bad, reason = bisect_step.judge(r, r.read_stdout(), r.read_stderr(), args.bad_if, args.bad_if_exception)
    return {"bad": bad, "reason": reason}


def _report(args, run_dir, argv, info, engine, steps, parsed, bisector_error, wall, env, extra=None,
            target_runs=None):
    ladder = [{"backend": s["backend"], "bad": s["bad"], "reason": s["reason"], "duration_s": s["duration_s"]}
              for s in steps if not s.get("subsystem")]
    first_bad = next((s for s in steps if s["bad"]), None)
    res = {"command": "bisect", "run_dir": run_dir, "target": argv, "torch_version": info.get("version"),
           "engine": engine, "target_runs": len(steps) if target_runs is None else target_runs, "wall_s": wall,
           "ladder": ladder, **(extra or {}), "from_run": getattr(args, "from_dir", None),
           "from_note": getattr(args, "from_note", None),
           "steps_log": os.path.join(run_dir, "steps", "steps.jsonl"),
           "bisector_output": os.path.join(run_dir, "bisector.stdout")}
    # the last backend that passed before the first failing one: minify's source stage keeps it passing
    good = None
    for step in ladder:
        if step["bad"]:
            break
        good = step["backend"]
    gb = ["--good-backend", good] if good and first_bad else []
    nxt = cmdline.cli_command("minify", "--from", args.from_dir, *gb) if getattr(args, "from_dir", None) else \
        cmdline.cli_command("minify", *gb, "--", *args.target)
    md = []
    if bisector_error and not parsed:
        res.update(status="error", error=bisector_error)
        md += ["# bisect: no result", "", f"- {bisector_error}"]
        if first_bad:
            md.append(f"- first failing run: backend {first_bad['backend']}: {first_bad['reason']}")
        md += [f"- target runs: {len(steps)}, steps log: {res['steps_log']}", "",
               "Next: check the target fails deterministically, then run", "", f"    {nxt}"]
        res["next_command"] = nxt
        output.emit(args, res, "\n".join(md))
        return 0
    if parsed is None:
        res.update(status="no-failure", result=None,
                   summary="no failure reproduced: the program passes with every backend, inductor included")
        md += ["# bisect: no failure reproduced", "",
               f"The program passed with every backend ({', '.join(l['backend'] for l in ladder)}); "
               f"{len(steps)} runs, {wall:.0f}s.",
               "- If it fails only sometimes, it is flaky: rerun it a few times first.",
               "- If it fails without a non-zero exit, say how to see it: --bad-if REGEX or --bad-if-exception NAME.",
               "", "Next: look at the whole run with triage:", "",
               "    " + cmdline.cli_command("triage", "--", *args.target)]
        res["next_command"] = cmdline.cli_command("triage", "--", *args.target)
        output.emit(args, res, "\n".join(md))
        return 0
    what, advice = meaning(parsed, first_bad)
    res.update(status="found", result=parsed, layer=LAYER.get(parsed["backend"], parsed["backend"]),
               meaning=what, advice=advice,
               failure={k: first_bad.get(k) for k in ("reason", "exc_type", "exc_message", "stderr")} if first_bad else None)
    if parsed["backend"] == "eager":
        chk = _no_compile_check(argv, run_dir, args, env)
        res["fails_without_compile"] = chk["bad"]
        res["target_runs"] += 1
        if chk["bad"]:
            what = ("It fails even with torch.compile disabled (TORCH_COMPILE_DISABLE=1): this is not a "
                    "torch.compile bug; fix the program first.")
            res["meaning"], res["advice"] = what, "Run the program without torch.compile and debug it as usual."
            nxt = cmdline.cli_command("triage", "--", *args.target)
    r = parsed
    md += [f"# bisect: first failing backend `{r['backend']}`" + (f", subsystem `{r['subsystem']}`" if r.get("subsystem") else ""),
           ""]
    rows = [["backend", f"{r['backend']} — {LAYER.get(r['backend'], '')}"]]
    if r.get("subsystem"):
        rows.append(["subsystem", r["subsystem"]])
    if r.get("bisect_number") is not None and r.get("subsystem"):
        rows.append(["bisect number", r["bisect_number"]])
    if r.get("debug_info"):
        rows.append(["debug info", r["debug_info"]])
    if first_bad:
        rows.append(["failure", first_bad["reason"]])
    if res.get("from_note"):
        rows.append(["classification", res["from_note"]])
    rows.append(["ladder", ", ".join(f"{l['backend']}={'BAD' if l['bad'] else 'ok'}" for l in ladder)])
    if res.get("jobs"):
        rows.append(["target runs", f"{res['target_runs']} started, {res['runs_on_path']} on the sequential "
                     f"bisector's path, {res['jobs']} at a time ({wall:.0f}s)"
                     + (f"; known without a run: {', '.join(res['runs_saved'])}" if res["runs_saved"] else "")])
    else:
        rows.append(["target runs", f"{res['target_runs']} ({wall:.0f}s)"])
    md += [output.table(["", ""], rows), "", f"**Meaning:** {res['meaning']}", "", f"**Next:** {res['advice']}",
           "", by_hand(r), "", f"Artifacts: {run_dir} (steps/ has every run's output)", "",
           "Next command (shrink it to a standalone repro):" if "minify" in nxt else "Next command:", "", f"    {nxt}"]
    res["next_command"] = nxt
    output.emit(args, res, "\n".join(md))
    return 0
