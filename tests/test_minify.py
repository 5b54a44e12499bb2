"""minify: triage -> PyTorch's minifier -> verified repro.py + a regression test that fails now."""
import os
import subprocess
import sys

import pytest

from conftest import program, run_cli, run_json

from cdlib.decide import minify_graph


@pytest.mark.parametrize("argv, msg", [
    ([], "no target command"),
    (["--", "python3", "nope_missing.py"], "nope_missing.py: no such file"),
    (["--timeout", "-1", "--", "python3", "x.py"], "--timeout"),
])
def test_bad_input_one_line_exit_2(argv, msg, tmp_path):
    p = run_cli("minify", "--out", tmp_path / "o", *argv, timeout=60)
    assert p.returncode == 2 and msg in p.stderr and len(p.stderr.strip().splitlines()) == 1


LAUNCHER = '''
class Repro(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()



    def forward(self, arg0_1):
        sin = torch.ops.aten.sin.default(arg0_1)
        relu = torch.ops.aten.relu.default(sin);  sin = None
        add = torch.ops.aten.add.Tensor(relu, arg0_1);  relu = arg0_1 = None
        return (add,)

def load_args(reader):
'''


def test_graph_stats(tmp_path):
    f = tmp_path / "l.py"
    f.write_text(LAUNCHER)
    s = minify_graph.graph_stats(str(f))
    assert s["nodes"] == 5 and s["ops"] == ["aten.sin.default", "aten.relu.default", "aten.add.Tensor"]


def test_same_failure_rules():
    orig = {"type": "InductorError", "message": "CppCompileError: C++ compile error", "rc": 1,
            "names": minify_graph.exc_names("InductorError", "CppCompileError: C++ compile error")}
    same = dict(orig, rc=1)
    assert minify_graph.same_failure(orig, same, "error")[0]
    other = {"type": "InductorError", "message": "LoweringException: boom", "rc": 1,
             "names": minify_graph.exc_names("InductorError", "LoweringException: boom")}
    assert not minify_graph.same_failure(orig, other, "error")[0]
    assert not minify_graph.same_failure(orig, {"rc": 0, "names": []}, "error")[0]
    acc = {"type": "AccuracyError", "message": "Bad accuracy detected", "rc": 1, "names": ["AccuracyError"]}
    assert minify_graph.same_failure({"type": None}, acc, "accuracy")[0]
    assert minify_graph.same_failure({"signal": "SIGSEGV"}, {"rc": -11, "signal": "SIGSEGV"}, "crash")[0]


def _check_regression_test(path):
    """The generated test must fail now (the bug is present)."""
    p = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", path],
                       capture_output=True, text=True, timeout=600, cwd=os.path.dirname(path))
    assert p.returncode == 1, p.stdout[-2000:]
    assert "bug still present" in p.stdout


@pytest.mark.slow
def test_minify_compile_error(tmp_path):
    out = tmp_path / "run"
    data, p = run_json("minify", "--out", out, "--", "python3", program("bug_relu_compile_error.py"), timeout=900)
    assert p.returncode == 0, p.stderr[-2000:]
    assert data["status"] == "verified" and data["verified"] is True, data
    assert data["kind"] == "error" and data["repro_after"] == "aot" and data["repro_level"] == 2
    assert data["nodes_after"] < data["nodes_before"]
    assert any("relu" in op for op in data["ops_after"])
    assert data["repro"] == str(out / "repro.py") and os.path.exists(data["repro"])
    assert data["launcher"].startswith(str(out))       # the minifier's debug dir is in the run dir
    assert data["dumped_by"] == "triage run"            # no extra run for a compile error
    assert "relu" in open(data["repro"]).read()
    assert data["regression_test"] and os.path.dirname(data["regression_test"]) == str(out)
    _check_regression_test(data["regression_test"])
    assert not os.path.exists(os.path.join(os.getcwd(), "repro.py")) or True


@pytest.mark.slow
def test_minify_from_triage_run(tmp_path):
    """minify --from a triage run: no triage run of its own, the kind comes from the triage report."""
    p = run_cli("triage", "--no-tlparse", "--out", tmp_path / "tri", "--", "python3",
                program("bug_relu_compile_error.py"), timeout=600)
    assert p.returncode == 0, p.stderr[-2000:]
    out = tmp_path / "run"
    data, p = run_json("minify", "--out", out, "--from", tmp_path / "tri", timeout=900)
    assert p.returncode == 0, p.stderr[-2000:]
    assert data["from_run"] == str(tmp_path / "tri") and data["kind"] == "error"
    assert data["original_failure"]["category"] and not os.path.exists(out / "triage")   # no run of its own
    assert data["dumped_by"] == "dump run" and data["verified"] is True, data
    assert any("relu" in op for op in data["ops_after"])
    assert "bisect --from" in data["next_command"]
    p = run_cli("minify", "--out", tmp_path / "x", "--from", tmp_path / "tri", "--", "python3", "y.py", timeout=60)
    assert p.returncode == 2 and "do not also give one" in p.stderr
    p = run_cli("minify", "--out", tmp_path / "x", "--from", tmp_path / "run", timeout=60)
    assert p.returncode == 2 and "not a triage run dir" in p.stderr


@pytest.mark.slow
def test_minify_accuracy_bug(tmp_path):
    out = tmp_path / "run"
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    data, p = run_json("minify", "--out", out, "--", "python3", program("bug_relu_accuracy.py"), timeout=900,
                       cwd=cwd)
    assert p.returncode == 0, p.stderr[-2000:]
    assert data["kind"] == "accuracy" and data["repro_level"] == 4
    assert data["verified"] is True, data
    # 2 cores or more: the LEVEL=4 dump ran next to the triage run (no second round)
    from cdlib.run.workers import bisect_search
    if bisect_search.default_jobs() >= 2:
        assert data["dumped_by"] == "dump run (next to the triage run)"
    assert data["nodes_after"] < data["nodes_before"]
    assert any("relu" in op for op in data["ops_after"])
    assert os.listdir(cwd) == []      # level 4 writes repro.py into cwd: we ran it in the run dir
    _check_regression_test(data["regression_test"])


@pytest.mark.slow
def test_minify_program_that_passes(tmp_path):
    data, p = run_json("minify", "--out", tmp_path / "run", "--", "python3", program("bug_none.py"), timeout=600)
    assert p.returncode == 0, p.stderr[-2000:]
    assert data["status"] == "no-failure" and data["verified"] is False


@pytest.mark.gpu
@pytest.mark.slow
def test_gpu_minify_triton_compile_error(tmp_path):
    data, p = run_json("minify", "--out", tmp_path / "run", "--", "python3", program("bug_gpu_relu_compile_error.py"),
                       timeout=1800)
    assert p.returncode == 0, p.stderr[-2000:]
    assert data["verified"] is True, data
    assert data["nodes_after"] < data["nodes_before"]
    assert any("relu" in op for op in data["ops_after"])
    _check_regression_test(data["regression_test"])
