"""Our driver of PyTorch's compiler bisector: the same search as CompilerBisector.do_bisect, with
the runs done k at a time. Runs in the CLI process (never imports torch); the target processes
do the work through the bisector's own protocol (TORCH_BISECT_BACKEND / _SUBSYSTEM / _MAX and the
state files under <state dir>/bisect/<backend>/).

`advance(known)` replays do_bisect's decisions on the verdicts known so far and names the next
run it would make (or its result), so the answer is the sequential bisector's by construction.
Parallelism is speculation on that decision tree: the k most likely next runs (best-first over
hypothetical verdicts) run at once; a run whose branch is no longer reachable is killed.
Outside exact mode (--jobs 1) two shortcuts that cannot change the answer of a deterministic
program remove runs: the ladder run of the failing backend counts every subsystem's applications
(its find_max_bounds run would be the same all-enabled run, counting one subsystem), and
disabling a counted subsystem with 0 applications is that same run again (its verdict is known).
Every run gets its own bisector state dir; all share one throwaway Inductor/Triton cache (as the
sequential bisector's runs do: the FX graph cache is bypassed while bisecting, the kernel caches
are keyed by the generated source)."""
import heapq
import itertools
import json
import os
import queue
import threading
import time

from cdlib.run import proc
from cdlib.run.workers import bisect_step

_STATE_CODE = """
from torch._inductor.compiler_bisector import CompilerBisector as _CB
_CB.in_process_cache = {state!r}
"""
# ladder runs: count every subsystem's applications (what a find_max_bounds run counts for one)
_COUNT_CODE = """
import atexit as _ax, json as _js, os as _os
_counts, _be = {{}}, _os.environ.get("TORCH_BISECT_BACKEND")
_orig = _CB.__dict__["disable_subsystem"].__func__
def _counting(cls, backend, subsystem, *a, **k):
    if cls.bisection_enabled and backend == _be:
        _counts[subsystem] = _counts.get(subsystem, 0) + 1
    return _orig(cls, backend, subsystem, *a, **k)
_CB.disable_subsystem = classmethod(_counting)
def _dump():   # one file per process that counted (compile workers etc. count nothing)
    if _counts:
        with open(_os.path.join({state!r}, "counts.%d.json" % _os.getpid()), "w") as f:
            _js.dump(_counts, f)
_ax.register(_dump)
"""


