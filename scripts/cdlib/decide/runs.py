"""A triage run: the user's command run ONCE with TORCH_TRACE into the run dir, analysed into a
report.Report, and the extra runs that measure a failure (the program without torch.compile, a second
eager run, the AOTInductor input check, torch's accuracy check; an empty cache, precision casts and scalar
C++ in extra_runs.py). No torch import here."""
import json
import os
import re

from . import accuracy_check, accuracy_judge, fix_candidates, knowledge, printed, semantics, verdict
from .extra_runs import _check_cold_cache, _check_precision_casts, _check_scalar_cpu, _check_static_numbers, \
    check_first_run_files, created_by_run, dir_state, \
    _run_changed, check_caches_off, check_compile_raised, check_dynamo_alone, check_fastpath
from .analyze import _next_steps, analyze, apply_verdict, compile_switches
from .analyze_errors import _first_lines, compile_data_dependent
from .custom_op_code import clone_into_mutating_op, custom_jvps_under_forward_ad, scalar_custom_ops, undeclared_mutations
from .program_code import program_files as _program_files, read_text as _read_text
from ..run import proc
from ..read import trace as tracemod
from ..read.frames import innermost_user, parse_exception, parse_py_frames, strip_rank_prefix
from ..cmdline import clip, cli_command, command_line, local_imports as _local_imports, script_of as _script_of

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
    first_run = None   # one more compiled run with those files in place (_first_run_again), when made
    if rep.errors and not res.timed_out and res.returncode not in (0, None):
        def run_eager():
            proc.progress("the compiled run failed; running it once more without torch.compile (eager check)")
            r = verdict.run_eager(argv, run_dir, timeout=timeout, env_add=env_add)
            rep.artifacts.update({"eager_check_stdout": r.stdout_path, "eager_check_stderr": r.stderr_path})
            return r, r.read_stderr(limit=2_000_000)
        apply_verdict(rep, stderr, target_str=command_line(argv), run_eager_fn=run_eager if eager_check else None)
        if eager_check and check_fastpath(rep, argv, run_dir, timeout, env_add):
            rep.next_steps = _next_steps(rep, command_line(argv), cli_command())
        if eager_check and created and (rep.verdict or {}).get("kind") == "compile_only":
            first_run = _first_run_again(rep, argv, run_dir, timeout, env_add, created)
        measure = eager_check and (rep.verdict or {}).get("kind") == "compile_only" \
            and rep.errors[0].category in MEASURED and not verdict.python_value_error(rep.errors[0])
        if eager_check and not measure and not any(f["explains_error"] for f in semantics.current(rep)):
            _check_cold_cache(rep, argv, run_dir, timeout, env_add)   # (a by-design class: its own fix, no run)
            _check_static_numbers(rep, argv, run_dir, timeout, env_add)   # (a compile error in a recompile)
            _check_scalar_cpu(rep, argv, run_dir, timeout, env_add)   # (a native crash)
        if measure:
            # fails only compiled, no specific class: a miscompile or rounding? one run measures every graph
            proc.progress("only the compiled run fails, and no error class explains it; one more run under torch's "
                          "accuracy check (every compiled graph vs eager and fp64, RMSE rule): miscompile or rounding?")
            adir = os.path.join(run_dir, "accuracy_check")
            chk = accuracy_check.run(argv, adir, timeout=timeout, env_add=env_add)
            accuracy_judge.apply(rep, chk, adir, (cli_command(), command_line(argv)))
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
        _check_aoti_inputs(rep, argv, run_dir, timeout, env_add)
    if not rep.used_compile and not res.timed_out and not res.interrupted:
        check_compile_raised(rep, argv, run_dir, timeout, env_add)
    # the accuracy check found no numeric cause and the eager check's output is already here: compare them now
    # (no run) instead of offering --vs-eager as the next step (blind A/B batch 16: one call each time)
    eager_out = rep.artifacts.get("eager_check_stdout")
    compared = ((rep.verdict or {}).get("accuracy") or {}).get("next") == "vs_eager" and eager_out \
        and os.path.exists(eager_out)
    if (vs_eager or compared) and not res.timed_out and not res.interrupted:
        _compare_with_eager(rep, argv, run_dir, stdout, timeout, env_add, created, first_run)
    _reuse_this_run(rep, run_dir)
    if os.environ.get("TORCH_TRACE"):
        rep.notes.append("your TORCH_TRACE was overridden for this run (the trace is in the run dir)")
    if tlparse and not res.interrupted:
        html = run_tlparse(trace_dir, os.path.join(run_dir, "tlparse"))
        if html:
            rep.artifacts["tlparse"] = html
    return rep


