"""Semantic differences between compiled and eager (knowledge/semantics.yaml): torch.compile behaving
differently from eager by design, so that a correct program fails or changes only when compiled.
Detected from what one run shows: the error text, the program's output (PyTorch's own warnings), the
trace (guards, recompile reasons, Dynamo's and Inductor's graphs) and the program's own source.

apply() records the findings in Report.semantics (JSON-safe dicts) and re-labels the first error when a
class explains it (side "semantics": no bisect); steps() and markdown() are what the report shows.
No torch import."""
import ast
import functools
import os
import re

from . import knowledge
from .verdict import compile_count_failure
from ..read.frames import is_user_file, parse_py_frames
from ..cmdline import clip, local_imports, scripts_of

SIDE = "semantics"
GENERIC = ("user_error", "accuracy_mismatch")   # failures that no specific triage row explains
_FILE_RE = re.compile(r"# File: (.+?):(\d+) in ([^,\n]+)")
_USER_SIDE = ("fails_eager_too", "before_compile")
_GUARD_TREE_RE = re.compile(r"^[|+\- ]*")


def classes():
    return knowledge.load("semantics")["classes"]


def _one(s):
    return " ".join(str(s or "").split())


def _ev(text, m, where=""):
    """The line of text holding match m, as evidence."""
    a = text.rfind("\n", 0, m.start()) + 1
    b = text.find("\n", m.end())
    line = text[a:b if b >= 0 else len(text)].strip()
    return f"{where}`{clip(line, 160)}`"


class _Run:
    """What one run shows, read lazily from the report, the trace and the captured output."""

    def __init__(self, rep, tr, stdout, stderr, live_trace=False):
        self.rep, self.tr, self.stdout, self.stderr = rep, tr, stdout or "", stderr or ""
        self.live_trace = live_trace   # the run was traced (TORCH_TRACE): an empty trace means nothing compiled

    @functools.cached_property
    def guards(self):   # [(compile_id, guards text)] of every compiled cache entry, without the source comments
        return [(e.compile_id or "?", "\n".join(_GUARD_TREE_RE.sub("", ln.split("  # ")[0]).rstrip()
                                                  for ln in (e.payload or "").splitlines()))
                for e in self.tr.of("dynamo_cpp_guards_str")]

    @functools.cached_property
    def recompile_guards(self):
        return [(r.compile_id, g.guard) for f in self.rep.recompiles for r in f.recompiles for g in r.failures]

    def payloads(self, key):
        return [(e.compile_id or "?", e.payload or "") for e in self.tr.of(key)]

    @functools.cached_property
    def traced_lines(self):   # user (file, line) that Dynamo traced: graph "# File:" lines, compiled frames
        out = []
        for _, p in self.payloads("dynamo_output_graph"):
            out += [(m.group(1), int(m.group(2))) for m in _FILE_RE.finditer(p)]
        for e in self.tr.of("compilation_metrics"):
            if e.data.get("co_filename") and e.data.get("co_firstlineno"):
                out.append((e.data["co_filename"], int(e.data["co_firstlineno"])))
        return [(f, ln) for f, ln in dict.fromkeys(out) if is_user_file(f)]

    @functools.cached_property
    def files(self):   # the program's own files: its script, its traceback's, the traced frames'
        fs = scripts_of(self.rep.command)
        fs += [f.file for f in parse_py_frames(self.stderr)]
        fs += [f for f, _ in self.traced_lines]
        # and the program's own modules its script imports (blind A/B batch 23: the patch of a class's method
        # was in an ablation helper that neither the traceback nor the traced frames enter)
        fs += [m for f in scripts_of(self.rep.command) if os.path.isfile(f) for m in local_imports(f)]
        return [f for f in dict.fromkeys(fs) if is_user_file(f) and os.path.isfile(f)]


@functools.lru_cache(maxsize=64)
def _source(path):
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
        return text, ast.parse(text)
    except (OSError, SyntaxError, ValueError, UnicodeDecodeError):
        return None, None


def _traced_spans(run):
    """{file: [(first, last)]}: the line spans of the user functions Dynamo traced."""
    spans = {}
    for path, line in run.traced_lines:
        text, tree = _source(path)
        if tree is None:
            continue
        best = None
        for n in ast.walk(tree):
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)) and \
                    min([n.lineno] + [d.lineno for d in getattr(n, "decorator_list", [])]) <= line <= n.end_lineno:
                if best is None or n.lineno >= best.lineno:
                    best = n
        if best is not None:
            spans.setdefault(path, set()).add((best.lineno, best.end_lineno))
    return spans


