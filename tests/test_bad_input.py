"""The bad-input corpus: every broken thing a new user may hand the CLI, one row each.

Every case checks the same contract: exit status as documented (2 = bad input, refused in one line;
0 = the tool did its job and reports the program's problem; 130 = Ctrl-C), no traceback from our
code, nothing written outside the run dir (the cwd and TMPDIR of the run are compared before and
after), and the Inductor cache untouched (every file in TORCHINDUCTOR_CACHE_DIR unchanged: each row has
its own, seeded with files, so that other tests running at the same time (pytest -n) can't touch it).
Most rows import no torch; the rows that do are grouped at the end of the table."""
import json
import os
import signal
import stat
import subprocess
import sys
import threading
import time

import pytest

from conftest import CLI, FIXTURES, program

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="process bookkeeping via /proc: Linux only")
ROOT_USER = hasattr(os, "geteuid") and os.geteuid() == 0
TRACE = os.path.join(FIXTURES, "torch-2.14", "gb_print", "trace.log")

# ---- programs the rows run (written into the case's work dir) -------------------------------------
PROGS = {
    "nonutf8.py": "import sys\nsys.stdout.buffer.write(b'\\xff\\xfe\\x80 not utf-8\\n' * 50)\n"
                  "sys.stderr.buffer.write(b'\\xc3\\x28 \\xa0\\xa1\\n')\nraise RuntimeError('after binary output')\n",
    "huge.py": "import sys\nchunk = ('x' * 99 + '\\n') * 10000\nfor _ in range(48):\n    sys.stderr.write(chunk)\n"
               "raise RuntimeError('the real error at the end')\n",
    "hang.py": "import time\ntime.sleep(600)\n",
    "stubborn.py": "import signal, time\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\ntime.sleep(600)\n",
    "segv.py": "import os, signal\nos.kill(os.getpid(), signal.SIGSEGV)\n",
    "exit3.py": "raise SystemExit(3)\n",
    "kbint.py": "raise KeyboardInterrupt\n",
    "stdin.py": "print(input('name? '))\n",
    "closed.py": "import os\nos.close(1)\nos.close(2)\nraise SystemExit(1)\n",
    # children that escape the process group (own session, double fork) and ignore SIGTERM
    "orphans.py": "import os, subprocess, sys\n"
                  "code = 'import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(300)'\n"
                  "a = subprocess.Popen([sys.executable, '-c', code], start_new_session=True)\n"
                  "b = subprocess.Popen([sys.executable, '-c', code])\n"
                  "if os.fork() == 0:\n    os.setsid()\n    if os.fork() == 0:\n"
                  "        open('pids.txt', 'a').write(f'{os.getpid()}\\n'); os.execv(sys.executable, [sys.executable, '-c', code])\n"
                  "    os._exit(0)\n"
                  "open('pids.txt', 'a').write(f'{a.pid}\\n{b.pid}\\n')\nimport time\ntime.sleep(1)\n",
    "marker_hang.py": "import sys, time\nopen(sys.argv[1], 'w').write('ready')\ntime.sleep(600)\n",
    "big_trace.py": "import os, shutil, sys\nshutil.copy(sys.argv[1], os.path.join(os.environ['TORCH_TRACE'], 'big.log'))\n",
    "no_compile_torch.py": "import torch\nprint(torch.ones(2).sum())\n",
    "factory.py": "import torch\n\ndef ok():\n    return torch.nn.Linear(2, 2), (torch.ones(1, 2),)\n\n"
                  "def boom():\n    raise ValueError('factory exploded')\n\ndef wrong():\n    return 42\n\nnot_callable = 3\n",
    "inductor.py": "import torch\n\n@torch.compile\ndef f(x):\n    return (x.sin() + 1).relu()\n\nprint(f(torch.randn(8)).sum())\n",
    "garbage.txt": "hello\nthis is not a trace\n",
    "binary.bin": bytes(range(256)) * 40,
    "empty.txt": "",
    "script.sh": "#!/bin/sh\necho hi\n",
}


