"""Imported by the cmd_*.py programs right after `import torch`: appends one line to the file named by
$CD_TEST_MARKER (tests/test_exact_commands.py), so that a test sees that a command it ran reached the
user's program with a Python that has torch."""
import os
import sys

if os.environ.get("CD_TEST_MARKER"):
    with open(os.environ["CD_TEST_MARKER"], "a") as f:
        f.write(f"{os.getpid()} {sys.executable} {os.path.basename(sys.argv[0])}\n")
