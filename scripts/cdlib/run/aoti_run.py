"""The extra runs of `aoti` (no torch import here): the environment of the crash-instrumented run
(--debug-crash) and the AOTI minifier (--minify) with the check that its repro.py still fails."""
import glob
import os
import re
import sys

from . import proc
from .. import cmdline


DEBUG_ENV = {
    "AOTI_RUNTIME_CHECK_INPUTS": "1",
    "CUDA_LAUNCH_BLOCKING": "1",
    "PYTORCH_NO_CUDA_MEMORY_CACHING": "1",
    "AOT_INDUCTOR_DEBUG_INTERMEDIATE_VALUE_PRINTER": "3",
}


def _find(pattern, root):
    hits = sorted(glob.glob(os.path.join(root, "**", pattern), recursive=True), key=os.path.getmtime)
    return hits[-1] if hits else None


_MARKERS = {"cpp_compile_error": ("CppCompileError", "C++ compile error"),
            "triton_compile_error": ("CompilationError", "triton"),
            "lowering_error": ("LoweringException",)}


def minify(args, run_dir, result):
    """Run minifier_launcher.py minify; then re-run the repro.py it wrote and check it still fails."""
    out = {"ran": False}
    if result["failed_phase"] not in ("compile", "run"):
        out["note"] = (f"nothing to minify: the {result['failed_phase']} phase failed" if result["failed_phase"]
                       else "nothing to minify: the package compiled, ran and matched eager")
        return out
    launcher = _find("minifier_launcher.py", os.path.join(run_dir, "debug"))
    if not launcher:
        out["note"] = "torch wrote no minifier_launcher.py (DUMP_AOTI_MINIFIER=1 was set)"
        return out
    out["launcher"] = launcher
    mdir = os.path.join(run_dir, "minify")
    os.makedirs(mdir, exist_ok=True)
    proc.progress("minifying (AOTI minifier: one compile per step, several minutes)")
    # --skip-sanity: the worker just saw this exact compile (same configs) fail
    pr = proc.run([sys.executable, launcher, "minify", "--skip-sanity"], cwd=mdir, timeout=args.timeout,
                  stdout_path=os.path.join(run_dir, "minify.stdout"), stderr_path=os.path.join(run_dir, "minify.stderr"))
    out.update(ran=True, seconds=pr.duration_s, timed_out=pr.timed_out, exit=pr.returncode,
               log=os.path.join(run_dir, "minify.stderr"))
    log = pr.read_stderr() + pr.read_stdout()
    m = re.findall(r"\((\d+) nodes, (\d+) inputs\)", log)
    if m:
        out["nodes_before"] = int(m[0][0])
    m = re.findall(r"Writing checkpoint with (\d+) nodes", log)
    if m:
        out["nodes_after"] = int(m[-1])
    m = re.search(r"Made (\d+) queries", log)
    if m:
        out["queries"] = int(m.group(1))
    repro = os.path.join(mdir, "repro.py")
    if not os.path.exists(repro):
        out["note"] = "the minifier wrote no repro.py" + (" (timed out; raise --timeout)" if pr.timed_out else "")
        return out
    out["repro"] = repro
    out["repro_command"] = cmdline.command_line([sys.executable, repro])  # the verification run below
    proc.progress("verifying the minimal repro (python repro.py)")
    cdir = os.path.join(run_dir, "repro_check")
    os.makedirs(cdir, exist_ok=True)
    vr = proc.run([sys.executable, repro], cwd=cdir, timeout=args.timeout,
                  stdout_path=os.path.join(run_dir, "repro_check.stdout"),
                  stderr_path=os.path.join(run_dir, "repro_check.stderr"))
    vtext = vr.read_stderr() + vr.read_stdout()
    cls = (result.get("failure") or {}).get("cls")
    markers = _MARKERS.get(cls, ())
    same = (not vr.ok) and (not markers or any(k in vtext for k in markers))
    out["verified"] = bool(same)
    out["repro_exit"] = vr.returncode
    out["repro_error"] = cmdline.clip(next((l for l in reversed(vtext.splitlines()) if "Error" in l), ""), 200)
    return out