def _search_source(run, rx, traced, after=None):
    """The first line of the program's files (traced: of the functions Dynamo traced; the whole files
    when there is no trace, e.g. a recorded run) that matches rx, as evidence. after: {path: line}, only
    lines below it count (and only in those files). A (?s) pattern is searched over each traced function
    body (the whole file without a trace) instead of line by line; its line is that of a group named `at`,
    when there is one, else where the match starts."""
    # a trace whose compiled frames are all library code (DDP's own forward) traced nothing of the program's:
    # no line of it counts (a module-level `os.environ` read was taken for one inside a compiled function)
    spans = _traced_spans(run) if traced and (run.traced_lines or list(run.tr.of("compilation_metrics"))) else None
    if traced and spans is None and run.live_trace and not run.rep.used_compile:
        # a live run in which Dynamo never started traced no line (blind A/B batch 38's AOTI replay: a
        # FileNotFoundError before any compile was called "os.environ read inside a compiled function")
        return None
    for path in (spans if spans is not None else run.files):
        if after is not None and path not in after:
            continue
        text, _ = _source(path)
        if rx.flags & re.DOTALL:   # a pattern over several lines ((?s)): each traced function's body as one text
            lines = (text or "").splitlines()
            for a, b in sorted(spans[path] if spans is not None else [(1, len(lines))]):
                m = rx.search("\n".join(lines[a - 1:b]))
                if m:   # the line of its (?P<at>...) group when it has one (the decisive line, not the first)
                    i = a + m.string.count("\n", 0, m.start("at") if "at" in rx.groupindex else m.start())
                    return f"{os.path.basename(path)}:{i} `{clip(lines[i - 1].strip(), 140)}`"
            continue
        for i, ln in enumerate((text or "").splitlines(), 1):
            if after is not None and i <= after[path]:
                continue
            if (spans is None or any(a <= i <= b for a, b in spans[path])) and rx.search(ln):
                return f"{os.path.basename(path)}:{i} `{clip(ln.strip(), 140)}`"
    return None


_COMPILED_NAME = re.compile(r"^\s*((?:self\.)?\w+)\s*=\s*torch\.compile\(", re.M)


def _compiled_names(run):
    """{path: {name: line}}: the names each of the program's own files assigns a torch.compile(...) result
    to (`model = torch.compile(model)`), with the line of the first such assignment."""
    out = {}
    for path in run.files:
        text, _ = _source(path)
        for m in _COMPILED_NAME.finditer(text or ""):
            out.setdefault(path, {}).setdefault(m.group(1), text.count("\n", 0, m.start(1)) + 1)
    return out


def _signal(kind, pat, run, err):
    """Evidence (a string) when signal `kind` with regex `pat` holds for this run, else None."""
    if kind == "failure":
        # (not a failing check that counts graphs or recompiles: those are what it counts, review of batch 66)
        return "" if pat and err is not None and err.category in GENERIC \
            and not compile_count_failure(err, run.rep) else None
    if kind == "differs":   # triage --vs-eager: compiled and eager printed different results
        return "" if pat and (run.rep.vs_eager or {}).get("differ") else None
    rx = re.compile(pat, re.M) if "{compiled}" not in pat else None
    if kind in ("error", "output"):
        text = run.stderr if kind == "error" else run.stdout + "\n" + run.stderr
        if kind == "error" and err is None:
            return None
        names = {os.path.basename(f) for f in run.files}
        for m in rx.finditer(text):   # a (?P<file>...) group: only a place in the program's own files counts
            if "file" not in rx.groupindex or os.path.basename(m.group("file")) in names:
                return _ev(text, m)
        return None
    if kind == "recompile":
        for cid, g in run.recompile_guards:
            if rx.search(g):
                return f"recompile {cid}: guard `{clip(g, 140)}` failed"
        return None
    if kind in ("guards_mixed", "guards_none"):
        hits = {cid: rx.search(text) for cid, text in run.guards}
        if kind == "guards_none":
            return None if not hits or any(hits.values()) else \
                f"none of the {len(hits)} compiled graphs has such a guard (compiled without them)"
        frames = {}
        for cid, m in hits.items():
            frames.setdefault(cid.rsplit("/", 1)[0], []).append((cid, m))
        for entries in frames.values():
            with_ = [(c, m) for c, m in entries if m]
            without = [c for c, m in entries if not m]
            if with_ and without:
                c, m = with_[0]
                text = dict(run.guards)[c]
                src = re.search(r"source=([^,\s]+)", _ev(text, m))
                what = f"`{src.group(1)}`" if src else _ev(text, m)
                return (f"cache entry {c} checks {what}; {', '.join(without[:3])} has no such guard "
                        "(compiled without it)")
        return None
    if kind == "aot_graph":   # AOTAutograd's graphs (aot_eager, Inductor): a backend that functionalizes
        for key in ("aot_inference_graph", "aot_forward_graph", "aot_joint_graph"):
            for cid, text in run.payloads(key):
                m = rx.search(text)
                if m:
                    return _ev(text, m, f"AOTAutograd graph {cid}: ")
        return None
    if kind in ("dynamo_graph", "inductor_code"):
        key = "dynamo_output_graph" if kind == "dynamo_graph" else "inductor_output_code"
        for cid, text in run.payloads(key):
            m = rx.search(text)
            if m:
                return _ev(text, m, f"{'Dynamo graph' if kind == 'dynamo_graph' else 'Inductor code'} {cid}: ")
        return None
    if kind in ("source", "source_traced"):
        if "{compiled}" in pat:   # a name the program assigned from torch.compile(...), used below that line
            for path, names in _compiled_names(run).items():   # (model.state_dict() before compiling is the
                for name, line in names.items():                # module's own: seen in a CompileQA answer)
                    rx = re.compile(pat.replace("{compiled}", re.escape(name)), re.M)
                    hit = _search_source(run, rx, kind == "source_traced", after={path: line})
                    if hit:
                        return hit
            return None
        return _search_source(run, rx, kind == "source_traced")
    raise ValueError(f"knowledge/semantics.yaml: unknown signal {kind!r}")


