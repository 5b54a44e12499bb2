"""The run directory: every artifact of one subcommand run goes here, nowhere else."""
import os
import secrets
import tempfile
import time

from ..errors import CliError


def default_root():
    return os.path.join(tempfile.gettempdir(), "compile-debug")


def make(out, command):
    """Create the run dir. --out must be new or empty: we never write into a user's files."""
    if out:
        path = os.path.abspath(os.path.expanduser(out))
        if os.path.exists(path):
            if not os.path.isdir(path):
                raise CliError(f"--out {out}: exists and is not a directory")
            if _ours(path):  # made earlier by this same run (a command that makes it before a helper does)
                return path
            try:
                entries = os.listdir(path)
            except OSError as e:
                raise CliError(f"--out {out}: cannot read the directory ({e.strerror})")
            if entries:
                raise CliError(f"--out {out}: directory is not empty; give a new or empty directory")
        else:
            parent = os.path.dirname(path) or "."
            if not os.path.isdir(parent):
                raise CliError(f"--out {out}: parent directory {parent} does not exist")
        try:
            os.makedirs(path, exist_ok=True)
        except OSError as e:
            raise CliError(f"--out {out}: cannot create directory ({e.strerror})")
        _claim(path, out)
        return path
    root = default_root()
    stamp = time.strftime("%Y%m%d-%H%M%S")
    path = os.path.join(root, f"{command}-{stamp}-{secrets.token_hex(3)}")
    try:
        os.makedirs(path)
    except OSError as e:
        raise CliError(f"cannot create a run directory under {root} ({e.strerror}); give one with --out DIR")
    _claim(path, path)
    return path


MARKER = ".compile-debug-run"


def _ours(path):
    try:
        if os.listdir(path) != [MARKER]:
            return False
        with open(os.path.join(path, MARKER)) as f:
            return f.read().strip() == str(os.getpid())
    except (OSError, ValueError):
        return False


def _claim(path, shown):
    """Mark the run dir as ours, atomically: of two runs started at once with the same --out, one wins."""
    try:
        fd = os.open(os.path.join(path, MARKER), os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
    except FileExistsError:
        raise CliError(f"--out {shown}: another compile-debug run is using this directory; give a new one")
    except OSError as e:
        raise CliError(f"--out {shown}: cannot write there ({e.strerror})")
    with os.fdopen(fd, "w") as f:
        f.write(f"{os.getpid()}\n")


def from_triage_run(args):
    """--from RUN_DIR (bisect, minify): the triage run's facts (bisect_step.load_triage_run), its command
    put into args.target. A command also given after -- or an unreadable run dir is a CliError."""
    from .workers import bisect_step
    if args.target:
        raise CliError("--from takes the command from the triage run; do not also give one after --")
    try:
        t = bisect_step.load_triage_run(args.from_dir)
    except ValueError as e:
        raise CliError(f"--from: {e}")
    args.target = t["argv"]
    return t
