"""The verdict of an accuracy-check run (accuracy_check.run): every checked graph's RMSE against fp64 next to
eager's decides miscompile, rounding (the program's gate is too tight), noise (the compared output is rounding
noise without torch.compile too) or not measured, with the cheapest next step; accuracy_apply puts it on the
report. No torch import."""
import re

from .accuracy_check import ASSERT_CLOSE, TOLERANCE

EPS = {"float32": 1.1920928955078125e-07, "float16": 0.0009765625, "bfloat16": 0.0078125, "float64": 2.22e-16}


def precision_meaning():
    """What "every graph as close to fp64 as eager, yet the program's check failed" means (triage table row)."""
    from . import knowledge
    return " ".join(knowledge.triage_row("accuracy_tolerance")["advice"].split())


_NUMERIC = re.compile(r"(?i)allclose|isclose|assert_close|torch\.equal|array_equal|\batol\b|\brtol\b|toleran|\btol\b|"
                      r"diff|not close|mismatch|differ|disagree|deviat|diverg|parity|cosine|max[ _]abs|"
                      r"max\s*\|[^|\n]+\||\brmse\b|\bmse\b|\bnan\b")


def is_output_check(etype, text=""):
    """A failure that a numeric difference can explain: an accuracy-mismatch message, or an assert / a
    non-zero exit whose line, message or last words compare numbers (allclose, atol, "MISMATCH", ...).
    `assert len(calls) == 1` is not one: rounding cannot make it fail."""
    from . import knowledge
    etype, text = etype or "", text or ""
    if knowledge.classify_error(f"{etype}: {text}").get("id") == "accuracy_mismatch":
        return True
    return (etype.endswith("AssertionError") or etype.startswith("exit ")) and bool(_NUMERIC.search(text))


def _fmt(x):
    return "n/a" if x is None else f"{x:.3g}"


def _measured(o):
    return o.get("rmse_compiled_vs_fp64") is not None and o.get("rmse_eager_vs_fp64") is not None


def _ratio(o):
    a, b = o["rmse_compiled_vs_fp64"], o["rmse_eager_vs_fp64"]
    return a / b if b else (0.0 if a == 0 else float("inf"))


# torch's RMSE rule at tolerance 0 flags a compiled graph that is a few times further from fp64 than an
# unusually exact eager, even when both are a few ulps off (a decomposed eval BatchNorm at float32:
# compiled 5.5e-07 vs eager 1.2e-07 from fp64 on outputs up to 3.2). A failing output within these bands
# (in units of eps(dtype) x max|eager output|) is rounding, not a measured miscompile.
ULP_RMSE, ULP_MAX = 16, 64
# eager's own RMSE from fp64 above this many eps(dtype) x max|output|: an ill-conditioned computation (gate())
ILL_CONDITIONED = 1000
# at the value where compiled and eager differ most, eager this many times further from fp64 than from compiled:
# an ill-conditioned value (both sides wrong, each its own way), not a miscompile
ILL_AT = 10


def _eps_units(o):
    scale = o.get("max_abs_eager") or 0.0
    eps = EPS.get(o.get("dtype") or "")
    return (o.get("max_abs_diff") or 0.0) / (eps * scale) if eps and scale else float("inf")


def _rounding_sized(o):
    """A failing output whose compiled-vs-eager difference and RMSE from fp64 are rounding-sized."""
    scale, eps = o.get("max_abs_eager") or 0.0, EPS.get(o.get("dtype") or "")
    if not (_measured(o) and eps and scale) or o.get("nan_compiled") != o.get("nan_eager"):
        return False
    return _eps_units(o) <= ULP_MAX and o["rmse_compiled_vs_fp64"] <= ULP_RMSE * eps * scale


def _zero_output(o, graph_scale):
    """A failing output whose exact value is zero up to rounding of its graph's values (a gradient that
    cancels: a bias under a shift-invariant loss), compiled and eager differing by that noise only: its
    own scale (~1e-9) would make any difference look huge (blind A/B batch 5)."""
    eps = EPS.get(o.get("dtype") or "")
    band = ULP_MAX * eps * graph_scale if eps and graph_scale else 0.0
    return bool(band) and o.get("max_abs_fp64") is not None and o["max_abs_fp64"] <= band \
        and (o.get("max_abs_diff") or 0.0) <= band and o.get("nan_compiled") == o.get("nan_eager")


# An output whose eager result is itself this far from fp64, as a fraction of its graph's largest eager value,
# while fp64's own values are a small fraction of eager's, is rounding noise scaled up, not math (float32 results
# are ~1e-7 off; blind A/B batch 19: an InstanceNorm then a mean pool then F.normalize, eager 0.125 RMSE from fp64
# on values up to 0.44, fp64's up to 0.0023). The second condition keeps out an output far from fp64 because
# torch's fp64 reference skips a cast the graph makes (a float8/bf16 round trip: fp64 as large as eager; review).
NOISE_FRAC, NOISE_FP64 = 0.01, 0.1


