"""Inside the compiler, from a structured trace (no torch import): the AOTAutograd graphs, the
partitioner's saved activations, and Inductor's generated kernels per compiled graph.

Everything here parses text that torch printed (FX graph code, Inductor output code, provenance
JSON), so traces from other torch versions parse too; missing pieces come back as None/empty."""
import json
import os
import re

from .inductor_code import _name_ops, aot_id, kernel_calls

# ---------------------------------------------------------------------------------------------
# FX graph text ("class GraphModule(torch.nn.Module): def forward(...)" as torch prints it)

DTYPE_BYTES = {
    "f64": 8, "f32": 4, "f16": 2, "bf16": 2, "i64": 8, "i32": 4, "i16": 2, "i8": 1, "u8": 1, "u16": 2,
    "u32": 4, "u64": 8, "b8": 1, "c64": 8, "c128": 16, "c32": 4, "f8e4m3fn": 1, "f8e5m2": 1,
    "f8e4m3fnuz": 1, "f8e5m2fnuz": 1, "f8e8m0fnu": 1,
}
TYPE_RE = re.compile(r"^(\w+)\[([^\]]*)\]\[([^\]]*)\]([\w:]*)$")
FILE_COMMENT_RE = re.compile(r"#\s*(?:Backward of forward node: )?File: (.+?):(\d+) in (\S+), code: (.*)$")
NODE_RE = re.compile(r"^\s*(\w+)(?:\s*:\s*\"([^\"]*)\")?\s*=\s*(.+?)\s*$")
PARAM_RE = re.compile(r"(\w+)\s*:\s*\"([^\"]*)\"")
BINOPS = {"+": "add", "-": "sub", "*": "mul", "/": "truediv", "@": "matmul", "//": "floordiv", "%": "mod",
          "**": "pow", "&": "and", "|": "or", "^": "xor", ">": "gt", "<": "lt", ">=": "ge", "<=": "le",
          "==": "eq", "!=": "ne"}


def tensor_type(text):
    """'f32[16, 16][16, 1]cpu' -> dict(dtype, shape, stride, device, numel, bytes); None if not a tensor."""
    if not text:
        return None
    m = TYPE_RE.match(text.strip())
    if not m:
        return None
    dtype, shape_s, stride_s, device = m.groups()
    shape = [s.strip() for s in shape_s.split(",") if s.strip()]
    numel, symbolic = 1, False
    for s in shape:
        if s.isdigit():
            numel *= int(s)
        else:
            symbolic = True
    nbytes = None if symbolic or dtype not in DTYPE_BYTES else numel * DTYPE_BYTES[dtype]
    return {"dtype": dtype, "shape": shape, "device": device, "numel": None if symbolic else numel,
            "bytes": nbytes, "symbolic": symbolic}


def _op_of(rhs, local_names):
    """The operator a graph line calls: 'aten.mm.default', 'torch.relu', 'Tensor.sin', 'add', 'getitem'."""
    m = re.match(r"torch\.ops\.([\w.]+)\(", rhs)
    if m:
        return m.group(1)
    m = re.match(r"([A-Za-z_][\w.]*)\(", rhs)
    if m:
        name = m.group(1)
        head = name.split(".")[0]
        if head in local_names and "." in name:
            return "Tensor." + name.rsplit(".", 1)[1]
        return name
    m = re.match(r"^([\w.]+)\[", rhs)
    if m:
        return "getitem"
    m = re.match(r"^\(?-?[\w.]+\)?\s+(\*\*|//|>=|<=|==|!=|[+\-*/@%&|^<>])\s+", rhs)
    if m:
        return BINOPS.get(m.group(1), m.group(1))
    if re.match(r"^-\w", rhs):
        return "neg"
    return None