def _check_aoti_inputs(rep, argv, run_dir, timeout, env_add):
    """A failing program that loads an AOTInductor package runs once more with AOTI_RUNTIME_CHECK_INPUTS=1: the
    package checks its inputs' sizes, strides, dtype and device only then, and computes on silently without it
    (blind A/B batch 21: channels-last frames into a package built from a contiguous example, 23% agreement with
    eager, read as "failed before torch.compile ran" with export's train-mode advice). The check's error, or
    that it passed, goes into the verdict."""
    from ..read import never_ran
    if "1" in (os.environ.get("AOTI_RUNTIME_CHECK_INPUTS"), (env_add or {}).get("AOTI_RUNTIME_CHECK_INPUTS")):
        return
    loads = never_ran.aoti_loads(_program_files(rep))
    e0 = rep.errors[0]
    # only a failure that a package computing on a wrong layout can cause: an output check, or a crash (review: a
    # KeyError or a missing directory after a package call that worked was re-labelled an input mismatch, as the
    # check also rejects inputs that work, e.g. batch 1 under a dynamic batch dim's lower bound of 2)
    # (or an error the package's own call raised: blind A/B batch 49, int32 ids into a package exported with int64
    # read past the buffer: "index out of bounds" from its embedding kernel)
    # (not one a row of ours already explains: the input count's own row names which side has the extra tensor)
    saved_unexplained = (rep.verdict or {}).get("saved") == "aoti" and \
        (e0.category in ("aoti_error", "export_error")
         or knowledge.triage_row_of(e0.category).get("skill") not in ("aoti", "export"))
    if not loads or not (rep.signal or saved_unexplained or accuracy_judge.is_output_check(
            e0.type, "\n".join([e0.message or ""] + list(rep.printed_tail or [])))):
        return
    proc.progress("the program loads an AOTInductor package, which checks its inputs only when asked: running it "
                  "once more with AOTI_RUNTIME_CHECK_INPUTS=1")
    env = dict(env_add or {}, PYTHONUNBUFFERED="1", TORCH_TRACE=None, AOTI_RUNTIME_CHECK_INPUTS="1")
    shapes_at = os.path.join(run_dir, "aoti_check.inputs.json")
    structure_at = os.path.join(run_dir, "aoti_check.structure.json")
    packages_at = os.path.join(run_dir, "aoti_check.packages.json")
    if "COMPILE_DEBUG_STARTUP" not in env:   # record the inputs' shapes at a failing package call, a call whose
        from ..run.workers import aoti_hooks   # inputs are structured unlike the export, the packages built and loaded
        env.update(proc.startup_env(run_dir, [{"code": aoti_hooks.code(shapes_at, structure_at, packages_at)}],
                                    name="aoti_check"))
    r = proc.run(argv, env_add=env, timeout=timeout, stdout_path=os.path.join(run_dir, "aoti_check.stdout"),
                 stderr_path=os.path.join(run_dir, "aoti_check.stderr"))
    rep.artifacts.update({"aoti_check_stdout": r.stdout_path, "aoti_check_stderr": r.stderr_path})
    text = r.read_stderr(limit=2_000_000)
    # sizes within a dynamic range ("dim value is too small ... >= 2") are left out: batch 1 runs correctly below
    # the exported lower bound; a static size, a stride, a dtype or a device that differs is read wrong
    m = re.search(r"input_handles\[\d+\]: unmatched (?:stride value|dtype|device|dim value)[^\n]*", text)
    size1 = _size1_stride(m.group(0) if m else "", shapes_at)
    if size1:   # the check stopped at a stride that reads the same memory: not a mismatch, and it checked no further
        m = None
    call_at = innermost_user(parse_py_frames(text)) if m else None   # the program's line that called the package
    path, line, call = next((x for x in loads if call_at and os.path.realpath(x[0]) == os.path.realpath(call_at.file)),
                            loads[0])
    rep.verdict = rep.verdict or {}
    rep.verdict["aoti_inputs"] = {"load": f"{os.path.basename(path)}:{line} `{call}(...)`", "exit_code": r.returncode,
                                  "timed_out": r.timed_out, "mismatch": m.group(0).strip() if m else None,
                                  "size1_stride": size1,
                                  "call": f"{os.path.basename(call_at.file)}:{call_at.line}" + (
                                      f" `{clip(call_at.code, 80)}`" if call_at.code else "") if call_at else None}
    structure = None
    if not m and os.path.exists(structure_at):
        try:
            with open(structure_at, encoding="utf-8") as f:
                structure = json.load(f)
        except (OSError, ValueError):
            structure = None
    ai = rep.verdict["aoti_inputs"]
    weights = None if m or structure or size1 else _weights_not_loaded(packages_at)
    if weights:     # the package's weights were kept out of its .so, and the loader used does not read them
        ai["weights"] = weights
        row_id, summary = "aoti_weights_not_loaded", (
            f"the AOTInductor package {weights['package']} (loaded at {ai['load']}) keeps its weights outside its "
            f".so ({weights['how']}), and that loader never reads them: its first call ran on weights never loaded")
    elif structure:   # the call's inputs are structured unlike the export's (a dict in another key order)
        ai["structure"] = structure
        at = f" at {structure['at']}" + (f" `{clip(structure['code'], 80)}`" if structure.get("code") else "") \
            if structure.get("at") else ""
        row_id, summary = "aoti_input_structure", (
            f"the AOTInductor package ({ai['load']}) was called{at} with inputs structured unlike its export: at "
            f"`{structure['path']}` it was exported with {structure['exported']}, called with {structure['called']}; "
            "it binds inputs by position and checks no names, so they were read in the exported order")
    elif m:
        got = re.search(r"unmatched dtype, expected: \d+\(at::k(\w+)\), but got: (\d+)", m.group(0))
        dtypes = f" (got {_SCALAR_TYPES.get(int(got.group(2)), got.group(2))} where it was built for " \
                 f"{_SCALAR_TYPES.get(got.group(1), got.group(1))}: cast the input, or export with that dtype)" \
            if got else ""
        row_id, summary = "aoti_input_mismatch", (
            f"the AOTInductor package ({ai['load']}) was called" + (f" at {ai['call']}" if ai["call"] else "")
            + " with an input unlike the one it was built for: with AOTI_RUNTIME_CHECK_INPUTS=1 it stops at "
            f"`{clip(m.group(0).strip(), 160)}`{dtypes}; without it, it computes on silently")
    else:
        if rep.verdict.get("kind") == "before_compile" and not size1:
            rep.verdict["summary"] = (f"torch.compile never ran; the program ran the AOTInductor package loaded at "
                                      f"{ai['load']} (compiled code) before it failed")
            rep.next_steps = _next_steps(rep, command_line(argv), cli_command())
        return
    row, err = knowledge.triage_row(row_id), rep.errors[0]
    err.category, err.title, err.skill, err.side = row["id"], row["title"], row.get("skill"), row.get("side", "user")
    err.advice, err.next_command = " ".join(row["advice"].split()), None
    rep.verdict.pop("export_call", None)   # the package's input, not the export's module mode
    rep.verdict["summary"] = summary
    rep.next_steps = _next_steps(rep, command_line(argv), cli_command())


