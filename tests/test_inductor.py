"""`inductor`: kernels per compiled graph. One real run of tests/programs/ind_kernels.py (pointwise
chain, matmul + epilogue, sort fallback) is shared by the CPU tests; parser unit tests use canned
output code (including a Triton one, so Triton parsing is covered without a GPU)."""
import os
import subprocess

import pytest
from conftest import program, resolve_dotted as _resolve, run_cli, run_json

from cdlib.read import inductor_code as IC
from cdlib.read import inductor_info as II


@pytest.fixture(scope="module")
def ind(tmp_path_factory):
    out = tmp_path_factory.mktemp("ind") / "run"
    res, p = run_json("inductor", "--perf-hints", "--out", out, "--", "python", program("ind_kernels.py"), timeout=600)
    assert p.returncode == 0, p.stderr[-3000:]
    return res


def _graph(res, fn):
    gs = [g for g in res["graphs"] if g["function"] == fn]
    assert gs, [g["function"] for g in res["graphs"]]
    return gs[0]


def test_pointwise_chain_is_one_fused_kernel(ind):
    assert ind["status"] == "ok" and ind["target_status"] == "exit 0"
    g = _graph(ind, "pointwise")
    assert g["kind"] == "inference"
    gen = [k for k in g["kernels"] if k["kind"] in ("cpp", "triton")]
    assert len(gen) == 1, g["kernels"]
    ops = {o.replace("aten.", "") for o in gen[0]["ops"]}
    assert {"sin", "cos", "relu", "mul", "add", "sub"} <= ops
    assert gen[0]["user_lines"] and gen[0]["user_lines"][0]["line"] == 8
    assert os.path.isfile(g["output_code"])
    assert gen[0]["name"] in open(g["output_code"]).read()
    assert g["provenance"] is True


def test_matmul_extern_with_fused_epilogue(ind):
    g = _graph(ind, "mm_epilogue")
    kinds = {k["kind"] for k in g["kernels"]}
    assert "extern" in kinds, g["kernels"]
    ext = [k for k in g["kernels"] if k["kind"] == "extern"][0]
    assert ext["name"] in ("extern_kernels.mm", "extern_kernels.addmm")
    epi = [k for k in g["kernels"] if k["kind"] == "cpp"]
    assert epi and any("relu" in o for o in epi[0]["ops"])
    assert all(k["user_lines"][0]["line"] == 13 for k in g["kernels"] if k["user_lines"])


def test_fallback_listed_with_user_line(ind):
    g = _graph(ind, "with_fallback")
    fb = [k for k in g["kernels"] if k["kind"] == "fallback"]
    assert fb and fb[0]["name"].startswith("aten.sort"), g["kernels"]
    assert fb[0]["user_lines"][0]["line"] == 18
    assert ind["summary"]["fallback"] == 1
    assert ind["fallbacks"][0]["op"].startswith("aten.sort")


def test_perf_hints_and_cache_and_debug_dir(ind):
    msgs = [h["message"] for h in ind["perf_hints"]]
    fb = _graph(ind, "with_fallback")
    assert fb["cache"] in ("hit", "miss") and all(g["cache"] in ("hit", "miss") for g in ind["graphs"])
    md = open(os.path.join(ind["run_dir"], "report.md")).read()
    if fb["cache"] == "miss":   # hints are logged while lowering: only on a cache miss
        assert any("FallbackKernel" in m and "sort" in m for m in msgs), msgs
    else:
        assert "FallbackKernel" not in " ".join(msgs)
        if all(g["cache"] == "hit" for g in ind["graphs"]):
            assert "--fresh-cache" in md
    assert ind["summary"]["fx_graph_cache_hits"] + ind["summary"]["fx_graph_cache_misses"] == 3
    # TORCH_COMPILE_DEBUG writes a graph's debug dir only when it is compiled (cache miss)
    assert all(os.path.isdir(g["debug_dir"]) for g in ind["graphs"] if g["cache"] == "miss")
    assert "fallback" in md and "--code" in md


def test_code_prints_one_kernel_from_previous_run(ind):
    g = _graph(ind, "pointwise")
    name = [k for k in g["kernels"] if k["kind"] == "cpp"][0]["name"]
    p = run_cli("inductor", "--from", ind["run_dir"], "--code", name, timeout=120)
    assert p.returncode == 0, p.stderr
    assert name in p.stdout and "```cpp" in p.stdout
    assert "cpp_fused_mul_relu" not in p.stdout   # only that kernel
    p = run_cli("inductor", "--from", ind["run_dir"], "--code", "no_such_kernel_0", timeout=120)
    assert p.returncode == 2 and "no such kernel" in p.stderr