def noise_output(graphs):
    """(graph name, output record) of the first checked output that is rounding noise scaled up, eager too: its
    RMSE from fp64 at least NOISE_FRAC of its graph's scale (at least 8 eps for float16/bfloat16), and fp64's
    values at most NOISE_FP64 of eager's. None when every output is the math's."""
    for g in graphs:
        scale = max((o.get("max_abs_eager") or 0.0 for o in g.get("outputs", [])), default=0.0)
        for o in g.get("outputs", []):
            eps = EPS.get(o.get("dtype") or "")
            if _measured(o) and eps and scale and o.get("max_abs_fp64") is not None \
                    and o["rmse_eager_vs_fp64"] >= max(NOISE_FRAC, 8 * eps) * scale \
                    and o["max_abs_fp64"] <= NOISE_FP64 * (o.get("max_abs_eager") or 0.0):
                return g.get("graph"), o
    return None


def _wrong_where_eager_exact(graphs, printed_diff=None):
    """(graph name, output, k) of the output where compiled differs from eager by more than ULP_MAX x eps x its scale
    at values where eager is within a tenth of that difference from fp64 (k: that difference in eps x scale units),
    when the program printed a difference of that size; None otherwise. A wrong kernel that torch's RMSE rule
    averages away over an output whose other values are far from fp64 in both (review of batch 44: PyTorch's
    injected relu miscompile, 1e-4 on every value, beside ill-conditioned values, read as "rounding")."""
    import math
    best = None
    gaps = [o.get("max_abs_diff") or 0.0 for g in graphs for o in g.get("outputs", []) if _measured(o)]
    if printed_diff is not None and not any(x / 10 <= printed_diff <= 10 * x for x in gaps if x):
        return None   # the program's difference is none of these graphs' (each output's own, several printed)
    for g in graphs:
        for o in g.get("outputs", []):
            d, eps, scale = o.get("max_abs_diff_eager_exact"), EPS.get(o.get("dtype") or ""), o.get("max_abs_eager")
            if not (_measured(o) and d and eps and scale and math.isfinite(d)):
                continue
            med = o.get("median_eager_vs_fp64")
            if med is None or not med <= ULP_RMSE * eps * scale:
                # eager is not accurate on most values (an ill-conditioned output: batch 39's std_mean gate): a value
                # where it happens to be close to fp64 proves nothing about compiled (full-suite run of 0.33.79)
                continue
            k = d / (eps * scale)
            if k > ULP_MAX and (best is None or k > best[2]):
                best = (g.get("graph"), o, k)
    return best


def _ill_conditioned_at(graphs, printed_diff=None):
    """(graph name, output) whose largest compiled-vs-eager difference sits where eager itself is at least
    ILL_AT times further from fp64 than from compiled, far beyond the dtype's rounding, while everywhere eager is
    accurate compiled stays within rounding of it, when that difference is the size of what the program printed;
    None otherwise. An element-wise view: torch's RMSE rule averages one such value away (blind A/B batch 44)."""
    import math

    def rel(x):
        o = x[1]
        return o["max_abs_diff"] / (o.get("max_abs_eager") or 0.0) if o.get("max_abs_eager") else 0.0
    cands = [(g.get("graph"), o) for g in graphs for o in g.get("outputs", [])
             if _measured(o) and (o.get("max_abs_diff") or 0.0) > 0 and o.get("worst_eager_vs_fp64") is not None]
    if not cands:
        return None
    g, o = max(cands, key=rel)      # the output that differs most at its own scale
    gap, e, c = o["max_abs_diff"], o["worst_eager_vs_fp64"], o.get("worst_compiled_vs_fp64")
    eps, scale = EPS.get(o.get("dtype") or ""), o.get("max_abs_eager") or 0.0
    if c is None or not eps or not scale or not (math.isfinite(gap) and math.isfinite(e)):
        return None
    if printed_diff is not None and not any(x["max_abs_diff"] / 10 <= printed_diff <= 10 * x["max_abs_diff"]
                                            for _, x in cands):   # the program's difference is none of these
        return None
    band = ULP_MAX * eps * scale
    # eager far off there (a value the program computes badly), beyond the dtype's rounding at the output's scale
    # (a bfloat16 result a few eps from fp64 is the gate's rounding: "fix the gate")
    if e < ILL_AT * gap or e < band:
        return None
    # and nowhere else a difference a wrong kernel would make (PyTorch's injected relu miscompile, 1e-4 on every
    # value, beside one ill-conditioned value: review of batch 44)
    if o.get("max_abs_diff_eager_accurate") is None or o["max_abs_diff_eager_accurate"] > band:
        return None
    return g, o


