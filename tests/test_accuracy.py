"""accuracy: eager vs compiled vs fp64 per output; script targets under REPRO_LEVEL=4."""
import os
import subprocess
import sys

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


def test_script_precision_not_a_bug(tmp_path):
    """A bf16 program whose own allclose is tighter than bf16's precision: no graph is less
    accurate than eager, so triage (its accuracy-check run) and accuracy both say rounding, not a
    miscompile, and send nobody to bisect. (The A/B case evals/agent_cases/accuracy_noise/check_bf16.py
    no longer fails on this machine: its compiled output equals eager's, max abs diff 0.0.)"""
    prog = [program("gate_compiled_vs_eager.py"), "bfloat16", "mlp"]
    tri, p = run_json("triage", "--no-tlparse", "--out", tmp_path / "t", "--", "python3", *prog, timeout=600)
    assert tri["verdict"]["kind"] == "compile_only"
    assert tri["verdict"]["accuracy"]["precision"] and tri["verdict"]["accuracy"]["failing_graph"] is None
    assert tri["errors"][0]["category"] == "accuracy_tolerance" and tri["errors"][0]["side"] == "user"
    assert tri["next_steps"][0]["command"] is None and "not a compiler bug" in tri["next_steps"][0]["why"]
    data, p = run_json("accuracy", "--out", tmp_path / "r", "--", "python3", *prog, timeout=600)
    assert p.returncode == 0, p.stderr[-2000:]
    assert data["status"] == "precision" and data["failing_graph"] is None
    assert "MISMATCH" in data["error"] and "Not a compiler bug" in data["meaning"]
    md = (tmp_path / "r" / "report.md").read_text()   # the Markdown view of the same run
    assert "no compiled graph is less accurate than eager" in md and "bfloat16 7.8e-3" in md


# triage of the injected relu miscompile behind an assert (the failing graph further from fp64 than eager, bisect
# --from the run): test_only_compiled.py::test_injected_relu_bug_is_a_measured_miscompile


def test_float32_rounding_is_measured(tmp_path):
    """A float32 model checked with torch.equal. torch's default repro_tolerance (1e-3) proved nothing at
    float32, so this used to say "not sure" and send to bisect; the check now runs at repro_tolerance 0
    (torch's RMSE rule alone decides) and measures it: rounding, with the numbers, no bisect."""
    tri, p = run_json("triage", "--no-tlparse", "--out", tmp_path / "t", "--", "python3",
                      program("acc_fp32_exact.py"), timeout=600)
    acc = tri["verdict"]["accuracy"]
    assert acc["verdict"] == "rounding" and acc["precision"] and acc["failing_graph"] is None
    assert acc["dtypes"] == ["float32"] and acc["rmse"]["rmse_compiled_vs_fp64"] <= 2 * acc["rmse"]["rmse_eager_vs_fp64"]
    assert tri["errors"][0]["category"] == "accuracy_tolerance"
    assert not any("bisect" in (s["command"] or "") for s in tri["next_steps"])


def test_gate_with_dtype_defaults_names_an_atol_at_the_outputs_scale():
    """Defaults that accept each graph's first call can still fail the program's own check on values near
    zero (a bf16 CI gate of the blind A/B failed 17/160 with them): the gate also names atol at scale."""
    from cdlib.decide import accuracy_judge
    g = accuracy_judge.gate([{"dtype": "bfloat16", "assert_close_defaults": True, "max_abs_eager": 0.41,
                              "max_abs_diff": 0.00195}])
    assert "accepts every output checked here (each graph's first call)" in g
    assert "rtol 0.016, atol ≈ 2 × eps(bfloat16) × max|output| = 0.0064" in g, g


def _out(passed, max_eager, diff, fp64, rc, re_, dtype="float32", shape=(8,)):
    return {"passed": passed, "dtype": dtype, "shape": list(shape), "max_abs_eager": max_eager, "max_abs_diff": diff,
            "max_abs_fp64": fp64, "rmse_compiled_vs_fp64": rc, "rmse_eager_vs_fp64": re_,
            "nan_compiled": False, "nan_eager": False}


