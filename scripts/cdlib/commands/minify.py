"""`minify -- <command...>`: shrink a torch.compile failure to a verified standalone repro.

1. reproduce once with TORCH_TRACE (the triage analysis) and the minifier's dump switched on
   (TORCHDYNAMO_REPRO_AFTER=aot, LEVEL=2: a compile/runtime error dumps minifier_launcher.py in
   the same run, so the common case costs no extra run);
2. if that did not dump a launcher, rerun once with the level the failure kind needs: 4 for
   accuracy (AccuracyError), 3 when the process dies (segfault / illegal memory access), or
   repro_after=dynamo when the failure happens before AOTAutograd;
3. `minifier_launcher.py minify` with the run dir as working directory -> repro.py;
4. run repro.py and check it fails the same way; write a pytest regression test next to it."""
import os
import re
import time

from ..show import output
from .. import cmdline
from ..run import proc, rundir
from ..errors import CliError
from ..run.workers import bisect_step
from . import _minify_source
from ..decide.minify_graph import exc_names, graph_stats, same_failure  # noqa: F401  (graph_stats: tests, benchmarks)

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
  compile_debug.py minify --source --break GB0109 -- python train.py   # keep one graph break"""

ERROR_CATS = {"inductor_compile_error", "backend_compiler_failed", "triton_compile_error",
              "compiled_runtime_error", "missing_cxx_compiler", "aoti_error", "oom"}
CRASH_CATS = {"segfault", "cuda_illegal_memory_access"}
ACC_CATS = {"accuracy_mismatch"}
BEFORE_AOT_CATS = {"dynamo_internal_error", "graph_break_fullgraph", "data_dependent_guard"}
NO_GRAPH_CACHE = {"TORCHINDUCTOR_FX_GRAPH_CACHE": "0", "TORCHINDUCTOR_AUTOGRAD_CACHE": "0"}


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
                        "what feeds the graph) and, on a program that does not fail, for one graph break")
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


# ------------------------------------------------------------------ steps
def _run_target(argv, run_dir, tag, env, timeout, cwd=None, started=None):
    res = proc.run(argv, env_add=env, cwd=cwd, timeout=timeout, stdout_path=os.path.join(run_dir, f"{tag}.stdout"),
                   stderr_path=os.path.join(run_dir, f"{tag}.stderr"), started=started)
    return res, _failure_of(res)


def _failure_of(res):
    err = res.read_stderr(limit=2_000_000)
    etype, emsg = bisect_step.signature(err)
    # the full first line of the message (bisect_step keeps it short)
    return {"rc": res.returncode, "signal": res.signal, "timed_out": res.timed_out,
            "type": bisect_step.short_type(etype), "message": emsg,
            "names": exc_names(etype, emsg), "duration_s": res.duration_s}


def _launcher_from(stderr_text, debug_dir):
    m = None
    for m in re.finditer(r"Writing minified repro to:\s*\n(?:[VIWEC]\d{4} [^\]]*\] (?:\[[^\]]*\] )?)?(\S+minifier_launcher\.py)",
                         stderr_text):
        pass
    if m and os.path.exists(m.group(1)):
        return m.group(1)
    found = []
    for root, _, files in os.walk(debug_dir):
        if "minifier_launcher.py" in files:
            p = os.path.join(root, "minifier_launcher.py")
            found.append((os.path.getmtime(p), p))
    return max(found)[1] if found else None


