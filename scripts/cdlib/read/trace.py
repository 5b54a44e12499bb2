"""Parser for PyTorch's structured trace (TORCH_TRACE): files of glog-prefixed JSON lines, each
optionally followed by payload lines that start with a TAB.

    V1123 00:27:19.270000 6356 torch/_dynamo/convert_frame.py:304] {"dynamo_start": {...}, "frame_id": 0, ...}
    \t<payload line>

Stack frames refer to file names through a string table ({"str": [filename, index]}).
No torch import: traces recorded elsewhere (another torch version, a CI artifact) parse here.
"""
import dataclasses
import json
import os
import re

PREFIX = re.compile(r"^([VIWEC])(\d{4}) ([\d:.]+) (\d+) ([^\]]*?):(\d+)\] (\{.*\})$")
CONTEXT_KEYS = {"frame_id", "frame_compile_id", "attempt", "rank", "has_payload", "compiled_autograd_id",
                "pid", "timestamp"}
RANK_RE = re.compile(r"rank_(\d+)")


@dataclasses.dataclass
class Event:
    key: str                 # the event kind, e.g. "dynamo_start", "artifact", "compilation_metrics"
    data: object             # the value under that key
    meta: dict               # the whole JSON object (context keys: frame_id, frame_compile_id, attempt, rank)
    payload: str | None
    pid: int
    source: str              # torch source file:line that logged it
    file: str                # trace file it came from
    rank: int | None = None

    @property
    def compile_id(self):
        """"frame_id/frame_compile_id" as torch prints it (e.g. "0/1"), or None."""
        f, c = self.meta.get("frame_id"), self.meta.get("frame_compile_id")
        if f is None or c is None:
            return None
        cid = f"{f}/{c}"
        if self.meta.get("compiled_autograd_id") is not None:
            cid = f"!{self.meta['compiled_autograd_id']}/{cid}"
        return cid

    @property
    def artifact_name(self):
        return self.data.get("name") if self.key == "artifact" and isinstance(self.data, dict) else None

    def payload_json(self):
        if self.payload is None:
            return None
        try:
            return json.loads(self.payload)
        except ValueError:
            return None


class Trace:
    """All events of one or more trace files, with the string table resolved."""

    def __init__(self, events, strings, files):
        self.events = events
        self.strings = strings
        self.files = files

    def __iter__(self):
        return iter(self.events)

    def of(self, key):
        return [e for e in self.events if e.key == key]

    def artifacts(self, name):
        return [e for e in self.events if e.artifact_name == name]

    def filename(self, idx):
        if isinstance(idx, str):
            return idx
        return self.strings.get(idx, f"<file {idx}>")

    def frames(self, stack):
        """A trace stack ([{line, name, filename, loc}]) as [(file, line, name, loc)]."""
        out = []
        for fr in stack or []:
            out.append((self.filename(fr.get("filename")), fr.get("line"), fr.get("name"), fr.get("loc")))
        return out

    @property
    def ranks(self):
        return sorted({e.rank for e in self.events if e.rank is not None})

    def torch_version(self):
        for e in self.artifacts("torch_version"):
            j = e.payload_json()
            if isinstance(j, dict):
                return j.get("pytorch_version")
        return None


def looks_like_trace(fname):
    """True when the file's first non-blank line is a structured-trace line (any file name)."""
    try:
        with open(fname, "rb") as f:
            head = f.read(65536)
    except OSError:
        return False
    for line in head.decode("utf-8", "replace").splitlines():
        if line.strip():
            return bool(PREFIX.match(line))
    return False


def trace_files(path):
    """The trace files of a file or dir: every *.log under it (as TORCH_TRACE names them), plus files
    with other names (tlparse's test inputs are *.txt) whose first line is a trace line."""
    if not os.path.isdir(path):
        return [path] if os.path.isfile(path) else []
    out, seen = [], 0
    for root, dirs, names in os.walk(path):
        dirs.sort()
        for n in names:
            f = os.path.join(root, n)
            seen += 1
            if n.endswith(".log") or (seen <= MAX_SNIFF and os.path.isfile(f) and looks_like_trace(f)):
                out.append(f)
    return sorted(out)


MAX_SNIFF = 5000   # files of other names looked into per directory tree


def parse(path):
    """Parse a trace file or every trace file under a directory (trace_files). Malformed lines are skipped."""
    events, strings = [], {}
    files = trace_files(path)
    for fname in files:
        m = RANK_RE.search(os.path.basename(fname))
        file_rank = int(m.group(1)) if m else None
        _parse_file(fname, file_rank, events, strings)
    return Trace(events, strings, files)


def _parse_file(fname, file_rank, events, strings):
    cur = None
    payload = []

    def flush():
        if cur is not None:
            cur.payload = "\n".join(payload) if payload else None
            events.append(cur)

    with open(fname, encoding="utf-8", errors="replace") as f:
        for raw in f:
            line = raw.rstrip("\n")
            if line.startswith("\t"):
                if cur is not None:
                    payload.append(line[1:])
                continue
            m = PREFIX.match(line)
            if not m:
                continue
            try:
                meta = json.loads(m.group(7))
            except ValueError:
                continue
            if not isinstance(meta, dict):
                continue
            flush()
            cur, payload = None, []
            if "str" in meta and isinstance(meta["str"], list) and len(meta["str"]) == 2:
                name, idx = meta["str"]
                strings[idx] = name
                continue
            keys = [k for k in meta if k not in CONTEXT_KEYS]
            if not keys:
                continue
            key = keys[0]
            rank = meta.get("rank", file_rank)
            cur = Event(key=key, data=meta[key], meta=meta, payload=None, pid=int(m.group(4)),
                        source=f"{m.group(5)}:{m.group(6)}", file=fname, rank=rank)
        flush()
