"""Multi-rank triage: run the user's script under torchrun (`triage --nproc N`), one structured
trace per rank, one Report per rank (analyze.analyze), and what differs between ranks.

How a run is laid out (all inside the run dir):
    rank_shim.py              the torchrun entry point: sets TORCH_TRACE=trace/rank_<RANK> before the
                              user's script imports torch, records pid/exit status, registers a
                              faulthandler stack dump on SIGUSR1, then runs the script (runpy)
    trace/rank_<N>/*.log      TORCH_TRACE of rank N
    ranks/<rdzv>/attempt_K/<local_rank>/{stdout,stderr}.log   torchrun --log-dir --redirects 3
    status/rank_<N>.json      pid, start/end time, exit code (written by the shim)
    stacks/rank_<N>.txt       Python stacks dumped just before the timeout kills a hung rank
    rank_<N>/report.{md,json} the single-process triage report of rank N
    tlparse/                  tlparse --all-ranks-html over a flat dir of links (tlparse_input/)

torchrun (torch >= 2.x) starts every worker with start_new_session=True, so killing torchrun's
process group does NOT kill the ranks: proc.run finds them by the tag they inherit in their
environment (on Ctrl-C, timeout, or when torchrun exits); kill_ranks uses each rank's recorded pid.
The launch side (shim, torchrun argv, killing ranks, logs) is multirank_launch.py; the analysis side
(per-rank facts, stacks, divergence) is analyze_multirank.py; this module runs and orchestrates.
No torch import here."""
import json
import os
import shlex
import shutil
import signal
import threading
import time

from . import analyze, verdict
from ..run import proc
from ..read import trace as tracemod
from ..errors import CliError
from ..run.multirank_launch import (SHIM, _read, dump_stacks, group_trace_files, kill_ranks, launcher_argv,
                                    parse_torchrun_args, rank_logs, rank_trace_dir, read_status,
                                    restarts_seen, run_tlparse_all, script_args, survivors)
from .analyze_multirank import (_drop_shim_frames, _ranks, _signame, classify_stack, collective_timeout,
                                divergence, parse_stack_dump, root_cause, strip_rank_prefix,
                                torchrun_exit_codes, torchrun_root_rank, trace_facts)
from ..cmdline import command_line


# ---- the run ------------------------------------------------------------------------------

