"""fix: try every fix that needs no code edit, measure it, rank; then the best set together."""
import os
import re
import time

from ..decide import analyze, compare, fixes
from ..run import proc, rundir
from ..errors import CliError
from ..cmdline import clip, cli_command
from ..show.output import emit, table

HELP = "try each config/env fix on the unmodified program, measure it, rank, combine"
ORDER = 11
TAKES_TARGET = True
DESCRIPTION = """For every finding of a triage run (graph break, recompile, recompile limit) that has a
candidate fix needing no edit of your code (knowledge/fixes.yaml: config switches, dynamic sources,
logging functions, torch.compiler.disable on a library function), re-run your unmodified program
with that one change injected at startup and report the measured effect: breaks, recompiles,
graphs, compile and wall time, exit status, whether the output stayed the same. Ranked by measured
gain; then the best compatible set is run together and given as one line of code to add.
Each trial is a subdir of the run dir with its own report.json (compare it with `compare`)."""
EPILOG = """examples:
  compile_debug.py fix -- python train.py
  compile_debug.py fix --from /tmp/compile-debug/triage-20260101-120000-abc123
  compile_debug.py fix --max-fixes 3 --jobs 2 -- python train.py"""


def add_arguments(p):
    p.add_argument("--from", dest="from_dir", metavar="RUN_DIR", help="reuse this triage run as the baseline")
    p.add_argument("--max-fixes", type=int, default=8, metavar="N", help="try at most N candidates (default 8)")
    p.add_argument("--jobs", type=int, metavar="N", help="trials at once (default: CPU cores, at most 4)")
    p.add_argument("--timeout", type=float, default=1800, metavar="SEC",
                   help="one overall limit for all runs together (default 1800)")
    p.add_argument("--no-combine", action="store_true", help="do not run the best fixes together")


def _baseline(args, run_dir, jobs, deadline):
    """The baseline report (from --from or a fresh run) and the control run (a second plain run:
    output determinism and the timing reference under the same load as the trials)."""
    if args.from_dir:
        if args.target:
            raise CliError("--from reuses a triage run; do not also give a target command")
        base = compare.load_run(args.from_dir)
        argv = base.get("command")
        if not isinstance(argv, list) or not argv:
            raise CliError(f"{args.from_dir}: the report has no target command to re-run")
        for a in argv[1:2]:
            if a.endswith(".py") and not os.path.isfile(a):
                raise CliError(f"{a}: not found from here; run fix in the directory the triage ran in")
        tstr = analyze.target_string(argv)
        tasks = [("control", lambda t: fixes.run_trial(argv, os.path.join(run_dir, "control"), [], t, tstr))]
        proc.progress(f"baseline from {base['run_dir']}; control run of {tstr}")
        res = fixes.run_parallel(jobs, tasks, deadline, lambda n, r: None)
        return argv, tstr, base, res.get("control")
    argv = proc.resolve_target(args.target)
    tstr = analyze.target_string(argv)
    proc.progress(f"baseline and control runs of {tstr}; artifacts in {run_dir}")
    tasks = [(n, (lambda n: lambda t: fixes.run_trial(argv, os.path.join(run_dir, n), [], t, tstr))(n))
             for n in ("baseline", "control")]
    res = fixes.run_parallel(jobs, tasks, deadline, lambda n, r: None)
    if res.get("baseline") is None:
        raise CliError("the overall --timeout ran out before the baseline run")
    return argv, tstr, res["baseline"], res.get("control")


