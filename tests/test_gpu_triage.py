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
