"""The extra measurements a compiled-vs-eager comparison (vs_eager.compare_with_eager) makes on the differences
it found: padding under the transformer fast path, a non-finite value's first graph, random draws, and the
program's round(decimals=) calls and Tensor-subclass handlers named. No torch import here."""
import os

from . import accuracy_check, knowledge, printed, verdict
from .extra_runs import _run_changed, run_fallback_random
from .program_code import program_files as _program_files, read_text as _read_text
from ..run import proc
from ..cmdline import clip

# Inductor's random ops as eager's: a startup step (proc.startup_env); fix's re-check uses it too
def _padding_measured(rep, found, argv, run_dir, timeout, env_add, compiled_out, eager_out, dtypes):
    """The class transformer_fastpath_padding, offered for a difference from the source alone (a TransformerEncoder
    with a padding mask), measured by one more run without torch.compile and with the fast path off (the dense path
    compiled code runs). Printing what the compiled run printed confirms it. Printing what eager printed does not
    rule it out (a row whose mask hides every key is NaN compiled, while eager's dense path returns zeros there too:
    SDPA's safe softmax), so the finding stays, said unconfirmed and after the other classes found (blind A/B batch
    52: a calibration temperature a stale graph ignored was put down to padded positions, first in Next).
    -> found, reordered."""
    f = next(f for f in found if f["id"] == "transformer_fastpath_padding")
    if any(n.startswith("with nn.TransformerEncoder's fast path off (one more run) the program still fails")
           for n in rep.notes):   # measured already on the failure (extra_runs.check_fastpath), which dropped it
        rep.semantics = [x for x in rep.semantics if x["id"] != f["id"]]
        return [x for x in found if x is not f]
    proc.progress("the difference may be nn.TransformerEncoder's eval fast path (padded positions): one more run "
                  "without torch.compile, with the fast path off")
    env = proc.startup_env(run_dir, [{"stance": "force_eager"}, {"code": verdict.KEEP_EAGER},
                                     {"code": "torch.backends.mha.set_fastpath_enabled(False)"}], name="eager_fastpath_off")
    r = _run_changed(argv, os.path.join(run_dir, "eager_fastpath_off"), timeout, env_add, env)
    if r.timed_out:
        return found
    out = printed.printed(_read_text(r.stdout_path), _read_text(r.stderr_path))
    if not printed.compare_outputs(out, compiled_out, dtypes)["differ"]:
        f["measured"] = "without torch.compile, with the fast path off, it prints what the compiled run prints"
        f["why"] += (" Measured: without torch.compile and with torch.backends.mha.set_fastpath_enabled(False) the "
                     "program prints what the compiled run prints (one more run).")
        return found
    if not printed.compare_outputs(out, eager_out, dtypes)["differ"]:
        f["why"] += (" Not confirmed: without torch.compile and with the fast path off (one more run) the program prints "
                     "what it prints with it on, so only rows whose mask hides every key can differ for this reason.")
        rep.semantics = [x for x in rep.semantics if x["id"] != f["id"]] + [x for x in rep.semantics if x["id"] == f["id"]]
        return [x for x in found if x is not f] + [f]
    return found


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


def _round_words(rep):
    """' ' + the round(decimals=) lead when the program rounds with decimals (Inductor's decomposition differs)."""
    from .program_code import round_decimals_calls
    found = round_decimals_calls(_program_files(rep))
    if not found:
        return ""
    return " " + knowledge.advice("round_decimals_decomposed", at=", ".join(
        f"{os.path.basename(p_)}:{ln} `{clip(code, 70)}`" for p_, ln, code in found[:2]))


def _subclass_words(rep):
    """' ' + the subclass-handler lead when the program's Tensor subclass calls an op inside its __torch_function__."""
    from .program_code import subclass_handler_ops
    found = subclass_handler_ops(_program_files(rep))
    if not found:
        return ""
    p_, ln, cls, op = found[0]
    return " " + knowledge.advice("subclass_handler_ops", cls=cls, op=op, at=f"{os.path.basename(p_)}:{ln}")


def _rng_explains(rep, argv, run_dir, timeout, env_add, eager_stdout, dtypes):
    """compiled_rng is the only class the difference shows: one more compiled run with Inductor's random ops as
    eager's (fallback_random = True). The same output as eager then: random numbers explain it (True). Still
    different: they do not, and the class goes (blind A/B batch 24: an EfficientNet's backbone gradients 256x
    too small compiled, an Inductor bug, had "dropout draws other numbers" as Next 1)."""
    proc.progress("the compiled graphs draw random numbers: one more compiled run with fallback_random=True "
                  "(eager's random ops): do they explain the difference?")
    r = run_fallback_random(argv, run_dir, timeout, env_add)
    if r.timed_out or r.interrupted:
        return True   # not measured: the class stays, with its own check
    rep.artifacts.update({"fallback_random_stdout": r.stdout_path, "fallback_random_stderr": r.stderr_path})
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