def _triage(argv, run_dir, env, timeout):
    """One run with TORCH_TRACE (+ the dump env). Returns (category or None, error dict, ProcResult-ish)."""
    tdir = os.path.join(run_dir, "triage")
    os.makedirs(tdir, exist_ok=True)
    try:
        from ..decide import analyze
    except Exception:   # triage not available: classify from the exception ourselves
        analyze = None
    if analyze is not None and hasattr(analyze, "run_and_analyze"):
        try:
            rep = analyze.run_and_analyze(argv, tdir, timeout=timeout, env_add=env, tlparse=False)
        except TypeError:
            rep = analyze.run_and_analyze(argv, tdir, timeout=timeout, env_add=env)
        err = rep.errors[0] if rep.errors else None
        fail = {"rc": rep.exit_code, "signal": rep.signal, "timed_out": rep.timed_out,
                "type": err.type if err else None, "message": err.message if err else None,
                "names": exc_names(err.type, err.message) if err else [], "duration_s": rep.duration_s,
                "category": err.category if err else None, "title": err.title if err else None,
                "location": err.location.short() if err and err.location else None}
        stderr_path = rep.artifacts.get("stderr") or os.path.join(tdir, "target.stderr")
        return fail, stderr_path
    res, fail = _run_target(argv, tdir, "target", env, timeout)
    fail["category"] = None
    return fail, res.stderr_path


def _guess_kind(fail):
    cat = fail.get("category")
    if fail.get("signal") in ("SIGSEGV", "SIGBUS", "SIGILL", "SIGFPE", "SIGABRT") or cat in CRASH_CATS:
        return "crash"
    if cat in ACC_CATS or "AccuracyError" in (fail.get("names") or []):
        return "accuracy"
    if cat in ERROR_CATS or cat in BEFORE_AOT_CATS:
        return "error"
    if fail.get("type") in (None, "") or (fail.get("type") or "").startswith("exit"):
        return "accuracy"   # failed without an exception from the compiler: a result check
    if fail.get("type") == "AssertionError":
        return "accuracy"
    return "error"


def _read(path, limit=2_000_000):
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            f.seek(max(0, f.tell() - limit))
            return f.read().decode("utf-8", "replace")
    except OSError:
        return ""


