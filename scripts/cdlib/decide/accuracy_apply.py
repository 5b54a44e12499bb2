"""An accuracy check's verdict put on a triage report (accuracy_judge.judge decides it): the error row's
category, why and next command, weighed against what the program printed about its own comparison and the
tolerance its gate names. No torch import."""
import os
import re

from . import printed
from .accuracy_check import TOLERANCE
from .accuracy_int_sites import int_sites
from .accuracy_judge import _fmt, judge

# a printed line that reports a numeric comparison: "max_abs=7.8e-03", "mismatched=46521/184320", "not close"
_PRINTED_COMPARISON = re.compile(r"(?i)\b(?:max_?abs|max_?diff|mismatch(?:ed)?|abs_?err|rel_?err|atol|rtol)\b\s*[=:]?\s*"
                                 r"-?\d|max\s*\|[^|\n]{1,20}\|\s*[=:]\s*-?\d|not close|allclose")


def next_command(kind, cli, target, timeout=None):
    """(why, command) of the cheapest next step for a judge() verdict's `next` (cli: our command,
    target: the program's command line as the user types it)."""
    if kind == "fix_gate":
        return "fix the program's output check (not a compiler bug; no bisect)", None
    if kind == "bisect":
        return "nothing cheaper decides: bisect names the layer, pass and op", f"{cli} bisect -- {target}"
    if kind == "vs_eager":
        return ("compare what the program prints compiled and eager (a compiled and an eager run); bisect only if "
                "that does not show it"), f"{cli} triage --vs-eager -- {target}"
    if kind == "graphs":
        return ("read the forward and backward graphs AOTAutograd traced (their dtypes: a bf16 op where the program "
                "asked for fp32) and compare with eager's; no bisect: each compiled graph matches its eager run"), \
            f"{cli} aot -- {target}"
    if kind == "int_ops":
        from . import knowledge
        return knowledge.advice("int_ops_check"), None
    if kind == "rng":
        from . import knowledge
        return knowledge.advice("rng_mask_check"), None
    if kind == "fix_math_at":
        from . import knowledge
        return knowledge.advice("ill_conditioned_value"), None
    if kind == "fix_math_eager":
        from . import knowledge
        return knowledge.advice("eager_less_accurate"), None
    if kind == "fix_math":
        from . import knowledge
        return knowledge.advice("noise_output"), None
    if kind == "timeout":
        return "give the check run more time", f"{cli} accuracy --timeout {max(2 * (timeout or 900), 60):.0f} -- {target}"
    return ("measure the model directly: a factory function returning (model, inputs) in a file, then the "
            "accuracy command on FILE.py:FACTORY (eager vs compiled vs fp64 per output)"), None


_TOLERANCE_RE = re.compile(r"(?i)\b(?:atol|tol|tolerance)\s*[=:]?\s*(\d+(?:\.\d+)?(?:e-?\d+)?)")


def program_tolerance(text):
    """The absolute tolerance the program's failing check names ("atol=0.0001", "tol 1e-4"); None if it names none."""
    vals = [float(v) for v in _TOLERANCE_RE.findall(text or "")]
    vals = [v for v in vals if 0 < v < 1]
    return max(vals) if vals else None


