"""Source-level reduction: shrink the user's program file itself (minify --source, and minify's second
stage when no graph-level repro could be verified). For failures that live outside any captured graph:
what feeds the graph at run time, Dynamo's handling of Python state, guards, graph breaks.

Reduction is pysource-minimize's (AST-aware; no home-made delta debugger), after a literal pass of ours
that shrinks loop counts, step counts and sizes first so that later queries are cheap. A candidate is
kept only by the tool's own verdict (source_oracle.Oracle), never by a text match alone:
  (a) compiled, it fails with the original's signature: how the process ended (exit status / signal,
      traceback or not), the exception type and the stable part of its message, or, for a program that
      exits with its own message, that last line with its numbers' magnitudes (a mismatch of 0.5 that
      becomes one of 3e-7 slid to rounding);
  (b) it passes with compilation off (the eager check triage uses);
  (c) it passes with the last good backend, when one is known (`--good-backend`, from a bisect);
  (d) under a second Python/torch (`--torch-python`), it keeps the original's outcome there.
For a graph break (a program that does not fail): the candidate must still break with the same
registry id at a line of the program file, in the same function. For a recompile (a program that neither
fails nor breaks a graph; or --recompile): the same function of the program must still recompile on a
guard of the same kind on the same value (source_events).
Candidates run in scratch copies of the program's directory (the user's files are never touched), with
a throwaway Inductor cache shared by the queries. This module: the program file (which argv word, its
text, its scratch copies) and the reduction loop; source_oracle runs and judges a candidate, source_text
holds the static checks and the literal pass. Never imports torch."""
import ast
import os
import re
import shutil
import time

from .source_text import shrink_literals, without_constant_statements, without_docstrings

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