def run(args):
    if args.timeout <= 0:
        raise CliError("--timeout must be positive")
    if args.jobs is not None and args.jobs < 1:
        raise CliError("--jobs must be at least 1")
    if args.source_limit <= 0:
        raise CliError("--source-limit must be positive")
    if args.break_id and not args.source:
        raise CliError("--break picks the graph break to keep in the source stage: add --source")
    tri = None
    if args.from_dir:
        if args.target:
            raise CliError("--from takes the command from the triage run; do not also give one after --")
        try:
            tri = bisect_step.load_triage_run(args.from_dir)
        except ValueError as e:
            raise CliError(f"--from: {e}")
        args.target = tri["argv"]
    argv = proc.resolve_target(args.target)
    if args.source:
        why = _minify_source.applies(argv)
        if why:
            raise CliError(why)
        return _minify_source.run(args, argv, rundir.make(args.out, "minify"), from_dir=args.from_dir)
    run_dir = rundir.make(args.out, "minify")
    debug = os.path.join(run_dir, "debug")
    os.makedirs(debug, exist_ok=True)
    t0 = time.monotonic()
    notes = []
    after = "aot" if args.after == "auto" else args.after
    first_level = {"auto": 2, "error": 2, "accuracy": 4, "crash": 3}[args.kind]
    base_env = {"TORCH_COMPILE_DEBUG_DIR": debug, "PYTHONUNBUFFERED": "1"}
    # a graph served from the FX graph / AOTAutograd cache never reaches the minifier's wrapper
    # (no accuracy check, no dump): dump runs compile for real
    base_env.update(NO_GRAPH_CACHE)
    dump_env = dict(base_env, TORCHDYNAMO_REPRO_AFTER=after, TORCHDYNAMO_REPRO_LEVEL=str(first_level))
    # level 4 copies repro.py into the working directory: keep that inside the run dir
    abs_argv = [os.path.abspath(a) if i > 0 and os.path.isfile(a) else a for i, a in enumerate(argv)]
    spec = None
    if tri is not None:
        err = tri["error"] or {}
        fail = {"rc": tri["rc"], "signal": tri["signal"], "timed_out": tri["timed_out"], "type": err.get("type"),
                "message": err.get("message"), "names": exc_names(err.get("type"), err.get("message")) if err else [],
                "duration_s": tri["duration_s"], "category": err.get("category"), "title": err.get("title"),
                "location": None, "from_run": args.from_dir}
        stderr_path, first_level = None, None
        proc.progress(f"minify 1/4: failure taken from the triage run {args.from_dir} (no run); run dir {run_dir}")
    else:
        jobs = args.jobs or _default_jobs()
        if args.kind == "auto" and jobs >= 2:
            spec = _Speculative(abs_argv, run_dir, base_env, after, args.timeout)
        proc.progress(f"minify 1/4: reproduce with triage (TORCH_TRACE) and the minifier dump on "
                      f"(REPRO_AFTER={after}, LEVEL={first_level}); run dir {run_dir}"
                      + ("; the LEVEL=4 dump run (for wrong results) runs next to it" if spec else ""))
        if first_level == 4:
            tdir = os.path.join(run_dir, "triage")
            os.makedirs(tdir, exist_ok=True)
            res, fail = _run_target(abs_argv, tdir, "target", dump_env, args.timeout, cwd=run_dir)
            fail["category"], stderr_path = None, res.stderr_path
        else:
            fail, stderr_path = _triage(argv, run_dir, dump_env, args.timeout)
    failed = fail["rc"] not in (0, None) or fail.get("timed_out") or fail.get("signal")
    kind = args.kind if args.kind != "auto" else (_guess_kind(fail) if failed else None)
    if spec is not None and kind != "accuracy":
        spec.cancel()
    result = {"command": "minify", "run_dir": run_dir, "target": argv, "original_failure": fail, "kind": kind}
    if tri is not None:
        result["from_run"] = args.from_dir
    if not failed:
        result.update(status="no-failure", verified=False)
        md = ["# minify: no failure reproduced", "",
              f"The program exited 0 in {fail.get('duration_s') or 0:.0f}s: nothing to minify.",
              "- Wrong results the program does not check? Measure them: `accuracy`; or make the program "
              "raise/exit non-zero on a mismatch, or pass --kind accuracy (Inductor's accuracy check on every graph).",
              "", "Next:", "", "    " + cmdline.cli_command("minify", "--kind", "accuracy", "--", *args.target)]
        result["next_command"] = md[-1].strip()
        output.emit(args, result, "\n".join(md))
        return 0
    if fail.get("timed_out"):
        notes.append("the target hit --timeout; treated as a crash")
        kind = "crash" if args.kind == "auto" else kind
    proc.progress(f"failure: {fail.get('type') or fail.get('signal') or ('exit ' + str(fail['rc']))}"
                  + (f" [{fail['category']}]" if fail.get("category") else "") + f" -> kind {kind}")

    launcher = _launcher_from(_read(stderr_path), debug) if stderr_path else None
    level, dump_stage = first_level, "triage run"
    need = {"error": 2, "accuracy": 4, "crash": 3}[kind]
    if spec is not None and kind == "accuracy":
        proc.progress("minify 2/4: the LEVEL=4 dump run started next to the triage run; waiting for it")
        res, fail2 = spec.wait()
        launcher, level, dump_stage = _launcher_from(res.read_stderr(), spec.debug), 4, "dump run (next to the triage run)"
        if fail2.get("names"):
            fail["accuracy_check"] = f"{fail2.get('type')}: {cmdline.clip(fail2.get('message'), 150)}"
    elif launcher is None or level != need:
        # one more run with the settings this failure kind needs
        if kind == "error" and args.after == "auto" and (launcher is None):
            if fail.get("category") in BEFORE_AOT_CATS or (fail.get("category") not in ERROR_CATS and tri is None):
                after = "dynamo"
        level = need
        env = dict(base_env, TORCHDYNAMO_REPRO_AFTER=after, TORCHDYNAMO_REPRO_LEVEL=str(level))
        proc.progress(f"minify 2/4: dump the failing graph (REPRO_AFTER={after}, LEVEL={level})")
        before = set()
        for root, _, files in os.walk(debug):
            before.update(os.path.join(root, f) for f in files)
        res, fail2 = _run_target(abs_argv if level == 4 else argv, run_dir, "dump", env, args.timeout,
                                 cwd=run_dir if level == 4 else None)
        launcher = _launcher_from(res.read_stderr(), debug)
        dump_stage = "dump run"
        if kind == "accuracy" and fail2.get("names"):
            fail["accuracy_check"] = f"{fail2.get('type')}: {cmdline.clip(fail2.get('message'), 150)}"
        if launcher is None and kind == "error" and after == "aot" and args.after == "auto":
            after = "dynamo"
            env["TORCHDYNAMO_REPRO_AFTER"] = after
            proc.progress(f"minify 2/4: nothing dumped after AOT; retry with REPRO_AFTER={after}")
            res, _ = _run_target(argv, run_dir, "dump_dynamo", env, args.timeout)
            launcher = _launcher_from(res.read_stderr(), debug)
    else:
        proc.progress("minify 2/4: the triage run already dumped the failing graph")
    result.update(repro_after=after, repro_level=level)
    if launcher is None:
        why = {"accuracy": "no graph failed Inductor's accuracy check (level 4): the mismatch may come from "
                           "outside the compiled graphs, from randomness, or be within tolerance",
               "crash": "no graph was dumped before the crash",
               "error": "the failure did not happen inside a backend compiler call (it is probably in Dynamo's "
                        "tracing or in the program itself), so the minifier could not capture a graph"}[kind]
        result.update(status="not-minified", verified=False, reason=why)
        md = ["# minify: no repro", "", f"- failure: {_fail_text(fail)}", f"- {why}."]
        return _second_stage(args, argv, run_dir, result, md)
    before_stats = graph_stats(launcher)
    result["launcher"] = launcher
    # 3. minify
    # in-process (--no-isolate) is much faster, but a runtime error consumes the inputs of the
    # in-process query (Inductor's boxed calling convention clears the list): isolate those.
    isolate = args.isolate or kind == "crash" or fail.get("category") == "compiled_runtime_error"
    python = proc.target_python(argv)
    repro = os.path.join(run_dir, "repro.py")

    def minify_once(isolated, tag):
        cmd = [python, launcher, "minify"] + ([] if isolated or after != "aot" else ["--no-isolate"])
        proc.progress(f"minify 3/4: PyTorch's minifier on {before_stats['nodes'] if before_stats else '?'} FX nodes "
                      f"({'isolated' if isolated or after != 'aot' else 'in-process'}); cwd {run_dir}")
        return proc.run(cmd, env_add=base_env, cwd=run_dir, timeout=args.timeout,
                        stdout_path=os.path.join(run_dir, f"{tag}.stdout"),
                        stderr_path=os.path.join(run_dir, f"{tag}.stderr"))
    mres = minify_once(isolate, "minifier")
    if not os.path.exists(repro) and not isolate and after == "aot" and not mres.timed_out:
        notes.append("the in-process minifier failed (see minifier.stderr); reran it isolated")
        mres = minify_once(True, "minifier_isolated")
    lcmd = [python]
    merr = mres.read_stderr()
    if "Input graph did not fail the tester" in merr:
        notes.append("the minifier could not reproduce the failure on the dumped graph (it passed in isolation)")
    queries = re.findall(r"Made (\d+) queries", merr)
    result["minifier"] = {"returncode": mres.returncode, "timed_out": mres.timed_out, "duration_s": mres.duration_s,
                          "queries": int(queries[-1]) if queries else None,
                          "stderr": mres.stderr_path}
    if not os.path.exists(repro):
        # crash / odd cases: the last checkpoint is the smallest failing graph
        ck = _last_checkpoint(debug)
        if ck:
            import shutil
            shutil.copyfile(ck, repro)
            notes.append(f"repro.py copied from the minifier's last checkpoint {ck}")
    if not os.path.exists(repro):
        result.update(status="not-minified", verified=False,
                      reason="the minifier wrote no repro.py" + (" (timed out)" if mres.timed_out else ""))
        md = ["# minify: the minifier produced no repro", "", f"- failure: {_fail_text(fail)}",
              f"- launcher (unminified, {before_stats['nodes'] if before_stats else '?'} nodes): {launcher}",
              f"- minifier log: {mres.stderr_path}"]
        return _second_stage(args, argv, run_dir, result, md)
    after_stats = graph_stats(repro)
    # 4. verify
    proc.progress("minify 4/4: verify repro.py fails the same way")
    vres = proc.run([lcmd[0], repro], env_add=base_env, cwd=run_dir, timeout=args.timeout,
                    stdout_path=os.path.join(run_dir, "repro_check.stdout"),
                    stderr_path=os.path.join(run_dir, "repro_check.stderr"))
    got = _failure_of(vres)
    verified, why = same_failure(fail, got, kind)
    result["repro_check"] = {**got, "verified": verified, "why": why, "stderr": vres.stderr_path}
    test_path = _write_test(run_dir, repro, kind, fail, before_stats, after_stats, argv, args.timeout) if verified else None
    result.update(status="verified" if verified else "unverified", verified=verified, repro=repro,
                  regression_test=test_path,
                  nodes_before=before_stats and before_stats["nodes"], nodes_after=after_stats and after_stats["nodes"],
                  ops_before=before_stats and before_stats["ops"], ops_after=after_stats and after_stats["ops"],
                  wall_s=round(time.monotonic() - t0, 1), notes=notes, dumped_by=dump_stage)
    md = [f"# minify: {'verified repro' if verified else 'UNVERIFIED repro (do not trust it as is)'}", ""]
    rows = [["failure", _fail_text(fail)], ["kind", f"{kind} (REPRO_AFTER={after}, LEVEL={level})"],
            ["FX nodes", f"{result['nodes_before']} -> {result['nodes_after']}"],
            ["ops left", ", ".join(result["ops_after"] or []) or "none"],
            ["check", why], ["repro", repro]]
    if test_path:
        rows.append(["regression test", test_path])
    md += [output.table(["", ""], rows), ""]
    md += [f"- note: {n}" for n in notes]
    if verified:
        md += [f"Run the repro: `{cmdline.command_line([python, repro])}`; the test (fails until the bug is fixed): "
               f"`{cmdline.command_line([python, '-m', 'pytest', '-q', test_path])}`.", "",
               "Next: find which pass/lowering breaks it (or follow the bug-basher skill):", "",
               "    " + _bisect_cmd(args)]
    else:
        result["reason"] = why
        md += ["The repro does not fail like the original: it may have minified to a different bug."]
        return _second_stage(args, argv, run_dir, result, md)
    result["next_command"] = md[-1].strip()
    output.emit(args, result, "\n".join(md))
    return 0


