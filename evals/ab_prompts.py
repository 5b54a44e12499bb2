"""Write the two prompts of the agent A/B for each case in evals/agent_cases/ (docs/agent-eval.md).

    <venv>/bin/python evals/ab_prompts.py [--blind] OUT_DIR [CASE ...]
    <venv>/bin/python evals/ab_prompts.py --qa OUT_DIR [ID ...]

Run it with the python of the venv the arms use (its path and torch version go into the prompts), from
a copy of the plugin (`git archive HEAD | tar -x -C /tmp/ab --one-top-level=plugin`): the plugin arm is
told to use that copy and to keep out of the working tree.

--blind takes the cases from evals/blind_cases/ (written from public reports by a helper that had not
read this repository; issue 22) instead of evals/agent_cases/.
--qa writes CompileQA-Bench prompts (evals/compileqa/selection.yaml): the user's question and the
issue's first 1500 characters, as the benchmark's answerer sees them; the answer goes to
OUT_DIR/answers/<id>-<arm>.md for a blind judge (rubric v3, the real issue thread).

For each case: OUT_DIR/<case>-plugin/ and OUT_DIR/<case>-bare/ get fresh copies of the case's
program files, and OUT_DIR/prompt-<case>-<arm>.txt the helper's whole prompt. The plugin arm gets
what Claude Code gives an agent when the user types `/compile-debug <message>`: the command's text
with $ARGUMENTS filled in, plus the skill listing (name: description). The bare arm gets the user's
message only. Both report the same fields, so the judge compares like with like.
"""
import pathlib
import re
import shutil
import sys

import yaml

ROOT = pathlib.Path(__file__).resolve().parents[1]
CASES = ROOT / "evals" / "agent_cases"

COMMON = """\
Work only in {work} (a copy of the user's project; edit files there freely). Do not start helper
agents. Other agents share this machine: in every shell, `export TORCHINDUCTOR_CACHE_DIR={work}/.inductor-cache
OMP_NUM_THREADS=1` first (the user's own cache; one thread per process, since several agents' programs run at once). Treat it as a real user's request: find the root cause, fix it, and verify the fix by running
it before you answer. Run `date +%s` as your very first and very last command.

End with exactly this report:
ROOT CAUSE: <one or two sentences>
FIX: <what you changed, file:line>
VERIFIED: <yes/no, and what the run showed>
TOOL CALLS: <number of tool calls you made, the two date calls included>
START/END: <the two date +%s values>
MISLEADING: <anything in a tool's output or a document you read that pointed you the wrong way or
cost you a step; 'none' if nothing>
CALL LOG: <one short line per tool call, in order: what it ran or read, and what it told you>
"""

BARE = """\
You are a coding agent helping a PyTorch user. The user's environment: `source {venv}/bin/activate`
gives a python3 with torch {torch} (CPU) and transformers.
Do not read or run anything under /work (another project lives there) and do not look at
{out} other than your own folder.

The user says: "{message}"

""" + COMMON

PLUGIN = """\
You are a coding agent in Claude Code helping a PyTorch user. The user has the torch-compile plugin
installed; its root is {root} (CLAUDE_PLUGIN_ROOT={root}: write that path out in commands).
Its skills (load one by reading {root}/skills/<name>/SKILL.md; its references/ as it says):
{skills}
Do not read {root}/evals, {root}/tests, {root}/docs, /work/main or anything else under {out}
other than your own folder. The user's environment: `source {venv}/bin/activate` gives a python3 with
torch {torch} (CPU) and transformers.

The user typed the plugin's slash command, which Claude Code expanded to:
----
{command}
----

""" + COMMON


QA_COMMON = """\
Answer as you would answer this user. You may write and run small programs in {work} to check what you
say (torch {torch} is installed: `source {venv}/bin/activate` gives its python3); the issue was filed
against an older torch, so say which version your facts hold for where it matters. Do not use the
search, fetch, find_repos, find_files, find_string or read_file tools, and do not look the issue up:
answer from what you know and what you run. Do not start helper agents. Run `date +%s` as your very
first and very last command. Spend at most about 10 minutes.

Write the answer for the user to {answer} (Markdown: the cause, what to do, what you checked), then
end your reply with exactly:
ANSWER FILE: {answer}
TOOL CALLS: <number of tool calls you made, the two date calls included>
START/END: <the two date +%s values>
RAN: <what you ran to check your answer, one line; 'nothing' if nothing>
"""

QA_BARE = """\
You are a coding agent helping a PyTorch user. Do not read or run anything under /work (another
project lives there) and do not look at {out} other than {work}.

The user asks: "{message}"

""" + QA_COMMON