def _eager_off_at(graphs, printed_diff=None):
    """(graph name, output) whose largest compiled-vs-eager difference, beyond the dtype's rounding, is eager's
    own error: there compiled is within a tenth of the difference from fp64 and eager carries at least half of it,
    while everywhere eager is exact compiled stays within rounding of it, when that difference is the size of what
    the program printed; None otherwise (blind A/B batch 61: bf16 fmod of a heading by 2*pi feeding a sector index;
    eager 0.594 from fp64 at the worst sample, compiled 0.0008, and "later call or decomposition" was the lead)."""
    import math
    cands = [(g.get("graph"), o) for g in graphs for o in g.get("outputs", [])
             if _measured(o) and (o.get("max_abs_diff") or 0.0) > 0 and o.get("worst_eager_vs_fp64") is not None
             and o.get("worst_compiled_vs_fp64") is not None]
    if not cands:
        return None
    g, o = max(cands, key=lambda x: x[1]["max_abs_diff"] / (x[1].get("max_abs_eager") or 1.0))
    gap, e, c = o["max_abs_diff"], o["worst_eager_vs_fp64"], o["worst_compiled_vs_fp64"]
    eps, scale = EPS.get(o.get("dtype") or ""), o.get("max_abs_eager") or 0.0
    if not eps or not scale or not all(math.isfinite(x) for x in (gap, e, c)):
        return None
    if printed_diff is not None and not gap / 10 <= printed_diff <= 10 * gap:
        return None
    band = ULP_MAX * eps * scale
    exact = o.get("max_abs_diff_eager_exact")
    if gap <= band or e < gap / 2 or c > gap / ILL_AT or exact is None or exact > band:
        return None
    return g, o


def numbers(o):
    """'compiled 1.2e-07 vs eager 1.1e-07 from fp64' (RMSE) of one recorded output."""
    return f"compiled {_fmt(o['rmse_compiled_vs_fp64'])} vs eager {_fmt(o['rmse_eager_vs_fp64'])} from fp64"


