"""Source frames: user code vs library code, short display paths, Python traceback frames and warnings, and
the importable name of a library function (read from its source with ast; nothing is imported)."""
import ast
import functools
import linecache
import os
import re
import sysconfig

from ..report import Location

_LIB_DIRS = tuple(p for p in {sysconfig.get_paths().get("stdlib"), sysconfig.get_paths().get("platstdlib")} if p)
_SCRIPTS_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
_PKG_RE = re.compile(r"/(?:site|dist)-packages/(.+)$")


_GENERATED_RE = re.compile(r"/[a-z0-9]{2}/c[a-z0-9]{40,}\.py$")


def is_user_file(path):
    if not path or path.startswith("<") or path.startswith("/tmp/torchinductor_") or _GENERATED_RE.search(path):
        return False  # Inductor's generated output code (in any TORCHINDUCTOR_CACHE_DIR) is not the user's
    p = path.replace("\\", "/")
    if "/site-packages/" in p or "/dist-packages/" in p or "/torch/" in p and "/lib/python" in p:
        return False
    if p.startswith(_LIB_DIRS) or p.startswith(_SCRIPTS_DIR) or p.endswith("/rank_shim.py"):
        return False  # rank_shim.py: the launcher triage --nproc writes into its run dir
    return True


def library_path(path):
    """'transformers/models/bert/modeling_bert.py' for an installed package file, 'logging/__init__.py'
    for the standard library, None for anything else."""
    p = (path or "").replace("\\", "/")
    m = _PKG_RE.search(p)
    if m:
        return m.group(1)
    for d in _LIB_DIRS:
        if p.startswith(d.replace("\\", "/") + "/"):
            return p[len(d) + 1:]
    i = p.find("/torch/")
    if i >= 0 and "/lib/python" in p:
        return p[i + 1:]
    return None


def is_stdlib(path):
    p = (path or "").replace("\\", "/")
    return not _PKG_RE.search(p) and any(p.startswith(d.replace("\\", "/") + "/") for d in _LIB_DIRS)


def display_path(path, base=None):
    """Short path for reports: installed packages from their top-level package, user files relative
    to base (the cwd) when inside it."""
    rel = library_path(path)
    if rel:
        return rel
    base = base or os.getcwd()
    if path and base and path.startswith(base.rstrip(os.sep) + os.sep):
        return os.path.relpath(path, base)
    return path


def library_of(path):
    """Top-level package of a non-user file ('transformers', 'torch', 'logging'), else None."""
    if is_user_file(path):
        return None
    rel = library_path(path)
    if not rel:
        return None
    top = rel.split("/", 1)[0]
    return top[:-3] if top.endswith(".py") else top


def module_of(path):
    """Dotted module of an installed package file: 'transformers.models.bert.modeling_bert'."""
    rel = library_path(path)
    if not rel or not rel.endswith(".py"):
        return None
    mod = rel[:-3].replace("/", ".")
    return mod[: -len(".__init__")] if mod.endswith(".__init__") else mod


@functools.lru_cache(maxsize=256)
def _tree(path):
    try:
        with open(path, encoding="utf-8") as f:
            return ast.parse(f.read())
    except (OSError, SyntaxError, ValueError, UnicodeDecodeError):
        return None


def qualified_name(path, line, function):
    """'transformers.models.gpt2.modeling_gpt2.GPT2Model.forward' for the function `function` that
    contains `line` in `path`, when it is importable (module level or a class attribute; not a closure)."""
    mod = module_of(path)
    tree = _tree(path) if mod and line and function else None
    if tree is None:
        return None

    def walk(nodes, chain):
        for n in nodes:
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and \
                    n.lineno <= line <= (getattr(n, "end_lineno", None) or n.lineno):
                found = walk(n.body, chain + [n])
                if found:
                    return found
                if not isinstance(n, ast.ClassDef) and n.name == function:
                    return chain + [n]
        return None

    chain = walk(tree.body, [])
    if not chain or any(not isinstance(n, ast.ClassDef) for n in chain[:-1]):
        return None  # not found, or a nested function (a closure is not importable)
    return ".".join([mod] + [n.name for n in chain])


def src_line(path, line):
    try:
        s = linecache.getline(path, int(line)).strip()
        return s or None
    except (OSError, ValueError, TypeError):
        return None


def loc(path, line, func=None, code=None):
    line = int(line) if line not in (None, "") else None
    return Location(file=path, line=line, function=func, code=code or (src_line(path, line) if line else None))


FRAME_RE = re.compile(r'^\s*File "([^"]+)", line (\d+)(?:, in (.+))?$')


def parse_py_frames(text):
    """Frames of a Python traceback text: [Location] outermost first (code from the next line)."""
    frames, lines = [], text.splitlines()
    for i, ln in enumerate(lines):
        m = FRAME_RE.match(ln)
        if not m:
            continue
        code = None
        if i + 1 < len(lines) and lines[i + 1].startswith("    ") and not FRAME_RE.match(lines[i + 1]):
            code = lines[i + 1].strip()
        frames.append(Location(file=m.group(1), line=int(m.group(2)), function=m.group(3), code=code))
    return frames


