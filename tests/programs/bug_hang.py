"""Hangs (never finishes): for per-run timeouts. Writes its pid so a test can check it was killed."""
import os
import sys
import time

with open(sys.argv[1], "w") as f:
    f.write(str(os.getpid()))
time.sleep(600)