def _second_stage(args, argv, run_dir, result, md):
    """No verified graph-level repro: reduce the program file itself (the source stage), when it is a .py
    program; else say why not and point to bisect (never back to the minify just run)."""
    why = _minify_source.applies(argv)
    if why is None:
        with open(os.path.join(run_dir, "report_graph_stage.md"), "w") as f:
            f.write("\n".join(md) + "\n")
        proc.progress(f"graph stage: {result.get('status')}; next, the source stage: reduce the program itself "
                      f"(up to {args.source_limit:.0f} s, --source-limit)")
        return _minify_source.run(args, argv, run_dir, prior=result, from_dir=getattr(args, "from_dir", None))
    result["source_stage"] = why
    md += [f"- source stage not run: {why}", "", "Next: find the failing layer instead:", "", "    " + _bisect_cmd(args)]
    result["next_command"] = md[-1].strip()
    output.emit(args, result, "\n".join(md))
    return 0


def _bisect_cmd(args):
    if getattr(args, "from_dir", None):
        return cmdline.cli_command("bisect", "--from", args.from_dir)
    return cmdline.cli_command("bisect", "--", *args.target)


def _default_jobs():
    from ..run.workers import bisect_search
    return bisect_search.default_jobs()


class _Speculative:
    """The LEVEL=4 dump run (needed when the failure turns out to be wrong results), started next
    to the triage run; cancelled as soon as the triage run shows another kind."""

    def __init__(self, argv, run_dir, base_env, after, timeout):
        import threading
        self.debug = os.path.join(run_dir, "debug_accuracy")
        self.cwd = os.path.join(run_dir, "accuracy_cwd")   # level 4 copies repro.py into the cwd
        for d in (self.debug, self.cwd):
            os.makedirs(d, exist_ok=True)
        env = dict(base_env, TORCH_COMPILE_DEBUG_DIR=self.debug, TORCHDYNAMO_REPRO_AFTER=after,
                   TORCHDYNAMO_REPRO_LEVEL="4")
        self.popen, self.out, self.cancelled = None, None, False

        def work():
            try:
                self.out = _run_target(argv, run_dir, "dump", env, timeout, cwd=self.cwd, started=self._started)
            except Exception as e:  # noqa: BLE001
                self.out = e
        self.thread = threading.Thread(target=work, daemon=True)
        self.thread.start()

    def _started(self, p):
        self.popen = p
        if self.cancelled:
            proc.kill_group(p, grace=1.0)

    def cancel(self):
        self.cancelled = True
        if self.popen is not None:
            proc.kill_group(self.popen, grace=1.0)
        self.thread.join(timeout=15)

    def wait(self):
        self.thread.join()
        if isinstance(self.out, Exception):
            raise self.out
        return self.out