# c10::ScalarType codes and names as AOTInductor's input check prints them ("expected: 4(at::kLong), but got: 3")
_SCALAR_TYPES = {0: "torch.uint8", 1: "torch.int8", 2: "torch.int16", 3: "torch.int32", 4: "torch.int64",
                 5: "torch.float16", 6: "torch.float32", 7: "torch.float64", 11: "torch.bool", 15: "torch.bfloat16",
                 "Byte": "torch.uint8", "Char": "torch.int8", "Short": "torch.int16", "Int": "torch.int32",
                 "Long": "torch.int64", "Half": "torch.float16", "Float": "torch.float32", "Double": "torch.float64",
                 "Bool": "torch.bool", "BFloat16": "torch.bfloat16"}


def _weights_not_loaded(packages_at):
    """{"package", "how"} when the program loaded (aoti_load_package / load_package) a package whose weights are not
    in its .so: pickled on disk in the .pt2 (data/weights/ and weights_config.json: package_constants_on_disk_format=
    "pickle_weights", 2.14+, or package_constants_on_disk=True, 2.9) or nowhere (built here with
    package_constants_in_so=False and no weights file), and the run never called load_constants (the startup hook
    records it; load_pt2(..., load_weights_from_disk=True) loads through it); else None. A package built here with its
    weights in the .so too, or with a weights blob the loader reads ("binary_blob"), is never named (review)."""
    import zipfile
    try:
        with open(packages_at, encoding="utf-8") as f:
            seen = json.load(f)
    except (OSError, ValueError):
        return None
    if not isinstance(seen, list) or any(isinstance(e, dict) and e.get("load_constants") for e in seen):
        return None
    built = {e["built"]: e.get("in_so") for e in seen if isinstance(e, dict) and e.get("built")}
    for path in dict.fromkeys(e["loaded"] for e in seen if isinstance(e, dict) and e.get("loaded")):
        if built.get(path) is True:   # its .so holds the weights, whatever else the .pt2 carries
            continue
        try:
            with zipfile.ZipFile(path) as z:
                names = z.namelist()
        except (OSError, zipfile.BadZipFile, ValueError, TypeError):
            continue
        if any(n.endswith("weights.blob") for n in names):   # "binary_blob": the C++ loader reads it
            continue
        on_disk = sum("/data/weights/" in "/" + n for n in names)
        here = "built by this program with" if built.get(path) is False else "its build likely set"
        if on_disk and any(n.endswith("/weights_config.json") for n in names):
            how = (f"{on_disk} weight file(s) under data/weights/ in the .pt2: {here} "
                   "aot_inductor.package_constants_in_so=False and pickled weights on disk")
        elif built.get(path) is False:
            how = ("built by this program with aot_inductor.package_constants_in_so=False and no weights on disk: "
                   "only a rebuild or load_constants gives it weights")
        else:
            continue
        return {"package": os.path.basename(path), "how": how}
    return None


def _size1_stride(msg, shapes_at):
    """'input_handles[0]: unmatched stride value at 1, ... (shape [8, 1, 64])' when torch's AOTI check stopped at a
    stride of a size-1 dim (the same memory whatever the stride: torch compares every stride exactly; batch 21's
    review), from the input shapes the startup hook recorded; else None."""
    m = re.match(r"input_handles\[(\d+)\]: unmatched stride value at (\d+), expected: -?\d+, but got: (-?\d+)", msg)
    if not m:
        return None
    try:
        with open(shapes_at, encoding="utf-8") as f:
            shapes = json.load(f)
        x, d = shapes[int(m.group(1))], int(m.group(2))
        # the recorded input must be the one torch named: its stride there is the one the message got
        return f"{msg.strip()} (that input's shape {x['shape']})" if x["shape"][d] == 1 and \
            x["stride"][d] == int(m.group(3)) else None
    except (OSError, ValueError, LookupError, TypeError):
        return None


def _small_numeric(cmp, rel=0.01):
    """Every difference is a number within `rel` of eager's, on at most 5 lines (what a failing check prints
    differs a little between two runs of a wrong program); a large difference is still measured."""
    if not cmp.get("differ") or cmp["differ"] > 5 or len(cmp.get("first") or []) < cmp["differ"]:
        return False
    for f in cmp["first"]:
        m = re.match(r"(-?[\d.]+(?:e[-+]?\d+)?) vs (-?[\d.]+(?:e[-+]?\d+)?)", f.get("why") or "")
        if not m:
            return False
        a, b = float(m.group(1)), float(m.group(2))
        if abs(a - b) > rel * max(abs(a), abs(b)):
            return False
    return True


def _eager_only_failure(rep):
    """The next step for a run without torch.compile that raised where the compiled run exited 0, else None."""
    eexc = parse_exception(_read_text(rep.artifacts.get("eager_check_stderr")))
    if not (eexc and eexc.get("type")):
        return None
    eloc = innermost_user(eexc["frames"])
    at_e = f" at {os.path.basename(eloc.file)}:{eloc.line}" if eloc is not None and eloc.line else ""
    msg = eexc.get("message") or ""
    if "modified by an inplace operation" in msg:
        what = knowledge.advice("eager_only_inplace_saved")
    elif eexc["type"].split(".")[-1] in ("RuntimeError", "IndexError", "ValueError") \
            and not (getattr(eloc, "code", None) or "").lstrip().startswith("raise"):
        what = knowledge.advice("eager_only_failure")   # an op's own check (not the program's raise, not an OSError)
    else:
        what = "fix or explain that failure first, then compare again"
    return {"why": f"the run without torch.compile failed{at_e}: {eexc['type']}: {_first_lines(msg, 1, 200)} (the "
                   f"compiled run did not): {what}", "skill": "overview", "command": None}


