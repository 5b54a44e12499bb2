"""Before/after of two triage runs (report.json of each run dir): graph breaks fixed / still there /
new, recompiles and their causes, graphs, ops, compile and wall time, exit status, first error and
whether the program's printed output changed. Reads report dicts defensively (dict.get) so older
and newer report.json files both work. No torch import."""
import json
import os
import re

from .printed import _NOT_VALUES, compare_outputs as _compare_numbers, mask_times, printed as _printed, tail as _tail
from . import knowledge
from ..errors import CliError
from ..cmdline import clip

# ---- loading ------------------------------------------------------------------------------


def load_run(path, what="compare"):
    """A triage run dir (or its report.json) -> the report dict, with "_stdout" (the program's output). `what` names
    the caller in the errors (compare, fix --from)."""
    p = os.path.abspath(os.path.expanduser(path))
    rj = p if p.endswith(".json") else os.path.join(p, "report.json")
    if not os.path.isfile(rj):
        raise CliError(f"{path}: no report.json (give the run dir of a triage run)")
    try:
        with open(rj, encoding="utf-8") as f:
            rep = json.load(f)
    except ValueError as e:
        raise CliError(f"{rj}: not a JSON report ({e})")
    if isinstance(rep, dict) and rep.get("command") == "compile-time":
        raise CliError(f"{path} is a compile-time run: " + (
            "compare it with another compile-time run (BEFORE and AFTER of the same command)" if what == "compare"
            else f"{what} takes a triage run dir (or give the command itself: fix -- <command>)"))
    other = rep.get("command") if isinstance(rep, dict) and isinstance(rep.get("command"), str) else None
    if other and other != "triage":   # (a triage report's "command" is the program's argv; blind A/B batch 29: a
        # perf run dir given to compare crashed on its counts)
        raise CliError(f"{path} is a {other} run, not a triage run: {what} takes the run dir of `triage -- <command>`"
                       + (" (or give the command itself: fix -- <command>)" if what != "compare" else
                          " (after an edit, run perf again to measure it)" if other == "perf" else ""))
    if not isinstance(rep, dict) or "graph_breaks" not in rep:
        raise CliError(f"{rj}: not a triage report (no graph_breaks); {what} takes triage run dirs")
    run_dir = os.path.dirname(rj)
    out = (rep.get("artifacts") or {}).get("stdout") or os.path.join(run_dir, "target.stdout")
    if not os.path.isfile(out):
        out = os.path.join(run_dir, "target.stdout")
    err = (rep.get("artifacts") or {}).get("stderr") or os.path.join(run_dir, "target.stderr")
    rep["_stdout"] = _read(out)
    # what the program printed: stdout and its own stderr lines (logging), torch's lines left out (compare
    # reads this; fix's trials compare stdout only: a trial that drops a logging call is not "changed")
    rep["_stderr"] = _read(err) or ""
    rep["_printed"] = None if rep["_stdout"] is None else _printed(rep["_stdout"], rep["_stderr"])
    # the same command without torch.compile, when triage ran it (--vs-eager, or the eager check of a failure)
    arts = rep.get("artifacts") or {}
    eager_out = _read(arts["eager_check_stdout"]) if arts.get("eager_check_stdout") else None
    rep["_eager_printed"] = None if eager_out is None else _printed(eager_out, _read(arts.get("eager_check_stderr") or "") or "")
    rep.setdefault("run_dir", run_dir)
    return rep


def _within_rounding(a, b):
    """Two normalized outputs with the same lines, numbers within √eps (printed.compare_outputs' rule)."""
    if not a or b is None or len(a) != len(b):
        return False
    return a == b or not _compare_numbers("\n".join(a), "\n".join(b))["differ"]


def _matches_eager(before, out_a):
    """The after run prints what the before run's program printed without torch.compile: a change meant to
    make compiled match eager did. False when triage never ran it eagerly."""
    return _within_rounding(normalize_output(before.get("_eager_printed")), out_a)


