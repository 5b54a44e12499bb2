"""Run a target command in its own process group with a timeout; never leave it running."""
import dataclasses
import os
import re
import secrets
import shutil
import signal
import subprocess
import sys
import threading
import time

from ..errors import CliError


@dataclasses.dataclass
class ProcResult:
    argv: list
    returncode: int | None
    duration_s: float
    timed_out: bool = False
    signal: str | None = None        # e.g. "SIGSEGV" when the target died of a signal
    stdout_path: str | None = None
    stderr_path: str | None = None
    strays: list = dataclasses.field(default_factory=list)   # tagged pids still alive after the leader exited
    interrupted: bool = False        # Ctrl-C: run(keep_on_interrupt=True) ended the run and returned

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
            from ..cmdline import command_line
            raise CliError(f"{first}: not executable (run it as `-- {command_line([sys.executable, first])}`?)")
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


def target_python(argv):
    """The Python that runs the user's program, for every command that starts it through an interpreter
    of its own (torchrun, the bisector, the minifier): the one the command names (`/venv/bin/python
    train.py`, `python3.11 -m pkg`), else the one running this CLI."""
    first = os.path.basename(argv[0]) if argv else ""
    if re.match(r"^python[\d.]*$", first):
        return shutil.which(argv[0]) or argv[0]
    return sys.executable


def check_torch(python, what="run the program"):
    """CliError naming the interpreter when it has no torch (looked up without importing it)."""
    code = ("import importlib.util, sys; sys.path[:] = [p for p in sys.path if p not in ('', '.')]; "
            "s = importlib.util.find_spec('torch'); sys.exit(0 if s and s.origin else 3)")  # not a dir named torch
    res = run([python, "-c", code], timeout=60)
    if res.returncode == 3:
        raise CliError(f"{python} cannot import torch (No module named 'torch'), so it cannot {what}: name the "
                       "Python that has torch before the script, e.g. `-- /path/to/venv/bin/python train.py`")
    if res.returncode != 0:
        raise CliError(f"{python}: cannot start it to look for torch "
                       f"({'timed out' if res.timed_out else res.signal or f'exit {res.returncode}'})")


from ..cmdline import STDIN_VAR  # noqa: E402  (--stdin FILE; defined beside the command renderer that names it)
OWNER_VAR = "COMPILE_DEBUG_OWNER"   # set in every target's environment: finds descendants that left the group
OUTPUT_HEAD = 1 << 20                # a huge stdout/stderr keeps its first 1 MiB ...
OUTPUT_TAIL = 4 << 20                # ... and its last 4 MiB (the traceback is at the end)
KEEP_OUTPUT = False                  # triage --keep-output: keep all of it