def run_triage(args, *, nproc, torchrun_args, target, timeout, tlparse=True):
    """Launch under torchrun, analyze every rank. Returns (result dict, markdown)."""
    from ..run import rundir
    from ..show.views import triage_markdown
    from ..show.views_multirank import multirank_markdown

    if nproc < 1:
        raise CliError("--nproc must be at least 1")
    if nproc > 64:
        raise CliError("--nproc: at most 64 local ranks")
    extra = parse_torchrun_args(torchrun_args)
    sargs = script_args(target)
    # torchrun runs under the Python the command names (`-- /venv/bin/python train.py`), else this one
    python = proc.target_python(target)
    if shutil.which(python) is None and not os.path.exists(python):
        raise CliError(f"{python}: no such Python interpreter")
    proc.check_torch(python, "run torchrun")
    run_dir = rundir.make(args.out, "triage")
    shim = os.path.join(run_dir, "rank_shim.py")
    with open(shim, "w") as f:
        f.write(SHIM)
    def make_argv(root):  # the same job for the eager check, into another root
        return launcher_argv(nproc, extra, shim, root, sargs, python)
    argv = make_argv(run_dir)
    tstr = command_line(target)
    torchrun_str = command_line([python, "-m", "torch.distributed.run", "--nproc-per-node", str(nproc), *extra, *sargs])
    proc.progress(f"running {torchrun_str} (timeout {timeout:.0f} s); artifacts in {run_dir}")
    run = _launch(run_dir, argv, nproc, shim, timeout, {"PYTHONUNBUFFERED": "1", "TORCH_TRACE": None})
    res, killed, left, dumped, dump_time = run["res"], run["killed"], run["left"], run["dumped"], run["dump_time"]
    launcher_out = run["launcher_out"]

    ranks = []
    for r in range(nproc):
        o = _outcome(run_dir, r, run)
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
        _drop_shim_frames(rep, shim, stderr)
        if status == "killed" and code == -signal.SIGKILL:
            rep.notes.append(f"rank {r} was killed by SIGKILL: not by torchrun (it sends SIGTERM); often the "
                             "OOM killer (check `dmesg`, host memory per rank)")
        if status == "killed" and code == -signal.SIGTERM:
            # killed by torchrun because another rank failed: the signal is not this rank's error
            rep.errors = [e for e in rep.errors if e.source != "signal"]
            rep.next_steps = [x for x in rep.next_steps if "SIG" not in x["why"]]
            rep.notes.append(f"rank {r} was stopped by torchrun (exit code {code}) because another rank failed")
        for e in rep.errors:   # a rank's `triage -- prog` is this launch again: --nproc N
            e.next_command = _as_launch(e.next_command, tstr, nproc, extra)
        for x in rep.next_steps:
            x["command"] = _as_launch(x.get("command"), tstr, nproc, extra)
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
        ranks.append({"rank": r, "status": status, "exit_code": code, "duration_s": dur, "pid": st.get("pid") if st else None,
                      "report_status": rep.status, "hang": hang, "state_when_killed": killed_state, "facts": facts, "_rep": rep,
                      "stdout": so, "stderr": se, "report_md": os.path.join(run_dir, f"rank_{r}", "report.md"),
                      "_end": st.get("end") if st else None, "_stderr": stderr})

    first_failed, consequences = root_cause(ranks, torchrun_root_rank(launcher_out))
    for r in ranks:
        r["consequence_of_rank"] = first_failed if r["rank"] in consequences else None
        r["collective_timeout"] = collective_timeout(r["_rep"])
    eager = None
    if not res.timed_out:  # failed ranks: the same job once more with compilation off (one verdict per rank)
        eager = eager_check(run_dir, make_argv, nproc, shim, timeout, ranks, tstr,
                            enabled=not getattr(args, "no_eager_check", False))
    for r in ranks:
        rep = r["_rep"]
        r["report"], r["report_status"], r["verdict"] = rep.to_dict(), rep.status, _verdict_brief(rep.verdict)
        os.makedirs(os.path.join(run_dir, f"rank_{r['rank']}"), exist_ok=True)
        with open(os.path.join(run_dir, f"rank_{r['rank']}", "report.json"), "w") as f:
            json.dump(r["report"], f, indent=2, default=str)
        with open(r["report_md"], "w") as f:
            f.write(triage_markdown(rep, f"rank {r['rank']}: {torchrun_str}") + "\n")
    div = divergence(ranks)
    artifacts = {"trace_dir": os.path.join(run_dir, "trace"), "torchrun_stdout": res.stdout_path,
                 "torchrun_stderr": res.stderr_path, "rank_logs": os.path.join(run_dir, "ranks")}
    if tlparse and not res.interrupted:
        html = run_tlparse_all(run_dir, nproc)
        if html:
            artifacts["tlparse"] = html
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
    elif div["divergent"]:
        status = "divergent"
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
    md = multirank_markdown(result, [r["_rep"] for r in ranks])
    return result, md


def _launch(root, argv, nproc, shim, timeout, env):
    """torchrun once, into root (trace/, status/, stacks/, ranks/); just before the timeout every live
    rank dumps its Python stacks; afterwards no rank is left alive. -> dict of what happened."""
    for d in ("trace", "status", "stacks", "ranks"):
        os.makedirs(os.path.join(root, d), exist_ok=True)
    margin = min(5.0, max(1.0, timeout * 0.1))
    dumped, dump_time = [], []

    def _dump():
        dump_time.append(time.time())
        dumped.extend(dump_stacks(root, nproc, shim))

    timer = threading.Timer(max(0.5, timeout - margin), _dump)
    timer.daemon = True
    res = None
    try:
        timer.start()
        res = proc.run(argv, env_add=env, timeout=timeout, stdout_path=os.path.join(root, "torchrun.stdout"),
                       stderr_path=os.path.join(root, "torchrun.stderr"), keep_on_interrupt=True)
    finally:  # proc.run already ended every process of the run (ranks too: they carry its tag)
        timer.cancel()
        killed = kill_ranks(root, nproc, shim)
    stray_ranks = [r for r in range(nproc) if (read_status(root, r) or {}).get("pid") in res.strays]
    launcher_out = _read(res.stderr_path) + "\n" + _read(res.stdout_path)
    logs = rank_logs(root, nproc)
    for paths in logs.values():  # torchrun wrote them: keep the head and tail of huge ones
        for path in paths:
            proc.trim_output(path)
    return {"res": res, "killed": sorted(set(killed) | set(stray_ranks)), "left": survivors(root, nproc, shim),
            "launcher_out": launcher_out, "exit_codes": torchrun_exit_codes(launcher_out), "logs": logs,
            "dumped": dumped, "dump_time": dump_time}


def _outcome(root, r, run):
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


