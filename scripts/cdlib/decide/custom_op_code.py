"""The custom op an error names and its fake kernels in the program's source: one the program never imports,
one whose strides differ from the real kernel's. Read by analyze_errors, analyze and report; custom_op_source.py
reads the ops' definitions, program_code holds the rest of what the source says. No torch import."""
import os
import re

from . import knowledge
from .program_code import import_closure, program_files
from ..cmdline import local_imports as _local_imports, scripts_of

_OP_RE = re.compile(r"CustomOpDef\(([\w:.]+)\)|backward through ([\w.]+) but|op: torch\.ops\.([\w.]+)|for <OpOverload\(op='([\w:.]+)'")


_TORCH_OPS_RE = re.compile(r"torch\.ops\.(\w+)\.(\w+)")
_BARE_OP_RE = re.compile(r"^\s*(\w+)\.(\w+)\.(default|\w+)\s*$", re.M)   # UnsupportedOperatorException: ns.op.default


def unimported_fakes(rep):
    """Custom ops that had no fake kernel in the run (torch.export's UnsupportedOperatorException `ns.op.default`,
    Dynamo's GB0090 break at the op's call through torch's op namespace) whose fake kernel the program's own folder registers in a
    module the program never imports (blind A/B batch 35: ctr_ops_meta.py held them and only the tests imported
    it). Sets e.fake_elsewhere on such errors ({op, file, line, importers}) and the fix of such breaks. Only the
    .py files next to the program's scripts are read (at most 2000, by name: a folder of 311 test programs once cut
    the one that held the fake kernel)."""
    scripts = scripts_of(rep.command or [])
    if not scripts:
        return
    wanted = {}   # "ns::op" -> [objects that lack its fake]
    for e in rep.errors:
        if e.type == "UnsupportedOperatorException" or e.category == "custom_op_no_fake":
            m = _BARE_OP_RE.search(e.message or "") or _TORCH_OPS_RE.search((e.message or "") + (
                e.location.code or "" if e.location else ""))
            name = f"{m.group(1)}::{m.group(2)}" if m else op_name(e)
            if name and "::" in name:
                wanted.setdefault(name, []).append(e)
    for b in rep.graph_breaks:
        m = b.gb_id == "GB0090" and b.location and _TORCH_OPS_RE.search(b.location.code or "")
        if m:
            wanted.setdefault(f"{m.group(1)}::{m.group(2)}", []).append(b)
    if not wanted:
        return
    from ..read import never_ran
    imported = set(import_closure(scripts))
    dirs = dict.fromkeys(os.path.dirname(os.path.realpath(f)) for f in scripts)
    files = [os.path.join(d, n) for d in dirs for n in sorted(os.listdir(d)) if n.endswith(".py")][:2000]
    candidates = [f for f in files if os.path.realpath(f) not in imported and _mentions_fake(f)]
    for path, node, name in never_ran._fake_defs(candidates):
        for obj in wanted.get(name, []):
            mod = os.path.splitext(os.path.basename(path))[0]
            importers = [os.path.basename(f) for f in files if f != path and mod in
                         {os.path.splitext(os.path.basename(x))[0] for x in _local_imports(f)}]
            fe = {"op": name, "file": path, "line": node.lineno, "importers": importers[:3]}
            if hasattr(obj, "fake_elsewhere"):   # an error
                obj.fake_elsewhere = fe
            else:                                # a GB0090 break: its fix says where the fake kernel is
                obj.fix = {**(obj.fix or {}), "category": "custom op whose fake kernel is never imported",
                           "fix": fake_elsewhere_words(fe, scripts[0])}


def _mentions_fake(path):
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read(500_000)
    except OSError:
        return False
    return any(w in text for w in ("register_fake", "impl_abstract", "register_meta"))


def fake_elsewhere_words(fe, script):
    """The fix for a fake kernel registered in a module the program never imports (knowledge/advice.yaml)."""
    mod = os.path.splitext(os.path.basename(fe["file"]))[0]
    return knowledge.advice("fake_kernel_not_imported", op=fe["op"], where=f"{os.path.basename(fe['file'])}:{fe['line']}",
                            mod=mod, script=os.path.basename(script or "your script"),
                            importers=(" (only " + ", ".join(fe["importers"]) + " imports it)") if fe["importers"] else "")


