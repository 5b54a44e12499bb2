"""The extra runs of a triage that measure a failure only compiled, each one run of the unmodified program with
one thing changed: an empty throwaway compile cache (a stale cache entry?), emulate_precision_casts (float16/
bfloat16 rounding?), and Inductor's C++ not vectorized (the vectorized CPU code?). Each, when it passes, turns the
first error into its measured class and redoes the next steps. No torch import here."""
import json
import os
import re
import shutil

from . import knowledge
from .analyze import _next_steps
from .bisect_result import SCALAR_CPU_CODE
from .program_code import program_files, read_text, state_branches
from ..cmdline import clip, cli_command, command_line
from ..run import proc

LOW_PRECISION = ("float16", "bfloat16")


def _run_changed(argv, out_prefix, timeout, env_add, env, times=1):
    """One more run of the unmodified program with `env` added, no trace, in a throwaway compile cache (the
    user's is not touched; deleted afterwards), its output in <out_prefix>.stdout / .stderr. times=2: a second
    run when the first passes (a crash can pass once by luck). -> proc's result of the last run."""
    cache = out_prefix + "_cache"
    for _ in range(times):
        r = proc.run(argv, env_add={**(env_add or {}), "TORCH_TRACE": None, **env, **proc.private_cache_env(cache)},
                     timeout=timeout, stdout_path=out_prefix + ".stdout", stderr_path=out_prefix + ".stderr")
        if not r.ok:
            break
    shutil.rmtree(cache, ignore_errors=True)
    return r


# Inductor's random ops as eager's kernels: one run with it tells whether the random numbers explain a difference
FALLBACK_RANDOM = {"config": {"torch._inductor.config.fallback_random": True}}


def run_fallback_random(argv, run_dir, timeout, env_add):
    """One more compiled run with fallback_random = True, in its own throwaway cache (a changed config is not
    written into the user's): <run_dir>/fallback_random/target.stdout/.stderr. -> proc's result."""
    d = os.path.join(run_dir, "fallback_random")
    os.makedirs(d, exist_ok=True)
    return _run_changed(argv, os.path.join(d, "target"), timeout, env_add,
                        {"PYTHONUNBUFFERED": "1", **proc.startup_env(d, [FALLBACK_RANDOM])})