_CHECK_FAILED = re.compile(r"\b(?:MISMATCH|[Mm]ismatch(?:es|ed)?|FAIL(?:ED|URE)?|[Ff]ailed(?!\s+to\b)|NOT CLOSE|not close)\b")
# a count of zero beside the word: the check passed ("0 mismatches", "FAILED: 0", "0 / 4096"; review of 0.33.114)
_ZERO_COUNT = re.compile(r"\b0\s+(?:\w+\s+)?(?:mismatch|fail|differ)|(?:fail\w*|mismatch\w*)\s*[:=]\s*0\b|\b0\s*/\s*\d",
                         re.I)


def _own_check_fails_both(compiled_out, eager_out):
    """The first line where the program reports its own check failing (MISMATCH, FAILED, not close) that the run
    without torch.compile printed too, or None."""
    eager = set((eager_out or "").splitlines())
    return next((ln.strip() for ln in (compiled_out or "").splitlines()
                 if _CHECK_FAILED.search(ln) and not _ZERO_COUNT.search(ln) and ln in eager), None)


def _first_run_output(rep, run_dir):
    """(eager's printed output, the graphs' dtypes) for comparing a compiled run with the eager check's."""
    eager_out = printed.printed(_read_text(rep.artifacts.get("eager_check_stdout")),
                                _read_text(rep.artifacts.get("eager_check_stderr")))
    return eager_out, accuracy_check.graph_dtypes(rep.artifacts.get("trace_dir") or os.path.join(run_dir, "trace"))


def _first_run_again(rep, argv, run_dir, timeout, env_add, created):
    """Only the compiled run failed, and it was the program's first: it created files (a golden output, a
    checkpoint) that the eager check found. One more compiled run with them in place: passing, the failure is on
    the first-run path, which only the compiled run took (review of 0.33.106: a golden-file gate that exits 1 after
    writing its golden file got "only fails compiled" and an AOTAutograd/Inductor lead). -> check_first_run_files'"""
    eager_out, dtypes = _first_run_output(rep, run_dir)
    again = check_first_run_files(rep, argv, run_dir, timeout, env_add, created, eager_out, dtypes)
    if again["exit_code"] == 0 and not again["timed_out"]:
        files = ", ".join(again["created"])
        rep.verdict.update(kind="not_sure", summary=(
            f"not sure: only the first run failed, compiled; it created {files}, and a second compiled run with it "
            "in place passes, as eager did (which ran after it): the failure is on the program's first-run path, "
            "not shown to be torch.compile's (run it on a fresh copy without torch.compile)"))
        e = rep.errors[0]
        if e.title.startswith("Your program exited with"):
            e.title = f"Your program exited with {rep.exit_code} on its first run only, compiled (it created {files})"
        e.next_command = None   # no accuracy run or bisect: nothing shows a compiled difference
        e.advice = (f"The first run created {files} and failed; a second compiled run with {files} in place passes, "
                    "as the eager check did (it ran after the first and found them). Compare the first run's path "
                    "on a fresh copy, with and without torch.compile, before suspecting the compiler.")
        rep.next_steps = _next_steps(rep, command_line(argv), cli_command())
        rep.next_steps.insert(0, {
            "why": f"to compare the first run's path (it created {files}): run the program from a copy of the project "
                   f"without {files}, once as it is and once without torch.compile (e.g. "
                   "torch.compiler.set_stance(\"force_eager\") at its start), and compare how both end",
            "skill": None, "command": None})
    return again