def test_a_zero_valued_output_that_differs_by_noise_is_not_a_miscompile():
    """Blind A/B batch 5: a backward graph whose bias gradient is exactly 0 (a shift-invariant loss) gave
    eager 9.3e-9 and compiled 7.5e-9; torch's rule flagged it by its own scale and triage said "measured
    miscompile → bisect". Judged at its graph's scale it is noise; the verdict sends to the traced graphs,
    not to bisect. A real miscompile of a small but non-zero output is still one."""
    from cdlib.decide import accuracy_judge as ac
    weight = _out(True, 0.13, 0.0, 0.13, 1e-9, 1e-9)
    bias = _out(False, 9.3e-9, 1.8e-9, 1.7e-18, 7.5e-9, 1e-12, shape=(1,))
    chk = {"graphs": [{"graph": "bwd", "passed": False, "outputs": [weight, bias]}], "failing_graph": "bwd"}
    j = ac.judge(chk, "SystemExit", "gradient check failed for: level_head.weight, level_head.bias", 1)
    assert j["verdict"] == "not_measured" and j["next"] == "graphs", j
    assert "backward_pass_autocast" in j["why"] and "noise" in j["summary"]
    from cdlib.decide.accuracy_apply import next_command
    why, cmd = next_command(j["next"], "compile_debug.py", "python train.py")
    assert cmd == "compile_debug.py aot -- python train.py" and "no bisect" in why
    small = _out(False, 1e-3, 5e-4, 1e-3, 5e-4, 1e-10)     # non-zero output, wrong by half its size
    chk = {"graphs": [{"graph": "fwd", "passed": False, "outputs": [weight, small]}], "failing_graph": "fwd"}
    assert ac.judge(chk, "SystemExit", "MISMATCH", 1)["verdict"] == "miscompile"


def test_reduced_matmul_precision_is_named_where_eager_is_far_from_fp64():
    """Blind A/B batch 37: set_float32_matmul_precision("medium") in a shared setup made oneDNN run float32 matmuls
    in bf16 (a CPU with bf16 units); eager was ~1e4 eps from fp64 and the gate offered "a low-precision step on
    purpose (autocast, fp8)". The check run records the process's matmul precision per graph: bf16 on CPU or TF32
    on CUDA is named with the program's line; at full float32 (or a CPU without bf16 units) the old text stays."""
    from types import SimpleNamespace
    from cdlib.decide import accuracy_judge as ac
    o = _out(False, 0.87, 3.1e-3, 0.87, 1.69e-3, 1.64e-3)
    res = SimpleNamespace(returncode=1, timed_out=False, duration_s=20.0)
    cpu_bf16 = {"device": "cpu", "float32_matmul": "medium", "cpu_matmul": "bf16", "cpu_bf16": True}
    for prec, said in [(cpu_bf16, "bf16"), ({"device": "cuda", "float32_matmul": "high", "tf32_matmul": True,
                                             "tf32_conv": True}, "TF32")]:
        chk = {"graphs": [{"graph": "fwd", "passed": True, "outputs": [dict(o, passed=True)], "precision": prec}],
               "res": res, "failed": True, "error": None, "last_words": None, "error_type": "AssertionError"}
        j = ac.judge(chk, "AssertionError", "Tensor-likes are not close!", 1, compares=True, precision_at="m.py:22 `x`")
        assert j["verdict"] == "rounding" and f"float32 matmuls ran in {said}, eager's too" in j["summary"], j
        assert f"float32 matmuls ran in {said} in this run" in j["gate"] and "set at m.py:22" in j["gate"]
        assert 'torch.set_float32_matmul_precision("highest")' in j["gate"]
    for prec in [dict(cpu_bf16, cpu_bf16=False), dict(cpu_bf16, cpu_matmul="none"), None]:
        chk = {"graphs": [{"graph": "fwd", "passed": True, "outputs": [dict(o, passed=True)], "precision": prec}],
               "res": res, "failed": True, "error": None, "last_words": None, "error_type": "AssertionError"}
        j = ac.judge(chk, "AssertionError", "Tensor-likes are not close!", 1, compares=True)
        assert "matmuls ran" not in j["gate"] + j["summary"] and "A low-precision step on purpose" in j["gate"]


