"""The oracle of minify's source stage: runs a candidate program (cold, or in a fork of a warm
interpreter) and decides whether it keeps what the original does: its failure (how the process ended,
masked: signature / same_failure), its graph break or its recompile (source_events); it passes with
compilation off, with the good backend, and keeps its outcome under a second torch. Candidates known to
lose the failure are refused without a run (source_text). Never imports torch."""
import hashlib
import os
import re
import shutil
import threading
import time
from concurrent.futures import ThreadPoolExecutor

from .. import cmdline
from ..run import proc, warm
from . import printed, source_events, verdict
from .source_reduce import lines_of, scratch_copy
from .source_text import attr_names, global_seeds, nonsense, string_exprs, string_exprs_parts, undefined_names
from ..run.workers import bisect_step


_NUM = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?")


def _stable(text):
    """The stable part of a message: paths, addresses and numbers masked."""
    t = re.sub(r"(/[\w.\-]+)+", "<path>", text or "")
    t = re.sub(r"0x[0-9a-fA-F]+", "<addr>", t)
    t = _NUM.sub("#", t)
    return re.sub(r"#(?:\s*[,x*]\s*#)+", "#", t).strip()[:160]   # [4, 8] and 8x16 read as [#]


def _floats(text):
    """The non-integer numbers of a line (values a check printed; integers are counts and sizes)."""
    out = []
    for m in _NUM.finditer(text or ""):
        s = m.group(0)
        if any(c in s for c in ".eE"):
            try:
                out.append(float(s))
            except ValueError:
                pass
    return out


def _decade(x):
    import math
    return math.floor(math.log10(abs(x))) if x else None


def signature(res):
    """How a run ended, as the oracle compares it."""
    out, err = res.read_stdout(2_000_000), res.read_stderr(2_000_000)
    etype, emsg = bisect_step.signature(err)
    tb = etype is not None
    said = [ln for ln in printed.printed(out, err).splitlines() if ln.strip()]
    last = said[-1].replace("[stderr] ", "", 1).strip() if said else ""
    return {"rc": res.returncode, "signal": res.signal, "timed_out": res.timed_out, "traceback": tb,
            "type": bisect_step.short_type(etype) if tb else None, "message": (emsg or "").split("\n")[0],
            "last_line": last, "duration_s": res.duration_s}


def failed(sig):
    return bool(sig["rc"] not in (0, None) or sig["signal"] or sig["timed_out"])


def same_failure(orig, got):
    """(same: bool, why) for a compiled run of a candidate against the original's signature."""
    if got["timed_out"]:
        return False, "timed out"
    if not failed(got):
        return False, "passed"
    if got["signal"] != orig["signal"]:
        return False, f"ended by {got['signal'] or 'exit ' + str(got['rc'])}, not {orig['signal'] or 'exit ' + str(orig['rc'])}"
    if not orig["signal"] and got["rc"] != orig["rc"]:
        return False, f"exit {got['rc']}, not {orig['rc']}"
    if got["traceback"] != orig["traceback"]:
        return False, ("a traceback the original did not have: " + f"{got['type']}: {got['message'][:80]}"
                       if got["traceback"] else "no traceback")
    if orig["traceback"]:
        if got["type"] != orig["type"]:
            return False, f"{got['type']}, not {orig['type']}"
        if _stable(got["message"]) != _stable(orig["message"]):
            return False, f"another message: {got['message'][:80]}"
        return True, f"same {orig['type']}"
    if _stable(got["last_line"]) != _stable(orig["last_line"]):
        return False, f"another last line: {got['last_line'][:80]}"
    fo, fg = _floats(orig["last_line"]), _floats(got["last_line"])
    for a, b in zip(fo, fg):
        da, db = _decade(a), _decade(b)
        if (da is None) != (db is None) or (da is not None and abs(da - db) > 2):
            return False, f"same line, but {b:g} where the original printed {a:g}: another size of difference"
    return True, "same exit status and last line"