# ------------------------------------------------------------------ the decision tree
class Search:
    """backends: [(name, [{"name", "kind": "bisect"|"binary", "config": {field: value}|None}])]"""

    def __init__(self, backends, exact):
        self.backends, self.exact = backends, exact
        self.subs = dict(backends)

    def advance(self, known):
        """-> ("probe", key) | ("done", result dict or None) | ("error", msg) | ("wait", None)"""
        ladder = [b for b, _ in self.backends]
        for b in ladder:
            k = ("ladder", b)
            if k not in known:
                return "probe", k
            if known[k]["bad"]:
                break
        else:
            return "done", None
        subs = self.subs[b]
        if not subs:
            return "done", _result(b)
        counts = None if self.exact else known[("ladder", b)].get("counts")
        for s in subs:
            name = s["name"]
            if s["kind"] == "bisect" and isinstance(counts, dict) and not counts.get(name):
                continue       # never applied: disabling it is the ladder run again (bad)
            k = ("disable", b, name)
            if k not in known:
                return "probe", k
            if known[k]["bad"]:
                continue
            if s["kind"] == "binary":
                return "done", _result(b, name, 0, name)
            if isinstance(counts, dict):
                high = counts[name] - 1
            elif counts == "unknown":
                return "wait", None
            else:
                kb = ("bounds", b, name)
                if kb not in known:
                    return "probe", kb
                if not known[kb]["bad"]:
                    return "error", f"Function succeeded with 'find_max_bounds' status for {b} - {name} (flaky program?)"
                high = known[kb].get("high")
                if high is None:
                    return ("wait", None) if known[kb].get("hyp") else \
                        ("error", f"Trying to get bisect range when it is not set: subsystem {name}")
            low = 0
            while True:
                k = ("bisect", b, name, low, high)
                if k not in known:
                    return "probe", k
                mid = (low + high) // 2
                if known[k]["bad"]:
                    high = mid
                else:
                    low = mid + 1
                if low == high:
                    return "done", _result(b, name, low, (known[k].get("debug") or {}).get(str(low)))
                if low > high:
                    return "error", f"bisect range became empty for {b} - {name} (flaky program?)"
        return "done", _result(b)

    def path(self, known):
        """The runs the sequential bisector would have made, in order (those known so far)."""
        seen, out = dict(), []
        while True:
            kind, key = self.advance(seen)
            if kind != "probe" or key not in known:
                return out
            seen[key] = known[key]
            out.append(key)

    # -------------------------------------------------------------- speculation
    def _outcomes(self, key):
        """Hypothetical verdicts of an unknown run, with rough probabilities."""
        if key[0] == "ladder":
            p_bad = 0.9 if key[1] == self.backends[-1][0] else 0.1
            return [({"bad": True, "counts": "unknown", "hyp": True}, p_bad),
                    ({"bad": False, "hyp": True}, 1 - p_bad)]
        if key[0] == "disable":
            return [({"bad": True, "hyp": True}, 0.7), ({"bad": False, "hyp": True}, 0.3)]
        if key[0] == "bounds":
            return [({"bad": True, "high": None, "hyp": True}, 1.0)]
        return [({"bad": True, "hyp": True}, 0.5), ({"bad": False, "hyp": True}, 0.5)]

    def plan(self, known, limit=64):
        """Unknown runs reachable from `known`, most likely first: [(key, probability)]."""
        out, seen, n, tie = [], set(), 0, itertools.count(1)
        heap = [(-1.0, 0, {})]
        while heap and len(out) < limit and n < 400:
            negp, _, hyp = heapq.heappop(heap)
            n += 1
            merged = dict(known)
            merged.update(hyp)
            kind, key = self.advance(merged)
            if kind != "probe":
                continue
            if key not in seen:
                seen.add(key)
                out.append((key, -negp))
            for o, p in self._outcomes(key):
                h = dict(hyp)
                h[key] = o
                heapq.heappush(heap, (negp * p, next(tie), h))
        return out

    def remaining(self, known):
        """Runs left on the most likely path (an estimate)."""
        merged, n = dict(known), 0
        while n < 200:
            kind, key = self.advance(merged)
            if kind == "wait":
                return n + 3
            if kind != "probe":
                return n
            n += 1
            o = max(self._outcomes(key), key=lambda x: x[1])[0]
            if key[0] == "bounds":
                return n + 4
            merged[key] = o
        return n


def _result(backend, subsystem=None, number=None, debug=None):
    return {"backend": backend, "subsystem": subsystem, "bisect_number": number, "debug_info": debug}


# ------------------------------------------------------------------ one run of the target
def _write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def _lines(path):
    try:
        with open(path) as f:
            return f.read().splitlines()
    except OSError:
        return []


def run_env(key, search, state, base_env):
    """Environment of the run `key` (as the bisector's `run` sets it) + its state files."""
    b = key[1]
    env = dict(base_env, TORCH_COMPILE_BACKEND=b, TORCH_BISECT_BACKEND=b, TORCH_BISECT_SUBSYSTEM=None,
               TORCH_BISECT_MAX=None)
    code = _STATE_CODE.format(state=state)
    if key[0] == "ladder":
        code += _COUNT_CODE.format(state=state)
    else:
        s = next(x for x in search.subs[b] if x["name"] == key[2])
        env["TORCH_BISECT_SUBSYSTEM"] = s["name"]
        d = os.path.join(state, "bisect", b)
        if key[0] == "disable":
            env["TORCH_BISECT_MAX"] = "-1"
            if s.get("config"):
                _write(os.path.join(d, f"{s['name']}_config.txt"),
                       "".join(f"{k}={v}\n" for k, v in s["config"].items()))
            _write(os.path.join(d, f"{s['name']}_run_state.txt"), "test_disable")
        elif key[0] == "bounds":
            _write(os.path.join(d, f"{s['name']}_run_state.txt"), "find_max_bounds")
        else:
            _write(os.path.join(d, f"{s['name']}_run_state.txt"), "bisect")
            _write(os.path.join(d, f"{s['name']}_bisect_range.txt"), f"low={key[3]}\nhigh={key[4]}\n")
    env.update(proc.startup_env(state, [{"code": code}]))
    return env


