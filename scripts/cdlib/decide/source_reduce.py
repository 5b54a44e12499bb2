"""Source-level reduction: shrink the user's program file itself (minify --source, and minify's second
stage when no graph-level repro could be verified). For failures that live outside any captured graph:
what feeds the graph at run time, Dynamo's handling of Python state, guards, graph breaks.

Reduction is pysource-minimize's (AST-aware; no home-made delta debugger), after a literal pass of ours
that shrinks loop counts, step counts and sizes first so that later queries are cheap. A candidate is
kept only by the tool's own verdict (Oracle), never by a text match alone:
  (a) compiled, it fails with the original's signature: how the process ended (exit status / signal,
      traceback or not), the exception type and the stable part of its message, or, for a program that
      exits with its own message, that last line with its numbers' magnitudes (a mismatch of 0.5 that
      becomes one of 3e-7 slid to rounding);
  (b) it passes with compilation off (the eager check triage uses);
  (c) it passes with the last good backend, when one is known (`--good-backend`, from a bisect);
  (d) under a second Python/torch (`--torch-python`), it keeps the original's outcome there.
For a graph break (a program that does not fail): the candidate must still break with the same
registry id at a line of the program file, in the same function.
Candidates run in scratch copies of the program's directory (the user's files are never touched), with
a throwaway Inductor cache shared by the queries. Never imports torch."""
import ast
import hashlib
import os
import re
import shutil
import threading
import time
from concurrent.futures import ThreadPoolExecutor

from .. import cmdline
from ..run import proc, warm
from . import verdict
from ..run.workers import bisect_step


class SourceError(Exception):
    """One line for the user: source reduction cannot run on this target."""


# ------------------------------------------------------------------ the target
def program_of(argv):
    """(index in argv of the program file, its path) for `python prog.py ...`; SourceError otherwise."""
    words = list(argv)
    got = " ".join(words[:3])
    if len(words) >= 2 and re.match(r"^python[\d.]*$", os.path.basename(words[0])):
        if words[1].startswith("-"):
            raise SourceError(f"source reduction needs a .py program file; got `{got}` (a module or option, "
                              "not a program file: run the file itself, e.g. `-- python path/to/prog.py`)")
        i = 1
    else:
        raise SourceError(f"source reduction needs a .py program file run by Python; got `{got}`")
    path = words[i]
    if not path.endswith(".py") or not os.path.isfile(path):
        raise SourceError(f"source reduction needs a .py program file; got `{path}`")
    return i, os.path.abspath(path)


def parse_program(path):
    """The program's text; SourceError (one line) when it does not parse."""
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except (OSError, UnicodeDecodeError) as e:
        raise SourceError(f"cannot read {path}: {e}")
    try:
        ast.parse(text)
    except SyntaxError as e:
        raise SourceError(f"{path}:{e.lineno}: syntax error ({e.msg}): source reduction needs a program that parses")
    return text


def lines_of(text):
    return sum(1 for ln in text.splitlines() if ln.strip() and not ln.strip().startswith("#"))


_SKIP_DIRS = {".git", "__pycache__", "node_modules", ".venv", "venv", ".tox", ".mypy_cache", ".pytest_cache"}
MAX_FILE = 50 << 20
MAX_COPY = 500 << 20


def scratch_copy(src_dir, dst, exclude=()):
    """Copy the program's directory for candidates to run in: small files only, no VCS/venv/cache
    dirs, nothing under `exclude` (the run dir, when it lies inside); past MAX_COPY only the .py files.
    Returns a note or None."""
    total, big = 0, False
    skip = {os.path.realpath(e) for e in exclude}

    def skipped(d, n):
        p = os.path.join(d, n)
        return n in _SKIP_DIRS or os.path.exists(os.path.join(p, "pyvenv.cfg")) or os.path.realpath(p) in skip
    for root, dirs, files in os.walk(src_dir):
        dirs[:] = [d for d in dirs if not skipped(root, d)]
        for f in files:
            try:
                total += min(os.path.getsize(os.path.join(root, f)), MAX_FILE)
            except OSError:
                pass
        if total > MAX_COPY:
            big = True
            break

    def ignore(d, names):
        out = set()
        for n in names:
            p = os.path.join(d, n)
            if os.path.isdir(p):
                if skipped(d, n):
                    out.add(n)
            elif os.path.islink(p) or (big and not n.endswith(".py")):
                out.add(n)
            else:
                try:
                    if os.path.getsize(p) > MAX_FILE:
                        out.add(n)
                except OSError:
                    out.add(n)
        return out
    shutil.copytree(src_dir, dst, ignore=ignore, symlinks=False, dirs_exist_ok=True)
    return "the program's directory is large: only its .py files were copied for the candidates" if big else None