def test_from_reuses_trace_without_running(ind):
    res, p = run_json("inductor", "--from", ind["run_dir"], "--graph", "2/0-inference", timeout=120)
    assert p.returncode == 0
    assert [g["id"] for g in res["graphs"]] == ["2/0-inference"]
    assert "running" not in p.stderr


@pytest.mark.parametrize("args,needle", [
    (["inductor"], "no target command"),
    (["inductor", "--from", "/no/such/dir"], "no such directory"),
    (["inductor", "--code", "a b", "--", "python", "x.py"], "expected a kernel name"),
    (["inductor", "--", "no_such_prog.py"], "no such file"),
])
def test_bad_input_exit_2(args, needle):
    p = run_cli(*args, timeout=60)
    assert p.returncode == 2 and needle in p.stderr, (p.returncode, p.stderr)


def test_backend_eager_reports_no_inductor(tmp_path):
    res, p = run_json("inductor", "--no-debug-dir", "--out", tmp_path / "r", "--", "python", program("clean.py"), timeout=300)
    assert p.returncode == 0
    assert res["status"] == "no-inductor" and res["graphs"] == []


# ---- parser unit tests (no torch) ------------------------------------------------------------

TRITON_CODE = '''# AOT ID: ['0_forward']
from torch._inductor.select_algorithm import extern_kernels
triton_poi_fused_add_relu_0 = async_compile.triton('triton_poi_fused_add_relu_0', """
import triton
@triton.jit
def triton_poi_fused_add_relu_0(in_out_ptr0, xnumel, XBLOCK : tl.constexpr):
    pass
""", device_str='cuda')

triton_tem_fused_mm_1 = async_compile.triton('triton_tem_fused_mm_1', """
@triton.jit
def triton_tem_fused_mm_1(arg_A, arg_B, out_ptr0):
    pass
""", device_str='cuda')

async_compile.wait(globals())
del async_compile

class Runner:
    def call(self, args):
        primals_1, primals_2 = args
        buf0 = empty_strided_cuda((8, 8), (8, 1), torch.float32)
        # Topologically Sorted Source Nodes: [x], Original ATen: [aten.mm]
        extern_kernels.mm(primals_1, primals_2, out=buf0)
        # Topologically Sorted Source Nodes: [add, relu], Original ATen: [aten.add, aten.relu]
        stream0 = get_raw_stream(0)
        triton_poi_fused_add_relu_0.run(buf0, 64, stream=stream0)
        # Topologically Sorted Source Nodes: [y], Original ATen: [aten.mm]
        triton_tem_fused_mm_1.run(buf0, primals_2, buf1, stream=stream0)
        # Topologically Sorted Source Nodes: [s], Original ATen: [aten.sort]
        buf2 = torch.ops.aten.sort.stable(buf1, stable=False, dim=1, descending=False)
        buf3 = aten.nonzero.default(buf1)
        return (buf0, )

def get_args():
    pass
'''


def test_parse_triton_output_code():
    calls = IC.kernel_calls(TRITON_CODE)
    by = {c["name"]: c for c in calls}
    assert by["extern_kernels.mm"]["kind"] == "extern"
    assert by["triton_poi_fused_add_relu_0"]["kind"] == "triton"
    assert by["triton_poi_fused_add_relu_0"]["aten"] == ["aten.add", "aten.relu"]
    assert by["triton_tem_fused_mm_1"]["kind"] == "triton-template"
    assert by["aten.sort.stable"]["kind"] == "fallback"
    assert by["aten.nonzero.default"]["kind"] == "fallback"
    assert [c["name"] for c in calls][:3] == ["extern_kernels.mm", "triton_poi_fused_add_relu_0", "triton_tem_fused_mm_1"]
    src = IC.kernel_source(TRITON_CODE, "triton_poi_fused_add_relu_0")
    assert "def triton_poi_fused_add_relu_0" in src and "triton_tem_fused_mm_1" not in src
    assert IC.aot_id(TRITON_CODE) == "0_forward"


def test_tensor_type_and_bytes():
    t = II.tensor_type("f32[16, 64][64, 1]cpu")
    assert t["bytes"] == 16 * 64 * 4 and t["device"] == "cpu"
    assert II.tensor_type("bf16[8, 2][2, 1]cuda:0")["bytes"] == 32
    s = II.tensor_type("f16[s0, 64][64, 1]cuda:0")
    assert s["symbolic"] and s["bytes"] is None
    assert II.tensor_type("Sym(s0)") is None


def test_name_ops_fallback():
    assert IC._name_ops("cpp_fused_expand_tanh_tanh_backward_0") == ["expand", "tanh", "tanh_backward"]
    assert IC._name_ops("triton_per_fused__softmax_sum_2") == ["softmax", "sum"]