def check_rng(rep, argv, run_dir, timeout, env_add):
    """compiled_rng names a failure only compiled (random ops in the compiled code; no other class): one more run
    with eager's random ops (fallback_random = True). Passing confirms it; failing again rules it out, the class
    goes and the error gets back its own row (blind A/B batch 55: a training stage switch that kept running the
    first stage's graph, a guard Dynamo left out, was put down to dropout's random numbers; the run with
    fallback_random failed the same way). Returns whether it ran."""
    from . import semantics
    e0 = rep.errors[0] if rep.errors else None
    # (also random_op_unused, a dead draw AOTAutograd drops: fallback_random keeps it, so the same run decides; review
    # of 0.33.171: a bf16 gate failing on its first call, with an unused draw beside it, was put down to the draw)
    f = next((f for f in rep.semantics if f["id"] in ("compiled_rng", "random_op_unused") and f["explains_error"]), None)
    if f is None or e0 is None or e0.category != f["id"] or (rep.verdict or {}).get("kind") != "compile_only":
        return False
    proc.progress("the failure may be random numbers: one more compiled run with fallback_random=True "
                  "(eager's random ops, unused draws kept)")
    r = run_fallback_random(argv, run_dir, timeout, env_add)
    if r.timed_out or r.interrupted:
        return False
    rep.artifacts.update({"fallback_random_stdout": r.stdout_path, "fallback_random_stderr": r.stderr_path})
    rep.verdict["fallback_random"] = "passes" if r.ok else f"fails (exit {r.returncode})"
    if r.ok:
        f["measured"] = "passes with fallback_random=True (one more run)"
        f["why"] += " Measured: the program passes with torch._inductor.config.fallback_random = True (one more run)."
        return True
    semantics.retract(rep, f["id"])
    rep.notes.append(f"with torch._inductor.config.fallback_random = True (eager's random ops; one more run) it still "
                     f"fails (exit {r.returncode}): " + ("Inductor's random numbers do not explain the failure"
                                                          if f["id"] == "compiled_rng" else
                                                          "the unused random draw does not explain the failure"))
    # torch's accuracy check cannot measure graphs that draw random numbers (a random mask differs by design): one
    # run with Dynamo alone decides which side of the graphs the failure is on
    proc.progress("one more run with backend='eager' (Dynamo alone, eager's kernels and random numbers): is the "
                  "failure in Dynamo or in the compiled graphs?")
    a = _run_changed(argv, os.path.join(run_dir, "dynamo_alone"), timeout, env_add,
                     {"PYTHONUNBUFFERED": "1", "TORCH_BISECT_BACKEND": "eager"})
    rep.artifacts.update({"dynamo_alone_stdout": a.stdout_path, "dynamo_alone_stderr": a.stderr_path})
    if a.timed_out or a.interrupted:
        return True
    rep.verdict["dynamo_alone_exit"] = a.returncode   # (check_dynamo_alone reuses this run under --vs-eager)
    if a.ok:
        rep.verdict["dynamo_alone"] = "passes"
        rep.notes.append("with backend='eager' (Dynamo alone; one more run) it passes: the failure comes from "
                         "AOTAutograd or Inductor, not from how Dynamo ran the program's Python")
        return True
    e = rep.errors[0]
    said = next((ln.strip() for ln in (e.message or "").splitlines() if ln.strip()), "")
    seen = read_text(a.stderr_path) + read_text(a.stdout_path)
    same = a.returncode == rep.exit_code and (not said or re.sub(r"\d+(?:\.\d+)?(?:e-?\d+)?", "#", said)
                                                in re.sub(r"\d+(?:\.\d+)?(?:e-?\d+)?", "#", seen))
    rep.verdict["dynamo_alone"] = f"fails (exit {a.returncode})" + ("" if same else ", another failure")
    if not same:   # (review: a different failure there says nothing about this one)
        last = next((ln.strip() for ln in reversed(seen.splitlines()) if ln.strip()), "")
        rep.notes.append(f"with backend='eager' (Dynamo alone; one more run) it fails too, but otherwise (exit "
                         f"{a.returncode}: {clip(last, 160)}): not compared further")
        return True
    at = state_branches(program_files(rep))
    e.category, e.side, e.skill, e.next_command = "fails_in_dynamo", "user", "trace-dynamo", None
    e.title = ("Fails only compiled, and the same with backend=\"eager\" (Dynamo alone; measured): how Dynamo ran the "
               "program's Python")
    e.advice = knowledge.advice("fails_in_dynamo", why=f"exit {a.returncode} with the same message, numbers aside",
                                at=(" (" + ", ".join(f"{os.path.basename(p_)}:{ln} `{code}`" for p_, ln, code in at[:3])
                                    + ")") if at else "")
    return True


def check_fastpath(rep, argv, run_dir, timeout, env_add):
    """The class transformer_fastpath_padding is offered for a failure from the source alone (a TransformerEncoder
    with a padding mask; compiled, exported or an AOTInductor package): one more run with the fast path off at start-up (torch.backends.mha.set_fastpath_enabled(False)).
    Passing confirms it; failing again rules it out and drops the finding (blind A/B batch 36: an AOTInductor
    weight swap that left three weights stale was put down to padded positions). Returns whether it ran."""
    f = next((f for f in rep.semantics if f["id"] == "transformer_fastpath_padding"), None)
    if not f or "COMPILE_DEBUG_STARTUP" in (env_add or {}):
        return False
    proc.progress("the failure may be nn.TransformerEncoder's eval fast path (padded positions): one more run with "
                  "the fast path off")
    env = proc.startup_env(run_dir, [{"code": "torch.backends.mha.set_fastpath_enabled(False)"}], name="fastpath_off")
    r = _run_changed(argv, os.path.join(run_dir, "fastpath_off"), timeout, env_add, env)
    if r.ok:
        f["measured"] = "passes with the fast path off (one more run)"
        f["why"] += " Measured: the program passes with torch.backends.mha.set_fastpath_enabled(False) (one more run)."
    else:
        rep.semantics.remove(f)
        rep.notes.append("with nn.TransformerEncoder's fast path off (one more run) the program still fails"
                         f"{' (timed out)' if r.timed_out else f' (exit {r.returncode})'}: padded positions do not "
                         "explain it")
    return True


