"""Every command a report suggests runs as shown in the user's shell (issue 26; issue 20 item 1).

The setting of the bug: torch lives in a virtual environment that is NOT on PATH; the CLI is run as
`<venv>/bin/python compile_debug.py ... -- <venv>/bin/python prog.py`, and `python`/`python3` on
PATH have no torch. Each subcommand that prints a next command runs once on a real program; then
every suggested command (Markdown backticks and indented lines, and every string of report.json)
is run verbatim through bash with that PATH. Each must reach the user's program with the Python that
has torch: the programs (tests/programs/cmd_*.py) append a line with their sys.executable to
$CD_TEST_MARKER right after `import torch`; a command is stopped (Ctrl-C, as a user would) as soon
as its line appears, so a re-run costs one start of the program, not a whole run. A command that
does not run the program (it reads a run dir) must exit 0. Neither may print "No module named 'torch'".
"""
import json
import os
import re
import signal
import subprocess
import sys
import sysconfig
import time
import types

import pytest

from conftest import CLI, program

from cdlib.run import multirank_launch
from cdlib.show import output
from cdlib import cmdline
from cdlib.run import proc

NO_TORCH = "No module named 'torch'"


def _venv(path, site_dirs=()):
    """A venv without pip; its site-packages get a .pth naming site_dirs (the test interpreter's own
    packages for the torch venv: works whether or not the test interpreter is itself a venv)."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(path)], check=True, timeout=120)
    py = os.path.join(path, "bin", "python")
    sp = subprocess.run([py, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], check=True,
                        capture_output=True, text=True, timeout=60).stdout.strip()
    if site_dirs:
        with open(os.path.join(sp, "cd_test_site.pth"), "w") as f:
            f.write("\n".join(site_dirs) + "\n")
    return py


@pytest.fixture(scope="module")
def pythons(tmp_path_factory):
    """torch: a Python with torch at a path not on PATH; none: python/python3 without torch, first on
    PATH; cli: a Python without torch that can run the CLI (PyYAML only), for the CLI itself."""
    d = tmp_path_factory.mktemp("pythons")
    here = [p for p in dict.fromkeys([sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]] +
                                     [p for p in sys.path if p.endswith("-packages")]) if os.path.isdir(p)]
    torch_py = _venv(d / "venv_torch", here)
    none_py = _venv(d / "venv_none")
    import yaml
    only_yaml = d / "only_yaml"
    only_yaml.mkdir()
    ydir = os.path.dirname(yaml.__file__)
    os.symlink(ydir, only_yaml / "yaml")
    if os.path.isdir(os.path.join(os.path.dirname(ydir), "_yaml")):
        os.symlink(os.path.join(os.path.dirname(ydir), "_yaml"), only_yaml / "_yaml")
    cli_py = _venv(d / "venv_cli", [str(only_yaml)])
    path = os.path.dirname(none_py) + os.pathsep + os.environ.get("PATH", "")
    tmp = d / "tmp"   # run dirs of the re-runs (no --out) go under $TMPDIR/compile-debug
    tmp.mkdir()
    env = dict(os.environ, PATH=path, TMPDIR=str(tmp))
    for py, has in ((torch_py, True), (none_py, False), (cli_py, False)):
        ok = subprocess.run([py, "-c", "import importlib.util, sys; sys.exit(not importlib.util.find_spec('torch'))"],
                            env=env, timeout=60).returncode == 0
        assert ok == has, (py, has)
    for name in ("python", "python3"):
        got = subprocess.run(["bash", "-c", f"command -v {name}"], env=env, capture_output=True, text=True).stdout.strip()
        assert got == os.path.join(os.path.dirname(none_py), name), (name, got)
    return types.SimpleNamespace(torch=torch_py, none=none_py, cli=cli_py, env=env, work=d)


def _run_cli(pythons, py, *args, marker, timeout=900):
    env = dict(pythons.env, CD_TEST_MARKER=str(marker))
    p = subprocess.run([py, CLI, *map(str, args)], capture_output=True, text=True, env=env, cwd=pythons.work,
                       timeout=timeout, stdin=subprocess.DEVNULL)
    assert NO_TORCH not in p.stdout + p.stderr, p.stdout[-3000:] + p.stderr[-3000:]
    return p


def _strings(obj):
    if isinstance(obj, str):
        yield obj
    elif isinstance(obj, dict):
        for v in obj.values():
            yield from _strings(v)
    elif isinstance(obj, list):
        for v in obj:
            yield from _strings(v)


def suggested(md, doc):
    """Every command line of ours in a Markdown report and its JSON: backtick spans, indented lines,
    whole strings. Placeholder commands (<N>, <file>) are not runnable and are left out."""
    texts = [md] + list(_strings(doc))
    found = []
    for t in texts:
        found += re.findall(r"`([^`\n]*compile_debug\.py[^`\n]*)`", t)
        found += [ln.strip() for ln in t.splitlines() if ln.startswith("    ") and "compile_debug.py" in ln]
        if "compile_debug.py" in t.split(" ", 2)[1:2] or re.match(r"^\S+ \S*compile_debug\.py ", t):
            found.append(t.strip())
    out = []
    for c in dict.fromkeys(found):
        c = c.split("  # ")[0].strip()
        if "<" not in c and "…" not in c and c not in out:
            out.append(c)
    return out


def _count(marker):
    try:
        with open(marker) as f:
            return [ln.split(" ", 2) for ln in f.read().splitlines()]
    except OSError:
        return []


def _tagged(marker):
    """Live processes started with CD_TEST_MARKER=marker (ours: the marker path is unique)."""
    key = f"CD_TEST_MARKER={marker}\0".encode()
    out = []
    for d in os.listdir("/proc"):
        if d.isdigit() and int(d) != os.getpid():
            try:
                with open(f"/proc/{d}/environ", "rb") as f:
                    if key in f.read() + b"\0":
                        out.append(int(d))
            except OSError:
                pass
    return out


def runs_as_shown(cmd, pythons, marker, timeout=600):
    """Run cmd verbatim (bash, the no-torch PATH); Ctrl-C it once the program wrote its marker line.
    Returns (reached, exit code, output)."""
    env = dict(pythons.env, CD_TEST_MARKER=str(marker))
    log = str(marker) + ".log"
    with open(log, "w") as out:
        p = subprocess.Popen(["bash", "-c", cmd], stdout=out, stderr=subprocess.STDOUT, env=env, cwd=pythons.work,
                             stdin=subprocess.DEVNULL,
                             preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
        deadline = time.monotonic() + timeout
        reached = False
        while p.poll() is None and time.monotonic() < deadline:
            if _count(marker):
                reached = True
                break
            time.sleep(0.2)
        if p.poll() is None:
            p.send_signal(signal.SIGINT)   # bash -c execs the CLI: this is Ctrl-C to our tool
            try:
                p.wait(timeout=60)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
    for pid in _tagged(marker):   # a safety net: processes of this command (the marker path is unique)
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    reached = reached or bool(_count(marker))
    return reached, p.returncode, open(log, errors="replace").read()


def check_all(cmds, pythons, name, runs_program=lambda c: True):
    """Each command reaches the program with the torch Python (or, when it does not run the program,
    exits 0); none prints "No module named 'torch'"."""
    assert cmds, f"{name}: no suggested command found"
    bad = []
    for i, cmd in enumerate(cmds):
        marker = pythons.work / f"{name}-{i}.marker"
        reached, rc, outp = runs_as_shown(cmd, pythons, marker)
        lines = _count(marker)
        ok = NO_TORCH not in outp and (
            (reached and all(x[1] == pythons.torch for x in lines)) or (not runs_program(cmd) and rc == 0))
        if not ok:
            bad.append(f"{cmd}\n  reached={reached} rc={rc} marker={lines}\n  {outp[-1500:]}")
    assert not bad, "\n".join(bad)


def _report(run_dir):
    with open(os.path.join(run_dir, "report.json")) as f:
        doc = json.load(f)
    with open(os.path.join(run_dir, "report.md")) as f:
        return f.read(), doc


# ---- triage on four programs ----------------------------------------------------------------------

@pytest.fixture(scope="module")
def triaged(pythons):
    """triage of each program (the CLI and the program both by the torch venv's path), once."""
    runs = {}
    for name, prog, extra in (("slow", "cmd_slow.py", ["--timeout", "30"]), ("break", "cmd_break.py", []),
                              ("crash", "cmd_crash.py", []), ("clean", "cmd_clean.py", [])):
        out = pythons.work / f"triage-{name}"
        _run_cli(pythons, pythons.torch, "triage", "--no-tlparse", "--out", out, *extra, "--",
                 pythons.torch, program(prog), marker=pythons.work / f"triage-{name}.marker")
        runs[name] = (str(out), *_report(out))
    return runs


@pytest.mark.slow
def test_shown_commands_name_the_torch_python(triaged, pythons):
    """What the bug looked like: `python3 compile_debug.py ... -- python prog.py`, where neither has
    torch here. Now the CLI and the program are named by the torch venv's path."""
    md, doc = triaged["slow"][1:]
    cmds = suggested(md, doc)
    assert any(" triage --timeout 3600 -- " in c for c in cmds), md
    for c in cmds:
        assert c.startswith(f"{pythons.torch} {CLI} "), c
        if " -- " in c:
            assert c.split(" -- ", 1)[1].startswith(pythons.torch + " "), c
    assert not re.search(r"(^|\s)python3? ", " ".join(cmds)), cmds


@pytest.mark.slow
def test_timeout_report_keeps_what_it_saw(triaged):
    md, doc = triaged["slow"][1:]
    assert doc["timed_out"] and md.startswith("# torch.compile triage (timed out after 30 s)"), md[:300]
    assert "this report is what it did until then" in md
    assert any(b["location"]["file"].endswith("cmd_slow.py") for b in doc["graph_breaks"]), md


@pytest.mark.slow
@pytest.mark.parametrize("name", ["slow", "break", "crash", "clean"])
def test_triage_suggestions_run_as_shown(triaged, pythons, name):
    run_dir, md, doc = triaged[name]
    check_all(suggested(md, doc), pythons, f"triage-{name}")


# ---- the other subcommands that print a next command ----------------------------------------------

def _sub(pythons, name, sub, *args):
    """Run one subcommand (its run dir: --out); returns its Markdown (stdout) and report.json."""
    out = pythons.work / f"{name}-run"
    p = _run_cli(pythons, pythons.torch, sub, "--out", out, *args, marker=pythons.work / f"{name}.marker")
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-2000:]
    with open(out / "report.json") as f:
        return p.stdout, json.load(f)


