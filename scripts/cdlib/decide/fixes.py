"""Verified fixes: findings of a triage report -> candidate fixes (knowledge/fixes.yaml) -> one
re-run of the unmodified program per candidate with the change injected by the startup hook ->
measured effect, ranked; then the best compatible set together. No torch import here."""
import concurrent.futures
import json
import os
import re
import time

from . import compare, extra_runs, knowledge, runs
from .fix_candidates import _cause_count
from ..run import proc
from ..cmdline import clip, script_of

# ---- trials -------------------------------------------------------------------------------

def run_trial(argv, trial_dir, steps, timeout, target_str):
    """One run of the unmodified program with `steps` injected, its own Inductor/Triton cache in
    the trial dir (all trials cold alike; the user's caches untouched). Returns the report dict."""
    os.makedirs(trial_dir, exist_ok=True)
    env = proc.private_cache_env(os.path.join(trial_dir, "inductor-cache"), os.path.join(trial_dir, "triton-cache"))
    if steps:
        env.update(proc.startup_env(trial_dir, steps))
    rep = runs.run_and_analyze(argv, trial_dir, timeout=timeout, env_add=env, tlparse=False)
    d = rep.to_dict()
    d["status"], d["target"] = rep.status, target_str
    with open(os.path.join(trial_dir, "report.json"), "w", encoding="utf-8") as fh:
        json.dump(d, fh, indent=1, default=str)
    d = compare.load_run(trial_dir)
    d["_timeout_given"] = timeout
    if steps:
        bad = proc.startup_failure(rep.artifacts.get("stderr"))
        d["_deferred"] = os.path.exists(os.path.join(trial_dir, "startup.applied.deferred"))
        d["_not_applied"] = bad or (None if os.path.exists(os.path.join(trial_dir, "startup.applied"))
                                    else "the program never imported torch")
    return d


def run_parallel(jobs, tasks, deadline, on_done):
    """tasks: [(name, fn(timeout) -> result)]; at most `jobs` at once; a task that would start after
    the deadline is not run (result None). on_done(name, result) is called as each finishes."""
    results = {}

    def wrap(name, fn):
        left = deadline - time.monotonic()
        if left < 5:
            return name, None
        return name, fn(left)

    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, jobs)) as ex:
        futs = [ex.submit(wrap, n, fn) for n, fn in tasks]
        for fut in concurrent.futures.as_completed(futs):
            name, res = fut.result()
            results[name] = res
            on_done(name, res)
    return results


# ---- effect of one trial ------------------------------------------------------------------

def effect(base, trial, ctrl, deterministic):
    """Measured effect of a trial vs the baseline (counts, output) and the control (timings: the
    control ran under the same parallel load and cache state as the trials)."""
    fb, ft = compare.facts(base), compare.facts(trial)
    fc = compare.facts(ctrl) if ctrl else fb
    e = {k: [fb[k], ft[k]] for k in ("graph_break_sites", "graph_break_hits", "recompiles", "recompile_limit_hit",
                                     "graphs", "ops")}
    e["unexpected_recompiles"] = [compare.unexpected_recompiles(base), compare.unexpected_recompiles(trial)]
    e["compile_time_s"] = [fc["compile_time_s"], ft["compile_time_s"]]
    e["wall_time_s"] = [fc["wall_time_s"], ft["wall_time_s"]]
    e["exit"] = [compare._exit(fb), compare._exit(ft)]
    fails = compare.run_ok(fb) and not compare.run_ok(ft)
    e["error"] = ft["first_error"] if (fails or (ft["first_error"] and not fb["first_error"])) else None
    if not deterministic:
        e["output"] = "not compared (program output differs between two plain runs)"
    else:
        nb, nt = compare.normalize_output(base.get("_stdout")), compare.normalize_output(trial.get("_stdout"))
        e["output"] = "unknown" if nb is None or nt is None else ("same" if nb == nt else "changed")
        if e["output"] == "changed":
            e["output_diff"] = compare._first_diff(nb, nt)
    d = lambda k: (e[k][0] or 0) - (e[k][1] or 0)  # noqa: E731  (positive = fewer)
    e["gain"] = round(10 * d("recompile_limit_hit") + 3 * d("graph_break_sites") + 2 * d("recompiles")
                      + d("graphs"), 3)
    e["compile_saved_s"] = round((e["compile_time_s"][0] or 0) - (e["compile_time_s"][1] or 0), 3)
    gb = compare.compare(base, trial)["graph_breaks"]
    e["breaks_fixed"] = gb["fixed"]
    if gb["fixed"] and gb["new"]:   # e.g. capture_scalar_outputs: the .item() is traced, the `if` on it breaks
        e["breaks_moved"] = {"fixed": gb["fixed"][:3], "new": gb["new"][:3]}
    e["fails"] = fails or bool(e["error"])
    return e


