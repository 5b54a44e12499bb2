"""Where a library runs other code under torch.export than eagerly: its checks of is_torchdynamo_exporting() /
torch.compiler.is_exporting() in the files of a failing export's library frames and in the modules those files import
from the same package. A failure raised there may come from a tensor only the export path builds (blind A/B batch 64:
transformers builds a 48x48 attention mask while exporting, where eager leaves it None, and Informer's distil layer
halves the length to 24 before the next layer adds it). No torch import."""
import ast
import os
import re

from ..read.frames import is_stdlib, library_of, library_path, module_of
from .program_code import read_text

_EXPORT_CHECK = re.compile(r"\b((?:[\w.]+\.)?(?:is_torchdynamo_exporting|is_exporting))\(\)")


def export_branches(frames, limit=4):
    """{lib, raised: Location, sites: [(file, line, code, patch)]} for the innermost library (not torch) frame of a
    failing export's traceback, frames outermost first; None when the failure is not in such a library or the
    library has no export check in those files. `patch` is the dotted name to patch to True for an eager check."""
    own = [f for f in frames if library_of(f.file) not in (None, "torch") and not is_stdlib(f.file)]
    # raised by a torch op the library called (a shape that does not broadcast), not by the library's own Python (a
    # ValueError unpacking the program's 1-D input fails eagerly too; review of 0.33.184)
    if not own or library_of(frames[-1].file) != "torch":
        return None
    raised = own[-1]
    lib = library_of(raised.file)
    files = list(dict.fromkeys(f.file for f in reversed(own) if library_of(f.file) == lib))
    for f in list(files):
        files += [p for p in _imported(f, lib) if p not in files]
    sites = []
    for path in files:
        for n, line in enumerate(read_text(path).splitlines(), 1):
            m = _EXPORT_CHECK.search(line)
            s = line.strip()
            # (not a wrapper's own `return torch.compiler.is_exporting()`, not its def or import)
            if m and not s.startswith(("def ", "import ", "from ", "#")) and \
                    not re.fullmatch(r"return\s+[\w.]+\(\)", s):
                sites.append((path, n, s, _patch_target(path, m.group(1))))
    return {"lib": lib, "raised": raised, "sites": sites[:limit]} if sites else None


def _imported(path, lib):
    """Files of `lib` that the module at `path` imports (relative imports, or absolute ones of the package)."""
    try:
        tree = ast.parse(read_text(path))
    except (SyntaxError, ValueError):
        return []
    rel = (library_path(path) or "").replace("\\", "/")
    root = path.replace("\\", "/")[:-len(rel)] if rel and path.replace("\\", "/").endswith(rel) else None
    if not root:
        return []
    pkg = os.path.dirname(rel).split("/")
    out = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.ImportFrom):
            continue
        if node.level:
            base = pkg[:len(pkg) - (node.level - 1)] if node.level > 1 else pkg
            parts = base + (node.module.split(".") if node.module else [])
        elif node.module and node.module.split(".")[0] == lib:
            parts = node.module.split(".")
        else:
            continue
        for cand in (root + "/".join(parts) + ".py", root + "/".join(parts) + "/__init__.py"):
            if os.path.isfile(cand):
                out.append(cand)
                break
    return out


def _patch_target(path, called):
    """The dotted name an eager check patches: the module's own name for an imported function
    (`transformers.masking_utils.is_torchdynamo_exporting`), torch's for `torch.compiler.is_exporting()`."""
    if called.startswith("torch."):
        return called
    mod = module_of(path) or ""
    return f"{mod}.{called.split('.')[-1]}" if "." not in called else f"{mod}.{called}"