def run(args):
    if args.timeout <= 0 or args.max_fixes < 1 or (args.jobs is not None and args.jobs < 1):
        raise CliError("--timeout, --max-fixes and --jobs must be positive")
    if not args.from_dir and not args.target:
        raise CliError("give the program after `--` (fix -- python train.py) or a triage run (--from RUN_DIR)")
    t0 = time.monotonic()
    deadline = t0 + args.timeout
    jobs = args.jobs or max(1, min(os.cpu_count() or 1, 4))
    run_dir = rundir.make(args.out, "fix")
    argv, tstr, base, ctrl = _baseline(args, run_dir, jobs, deadline)
    deterministic = True
    if ctrl is not None:
        nb, nc = compare.normalize_output(base.get("_stdout")), compare.normalize_output(ctrl.get("_stdout"))
        deterministic = nb == nc
        if not deterministic:
            proc.progress("the program's output differs between two plain runs: output comparison skipped")
    found = fixes.findings(base)
    cands = fixes.candidates(found)
    tried, skipped = cands[: args.max_fixes], cands[args.max_fixes:]
    for c in skipped:
        c["label"] = f"not tried (--max-fixes {args.max_fixes})"
    n = len(tried)
    proc.progress(f"{len(found)} finding(s), {len(cands)} candidate fix(es); trying {n}, {jobs} at a time")
    done = [0]

    def on_done(name, rep):
        done[0] += 1
        c = tried[int(name)]
        if rep is not None and rep.get("timed_out") and rep.get("_timeout_given", args.timeout) < args.timeout:
            c["label"], c["trial_dir"] = "not finished (overall --timeout reached)", rep["run_dir"]
            proc.progress(f"[{done[0]}/{n}] {c['id']}: cut by the overall --timeout")
            return
        if rep is None:
            c["label"] = "not tried (overall --timeout reached)"
            proc.progress(f"[{done[0]}/{n}] {c['id']}: not run (time budget)")
            return
        c["trial_dir"] = rep["run_dir"]
        c["not_applied"] = rep.get("_not_applied")
        if rep.get("_deferred"):
            c["note"] = ("it names something a library adds when the program imports it: put the line after "
                         "your imports, not right after `import torch` (the trial applied it at the first compile)")
        c["effect"] = fixes.effect(base, rep, ctrl, deterministic)
        e = c["effect"]
        e["gone"] = fixes.gone(found, e, rep)
        if e["gain"] <= 0:
            c["note"] = _overridden(argv, c["steps"]) or c.get("note")
        proc.progress(f"[{done[0]}/{n}] {c['id']}: breaks {e['graph_break_sites'][0]}→{e['graph_break_sites'][1]}, "
                      f"recompiles {e['recompiles'][0]}→{e['recompiles'][1]}, {fixes.label(c)}")

    tasks = [(str(i), (lambda i, c: lambda t: fixes.run_trial(argv, os.path.join(run_dir, "trials", f"{i + 1:02d}-{c['id']}"),
                                                                c["steps"], t, tstr))(i, c)) for i, c in enumerate(tried)]
    fixes.run_parallel(jobs, tasks, deadline, on_done)
    _recheck_random(argv, tstr, run_dir, base, tried, jobs, deadline)
    fixes.credit_limit_hits(tried, found)
    combo = _combine(args, argv, tstr, run_dir, base, ctrl, deterministic, tried, deadline)
    result = _result(run_dir, tstr, base, ctrl, deterministic, found, cands, combo, time.monotonic() - t0, jobs)
    result["target_argv"] = list(argv)
    emit(args, result, _markdown(result))
    return 0


def _recheck_random(argv, tstr, run_dir, base, tried, jobs, deadline):
    """A fix whose output changed while its compiled graphs draw random numbers: a function that now runs
    compiled where it ran eagerly draws other numbers (blind A/B: a VAE's randn_like; the fix looked like it
    changed the results). Both runs again with torch._inductor.config.fallback_random = True (compiled RNG
    as eager's): the same output then is the fix's verdict."""
    suspects = [c for c in tried if (c.get("effect") or {}).get("output") == "changed" and c.get("trial_dir")
                and not c["effect"]["fails"] and fixes.draws_random({"run_dir": c["trial_dir"]})]
    if not suspects:
        return
    proc.progress(f"{len(suspects)} fix(es) changed the output and their graphs draw random numbers: both runs "
                  "again with fallback_random=True (compiled RNG as eager's)")
    rdir = os.path.join(run_dir, "fallback_random")
    tasks = [("base", lambda t: fixes.run_trial(argv, os.path.join(rdir, "baseline"), [fixes.FALLBACK_RANDOM], t, tstr))]
    tasks += [(str(i), (lambda c: lambda t: fixes.run_trial(argv, os.path.join(rdir, c["id"]),
                                                            [fixes.FALLBACK_RANDOM, *c["steps"]], t, tstr))(c))
              for i, c in enumerate(suspects)]
    res = fixes.run_parallel(jobs, tasks, deadline, lambda n, r: None)
    b = res.get("base")
    nb = compare.normalize_output((b or {}).get("_stdout"))
    for i, c in enumerate(suspects):
        r = res.get(str(i))
        nt = compare.normalize_output((r or {}).get("_stdout"))
        if b is None or r is None or nb is None or nt is None:
            continue
        if nb == nt:
            c["effect"]["output"] = ("same with fallback_random=True in both runs: the change came from compiled "
                                     "random numbers (more of the program runs compiled), not from the fix")
            c["effect"].pop("output_diff", None)
        else:
            c["effect"]["output"] = "changed (also with fallback_random=True in both runs)"
        proc.progress(f"{c['id']}: output {'same' if nb == nt else 'still changed'} with fallback_random=True")