def _compare_with_eager(rep, argv, run_dir, stdout, timeout, env_add, created=(), first_run=None):
    """triage --vs-eager: the program's stdout compiled vs eager, line by line (the eager check's run when
    there was one); a difference goes first in the next steps."""
    path = rep.artifacts.get("eager_check_stdout")
    if path and os.path.exists(path):
        eres = None
    else:
        proc.progress("--vs-eager: running the program once more without torch.compile to compare its output")
        eres = verdict.run_eager(argv, run_dir, timeout=timeout, env_add=env_add)
        rep.artifacts.update({"eager_check_stdout": eres.stdout_path, "eager_check_stderr": eres.stderr_path})
        path = eres.stdout_path

    dtypes = accuracy_check.graph_dtypes(rep.artifacts.get("trace_dir") or os.path.join(run_dir, "trace"))
    compiled_out = printed.printed(stdout, _read_text(rep.artifacts.get("stderr")))
    eager_out = printed.printed(_read_text(path), _read_text(rep.artifacts.get("eager_check_stderr")))
    cmp = printed.compare_outputs(compiled_out, eager_out, dtypes)
    again = None
    eager_exit = eres.returncode if eres is not None else ((rep.verdict or {}).get("eager") or {}).get("exit_code")
    # (not where the eager run failed and the compiled one did not: an eager run that failed on a file the compiled
    # run left, a lock, keeps the comparison that names its failure; review of batch 48's rule, test_only_compiled)
    if first_run is not None:   # made already, after the verdict (_first_run_again)
        again = first_run
        if not again["timed_out"]:
            compiled_out = again["out"]
            cmp = printed.compare_outputs(compiled_out, eager_out, dtypes)
    elif cmp["differ"] and created and rep.used_compile and \
            not (eager_exit not in (0, None) and rep.exit_code in (0, None)):
        # the compiled run was the first and made files the runs after it found: compare a compiled run made with them
        again = check_first_run_files(rep, argv, run_dir, timeout, env_add, created, eager_out, dtypes)
        if not again["timed_out"]:
            compiled_out = again["out"]
            cmp = printed.compare_outputs(compiled_out, eager_out, dtypes)
    ev = (rep.verdict or {}).get("eager") or {}
    cmp["eager_exit_code"] = eres.returncode if eres is not None else ev.get("exit_code")
    cmp["eager_timed_out"] = bool(eres.timed_out if eres is not None else ev.get("timed_out"))
    failed = rep.exit_code not in (0, None)
    if not cmp["differ"] and failed and cmp["eager_exit_code"] not in (0, None):
        # both runs fail alike: a check inside the program that compares two of its own runs fails either way
        # (blind A/B batch 9: "the same output" read as parity, where the program's parity gate failed both ways)
        cmp["verdict"] += (f"; both runs fail (compiled exit {rep.exit_code}, eager exit {cmp['eager_exit_code']}): "
                           "whatever the program checks fails without torch.compile too")
    own = _own_check_fails_both(compiled_out, eager_out) if not cmp["differ"] else None
    if own:
        # an A/B script that compares its own eager and compiled arms and prints MISMATCH in both runs, exit 0 (blind
        # A/B batch 51: the warm-up's leftover gradients; "the same output" with a perf Next, the agent read the log)
        cmp["verdict"] += (f"; the program's own check reports `{clip(own, 120)}` in the run without torch.compile "
                           "too: what it compares differs without the compiler")
    rep.vs_eager = cmp
    rep.next_steps = [s for s in rep.next_steps if "triage --vs-eager" not in (s.get("command") or "")]   # just ran
    if own:
        rep.next_steps = [s for s in rep.next_steps if " perf -- " not in (s.get("command") or "")]
        rep.next_steps.insert(0, {"why": f"the program's own comparison fails without torch.compile too (`{clip(own, 120)}`"
                                         "): find what differs between its two sides when both run eagerly (state a "
                                         "warm-up or an earlier run left: gradients, BatchNorm statistics, optimizer "
                                         "state; random draws; a module attribute), not the compiler",
                                  "skill": None, "command": None})
    if again:
        files = ", ".join(again["created"])
        cmp["first_run_files"] = {k: again[k] for k in ("created", "exit_code", "like_eager")}
        if again["like_eager"]:
            cmp["verdict"] = (f"the compiled run was the program's first and created {files}, which every run after it "
                              f"found; a second compiled run with {files} in place (exit {again['exit_code']}) prints "
                              f"what eager prints: compiled and eager agree once {files} exists. The first run's own "
                              f"work (making {files}) ran compiled only and is not compared; " + cmp["verdict"])
            if not any((x.get("why") or "").startswith("to compare the first run's path") for x in rep.next_steps):
                rep.next_steps.insert(1 if rep.errors else 0, {
                    "why": f"to compare the first run's path too (it created {files}): run the program from a copy of "
                           f"the project without {files}, once as it is and once without torch.compile (e.g. "
                           "torch.compiler.set_stance(\"force_eager\") at its start), and compare what both print",
                    "skill": None, "command": None})
            # (a compile_only verdict whose second run passes was made not_sure already, by _first_run_again)
            return
        cmp["verdict"] += (f" (compared with a second compiled run: the first created {files}, which the runs after "
                           "it found)")
    if not cmp["differ"] and failed and (rep.verdict or {}).get("kind") == "compile_only" and not rep.next_steps:
        # nothing measured explains it: the same output, graphs as close to fp64 as eager; bisect is what is left
        rep.next_steps.append({"why": "compiled and eager print the same and no compiled graph is further from fp64 "
                                      "than eager, yet only the compiled run fails: bisect finds the first backend "
                                      "(eager, aot_eager, inductor) and pass where it fails",
                               "skill": "bisect", "command": f"{cli_command()} bisect -- {command_line(argv)}"})
    flags = compile_switches(argv) if not cmp["differ"] and cmp["lines"]["compiled"] and rep.graphs else []
    if flags:
        # the same output with compilation switched off by torch (the program unchanged): a difference the user
        # sees with the program's own switch is in the code that switch changes besides compiling (blind A/B
        # batch 16: `model.forward = torch.compile(model.forward)` then deepcopy for an EMA, whose copy kept the
        # live model's bound forward; "the same output" read as "nothing to see")
        from ..read import never_ran
        script = _script_of(argv)
        calls = never_ran.compile_calls([script] + _local_imports(script)) if script else []
        where_ = ", ".join(f"{os.path.basename(p)}:{ln} `{clip(code, 70)}`" for p, ln, code in calls[:3])
        rep.next_steps.insert(1 if rep.errors else 0, {
            "why": f"torch.compile changes nothing this program prints (the same output with compilation switched off "
                   f"by torch, every line of the program run as written). If your own switch ({', '.join(flags)}) "
                   "gives other numbers, the difference is in what your code does differently on that path, not in "
                   "compiling" + (f": the compile lines, {where_}, and what uses their result (a copy, a wrapper, "
                                  "an attribute)" if where_ else "") + "; run your two paths and compare",
            "skill": "overview", "command": None})
    if cmp["differ"] and not rep.used_compile:
        # torch.compile never ran, so both runs ran the same code (blind A/B batch 36: an AOTInductor deploy script;
        # its log differed from run to run, and the padding class and an accuracy Next were offered for it)
        cmp["verdict"] += ("; torch.compile never ran in this program, so both runs ran the same code: the difference "
                           "is the program's own run-to-run variation, not torch.compile's")
        return
    e0 = rep.errors[0] if rep.errors else None
    if cmp["differ"] and failed and cmp["eager_exit_code"] == 0 and e0 is not None and not rep.signal \
            and knowledge.triage_row_of(e0.category).get("raised_compiling") and not cmp.get("nonfinite") and not accuracy_judge.is_output_check(
                e0.type, "\n".join([e0.message or ""] + list(rep.printed_tail or []))):
        # torch.compile raised while compiling (a row's raised_compiling: a graph break under fullgraph, a backend error;
        # not a program's own exit on its numbers) and the run without it completed: the
        # outputs differ because the compiled run stopped there; no Dynamo-alone run, no "where it differs" step
        # (blind A/B batch 46: retain_grad under fullgraph; the error's own text was read as Dynamo changing output)
        cmp["compiled_stopped"] = True
        cmp["verdict"] += (f"; the compiled run stopped at its error ({e0.type}, above) and the run without "
                           "torch.compile completed: the difference is that error, not numbers; fix it first")
        return
    if cmp["differ"]:
        tstr = command_line(argv)
        # wrong output first: "if it is slow, perf" is noise beside it (blind A/B batch 9)
        rep.next_steps = [s for s in rep.next_steps if " perf -- " not in (s.get("command") or "")]
        trace_dir = rep.artifacts.get("trace_dir") or os.path.join(run_dir, "trace")
        found = semantics.apply_differs(rep, tracemod.parse(trace_dir), stdout, _read_text(rep.artifacts.get("stderr")))
        at = at0 = 1 if rep.errors else 0
        # a by-design class the difference shows: its fix first; then NaN/inf only compiled, which random numbers do
        # not explain (blind A/B batch 21) but a class such as the transformer fast path's padding does (review)
        rng = [f for f in found if f["id"] == "compiled_rng"]
        if rng and len(rng) == len(found) and not _rng_explains(rep, argv, run_dir, timeout, env_add, path, dtypes):
            found = [f for f in found if f["id"] != "compiled_rng"]
            rep.semantics = [f for f in rep.semantics if f["id"] != "compiled_rng"]
            rng = []
        for f in [f for f in found if f["id"] != "compiled_rng"]:
            rep.next_steps.insert(at, {"why": f"[{f['id']}] {f['fix']} Verify: {f['verify']}", "skill": None,
                                       "command": None})
            at += 1
        eager_step = _eager_only_failure(rep) if not failed and cmp["eager_exit_code"] not in (0, None) \
            and not cmp["eager_timed_out"] else None
        if eager_step:
            # no verdict names the eager failure: say what and where it was, first: a failure the eager run measured
            # outranks a by-design class the compiled run only suggests (blind A/B batch 22: compiled_rng above an
            # in-place error on a saved output; batch 40: bernoulli's range check, which compiled code skips, and the
            # Next was the accuracy run)
            rep.next_steps.insert(at0, eager_step)
            at += 1
        jvps = custom_jvps_under_forward_ad(_program_files(rep))
        if jvps:   # a Function's own jvp that Dynamo drops (blind A/B batch 37: NaN from step 0; the NaN and Dynamo-alone
            # advice named the backward, constants, side effects and hooks)
            where = ", ".join(f"`{name}` ({os.path.basename(p)}:{ln})" for p, ln, name in jvps[:3])
            rep.next_steps.insert(at, {"why": f"compiled and eager print different output ({clip(cmp['verdict'], 160)}): "
                                              + knowledge.advice("custom_jvp_dropped", at=where),
                                       "skill": None, "command": None})
            at += 1
        muts = undeclared_mutations(_program_files(rep))
        if muts:   # blind A/B batch 47: a NumPy row normalization writing its input, mutates_args=(); Next was bisect
            where = ", ".join(f"`{name}` ({os.path.basename(p)}:{ln}) appears to write `{arg}`" for p, ln, name, arg in muts[:3])
            rep.next_steps.insert(at, {"why": f"compiled and eager print different output ({clip(cmp['verdict'], 160)}): "
                                              + knowledge.advice("custom_op_undeclared_mutation", at=where),
                                       "skill": None, "command": None})
            at += 1
        # (not where the random numbers were measured to explain the difference: review of 0.33.105)
        clones = clone_into_mutating_op(_program_files(rep)) if not rng else []
        if clones:   # blind A/B batch 49: `raw = x.clone(); op_(raw, x)`; Inductor dropped the clone in the training graph
            p_, ln, op_, clone, src = clones[0]
            rep.next_steps.insert(at, {"why": f"compiled and eager print different output ({clip(cmp['verdict'], 160)}): "
                                              + knowledge.advice("clone_into_mutating_op", op=op_, clone=clone, src=src,
                                                                 at=f"{os.path.basename(p_)}:{ln}"),
                                       "skill": None, "command": None})
            at += 1
        scalars = scalar_custom_ops(_program_files(rep))
        if scalars:   # blind A/B batch 38: an int8 simulation's percentile scale as `-> float`; the fake's 1.0 was baked in
            where = ", ".join(f"`{name}` ({os.path.basename(p)}:{ln})" for p, ln, name in scalars[:3])
            rep.next_steps.insert(at, {"why": f"compiled and eager print different output ({clip(cmp['verdict'], 160)}): "
                                              + knowledge.advice("custom_op_scalar_result", at=where),
                                       "skill": None, "command": None})
            at += 1
        if cmp.get("nonfinite"):
            nf = cmp["nonfinite"]
            said = (f"compiled prints NaN/inf (line {nf['compiled_line']}: `{clip(nf['compiled'].strip(), 100)}`), "
                    "eager none: ")
            bad = _nonfinite_graph(rep, argv, run_dir, timeout, env_add) if not found else None
            if bad:   # measured: the graph that first gives NaN/inf where its eager run does not (blind A/B batch 45)
                rep.next_steps.insert(at, {"why": said + knowledge.advice("nonfinite_graph_measured", **bad),
                                           "skill": "bisect", "command": f"{cli_command()} minify --kind accuracy -- "
                                                                        f"{command_line(argv)}"})
                return   # the accuracy run is made (no class found, so no rng step follows)
            rep.next_steps.insert(at, {"why": said + knowledge.advice("nonfinite_only_compiled"),
                                       "skill": "overview", "command": None})
            at += 1
        for f in rng:
            rep.next_steps.insert(at, {"why": f"[{f['id']}] {f['fix']} Verify: {f['verify']}", "skill": None,
                                       "command": None})
            at += 1
        if found and len(rng) < len(found):   # the class names the cause and how to confirm it; no accuracy run on top
            return
        extra = cmp["lines"]["compiled"] - cmp["lines"]["eager"]
        if cmp["eager_exit_code"] not in (0, None) and not cmp["eager_timed_out"] and extra > 0 \
                and cmp["differ"] == extra and all(f.get("why") == "only compiled" for f in cmp.get("first") or []):
            # the run without torch.compile failed after printing the same first lines, and printed no more: the
            # lines differ because it stopped, not by numbers; no accuracy run (blind A/B batch 18: an fp16
            # masked_fill that eager rejects and Inductor folds to -inf; a custom op without autograd that fails
            # at backward eagerly and at the forward's compile compiled)
            cmp["stopped_early"] = True
            cmp["verdict"] += (f"; the run without torch.compile failed (exit {cmp['eager_exit_code']}) after the "
                               f"same first {cmp['lines']['eager']} of the compiled run's {cmp['lines']['compiled']} "
                               "lines: the difference is where it stopped, not numbers; look at its failure first")
            return
        if failed and (rep.verdict or {}).get("kind") == "fails_eager_too" and rng:
            # measured: with eager's random numbers (fallback_random) the compiled run prints what eager prints, and
            # both fail the program's check: the draws are the only compiled difference, the failure is the
            # program's (blind A/B batch 51: input jitter keyed on is_grad_enabled() in eval; the rng step, then
            # Dynamo alone and the accuracy run, came after "fails the same way without torch.compile")
            cmp["verdict"] += (f"; both runs fail (compiled exit {rep.exit_code}, eager exit {cmp['eager_exit_code']}) "
                               "and the random draws are the only compiled difference: fix the program's failure "
                               "(what draws random numbers where the check expects none?), then compare again")
            rep.next_steps = [s for s in rep.next_steps if not s["why"].startswith("[compiled_rng]")]
            return
        if failed and (rep.verdict or {}).get("kind") == "fails_eager_too" and _small_numeric(cmp):
            # the program fails without torch.compile: what its failing check prints differs a little between
            # two runs of a wrong program; no accuracy run (blind A/B batch 11: a parity gate on a module that
            # updates its buffers each forward, 2044 vs 2043 mismatched elements)
            cmp["verdict"] += (f"; both runs fail (compiled exit {rep.exit_code}, eager exit {cmp['eager_exit_code']}): "
                               "fix the program's failure first, then compare again")
            return
        if failed and (rep.verdict or {}).get("kind") == "fails_eager_too" and e0 is not None and \
                accuracy_judge.is_output_check(e0.type, "\n".join([e0.message or ""] + list(rep.printed_tail or []))):
            # an output check that fails with compilation off too, printing other numbers than the compiled run: one
            # more run without torch.compile decides whether the program's results vary by themselves (blind A/B
            # batch 21: a BEV scatter with repeated indices on 2 threads); if its two eager runs agree, the compiled
            # numbers differ for a reason of their own (review: a miscompile beside a too-tight stored reference)
            proc.progress("both runs fail the program's check with other numbers; one more run without torch.compile: "
                          "do its results vary by themselves?")
            e2 = verdict.run_eager(argv, run_dir, timeout=timeout, env_add=env_add, name="eager_check2")
            rep.artifacts.update({"eager_check2_stdout": e2.stdout_path})
            ee = printed.compare_outputs(printed.printed(_read_text(path), ""), printed.printed(_read_text(e2.stdout_path), ""),
                                         dtypes)
            first = (ee.get("first") or [{}])[0]
            said = f"line {first.get('eager_line') or first.get('compiled_line')}: {first.get('why')}" if first else ""
            cmp["eager_vs_eager"] = {"differ": ee["differ"], "first": said}
            if ee["differ"]:
                cmp["verdict"] += (f"; two runs without torch.compile differ too ({said}): the program's results vary "
                                   "by themselves")
                rep.next_steps.insert(at, {"why": knowledge.advice("check_fails_eager_too"), "skill": "overview",
                                           "command": None})
                return
            cmp["verdict"] += "; two runs without torch.compile print the same: the compiled numbers differ on their own"
        acc = (rep.verdict or {}).get("accuracy")
        if (rep.verdict or {}).get("static_numbers") == "passes":   # measured: its class's step stands
            return
        if acc and acc.get("next") == "vs_eager":   # graphs as close to fp64 as eager: the difference is from before them
            for e in rep.errors:
                if e.next_command and " triage --vs-eager " in e.next_command:   # the run just made
                    e.next_command = None
            # which side of the graphs: one run with Dynamo alone measures what the advice would ask for
            alone = check_dynamo_alone(rep, argv, run_dir, timeout, env_add, compiled_out, eager_out, dtypes) \
                if rep.graphs else {"result": "not measured"}
            cmp["dynamo_alone"] = alone if rep.graphs else None
            res, fmt = alone["result"], {"verdict": cmp["verdict"], "why": alone.get("why")}
            trains = any(".backward(" in _read_text(f) for f in _program_files(rep))
            why = (knowledge.advice("differs_in_dynamo", **fmt) if res == "like_compiled" else
                   knowledge.advice("differs_compounding", **fmt) if res == "like_eager" and trains and cmp.get("grows")
                   else knowledge.advice("differs_after_graphs", **fmt) if res == "like_eager" else
                   knowledge.advice("differs_not_numbers", **fmt))
            rep.next_steps.insert(at, {"why": why, "skill": "trace-dynamo", "command": None})
            return
        if acc:   # this triage already ran the accuracy check: its step stands
            return
        pre = [f for f in semantics.current(rep) if f["id"] != "compiled_rng" and f["explains_error"]]
        if pre:   # a by-design class that explains the failure (its fix is a step of its own): it comes first, the
            # accuracy run only if its fix does not make them match (blind A/B batch 25: an lru_cache bypass)
            own = [i for i, st in enumerate(rep.next_steps) if st["why"].startswith(f"[{pre[0]['id']}]")]
            rep.next_steps.insert(own[0] + 1 if own else at, {
                "why": f"compiled and eager print different output ({cmp['verdict']}): [{pre[0]['id']}] is the likely "
                       "cause (its own step); apply its fix and compare again. Only if they still differ, measure every "
                       f"compiled graph against eager and fp64: `{cli_command()} accuracy -- {tstr}`",
                "skill": None, "command": None})
            return
        if rep.graphs and not cmp.get("nonfinite"):
            # which side of the compiler: one run with Dynamo alone decides it before any graph is measured
            alone = check_dynamo_alone(rep, argv, run_dir, timeout, env_add, compiled_out, eager_out, dtypes)
            cmp["dynamo_alone"] = alone
            if alone["result"] == "like_compiled":
                rep.next_steps.insert(at, {"why": knowledge.advice("differs_in_dynamo", verdict=cmp["verdict"],
                                                                   why=alone["why"]),
                                           "skill": "trace-dynamo", "command": None})
                return
            if alone["result"] == "like_eager":
                if check_caches_off(rep, argv, run_dir, timeout, env_add, eager_out, dtypes):
                    hits = cmp["caches_off"]["hits"]
                    rep.next_steps.insert(at, {"why": knowledge.advice("differs_cached_graph", verdict=cmp["verdict"],
                                                                       hits=hits),
                                               "skill": None, "command": None, "decides": True})
                    return
                texts = [_read_text(f) for f in _program_files(rep)]
                if any(".backward(" in t for t in texts) and any(re.search(r"autocast\([^)]*enabled\s*=\s*False", t)
                                                                 for t in texts):
                    # blind A/B batch 38: an fp32 stem under autocast(enabled=False) inside an fp16 autocast region;
                    # the compiled backward, traced under the outer autocast, cast its saved input to fp16 (inf grads)
                    rep.next_steps.insert(at, {"why": knowledge.advice("backward_under_autocast", verdict=cmp["verdict"]),
                                               "skill": "trace-aot", "command": f"{cli_command()} aot -- {tstr}"})
                    return
                rep.next_steps.insert(at, {"why": knowledge.advice("differs_after_dynamo", verdict=cmp["verdict"]),
                                           "skill": None, "command": f"{cli_command()} accuracy -- {tstr}"})
                return
            rep.notes.append(f"a run with backend='eager' (Dynamo alone) decided nothing: {alone['why']}")
        rep.next_steps.insert(at, {
            "why": f"compiled and eager print different output ({cmp['verdict']}): measure every compiled graph "
                   "against eager and fp64 (one run); a failing graph is a miscompile, none means the difference "
                   "comes from Python-side behaviour torch.compile changes (hooks added or removed after compiling, "
                   "side effects that run once at trace time, random numbers, eager-only fast paths such as "
                   "nn.TransformerEncoder's nested tensors: rows whose padding mask hides every key give NaN "
                   "compiled, zeros eager)",
            "skill": None, "command": f"{cli_command()} accuracy -- {tstr}"})