def innermost_user(frames):
    for fr in reversed(frames):
        if is_user_file(fr.file):
            return fr
    return None


# torch's own call plumbing between a user line and the code it runs: not part of the chain
_PLUMBING = re.compile(r"torch/(nn/modules/module\.py|_dynamo/|_compile\.py|utils/_contextlib\.py)")


def chain(frames, base=None):
    """The frames from the user's line to where torch broke, outermost first: each a Location with
    display (short path) and user (bool); torch's module-call plumbing is dropped."""
    out = []
    for fr in frames:
        rel = library_path(fr.file) or ""
        if _PLUMBING.match(rel) or fr.file.endswith("/rank_shim.py"):
            continue
        if fr.code is None and fr.line:
            fr.code = src_line(fr.file, fr.line)
        fr.display = display_path(fr.file, base)
        fr.user = is_user_file(fr.file)
        out.append(fr)
    return out


# ---- exceptions -------------------------------------------------------------------------------

EXC_RE = re.compile(r"^([A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt|Failed|Unsupported|Exceeded|Hit|Violation\w*)|[A-Za-z_][\w.]*\.[A-Z]\w+|AssertionError|KeyboardInterrupt)(?::\s?(.*))?$")


RANK_PREFIX = re.compile(r"^\[(?:rank|default)\d+\]:\s?", re.M)


def strip_rank_prefix(text):
    """torch prefixes a rank's exception lines with "[rankN]:" (a process group is up: under torchrun, or one
    process that made a 1-rank group itself); the parsers want them bare."""
    return RANK_PREFIX.sub("", text or "")


def parse_exception(text):
    """The last Python exception in text -> dict(full_type, type, message, frames, block) or None."""
    if not text:
        return None
    text = strip_rank_prefix(text)
    lines = text.splitlines()
    starts = [i for i, ln in enumerate(lines) if ln.strip().startswith("Traceback (most recent call last)")]
    if starts:
        i0 = starts[-1]
        lines_from = lines[i0:]
        j = 1
        while j < len(lines_from) and (lines_from[j].startswith(" ") or lines_from[j].startswith("\t") or not lines_from[j].strip()):
            j += 1
        if j >= len(lines_from):
            return None
        head = lines_from[j]
        m = re.match(r"^([A-Za-z_][\w.]*)(?::\s?(.*))?$", head.strip())
        if not m:
            return None
        msg = [m.group(2) or ""]
        for ln in lines_from[j + 1: j + 60]:
            if re.match(r"^[VIWEC]\d{4} |^Set TORCHDYNAMO_VERBOSE|^Traceback|^During handling|^The above exception", ln):
                break
            msg.append(ln)
        frames = parse_py_frames("\n".join(lines_from[:j]))
        block = "\n".join(lines_from[:j + 1])
    else:  # no traceback: the last line that looks like "SomeError: message"
        for k in range(len(lines) - 1, -1, -1):
            m = EXC_RE.match(lines[k].strip())
            if m:
                break
        else:
            return None
        msg, block = [m.group(2) or ""] + lines[k + 1:k + 20], lines[k]
        # a SyntaxError in the main script has no "Traceback" header, only its File "x", line N
        frames = parse_py_frames("\n".join(lines[max(0, k - 6):k]))
        if frames:
            block = "\n".join(lines[max(0, k - 6):k + 1])
    full = m.group(1)
    message = "\n".join(msg).strip()
    return {"full_type": full, "type": full.rsplit(".", 1)[-1], "message": message, "frames": frames, "block": block}


# warnings.showwarning's first line ("file:line: Category: message") and the source line it prints after the
# message, when that line is the warn call itself (`  warnings.warn(msg)`, `  torch._dynamo.utils.warn_once(msg)`)
WARNING_HEAD = re.compile(r"^\S.*:\d+: \w*Warning: ")
_WARN_CALL = re.compile(r"^\s+\S.*\bwarn\w*\(")


def drop_multiline_warnings(lines):
    """The lines less each Python warning whose message runs over several lines, some not indented (Dynamo's
    lru_cache warning: "...\n\nThis call originates from:\n  File ...\n    code"): from its head line to the
    warn call's source line that ends it, when that comes within 40 lines before any other warning. A warning
    whose next line is indented (its source line: a one-line message) and other warnings are left to the
    caller's filter."""
    out, i = [], 0
    while i < len(lines):
        # a one-line message has its (indented) source line right after the head: the caller's filter handles it
        if WARNING_HEAD.match(lines[i]) and i + 1 < len(lines) and not lines[i + 1][:1].isspace():
            end = None
            for j in range(i + 1, min(i + 41, len(lines))):
                if WARNING_HEAD.match(lines[j]):
                    break
                if _WARN_CALL.match(lines[j]):
                    end = j
                    break
            if end is not None:
                i = end + 1
                continue
        out.append(lines[i])
        i += 1
    return out
