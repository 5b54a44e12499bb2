"""The worker runs of `export` and `aoti` (no torch import here): the model target check, the
worker's result file, and tlparse --export on draft_export's trace log."""
import glob
import json
import os
import sys

from . import proc, target
from .. import cmdline
from ..errors import CliError


def check_model_spec(text, command):
    """parse_spec with a hint for scripts (the triage owner reports scripts that call torch.export)."""
    if text and text.endswith(".py") and ":" not in os.path.basename(text):
        if not os.path.isfile(text):
            raise CliError(f"{text}: no such file")
        raise CliError(f"{command} needs a model target `{text}:FACTORY`; for a script that calls torch.export "
                       f"itself run: {cmdline.cli_command('triage', '--', sys.executable, text)}")
    return target.parse_spec(text)


def read_result(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


_DRAFT_KEYS = ('"exported_program"', '"propagate_real_tensors_provenance"', '"missing_fake_kernel"',
               '"mismatched_fake_kernel"', '"guard_added"')


def _export_log_score(path):
    """draft_export's own log (its report: failures + exported_program) first, then the largest."""
    try:
        with open(path, errors="replace") as f:
            text = f.read()
    except OSError:
        return (0, 0, 0)
    return (int('"exported_program"' in text), sum(text.count(k) for k in _DRAFT_KEYS), len(text))


def run_tlparse(trace_dirs, run_dir, timeout=120):
    """tlparse --export on draft_export's trace log -> <run_dir>/tlparse/index.html (or None)."""
    exe = proc.find_tool("tlparse")
    logs = [p for d in trace_dirs for p in glob.glob(os.path.join(d, "*.log"))]
    logs.sort(key=_export_log_score, reverse=True)
    if not exe or not logs:
        return None, ("tlparse not installed (pip install tlparse)" if not exe else "no trace log written")
    out = os.path.join(run_dir, "tlparse")
    pr = proc.run([exe, logs[0], "--export", "-o", out, "--overwrite", "--no-browser"], timeout=timeout,
                  stdout_path=os.path.join(run_dir, "tlparse.stdout"),
                  stderr_path=os.path.join(run_dir, "tlparse.stderr"))
    index = os.path.join(out, "index.html")
    if pr.ok and os.path.exists(index):
        # tlparse 0.4.x cannot parse some draft_export records of newer torch: then its page under-reports
        bad = (pr.read_stdout() + pr.read_stderr()).count("Failed to parse metadata JSON")
        if bad:
            return index, (f"tlparse could not parse {bad} trace record(s) (a tlparse/torch version mismatch): "
                           f"its page may miss problems listed here")
        return index, None
    return None, f"tlparse failed (exit {pr.returncode}{', timed out' if pr.timed_out else ''})"
