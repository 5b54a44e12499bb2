"""Inductor's generated output code, as text (no torch import): the kernels it defines, the order the
wrapper calls them in, which ops each one fused (from the provenance comments or the kernel name), and the
AOT ID of the graph it belongs to."""
import re

KDEF_RE = re.compile(r"^(\w+) = async_compile\.(\w+)\(", re.M)
PROV_RE = re.compile(r"#\s*\[Provenance debug handles\]\s*(\S+)")
ORIGIN_RE = re.compile(r"#\s*Topologically Sorted Source Nodes:\s*\[(.*?)\],\s*Original ATen:\s*\[(.*?)\]")
KIND = {"triton": "triton", "cpp_pybinding": "cpp", "cpp": "cpp", "cuda": "cuda-template", "rocm": "rocm-template",
        "halide": "halide", "mps": "mps", "pallas": "pallas", "cutedsl": "cutedsl"}


def kernel_defs(code):
    """{name: {kind, start, end}} for every kernel defined in the output code."""
    out = {}
    for m in KDEF_RE.finditer(code or ""):
        name, method = m.group(1), m.group(2)
        if method in ("wait",):
            continue
        start = m.start()
        q = None
        for cand in ("'''", '"""'):
            k = code.find(cand, m.end())
            if k != -1 and (q is None or k < q[0]):
                q = (k, cand)
        end = len(code)
        if q:
            close = code.find(q[1], q[0] + 3)
            if close != -1:
                nl = code.find("\n", close)
                end = len(code) if nl == -1 else nl
        kind = KIND.get(method, method)
        if kind == "triton":
            if name.startswith("triton_tem_"):
                kind = "triton-template"
        out[name] = {"kind": kind, "start": start, "end": end}
    return out


def kernel_source(code, name):
    d = kernel_defs(code).get(name)
    if not d:
        return None
    return code[d["start"]:d["end"]]


def _call_region(code):
    k = code.find("async_compile.wait(globals())")
    start = k if k != -1 else code.find("def call(")
    if start == -1:
        return ""
    end = len(code)
    for marker in ("\ndef get_args(", "\ndef benchmark_compiled_module("):
        e = code.find(marker, start)
        if e != -1:
            end = min(end, e)
    return code[start:end]


def _name_ops(name):
    """cpp_fused_add_cos_exp_0 -> ['add', 'cos', 'exp'] (Inductor names fused kernels after their ops)."""
    m = re.match(r"^(?:cpp|triton_\w+?)_fused_(.+?)_\d+$", name)
    if not m:
        return []
    out = []
    for p in m.group(1).split("_"):
        if not p or p.isdigit():
            continue
        if p in ("backward", "default", "with", "indices") and out:
            out[-1] = out[-1] + "_" + p
        else:
            out.append(p)
    return out


def kernel_calls(code):
    """The kernels the compiled graph launches, in order: [{name, kind, handle, source_nodes, aten}]."""
    defs = kernel_defs(code)
    region = _call_region(code)
    calls, seen = [], set()
    pend_handle, pend_origin = None, None
    for raw in region.splitlines():
        s = raw.strip()
        if not s:
            continue
        pm = PROV_RE.search(s)
        if pm:
            pend_handle = pm.group(1)
            continue
        om = ORIGIN_RE.search(s)
        if om:
            pend_origin = ([x.strip() for x in om.group(1).split(",") if x.strip()],
                           [x.strip() for x in om.group(2).split(",") if x.strip()])
            continue
        if s.startswith("#") or s.startswith("def ") or s.startswith("del "):
            continue
        call = None
        for km in re.finditer(r"\b(\w+)(?:\.run)?\(", s):
            if km.group(1) in defs:
                call = {"name": km.group(1), "kind": defs[km.group(1)]["kind"]}
                break
        if call is None:
            em = re.search(r"\bextern_kernels\.(\w+)\(", s)
            if em:
                call = {"name": "extern_kernels." + em.group(1), "kind": "extern"}
        if call is None:
            fm = re.search(r"\b(torch\.ops\.(\w+)\.(\w+)(?:\.(\w+))?)\(", s) or \
                re.search(r"(?:^|[=\s(])(aten\.(\w+)(?:\.(\w+))?)\(", s)
            if fm:
                full = fm.group(1)
                if ".inductor." in full or full.startswith("torch.ops.inductor") or "_alloc_from_pool" in full \
                        or "resize_storage_bytes_" in full:
                    full = None
                if full:
                    call = {"name": full.replace("torch.ops.", ""), "kind": "fallback"}
        if call is None:
            continue
        call["handle"] = pend_handle
        call["source_nodes"] = pend_origin[0] if pend_origin else []
        call["aten"] = pend_origin[1] if pend_origin else []
        pend_handle, pend_origin = None, None
        key = (call["name"], call["handle"])
        if key in seen and call["kind"] in ("triton", "cpp"):
            continue
        seen.add(key)
        calls.append(call)
    # generated kernels that are defined but whose launch we could not find (e.g. inside partitions)
    launched = {c["name"] for c in calls}
    for name, d in defs.items():
        if name not in launched:
            calls.append({"name": name, "kind": d["kind"], "handle": None, "source_nodes": [], "aten": []})
    return calls


def aot_id(code):
    m = re.search(r"#\s*AOT ID:\s*\[?'?([\w]+)'?\]?", code or "")
    return m.group(1) if m else None