def _files_under(path):
    out = {}
    for root, _dirs, names in os.walk(path):
        for n in names:
            p = os.path.join(root, n)
            try:
                st = os.lstat(p)
            except OSError:
                continue
            out[os.path.relpath(p, path)] = (st.st_size, st.st_mtime_ns)
    return out


def _setup(tmp_path, big):
    work = tmp_path / "work"
    work.mkdir()
    for name, content in PROGS.items():
        (work / name).write_bytes(content if isinstance(content, bytes) else content.encode())
    (work / "emptydir").mkdir()
    (work / "foreign").mkdir()
    (work / "foreign" / "notes.md").write_text("# not a trace\n")
    (work / "foreign" / "img.png").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(300))
    (work / "txt_trace").mkdir()
    (work / "txt_trace" / "dedicated_log_torch_trace_x.txt").write_bytes(open(TRACE, "rb").read())
    (work / "empty_trace").mkdir()
    (work / "empty_trace" / "dedicated_log_torch_trace_y.log").write_text("")
    lines = open(TRACE).read().splitlines(keepends=True)
    bad = []
    for i, ln in enumerate(lines):  # garbage between real lines, a truncated JSON line, a bad payload
        bad.append(ln)
        bad.append(["\x00\x01garbage\n", "V1123 00:00:00.000000 1 x.py:1] {\"truncated\": [1, 2\n",
                    "\tpayload without an event\n", "I9999 99:99 nonsense] {}\n"][i % 4])
    (work / "corrupt.log").write_text("".join(bad) + lines[-1][: len(lines[-1]) // 2])
    (work / "outfile").write_text("a file, not a dir")
    (work / "full").mkdir()
    (work / "full" / "keep.txt").write_text("user file")
    (work / "ro").mkdir()
    if big:  # `big` copies of a real trace: seconds of parsing (analysis) or of tlparse
        with open(work / "big.log", "w") as f:
            text = open(TRACE).read()
            for _ in range(big):
                f.write(text)
    return work


def _sub(a, work, out):
    a = str(a)
    return a.replace("{w}", str(work)).replace("{out}", str(out)).replace("{py}", sys.executable)


def _check_contract(p, work, before_work, tmpd, cache, cache_before, rc, needle, where):
    err, outp = p.stderr, p.stdout
    msg = f"exit {p.returncode}\nSTDOUT:\n{outp[-2000:]}\nSTDERR:\n{err[-2000:]}"
    assert p.returncode == rc, msg
    assert "Traceback (most recent call last)" not in err + outp, msg
    assert "internal error" not in err, msg
    ours = [ln for ln in err.splitlines() if ln.strip() and not ln.startswith("[compile-debug]")]
    if rc != 0:   # refused or interrupted: exactly one line says why
        assert len(ours) == 1, msg
    if needle:
        assert needle in (ours[0] if rc != 0 and where == "err" else outp if where == "out" else err), msg
    after = _files_under(work)
    new = {k for k in after if k not in before_work and not k.startswith("run" + os.sep) and k != "run"}
    # the programs themselves may write beside them (orphans.py: pids.txt); we may not
    assert new <= {"pids.txt", "ready"}, (new, msg)
    for k, v in before_work.items():
        assert after.get(k) == v, (k, "changed", msg)
    assert _files_under(tmpd) == {}, (_files_under(tmpd), msg)
    now = _files_under(cache)
    assert all(now.get(k) == v for k, v in cache_before.items()), "the Inductor cache was changed"


def _env(tmpd, extra_env):
    env = dict(os.environ, TMPDIR=str(tmpd), PYTHONUNBUFFERED="1")
    for k, v in (extra_env or {}).items():
        if v is None:
            env.pop(k, None)
        else:
            env[k] = v
    return env


def interrupt_when(argv, ready, *, env=None, cwd=None, ready_timeout=300, exit_within=20):
    """Start argv, wait (bounded) until ready() is true, send SIGINT (as Ctrl-C does: our tool is the
    foreground process; its children run in their own sessions), then require exit within
    exit_within seconds. Returns (CompletedProcess-like, seconds from SIGINT to exit)."""
    # as from a terminal: SIGINT at its default even when this test runs in a background job (a
    # non-interactive shell starts `cmd &` with SIGINT ignored, and children inherit that)
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=cwd,
                         preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        deadline = time.monotonic() + ready_timeout
        while not ready():
            if p.poll() is not None:
                o, e = p.communicate()
                raise AssertionError(f"exited ({p.returncode}) before it was ready:\n{o[-1500:]}\n{e[-1500:]}")
            if time.monotonic() > deadline:
                raise AssertionError(f"not ready after {ready_timeout} s")
            time.sleep(0.05)
        t0 = time.monotonic()
        p.send_signal(signal.SIGINT)
        o, e = p.communicate(timeout=exit_within)
        took = time.monotonic() - t0
    finally:
        if p.poll() is None:
            p.kill()
            p.communicate()
    return subprocess.CompletedProcess(argv, p.returncode, o, e), took


def tagged_alive(run_dir_text):
    """Live processes whose command line or environment mentions text (the run dir)."""
    out = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmd = f.read()
            with open(f"/proc/{pid}/environ", "rb") as f:
                env = f.read()
            with open(f"/proc/{pid}/stat") as f:
                state = f.read().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state != "Z" and (run_dir_text.encode() in cmd or run_dir_text.encode() in env):
            out.append(int(pid))
    return out


def _alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _wait_gone(pids, within=10):
    end = time.monotonic() + within
    while time.monotonic() < end and any(_alive(x) for x in pids):
        time.sleep(0.1)
    return [x for x in pids if _alive(x)]


# ---- the table ----------------------------------------------------------------------------------
# id, CLI args ({w}: the work dir, {out}: the run dir), exit status, needle, where ("err": the one
# error line, "out": stdout, "any": stderr), extras (env, stdin bytes, "big" trace, post check, ...)
N = "--no-tlparse"
CASES = [
    # target command
    ("missing_target", ["triage", "--out", "{out}", "--", "{w}/nope.py"], 2, "nope.py: no such file", "err", {}),
    ("missing_command", ["triage", "--out", "{out}", "--", "no-such-command-xyz"], 2, "command not found", "err", {}),
    ("target_is_dir", ["triage", "--out", "{out}", "--", "{w}/emptydir"], 2, "no such file", "err", {}),
    ("not_executable", ["triage", "--out", "{out}", "--", "{w}/script.sh"], 2, "not executable", "err", {}),
    ("python_missing_script", ["triage", "--out", "{out}", "--", "python", "{w}/nope.py"], 2, "no such file", "err", {}),
    ("unreadable_target", ["triage", "--out", "{out}", N, "--", "{w}/unreadable.py"], 0, "Permission", "out",
     {"chmod": ("unreadable.py", 0), "nonroot": True}),
    # what the program does
    ("non_utf8_output", ["triage", "--out", "{out}", N, "--", "{w}/nonutf8.py"], 0, "after binary output", "out", {}),
    ("huge_output", ["triage", "--out", "{out}", N, "--", "{w}/huge.py"], 0, "the real error at the end", "out",
     {"post": "small_run_dir"}),
    ("huge_output_keep", ["triage", "--out", "{out}", N, "--keep-output", "--", "{w}/huge.py"], 0,
     "the real error at the end", "out", {"post": "full_output"}),
    ("hang_timeout", ["triage", "--out", "{out}", N, "--timeout", "2", "--", "{w}/hang.py"], 0, "TIMED OUT", "out", {}),
    ("hang_ignores_sigterm", ["triage", "--out", "{out}", N, "--timeout", "2", "--", "{w}/stubborn.py"], 0,
     "TIMED OUT", "out", {"max_s": 60}),
    ("segfault", ["triage", "--out", "{out}", N, "--", "{w}/segv.py"], 0, "SIGSEGV", "out", {}),
    ("exit_code_3", ["triage", "--out", "{out}", N, "--", "{w}/exit3.py"], 0, "exit", "out", {}),
    ("program_raises_kbint", ["triage", "--out", "{out}", N, "--", "{w}/kbint.py"], 0, "SIGINT", "out", {}),
    ("program_reads_stdin", ["triage", "--out", "{out}", N, "--", "{w}/stdin.py"], 0, "EOFError", "out", {}),
    ("program_closes_stdio", ["triage", "--out", "{out}", N, "--", "{w}/closed.py"], 0, "exit", "out", {}),
    ("orphaned_children", ["triage", "--out", "{out}", N, "--", "{w}/orphans.py"], 0, None, "out",
     {"post": "orphans_dead"}),
    ("read_only_cwd", ["triage", "--out", "{out}", N, "--", "{w}/exit3.py"], 0, "exit", "out", {"cwd": "ro"}),
    # options
    ("timeout_negative", ["triage", "--timeout", "-1", "--", "{w}/hang.py"], 2, "--timeout must be positive", "err", {}),
    ("timeout_nan", ["triage", "--timeout", "nan", "--", "{w}/hang.py"], 2, "--timeout must be positive", "err", {}),
    ("timeout_inf", ["triage", "--timeout", "inf", "--", "{w}/hang.py"], 2, "--timeout must be positive", "err", {}),
    ("timeout_text", ["triage", "--timeout", "soon", "--", "{w}/hang.py"], 2, "invalid float", "err", {}),
    ("nproc_zero", ["triage", "--nproc", "0", "--", "{w}/hang.py"], 2, "--nproc must be at least 1", "err", {}),
    ("nproc_negative", ["triage", "--nproc", "-3", "--", "{w}/hang.py"], 2, "--nproc must be at least 1", "err", {}),
    ("nproc_huge", ["triage", "--nproc", "1000", "--", "{w}/hang.py"], 2, "at most 64", "err", {}),
    ("unknown_option", ["triage", "--frobnicate", "--", "{w}/hang.py"], 2, "unrecognized arguments", "err", {}),
    ("unknown_command", ["frobnicate"], 2, "invalid choice", "err", {}),
    ("json_bad_input", ["triage", "--json", "--", "{w}/nope.py"], 2, "no such file", "err", {}),
    ("env_with_target", ["env", "--", "python", "x.py"], 2, "env takes no target", "err", {}),
    # --out
    ("out_is_file", ["triage", "--out", "{w}/outfile", "--", "{w}/hang.py"], 2, "not a directory", "err", {}),
    ("out_not_empty", ["triage", "--out", "{w}/full", "--", "{w}/hang.py"], 2, "not empty", "err", {}),
    ("out_parent_missing", ["triage", "--out", "{w}/no/such/dir", "--", "{w}/hang.py"], 2, "does not exist", "err", {}),
    ("out_under_a_file", ["triage", "--out", "{w}/outfile/sub", "--", "{w}/hang.py"], 2, "does not exist", "err", {}),
    ("out_read_only_parent", ["triage", "--out", "{w}/ro/run", "--", "{w}/hang.py"], 2, "cannot create", "err",
     {"chmod": ("ro", 0o555), "nonroot": True}),
    ("same_out_twice", ["triage", "--out", "{out}", N, "--", "{w}/exit3.py"], 0, None, "out", {"kind": "twice"}),
    # --from-text
    ("from_text_binary", ["triage", "--from-text", "{w}/binary.bin"], 2, "binary data, not text", "err", {}),
    ("from_text_binary_stdin", ["triage", "--from-text", "-"], 2, "binary data, not text", "err",
     {"stdin": bytes(range(256)) * 10}),
    ("from_text_empty", ["triage", "--from-text", "{w}/empty.txt"], 2, "empty", "err", {}),
    ("from_text_empty_stdin", ["triage", "--from-text", "-"], 2, "empty", "err", {"stdin": b""}),
    ("from_text_dir", ["triage", "--from-text", "{w}/emptydir"], 2, "is a directory", "err", {}),
    ("from_text_missing", ["triage", "--from-text", "{w}/nope.txt"], 2, "no such file", "err", {}),
    ("from_text_with_target", ["triage", "--from-text", "{w}/garbage.txt", "--", "{w}/hang.py"], 2,
     "do not also give a target", "err", {}),
    ("from_text_latin1", ["triage", "--from-text", "-"], 0, "Classified", "out",
     {"stdin": "RuntimeError: caf\xe9 d\xe9j\xe0 vu\n".encode("latin-1")}),
    # --trace
    ("trace_empty_dir", ["triage", "--out", "{out}", "--trace", "{w}/emptydir"], 2, "no TORCH_TRACE file found", "err", {}),
    ("trace_foreign_dir", ["triage", "--out", "{out}", "--trace", "{w}/foreign"], 2, "no TORCH_TRACE file found", "err", {}),
    ("trace_empty_files", ["triage", "--out", "{out}", "--trace", "{w}/empty_trace"], 2, "empty", "err", {}),
    ("trace_not_a_trace_file", ["triage", "--out", "{out}", "--trace", "{w}/garbage.txt"], 2, "not a TORCH_TRACE file", "err", {}),
    ("trace_missing", ["triage", "--out", "{out}", "--trace", "{w}/nope"], 2, "no such file", "err", {}),
    ("trace_txt_names", ["triage", "--out", "{out}", "--trace", "{w}/txt_trace"], 0, "gb_print.py", "out", {}),
    ("trace_corrupted_lines", ["triage", "--out", "{out}", "--trace", "{w}/corrupt.log"], 0, "gb_print.py", "out", {}),
    ("trace_with_target", ["triage", "--trace", "{w}/txt_trace", "--", "{w}/hang.py"], 2, "do not also give a target", "err", {}),
    ("trace_multirank_empty", ["triage", "--out", "{out}", "--nproc", "2", "--trace", "{w}/emptydir"], 2,
     "no per-rank trace files", "err", {}),
    # Ctrl-C at each phase
    ("ctrl_c_while_target_runs", ["triage", "--out", "{out}", N, "--", "{w}/marker_hang.py", "{w}/ready"], 130,
     "interrupted", "err", {"kind": "interrupt", "ready": "file:ready"}),
    ("ctrl_c_during_analysis", ["triage", "--out", "{out}", "--trace", "{w}/big.log"], 130, "interrupted", "err",
     {"kind": "interrupt", "ready": "file:run/.compile-debug-run", "big": 600}),
    ("ctrl_c_during_tlparse", ["triage", "--out", "{out}", "--", "{w}/big_trace.py", "{w}/big.log"], 130,
     "interrupted", "err", {"kind": "interrupt", "ready": "proc:tlparse", "big": 300, "tlparse": True}),
    ("ctrl_c_multirank_at_launch", ["triage", "--out", "{out}", N, "--nproc", "2", "--", "{w}/marker_hang.py",
                                    "{w}/ready"], 130, "interrupted", "err",
     {"kind": "interrupt", "ready": "file:run/rank_shim.py"}),
    # rows that import torch (grouped: the slow part of this file)
    ("no_torch_compile", ["triage", "--out", "{out}", N, "--", "{w}/no_compile_torch.py"], 0, "never", "out", {}),
    ("factory_missing_file", ["export", "--out", "{out}", "{w}/nope.py:make"], 2, "no such file", "err", {}),
    ("factory_bad_spec", ["export", "--out", "{out}", "{w}/factory.py:not a name"], 2, "expected a model target", "err", {}),
    ("factory_missing_function", ["export", "--out", "{out}", "{w}/factory.py:nothere"], 2, "nothere", "err", {}),
    ("factory_not_callable", ["export", "--out", "{out}", "{w}/factory.py:not_callable"], 2, "not_callable", "err", {}),
    ("factory_raises", ["export", "--out", "{out}", "{w}/factory.py:boom"], 2, "factory exploded", "err", {}),
    ("factory_wrong_return", ["export", "--out", "{out}", "{w}/factory.py:wrong"], 2, "must return", "err", {}),
    ("missing_cxx_compiler", ["triage", "--out", "{out}", N, "--", "{w}/inductor.py"], 0, "InvalidCxxCompiler", "out",
     {"env": {"CXX": "/nonexistent", "TORCHINDUCTOR_CACHE_DIR": "{w}/../throwaway-cache"}}),
]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_bad_input(case, tmp_path):
    cid, args, rc, needle, where, extra = case
    if extra.get("nonroot") and ROOT_USER:
        pytest.skip("running as root: file permissions are not enforced")
    if extra.get("tlparse") and not _which_tlparse():
        pytest.skip("tlparse not installed (pip install tlparse)")
    work = _setup(tmp_path, extra.get("big", 0))
    out = work / "run"
    tmpd = tmp_path / "tmpdir"
    tmpd.mkdir()
    if "chmod" in extra:
        os.chmod(work / extra["chmod"][0], extra["chmod"][1])
    cwd = work / extra.get("cwd", "")
    if extra.get("cwd") == "ro":
        os.chmod(cwd, 0o555)
    cache = tmp_path / "inductor-cache"       # the user's Inductor cache: ours alone, with their files
    (cache / "fxgraph").mkdir(parents=True)
    (cache / "MARKER").write_text("do not delete")
    (cache / "fxgraph" / "entry").write_bytes(b"\x00" * 64)
    env = _env(tmpd, {"TORCHINDUCTOR_CACHE_DIR": str(cache),
                      **{k: _sub(v, work, out) for k, v in extra.get("env", {}).items()}})
    argv = [sys.executable, CLI] + [_sub(a, work, out) for a in args]
    before = _files_under(work)
    cache_before = _files_under(cache)
    try:
        t0 = time.monotonic()
        kind = extra.get("kind")
        if kind == "interrupt":
            what, _, arg = extra["ready"].partition(":")
            ready = (lambda: os.path.exists(work / arg)) if what == "file" else \
                (lambda: any(arg.encode() in _cmdline(x) and str(out).encode() in _cmdline(x) for x in _pids()))
            p, took = interrupt_when(argv, ready, env=env, cwd=cwd)
            _wait_gone(tagged_alive(str(out)), within=5)
            left = tagged_alive(str(out))
            assert left == [], ("processes of the run survived Ctrl-C", [_cmdline(x) for x in left])
        elif kind == "twice":
            p = _twice(argv, env, cwd, out)
        else:
            p = subprocess.run(argv, capture_output=True, env=env, cwd=cwd, timeout=600,
                               input=extra.get("stdin"), stdin=None if "stdin" in extra else subprocess.DEVNULL)
            p = subprocess.CompletedProcess(argv, p.returncode, p.stdout.decode("utf-8", "replace"),
                                            p.stderr.decode("utf-8", "replace"))
        took = time.monotonic() - t0
    finally:
        os.chmod(cwd, 0o755)
        for name in ("unreadable.py", "ro"):
            if (work / name).exists():
                os.chmod(work / name, 0o755)
    assert took < extra.get("max_s", 600)
    before.pop("unreadable.py", None)
    _check_contract(p, work, before, tmpd, cache, cache_before, rc, needle, where)
    post = extra.get("post")
    if post == "small_run_dir":
        size = sum(v[0] for v in _files_under(out).values())
        assert size < 8 << 20, size
        assert "bytes of output omitted here" in (out / "target.stderr").read_text(errors="replace")
    elif post == "full_output":
        assert os.path.getsize(out / "target.stderr") > 48_000_000
    elif post == "orphans_dead":
        pids = [int(x) for x in (work / "pids.txt").read_text().split()]
        assert len(pids) == 3 and _wait_gone(pids) == [], "a child of the program survived"


def _which_tlparse():
    sys.path.insert(0, os.path.join(os.path.dirname(CLI)))
    from cdlib.run import proc
    return proc.find_tool("tlparse")


def _pids():
    return [int(x) for x in os.listdir("/proc") if x.isdigit()]


def _cmdline(pid):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read()
    except OSError:
        return b""


def _twice(argv, env, cwd, out):
    """Two runs with the same --out started at once: one does the job, the other is refused."""
    res = [None, None]
    go = threading.Barrier(2)

    def one(i):
        go.wait()
        res[i] = subprocess.run(argv, capture_output=True, text=True, env=env, cwd=cwd, timeout=600)
    ts = [threading.Thread(target=one, args=(i,)) for i in (0, 1)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    codes = sorted(r.returncode for r in res)
    assert codes == [0, 2], [(r.returncode, r.stderr[-500:]) for r in res]
    loser = next(r for r in res if r.returncode == 2)
    assert len(loser.stderr.strip().splitlines()) == 1 and ("another compile-debug run" in loser.stderr
                                                           or "not empty" in loser.stderr), loser.stderr
    return next(r for r in res if r.returncode == 0)


# ---- the trace parser on corrupted input (hypothesis) ---------------------------------------------

def test_trace_parser_survives_any_corruption(tmp_path):
    """Random edits of a real trace (cut, flipped bytes, duplicated and dropped lines, junk): the
    parser never raises, and analysis of what is left never raises either."""
    from hypothesis import HealthCheck, given, settings, strategies as st
    from cdlib.decide import analyze
    from cdlib.read import trace
    data = open(TRACE, "rb").read()
    lines = data.splitlines(keepends=True)
    path = tmp_path / "t.log"

    edit = st.one_of(
        st.tuples(st.just("cut"), st.integers(0, len(data))),
        st.tuples(st.just("flip"), st.integers(0, len(data) - 1), st.integers(0, 255)),
        st.tuples(st.just("drop"), st.integers(0, len(lines) - 1)),
        st.tuples(st.just("dup"), st.integers(0, len(lines) - 1)),
        st.tuples(st.just("junk"), st.integers(0, len(lines)), st.binary(max_size=80)),
    )

    @settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
    @given(st.lists(edit, max_size=6))
    def check(edits):
        ls = list(lines)
        blob = None
        for e in edits:
            if e[0] == "drop" and e[1] < len(ls):
                del ls[e[1]]
            elif e[0] == "dup" and e[1] < len(ls):
                ls.insert(e[1], ls[e[1]])
            elif e[0] == "junk":
                ls.insert(min(e[1], len(ls)), e[2] + b"\n")
        blob = b"".join(ls)
        for e in edits:
            if e[0] == "cut":
                blob = blob[:e[1]]
            elif e[0] == "flip" and e[1] < len(blob):
                blob = blob[:e[1]] + bytes([e[2]]) + blob[e[1] + 1:]
        path.write_bytes(blob)
        tr = trace.parse(str(path))
        assert all(isinstance(ev.key, str) for ev in tr.events)
        rep = analyze.analyze(str(path))
        json.dumps(rep.to_dict(), default=str)
    check()


def test_huge_output_file_is_trimmed_keeping_head_and_tail(tmp_path):
    """proc.trim_output directly: head and tail kept on line boundaries, the note in between."""
    from cdlib.run import proc
    f = tmp_path / "o.txt"
    f.write_bytes(b"".join(b"line %d\n" % i for i in range(2_000_000)))
    size = os.path.getsize(f)
    dropped = proc.trim_output(str(f), head=1000, tail=1000)
    text = f.read_text()
    assert dropped > size - 3000 and text.startswith("line 0\n") and text.endswith("line 1999999\n")
    assert "bytes of output omitted here" in text and "--keep-output" in text
    assert all(ln.startswith("line ") or ln.startswith("[compile-debug") or not ln for ln in text.splitlines())


def test_tlparse_beside_the_interpreter_is_found(tmp_path):
    """tlparse in sys.executable's bin dir but not on PATH (a venv used without activating it):
    triage runs it (its HTML report is in the run dir) and env reports it."""
    from cdlib.run import proc
    exe = proc.find_tool("tlparse")
    if not exe:
        pytest.skip("tlparse not installed (pip install tlparse)")
    bindir = tmp_path / "venv" / "bin"
    bindir.mkdir(parents=True)
    os.symlink(sys.executable, bindir / "python3")   # a venv-like bin dir: python + tlparse, not on PATH
    real = os.path.realpath(exe)
    if os.path.basename(real) != "tlparse":   # a pyenv shim: the real binary is beside the interpreter
        real = os.path.join(os.path.dirname(os.path.realpath(sys.executable)), "tlparse")
    os.symlink(real, bindir / "tlparse")
    env = dict(os.environ, PATH="/usr/bin:/bin")
    py = str(bindir / "python3")
    p = subprocess.run([py, "-c", "import shutil; print(shutil.which('tlparse'))"], capture_output=True, text=True,
                       env=env, timeout=60)
    assert p.stdout.strip() == "None"   # really not on PATH
    prog = tmp_path / "copy_trace.py"   # a target that "compiles": it leaves a real trace in TORCH_TRACE
    prog.write_text(PROGS["big_trace.py"])
    p = subprocess.run([py, CLI, "triage", "--json", "--out", str(tmp_path / "run"), "--", str(prog), TRACE],
                       capture_output=True, text=True, env=env, timeout=300)
    assert p.returncode == 0, p.stderr[-2000:]
    html = json.loads(p.stdout)["artifacts"].get("tlparse")
    assert html and os.path.exists(html), p.stderr[-2000:]
    p = subprocess.run([py, CLI, "env", "--json", "--out", str(tmp_path / "envrun")], capture_output=True, text=True,
                       env=env, timeout=600)
    d = json.loads(p.stdout)
    assert d["info"]["tlparse"] == str(bindir / "tlparse"), d["info"]
    assert not any("tlparse" in x["problem"] for x in d["problems"])


def test_runs_side_by_side_share_the_cores(monkeypatch, tmp_path):
    """k target runs at once: each gets cores // k OpenMP threads; a run alone, or a user's own
    OMP_NUM_THREADS, is left as it is (docs/reliability.md: 703 s vs 33 s for two runs on 2 cores)."""
    from cdlib.run import proc
    monkeypatch.setattr(proc, "cores", lambda: 4)
    try:
        proc.runs_at_a_time(1)
        assert proc.thread_env({}) == {}
        proc.runs_at_a_time(2)
        assert proc.thread_env({}) == {"OMP_NUM_THREADS": "2"}
        proc.runs_at_a_time(8)
        assert proc.thread_env({}) == {"OMP_NUM_THREADS": "1"}
        assert proc.thread_env({"OMP_NUM_THREADS": "3"}) == {}
        res = proc.run([sys.executable, "-c", "import os; print(os.environ['OMP_NUM_THREADS'])"],
                       env={k: v for k, v in os.environ.items() if k != "OMP_NUM_THREADS"}, timeout=60,
                       stdout_path=str(tmp_path / "out"))
        assert res.ok and res.read_stdout().strip() == "1"
    finally:
        proc.runs_at_a_time(1)
