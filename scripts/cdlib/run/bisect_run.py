"""The processes of `bisect` around PyTorch's compiler bisector (no torch import here): the probe of
the target's torch (its version, the bisector's features, its BACKENDS read from the source), and the
one run with torch.compile disabled, judged like every bisector step."""
import json
import os

from . import proc

PROBE = r"""
import importlib.util, json, os, re
s = importlib.util.find_spec("torch")
d = {"torch": None}
if s and s.origin:
    root = os.path.dirname(s.origin)
    d["torch"] = root
    try:
        d["version"] = re.search(r"__version__\s*=\s*['\"]([^'\"]+)", open(os.path.join(root, "version.py")).read()).group(1)
    except Exception:
        d["version"] = None
    p = os.path.join(root, "_inductor", "compiler_bisector.py")
    src = open(p).read() if os.path.exists(p) else ""
    d["bisector"] = bool(src)
    d["has_run_cli"] = 'command == "run"' in src
    d["has_env_protocol"] = "TORCH_BISECT_MAX" in src and "in_process_cache" in src
    # BACKENDS (ladder order, subsystems) read from the source: no torch import
    import ast
    be = None
    try:
        for node in ast.walk(ast.parse(src)):
            tgt = getattr(node, "target", None) or (node.targets[0] if isinstance(node, ast.Assign) else None)
            if isinstance(tgt, ast.Name) and tgt.id == "BACKENDS" and isinstance(getattr(node, "value", None), ast.Dict):
                be = []
                for k, v in zip(node.value.keys, node.value.values):
                    subs = []
                    for c in v.elts:
                        kind = c.func.id
                        args = [ast.literal_eval(a) for a in c.args]
                        if kind == "ConfigChange":
                            subs.append({"name": f"{args[0]}_{args[1]}", "kind": "binary", "config": {args[1]: args[2]}})
                        elif kind == "BisectSubsystem":
                            subs.append({"name": args[0], "kind": "bisect", "config": None})
                        else:
                            subs.append({"name": args[0], "kind": "binary", "config": None})
                    be.append([ast.literal_eval(k), subs])
    except Exception:
        be = None
    d["backends"] = be
print(json.dumps(d))
"""


def probe_torch(python, run_dir, timeout=120):
    res = proc.run([python, "-c", PROBE], timeout=timeout, stdout_path=os.path.join(run_dir, "probe.stdout"),
                   stderr_path=os.path.join(run_dir, "probe.stderr"))
    try:
        return json.loads(res.read_stdout().strip().splitlines()[-1])
    except (ValueError, IndexError):
        return {"torch": None}


def _judged_run(argv, run_dir, args, env, name):
    """One run of the target with env, judged as a bisect step is (exit status, signal, --bad-if, ...)."""
    from .workers import bisect_step
    r = proc.run(argv, env_add=env, timeout=args.timeout, stdout_path=os.path.join(run_dir, f"{name}.stdout"),
                 stderr_path=os.path.join(run_dir, f"{name}.stderr"))
    bad, reason = bisect_step.judge(r, r.read_stdout(), r.read_stderr(), args.bad_if, args.bad_if_exception)
    return {"bad": bad, "reason": reason}


def no_compile_check(argv, run_dir, args, env):
    """Only when even backend='eager' fails: does the program fail with torch.compile disabled?"""
    e = dict(env)
    e["TORCH_COMPILE_DISABLE"] = "1"
    e["PYTHONPATH"] = e.pop("CD_ORIG_PYTHONPATH") or None
    return _judged_run(argv, run_dir, args, e, "no_compile")


def config_check(argv, run_dir, args, env, config, name="pattern_matcher_off"):
    """One run of the target with `config` set as it imports torch (the startup hook), in an empty cache of
    its own: does that setting avoid the failure? -> {"config", "bad", "reason", "applied"}"""
    e = {k: v for k, v in env.items() if k != "CD_ORIG_PYTHONPATH"}
    e["TMPDIR"] = os.environ.get("TMPDIR")   # the search's own TMPDIR is gone by now
    e.update(proc.private_cache_env(os.path.join(run_dir, f"{name}_cache")))
    e.update(proc.startup_env(run_dir, [{"config": config}], name=name))
    proc.progress(f"checking the workaround: one run with {', '.join(f'{k}={v}' for k, v in config.items())}")
    judged = _judged_run(argv, run_dir, args, e, name)
    # the hook ran (its marker) and set everything (it names a setting it could not set on stderr)
    return {"config": config, **judged,
            "applied": os.path.exists(os.path.join(run_dir, f"{name}.applied"))
            and not proc.startup_failure(os.path.join(run_dir, f"{name}.stderr"))}
