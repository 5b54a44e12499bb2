"""Multi-rank triage's analysis: what a torchrun launch of `triage --nproc N` (commands/_triage_nproc.py)
or a recorded multi-rank trace (commands/_triage_recorded.py) left, turned into the result: how each rank
ended and its report (analyze.analyze), the root cause, the eager check's verdict per failed rank, the
status and notes of the launch, what differs between ranks (analyze_multirank.py) and the next steps.
The launch side (shim, torchrun argv, killing ranks, logs) is run/multirank_launch.py. No torch import here."""
import os
import shlex
import signal
import time

from . import analyze, printed
from ..run import proc
from ..read import trace as tracemod
from ..read.frames import strip_rank_prefix
from ..run.multirank_launch import _read, rank_trace_dir, read_status, restarts_seen
from .analyze_multirank import (_drop_shim_frames, _ranks, _signame, classify_stack, collective_timeout,
                                divergence, parse_stack_dump, root_cause,
                                torchrun_root_rank, trace_facts)
from ..cmdline import command_line


# ---- a launch ----------------------------------------------------------------------------

def rank_result(run_dir, r, run, *, argv, shim, sargs, tstr, nproc, extra):
    """Rank r of a launch (run: what commands/_triage_nproc.py's launch returned): how it ended, its
    report (its suggested triage as this same launch), its trace facts and, when it hung or was
    stopped, where it was (its stack, else its trace). -> the rank's dict."""
    res, dumped, dump_time = run["res"], run["dumped"], run["dump_time"]
    o = outcome(run_dir, r, run)
    st, status, code, timed, dur, so, se = o["st"], o["status"], o["code"], o["timed"], o["dur"], o["so"], o["se"]
    stdout, stderr = o["stdout"], o["stderr"]
    tdir = rank_trace_dir(run_dir, r)
    rres = proc.ProcResult(argv=argv, returncode=code if not timed else None, duration_s=dur or 0.0,
                           timed_out=timed, signal=_signame(code) if not timed else None,
                           stdout_path=so, stderr_path=se, interrupted=status == "interrupted")
    rep = analyze.analyze(tdir if os.path.isdir(tdir) else None, command=["torchrun", f"rank {r}", *sargs],
                          run_dir=os.path.join(run_dir, f"rank_{r}"), res=rres, stdout=stdout, stderr=stderr,
                          target_str=tstr)
    rep.artifacts.update({"stdout": so, "stderr": se, "trace_dir": tdir})
    # what the rank printed last, as single-process triage shows it (blind A/B batch 31: a 2-rank parity check
    # printed its first mismatching step, and the report showed nothing the program said)
    failed = code not in (0, None) and rep.errors and (rep.errors[0].message or "").strip()
    rep.printed_tail, rep.printed_lines = printed.tail(
        stdout, stderr, rep.errors[0].message.strip().splitlines()[0] if failed else None, n=4)
    _drop_shim_frames(rep, shim, stderr)
    if status == "killed" and code == -signal.SIGKILL:
        rep.notes.append(f"rank {r} was killed by SIGKILL: not by torchrun (it sends SIGTERM); often the "
                         "OOM killer (check `dmesg`, host memory per rank)")
    if status == "killed" and code == -signal.SIGTERM:
        # killed by torchrun because another rank failed: the signal is not this rank's error
        rep.errors = [e for e in rep.errors if e.source != "signal"]
        rep.next_steps = [x for x in rep.next_steps if "SIG" not in x["why"]]
        rep.notes.append(f"rank {r} was stopped by torchrun (exit code {code}) because another rank failed")
    as_rank_launch(rep, tstr, nproc, extra)
    tr = tracemod.parse(tdir) if os.path.isdir(tdir) else tracemod.Trace([], {}, [])
    facts = trace_facts(tr)
    stack_file = os.path.join(run_dir, "stacks", f"rank_{r}.txt")
    hang = killed_state = None
    stack_text = _read(stack_file)
    now = os.path.getmtime(stack_file) if stack_text.strip() else (dump_time[0] if dump_time else time.time())
    for oc in facts["open_compiles"]:
        oc["running_s"] = round(now - oc["started_at"], 1) if oc.get("started_at") else None
    if timed or (res.timed_out and r in dumped) or (status == "killed" and stack_text.strip()):
        frames = parse_stack_dump(stack_text, shim)
        state, detail, uloc = classify_stack(frames, shim)
        if state is None:  # no stack: judge by the trace
            state = "compiling" if facts["open_compiles"] else "unknown"
        info = {"state": state, "detail": detail, "user_location": uloc,
                "stack": [f"{f[0]}:{f[1]} in {f[2]}" for f in frames[:12]],
                "open_compiles": facts["open_compiles"], "last_event": facts["last_event"],
                "last_event_time": facts["last_event_time"]}
        if timed or res.timed_out:
            hang = info
        else:
            killed_state = info  # torchrun stopped this rank because another one failed
    return {"rank": r, "status": status, "exit_code": code, "duration_s": dur, "pid": st.get("pid") if st else None,
            "report_status": rep.status, "hang": hang, "state_when_killed": killed_state, "facts": facts, "_rep": rep,
            "stdout": so, "stderr": se, "report_md": os.path.join(run_dir, f"rank_{r}", "report.md"),
            "_end": st.get("end") if st else None, "_stderr": stderr}