# ---- GPU -------------------------------------------------------------------------------------

@pytest.mark.gpu
def test_gpu_triton_kernels_listed(tmp_path):
    res, p = run_json("inductor", "--perf-hints", "--out", tmp_path / "r", "--", "python", program("ind_cuda.py"), timeout=900)
    assert p.returncode == 0 and res["status"] == "ok", p.stderr[-3000:]
    kinds = {k["kind"] for g in res["graphs"] for k in g["kernels"]}
    assert "triton" in kinds, kinds
    pw = _graph(res, "pointwise")
    tk = [k for k in pw["kernels"] if k["kind"] == "triton"]
    assert len(tk) == 1 and tk[0]["name"].startswith("triton_poi_fused")
    assert tk[0]["user_lines"] and tk[0]["user_lines"][0]["line"] == 9
    mm = _graph(res, "mm_epilogue")
    assert any(k["kind"] in ("extern", "triton-template") for k in mm["kernels"])
    red = _graph(res, "reduce_rows")
    assert any(k["name"].startswith(("triton_per_", "triton_red_")) for k in red["kernels"])
    p2 = run_cli("inductor", "--from", res["run_dir"], "--code", tk[0]["name"], timeout=120)
    assert p2.returncode == 0 and "@triton.jit" in p2.stdout


from conftest import TORCH29_PYTHON as VENV29  # noqa: E402
NO29 = "no torch 2.9 env: run with COMPILE_DEBUG_TORCH29_PYTHON=$(.ci/torch29) (builds a cached venv with torch 2.9.1)"


@pytest.mark.slow
@pytest.mark.skipif(not VENV29, reason=NO29)
def test_torch29_trace(tmp_path):
    """2.9 logs the post-grad graph as the after_post_grad_graph artifact; same facts come out."""
    res, p = run_json("inductor", "--no-debug-dir", "--out", tmp_path / "r", "--", VENV29, program("ind_kernels.py"), timeout=600)
    assert p.returncode == 0 and res["status"] == "ok", p.stderr[-2000:]
    assert (res["torch_version"] or "2.9").startswith("2.9")   # 2.9 logs no torch_version artifact
    g = _graph(res, "with_fallback")
    fb = [k for k in g["kernels"] if k["kind"] == "fallback"]
    assert fb and fb[0]["user_lines"][0]["line"] == 18
    pw = _graph(res, "pointwise")
    assert len([k for k in pw["kernels"] if k["kind"] == "cpp"]) == 1


# ---- skills trace-inductor / trace-aot: frontmatter and every torch name they mention ---------

import glob  # noqa: E402
import re  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SKILLS = ["trace-inductor", "trace-aot"]
OLD_TORCH_NAMES = {"after_post_grad_graph"}   # names only older torch emits; the docs say so


def _skill_texts(skill):
    files = [os.path.join(ROOT, "skills", skill, "SKILL.md")] + sorted(glob.glob(os.path.join(ROOT, "skills", skill, "references", "*.md")))
    return {f: open(f).read() for f in files}


def _frontmatter(text):
    m = re.match(r"^---\n(.*?)\n---\n", text, re.S)
    assert m, "no frontmatter"
    import yaml
    return yaml.safe_load(m.group(1))


@pytest.mark.parametrize("skill", SKILLS)
def test_skill_frontmatter(skill):
    text = open(os.path.join(ROOT, "skills", skill, "SKILL.md")).read()
    fm = _frontmatter(text)
    assert fm["name"] == skill
    d = fm["description"]
    assert 100 < len(d) <= 1024 and "<" not in d and ">" not in d
    assert re.match(r"^[A-Z][a-z]+s ", d), "third person, e.g. 'Shows ...'"
    assert fm["allowed-tools"] == 'Bash(python3 "${CLAUDE_PLUGIN_ROOT}/scripts/compile_debug.py" *)'
    for f, t in _skill_texts(skill).items():
        assert "!`" not in t, f
        for ref in re.findall(r"\]\((references/[\w.-]+)\)", t):
            assert os.path.isfile(os.path.join(ROOT, "skills", skill, ref)), ref
    assert '"${CLAUDE_PLUGIN_ROOT}/scripts/compile_debug.py"' in text
    assert len(text.splitlines()) < 150




@pytest.fixture(scope="module")
def torch_source():
    import torch
    root = os.path.dirname(torch.__file__)
    chunks = []
    for f in glob.glob(os.path.join(root, "**", "*.py"), recursive=True):
        try:
            chunks.append(open(f, encoding="utf-8", errors="replace").read())
        except OSError:
            pass
    return "\n".join(chunks)