FALLBACK_RANDOM = extra_runs.FALLBACK_RANDOM


def draws_random(rep):
    """True when this run's Inductor code draws random numbers (the compiled_rng class of
    knowledge/semantics.yaml: its pattern): compiled RNG differs from eager's, so a fix that makes more of the
    program compiled changes what it prints for that reason alone."""
    from ..read import trace as tracemod
    tdir = os.path.join(rep.get("run_dir") or "", "trace")
    if not os.path.isdir(tdir):
        return False
    cls = next(c for c in knowledge.load("semantics")["classes"] if c["id"] == "compiled_rng")
    rx = re.compile(next(d["inductor_code"] for d in cls["detect"] if "inductor_code" in d))
    try:
        tr = tracemod.parse(tdir)
    except Exception:   # a trace we cannot read proves nothing
        return False
    return any(rx.search(e.payload or "") for e in tr.of("inductor_output_code"))


def gone(found, e, rep):
    """Indices of the baseline's findings that trial report rep no longer has (breaks matched as
    compare matches them: e["breaks_fixed"])."""
    return [i for i, f in enumerate(found)
            if (f["label"] in e["breaks_fixed"] if f["kind"] == "graph_break" else not _still_there(f, rep))]


def _still_there(f, rep):
    """Is recompile / limit-hit finding f (of the baseline) still in report dict rep?"""
    fn = f["params"].get("function")
    for r in rep.get("recompiles") or []:
        if r.get("function") != fn:
            continue
        if f["kind"] == "limit_hit" and r.get("limit_hit"):
            return True
        # fixed: no such recompile left, or only one where there were several (the value's first
        # change: with e.g. allow_unspec_int_on_nn_module, automatic dynamic then takes over)
        n = _cause_count(r, f["guard_kind"]) if f["kind"] == "recompile" else 0
        if n and not (n == 1 and (f.get("count") or 0) > 1):
            return True
    return False


def resolved(c):
    """The candidate's own findings that its trial no longer has (empty: it helped elsewhere, if at all)."""
    gone = set((c.get("effect") or {}).get("gone") or [])
    return [i for i in c["findings"] if i in gone]


def label(c):
    """The label shown for a tried candidate."""
    e = c.get("effect")
    if e is None:
        return c.get("label") or "not tried"
    if c.get("not_applied"):
        return "not applied"
    if e["fails"]:
        return "measured: makes the program FAIL"
    if e["output"].startswith("changed"):
        return "measured: changes the program's output"
    if c["diagnosis"]:
        return "diagnosis (measured; not a fix)"
    sites = e["graph_break_sites"]
    if e.get("breaks_moved") and (sites[1] or 0) >= (sites[0] or 0):
        return "measured: moves the break (as many break sites as before)"
    if e["gain"] > 0 and not resolved(c):
        return "measured: fewer graphs/recompiles, but its finding is still there (not a fix)"
    if e["gain"] > 0:
        return "verified (measured)"
    return "measured: no gain"


def is_good(c):
    return label(c) == "verified (measured)"


def rank_key(c):
    e = c.get("effect")
    if not e:
        return (3, 0, c.get("order", 0))
    tier = 0 if is_good(c) else (1 if not e["fails"] and not c.get("not_applied") else 2)
    # equal gains: the narrower fix first (order in fixes.yaml), not the noisy compile-time difference
    return (tier, -e["gain"], c.get("order", 0))


def credit_limit_hits(cands, found):
    """A verified fix of a function's recompiles that also ended its recompile-limit hit fixes that
    finding too (measured: fewer limit hits in its trial)."""
    for c in cands:
        e = c.get("effect")
        if not is_good(c) or not (e["recompile_limit_hit"][1] or 0) < (e["recompile_limit_hit"][0] or 0):
            continue
        funcs = {found[i]["params"].get("function") for i in c["findings"]}
        c["findings"] += [j for j, f in enumerate(found) if f["kind"] == "limit_hit"
                          and f["params"].get("function") in funcs and j not in c["findings"]]


# ---- combining ----------------------------------------------------------------------------