def outcome(root, r, run):
    """How rank r of a launch ended: status ok/failed/killed/hung/not_started, exit code, output."""
    st = read_status(root, r)
    so, se = run["logs"].get(r, (None, None))
    code = st.get("exit_code") if st else None
    ended = bool(st and st.get("end"))
    if code is None and r in run["exit_codes"]:
        code = run["exit_codes"][r]
    timed = bool(run["res"].timed_out and not ended)
    if st is None:
        status = "not_started"
    elif run["res"].interrupted and not ended:
        status = "interrupted"   # still running at Ctrl-C
    elif timed:
        status = "hung"
    elif ended:
        status = "ok" if code == 0 else "failed"
    else:
        status = "killed"  # died without the shim's finally (signal), or killed by torchrun
    dur = round((st.get("end") or time.time()) - st["start"], 3) if st else None
    return {"st": st, "status": status, "code": code, "timed": timed, "dur": dur, "so": so, "se": se,
            "stdout": strip_rank_prefix(_read(so)), "stderr": strip_rank_prefix(_read(se))}


def mark_root_cause(ranks, launcher_out):
    """The first rank that failed (the root cause) and, on every rank, whether its failure is that one's
    consequence and whether its error is a collective's timeout. -> the first failed rank (or None)."""
    first_failed, consequences = root_cause(ranks, torchrun_root_rank(launcher_out))
    for r in ranks:
        r["consequence_of_rank"] = first_failed if r["rank"] in consequences else None
        r["collective_timeout"] = collective_timeout(r["_rep"])
    return first_failed


def eager_result(edir, run, nproc, todo, tstr):
    """The eager check's verdicts (verdict.decide via analyze.apply_verdict) from the job run once more
    with compilation off into edir (run: that launch): each failed rank of todo compared with the same
    rank's eager run; a rank that did not get as far is "not sure". -> the eager run's facts."""
    applied = set(_read(os.path.join(edir, "eager_check.applied")).split())
    outs = {r: outcome(edir, r, run) for r in range(nproc)}
    for r in todo:
        rep, o = r["_rep"], outs[r["rank"]]
        others = [k for k, x in outs.items() if x["status"] in ("failed", "killed") and k != r["rank"]]
        if o["status"] == "killed" and o["code"] in (None, -signal.SIGTERM):
            why = f"torchrun stopped it when rank(s) {_ranks(others)} failed" if others else "it was stopped"
        elif o["status"] in ("not_started", "hung") and not run["res"].timed_out:
            why = "it did not start"
        elif o["st"] and str(o["st"]["pid"]) not in applied and o["status"] != "hung":
            why = "compilation could not be switched off on it (the startup hook did not run)"
        else:
            eres = proc.ProcResult(argv=run["res"].argv, returncode=o["code"] if not o["timed"] else None,
                                   duration_s=o["dur"] or 0.0, timed_out=o["timed"] or run["res"].timed_out,
                                   signal=_signame(o["code"]), stdout_path=o["so"], stderr_path=o["se"])
            analyze.apply_verdict(rep, r["_stderr"], target_str=tstr, eager_res=eres, eager_stderr=o["stderr"])
            continue
        err = rep.errors[0]
        rep.verdict = {"kind": "not_sure", "location": f"{err.location.file}:{err.location.line}" if err.location else None,
                       "eager": {"exit_code": o["code"], "status": o["status"]},
                       "summary": f"not sure: in the run without torch.compile rank {r['rank']} did not get as far ({why})"}
    return {"run_dir": edir, "launcher": run["res"].argv, "launcher_exit_code": run["res"].returncode,
            "timed_out": run["res"].timed_out, "duration_s": run["res"].duration_s,
            "ranks": {str(k): {"status": x["status"], "exit_code": x["code"], "stderr": x["se"]} for k, x in outs.items()},
            "surviving_ranks": run["left"]}