def _check_precision_casts(rep, argv, run_dir, timeout, env_add):
    """A measured miscompile in a float16/bfloat16 graph: one more run with emulate_precision_casts.
    Inductor computes a fused chain of low-precision ops in fp32 and rounds once at the store, where
    eager rounds after every op: code that relies on an op overflowing to inf (nan_to_num, an isinf
    check) sees a finite fp32 value compiled (blind A/B batch 8; pytorch#183761 closed as intended).
    Passing with the flag on is that difference, not a bug to bisect."""
    acc = (rep.verdict or {}).get("accuracy") or {}
    if acc.get("verdict") != "miscompile" or not set(acc.get("dtypes") or ()) & set(LOW_PRECISION):
        return
    proc.progress("the failing graph computes in float16/bfloat16: one more run with "
                  "TORCHINDUCTOR_EMULATE_PRECISION_CASTS=1 (eager's rounding after every op)")
    r = proc.run(argv, env_add={**(env_add or {}), "TORCHINDUCTOR_EMULATE_PRECISION_CASTS": "1", "TORCH_TRACE": None},
                 timeout=timeout, stdout_path=os.path.join(run_dir, "precision_casts.stdout"),
                 stderr_path=os.path.join(run_dir, "precision_casts.stderr"))
    acc["emulate_precision_casts"] = "passes" if r.ok else ("timed out" if r.timed_out else f"fails (exit {r.returncode})")
    if r.ok:
        e = rep.errors[0]
        e.category, e.side, e.skill = "low_precision_fusion", "user", "trace-inductor"
        e.title = "Compiled low-precision math rounds differently from eager (measured: passes with emulate_precision_casts)"
        e.advice = (f"{acc['summary']}, but the program passes with TORCHINDUCTOR_EMULATE_PRECISION_CASTS=1 (one more "
                    "run): Inductor fuses float16/bfloat16 ops and computes them in fp32, rounding once at the store, "
                    "where eager rounds after every op. By design (closer to fp64; pytorch#183761): code that relies on "
                    "an op overflowing or rounding in low precision (nan_to_num or an isinf check after x*x, a clamp "
                    "placed after the overflow) sees another value compiled. Make the intent explicit (clamp to the "
                    "dtype's range before storing, or compute that part in float32), or set "
                    "torch._inductor.config.emulate_precision_casts = True. No bisect.")
        e.next_command = None


def _check_cold_cache(rep, argv, run_dir, timeout, env_add):
    """Fails only compiled, and the run loaded compiled graphs from the compile caches: one more run with an
    empty, throwaway cache (in the run dir; the user's cache is not touched). Passing then is a stale cache
    entry: something that changes the compiled code is not in the caches' key (blind A/B batch 24: a custom
    op's output dtype read from a global set by an environment variable; torch's message blamed the fake
    kernel, and so did this report's row). Where the accuracy check runs, only after it, and not when it measures
    rounding (run_and_analyze)."""
    st = rep.stats or {}
    hits = (st.get("fx_graph_cache_hits") or 0) + (st.get("aotautograd_cache_hits") or 0)
    if (rep.verdict or {}).get("kind") != "compile_only" or not hits or not rep.errors:
        return
    proc.progress(f"only the compiled run fails and it loaded {hits} compiled graph(s) from the compile cache: one "
                  "more run with an empty throwaway cache (yours is not touched)")
    r = _run_changed(argv, os.path.join(run_dir, "cold_cache"), timeout, env_add, {})
    rep.artifacts.update({"cold_cache_stdout": r.stdout_path, "cold_cache_stderr": r.stderr_path})
    rep.verdict["cold_cache"] = "passes" if r.ok else ("timed out" if r.timed_out else f"fails (exit {r.returncode})")
    if not r.ok:
        rep.notes.append(f"with an empty compile cache it {rep.verdict['cold_cache']} too (one more run): "
                         "not a stale cache entry")
        return
    e = rep.errors[0]
    e.category, e.side, e.skill, e.next_command = "warm_cache_only", "user", "overview", None
    e.title = (f"Fails only with the warm compile cache ({hits} graph(s) loaded from it); passes with an empty one "
               "(measured)")
    e.advice = knowledge.advice("warm_cache_only")
    rep.verdict["summary"] = ("only fails compiled, and only with the warm compile cache: an empty cache passes "
                              "(measured, one more run)")
    rep.next_steps = _next_steps(rep, command_line(argv), cli_command())