def _overridden(argv, steps):
    """A config the program's own script assigns after `import torch` overrides the injected value."""
    script = next((a for a in argv[1:3] if a.endswith(".py") and os.path.isfile(a)), None)
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


def _combine(args, argv, tstr, run_dir, base, ctrl, deterministic, tried, deadline):
    members, steps, code = fixes.combine(tried)
    if not members:
        return None
    combo = {"members": [c["id"] for c in members], "steps": steps, "code": code, "effect": members[0]["effect"],
             "note": next((c["note"] for c in members if c.get("note")), None),
             "trial_dir": members[0].get("trial_dir"), "measured_together": len(members) == 1}
    if len(members) > 1 and not args.no_combine:
        proc.progress(f"trying the {len(members)} best compatible fixes together")
        res = fixes.run_parallel(1, [("combo", lambda t: fixes.run_trial(argv, os.path.join(run_dir, "combined"),
                                                                           steps, t, tstr))], deadline, lambda n, r: None)
        rep = res.get("combo")
        if rep is not None:
            combo.update(effect=fixes.effect(base, rep, ctrl, deterministic), trial_dir=rep["run_dir"],
                         measured_together=True, not_applied=rep.get("_not_applied"))
    return combo


def _result(run_dir, tstr, base, ctrl, deterministic, found, cands, combo, elapsed, jobs):
    ranked = sorted(cands, key=fixes.rank_key)
    fixed_findings = {i for c in ranked if fixes.is_good(c) for i in fixes.resolved(c)}
    rows = []
    for c in ranked:
        rows.append({"id": c["id"], "title": c["title"], "label": fixes.label(c), "code": c["code"],
                     "findings": [found[i]["label"] for i in c["findings"]], "effect": c.get("effect"),
                     "trial_dir": c.get("trial_dir"), "not_applied": c.get("not_applied"), "steps": c["steps"],
                     "note": c.get("note")})
    code_changes = []
    for i, f in enumerate(found):
        if i in fixed_findings:
            continue
        tried_here = [f"{c['id']} ({fixes.label(c)})" for c in ranked if i in c["findings"] and c.get("effect")]
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


def _fmt_pair(p, fmt="{}"):
    a, b = p
    f = lambda v: "-" if v is None else fmt.format(v)  # noqa: E731
    return f"{f(a)}→{f(b)}"