def verdict_brief(v):
    return {k: v.get(k) for k in ("kind", "summary", "location")} if v else None


def launch_result(run_dir, run, ranks, *, nproc, extra, argv, tstr, torchrun_str, timeout, first_failed,
                  eager, artifacts):
    """The result of a launch: its status, notes, the divergence between ranks, the hang and the next
    steps. ranks: rank_result's dicts, with their reports (r["report"]) made."""
    res, killed, left, dumped = run["res"], run["killed"], run["left"], run["dumped"]
    div = divergence(ranks)
    notes = []
    if os.environ.get("TORCH_TRACE"):
        notes.append("your TORCH_TRACE was overridden for this run (the traces are in the run dir)")
    if killed:
        notes.append(f"rank(s) {_ranks(killed)} were still running after torchrun ended and were killed")
    if left:
        notes.append(f"WARNING: rank(s) {_ranks(left)} could not be killed (pids in {run_dir}/status)")
    if restarts_seen(run_dir):
        notes.append(f"torchrun restarted the workers {restarts_seen(run_dir)} time(s); the reports are of the last attempt "
                     f"(earlier traces: {run_dir}/trace/rank_<N>, restart_<K>/)")
    if res.timed_out and not dumped:
        notes.append("no rank was alive to dump its stack at the timeout")

    launcher_error = None
    if all(r["status"] == "not_started" for r in ranks) and not res.timed_out and not res.interrupted:
        tail = [ln for ln in _read(res.stderr_path).splitlines() if ln.strip() and not ln.startswith("*")]
        launcher_error = (tail[-1] if tail else f"torchrun exited {res.returncode}")[:500]
    hung = [r["rank"] for r in ranks if r["status"] == "hung"]
    if res.timed_out:
        status = "timeout"
    elif res.interrupted:
        status = "interrupted"
    elif any(r["status"] in ("failed", "killed", "not_started") for r in ranks) or (res.returncode not in (0, None)):
        status = "error"
    elif div["divergent"] and not div.get("rank_specialized"):   # graphs that differ by the rank index only: not
        status = "divergent"                                        # a divergence to act on
    elif any(r["report_status"] == "issues" for r in ranks):
        status = "issues"
    elif all(r["report_status"] == "no-compile" for r in ranks):
        status = "no-compile"
    else:
        status = "clean"
    result = {
        "command": "triage", "schema": "compile-debug/triage-multirank/1", "run_dir": run_dir, "status": status,
        "target": tstr, "nproc": nproc, "torchrun_args": extra, "launcher": argv, "torchrun": torchrun_str,
        "launcher_exit_code": res.returncode, "timed_out": res.timed_out, "interrupted": res.interrupted,
        "timeout_s": timeout,
        "duration_s": res.duration_s, "killed_ranks": killed, "surviving_ranks": left,
        "first_failed_rank": first_failed, "restarts": restarts_seen(run_dir), "launcher_error": launcher_error,
        "eager_check": eager,
        "ranks": [{k: v for k, v in r.items() if not k.startswith("_")} for r in ranks],
        "divergence": div,
        "hang": {"ranks": hung, "stacks_dumped": sorted(dumped),
                 "per_rank": {str(r["rank"]): r["hang"] for r in ranks if r["hang"]}} if res.timed_out else None,
        "artifacts": artifacts, "notes": notes,
    }
    result["next_steps"] = next_steps(result, ranks, tstr, nproc, extra)
    return result


