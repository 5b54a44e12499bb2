"""The knowledge files (knowledge/*.yaml), loaded once, and the classifiers over them.
No torch import: the graph-break registry is read as JSON from torch's install dir."""
import functools
import importlib.util
import json
import os
import re

import yaml

from .. import KNOWLEDGE_DIR


_ADVICE_REF = re.compile(r"\{advice:(\w+)\}")


@functools.lru_cache(maxsize=None)
def load(name):
    """knowledge/NAME.yaml, with every {advice:KEY} in its texts replaced by that entry of advice.yaml."""
    with open(os.path.join(KNOWLEDGE_DIR, f"{name}.yaml"), encoding="utf-8") as f:
        data = yaml.safe_load(f)
    return data if name == "advice" else _expand(data)


def _expand(v):
    if isinstance(v, str):
        return _ADVICE_REF.sub(lambda m: " ".join(load("advice")[m.group(1)].split()), v)
    if isinstance(v, list):
        return [_expand(x) for x in v]
    if isinstance(v, dict):
        return {k: _expand(x) for k, x in v.items()}
    return v


def advice(key, **fmt):
    """One report text of knowledge/advice.yaml, on one line; fmt fills its {placeholders}."""
    text = " ".join(load("advice")[key].split())
    return text.format(**fmt) if fmt else text


@functools.lru_cache(maxsize=None)
def _compiled(pattern):
    return re.compile(pattern, re.MULTILINE)


# ---- error triage -------------------------------------------------------------------------

def triage_rows():
    return load("triage")["rows"]


def triage_row(row_id):
    for r in triage_rows():
        if r["id"] == row_id:
            return r
    raise KeyError(row_id)


def triage_row_of(category):
    """The triage row of an error's category, or {} for a category that is no row (a measured class)."""
    return next((r for r in triage_rows() if r["id"] == category), {})


def classify_error(signature, output="", signal=None):
    """First triage row matching the error. signature: "<Type>: <message>" plus its traceback;
    output: the program's whole output (searched only by rows with scan_output)."""
    for row in triage_rows():
        if signal and signal in (row.get("signals") or []):
            return row
        for pat in row.get("patterns") or []:
            rx = _compiled(pat)
            if signature and rx.search(signature):
                return row
            if row.get("scan_output") and output and rx.search(output):
                return row
    return triage_row("user_error")


def render_command(row, cli, target):
    """The row's command for this run; cli: cmdline.cli_command() (the default), target: the program's
    command line (cmdline.command_line)."""
    cmd = row.get("command")
    if not cmd:
        return None
    from ..cmdline import cli_command, template_command
    if cli != cli_command() or not cmd.startswith("{cli} "):
        return cmd.replace("{cli}", cli).replace("{target}", target or "<your command>")
    return template_command(cmd, target)


# ---- graph breaks -------------------------------------------------------------------------

def graph_break_recipe(gb_id, text):
    """Recipe for a break: by registry id, else the first fallback whose pattern matches text
    (gb_type / reason). Returns dict(category, fix, code?, escape?, gb_id?)."""
    data = load("graph_breaks")
    recipes = data["recipes"]
    if gb_id and gb_id in recipes:
        r = recipes[gb_id]
        # a recipe's variant for what the break's text names (GB0059: print, or a builtin over a generator)
        v = next((v for v in r.get("variants") or [] if _compiled(v["when"]).search(text or "")), None)
        base = {k: x for k, x in r.items() if k != "variants"}
        if v:
            base = {k: x for k, x in base.items() if k not in ("code", "escape")} | \
                {k: x for k, x in v.items() if k != "when"}
        return dict(base, recipe_id=gb_id)
    for fb in data["fallbacks"]:
        if _compiled(fb["pattern"]).search(text or ""):
            if "use" in fb:
                return dict(recipes[fb["use"]], recipe_id=fb["use"])
            return {k: v for k, v in fb.items() if k != "pattern"}
    return {"category": "other graph break", "fix": ""}


_SIZE_CALLS = (r"(?:zeros|ones|empty|full|arange|rand|randn|randint|randperm|eye|linspace|view|reshape|expand|"
               r"repeat|repeat_interleave|narrow|split|chunk|new_zeros|new_ones|new_empty|new_full|tile|unflatten|topk)")
_SCALAR = r"(?:\bint\(|\.item\(\)|\.tolist\(\)|\blen\()"