def op_name(e):
    m = _OP_RE.search((e.inner or {}).get("message", "") + "\n" + (e.message or ""))
    name = next((g for g in m.groups() if g), None) if m else None
    if name and "::" not in name and name.count(".") >= 1:  # corpus.sq.default -> corpus::sq
        ns, op = name.split(".")[:2]
        name = f"{ns}::{op}"
    return name or (e.inner or {}).get("op")


# inductor's assert_size_stride (torch/csrc/dynamo/guards.cpp): the real output's size/stride first, then the
# fake kernel's: "expected size 64==64, stride 128==1 at dim=1; ..."
_SIZE_STRIDE_RE = re.compile(r"expected size (\d+)==(\d+), stride (\d+)==(\d+) at dim=(\d+)")

def bad_fake_step(e, op):
    """The fix of a fake kernel whose output strides (or sizes) differ from the real kernel's, read from
    inductor's size/stride check; None when the message has no such check."""
    found = _SIZE_STRIDE_RE.findall((e.inner or {}).get("message", "") + "\n" + (e.message or ""))
    if not found or not op or op.startswith("aten"):   # torch's own op: not a custom op's registration
        return None
    name = op
    dims = ", ".join(f"dim {d}: real {rs} vs fake {fs}" for _, _, rs, fs, d in found[:4])
    if all(rz == fz for rz, fz, *_ in found):
        # which side is row-major (strides falling with the dim) over the dims reported
        desc = lambda v: all(a >= b for a, b in zip(v, v[1:]))   # noqa: E731
        real, fake = [int(f[2]) for f in found], [int(f[3]) for f in found]
        if desc(real) and not desc(fake):
            how = ("the real kernel returns a new contiguous tensor (numpy, .contiguous()) while the fake copies "
                   "its input's layout (torch.empty_like(x) on a transposed or sliced input): return "
                   "x.new_empty(x.shape) from the fake")
        elif desc(fake) and not desc(real):
            how = ("the fake promises a contiguous tensor while the real kernel returns its input's layout (a "
                   "clone or view of a transposed input): return .contiguous() from the real kernel, or "
                   "torch.empty_like(x) from the fake")
        else:
            how = "make the fake build its output with the strides the real kernel returns"
        return (f"the fake kernel of {name} promises other strides than its real kernel returns ({dims}): {how}. "
                "opcheck with contiguous samples only passes, so add a non-contiguous one: "
                f"torch.library.opcheck(op, (x.transpose(1, 2),)). Then note that {knowledge.advice('stale_compile_cache')}")
    sizes = ", ".join(f"dim {d}: real {rz} vs fake {fz}" for rz, fz, _, _, d in found[:4] if rz != fz)
    return (f"the fake kernel of {name} promises other sizes than its real kernel returns ({sizes}): compute the "
            "output shape in the fake kernel as the real one does; check with torch.library.opcheck(op, args). "
            f"Then note that {knowledge.advice('stale_compile_cache')}")


def state_sizes_grown(e):
    """'size 16 at dim 0 (fake: 1)' where Inductor's size check found the real kernel's output larger than the
    fake kernel's size 0 or 1 (state the real kernel fills on its first call); None otherwise."""
    found = _SIZE_STRIDE_RE.findall((e.inner or {}).get("message", "") + "\n" + (e.message or ""))
    grown = [(rz, fz, d) for rz, fz, _, _, d in found if int(fz) in (0, 1) and int(rz) > int(fz)]
    return ", ".join(f"size {rz} at dim {d} (fake: {fz})" for rz, fz, d in grown[:2]) if grown else None


def fake_kernels(rep):
    from ..read import never_ran
    return never_ran.fake_kernels(program_files(rep))


def fake_kernel_of(rep, op):
    """(path, line) of the fake kernel the program registers for op (as a fake-tensor error names it,
    "ns.name.overload", or "ns::name"), else None; torch's own namespaces are never the program's."""
    parts = re.split(r"::|\.", op or "")
    if len(parts) < 2 or parts[0] in ("aten", "prims", "torch"):
        return None
    ns, name = parts[0], parts[1]
    for path, line, reg in fake_kernels(rep):
        if reg.split("::")[-1].split(".")[-1] == name and ("::" not in reg or reg.split("::")[0] == ns):
            return path, line
    return None