def test_precision_settings_lines(tmp_path):
    from cdlib.decide.program_code import precision_settings
    f = tmp_path / "setup.py"
    f.write_text('import torch\n# torch.set_float32_matmul_precision("medium")\n'
                 'torch.set_float32_matmul_precision("high")\ntorch.set_float32_matmul_precision("highest")\n'
                 "torch.backends.cuda.matmul.allow_tf32 = True\ntorch.backends.cudnn.allow_tf32 = False\n"
                 'torch.backends.mkldnn.matmul.fp32_precision = "bf16"\n')
    assert [ln for _, ln, _ in precision_settings([str(f)])] == [3, 5, 7]


@pytest.mark.slow
def test_a_gate_failing_at_bf16_matmul_precision_names_the_setting(tmp_path):
    """The program's setup lowers float32 matmul precision ("medium"): on a CPU with bf16 units both eager and
    compiled run bf16 matmuls and a 1e-4 gate fails. Triage measures rounding and names the setting's line and
    "highest" for the check, no bisect."""
    import torch
    if not torch.ops.mkldnn._is_mkldnn_bf16_supported():
        pytest.skip("this CPU has no bf16 units: float32 matmuls stay float32 and the gate passes")
    prog = program("acc_matmul_precision.py")
    tri, p = run_json("triage", "--no-tlparse", "--out", tmp_path / "t", "--", "python3", prog, timeout=600)
    if tri["exit_code"] == 0:   # a CPU that reports bf16 units but whose oneDNN kept these matmuls in float32
        pytest.skip("the gate passes on this CPU: its float32 matmuls did not run in bf16")
    acc = tri["verdict"]["accuracy"]
    assert acc["verdict"] == "rounding" and "float32 matmuls ran in bf16" in acc["summary"], acc
    line = next(i for i, ln in enumerate(open(prog), 1) if "set_float32_matmul_precision" in ln)
    assert f"acc_matmul_precision.py:{line}" in acc["gate"] and 'set_float32_matmul_precision("highest")' in acc["gate"]
    assert not any("bisect" in (s["command"] or "") for s in tri["next_steps"])
    assert "float32 matmuls ran in bf16 in this run" in (tmp_path / "t" / "report.md").read_text()


def test_a_check_that_raises_is_not_the_programs_failure(tmp_path):
    """Blind A/B batch 21 (deep-kernel GP): torch's check raised inside its eager run of the graph and the report
    said "the program failed: NotImplementedError"; the arm read it as its program's error. On the torch
    versions where the check raises here it is named as the check's limit; where it does not, the graph is
    measured."""
    data, p = run_json("accuracy", "--out", tmp_path / "r", "--", "python3", program("acc_check_raises_eye.py"),
                       timeout=600)
    assert p.returncode == 0, p.stderr[-2000:]
    why = data["measured"]["why"]
    if "UInt16" in why:
        assert data["measured"]["verdict"] == "not_measured" and "check itself raised" in why, data["measured"]
        from cdlib.show.views_accuracy import script_md
        md = script_md(data)
        assert "stopped at that error (inside torch's check)" in md and "the program failed" not in md, md
    else:
        assert data["measured"]["graphs_checked"], data["measured"]


def test_a_differing_dropout_mask_is_not_an_integer_cast(tmp_path):
    """Blind A/B batch 21 (TextCNN): only the forward's bool dropout mask failed torch's check, and the Next was
    the integer-cast advice (a float out of an int8's range, a floor on a boundary). A bool/integer output of a
    graph that draws random numbers is named as a random mask, with how to take the randomness out."""
    data, p = run_json("accuracy", "--out", tmp_path / "r", "--", "python3", program("acc_dropout_mask_gate.py"),
                       timeout=600)
    assert p.returncode == 0, p.stderr[-2000:]
    j = data["measured"]
    assert j["verdict"] == "not_measured", j
    assert "random numbers" in j["why"] and "bool" in j["why"], j
    assert "fallback_random" in data["next_why"] and "clamp" not in data["next_why"], data["next_why"]


