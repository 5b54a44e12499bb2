"""Record the ground truth of the Hugging Face test bed with plain PyTorch logging only
(TORCH_LOGS=graph_breaks,recompiles), independent of the plugin.

    python tests/hf/record_ground_truth.py [NAME ...]      # default: every tests/hf/*.py program
    python tests/hf/record_ground_truth.py --from-logs DIR [NAME ...]   # re-parse DIR/<name>.log, no run

The raw TORCH_LOGS output of each run is kept in $HF_GT_LOG_DIR/<name>.log (default: the system temp dir).

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
import tempfile
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
         "compile_ids": [cid], "reason": "", "gb_type": "", "gb_id": None, "gb_ids": [], "hints": [],
         "frame_skipped": False, "user_stack": []}
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
        if u and u.group(1).upper() not in b["gb_ids"]:
            b["gb_ids"].append(u.group(1).upper())      # the break first, then any it led to (GB7000)
        if "falling back to eager" in s or "frame skipped" in s:
            b["frame_skipped"] = True
        if s == "User code traceback:":
            in_stack = True
            continue
        f = FRAME.match(ln) if in_stack else None
        if f:
            b["user_stack"].append({"file": short(f.group(1)), "line": int(f.group(2)), "function": f.group(3)})
    b["gb_id"] = b["gb_ids"][0] if b["gb_ids"] else None
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
                breaks[key]["gb_ids"] += [i for i in b["gb_ids"] if i not in breaks[key]["gb_ids"]]
                breaks[key]["frame_skipped"] |= b["frame_skipped"]
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


LOG_DIR = os.environ.get("HF_GT_LOG_DIR", os.path.join(tempfile.gettempdir(), "hf-ground-truth-logs"))


def record(name, torch_version, tf_version, from_logs=None):
    if from_logs:
        with open(os.path.join(from_logs, name + ".log")) as f:
            meta, _, stderr = f.read().partition("\n")
        meta = json.loads(meta)
        returncode, wall = meta["exit_code"], meta["wall_s"]
        torch_version, tf_version = meta["torch"], meta["transformers"]
    else:
        path = os.path.join(HERE, name + ".py")
        env = dict(os.environ, TORCH_LOGS="graph_breaks,recompiles", PYTHONUNBUFFERED="1")
        t0 = time.monotonic()
        p = subprocess.run([sys.executable, path], capture_output=True, text=True, env=env, cwd=ROOT, timeout=1800)
        wall, returncode, stderr = time.monotonic() - t0, p.returncode, p.stderr
        os.makedirs(LOG_DIR, exist_ok=True)
        with open(os.path.join(LOG_DIR, name + ".log"), "w") as f:
            f.write(json.dumps({"exit_code": returncode, "wall_s": round(wall, 1), "torch": torch_version,
                                "transformers": tf_version}) + "\n" + stderr)
    breaks, recompiles = ground_truth(stderr)
    gt = {"program": f"tests/hf/{name}.py", "torch": torch_version, "transformers": tf_version,
          "python": sys.version.split()[0], "exit_code": returncode, "wall_s": round(wall, 1),
          "torch_logs": "graph_breaks,recompiles", "graph_breaks": breaks, "recompiles": recompiles}
    if returncode:
        gt["stderr_tail"] = stderr[-2000:]
    with open(os.path.join(OUT, name + ".json"), "w") as f:
        json.dump(gt, f, indent=1)
        f.write("\n")
    print(f"{name}: exit {returncode}, {wall:.0f} s, {len(breaks)} break sites, {len(recompiles)} recompiles",
          flush=True)


def main(argv):
    from_logs = None
    if argv[:1] == ["--from-logs"]:
        from_logs, argv = argv[1], argv[2:]
    names = argv or sorted(f[:-3] for f in os.listdir(HERE)
                           if f.endswith(".py") and f != os.path.basename(__file__))
    os.makedirs(OUT, exist_ok=True)
    t, tf = (None, None) if from_logs else versions()
    for name in names:
        record(name, t, tf, from_logs)


if __name__ == "__main__":
    main(sys.argv[1:])
