"""accuracy: eager vs compiled vs fp64 per output; script targets under REPRO_LEVEL=4."""
import os

import pytest

from conftest import program, run_cli, run_json

MODELS = program("bug_models.py")


@pytest.mark.parametrize("argv, msg", [
    ([], "no target"),
    (["nope.py:f"], "nope.py: no such file"),
    ([MODELS + ":f", "--", "python3", MODELS], "not both"),
    (["--", "python3", "missing_prog.py"], "missing_prog.py: no such file"),
])
def test_bad_input_one_line_exit_2(argv, msg, tmp_path):
    p = run_cli("accuracy", "--out", tmp_path / "o", *argv, timeout=60)
    assert p.returncode == 2 and msg in p.stderr and len(p.stderr.strip().splitlines()) == 1


def test_model_log1p_bug(tmp_path):
    data, p = run_json("accuracy", "--out", tmp_path / "r", MODELS + ":log1p_bug", timeout=600)
    assert p.returncode == 0, p.stderr[-2000:]
    assert data["status"] == "fail" and data["fixed_by"] is None
    outs = data["configs"][0]["outputs"]
    assert outs[0]["verdict"] == "FAIL" and outs[0]["max_abs_err"] > 0.1 and outs[0]["rmse_ratio"] > 3
    assert outs[1]["verdict"] == "pass"
    assert [c["config"] for c in data["configs"]] == ["default", "fallback_random=True", "emulate_precision_casts=True"]


def test_model_dropout_fixed_by_fallback_random(tmp_path):
    data, p = run_json("accuracy", "--out", tmp_path / "r", MODELS + ":dropout", timeout=600)
    assert p.returncode == 0, p.stderr[-2000:]
    assert data["status"] == "fail" and data["fixed_by"] == "fallback_random=True"


def test_model_clean(tmp_path):
    data, p = run_json("accuracy", "--out", tmp_path / "r", MODELS + ":clean", timeout=600)
    assert p.returncode == 0 and data["status"] == "pass"
    assert len(data["configs"]) == 1


@pytest.mark.slow
def test_script_finds_failing_graph(tmp_path):
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    data, p = run_json("accuracy", "--out", tmp_path / "r", "--", "python3", program("bug_log1p_accuracy.py"),
                       timeout=900, cwd=cwd)
    assert p.returncode == 0, p.stderr[-2000:]
    assert data["status"] == "fail" and data["failing_graph"].startswith("model__")
    assert data["rmse"] and data["rmse"][0]["rmse_compiled_vs_fp64"] > data["rmse"][0]["rmse_eager_vs_fp64"]
    assert data["graph_verdict"] == "FAIL"
    assert os.listdir(cwd) == []