# Inductor's random ops as eager's: a startup step (proc.startup_env); fix's re-check uses it too
FALLBACK_RANDOM = {"config": {"torch._inductor.config.fallback_random": True}}


NONFINITE_CHECK_MAX_S = 300   # the NaN check is one more run of the program (slower: fp64 and eager per graph)


def _nonfinite_graph(rep, argv, run_dir, timeout, env_add):
    """One run under torch's accuracy check when the compiled run prints NaN/inf and eager does not: the first
    compiled graph whose output is NaN/inf on its first call where the same graph run eagerly is finite, as
    {graph, where, seconds}; None when no graph shows it (a later call, or Python-side behaviour)."""
    if not rep.used_compile or (rep.duration_s or 0) > min(timeout / 2, NONFINITE_CHECK_MAX_S):
        return None   # (a long program: the generic advice; the accuracy command is the user's to run)
    proc.progress("compiled prints NaN/inf, eager none: one more run under torch's accuracy check to find the graph")
    adir = os.path.join(run_dir, "nonfinite_check")
    os.makedirs(adir, exist_ok=True)
    try:
        chk = accuracy_check.run(argv, adir, timeout=timeout, env_add=env_add)
    except Exception:   # (the check is a lead, never a reason to fail the triage)
        return None
    rep.artifacts["nonfinite_check"] = adir
    for g in chk.get("graphs") or []:
        outs = [o for o in g.get("outputs") or [] if o.get("nan_compiled") and not o.get("nan_eager")]
        if not outs:
            continue
        name = g.get("graph") or "?"
        w = g.get("where")
        where = f" (its first op from {w[2]} at {os.path.basename(w[0])}:{w[1]})" if w else ""
        o = outs[0]
        return {"graph": name, "where": where, "out": f"{o.get('dtype')}{o.get('shape')}",
                "seconds": f"{chk['res'].duration_s:.0f}" if chk["res"].duration_s else "?"}
    return None