def test_a_gate_on_an_ill_conditioned_value_is_the_programs_math_not_a_miscompile(tmp_path):
    """Blind A/B batch 44: a tail z-score, erfinv(2u - 1) with u = 1 - q in float32, behind a compiled-vs-eager gate.
    Every graph was as close to fp64 as eager by RMSE, the failure line (an INFO log) "did not compare numbers", and
    the Next listed later calls, decompositions and aliased inputs. Measured element-wise now: where compiled and
    eager differ most, each is ~100x further from fp64 than from the other, so the fix is the program's math
    (computing z from q directly passes), with no bisect."""
    prog = program("acc_tail_zscore_gate.py")
    tri, _ = run_json("triage", "--no-tlparse", "--out", tmp_path / "t", "--", sys.executable, prog, timeout=600)
    acc = tri["verdict"]["accuracy"]
    assert acc["verdict"] == "noise" and acc["next"] == "fix_math_at", acc
    w = acc["worst"]
    assert w["worst_eager_vs_fp64"] >= 10 * w["max_abs_diff"] > 0, w
    first = tri["next_steps"][0]
    assert first["command"] is None and "1 - u with u near 1" in first["why"] and "no bisect" in first["why"], first
    assert tri["errors"][0]["title"].startswith("At the value that differs, eager is as far from fp64 as compiled"), \
        tri["errors"][0]
    fixed = subprocess.run([sys.executable, prog], env=dict(os.environ, DIRECT="1"), capture_output=True, text=True,
                           timeout=300)
    assert fixed.returncode == 0 and "PARITY GATE PASSED" in fixed.stdout, fixed.stdout + fixed.stderr[-1500:]
    # the same program with PyTorch's injected relu miscompile (1e-4 on every value) is a measured miscompile, not
    # the program's math and not "rounding" (torch's RMSE rule passes it: review of batch 44)
    bug, _ = run_json("triage", "--no-tlparse", "--out", tmp_path / "b", "--", sys.executable, prog,
                      env={"RELU_BUG": "1"}, timeout=600)
    acc = bug["verdict"]["accuracy"]
    assert acc["verdict"] == "miscompile" and acc["next"] == "bisect", acc
    assert "where eager is within" in acc["summary"], acc["summary"]


def test_nan_only_compiled_is_measured_to_its_graph(tmp_path):
    """Blind A/B batch 45: Inductor's vectorized CPU remainder(x, inf) is NaN where eager gives x; the compiled run
    printed NaN and the Next asked the agent to find the first non-finite tensor itself. One run under torch's
    accuracy check names the graph whose first call is NaN compiled and finite eagerly, with the minify command;
    keeping inf out of the remainder gives finite numbers (checked here)."""
    prog = program("nan_remainder_inf.py")
    tri, _ = run_json("triage", "--vs-eager", "--no-tlparse", "--out", tmp_path / "t", "--", sys.executable, prog,
                      timeout=600)
    first = tri["next_steps"][0]
    assert "measured by one more run under torch's accuracy check" in first["why"], tri["next_steps"]
    assert "compiled graph `model__0_forward_1` (its first op from forward at nan_remainder_inf.py:" in first["why"], \
        first["why"]
    assert " minify --kind accuracy -- " in first["command"] and len(tri["next_steps"]) == 1, tri["next_steps"]
    fixed = subprocess.run([sys.executable, prog], env=dict(os.environ, FIX="1"), capture_output=True, text=True,
                           timeout=300)
    assert fixed.returncode == 0 and "nan" not in fixed.stdout and "step 2 mean" in fixed.stdout, fixed.stdout