_NUMS = re.compile(r"(-?[\d.]+(?:e[-+]?\d+)?) vs (-?[\d.]+(?:e[-+]?\d+)?)")


_EXPLAIN_COUNTS = re.compile(r"(?i)graph|break|captured|\bops?\b|op_count")


def _unlike_eager(before, out_a, rel=0.01, skip=None):
    """The first line where the after run prints a number more than `rel` away from the before run's eager check
    ({compiled, eager, why}), or None: lines only one side prints, and rounding-sized differences (compiled random
    numbers in a training log), do not count. skip: a regex of lines left out on both sides."""
    e = normalize_output(before.get("_eager_printed"))
    if skip is not None:
        e = [ln for ln in e or [] if not skip.search(ln)]
        out_a = [ln for ln in out_a or [] if not skip.search(ln)]
    if not e or not out_a:
        return None
    c = _compare_numbers("\n".join(out_a), "\n".join(e), show=50)
    for f in c.get("first") or [] if c["differ"] else []:
        m = _NUMS.match(f.get("why") or "")
        a, b = (float(m.group(1)), float(m.group(2))) if m else (0.0, 0.0)
        # not timings, memory or sizes (printed's rule), not values near zero (a gradient mean's 1e-9 noise)
        if m and not _NOT_VALUES.search(f.get("compiled") or "") and max(abs(a), abs(b)) > 1e-6 \
                and abs(a - b) > rel * max(abs(a), abs(b)):
            return {"compiled": f.get("compiled"), "eager": f.get("eager"), "why": f.get("why")}
    return None


def _read(path):
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read()
    except OSError:
        return None


# ---- normalized facts of one run ----------------------------------------------------------

def normalize_output(text):
    """The program's stdout, line by line, with clock stamps, timings and object addresses masked (they
    differ run to run; the rest of each line, e.g. `kept=4638 dropped=482` after a log timestamp, is
    compared). None stays None (no output captured)."""
    if text is None:
        return None
    return [" ".join(mask_times(ln).split()) for ln in text.splitlines()]   # column padding around a timing too


def _ws(s):
    return " ".join(str(s or "").split())


def break_key(b):
    """Match key of a graph break across runs and edits: registry id (or title), the source line's
    text and the function - not the line number, which shifts when lines above are edited."""
    loc = b.get("location") or {}
    return (b.get("gb_id") or _ws(b.get("gb_type")), _ws(loc.get("code")), loc.get("function") or "")


def _same_expr(before, after):
    """The edited line still holds the expression that broke: the right-hand side of one line is in the other
    (`T = int(lengths.max())` → `T = items.shape[1] if lengths is None else int(lengths.max())`), not just the
    same break id in the same function (review: a fixed break exposing another .item() further down)."""
    rb, ra = (re.sub(r"^[^=]*[^=!<>]=(?!=)", "", x or "").strip() for x in (before, after))
    return bool(rb and ra) and (rb in (after or "") or ra in (before or ""))


def different_programs(target_b, target_a):
    """A note when two runs' commands name different .py scripts, else None."""
    scripts = [next((os.path.basename(w) for w in (t or "").split() if w.endswith(".py")), None)
               for t in (target_b, target_a)]
    return (f"the two runs are of different programs ({scripts[0]} vs {scripts[1]})"
            if all(scripts) and scripts[0] != scripts[1] else None)


def _fn_key(name):
    """A compiled function's name without line numbers (a resume function's break line shifts with edits)."""
    return re.sub(r"\d+", "#", name or "") or None


_FALLBACK_RE = re.compile(r"\bGB0219\b|Backend compiler exception")


