"""Multi-rank triage: run the user's script under torchrun (`triage --nproc N`), one structured
trace per rank, one Report per rank (analyze.analyze), and what differs between ranks.

How a run is laid out (all inside the run dir):
    rank_shim.py              the torchrun entry point: sets TORCH_TRACE=trace/rank_<RANK> before the
                              user's script imports torch, records pid/exit status, registers a
                              faulthandler stack dump on SIGUSR1, then runs the script (runpy)
    trace/rank_<N>/*.log      TORCH_TRACE of rank N
    ranks/<rdzv>/attempt_K/<local_rank>/{stdout,stderr}.log   torchrun --log-dir --redirects 3
    status/rank_<N>.json      pid, start/end time, exit code (written by the shim)
    stacks/rank_<N>.txt       Python stacks dumped just before the timeout kills a hung rank
    rank_<N>/report.{md,json} the single-process triage report of rank N
    tlparse/                  tlparse --all-ranks-html over a flat dir of links (tlparse_input/)

torchrun (torch >= 2.x) starts every worker with start_new_session=True, so killing torchrun's
process group does NOT kill the ranks: proc.run finds them by the tag they inherit in their
environment (on Ctrl-C, timeout, or when torchrun exits); kill_ranks uses each rank's recorded pid.
No torch import here."""
import hashlib
import json
import os
import re
import shlex
import shutil
import signal
import sys
import threading
import time

from . import analyze, proc, trace as tracemod
from .errors import CliError

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
COLLECTIVES = ("all_reduce", "all_gather", "all_gather_into_tensor", "reduce_scatter", "reduce_scatter_tensor",
               "broadcast", "barrier", "all_to_all", "all_to_all_single", "reduce", "gather", "scatter", "send",
               "recv", "monitored_barrier", "wait", "_wait_tensor", "wait_tensor", "batch_isend_irecv",
               "broadcast_object_list", "all_gather_object", "new_group", "init_process_group")
# a frame in one of these files means the rank was compiling (not running a compiled graph)
COMPILER_FILES = ("/torch/_dynamo/convert_frame.py", "/torch/_dynamo/symbolic_convert.py",
                  "/torch/_dynamo/output_graph.py", "/torch/_inductor/compile_fx.py", "/torch/_inductor/graph.py",
                  "/torch/_inductor/scheduler.py", "/torch/_inductor/codecache.py",
                  "/torch/_inductor/async_compile.py", "/torch/_functorch/aot_autograd.py",
                  "/torch/_functorch/_aot_autograd/jit_compile_runtime_wrappers.py")
COLLECTIVE_OP = re.compile(r"\b(?:_c10d_functional|c10d_functional|c10d)\.(\w+)")


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