# ---- a recorded trace --------------------------------------------------------------------

def recorded_result(run_dir, ranks, *, nproc, trace_path, html):
    """The result of comparing the ranks of a recorded trace (commands/_triage_recorded.py): status,
    notes (ranks without a trace, compiles the trace ends in), divergence, next steps."""
    div = divergence([r if r["report"] is not None else dict(r, report=None) for r in ranks])
    missing = [r["rank"] for r in ranks if r["status"] == "no_trace"]
    notes = []
    if missing:
        notes.append(f"no trace for rank(s) {_ranks(missing)}: not recorded, or the rank never reached torch.compile")
    for r in ranks:
        oc = r["facts"]["open_compiles"]
        if oc:
            notes.append(f"rank {r['rank']}: compile {oc[-1]['compile_id']} ({oc[-1].get('function') or '?'}) started "
                         "but has no compilation_metrics (the trace ends while it compiles: crashed, hung or killed)")
    errs = any(r["_rep"].errors for r in ranks)
    status = "error" if errs else "divergent" if div["divergent"] else \
        "issues" if any(r["report_status"] == "issues" for r in ranks) else \
        "no-compile" if all(r["report_status"] == "no-compile" for r in ranks) else "clean"
    result = {
        "command": "triage", "schema": "compile-debug/triage-multirank/1", "mode": "recorded", "run_dir": run_dir,
        "status": status, "target": None, "nproc": nproc, "torchrun_args": [], "launcher": None,
        "torchrun": f"recorded trace {os.path.abspath(trace_path)}", "launcher_exit_code": None, "timed_out": False,
        "timeout_s": None, "duration_s": None, "killed_ranks": [], "surviving_ranks": [], "first_failed_rank": None,
        "restarts": 0, "ranks": [{k: v for k, v in r.items() if not k.startswith("_")} for r in ranks],
        "divergence": div, "hang": None,
        "artifacts": {"trace_dir": os.path.abspath(trace_path), **({"tlparse": html} if html else {})}, "notes": notes,
    }
    result["next_steps"] = next_steps(result, ranks, None, nproc, [])
    return result


# ---- next steps (both) -------------------------------------------------------------------

def as_rank_launch(rep, tstr, nproc, extra):
    """A rank's report's commands as this same launch (a rank's `triage -- prog` is this launch again:
    --nproc N). Steps that run `triage --vs-eager` go: it runs one process, not with --nproc (blind A/B batch
    23: a rank's step had become `triage --nproc 2 --vs-eager`, which the CLI refuses). Called again after the
    eager check rebuilt a failed rank's steps (analyze.apply_verdict), before its report.md is written."""
    for e in rep.errors:
        e.next_command = _as_launch(e.next_command, tstr, nproc, extra)
    rep.next_steps = [dict(x, command=_as_launch(x.get("command"), tstr, nproc, extra)) for x in rep.next_steps
                      if " --vs-eager " not in (x.get("command") or "")]


def _as_launch(cmd, tstr, nproc, extra):
    """A rank's suggested `triage [--nproc <N>] ... -- prog` as this same launch: --nproc N (and
    --torchrun-args); other commands unchanged (and one already made so)."""
    if not cmd or not tstr or not cmd.endswith(" -- " + tstr) or " triage " not in cmd \
            or " --nproc " in cmd[: -len(tstr)].replace(" --nproc <N>", ""):
        return cmd
    opts = command_line(["--nproc", nproc] + (["--torchrun-args=" + shlex.join(extra)] if extra else []))
    head = cmd[: -len(tstr)].replace(" --nproc <N>", "")
    return head.replace(" triage ", f" triage {opts} ", 1) + tstr