def compile_fallback(before, after, new):
    """The backend's error where the after run has a new graph break that is a backend compiler failure (Dynamo falls
    back to eager for that frame: GB0219, with a "WON'T CONVERT" line), else None."""
    if not any(_FALLBACK_RE.search(x) for x in new or ()):
        return None
    if any(b.get("gb_id") == "GB0219" for b in before.get("graph_breaks") or []):   # it failed before the edit too
        return None   # (the break is placed at the caller's line: editing that line made it look new; review)
    b = next((b for b in after.get("graph_breaks") or [] if b.get("gb_id") == "GB0219"), None)
    text = " ".join(((b or {}).get("explanation") or "a backend compiler exception").split())
    return clip(text.split(" While executing ")[0].split(" Original traceback:")[0], 220)


def break_label(b):
    loc = b.get("location") or {}
    where = f"{os.path.basename(loc.get('file') or '?')}:{loc.get('line') or '?'}"
    code = f" `{clip(loc.get('code'), 70)}`" if loc.get("code") else ""
    label = f"{where}{code} — {b.get('gb_id') or ''} {clip(b.get('gb_type'), 70)}".replace("—  ", "— ")
    return label + (" (torch's own, expected)" if expected_break(b) else "")


def _guard_shape(g):
    return re.sub(r"-?\d+(\.\d+)?", "#", g or "")


def recompile_causes(f):
    """Distinct causes of one function's recompiles: [(kind, guard pattern, count)]. Uses grouped
    causes when the report has them, else groups the guard failures itself."""
    if isinstance(f.get("causes"), list) and f["causes"]:
        out = []
        for c in f["causes"]:
            if isinstance(c, dict):
                # the recompiles this cause started (as triage counts them: `×N`), not every entry it failed against
                n = c.get("primary") if c.get("primary") is not None else (c.get("count") or c.get("recompiles") or 1)
                if n or not c.get("expected"):
                    out.append((c.get("kind") or "?" if not c.get("expected") else f"{c.get('kind') or '?'}, expected",
                                clip(c.get("guard") or c.get("pattern") or c.get("title") or "", 90), n))
        if out:
            return out
    groups = {}
    for r in f.get("recompiles") or []:
        g = (r.get("failures") or [None])[0]
        if not g:
            continue
        k = (g.get("kind") or "?", _guard_shape(g.get("guard")))
        groups.setdefault(k, [0, g.get("guard")])
        groups[k][0] += 1
    return [(k[0], clip(v[1], 90), v[0]) for k, v in groups.items()]


def facts(rep):
    """The comparable facts of one report dict."""
    st = rep.get("stats") or {}
    errs = rep.get("errors") or []
    e0 = errs[0] if errs else None
    funcs = []
    for f in rep.get("recompiles") or []:
        n = len(f.get("recompiles") or [])
        if n or f.get("limit_hit"):
            loc = f.get("location") or {}
            funcs.append({"function": f.get("function"), "code": _ws(loc.get("code")), "recompiles": n,
                          "compiles": f.get("compiles"), "limit_hit": bool(f.get("limit_hit")),
                          "causes": [{"kind": k, "guard": g, "count": c} for k, g, c in recompile_causes(f)]})
    breaks = rep.get("graph_breaks") or []
    return {
        "run_dir": rep.get("run_dir"),
        "target": rep.get("target"),
        "exit_code": rep.get("exit_code"),
        "signal": rep.get("signal"),
        "timed_out": bool(rep.get("timed_out")),
        "status": rep.get("status"),
        "verdict": rep.get("verdict"),
        "graph_break_sites": len(breaks),
        "graph_break_hits": sum(b.get("count") or 1 for b in breaks),
        "recompiles": st.get("recompiles", sum(f["recompiles"] for f in funcs)),
        "recompile_limit_hit": st.get("recompile_limit_hit", sum(1 for f in funcs if f["limit_hit"])),
        "unexpected_recompiles": unexpected_recompiles(rep),
        "graphs": st.get("graphs", len(rep.get("graphs") or [])),
        "ops": st.get("ops"),
        "compile_time_s": st.get("compile_time_s"),
        "cache_hits": (st.get("fx_graph_cache_hits") or 0) + (st.get("aotautograd_cache_hits") or 0),
        "wall_time_s": st.get("wall_time_s", rep.get("duration_s")),
        "first_error": ({"type": e0.get("type"), "message": clip((e0.get("message") or "").splitlines()[0]
                                                                 if e0.get("message") else "", 200),
                         "category": e0.get("category"), "inner": _inner(e0)} if e0 else None),
        "recompiling_functions": funcs,
    }


