"""triage and env on a CUDA machine (marked gpu: skipped without CUDA)."""
import pytest
from conftest import program, run_json

pytestmark = pytest.mark.gpu


def test_env_sees_the_gpu(tmp_path):
    data, p = run_json("env", "--out", str(tmp_path / "r"), timeout=300)
    assert p.returncode == 0
    assert data["info"]["cuda_available"] and data["info"]["gpus"] and data["info"]["triton"]


def test_clean_cuda_program(tmp_path):
    data, p = run_json("triage", "--no-tlparse", "--out", str(tmp_path / "r"), "--", program("gpu_clean.py"), timeout=600)
    assert p.returncode == 0 and data["status"] == "clean" and data["stats"]["graphs"] == 1


def test_triton_compile_error_injected(tmp_path):
    data, p = run_json("triage", "--no-tlparse", "--out", str(tmp_path / "r"), "--",
                       program("gpu_triton_compile_error.py"), timeout=600)
    (e,) = data["errors"]
    assert e["category"] in ("inductor_compile_error", "triton_compile_error"), e
    assert e["skill"] == "bisect" and "minify --from" in e["next_command"]


def test_illegal_memory_access_classified(tmp_path):
    data, p = run_json("triage", "--no-tlparse", "--out", str(tmp_path / "r"), "--",
                       program("gpu_illegal_memory_access.py"), timeout=600)
    assert data["exit_code"] != 0
    assert data["errors"][0]["category"] == "cuda_illegal_memory_access", data["errors"]


def test_triton_miscompile_measured_by_the_accuracy_check(tmp_path):
    """The Triton relu accuracy bug: the program's own comparison fails only compiled (exit 1 with a
    message, no exception). On the H100 (torch 2.11) torch's accuracy check flagged no graph there, so
    triage must not call it rounding: it says not sure and sends to bisect."""
    data, p = run_json("triage", "--no-tlparse", "--out", str(tmp_path / "r"), "--",
                       program("bug_gpu_relu_accuracy.py"), timeout=600)
    assert data["verdict"]["kind"] == "compile_only"
    acc = data["verdict"]["accuracy"]
    assert not acc["precision"], acc
    assert data["next_steps"][0]["command"].endswith(f"bisect --from {tmp_path / 'r'}")
