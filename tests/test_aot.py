"""`aot`: AOTAutograd graphs of a training step (tests/programs/aot_train.py: Linear, BatchNorm,
GELU, LayerNorm): joint/forward/backward, saved activations, functionalization, decompositions."""
import os

import pytest
from conftest import program, run_cli, run_json

from cdlib.read import inductor_info as II


@pytest.fixture(scope="module")
def aot(tmp_path_factory):
    out = tmp_path_factory.mktemp("aot") / "run"
    res, p = run_json("aot", "--out", out, "--", "python", program("aot_train.py"), timeout=600)
    assert p.returncode == 0, p.stderr[-3000:]
    return res


def test_training_graphs_and_files(aot):
    assert aot["status"] == "ok" and aot["target_status"] == "exit 0"
    f = aot["frames"][0]
    assert f["function"] == "forward" and f["mode"] == "training"
    for k in ("dynamo", "joint_graph", "forward_graph", "backward_graph"):
        assert os.path.isfile(f["graphs"][k]), k
    assert "torch.ops.aten" in open(f["graphs"]["joint_graph"]).read()
    o = f["ops"]
    assert o["dynamo"] >= 5 and o["forward"] > o["dynamo"] and o["backward"] > 0 and o["joint"] >= o["forward"]


def test_saved_activations_count_and_bytes(aot):
    s = aot["frames"][0]["saved"]
    assert s["count"] >= 4 and s["activations"] >= 2
    assert s["activation_bytes"] > 0 and s["bytes"] >= s["activation_bytes"]
    # the largest saved activation is a [16, 64] f32 tensor (fc1 output / GELU input): 4 KiB
    big = s["largest"][0]
    assert big["bytes"] == 16 * 64 * 4 and big["type"].startswith("f32[16, 64]")
    assert big["loc"] and big["loc"]["line"] in (16, 17)
    assert any(n.startswith("primals") for n in s["inputs_saved"])


def test_functionalization_and_decompositions(aot):
    f = aot["frames"][0]
    fn = f["functionalization"]
    # BatchNorm in train mode updates running_mean/var and num_batches_tracked in place
    assert fn["mutated_inputs"] >= 2 and fn["copy_back_ops"] >= 2
    dec = {d["op"]: d["aten"] for d in f["decompositions"]}
    gelu = [v for k, v in dec.items() if "gelu" in k]
    assert gelu and "aten.erf" in gelu[0], dec
    assert any("layer_norm" in k for k in dec)


def test_markdown_is_compact(aot):
    md = open(os.path.join(aot["run_dir"], "report.md")).read()
    assert "saved for backward" in md and "decomposed" in md and "inductor --from" in md
    assert len(md) < 6000


def test_from_previous_run_without_rerun(aot):
    res, p = run_json("aot", "--from", aot["run_dir"], timeout=120)
    assert p.returncode == 0 and res["frames"][0]["saved"]["count"] == aot["frames"][0]["saved"]["count"]


@pytest.mark.parametrize("args,needle", [
    (["aot"], "no target command"),
    (["aot", "--top", "0", "--", "python", "x.py"], "--top must be >= 1"),
    (["aot", "--from", "/no/such"], "no such directory"),
])
def test_bad_input_exit_2(args, needle):
    p = run_cli(*args, timeout=60)
    assert p.returncode == 2 and needle in p.stderr, p.stderr


# ---- parser unit tests: 2.14 format (with AOTInput/Output comments) and 2.9 (without) --------

BW_214 = '''class GraphModule(torch.nn.Module):
    def forward(
        self,
        primals_1: "f32[16, 16][16, 1]cpu",  # PlainAOTInput(idx=0)
        addmm: "f32[8, 16][16, 1]cpu",
        sym_size: "Sym(s0)",
        tangents_1: "f32[][]cpu",  # TangentAOTInput(output=PlainAOTOutput(idx=0))
    ):
        # Backward of forward node: File: /x/prog.py:20 in forward, code: return torch.tanh(self.l(x)).sum()
        expand: "f32[8, 16][0, 0]cpu" = torch.ops.aten.expand.default(tangents_1, [8, 16]);  tangents_1 = None
        return (
            expand,  # GradAOTOutput(grad_of=PlainAOTInput(idx=0))
        )
'''

BW_29 = '''class GraphModule(torch.nn.Module):
    def forward(self, primals_1: "f32[16, 16][16, 1]cpu", addmm: "f32[8, 16][16, 1]cpu", tangents_1: "f32[][]cpu"):
        # File: /x/prog.py:20 in forward, code: return torch.tanh(self.l(x)).sum()
        expand: "f32[8, 16][0, 0]cpu" = torch.ops.aten.expand.default(tangents_1, [8, 16]);  tangents_1 = None
        return (expand, None)
'''

FW_29 = '''class GraphModule(torch.nn.Module):
    def forward(self, primals_1: "f32[16, 16][16, 1]cpu", primals_2: "f32[16][1]cpu", primals_3: "f32[8, 16][16, 1]cpu"):
        # File: /x/prog.py:20 in forward, code: return torch.tanh(self.l(x)).sum()
        permute: "f32[16, 16][1, 16]cpu" = torch.ops.aten.permute.default(primals_1, [1, 0])
        addmm: "f32[8, 16][16, 1]cpu" = torch.ops.aten.addmm.default(primals_2, primals_3, permute);  primals_2 = permute = None
        return (addmm, primals_1, addmm)
'''


@pytest.mark.parametrize("fw,bw,symints", [(None, BW_214, 1), (FW_29, BW_29, 0)])
def test_saved_activations_parser(fw, bw, symints):
    s = II.saved_activations(fw, bw)
    assert s["count"] == 2 and s["activations"] == 1 and s["symints"] == symints
    assert s["activation_bytes"] == 8 * 16 * 4 and s["bytes"] == 8 * 16 * 4 + 16 * 16 * 4
    if fw:
        act = [i for i in s["items"] if i["name"] == "addmm"][0]
        assert act["op"] == "aten.addmm.default" and act["loc"]["line"] == 20


def test_parse_graph_dynamo_ops():
    text = '''class GraphModule(torch.nn.Module):
    def forward(self, L_x_: "f32[4][1]cpu"):
        l_x_ = L_x_
        # File: /x/p.py:3 in f, code: y = x.sin() + 1
        sin: "f32[4][1]cpu" = l_x_.sin();  l_x_ = None
        y: "f32[4][1]cpu" = sin + 1;  sin = None
        add_: "f32[4][1]cpu" = y.add_(2)
        relu: "f32[4][1]cpu" = torch.relu(y);  y = None
        return (relu,)
'''
    g = II.parse_graph(text)
    assert [n["op"] for n in g["nodes"]] == ["Tensor.sin", "add", "Tensor.add_", "torch.relu"]
    assert g["nodes"][0]["loc"]["line"] == 3
    assert II.inplace_ops(g) == ["Tensor.add_"]
    assert [o["name"] for o in g["outputs"]] == ["relu"]
