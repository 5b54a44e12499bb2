"""compare --torch: the same unmodified program under two torch releases ("it broke after I upgraded").

The live comparison needs a second torch: COMPILE_DEBUG_OTHER_TORCH names a python that has it (CI sets
it to its torch 2.14.1 venv while the suite runs on 2.15). The expectations are real differences between
2.14.1 and 2.15.0 (docs/versions.md)."""
import os
import subprocess

import pytest
from conftest import program, run_cli, run_json

OTHER = os.environ.get("COMPILE_DEBUG_OTHER_TORCH")


def _versions():
    import torch
    other = subprocess.run([OTHER, "-c", "import torch; print(torch.__version__)"], capture_output=True, text=True,
                           timeout=300).stdout.strip()
    return {torch.__version__[:4], other[:4]}


needs_214_215 = pytest.mark.skipif(not OTHER or _versions() != {"2.14", "2.15"} if OTHER else True,
                                   reason="needs torch 2.14 and 2.15 (COMPILE_DEBUG_OTHER_TORCH=python of the other)")


@pytest.mark.slow
@needs_214_215
def test_graph_breaks_that_changed_between_214_and_215(tmp_path):
    d, p = run_json("compare", "--torch", OTHER, "--timeout", "600", "--out", tmp_path / "r", "--", "python",
                    program("ver_model.py"))
    assert p.returncode == 0, p.stderr[-2000:]
    assert [v[:4] for v in d["torch"]] == ["2.14", "2.15"]          # ordered oldest first
    (pair,) = d["pairs"]
    md = (tmp_path / "r" / "report.md").read_text()
    # time.time(): the same line, a new registry id of its own in 2.15
    assert "ver_model.py:28" in md and "GB0007" in md and "GB9193 Call to a time function" in md
    assert "reported differently in 2.15" in md
    # SimpleNamespace(**fields): breaks on 2.14, traced on 2.15
    assert any("SimpleNamespace" in x and "GB0147" in x for x in pair["graph_breaks"]["fixed"])
    assert "graph break gone in 2.15" in md
    assert pair["output"] == "same"                                 # same losses printed


@pytest.mark.slow
@needs_214_215
def test_a_crash_fixed_in_215(tmp_path):
    p = run_cli("compare", "--torch", OTHER, "--timeout", "600", "--out", tmp_path / "r", "--", "python",
                program("ver_prune.py"), check=0)
    md = p.stdout
    assert "fixed in 2.15" in md and "invalid gradient" in md, md
    assert "GB6602" in md                                            # 2.15 breaks on the .data resize instead


@pytest.mark.slow
@needs_214_215
def test_a_step_that_runs_eagerly_after_the_upgrade(tmp_path):
    d, p = run_json("compare", "--torch", OTHER, "--timeout", "600", "--out", tmp_path / "r", "--", "python",
                    program("ver_dataptr.py"))
    assert p.returncode == 0, p.stderr[-2000:]
    (pair,) = d["pairs"]
    old, new = pair["before"], pair["after"]
    assert old["graphs"] >= 1 and new["graphs"] == 0 and new["graph_break_hits"] > old["graph_break_hits"], pair
    assert pair["output"].startswith("same")                        # the losses agree within rounding


def test_a_release_that_cannot_be_installed_is_one_line(tmp_path):
    p = run_cli("compare", "--torch", "99.0.0", "--out", tmp_path / "r", "--", "python", program("clean.py"),
                env={"COMPILE_DEBUG_TORCH_CACHE": str(tmp_path / "cache")}, timeout=600)
    assert p.returncode == 2, p.stderr[-2000:]
    err = [ln for ln in p.stderr.splitlines() if not ln.startswith("[compile-debug]")]   # progress lines apart
    assert len(err) == 1 and "torch 99.0.0 cannot be installed here" in err[0], p.stderr
    assert "Traceback" not in p.stderr
    cache = tmp_path / "cache"
    assert not [x for x in os.listdir(cache) if os.path.isdir(cache / x)]   # no venv left, half-built or not


@pytest.mark.parametrize("args, needle", [
    (["--torch", "2.15.0", "/tmp/a"], "--torch compares one command"),
    (["--torch", "not a version", "--", "python", program("clean.py")], "give a torch release"),
    (["--torch", "2.15.0", "--", "bash", "-c", "true"], "needs a command that starts with a Python interpreter"),
])
def test_bad_input(args, needle, tmp_path):
    p = run_cli("compare", "--out", tmp_path / "r", *args)
    assert p.returncode == 2 and needle in p.stderr and "Traceback" not in p.stderr, p.stderr


@pytest.mark.slow
@needs_214_215
def test_source_stage_keeps_a_regression_between_versions(tmp_path):
    """minify --source --torch-python: the program fails on 2.14 and passes on 2.15; every kept candidate
    must do both, and the bug report quotes the failing torch's output (it quoted the passing one's)."""
    import sys
    out = tmp_path / "m"
    d, p = run_json("minify", "--source", "--source-limit", "20", "--timeout", "300", "--torch-python",
                    sys.executable, "--out", out, "--", OTHER, program("ver_prune.py"), timeout=1500)
    assert p.returncode == 0, p.stderr[-3000:]
    assert d["mode"] == "failure" and d["verified"] and d["other_python"] == sys.executable, d.get("verify")
    assert d["lines_after"] <= d["lines_before"]
    report = (out / "bug_report.md").read_text()
    assert report.startswith("### torch.compile: BackendCompilerFailed") and "torch 2.14" in report
    compiled = report.split("Compiled (fails):\n```\n", 1)[1].split("```", 1)[0]
    assert "invalid gradient" in compiled, report
    assert "With torch 2.15" in report and "this repro passes" in report, report
