"""Run a target command in its own process group with a timeout; never leave it running."""
import dataclasses
import os
import shutil
import signal
import subprocess
import sys
import time

from .errors import CliError


@dataclasses.dataclass
class ProcResult:
    argv: list
    returncode: int | None
    duration_s: float
    timed_out: bool = False
    signal: str | None = None        # e.g. "SIGSEGV" when the target died of a signal
    stdout_path: str | None = None
    stderr_path: str | None = None

    @property
    def ok(self):
        return self.returncode == 0 and not self.timed_out

    def read_stdout(self, limit=None):
        return _read(self.stdout_path, limit)

    def read_stderr(self, limit=None):
        return _read(self.stderr_path, limit)


def _read(path, limit):
    if not path or not os.path.exists(path):
        return ""
    with open(path, "rb") as f:
        if limit:
            f.seek(0, os.SEEK_END)
            size = f.tell()
            f.seek(max(0, size - limit))
        data = f.read()
    return data.decode("utf-8", "replace")


def resolve_target(target, what="target command"):
    """Validate a target command line; run foo.py with this Python. Returns argv."""
    if not target:
        raise CliError(f"no {what}: put it after `--`, e.g. `-- python train.py`")
    argv = list(target)
    first = argv[0]
    if first.endswith(".py"):
        if not os.path.isfile(first):
            raise CliError(f"{first}: no such file")
        return [sys.executable] + argv
    if os.sep in first:
        if not os.path.isfile(first):
            raise CliError(f"{first}: no such file")
        if not os.access(first, os.X_OK):
            raise CliError(f"{first}: not executable (run it as `-- python {first}`?)")
        return argv
    if shutil.which(first) is None:
        if first in ("python", "python3"):  # no `python` on PATH: use the interpreter running us
            argv[0] = sys.executable
        else:
            raise CliError(f"{first}: command not found")
    if os.path.basename(first).startswith("python") and len(argv) > 1 and argv[1].endswith(".py") \
            and not os.path.isfile(argv[1]):
        raise CliError(f"{argv[1]}: no such file")
    return argv


def kill_group(p, grace=3.0):
    """SIGTERM the whole process group, then SIGKILL what is left."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(p.pid, sig)
        except (ProcessLookupError, PermissionError):
            return
        try:
            p.wait(timeout=grace)
            # children may outlive the leader: make sure the group is gone
            os.killpg(p.pid, 0)
        except subprocess.TimeoutExpired:
            continue
        except (ProcessLookupError, PermissionError):
            return


def run(argv, *, env=None, env_add=None, cwd=None, timeout=None, stdout_path=None, stderr_path=None, started=None):
    """Run argv; stdout/stderr go to files (or are discarded). Kills the process group on
    timeout and on Ctrl-C (then re-raises KeyboardInterrupt). started(popen) is called once the
    process exists (to cancel it from another thread with kill_group)."""
    full_env = dict(os.environ if env is None else env)
    for k, v in (env_add or {}).items():
        if v is None:
            full_env.pop(k, None)
        else:
            full_env[k] = str(v)
    out = open(stdout_path, "wb") if stdout_path else subprocess.DEVNULL
    err = open(stderr_path, "wb") if stderr_path else subprocess.DEVNULL
    t0 = time.monotonic()
    try:
        try:
            p = subprocess.Popen(argv, env=full_env, cwd=cwd, stdin=subprocess.DEVNULL, stdout=out,
                                 stderr=err, start_new_session=True)
        except OSError as e:
            raise CliError(f"cannot start {argv[0]}: {e.strerror}")
        if started is not None:
            started(p)
        timed_out = False
        try:
            p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
            kill_group(p)
        except KeyboardInterrupt:
            kill_group(p)
            raise
        else:
            # the leader exited; don't leave its children (e.g. compile workers) behind
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
    finally:
        for f in (out, err):
            if hasattr(f, "close"):
                f.close()
    rc = p.returncode
    sig = None
    if rc is not None and rc < 0:
        try:
            sig = signal.Signals(-rc).name
        except ValueError:
            sig = f"signal {-rc}"
    return ProcResult(argv=list(argv), returncode=rc, duration_s=round(time.monotonic() - t0, 3),
                      timed_out=timed_out, signal=sig, stdout_path=stdout_path, stderr_path=stderr_path)


def progress(msg):
    sys.stderr.write(f"[compile-debug] {msg}\n")
    sys.stderr.flush()


SCRIPTS_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run_worker(name, worker_args, *, run_dir, timeout, env_add=None, tag=None, cwd=None):
    """Run cdlib.workers.<name> with this Python in a subprocess (own process group, timeout).
    stdout/stderr go to <run_dir>/<tag>.stdout/.stderr. Returns ProcResult."""
    tag = tag or name
    env = dict(env_add or {})
    env["PYTHONPATH"] = SCRIPTS_DIR + (os.pathsep + os.environ["PYTHONPATH"] if os.environ.get("PYTHONPATH") else "")
    return run([sys.executable, "-m", f"cdlib.workers.{name}"] + list(worker_args), env_add=env,
               cwd=cwd, timeout=timeout, stdout_path=os.path.join(run_dir, f"{tag}.stdout"),
               stderr_path=os.path.join(run_dir, f"{tag}.stderr"))


STARTUP_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "startup")


def startup_env(run_dir, steps, name="startup"):
    """Env vars that make the target apply `steps` right after it imports torch (see
    cdlib/startup/sitecustomize.py): [{"stance": ...}, {"config": {...}}, {"code": "..."}].
    The settings file and the marker (one pid per process that applied them) go in run_dir."""
    import json
    path = os.path.join(run_dir, f"{name}.json")
    marker = os.path.join(run_dir, f"{name}.applied")
    with open(path, "w", encoding="utf-8") as f:
        json.dump({"steps": steps, "applied_marker": marker}, f, indent=1)
    pp = os.environ.get("PYTHONPATH")
    return {"COMPILE_DEBUG_STARTUP": path,
            "PYTHONPATH": STARTUP_DIR + (os.pathsep + pp if pp else "")}
