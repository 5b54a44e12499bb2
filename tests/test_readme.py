"""README's two set-up commands exist and CI runs the README's test command verbatim, in a virtual
environment made from requirements.txt alone (as on a fresh machine), and fails when it fails."""
import os
import re
import subprocess

from conftest import ROOT


def readme_commands():
    text = open(os.path.join(ROOT, "README.md")).read()
    section = text.split("## Set up", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```bash\n(.+?)\n```", section, re.S)


def test_two_setup_commands():
    main_job, tests = readme_commands()
    assert "compile_debug.py triage" in main_job and "pip install" in main_job
    assert "pytest" in tests and "pip install" in tests


def test_ci_runs_the_readme_test_command():
    _, tests = readme_commands()
    tests = tests.strip()
    lines = open(os.path.join(ROOT, ".ci", "run")).read().splitlines()
    [i] = [n for n, ln in enumerate(lines) if ln.startswith(tests)]
    assert lines[i] == tests + " || fail=1"                  # verbatim; its failure is CI's failure
    before = lines[:i]
    assert "venv=$(.ci/venv main -r requirements.txt \"torch==$NEWEST\")" in before   # a venv from requirements.txt only
    assert 'source "$venv/bin/activate"' in before                     # its python3 runs the command
    assert "fail=0" in before and lines[-1] == "exit $fail" and "set -euo pipefail" in lines
    for name in ("run", "venv", "torch29"):
        assert os.access(os.path.join(ROOT, ".ci", name), os.X_OK), name


def test_ci_exit_status_is_the_tests_status():
    """.ci/run's EXIT trap ends the background venv builds; by then they have finished, so its kill fails.
    Under set -e that failure made CI exit 1 after every test passed (CI run after stop 29). The trap line,
    run as .ci/run runs it, must leave the exit status to `exit $fail`."""
    lines = open(os.path.join(ROOT, ".ci", "run")).read().splitlines()
    [trap] = [ln for ln in lines if ln.startswith("trap ")]
    for fail in (0, 3):
        script = ("set -euo pipefail\nold_log=$(mktemp) prev_log=$(mktemp) times_log=$(mktemp) ver_log=$(mktemp) ver_pid=\n"
                  "setsid true & old_pid=$!\nsetsid true & prev_pid=$!\nsetsid sleep 0.1 & ver_pid=$!\n"
                  f"{trap}\nwait $old_pid; wait $prev_pid; sleep 0.2\nexit {fail}\n")
        rc = subprocess.run(["bash", "-c", script], timeout=30).returncode
        assert rc == fail, f".ci/run's EXIT trap turns exit {fail} into {rc}"


def test_readme_lists_every_subcommand():
    from cdlib.cli import _discover
    text = open(os.path.join(ROOT, "README.md")).read()
    for name in _discover():
        assert f"`{name}`" in text, name