def _markdown(r):
    b = r["baseline"]
    good = [x for x in r["fixes"] if x["label"] == "verified (measured)"]
    out = [f"# fix: {len(good)} verified fix(es) for {r['findings_with_verified_fix']}/{r['findings']} finding(s)",
           f"`{clip(r['target'], 120)}` · baseline: {b['graph_break_sites']} break site(s), {b['recompiles']} recompile(s), "
           f"{b['graphs']} graph(s), {compare._exit(b)} · {len(r['fixes'])} candidate(s) in {r['elapsed_s']} s "
           f"({r['jobs']} at a time)", f"Run dir: {r['run_dir']}"]
    if not r["deterministic"]:
        out.append("⚠ the program prints different output on two plain runs: output comparison skipped")
    rc = r.get("recommended")
    if rc:
        e = rc["effect"]
        how = "measured together" if rc["measured_together"] else "not run together (see --no-combine / timeout)"
        out.append(f"\n## Recommended ({', '.join(rc['members'])}; {how})")
        where = "Add after your imports (see the note)" if rc.get("note") else "Add after `import torch`"
        out.append(f"{where}:\n```python\n{rc['code']}\n```" + (f"\nNote: {rc['note']}" if rc.get("note") else ""))
        left = e["recompiles"][1] or 0
        expected_left = " (all expected one-time recompiles)" if left and (e.get("unexpected_recompiles") or
                                                                          [None, None])[1] == 0 else ""
        out.append(f"Effect: breaks {_fmt_pair(e['graph_break_sites'])}, recompiles {_fmt_pair(e['recompiles'])}"
                   f"{expected_left}, "
                   f"graphs {_fmt_pair(e['graphs'])}, compile s {_fmt_pair(e['compile_time_s'], '{:.2f}')}, "
                   f"{e['exit'][1]}, output {e['output']}" + (" ⚠ FAILS" if e["fails"] else ""))
        if rc.get("trial_dir"):
            out.append(f"Check it yourself: `{cli_command('compare', b['run_dir'], rc['trial_dir'])}`")
    if r["fixes"]:
        out.append("\n## Fixes tried (ranked by measured gain)")
        rows = []
        for i, x in enumerate(r["fixes"], 1):
            e = x["effect"]
            if not e:
                rows.append([i, x["id"], x["label"], "", "", "", "", "", "", ""])
                continue
            rows.append([i, x["id"], x["label"], _fmt_pair(e["graph_break_sites"]), _fmt_pair(e["recompiles"]),
                         _fmt_pair(e["graphs"]), _fmt_pair(e["compile_time_s"], "{:.2f}"),
                         _fmt_pair(e["wall_time_s"], "{:.1f}"), e["exit"][1],
                         e["output"].split(" (")[0]])
        out.append(table(["#", "fix", "result", "breaks", "recompiles", "graphs", "compile s", "wall s", "exit", "output"], rows))
        for x in r["fixes"]:
            e = x["effect"] or {}
            extra = []
            if e.get("error"):
                extra.append(f"error: **{e['error']['type']}** `{clip(e['error']['message'], 160)}`")
            if x.get("not_applied"):
                extra.append(f"not applied: `{clip(x['not_applied'], 160)}`")
            if x.get("note"):
                extra.append(x["note"])
            if e.get("breaks_moved"):
                m = e["breaks_moved"]
                extra.append(f"removes {clip('; '.join(m['fixed']), 120)} but breaks at {clip('; '.join(m['new']), 160)}")
            if e.get("output_diff"):
                d = e["output_diff"]
                extra.append(f"output line {d['line']}: `{d['before']}` → `{d['after']}`")
            out.append(f"- **{x['id']}**: {x['title']} — for {clip('; '.join(x['findings']), 160)}; "
                       f"code: `{x['code']}`" + ("; " + "; ".join(extra) if extra else ""))
    if r["code_changes"]:
        out.append(f"\n## Not tried (needs a code change): {len(r['code_changes'])}")
        for c in r["code_changes"][:8]:
            out.append(f"- {c['finding']}" if c["finding"].startswith(os.path.basename(c["at"].split(":")[0]) + ":")
                       else f"- {c['at']}" + (f" `{clip(c['line'], 80)}`" if c["line"] else "") + f": {c['finding']}")
            if c["config_fixes_tried"]:
                out.append(f"  Config fixes tried, none verified: {'; '.join(c['config_fixes_tried'])}")
            if c["pytorch_hints"]:
                out.append(f"  PyTorch: {clip(c['pytorch_hints'][0], 240)}")
            if c["edit"]:
                out.append(f"  Edit: {c['edit']}")
    cmp_cmd = cli_command('compare', b['run_dir'], '--', *_target_words(r))
    out.append(f"\nNote: {r['notes'][0]}" if r.get("notes") else "")
    if rc:
        out.append(f"\nNext: apply the recommended line, then `{cmp_cmd}`")
    elif r["code_changes"]:
        out.append(f"\nNext: no config fix was verified; make the code edit above, then `{cmp_cmd}`")
    else:
        out.append("\nNext: nothing to fix here (no graph break or recompile that needs one)")
    return "\n".join(out)


def _target_words(r):
    import shlex
    return r.get("target_argv") or shlex.split(r["target"])

