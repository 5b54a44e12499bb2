"""What an `export` run left -> the result: failure classes and their fixes (export's own, else a
knowledge/triage.yaml row), the merged problem list, the worker's problem line, a load failure as a
CliError, and the next command. Shared with `aoti` (class_info, load_error, worker_problem, short).
No torch import."""
import os
import re

from .. import cmdline
from ..errors import CliError


# failure class -> (title, fix recipe). Class ids are stable (JSON `cls`, the export skill).
CLASSES = {
    "data_dependent_guard": (
        "data-dependent guard (GuardOnDataDependentSymNode)",
        "A Python branch/bool on a tensor VALUE. Real control flow: `torch.cond(pred, true_fn, false_fn, (x,))`. "
        "Only an assumption: state it with `torch._check(...)` before this line (sizes from .item()/nonzero: "
        "`torch._check(n >= 0)`). Or make it branchless with `torch.where`."),
    "constraint_violation": (
        "constraint violation: the code narrows a Dim's range",
        "Declare the range the code needs (PyTorch's suggested Dim, when it gives one), or use `Dim.AUTO` and let export "
        "infer it; `export --dynamic` writes a full working spec. With no suggestion, the guard may hold on the whole "
        "range and export cannot prove it (a % or // of the size): `Dim.DYNAMIC(min=..., max=...)` keeps your bounds."),
    "specialized_dim": (
        "dynamic dim specialized to a constant",
        "The code forces this dim to one size (a literal shape, a size-fixed parameter, a view). Make the line "
        "shape-generic (e.g. `torch.ones(x.shape[0], ...)`, `x.new_ones(...)`), or declare the dim static "
        "(`Dim.STATIC`, or drop it from dynamic_shapes)."),
    "missing_fake_kernel": (
        "custom op without a fake kernel",
        "Register a fake (meta) kernel: `@torch.library.register_fake(\"ns::op\")` (or `myop.register_fake`) "
        "returning an empty tensor of the output's shape/dtype/device, e.g. `return torch.empty_like(x)`. "
        "Verify with `torch.library.opcheck(op, args)`."),
    "mismatched_fake_kernel": (
        "fake kernel does not match the real kernel",
        "The register_fake function returns a different shape/dtype/stride than the real op: make it match "
        "(draft_export compared them on the real inputs). Verify with `torch.library.opcheck(op, args)`."),
    "unsupported_python": (
        "unsupported Python in strict mode",
        "Strict export (Dynamo) cannot trace this construct. Use non-strict export (`strict=False`, the default "
        "since torch 2.9), or rewrite the construct in plain tensor code."),
    "graph_break": (
        "graph break in strict mode",
        "Strict export must capture one graph. Use non-strict export (`strict=False`), or remove the break "
        "(see the graph-break page in the message)."),
    "invalid_input": (
        "invalid input or dynamic_shapes spec",
        "Inputs must be tensors, ints/floats/bools or pytrees (tuple/list/dict/registered dataclass) of them; "
        "dynamic_shapes must mirror the inputs (same names/nesting)."),
    "invalid_output": (
        "invalid output",
        "Return tensors, ints/floats/bools/None or pytrees of them (no custom objects)."),
    "other": ("other export error", "Read the message; run with the full message in report.json."),
}


def class_info(cls, default="other"):
    """(title, fix) of a failure class: export's own, else a knowledge/triage.yaml row (the custom-op
    classes custom_op_no_autograd / custom_op_mutates_args are shared with triage and aoti)."""
    if cls in CLASSES:
        return CLASSES[cls]
    from ..decide import knowledge
    try:
        row = knowledge.triage_row(cls)
    except KeyError:
        return CLASSES[default] if default in CLASSES else (cls, "")
    return row["title"], " ".join(row.get("advice", "").split())


def load_error(err, spec):
    """Worker load failure -> CliError (exit 2): the user's factory or spec is wrong."""
    if err.get("kind") == "spec":
        return CliError(err["message"])
    loc = err.get("location")
    where = f" at {short(loc)}" if loc else ""
    return CliError(f"{spec}: loading the target raised {err.get('type')}: {err.get('message')}{where}")