def next_steps(result, ranks, tstr, nproc, extra):
    steps = []
    div = result["divergence"]
    if result.get("launcher_error"):
        steps.append({"why": f"torchrun failed before starting the ranks: {result['launcher_error']} "
                             f"(full output: {result['artifacts']['torchrun_stderr']}); fix --torchrun-args or the "
                             "rendezvous (free port, --master-port)", "skill": "overview", "command": None})
        return steps
    if result["timed_out"]:
        steps.append({"why": "ranks hung: make every rank compile the same graphs (fix the divergence above); "
                             "meanwhile lower the collective timeout (init_process_group(timeout=...)) to fail fast",
                      "skill": "trace-dynamo", "command": None})
    first = next((r for r in ranks if r["rank"] == result.get("first_failed_rank")), None)
    if first is not None and first.get("collective_timeout"):
        late = [r for r in ranks if r.get("state_when_killed")]
        comp = [r["rank"] for r in late if r["state_when_killed"]["state"] == "compiling"]
        why = f"rank {first['rank']}'s collective timed out waiting for rank(s) {_ranks([r['rank'] for r in late])}"
        if comp:
            why += (f", still COMPILING (rank {_ranks(comp)}): make every rank compile the same graphs "
                    "(see the recompiles/graph breaks above), warm up before the first collective, or raise the "
                    "init_process_group timeout above the compile time")
        else:
            why += ": compare where they were (above) and make every rank issue the same collectives"
        steps.append({"why": why, "skill": "trace-dynamo", "command": None})
    own = [b for b in div["graph_breaks"] if not b.get("wrapper")]  # DDP's / FSDP's own breaks: not the user's
    if own:
        b = own[0]
        steps.append({"why": f"graph break at {b['site']} on rank(s) {_ranks(b['ranks'])} only: make the code path "
                             "rank-independent (no data-dependent Python branch), or fix the break", "skill": "trace-dynamo",
                      "command": None})
    if div["recompiles"]:
        steps.append({"why": "a function recompiles on some ranks only: give every rank the same shapes/dtypes/flags "
                             "(pad or mark_dynamic the varying dim)", "skill": "trace-dynamo", "command": None})
    # per-rank steps: once without a rank prefix when every rank has it, else prefixed by the ranks
    by_key = {}
    for r in sorted(ranks, key=lambda r: r["rank"] != result.get("first_failed_rank")):
        if r.get("consequence_of_rank") is not None or r.get("collective_timeout"):
            continue  # its error is the peer's failure (or lateness) seen from here
        for s in r["_rep"].next_steps:
            if result["timed_out"] and s["skill"] == "overview" and "timeout" in (s.get("command") or "") + s["why"].lower():
                continue  # the hang section above replaces "raise the timeout"
            if s["skill"] == "trace-inductor":
                if (div["divergent"] and not div.get("rank_specialized")) or result["status"] != "clean":
                    continue
                s = dict(s, command=None, why=s["why"] + " (perf runs one process: time a single-rank run)")
            k = (s["skill"], s["command"], s["why"])
            by_key.setdefault(k, (s, []))[1].append(r["rank"])
    for (skill, cmd, why), (s, rks) in by_key.items():
        if cmd and tstr and cmd.endswith(tstr) and " triage " in cmd:
            if " --nproc " not in cmd[: -len(tstr)]:   # already the same launch (_as_launch)
                cmd = cmd[: -len(tstr)].replace(" triage ", f" triage --nproc {nproc} ", 1) + tstr
        elif cmd and tstr and cmd.endswith(tstr):  # bisect, minify, ...: they run the script as one process
            s = dict(s, why=s["why"] + f" (`{cmd}` runs one process, without torchrun: first reproduce the "
                                       "failing rank's case in a single-process script)")
            cmd = None
        if len(rks) == len(ranks):
            steps.append(dict(s, command=cmd))
        else:
            steps.append(dict(s, command=cmd, why=f"rank {_ranks(rks)}: {why}"))
    out, keys = [], set()
    for s in steps:
        k = (s["skill"], s["command"], s["why"])
        if k not in keys:
            keys.add(k)
            out.append(s)
    return out[:8]