def parse_graph(text):
    """Parse one printed FX graph. Returns dict(inputs=[{name,type}], nodes=[{name,op,type,loc}],
    outputs=[{name, comment}])."""
    if not text:
        return {"inputs": [], "nodes": [], "outputs": []}
    lines = text.splitlines()
    inputs, nodes, outputs = [], [], []
    # signature: from "def forward(" to the line ending with "):"
    i = 0
    while i < len(lines) and "def forward(" not in lines[i]:
        i += 1
    sig = []
    while i < len(lines):
        sig.append(lines[i])
        if lines[i].rstrip().endswith("):") or lines[i].rstrip().endswith(":") and ")" in lines[i]:
            break
        i += 1
    for name, typ in PARAM_RE.findall("\n".join(sig)):
        inputs.append({"name": name, "type": typ, "comment": None})
    for s in sig:
        m = re.match(r"^\s*(\w+)\s*:\s*\"[^\"]*\",?\s*#\s*(.+)$", s)
        if m:
            for inp in inputs:
                if inp["name"] == m.group(1):
                    inp["comment"] = m.group(2).strip()
    local = {x["name"] for x in inputs}
    loc = None
    body = lines[i + 1:]
    j = 0
    while j < len(body):
        line = body[j]
        s = line.strip()
        j += 1
        if not s:
            continue
        fm = FILE_COMMENT_RE.search(s)
        if s.startswith("#"):
            if fm:
                loc = {"file": fm.group(1), "line": int(fm.group(2)), "function": fm.group(3),
                       "code": fm.group(4).strip()}
            continue
        if s.startswith("return"):
            rest = s[len("return"):].strip()
            chunk = [rest]
            depth = rest.count("(") + rest.count("[") - rest.count(")") - rest.count("]")
            while depth > 0 and j < len(body):
                chunk.append(body[j])
                depth += body[j].count("(") + body[j].count("[") - body[j].count(")") - body[j].count("]")
                j += 1
            for piece in chunk:
                comment = None
                if "#" in piece:
                    piece, comment = piece.split("#", 1)
                    comment = comment.strip()
                names = re.findall(r"\b([A-Za-z_]\w*)\b", piece)
                names = [n for n in names if n not in ("None", "pytree", "tree_unflatten", "self", "_out_spec")]
                for n in names:
                    outputs.append({"name": n, "comment": comment if len(names) == 1 else None})
            continue
        # a typed declaration without assignment (joint graph inputs): primals_1: "f32[..]"  # ...
        dm = re.match(r"^(\w+)\s*:\s*\"([^\"]*)\"\s*(#.*)?$", s)
        if dm:
            inputs.append({"name": dm.group(1), "type": dm.group(2), "comment": (dm.group(3) or "#")[1:].strip() or None})
            local.add(dm.group(1))
            continue
        m = NODE_RE.match(line)
        if not m:
            continue
        name, typ, rhs = m.groups()
        rhs = rhs.split(";  ")[0].strip()
        if rhs.startswith("fx_pytree.") or rhs == name.upper():
            continue
        op = _op_of(rhs, local)
        local.add(name)
        if re.match(r"^L_\w+$|^l_\w+$", rhs):   # l_x_ = L_x_ aliases in Dynamo graphs
            continue
        nodes.append({"name": name, "op": op, "type": typ, "loc": loc})
    return {"inputs": inputs, "nodes": nodes, "outputs": outputs}


def op_counts(graph):
    out = {}
    for n in graph["nodes"]:
        if n["op"] and n["op"] != "getitem":
            out[n["op"]] = out.get(n["op"], 0) + 1
    return out


def short_op(op):
    """'aten.add.Tensor' -> 'aten.add'; others unchanged."""
    if op and op.startswith("aten."):
        parts = op.split(".")
        return ".".join(parts[:2])
    return op


def sum_bytes(items):
    total, unknown = 0, 0
    for it in items:
        t = tensor_type(it.get("type"))
        if t is None or t["bytes"] is None:
            unknown += 1
        else:
            total += t["bytes"]
    return total, unknown


def human_bytes(n):
    if n is None:
        return "?"
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(n) < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024.0


# ---------------------------------------------------------------------------------------------
# Provenance (INDUCTOR_PROVENANCE=1 / TORCH_COMPILE_DEBUG=1)

STACK_RE = re.compile(r'File "([^"]+)", line (\d+), in (\S+)\n\s*(.*)')


def parse_stack_traces(entries):
    out, seen = [], set()
    for text in entries or []:
        for m in STACK_RE.finditer(text):
            key = (m.group(1), int(m.group(2)))
            if key in seen:
                continue
            seen.add(key)
            out.append({"file": m.group(1), "line": int(m.group(2)), "function": m.group(3),
                        "code": m.group(4).strip()})
    return out


# ---------------------------------------------------------------------------------------------
# Per compiled graph, from the trace

def _is(e, name):
    return e.key == name or e.artifact_name == name