def _check_scalar_cpu(rep, argv, run_dir, timeout, env_add):
    """Fails only compiled with a miscompile (measured, or one that only a bisect would decide) or a native crash,
    after Inductor compiled (its FX graph cache was used), on a machine without a GPU (every kernel is C++): a run
    with cpp.simdlen=1, Inductor's C++ not vectorized, in a throwaway cache (two for a crash, which can pass once by
    luck). Passing places the bug in the vectorized CPU code and is the workaround, where a bisect took 25 runs and
    named a graph pass (blind A/B batch 31: pytorch#196681). A timeout or a setting not applied measures nothing."""
    e = rep.errors[0] if rep.errors else None
    acc = (rep.verdict or {}).get("accuracy") or {}
    st = rep.stats or {}
    inductor = (st.get("fx_graph_cache_hits") or 0) + (st.get("fx_graph_cache_misses") or 0) > 0
    if e is None or (rep.verdict or {}).get("kind") != "compile_only" or not inductor or proc.machine_has_gpu() \
            or not (e.category == "segfault" or (e.category == "accuracy_mismatch" and (
                acc.get("verdict") == "miscompile" or acc.get("next") == "bisect"))):   # (measured, or undecided)
        return
    crash = e.category == "segfault"
    proc.progress("only the compiled run fails and its kernels are C++: " + ("two more runs" if crash else "one more run")
                  + " with torch._inductor.config.cpp.simdlen=1 (not vectorized), in a throwaway cache")
    r = _run_changed(argv, os.path.join(run_dir, "scalar_cpu"), timeout, env_add,
                     proc.startup_env(run_dir, [{"config": SCALAR_CPU_CODE}], name="scalar_cpu"), times=2 if crash else 1)
    rep.artifacts.update({"scalar_cpu_stdout": r.stdout_path, "scalar_cpu_stderr": r.stderr_path})
    why_not = ("the setting could not be applied" if proc.startup_failure(r.stderr_path) or not os.path.exists(
        os.path.join(run_dir, "scalar_cpu.applied")) else "it timed out (scalar code is slower)" if r.timed_out else None)
    if why_not:
        rep.verdict["scalar_cpu"] = "not measured"
        rep.notes.append(f"a run with Inductor's C++ kernels not vectorized (cpp.simdlen=1) measured nothing: {why_not}")
        return
    rep.verdict["scalar_cpu"] = "passes" if r.ok else f"fails (exit {r.returncode})"
    if not r.ok:
        rep.notes.append(f"with Inductor's C++ kernels not vectorized (cpp.simdlen=1) it {rep.verdict['scalar_cpu']} "
                         "too: not the vectorization")
        return
    runs = "two more runs" if crash else "one more run"
    e.category, e.side, e.skill = "vectorized_cpu_code", "compiler", "bisect"
    e.title = f"Inductor's vectorized CPU code: passes with cpp.simdlen=1 (measured, {runs})"
    e.advice = knowledge.advice("vectorized_cpu_code")
    e.next_command = cli_command("minify", "--", *argv)   # (minify_graph.guess_kind: a signal is a crash, else accuracy)
    rep.verdict["summary"] = ("only fails compiled, and not with Inductor's C++ kernels unvectorized "
                              f"(cpp.simdlen=1 passes, measured, {runs})")
    rep.next_steps = _next_steps(rep, command_line(argv), cli_command())


