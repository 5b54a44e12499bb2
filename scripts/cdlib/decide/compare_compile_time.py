"""Before/after of two compile-time runs (report.json of each run dir, command "compile-time"): compile and
wall time of the cold run, phases, compiled frames gone / new / changed, suggestions that no longer apply,
and whether the program's printed output changed (a fix for startup must not change the losses). No
torch import."""
import json
import os

from .compare import _first_diff, _fn_key, _read, _within_rounding, different_programs, normalize_output
from ..errors import CliError

NOISE = 0.10     # one cold run each: a change of compile time under 10% is not a measured difference


def load(path):
    """A compile-time run dir (or its report.json) -> the report dict with "_stdout" (the cold run's output);
    None when it is a run dir of another command."""
    p = os.path.abspath(os.path.expanduser(path))
    rj = p if p.endswith(".json") else os.path.join(p, "report.json")
    try:
        with open(rj, encoding="utf-8") as f:
            rep = json.load(f)
    except (OSError, ValueError):
        return None
    if not isinstance(rep, dict) or rep.get("command") != "compile-time":
        return None
    if not isinstance(rep.get("summary"), dict):
        raise CliError(f"{rj}: a compile-time report without its summary")
    cold = (rep.get("runs") or {}).get("cold") or {}
    rep["_stdout"] = _read(os.path.join(os.path.dirname(rj), "cold", "stdout")) if cold else None
    rep.setdefault("run_dir", os.path.dirname(rj))
    return rep


def _frames(rep):
    """{(function, file, recompile index): frame}: a function's recompiles are frames of their own."""
    return {(_fn_key(f.get("function")), os.path.basename((f.get("location") or "").rsplit(":", 1)[0]),
             str(f.get("compile_id") or "").rsplit("/", 1)[-1]): f for f in rep["summary"].get("frames") or []}


# suggestions that only a run the after run of compare did not make can give (it is one cold run)
_NEEDS_RUN = {"warm_cache": "warm", "cache_not_reused": "warm", "portable": "portable", "aoti_load_check": "empty_cache"}


def _hits(rep):
    return sum((c or {}).get("hit", 0) for c in (rep["summary"].get("caches") or {}).values())


def _label(f):
    return f"`{f.get('function')}` ({f.get('ops') if f.get('ops') is not None else '?'} ops, {f.get('total_s')} s)"


def _facts(rep):
    s, cold = rep["summary"], (rep.get("runs") or {}).get("cold") or {}
    return {"run_dir": rep.get("run_dir"), "target": rep.get("target"), "status": rep.get("target_status"),
            "exit_code": cold.get("exit_code"), "compile_s": s.get("compile_time_s"), "wall_s": cold.get("wall_s"),
            "frames": s.get("compiled_frames"), "recompiles": s.get("recompiles"),
            "ops": sum(f.get("ops") or 0 for f in s.get("frames") or []), "load": cold.get("load"),
            "phases": {p["phase"]: p["seconds"] for p in s.get("phases") or []}}


