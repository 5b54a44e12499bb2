"""Multi-rank triage, launch side: the rank shim, torchrun's argv, per-rank status/pid files, stack
dumps and killing ranks, per-rank logs and traces, tlparse over all ranks. No torch import here."""
import json
import os
import re
import shlex
import shutil
import signal
import sys
import time

from . import proc
from ..read import trace as tracemod
from ..errors import CliError

SHIM = r'''"""compile-debug rank shim (written by triage --nproc): per-rank TORCH_TRACE, pid, exit status,
stack dump on SIGUSR1; then runs the target exactly as `python script.py args` would."""
import faulthandler, json, os, runpy, signal, sys, time
_root = sys.argv[1]
_rank = os.environ.get("RANK", "0")
_restart = os.environ.get("TORCHELASTIC_RESTART_COUNT", "0")
_trace = os.path.join(_root, "trace", *([] if _restart in ("", "0") else ["restart_" + _restart]), "rank_" + _rank)
os.makedirs(_trace, exist_ok=True)
os.environ["TORCH_TRACE"] = _trace
_status = os.path.join(_root, "status", "rank_" + _rank + ".json")
_t0 = time.time()
def _write(code):
    with open(_status, "w") as f:
        json.dump({"rank": int(_rank), "pid": os.getpid(), "start": _t0, "end": time.time(), "exit_code": code}, f)
with open(_status, "w") as f:
    json.dump({"rank": int(_rank), "pid": os.getpid(), "start": _t0, "end": None, "exit_code": None}, f)
_stacks = open(os.path.join(_root, "stacks", "rank_" + _rank + ".txt"), "w")
faulthandler.register(signal.SIGUSR1, file=_stacks, all_threads=True)
# also when torchrun (or the timeout) terminates this rank: dump, then die of SIGTERM as before
faulthandler.register(signal.SIGTERM, file=_stacks, all_threads=True, chain=True)
_args = sys.argv[2:]
_code = 1
try:
    if _args[0] == "-m":
        sys.argv = [_args[1]] + _args[2:]
        sys.path[0] = os.getcwd()  # as `python -m` does
        runpy.run_module(_args[1], run_name="__main__", alter_sys=True)
    else:
        sys.argv = _args
        sys.path[0] = os.path.dirname(os.path.abspath(_args[0]))
        runpy.run_path(_args[0], run_name="__main__")
    _code = 0
except SystemExit as e:
    _code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    raise
finally:
    _write(_code)
'''

# torchrun options we set ourselves; the user may not pass them in --torchrun-args
OWNED = {"--nproc-per-node", "--nproc_per_node", "--log-dir", "--log_dir", "-r", "--redirects", "-t", "--tee",
         "--no-python", "--no_python", "--run-path", "--run_path", "-m", "--module"}
RDZV = {"--standalone", "--rdzv-backend", "--rdzv_backend", "--rdzv-endpoint", "--rdzv_endpoint",
        "--master-addr", "--master_addr", "--master-port", "--master_port"}


# ---- argument handling --------------------------------------------------------------------

def parse_torchrun_args(text):
    try:
        extra = shlex.split(text or "")
    except ValueError as e:
        raise CliError(f"--torchrun-args: {e}")
    for a in extra:
        name = a.split("=", 1)[0]
        if name in OWNED:
            raise CliError(f"--torchrun-args: {name} is set by triage (use --nproc for the rank count)")
        if name in ("--nnodes",):
            val = a.split("=", 1)[1] if "=" in a else (extra[extra.index(a) + 1] if extra.index(a) + 1 < len(extra) else "")
            if val not in ("1", "1:1"):
                raise CliError("--torchrun-args: only single-node runs (--nnodes 1) are supported")
    return extra


# torchrun options that only say where its logs go: triage keeps each rank's output itself
_LOG_OPTS = {"--log-dir", "--log_dir", "-r", "--redirects", "-t", "--tee"}