READS_ONLY = re.compile(r" (inductor|aot) --from | compare \S+ \S+$")


@pytest.mark.slow
@pytest.mark.parametrize("sub", ["compare", "fix", "compile-time", "perf", "inductor", "aot", "accuracy"])
def test_subcommand_suggestions_run_as_shown(triaged, pythons, sub):
    t = pythons.torch
    brk, clean = program("cmd_break.py"), program("cmd_clean.py")
    args = {"compare": ["compare", "--timeout", "600", triaged["break"][0], "--", t, brk],
            "fix": ["fix", "--max-fixes", "1", "--from", triaged["break"][0]],
            "compile-time": ["compile-time", "--no-tlparse", "--", t, brk],
            "perf": ["perf", "--", t, brk],
            "inductor": ["inductor", "--no-debug-dir", "--", t, clean],
            "aot": ["aot", "--", t, clean],
            "accuracy": ["accuracy", "--", t, clean]}[sub]
    md, doc = _sub(pythons, sub, *args)
    cmds = suggested(md, doc)
    assert cmds, f"{sub}: no suggested command in:\n{md[-2000:]}"
    check_all(cmds, pythons, sub, runs_program=lambda c: not READS_ONLY.search(c))


@pytest.mark.slow
def test_bisect_and_minify_suggestions_run_as_shown(triaged, pythons):
    run_dir = triaged["crash"][0]
    cmds = []
    for sub in ("bisect", "minify"):
        md, doc = _sub(pythons, sub, sub, "--timeout", "300", "--from", run_dir)
        got = suggested(md, doc)
        assert got, md
        cmds += got
        if sub == "minify":   # `<python> repro.py` and `<python> -m pytest -q test_regression.py` as shown
            shown = re.findall(r"`([^`\n]*(?:repro\.py|-m pytest -q \S+))`", md)
            assert doc["verified"] and len(shown) == 2 and all(c.startswith(pythons.torch + " ") for c in shown), md
            for c in shown:
                r = subprocess.run(["bash", "-c", c], capture_output=True, text=True, env=pythons.env,
                                   cwd=pythons.work, timeout=600)
                assert NO_TORCH not in r.stdout + r.stderr and r.returncode not in (0, 126, 127), (c, r.stderr[-1500:])
    check_all(list(dict.fromkeys(cmds)), pythons, "bisect-minify")