def _pytorch_text(c, run, alt):
    """PyTorch's own message for this class: [whole sentences] (the groups of `pytorch`), or None."""
    if not c.get("pytorch"):
        return None
    text = run.stderr if "error" in alt else run.stdout + "\n" + run.stderr
    if "error" in alt:   # the last exception only
        i = text.rfind("Traceback (most recent call last)")
        text = text[i:] if i >= 0 else text
        text = re.split(r"\n(?:[VIWEC]\d{4} |During handling|The above exception)", text)[0]
    m = re.search(c["pytorch"], text)
    if not m:
        return None
    return [_one(g) for g in (m.groups() or (m.group(0),)) if g] or None


def apply(rep, tr, stdout="", stderr="", live_trace=False):
    """Test every class on this run: findings go to rep.semantics; the first error is re-labelled when
    a class explains it. live_trace: the run had a trace directory (else the program's whole files stand in for
    what Dynamo traced, e.g. a recorded run)."""
    run = _Run(rep, tr, stdout, stderr, live_trace)
    failed = rep.exit_code not in (0, None) and not rep.timed_out
    err = rep.errors[0] if failed and rep.errors else None
    claimed, replaced = False, set()
    rep.semantics = []
    for c in classes():
        if c["id"] in replaced:   # a more specific class found first (its `replaces`) says what to do instead
            continue
        if c.get("unless_library_break") and _library_break_code(rep, c["unless_library_break"]):
            continue
        for alt in c["detect"]:
            seen = _holds(alt, run, err)
            if seen is not None:
                break
        else:
            continue
        explains = not claimed and err is not None and ("error" in alt or err.category in GENERIC)
        if not explains and not c.get("silent"):
            continue
        parts = _pytorch_text(c, run, alt)
        f = _finding(c, alt, seen, parts, explains)
        rep.semantics.append(f)
        replaced.update(c.get("replaces") or [])
        if explains:
            claimed = True
            f["error_was"] = {k: getattr(err, k) for k in ("category", "title", "side", "skill", "advice",
                                                            "next_command", "message")}
            err.category, err.title, err.side, err.skill = c["id"], c["title"], SIDE, None
            err.advice, err.next_command = f["why"], None
            if parts and "error" in alt:   # PyTorch's sentences whole, without the stack trace between them
                err.message = "\n".join(parts)
    return rep.semantics


def _library_break_code(rep, pat):
    """Whether a graph break's stack has a line of library code (not the program's) matching `pat`: the library did
    the thing a class is about inside the compiled call, and that break's own workaround covers it."""
    rx = re.compile(pat)
    return any(b.in_library and any(not is_user_file(loc.file) and rx.search(loc.code or "") for loc in b.stack)
               for b in rep.graph_breaks)


def _holds(alt, run, err):
    """{signal: evidence} when every signal of one detect alternative holds, else None (checked in
    order, cheapest first: stops at the first that does not hold)."""
    seen = {}
    for k, v in alt.items():
        seen[k] = _signal(k, v, run, err)
        if seen[k] is None:
            return None
    return seen


def _finding(c, alt, seen, parts, explains):
    said = " … ".join(parts) if parts else None
    return {"id": c["id"], "title": c["title"], "device": c.get("device", "cpu"), "explains_error": explains,
            "by": "error text" if "error" in alt else ("warning" if "output" in alt else "evidence"),
            "pytorch": said, "seen": [s for k, s in seen.items() if s and not (said and k in ("error", "output"))],
            "why": _one(c["why"]), "fix": _one(c["fix"]), "verify": _one(c["verify"])}


