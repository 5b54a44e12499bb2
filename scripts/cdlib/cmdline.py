"""The one renderer of every command a report, a Next step or an error message tells the user to run,
(this CLI or the user's own program), and short excerpts of text. Below every layer: no cdlib import."""
import os
import re
import sys

STDIN_VAR = "COMPILE_DEBUG_STDIN"    # --stdin FILE (absolute); set for the whole CLI process and its workers


CLI = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "compile_debug.py")


def command_line(argv):
    """THE one place that renders a command the user is told to run (reports, next steps, error
    messages): each word shell-quoted; this interpreter (sys.executable) shown as `python3` only
    when `python3` on PATH is this same interpreter (same binary, same venv), else by its path, so
    that the command runs as shown in the user's shell. Every other word is kept as given (the
    interpreter the user named for their program included)."""
    import shlex
    here = python_word()
    return " ".join(here if w == sys.executable else shlex.quote(str(w)) for w in argv)


def cli_command(*words):
    """The exact command line to run one of our subcommands. Options that every re-run of the program
    needs (--stdin FILE of this run) are added after the subcommand."""
    words = [str(w) for w in words]
    if words and ("--" in words or "--from" in words) and "--stdin" not in words:
        words[1:1] = rerun_options()
    return command_line([sys.executable, CLI, *words])


def rerun_options():
    """Options a command that re-runs the program needs to run it as this run did: --stdin FILE."""
    stdin = os.environ.get(STDIN_VAR)
    return ["--stdin", stdin] if stdin else []


def template_command(template, target_str):
    """A knowledge-table command ("{cli} bisect -- {target}") for this run: {cli} is this CLI, {target}
    the program's command line (output of command_line) or a placeholder."""
    sub, _, rest = template.replace("{cli} ", "", 1).partition(" ")
    opts = rerun_options() if "{target}" in rest and "--stdin" not in rest else []
    return (cli_command(sub, *opts) + (" " + rest if rest else "")).replace("{target}", target_str or "<your command>")


def _venv_of(path):
    """The virtual environment dir an interpreter path belongs to (pyvenv.cfg beside or above its
    directory, found without resolving the last symlink: that is how Python finds it), or None."""
    d = os.path.dirname(os.path.abspath(path))
    for cand in (d, os.path.dirname(d)):
        if os.path.isfile(os.path.join(cand, "pyvenv.cfg")):
            return os.path.realpath(cand)
    return None


def same_interpreter(a, b):
    """True when two interpreter paths start the same Python with the same packages: the same
    binary (realpath) and the same venv (a venv's python is a symlink to the base binary)."""
    if not a or not b:
        return False
    return os.path.realpath(a) == os.path.realpath(b) and _venv_of(a) == _venv_of(b)


_PYTHON_WORD = []


def python_word():
    """How to name this interpreter in a shown command: `python3` or its absolute path."""
    if not _PYTHON_WORD:
        import shlex
        import shutil
        on_path = shutil.which("python3")
        _PYTHON_WORD.append("python3" if on_path and same_interpreter(on_path, sys.executable)
                            else shlex.quote(sys.executable))
    return _PYTHON_WORD[0]


# an installed package's file quoted in a message ('/venv/lib/python3.11/site-packages/torch/x.py': torch
# quotes module reprs so): an absolute path in quotes, without spaces, ending in .py
_INSTALLED = re.compile(r"""(?<=['"])/[^'"\s]*/(?:site|dist)-packages/(?=[^'"\s]+\.py['"])""")


def clip(text, n=300):
    """One-line-ish excerpt of text, at most n chars; an installed package's file quoted in it is named from
    its package ('torch/_library/custom_ops.py'), as reports name library locations, so that the message
    itself fits."""
    if text is None:
        return ""
    text = str(text)
    if len(set(_INSTALLED.findall(text))) == 1:     # two installs named: the prefix is what tells them apart
        text = _INSTALLED.sub("", text)
    text = text.strip()
    return text if len(text) <= n else text[: n - 1].rstrip() + "…"


_SHELLS = ("bash", "sh", "zsh", "dash")


def _shell_scripts(text, cwd=""):
    """The .py files a shell string runs, in order: `python a.py && python b.py`, `cd sub; python c.py`."""
    import shlex
    lex = shlex.shlex(text, posix=True, punctuation_chars=True)
    lex.whitespace_split = True
    try:
        words = list(lex)
    except ValueError:
        words = text.split()
    out = []
    for k, w in enumerate(words):
        if w == "cd" and k + 1 < len(words):
            cwd = os.path.join(cwd, words[k + 1])
        elif w.endswith(".py"):
            path = w if os.path.isabs(w) else os.path.join(cwd, w)
            if os.path.isfile(path):
                out.append(path)
    return out


def scripts_of(command):
    """The .py files a command runs, in order: its own arguments, or the scripts of a shell string (`bash -c
    "python export.py && python serve.py"`: an export step, then a serving check; `env A=1 bash -lc ...`)."""
    cmd = list(command or [])
    while cmd and (os.path.basename(cmd[0]) == "env" or "=" in cmd[0] and not cmd[0].startswith("-")):
        cmd = cmd[1:]   # env VAR=1 ... / VAR=1 ...
    if cmd and os.path.basename(cmd[0]) in _SHELLS:
        for i, a in enumerate(cmd[1:-1], 1):
            if a.startswith("-") and not a.startswith("--") and a.endswith("c"):   # -c, -lc, -ec
                return list(dict.fromkeys(_shell_scripts(cmd[i + 1])))
    return list(dict.fromkeys(a for a in cmd if a.endswith(".py") and os.path.isfile(a)))


def script_of(command):
    """The (first) .py file a command runs, or None."""
    return next(iter(scripts_of(command)), None)


def script_source(command, limit=500_000):
    """The source text of the .py file a command runs ("" when there is none or it can't be read)."""
    script = script_of(command)
    try:
        with open(script, encoding="utf-8", errors="replace") as f:
            return f.read(limit)
    except (OSError, TypeError):
        return ""


def local_imports(path):
    """The program's own modules a script imports (`import kv_ops`, `from kv_ops import ...` next to it): a
    custom op registered there fails the script without a traceback into it (blind A/B: a KV-cache op in
    kv_ops.py, a bare exit in generate.py)."""
    import ast
    try:
        with open(path, encoding="utf-8") as f:
            tree = ast.parse(f.read())
    except (OSError, SyntaxError, ValueError):
        return []
    names = [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
    names += [n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module and not n.level]
    here = os.path.dirname(os.path.abspath(path))
    out = []
    for name in dict.fromkeys(names):
        cand = os.path.join(here, *name.split(".")) + ".py"
        if os.path.isfile(cand):
            out.append(cand)
    return out


def launched_scripts(path):
    """The .py files of the script's folder that it names in a string (`subprocess.run([sys.executable,
    "serve_worker.py"])`): programs it starts as processes of their own (blind A/B batch 36: a rollout script
    that starts each serving pod as `python serve_worker.py`)."""
    import ast
    try:
        with open(path, encoding="utf-8") as f:
            tree = ast.parse(f.read())
    except (OSError, SyntaxError, ValueError):
        return []
    here = os.path.dirname(os.path.abspath(path))
    names = [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)
             and n.value.endswith(".py") and "\n" not in n.value]
    return list(dict.fromkeys(p for p in (os.path.join(here, v) for v in names)
                              if os.path.isfile(p) and os.path.abspath(p) != os.path.abspath(path)))