# ---- multi-rank: torchrun under the program's Python (issue 20 item 1) ----------------------------

@pytest.mark.slow
def test_multirank_runs_under_the_programs_python(pythons):
    """The CLI under a Python without torch, the program under the venv's: torchrun is the venv
    Python's, the report finds rank 1's error at the user's line, and its commands run as shown."""
    out = pythons.work / "mr"
    p = _run_cli(pythons, pythons.cli, "triage", "--no-tlparse", "--out", out, "--nproc", "2", "--timeout", "300",
                 "--", pythons.torch, program("cmd_mr_fail.py"), marker=pythons.work / "mr.marker")
    assert p.returncode == 0, p.stderr[-2000:]
    md, doc = _report(out)
    assert doc["launcher"][:3] == [pythons.torch, "-m", "torch.distributed.run"], doc["launcher"]
    assert not doc["launcher_error"] and "torchrun FAILED" not in md, md
    assert doc["first_failed_rank"] == 1, md
    r1 = doc["ranks"][1]["report"]["errors"][0]
    assert r1["category"] == "graph_break_fullgraph" and r1["location"]["file"].endswith("cmd_mr_fail.py"), r1
    assert {x[1] for x in _count(pythons.work / "mr.marker")} == {pythons.torch}
    cmds = suggested(md, doc)
    r0 = doc["ranks"][0]
    assert r0["consequence_of_rank"] == 1, {k: v for k, v in r0.items() if k != "report"}
    if any(e["category"] == "distributed_timeout" for e in r0["report"]["errors"]):
        # rank 0 printed gloo's message before torchrun stopped it: its report suggests the same launch
        assert any(" triage --nproc 2 " in c for c in cmds), cmds
    # else the race went the other way on a loaded machine (CI, stop 32): torchrun stopped rank 0 first
    check_all(cmds, pythons, "mr")