# ------------------------------------------------------------------ signatures
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
    said = [ln for ln in verdict.printed(out, err).splitlines() if ln.strip()]
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
                 mode="auto", graph_break=None, break_id=None, warm=True):
        self.argv, self.index, self.run_dir = list(argv), index, run_dir
        self.prog = os.path.abspath(argv[index])
        self.base = os.path.basename(self.prog)
        self.timeout, self.good_backend, self.other_python = timeout, good_backend, other_python
        self.mode, self.graph_break, self.break_id = mode, graph_break, break_id
        self.root = os.path.join(run_dir, "source")
        self.cache = os.path.join(self.root, "inductor_cache")
        os.makedirs(self.cache, exist_ok=True)
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
        self.anchors, self.needs_compile = [], False   # static checks, learnt from the original
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
               "TORCHINDUCTOR_CACHE_DIR": self.cache, "TRITON_CACHE_DIR": os.path.join(self.cache, "triton")}
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
        ok, why = self._decide(text, "warm_check")
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
        does not fail, a graph break at a line of the program file (--break picks one by registry id).
        A failure is run `runs` times (flaky unless all agree), once eager, once with the good backend;
        then once under the other Python. Returns (ok, why)."""
        proc.progress(f"source 1/3: the original, compiled (1/{runs})")
        first = self.run(text, "compiled", "orig0", timeout=self.timeout)
        sigs = [signature(first)]
        self.orig = sigs[0]
        if self.mode == "auto":
            self.mode = "failure" if failed(self.orig) and not self.orig["timed_out"] else "graph_break"
        if self.mode == "graph_break":
            mine = [b for b in self._breaks(os.path.join(self.root, "queries", "orig0")) if b["in_program"]]
            if self.break_id:
                mine = [b for b in mine if (b["gb_id"] or "").lower() == self.break_id.lower()]
            if not mine:
                if self.orig["timed_out"]:
                    return False, f"the original timed out after {self.timeout:.0f} s (--timeout)"
                return False, ("the original breaks no graph with id " + self.break_id if self.break_id else
                               "the original neither fails nor breaks a graph at a line of the program file") \
                    + " (triage lists what it does)"
            # a break Dynamo hit in the program's own line first (not inside a library it calls)
            self.graph_break = sorted(mine, key=lambda b: bool(b["in_library"]))[0]
        else:
            for i in range(1, runs):
                proc.progress(f"source 1/3: the original, compiled ({i + 1}/{runs})")
                sigs.append(signature(self.run(text, "compiled", f"orig{i}", timeout=self.timeout)))
                ok, why = same_failure(self.orig, sigs[-1])
                if not ok:
                    return False, f"flaky: the failure did not reproduce {runs} of {runs} times ({why})"
            proc.progress("source 1/3: the original, with compilation off")
            e = self.run(text, "eager", "orig_eager", timeout=self.timeout)
            if not e.ok:
                return False, ("it fails without torch.compile too (exit "
                               f"{e.returncode}): a bug in the program, not in torch.compile")
            if self.good_backend:
                proc.progress(f"source 1/3: the original, with backend {self.good_backend}")
                g = self.run(text, "good", "orig_good", timeout=self.timeout)
                if not g.ok:
                    return False, f"it fails with backend {self.good_backend} too: that backend is not a good one"
        if self.other_python:
            proc.progress(f"source 1/3: the original under {self.other_python}")
            self.orig_other = self._other_outcome(text, "orig_other")
        self._learn_anchors(text)
        # a query that runs longer than 2x the original is not interesting
        self.query_timeout = max(60.0, 2 * max(s["duration_s"] for s in sigs))   # a floor for load jitter
        return True, None

    def _other_outcome(self, text, tag):
        # its own output files: the bug report quotes the compiled run's (it read the other torch's, which passed)
        r = self.run(text, "other", tag, timeout=self.timeout, python=self.other_python)
        if self.mode == "graph_break":
            return "passes" if r.ok else "fails"
        ok, _ = same_failure(self.orig, signature(r))
        return "fails the same way" if ok else ("passes" if r.ok else "fails differently")

    def _breaks(self, qdir):
        from ..read import trace as tracemod
        from .analyze_dynamo import _graph_breaks
        try:
            tr = tracemod.parse(os.path.join(qdir, "trace"))
            bks = _graph_breaks(tr)
        except Exception:   # noqa: BLE001  (a candidate whose trace can't be read is not interesting)
            return []
        here = os.path.realpath
        out = []
        for b in bks:
            loc = b.location
            in_prog = bool(loc and loc.file and os.path.basename(loc.file) == self.base
                           and os.path.dirname(here(loc.file)) in [here(s) for s in self.slots])
            out.append({"gb_id": b.gb_id, "gb_type": b.gb_type, "in_program": in_prog, "in_library": b.in_library,
                        "function": loc.function if loc else None, "line": loc.line if loc else None,
                        "code": loc.code if loc else None})
        return out

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
        if self.mode == "graph_break" or self.orig.get("type") not in ("TypeError", "AttributeError"):
            bad = nonsense(text)
            if bad:
                return f"not run: {bad} (a TypeError the original did not have)"
        return None

    def _learn_anchors(self, text):
        """Strings of the program that the original's failure shows (its last line, or the message of
        its exception): a candidate without them can't end the same way. And whether the program calls
        a `compile` itself (then a candidate without one runs eagerly)."""
        shown = (self.orig or {}).get("last_line", "") + "\n" + (self.orig or {}).get("message", "")
        parts = {p for p in string_parts(text) if len(p.strip()) >= 4 and p in shown} if self.mode == "failure" else ()
        # the whole string expressions that hold them (an f-string with its fields) must stay as they are
        self.anchors = sorted(e for e in string_exprs(text) if any(p in e for p in parts))
        self.needs_compile = "compile" in attr_names(text)

    def _decide(self, text, tag):
        r = self.run(text, "compiled", tag)
        if self.mode == "graph_break":
            if r.timed_out:
                return False, "timed out"
            gb = self.graph_break
            hit = [b for b in self._breaks(os.path.join(self.root, "queries", tag))
                   if b["in_program"] and (b["gb_id"] or b["gb_type"]) == (gb["gb_id"] or gb["gb_type"])
                   and b["function"] == gb["function"]]
            if not hit:
                return False, f"no {gb['gb_id'] or gb['gb_type']} break in {gb['function']} of the program"
            if r.returncode != self.orig["rc"]:
                return False, f"exit {r.returncode}, not {self.orig['rc']}"
            why = f"same graph break {gb['gb_id']}"
        else:
            ok, why = same_failure(self.orig, signature(r))
            if not ok:
                return False, "compiled: " + why
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


def undefined_names(text):
    """Names a program loads but never binds anywhere (not builtins): a candidate that lost a
    definition or an import. Conservative: any binding anywhere counts, `import *` disables it."""
    import builtins
    tree = ast.parse(text)
    bound = set(dir(builtins)) | {"__file__", "__builtins__", "__spec__", "__loader__", "__package__",
                                  "__annotations__", "__class__", "__path__", "__cached__"}
    loads = set()
    for n in ast.walk(tree):
        if isinstance(n, ast.Name):
            (loads if isinstance(n.ctx, ast.Load) else bound).add(n.id)
        elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(n.name)
        elif isinstance(n, ast.arg):
            bound.add(n.arg)
        elif isinstance(n, ast.alias):
            if n.name == "*":
                return set()
            bound.add(n.asname or n.name.split(".")[0])
        elif isinstance(n, ast.ExceptHandler) and n.name:
            bound.add(n.name)
        elif isinstance(n, (ast.Global, ast.Nonlocal)):
            bound.update(n.names)
        elif isinstance(n, (ast.MatchAs, ast.MatchStar)) and n.name:
            bound.add(n.name)
        elif isinstance(n, ast.MatchMapping) and n.rest:
            bound.add(n.rest)
    return loads - bound


def string_parts(text):
    """The string constants of a program, f-strings by their constant parts."""
    return {n.value for n in ast.walk(ast.parse(text)) if isinstance(n, ast.Constant) and isinstance(n.value, str)}


def nonsense(text):
    """What a reducer's candidate does that always raises (it replaced an expression by a constant):
    calling a number, an attribute a number or None does not have, iterating over one, range() without
    arguments. None when there is nothing of the kind."""
    def const(n):
        return isinstance(n, ast.Constant) and not isinstance(n.value, (str, bytes))
    for n in ast.walk(ast.parse(text)):
        if isinstance(n, ast.Call):
            if const(n.func):
                return f"calls the constant {ast.unparse(n.func)}"
            if isinstance(n.func, ast.Name) and n.func.id == "range" and not n.args:
                return "range() without arguments"
        elif isinstance(n, ast.Attribute) and const(n.value) and not hasattr(n.value.value, n.attr):
            return f"{ast.unparse(n)}: no such attribute"
        elif isinstance(n, (ast.For, ast.comprehension)) and const(n.iter):
            return f"iterates over {ast.unparse(n.iter)}"
        elif isinstance(n, ast.Compare) and any(isinstance(op, (ast.In, ast.NotIn)) and const(c)
                                                for op, c in zip(n.ops, n.comparators)):
            return "`in` a number"
    return None


def string_exprs(text):
    """The string expressions of a program (constants and f-strings), as source text."""
    return {ast.unparse(n) for n in ast.walk(ast.parse(text))
            if isinstance(n, ast.JoinedStr) or (isinstance(n, ast.Constant) and isinstance(n.value, str))}


def attr_names(text):
    """Every name and attribute name a program uses (`torch.compile` -> torch, compile)."""
    out = set()
    for n in ast.walk(ast.parse(text)):
        if isinstance(n, ast.Name):
            out.add(n.id)
        elif isinstance(n, ast.Attribute):
            out.add(n.attr)
        elif isinstance(n, ast.alias):
            out.update(n.name.split("."))
    return out


# ------------------------------------------------------------------ the literal pass
class _Lit(ast.NodeTransformer):
    """Replace the int literals at the given indexes (every int counts, so a literal made 1 keeps the
    others' index) with value."""

    def __init__(self, targets, value):
        self.targets, self.value, self.i = set(targets), value, -1

    def visit_Constant(self, node):
        if type(node.value) is int:
            self.i += 1
            if self.i in self.targets:
                return ast.copy_location(ast.Constant(self.value), node)
        return node


def _ints(text):
    out = []

    class _Collect(ast.NodeVisitor):
        def visit_Constant(self, node):
            if type(node.value) is int:
                out.append(node.value)
    _Collect().visit(ast.parse(text))
    return out


def _with_literals(text, idxs, value):
    return ast.unparse(ast.fix_missing_locations(_Lit(idxs, value).visit(ast.parse(text))))


def shrink_literals(text, test, deadline, jobs=1, on_keep=None):
    """Cost first: loop counts, step counts and sizes before statements. Each int value >= 2 (largest
    first) is tried as 1, 2 and v // 8 (v >= 16) everywhere it appears at once (a size used in several
    places), then, if that fails, at each place alone; the smallest that keeps the failure is kept.
    Candidates of one step run `jobs` at a time."""
    def first_kept(cands):
        if jobs > 1:
            with ThreadPoolExecutor(jobs) as ex:
                oks = list(ex.map(test, cands))
        else:
            oks = []
            for c in cands:
                oks.append(test(c))
                if oks[-1]:
                    break
        return next((c for c, ok in zip(cands, oks) if ok), None)

    changed = True
    while changed and time.monotonic() < deadline:   # again while a round changed something: a count
        changed, before = False, text                  # may only shrink once another one has
        text = _literal_round(text, first_kept, deadline, on_keep)
        changed = text != before
    return text


def _literal_round(text, first_kept, deadline, on_keep):
    order = _ints(text)
    for v in sorted({x for x in order if x >= 2}, reverse=True):
        if time.monotonic() > deadline:
            break
        tries = [c for c in ([1, 2] + ([v // 8] if v >= 16 else [])) if c < v]
        where = [i for i, x in enumerate(order) if x == v]
        groups = [where] + ([[i] for i in where] if len(where) > 1 else [])
        for g in groups:
            if time.monotonic() > deadline:
                break
            if any(order[i] != v for i in g):    # already changed by an earlier group
                continue
            got = first_kept([_with_literals(text, g, c) for c in tries])
            if got is not None:
                text = got
                order = _ints(text)
                if on_keep:
                    on_keep(text)
                if g is where:
                    break
    return text


def without_docstrings(text):
    """The program without its docstrings (module, classes, functions; a body left empty gets `pass`)."""
    tree = ast.parse(text)
    for n in ast.walk(tree):
        if isinstance(n, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and n.body \
                and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant) \
                and isinstance(n.body[0].value.value, str):
            n.body = n.body[1:] or [ast.Pass()]
    return ast.unparse(ast.fix_missing_locations(tree))


def without_constant_statements(text):
    """The program without statements that are a bare constant (`0`, `None`, `...`: what pysource-minimize
    leaves where it replaced an expression); a body left empty gets `pass`."""
    tree = ast.parse(text)
    for n in ast.walk(tree):
        for field in ("body", "orelse", "finalbody"):
            body = getattr(n, field, None)
            if isinstance(body, list) and body and isinstance(body[0], ast.stmt):
                kept = [b for b in body if not (isinstance(b, ast.Expr) and isinstance(b.value, ast.Constant))]
                if len(kept) != len(body):
                    setattr(n, field, kept or ([ast.Pass()] if field == "body" else []))
    return ast.unparse(ast.fix_missing_locations(tree))


# ------------------------------------------------------------------ the reduction
def reduce(text, oracle, *, limit_s, jobs=1, on_keep=None):
    """Literal pass (at most a quarter of the time), then pysource-minimize until done or limit_s.
    Returns (best text, stopped: None | "time" | "interrupted")."""
    try:
        import pysource_minimize
    except ImportError:
        raise SourceError("source reduction needs pysource-minimize: `python3 -m pip install pysource-minimize` "
                          "(in the Python that runs compile_debug.py)")
    t0 = time.monotonic()
    deadline = t0 + limit_s
    state = {"best": text, "stopped": None}

    def keep(t):   # every kept candidate derives from the one before: the latest is the best
        if t == state["best"]:
            return
        state["best"] = t
        if on_keep:
            on_keep(t)

    def test(t, record=False):
        if state["stopped"]:
            return False
        if time.monotonic() > deadline:
            state["stopped"] = "time"
            return False
        ok = oracle.interesting(t)
        if ok and record:
            keep(t)
        return ok
    try:
        # the literal pass reports the candidate it keeps itself (with --jobs, several may pass at once)
        cur = shrink_literals(text, test, t0 + limit_s / 4, jobs=jobs, on_keep=keep)
        cur = ast.unparse(ast.parse(cur))
        bare = without_docstrings(cur)   # one query for what pysource-minimize would take many for
        if bare != cur and test(bare, record=True):
            cur = bare
        if not state["stopped"] and oracle.interesting(cur):

            def checker(src):
                if state["stopped"] or time.monotonic() > deadline:
                    state["stopped"] = state["stopped"] or "time"
                    raise pysource_minimize.StopMinimization
                return test(src, record=True)
            try:
                pysource_minimize.minimize(cur, checker, retries=0)
            except (pysource_minimize.CouldNotMinimize, pysource_minimize.StopMinimization):
                pass   # StopMinimization escapes when time runs out on its first (round-trip) check
        if state["stopped"] != "interrupted":   # one more query, past the limit too: lines no run needs
            tidy = without_constant_statements(state["best"])
            if tidy != state["best"] and oracle.interesting(tidy):
                keep(tidy)
    except KeyboardInterrupt:
        state["stopped"] = "interrupted"
    return state["best"], state["stopped"]
