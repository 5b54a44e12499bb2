"""README's two set-up commands exist and CI runs the README's test command verbatim, in a virtual
environment made from requirements.txt alone (as on a fresh machine), and fails when it fails."""
import os
import re

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


def test_readme_lists_every_subcommand():
    from cdlib.cli import _discover
    text = open(os.path.join(ROOT, "README.md")).read()
    for name in _discover():
        assert f"`{name}`" in text, name