def read_outcome(key, state):
    """What the run left in its state dir: counts (ladder), the upper bound (bounds), debug info."""
    o = {}
    if key[0] == "ladder":
        # the counts stand for a find_max_bounds run only when one process compiled (and exited
        # normally); otherwise None: the sequential bisector's own runs are made
        files = [f for f in os.listdir(state) if f.startswith("counts.") and f.endswith(".json")]
        o["counts"] = None
        if len(files) == 1:
            try:
                with open(os.path.join(state, files[0])) as f:
                    o["counts"] = json.load(f)
            except (OSError, ValueError):
                pass
    elif key[0] == "bounds":
        high = None
        for line in _lines(os.path.join(state, "bisect", key[1], f"{key[2]}_bisect_range.txt")):
            if line.startswith("high="):
                high = int(line.split("=", 1)[1])
        o["high"] = high
    elif key[0] == "bisect":
        dbg = {}
        for line in _lines(os.path.join(state, "bisect", key[1], f"{key[2]}_call_counter_debug_info.txt")):
            n, _, info = line.strip().partition("=")
            dbg[n] = info
        o["debug"] = dbg
    return o


def describe(key):
    if key[0] == "ladder":
        return f"ladder: backend={key[1]}"
    s = f"subsystem: {key[1]} / {key[2]}"
    if key[0] == "disable":
        return s + " (disabled)"
    if key[0] == "bounds":
        return s + " (counting applications)"
    return s + f" (range [{key[3]}, {key[4]}], mid {(key[3] + key[4]) // 2})"


