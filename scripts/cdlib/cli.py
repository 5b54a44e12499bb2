"""Argument parsing and dispatch. Subcommands are discovered from cdlib/commands/*.py; each
module defines HELP (one line), ORDER (sort key in --help), add_arguments(parser) and
run(args) -> exit status. Nothing here imports torch."""
import argparse
import importlib
import os
import pkgutil
import sys
import tempfile
import traceback

from . import commands as _commands_pkg
from .errors import CliError

PROG = "compile_debug.py"


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, no usage dump
        sys.stderr.write(f"{self.prog}: error: {message} (see --help)\n")
        sys.exit(2)


def _discover():
    mods = []
    for info in pkgutil.iter_modules(_commands_pkg.__path__):
        if info.name.startswith("_"):
            continue
        try:
            mod = importlib.import_module(f"{_commands_pkg.__name__}.{info.name}")
        except Exception as e:  # one broken command must not take the others down
            mod = _broken(info.name, e)
        mods.append(mod)
    mods.sort(key=lambda m: (getattr(m, "ORDER", 100), m.__name__))
    return {getattr(m, "NAME", m.__name__.rsplit(".", 1)[1]): m for m in mods}  # NAME: e.g. "compile-time"


def _broken(name, exc):
    import types
    mod = types.ModuleType(f"{_commands_pkg.__name__}.{name}")
    mod.HELP = f"(unavailable: {type(exc).__name__})"
    mod.ORDER = 999
    mod.TAKES_TARGET = True
    mod.add_arguments = lambda p: None

    def run(args):
        raise CliError(f"the {name} command failed to load ({type(exc).__name__}: {exc}); please report it")
    mod.run = run
    return mod


def common_options():
    p = argparse.ArgumentParser(add_help=False)
    g = p.add_argument_group("common options")
    g.add_argument("--json", action="store_true", help="print one JSON document on stdout instead of Markdown")
    g.add_argument("--out", metavar="DIR", help="run directory for artifacts (default: a new dir under "
                   f"{os.path.join(tempfile.gettempdir(), 'compile-debug')})")
    return p


def build_parser(mods):
    parser = _Parser(
        prog=PROG,
        description="Debug PyTorch torch.compile: run your unmodified program and get the facts "
        "(graph breaks, recompiles, errors, failing layer, minimal repro) in one report.",
        epilog="Target commands go after `--`, e.g.  compile_debug.py triage -- python train.py --epochs 1. "
        "A leading foo.py is run with the current Python.",
    )
    sub = parser.add_subparsers(dest="command", metavar="<command>", parser_class=_Parser)
    common = common_options()
    for name, mod in mods.items():
        p = sub.add_parser(name, help=mod.HELP, description=getattr(mod, "DESCRIPTION", mod.HELP),
                           parents=[common], formatter_class=argparse.RawDescriptionHelpFormatter,
                           epilog=getattr(mod, "EPILOG", None))
        mod.add_arguments(p)
        if getattr(mod, "TAKES_TARGET", False):
            p.add_argument("--stdin", metavar="FILE", help="give the program FILE as its standard input, in every "
                           "run (default: an empty one: a program that waits for input gets EOF at once)")
        p.set_defaults(_module=mod)
    return parser


def split_target(argv):
    """Split argv at the first `--`: (ours, target)."""
    if "--" in argv:
        i = argv.index("--")
        return argv[:i], argv[i + 1:]
    return argv, None


def _set_stdin(path):
    """--stdin FILE: every run of the program (and every suggested re-run) reads it (proc.STDIN_VAR)."""
    from .run import proc
    if path is None:
        return
    if not os.path.isfile(path):
        raise CliError(f"--stdin {path}: no such file")
    if not os.access(path, os.R_OK):
        raise CliError(f"--stdin {path}: not readable")
    os.environ[proc.STDIN_VAR] = os.path.abspath(path)


def main(argv):
    mods = _discover()
    parser = build_parser(mods)
    ours, target = split_target(list(argv))
    if not ours:
        parser.print_help()
        return 0
    args, extra = parser.parse_known_args(ours)
    if extra:
        # `triage train.py --epochs 3` without `--`: the leftovers are the target command.
        if target is None and getattr(args, "_module", None) is not None \
                and getattr(args._module, "TAKES_TARGET", False) and not extra[0].startswith("-"):
            target = extra
        else:
            parser.error(f"unrecognized arguments: {' '.join(extra)}")
    if getattr(args, "_module", None) is None:
        parser.error("missing <command>")
    args.target = target or []
    if os.environ.get("COMPILE_DEBUG_PARSE_ONLY"):  # tests: a skill's command line parses as written
        sys.stdout.write(f"parsed: {args.command} (target: {' '.join(args.target) or '-'})\n")
        return 0
    try:
        _set_stdin(getattr(args, "stdin", None))
        return int(args._module.run(args) or 0)
    except CliError as e:
        sys.stderr.write(f"{PROG} {args.command}: error: {e}\n")
        return 2
    except KeyboardInterrupt as e:   # a message says what was kept (the report of what ran so far)
        sys.stderr.write(f"{PROG} {args.command}: interrupted" + (f"; {e}" if str(e) else "") + "\n")
        return 130
    except BrokenPipeError:
        return 1
    except Exception as e:  # our bug: one line for the user, the traceback in a file
        fd, path = tempfile.mkstemp(prefix="compile-debug-crash-", suffix=".txt")
        with os.fdopen(fd, "w") as f:
            traceback.print_exc(file=f)
        first = str(e).splitlines()[0] if str(e) else ""
        sys.stderr.write(f"{PROG} {args.command}: internal error: {type(e).__name__}: {first} "
                         f"(traceback in {path}; please report it)\n")
        return 3
