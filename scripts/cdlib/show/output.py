"""Views: every subcommand builds one result (a dict, JSON-safe) and renders it here, as JSON
(--json) or compact Markdown (default). Markdown is for an agent whose context is scarce: facts,
not logs; paths to the full artifacts instead of their contents. Commands shown: cdlib/cmdline.py."""
import json
import os
import sys

from ..cmdline import clip


def emit(args, result, markdown):
    """Print the result: JSON document or Markdown. Also saves both into the run dir if known."""
    run_dir = result.get("run_dir")
    text = json.dumps(result, indent=2, default=str)
    if run_dir and os.path.isdir(run_dir):
        with open(os.path.join(run_dir, "report.json"), "w") as f:
            f.write(text + "\n")
        with open(os.path.join(run_dir, "report.md"), "w") as f:
            f.write(markdown.rstrip() + "\n")
    sys.stdout.write((text if getattr(args, "json", False) else markdown.rstrip()) + "\n")
    sys.stdout.flush()


def table(headers, rows):
    """A Markdown table; cells are escaped for pipes and newlines."""
    def cell(v):
        return str("" if v is None else v).replace("|", "\\|").replace("\n", " ")
    out = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    out += ["| " + " | ".join(cell(c) for c in r) + " |" for r in rows]
    return "\n".join(out)


def target_header(res):
    """The lines under a script-target report's title: target (status), torch, run dir, target error."""
    meta = []
    if res.get("target"):
        meta.append(f"target `{res['target']}`" + (f" ({res['target_status']})" if res.get("target_status") else ""))
    if res.get("torch_version"):
        meta.append(f"torch {res['torch_version']}")
    meta.append(f"run dir {res['run_dir']}")
    lines = [" · ".join(meta)]
    if res.get("target_error"):
        lines.append(f"target error: `{clip(res['target_error'], 300)}`")
    return lines
