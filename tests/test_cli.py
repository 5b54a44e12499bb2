"""CLI contract: fast --help without torch, one-line errors with exit 2, nothing written outside the run dir."""
import os
import subprocess
import sys

import pytest
from conftest import CLI, program, run_cli

COMMANDS = ["env", "triage", "bisect", "minify", "accuracy", "export", "aoti", "inductor", "aot", "perf"]


def test_help_lists_commands_and_does_not_import_torch():
    p = subprocess.run([sys.executable, "-X", "importtime", CLI, "--help"], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0
    for c in COMMANDS:
        assert c in p.stdout
    assert "| torch\n" not in p.stderr and " torch\n" not in [ln.rsplit("|", 1)[-1] + "\n" for ln in p.stderr.splitlines()]


def test_every_subcommand_help_is_fast():
    from cdlib.cli import _discover
    names = list(_discover())
    assert set(COMMANDS) <= set(names)
    for name in names:
        p = subprocess.run([sys.executable, "-X", "importtime", CLI, name, "--help"], capture_output=True, text=True, timeout=60)
        assert p.returncode == 0, name
        imported = {ln.rsplit("|", 1)[-1].strip() for ln in p.stderr.splitlines() if "|" in ln}
        assert "torch" not in imported, f"{name} --help imports torch"


@pytest.mark.parametrize("args,needle", [
    (["triage", "--", "no_such_file.py"], "no_such_file.py: no such file"),
    (["triage", "--", "definitely-not-a-command-xyz"], "command not found"),
    (["triage", "--timeout", "0", "--", "x.py"], "--timeout must be positive"),
    (["triage", "--bogus-flag"], "unrecognized arguments"),
    (["nonexistent-subcommand"], "invalid choice"),
    (["triage", "--from-text", "/no/such/log.txt"], "no such file"),
    (["triage", "--trace", "/no/such/dir"], "no such file"),
    (["triage", "--timeout", "abc"], "invalid float"),
    (["env", "--", "python", "x.py"], "env takes no target"),
])
def test_bad_input_is_one_line_exit_2(args, needle):
    p = run_cli(*args, timeout=120)
    assert p.returncode == 2, p.stderr
    err = p.stderr.strip()
    assert needle in err
    assert len(err.splitlines()) == 1 and "Traceback" not in err


def test_out_dir_must_be_new_or_empty(tmp_path):
    (tmp_path / "keep.txt").write_text("user file")
    p = run_cli("triage", "--out", str(tmp_path), "--", program("clean.py"), timeout=120)
    assert p.returncode == 2 and "not empty" in p.stderr
    assert (tmp_path / "keep.txt").read_text() == "user file" and os.listdir(tmp_path) == ["keep.txt"]


def test_empty_from_text_is_an_error(tmp_path):
    f = tmp_path / "empty.txt"
    f.write_text("  \n")
    p = run_cli("triage", "--from-text", str(f))
    assert p.returncode == 2 and "empty" in p.stderr


def test_timeout_kills_the_process_group(tmp_path):
    prog = tmp_path / "hang.py"
    marker = tmp_path / "child.pid"
    prog.write_text(
        "import subprocess, sys, time\n"
        f"c = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(300)'])\n"
        f"open({str(marker)!r}, 'w').write(str(c.pid))\n"
        "time.sleep(300)\n")
    out = tmp_path / "run"
    p = run_cli("--json" if False else "triage", "--out", str(out), "--timeout", "8", "--no-tlparse", "--", str(prog), timeout=120)
    assert p.returncode == 0
    assert "TIMED OUT" in p.stdout and "`[timeout]`" in p.stdout
    pid = int(marker.read_text())
    import time
    for _ in range(20):
        if not os.path.exists(f"/proc/{pid}") or open(f"/proc/{pid}/stat").read().split()[2] == "Z":
            break
        time.sleep(0.25)
    else:
        pytest.fail("the target's child process survived the timeout")
    assert sorted(os.listdir(tmp_path)) == ["child.pid", "hang.py", "run"]   # nothing written beside the run dir