def _inner(e):
    """The real failure inside torch.compile's wrapper exception ("InductorError: ..." inside
    BackendCompilerFailed), as "Type: first line"; None when the error is not wrapped."""
    i = e.get("inner") or {}
    msg = next((ln for ln in (i.get("message") or "").splitlines() if ln.strip()), "")
    return f"{i['type']}: {clip(msg, 160)}" if i.get("type") else None


def unexpected_recompiles(rep):
    """Recompiles that triage did not mark as one-time recompiles torch expects (None: unknown)."""
    funcs = rep.get("recompiles") or []
    if any(not isinstance(f.get("causes"), list) for f in funcs if f.get("recompiles")):
        return None
    return sum(c.get("primary") or 0 for f in funcs for c in f.get("causes") or [] if not c.get("expected"))


def expected_break(gb):
    """A break torch makes on purpose (optimizer.step, DDP's and FSDP's hooks: the wrappers of
    knowledge/graph_breaks.yaml): nothing of the user's to fix."""
    return bool((gb.get("fix") or {}).get("wrapper")) or (gb.get("category") or "").endswith("(expected)")


def run_ok(f):
    return f["exit_code"] == 0 and not f["timed_out"] and not f["signal"]


# ---- before / after -----------------------------------------------------------------------

def compare(before, after):
    """Two report dicts -> one JSON-safe comparison dict."""
    fb, fa = facts(before), facts(after)
    bb, ba = list(before.get("graph_breaks") or []), list(after.get("graph_breaks") or [])
    fixed, still, new = [], [], []
    remaining = list(ba)
    # exact key first; then the same id and line text in another function; then the same id in the same function
    # and file with the line's text edited (blind A/B batch 21: `T = int(lengths.max())` rewritten as a
    # conditional expression, moved out of a try, was listed as a NEW break)
    for loose in (0, 1, 2):
        for b in list(bb):
            kb = break_key(b)
            for a in remaining:
                ka = break_key(a)
                if ka == kb or (loose == 1 and ka[:2] == kb[:2]) or (
                        loose == 2 and ka[0] == kb[0] and ka[2] == kb[2] and kb[2] and _same_expr(kb[1], ka[1])
                        and (a.get("location") or {}).get("file") == (b.get("location") or {}).get("file")):
                    still.append({"before": break_label(b), "after": break_label(a),
                                  "count": [b.get("count"), a.get("count")]}
                                 | ({"edited": True} if loose == 2 else {}))
                    remaining.remove(a)
                    bb.remove(b)
                    break
    fixed = [break_label(b) for b in bb]
    new = [break_label(a) for a in remaining]
    # the before run stopped at its error: a break first seen after it is one that run may never have
    # reached, not one the change made (blind A/B batch 14: an optimizer-step break listed as NEW after a
    # crash fix looked like a regression)
    reached = []
    if not run_ok(fb) and run_ok(fa):
        compiled_before = {_fn_key(g.get("function")) for g in before.get("graphs") or []}
        by_id = {g.get("compile_id"): _fn_key(g.get("function")) for g in after.get("graphs") or []}
        for a in remaining:
            fns = {by_id.get(cid) for cid in a.get("frames") or []} - {None}
            if fns and not fns & compiled_before:    # its function never compiled before: never reached there
                reached.append(break_label(a))
        new = [x for x in new if x not in reached]
    out_b, out_a = (normalize_output(r.get("_printed", r.get("_stdout"))) for r in (before, after))
    if out_b is None or out_a is None:
        output = "unknown (no captured output)"
    else:
        output = "same" if out_b == out_a else "changed"
        if output == "changed" and run_ok(fb) and run_ok(fa) and _within_rounding(out_b, out_a):
            output = "same within rounding (numbers within √eps of float32)"
        elif output == "changed" and run_ok(fb) and run_ok(fa) and _only_timing_lines(out_b, out_a):
            # a slow-request warning that went away (blind A/B batch 50: read as the results changing)
            output = "same results; only lines reporting times appear or go (e.g. a slow-step warning)"
        if not out_b and not out_a:
            output = "nothing printed in either run"
        elif output == "changed" and not run_ok(fb) and run_ok(fa) and out_a[:len(out_b)] == out_b:
            output = "now complete (the before run failed)"   # the crashed run's lines are all still there
        elif output == "same" and run_ok(fb) != run_ok(fa):
            output = f"same lines printed, but the {'before' if run_ok(fa) else 'after'} run failed"
        if output == "changed" and run_ok(fa) and _matches_eager(before, out_a):
            output = EAGER_NOW
    diff = _first_diff(out_b, out_a) if output != "same" and not output.startswith("unknown") else None
    rec = _recompile_diff(fb["recompiling_functions"], fa["recompiling_functions"])
    note = different_programs(fb["target"], fa["target"])
    if not note and not run_ok(fa) and fa.get("cache_hits") and not run_ok(fb) \
            and (fb["first_error"] or {}).get("type") == (fa["first_error"] or {}).get("type"):
        # blind A/B: a custom op's fixed mutates_args looked like a failed fix, the cache served the old graph
        note = (f"the after run still fails, and it reused {fa['cache_hits']} compiled graph(s) from the Inductor "
                f"cache (FX graph / AOTAutograd cache hits): {knowledge.advice('stale_compile_cache')}")
    verdict_ = verdict(fb, fa, fixed, new, output)
    fell = compile_fallback(before, after, new)
    if fell:
        # fewer recompiles or graphs because the edit made the compiler fail and Dynamo ran that code eagerly (blind
        # A/B batch 50: an enum passed as a 0-d tensor index; "recompiles 8 -> 0" read as the fix, one more round)
        verdict_ = ("worse: the compiler now fails on a graph and Dynamo runs that code eagerly (fewer recompiles or "
                    f"graphs are not a fix): {fell}")
    # (not where the before run failed without torch.compile too and printed what eager printed: eager's numbers were
    # the bug's, and the fix had to change them; blind A/B batch 64: a float32 cdist audit fixed, "unlike eager" cost
    # a --vs-eager run. A compiled run that already printed other numbers than eager keeps the check: review)
    eager_failed = ((fb.get("verdict") or {}).get("kind") in ("fails_eager_too", "before_compile")) and \
        _within_rounding(normalize_output(before.get("_eager_printed")), out_b)
    # (where the program calls torch._dynamo.explain, its lines of graph and break counts are left out: explain traces
    # under any stance, so the eager check's counts were Dynamo's too; blind A/B batch 66: "graphs=0 graph_breaks=-1"
    # held up to a fix. Its other lines, a loss, still count: review of batch 66)
    explain = bool((fb.get("verdict") or {}).get("explain_call"))
    unlike = _unlike_eager(before, out_a, skip=_EXPLAIN_COUNTS if explain else None) \
        if not run_ok(fb) and run_ok(fa) and output != EAGER_NOW and not eager_failed else None
    if unlike:
        # a fix that makes a failing compiled run finish may uncover numbers eager never printed (blind A/B batch 48:
        # detaching a logged statistic ended a compile error; the mixup Inductor then computed was silently wrong)
        verdict_ += (f"; but its numbers are unlike what the program printed without torch.compile (the triage's eager "
                     f"check, before your edit): `{clip(unlike['compiled'], 80)}` vs `{clip(unlike['eager'], 80)}`; "
                     "unless your edit changed the math, compare compiled with eager now (triage --vs-eager)")
    return {"before": {k: v for k, v in fb.items() if k != "recompiling_functions"},
            "after": {k: v for k, v in fa.items() if k != "recompiling_functions"},
            "graph_breaks": {"fixed": fixed, "still": still, "new": new, "reached": reached},
            "recompiles": rec, "output": output, "output_diff": diff, "unlike_eager": unlike,
            "verdict": verdict_, "note": note,
            # what the after run printed last: the fix's own run, so that no second run is needed to see it
            "after_printed": dict(zip(("tail", "lines"), _tail(after.get("_stdout") or "", after.get("_stderr") or "",
                                                              _first_line(((after.get("errors") or [{}])[0] or {}).get("message")))))}