def check_dynamo_alone(rep, argv, run_dir, timeout, env_add, compiled_out, eager_out, dtypes):
    """Compiled and eager print different output and nothing named explains it: one more run with every
    torch.compile call on backend="eager" (Dynamo alone: its graphs run by eager's own kernels; torch's
    TORCH_BISECT_BACKEND, as bisect's first stage sets it). Printing what eager prints puts the difference in
    AOTAutograd or Inductor (the graphs' numbers: torch's accuracy check next); printing what the compiled run
    prints puts it in how Dynamo ran the program's Python, where no accuracy check or bisect of the graphs can
    find it (blind A/B batch 33: copy.copy of a Counter traced as empty made every class weight 1.0). ->
    {"result": "like_compiled" | "like_eager" | "neither" | "not measured", "why"}"""
    from . import printed
    if "dynamo_alone_exit" in (rep.verdict or {}):   # made already, on the failure (check_rng): not run twice
        rc = rep.verdict["dynamo_alone_exit"]
    else:
        proc.progress("compiled and eager print different output: one more run with backend='eager' (Dynamo alone, "
                      "no AOTAutograd or Inductor): which side is the difference on?")
        d = os.path.join(run_dir, "dynamo_alone")
        os.makedirs(d, exist_ok=True)
        r = _run_changed(argv, os.path.join(d, "target"), timeout, env_add,
                         {"PYTHONUNBUFFERED": "1", "TORCH_BISECT_BACKEND": "eager"})
        rep.artifacts.update({"dynamo_alone_stdout": r.stdout_path, "dynamo_alone_stderr": r.stderr_path})
        if r.timed_out or r.interrupted:
            return {"result": "not measured", "why": "it timed out"}
        rc = r.returncode
    out = printed.printed(read_text(rep.artifacts["dynamo_alone_stdout"]), read_text(rep.artifacts["dynamo_alone_stderr"]))
    vs_eager = printed.compare_outputs(out, eager_out, dtypes)
    vs_compiled = printed.compare_outputs(out, compiled_out, dtypes)
    if rc != (rep.exit_code or 0) and rc != 0:
        return {"result": "neither", "why": f"it exited {rc}"}
    if not vs_eager["differ"]:
        return {"result": "like_eager", "why": "it prints what eager prints"}
    if not vs_compiled["differ"]:
        return {"result": "like_compiled", "why": "it prints what the compiled run prints"}
    return {"result": "neither", "why": f"it differs from both runs ({vs_eager['verdict']} vs eager; "
                                        f"{vs_compiled['verdict']} vs the compiled run)"}


STATIC_NUMBERS = {"torch._dynamo.config.automatic_dynamic_shapes": False}
# recompile kinds that automatic dynamic turns into symbolic numbers on their first change
_DYNAMIC_NUMBER_KINDS = ("python_int", "python_float", "module_attribute", "graph_break_value")


def _dynamic_number(rep):
    """(function, cause, compile id) of the first one-time recompile that made a Python number symbolic
    (automatic dynamic), else None."""
    for f in rep.recompiles or []:
        for c in f.causes:
            if c["kind"] in _DYNAMIC_NUMBER_KINDS and c["expected"] and "automatic dynamic" in (c.get("why") or ""):
                return f.function, c["cause"], (c.get("compile_ids") or ["?"])[0]
    return None


# error classes whose next step would be a bisect or a numeric check (a class with a recipe of its own keeps it:
# a Dynamo crash formatting a symbolic .item() in an f-string is the log recipe's, batch 9)
_NO_RECIPE = ("backend_compiler_failed", "inductor_compile_error", "triton_compile_error", "compiled_runtime_error",
              "segfault", "accuracy_mismatch", "user_error")


def _check_static_numbers(rep, argv, run_dir, timeout, env_add):
    """Fails only compiled, after a number the program passes in changed and automatic dynamic recompiled it as a
    symbolic value: one run with automatic_dynamic_shapes=False (a graph per value) in a throwaway cache. Passing
    places the failure in the symbolic-number graph, a compiler bug with a workaround in the program's hands
    (blind A/B batch 34: `step % 50` in the recompile crashed in a pass with no python_mod handler; a 64-bit LCG hash
    of a symbolic step wrapped where Python's int does not). A timeout or a setting not applied measures nothing."""
    e = rep.errors[0] if rep.errors else None
    found = _dynamic_number(rep)
    if e is None or found is None or (rep.verdict or {}).get("kind") != "compile_only" \
            or (e.category or "user_error") not in _NO_RECIPE:
        return
    fn, cause, cid = found
    name = cause.split("`")[1] if cause.count("`") >= 2 else cause    # "value of `step`" -> "step"
    proc.progress(f"only the compiled run fails, after `{fn}` was recompiled with a symbolic number ({cause}): one "
                  "more run with torch._dynamo.config.automatic_dynamic_shapes=False (a graph per value)")
    r = _run_changed(argv, os.path.join(run_dir, "static_numbers"), timeout, env_add,
                     proc.startup_env(run_dir, [{"config": STATIC_NUMBERS}], name="static_numbers"))
    rep.artifacts.update({"static_numbers_stdout": r.stdout_path, "static_numbers_stderr": r.stderr_path})
    if r.timed_out or proc.startup_failure(r.stderr_path) or not os.path.exists(
            os.path.join(run_dir, "static_numbers.applied")):
        rep.verdict["static_numbers"] = "not measured"
        rep.notes.append("a run with automatic_dynamic_shapes=False measured nothing: "
                         + ("it timed out" if r.timed_out else "the setting could not be applied"))
        return
    rep.verdict["static_numbers"] = "passes" if r.ok else f"fails (exit {r.returncode})"
    if not r.ok:
        rep.notes.append(f"with automatic_dynamic_shapes=False (a graph per value) it {rep.verdict['static_numbers']} "
                         "too: not the symbolic number")
        return
    e.category, e.side, e.skill = "dynamic_number_graph", "compiler", "trace-dynamo"
    e.title = (f"Fails in the graph where `{name}` is symbolic; passes with automatic_dynamic_shapes=False (measured, "
               "one more run)")
    e.advice = knowledge.advice("dynamic_number_graph", fn=fn, name=name, cid=cid)
    e.next_command = None
    rep.verdict["summary"] = ("only fails compiled, in the recompile that made a number symbolic: passes with "
                              "automatic_dynamic_shapes=False (measured, one more run)")
    rep.next_steps = _next_steps(rep, command_line(argv), cli_command())