def compiled_graphs(tr):
    """One record per Inductor-compiled graph (forward / backward / inference):
    dict(compile_id, aot_id, kind, post_grad, code, code_path, node_mappings, stack_traces, cache)."""
    recs = []
    cur = None

    def new(e):
        r = {"compile_id": e.compile_id, "post_grad": None, "code": None, "code_path": None,
             "node_mappings": None, "stack_traces": None, "cache": None}
        recs.append(r)
        return r

    for e in tr.events:
        if _is(e, "inductor_post_grad_graph") or e.artifact_name == "after_post_grad_graph":  # 2.14 / 2.9
            if cur is None or cur["compile_id"] != e.compile_id or cur["code"] is not None:
                cur = new(e)
            cur["post_grad"] = e.payload
        elif e.key == "inductor_output_code":
            if cur is None or cur["compile_id"] != e.compile_id or cur["code"] is not None:
                cur = new(e)
            cur["code"] = e.payload
            d = e.data if isinstance(e.data, dict) else {}
            cur["code_path"] = d.get("filename") or d.get("file_path")
        elif e.artifact_name == "inductor_provenance_tracking_node_mappings":
            if cur is not None and cur["compile_id"] == e.compile_id:
                cur["node_mappings"] = e.payload_json()
        elif e.artifact_name == "inductor_provenance_tracking_kernel_stack_traces":
            if cur is not None and cur["compile_id"] == e.compile_id:
                cur["stack_traces"] = e.payload_json()
        elif e.artifact_name in ("fx_graph_cache_hit", "fx_graph_cache_miss", "fx_graph_cache_bypass"):
            if cur is not None and cur["compile_id"] == e.compile_id and cur["cache"] is None:
                cur["cache"] = e.artifact_name.rsplit("_", 1)[1]
    for r in recs:
        r["aot_id"] = aot_id(r["code"])
        k = (r["aot_id"] or "").split("_", 1)
        r["kind"] = k[1] if len(k) == 2 else None
    return [r for r in recs if r["code"] is not None]


def analyze_graph(rec):
    """Kernels of one compiled graph with fused ops, user lines and fallbacks."""
    code = rec["code"] or ""
    post = parse_graph(rec.get("post_grad")) if rec.get("post_grad") else {"nodes": []}
    post_by_name = {n["name"]: n for n in post["nodes"]}
    nm = rec.get("node_mappings") or {}
    code_to_post = nm.get("cppCodeToPost") or {}
    stacks = rec.get("stack_traces") or {}
    kernels = []
    for c in kernel_calls(code):
        ops, nodes = [], []
        if c["handle"] and c["handle"] in code_to_post:
            nodes = list(code_to_post[c["handle"]])
            ops = [short_op(post_by_name[n]["op"]) for n in nodes if n in post_by_name and post_by_name[n]["op"]]
        if not ops and c["aten"]:
            ops = list(c["aten"])
        if not ops:
            ops = ["aten." + o for o in _name_ops(c["name"])]
        if not ops and c["kind"] in ("extern", "fallback"):
            ops = [c["name"].replace("extern_kernels.", "aten.")]
        uniq = []
        for o in ops:
            if o not in uniq:
                uniq.append(o)
        lines = parse_stack_traces(stacks.get(c["handle"])) if c["handle"] else []
        if not lines and (nodes or c["source_nodes"]):
            seen = set()
            for n in nodes or c["source_nodes"]:
                loc = post_by_name.get(n, {}).get("loc")
                if loc and (loc["file"], loc["line"]) not in seen:
                    seen.add((loc["file"], loc["line"]))
                    lines.append(loc)
        kernels.append({"name": c["name"], "kind": c["kind"], "ops": uniq, "n_ops": len(nodes) or len(uniq),
                        "source_nodes": c["source_nodes"], "user_lines": lines, "handle": c["handle"]})
    return kernels


# ---------------------------------------------------------------------------------------------
# AOTAutograd

def aot_graphs(tr):
    """Per compile id: Dynamo graph, joint/forward/backward or inference graph (payload text)."""
    out = {}
    order = []
    for e in tr.events:
        key = e.key if e.key != "artifact" else None
        if key in ("dynamo_output_graph", "aot_joint_graph", "aot_forward_graph", "aot_backward_graph",
                   "aot_inference_graph") and e.payload:
            cid = e.compile_id or "?"
            if cid not in out:
                out[cid] = {}
                order.append(cid)
            out[cid].setdefault(key, e.payload)
        elif e.artifact_name == "aot_forward_graph_fw_metadata" and e.payload:
            cid = e.compile_id or "?"
            if cid not in out:
                out[cid] = {}
                order.append(cid)
            out[cid].setdefault("fw_metadata", e.payload)
    return [(cid, out[cid]) for cid in order]