def _first_line(text):
    return next((ln.strip() for ln in (text or "").splitlines() if ln.strip()), None)


EAGER_NOW = "changed: now what the program printed without torch.compile (the before run's eager check)"


_MEASURED = re.compile(r"\d\.\d|\d[eE][-+]?\d|\bnan\b|\binf\b|\d\s*/\s*\d|\d+ of \d+|mismatch|fail|error|differ|"
                       r"not close", re.I)


def _only_timing_lines(a, b):
    """Whether the two outputs (lists of lines, times masked as <time>) differ only by whole lines that appear or go
    and report a time and no measured value besides it (`req 3 (n=253) took <time>`): the lines both have are the
    same, in order. A line whose values changed (`step 10 loss 0.7076 <time>` -> `... 0.6851 <time>`) or one with a
    float in it is a change (batch 51: a loss-gap fix was called "only lines reporting times")."""
    import difflib
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes():
        if tag == "equal":
            continue
        if tag == "replace" or not all("<time>" in ln and not _MEASURED.search(ln.replace("<time>", ""))
                                       for ln in a[i1:i2] + b[j1:j2]):
            return False
    return True


def _first_diff(a, b):
    for i in range(max(len(a), len(b))):
        x = a[i] if i < len(a) else "<no line>"
        y = b[i] if i < len(b) else "<no line>"
        if x != y:
            return {"line": i + 1, "before": clip(x, 160), "after": clip(y, 160)}
    return None