def check_caches_off(rep, argv, run_dir, timeout, env_add, eager_out, dtypes):
    """Compiled output differs from eager, Dynamo alone prints eager's, and this run loaded graphs from the FX
    graph or AOTAutograd cache (hits, even within the one process): one run with the compile caches off
    (TORCHINDUCTOR_FORCE_DISABLE_CACHES=1). Printing eager's output then means a cached graph was served where
    another was needed: a cache key that leaves out what changed (blind A/B batch 34: a label_smoothing float
    that changed every step; each recompile hit the first one's entry, pytorch#197889). -> True when it does."""
    from . import printed
    st = rep.stats or {}
    hits = (st.get("fx_graph_cache_hits") or 0) + (st.get("aotautograd_cache_hits") or 0)
    if not hits:
        return False
    proc.progress(f"this run loaded {hits} graph(s) from the compile caches: one more run with the caches off "
                  "(TORCHINDUCTOR_FORCE_DISABLE_CACHES=1): does a cached graph explain the difference?")
    d = os.path.join(run_dir, "caches_off")
    os.makedirs(d, exist_ok=True)
    r = _run_changed(argv, os.path.join(d, "target"), timeout, env_add,
                     {"PYTHONUNBUFFERED": "1", "TORCHINDUCTOR_FORCE_DISABLE_CACHES": "1"})
    rep.artifacts.update({"caches_off_stdout": r.stdout_path})
    if r.timed_out or r.interrupted:
        return False
    same = not printed.compare_outputs(printed.printed(read_text(r.stdout_path), read_text(r.stderr_path)),
                                       eager_out, dtypes)["differ"]
    rep.vs_eager["caches_off"] = {"hits": hits, "like_eager": same}
    return same


# torch.compile(...) or module.compile(...), not re.compile("...") (a pattern string)
_COMPILE_CALL_RE = re.compile(r"\btorch\.compile\b|\b(?!re\b)\w+\.compile\((?!\s*[rbf]?[\"'])")


def check_compile_raised(rep, argv, run_dir, timeout, env_add):
    """Nothing compiled, yet the program's own files call torch.compile: one more run that records each
    exception a torch.compile(...) call raises (and re-raises it), for a program that catches it and runs on
    uncompiled (blind A/B batch 36: `mode=` with `options=` raised RuntimeError inside a try/except that logged
    a warning; perf said "0 graphs" and pointed at the kernels). Found: the first Next names the call, its line
    and torch's message."""
    files = program_files(rep)
    if not files or "COMPILE_DEBUG_STARTUP" in (env_add or {}) or \
            not any(_COMPILE_CALL_RE.search(read_text(f)) for f in files):
        return
    from ..run.workers import compile_call_hooks
    proc.progress("nothing was compiled, yet the program calls torch.compile: one more run that records whether a "
                  "torch.compile(...) call raised (an exception the program may have caught)")
    report = os.path.join(run_dir, "compile_raised.jsonl")
    env = dict(env_add or {}, PYTHONUNBUFFERED="1", TORCH_TRACE=None,
               **proc.startup_env(run_dir, [{"code": compile_call_hooks.code(report)}], name="compile_raised"))
    _run_changed(argv, os.path.join(run_dir, "compile_raised"), timeout, None, env)
    try:
        with open(report, encoding="utf-8") as f:
            raised = [json.loads(ln) for ln in f if ln.strip()]
    except (OSError, ValueError):
        return
    if not raised:
        return
    r = raised[0]
    at = f"{os.path.basename(r['file'])}:{r['line']}" if r.get("file") else "the program"
    code = f" `{clip(r['code'].strip(), 100)}`" if r.get("code") else ""
    rep.artifacts["compile_raised"] = report
    msg = r["message"].strip()
    hint = " " + knowledge.advice("compile_mode_with_options") if "mode or options" in msg else ""
    rep.next_steps.insert(0, {"why": knowledge.advice("compile_call_raised", at=at, code=code, type=r["type"], hint=hint,
                                                      msg=clip(msg.splitlines()[0].rstrip(".") if msg else "", 300)),
                              "skill": "overview", "command": None, "decides": True})
    rep.next_steps = [s for s in rep.next_steps if not s["why"].startswith("the program never reached torch.compile")]


