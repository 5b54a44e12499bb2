"""env: what torch.compile will run with here, and every problem found, each with its fix."""
import json
import os
import sys
import threading

from .. import cmdline
from ..run import proc, rundir
from ..run.torch_versions import TESTED
from ..errors import CliError
from ..show.output import emit, table

HELP = "environment: torch, triton, GPU, C++ compiler, Python.h, tlparse, TORCH_* vars, changed configs"
ORDER = 5
TAKES_TARGET = False
DESCRIPTION = """Report the Python, torch, triton, CUDA/GPU, C++ compiler and Python.h that torch.compile
will use, tlparse, the TORCH_*/TORCHINDUCTOR_*/TORCHDYNAMO_* variables set, and dynamo/inductor
config values that those variables change. Each problem found is one line with its fix."""
ENV_PREFIXES = ("TORCH", "PYTORCH", "TORCHINDUCTOR", "TORCHDYNAMO", "INDUCTOR", "AOT_INDUCTOR", "AOTI_", "TRITON_",
                "CUDA_LAUNCH_BLOCKING", "CUDA_VISIBLE_DEVICES", "CXX", "CC")
SUPPORTED = ((2, 9), (2, 15))          # oldest supported, newest tested (minor versions)


def add_arguments(p):
    p.add_argument("--smoke", action="store_true", help="also compile a tiny function with Inductor (5-60 s)")
    p.add_argument("--timeout", type=float, default=300, metavar="SEC", help="probe timeout (default 300)")


def _clean_env_keys():
    return {k: None for k in os.environ if k.startswith(ENV_PREFIXES) and k not in ("CXX", "CC", "CUDA_VISIBLE_DEVICES")}


def run(args):
    if args.target:
        raise CliError("env takes no target command")
    run_dir = rundir.make(args.out, "env")
    res_user, res_clean = os.path.join(run_dir, "probe.json"), os.path.join(run_dir, "defaults.json")
    results = {}

    def probe(key, wargs, env_add):
        results[key] = proc.run_worker("env_probe", wargs, run_dir=run_dir, timeout=args.timeout, env_add=env_add, tag=key)

    t = threading.Thread(target=probe, args=("defaults", ["--result", res_clean, "--config-only"], _clean_env_keys()))
    t.start()
    probe("probe", ["--result", res_user] + (["--smoke"] if args.smoke else []), {})
    t.join()
    r = results["probe"]
    if r.timed_out:
        raise CliError(f"the environment probe timed out after {args.timeout:.0f} s (see {r.stderr_path})")
    try:
        info = json.load(open(res_user))
    except (OSError, ValueError):
        raise CliError(f"the environment probe failed (exit {r.returncode}); see {r.stderr_path}")
    try:
        defaults = json.load(open(res_clean)).get("config", {})
    except (OSError, ValueError):
        defaults = {}
    info["tlparse"] = proc.find_tool("tlparse")
    problems = _problems(info)
    env_vars = {k: v for k, v in sorted(os.environ.items()) if k.startswith(ENV_PREFIXES)}
    changed = {k: {"value": v, "default": defaults.get(k)} for k, v in info.get("config", {}).items()
               if k in defaults and defaults[k] != v}
    info.pop("config", None)
    result = {"command": "env", "run_dir": run_dir, "status": "problems" if problems else "ok", "info": info,
              "env_vars": env_vars, "config_changed": changed, "problems": problems}
    emit(args, result, _markdown(result))
    return 0


def _ver(s):
    try:
        return tuple(int(x) for x in s.split("+")[0].split(".")[:2])
    except (ValueError, AttributeError):
        return None


