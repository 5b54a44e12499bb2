"""Record the ground truth of the Hugging Face test bed with plain PyTorch logging only
(TORCH_LOGS=graph_breaks,recompiles), independent of the plugin.

    python tests/hf/record_ground_truth.py [NAME ...]      # default: every tests/hf/*.py program

For each program it writes tests/hf/ground_truth/<name>.json: every graph-break site (file:line as torch
printed it, the reason, gb_type and GB id, hints, the user stack torch printed, the compile ids that hit
it) and every recompile (function, its file:line, the new compile id and each failed guard), plus the
torch / transformers versions, the exit code and the wall time of the run. Paths are shortened:
site-packages/... -> the part after site-packages/, files of this repository -> relative to its root."""
import json
import os
import re
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
OUT = os.path.join(HERE, "ground_truth")
PREFIX = re.compile(r"^[VIWEDC]\d{4} [\d:.]+ \d+ \S+:\d+\] \[([^\]]+)\] \[__(graph_breaks|recompiles)\] ?(.*)$")
SITE = re.compile(r"^Graph break(?: \(user stack suppressed due to duplicate graph break\))? in user code at (.+):(\d+)$")
RECOMPILE = re.compile(r"^Recompiling function (.+) in (.+):(\d+)$")
FAILURE = re.compile(r"^\s*- (\d+/\d+): (.*)$")
FRAME = re.compile(r'^\s*File "(.+)", line (\d+), in (.+)$')
GB_URL = re.compile(r"/gb/(gb\d+)\.html")


def short(path):
    path = os.path.abspath(path) if os.path.isabs(path) else path
    if "site-packages/" in path:
        return path.split("site-packages/", 1)[1]
    if path.startswith(ROOT + os.sep):
        return os.path.relpath(path, ROOT)
    return path


def records(text):
    """Group the prefixed TORCH_LOGS lines into (artifact, compile_id, [lines]) records."""
    recs = []
    for raw in text.splitlines():
        m = PREFIX.match(raw)
        if not m:
            continue
        cid, art, body = m.groups()
        starts = (art == "graph_breaks" and body.startswith("Graph break")) or \
                 (art == "recompiles" and body.startswith("Recompiling function"))
        if starts or not recs or recs[-1][0] != art:
            recs.append((art, cid, []))
        recs[-1][2].append(body)
    return recs


def parse_break(cid, lines):
    m = SITE.match(lines[0])
    if not m:
        return None
    b = {"site": f"{short(m.group(1))}:{m.group(2)}", "file": short(m.group(1)), "line": int(m.group(2)),
         "compile_ids": [cid], "reason": "", "gb_type": "", "gb_id": None, "hints": [], "user_stack": []}
    i = 1
    if i < len(lines) and lines[i].startswith("Graph Break Reason:"):
        b["reason"] = lines[i][len("Graph Break Reason:"):].strip()
        i += 1
        while i < len(lines) and not lines[i].strip():
            i += 1
        if i < len(lines):
            b["gb_type"] = lines[i].strip()
    in_stack = False
    for ln in lines[1:]:
        s = ln.strip()
        if s.startswith("Hint:"):
            b["hints"].append(s[len("Hint:"):].strip())
        u = GB_URL.search(s)
        if u:
            b["gb_id"] = u.group(1).upper()
        if s == "User code traceback:":
            in_stack = True
            continue
        f = FRAME.match(ln) if in_stack else None
        if f:
            b["user_stack"].append({"file": short(f.group(1)), "line": int(f.group(2)), "function": f.group(3)})
    return b


def parse_recompile(cid, lines):
    m = RECOMPILE.match(lines[0])
    if not m:
        return None
    r = {"function": m.group(1), "file": short(m.group(2)), "line": int(m.group(3)), "compile_id": cid,
         "failures": []}
    for ln in lines[1:]:
        f = FAILURE.match(ln)
        if f and not f.group(2).startswith(("User stack trace", "  File", "    ")):
            guard, _, comment = f.group(2).partition("  # ")
            r["failures"].append({"entry": f.group(1), "guard": guard.strip(), "comment": comment.strip()})
    return r


def ground_truth(text):
    breaks, recompiles = {}, []
    for art, cid, lines in records(text):
        if art == "graph_breaks":
            b = parse_break(cid, lines)
            if b is None:
                continue
            key = (b["site"], b["gb_id"])
            if key in breaks:
                breaks[key]["count"] += 1
                breaks[key]["compile_ids"] += [c for c in b["compile_ids"] if c not in breaks[key]["compile_ids"]]
                if not breaks[key]["user_stack"]:
                    breaks[key]["user_stack"] = b["user_stack"]
            else:
                b["count"] = 1
                breaks[key] = b
        else:
            r = parse_recompile(cid, lines)
            if r is not None:
                recompiles.append(r)
    return list(breaks.values()), recompiles


def versions():
    out = subprocess.run([sys.executable, "-c", "import torch, transformers; print(torch.__version__); "
                          "print(transformers.__version__)"], capture_output=True, text=True, check=True)
    t, tf = out.stdout.split()
    return t, tf


def record(name, torch_version, tf_version):
    path = os.path.join(HERE, name + ".py")
    env = dict(os.environ, TORCH_LOGS="graph_breaks,recompiles", PYTHONUNBUFFERED="1")
    t0 = time.monotonic()
    p = subprocess.run([sys.executable, path], capture_output=True, text=True, env=env, cwd=ROOT, timeout=1800)
    wall = time.monotonic() - t0
    breaks, recompiles = ground_truth(p.stderr)
    gt = {"program": f"tests/hf/{name}.py", "torch": torch_version, "transformers": tf_version,
          "python": sys.version.split()[0], "exit_code": p.returncode, "wall_s": round(wall, 1),
          "torch_logs": "graph_breaks,recompiles", "graph_breaks": breaks, "recompiles": recompiles}
    if p.returncode:
        gt["stderr_tail"] = p.stderr[-2000:]
    with open(os.path.join(OUT, name + ".json"), "w") as f:
        json.dump(gt, f, indent=1)
        f.write("\n")
    print(f"{name}: exit {p.returncode}, {wall:.0f} s, {len(breaks)} break sites, {len(recompiles)} recompiles",
          flush=True)


def main(argv):
    names = argv or sorted(f[:-3] for f in os.listdir(HERE)
                           if f.endswith(".py") and f != os.path.basename(__file__))
    os.makedirs(OUT, exist_ok=True)
    t, tf = versions()
    for name in names:
        record(name, t, tf)


if __name__ == "__main__":
    main(sys.argv[1:])
