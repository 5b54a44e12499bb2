"""`perf <file.py:factory>` and `perf -- <command...>`: why is my compiled model slow.

Model target: eager vs torch.compile modes, each in its own worker process (warm-up, sync, medians,
compile time apart, peak memory), then attribution from the default mode's trace: graph breaks,
frames skipped to eager, recompiles, cudagraph skips, fallback kernels -> top fixes ranked by
expected gain. Script target: one traced run; compile time, recompiles and breaks as a share of
wall time (optionally against an eager run: torch.compiler.set_stance("force_eager") injected at start-up)."""
import json
import os

from ..decide import perf as DP
from ..show import output, views_perf
from ..run import proc, rundir, target
from ..errors import CliError

HELP = "why is my compiled model slow: eager vs compile modes, compile time, breaks/recompiles cost"
ORDER = 42
TAKES_TARGET = True
DESCRIPTION = """Model target (file.py:factory returning (model, args[, kwargs])): time eager and
torch.compile modes, each in a fresh worker process: first call (compile) apart, warm-up, then
median over --repeat rounds, synchronizing CUDA when the model is on a GPU; peak memory per mode.
Then attribute: graph breaks (and the share of step time spent outside compiled regions), frames
skipped to eager, recompiles, cudagraph skips and fallback kernels, with fixes ranked by expected gain.

Script target (after --): run once traced; compile time, recompiles and graph breaks as a share of
wall time; --eager also runs it eagerly (force_eager stance injected at start-up) to compare wall time."""
EPILOG = """examples:
  compile_debug.py perf model.py:make_model
  compile_debug.py perf model.py:make_model --train --modes eager,default
  compile_debug.py perf -- python train.py --steps 50
  compile_debug.py perf --eager -- python infer.py"""

MODES = ["eager", "default", "reduce-overhead", "max-autotune-no-cudagraphs", "max-autotune"]
CPU_DEFAULT = ["eager", "default"]
GPU_DEFAULT = ["eager", "default", "reduce-overhead", "max-autotune-no-cudagraphs"]


def add_arguments(p):
    p.add_argument("model", nargs="?", metavar="FILE.py:FACTORY", help="model target (or a command after --)")
    p.add_argument("--modes", metavar="M,M", help="comma list from " + ",".join(MODES) +
                   f" (default: {','.join(CPU_DEFAULT)} on CPU, {','.join(GPU_DEFAULT)} on CUDA; eager is always run)")
    p.add_argument("--train", action="store_true", help="time forward+backward (loss = sum of float outputs)")
    p.add_argument("--repeat", type=int, default=7, metavar="N", help="timed rounds per mode; medians reported (default 7)")
    p.add_argument("--warmup", type=int, default=3, metavar="N", help="warm-up calls after the first (default 3)")
    p.add_argument("--round-ms", type=float, default=100.0, metavar="MS", help="target duration of one timed round (default 100)")
    p.add_argument("--threads", type=int, default=0, metavar="N",
                   help="torch.set_num_threads(N) in every worker (default: torch's own choice)")
    p.add_argument("--eager", action="store_true", help="script target: also run it eagerly (force_eager stance; works with fullgraph=True)")
    p.add_argument("--timeout", type=float, default=900, metavar="SEC", help="limit per worker / target run (default 900)")


def run(args):
    if args.timeout <= 0:
        raise CliError("--timeout must be > 0")
    if args.threads < 0:
        raise CliError("--threads must be >= 0")
    if args.repeat < 1 or args.warmup < 0 or args.round_ms <= 0:
        raise CliError("--repeat must be >= 1, --warmup >= 0, --round-ms > 0")
    model = args.model
    if model and not target.is_model_spec(model) and not args.target:
        # `perf train.py --x` without --: treat as a script command
        args.target = [model]
        model = None
    if model and args.target:
        raise CliError("give either a model target FILE.py:FACTORY or a command after `--`, not both")
    if not model and not args.target:
        raise CliError("no target: give FILE.py:FACTORY or a command after `--`, e.g. `-- python train.py`")
    modes = None
    if args.modes:
        modes = [m.strip() for m in args.modes.split(",") if m.strip()]
        bad = [m for m in modes if m not in MODES]
        if bad:
            raise CliError(f"--modes: unknown mode {bad[0]!r} (choose from {', '.join(MODES)})")
    if model:
        target.parse_spec(model)
        return _run_model(args, model, modes)
    if args.modes or args.train:
        raise CliError("--modes/--train apply to a model target FILE.py:FACTORY, not to a script command")
    return _run_script(args)