def short(loc):
    if not loc:
        return ""
    f = loc.get("file") or ""
    try:
        rel = os.path.relpath(f)
        f = rel if not rel.startswith("..") else f
    except ValueError:
        pass
    return f"{f}:{loc.get('line')}" if loc.get("line") else f


def worker_problem(pr, res, run_dir, tag):
    """A one-line description when the worker itself did not finish, else None."""
    if pr.timed_out:
        return f"timed out after {pr.duration_s:.0f} s (raise --timeout)"
    if pr.signal:
        return f"worker died of {pr.signal}"
    if res is None or res.get("phase") != "done":
        tail = pr.read_stderr(3000).strip().splitlines()
        last = tail[-1] if tail else ""
        return f"worker exited {pr.returncode} ({cmdline.clip(last, 200)}; see {os.path.join(run_dir, tag + '.stderr')})"
    return None


def problems_of(res):
    """Merge the failures of all attempts and draft_export into one list, one entry per (class, line)."""
    found = {}
    order = []

    def add(cls, loc, how, item):
        key = (cls, (loc or {}).get("file"), (loc or {}).get("line"))
        if key not in found:
            title, fix = class_info(cls)
            found[key] = {"cls": cls, "title": title, "location": loc, "found_by": [], "message": None,
                          "fix": fix, "details": {}}
            order.append(key)
        p = found[key]
        p["found_by"].append(how)
        if item.get("message") and not p["message"]:
            p["message"] = item["message"]
        for k, v in (item.get("details") or {}).items():
            p["details"].setdefault(k, v)
        for k in ("expr", "op", "reason"):
            if item.get(k):
                p["details"].setdefault(k, item[k])
        return p

    for name, att in (res.get("attempts") or {}).items():
        f = att.get("failure")
        if f:
            add(f["cls"], f.get("location"), name, f)
    def norm_op(op):
        m = re.match(r"^(\w+)(?:::|\.)(\w+)", op or "")
        return f"{m.group(1)}::{m.group(2)}" if m else None

    d = res.get("draft") or {}
    for item in d.get("failures") or []:
        loc = item.get("location")
        op = norm_op(item.get("op"))
        same_op = [found[k] for k in order if op and found[k]["cls"] == item["cls"]
                   and norm_op(found[k]["details"].get("op")) == op]
        if same_op:  # the export failure already names the call site: keep it, add the definition
            same_op[0]["found_by"].append("draft_export")
            if loc:
                same_op[0]["details"].setdefault("op_defined_at", loc)
            continue
        # draft reports a missing fake kernel without a stack: attach it to the export failure's line
        if not loc:
            for key in order:
                if key[0] == item["cls"] and found[key]["location"]:
                    loc = found[key]["location"]
                    break
        add(item["cls"], loc, "draft_export", item)
    if d.get("failure"):
        add(d["failure"]["cls"], d["failure"].get("location"), "draft_export", d["failure"])
    fx = res.get("suggested_fix_check")
    out = [found[k] for k in order]
    for p in out:
        if p["cls"] in ("constraint_violation", "specialized_dim") and fx:
            p["suggested_fix"] = {"code": fx.get("fixes"), "verified": fx.get("verified"),
                                  "eager_off_multiple": fx.get("eager_off_multiple"),
                                  "new_dynamic_shapes": fx.get("new_dynamic_shapes"),
                                  "error": fx.get("error") or (fx.get("failure") or {}).get("message")}
    return out


def next_command(args, status, problems, result):
    if status == "exported":
        dyn = result.get("dynamic") or {}
        if args.dynamic and not dyn.get("verified"):
            return cmdline.cli_command("export", args.model, "--dynamic")
        return cmdline.cli_command("aoti", args.model)
    if status in ("timeout", "crashed"):
        return cmdline.cli_command("export", args.model, "--no-draft", "--timeout", int(args.timeout * 2))
    divisible = any(divisible_advice((p.get("suggested_fix") or {}).get("code")) for p in problems or [])
    return cmdline.cli_command("export", args.model) + (
        "  # after the check and the edit in Fix" if divisible else "  # after applying the fix" if problems else "")


# a suggested fix that bounds a Dim: `seq = Dim('seq', min=8, max=128)` (min, max or both)
_DIM_FIX_RE = re.compile(r"\s*(\w+) = Dim\(['\"]\w+['\"]((?:,\s*(?:min|max)=\d+)+)\)\s*$")