def compare(before, after):
    """Two compile-time report dicts -> one JSON-safe comparison dict."""
    fb, fa = _facts(before), _facts(after)
    frb, fra = _frames(before), _frames(after)
    gone_k = [k for k in frb if k not in fra and (frb[k].get("total_s") or 0) >= 0.05]   # not the empty frames
    new_k = [k for k in fra if k not in frb and (fra[k].get("total_s") or 0) >= 0.05]
    gone, new = [_label(frb[k]) for k in gone_k], [_label(fra[k]) for k in new_k]
    changed = [{"function": frb[k].get("function"), "s": [frb[k].get("total_s"), fra[k].get("total_s")],
                "ops": [frb[k].get("ops"), fra[k].get("ops")]}
               for k in frb if k in fra and frb[k].get("ops") != fra[k].get("ops")]
    changed.sort(key=lambda c: -abs((c["s"][0] or 0) - (c["s"][1] or 0)))
    # the frames whose graphs did not change measure the machine: their time should not move
    same = [(frb[k].get("total_s") or 0, fra[k].get("total_s") or 0) for k in frb
            if k in fra and frb[k].get("ops") == fra[k].get("ops")]
    struct = {"gone_s": round(sum(frb[k].get("total_s") or 0 for k in gone_k), 2),
              "new_s": round(sum(fra[k].get("total_s") or 0 for k in new_k), 2),
              "same_graphs_s": [round(sum(x for x, _ in same), 2), round(sum(y for _, y in same), 2)],
              "gone": len(gone_k), "new": len(new_k), "ops_changed": len(changed),
              # a compile setting changed, not the machine: cache hits (loaded artifacts, a kept cache dir) or
              # autotuning (max-autotune) differ
              "setting": _hits(before) != _hits(after)
              or abs(fb["phases"].get("autotune", 0.0) - fa["phases"].get("autotune", 0.0)) > 1.0}
    phases = sorted(({"phase": p, "s": [fb["phases"].get(p, 0.0), fa["phases"].get(p, 0.0)]}
                     for p in set(fb["phases"]) | set(fa["phases"])), key=lambda x: -abs(x["s"][0] - x["s"][1]))
    ran = set((after.get("runs") or {}))
    sb = {g["id"]: g["title"] for g in before.get("suggestions") or [] if _NEEDS_RUN.get(g["id"], "cold") in ran}
    sa = {g["id"] for g in after.get("suggestions") or []}
    out_b, out_a = normalize_output(before.get("_stdout")), normalize_output(after.get("_stdout"))
    if out_b is None or out_a is None:
        output = "unknown (no captured output)"
    elif out_b == out_a:
        output = "same" if out_b else "nothing printed in either run"
    else:
        output = "same within rounding (numbers within √eps of float32)" if _within_rounding(out_b, out_a) else "changed"
    diff = _first_diff(out_b, out_a) if output == "changed" else None
    note = different_programs(fb["target"], fa["target"])
    return {"kind": "compile-time", "note": note, "before": fb, "after": fa, "frames": {"gone": gone, "new": new, "changed": changed[:8]},
            "phases": phases[:4], "suggestions_gone": [sb[i] for i in sb if i not in sa],
            "output": output, "output_diff": diff, "same_graphs_s": struct["same_graphs_s"],
            "verdict": verdict(fb, fa, output, struct)}


def verdict(fb, fa, output, struct):
    a, b = fb["compile_s"] or 0, fa["compile_s"] or 0
    move = f"compile {a} → {b} s" + (f" ({round(100 * (b - a) / a):+d}%)" if a else "")
    failed = [x["exit_code"] not in (0, None) for x in (fb, fa)]   # None: a recorded trace (--trace), no run
    if failed[1]:
        return (f"worse: the after run failed (exit {fa['exit_code']}); {move} covers only what it compiled"
                if not failed[0] else f"not measured: both runs failed (exit {fb['exit_code']}, then "
                                      f"{fa['exit_code']}); {move}")
    if failed[0]:
        return (f"not comparable: the before run failed (exit {fb['exit_code']}: killed or crashed) and compiled only "
                f"part of the program; the after run ran to the end and compiled {b} s")
    sb, sa = struct["same_graphs_s"]
    # the unchanged graphs' compile moved while no compile setting did: the machine's speed differed
    drift = not struct["setting"] and sb >= 1 and abs(sa - sb) > 2 * NOISE * sb
    machine = (f"the frames whose graphs did not change took {sb} → {sa} s: the machine's speed (or a compile "
               "setting: threads, environment) differed between the runs; repeat both on an idle machine")
    if drift and (struct["gone"] or struct["new"]) and not struct["ops_changed"]:
        d = round(struct["gone_s"] - struct["new_s"], 2)
        what = (f"{struct['gone']} compiled frame(s) gone ({struct['gone_s']} s in the before run), "
                f"{struct['new']} new ({struct['new_s']} s)")
        if (d > 0) == (b < a) and d:
            head = f"{'better' if d > 0 else 'worse'}: {what}; {move}, but {machine}"
        else:
            head = f"not conclusive on time: {what}, yet {move}; {machine}"
    elif drift:
        head = f"not conclusive: {move}, but {machine}"
    elif a and b <= (1 - NOISE) * a:
        head = f"better: {move}"
    elif a and b >= (1 + NOISE) * a:
        head = f"worse: {move}"
    else:
        head = f"same: {move}, within {round(100 * NOISE)}% (one cold run each)"
    if output == "changed":
        return f"{head}; but the printed output changed: check the change did not alter the results"
    return head