def scalar_use(statement):
    """How the break line uses a data-dependent value: "size", "branch", "random_branch" (a branch on
    random.random()), "print", "histogram" (bincount), "mask" or None.
    statement: the break line, then the next lines of the file (to follow an assigned name)."""
    lines = (statement or "").splitlines() or [""]
    first = lines[0].strip()
    if re.match(r"(if|elif|while|assert)\b", first) or re.search(r"\bif\b.*\belse\b", first):
        # a Python random number is a graph input under torch.compile (random_value_N)
        # (the stdlib's module only, not np.random; the functions Dynamo turns into graph inputs)
        return "random_branch" if re.search(r"(?<![\w.])random\.(random|uniform|randint|randrange)\(", first) \
            else "branch"
    if re.match(r"(print|logger\.|logging\.|log\.|warnings\.warn)", first) or re.search(r"\bprint\(", first):
        return "print"
    if re.search(r"\bbincount\(", first):
        return "histogram"
    if re.search(r"\bnonzero\(|masked_select\(|\bunique\(|argwhere\(|\[[^\]]*(>|<|==|!=|mask)[^\]]*\]", first):
        return "mask"
    size_here = rf"{_SIZE_CALLS}\([^)]*{_SCALAR}|\[[^\]]*:[^\]]*{_SCALAR}|\[[^\]]*{_SCALAR}[^\]]*:|range\([^)]*{_SCALAR}"
    if re.search(size_here, first):
        return "size"
    m = re.match(r"(\w+)\s*=\s*.*" + _SCALAR, first)
    if m:
        n = re.escape(m.group(1))
        for ln in lines[1:]:
            s = ln.strip()
            if re.match(rf"(if|elif|while|assert)\b.*\b{n}\b", s):
                return "branch"
            if re.search(rf"{_SIZE_CALLS}\([^)]*\b{n}\b|\[[^\]]*:\s*{n}\b|\[\s*{n}\s*:|range\([^)]*\b{n}\b", s):
                return "size"
            if re.match(rf"(print|logger\.|logging\.)\S*\(.*\b{n}\b", s):
                return "print"
            if re.match(r"(def|class) ", s):
                break
    return None


def construct_recipe(gb_id, statement, gb_type=""):
    """The recipe for how the break line uses the value (knowledge/graph_breaks.yaml `constructs`),
    when it applies to this break; None otherwise."""
    # a random op given generator=: the Generator is what Dynamo cannot trace (GB0055); the call may span lines
    whole, depth = [], 0
    for ln in (statement or "").splitlines()[:12]:
        whole.append(ln)
        depth += ln.count("(") + ln.count("[") - ln.count(")") - ln.count("]")
        if depth <= 0:
            break
    uses = [u for u in ("saved_tensors_hooks" if re.search(r"\bsaved_tensors_hooks\(", "\n".join(whole)) else None,
                        "generator" if re.search(r"\bgenerator\s*=", "\n".join(whole)) else None,
                        "warn" if re.search(r"\bwarnings\.warn\(", "\n".join(whole)) else None,
                        scalar_use(statement)) if u]
    for c in load("graph_breaks").get("constructs") or []:
        if c["use"] not in uses:
            continue
        if any(a == gb_id or (not a.startswith("GB") and re.search(a, gb_type or "", re.I)) for a in c["applies_to"]):
            return {k: v for k, v in c.items() if k not in ("applies_to",)} | {"recipe_id": f"construct:{c['use']}"}
    return None


def library_settings(library, text, source="graph_breaks", kind=None):
    """Library settings whose pattern matches `text`: ones that avoid a graph-breaking library path
    (graph_breaks.yaml), or (source="recompiles", kind=the guard's kind) that keep a library's recompiling
    inputs stable (recompiles.yaml)."""
    return [s for s in load(source).get("library_settings") or []
            if s["library"] == library and s.get("kind") == kind and re.search(s["pattern"], text or "")]


def setting_label(row):
    """How a Next step introduces a library_settings row: "a library setting avoids it", or the row's label
    (a compile layout is no setting)."""
    return row.get("label") or "a library setting avoids it"


@functools.lru_cache(maxsize=None)
def installed_torch_version():
    """(major, minor) of the torch that `import torch` would load, read from torch/version.py (no
    import); None when there is none."""
    try:
        spec = importlib.util.find_spec("torch")
        with open(os.path.join(os.path.dirname(spec.origin), "version.py"), encoding="utf-8") as f:
            m = re.search(r"__version__\s*=\s*['\"](\d+)\.(\d+)", f.read())
        return (int(m.group(1)), int(m.group(2))) if m else None
    except (ImportError, ValueError, AttributeError, TypeError, OSError):
        return None


def newer_than_installed(since):
    """True when a knowledge entry marked `since: "X.Y"` is for a newer torch than the installed one."""
    v = installed_torch_version()
    return bool(since and v and v < tuple(int(x) for x in str(since).split(".")[:2]))


@functools.lru_cache(maxsize=None)
def gb_registry():
    """torch/_dynamo/graph_break_registry.json of the installed torch ({} if unavailable)."""
    try:
        spec = importlib.util.find_spec("torch")
    except (ImportError, ValueError):
        return {}
    if not spec or not spec.origin:
        return {}
    path = os.path.join(os.path.dirname(spec.origin), "_dynamo", "graph_break_registry.json")
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError):
        return {}


def gb_type_of(gb_id):
    entries = gb_registry().get(gb_id) if gb_id else None
    return entries[0].get("Gb_type") if entries else None


# ---- recompiles ---------------------------------------------------------------------------

def guard_kind(guard):
    """(kind, title, fix) of a guard-failure text."""
    for k in load("recompiles")["kinds"]:
        if _compiled(k["pattern"]).search(guard):
            return k
    return load("recompiles")["kinds"][-1]


def guard_kind_by_id(kind):
    for k in load("recompiles")["kinds"]:
        if k["kind"] == kind:
            return k
    return load("recompiles")["kinds"][-1]


def recompile_limit_fix():
    return load("recompiles")["limit_fix"]