def _recompile_diff(fb, fa):
    rows = []
    key = lambda f: (f["function"], f["code"])  # noqa: E731
    am = {key(f): f for f in fa}
    for f in fb:
        a = am.pop(key(f), None)
        rows.append({"function": f["function"], "before": f["recompiles"], "after": a["recompiles"] if a else 0,
                     "limit_hit": [f["limit_hit"], bool(a and a["limit_hit"])],
                     "causes_before": f["causes"], "causes_after": a["causes"] if a else []})
    for a in am.values():
        rows.append({"function": a["function"], "before": 0, "after": a["recompiles"],
                     "limit_hit": [False, a["limit_hit"]], "causes_before": [], "causes_after": a["causes"]})
    return rows


def verdict(fb, fa, fixed, new, output):
    """One line: did the change work?"""
    if run_ok(fb) and not run_ok(fa):
        return "worse: the program now fails"
    eb, ea = fb.get("first_error") or {}, fa.get("first_error") or {}
    if not run_ok(fb) and not run_ok(fa) and ea.get("type") and (eb.get("type"), eb.get("message")) != \
            (ea.get("type"), ea.get("message")):
        # not "better" for the break it fixed (blind A/B batch 35: sparse values() views passed in removed the
        # fullgraph break, then Dynamo raised IndexError on their sparse base; compare said "better")
        gone = "; the earlier error is gone" + (f" ({len(fixed)} graph break site(s) fixed)" if fixed else "")
        return (f"still fails, with another error now: {ea['type']}: {clip(ea.get('message') or '', 140)}" + gone)
    # recompiles triage marks as one-time and expected (automatic dynamic, a grad-mode switch, ...) do not count
    known = fb.get("unexpected_recompiles") is not None and fa.get("unexpected_recompiles") is not None
    rb, ra = ((fb["unexpected_recompiles"], fa["unexpected_recompiles"]) if known
              else (fb["recompiles"] or 0, fa["recompiles"] or 0))
    better = bool(fixed) or ra < rb \
        or (fa["recompile_limit_hit"] or 0) < (fb["recompile_limit_hit"] or 0) or (not run_ok(fb) and run_ok(fa))
    worse = bool(new) or ra > rb or _limit_worse(fb, fa)
    if output == EAGER_NOW and not new and not _limit_worse(fb, fa) and (fa.get("graphs") or 0) > 0:
        # the goal of a wrong-results fix, still compiled (graphs > 0); a recompile it adds is named, not
        # called a regression (blind A/B batch 11: an identity guard on a sentinel read "worse" and sent the
        # agent to `fix`)
        more = f"; recompiles {rb} → {ra} (check they stay few)" if ra > rb else ""
        return "better: output now matches eager" + more
    tail = "; output changed" if output == "changed" else "; output now matches eager" if output == EAGER_NOW else ""
    if tail and not run_ok(fb) and run_ok(fa):   # of course: the failed run stopped early
        tail = "; it now runs to the end (so its output differs from the failed run's)"
    cb, ca = fb.get("compile_time_s"), fa.get("compile_time_s")
    if new and not better and ra <= rb and not _limit_worse(fb, fa) and run_ok(fa) and cb and ca is not None \
            and ca <= cb / 2:
        # a break made on purpose to keep a module out of the graph (blind A/B batch 22: allow_rnn=True removed, the
        # LSTM breaks again and compile time fell 290 → 46 s) is a trade, not a regression
        return (f"mixed: new graph break(s), compile time {cb:.0f} → {ca:.0f} s (a break made on purpose, to run a "
                "module eagerly, is that trade)" + tail)
    if better and not worse:
        return "better" + tail
    if better and worse:
        return "mixed: some findings fixed, others new" + tail
    if worse:
        return "worse: new graph breaks or recompiles" + tail
    tb, ta = fb["recompiles"] or 0, fa["recompiles"] or 0
    if known and tb != ta:   # only recompiles triage calls expected changed: say so, not "no change"
        return f"no change in unexpected breaks or recompiles; expected recompiles {tb} → {ta}" + tail
    return "no change in breaks or recompiles" + tail


