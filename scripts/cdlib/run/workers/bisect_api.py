"""Drive torch._inductor.compiler_bisector through its Python API (CompilerBisector.do_bisect)
for torch versions whose bisector has no `run` CLI (< 2.11). Each step runs the target in a
subprocess exactly like the `run` CLI does (same environment variables), via bisect_step.

Usage: python -m cdlib.run.workers.bisect_api --result R --log-dir D --cache-dir C [--timeout T]
       [--bad-if RE] [--bad-if-exception NAME] -- target...
TMPDIR should point into the run dir (torch < 2.11 keeps its state in tempfile.mkdtemp())."""
import argparse
import dataclasses
import json
import os
import sys

from cdlib.run.workers import bisect_step
from cdlib.run.workers.bisect_step import _kill_target_on_sigterm


def main(argv=None):
    _kill_target_on_sigterm()
    p = argparse.ArgumentParser()
    p.add_argument("--result", required=True)
    p.add_argument("--log-dir", required=True)
    p.add_argument("--cache-dir", required=True)
    p.add_argument("--timeout", type=float)
    p.add_argument("--bad-if")
    p.add_argument("--bad-if-exception")
    p.add_argument("--cwd")
    p.add_argument("target", nargs=argparse.REMAINDER)
    a = p.parse_args(argv)
    target = a.target[1:] if a.target and a.target[0] == "--" else a.target

    os.environ["TORCHINDUCTOR_CACHE_DIR"] = a.cache_dir
    from torch._inductor.compiler_bisector import CompilerBisector

    CompilerBisector.in_process_cache = a.cache_dir   # 2.11+: used as is; older: replaced by mkdtemp()

    def test_function():
        bm = CompilerBisector
        env = {}
        # the state dir do_bisect really uses (older torch makes its own temp dir): the target's
        # bisector reads <TORCHINDUCTOR_CACHE_DIR>/bisect, so point the target's cache there.
        state_root = bm.in_process_cache or a.cache_dir
        env["TORCHINDUCTOR_CACHE_DIR"] = state_root
        backend = bm.get_backend()
        subsystem = bm.get_subsystem()
        if backend:
            env["TORCH_COMPILE_BACKEND"] = backend
            env["TORCH_BISECT_BACKEND"] = backend
        if subsystem:
            env["TORCH_BISECT_SUBSYSTEM"] = subsystem
            if bm.get_run_state(backend, subsystem) == "test_disable":
                env["TORCH_BISECT_MAX"] = "-1"
        os.environ["TORCHINDUCTOR_CACHE_DIR"] = state_root   # for bisect_step's state read-back
        return bisect_step.step(target, log_dir=a.log_dir, timeout=a.timeout, bad_if=a.bad_if,
                                bad_if_exception=a.bad_if_exception, env_add=env, cwd=a.cwd)

    out = {"ok": True}
    try:
        res = CompilerBisector.do_bisect(test_function)
        out["result"] = dataclasses.asdict(res) if res is not None else None
    except Exception as e:  # e.g. "Function succeeded with 'find_max_bounds' status" (flaky target)
        out = {"ok": False, "error": f"{type(e).__name__}: {e}"}
    with open(a.result, "w") as f:
        json.dump(out, f)
    return 0


if __name__ == "__main__":
    sys.exit(main())
