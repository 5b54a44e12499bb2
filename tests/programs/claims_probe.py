"""Measures the torch behaviours our skills state (tests/test_skill_claims.py asserts them).
Prints one JSON object. Run as: python claims_probe.py OUT_DIR"""
import json
import os
import subprocess
import sys
import textwrap

out = sys.argv[1]
facts = {}


def run(code, env=None, name="p"):
    path = os.path.join(out, f"{name}.py")
    with open(path, "w") as f:
        f.write(textwrap.dedent(code))
    e = dict(os.environ)
    for k in ("TORCH_LOGS", "TORCH_TRACE", "TORCH_LOGS_OUT", "TORCHDYNAMO_SUPPRESS_ERRORS", "TORCH_COMPILE_DISABLE"):
        e.pop(k, None)
    e.update(env or {})
    return subprocess.run([sys.executable, path], capture_output=True, text=True, env=e, timeout=600)


# config defaults and env parsing
p = run("""
import torch._dynamo.config as d, torch._inductor.config as i, json
print(json.dumps({"suppress": d.suppress_errors, "unique": i.triton.unique_kernel_names,
                  "partition": i.graph_partition, "descr": i.triton.descriptive_names,
                  "specialize_int": d.specialize_int, "recompile_limit": d.recompile_limit,
                  "automatic_dynamic": d.automatic_dynamic_shapes}))
""", env={"TORCHDYNAMO_SUPPRESS_ERRORS": "0"}, name="cfg")
facts["config"] = json.loads(p.stdout.strip().splitlines()[-1])

# TORCH_LOGS_OUT copies; stderr still has the logs
log = os.path.join(out, "logs.txt")
p = run("""
import torch
@torch.compile(backend="eager")
def f(x):
    print("hi")
    return x + 1
f(torch.ones(2))
""", env={"TORCH_LOGS": "graph_breaks", "TORCH_LOGS_OUT": log}, name="logsout")
facts["logs_out"] = {"file_has": "Graph break" in open(log).read() if os.path.exists(log) else False,
                     "stderr_has": "Graph break" in p.stderr}

# TORCH_COMPILE_DISABLE=1 vs set_stance("force_eager") on a fullgraph function
FG = """
import torch
@torch.compile(fullgraph=True)
def f(x):
    return x * 2
print("ok", f(torch.ones(2)).sum().item())
"""
p = run(FG, env={"TORCH_COMPILE_DISABLE": "1"}, name="fg_disable")
facts["compile_disable_fullgraph"] = {"rc": p.returncode, "no_compiled_frames": "no compiled frames" in p.stderr}
p = run("import torch\ntorch.compiler.set_stance('force_eager')\n" + FG, name="fg_stance")
facts["force_eager_fullgraph"] = {"rc": p.returncode}

# AOT artifacts: before/after_joint_graph in inference vs training; PlainAOTOutput comments
AOT = """
import torch
m = torch.nn.Linear(4, 4)
x = torch.randn(2, 4)
f = torch.compile(m)
{body}
"""
names = {}
for mode, body in (("train", "f(x).sum().backward()"), ("infer", "with torch.no_grad():\n    f(x)")):
    tdir = os.path.join(out, f"trace_{mode}")
    p = run(AOT.format(body=body), env={"TORCH_TRACE": tdir, "TORCH_LOGS": "aot_graphs",
                                        "TORCHINDUCTOR_CACHE_DIR": os.path.join(out, f"cache_{mode}")},
            name=f"aot_{mode}")
    text = ""
    for fn in os.listdir(tdir):
        text += open(os.path.join(tdir, fn)).read()
    names[mode] = {"before_joint": '"name": "before_joint_graph"' in text,
                   "after_joint": '"name": "after_joint_graph"' in text,
                   # per-return comments in the printed graphs, e.g. "# PlainAOTOutput(idx=0)"
                   "trace_has_return_comments": "# PlainAOTOutput(" in text,
                   "logs_have_return_comments": "# PlainAOTOutput(" in p.stderr,
                   "logs_have_graph": "def forward" in p.stderr}
facts["aot"] = names

# recompile limit arithmetic and int specialization under defaults
p = run("""
import torch, torch._dynamo
n = 0
def count(gm, ex):
    global n
    n += 1
    return gm
@torch.compile(backend=count)
def f(x, k):
    return x * k
for k in range(2, 7):
    f(torch.ones(3), k)
ints = n
n = 0
torch._dynamo.reset()
@torch.compile(backend=count, dynamic=False)
def g(x):
    return x + 1
for s in range(1, 20):
    g(torch.ones(s))
limit = n
# a dict read by a fixed list of names guards no key order; iterating it (even sorted) does
orders = [("a", "b", "c"), ("c", "a", "b"), ("b", "c", "a")]
def by_names(d):
    return torch.stack([d[k] for k in ("a", "b", "c")]).sum(0)
def by_items(d):
    return torch.stack([v for _, v in sorted(d.items())]).sum(0)
graphs = {}
for fn in (by_names, by_items):
    n = 0
    torch._dynamo.reset()
    cf = torch.compile(fn, backend=count)
    for order in orders:
        cf({k: torch.ones(3) for k in order})
    graphs[fn.__name__] = n
# a buffer grown per call stays static (dynamic=True included) unless force_parameter_static_shapes is off
class Grow(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("cache", torch.zeros(0, 2))
    def forward(self, x):
        self.cache = torch.cat([self.cache, x])
        return self.cache.sum(0)
for flag in (True, False):
    n = 0
    torch._dynamo.reset()
    torch._dynamo.config.force_parameter_static_shapes = flag
    m = torch.compile(Grow(), backend=count, dynamic=True)
    for _ in range(6):
        m(torch.ones(1, 2))
    graphs[f"buffer_static_{flag}"] = n
torch._dynamo.config.force_parameter_static_shapes = True
# a last batch of one row: mark_dynamic with a range raises; without a range, or maybe_mark_dynamic, it recompiles
def lin(x):
    return (x * 2).sum(1)
size_one = {}
for mode in ("range", "no_range", "maybe"):
    torch._dynamo.reset()
    f = torch.compile(lin, backend=count)
    try:
        for b in (64, 64, 1):
            x = torch.randn(b, 4)
            if mode == "range":
                torch._dynamo.mark_dynamic(x, 0, min=2, max=64)
            elif mode == "no_range":
                torch._dynamo.mark_dynamic(x, 0)
            else:
                torch._dynamo.maybe_mark_dynamic(x, 0)
            f(x)
        size_one[mode] = "ok"
    except Exception as e:
        size_one[mode] = type(e).__name__
# a namedtuple class built per call is a new type each time: the type guard fails on every call
import collections
Opts = collections.namedtuple("Opts", ["scale"])
def scaled(x, o):
    return x * o.scale
for where in ("per_call", "module"):
    n = 0
    torch._dynamo.reset()
    f = torch.compile(scaled, backend=count)
    for _ in range(3):
        cls = collections.namedtuple("Opts", ["scale"]) if where == "per_call" else Opts
        f(torch.ones(2), cls(2.0))
    graphs[f"namedtuple_{where}"] = n
import json; print(json.dumps({"int_compiles": ints, "limit_graphs": limit, "graphs": graphs, "size_one": size_one}))
""", name="limits")
facts["recompiles"] = json.loads(p.stdout.strip().splitlines()[-1])
print(json.dumps(facts))