QA_PLUGIN = """\
You are a coding agent in Claude Code helping a PyTorch user. The user has the torch-compile plugin
installed; its root is {root} (CLAUDE_PLUGIN_ROOT={root}: write that path out in commands).
Its skills (load one by reading {root}/skills/<name>/SKILL.md; its references/ as it says):
{skills}
Do not read {root}/evals, {root}/tests, {root}/docs, /work/main or anything else under {out} other
than {work}.

The user typed the plugin's slash command, which Claude Code expanded to:
----
{command}
----

""" + QA_COMMON


def qa_prompts(out, ids):
    """CompileQA-Bench: both arms' prompts for each case id (the benchmark's question + context)."""
    import json
    import subprocess
    sel = yaml.safe_load((ROOT / "evals" / "compileqa" / "selection.yaml").read_text())
    suite = json.loads(subprocess.run(["git", "-C", sel["mirror"], "show", f"{sel['commit']}:suite/cases.json"],
                                      capture_output=True, text=True, check=True, timeout=60).stdout)
    cases = {c["id"]: c for c in suite}
    venv, torch_version = _venv()
    (out / "answers").mkdir(parents=True, exist_ok=True)
    for cid in ids or sel["cases"]:
        c = cases[cid]
        message = c["user_question"] + "\n\n" + c["issue_context"][:1500]
        for arm in ("plugin", "bare"):
            work = out / f"{cid}-{arm}"
            shutil.rmtree(work, ignore_errors=True)
            work.mkdir(parents=True)
            fields = dict(work=work, out=out, venv=venv, torch=torch_version, message=message,
                          answer=out / "answers" / f"{cid}-{arm}.md")
            if arm == "bare":
                text = QA_BARE.format(**fields)
            else:
                text = QA_PLUGIN.format(**fields, skills=skill_listing(), root=ROOT, command=command_text(message))
            (out / f"prompt-{cid}-{arm}.txt").write_text(text)
            print(out / f"prompt-{cid}-{arm}.txt")


def _venv():
    """The venv this script runs in (the arms' python): its path and torch version."""
    import importlib.metadata
    if sys.prefix == sys.base_prefix:
        sys.exit("run ab_prompts.py with the python of the venv the arms use (torch installed)")
    return pathlib.Path(sys.prefix), importlib.metadata.version("torch")


def skill_listing():
    lines = []
    for skill in sorted((ROOT / "skills").glob("*/SKILL.md")):
        meta = yaml.safe_load(skill.read_text().split("---")[1])
        lines.append(f"- {meta['name']}: {meta['description']}")
    return "\n".join(lines)


def command_text(arguments):
    body = (ROOT / "commands" / "compile-debug.md").read_text().split("---", 2)[2].strip()
    body = body.replace("$ARGUMENTS", arguments)
    return re.sub(r'"?\$\{CLAUDE_PLUGIN_ROOT\}', lambda m: m.group(0)[:-len("${CLAUDE_PLUGIN_ROOT}")]
                  + str(ROOT), body)


def main(argv):
    global CASES
    if argv[:1] == ["--qa"] and argv[1:]:
        return qa_prompts(pathlib.Path(argv[1]), argv[2:])
    if argv[:1] == ["--blind"]:
        CASES, argv = ROOT / "evals" / "blind_cases", argv[1:]
    usage = "usage: python3 evals/ab_prompts.py [--blind] OUT_DIR [CASE ...] | --qa OUT_DIR [ID ...]"
    if argv[:1] in (["-h"], ["--help"]):
        print(__doc__)
        return
    if not argv or argv[0].startswith("-"):
        sys.exit(usage)
    out = pathlib.Path(argv[0])
    names = argv[1:] or sorted(p.name for p in CASES.iterdir() if (p / "case.yaml").exists())
    missing = [n for n in names if not (CASES / n / "case.yaml").exists()]
    if missing:
        sys.exit(f"no case {', '.join(missing)} in {CASES}")
    for name in names:
        case = yaml.safe_load((CASES / name / "case.yaml").read_text())
        for arm in ("plugin", "bare"):
            work = out / f"{name}-{arm}"
            shutil.rmtree(work, ignore_errors=True)
            shutil.copytree(CASES / name, work, ignore=shutil.ignore_patterns("case.yaml"))
            venv, torch_version = _venv()
            common = dict(work=work, out=out, venv=venv, torch=torch_version)
            if arm == "bare":
                text = BARE.format(message=case["user_message"], **common)
            else:
                text = PLUGIN.format(skills=skill_listing(), root=ROOT, **common,
                                     command=command_text(case.get("arguments", case["user_message"])))
            (out / f"prompt-{name}-{arm}.txt").write_text(text)
            print(out / f"prompt-{name}-{arm}.txt")


if __name__ == "__main__":
    main(sys.argv[1:])
