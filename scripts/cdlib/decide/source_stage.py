"""minify's source stage, the decisions around source_reduce (no torch): whether the stage can run on a
command, what the oracle keeps (in words), the final verification of the reduced program (3 runs in
fresh interpreters, a failure's from cold caches), and the commands it proposes next (bisect on the small
program; more time)."""
import os

from .. import cmdline
from . import source_reduce
from .source_reduce import SourceError


def applies(argv):
    """None when the source stage can run on this command, else the one-line reason it can't."""
    import importlib.util
    try:
        i, path = source_reduce.program_of(argv)
        source_reduce.parse_program(path)
    except SourceError as e:
        return str(e)
    if importlib.util.find_spec("pysource_minimize") is None:
        return ("source reduction needs pysource-minimize: `python3 -m pip install pysource-minimize` (in the Python "
                "that runs compile_debug.py)")
    return None


def what(o):
    if o.mode == "graph_break":
        g = o.graph_break
        return f"keep graph break {g['gb_id'] or g['gb_type']} in {g['function']}"
    if o.mode == "recompile":
        r = o.recompile
        return f"keep the recompile of {r['function']} on {r['cause']} ({r['kind']} guard: `{cmdline.clip(r['guard'], 80)}`)"
    s = o.orig
    end = f"{s['type']}: {cmdline.clip(s['message'], 80)}" if s["traceback"] else \
        (s["signal"] or f"exit {s['rc']}") + (f" after printing `{cmdline.clip(s['last_line'], 80)}`" if s["last_line"] else "")
    checks = ["fails compiled with " + end, "passes with compilation off"]
    if o.good_backend:
        checks.append(f"passes with backend {o.good_backend}")
    return "; ".join(checks)


def verify_how(mode):
    """How verify() runs, in words (progress line, report, bug_report.md)."""
    return "each from a cold cache" if mode == "failure" else "each in a fresh interpreter"


def verify(oracle, best):
    """3 runs of the whole test in fresh interpreters. A failure's from cold caches (a candidate kept on a warm
    cache must not depend on it); a graph break or a recompile is Dynamo's, decided before Inductor or its caches
    run, so those share the queries' cache instead of compiling every kernel again (3 cold compiles of a GPT-2
    training step were most of the stage's time)."""
    checks = []
    oracle.warm = False   # fresh interpreters, as the user will run the repro
    # a cold run with an empty cache is slower than the queries' 2x bound allows on a busy machine (two
    # verifications of CI tests timed out beside 8 agents' runs): the per-run --timeout, as the baseline had
    q_timeout, oracle.query_timeout = oracle.query_timeout, max(oracle.query_timeout, oracle.timeout)
    try:
        for i in range(3):
            if oracle.mode == "failure":
                oracle.cache = os.path.join(oracle.root, f"verify_cache{i}")
            oracle.memo.clear()
            ok = oracle.interesting(best)
            checks.append(oracle.memo[next(reversed(oracle.memo))][1])
            if not ok:
                return False, checks
        return True, checks
    finally:
        oracle.query_timeout = q_timeout


def next_command(r):
    """bisect on the verified small program, unless it is a graph break or a recompile, or bisect already
    named the layer."""
    if r["verified"] and r["mode"] == "failure" and not r["good_backend"]:
        argv, index = r["target"], r["program_index"]
        return cmdline.cli_command("bisect", "--", argv[0], r["repro"], *argv[index + 1:])
    return None


def more_time_command(args, from_dir, limit):
    """The same source stage with twice the time limit."""
    again = [w for w in _argv_words(args, from_dir) if w]
    return cmdline.cli_command('minify', *again[:1], '--source-limit', str(int(2 * limit)), *again[1:])


def _argv_words(args, from_dir):
    words = ["--source"]
    if from_dir:
        words += ["--from", from_dir]
    if args.good_backend:
        words += ["--good-backend", args.good_backend]
    if args.torch_python:
        words += ["--torch-python", args.torch_python]
    if not from_dir:
        words += ["--", *args.target]
    return words