def test_multirank_python_without_torch_is_one_line(pythons):
    for target in ([pythons.none, program("cmd_mr_fail.py")], [program("cmd_mr_fail.py")]):
        p = subprocess.run([pythons.cli, CLI, "triage", "--nproc", "2", "--", *target], capture_output=True,
                           text=True, env=pythons.env, cwd=pythons.work, timeout=120)
        named = pythons.none if len(target) == 2 else pythons.cli
        assert p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1, p.stderr
        assert f"{named} cannot import torch" in p.stderr and "Traceback" not in p.stderr, p.stderr


# ---- the rendering rules, without a run ----------------------------------------------------------

def test_command_line_rules(tmp_path, monkeypatch):
    venv = tmp_path / "v"
    _venv(venv)
    vpy = str(venv / "bin" / "python")
    # a venv's python is a symlink to the base binary (same realpath) but another interpreter (its packages)
    assert not cmdline.same_interpreter(vpy, sys.executable) and cmdline.same_interpreter(vpy, str(venv / "bin" / "python3"))
    assert cmdline.same_interpreter(sys.executable, sys.executable)
    # the program's argv is kept as given, its interpreter path too; words are shell-quoted
    assert cmdline.command_line([vpy, "my prog.py", "--x=1"]) == f"{vpy} 'my prog.py' --x=1"
    assert cmdline.command_line([sys.executable, "a.py"]).split()[0] == cmdline.python_word()
    assert cmdline.python_word() in ("python3", sys.executable)
    # the interpreter the command names runs torchrun / the bisector / the minifier
    assert proc.target_python([vpy, "x.py"]) == vpy and proc.target_python(["x.py"]) == sys.executable
    assert proc.target_python(["python3.11", "x.py"]).endswith("python3.11")
    argv = multirank_launch.launcher_argv(2, [], "/r/rank_shim.py", "/r", ["/p/x.py"], vpy)
    assert argv[:3] == [vpy, "-m", "torch.distributed.run"]
    # --stdin FILE of this run goes into every command that re-runs the program
    monkeypatch.setenv(proc.STDIN_VAR, "/in put.txt")
    assert cmdline.cli_command("bisect", "--from", "/r").endswith("bisect --stdin '/in put.txt' --from /r")
    assert cmdline.cli_command("inductor", "--from", "/r", "--graph", "g").count("--stdin") == 1
    assert "--stdin" not in cmdline.cli_command("env")
    assert cmdline.template_command("{cli} minify -- {target}", "p.py").endswith("minify --stdin '/in put.txt' -- p.py")
    assert cmdline.template_command("{cli} triage --stdin <file> -- {target}", "p.py").count("--stdin") == 1