def apply(rep, chk, run_dir, where):
    """Put the measurement on a triage report whose first error fails only compiled and has no specific
    class: rounding (-> fix the gate), a measured miscompile (-> bisect --from) or not measured (why,
    and the cheapest next step)."""
    from . import knowledge
    from .program_code import precision_settings, program_files, read_text as _read
    err = rep.errors[0]
    cli, target = where
    # every line the program printed, not only its last ones: a gate prints its measured difference, then the worst
    # samples, then a verdict with no number (blind A/B batch 61: "max |compiled - eager|: 0.5950" was line 11 of 18)
    said = printed.printed(_read(rep.artifacts.get("stdout")), _read(rep.artifacts.get("stderr"))).splitlines() \
        or list(rep.printed_tail or [])
    numeric = [ln for ln in said if _PRINTED_COMPARISON.search(ln)]
    low_at = [f"{os.path.basename(p)}:{ln} `{code[:80]}`" for p, ln, code in precision_settings(program_files(rep))]
    j = judge(chk, err.type, "\n".join(filter(None, [err.message, err.location.code if err.location else None])),
              rep.exit_code, compares=bool(numeric), printed_diff=printed.printed_difference(rep.printed_tail),
              precision_at=", ".join(low_at[:2]) or None)
    if j.get("next") == "vs_eager" and j.get("worst") and numeric and "does not compare numbers" in j.get("why", ""):
        # the failure line says nothing numeric, but what the program printed compares numbers (blind A/B batch 17:
        # a uint8 resize one step apart; "does not compare numbers" was false): these graphs, checked after
        # AOTAutograd's decompositions, do not show the difference
        w = j["worst"]
        j = dict(j, why=(f"every compiled graph is as close to fp64 as eager on its first call (RMSE "
                         f"{_fmt(w['rmse_compiled_vs_fp64'])} vs {_fmt(w['rmse_eager_vs_fp64'])}, dtype {w['dtype']}), "
                         f"yet the program's own comparison differs ({numeric[-1].strip()[:120]}): torch's check runs "
                         "the graphs after AOTAutograd's decompositions, so the difference comes from before them"))
    tol = program_tolerance("\n".join([err.message or ""] + list(rep.printed_tail or [])))
    w = j.get("worst") or {}
    if j["verdict"] == "rounding" and tol and w.get("max_abs_diff") is not None and tol >= 10 * w["max_abs_diff"]:
        # the program's own tolerance already covers the graphs' rounding many times over, so rounding cannot be why
        # its check fails (blind A/B batch 57: three pooling closures sharing one code object, the graph traced for
        # "mean" reused for "max" and "lse" with no guard on the closure; "rounding: fix the gate" would have hidden it)
        j = dict(j, verdict="unexplained", next="vs_eager",
                 summary=(f"not rounding: every compiled graph matches eager on its first call (largest difference "
                          f"{_fmt(w['max_abs_diff'])}), far inside the program's own tolerance ({tol:g}), yet its "
                          "check fails"),
                 why=(f"every compiled graph matches eager on its first call (largest difference "
                      f"{_fmt(w['max_abs_diff'])}, {w.get('dtype')}), far inside the program's own tolerance "
                      f"({tol:g}), yet its check fails: not rounding. The difference comes from which graph runs or "
                      "from a later call (a graph reused for other Python state: a closure, global or attribute no "
                      "guard checks; state changed after compiling), which a first-call check of each graph cannot see"))
    dur = chk["res"].duration_s
    rep.verdict["accuracy"] = dict(j, run_dir=run_dir, failing_graph=chk["failing_graph"],
                                   graph_nodes=chk["graph_nodes"], precision=j["verdict"] == "rounding",
                                   rmse=j["worst"], error=chk["error"], duration_s=dur,
                                   run_duration_s=rep.duration_s,
                                   cost_ratio=round(dur / rep.duration_s, 2) if dur and rep.duration_s else None)
    if j["verdict"] == "miscompile":
        err.category, err.side, err.skill = "accuracy_mismatch", "compiler", "bisect"
        err.title = "Miscompile: a compiled graph is further from fp64 than eager (measured)"
        err.advice = (f"Measured by one run under torch's accuracy check (repro_tolerance {TOLERANCE:g}: its RMSE "
                      f"rule decides): {j['why']}" + (f"; {chk['graph_nodes']} FX nodes" if chk["graph_nodes"] else "")
                      + ". Bisect names the layer, pass and op; minify --kind accuracy shrinks the graph. (A graph "
                      "that draws random numbers, e.g. dropout in training, also differs: `accuracy` re-checks "
                      "with fallback_random.)")
        err.next_command = knowledge.render_command({"command": "{cli} bisect -- {target}"}, cli, target)
    elif j["verdict"] == "noise":
        err.title = j.get("title") or "The compared output is rounding noise without torch.compile too (measured)"
        err.side, err.skill = "user", "overview"
        err.advice = f"Measured by one run under torch's accuracy check: {j['why']}; the fix is in the program's math (Next)"
        err.next_command = None
    elif j["verdict"] == "rounding":
        row = knowledge.triage_row("accuracy_tolerance")
        err.category, err.title, err.skill, err.side = row["id"], row["title"], row.get("skill"), row["side"]
        err.advice = f"{j['why']}. " + " ".join(row["advice"].split())
        err.next_command = None
    else:
        if j["next"] == "int_ops":
            sites = int_sites((rep.artifacts or {}).get("trace_dir") or os.path.join(os.path.dirname(run_dir), "trace"))
            rep.verdict["accuracy"]["int_sites"] = sites
            if sites:
                j["why"] += "; the integer results made from floats in the compiled code: " + "; ".join(sites)
                rep.verdict["accuracy"]["why"] = j["why"]
            else:   # no line to run alone: the check has nothing to point at
                j["next"] = rep.verdict["accuracy"]["next"] = "bisect"
        err.title = "Fails only when compiled; not measured (see the verdict)"
        err.advice = f"One more run under torch's accuracy check did not decide it: {j['why']}."
        if j["next"] != "bisect":
            err.skill = "trace-aot" if j["next"] == "graphs" else "overview"
        err.next_command = next_command(j["next"], cli, target, chk["res"].duration_s)[1]