# ------------------------------------------------------------------ the oracle
class Oracle:
    """Runs a candidate (program text) and decides whether it keeps the original's failure."""

    def __init__(self, argv, index, run_dir, *, timeout, good_backend=None, other_python=None, jobs=1,
                 mode="auto", graph_break=None, break_id=None, warm=True, recompile=None):
        self.argv, self.index, self.run_dir = list(argv), index, run_dir
        self.prog = os.path.abspath(argv[index])
        self.base = os.path.basename(self.prog)
        self.timeout, self.good_backend, self.other_python = timeout, good_backend, other_python
        self.mode, self.graph_break, self.break_id, self.recompile = mode, graph_break, break_id, recompile
        self.root = os.path.join(run_dir, "source")
        self.cache = os.path.join(self.root, "inductor_cache")
        self.cache_env = proc.private_cache_env(self.cache)
        self.slots = []
        self.notes = []
        for k in range(max(1, jobs)):
            d = os.path.join(self.root, f"work{k}")
            note = scratch_copy(os.path.dirname(self.prog), d, exclude=[run_dir])
            if note and note not in self.notes:
                self.notes.append(note)
            self.slots.append(d)
        self._free = list(range(len(self.slots)))
        self._lock = threading.Lock()
        self._cv = threading.Condition(self._lock)
        self.memo = {}
        self.queries = 0
        self.skipped = 0             # candidates refused without a run (a name never defined)
        self.orig = None             # signature of the original, compiled
        self.orig_other = None       # its outcome under --torch-python
        self.anchors, self.needs_compile, self.seeded = [], False, False   # static checks, learnt from the original
        self.query_timeout = timeout
        # queries in forks of a warm interpreter (cdlib/warm.py) once the original keeps its verdict
        # there (try_warm); the baseline and the final verification always run cold
        self.warm_wanted, self.warm, self._zygotes = bool(warm) and index == 1, False, {}
        self.log = open(os.path.join(self.root, "queries.log"), "a", encoding="utf-8")

    # -------------------------------------------------- running
    def _argv_in(self, slot, python=None):
        a = list(self.argv)
        a[self.index] = os.path.join(slot, self.base)
        if python:
            a[0] = python
        # other files the command names (data, configs) are read from where they are
        return [os.path.abspath(w) if i > 0 and i != self.index and not w.startswith("-") and os.path.exists(w)
                else w for i, w in enumerate(a)]

    def _env(self, how, qdir):
        env = {"PYTHONUNBUFFERED": "1", "PYTHONDONTWRITEBYTECODE": "1", "TORCH_TRACE": None,
               **self.cache_env}
        if how == "eager":
            env.update(verdict.eager_env(qdir))
        elif how == "good":
            env["TORCH_BISECT_BACKEND"] = self.good_backend
        if self.mode != "failure" and how == "compiled":
            env["TORCH_TRACE"] = os.path.join(qdir, "trace")
        return env

    def run(self, text, how, tag, timeout=None, python=None):
        """Run the candidate text one way: compiled | eager | good | other (compiled, under python: the
        other torch's). -> ProcResult."""
        with self._cv:
            while not self._free:
                self._cv.wait()
            k = self._free.pop()
        try:
            slot = self.slots[k]
            with open(os.path.join(slot, self.base), "w", encoding="utf-8") as f:
                f.write(text)
            qdir = os.path.join(self.root, "queries", tag)
            os.makedirs(qdir, exist_ok=True)
            if self.warm and python is None and how != "other":
                r = self._run_warm(k, slot, how, qdir, timeout or self.query_timeout)
                if r is not None:
                    return r
            return proc.run(self._argv_in(slot, python), env_add=self._env(how, qdir), cwd=slot,
                            timeout=timeout or self.query_timeout,
                            stdout_path=os.path.join(qdir, f"{how}.stdout"),
                            stderr_path=os.path.join(qdir, f"{how}.stderr"))
        finally:
            with self._cv:
                self._free.append(k)
                self._cv.notify()

    def _run_warm(self, k, slot, how, qdir, timeout):
        """A query in a fork of this slot's zygote for `how`; None (and warm off) when it fails."""
        env = self._env(how, qdir)
        try:
            z = self._zygotes.get((k, how))
            if z is None:
                start_env = dict(env, TORCH_TRACE=None)   # each query's trace dir is set in its fork
                with open(self.prog, encoding="utf-8") as f:
                    imports = warm.imports_of(f.read(), os.path.dirname(self.prog))
                z = self._zygotes[(k, how)] = warm.Zygote(
                    self.argv[0], start_env, slot, os.path.join(self.root, f"zygote_{k}_{how}.log"),
                    imports, self.timeout)
            return z.run(self._argv_in(slot)[1:], env_add=env, cwd=slot, timeout=timeout,
                         stdout_path=os.path.join(qdir, f"{how}.stdout"),
                         stderr_path=os.path.join(qdir, f"{how}.stderr"))
        except (warm.WarmError, OSError, ValueError) as e:   # (another slot's failure closed this zygote)
            self.warm = False
            self._close_zygotes()
            self.notes.append(f"queries run in fresh interpreters ({e})")
            return None

    def _close_zygotes(self):
        zs, self._zygotes = list(self._zygotes.values()), {}
        for z in zs:
            z.close()

    def try_warm(self, text):
        """After the baseline: run the original's whole test in warm interpreters; they answer the
        queries only when it keeps its verdict there (a program that depends on a fresh process, e.g.
        on its own random state, runs cold)."""
        if not self.warm_wanted:
            return False
        self.warm = True
        t0 = time.monotonic()
        ok, why = self._decide(text, "warm_check", together=True)
        shutil.rmtree(os.path.join(self.root, "queries", "warm_check"), ignore_errors=True)
        if self.warm and not ok:
            self.warm = False
            self._close_zygotes()
            self.notes.append(f"queries run in fresh interpreters: in a forked one the original gave {why!r}")
        if self.warm:
            self.log.write(f"warm interpreters: the original keeps its verdict ({time.monotonic() - t0:.1f} s)\n")
        return self.warm

    # -------------------------------------------------- the original
    def baseline(self, text, runs=3):
        """Run the original: compiled (under TORCH_TRACE) to learn what to keep: its failure, or when it
        does not fail, a graph break or a recompile in the program file (_pick_event).
        A failure is run `runs` times (flaky unless all agree), once eager, once with the good backend;
        then once under the other Python. Returns (ok, why)."""
        # a failure's other runs start beside the first one, as many at once as there are slots (--jobs);
        # when the first shows no failure, those not started are cancelled
        rest = [("compiled", f"orig{i}") for i in range(1, runs)] + [("eager", "orig_eager")]
        if self.good_backend:
            rest.append(("good", "orig_good"))
        maybe_failure = self.mode in ("auto", "failure")
        proc.progress("source 1/3: the original, compiled" + (
            f" ({runs} times), with compilation off" + (f", with backend {self.good_backend}" if self.good_backend else "")
            + f"; {len(self.slots)} at a time" if maybe_failure else ""))
        with ThreadPoolExecutor(max_workers=len(self.slots)) as ex:
            futs = [ex.submit(self.run, text, how, tag, timeout=self.timeout)
                    for how, tag in [("compiled", "orig0")] + (rest if maybe_failure else [])]
            first = futs[0].result()
            sigs = [signature(first)]
            self.orig = sigs[0]
            if self.mode == "auto":
                self.mode = "failure" if failed(self.orig) and not self.orig["timed_out"] else "event"
            if self.mode != "failure":
                for f in futs[1:]:
                    f.cancel()
                ok, why = self._pick_event()
                if not ok:
                    return False, why
            else:
                got = [f.result() for f in futs[1:]]
        if self.mode == "failure":
            for r in got[:runs - 1]:
                sigs.append(signature(r))
                ok, why = same_failure(self.orig, sigs[-1])
                if not ok:
                    return False, f"flaky: the failure did not reproduce {runs} of {runs} times ({why})"
            e = got[runs - 1]
            if not e.ok:
                return False, ("it fails without torch.compile too (exit "
                               f"{e.returncode}): a bug in the program, not in torch.compile")
            if self.good_backend and not got[runs].ok:
                return False, f"it fails with backend {self.good_backend} too: that backend is not a good one"
        if self.other_python:
            proc.progress(f"source 1/3: the original under {self.other_python}")
            self.orig_other = self._other_outcome(text, "orig_other")
        self._learn_anchors(text)
        # a query that runs longer than 2x the original is not interesting
        self.query_timeout = max(60.0, 2 * max(s["duration_s"] for s in sigs))   # a floor for load jitter
        return True, None

    def _pick_event(self):
        """A program that does not fail: the event to keep, a graph break at a line of the program file
        (--break picks one by registry id), else a recompile of a function of the program file."""
        qdir = os.path.join(self.root, "queries", "orig0")
        if self.mode in ("event", "graph_break"):
            mine = [b for b in self._breaks(qdir) if b["in_program"]]
            if self.break_id:
                mine = [b for b in mine if (b["gb_id"] or "").lower() == self.break_id.lower()]
            if mine:   # a break Dynamo hit in the program's own line first (not inside a library it calls)
                self.mode, self.graph_break = "graph_break", sorted(mine, key=lambda b: bool(b["in_library"]))[0]
                return True, None
        if self.mode in ("event", "recompile"):
            mine = [r for r in self._recompiles(qdir) if r["in_program"]]
            if mine:
                self.mode, self.recompile = "recompile", mine[0]
                return True, None
        if self.orig["timed_out"]:
            return False, f"the original timed out after {self.timeout:.0f} s (--timeout)"
        if self.break_id:
            return False, "the original breaks no graph with id " + self.break_id + " (triage lists what it does)"
        if self.mode == "recompile":
            return False, "the original recompiles no function of the program file (triage lists what it does)"
        return False, ("the original neither fails, breaks a graph at a line of the program file, nor recompiles "
                       "a function of it (triage lists what it does)")

    def _other_outcome(self, text, tag):
        # its own output files: the bug report quotes the compiled run's (it read the other torch's, which passed)
        r = self.run(text, "other", tag, timeout=self.timeout, python=self.other_python)
        if self.mode != "failure":
            return "passes" if r.ok else "fails"
        ok, _ = same_failure(self.orig, signature(r))
        return "fails the same way" if ok else ("passes" if r.ok else "fails differently")

    def _breaks(self, qdir):
        return source_events.graph_breaks(qdir, self.base, self.slots)

    def _recompiles(self, qdir):
        return source_events.recompiles(qdir, self.base, self.slots)

    # -------------------------------------------------- a candidate
    def interesting(self, text):
        key = hashlib.sha1(text.encode()).hexdigest()
        if key in self.memo:
            return self.memo[key][0]
        why_not = self._static_refusal(text)
        if why_not:
            self.memo[key] = (False, why_not)
            self.skipped += 1
            self.log.write(f"----- not  {lines_of(text):4d} lines    0.0s {why_not}\n")
            return False
        with self._lock:
            self.queries += 1
            n = self.queries
        tag = f"q{n:04d}"
        t0 = time.monotonic()
        ok, why = self._decide(text, tag)
        self.memo[key] = (ok, why)
        self.log.write(f"{tag} {'KEEP' if ok else 'no  '} {lines_of(text):4d} lines {time.monotonic() - t0:6.1f}s {why}\n")
        self.log.flush()
        if not ok:   # keep only the kept queries' outputs (the run dir would grow by a run per query)
            shutil.rmtree(os.path.join(self.root, "queries", tag), ignore_errors=True)
        return ok

    def _static_refusal(self, text):
        """Why a candidate can't keep the failure, known without running it, or None."""
        missing = undefined_names(text)
        if missing:   # a NameError-to-be (the original defines every name it uses)
            return f"not run: {', '.join(sorted(missing)[:3])} never defined"
        if self.anchors:   # the program's own text of the failure (a print, a raise, an assert message)
            have = string_exprs(text)
            gone = [a for a in self.anchors if a not in have]
            if gone:
                return f"not run: the failure's text {cmdline.clip(gone[0], 60)!r} changed or is gone"
        if self.needs_compile and "compile" not in attr_names(text):
            return "not run: torch.compile is gone"
        if self.seeded and not global_seeds(text):
            return ("not run: the program's random seed is gone (a fresh process draws other random numbers "
                    "each run: the failure would come and go)")
        if self.mode != "failure" or self.orig.get("type") not in ("TypeError", "AttributeError"):
            bad = nonsense(text)
            if bad:
                return f"not run: {bad} (a TypeError the original did not have)"
        return None

    def _learn_anchors(self, text):
        """Strings of the program that the original's failure shows (its last line, or the message of
        its exception): a candidate without them can't end the same way. And whether the program calls
        a `compile` itself (then a candidate without one runs eagerly)."""
        shown = (self.orig or {}).get("last_line", "") + "\n" + (self.orig or {}).get("message", "")
        # the whole string expressions that print them (an f-string with its fields) must stay as they are;
        # an expression is one when a constant piece of its own is shown (a docstring that merely contains
        # a word of the message is not)
        self.anchors = sorted(e for e, own in string_exprs_parts(text).items()
                              if any(len(p.strip()) >= 4 and p in shown for p in own)) if self.mode == "failure" else []
        self.needs_compile = "compile" in attr_names(text)
        self.seeded = bool(global_seeds(text))

    def _decide(self, text, tag, together=False):
        """Whether the candidate keeps what the original does. together: its eager run goes beside the
        compiled one (the warm check, where both are needed), not after it."""
        if together and self.mode == "failure" and len(self.slots) > 1:
            with ThreadPoolExecutor(max_workers=1) as ex:
                later = ex.submit(self.run, text, "eager", tag)
                r = self.run(text, "compiled", tag)
                e = later.result()
        else:
            r, e = self.run(text, "compiled", tag), None
        if self.mode != "failure":
            if r.timed_out:
                return False, "timed out"
            qdir = os.path.join(self.root, "queries", tag)
            if self.mode == "graph_break":
                gb = self.graph_break
                hit = [b for b in self._breaks(qdir)
                       if b["in_program"] and (b["gb_id"] or b["gb_type"]) == (gb["gb_id"] or gb["gb_type"])
                       and b["function"] == gb["function"]]
                if not hit:
                    return False, f"no {gb['gb_id'] or gb['gb_type']} break in {gb['function']} of the program"
                why = f"same graph break {gb['gb_id']}"
            else:
                rc = self.recompile
                if not source_events.same_recompile(rc, self._recompiles(qdir)):
                    return False, f"{rc['function']} no longer recompiles on {rc['cause']}"
                why = f"same recompile ({rc['cause']})"
            if r.returncode != self.orig["rc"]:
                return False, f"exit {r.returncode}, not {self.orig['rc']}"
        else:
            ok, why = same_failure(self.orig, signature(r))
            if not ok:
                return False, "compiled: " + why
            if e is None:
                e = self.run(text, "eager", tag)
            if not e.ok:
                return False, "fails with compilation off too" + (" (timed out)" if e.timed_out else "")
            if self.good_backend:
                g = self.run(text, "good", tag)
                if not g.ok:
                    return False, f"fails with backend {self.good_backend} too"
        if self.other_python:
            got = self._other_outcome(text, tag)
            if got != self.orig_other:
                return False, f"under the other torch it {got} (the original {self.orig_other})"
        return True, why

    def close(self):
        self.warm = False
        self._close_zygotes()
        try:
            self.log.close()
        except OSError:
            pass

