"""What minify's graph stage finds in its run dir (no torch import): the minifier_launcher.py a dump
run wrote (named in its stderr, else the newest under the debug dir), the minifier's last checkpoint,
the tail of a log file; and one run of PyTorch's minifier on the launcher."""
import os
import re

from . import proc


def launcher_from(stderr_text, debug_dir):
    m = None
    for m in re.finditer(r"Writing minified repro to:\s*\n(?:[VIWEC]\d{4} [^\]]*\] (?:\[[^\]]*\] )?)?(\S+minifier_launcher\.py)",
                         stderr_text):
        pass
    if m and os.path.exists(m.group(1)):
        return m.group(1)
    found = []
    for root, _, files in os.walk(debug_dir):
        if "minifier_launcher.py" in files:
            p = os.path.join(root, "minifier_launcher.py")
            found.append((os.path.getmtime(p), p))
    return max(found)[1] if found else None


def read(path, limit=2_000_000):
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            f.seek(max(0, f.tell() - limit))
            return f.read().decode("utf-8", "replace")
    except OSError:
        return ""


def last_checkpoint(debug):
    best = None
    for root, _, files in os.walk(debug):
        if os.path.basename(root) == "checkpoints":
            for f in files:
                if re.match(r"^\d+\.py$", f):
                    p = os.path.join(root, f)
                    key = (os.path.getmtime(p), -int(f[:-3]))
                    if best is None or key > best[0]:
                        best = (key, p)
    return best[1] if best else None


def run_minifier(isolated, tag, *, python, launcher, after, nodes, env, run_dir, timeout):
    """`minifier_launcher.py minify` in the run dir (in-process queries unless isolated or after Dynamo)."""
    cmd = [python, launcher, "minify"] + ([] if isolated or after != "aot" else ["--no-isolate"])
    proc.progress(f"minify 3/4: PyTorch's minifier on {nodes if nodes is not None else '?'} FX nodes "
                  f"({'isolated' if isolated or after != 'aot' else 'in-process'}); cwd {run_dir}")
    return proc.run(cmd, env_add=env, cwd=run_dir, timeout=timeout,
                    stdout_path=os.path.join(run_dir, f"{tag}.stdout"),
                    stderr_path=os.path.join(run_dir, f"{tag}.stderr"))