def _state(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return None


def tagged(token):
    """Live pids whose environment has OWNER_VAR=token: every descendant of one run, also those that
    started their own session (torchrun's ranks, daemons) or were orphaned. Linux /proc only."""
    key = f"\0{OWNER_VAR}=".encode()
    want = token.encode()
    out = []
    try:
        names = os.listdir("/proc")
    except OSError:
        return out
    me = os.getpid()
    for d in names:
        if not d.isdigit() or int(d) == me:
            continue
        try:
            with open(f"/proc/{d}/environ", "rb") as f:
                env = b"\0" + f.read() + b"\0"
        except OSError:
            continue
        i = env.find(key)
        if i < 0 or want not in env[i + len(key):env.index(b"\0", i + 1)].split(b":"):
            continue
        if _state(d) not in (None, "Z"):
            out.append(int(d))
    return out


def _signal_all(p, pids, sig):
    own = os.getpgrp()
    for pgid in {p.pid} | {_pgid(x) for x in pids}:
        if pgid and pgid != own:
            try:
                os.killpg(pgid, sig)
            except (ProcessLookupError, PermissionError):
                pass
    for x in pids:
        try:
            os.kill(x, sig)
        except (ProcessLookupError, PermissionError):
            pass


def _pgid(pid):
    try:
        return os.getpgid(pid)
    except OSError:
        return None


def terminate(p, token=None, grace=3.0):
    """End the run: SIGTERM p's process group and every process tagged with token (their own groups
    too), wait up to grace seconds, then SIGKILL what is left. Returns the tagged pids that were
    still alive besides the leader. Ctrl-C is ignored meanwhile so that a second one cannot leave
    processes behind."""
    main = threading.current_thread() is threading.main_thread()
    old = signal.signal(signal.SIGINT, signal.SIG_IGN) if main else None
    try:
        strays = [x for x in (tagged(token) if token else []) if x != p.pid]
        if p.poll() is not None and not strays and not _group_alive(p.pid):
            return []
        _signal_all(p, strays, signal.SIGTERM)
        deadline = time.monotonic() + grace
        while time.monotonic() < deadline:
            left = [x for x in (tagged(token) if token else []) if x != p.pid]
            if p.poll() is not None and not left and not _group_alive(p.pid):
                break
            time.sleep(0.05)
        for _ in range(5):  # SIGKILL until nothing is left (a process may fork while we kill)
            left = [x for x in (tagged(token) if token else []) if x != p.pid]
            if p.poll() is not None and not left and not _group_alive(p.pid):
                break
            _signal_all(p, left, signal.SIGKILL)
            try:
                p.wait(timeout=1.0)
            except subprocess.TimeoutExpired:
                pass
            time.sleep(0.05)
        return strays
    finally:
        if main:
            signal.signal(signal.SIGINT, old)


def _group_alive(pgid):
    try:
        os.killpg(pgid, 0)
    except (ProcessLookupError, PermissionError):
        return False
    # only zombies left in the group (children of a dead leader, not yet reaped) count as gone
    for d in os.listdir("/proc") if os.path.isdir("/proc") else []:
        if d.isdigit() and _pgid(int(d)) == pgid and _state(d) not in (None, "Z"):
            return True
    return not os.path.isdir("/proc")


def kill_group(p, grace=3.0):
    """SIGTERM the whole process group, then SIGKILL what is left."""
    terminate(p, None, grace)


def trim_output(path, head=None, tail=None):
    """Keep the head and tail of a huge output file with a note in between (unless KEEP_OUTPUT).
    Returns the number of bytes dropped."""
    head = OUTPUT_HEAD if head is None else head
    tail = OUTPUT_TAIL if tail is None else tail
    try:
        size = os.path.getsize(path)
    except OSError:
        return 0
    if KEEP_OUTPUT or size <= head + tail + (1 << 20):
        return 0
    tmp = path + ".trim"
    with open(path, "rb") as src, open(tmp, "wb") as dst:
        first = src.read(head)
        cut = first.rfind(b"\n")
        first = first[:cut + 1] if cut > 0 else first
        src.seek(size - tail)
        last = src.read()
        nl = last.find(b"\n")
        last = last[nl + 1:] if 0 <= nl < len(last) - 1 else last
        dropped = size - len(first) - len(last)
        dst.write(first)
        dst.write(f"\n[compile-debug: {dropped} bytes of output omitted here (kept the first {len(first)} and "
                  f"the last {len(last)} of {size}); triage --keep-output keeps everything]\n\n".encode())
        dst.write(last)
    os.replace(tmp, path)
    return dropped


_AT_ONCE = {"k": 1}


def runs_at_a_time(k):
    """A command that runs k target runs at once says so before it starts them: each run then gets
    cores // k OpenMP threads (thread_env). Left at torch's default (one thread per core each), k
    processes on the cores spin against each other: two runs of a small training program on 2 cores took
    703 s each instead of 33 s (docs/reliability.md)."""
    _AT_ONCE["k"] = max(1, int(k))


def cores():
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def machine_has_gpu():
    """An NVIDIA or AMD GPU on this machine (its device nodes or nvidia-smi), read without importing torch: where
    there is none, every Inductor kernel a program compiles is C++."""
    return any(os.path.exists(d) for d in ("/dev/nvidiactl", "/dev/kfd")) or bool(shutil.which("nvidia-smi"))


def thread_env(env=None):
    """{"OMP_NUM_THREADS": n} for a run among several at once; {} for a run alone, or when the
    environment already sets OMP_NUM_THREADS (the user's choice stands)."""
    env = os.environ if env is None else env
    if _AT_ONCE["k"] <= 1 or env.get("OMP_NUM_THREADS"):
        return {}
    return {"OMP_NUM_THREADS": str(max(1, cores() // _AT_ONCE["k"]))}


def run(argv, *, env=None, env_add=None, cwd=None, timeout=None, stdout_path=None, stderr_path=None, started=None,
        keep_on_interrupt=False):
    """Run argv; stdout/stderr go to files (or are discarded). Kills the process group, and every
    process that inherited this run's OWNER_VAR tag, on timeout, on Ctrl-C (then re-raises
    KeyboardInterrupt, or with keep_on_interrupt returns a result with interrupted=True so that the
    caller can report what the run did until then) and when the leader exits. Huge output files keep their head and tail. started(popen) is called
    once the process exists (to cancel it from another thread with kill_group)."""
    full_env = dict(os.environ if env is None else env)
    for k, v in (env_add or {}).items():
        if v is None:
            full_env.pop(k, None)
        else:
            full_env[k] = str(v)
    full_env.update(thread_env(full_env))
    token = f"{os.getpid()}-{secrets.token_hex(6)}"
    # nested runs (a worker that runs the target) add their token: the outer run finds both
    full_env[OWNER_VAR] = ":".join(filter(None, [full_env.get(OWNER_VAR), token]))
    out = open(stdout_path, "wb") if stdout_path else subprocess.DEVNULL
    err = open(stderr_path, "wb") if stderr_path else subprocess.DEVNULL
    # standard input: an empty one on purpose (a program waiting for input would hang the run), or the
    # --stdin FILE, read from its start by every run
    inp = open(os.environ[STDIN_VAR], "rb") if os.environ.get(STDIN_VAR) else subprocess.DEVNULL
    t0 = time.monotonic()
    timed_out = interrupted = False
    strays = []
    try:
        # a Ctrl-C while the child is being started must not leave it running unseen: hold it until p exists
        pending = []
        main = threading.current_thread() is threading.main_thread()
        old = signal.signal(signal.SIGINT, lambda *_: pending.append(1)) if main else None
        try:
            p = subprocess.Popen(argv, env=full_env, cwd=cwd, stdin=inp, stdout=out,
                                 stderr=err, start_new_session=True)
        except OSError as e:
            raise CliError(f"cannot start {argv[0]}: {e.strerror}")
        finally:
            if main:
                signal.signal(signal.SIGINT, old)
        if started is not None:
            started(p)
        try:
            if pending:
                raise KeyboardInterrupt
            p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
            terminate(p, token)
        except KeyboardInterrupt:  # Ctrl-C: end every process of the run, fast
            terminate(p, token, grace=1.0)
            if not keep_on_interrupt:
                raise
            interrupted = True
        except BaseException:  # anything else: the same
            terminate(p, token, grace=1.0)
            raise
        else:
            # the leader exited; don't leave its children (compile workers, ranks) behind
            strays = terminate(p, token)
    finally:
        for f in (out, err, inp):
            if hasattr(f, "close"):
                f.close()
    for path in (stdout_path, stderr_path):
        if path:
            trim_output(path)
    rc = None if interrupted else p.returncode   # ended by Ctrl-C: how we ended it is not how it ended
    sig = None
    if rc is not None and rc < 0:
        try:
            sig = signal.Signals(-rc).name
        except ValueError:
            sig = f"signal {-rc}"
    return ProcResult(argv=list(argv), returncode=rc, duration_s=round(time.monotonic() - t0, 3),
                      timed_out=timed_out, signal=sig, stdout_path=stdout_path, stderr_path=stderr_path,
                      strays=strays, interrupted=interrupted)


def find_tool(name):
    """A console script on PATH, else beside this interpreter (a venv's or pyenv's bin dir that is not
    on PATH), else in the user scripts dir (pip install --user). None when not found."""
    exe = shutil.which(name)
    if exe:
        return exe
    import sysconfig
    dirs = [os.path.dirname(sys.executable), os.path.dirname(os.path.realpath(sys.executable)),
            sysconfig.get_path("scripts")]
    try:
        dirs.append(sysconfig.get_path("scripts", f"{os.name}_user"))
    except KeyError:
        pass
    for d in dirs:
        cand = os.path.join(d or "", name)
        if d and os.path.isfile(cand) and os.access(cand, os.X_OK):
            return cand
    return None


def progress(msg):
    sys.stderr.write(f"[compile-debug] {msg}\n")
    sys.stderr.flush()


SCRIPTS_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def run_worker(name, worker_args, *, run_dir, timeout, env_add=None, tag=None, cwd=None):
    """Run cdlib.run.workers.<name> with this Python in a subprocess (own process group, timeout).
    stdout/stderr go to <run_dir>/<tag>.stdout/.stderr. Returns ProcResult."""
    tag = tag or name
    env = dict(env_add or {})
    env["PYTHONPATH"] = SCRIPTS_DIR + (os.pathsep + os.environ["PYTHONPATH"] if os.environ.get("PYTHONPATH") else "")
    return run([sys.executable, "-m", f"cdlib.run.workers.{name}"] + list(worker_args), env_add=env,
               cwd=cwd, timeout=timeout, stdout_path=os.path.join(run_dir, f"{tag}.stdout"),
               stderr_path=os.path.join(run_dir, f"{tag}.stderr"))


STARTUP_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "startup")


def private_cache_env(cache, triton=None, seed=True):
    """Env vars that give a run its own Inductor and Triton caches under `cache` (the user's are not written);
    the caller deletes the directory when the run is done. The directory starts with the CPU ISA probes that
    torch already built in the user's cache (seed_isa_probes): an empty cache still compiles all of the
    program's own code, without the ~8 CPU-seconds of probes that are the same for every program.
    seed=False: truly empty, as on a fresh machine (what those probes cost is what is measured)."""
    os.makedirs(cache, exist_ok=True)
    if seed:
        seed_isa_probes(cache)
    return {"TORCHINDUCTOR_CACHE_DIR": cache, "TRITON_CACHE_DIR": triton or os.path.join(cache, "triton")}


def user_inductor_cache():
    """The Inductor cache dir the user's own runs use: $TORCHINDUCTOR_CACHE_DIR, else torch's default
    (<tmp>/torchinductor_<user>, torch/_inductor/runtime/cache_dir_utils.py), without importing torch."""
    if os.environ.get("TORCHINDUCTOR_CACHE_DIR"):
        return os.environ["TORCHINDUCTOR_CACHE_DIR"]
    import getpass
    import tempfile
    try:
        user = getpass.getuser()
    except (KeyError, ImportError, OSError):
        user = f"uid_{os.getuid()}" if hasattr(os, "getuid") else "unknown_user"
    return os.path.join(tempfile.gettempdir(), "torchinductor_" + re.sub(r'[\\/:*?"<>|]', "_", user))


# torch's CPU ISA probes (torch/_inductor/cpu_vec_isa.py, VecISA.check_build and friends): each a few-line C++
# file whose function is named __<isa>_chk_kernel, built into <cache>/<2 chars>/<key>.so once per cache dir
# (~0.4-2 s of g++ each, ~8 s for the ten on a 2-core x86 machine; 2.15 also marks a loaded one <key>.so.load_ok)
_PROBE_MARK = b"_chk_kernel"


def isa_probes(cache):
    """How many of torch's CPU ISA probes were built in the cache dir `cache`."""
    n = 0
    for dirpath, _, files in os.walk(cache):
        for f in files:
            if f.endswith(".cpp"):
                try:
                    with open(os.path.join(dirpath, f), "rb") as fh:
                        n += _PROBE_MARK in fh.read(4096)
                except OSError:
                    pass
    return n


def seed_isa_probes(cache, source=None):
    """Copy torch's CPU ISA probe builds from `source` (default: the user's cache) into the new cache `cache`:
    machine facts (what this CPU and compiler support), never the program's code or graphs, so a stale-cache
    or cold-compile measurement is unchanged by them. Only reads `source`; copies a probe whose build is
    complete (its .so not written in the last 5 s). Returns how many probes were copied (0 when there is
    nothing to copy or anything fails)."""
    src = source or user_inductor_cache()
    try:
        if not os.path.isdir(src) or os.path.realpath(src) == os.path.realpath(cache):
            return 0
        subdirs = [e for e in os.scandir(src) if len(e.name) == 2 and e.is_dir(follow_symlinks=False)]
    except OSError:
        return 0
    n, now = 0, time.time()
    for sd in subdirs:
        try:
            entries = {e.name: e for e in os.scandir(sd.path)}
            for name, e in entries.items():
                key = name[:-4]
                so = entries.get(key + ".so") if name.endswith(".cpp") else None
                so_st = so and so.stat()
                if not so_st or not so_st.st_size or now - so_st.st_mtime < 5 or e.stat().st_size > 4096:
                    continue
                with open(e.path, "rb") as f:
                    if _PROBE_MARK not in f.read():
                        continue
                dst = os.path.join(cache, sd.name)
                os.makedirs(dst, exist_ok=True)
                for suffix in (".cpp", ".so", ".so.load_ok"):
                    if key + suffix in entries and not os.path.exists(os.path.join(dst, key + suffix)):
                        shutil.copy2(entries[key + suffix].path, os.path.join(dst, key + suffix))
                n += 1
        except OSError:
            continue
    return n


def startup_failure(stderr_path, limit=256_000):
    """The startup hook's first line saying a setting was not applied (printed at torch's import, or at exit for
    one retried at the first compile), from the head and the tail of a run's stderr; None when there is none.
    Its line about the user's own sitecustomize is not about our settings."""
    if not stderr_path or not os.path.exists(stderr_path):
        return None
    with open(stderr_path, "rb") as f:
        head = f.read(limit)
        f.seek(0, os.SEEK_END)
        f.seek(max(len(head), f.tell() - limit))
        text = (head + f.read()).decode("utf-8", "replace")
    return next((ln for ln in text.splitlines() if ln.startswith("[compile-debug startup]")
                 and "your sitecustomize raised" not in ln), None)


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