def judge(chk, failure_type=None, failure_message="", failure_exit=None, compares=False, printed_diff=None,
          precision_at=None):
    """The verdict of one accuracy-check run: {verdict: rounding | miscompile | noise | not_measured,
    summary, why, graph, worst (the output record the numbers come from), graphs_checked, outputs_checked,
    dtypes, gate, next: fix_gate | bisect | vs_eager | graphs | timeout | factory | fix_math}. failure_*: how the program
    failed in the original compiled run (None: take the check run's own failure); compares: what the program
    printed compares numbers (a failure line that does not may still follow a printed comparison);
    printed_diff: the largest difference the program printed (printed.printed_difference()); precision_at: the
    program's line that lowers float32 matmul precision, if any (program_code.precision_settings)."""
    graphs = chk.get("graphs") or []
    low = reduced_precision(graphs, precision_at)
    outs = [o for g in graphs for o in g.get("outputs", [])]
    measured = [o for o in outs if _measured(o)]
    dtypes = sorted({o["dtype"] for o in measured})
    base = {"graphs_checked": len(graphs), "outputs_checked": len(measured), "dtypes": dtypes,
            "tolerance": chk.get("tolerance"), "graph": None, "worst": None, "gate": None}
    failing = next((g for g in graphs if g.get("passed") is False), None)
    name = chk.get("failing_graph") or (failing or {}).get("graph")
    failing_outs = [(r, max((x.get("max_abs_eager") or 0.0) for x in g.get("outputs", [])))
                    for g in graphs if g.get("passed") is False for r in g.get("outputs", []) if r.get("passed") is False]
    # fails the rule by rounding only
    ulp = bool(failing_outs) and all(_rounding_sized(r) or _zero_output(r, sc) for r, sc in failing_outs)
    zeros = [r for r, sc in failing_outs if not _rounding_sized(r) and _zero_output(r, sc)]
    if ulp and zeros:
        z = zeros[0]
        why = (f"torch's check flagged only output(s) whose exact value is 0 up to rounding (graph {name}: "
               f"{z.get('dtype')}{z.get('shape')}, |fp64| ≤ {_fmt(z['max_abs_fp64'])}, compiled vs eager differ by "
               f"{_fmt(z.get('max_abs_diff') or 0.0)}: noise); every other output is as close to fp64 as eager. So no "
               "compiled graph computes differently from the same graph run eagerly: a check on such an output "
               "compares noise, and a larger difference the program reports comes from how the graphs were built "
               "(dtype or autocast choices made while tracing, e.g. the backward traced under the forward's "
               "autocast: torch._functorch.config.backward_pass_autocast), which this check cannot see")
        return dict(base, verdict="not_measured", graph=name, worst=z, next="graphs",
                    summary="not measured: only a zero-valued output differs (noise); read the traced graphs' "
                            "dtypes", why=why)
    if (name or failing) and not ulp:
        bad = [o for o in (failing or {}).get("outputs", []) if o.get("passed") is False]
        o = bad[0] if bad else None
        if o is not None and o.get("nonfinite_fp64") and \
                o.get("nonfinite_match_compiled", 0) > o.get("nonfinite_match_eager", 0):
            # the fp64 reference is inf/nan there and compiled agrees with it, eager does not (blind A/B batch
            # 15: cond() of exactly singular matrices; compiled inf, eager a finite 3.7e7 from rounding noise)
            n, mc, me = o["nonfinite_fp64"], o["nonfinite_match_compiled"], o["nonfinite_match_eager"]
            why = (f"graph `{name}`'s {o.get('dtype')} output is inf/nan in the fp64 reference at {n} value(s): compiled "
                   f"agrees with fp64 at {mc}, eager at {me}. Where fp64 itself overflows or divides by zero (a "
                   "singular matrix, log of 0), eager's finite numbers are rounding noise, and a check that passes "
                   "eagerly on them passes by luck: make the program's check handle inf/nan (or the singular "
                   "case) explicitly, not the compiler")
            return dict(base, verdict="not_measured", graph=name, worst=o, next="fix_gate",
                        summary=f"not a miscompile: compiled matches the fp64 reference where it is inf/nan "
                                f"({mc} of {n} values; eager {me})", why=why)
        if o is None and chk.get("rmse"):   # no record (hook missing): torch's own failure line
            r = chk["rmse"][0]
            o = {"rmse_compiled_vs_fp64": r["rmse_compiled_vs_fp64"], "rmse_eager_vs_fp64": r["rmse_eager_vs_fp64"],
                 "dtype": r["dtype"].replace("torch.", ""), "shape": r["shape"], "passed": False}
        ke = _eager_eps_units(o) if o is not None and _measured(o) else 0.0
        if ke > ILL_CONDITIONED and not low:
            # eager itself is thousands of eps from fp64: an ill-conditioned step, where compiled code's other
            # summation order moves the result as far (blind A/B batch 39: float32 std_mean over ~1e5 Pa with a
            # 0.4 Pa spread; compiled 4x further from fp64 than eager, "measured miscompile" sent to bisect)
            return dict(base, verdict="noise", graph=name, worst=o, next="fix_math",
                        summary=f"not a measured miscompile: eager is {ke:.2g} × eps × max|output| from fp64 too in "
                                f"graph {name} ({numbers(o)}, {o.get('dtype')}): an ill-conditioned computation, where "
                                "compiled code's other order of operations moves the result as far",
                        why=f"graph `{name}` fails torch's RMSE rule ({numbers(o)}, {o.get('dtype')}), but eager's own "
                            f"error is {ke:.2g} × eps({o.get('dtype')}) × max|output| (limit {ILL_CONDITIONED}): both "
                            "sides compute the step badly (a large offset cancelled in a mean or std, near-equal "
                            "values subtracted), each in its own order; fix that step, then check again (a compiler "
                            "bug would be hidden by the noise)")
        if o is not None and _measured(o):
            m = re.search(r"multiplier: ([\d.]+)", " ".join(o.get("torch_says") or []))
            return dict(base, verdict="miscompile", graph=name, worst=o, next="bisect",
                        summary=f"measured miscompile in graph {name} ({numbers(o)}, {o.get('dtype')})",
                        why=f"graph `{name}` is further from fp64 than eager: {numbers(o)}, {o.get('dtype')}"
                            + (f" (torch's limit: {float(m.group(1)):g}× eager's)" if m else ""))
        if o is not None and o.get("dtype") and "float" not in o["dtype"] and not chk.get("dtypes") \
                and chk.get("inductor"):
            # no floating-point value in any compiled graph: no rounding can move an integer result
            return dict(base, verdict="miscompile", graph=name, worst=o, next="bisect",
                        summary=f"measured miscompile in graph {name}: its {o['dtype']} output differs from eager, and "
                                "the compiled graphs compute no floating-point values (rounding cannot explain it)",
                        why=f"graph `{name}` gives a different {o['dtype']} result than eager on the same inputs "
                            f"(shape {o.get('shape')}; torch's check: {'; '.join(o.get('torch_says') or []) or 'failed'}), "
                            "and no compiled graph has a float tensor")
        integer = o is not None and o.get("dtype") and "float" not in o["dtype"]
        if integer and chk.get("rng") == "all":
            # a dropout mask in a training forward (blind A/B batch 21: a bool [64, 384] output, the pooled features'
            # dropout, read as a float cast or a rounding tie)
            what = (f"it differs only in a non-floating output ({o['dtype']} {o.get('shape')}), and the compiled graphs "
                    "draw random numbers (dropout, bernoulli, rand): Inductor's random numbers are not eager's by "
                    "design, so a random mask differs; that is not a miscompile")
            return dict(base, verdict="not_measured", graph=name, worst=o, next="rng",
                        summary=f"not measured: graph {name} differs from eager, but {what}",
                        why=f"graph `{name}` fails torch's check, but {what}")
        what = ("it differs only in a non-floating output (an integer/bool result: an argmax or comparison "
                "can flip on a rounding tie; torch's RMSE rule measures floating outputs only)"
                if integer else "torch had no fp64 reference to measure it against (it could not run the graph in float64)")
        if integer and chk.get("rng") == "some":
            what += ("; some compiled graphs draw random numbers (dropout, rand): if this one does, a random mask "
                     "differs by design")
        return dict(base, verdict="not_measured", graph=name, worst=o, next="int_ops" if integer else "bisect",
                    summary=f"not measured: graph {name} differs from eager, but {what}",
                    why=f"graph `{name}` fails torch's check, but {what}")
    res = chk["res"]
    ftype = failure_type or chk.get("error_type") or (f"exit {res.returncode}" if res.returncode else None)

    def nm(why, nxt):
        return dict(base, verdict="not_measured", summary=f"not measured: {why}", why=why, next=nxt)
    if res.timed_out:
        return nm(f"the accuracy-check run timed out after {res.duration_s:.0f} s", "timeout")
    if not chk["failed"]:
        return nm("the program passed in the accuracy-check run: the failure does not happen on every run "
                  "(random data or seeds, timing, state left by an earlier run?)", "vs_eager")
    if not graphs:
        why = ("no graph was compiled by Inductor, and torch's check only measures Inductor graphs"
               if not chk.get("inductor") else "torch's check compared no graph (no compiled graph ran with real "
               "inputs" + (", or the recording hook failed: see target.stderr" if chk.get("hook_failed") else "") + ")")
        return nm(why, "bisect")
    skipped = [g for g in graphs if g.get("passed") is None or not any(_measured(o) for o in g.get("outputs", []))]
    skipped = [g for g in skipped if g.get("passed") is not False]
    if skipped:
        g = skipped[0]
        # torch's check runs the graph eagerly (and in fp64) beside the compiled one: it can raise where the program
        # does not (blind A/B batch 21: a prims iota "not implemented for 'UInt16'"), which is the check's limit
        err = g.get("error") or ""
        why = (f"torch's check itself raised running it: {err}; a limit of the check, not your program's failure"
               if re.search(r"NotImplementedError|not implemented for", err) else
               f"torch's check raised running it eagerly ({err}): the graph fails on these inputs without "
               "torch.compile too, or the check cannot run it" if err else
               "its compiled run raised inside the check, which skips the graph"
               if not g.get("outputs") else "no floating output with an fp64 reference")
        return dict(nm(f"graph {g.get('graph') or '?'} was not compared ({why})", "factory"), check_raised=bool(err))
    check_type = chk.get("error_type") or f"exit {res.returncode}"
    # (a graph failing torch's rule by rounding only raises torch's AccuracyError before the program's own check)
    if ftype and check_type and not ulp and not _same_end(ftype, check_type, failure_exit, res.returncode):
        return nm(f"the program failed differently in the accuracy-check run ({chk.get('error') or check_type}, "
                  f"not {ftype})", "bisect")
    worst = max(measured, key=_ratio)
    summary_n = f"RMSE {_fmt(worst['rmse_compiled_vs_fp64'])} vs {_fmt(worst['rmse_eager_vs_fp64'])}, dtype {worst['dtype']}"
    text = failure_message if failure_type else "\n".join(filter(None, [chk.get("error"), chk.get("last_words"),
                                                                       chk.get("error_code")]))
    noisy = noise_output(graphs)
    if noisy and (compares or is_output_check(ftype, text)):
        # only for a failure that compares numbers (its message, or what the program printed): a KeyError is not
        # explained by an output's noise (review of batch 19)
        g, o = noisy
        return dict(base, verdict="noise", graph=g, worst=o, next="fix_math",
                    summary=f"graph {g}'s output is rounding noise without torch.compile too (eager "
                            f"{_fmt(o['rmse_eager_vs_fp64'])} RMSE from fp64 on values up to {_fmt(o.get('max_abs_eager'))}"
                            f"; compiled {_fmt(o['rmse_compiled_vs_fp64'])}; fp64's own values up to "
                            f"{_fmt(o.get('max_abs_fp64'))}): that explains a failing comparison without a compiler bug",
                    why=f"graph `{g}`'s {o.get('dtype')}{o.get('shape')} output is as far from fp64 in eager as compiled "
                        f"({numbers(o)}), at its own scale (eager values up to {_fmt(o.get('max_abs_eager'))}, fp64's "
                        f"up to {_fmt(o.get('max_abs_fp64'))}): eager and compiled both compute noise there, each its "
                        "own; a compiler bug in that output would be hidden by the noise, so fix the math first and "
                        "run again")
    seen = max([o.get("max_abs_diff") or 0.0 for o in measured] + [0.0])
    scale = max([o.get("max_abs_eager") or 0.0 for o in measured] + [0.0])
    if printed_diff and (compares or is_output_check(ftype, text)) and printed_diff >= 1e-3 and printed_diff > 1000 * seen \
            and printed_diff > ULP_MAX * max(EPS.get(d, EPS["float32"]) for d in dtypes or ["float32"]) * scale:
        # the program reports a difference no compiled graph shows on the inputs the check gave it (blind A/B
        # batch 20: an in-place op on a view of a buffer another input also views; the check's cloned inputs do
        # not overlap, so every graph matched eager and "rounding: fix the gate" was said of a 0.84 difference)
        why = (f"the program reports a difference of {printed_diff:.3g}, while every compiled graph matches eager to "
               f"{seen:.2g} on the inputs torch's check gave it (each graph's first call; outputs up to {scale:.3g}), "
               "so rounding inside one call does not explain it. Either it grows over many calls (training steps "
               "compound rounding: compare the first step's numbers), or it comes from how the graphs are called: "
               "inputs that share memory (views of one buffer, one written in place), state changed between calls, "
               "a graph reused or served from the cache for inputs unlike those it was compiled for. One run each "
               "with backend=\"eager\" and backend=\"aot_eager\" tells Dynamo from AOTAutograd")
        return dict(base, verdict="not_measured", worst=max(measured, key=_ratio), next="vs_eager",
                    summary=f"not sure: the program's difference ({printed_diff:.3g}) is far larger than any compiled "
                            f"graph's on its first call ({seen:.2g})", why=why)
    wrong = _wrong_where_eager_exact(graphs, printed_diff)
    if wrong and (compares or is_output_check(ftype, text)):
        g, o, k = wrong
        d = o["max_abs_diff_eager_exact"]
        return dict(base, verdict="miscompile", graph=g, worst=o, next="bisect",
                    summary=f"measured miscompile in graph {g}: where eager is within {_fmt(d / 10)} of fp64, compiled "
                            f"differs from it by up to {_fmt(d)} ({k:.0f} × eps × max|output|)",
                    why=f"graph `{g}`'s {o.get('dtype')}{o.get('shape')} output: at values where eager is within a "
                        f"tenth of the difference from the fp64 result, compiled differs from eager by up to {_fmt(d)} "
                        f"({k:.0f} × eps({o.get('dtype')}) × max|output| {_fmt(o.get('max_abs_eager'))}; rounding stays "
                        f"within {ULP_MAX}): compiled alone is off there. torch's RMSE rule passed the graph ({numbers(o)}) "
                        "because other values are far from fp64 in both")
    bad_at = _ill_conditioned_at(graphs, printed_diff)
    if bad_at and (compares or is_output_check(ftype, text)):
        g, o = bad_at
        gap, e, c = o["max_abs_diff"], o["worst_eager_vs_fp64"], o["worst_compiled_vs_fp64"]
        where = f"graph `{g}`'s {o.get('dtype')}{o.get('shape')} output" if g else f"a {o.get('dtype')}{o.get('shape')} output"
        return dict(base, verdict="noise", graph=g, worst=o, next="fix_math_at",
                    title="At the value that differs, eager is as far from fp64 as compiled (measured): the "
                          "program's float math, not the compiler",
                    summary=f"not a measured miscompile: where compiled and eager differ most ({_fmt(gap)}), eager is "
                            f"{_fmt(e)} from fp64 and compiled {_fmt(c)}: the program's {o.get('dtype')} math loses "
                            "more there than the gate allows",
                    why=f"in {where}, at the value where compiled and eager differ most (by {_fmt(gap)}), eager is "
                        f"{_fmt(e)} from the fp64 result and compiled {_fmt(c)} ({e / gap:.0f}× the gap): both compute "
                        "that value badly, each a little differently; the RMSE over the whole output hides it "
                        f"({numbers(o)})")
    off_at = _eager_off_at(graphs, printed_diff)
    if off_at and (compares or is_output_check(ftype, text)):
        g, o = off_at
        gap, e, c = o["max_abs_diff"], o["worst_eager_vs_fp64"], o["worst_compiled_vs_fp64"]
        where = f"graph `{g}`'s {o.get('dtype')}{o.get('shape')} output" if g else f"a {o.get('dtype')}{o.get('shape')} output"
        return dict(base, verdict="noise", graph=g, worst=o, next="fix_math_eager",
                    title="At the value that differs, compiled is near fp64 and eager is not (measured): the "
                          "program's low-precision math on the eager side, not the compiler",
                    summary=f"not a miscompile, measured: where compiled and eager differ most ({_fmt(gap)}), compiled "
                            f"is {_fmt(c)} from fp64 and eager {_fmt(e)}: eager's {o.get('dtype')} result is the one "
                            "off",
                    why=f"in {where}, at the value where compiled and eager differ most (by {_fmt(gap)}), compiled is "
                        f"{_fmt(c)} from the fp64 result and eager {_fmt(e)}; wherever eager is exact, compiled agrees "
                        f"with it within rounding ({_fmt(o.get('max_abs_diff_eager_exact'))}): the difference is eager's "
                        f"own error ({numbers(o)})")
    if not is_output_check(ftype, text):
        said = next((ln.strip() for ln in (text or "").splitlines() if ln.strip()), "")
        why = (f"every compiled graph is as close to fp64 as eager on its first call ({summary_n}), but the "
               f"failure ({ftype}{': ' + said[:120] if said else ''}) does not compare numbers, so rounding does not "
               "explain it")
        return nm(why, "vs_eager") | {"worst": worst}
    # the program's own difference far above any graph's (compiled vs torch's eager run of the graph after
    # AOTAutograd's decompositions): eager's kernel computes differently from its decomposition, or it compounds over
    # calls; which side is nearer fp64 is then not measured here (blind A/B batch 48: eager's CPU float32 vector_norm
    # sums plainly, 35x further from fp64 than compiled on the gain; "compiled is further from fp64" was said of the
    # audio output)
    beyond = (f"; the program's own difference ({printed_diff:.3g}) is {printed_diff / seen:.0f}× any graph's ({seen:.2g}, "
              "compiled vs torch's eager run of the graph after its decompositions): it comes from an eager kernel that "
              "computes differently from its decomposition (a norm, var or softmax accumulating in another order) or "
              "compounds over calls, so which side is nearer fp64 on the program's numbers is not measured here: "
              "compare both with the program's computation in float64 before changing the gate"
              ) if printed_diff and seen and printed_diff > 30 * seen else ""
    if ulp:
        failing_outs = [r for r, _ in failing_outs]
        o = max(failing_outs, key=_ratio)
        k = max(_eps_units(r) for r in failing_outs)
        return dict(base, verdict="rounding", worst=o, graph=name, gate=gate(measured, low), next="fix_gate", ulp_band=True,
                    beyond_graphs=bool(beyond),
                    summary=(f"rounding: in torch's check compiled is further from fp64 than eager in graph {name} "
                             f"({numbers(o)}, {o['dtype']}), but only by rounding (at most {k:.2g} × eps × max|output| "
                             "from eager); fix the gate") + beyond,
                    why=f"graph `{name}` fails torch's RMSE rule at tolerance {TOLERANCE:g} ({numbers(o)}, {o['dtype']}), "
                        f"yet every failing output stays within rounding of eager: max |compiled - eager| ≤ {k:.2g} × "
                        f"eps({o['dtype']}) × max|output| (limit {ULP_MAX}), RMSE from fp64 ≤ {ULP_RMSE} × eps × "
                        "max|output|. Reordered or decomposed arithmetic (a fused reduction, a decomposed norm) gives "
                        "such differences; a wrong kernel gives far larger ones")
    if all((o.get("max_abs_diff") or 0.0) == 0.0 and o.get("dtype") in ("float32", "float64") for o in measured):
        # torch's check saw no difference at all, so rounding in these graphs explains nothing: the difference is
        # upstream of them (blind A/B batch 17: a uint8 resize whose decomposition rounds one grey level away from
        # eager's kernel; "rounding: fix the gate" offered assert_close's defaults, which fail there). float32/64
        # only: float16 / bfloat16 outputs often round to the same values on the first call and differ later
        # (a GPU bf16 gate measured so is still rounding)
        return nm(f"every compiled graph gives exactly eager's output in torch's check ({summary_n}), yet the "
                  "program's comparison fails: torch's check runs the graphs after AOTAutograd's decompositions, so "
                  "the difference comes from before them", "vs_eager") | {"worst": worst}
    fits = gate(measured, low)
    low_said = f" (float32 matmuls ran in {low['what']}, eager's too)" if low and "float32 matmuls ran in" in fits else ""
    return dict(base, verdict="rounding", worst=worst, gate=fits, next="fix_gate", beyond_graphs=bool(beyond),
                summary=f"rounding: compiled is as close to fp64 as eager ({summary_n}){low_said}; fix the gate" + beyond,
                why=f"all {len(graphs)} compiled graph(s), {len(measured)} output(s) checked on their first call: "
                    f"compiled is no further from fp64 than eager (largest ratio: {numbers(worst)}, "
                    f"{worst['dtype']}; torch's RMSE rule, tolerance {TOLERANCE:g})")