def torchrun_target(target):
    """A target that is itself a torchrun launch (`torchrun --nproc_per_node 2 train.py --compile`, or
    `python -m torch.distributed.run ...`) -> (nproc, [its other torchrun options], [script.py, args...]),
    so that triage runs it as `--nproc N`; None for any other target."""
    t = list(target or [])
    if t and os.path.basename(t[0]) == "torchrun":
        t = t[1:]
    elif len(t) >= 3 and os.path.basename(t[0]).startswith("python") and t[1] == "-m" \
            and t[2] in ("torch.distributed.run", "torch.distributed.launch"):
        if t[2] == "torch.distributed.launch" and not {"--use_env", "--use-env"} & set(t[3:]):
            raise CliError("torch.distributed.launch passes --local_rank to the script; triage runs it under torchrun, "
                           "which sets LOCAL_RANK in the environment: run `triage -- torchrun ...` if the script reads it")
        t = t[3:]
    else:
        return None
    nproc, extra, i = 1, [], 0          # torchrun's default: one process per node
    while i < len(t) and t[i].startswith("-"):
        name, eq, val = t[i].partition("=")
        if name in ("-m", "--module"):
            t = t[:i] + ["-m"] + t[i + 1:]
            break
        if name in ("--no-python", "--no_python", "--run-path", "--run_path"):
            raise CliError(f"a torchrun command with {name}: run triage --nproc N -- <script.py args> instead")
        if name in ("--standalone", "--use_env", "--use-env", "--virtual-local-rank", "--virtual_local_rank"):
            if name not in ("--use_env", "--use-env"):       # (torchrun always passes the rank in the env)
                extra.append(name)
            i += 1
            continue
        if not eq:
            if i + 1 >= len(t):
                raise CliError(f"torchrun option {name} needs a value")
            val, i = t[i + 1], i + 2
        else:
            i += 1
        if name in ("--nproc-per-node", "--nproc_per_node"):
            if not val.isdigit() or int(val) < 1:
                raise CliError(f"torchrun {name} {val}: give the number of ranks (triage runs them on this machine)")
            nproc = int(val)
        elif name not in _LOG_OPTS:
            extra.append(f"{name}={val}")
    if i >= len(t):
        raise CliError("a torchrun command with no script to run")
    return nproc, extra, t[i:]


def script_args(target):
    """The user's target -> args for the shim: [script.py, ...] or ["-m", module, ...]."""
    if not target:
        raise CliError("--nproc needs a target script: `triage --nproc 2 -- train.py args`")
    t = list(target)
    if os.path.basename(t[0]).startswith("python") and not t[0].endswith(".py"):
        t = t[1:]
        while t and t[0].startswith("-") and t[0] != "-m":  # interpreter flags: ours runs the script
            if t[0] == "-c":
                raise CliError("--nproc runs a script file or a module, not `python -c`")
            t = t[2:] if t[0] in ("-X", "-W") else t[1:]
    if not t:
        raise CliError("--nproc: no script after the Python interpreter")
    if t[0] == "-m":
        if len(t) < 2:
            raise CliError("--nproc: -m needs a module name")
        return t
    if t[0] in ("torchrun",) or t[0].endswith("/torchrun"):
        raise CliError("--nproc launches torchrun itself: give the script, not `torchrun ...` "
                       "(torchrun options go in --torchrun-args)")
    if not t[0].endswith(".py"):
        raise CliError(f"--nproc runs a Python script under torchrun: give `-- script.py args` "
                       f"or `-- python -m module args`, not {t[0]}")
    if not os.path.isfile(t[0]):
        raise CliError(f"{t[0]}: no such file")
    return [os.path.abspath(t[0])] + t[1:]


def launcher_argv(nproc, extra, shim, run_dir, sargs, python=None):
    """torchrun's argv, as `<python> -m torch.distributed.run`: the ranks run under that Python."""
    rdzv = [] if any(a.split("=", 1)[0] in RDZV for a in extra) else ["--standalone"]
    return [python or sys.executable, "-m", "torch.distributed.run", "--nproc-per-node", str(nproc), *rdzv,
            "--log-dir", os.path.join(run_dir, "ranks"), "--redirects", "3", *extra, shim, run_dir, *sargs]


# ---- process bookkeeping ------------------------------------------------------------------

def read_status(run_dir, rank):
    try:
        with open(os.path.join(run_dir, "status", f"rank_{rank}.json")) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def _alive(pid, shim):
    """True when pid is still one of OUR rank processes (guards against pid reuse)."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            cmd = f.read().decode("utf-8", "replace")
    except OSError:
        try:
            os.kill(pid, 0)
        except (ProcessLookupError, PermissionError):
            return False
        return True
    if not cmd:  # zombie
        return False
    return shim in cmd


def _stat_state(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return None


def dump_stacks(run_dir, nproc, shim):
    """SIGUSR1 to every live rank: the shim's faulthandler writes its Python stacks."""
    sent = []
    for r in range(nproc):
        st = read_status(run_dir, r)
        if st and st.get("end") is None and _alive(st["pid"], shim):
            try:
                os.kill(st["pid"], signal.SIGUSR1)
                sent.append(r)
            except (ProcessLookupError, PermissionError):
                pass
    return sent


