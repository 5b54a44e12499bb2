"""Shared test helpers. Tests run the real CLI in subprocesses on real programs.

One Inductor cache dir is shared by the whole test session (set before any subprocess starts),
so each small program pays the cold C++ compile once.

In parallel (pytest -n 2, pytest-xdist, --dist loadgroup as pytest.ini sets): the tests of a module
that share a module- or session-scoped fixture of that module (one CLI run that several tests check)
run on one worker, so the run is made once; they are started first (the longest work first).

Test programs (tests/programs) compile with backend="eager" where what their tests check is Dynamo's (graph breaks,
recompiles, guards, traced Python state), and with "aot_eager" where it is AOTAutograd's (fake kernels, custom-op
registration, aliasing): Inductor's code generation and C++ compile add 10-40 CPU-seconds to each such run and test
nothing there (2026-12-07: 80 programs switched, those whose tests pass unchanged; the rest need Inductor: numerics, compile
time, caches, generated code, its lowerings)."""
import importlib
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CLI = os.path.join(ROOT, "scripts", "compile_debug.py")
PROGRAMS = os.path.join(ROOT, "tests", "programs")
FIXTURES = os.path.join(ROOT, "tests", "fixtures")
sys.path.insert(0, os.path.join(ROOT, "scripts"))

# pytest -n N (xdist): N tests at a time, each starting torch programs. At torch's default (a thread per
# core in every process) they spin against each other: two small training runs on 2 cores took 703 s each
# instead of 33 s. Each process gets cores // N OpenMP threads (set before anything imports torch).
_workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT") or 1)
if _workers > 1 and "OMP_NUM_THREADS" not in os.environ:   # (set, even empty: the user's)
    os.environ["OMP_NUM_THREADS"] = str(max(1, len(os.sched_getaffinity(0)) // _workers))

if not os.environ.get("COMPILE_DEBUG_TEST_KEEP_CACHE_ENV"):
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = os.path.join(tempfile.gettempdir(), "compile-debug-tests-inductor-cache")
os.environ.setdefault("PYTHONUNBUFFERED", "1")


def _has_cuda():
    if not shutil.which("nvidia-smi") and not os.path.exists("/dev/nvidiactl"):
        return False
    try:
        import torch
        return torch.cuda.is_available()
    except Exception:
        return False


HAS_CUDA = _has_cuda()
# a python with the oldest supported torch (2.9); tests on it skip without it. CI: $(.ci/torch29)
TORCH29_PYTHON = os.environ.get("COMPILE_DEBUG_TORCH29_PYTHON")


def _shared_fixture_module(item):
    """The test module whose module- or session-scoped fixture this test uses (a CLI run made once)."""
    info = getattr(item, "_fixtureinfo", None)
    for name in getattr(item, "fixturenames", ()):
        defs = info.name2fixturedefs.get(name) if info else None
        if defs and defs[-1].scope in ("module", "session") and defs[-1].baseid.endswith(".py"):
            return defs[-1].baseid
    return None


def pytest_itemcollected(item):      # before any pytest_collection_modifyitems (xdist reads the marks there)
    mod = _shared_fixture_module(item)
    if mod:
        item.add_marker(pytest.mark.xdist_group(mod))


def pytest_collection_modifyitems(config, items):
    if not HAS_CUDA:
        skip = pytest.mark.skip(reason="needs a CUDA GPU")
        for item in items:
            if "gpu" in item.keywords:
                item.add_marker(skip)
    if hasattr(config, "workerinput"):   # an xdist worker: the shared runs and the slow tests first
        items.sort(key=lambda it: 0 if it.get_closest_marker("xdist_group") else 1 if "slow" in it.keywords else 2)


def _tree_state():
    """The checkout's changed and untracked files (git status), or None outside a git checkout."""
    try:
        p = subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"], cwd=ROOT, capture_output=True,
                           text=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return None
    return set(p.stdout.splitlines()) if p.returncode == 0 else None


def pytest_sessionstart(session):
    if not hasattr(session.config, "workerinput"):
        session.config._tree_before = _tree_state()


def pytest_sessionfinish(session, exitstatus):
    """Nothing a test runs may write into the checkout (a program run with the repo as its cwd once left
    runs/metrics.json there): a run that changed it fails, naming the files."""
    before = getattr(session.config, "_tree_before", None)
    after = _tree_state() if before is not None else None
    if after is not None and after - before:
        session.config._tree_changed = sorted(after - before)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def _cpu_s():
    """CPU seconds of this process and of its finished children (the CLI and the programs it runs)."""
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


_cpu_mark = [0.0]


def pytest_runtest_logstart(nodeid, location):
    _cpu_mark[0] = _cpu_s()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """Each phase's report carries its CPU seconds (all processes it started): on a loaded machine wall
    time says little about what a test costs, CPU time still does."""
    outcome = yield
    now = _cpu_s()
    outcome.get_result().user_properties.append(("cpu_s", round(now - _cpu_mark[0], 2)))
    _cpu_mark[0] = now


def _report_cpu(report):
    return sum(v for k, v in getattr(report, "user_properties", ()) if k == "cpu_s")


def pytest_runtest_logreport(report):
    """COMPILE_DEBUG_TEST_TIMES=FILE: a JSON line per test phase as it ends (test, phase, wall and CPU s)."""
    path = os.environ.get("COMPILE_DEBUG_TEST_TIMES")
    if path and not os.environ.get("PYTEST_XDIST_WORKER"):     # (the controller writes it, once)
        with open(path, "a") as f:
            f.write(json.dumps({"test": report.nodeid, "when": report.when, "s": round(report.duration or 0, 2),
                                "cpu": _report_cpu(report), "outcome": report.outcome}) + "\n")


@pytest.hookimpl(trylast=True)      # after --durations' list
def pytest_terminal_summary(terminalreporter):
    """Where the suite's time went, a line per test file (its tests' setup + call + teardown seconds, all
    workers together), after --durations' slowest tests: the profile for cutting the suite (issue 25)."""
    changed = getattr(terminalreporter.config, "_tree_changed", None)
    if changed:
        terminalreporter.write_sep("=", "the tests changed the checkout (run programs with cwd=tmp_path)", red=True)
        for line in changed[:20]:
            terminalreporter.write_line(line)
    per, cpu, total, total_cpu = {}, {}, 0.0, 0.0
    for reports in terminalreporter.stats.values():
        for r in reports:
            if isinstance(r, pytest.TestReport):      # (a collection error's report has no duration)
                f = r.nodeid.split("::", 1)[0]
                per[f] = per.get(f, 0.0) + (r.duration or 0.0)
                cpu[f] = cpu.get(f, 0.0) + _report_cpu(r)
                total += r.duration or 0.0
                total_cpu += _report_cpu(r)
    if total < 60:
        return
    terminalreporter.write_sep("=", f"test seconds per file ({total:.0f} s wall, {total_cpu:.0f} s CPU in all, "
                                    "all workers)")
    for f, s in sorted(per.items(), key=lambda kv: -kv[1])[:15]:
        terminalreporter.write_line(f"{s:7.0f} s {100 * s / total:4.1f}% {cpu[f]:7.0f} s CPU  {f}")


def fresh_cache(path):
    """A new Inductor cache dir for one test's run (returned as str), made as the CLI makes its throwaway ones
    (proc.private_cache_env): empty of any program's code, with torch's CPU ISA probes copied from the suite's
    shared cache, which saves each such run ~8 s of g++ that is the same for every program."""
    from cdlib.run import proc
    return proc.private_cache_env(str(path))["TORCHINDUCTOR_CACHE_DIR"]


def program(name):
    """Absolute path of tests/programs/<name>."""
    return os.path.join(PROGRAMS, name)


def run_cli(*args, timeout=900, env=None, cwd=None, check=None):
    """Run `python3 scripts/compile_debug.py ARGS`; returns CompletedProcess (text)."""
    full_env = dict(os.environ)
    full_env.update(env or {})
    t0 = time.monotonic()
    p = subprocess.run([sys.executable, CLI, *map(str, args)], capture_output=True, text=True,
                       timeout=timeout, env=full_env, cwd=cwd)
    if os.environ.get("COMPILE_DEBUG_TEST_CLI_LOG"):   # where the suite's time goes: one line per CLI run
        with open(os.environ["COMPILE_DEBUG_TEST_CLI_LOG"], "a") as f:
            f.write(json.dumps({"test": os.environ.get("PYTEST_CURRENT_TEST"), "args": list(map(str, args)),
                                "env": sorted((env or {}).items()), "s": round(time.monotonic() - t0, 1)}) + "\n")
    if check is not None:
        assert p.returncode == check, f"exit {p.returncode}\nSTDOUT:\n{p.stdout[-3000:]}\nSTDERR:\n{p.stderr[-3000:]}"
    return p


def run_json(*args, **kw):
    """Run the CLI with --json (inserted after the subcommand) and parse stdout."""
    args = list(args)
    args.insert(1, "--json")
    p = run_cli(*args, **kw)
    try:
        return json.loads(p.stdout), p
    except ValueError:
        raise AssertionError(f"not JSON (exit {p.returncode}):\nSTDOUT:\n{p.stdout[-3000:]}\nSTDERR:\n{p.stderr[-3000:]}")


def resolve_dotted(dotted):
    """The object a dotted name (module path + attributes) names; ImportError/AttributeError if none."""
    parts = dotted.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        for p in parts[i:]:
            obj = getattr(obj, p)
        return obj
    raise ImportError(dotted)