def _same_end(a, b, exit_a, exit_b):
    if a.startswith("exit ") or b.startswith("exit "):
        return (a.startswith("exit ") and b.startswith("exit ")) and (exit_a is None or exit_a == exit_b)
    return a.rsplit(".", 1)[-1] == b.rsplit(".", 1)[-1]


# float32 matmuls at reduced precision: (name, eps) of what they round to
_LOW = {"bf16": ("bf16", EPS["bfloat16"]), "tf32": ("TF32", 2.0 ** -10)}


def reduced_precision(graphs, at=None):
    """How float32 matmuls ran in the checked graphs' process when below float32 (the check run records it per graph:
    accuracy_check._cd_precision): {what, eps, state, at}; None at full float32 or when not recorded."""
    for g in graphs:
        p = g.get("precision") or {}
        if p.get("device") == "cuda" and p.get("tf32_matmul"):
            what, state = "tf32", "torch.backends.cuda.matmul.allow_tf32 is True"
        elif p.get("device") == "cpu" and p.get("cpu_matmul") == "bf16" and p.get("cpu_bf16"):
            what, state = "bf16", "torch.backends.mkldnn.matmul.fp32_precision is \"bf16\" and this CPU has bf16 units"
        else:
            continue
        name, eps = _LOW[what]
        return {"what": name, "eps": eps, "state": f"float32 matmul precision \"{p.get('float32_matmul')}\": {state}",
                "at": at}
    return None