def launcher_argv(nproc, extra, shim, run_dir, sargs):
    rdzv = [] if any(a.split("=", 1)[0] in RDZV for a in extra) else ["--standalone"]
    return [sys.executable, "-m", "torch.distributed.run", "--nproc-per-node", str(nproc), *rdzv,
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


PEER_LOSS = re.compile(r"Connection (?:closed|reset) by peer|remote (?:worker|process)|Broken pipe|"
                       r"ProcessGroupNCCL.*(?:abort|watchdog|timeout)|NCCL (?:communicator was aborted|error: remote)|"
                       r"DistNetworkError|DistBackendError", re.I)


COLLECTIVE_TIMEOUT = re.compile(r"Timed out waiting \d+ ?ms|Watchdog caught collective operation timeout|"
                                r"ran for \d+ milliseconds before timing out|collective operation timeout|"
                                r"DistBackendError.*[Tt]imeout|wait timeout after \d+ ?ms", re.S)


def collective_timeout(rep):
    """The rank's error is its own collective timing out (it waited; the culprit is elsewhere)."""
    return any(COLLECTIVE_TIMEOUT.search((e.message or "") + " " + (e.type or "")) for e in rep.errors)


def root_cause(ranks, launcher_root=None):
    """The rank that failed first (by the shim's end time; else torchrun's "Root Cause" rank, e.g. a
    rank killed by SIGKILL/SIGSEGV) when several failed: (rank, [consequence ranks])."""
    failed = [r for r in ranks if r["status"] in ("failed", "killed")]
    if not failed:
        return None, []
    ended = [r for r in failed if r.get("_end")]
    sig_dead = [r for r in failed if r["status"] == "killed" and r.get("exit_code") not in (None, -signal.SIGTERM)]
    if ended:
        first = min(ended, key=lambda r: r["_end"])
    else:
        first = next((r for r in failed if r["rank"] == launcher_root), sig_dead[0] if sig_dead else failed[0])
    if sig_dead and launcher_root is not None and launcher_root != first["rank"] and \
            any(r["rank"] == launcher_root for r in sig_dead):
        first = next(r for r in sig_dead if r["rank"] == launcher_root)  # died of a signal before the others
    if collective_timeout(first["_rep"]) and not any(r["status"] == "failed" and not collective_timeout(r["_rep"])
                                                     for r in failed if r is not first):
        return first["rank"], []  # it waited for peers that torchrun then killed: see their state_when_killed
    if collective_timeout(first["_rep"]):
        # it gave up waiting: the culprit is a peer that was elsewhere (compiling, another collective)
        others = [r for r in failed if r is not first and not collective_timeout(r["_rep"])
                  and r["status"] == "failed"]
        if others:
            first = min(others, key=lambda r: r.get("_end") or 1e18)
    conseq = []
    for r in failed:
        if r is first:
            continue
        errs = r["_rep"].errors
        if (r["status"] == "killed" and r.get("exit_code") in (None, -signal.SIGTERM)) or not errs \
                or any(PEER_LOSS.search(e.message or "") for e in errs):
            conseq.append(r["rank"])
    return first["rank"], conseq


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


RANK_PREFIX = re.compile(r"^\[(?:rank|default)\d+\]:\s?", re.M)


def strip_rank_prefix(text):
    """torch prefixes a rank's exception lines with "[rankN]:"; the error parser wants them bare."""
    return RANK_PREFIX.sub("", text or "")


FAILURE_RE = re.compile(r"rank\s*:\s*(\d+)\s*\(local_rank:\s*\d+\)\s*\n\s*exitcode\s*:\s*(-?\d+)")


ROOT_RE = re.compile(r"Root Cause \(first observed failure\):\s*\n\[\d+\]:.*?rank\s*:\s*(\d+)", re.S)


def torchrun_root_rank(text):
    m = ROOT_RE.search(text or "")
    return int(m.group(1)) if m else None


def torchrun_exit_codes(text):
    """rank -> exit code from torchrun's failure summary (covers ranks killed by a signal)."""
    return {int(m.group(1)): int(m.group(2)) for m in FAILURE_RE.finditer(text or "")}


def _signame(code):
    if code is not None and code < 0:
        try:
            return signal.Signals(-code).name
        except ValueError:
            return f"signal {-code}"
    return None


# ---- trace facts not in the Report: last event, open compile, graph hashes ----------------

GLOG_TIME = re.compile(r"^[VIWEC](\d{4}) ([\d:.]+) ")


def last_trace_line_time(files):
    """The glog time of the last event line of a rank's trace (HH:MM:SS.ffffff)."""
    best = None
    for fn in files:
        try:
            with open(fn, "rb") as f:
                f.seek(0, os.SEEK_END)
                size = f.tell()
                f.seek(max(0, size - 200_000))
                lines = f.read().decode("utf-8", "replace").splitlines()
        except OSError:
            continue
        for ln in reversed(lines):
            m = GLOG_TIME.match(ln)
            if m:
                best = max(best or "", m.group(2))
                break
    return best


def trace_facts(tr):
    """Per-rank facts straight from the trace: compile ids with their graph hash, the last event,
    and a compile that started (dynamo_start) but has no compilation_metrics yet."""
    graphs, collectives = {}, {}
    for e in tr.of("dynamo_output_graph"):
        if e.compile_id:
            h = hashlib.sha1((e.payload or "").encode()).hexdigest()[:12] if e.payload else None
            graphs[e.compile_id] = h
            ops = []
            for m in COLLECTIVE_OP.finditer(e.payload or ""):
                op = m.group(1)
                if op not in ops and op not in ("wait_tensor", "wait"):
                    ops.append(op)
            if ops:
                collectives[e.compile_id] = ops
    begun = {}  # compile id -> epoch seconds its compile began (chromium "B" events carry a timestamp)
    for e in tr.of("chromium_event"):
        j = e.payload_json()
        if isinstance(j, dict) and j.get("ph") == "B" and isinstance(j.get("ts"), (int, float)):
            cid = (j.get("args") or {}).get("compile_id") or e.compile_id
            if cid and cid not in begun:
                begun[cid] = j["ts"] / 1e6
    started = [e for e in tr.of("dynamo_start") if e.compile_id]
    done = {e.compile_id for e in tr.of("compilation_metrics") if e.compile_id}
    open_compiles = []
    for e in started:
        if e.compile_id not in done and e.compile_id not in [o["compile_id"] for o in open_compiles]:
            frames = tr.frames(e.data.get("stack") if isinstance(e.data, dict) else None)
            user = [f for f in frames if analyze.is_user_file(f[0]) and "rank_shim.py" not in f[0]]
            where = user[-1] if user else (frames[-1] if frames else None)
            open_compiles.append({"compile_id": e.compile_id, "started_at": begun.get(e.compile_id),
                                  "function": where[2] if where else None,
                                  "location": f"{where[0]}:{where[1]}" if where else None})
    last = None
    for e in reversed(tr.events):
        if e.key in ("chromium_event", "str"):
            continue
        last = {"event": e.artifact_name or e.key, "compile_id": e.compile_id}
        break
    return {"graph_hashes": graphs, "collectives": collectives, "compiles_started": len({e.compile_id for e in started}),
            "open_compiles": open_compiles, "last_event": last,
            "last_event_time": last_trace_line_time(tr.files)}


STACK_FRAME = re.compile(r'^\s*File "([^"]+)", line (\d+) in (\S+)')


def parse_stack_dump(text, shim_path=None):
    """faulthandler dump -> the main thread's frames, innermost first: [(file, line, func)]."""
    threads, cur = [], None
    for ln in (text or "").splitlines():
        if ln.startswith("Thread ") or ln.startswith("Current thread "):
            cur = {"current": ln.startswith("Current thread "), "frames": []}
            threads.append(cur)
            continue
        m = STACK_FRAME.match(ln)
        if m and cur is not None:
            cur["frames"].append((m.group(1), int(m.group(2)), m.group(3)))
    if not threads:
        return []
    # the thread that runs the user's script: it has the shim (runpy) at its bottom; the file may
    # hold several dumps (SIGUSR1 before the timeout, SIGTERM at the kill): the last one wins
    for t in reversed(threads):
        if shim_path and any(f[0] == shim_path for f in t["frames"]):
            return t["frames"]
    cur = [t for t in threads if t["current"]]
    return (cur or threads)[-1]["frames"]


def _short_path(path):
    p = path.replace("\\", "/")
    i = p.find("/site-packages/")
    return p[i + len("/site-packages/"):] if i >= 0 else p


def classify_stack(frames, shim_path=None):
    """(state, detail, user Location-ish dict) of a hung rank from its stack (innermost first)."""
    if not frames:
        return None, None, None
    user = next((f for f in frames if analyze.is_user_file(f[0]) and f[0] != shim_path), None)
    uloc = {"file": user[0], "line": user[1], "function": user[2],
            "code": analyze._src_line(user[0], user[1])} if user else None
    imp = next((i for i, f in enumerate(frames) if f[0].startswith("<frozen importlib")), None)
    if imp is not None and not any(f[2] in COLLECTIVES for f in frames[:imp]):
        mod = next((f[0] for f in frames[:imp] if f[2] == "<module>"), None)  # innermost module being imported
        return "importing", _short_path(mod) if mod else "a module", uloc
    for f in frames:
        p = f[0].replace("\\", "/")
        if "/torch/distributed/" in p and f[2] in COLLECTIVES:
            return "waiting_collective", f[2], uloc
        if any(p.endswith(c) for c in COMPILER_FILES):
            return "compiling", os.path.basename(p), uloc
    for f in frames:
        p = f[0].replace("\\", "/")
        if p.startswith("<eval_with_key>") or "/torchinductor_" in p or "/_inductor/" in p and "output_code" in p:
            return "running_compiled", "compiled graph", uloc
    if any("/torch/distributed/" in f[0] for f in frames):
        inner = next(f for f in frames if "/torch/distributed/" in f[0])
        return "waiting_collective", inner[2], uloc
    return "running", frames[0][2], uloc


# ---- divergence ---------------------------------------------------------------------------

def _site_key(b):
    loc = b["location"] or {}
    return f"{loc.get('file')}:{loc.get('line')}|{b.get('gb_id') or b.get('gb_type')}"


def _func_key(f):
    loc = f["location"] or {}
    return f"{f['function']}|{loc.get('file')}:{loc.get('line')}"


def _where(loc):
    if not loc:
        return None
    return f"{loc.get('file')}:{loc.get('line')}" if loc.get("line") else loc.get("file")


def divergence(ranks):
    """ranks: [{rank, status, report (dict), facts}] -> the divergence section (JSON-safe)."""
    analyzed = [r for r in ranks if r["report"] is not None]
    all_ranks = [r["rank"] for r in analyzed]
    div = {"divergent": False, "ranks_compared": all_ranks, "graphs": {}, "collectives": [], "graph_breaks": [], "recompiles": [],
           "compile_time": {}, "failed_ranks": [], "timed_out_ranks": [], "summary": []}

    # graphs compiled per rank, compile ids present on some ranks only, different graph hashes
    per = {r["rank"]: r["facts"]["graph_hashes"] for r in analyzed}
    counts = {r["rank"]: r["report"]["stats"].get("graphs", 0) for r in analyzed}
    ids = sorted({c for h in per.values() for c in h}, key=lambda c: [int(x) if x.isdigit() else 0 for x in re.split(r"[/!]", c) if x])
    only, differ = [], []
    for cid in ids:
        have = [rk for rk in all_ranks if cid in per[rk]]
        if len(have) != len(all_ranks):
            fn = None
            for r in analyzed:
                for g in r["report"]["graphs"]:
                    if g["compile_id"] == cid:
                        fn = {"function": g["function"], "location": _where(g["location"]), "ops": g["ops"]}
                        break
                if fn:
                    break
            only.append({"compile_id": cid, "ranks": have, "missing_on": [rk for rk in all_ranks if rk not in have],
                         **(fn or {})})
        else:
            hs = {rk: per[rk][cid] for rk in have}
            if len(set(hs.values())) > 1:
                groups = {}
                for rk, h in hs.items():
                    groups.setdefault(h, []).append(rk)
                differ.append({"compile_id": cid, "groups": [{"hash": h, "ranks": g} for h, g in groups.items()]})
    # collectives inside compiled graphs: a graph that has them on some ranks only is a hang waiting to happen
    coll = {r["rank"]: r["facts"].get("collectives", {}) for r in analyzed}
    coll_diff = []
    for cid in ids:
        ops = {rk: coll[rk].get(cid, []) for rk in all_ranks if cid in per[rk]}
        if any(ops.values()) and (len({tuple(v) for v in ops.values()}) > 1 or len(ops) != len(all_ranks)):
            coll_diff.append({"compile_id": cid, "ops_per_rank": {str(k): v for k, v in ops.items()},
                              "missing_on": [rk for rk in all_ranks if cid not in per[rk]]})
            div["summary"].append(f"compile {cid}: collectives in the graph differ: "
                                  + ", ".join(f"rank {k}: {', '.join(v) or 'none'}" for k, v in ops.items())
                                  + (f", rank(s) {_ranks([rk for rk in all_ranks if cid not in per[rk]])}: graph not compiled"
                                     if len(ops) != len(all_ranks) else ""))
    div["collectives"] = coll_diff
    div["graphs"] = {"per_rank": {str(k): v for k, v in counts.items()},
                     "compile_ids_per_rank": {str(k): sorted(v) for k, v in per.items()},
                     "only_on_some_ranks": only, "different_graphs": differ}
    if len(set(counts.values())) > 1:
        div["summary"].append("graphs compiled per rank differ: " + ", ".join(f"rank {k}: {v}" for k, v in counts.items()))
    for o in only:
        div["summary"].append(f"compile {o['compile_id']} ({o.get('function') or '?'}) only on rank(s) {_ranks(o['ranks'])}")
    for d in differ:
        div["summary"].append(f"compile {d['compile_id']}: ranks traced different graphs ("
                              + "; ".join(f"rank(s) {_ranks(g['ranks'])}" for g in d["groups"]) + ")")

    # graph breaks: sites not hit on every rank, or hit a different number of times
    sites = {}
    for r in analyzed:
        for b in r["report"]["graph_breaks"]:
            k = _site_key(b)
            s = sites.setdefault(k, {"site": _where(b["location"]), "code": (b["location"] or {}).get("code"),
                                     "gb_id": b.get("gb_id"), "gb_type": b.get("gb_type"),
                                     "category": b.get("category"), "fix": (b.get("fix") or {}).get("fix"),
                                     "counts": {}, "frames": {}})
            s["counts"][r["rank"]] = s["counts"].get(r["rank"], 0) + b.get("count", 0)
            s["frames"][r["rank"]] = b.get("frames", [])
    for k, s in sites.items():
        have = sorted(s["counts"])
        if len(have) != len(all_ranks) or len(set(s["counts"].values())) > 1:
            item = dict(s, ranks=have, missing_on=[rk for rk in all_ranks if rk not in have],
                        counts={str(a): b for a, b in s["counts"].items()},
                        frames={str(a): b for a, b in s["frames"].items()})
            div["graph_breaks"].append(item)
            if item["missing_on"]:
                div["summary"].append(f"graph break at {s['site']} ({s['gb_id'] or s['gb_type']}) only on rank(s) {_ranks(have)}")
            else:
                div["summary"].append(f"graph break at {s['site']} hit a different number of times: "
                                      + ", ".join(f"rank {a} ×{b}" for a, b in item["counts"].items()))

    # recompiles: functions that recompile on some ranks only or a different number of times
    funcs = {}
    for r in analyzed:
        for f in r["report"]["recompiles"]:
            k = _func_key(f)
            e = funcs.setdefault(k, {"function": f["function"], "location": _where(f["location"]), "per_rank": {}})
            e["per_rank"][r["rank"]] = {
                "compiles": f["compiles"], "recompiles": len(f["recompiles"]), "limit_hit": f["limit_hit"],
                "reasons": [{"compile_id": rc["compile_id"],
                             "guard": rc["failures"][0]["guard"] if rc["failures"] else None,
                             "kind": rc["failures"][0]["kind"] if rc["failures"] else None,
                             "location": _where(rc["failures"][0]["location"]) if rc["failures"] else None}
                            for rc in f["recompiles"]]}
    for k, e in funcs.items():
        n = {rk: e["per_rank"].get(rk, {}).get("recompiles", 0) for rk in all_ranks}
        lim = {rk: e["per_rank"].get(rk, {}).get("limit_hit", False) for rk in all_ranks}
        guards = {rk: [x["guard"] for x in e["per_rank"].get(rk, {}).get("reasons", [])] for rk in all_ranks}
        if len(set(n.values())) > 1 or len(set(lim.values())) > 1 or len({tuple(g) for g in guards.values()}) > 1:
            item = {"function": e["function"], "location": e["location"],
                    "recompiles_per_rank": {str(a): b for a, b in n.items()},
                    "limit_hit_ranks": [rk for rk, v in lim.items() if v],
                    "per_rank": {str(a): b for a, b in e["per_rank"].items()}}
            div["recompiles"].append(item)
            most = max(all_ranks, key=lambda rk: n[rk])
            first = next(((most, x) for x in e["per_rank"].get(most, {}).get("reasons", [])), None)
            s = f"{e['function']} ({e['location']}) recompiles " + ", ".join(f"rank {a}: {b}" for a, b in n.items())
            if first:
                s += f"; rank {first[0]} {first[1]['compile_id']}: `{first[1]['guard']}` [{first[1]['kind']}]"
                if first[1]["location"]:
                    s += f" at {first[1]['location']}"
            div["summary"].append(s)

    # compile-time skew
    ct = {r["rank"]: round(r["report"]["stats"].get("compile_time_s", 0.0)
                           + sum(oc.get("running_s") or 0 for oc in r["facts"].get("open_compiles", [])), 3)
          for r in analyzed}
    still = [r["rank"] for r in analyzed if r["facts"].get("open_compiles")]
    if ct:
        lo, hi = min(ct.values()), max(ct.values())
        slow = max(ct, key=ct.get)
        skew = round(hi - lo, 3)
        significant = skew >= 1.0 and (hi > 0 and skew / hi >= 0.25)
        div["compile_time"] = {"per_rank_s": {str(k): v for k, v in ct.items()}, "skew_s": skew,
                               "slowest_rank": slow, "significant": significant, "still_compiling": still}
        if significant:
            div["summary"].append(f"compile-time skew {skew:.1f} s: rank {slow} compiled for {hi:.1f} s, "
                                  f"rank {min(ct, key=ct.get)} for {lo:.1f} s")

    # failed / timed-out / missing ranks
    for r in ranks:
        if r["status"] in ("failed", "killed"):
            div["failed_ranks"].append(r["rank"])
        elif r["status"] in ("timed_out", "hung"):
            div["timed_out_ranks"].append(r["rank"])
    statuses = {r["rank"]: r["status"] for r in ranks}
    if len(set(statuses.values())) > 1:
        div["summary"].append("ranks ended differently: " + ", ".join(f"rank {k} {v}" for k, v in statuses.items()))
    elif div["failed_ranks"]:
        div["summary"].append("all ranks failed")
    div["divergent"] = bool(only or differ or coll_diff or div["graph_breaks"] or div["recompiles"]
                            or len(set(counts.values())) > 1 or div["compile_time"].get("significant")
                            or len(set(statuses.values())) > 1)
    return div


def _ranks(rs):
    return ",".join(str(r) for r in rs) if rs else "none"


# ---- the run ------------------------------------------------------------------------------

def run_triage(args, *, nproc, torchrun_args, target, timeout, tlparse=True):
    """Launch under torchrun, analyze every rank. Returns (result dict, markdown)."""
    from . import rundir
    from .views import triage_markdown
    from .views_multirank import multirank_markdown

    if nproc < 1:
        raise CliError("--nproc must be at least 1")
    if nproc > 64:
        raise CliError("--nproc: at most 64 local ranks")
    extra = parse_torchrun_args(torchrun_args)
    sargs = script_args(target)
    if shutil.which(sys.executable) is None and not os.path.exists(sys.executable):
        raise CliError("cannot find this Python interpreter")
    run_dir = rundir.make(args.out, "triage")
    for d in ("trace", "status", "stacks", "ranks"):
        os.makedirs(os.path.join(run_dir, d), exist_ok=True)
    shim = os.path.join(run_dir, "rank_shim.py")
    with open(shim, "w") as f:
        f.write(SHIM)
    argv = launcher_argv(nproc, extra, shim, run_dir, sargs)
    tstr = " ".join(shlex.quote(a) for a in (["python"] + sargs if sargs[0] != "-m" else ["python"] + sargs))
    torchrun_str = " ".join(["torchrun", "--nproc-per-node", str(nproc)] + [shlex.quote(a) for a in extra] + [shlex.quote(a) for a in sargs])
    proc.progress(f"running {torchrun_str} (timeout {timeout:.0f} s); artifacts in {run_dir}")

    # just before the timeout: ask every live rank for its Python stacks (faulthandler in the shim)
    margin = min(5.0, max(1.0, timeout * 0.1))
    dumped = []
    dump_time = []

    def _dump():
        dump_time.append(time.time())
        dumped.extend(dump_stacks(run_dir, nproc, shim))

    timer = threading.Timer(max(0.5, timeout - margin), _dump)
    timer.daemon = True
    env = {"PYTHONUNBUFFERED": "1", "TORCH_TRACE": None}
    res = None
    try:
        timer.start()
        res = proc.run(argv, env_add=env, timeout=timeout, stdout_path=os.path.join(run_dir, "torchrun.stdout"),
                       stderr_path=os.path.join(run_dir, "torchrun.stderr"))
    finally:  # proc.run already ended every process of the run (ranks too: they carry its tag)
        timer.cancel()
        killed = kill_ranks(run_dir, nproc, shim)
    stray_ranks = [r for r in range(nproc) if (read_status(run_dir, r) or {}).get("pid") in res.strays]
    killed = sorted(set(killed) | set(stray_ranks))
    left = survivors(run_dir, nproc, shim)
    launcher_out = _read(res.stderr_path) + "\n" + _read(res.stdout_path)
    exit_codes = torchrun_exit_codes(launcher_out)
    logs = rank_logs(run_dir, nproc)
    for paths in logs.values():  # torchrun wrote them: keep the head and tail of huge ones
        for path in paths:
            proc.trim_output(path)

    ranks = []
    for r in range(nproc):
        st = read_status(run_dir, r)
        tdir = rank_trace_dir(run_dir, r)
        so, se = logs.get(r, (None, None))
        stdout, stderr = strip_rank_prefix(_read(so)), strip_rank_prefix(_read(se))
        code = st.get("exit_code") if st else None
        ended = bool(st and st.get("end"))
        if code is None and r in exit_codes:
            code = exit_codes[r]
        timed = bool(res.timed_out and not ended)
        if st is None:
            status = "not_started"
        elif timed:
            status = "hung"
        elif ended and code == 0:
            status = "ok"
        elif ended:
            status = "failed"
        else:
            status = "killed"  # died without the shim's finally (signal), or killed by torchrun
        dur = round((st.get("end") or time.time()) - st["start"], 3) if st else None
        rres = proc.ProcResult(argv=argv, returncode=code if not timed else None, duration_s=dur or 0.0,
                               timed_out=timed, signal=_signame(code) if not timed else None,
                               stdout_path=so, stderr_path=se)
        rep = analyze.analyze(tdir if os.path.isdir(tdir) else None, command=["torchrun", f"rank {r}", *sargs],
                              run_dir=os.path.join(run_dir, f"rank_{r}"), res=rres, stdout=stdout, stderr=stderr,
                              target_str=tstr)
        rep.artifacts.update({"stdout": so, "stderr": se, "trace_dir": tdir})
        _drop_shim_frames(rep, shim, stderr)
        if status == "killed" and code == -signal.SIGKILL:
            rep.notes.append(f"rank {r} was killed by SIGKILL: not by torchrun (it sends SIGTERM); often the "
                             "OOM killer (check `dmesg`, host memory per rank)")
        if status == "killed" and code == -signal.SIGTERM:
            # killed by torchrun because another rank failed: the signal is not this rank's error
            rep.errors = [e for e in rep.errors if e.source != "signal"]
            rep.next_steps = [x for x in rep.next_steps if "SIG" not in x["why"]]
            rep.notes.append(f"rank {r} was stopped by torchrun (exit code {code}) because another rank failed")
        tr = tracemod.parse(tdir) if os.path.isdir(tdir) else tracemod.Trace([], {}, [])
        facts = trace_facts(tr)
        stack_file = os.path.join(run_dir, "stacks", f"rank_{r}.txt")
        hang = killed_state = None
        stack_text = _read(stack_file)
        now = os.path.getmtime(stack_file) if stack_text.strip() else (dump_time[0] if dump_time else time.time())
        for oc in facts["open_compiles"]:
            oc["running_s"] = round(now - oc["started_at"], 1) if oc.get("started_at") else None
        if timed or (res.timed_out and r in dumped) or (status == "killed" and stack_text.strip()):
            frames = parse_stack_dump(stack_text, shim)
            state, detail, uloc = classify_stack(frames, shim)
            if state is None:  # no stack: judge by the trace
                state = "compiling" if facts["open_compiles"] else "unknown"
            info = {"state": state, "detail": detail, "user_location": uloc,
                    "stack": [f"{f[0]}:{f[1]} in {f[2]}" for f in frames[:12]],
                    "open_compiles": facts["open_compiles"], "last_event": facts["last_event"],
                    "last_event_time": facts["last_event_time"]}
            if timed or res.timed_out:
                hang = info
            else:
                killed_state = info  # torchrun stopped this rank because another one failed
        os.makedirs(os.path.join(run_dir, f"rank_{r}"), exist_ok=True)
        rd = rep.to_dict()
        with open(os.path.join(run_dir, f"rank_{r}", "report.json"), "w") as f:
            json.dump(rd, f, indent=2, default=str)
        with open(os.path.join(run_dir, f"rank_{r}", "report.md"), "w") as f:
            f.write(triage_markdown(rep, f"rank {r}: {torchrun_str}") + "\n")
        ranks.append({"rank": r, "status": status, "exit_code": code, "duration_s": dur, "pid": st.get("pid") if st else None,
                      "report_status": rep.status, "hang": hang, "state_when_killed": killed_state, "facts": facts, "report": rd, "_rep": rep,
                      "stdout": so, "stderr": se, "report_md": os.path.join(run_dir, f"rank_{r}", "report.md"),
                      "_end": st.get("end") if st else None})

    div = divergence(ranks)
    first_failed, consequences = root_cause(ranks, torchrun_root_rank(launcher_out))
    for r in ranks:
        r["consequence_of_rank"] = first_failed if r["rank"] in consequences else None
        r["collective_timeout"] = collective_timeout(r["_rep"])
    artifacts = {"trace_dir": os.path.join(run_dir, "trace"), "torchrun_stdout": res.stdout_path,
                 "torchrun_stderr": res.stderr_path, "rank_logs": os.path.join(run_dir, "ranks")}
    if tlparse:
        html = run_tlparse_all(run_dir, nproc)
        if html:
            artifacts["tlparse"] = html
    notes = []
    if os.environ.get("TORCH_TRACE"):
        notes.append("your TORCH_TRACE was overridden for this run (the traces are in the run dir)")
    if killed:
        notes.append(f"rank(s) {_ranks(killed)} were still running after torchrun ended and were killed")
    if left:
        notes.append(f"WARNING: rank(s) {_ranks(left)} could not be killed (pids in {run_dir}/status)")
    if restarts_seen(run_dir):
        notes.append(f"torchrun restarted the workers {restarts_seen(run_dir)} time(s); the reports are of the last attempt "
                     f"(earlier traces: {run_dir}/trace/rank_<N>, restart_<K>/)")
    if res.timed_out and not dumped:
        notes.append("no rank was alive to dump its stack at the timeout")

    launcher_error = None
    if all(r["status"] == "not_started" for r in ranks) and not res.timed_out:
        tail = [ln for ln in _read(res.stderr_path).splitlines() if ln.strip() and not ln.startswith("*")]
        launcher_error = (tail[-1] if tail else f"torchrun exited {res.returncode}")[:500]
    hung = [r["rank"] for r in ranks if r["status"] == "hung"]
    if res.timed_out:
        status = "timeout"
    elif any(r["status"] in ("failed", "killed", "not_started") for r in ranks) or (res.returncode not in (0, None)):
        status = "error"
    elif div["divergent"]:
        status = "divergent"
    elif any(r["report_status"] == "issues" for r in ranks):
        status = "issues"
    elif all(r["report_status"] == "no-compile" for r in ranks):
        status = "no-compile"
    else:
        status = "clean"
    result = {
        "command": "triage", "schema": "compile-debug/triage-multirank/1", "run_dir": run_dir, "status": status,
        "target": tstr, "nproc": nproc, "torchrun_args": extra, "launcher": argv, "torchrun": torchrun_str,
        "launcher_exit_code": res.returncode, "timed_out": res.timed_out, "timeout_s": timeout,
        "duration_s": res.duration_s, "killed_ranks": killed, "surviving_ranks": left,
        "first_failed_rank": first_failed, "restarts": restarts_seen(run_dir), "launcher_error": launcher_error,
        "ranks": [{k: v for k, v in r.items() if not k.startswith("_")} for r in ranks],
        "divergence": div,
        "hang": {"ranks": hung, "stacks_dumped": sorted(dumped),
                 "per_rank": {str(r["rank"]): r["hang"] for r in ranks if r["hang"]}} if res.timed_out else None,
        "artifacts": artifacts, "notes": notes,
    }
    result["next_steps"] = next_steps(result, ranks, tstr, nproc, extra)
    md = multirank_markdown(result, [r["_rep"] for r in ranks])
    return result, md


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


def analyze_recorded(args, *, nproc, trace_path):
    """Divergence between the ranks of an existing multi-rank trace (e.g. copied from a cluster job):
    no launch, no hang facts. nproc: the number of ranks the job had (missing ones are reported)."""
    from . import rundir
    from .views import triage_markdown
    from .views_multirank import multirank_markdown

    if nproc < 1:
        raise CliError("--nproc must be at least 1")
    if not os.path.exists(trace_path):
        raise CliError(f"{trace_path}: no such file or directory")
    by_rank = group_trace_files(trace_path)
    if not by_rank:
        raise CliError(f"{trace_path}: no per-rank trace files (names with rank_<N>, or rank_<N>/ dirs)")
    run_dir = rundir.make(args.out, "triage")
    ranks = []
    for r in range(max(nproc, max(by_rank) + 1)):
        files = by_rank.get(r, [])
        tdir = None
        if files:
            tdir = os.path.join(run_dir, "trace", f"rank_{r}")
            os.makedirs(tdir, exist_ok=True)
            for fn in files:
                dst = os.path.join(tdir, os.path.basename(fn))
                try:
                    os.symlink(os.path.abspath(fn), dst)
                except OSError:
                    shutil.copyfile(fn, dst)
        rep = analyze.analyze(tdir, run_dir=os.path.join(run_dir, f"rank_{r}"))
        if tdir:
            rep.artifacts["trace_dir"] = tdir
        tr = tracemod.parse(tdir) if tdir else tracemod.Trace([], {}, [])
        facts = trace_facts(tr)
        for oc in facts["open_compiles"]:
            oc["running_s"] = None
        os.makedirs(os.path.join(run_dir, f"rank_{r}"), exist_ok=True)
        rd = rep.to_dict()
        with open(os.path.join(run_dir, f"rank_{r}", "report.json"), "w") as f:
            json.dump(rd, f, indent=2, default=str)
        with open(os.path.join(run_dir, f"rank_{r}", "report.md"), "w") as f:
            f.write(triage_markdown(rep, f"rank {r}: recorded trace") + "\n")
        ranks.append({"rank": r, "status": "recorded" if files else "no_trace", "exit_code": None, "duration_s": None,
                      "pid": None, "report_status": rep.status, "hang": None, "state_when_killed": None,
                      "facts": facts, "report": rd if files else None, "_rep": rep, "stdout": None, "stderr": None,
                      "report_md": os.path.join(run_dir, f"rank_{r}", "report.md"), "consequence_of_rank": None,
                      "collective_timeout": collective_timeout(rep)})
    div = divergence([r if r["report"] is not None else dict(r, report=None) for r in ranks])
    missing = [r["rank"] for r in ranks if r["status"] == "no_trace"]
    notes = []
    if missing:
        notes.append(f"no trace for rank(s) {_ranks(missing)}: not recorded, or the rank never reached torch.compile")
    for r in ranks:
        oc = r["facts"]["open_compiles"]
        if oc:
            notes.append(f"rank {r['rank']}: compile {oc[-1]['compile_id']} ({oc[-1].get('function') or '?'}) started "
                         "but has no compilation_metrics (the trace ends while it compiles: crashed, hung or killed)")
    errs = any(r["_rep"].errors for r in ranks)
    status = "error" if errs else "divergent" if div["divergent"] else \
        "issues" if any(r["report_status"] == "issues" for r in ranks) else \
        "no-compile" if all(r["report_status"] == "no-compile" for r in ranks) else "clean"
    html = run_tlparse_all(run_dir, len(ranks)) if not getattr(args, "no_tlparse", False) else None
    result = {
        "command": "triage", "schema": "compile-debug/triage-multirank/1", "mode": "recorded", "run_dir": run_dir,
        "status": status, "target": None, "nproc": nproc, "torchrun_args": [], "launcher": None,
        "torchrun": f"recorded trace {os.path.abspath(trace_path)}", "launcher_exit_code": None, "timed_out": False,
        "timeout_s": None, "duration_s": None, "killed_ranks": [], "surviving_ranks": [], "first_failed_rank": None,
        "restarts": 0, "ranks": [{k: v for k, v in r.items() if not k.startswith("_")} for r in ranks],
        "divergence": div, "hang": None,
        "artifacts": {"trace_dir": os.path.abspath(trace_path), **({"tlparse": html} if html else {})}, "notes": notes,
    }
    result["next_steps"] = next_steps(result, ranks, None, nproc, [])
    return result, multirank_markdown(result, [r["_rep"] for r in ranks])


def next_steps(result, ranks, tstr, nproc, extra):
    steps = []
    div = result["divergence"]
    if result.get("launcher_error"):
        steps.append({"why": f"torchrun failed before starting the ranks: {result['launcher_error']} "
                             f"(full output: {result['artifacts']['torchrun_stderr']}); fix --torchrun-args or the "
                             "rendezvous (free port, --master-port)", "skill": "overview", "command": None})
        return steps
    if result["timed_out"]:
        steps.append({"why": "ranks hung: make every rank compile the same graphs (fix the divergence above); "
                             "meanwhile lower the collective timeout (init_process_group(timeout=...)) to fail fast",
                      "skill": "trace-dynamo", "command": None})
    first = next((r for r in ranks if r["rank"] == result.get("first_failed_rank")), None)
    if first is not None and first.get("collective_timeout"):
        late = [r for r in ranks if r.get("state_when_killed")]
        comp = [r["rank"] for r in late if r["state_when_killed"]["state"] == "compiling"]
        why = f"rank {first['rank']}'s collective timed out waiting for rank(s) {_ranks([r['rank'] for r in late])}"
        if comp:
            why += (f", still COMPILING (rank {_ranks(comp)}): make every rank compile the same graphs "
                    "(see the recompiles/graph breaks above), warm up before the first collective, or raise the "
                    "init_process_group timeout above the compile time")
        else:
            why += ": compare where they were (above) and make every rank issue the same collectives"
        steps.append({"why": why, "skill": "trace-dynamo", "command": None})
    if div["graph_breaks"]:
        b = div["graph_breaks"][0]
        steps.append({"why": f"graph break at {b['site']} on rank(s) {_ranks(b['ranks'])} only: make the code path "
                             "rank-independent (no data-dependent Python branch), or fix the break", "skill": "trace-dynamo",
                      "command": None})
    if div["recompiles"]:
        steps.append({"why": "a function recompiles on some ranks only: give every rank the same shapes/dtypes/flags "
                             "(pad or mark_dynamic the varying dim)", "skill": "trace-dynamo", "command": None})
    # per-rank steps: once without a rank prefix when every rank has it, else prefixed by the ranks
    by_key = {}
    for r in sorted(ranks, key=lambda r: r["rank"] != result.get("first_failed_rank")):
        if r.get("consequence_of_rank") is not None or r.get("collective_timeout"):
            continue  # its error is the peer's failure (or lateness) seen from here
        for s in r["_rep"].next_steps:
            if result["timed_out"] and s["skill"] == "overview" and "timeout" in (s.get("command") or "") + s["why"].lower():
                continue  # the hang section above replaces "raise the timeout"
            if s["skill"] == "trace-inductor":
                if div["divergent"] or result["status"] != "clean":
                    continue
                s = dict(s, command=None, why=s["why"] + " (perf runs one process: time a single-rank run)")
            k = (s["skill"], s["command"], s["why"])
            by_key.setdefault(k, (s, []))[1].append(r["rank"])
    for (skill, cmd, why), (s, rks) in by_key.items():
        if cmd and tstr and cmd.endswith(tstr) and " triage " in cmd:
            cmd = cmd[: -len(tstr)].replace(" triage ", f" triage --nproc {nproc} ", 1) + tstr
        if len(rks) == len(ranks):
            steps.append(dict(s, command=cmd))
        else:
            steps.append(dict(s, command=cmd, why=f"rank {_ranks(rks)}: {why}"))
    out, keys = [], set()
    for s in steps:
        k = (s["skill"], s["command"], s["why"])
        if k not in keys:
            keys.add(k)
            out.append(s)
    return out[:8]


def _drop_shim_frames(rep, shim, stderr):
    """The shim is the outermost frame of every rank: never report it as the user's line."""
    exc = analyze.parse_exception(stderr)
    frames = [f for f in (exc["frames"] if exc else []) if f.file != shim]
    for e in rep.errors:
        if e.location is not None and e.location.file == shim:
            e.location = analyze.innermost_user(frames)
    for b in rep.graph_breaks:
        b.user_stack = [f for f in b.user_stack if f.file != shim]


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
