"""minify's graph stage, the analysis part (no torch): FX node counts of a minifier launcher or repro,
exception names of a failure, and whether a repro fails like the original."""
import os
import re

from .. import cmdline

GENERIC_EXC = {"BackendCompilerFailed", "InductorError", "RuntimeError", "Exception", "AssertionError",
               "TorchRuntimeError", "InternalTorchDynamoError"}


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
