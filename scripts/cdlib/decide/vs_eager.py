"""The program compared with itself without torch.compile (triage --vs-eager, and a failed run's eager check):
what both print, number by number; a check that fails eagerly too; a first run's files (one more compiled run
with them in place); random draws and non-finite values measured; the custom-op and Dynamo-alone runs that say
which side a difference is on. Called by runs.run_and_analyze. No torch import here."""
import os
import re

from . import accuracy_check, accuracy_judge, knowledge, printed, semantics, verdict
from .extra_runs import check_caches_off, check_dynamo_alone, check_first_run_files
from .analyze import _next_steps, compile_switches
from .error_rows import _first_lines
from .custom_op_source import (clone_into_mutating_op, custom_jvps_under_forward_ad, scalar_custom_ops, shared_outputs,
                             undeclared_mutations)
from .program_code import program_files as _program_files, read_text as _read_text, runs_exported, \
    shared_export_input_words
from .vs_eager_checks import _nonfinite_graph, _padding_measured, _rng_explains, _round_words, _subclass_words
from ..run import proc
from ..read import trace as tracemod
from ..read.frames import innermost_user, parse_exception
from ..cmdline import clip, cli_command, command_line, local_imports as _local_imports, script_of as _script_of


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
# a count of zero beside the word: the check passed ("0 mismatches", "FAILED: 0", "0 / 4096"; review of 0.33.114;
# "depot mismatches 0 (0.00%)", blind A/B batch 64, a fixed audit that printed AUDIT PASS)
# (with no ':' or '=', only a 0 that ends the count: "MISMATCH 0: outputs differ" and "FAILED 0 != 1" name no count)
_ZERO_COUNT = re.compile(r"\b0\s+(?:\w+\s+)?(?:mismatch|fail|differ)|(?:fail\w*|mismatch\w*)\s*[:=]\s*0(?![.,]?\d)\b"
                         r"|(?:fail\w*|mismatch\w*)\s+0(?=\s*(?:$|\(|%|,|;))|\b0\s*/\s*\d", re.I)


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


def first_run_again(rep, argv, run_dir, timeout, env_add, created):
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


def compare_with_eager(rep, argv, run_dir, stdout, timeout, env_add, created=(), first_run=None):
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
    if first_run is not None:   # made already, after the verdict (first_run_again)
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
        files = _program_files(rep)   # the one eager difference the source shows, where the check runs the export
        shared = shared_export_input_words(files) if runs_exported(files) else None
        for st in rep.next_steps if shared else ():               # said once, here first
            st["why"] = (st.get("why") or "").replace(shared + "; ", "")
        rep.next_steps.insert(0, {"why": f"the program's own comparison fails without torch.compile too (`{clip(own, 120)}`"
                                         "): " + (shared or "find what differs between its two sides when both run "
                                         "eagerly (state a warm-up or an earlier run left: gradients, BatchNorm "
                                         "statistics, optimizer state; random draws; a module attribute), not the "
                                         "compiler"),
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
            # (a compile_only verdict whose second run passes was made not_sure already, by first_run_again)
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
        if any(f["id"] == "transformer_fastpath_padding" for f in found):
            found = _padding_measured(rep, found, argv, run_dir, timeout, env_add, compiled_out, eager_out, dtypes)
        at = at0 = 1 if rep.errors else 0
        # a by-design class the difference shows: its fix first; then NaN/inf only compiled, which random numbers do
        # not explain (blind A/B batch 21) but a class such as the transformer fast path's padding does (review)
        RNG = ("compiled_rng", "random_op_unused")   # both decided by one run with fallback_random=True
        rng = [f for f in found if f["id"] in RNG]
        if rng and str((rep.verdict or {}).get("fallback_random", "")).startswith("fails"):
            # measured on the failure already (extra_runs.check_rng): eager's random ops did not make it pass
            found, rng = [f for f in found if f["id"] not in RNG], []
            rep.semantics = [f for f in rep.semantics if f["id"] not in RNG]
        if rng and len(rng) == len(found) and not _rng_explains(rep, argv, run_dir, timeout, env_add, path, dtypes):
            found = [f for f in found if f["id"] not in RNG]
            rep.semantics = [f for f in rep.semantics if f["id"] not in RNG]
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
        shared = shared_outputs(_program_files(rep)) if not (e0 is not None and e0.category == "custom_op_shared_output") \
            else []
        if shared:   # blind A/B batch 52: a normalizer returning its shape-keyed workspace (exit 0 here; a failing run
            p_, ln, op_, how = shared[0]    # gets the error row custom_op_shared_output instead)
            rep.next_steps.insert(at, {"why": f"compiled and eager print different output ({clip(cmp['verdict'], 160)}): "
                                              + knowledge.advice("custom_op_shared_output", op=op_, how=how,
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
        if not rng and rep.artifacts.get("fallback_random_stdout"):
            # random numbers measured not to explain it: Dynamo alone (eager's kernels, eager's random numbers) is
            # compared with the compiled run that drew eager's numbers too, or every random draw makes it "neither"
            # (blind A/B batch 55: a stale stage graph, where Dynamo alone differed from eager only after the switch)
            compiled_out = printed.printed(_read_text(rep.artifacts["fallback_random_stdout"]),
                                           _read_text(rep.artifacts.get("fallback_random_stderr")))
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
            why = (knowledge.advice("differs_in_dynamo", **fmt) + _subclass_words(rep) if res == "like_compiled" else
                   knowledge.advice("differs_compounding", **fmt) if res == "like_eager" and trains and cmp.get("grows")
                   else knowledge.advice("differs_after_graphs", **fmt) + _round_words(rep) if res == "like_eager" else
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
                                                                   why=alone["why"]) + _subclass_words(rep),
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
                rep.next_steps.insert(at, {"why": knowledge.advice("differs_after_dynamo", verdict=cmp["verdict"])
                                                  + _round_words(rep),
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

