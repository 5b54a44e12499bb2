"""A triage run: the user's command run ONCE with TORCH_TRACE into the run dir, analysed into a
report.Report, and the extra runs that measure a failure, in order (the program without torch.compile and
what both print in vs_eager.py, the AOTInductor input check in aoti_input_check.py, torch's accuracy check;
an empty cache, precision casts and scalar C++ in extra_runs.py). No torch import here."""
import os
import re

from . import accuracy_apply, accuracy_check, fix_candidates, knowledge, printed, semantics, verdict
from .aoti_input_check import check_aoti_inputs
from .extra_runs import _check_cold_cache, _check_precision_casts, _check_scalar_cpu, _check_static_numbers, \
    check_compile_raised, check_fastpath, check_rng, created_by_run, dir_state
from .analyze import _next_steps, analyze, apply_verdict
from .analyze_errors import compile_data_dependent
from .vs_eager import compare_with_eager, first_run_again
from ..run import proc
from ..read import trace as tracemod
from ..read.frames import strip_rank_prefix
from ..cmdline import cli_command, command_line

_RERUN_RE = re.compile(r"^(.*? (?:bisect|minify)(?: --stdin (?:'[^']*'|\S+))?)(?: --bad-if-exception \S+)? -- .+$")


def _reuse_this_run(rep, run_dir):
    """bisect/minify next commands read this triage run (--from RUN_DIR: its command, classification
    and bad-if signature) instead of running the program again to classify it."""
    def sub(cmd):
        m = _RERUN_RE.match(cmd or "")
        return f"{m.group(1)} {command_line(['--from', run_dir])}" if m else cmd
    for e in rep.errors:
        e.next_command = sub(e.next_command)
        if compile_data_dependent(e):   # the row's export route does not apply to a torch.compile run
            e.skill, e.next_command, e.advice = "trace-dynamo", None, knowledge.advice("data_dependent_under_compile")
    fix_given, fixable = False, _has_fix_candidates(rep)
    for st in rep.next_steps:
        st["command"] = sub(st.get("command"))
        # graph breaks / recompiles: `fix --from` re-runs the program with each no-code-edit fix and
        # measures it (one run covers every finding, so the command goes on the first such step)
        if st.get("fixable") and not st["command"] and not fix_given and fixable and run_dir:
            if st.get("code_edit") and rep.command:
                # an edit of the user's own line is the usual fix: say how to check it in one call
                st["why"] += (f"; after the edit: `{cli_command('compare', run_dir, '--', *rep.command)}`"
                              "; config-only fixes, measured:")
            st["command"] = cli_command("fix", "--from", run_dir)
            fix_given = True
        elif (st.get("edit_only") or st.get("code_edit")) and not st["command"] and rep.command and run_dir \
                and "after the edit" not in st["why"]:
            st["why"] += f"; after the edit: `{cli_command('compare', run_dir, '--', *rep.command)}`"


def _has_fix_candidates(rep):
    """Whether `fix --from` would try anything on this report (knowledge/fixes.yaml's candidates for its
    findings): without one it runs nothing and lists the edits the report already shows (blind A/B batch 27:
    a call spent on a library break whose only fix is a compile layout)."""
    return bool(fix_candidates.candidates(fix_candidates.findings(rep.to_dict())))


MEASURED = ("accuracy_mismatch", "user_error")


