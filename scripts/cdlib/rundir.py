"""The run directory: every artifact of one subcommand run goes here, nowhere else."""
import os
import secrets
import tempfile
import time

from .errors import CliError


def default_root():
    return os.path.join(tempfile.gettempdir(), "compile-debug")


def make(out, command):
    """Create the run dir. --out must be new or empty: we never write into a user's files."""
    if out:
        path = os.path.abspath(os.path.expanduser(out))
        if os.path.exists(path):
            if not os.path.isdir(path):
                raise CliError(f"--out {out}: exists and is not a directory")
            if os.listdir(path):
                raise CliError(f"--out {out}: directory is not empty; give a new or empty directory")
        else:
            parent = os.path.dirname(path) or "."
            if not os.path.isdir(parent):
                raise CliError(f"--out {out}: parent directory {parent} does not exist")
        try:
            os.makedirs(path, exist_ok=True)
        except OSError as e:
            raise CliError(f"--out {out}: cannot create directory ({e.strerror})")
        return path
    root = default_root()
    os.makedirs(root, exist_ok=True)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    path = os.path.join(root, f"{command}-{stamp}-{secrets.token_hex(3)}")
    os.makedirs(path)
    return path