# ---- model target ---------------------------------------------------------------------------

def _worker(args, run_dir, spec, mode, profile=False):
    tag = f"perf_{mode}"
    res_path = os.path.join(run_dir, f"{tag}.json")
    tdir = os.path.join(run_dir, f"trace_{mode}")
    wargs = ["--spec", spec, "--mode", mode, "--warmup", str(args.warmup), "--repeat", str(args.repeat),
             "--round-ms", str(args.round_ms), "--result", res_path]
    if args.train:
        wargs.append("--train")
    if args.threads:
        wargs += ["--threads", str(args.threads)]
    if profile:
        wargs.append("--profile")
    env = {"PYTHONUNBUFFERED": "1"}
    if mode != "eager":
        env.update({"TORCH_TRACE": tdir, "INDUCTOR_PROVENANCE": "1"})
    proc.progress(f"timing {mode} ...")
    pr = proc.run_worker("perf", wargs, run_dir=run_dir, timeout=args.timeout, env_add=env, tag=tag)
    r = None
    if os.path.exists(res_path):
        with open(res_path) as f:
            r = json.load(f)
    if r is None:
        why = "timed out" if pr.timed_out else (f"killed by {pr.signal}" if pr.signal else f"exit {pr.returncode}")
        tail = [l for l in pr.read_stderr(limit=4000).splitlines() if l.strip()]
        r = {"mode": mode, "ok": False, "error": f"worker {why}" + (f": {tail[-1][:300]}" if tail else "")}
    r["trace_dir"] = tdir if mode != "eager" and os.path.isdir(tdir) else None
    r["stderr"] = pr.stderr_path
    if r.get("ok"):
        proc.progress(f"{mode}: median {r['median_ms']:.3f} ms, first call {r['first_call_s']:.2f} s")
    else:
        proc.progress(f"{mode}: failed ({r.get('error')})")
    return r


def _run_model(args, spec, modes):
    run_dir = rundir.make(args.out, "perf")
    spec_abs = "{}:{}".format(*target.parse_spec(spec))
    results = {}
    results["eager"] = _worker(args, run_dir, spec_abs, "eager")
    if not results["eager"].get("ok"):
        result = {"command": "perf", "run_dir": run_dir, "status": "error", "target": spec,
                  "error": results["eager"].get("error"), "modes": results}
        output.emit(args, result, views_perf.eager_failed_md(result))
        return 0
    device = results["eager"].get("device", "cpu")
    cuda = device.startswith("cuda")
    if modes is None:
        modes = GPU_DEFAULT if cuda else CPU_DEFAULT
    for m in modes:
        if m == "eager":
            continue
        results[m] = _worker(args, run_dir, spec_abs, m, profile=(m == "default"))
    result = DP.model_result(args, run_dir, spec, results, device, cuda)
    output.emit(args, result, views_perf.model_md(result))
    return 0


# ---- script target --------------------------------------------------------------------------

def _run_script(args):
    argv = proc.resolve_target(args.target)
    run_dir = rundir.make(args.out, "perf")
    from ..decide import runs
    from ..cmdline import command_line
    tstr = command_line(argv)
    proc.progress(f"running {tstr} traced")
    rep = runs.run_and_analyze(argv, run_dir, timeout=args.timeout, tlparse=False)
    eager = None
    if args.eager:
        proc.progress("running it again eagerly (force_eager stance)")
        # not TORCH_COMPILE_DISABLE=1: on torch 2.14 it makes fullgraph=True functions raise
        er = proc.run(argv, env_add={**proc.startup_env(run_dir, [{"stance": "force_eager"}], name="eager_run"),
                                     "PYTHONUNBUFFERED": "1"}, timeout=args.timeout,
                      stdout_path=os.path.join(run_dir, "eager.stdout"), stderr_path=os.path.join(run_dir, "eager.stderr"))
        eager = {"wall_s": er.duration_s, "exit": er.returncode, "timed_out": er.timed_out}
    result = DP.script_result(run_dir, tstr, rep, eager)
    output.emit(args, result, views_perf.script_md(result))
    return 0
