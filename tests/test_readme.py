"""README's two set-up commands exist and CI runs the README's test command verbatim."""
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
    ci = open(os.path.join(ROOT, ".ci", "run")).read()
    assert tests.strip() in ci
    assert os.access(os.path.join(ROOT, ".ci", "run"), os.X_OK)


def test_readme_lists_every_subcommand():
    from cdlib.cli import _discover
    text = open(os.path.join(ROOT, "README.md")).read()
    for name in _discover():
        assert f"`{name}`" in text, name