def _eager_eps_units(o):
    """Eager's RMSE from fp64 in units of eps(dtype) × max|eager output|; 0.0 when not measured."""
    e, top = o.get("rmse_eager_vs_fp64"), o.get("max_abs_eager")
    return e / (EPS.get(o.get("dtype"), EPS["float32"]) * top) if e and top else 0.0


def gate(measured, low=None):
    """The output check that fits these outputs: torch.testing.assert_close's defaults when they accept
    every checked output, else a comparison against fp64 (or rtol/atol from the dtype's eps and scale).
    low: reduced_precision(), which explains an eager result far from fp64."""
    dts = sorted({o["dtype"] for o in measured})
    if all(o.get("assert_close_defaults") for o in measured):
        dflt = ", ".join(f"{d} rtol {ASSERT_CLOSE[d][0]:g} atol {ASSERT_CLOSE[d][1]:g}" for d in dts if d in ASSERT_CLOSE)
        # checked here: each graph's first call. The program's own check sees other inputs, where values near
        # zero can fail a default atol (a bf16 gate in the blind A/B failed 17/160 with the defaults)
        scale = max((o.get("max_abs_eager") or 0.0) for o in measured)
        d = max(dts, key=lambda t: EPS.get(t, EPS["float32"]))
        atol = 2 * EPS.get(d, EPS["float32"]) * scale
        return (f"torch.testing.assert_close(compiled, eager) with its dtype defaults ({dflt}) accepts every output "
                "checked here (each graph's first call); values near zero on other inputs need an atol at the outputs' "
                f"scale: rtol {ASSERT_CLOSE.get(d, (1.3e-6,))[0]:g}, atol ≈ 2 × eps({d}) × max|output|"
                + (f" = {atol:.2g}" if scale else "") + " (an output that cancels to near 0, such as the mean of "
                "zero-mean data, rounds at the scale of what it is computed from: its atol from eps × that scale, e.g. "
                "the data's rms; blind A/B batch 41); or compare both against an fp64 reference")
    o = max(measured, key=lambda r: (r.get("max_abs_diff") or 0) / max(r.get("max_abs_eager") or 1e-30, 1e-30))
    d, diff, scale = o["dtype"], o.get("max_abs_diff") or 0.0, o.get("max_abs_eager") or 0.0
    k = diff / (EPS.get(d, EPS["float32"]) * scale) if scale else None
    # eager's own error at the scale of all checked outputs (a passing output that cancels to ~0 has a huge error at
    # its own scale: review), in units of this dtype's eps
    e, top = o.get("rmse_eager_vs_fp64"), max((r.get("max_abs_eager") or 0.0) for r in measured)
    ke = e / (EPS.get(d, EPS["float32"]) * top) if top and e else 0.0
    if ke > ILL_CONDITIONED and low:
        from . import knowledge
        return knowledge.advice("reduced_matmul_precision", e=_fmt(e), ke=f"{ke:.2g}", what=low["what"],
                                state=low["state"], at=f"; set at {low['at']}" if low.get("at") else "",
                                tol=f"{2 * low['eps'] * top:.2g}")
    if ke > ILL_CONDITIONED:
        # eager itself is thousands of eps from fp64 (blind A/B batch 30: acos of a cosine near 1, where an eps tolerance
        # 5e5 wide was offered); torch's fp64 reference also skips low-precision round trips (autocast, fp8: review)
        return (f"eager is {_fmt(e)} RMSE from fp64 too ({ke:.2g} × eps × max|output|). A low-precision step on purpose "
                "(autocast, fp8): a tolerance at that dtype's eps × max|output|. Else an ill-conditioned step (acos/sqrt "
                "near a boundary, near-equal values subtracted): rewrite it (unit vectors' angle: 2·atan2(|a−b|, |a+b|)) "
                "or use float64")
    return ("compare both against an fp64 reference (compiled's error no larger than a few times eager's, as "
            "torch._dynamo.utils.same does); or a tolerance from the dtype's eps and the outputs' scale: here max "
            f"|compiled - eager| = {diff:.3g} on {d} outputs up to {scale:.3g}"
            + (f" = {k:.3g} × eps({d}) × max|output|, so atol ≈ {max(k * 2, 4):.0f} × eps × max|output| (twice that, "
               "at least 4)" if k else ""))