def _key_guarded(seen, run):
    """Whether a compiled graph guards on the dict key the evidence line reads (`d["temperature"]`): the key was
    present while tracing (a guard `...['temperature']`), so the missing-key class is not it (review of 0.33.123: a
    global CFG["scale"] read under try/except KeyError, present all along, came first in Next)."""
    m = re.search(r"""\[["']([^"'\]]+)["']\]""", " ".join(str(v) for v in (seen or {}).values()))
    return bool(m) and any(f"['{m.group(1)}']" in text for _, text in run.guards)


def apply_differs(rep, tr, stdout="", stderr=""):
    """After triage --vs-eager found that compiled and eager print different results: the classes seen
    with that (a `differs` signal), as findings that explain no error. Returns the new findings."""
    run = _Run(rep, tr, stdout, stderr)
    have, new = {f["id"] for f in rep.semantics}, []
    have |= {r for i in list(have) for r in knowledge_class(i).get("replaces") or []}
    for c in classes():
        for alt in (a for a in c["detect"] if "differs" in a and c["id"] not in have):
            seen = _holds(alt, run, None)
            if seen is not None and c.get("unless_key_guarded") and _key_guarded(seen, run):
                continue
            if seen is not None:
                new.append(_finding(c, alt, seen, _pytorch_text(c, run, alt), False))
                have |= {c["id"], *(c.get("replaces") or [])}
    rep.semantics += new
    return new


def retract(rep, cid):
    """A class measured not to explain the run (one more run with its cause switched off still fails): its finding
    goes, and the first error it had re-labelled gets back what it was."""
    for f in [f for f in rep.semantics if f["id"] == cid]:
        rep.semantics.remove(f)
        was = f.get("error_was")
        if was and rep.errors and rep.errors[0].category == cid:
            for k, v in was.items():
                setattr(rep.errors[0], k, v)


def current(rep):
    """The findings that still hold after the verdict: one that explained the error no longer does when
    the error happens without torch.compile too (or was re-labelled), except a class seen from PyTorch's
    warning: the eager check still calls through the torch.compile wrapper that the warning is about."""
    v = (rep.verdict or {}).get("kind")
    e0 = rep.errors[0] if rep.errors else None
    out = []
    for f in rep.semantics:
        if f["explains_error"]:
            kept = f["by"] == "warning" and v == "fails_eager_too"
            if not kept and (v in _USER_SIDE or e0 is None or e0.category != f["id"]):
                if f["by"] == "error text" or not knowledge_class(f["id"]).get("silent"):
                    continue
                f = dict(f, explains_error=False)
        out.append(f)
    return out


def knowledge_class(cid):
    return next(c for c in classes() if c["id"] == cid)


def steps(rep):
    """The Next lines: each class's fix and how to verify it (never a bisect). Called whenever the
    report's next steps are made (after the verdict too): the findings are brought up to date."""
    rep.semantics = current(rep)
    out = []
    for f in rep.semantics:
        if f["id"] == "compiled_rng":   # dropout left on at inference: the program's bug, which the numbers only show
            out += _dropout_at_inference(rep)
        out.append({"why": f"[{f['id']}] {f['fix']} Verify: {f['verify']}", "skill": None, "command": None})
    return out


def _dropout_at_inference(rep):
    """[a Next step] when the program puts a module in eval mode but calls the functional dropout without `training`
    (blind A/B batch 43: an ECG classifier's F.dropout in forward stayed on under model.eval(); the parity gate
    re-seeded before each call, so eager repeated itself; compiled_rng's fallback_random fix would have passed the
    gate with dropout still on); else []."""
    from . import program_code
    from ..read import never_ran
    files = program_code.program_files(rep)
    drops, evals = never_ran.functional_dropouts(files), never_ran.eval_calls(files)
    if not drops or not evals:
        return []
    where = lambda xs: ", ".join(f"{os.path.basename(p)}:{ln}" for p, ln in xs[:3])   # noqa: E731
    return [{"why": knowledge.advice("functional_dropout_in_eval", at=where(drops), evals=where(evals)),
             "skill": None, "command": None}]


def markdown(rep):
    fs = current(rep)
    if not fs:
        return []
    out = ["\n## Compiled differs from eager by design (not a compiler bug)"]
    for i, f in enumerate(fs, 1):
        if f["explains_error"]:
            tag = ("explains error 1" if f["by"] == "error text"
                   else "the likely cause of error 1 (the Verify line confirms it)")
        else:
            tag = "the run did not fail on it: a likely silent difference from eager"
        out.append(f"{i}. **{f['title']}** `[{f['id']}]` — {tag}")
        if f.get("pytorch"):
            out.append(f"   PyTorch: {f['pytorch']}")
        out += [f"   Seen: {s}" for s in f["seen"][:3]]
        out += [f"   Why: {f['why']}", f"   Fix: {f['fix']}", f"   Verify: {f['verify']}"]
    return out
