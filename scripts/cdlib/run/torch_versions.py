"""Another torch release for the same program: `compare --torch VERSION -- python prog.py`.

A version is installed once into a throwaway virtual environment in this tool's own cache
(COMPILE_DEBUG_TORCH_CACHE, default ~/.cache/compile-debug/torch; never the user's environment, never
torch's or pip's caches). The venv sees the user's other packages (--system-site-packages of the
interpreter in the user's command), so transformers & co. come from the user's environment; only torch
(and what that torch release pins: triton, nvidia-*) is installed in it, with the user's own pip
configuration. An interpreter path may be given instead of a version (`--torch /path/to/python`).
No torch import here."""
import hashlib
import os
import re
import shutil
import subprocess
import tempfile

from . import proc
from ..errors import CliError

# the torch releases this tool is tested on; the last is the newest release (env's check, and analyze: no "a newer
# torch may trace this" for a break inside torch on it). CI: 2.15 full suite, 2.9 and 2.14 smoke; 2.11 on a GPU
TESTED = ("2.9.1", "2.11.0", "2.14.1", "2.15.0")


def release_tuple(version):
    """(major, minor) of a torch version string ('2.15.0+cu132' -> (2, 15)); None if it is not one."""
    m = re.match(r"(\d+)\.(\d+)", version or "")
    return (int(m.group(1)), int(m.group(2))) if m else None


VERSION_RE = re.compile(r"^\d+\.\d+(\.\d+)?([a-z0-9.+]*)$")


def cache_root():
    return os.environ.get("COMPILE_DEBUG_TORCH_CACHE") or os.path.join(
        os.path.expanduser("~"), ".cache", "compile-debug", "torch")


def probe(python, timeout=120):
    """torch's version in an interpreter, or raise CliError naming the interpreter."""
    try:
        p = subprocess.run([python, "-c", "import torch; print(torch.__version__)"], capture_output=True, text=True,
                           timeout=timeout, start_new_session=True)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise CliError(f"{python}: cannot run it to read its torch version ({e.__class__.__name__})")
    if p.returncode != 0:
        last = (p.stderr.strip().splitlines() or ["?"])[-1]
        raise CliError(f"{python} cannot import torch: {last}")
    return p.stdout.strip().splitlines()[-1]


def _key(base_python, version):
    real = os.path.realpath(base_python)
    h = hashlib.sha1(real.encode()).hexdigest()[:8]
    return f"torch-{version}-{os.path.basename(real)}-{h}"


def python_for(spec, base_python, *, timeout=3000):
    """An interpreter whose torch is `spec` (a version to install, or a path to a python). Returns
    (python, version). Installs into the cache once; says clearly when the version cannot be installed."""
    if os.sep in spec or spec.startswith("python"):
        exe = shutil.which(spec) or spec
        if not os.path.isfile(exe):
            raise CliError(f"--torch {spec}: no such interpreter")
        return exe, probe(exe)
    if not VERSION_RE.match(spec):
        raise CliError(f"--torch {spec}: give a torch release (e.g. 2.15.0) or the path of a python that has one")
    root = cache_root()
    venv = os.path.join(root, _key(base_python, spec))
    exe = os.path.join(venv, "bin", "python")
    if os.path.isfile(exe):
        try:
            got = probe(exe)
            if got.split("+")[0] == spec.split("+")[0]:
                return exe, got
        except CliError:
            pass
    os.makedirs(root, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix="build-", dir=root)
    log = os.path.join(root, f"{os.path.basename(venv)}.log")
    try:
        proc.progress(f"installing torch {spec} into a throwaway venv (once; cached in {root}; "
                      "a CUDA build is several GB)")
        steps = ([base_python, "-m", "venv", "--system-site-packages", os.path.join(tmp, "v")],
                 [os.path.join(tmp, "v", "bin", "python"), "-m", "pip", "install", "--disable-pip-version-check",
                  f"torch=={spec}"])
        for argv in steps:
            res = proc.run(argv, timeout=timeout, stdout_path=log, stderr_path=log + ".err")
            if not res.ok:
                err = res.read_stderr(limit=200_000).strip().splitlines()
                # pip's first ERROR line names the cause ("Could not find a version ...", "Cannot install ...
                # conflicting dependencies"); a constraint (a pip config capping torch) is said below it
                errs = [ln for ln in err if ln.startswith("ERROR")] or err[-1:]
                why = errs[0] if errs else ""
                cap = next((ln.strip() for ln in res.read_stdout(limit=200_000).splitlines() + err
                            if "(constraint)" in ln), None)
                if cap:
                    why += f" [{cap}: a pip constraint caps torch here; `pip config list` shows it]"
                if res.timed_out:
                    why = f"timed out after {timeout:.0f} s"
                raise CliError(f"torch {spec} cannot be installed here: {why.strip()[:300]} (log: {log}.err)")
        if os.path.exists(venv):
            shutil.rmtree(venv)
        os.rename(os.path.join(tmp, "v"), venv)   # a half-built venv is never used
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return exe, probe(exe)


def is_python(word):
    return bool(re.match(r"^python(\d+(\.\d+)?)?$", os.path.basename(word)))


def ver_key(v):
    return tuple(int(x) if x.isdigit() else 0 for x in re.split(r"[.+a-z]", v.split("+")[0])[:3])