def _fail_text(fail):
    if fail.get("signal"):
        return f"killed by {fail['signal']}"
    t = fail.get("type") or f"exit {fail.get('rc')}"
    lines = [ln for ln in (fail.get("message") or "").splitlines()
             if ln.strip() and not re.match(r"^[VIWEC]\d{4} ", ln)]
    m = cmdline.clip(lines[-1] if t.startswith("exit") and lines else (lines[0] if lines else ""), 140)
    s = f"{t}: {m}" if m else t
    if fail.get("category"):
        s += f" [{fail['category']}]"
    if fail.get("accuracy_check"):
        s += f"; level-4 check: {fail['accuracy_check']}"
    return s


def _last_checkpoint(debug):
    best = None
    for root, _, files in os.walk(debug):
        if os.path.basename(root) == "checkpoints":
            for f in files:
                if re.match(r"^\d+\.py$", f):
                    p = os.path.join(root, f)
                    key = (os.path.getmtime(p), -int(f[:-3]))
                    if best is None or key > best[0]:
                        best = (key, p)
    return best[1] if best else None


def _write_test(run_dir, repro, kind, fail, before, after, argv, timeout):
    import jinja2
    tdir = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "show", "templates")
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(tdir), keep_trailing_newline=True,
                             undefined=jinja2.StrictUndefined)
    ops = (after or {}).get("ops") or []
    summary = {"error": "compiling/running the graph raises", "accuracy": "the compiled graph gives wrong results",
               "crash": "the compiled graph crashes the process"}[kind]
    func = re.sub(r"\W+", "_", f"{kind}_{ops[0] if ops else 'graph'}").strip("_").lower()
    name = "test_regression.py"
    text = env.get_template("regression_test.py.j2").render(
        summary=summary + (f" ({', '.join(ops)})" if ops else ""), signature=_fail_text(fail),
        repro_name=os.path.basename(repro), nodes_before=(before or {}).get("nodes"),
        nodes_after=(after or {}).get("nodes"), ops=ops, original_command=cmdline.command_line(argv),
        torch_version=_torch_version(run_dir), test_name=name, kind=kind, func_name=func,
        timeout=int(min(timeout, 3600)))
    path = os.path.join(run_dir, name)
    with open(path, "w") as f:
        f.write(text)
    return path


def _torch_version(run_dir):
    m = re.search(r"torch version: (\S+)", _read(os.path.join(run_dir, "repro.py"), 20000))
    return m.group(1) if m else "unknown"