def kill_ranks(run_dir, nproc, shim, grace=3.0):
    """Kill every rank still alive (each in its own session/process group). Returns the ranks killed."""
    killed = []
    pids = {}
    for r in range(nproc):
        st = read_status(run_dir, r)
        if st and _alive(st["pid"], shim):
            pids[r] = st["pid"]
    for sig in (signal.SIGTERM, signal.SIGKILL):
        live = {r: p for r, p in pids.items() if _alive(p, shim) and _stat_state(p) != "Z"}
        if not live:
            break
        for r, p in live.items():
            for kill in (lambda: os.killpg(p, sig), lambda: os.kill(p, sig)):
                try:
                    kill()
                except (ProcessLookupError, PermissionError):
                    pass
            if r not in killed:
                killed.append(r)
        t_end = time.monotonic() + grace
        while time.monotonic() < t_end and any(_alive(p, shim) and _stat_state(p) != "Z" for p in live.values()):
            time.sleep(0.1)
    return sorted(killed)


def survivors(run_dir, nproc, shim):
    out = []
    for r in range(nproc):
        st = read_status(run_dir, r)
        if st and _alive(st["pid"], shim) and _stat_state(st["pid"]) != "Z":
            out.append(r)
    return out


# ---- per-rank files -----------------------------------------------------------------------

def rank_trace_dir(run_dir, rank):
    """The trace dir of the latest torchrun attempt of rank (restart_K/ after --max-restarts)."""
    base = os.path.join(run_dir, "trace")
    restarts = sorted((int(d.split("_")[1]) for d in os.listdir(base) if re.fullmatch(r"restart_\d+", d)),
                      reverse=True) if os.path.isdir(base) else []
    for k in restarts:
        d = os.path.join(base, f"restart_{k}", f"rank_{rank}")
        if os.path.isdir(d):
            return d
    return os.path.join(base, f"rank_{rank}")


def restarts_seen(run_dir):
    base = os.path.join(run_dir, "trace")
    return len([d for d in os.listdir(base) if re.fullmatch(r"restart_\d+", d)]) if os.path.isdir(base) else 0


def rank_logs(run_dir, nproc):
    """rank -> (stdout.log, stderr.log) of the latest torchrun attempt (local rank == rank, one node)."""
    out = {}
    base = os.path.join(run_dir, "ranks")
    attempts = []
    for root, dirs, _files in os.walk(base):
        for d in dirs:
            if d.startswith("attempt_"):
                attempts.append(os.path.join(root, d))
    attempts.sort(key=lambda p: (os.path.getmtime(p), p))
    for r in range(nproc):
        for a in reversed(attempts):
            d = os.path.join(a, str(r))
            if os.path.isdir(d):
                out[r] = (os.path.join(d, "stdout.log"), os.path.join(d, "stderr.log"))
                break
    return out


def _read(path, limit=2_000_000):
    return proc._read(path, limit)


def group_trace_files(path):
    """rank -> [trace files] of a recorded multi-rank TORCH_TRACE (flat dir with ..._rank_<N>_... names,
    rank_<N>/ sub-dirs as we write them, or files whose events carry "rank")."""
    by_rank = {}
    for fn in tracemod.trace_files(path):
        rank = None
        m = tracemod.RANK_RE.search(os.path.basename(fn)) or tracemod.RANK_RE.search(os.path.basename(os.path.dirname(fn)))
        if m:
            rank = int(m.group(1))
        else:
            tr = tracemod.parse(fn)
            rank = tr.ranks[0] if len(tr.ranks) == 1 else None
        if rank is not None:
            by_rank.setdefault(rank, []).append(fn)
    return by_rank


def run_tlparse_all(run_dir, nproc, timeout=180):
    """tlparse --all-ranks-html over a flat dir of links to every rank's trace."""
    exe = proc.find_tool("tlparse")
    if not exe:
        return None
    flat = os.path.join(run_dir, "tlparse_input")
    os.makedirs(flat, exist_ok=True)
    n = 0
    for r in range(nproc):
        files = tracemod.trace_files(rank_trace_dir(run_dir, r))
        if not files:
            continue
        biggest = max(files, key=os.path.getsize)
        name = os.path.basename(biggest)
        if f"rank_{r}_" not in name:
            name = f"dedicated_log_torch_trace_rank_{r}_{name}"
        dst = os.path.join(flat, name)
        try:
            os.symlink(biggest, dst)
        except OSError:
            shutil.copyfile(biggest, dst)
        n += 1
    if not n:
        return None
    out = os.path.join(run_dir, "tlparse")
    res = proc.run([exe, flat, "--all-ranks-html", "-o", out, "--overwrite", "--no-browser"], timeout=timeout,
                   stdout_path=out + ".log", stderr_path=out + ".log.err")
    index = os.path.join(out, "index.html")
    return index if res.ok and os.path.exists(index) else None
