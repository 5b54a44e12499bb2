"""Every `compile_debug.py` command line shown in a fenced block of a skill, the slash command or the
README must run as written: the subcommand and every option exist and parse (COMPILE_DEBUG_PARSE_ONLY
stops the CLI right after parsing, so no program runs and torch is not imported), and the README's
main command really runs (test_readme.py)."""
import glob
import os
import re
import shlex

import pytest
from conftest import ROOT, run_cli

DOCS = sorted(glob.glob(os.path.join(ROOT, "skills", "**", "*.md"), recursive=True) +
              glob.glob(os.path.join(ROOT, "commands", "*.md")) + [os.path.join(ROOT, "README.md")])
FENCE = re.compile(r"```[a-z]*\n(.*?)```", re.S)


def command_lines():
    out = []
    for path in DOCS:
        text = open(path, encoding="utf-8").read()
        for block in FENCE.findall(text):
            for ln in block.replace("\\\n", " ").splitlines():
                if "compile_debug.py" not in ln or ln.lstrip().startswith("#"):
                    continue
                seg = next(s for s in ln.split("|") if "compile_debug.py" in s)
                seg = seg.split("&&")[-1] if "&&" in seg and "compile_debug.py" in seg.split("&&")[-1] else seg
                out.append((os.path.relpath(path, ROOT), seg.strip()))
    return out


LINES = command_lines()


def argv_of(line):
    line = line.replace('"${CLAUDE_PLUGIN_ROOT}"', ROOT).replace("${CLAUDE_PLUGIN_ROOT}", ROOT)
    line = re.sub(r"<[^<>]+>", "PLACEHOLDER", line)   # <run dir>, <file.py:factory>, ...
    words = shlex.split(line, comments=True)
    i = next(k for k, w in enumerate(words) if w.endswith("compile_debug.py"))
    return words[i + 1:]


def test_skills_show_commands():
    assert len(LINES) >= 15, LINES
    assert {os.path.basename(os.path.dirname(p)) for p, _ in LINES if p.startswith("skills")} >= {
        "overview", "trace-dynamo", "bisect", "export", "aoti", "trace-inductor"}


@pytest.mark.parametrize("where,line", LINES, ids=[f"{p}:{i}" for i, (p, _) in enumerate(LINES)])
def test_command_parses_as_written(where, line):
    argv = argv_of(line)
    if not argv or argv[0] in ("--help", "-h"):
        return
    p = run_cli(*argv, env={"COMPILE_DEBUG_PARSE_ONLY": "1"}, timeout=60)
    assert p.returncode == 0 and p.stdout.startswith("parsed:"), f"{where}: `{line}`\n{p.stderr}"