# ------------------------------------------------------------------ the scheduler
def _cores():
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def default_jobs():
    """k from the cores, the available memory (~2 GiB a run) and GPUs (~2 GiB of GPU memory a run)."""
    k = _cores()
    try:
        with open("/proc/meminfo") as f:
            avail = next(int(ln.split()[1]) for ln in f if ln.startswith("MemAvailable:")) * 1024
        k = min(k, max(1, avail // (2 << 30)))
    except (OSError, StopIteration, ValueError):
        pass
    free = _gpu_free_bytes()
    if free:
        k = min(k, max(1, sum(x // (2 << 30) for x in free)))
    return max(1, min(k, 16))


def _gpu_free_bytes():
    import shutil
    import subprocess
    if not shutil.which("nvidia-smi"):
        return None
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=memory.free", "--format=csv,noheader,nounits"],
                             capture_output=True, text=True, timeout=20).stdout
        return [int(x) << 20 for x in out.split()] or None
    except (OSError, ValueError, subprocess.SubprocessError):
        return None


def run_search(search, argv, *, run_dir, jobs, timeout, bad_if=None, bad_if_exception=None, base_env):
    """Drive the search. Returns (result or None, error or None, known, records)."""
    if jobs > 1 and "TORCHINDUCTOR_COMPILE_THREADS" not in os.environ:
        # k runs share the cores: one compile-worker pool per core, not per run (same generated code)
        base_env = dict(base_env, TORCHINDUCTOR_COMPILE_THREADS=str(max(1, _cores() // jobs)))
    steps_dir = os.path.join(run_dir, "steps")
    os.makedirs(steps_dir, exist_ok=True)
    known, inflight, records = {}, {}, []   # inflight: key -> {"n", "popen", "t0", "cancelled"}
    done_q = queue.Queue()
    counter = [0]
    stage = [1]

    def worker(key, n, slot):
        state = os.path.join(run_dir, "state", f"run{n:02d}")
        os.makedirs(state, exist_ok=True)
        env = run_env(key, search, state, base_env)
        out_p, err_p = os.path.join(steps_dir, f"step{n:02d}.stdout"), os.path.join(steps_dir, f"step{n:02d}.stderr")
        try:
            res = proc.run(argv, env_add=env, timeout=timeout, stdout_path=out_p, stderr_path=err_p,
                           started=lambda p: slot.__setitem__("popen", p))
            done_q.put((key, res, state, None))
        except Exception as e:  # noqa: BLE001 (reported as the run's failure)
            done_q.put((key, None, state, e))

    def start(key):
        n = counter[0]
        counter[0] += 1
        slot = {"n": n, "popen": None, "t0": time.monotonic(), "cancelled": False}
        inflight[key] = slot
        threading.Thread(target=worker, args=(key, n, slot), daemon=True).start()

    def cancel(key):
        slot = inflight[key]
        if not slot["cancelled"] and slot["popen"] is not None:
            slot["cancelled"] = True
            proc.kill_group(slot["popen"], grace=1.0)

    try:
        while True:
            kind, val = search.advance(known)
            if kind in ("done", "error"):
                break
            wanted = [k for k, _ in search.plan(known, limit=max(jobs * 4, 16))]
            for k in list(inflight):
                if k not in wanted:
                    cancel(k)
            for k in wanted:
                if sum(1 for s in inflight.values() if not s["cancelled"]) >= jobs:
                    break
                if k not in inflight and k not in known:
                    start(k)
            if not inflight:
                kind, val = "error", "internal: nothing to run"
                break
            try:
                key, res, state, exc = done_q.get(timeout=60)
            except queue.Empty:
                continue
            slot = inflight.pop(key)
            rec = {"step": slot["n"], "backend": key[1], "subsystem": key[2] if len(key) > 2 else None,
                   "probe": list(key), "max": "-1" if key[0] == "disable" else None,
                   "run_state": {"disable": "test_disable", "bounds": "find_max_bounds",
                                 "bisect": "bisect"}.get(key[0]),
                   "range": [key[3], key[4]] if key[0] == "bisect" else None,
                   "stdout": os.path.join(steps_dir, f"step{slot['n']:02d}.stdout"),
                   "stderr": os.path.join(steps_dir, f"step{slot['n']:02d}.stderr")}
            if slot["cancelled"] or exc is not None:
                rec.update(bad=None, cancelled=True, reason="cancelled: not needed any more" if exc is None else
                           f"could not run: {exc}", duration_s=round(time.monotonic() - slot["t0"], 2))
                records.append(rec)
                if exc is not None:
                    kind, val = "error", f"could not run the target: {exc}"
                    break
                continue
            out, err = res.read_stdout(), res.read_stderr()
            bad, reason = bisect_step.judge(res, out, err, bad_if, bad_if_exception)
            etype, emsg = bisect_step.signature(err)
            o = {"bad": bad, "reason": reason}
            o.update(read_outcome(key, state))
            known[key] = o
            rec.update(bad=bad, reason=reason, returncode=res.returncode, signal=res.signal,
                       timed_out=res.timed_out, exc_type=bisect_step.short_type(etype),
                       exc_message=(emsg or "")[:300], duration_s=res.duration_s)
            if key[0] == "bounds" and o.get("high") is not None:
                rec["range"] = [0, o["high"]]
            records.append(rec)
            with open(os.path.join(steps_dir, "steps.jsonl"), "a") as f:
                f.write(json.dumps(rec) + "\n")
            if key[0] != "ladder" and stage[0] == 1 and search.path(known)[-1:] == [key]:
                stage[0] = 2
                proc.progress(f"stage 2/2: subsystems of backend {key[1]}")
            busy = [k for k, s in inflight.items() if not s["cancelled"]]
            proc.progress(f"run {slot['n'] + 1}: {describe(key)} -> {'BAD' if bad else 'good'} ({reason}; "
                          f"{res.duration_s:.1f}s) | in flight {len(busy)}, about {search.remaining(known)} runs left")
    finally:
        for k in list(inflight):
            cancel(k)
        deadline = time.monotonic() + 10
        while inflight and time.monotonic() < deadline:
            try:
                key, *_ = done_q.get(timeout=1)
                slot = inflight.pop(key, None)
                if slot:
                    records.append({"step": slot["n"], "backend": key[1], "probe": list(key), "bad": None,
                                    "cancelled": True, "reason": "cancelled: not needed any more",
                                    "duration_s": round(time.monotonic() - slot["t0"], 2)})
            except queue.Empty:
                pass
    on_path = set(search.path(known))
    for r in records:
        r["on_path"] = tuple(r["probe"]) in on_path
    records.sort(key=lambda r: r["step"])
    with open(os.path.join(steps_dir, "steps.jsonl"), "w") as f:
        for r in records:
            f.write(json.dumps(r) + "\n")
    if kind == "done":
        return val, None, known, records
    return None, val, known, records