def eager_check(run_dir, make_argv, nproc, shim, timeout, ranks, tstr, enabled=True):
    """The verdict per failed rank, as single-process triage gives it (verdict.decide via
    analyze.apply_verdict): the same job once more under torchrun with compilation off on every rank
    (verdict.eager_env: the startup hook sets the compile stance force_eager right after each rank
    imports torch), then each failed rank's error is compared with that rank's eager run. Ranks whose
    error is only the lost peer get no verdict of their own. -> the eager run's facts (None: no re-run)."""
    todo = [r for r in ranks if r["status"] in ("failed", "killed") and r["_rep"].errors
            and r.get("consequence_of_rank") is None]
    if not todo:
        return None
    if not enabled or not any(r["_rep"].used_compile for r in todo):  # not asked / failed before torch.compile ran
        for r in todo:
            analyze.apply_verdict(r["_rep"], r["_stderr"], target_str=tstr)
        return None
    edir = os.path.join(run_dir, "eager_check")
    os.makedirs(edir, exist_ok=True)
    env = {"PYTHONUNBUFFERED": "1", "TORCH_TRACE": None, "PYTHONFAULTHANDLER": "1"}
    env.update(verdict.eager_env(edir))
    proc.progress(f"rank(s) {_ranks([r['rank'] for r in todo])} failed; running the job once more without "
                  "torch.compile (eager check)")
    run = _launch(edir, make_argv(edir), nproc, shim, timeout, env)
    applied = set(_read(os.path.join(edir, "eager_check.applied")).split())
    outs = {r: _outcome(edir, r, run) for r in range(nproc)}
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


def _verdict_brief(v):
    return {k: v.get(k) for k in ("kind", "summary", "location")} if v else None


def analyze_recorded(args, *, nproc, trace_path):
    """Divergence between the ranks of an existing multi-rank trace (e.g. copied from a cluster job):
    no launch, no hang facts. nproc: the number of ranks the job had (missing ones are reported)."""
    from ..run import rundir
    from ..show.views import triage_markdown
    from ..show.views_multirank import multirank_markdown

    if nproc < 1:
        raise CliError("--nproc must be at least 1")
    if not os.path.exists(trace_path):
        raise CliError(f"{trace_path}: no such file or directory")
    by_rank = group_trace_files(trace_path)
    if not by_rank:
        raise CliError(f"{trace_path}: no per-rank trace files (names with rank_<N>, or rank_<N>/ dirs)")
    run_dir = rundir.make(args.out, "triage")
    ranks = []
    for r in range(max(nproc, max(by_rank) + 1)):
        files = by_rank.get(r, [])
        tdir = None
        if files:
            tdir = os.path.join(run_dir, "trace", f"rank_{r}")
            os.makedirs(tdir, exist_ok=True)
            for fn in files:
                dst = os.path.join(tdir, os.path.basename(fn))
                try:
                    os.symlink(os.path.abspath(fn), dst)
                except OSError:
                    shutil.copyfile(fn, dst)
        rep = analyze.analyze(tdir, run_dir=os.path.join(run_dir, f"rank_{r}"))
        if tdir:
            rep.artifacts["trace_dir"] = tdir
        tr = tracemod.parse(tdir) if tdir else tracemod.Trace([], {}, [])
        facts = trace_facts(tr)
        for oc in facts["open_compiles"]:
            oc["running_s"] = None
        os.makedirs(os.path.join(run_dir, f"rank_{r}"), exist_ok=True)
        rd = rep.to_dict()
        with open(os.path.join(run_dir, f"rank_{r}", "report.json"), "w") as f:
            json.dump(rd, f, indent=2, default=str)
        with open(os.path.join(run_dir, f"rank_{r}", "report.md"), "w") as f:
            f.write(triage_markdown(rep, f"rank {r}: recorded trace") + "\n")
        ranks.append({"rank": r, "status": "recorded" if files else "no_trace", "exit_code": None, "duration_s": None,
                      "pid": None, "report_status": rep.status, "hang": None, "state_when_killed": None,
                      "facts": facts, "report": rd if files else None, "_rep": rep, "stdout": None, "stderr": None,
                      "report_md": os.path.join(run_dir, f"rank_{r}", "report.md"), "consequence_of_rank": None,
                      "collective_timeout": collective_timeout(rep), "verdict": None})
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
    html = run_tlparse_all(run_dir, len(ranks)) if not getattr(args, "no_tlparse", False) else None
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
    return result, multirank_markdown(result, [r["_rep"] for r in ranks])


def _as_launch(cmd, tstr, nproc, extra):
    """A rank's suggested `triage [--nproc <N>] ... -- prog` as this same launch: --nproc N (and
    --torchrun-args); other commands unchanged."""
    if not cmd or not tstr or not cmd.endswith(" -- " + tstr) or " triage " not in cmd:
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
            if "triage --vs-eager" in (s.get("command") or ""):
                continue  # --vs-eager runs one process: not with --nproc
            if s["skill"] == "trace-inductor":
                if div["divergent"] or result["status"] != "clean":
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