@pytest.mark.parametrize("skill", SKILLS)
def test_skill_names_exist_in_installed_torch(skill, torch_source):
    import torch  # noqa: F401
    import torch._logging._internal as L
    artifacts = set(L.log_registry.artifact_names) | set(L.log_registry.log_alias_to_log_qnames)
    texts = _skill_texts(skill)
    seen = {"config": 0, "logs": 0, "env": 0, "api": 0, "events": 0}
    for f, t in texts.items():
        # config knobs: torch._inductor.config.X[.Y], torch._functorch.config.X, torch._dynamo.config.X
        for mod, attr in re.findall(r"(torch\._(?:inductor|functorch|dynamo)\.config)\.([A-Za-z_][\w.]*\w)", t):
            if attr == "patch":
                continue
            obj = _resolve(mod)
            for p in attr.split("."):
                assert hasattr(obj, p), f"{f}: {mod}.{attr} does not exist"
                obj = getattr(obj, p)
            seen["config"] += 1
        # TORCH_LOGS=a,b and every backticked name in the TORCH_LOGS table
        for names in re.findall(r"TORCH_LOGS=([+\w,-]+)", t):
            for n in names.split(","):
                assert n.lstrip("+-") in artifacts, f"{f}: TORCH_LOGS artifact {n!r} not registered"
                seen["logs"] += 1
        m = re.search(r"## TORCH_LOGS artifacts.*?\n(.*?)\n## ", t, re.S)
        if m:
            for row in m.group(1).splitlines()[2:]:
                cells = row.split("|")
                if len(cells) > 2:
                    for n in re.findall(r"`\+?(\w+)`", cells[2]):
                        assert n in artifacts, f"{f}: TORCH_LOGS artifact {n!r} not registered"
                        seen["logs"] += 1
        # env vars
        for v in set(re.findall(r"\b((?:TORCH|TORCHINDUCTOR|INDUCTOR|TORCHDYNAMO)_[A-Z_]*[A-Z])\b", t)):
            assert f'"{v}"' in torch_source or f"'{v}'" in torch_source, f"{f}: env var {v} not read by torch"
            seen["env"] += 1
        # APIs called as torch.a.b(...)
        for api in set(re.findall(r"\b(torch(?:\.\w+)+)\(", t)):
            if (".config." in api and api.endswith("patch")) or api.startswith("torch.ops."):
                continue
            assert callable(_resolve(api)), f"{f}: {api} is not callable"
            seen["api"] += 1
        # structured-trace event / artifact names listed in the trace paragraph
        m = re.search(r"Structured trace.*?\n\n", t, re.S)
        if m:
            for n in re.findall(r"`([a-z_]+)`", m.group(0)):
                if n in ("filename", "preToPost", "cppCodeToPost") or n.endswith("_s") or n.endswith("_reason") \
                        or n in ("inductor_compile_time_s",):
                    continue
                if n in OLD_TORCH_NAMES:   # documented as "2.9: ..."; checked in test_old_names_exist_in_29
                    continue
                # cache artifacts are named with an f-string: f"fx_graph_cache_{cache_state}"
                ok = n in torch_source or (n.rsplit("_", 1)[0] + "_{") in torch_source
                assert ok, f"{f}: trace event/artifact {n!r} not in torch"
                seen["events"] += 1
    assert seen["config"] >= 5 and seen["logs"] >= 2 and seen["env"] >= 2, seen


@pytest.mark.skipif(not VENV29, reason=NO29)
def test_old_names_exist_in_29():
    site = subprocess.run([VENV29, "-c", "import os, torch; print(os.path.dirname(torch.__file__))"],
                          capture_output=True, text=True, timeout=300).stdout.strip()
    src = glob.glob(os.path.join(site, "_inductor", "*.py"))
    assert src, site
    text = "".join(open(f, encoding="utf-8", errors="replace").read() for f in src)
    for n in OLD_TORCH_NAMES:
        assert n in text, n


@pytest.mark.slow
def test_failed_target_reported_and_kept_with_from(tmp_path):
    res, p = run_json("inductor", "--no-debug-dir", "--out", tmp_path / "r", "--", "python",
                      program("err_inductor_compile.py"), timeout=300)
    assert p.returncode == 0
    assert res["target_status"] == "exit 1" and "CppCompileError" in (res["target_error"] or "")
    res2, _ = run_json("inductor", "--from", res["run_dir"], timeout=60)
    assert res2["target_status"] == "exit 1"
    md = open(os.path.join(res["run_dir"], "report.md")).read()
    assert "triage" in md