def saved_activations(fw_text, bw_text):
    """What the partitioner saved for backward: from the backward graph's inputs (all but tangents),
    with the forward graph's SavedForBackwardsAOTOutput comments when the version prints them."""
    bw = parse_graph(bw_text)
    saved = [i for i in bw["inputs"] if not i["name"].startswith("tangents")]
    fw = parse_graph(fw_text) if fw_text else None
    items = []
    for s in saved:
        t = tensor_type(s["type"])
        is_input = s["name"].startswith("primals") or bool(s.get("comment") and "AOTInput" in s["comment"])
        items.append({"name": s["name"], "type": s["type"], "bytes": t["bytes"] if t else None,
                      "shape": t["shape"] if t else None, "dtype": t["dtype"] if t else None,
                      "symbolic": bool(t and t["symbolic"]), "tensor": t is not None,
                      "is_input": is_input})
    tensors = [i for i in items if i["tensor"]]
    act = [i for i in tensors if not i["is_input"]]
    total, unknown = sum_bytes(tensors)
    act_total, act_unknown = sum_bytes(act)
    # where each saved activation was produced (forward graph node location)
    if fw:
        fwn = {n["name"]: n for n in fw["nodes"]}
        for i in items:
            n = fwn.get(i["name"])
            if n:
                i["op"] = n["op"]
                i["loc"] = n["loc"]
    return {"items": items, "count": len(tensors), "bytes": total, "unknown_bytes": unknown,
            "activations": len(act), "activation_bytes": act_total, "activation_unknown": act_unknown,
            "symints": len(items) - len(tensors)}


def mutated_inputs(fw_metadata_text):
    """Count inputs AOTAutograd saw mutated (functionalized and written back)."""
    if not fw_metadata_text:
        return None
    return len(re.findall(r"mutates_data=True", fw_metadata_text))


def inplace_ops(graph):
    out = []
    for n in graph["nodes"]:
        op = n["op"] or ""
        last = op.rsplit(".", 1)[-1]
        if op.startswith("aten.") and len(op.split(".")) >= 2:
            last = op.split(".")[1]
        if last.endswith("_") and not last.endswith("__") and last not in ("copy_",):
            out.append(op)
    return out


def decompositions(dynamo_text, post_text, node_mappings):
    """User-level op -> ATen ops it became (from provenance preToPost), only those that changed."""
    if not node_mappings or not dynamo_text:
        return []
    pre = {n["name"]: n for n in parse_graph(dynamo_text)["nodes"]}
    post = {n["name"]: n for n in parse_graph(post_text)["nodes"]} if post_text else {}
    out, seen = [], set()
    for pre_name, post_names in (node_mappings.get("preToPost") or {}).items():
        p = pre.get(pre_name)
        if not p:
            continue
        ops = [short_op(post[n]["op"]) for n in post_names if n in post and post[n]["op"] and post[n]["op"] != "getitem"]
        if len(ops) >= 2 and (p["op"], tuple(ops)) not in seen:
            seen.add((p["op"], tuple(ops)))
            out.append({"node": pre_name, "op": p["op"], "aten": ops, "loc": p["loc"]})
    return out


def debug_dirs(run_dir):
    """{aot_id-ish: path} of Inductor's TORCH_COMPILE_DEBUG dirs under the run dir."""
    out = {}
    root = os.path.join(run_dir, "torch_compile_debug")
    if not os.path.isdir(root):
        return out
    for dirpath, dirnames, _ in os.walk(root):
        if os.path.basename(dirpath) == "torchinductor":
            for d in dirnames:
                m = re.match(r"model__(\d+)_(\w+?)_(\d+)\.(\d+)$", d)
                if m:
                    out.setdefault(f"{m.group(1)}_{m.group(2)}", []).append(os.path.join(dirpath, d))
    return out


def save_text(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text or "")
    return path


def loads(text):
    try:
        return json.loads(text)
    except (TypeError, ValueError):
        return None