def _rng_explains(rep, argv, run_dir, timeout, env_add, eager_stdout, dtypes):
    """compiled_rng is the only class the difference shows: one more compiled run with Inductor's random ops as
    eager's (fallback_random = True). The same output as eager then: random numbers explain it (True). Still
    different: they do not, and the class goes (blind A/B batch 24: an EfficientNet's backbone gradients 256x
    too small compiled, an Inductor bug, had "dropout draws other numbers" as Next 1)."""
    proc.progress("the compiled graphs draw random numbers: one more compiled run with fallback_random=True "
                  "(eager's random ops): do they explain the difference?")
    d = os.path.join(run_dir, "fallback_random")
    os.makedirs(d, exist_ok=True)   # its own throwaway cache: a changed config is not written into the user's
    r = _run_changed(argv, os.path.join(d, "target"), timeout, env_add,
                     {"PYTHONUNBUFFERED": "1", **proc.startup_env(d, [FALLBACK_RANDOM])})
    if r.timed_out or r.interrupted:
        return True   # not measured: the class stays, with its own check
    cmp = printed.compare_outputs(printed.printed(_read_text(r.stdout_path), _read_text(r.stderr_path)),
                                  printed.printed(_read_text(eager_stdout), _read_text(rep.artifacts.get("eager_check_stderr"))),
                                  dtypes)
    explains = not cmp["differ"]
    rep.vs_eager["fallback_random"] = {"differ": cmp["differ"], "verdict": cmp["verdict"]}
    rep.vs_eager["verdict"] += ("; with fallback_random=True (one more run) compiled prints the same as eager: the "
                                "random numbers explain it" if explains else
                                "; with fallback_random=True (one more run) it still differs "
                                f"({cmp['verdict']}): Inductor's random ops do not explain it")
    return explains


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