def dim_bounds(fix):
    """(dim name, {"min": n, "max": n} with the bounds it sets) of a suggested fix that bounds a Dim, else None."""
    m = _DIM_FIX_RE.match(fix or "")
    return (m.group(1), {k: int(v) for k, v in re.findall(r"\b(min|max)=(\d+)", m.group(2))}) if m else None


_UNPROVEN_RE = re.compile(r"Not all values of (\w+) = .*? in the specified range (.+?) satisfy the generated guard (.+?)\.?\s*$",
                          re.M)


def unproven_guard_advice(message, fixes, site=None):
    """A constraint violation with no suggested fix (PyTorch found no narrower range that satisfies the guard):
    the guard's words and the Dim.DYNAMIC advice (knowledge/advice.yaml export_unproven_guard), else None.
    Blind A/B batch 44: torch.stft's rfft decomposition guards `1 % (1 + n // 160) != 0`, true on the whole range,
    unprovable by export's range analysis in torch 2.14-2.15 (2.9 exports it)."""
    m = _UNPROVEN_RE.search(message or "")
    # only a guard on a remainder or a floor division of the size, which export's range analysis bounds loosely; a
    # plain `!= 100` or `== 8` is a real restriction inside the range, which Dim.DYNAMIC would keep as a run-time
    # assert that fails at that size while ep.range_constraints looks right (review of batch 44)
    # (or float math on the size, math.ceil / sym_float: a float-step arange; review of 0.33.172)
    if not m or fixes:
        return None
    from . import knowledge
    if size_one_guard(m.group(3)):
        return knowledge.advice("export_size_one_guard", dim=m.group(1), range=m.group(2).strip(),
                                guard=m.group(3).strip(), site=f" (added at {site})" if site else "")
    if not re.search(r"%|//|\bMod\(|FloorDiv\(|math\.ceil|sym_float", m.group(3)):
        return None
    return knowledge.advice("export_unproven_guard", dim=m.group(1), range=m.group(2).strip(), guard=m.group(3).strip(),
                            site=f" (added at {site})" if site else "")


def size_one_guard(guard):
    """Whether an export guard (torch's words, `((-1) + L['ids'].size()[1]) != 1`, or the trace's `Ne(s70 - 1, 1)`)
    compares a size computed from a dim (a sum or difference, not the bare size) with 1: a 0/1 check that
    backed_size_oblivious removes (knowledge/advice.yaml export_size_one_guard)."""
    g = (guard or "").strip()
    m = re.match(r"^Ne\((.+), 1\)$", g) or re.match(r"^\((.+)\)\s*!=\s*1$", g)
    return bool(m) and bool(re.search(r"\s[-+]\s|\(-\d+\)", m.group(1)))


def divisible_advice(fixes, site=None):
    """PyTorch's suggested fix, when it makes dims multiples (`height = 8*_height`) or bounds them (`seq =
    Dim('seq', max=128)`): what that costs and the check and edits that decide (knowledge/advice.yaml
    export_divisible_dim, export_bounded_dim), else None. Each dim with its own factor. site: the words naming
    the program's line that added the guard (analyze_errors._export_sites), when the trace names it."""
    from . import knowledge
    derived = [m for m in (re.match(r"(\w+) = (\d+)\*_\1$", f.strip()) for f in fixes or []) if m]
    bounded = [(b[0], f.strip()) for f in fixes or [] for b in [dim_bounds(f)] if b and "max" in b[1]]
    if bounded and not derived:   # a range narrowed to what the traced code allowed (blind A/B batch 17)
        return knowledge.advice("export_bounded_dim_at" if site else "export_bounded_dim", site=site,
                                dims=" and ".join(name for name, _ in bounded),
                                fixes="; ".join(fix for _, fix in bounded))
    if not derived or any(int(m.group(2)) < 2 for m in derived):
        return None
    return knowledge.advice("export_divisible_dim",
                            dims=" and ".join(f"{m.group(1)} a multiple of {m.group(2)}" for m in derived),
                            fixes="; ".join(m.group(0) for m in derived),
                            pads=", ".join(f"(-{m.group(1)}) % {m.group(2)}" for m in derived))
