"""Verified fixes: findings of a triage report -> candidate fixes (knowledge/fixes.yaml) -> one
re-run of the unmodified program per candidate with the change injected by the startup hook ->
measured effect, ranked; then the best compatible set together. No torch import here."""
import concurrent.futures
import json
import os
import re
import time

from . import compare, knowledge, runs
from ..run import proc
from ..cmdline import clip, script_of

# ---- findings -----------------------------------------------------------------------------


def _lib_frame(b):
    """(module, func) of the innermost installed-library frame of a graph break, if the report
    has the frames (newer reports: `stack`; `library`/`in_library` flags)."""
    if not (b.get("in_library") or b.get("library")):
        return None
    for fr in reversed(b.get("stack") or b.get("frames_full") or []):
        if not isinstance(fr, dict):
            continue
        path = (fr.get("file") or "").replace("\\", "/")
        m = re.search(r"/(?:site|dist)-packages/(.+)\.py$", path)
        func = fr.get("function") or ""
        if m and not m.group(1).startswith("torch/") and re.fullmatch(r"[A-Za-z_]\w*", func):
            mod = m.group(1).replace("/", ".")
            mod = mod[: -len(".__init__")] if mod.endswith(".__init__") else mod
            return mod, func
    return None


def findings(rep):
    """Every finding of a report dict: [{kind, label, text, where, params, recipe}]."""
    out = []
    for b in rep.get("graph_breaks") or []:
        loc = b.get("location") or {}
        text = "\n".join([b.get("gb_id") or "", b.get("gb_type") or "", b.get("explanation") or ""]
                         + [str(h) for h in b.get("hints") or []])
        params = {"function": loc.get("function") or "?"}
        lib = _lib_frame(b)
        if lib:
            params.update(module=lib[0], func=lib[1])
        fx = b.get("fix") or {}
        # a break in library code: the library setting that avoids the path (knowledge) beats the generic recipe
        lib_setting = next((w["text"] for w in b.get("workarounds") or [] if w.get("source") == "knowledge"), None)
        out.append({"kind": "graph_break", "label": compare.break_label(b), "text": text, "library": bool(lib),
                    "where": _where(loc), "code": loc.get("code"), "params": params,
                    "hints": list(b.get("hints") or [])[:2], "recipe": lib_setting or fx.get("fix"), "recipe_code": None if lib_setting else fx.get("code")})
    for f in rep.get("recompiles") or []:
        loc = f.get("location") or {}
        # one-time recompiles torch expects (triage marks them) are not findings to fix
        expected = {c.get("kind") for c in f.get("causes") or [] if c.get("expected")} - \
            {c.get("kind") for c in f.get("causes") or [] if not c.get("expected")}
        by_kind = {}
        for r in f.get("recompiles") or []:
            g = (r.get("failures") or [None])[0]
            if g and (g.get("kind") or "other") not in expected:
                by_kind.setdefault(g.get("kind") or "other", g)
        fixes = {x.get("kind"): x.get("fix") for x in f.get("fixes") or []}
        for kind, g in by_kind.items():
            gl = g.get("location") or loc
            out.append({"kind": "recompile", "guard_kind": kind, "count": _cause_count(f, kind), "label": f"recompiles of {f.get('function')} "
                        f"[{kind}] `{clip(g.get('guard'), 80)}`", "text": g.get("guard") or "",
                        "where": _where(gl), "code": gl.get("code"), "params": {"function": f.get("function") or "?"},
                        "hints": [g["hint"]] if g.get("hint") else [], "recipe": fixes.get(kind), "recipe_code": None})
        if f.get("limit_hit"):
            out.append({"kind": "limit_hit", "label": f"{f.get('function')} hit the recompile limit "
                        f"({f.get('limit') or '?'}) and runs eagerly", "text": f.get("function") or "",
                        "where": _where(loc), "code": loc.get("code"), "params": {"function": f.get("function") or "?"},
                        "hints": [], "recipe": fixes.get("limit") or knowledge.load("recompiles").get("limit_fix"),
                        "recipe_code": None})
    return out