_NOT_FIRST_RUN = ("__pycache__", "torch_compile_debug", "compile-debug", "nohup.out")   # torch's and ours


def dir_state(argv):
    """The top-level entries of the working directory and of the script's folder (path -> mtime), taken before the
    compiled run: what a program's first run creates there (a checkpoint it trains when missing, a prepared data
    file) shows as new afterwards. Hidden entries and __pycache__ are left out (compile caches live there)."""
    from ..cmdline import script_of
    dirs = {os.getcwd()}
    script = script_of(argv)
    if script:
        dirs.add(os.path.dirname(os.path.abspath(script)))
    state = {}
    for d in dirs:
        try:
            with os.scandir(d) as it:
                for i, e in enumerate(it):
                    if i > 5000:
                        break
                    if not e.name.startswith(".") and e.name not in _NOT_FIRST_RUN:
                        state[e.path] = e.stat(follow_symlinks=False).st_mtime
        except OSError:
            continue
    return state


def created_by_run(before, argv, run_dir):
    """Entries the compiled run created (in dir_state's folders; not the run dir): [path]."""
    if before is None:
        return []
    after = dir_state(argv)
    skip = os.path.abspath(run_dir)

    def related(p):   # the run dir itself, inside it, or a folder that holds it
        ap = os.path.abspath(p)
        return os.path.commonpath([skip, ap]) in (skip, ap)
    return sorted(p for p in after if p not in before and not related(p))


def check_first_run_files(rep, argv, run_dir, timeout, env_add, created, eager_out, dtypes):
    """The compiled run was the program's first, it created files (`created`) that every run after it finds (the
    eager check's too), and the two print different output: one more compiled run, the files in place, compares like
    with like (blind A/B batch 48: a parity gate that trained spk.pt on its first run; its training lines and the RNG
    they used were read as compiled numbers that differ, with an accuracy run as the Next).
    -> {"created": [names], "exit_code", "like_eager": bool, "out": printed output, "stdout_path"}"""
    from . import printed
    names = [os.path.basename(p) for p in created[:4]]
    proc.progress(f"the compiled run created {', '.join(names)}, which the runs after it find: one more compiled run "
                  "with them in place compares like with like")
    d = os.path.join(run_dir, "compiled_again")
    os.makedirs(d, exist_ok=True)
    # an empty throwaway compile cache, as the first run had none of its graphs: the files are the one difference (a
    # first request over a latency budget passed on the second run only because the cache was warm; review)
    cache = os.path.join(d, "cache")
    try:
        r = proc.run(argv, env_add={**(env_add or {}), **proc.private_cache_env(cache), "TORCH_TRACE": None,
                                    "PYTHONUNBUFFERED": "1"}, timeout=timeout,
                     stdout_path=os.path.join(d, "target.stdout"), stderr_path=os.path.join(d, "target.stderr"))
    finally:
        shutil.rmtree(cache, ignore_errors=True)
    rep.artifacts.update({"compiled_again_stdout": r.stdout_path})
    out = printed.printed(read_text(r.stdout_path), read_text(r.stderr_path))
    same = not r.timed_out and not printed.compare_outputs(out, eager_out, dtypes)["differ"]
    return {"created": names, "exit_code": r.returncode, "like_eager": same, "out": out,
            "stdout_path": r.stdout_path, "timed_out": r.timed_out}