def combine(cands):
    """The best compatible set of good single fixes: one per group, no conflicting config values.
    Returns (members, merged steps, one code line)."""
    chosen, config, codes, steps_code = [], {}, [], []
    groups, covered = set(), set()
    for c in sorted((c for c in cands if is_good(c)), key=rank_key):
        if c["group"] in groups or set(resolved(c)) <= covered:
            continue  # an alternative to a chosen fix, or nothing left for it to fix
        merged = dict(config)
        ok = True
        for st in c["steps"]:
            for k, v in (st.get("config") or {}).items():
                if k not in merged or merged[k] == v:
                    merged[k] = v
                elif isinstance(v, list) and isinstance(merged[k], list):
                    merged[k] = merged[k] + [x for x in v if x not in merged[k]]
                elif isinstance(v, str) and k.endswith("dynamic_sources"):
                    merged[k] = merged[k] + "," + v
                else:
                    ok = False
        if not ok:
            continue
        config = merged
        groups.add(c["group"])
        covered.update(resolved(c))
        chosen.append(c)
        steps_code += [st["code"] for st in c["steps"] if st.get("code")]
        for ln in c["code"].split("; "):
            if ln not in codes:
                codes.append(ln)
    steps = ([{"config": config}] if config else []) + [{"code": s} for s in steps_code]
    for k, v in config.items():  # several dynamic sources: one assignment with all of them
        if k.endswith("dynamic_sources") and "," in v:
            codes = [ln for ln in codes if "dynamic_sources =" not in ln] + [f"{k} = {v!r}"]
    return chosen, steps, "; ".join(codes)


# ---- the result ---------------------------------------------------------------------------

def overridden(argv, steps):
    """A config the program's own script assigns after `import torch` overrides the injected value."""
    script = script_of(argv)
    if not script:
        return None
    try:
        src = open(script, encoding="utf-8", errors="replace").read()
    except OSError:
        return None
    for st in steps:
        for k in st.get("config") or {}:
            attr = k.rsplit(".", 1)[-1]
            m = re.search(rf"^.*\b{re.escape(attr)}\s*=[^=].*$", src, re.M)
            if m:
                return (f"{os.path.basename(script)} sets {attr} itself (`{m.group(0).strip()[:80]}`), which "
                        f"overrides the injected value; try it by editing that line")
    return None


def result(run_dir, tstr, base, ctrl, deterministic, found, cands, combo, elapsed, jobs):
    """The fix command's result: the candidates ranked by measured gain, the recommended set (combo), the
    findings no verified fix resolves (they need a code change)."""
    ranked = sorted(cands, key=rank_key)
    fixed_findings = {i for c in ranked if is_good(c) for i in resolved(c)}
    rows = []
    for c in ranked:
        rows.append({"id": c["id"], "title": c["title"], "label": label(c), "code": c["code"],
                     "findings": [found[i]["label"] for i in c["findings"]], "effect": c.get("effect"),
                     "trial_dir": c.get("trial_dir"), "not_applied": c.get("not_applied"), "steps": c["steps"],
                     "note": c.get("note")})
    code_changes = []
    for i, f in enumerate(found):
        if i in fixed_findings:
            continue
        tried_here = [f"{c['id']} ({label(c)})" for c in ranked if i in c["findings"] and c.get("effect")]
        code_changes.append({"finding": f["label"], "at": f["where"], "line": f["code"], "pytorch_hints": f["hints"],
                             "config_fixes_tried": tried_here,
                             "edit": clip(" ".join((f["recipe"] or "").split()), 400), "edit_code": f["recipe_code"],
                             "label": "not tried (needs a code change)"})
    return {"command": "fix", "run_dir": run_dir, "target": tstr,
            "status": "verified" if fixed_findings else ("no-findings" if not found else "no-verified-fix"),
            "baseline": compare.facts(base) | {"run_dir": base.get("run_dir")},
            "control_run": ctrl.get("run_dir") if ctrl else None,
            "deterministic": deterministic, "findings": len(found), "findings_with_verified_fix": len(fixed_findings),
            "fixes": rows, "recommended": combo, "code_changes": code_changes,
            "elapsed_s": round(elapsed, 1), "jobs": jobs,
            "notes": ["compile s / wall s are cold-cache times (each run has its own empty Inductor/Triton "
                      "cache dir), measured with the control run under the same parallel load: compare them within "
                      "this table, not with triage's (warm-cache) times"]}