def _limit_worse(fb, fa):
    """More recompile-limit hits after than before."""
    return (fa["recompile_limit_hit"] or 0) > (fb["recompile_limit_hit"] or 0)


def done(res):
    """A compare that needs no further step: the output now matches eager, still compiled, with no graph
    break left or new and no limit hit."""
    g = res["graph_breaks"]
    return res["output"] == EAGER_NOW and res["verdict"].startswith("better") and not g["still"] and not g["new"] and not g.get("reached")


def fix_left(res, after):
    """Whether `fix --from` (the no-code-edit fixes) has something left to try after this compare: a graph break
    that is not torch's own (optimizer.step's are on purpose: blind A/B batch 32 was offered `fix` for them), or
    recompiles triage does not call expected; nothing when the compare is done."""
    g = res["graph_breaks"]
    breaks = (g["still"] or g["new"] or g.get("reached")) and any(not expected_break(b)
                                                                   for b in after.get("graph_breaks") or [])
    left = unexpected_recompiles(after)
    if res["verdict"].startswith("worse: the compiler now fails"):   # the edit is the thing to change, not a config
        return False
    return bool(breaks or (left if left is not None else res["after"]["recompiles"])) and not done(res)


def _exit(f):
    if f["timed_out"]:
        return "timed out"
    if f["signal"]:
        return f["signal"]
    return f"exit {f['exit_code']}" if f["exit_code"] is not None else "recorded trace"
