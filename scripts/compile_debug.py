#!/usr/bin/env python3
"""compile_debug: debug PyTorch torch.compile from one command line.

    python3 scripts/compile_debug.py <command> [options] [-- <target command...>]

Every subcommand lives in scripts/cdlib/commands/<name>.py. This file only parses arguments,
so `--help` and argument errors never import torch.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from cdlib.cli import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