def _problems(info):
    p = []
    if info.get("torch_error"):
        p.append({"problem": f"torch does not import: {info['torch_error']}",
                  "fix": cmdline.command_line([sys.executable, "-m", "pip", "install", "torch"])})
        return p
    v = _ver(info.get("torch"))
    lo, hi = (".".join(map(str, x)) for x in SUPPORTED)
    if v and v < SUPPORTED[0]:
        p.append({"problem": f"torch {info['torch']} is older than the oldest version this plugin supports ({lo})",
                  "fix": f"upgrade torch: {sys.executable} -m pip install 'torch>={lo}' (tested: {', '.join(TESTED)})"})
    elif v and v > SUPPORTED[1]:
        p.append({"problem": f"torch {info['torch']} is newer than the versions tested ({lo}-{hi}: {', '.join(TESTED)})",
                  "fix": "the CLI should work; report anything that looks wrong (config names, trace fields and "
                         "messages can change in a new release)"})
    if not info.get("cxx_path"):
        p.append({"problem": f"no C++ compiler found for Inductor's CPU backend ({info.get('cxx') or info.get('cxx_error')})",
                  "fix": "install g++ (apt-get install g++) or set CXX=/path/to/g++"})
    if not info.get("python_h"):
        p.append({"problem": "Python.h not found: Inductor's CPU backend cannot build its kernels",
                  "fix": "install the Python headers (apt-get install python3-dev, or the python-devel of your distro)"})
    if info.get("cuda_available") and not info.get("triton"):
        p.append({"problem": "CUDA is available but triton is not installed: Inductor cannot generate GPU kernels",
                  "fix": cmdline.command_line([sys.executable, "-m", "pip", "install", "triton"]) + " (the version your torch pins)"})
    for var, what in (("TORCH_COMPILE_DISABLE", "torch.compile is disabled (runs eagerly)"),
                      ("TORCHDYNAMO_DISABLE", "Dynamo is disabled (torch.compile runs eagerly)")):
        if os.environ.get(var) not in (None, "", "0"):
            p.append({"problem": f"{var}={os.environ[var]}: {what}", "fix": f"unset {var}"})
    if os.environ.get("TORCHDYNAMO_SUPPRESS_ERRORS") in ("1", "True", "true"):
        p.append({"problem": "TORCHDYNAMO_SUPPRESS_ERRORS=1 hides compile errors (falls back to eager silently)",
                  "fix": "unset TORCHDYNAMO_SUPPRESS_ERRORS while debugging"})
    smoke = info.get("smoke")
    if smoke and not smoke.get("ok"):
        p.append({"problem": f"Inductor smoke test failed: {smoke.get('error')}",
                  "fix": "see the C++ compiler / Python.h lines above; the full trace is in probe.json"})
    if not info.get("tlparse"):
        p.append({"problem": "tlparse is not installed (no HTML report of the structured trace)",
                  "fix": cmdline.command_line([sys.executable, "-m", "pip", "install", "tlparse"])})
    return p


def _markdown(r):
    i = r["info"]
    lines = ["# torch.compile environment: " + ("OK" if not r["problems"] else f"{len(r['problems'])} problem(s)")]
    gpu = ", ".join(f"{g['name']} (sm {g['capability']})" for g in i.get("gpus", [])) or "none"
    rows = [["python", f"{i.get('python')} ({i.get('executable')})"], ["torch", i.get("torch") or i.get("torch_error")],
            ["CUDA build / GPU", f"{i.get('torch_cuda_build') or 'cpu-only'} / {gpu}"],
            ["triton", i.get("triton") or "not installed"],
            ["C++ compiler", f"{i.get('cxx')} → {i.get('cxx_path') or 'NOT FOUND'}" + (f" ({i['cxx_version']})" if i.get("cxx_version") else "")],
            ["Python.h", i.get("python_h") or "NOT FOUND"], ["inductor cache", i.get("inductor_cache_dir")],
            ["tlparse", i.get("tlparse") or "not installed"]]
    if i.get("smoke"):
        s = i["smoke"]
        rows.append(["inductor smoke test", f"ok in {s['seconds']} s" if s.get("ok") else f"FAILED: {s.get('error')}"])
    lines.append(table(["what", "value"], rows))
    if r["problems"]:
        lines.append("\n## Problems")
        lines += [f"- {p['problem']} → fix: {p['fix']}" for p in r["problems"]]
    if r["env_vars"]:
        lines.append("\n## Environment variables set")
        lines += [f"- {k}={v}" for k, v in r["env_vars"].items()]
    if r["config_changed"]:
        lines.append("\n## Config values changed from defaults (by the environment)")
        lines += [f"- {k} = {v['value']!r} (default {v['default']!r})" for k, v in list(r["config_changed"].items())[:40]]
    lines.append(f"\nFull probe: {os.path.join(r['run_dir'], 'probe.json')}")
    return "\n".join(lines)
