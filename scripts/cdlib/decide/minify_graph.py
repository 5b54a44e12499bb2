"""minify's graph stage, the analysis part (no torch): FX node counts of a minifier launcher or repro,
exception names of a failure, a run's failure as minify records it, the failure kind (error, accuracy,
crash), why no graph was dumped, and whether a repro fails like the original."""
import os
import re

from .. import cmdline
from ..run.workers import bisect_step

GENERIC_EXC = {"BackendCompilerFailed", "InductorError", "RuntimeError", "Exception", "AssertionError",
               "TorchRuntimeError", "InternalTorchDynamoError"}
ERROR_CATS = {"inductor_compile_error", "backend_compiler_failed", "triton_compile_error",
              "compiled_runtime_error", "missing_cxx_compiler", "aoti_error", "oom"}
CRASH_CATS = {"segfault", "cuda_illegal_memory_access"}
ACC_CATS = {"accuracy_mismatch", "vectorized_cpu_code"}   # (the latter's crashes: the signal comes first)
BEFORE_AOT_CATS = {"dynamo_internal_error", "graph_break_fullgraph", "data_dependent_guard"}


def graph_stats(path):
    """Count FX nodes of the `Repro.forward` in a minifier launcher / repro file (placeholders +
    calls + output, i.e. len(gm.graph.nodes)) and list the ops it calls."""
    if not path or not os.path.exists(path):
        return None
    with open(path, errors="replace") as f:
        text = f.read()
    m = re.search(r"^    def forward\(self(?:, )?([^)]*)\):\n((?:        .*\n|\s*\n)+)", text, re.M)
    if not m:
        return None
    params = [a.strip() for a in m.group(1).split(",") if a.strip() and not a.strip().startswith("*")]
    body = m.group(2)
    calls = re.findall(r"^        \w+ = ((?:torch|operator|math|builtins)[\w.]*|self\.\w+)\(", body, re.M)
    attrs = re.findall(r"^        \w+ = self\.\w+\s*(?:;|$)", body, re.M)
    ops = []
    for c in calls:
        name = c.replace("torch.ops.", "")
        if name not in ops:
            ops.append(name)
    return {"nodes": len(params) + len(calls) + len(attrs) + 1, "ops": ops, "calls": len(calls)}


def exc_names(type_, message):
    """'InductorError', 'CppCompileError: C++ compile error' -> ['InductorError', 'CppCompileError']"""
    names = [type_.rsplit(".", 1)[-1]] if type_ else []
    for tok in re.findall(r"\b([A-Z]\w*(?:Error|Exception|Failed))\b", (message or "").split("\n")[0]):
        if tok not in names:
            names.append(tok)
    return names


def same_failure(orig, got, kind):
    """Does the repro fail like the original? Returns (verified: bool, why)."""
    if got["rc"] == 0 and not got.get("signal"):
        return False, "repro.py ran without failing"
    if kind == "crash":
        if got.get("signal"):
            return True, f"repro.py dies with {got['signal']}" + ("" if got["signal"] == orig.get("signal") else
                                                                  f" (original: {orig.get('signal') or 'crash'})")
        return got["rc"] != 0 and "illegal memory access" in (got.get("message") or "").lower(), \
            f"repro.py fails with {got.get('type')}"
    if kind == "accuracy":
        ok = "AccuracyError" in (got.get("names") or []) or "Bad accuracy" in (got.get("message") or "")
        return ok, ("repro.py raises AccuracyError (compiled != fp64/eager reference)" if ok else
                    f"repro.py fails differently: {got.get('type')}: {cmdline.clip(got.get('message'), 120)}")
    on, gn = orig.get("names") or [], got.get("names") or []
    specific = [n for n in on if n not in GENERIC_EXC]
    if specific and any(n in gn for n in specific):
        return True, f"same exception: {', '.join(n for n in specific if n in gn)}"
    norm = lambda s: re.sub(r"(/[\w.\-]+)+|0x[0-9a-f]+|\d+", "#", (s or "").split("\n")[0]).strip()[:80]
    if on and gn and on[-1] == gn[-1] and norm(orig.get("message")) == norm(got.get("message")):
        return True, f"same exception and message: {gn[-1]}"
    if not specific and on and gn and set(on) & set(gn):
        return True, f"same exception type: {', '.join(sorted(set(on) & set(gn)))}"
    return False, (f"repro.py fails differently: {got.get('type')}: {cmdline.clip(got.get('message'), 120)} "
                   f"(original: {orig.get('type')}: {cmdline.clip(orig.get('message'), 120)})")


def failure_of(res):
    err = res.read_stderr(limit=2_000_000)
    etype, emsg = bisect_step.signature(err)
    # the full first line of the message (bisect_step keeps it short)
    return {"rc": res.returncode, "signal": res.signal, "timed_out": res.timed_out,
            "type": bisect_step.short_type(etype), "message": emsg,
            "names": exc_names(etype, emsg), "duration_s": res.duration_s}


def triage_failure(tri, from_dir):
    """The failure of a previous triage run (--from RUN_DIR), as failure_of records one."""
    err = tri["error"] or {}
    return {"rc": tri["rc"], "signal": tri["signal"], "timed_out": tri["timed_out"], "type": err.get("type"),
            "message": err.get("message"), "names": exc_names(err.get("type"), err.get("message")) if err else [],
            "duration_s": tri["duration_s"], "category": err.get("category"), "title": err.get("title"),
            "location": None, "from_run": from_dir}


def guess_kind(fail):
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


def no_launcher_reason(kind):
    """Why no graph was dumped, for a failure of this kind."""
    return {"accuracy": "no graph failed Inductor's accuracy check (level 4): the mismatch may come from "
                        "outside the compiled graphs, from randomness, or be within tolerance",
            "crash": "no graph was dumped before the crash",
            "error": "the failure did not happen inside a backend compiler call (it is probably in Dynamo's "
                     "tracing or in the program itself), so the minifier could not capture a graph"}[kind]
