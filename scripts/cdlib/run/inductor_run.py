"""Run a target once with the structured trace + Inductor provenance/debug dir on, for the
`inductor` and `aot` subcommands (no torch import here), or reuse a previous run dir (--from)."""
import glob
import os
import shlex

from . import proc, rundir
from ..read import trace as tracemod
from ..errors import CliError
from ..cmdline import command_line


def add_common(p, default_timeout=900):
    p.add_argument("--timeout", type=float, default=default_timeout, metavar="SEC",
                   help=f"kill the target after SEC seconds (default {default_timeout})")
    p.add_argument("--from", dest="from_dir", metavar="RUN_DIR",
                   help="don't run anything: read the trace of a previous `inductor`/`aot` run dir")
    p.add_argument("--fresh-cache", action="store_true",
                   help="compile with an empty Inductor cache inside the run dir (forces cache misses)")
    p.add_argument("--no-debug-dir", action="store_true",
                   help="don't set TORCH_COMPILE_DEBUG=1 (faster on big models; loses ir_pre/post_fusion dumps)")


def run(args, name, extra_env=None):
    """Returns dict(run_dir, trace, res (ProcResult or None), argv, target_str, stderr, stdout, reused)."""
    if args.timeout is not None and args.timeout <= 0:
        raise CliError("--timeout must be > 0")
    if args.from_dir:
        if args.target:
            raise CliError("give either --from RUN_DIR or a target command after `--`, not both")
        src = os.path.abspath(args.from_dir)
        if not os.path.isdir(src):
            raise CliError(f"--from {args.from_dir}: no such directory")
        tdir = os.path.join(src, "trace")
        for cand in [os.path.join(src, "trace"), os.path.join(src, "trace_default")] + \
                sorted(glob.glob(os.path.join(src, "trace_*"))) + [src]:
            if os.path.isdir(cand) and any(f.endswith(".log") for f in os.listdir(cand)):
                tdir = cand
                break
        if not tracemod.trace_files(tdir):
            raise CliError(f"--from {args.from_dir}: no trace under {tdir} (give the run dir of an `inductor` or `aot` run)")
        argv = []
        meta = os.path.join(src, "target.txt")
        if os.path.exists(meta):
            argv = shlex.split(open(meta).read().strip())
        res = None
        tj = os.path.join(src, "target.json")
        if os.path.exists(tj):
            import json
            from .proc import ProcResult
            try:
                d = json.load(open(tj))
                res = ProcResult(argv=argv, returncode=d.get("returncode"), duration_s=d.get("duration_s") or 0.0,
                                 timed_out=bool(d.get("timed_out")), signal=d.get("signal"))
            except (ValueError, OSError):
                res = None
        return {"run_dir": src, "trace": tracemod.parse(tdir), "res": res, "argv": argv,
                "target_str": command_line(argv) if argv else None,
                "stdout": "", "stderr": _read(os.path.join(src, "target.stderr")), "reused": True}
    argv = proc.resolve_target(args.target)
    run_dir = rundir.make(args.out, name)
    tdir = os.path.join(run_dir, "trace")
    os.makedirs(tdir, exist_ok=True)
    tstr = command_line(argv)
    with open(os.path.join(run_dir, "target.txt"), "w") as f:
        f.write(tstr + "\n")
    env = {"TORCH_TRACE": tdir, "INDUCTOR_PROVENANCE": "1", "PYTHONUNBUFFERED": "1"}
    if not args.no_debug_dir:
        env.update({"TORCH_COMPILE_DEBUG": "1", "TORCH_COMPILE_DEBUG_DIR": run_dir})
    if args.fresh_cache:
        env.update(proc.private_cache_env(os.path.join(run_dir, "inductor_cache"), os.path.join(run_dir, "triton_cache")))
    env.update(extra_env or {})
    proc.progress(f"running {tstr} (trace -> {tdir})")
    res = proc.run(argv, env_add=env, timeout=args.timeout,
                   stdout_path=os.path.join(run_dir, "target.stdout"),
                   stderr_path=os.path.join(run_dir, "target.stderr"))
    proc.progress(f"target finished in {res.duration_s:.1f}s (exit {res.returncode})")
    import json
    with open(os.path.join(run_dir, "target.json"), "w") as f:
        json.dump({"argv": tstr, "returncode": res.returncode, "timed_out": res.timed_out, "signal": res.signal,
                   "duration_s": res.duration_s}, f)
    return {"run_dir": run_dir, "trace": tracemod.parse(tdir), "res": res, "argv": argv, "target_str": tstr,
            "stdout": res.read_stdout(limit=200_000), "stderr": res.read_stderr(limit=2_000_000), "reused": False}


def _read(path):
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read()[-2_000_000:]
    except OSError:
        return ""


def target_status(r):
    """One line about how the target ended, and an error excerpt when it failed."""
    res = r["res"]
    if res is None:
        return None, None
    if res.timed_out:
        return "timed out", None
    if res.signal:
        return f"killed by {res.signal}", None
    if res.returncode != 0:
        tail = [l for l in r["stderr"].strip().splitlines() if l.strip()]
        err = None
        for l in reversed(tail):
            if not l.startswith((" ", "\t")) and ("Error" in l or "Exception" in l):
                err = l.strip()
                break
        return f"exit {res.returncode}", err or (tail[-1].strip() if tail else None)
    return "exit 0", None


def compile_functions(tr):
    """compile_id -> (co_name, 'file:line') from compilation_metrics."""
    out = {}
    for e in tr.of("compilation_metrics"):
        d = e.data if isinstance(e.data, dict) else {}
        cid = e.compile_id or d.get("compile_id")
        if cid and d.get("co_name"):
            f = d.get("co_filename") or "?"
            out[cid] = (d["co_name"], f"{f}:{d.get('co_firstlineno')}")
    return out


def short_path(p):
    if not p:
        return p
    try:
        rel = os.path.relpath(p)
        return rel if not rel.startswith("../..") else p
    except ValueError:
        return p