def _cause_count(func, kind):
    """Recompiles of one function caused by one guard kind, torch's expected one-time ones left out."""
    return sum(c.get("count") or 1 for c in func.get("causes") or [] if c.get("kind") == kind and not c.get("expected"))


def _where(loc):
    return f"{loc.get('file')}:{loc.get('line')}" if loc.get("line") else (loc.get("file") or "?")


# ---- candidates ---------------------------------------------------------------------------

def _subst(obj, params):
    if isinstance(obj, str):
        return re.sub(r"\{(\w+)\}", lambda m: str(params.get(m.group(1), m.group(0))), obj)
    if isinstance(obj, list):
        return [_subst(x, params) for x in obj]
    if isinstance(obj, dict):
        return {_subst(k, params): _subst(v, params) for k, v in obj.items()}
    return obj


def _matches(row, f):
    m = row.get("match") or {}
    if m.get("finding") and m["finding"] != f["kind"]:
        return None
    kinds = m.get("kind")
    if kinds and f.get("guard_kind") not in (kinds if isinstance(kinds, list) else [kinds]):
        return None
    if m.get("library") and not f.get("library"):
        return None
    if m.get("text") and not re.search(m["text"], f["text"], re.M):
        return None
    params = dict(f["params"])
    for name, rx in (row.get("params") or {}).items():
        if name in params:
            continue
        p = re.search(rx, f["text"], re.M)
        if not p:
            return None
        params[name] = p.group(1)
    if m.get("library") and not {"module", "func"} <= set(params):
        return None
    return params


def candidates(found, rows=None):
    """Findings -> distinct candidate fixes [{id, title, steps, code, group, diagnosis, findings: [i]}]."""
    rows = rows if rows is not None else knowledge.load("fixes")["candidates"]
    cands, by_key = [], {}
    for i, f in enumerate(found):
        for order, row in enumerate(rows):
            params = _matches(row, f)
            if params is None:
                continue
            steps = _subst(row["steps"], params)
            key = json.dumps(steps, sort_keys=True)
            if key in by_key:
                by_key[key]["findings"].append(i)
                continue
            c = {"id": row["id"], "title": _subst(row.get("title", row["id"]), params), "steps": steps,
                 "code": _subst(row.get("code", ""), params).strip(), "diagnosis": bool(row.get("diagnosis")),
                 "group": _subst(row.get("group") or key, params), "findings": [i], "order": order}
            by_key[key] = c
            cands.append(c)
    if any(not c["diagnosis"] for c in cands):
        # a diagnosis (raise recompile_limit to 64) costs a whole run, up to 64 compiles: only when there is
        # nothing else to try (blind A/B: 460 s beside a real candidate, on a counter that changes every step)
        cands = [c for c in cands if not c["diagnosis"]]
    return cands


# ---- trials -------------------------------------------------------------------------------

def run_trial(argv, trial_dir, steps, timeout, target_str):
    """One run of the unmodified program with `steps` injected, its own Inductor/Triton cache in
    the trial dir (all trials cold alike; the user's caches untouched). Returns the report dict."""
    os.makedirs(trial_dir, exist_ok=True)
    env = {"TORCHINDUCTOR_CACHE_DIR": os.path.join(trial_dir, "inductor-cache"),
           "TRITON_CACHE_DIR": os.path.join(trial_dir, "triton-cache")}
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
        stderr = proc._read(rep.artifacts.get("stderr"), 200_000)
        bad = [ln for ln in stderr.splitlines() if ln.startswith("[compile-debug startup]")]
        d["_deferred"] = os.path.exists(os.path.join(trial_dir, "startup.applied.deferred"))
        d["_not_applied"] = bad[0] if bad else (None if os.path.exists(os.path.join(trial_dir, "startup.applied"))
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


FALLBACK_RANDOM = runs.FALLBACK_RANDOM


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