def run_and_analyze(argv, run_dir, *, timeout, env_add=None, tag="target", tlparse=True, eager_check=False,
                    vs_eager=False, keep_on_interrupt=False):
    """Run the target once with TORCH_TRACE into <run_dir>/trace; return the Report. When it fails
    (not on timeout), eager_check re-runs it once with compilation off for the verdict. vs_eager: run it
    without compilation in any case (or reuse the eager check's run) and compare what both print. On
    Ctrl-C, keep_on_interrupt returns the report of what it did until then (rep.interrupted)."""
    trace_dir = os.path.join(run_dir, "trace")
    os.makedirs(trace_dir, exist_ok=True)
    env = {"TORCH_TRACE": trace_dir, "PYTHONUNBUFFERED": "1"}
    env.update(env_add or {})
    before = dir_state(argv) if eager_check or vs_eager else None
    res = proc.run(argv, env_add=env, timeout=timeout, stdout_path=os.path.join(run_dir, f"{tag}.stdout"),
                   stderr_path=os.path.join(run_dir, f"{tag}.stderr"), keep_on_interrupt=keep_on_interrupt)
    stdout, stderr = res.read_stdout(limit=2_000_000), strip_rank_prefix(res.read_stderr(limit=2_000_000))
    rep = analyze(trace_dir, command=argv, run_dir=run_dir, res=res, stdout=stdout, stderr=stderr,
                  target_str=command_line(argv))
    rep.artifacts.update({"stdout": res.stdout_path, "stderr": res.stderr_path, "trace_dir": trace_dir})
    failed = res.returncode not in (0, None) and rep.errors and rep.errors[0].message
    rep.printed_tail, rep.printed_lines = printed.tail(
        stdout, stderr, rep.errors[0].message.strip().splitlines()[0] if failed and rep.errors[0].message.strip() else None)
    rep.torch_warnings = printed.warnings_with_rows(stderr)
    created = created_by_run(before, argv, run_dir)   # a first run's files, found by every run after it
    first_run = None   # one more compiled run with those files in place (first_run_again), when made
    if rep.errors and not res.timed_out and res.returncode not in (0, None):
        def run_eager():
            proc.progress("the compiled run failed; running it once more without torch.compile (eager check)")
            r = verdict.run_eager(argv, run_dir, timeout=timeout, env_add=env_add)
            rep.artifacts.update({"eager_check_stdout": r.stdout_path, "eager_check_stderr": r.stderr_path})
            return r, r.read_stderr(limit=2_000_000)
        apply_verdict(rep, stderr, target_str=command_line(argv), run_eager_fn=run_eager if eager_check else None)
        if eager_check and check_fastpath(rep, argv, run_dir, timeout, env_add):
            rep.next_steps = _next_steps(rep, command_line(argv), cli_command())
        if eager_check and check_rng(rep, argv, run_dir, timeout, env_add):
            rep.next_steps = _next_steps(rep, command_line(argv), cli_command())
        if eager_check and created and (rep.verdict or {}).get("kind") == "compile_only":
            first_run = first_run_again(rep, argv, run_dir, timeout, env_add, created)
        timed = (rep.verdict or {}).get("kind") == "compile_only" and rep.errors[0].category in MEASURED \
            and verdict.timing_failure(rep.errors[0])
        counted = (rep.verdict or {}).get("kind") == "compile_only" and rep.errors[0].category in MEASURED \
            and not timed and verdict.compile_count_failure(rep.errors[0], rep)
        measure = eager_check and (rep.verdict or {}).get("kind") == "compile_only" \
            and rep.errors[0].category in MEASURED and not verdict.python_value_error(rep.errors[0]) and not timed \
            and not counted
        if timed:   # a check of time, not numbers: the compiles inside the timed part (no accuracy run, no bisect)
            rep.verdict["timing"] = True
            rep.next_steps = _next_steps(rep, command_line(argv), cli_command())
        if counted:   # a check of compile counts: the breaks and recompiles it counts (no accuracy run, no bisect)
            rep.verdict["compile_counts"] = True
            rep.next_steps = _next_steps(rep, command_line(argv), cli_command())
        e0 = rep.errors[0]
        by_design = e0.side == "user" and knowledge.triage_row_of(e0.category).get("only_compiled")   # a row says why
        if eager_check and not measure and not timed and not counted and not by_design \
                and not any(f["explains_error"] for f in semantics.current(rep)) \
                and rep.errors[0].category != "fails_in_dynamo":   # (measured: Dynamo's side, no cache or codegen)
            _check_cold_cache(rep, argv, run_dir, timeout, env_add)   # (a by-design class: its own fix, no run)
            _check_static_numbers(rep, argv, run_dir, timeout, env_add)   # (a compile error in a recompile)
            _check_scalar_cpu(rep, argv, run_dir, timeout, env_add)   # (a native crash)
        if measure:
            # fails only compiled, no specific class: a miscompile or rounding? one run measures every graph
            proc.progress("only the compiled run fails, and no error class explains it; one more run under torch's "
                          "accuracy check (every compiled graph vs eager and fp64, RMSE rule): miscompile or rounding?")
            adir = os.path.join(run_dir, "accuracy_check")
            chk = accuracy_check.run(argv, adir, timeout=timeout, env_add=env_add)
            accuracy_apply.apply(rep, chk, adir, (cli_command(), command_line(argv)))
            rep.artifacts["accuracy_check"] = adir
            # after it, not before: rounding (or noise eager has too) is no stale cache entry, and the empty cache's
            # run, a cold compile of the whole program, is the dearest of the extra runs
            if rep.verdict["accuracy"]["verdict"] not in ("rounding", "noise"):
                _check_cold_cache(rep, argv, run_dir, timeout, env_add)
            if rep.errors[0].category != "warm_cache_only":
                _check_precision_casts(rep, argv, run_dir, timeout, env_add)
            _check_static_numbers(rep, argv, run_dir, timeout, env_add)
            _check_scalar_cpu(rep, argv, run_dir, timeout, env_add)
            rep.next_steps = _next_steps(rep, command_line(argv), cli_command())
    if eager_check and rep.errors and not res.timed_out and not res.interrupted and res.returncode not in (0, None):
        check_aoti_inputs(rep, argv, run_dir, timeout, env_add)
    if not rep.used_compile and not res.timed_out and not res.interrupted:
        check_compile_raised(rep, argv, run_dir, timeout, env_add)
    # the accuracy check found no numeric cause and the eager check's output is already here: compare them now
    # (no run) instead of offering --vs-eager as the next step (blind A/B batch 16: one call each time)
    eager_out = rep.artifacts.get("eager_check_stdout")
    compared = ((rep.verdict or {}).get("accuracy") or {}).get("next") == "vs_eager" and eager_out \
        and os.path.exists(eager_out)
    if (vs_eager or compared) and not res.timed_out and not res.interrupted:
        compare_with_eager(rep, argv, run_dir, stdout, timeout, env_add, created, first_run)
    _reuse_this_run(rep, run_dir)
    if os.environ.get("TORCH_TRACE"):
        rep.notes.append("your TORCH_TRACE was overridden for this run (the trace is in the run dir)")
    if tlparse and not res.interrupted:
        html = run_tlparse(trace_dir, os.path.join(run_dir, "tlparse"))
        if html:
            rep.artifacts["tlparse"] = html
    return rep


def run_tlparse(trace_dir, out_dir, extra=(), timeout=180):
    """tlparse's HTML report for the biggest trace file; None when tlparse is missing or fails."""
    exe = proc.find_tool("tlparse")
    files = tracemod.trace_files(trace_dir)
    if not exe or not files:
        return None
    biggest = max(files, key=os.path.getsize)
    res = proc.run([exe, biggest, "-o", out_dir, "--overwrite", "--no-browser", *extra], timeout=timeout,
                   stdout_path=out_dir + ".log", stderr_path=out_dir + ".log.err")
    index = os.path.join(out_dir, "index.html")
    return index if res.ok and os.path.exists(index) else None
