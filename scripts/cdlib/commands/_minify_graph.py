"""minify's graph stage (the default; commands/minify.py parses the arguments): reproduce the failure
with the minifier's dump on, dump the failing graph again when the failure kind needs other settings,
run PyTorch's minifier on the launcher, verify repro.py fails the same way and write a regression test;
with no verified repro, hand over to the source stage (commands/_minify_source.py)."""
import os
import re
import time

from ..show import output, views_minify
from .. import cmdline
from ..run import proc, rundir
from ..run.minify_run import last_checkpoint, launcher_from, read, run_minifier
from . import _minify_source
from ..decide import source_stage
from ..decide.minify_graph import (BEFORE_AOT_CATS, ERROR_CATS, failure_of, graph_stats, guess_kind,
                                   no_launcher_reason, same_failure, triage_failure)
from ..decide.minify_reproduce import Speculative, run_target, triage

NO_GRAPH_CACHE = {"TORCHINDUCTOR_FX_GRAPH_CACHE": "0", "TORCHINDUCTOR_AUTOGRAD_CACHE": "0"}


def run(args, argv, tri):
    """The graph stage on argv; tri: the triage run of --from (its failure is reused), or None."""
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
        fail = triage_failure(tri, args.from_dir)
        stderr_path, first_level = None, None
        proc.progress(f"minify 1/4: failure taken from the triage run {args.from_dir} (no run); run dir {run_dir}")
    else:
        jobs = args.jobs or _default_jobs()
        proc.runs_at_a_time(jobs)
        if args.kind == "auto" and jobs >= 2:
            spec = Speculative(abs_argv, run_dir, base_env, after, args.timeout)
        proc.progress(f"minify 1/4: reproduce with triage (TORCH_TRACE) and the minifier dump on "
                      f"(REPRO_AFTER={after}, LEVEL={first_level}); run dir {run_dir}"
                      + ("; the LEVEL=4 dump run (for wrong results) runs next to it" if spec else ""))
        if first_level == 4:
            tdir = os.path.join(run_dir, "triage")
            os.makedirs(tdir, exist_ok=True)
            res, fail = run_target(abs_argv, tdir, "target", dump_env, args.timeout, cwd=run_dir)
            fail["category"], stderr_path = None, res.stderr_path
        else:
            fail, stderr_path = triage(argv, run_dir, dump_env, args.timeout)
    failed = fail["rc"] not in (0, None) or fail.get("timed_out") or fail.get("signal")
    kind = args.kind if args.kind != "auto" else (guess_kind(fail) if failed else None)
    if spec is not None and kind != "accuracy":
        spec.cancel()
    result = {"command": "minify", "run_dir": run_dir, "target": argv, "original_failure": fail, "kind": kind}
    if tri is not None:
        result["from_run"] = args.from_dir
    if not failed:
        result.update(status="no-failure", verified=False)
        result["next_command"] = cmdline.cli_command("minify", "--kind", "accuracy", "--", *args.target)
        output.emit(args, result, views_minify.markdown(result))
        return 0
    if fail.get("timed_out"):
        notes.append("the target hit --timeout; treated as a crash")
        kind = "crash" if args.kind == "auto" else kind
    proc.progress(f"failure: {fail.get('type') or fail.get('signal') or ('exit ' + str(fail['rc']))}"
                  + (f" [{fail['category']}]" if fail.get("category") else "") + f" -> kind {kind}")

    launcher = launcher_from(read(stderr_path), debug) if stderr_path else None
    level, dump_stage = first_level, "triage run"
    need = {"error": 2, "accuracy": 4, "crash": 3}[kind]
    if spec is not None and kind == "accuracy":
        proc.progress("minify 2/4: the LEVEL=4 dump run started next to the triage run; waiting for it")
        res, fail2 = spec.wait()
        launcher, level, dump_stage = launcher_from(res.read_stderr(), spec.debug), 4, "dump run (next to the triage run)"
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
        res, fail2 = run_target(abs_argv if level == 4 else argv, run_dir, "dump", env, args.timeout,
                                cwd=run_dir if level == 4 else None)
        launcher = launcher_from(res.read_stderr(), debug)
        dump_stage = "dump run"
        if kind == "accuracy" and fail2.get("names"):
            fail["accuracy_check"] = f"{fail2.get('type')}: {cmdline.clip(fail2.get('message'), 150)}"
        if launcher is None and kind == "error" and after == "aot" and args.after == "auto":
            after = "dynamo"
            env["TORCHDYNAMO_REPRO_AFTER"] = after
            proc.progress(f"minify 2/4: nothing dumped after AOT; retry with REPRO_AFTER={after}")
            res, _ = run_target(argv, run_dir, "dump_dynamo", env, args.timeout)
            launcher = launcher_from(res.read_stderr(), debug)
    else:
        proc.progress("minify 2/4: the triage run already dumped the failing graph")
    result.update(repro_after=after, repro_level=level, repro_kind=kind)
    if launcher is None:
        result.update(status="not-minified", verified=False, reason=no_launcher_reason(kind))
        return _second_stage(args, argv, run_dir, result)
    before_stats = graph_stats(launcher)
    result["launcher"] = launcher
    # 3. minify
    # in-process (--no-isolate) is much faster, but a runtime error consumes the inputs of the
    # in-process query (Inductor's boxed calling convention clears the list): isolate those.
    isolate = args.isolate or kind == "crash" or fail.get("category") == "compiled_runtime_error"
    python = proc.target_python(argv)
    repro = os.path.join(run_dir, "repro.py")
    mini = dict(python=python, launcher=launcher, after=after, nodes=before_stats and before_stats["nodes"],
                env=base_env, run_dir=run_dir, timeout=args.timeout)
    mres = run_minifier(isolate, "minifier", **mini)
    if not os.path.exists(repro) and not isolate and after == "aot" and not mres.timed_out:
        notes.append("the in-process minifier failed (see minifier.stderr); reran it isolated")
        mres = run_minifier(True, "minifier_isolated", **mini)
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
        ck = last_checkpoint(debug)
        if ck:
            import shutil
            shutil.copyfile(ck, repro)
            notes.append(f"repro.py copied from the minifier's last checkpoint {ck}")
    if not os.path.exists(repro):
        result.update(status="not-minified", verified=False,
                      reason="the minifier wrote no repro.py" + (" (timed out)" if mres.timed_out else ""))
        result["nodes_before"] = before_stats and before_stats["nodes"]
        return _second_stage(args, argv, run_dir, result)
    after_stats = graph_stats(repro)
    # 4. verify
    proc.progress("minify 4/4: verify repro.py fails the same way")
    vres = proc.run([lcmd[0], repro], env_add=base_env, cwd=run_dir, timeout=args.timeout,
                    stdout_path=os.path.join(run_dir, "repro_check.stdout"),
                    stderr_path=os.path.join(run_dir, "repro_check.stderr"))
    got = failure_of(vres)
    verified, why = same_failure(fail, got, kind)
    result["repro_check"] = {**got, "verified": verified, "why": why, "stderr": vres.stderr_path}
    test_path = views_minify.write_test(run_dir, repro, kind, fail, before_stats, after_stats, argv,
                                        args.timeout) if verified else None
    result.update(status="verified" if verified else "unverified", verified=verified, repro=repro,
                  regression_test=test_path,
                  nodes_before=before_stats and before_stats["nodes"], nodes_after=after_stats and after_stats["nodes"],
                  ops_before=before_stats and before_stats["ops"], ops_after=after_stats and after_stats["ops"],
                  wall_s=round(time.monotonic() - t0, 1), notes=notes, dumped_by=dump_stage, python=python)
    if not verified:
        result["reason"] = why
        return _second_stage(args, argv, run_dir, result)
    result["next_command"] = _bisect_cmd(args)
    output.emit(args, result, views_minify.markdown(result))
    return 0


def _second_stage(args, argv, run_dir, result):
    """No verified graph-level repro: reduce the program file itself (the source stage), when it is a .py
    program; else say why not and point to bisect (never back to the minify just run)."""
    why = source_stage.applies(argv)
    if why is None:
        with open(os.path.join(run_dir, "report_graph_stage.md"), "w") as f:
            f.write(views_minify.markdown(result) + "\n")
        proc.progress(f"graph stage: {result.get('status')}; next, the source stage: reduce the program itself "
                      f"(up to {args.source_limit:.0f} s, --source-limit)")
        return _minify_source.run(args, argv, run_dir, prior=result, from_dir=getattr(args, "from_dir", None))
    result["source_stage"] = why
    result["next_command"] = _bisect_cmd(args)
    output.emit(args, result, views_minify.markdown(result))
    return 0


def _bisect_cmd(args):
    if getattr(args, "from_dir", None):
        return cmdline.cli_command("bisect", "--from", args.from_dir)
    return cmdline.cli_command("bisect", "--", *args.target)


def _default_jobs():
    from ..run.workers import bisect_search
    return bisect_search.default_jobs()
