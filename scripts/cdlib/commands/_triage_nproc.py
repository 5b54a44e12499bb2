"""`triage --nproc N`: run the user's script under torchrun, one structured trace per rank, one Report
per rank, and what differs between ranks. Calls go one way: this module launches (run/multirank_launch.py),
decide/multirank.py turns what the ranks left into the result, show/ renders it.

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
The launch side (shim, torchrun argv, killing ranks, logs) is run/multirank_launch.py; the analysis
(per-rank reports, stacks, divergence, status, next steps) is decide/multirank.py and
decide/analyze_multirank.py; this module launches and writes the reports. No torch import here."""
import json
import os
import shutil
import threading
import time

from ..decide import analyze, multirank, verdict
from ..decide.analyze_multirank import _ranks, torchrun_exit_codes
from ..run import proc, rundir
from ..run.multirank_launch import (SHIM, _read, dump_stacks, kill_ranks, launcher_argv, parse_torchrun_args,
                                    rank_logs, read_status, run_tlparse_all, script_args, survivors)
from ..errors import CliError
from ..cmdline import command_line
from ..show.views import triage_markdown
from ..show.views_multirank import multirank_markdown


def run_triage(args, *, nproc, torchrun_args, target, timeout, tlparse=True):
    """Launch under torchrun, analyze every rank. Returns (result dict, markdown)."""
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
    res, launcher_out = run["res"], run["launcher_out"]

    ranks = [multirank.rank_result(run_dir, r, run, argv=argv, shim=shim, sargs=sargs, tstr=tstr, nproc=nproc,
                                   extra=extra) for r in range(nproc)]
    first_failed = multirank.mark_root_cause(ranks, launcher_out)
    eager = None
    if not res.timed_out:  # failed ranks: the same job once more with compilation off (one verdict per rank)
        eager = eager_check(run_dir, make_argv, nproc, shim, timeout, ranks, tstr,
                            enabled=not getattr(args, "no_eager_check", False))
    for r in ranks:
        rep = r["_rep"]
        multirank.as_rank_launch(rep, tstr, nproc, extra)   # the eager check rebuilt failed ranks' steps
        r["report"], r["report_status"], r["verdict"] = rep.to_dict(), rep.status, multirank.verdict_brief(rep.verdict)
        os.makedirs(os.path.join(run_dir, f"rank_{r['rank']}"), exist_ok=True)
        with open(os.path.join(run_dir, f"rank_{r['rank']}", "report.json"), "w") as f:
            json.dump(r["report"], f, indent=2, default=str)
        with open(r["report_md"], "w") as f:
            f.write(triage_markdown(rep, f"rank {r['rank']}: {torchrun_str}") + "\n")
    artifacts = {"trace_dir": os.path.join(run_dir, "trace"), "torchrun_stdout": res.stdout_path,
                 "torchrun_stderr": res.stderr_path, "rank_logs": os.path.join(run_dir, "ranks")}
    if tlparse and not res.interrupted:
        html = run_tlparse_all(run_dir, nproc)
        if html:
            artifacts["tlparse"] = html
    result = multirank.launch_result(run_dir, run, ranks, nproc=nproc, extra=extra, argv=argv, tstr=tstr,
                                     torchrun_str=torchrun_str, timeout=timeout, first_failed=first_failed,
                                     eager=eager, artifacts=artifacts)
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


def eager_check(run_dir, make_argv, nproc, shim, timeout, ranks, tstr, enabled=True):
    """The verdict per failed rank, as single-process triage gives it (verdict.decide via
    analyze.apply_verdict): the same job once more under torchrun with compilation off on every rank
    (verdict.eager_env: the startup hook sets the compile stance force_eager right after each rank
    imports torch), then each failed rank's error is compared with that rank's eager run
    (multirank.eager_result). Ranks whose error is only the lost peer get no verdict of their own.
    -> the eager run's facts (None: no re-run)."""
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
    return multirank.eager_result(edir, run, nproc, todo, tstr)
